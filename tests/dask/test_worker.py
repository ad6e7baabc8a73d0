"""A worker's per-era histograms are the engine's, checked in one process.

``EraShard`` (the Dask actor) builds its histograms with the engine's
``HistogramBuilder`` and takes a split's larger child as its parent's
minus the smaller child's. Each node's per-era sums are compared with
their NumPy reference over the node's rows (``_split.era_histograms``,
``np.bincount`` per feature and era), and the rows of each child with a
boolean mask.
"""

import numpy as np
import pytest

from eraboost import HistGradientBoostingRegressor
from eraboost._engine._histogram import HistogramBuilder, histogram_layout
from eraboost._engine.binning import BinMapper
from eraboost.dask._split import Candidates, era_histograms, worker_partials
from eraboost.dask._worker import EraShard


def make_shard(weighted, era_path, n=2400, n_eras=12, total_eras=None, seed=0):
    """A shard of ``n_eras`` eras from two chunks that cut through them:
    three float features with missing values (many bins, stored by
    columns) and three of five values (few bins). ``total_eras``: the
    fit's eras, all workers together (default: the shard's)."""
    rng = np.random.RandomState(seed)
    eras = rng.randint(0, n_eras, n)
    X = np.column_stack(
        [rng.normal(size=(n, 3)), rng.randint(0, 5, (n, 3)).astype(np.float64)]
    )
    X[rng.rand(n, 6) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 0]) * np.where(eras % 2, 1.0, -1.0) + rng.normal(size=n)
    w = rng.uniform(0.5, 2.0, n) if weighted else None
    half = n // 2
    pieces = [
        (
            np.arange(a, b),
            X[a:b],
            y[a:b],
            None if w is None else w[a:b],
            eras[a:b].astype(np.int32),
        )
        for a, b in ((half, n), (0, half))
    ]
    shard = EraShard(pieces, None)
    mapper = BinMapper(n_threads=1).fit(X)
    has_missing = shard.bin(mapper)
    loss = HistGradientBoostingRegressor()._get_loss(
        sample_weight=None if w is None else np.ones(1)
    )
    settings = {
        "split_type": "era" if era_path else "original",
        "alpha": 0.0,
        "lam": 0.0,
        "era_path": era_path,
        "min_agreement": 0.0,
        "pooled_weight": 0.0,
        "irf_penalty": 0.0,
        "min_samples_leaf_per_era": 0,
        "min_rows_per_era_split": 2,
        "constant_hessian": bool(loss.constant_hessian),
        "n_eras": total_eras or n_eras,
    }
    baseline = np.full((1, 1), np.mean(y))
    shard.start(loss, baseline, mapper.n_bins_non_missing_, has_missing, settings)
    shard.update_gradients()
    return shard, mapper, has_missing, settings


def reference(shard, rows):
    n_eras = shard.n_eras if shard.settings["era_path"] else 1
    codes = shard.era_codes if n_eras > 1 else np.zeros_like(shard.era_codes)
    return era_histograms(
        np.asarray(shard.X_binned),
        np.asarray(rows, dtype=np.int64),
        codes,
        n_eras,
        shard.gradients,
        shard.hessians,
        shard.cands.width,
    )


def assert_node(shard, node, rows):
    ref = reference(shard, rows)
    got = shard.histograms(node)
    np.testing.assert_array_equal(got[2], ref[2])
    # float32 gradients summed in double, in another order where the
    # engine sums an era's long runs in lanes or subtracts
    np.testing.assert_allclose(got[:2], ref[:2], rtol=1e-12, atol=1e-9)


def side(shard, rows, feature, bin_idx, missing_left):
    col = np.asarray(shard.X_binned)[rows, feature]
    missing = col == shard.n_bins_non_missing[feature]
    left = np.where(missing, missing_left, col <= bin_idx)
    return rows[left], rows[~left]


@pytest.mark.parametrize("era_path", [True, False], ids=["eras", "pooled"])
@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
def test_histograms_with_subtraction(weighted, era_path):
    shard, mapper, has_missing, settings = make_shard(weighted, era_path)
    # every node's histogram kept for a subtraction, whatever its rows
    shard.subtract_from = 0
    all_rows = np.arange(shard.n_rows())
    parts = shard.root(0)
    assert_node(shard, 0, all_rows)
    ref = reference(shard, all_rows)
    cands = Candidates.of(mapper.n_bins_non_missing_, has_missing, era_path)
    expected = worker_partials(ref, cands, mapper.n_bins_non_missing_, settings)
    assert parts.keys() == expected.keys()
    for name in parts:
        np.testing.assert_allclose(parts[name], expected[name], rtol=1e-9, atol=1e-9)

    # a split of the root on a float feature with missing values: the
    # larger child is the root's histogram minus the smaller child's
    left, right = side(shard, all_rows, 0, 100, True)
    root_hist = shard.hists[0]
    sizes = (left.size, right.size)
    shard.split(0, 0, 0, 100, True, (1, 2), [True, True], sizes)
    large = 1 if left.size >= right.size else 2
    assert shard.hists[large] is root_hist
    for node, rows in ((1, left), (2, right)):
        np.testing.assert_array_equal(np.sort(shard.nodes[node]), rows)
        assert_node(shard, node, rows)

    # then the subtracted child, split on a five-valued feature, with its
    # smaller child a leaf (built, subtracted, not sent)
    rows = left if large == 1 else right
    a, b = side(shard, rows, 4, 1, False)
    scan = [a.size >= b.size, b.size > a.size]
    out = shard.split(0, large, 4, 1, False, (3, 4), scan, (a.size, b.size))
    assert [o is None for o in out] == [not s for s in scan]
    kept = 3 if scan[0] else 4
    assert shard.hists[kept] is root_hist
    assert_node(shard, kept, a if scan[0] else b)


def test_subtraction_cutoff_is_the_engines():
    """The shard subtracts where the single machine's builder, over all
    the fit's eras, would: from its ``sparse_below`` rows."""
    shard, mapper, has_missing, _ = make_shard(False, True, total_eras=30)
    block_bins = (mapper.n_bins_non_missing_ + has_missing).astype(np.uint32)
    engine = HistogramBuilder(
        np.zeros((4, block_bins.size), dtype=np.uint8),
        block_bins,
        histogram_layout(block_bins, 30),
        30,
        np.arange(4, dtype=np.int32),
        np.zeros(4, dtype=np.float32),
        np.ones(1, dtype=np.float32),
        1,
    )
    assert shard.subtract_from == engine.sparse_below > 0
    # without eras kept apart, every node is subtracted from
    pooled, _, _, _ = make_shard(False, False, total_eras=30)
    assert pooled.subtract_from == 0


def test_children_from_rows_below_the_cutoff():
    """Where the single machine builds both children from their rows (the
    larger below its subtraction cut-off), so does the shard."""
    shard, _, _, _ = make_shard(False, True)
    all_rows = np.arange(shard.n_rows())
    shard.root(0)
    root_hist = shard.hists[0]
    left, right = side(shard, all_rows, 1, 60, False)
    shard.subtract_from = shard.n_rows() + 1
    shard.split(0, 0, 1, 60, False, (1, 2), [True, True], (left.size, right.size))
    assert all(shard.hists.get(n) is not root_hist for n in (1, 2))
    # below the cut-off no child is kept for a subtraction
    assert shard.hists == {}


def test_predictions_from_leaves():
    """``add_leaves`` adds each leaf's value to its rows and frees the
    tree's histograms."""
    shard, _, _, _ = make_shard(False, True)
    all_rows = np.arange(shard.n_rows())
    before = shard.raw.copy()
    shard.root(0)
    left, right = side(shard, all_rows, 3, 2, True)
    shard.split(0, 0, 3, 2, True, (1, 2), [False, False], (left.size, right.size))
    shard.add_leaves(0, {1: 0.5, 2: -0.25})
    expected = before[:, 0].copy()
    expected[left] += 0.5
    expected[right] -= 0.25
    np.testing.assert_array_equal(shard.raw[:, 0], expected)
    assert shard.hists == {} and shard.nodes == {}


def test_shard_bins_its_pieces_without_copying_them():
    """The shard's bins and rows are those of its pieces' rows grouped by
    era, each era's rows in the table's order (a NumPy reference: a stable
    sort of the concatenation), and it never holds a copy of the raw
    features: what it allocates while it takes its pieces and bins them is
    well below the raw features' bytes."""
    import itertools
    import tracemalloc

    rng = np.random.RandomState(0)
    n, p, n_eras = 6000, 400, 9
    X = rng.randint(-3, 40, (n, p)).astype(np.int8)
    y = rng.normal(size=n)
    eras = rng.randint(0, n_eras, n).astype(np.int64)
    cuts = [0, 1700, 1701, 4000, n]
    pieces = [
        (np.arange(a, b), X[a:b], y[a:b], None, eras[a:b])
        for a, b in itertools.pairwise(cuts)
    ][::-1]
    mapper = BinMapper(n_threads=1).fit(X)
    tracemalloc.start()
    try:
        shard = EraShard(pieces, None)
        _, taken = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        shard.bin(mapper)
        _, binned = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    order = np.argsort(eras, kind="stable")
    np.testing.assert_array_equal(shard.rows, order)
    np.testing.assert_array_equal(shard.y, y[order])
    np.testing.assert_array_equal(shard.eras[shard.era_codes], eras[order])
    np.testing.assert_array_equal(shard.X_binned, mapper.transform(X)[order])
    # rows, codes, targets and their order (a few 8-byte values a row), no
    # raw matrix; then the bins (a byte a value) and one piece's at a time
    assert taken < 0.5 * X.nbytes
    assert binned < 1.6 * X.nbytes


def test_pieces_of_a_chunk():
    """Each worker's piece of a chunk holds the chunk's rows of its eras
    (a NumPy reference: a mask of the owners); a chunk of one worker's eras
    alone is passed on as it is, without a copy of its features."""
    from eraboost.dask._placement import _select

    rng = np.random.RandomState(1)
    labels = np.array([10, 20, 30, 40])
    owner = np.array([0, 1, 0, 1])
    X = rng.randint(0, 5, (50, 4)).astype(np.int8)
    y = rng.normal(size=50)
    eras = rng.choice(labels, 50)
    for worker in (0, 1):
        rows, Xw, yw, sw, codes = _select(X, y, None, eras, 100, labels, owner, worker)
        mine = owner[np.searchsorted(labels, eras)] == worker
        np.testing.assert_array_equal(rows, 100 + np.flatnonzero(mine))
        np.testing.assert_array_equal(Xw, X[mine])
        np.testing.assert_array_equal(yw, y[mine])
        np.testing.assert_array_equal(labels[codes], eras[mine])
        assert sw is None
    alone = np.where(eras <= 20, 20, 40)  # worker 1's eras alone
    rows, Xw, yw, _, codes = _select(X, y, None, alone, 0, labels, owner, 1)
    np.testing.assert_array_equal(rows, np.arange(50))
    np.testing.assert_array_equal(labels[codes], alone)
    assert np.shares_memory(Xw, X) and np.shares_memory(yw, y)


KERNEL_SETTINGS = {
    "era": {"split_type": "era"},
    "directional": {"split_type": "directional"},
    "era_max": {"split_type": "era", "alpha": np.inf},
    "era_min": {"split_type": "era", "alpha": -np.inf},
    "era_alpha_1": {"split_type": "era", "alpha": 1.0},
    "era_alpha_-2": {"split_type": "era", "alpha": -2.0, "lam": 1.0},
    "irf": {"split_type": "era", "irf_penalty": 1.0, "lam": 0.5},
    "agreement": {"split_type": "directional", "min_agreement": 0.5},
    "original_options": {
        "split_type": "original",
        "min_samples_leaf_per_era": 3,
        "irf_penalty": 1.0,
        "min_agreement": 0.5,
    },
    "min_side": {"split_type": "era", "min_samples_leaf_per_era": 3},
    "few_rows_per_era": {"split_type": "era", "min_rows_per_era_split": 150},
}


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("case", sorted(KERNEL_SETTINGS))
def test_kernel_partials_are_the_numpy_references(case, weighted):
    """The engine's kernel (``_era_reduce.era_partials``) on the histogram
    buffer gives ``worker_partials``'s sums on the same per-era sums, for
    every criterion and option, at the root and at a child."""
    shard, mapper, _, settings = make_shard(weighted, era_path=True)
    shard.settings.update(KERNEL_SETTINGS[case])
    settings = shard.settings
    shard.subtract_from = 0
    all_rows = np.arange(shard.n_rows())
    got_parts = [shard.root(0)]
    hists = [shard.histograms(0)]
    left, right = side(shard, all_rows, 3, 2, False)
    sizes = (left.size, right.size)
    got_parts += shard.split(0, 0, 3, 2, False, (1, 2), [True, True], sizes)
    hists += [shard.histograms(1), shard.histograms(2)]
    alpha = settings["alpha"]
    for got, hist in zip(got_parts, hists):
        ref = worker_partials(hist, shard.cands, mapper.n_bins_non_missing_, settings)
        assert got.keys() == ref.keys()
        for name in ref:
            assert got[name].dtype == ref[name].dtype, name
            if ref[name].dtype.kind == "i":
                np.testing.assert_array_equal(got[name], ref[name], err_msg=name)
            elif name not in ("shift", "num", "den"):
                np.testing.assert_allclose(
                    got[name], ref[name], rtol=1e-9, atol=1e-9, err_msg=name
                )
        if "shift" in ref:
            # the Boltzmann sums, each with its own shift: the same ratio
            # and the same sum of weights at a common shift
            np.testing.assert_allclose(
                got["num"] / got["den"], ref["num"] / ref["den"], rtol=1e-9
            )
            scale = np.exp(
                alpha * (got["shift"].astype(float) - ref["shift"].astype(float))
            )
            np.testing.assert_allclose(got["den"] * scale, ref["den"], rtol=1e-9)
