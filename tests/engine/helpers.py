"""Helpers shared by the engine's tests (not a test module: pytest collects
only ``test_*.py``).

Whole trees against the NumPy reference (``make_era_data``, ``engine_tree``,
``gradients``, ``check_tree``, ``check_node``), one node's splitter against it
(``make_node``, ``Case``, ``CATEGORICAL``, ``same_splits_either_way``) and
scikit-learn's bin mapper fitted as eraboost bins (``fit_sklearn_mapper``).
"""

import numpy as np
import pytest

from eraboost import HistGradientBoostingRegressor
from eraboost._engine._common import SPLIT_TYPES as SPLIT_CODES
from eraboost._engine._histogram import HistogramBuilder, histogram_layout
from eraboost._engine._splitting import Splitter
from eraboost._engine.binning import WEIGHTED_BINNING
from tests.engine import reference
from tests.engine.reference import best_split

# the split types' names, a parametrization of the whole-tree tests
SPLIT_TYPES = ["original", "era", "directional"]


def make_era_data(seed, n_eras, nan=False, tiny_era=False, p=4):
    """Rows ``X, y, eras`` of ``n_eras`` eras of very different sizes, in no
    era order: ``p`` integer-valued features, feature 0 following the era,
    feature 2's effect changing with the era; ``nan`` puts 10% missing
    values, ``tiny_era`` makes the last era one row."""
    rng = np.random.RandomState(seed)
    sizes = rng.geometric(0.08, size=n_eras) + 2  # very different sizes
    if tiny_era:
        sizes[-1] = 1
    eras = np.repeat(np.arange(n_eras), sizes)
    n = eras.size
    X = rng.randint(0, 6, size=(n, p)).astype(np.float64)
    # feature 0 tracks the era, so deeper nodes miss some eras
    X[:, 0] = np.clip(eras * 6 // n_eras + rng.randint(-1, 2, size=n), 0, 5)
    shift = rng.normal(size=n_eras)[eras]
    y = X[:, 1] * 0.5 + shift * X[:, 2] + rng.normal(size=n)
    if nan:
        X[rng.rand(n, p) < 0.1] = np.nan
    perm = rng.permutation(n)  # rows not grouped by era in the input
    return X[perm], y[perm], eras[perm]


def engine_tree(
    X, y, eras, split_type, alpha, lam=0.0, min_samples_leaf=1, depth=1, **options
):
    """A regressor of one tree of depth ``depth`` (learning rate 1) fitted
    with the given split type, Boltzmann alpha and ``options``."""
    est = HistGradientBoostingRegressor(
        split_type=split_type,
        boltzmann_alpha=alpha,
        l2_regularization=lam,
        min_samples_leaf=min_samples_leaf,
        max_iter=1,
        max_depth=depth,
        max_leaf_nodes=None,
        learning_rate=1.0,
        early_stopping=False,
        random_state=0,
        **options,
    )
    est.fit(X, y, eras=eras)
    return est


def gradients(y):
    """The first tree's gradients and hessians of the squared error, as the
    engine computes them (float32 gradients) from the mean baseline."""
    raw = np.float64(np.mean(y))
    return (raw - y).astype(np.float32).astype(np.float64), np.ones_like(y)


def check_tree(
    nodes,
    bm,
    Xb,
    g,
    h,
    eras,
    rows,
    node_idx,
    split_type,
    alpha,
    lam,
    min_samples_leaf,
    depth,
    max_depth,
    **options,
):
    """Compare node ``node_idx`` of a tree's node array with the reference,
    recursively down to ``max_depth``; returns the number of nodes checked.
    ``options`` are irf_penalty and min_samples_leaf_per_era."""
    node = nodes[node_idx]
    has_missing = (Xb == bm.missing_bin_[None, :]).any(axis=0)
    ref = None
    if len(rows) >= 2 * min_samples_leaf:
        ref = best_split(
            Xb,
            g,
            h,
            eras,
            rows,
            bm.n_bins_non_missing_,
            has_missing,
            split_type,
            alpha,
            lam,
            min_samples_leaf,
            **options,
        )
    if ref is None:
        assert node["is_leaf"], "engine split a node the reference leaves whole"
        return 0
    assert not node["is_leaf"], f"engine left a node whole; reference: {ref}"
    f, b, miss_left, _ = ref
    got = (int(node["feature"]), int(node["bin_threshold"]))
    assert got == (f, b), f"engine {got}, reference {(f, b, miss_left)}"
    if has_missing[f]:
        assert bool(node["missing_left"]) == miss_left
    n_checked = 1
    if depth + 1 < max_depth:
        col = Xb[rows, f]
        left = (col <= b) & (col != bm.missing_bin_[f])
        if node["missing_left"]:
            left |= col == bm.missing_bin_[f]
        for child, sub in ((node["left"], rows[left]), (node["right"], rows[~left])):
            n_checked += check_tree(
                nodes,
                bm,
                Xb,
                g,
                h,
                eras,
                sub,
                child,
                split_type,
                alpha,
                lam,
                min_samples_leaf,
                depth + 1,
                max_depth,
                **options,
            )
    return n_checked


def check_node(
    est,
    Xb,
    g,
    h,
    eras,
    rows,
    node_idx,
    split_type,
    alpha,
    lam,
    min_samples_leaf,
    depth,
    max_depth,
    **options,
):
    """:func:`check_tree` on the first tree of a fitted regressor."""
    return check_tree(
        est._predictors[0][0].nodes,
        est._bin_mapper,
        Xb,
        g,
        h,
        eras,
        rows,
        node_idx,
        split_type,
        alpha,
        lam,
        min_samples_leaf,
        depth,
        max_depth,
        **options,
    )


def make_node(
    seed,
    n_eras,
    n_bins=(6, 4, 9, 30),
    missing=(False, True, False, True),
    categorical=None,
    const_h=True,
    classification=False,
    rows_per_era=(3, 40),
    sizes=None,
):
    """Binned data whose last bin per feature is the missing-value bin.

    Feature 0 follows the era (deeper nodes miss eras), feature 2's effect
    changes sign with the era; ``categorical`` features get category effects.
    With ``classification``, gradients ``-w * y`` and hessians ``w`` of a 0/1
    target with integer weights ``w``. ``sizes`` (rows of each era) replaces
    the sizes drawn from ``rows_per_era``.
    """
    rng = np.random.default_rng(seed)
    sizes = rng.integers(*rows_per_era, size=n_eras) if sizes is None else sizes
    eras = np.repeat(np.arange(n_eras), sizes).astype(np.int32)
    n = eras.size
    n_bins = np.asarray(n_bins, dtype=np.uint32)
    n_bins_non_missing = n_bins - 1
    cols = [rng.integers(0, n_bins_non_missing[f], size=n) for f in range(len(n_bins))]
    cols[0] = np.clip(
        eras * int(n_bins_non_missing[0]) // n_eras + rng.integers(-1, 2, n),
        0,
        n_bins_non_missing[0] - 1,
    )
    for f in range(len(n_bins)):
        if missing[f]:
            cols[f][rng.random(n) < 0.12] = n_bins_non_missing[f]
    Xb = np.asfortranarray(np.column_stack(cols).astype(np.uint8))
    shift = rng.normal(size=n_eras)[eras]
    latent = 0.4 * cols[1] + shift * (cols[2] - 4) + 0.05 * cols[3]
    if categorical is not None:
        for f in np.flatnonzero(categorical):
            latent += rng.normal(size=int(n_bins[f]))[cols[f]]
    latent += rng.normal(size=n)
    if classification:
        y = (latent > np.median(latent)).astype(np.float64)
        w = rng.integers(1, 4, size=n).astype(np.float32)
        g = (-w * y).astype(np.float32)
        h = w
    else:
        g = (latent.mean() - latent).astype(np.float32)
        h = (
            np.ones(1, dtype=np.float32)
            if const_h
            else rng.uniform(0.2, 2.0, size=n).astype(np.float32)
        )
    perm = rng.permutation(n)  # rows of an era not contiguous in the data
    Xb, g, eras = np.asfortranarray(Xb[perm]), g[perm], eras[perm]
    if h.shape[0] > 1:
        h = h[perm]
    has_missing = np.array(
        [(Xb[:, f] == n_bins_non_missing[f]).any() for f in range(len(n_bins))]
    )
    return Xb, n_bins, g, h, eras, has_missing.astype(np.uint8)


class Case:
    """One node's data with the engine's builder and splitter, set up as the
    estimators do, and the reference's options to compare with."""

    def __init__(
        self,
        seed,
        n_eras,
        split_type,
        alpha=0.0,
        lam=0.0,
        min_samples_leaf=1,
        n_threads=1,
        data=None,
        monotonic_cst=None,
        sparse=False,
        **options,
    ):
        data = data or {}
        # sparse histograms serve the per-era path only
        self.sparse = (
            sparse
            and n_eras > 1
            and bool(
                split_type != "original"
                or options.get("irf_penalty")
                or options.get("min_samples_leaf_per_era")
                or options.get("min_agreement")
            )
        )
        self.Xb, self.n_bins, g, h, self.eras, self.has_missing = make_node(
            seed, n_eras, **data
        )
        self.categorical = data.get("categorical")
        self.split_type, self.alpha, self.lam, self.min_samples_leaf = (
            split_type,
            alpha,
            lam,
            min_samples_leaf,
        )
        self.offsets = histogram_layout(self.n_bins, n_eras)
        self.builder = HistogramBuilder(
            self.Xb, self.n_bins, self.offsets, n_eras, self.eras, g, h, n_threads
        )
        is_cat = self.categorical
        self.splitter = Splitter(
            self.n_bins,
            self.offsets,
            n_eras,
            self.has_missing,
            (
                np.zeros(len(self.n_bins), dtype=np.int8)
                if monotonic_cst is None
                else np.asarray(monotonic_cst, dtype=np.int8)
            ),
            SPLIT_CODES[split_type],
            alpha,
            lam,
            reference.MIN_HESSIAN,
            min_samples_leaf,
            h.shape[0] == 1,
            n_threads,
            is_categorical=None if is_cat is None else is_cat.astype(np.uint8),
            **options,
        )
        self.features = np.arange(len(self.n_bins), dtype=np.uint32)
        self.g = g.astype(np.float64)
        self.h = np.broadcast_to(h, g.shape).astype(np.float64)
        self.ref_options = {
            k: options[k]
            for k in (
                "irf_penalty",
                "min_samples_leaf_per_era",
                "min_agreement",
                "pooled_weight",
            )
            if options.get(k)
        }
        # the rows grouped by era, as the grower keeps them
        self.rows = np.argsort(self.eras, kind="stable").astype(np.uint32)

    def hist(self, rows):
        """The histograms of ``rows`` (sparse ones with ``sparse``)."""
        if self.sparse:
            return self.builder.compute_sparse(rows, self.features)
        out = self.builder.empty()
        self.builder.compute_brute(rows, out, self.features)
        return out

    def split(self, rows, hist, lower=-np.inf, upper=np.inf):
        """The splitter's best split of ``rows`` from their histograms."""
        G, H = self.g[rows].sum(), self.h[rows].sum()
        return self.splitter.find_node_split(
            len(rows),
            hist,
            G,
            H,
            -G / (H + self.lam),
            lower,
            upper,
            self.features,
            np.ones(len(self.features), dtype=np.uint8),
        )

    def left_mask(self, rows, info):
        """Which of ``rows`` the split ``info`` sends left."""
        col = self.Xb[rows, info.feature_idx]
        if info.is_categorical:
            bits = info.left_cat_bitset
            return ((bits[col >> 5] >> (col & 31)) & 1).astype(bool)
        miss = col == self.n_bins[info.feature_idx] - 1
        return ((col <= info.bin_idx) & ~miss) | (miss & info.missing_go_to_left)

    def check(self, depth, rows=None, hist=None):
        """Compare the engine's split of ``rows`` (all rows by default) with
        the reference's, then the children's (the smaller built, the larger
        by subtraction) down to ``depth``; the number of nodes compared."""
        if rows is None:
            rows = self.rows
            hist = self.hist(rows)
        info = self.split(rows, hist)
        ref = best_split(
            self.Xb,
            self.g,
            self.h,
            self.eras,
            rows,
            self.n_bins - 1,
            self.has_missing,
            self.split_type,
            self.alpha,
            self.lam,
            self.min_samples_leaf,
            is_categorical=self.categorical,
            **self.ref_options,
        )
        if ref is None:
            assert not info.found, f"engine split {info}, the reference does not"
            return 1
        assert info.found, f"the engine finds no split; reference {ref}"
        f, b, miss_left, key = ref
        assert info.feature_idx == f, (info, ref)
        if info.is_categorical:
            bits = info.left_cat_bitset
            left_bins = {c for c in range(256) if (bits[c >> 5] >> (c & 31)) & 1}
            assert left_bins == set(b), (info, ref)
        else:
            assert info.bin_idx == b, (info, ref)
            if (self.Xb[rows, f] == self.n_bins[f] - 1).any():
                assert info.missing_go_to_left == miss_left, (info, ref)
        if self.split_type == "directional":
            assert info.direction_count == key[0]
            assert info.criterion == pytest.approx(key[1], rel=1e-9, abs=1e-9)
        else:
            assert info.criterion == pytest.approx(key[0], rel=1e-9, abs=1e-9)
        left = self.left_mask(rows, info)
        assert left.sum() == info.n_samples_left
        n = 1
        if depth > 1:
            small, large = sorted((rows[left], rows[~left]), key=len)
            small_hist = self.hist(small)
            if self.sparse:
                hist = self.hist(large)
            else:
                self.builder.compute_subtraction(hist, small_hist, self.features)
            for sub, sub_hist in ((small, small_hist), (large, hist)):
                if len(sub) >= 2:
                    n += self.check(depth - 1, sub, sub_hist)
        return n


# two categorical features (1 and 3) for make_node's data
CATEGORICAL = {
    "categorical": np.array([False, True, False, True]),
    "n_bins": (6, 8, 9, 13),
}


def split_fields(info):
    """A split's fields as a list, to compare two splits field for field."""
    fields = [info.found]
    if info.found:
        fields += [
            info.feature_idx,
            info.bin_idx,
            info.missing_go_to_left,
            info.is_categorical,
            info.criterion,
            info.gain,
            info.n_samples_left,
            info.sum_gradient_left,
            info.sum_hessian_left,
        ]
        if info.is_categorical:
            fields.append(tuple(info.left_cat_bitset))
    return fields


def same_splits_either_way(case, switch):
    """Node by node, breadth first from the root down to 15 nodes, the
    split found with the splitter's ``switch`` off and on: the same, field
    for field. The nodes compared."""
    nodes = [case.rows]
    n_nodes = 0
    while nodes and n_nodes < 15:
        rows = nodes.pop(0)
        hist = case.hist(rows)
        setattr(case.splitter, switch, False)
        off = case.split(rows, hist)
        setattr(case.splitter, switch, True)
        on = case.split(rows, hist)
        assert split_fields(on) == split_fields(off)
        n_nodes += 1
        if off.found:
            left = case.left_mask(rows, off)
            nodes += [rows[left], rows[~left]]
    return n_nodes


def fit_sklearn_mapper(mapper, X, sample_weight=None):
    """Fit scikit-learn's ``_BinMapper`` with the weights it takes: before
    1.9 it bins without them, and so does eraboost there."""
    if WEIGHTED_BINNING:
        return mapper.fit(X, sample_weight=sample_weight)
    return mapper.fit(X)
