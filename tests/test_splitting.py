"""The splitter on hand-made nodes, node by node against the NumPy reference
of the criteria (tests/reference.py).

Each test builds histograms with the engine's ``HistogramBuilder`` (the
larger child by subtraction, as the grower does), asks ``Splitter`` for the
best split, and compares it with ``reference.best_split`` on the same rows:
the feature, the bin (the set of left categories for a categorical feature),
the missing-value direction and the criterion's value; then it splits the
rows and checks the children the same way.
"""

import numpy as np
import pytest
import reference
from eraboost._histogram import HistogramBuilder, histogram_layout
from eraboost._splitting import PENALTY_KINDS, SPLIT_TYPE_CODES, Splitter
from reference import best_split

from eraboost._common import HIST_DTYPE, SPLIT_TYPES

ALPHAS = [-np.inf, -1.0, 0.0, 2.0, np.inf]


def make_node(
    seed,
    n_eras,
    n_bins=(6, 4, 9, 30),
    missing=(False, True, False, True),
    categorical=None,
    const_h=True,
    classification=False,
    rows_per_era=(3, 40),
):
    """Binned data whose last bin per feature is the missing-value bin.

    Feature 0 follows the era (deeper nodes miss eras), feature 2's effect
    changes sign with the era; ``categorical`` features get category effects.
    With ``classification``, gradients ``-w * y`` and hessians ``w`` of a 0/1
    target with integer weights ``w``.
    """
    rng = np.random.default_rng(seed)
    sizes = rng.integers(*rows_per_era, size=n_eras)
    eras = np.repeat(np.arange(n_eras), sizes).astype(np.int32)
    n = eras.size
    n_bins = np.asarray(n_bins, dtype=np.uint32)
    nbnm = n_bins - 1
    cols = [rng.integers(0, nbnm[f], size=n) for f in range(len(n_bins))]
    cols[0] = np.clip(
        eras * int(nbnm[0]) // n_eras + rng.integers(-1, 2, n), 0, nbnm[0] - 1
    )
    for f in range(len(n_bins)):
        if missing[f]:
            cols[f][rng.random(n) < 0.12] = nbnm[f]
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
    has_missing = np.array([(Xb[:, f] == nbnm[f]).any() for f in range(len(n_bins))])
    return Xb, n_bins, g, h, eras, has_missing.astype(np.uint8)


class Engine:
    """The builder and the splitter of one node's data, as the estimators
    set them up."""

    def __init__(
        self,
        Xb,
        n_bins,
        g,
        h,
        eras,
        has_missing,
        split_type,
        alpha=0.0,
        lam=0.0,
        msl=1,
        n_threads=1,
        categorical=None,
        **options,
    ):
        self.n_eras = int(eras.max()) + 1
        self.offsets = histogram_layout(n_bins, self.n_eras)
        self.builder = HistogramBuilder(
            Xb, n_bins, self.offsets, self.n_eras, eras, g, h, n_threads
        )
        self.splitter = Splitter(
            n_bins,
            self.offsets,
            self.n_eras,
            has_missing,
            np.zeros(len(n_bins), dtype=np.int8),
            SPLIT_TYPES[split_type],
            alpha,
            lam,
            reference.MIN_HESSIAN,
            msl,
            h.shape[0] == 1,
            n_threads,
            is_categorical=None
            if categorical is None
            else categorical.astype(np.uint8),
            **options,
        )
        self.features = np.arange(len(n_bins), dtype=np.uint32)
        self.g = g.astype(np.float64)
        self.h = np.broadcast_to(h, g.shape).astype(np.float64)
        self.lam = lam

    def hist(self, rows):
        out = np.empty(self.offsets[-1], dtype=HIST_DTYPE)
        self.builder.compute_brute(rows, out, self.features)
        return out

    def split(self, rows, hist):
        G, H = self.g[rows].sum(), self.h[rows].sum()
        return self.splitter.find_node_split(
            len(rows),
            hist,
            G,
            H,
            -G / (H + self.lam),
            -np.inf,
            np.inf,
            self.features,
            np.ones(len(self.features), dtype=np.uint8),
        )


def left_mask(Xb, n_bins, rows, info):
    col = Xb[rows, info.feature_idx]
    if info.is_categorical:
        bits = info.left_cat_bitset
        return ((bits[col >> 5] >> (col & 31)) & 1).astype(bool)
    miss = col == n_bins[info.feature_idx] - 1
    return ((col <= info.bin_idx) & ~miss) | (miss & info.missing_go_to_left)


def check_nodes(
    eng,
    Xb,
    n_bins,
    eras,
    has_missing,
    rows,
    hist,
    split_type,
    alpha,
    depth,
    categorical=None,
    **ref_options,
):
    """Compare the engine's split of ``rows`` with the reference's, then the
    children's (the smaller built, the larger by subtraction) down to
    ``depth``; returns the number of nodes compared."""
    info = eng.split(rows, hist)
    ref = best_split(
        Xb,
        eng.g,
        eng.h,
        eras,
        rows,
        n_bins - 1,
        has_missing,
        split_type,
        alpha,
        eng.lam,
        eng.splitter_msl,
        is_categorical=categorical,
        **ref_options,
    )
    if ref is None:
        assert not info.found, f"engine split {info}, the reference does not"
        return 1
    assert info.found, f"the engine finds no split; reference {ref}"
    f, b, miss_left, key = ref
    assert info.feature_idx == f, (info, ref)
    if info.is_categorical:
        left_bins = {
            c for c in range(256) if (info.left_cat_bitset[c >> 5] >> (c & 31)) & 1
        }
        assert left_bins == set(b), (info, ref)
    else:
        assert info.bin_idx == b, (info, ref)
        if has_missing[f] and (Xb[rows, f] == n_bins[f] - 1).any():
            assert info.missing_go_to_left == miss_left, (info, ref)
    if split_type == "directional":
        assert info.dnum == key[0]
        assert info.crit == pytest.approx(key[1], rel=1e-9, abs=1e-9)
    else:
        assert info.crit == pytest.approx(key[0], rel=1e-9, abs=1e-9)
    left = left_mask(Xb, n_bins, rows, info)
    assert left.sum() == info.n_samples_left
    n = 1
    if depth > 1:
        small, large = (rows[left], rows[~left])
        if len(small) > len(large):
            small, large = large, small
        small_hist = eng.hist(small)
        eng.builder.compute_subtraction(hist, small_hist, eng.features)
        for sub, sub_hist in ((small, small_hist), (large, hist)):
            if len(sub) >= 2:
                n += check_nodes(
                    eng,
                    Xb,
                    n_bins,
                    eras,
                    has_missing,
                    sub,
                    sub_hist,
                    split_type,
                    alpha,
                    depth - 1,
                    categorical,
                    **ref_options,
                )
    return n


def run(
    seed,
    split_type,
    alpha,
    n_eras,
    depth=3,
    lam=0.0,
    msl=1,
    n_threads=1,
    data=None,
    **options,
):
    data = data or {}
    categorical = data.get("categorical")
    Xb, n_bins, g, h, eras, has_missing = make_node(seed, n_eras, **data)
    eng = Engine(
        Xb,
        n_bins,
        g,
        h,
        eras,
        has_missing,
        split_type,
        alpha,
        lam,
        msl,
        n_threads,
        categorical,
        **options,
    )
    eng.splitter_msl = msl
    rows = np.argsort(eras, kind="stable").astype(np.uint32)
    ref_options = {}
    if options.get("irf_penalty"):
        ref_options["irf_penalty"] = options["irf_penalty"]
    if options.get("min_samples_leaf_per_era"):
        ref_options["min_samples_leaf_per_era"] = options["min_samples_leaf_per_era"]
    return check_nodes(
        eng,
        Xb,
        n_bins,
        eras,
        has_missing,
        rows,
        eng.hist(rows),
        split_type,
        alpha,
        depth,
        categorical,
        **ref_options,
    )


def test_split_type_codes():
    assert SPLIT_TYPE_CODES == SPLIT_TYPES
    assert sorted(PENALTY_KINDS.values()) == [0, 1]


@pytest.mark.parametrize("split_type", ["original", "era", "directional"])
@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("seed", range(3))
def test_numeric_nodes_match_reference(split_type, alpha, seed):
    """Missing values (both scans), 30 bins (several chunks of candidates),
    eras of 3 to 40 rows, some absent from deeper nodes."""
    assert run(seed, split_type, alpha, n_eras=5 + 4 * seed) >= 3


@pytest.mark.parametrize("split_type", ["original", "era", "directional"])
@pytest.mark.parametrize("alpha", [-np.inf, 0.0, 2.0])
def test_non_constant_hessians_and_l2(split_type, alpha):
    assert (
        run(7, split_type, alpha, n_eras=6, lam=1.5, msl=3, data={"const_h": False})
        >= 3
    )


@pytest.mark.parametrize("split_type", ["original", "era", "directional"])
@pytest.mark.parametrize("alpha", [-np.inf, 0.0, np.inf])
@pytest.mark.parametrize("seed", range(2))
def test_categorical_nodes_match_reference(split_type, alpha, seed):
    categorical = np.array([False, True, False, True])
    data = {
        "categorical": categorical,
        "n_bins": (6, 8, 9, 13),
        "rows_per_era": (20, 60),
    }
    assert run(seed, split_type, alpha, n_eras=5, data=data) >= 3


@pytest.mark.parametrize("split_type", ["original", "era", "directional"])
@pytest.mark.parametrize("categorical", [False, True])
@pytest.mark.parametrize("penalty", [0.3, 3.0])
def test_invariance_penalty_matches_reference(split_type, categorical, penalty):
    data = {"rows_per_era": (20, 60)}
    if categorical:
        data.update(
            categorical=np.array([False, True, False, True]), n_bins=(6, 8, 9, 13)
        )
    assert run(3, split_type, 0.0, n_eras=5, irf_penalty=penalty, data=data) >= 3


@pytest.mark.parametrize("split_type", ["original", "era", "directional"])
@pytest.mark.parametrize("categorical", [False, True])
def test_min_rows_per_era_matches_reference(split_type, categorical):
    data = {"rows_per_era": (15, 50)}
    if categorical:
        data.update(
            categorical=np.array([False, True, False, True]), n_bins=(6, 8, 9, 13)
        )
    assert (
        run(4, split_type, -1.0, n_eras=4, min_samples_leaf_per_era=3, data=data) >= 2
    )


def rate_spread_penalty(left, g, h, eras, lam):
    """Half the IRF classification penalty max_e I_e / min_e I_e - 1 from
    gradients -w y and hessians w (Liao et al. eq. 16-19), over the eras of
    the node: the reference's penalty term is ``irf_penalty * H * this``."""
    ratios = []
    for e in np.unique(eras):
        m = eras == e
        pos, n = -g[m].sum(), h[m].sum()
        pos_l, n_l = -g[m & left].sum(), h[m & left].sum()
        ratios.append(
            ((pos_l + 0.5) / (pos + 1)) / ((n_l - pos_l + 0.5) / (n - pos + 1))
        )
    return 0.5 * (max(ratios) / min(ratios) - 1) if len(ratios) > 1 else 0.0


@pytest.mark.parametrize("split_type", ["original", "era", "directional"])
@pytest.mark.parametrize("categorical", [False, True])
@pytest.mark.parametrize("penalty", [0.002, 0.01])
def test_rate_spread_penalty_matches_reference(
    monkeypatch, split_type, categorical, penalty
):
    """The forests' classification penalty (``irf_kind=1``) on numeric and
    categorical features: the reference with its penalty term replaced by
    the IRF classification penalty."""
    monkeypatch.setattr(reference, "invariance_penalty", rate_spread_penalty)
    data = {"classification": True, "rows_per_era": (20, 60)}
    if categorical:
        data.update(
            categorical=np.array([False, True, False, True]), n_bins=(6, 8, 9, 13)
        )
    assert (
        run(5, split_type, 0.0, n_eras=4, irf_penalty=penalty, irf_kind=1, data=data)
        >= 3
    )


def test_same_split_whatever_the_thread_count():
    """A node big enough to scan on two threads: the same split, bit for bit."""
    Xb, n_bins, g, h, eras, has_missing = make_node(
        8,
        64,
        n_bins=(6, 4, 9, 30) * 10,
        missing=(False, True, False, True) * 10,
        rows_per_era=(5, 20),
    )
    rows = np.argsort(eras, kind="stable").astype(np.uint32)
    infos = []
    for n_threads in (1, 2):
        eng = Engine(
            Xb, n_bins, g, h, eras, has_missing, "era", -1.0, n_threads=n_threads
        )
        assert eng.offsets[-1] >= 16384  # scanned on several threads
        info = eng.split(rows, eng.hist(rows))
        infos.append(
            {k: getattr(info, k) for k in info.__slots__ if k != "left_cat_bitset"}
        )
    assert infos[0] == infos[1]
    assert infos[0]["found"]


def test_bad_codes_are_refused():
    Xb, n_bins, g, h, eras, has_missing = make_node(0, 3)
    with pytest.raises(ValueError, match="split_type"):
        Engine(Xb, n_bins, g, h, eras, has_missing, "era").splitter.__init__(
            n_bins,
            histogram_layout(n_bins, 3),
            3,
            has_missing,
            np.zeros(4, dtype=np.int8),
            3,
            0.0,
            0.0,
            1e-3,
            1,
            True,
            1,
        )
    with pytest.raises(ValueError, match="irf_kind"):
        Engine(Xb, n_bins, g, h, eras, has_missing, "era", irf_kind=2)
