"""The tree grower on hand-made data, against the NumPy reference.

Each test bins a small matrix, assembles the engine (``engine.build_engine``)
and grows trees with ``TreeGrower`` directly (no estimator): every split
node must be the split the reference chooses on that node's rows, leaf
values are the pooled Newton values, best-first growth opens the leaf
whose best split scores highest by the criterion, and the growth limits
hold.
"""

import numpy as np
import pytest

from eraboost._engine._histogram import SparseHistogram
from eraboost._engine.binning import BinMapper
from eraboost._engine.engine import EngineSettings, build_engine
from eraboost._engine.grower import TreeGrower
from tests.engine.helpers import check_tree
from tests.engine.reference import best_split

SPLIT_TYPES = ["original", "era", "directional"]


def make_data(seed, n_eras=5, n=600, p=4, missing=None):
    """Integer features (some missing: in the features listed in ``missing``,
    all by default), eras of unequal size, a target whose feature-2 effect
    flips sign with the era."""
    rng = np.random.RandomState(seed)
    eras = np.sort(rng.randint(0, n_eras, size=n))
    X = rng.randint(0, 7, size=(n, p)).astype(np.float64)
    holes = rng.rand(n, p) < 0.05
    if missing is not None:
        holes[:, np.setdiff1d(np.arange(p), missing)] = False
    X[holes] = np.nan
    sign = np.where(np.arange(n_eras) % 2 == 0, 1.0, -1.0)[eras]
    y = np.nan_to_num(X[:, 0]) + sign * np.nan_to_num(X[:, 2]) + rng.normal(size=n)
    return X, y, eras


def grow(
    X,
    y,
    eras,
    split_type,
    alpha=0.0,
    lam=0.0,
    min_samples_leaf=5,
    shrinkage=1.0,
    buffer=None,
    rows_per_cell=None,
    **limits,
):
    """Bin, assemble the engine and grow one tree on the squared-error
    gradients at the mean (``buffer``: the partition's scratch, None for a
    new one; ``rows_per_cell``: sparse histograms below this many rows per
    cell of a feature's block, None for the builder's default); returns
    (grower, bin mapper, X_binned, g, h)."""
    bm = BinMapper(max_bins=255, random_state=0)
    Xb = bm.fit_transform(X)
    g = (np.mean(y) - y).astype(np.float32)
    h = np.ones(1, dtype=np.float32)  # a constant hessian
    settings = EngineSettings(
        split_type=split_type,
        boltzmann_alpha=alpha,
        l2_regularization=lam,
        min_samples_leaf=min_samples_leaf,
        max_leaf_nodes=limits.get("max_leaf_nodes"),
        max_depth=limits.get("max_depth"),
    )
    engine = build_engine(
        settings,
        Xb,
        bm,
        eras.astype(np.int32),
        g,
        h,
    )
    if rows_per_cell is not None:
        cells = engine.builder.size / Xb.shape[1]
        engine.builder.sparse_below = (
            int(rows_per_cell * cells) if engine.n_eras > 1 else 0
        )
    grower = TreeGrower(
        engine,
        engine.root_rows.copy(),
        engine.root_rows_are_identity,
        shrinkage=shrinkage,
        buffer=buffer,
    )
    grower.grow()
    return grower, bm, Xb, g.astype(np.float64), np.ones(len(y))


@pytest.mark.parametrize("split_type", SPLIT_TYPES)
@pytest.mark.parametrize("alpha", [-np.inf, 0.0])
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("missing", [None, [1, 3]])
# dense histograms only; sparse ones below a feature's per-era cells (the
# default); sparse ones for every node of the per-era path
@pytest.mark.parametrize("rows_per_cell", [0.0, None, 1e9])
def test_every_node_is_the_reference_split(
    split_type, alpha, seed, missing, rows_per_cell, monkeypatch
):
    # with 30 eras a block's padding is shorter than a bin's cells: reading
    # the absent missing-value bin would read the next feature's block
    n_eras = 5 if missing is None else 30
    X, y, eras = make_data(seed, n_eras=n_eras, missing=missing)
    grower, bm, Xb, g, h = grow(
        X, y, eras, split_type, alpha, max_depth=3, rows_per_cell=rows_per_cell
    )
    # the features without missing values have no missing-value bin in
    # their histogram blocks: 7 bins, plus 1 with missing values, of the
    # eras and the pooled row (one row without per-era criteria)
    with_missing = np.isnan(X).any(axis=0)
    assert with_missing.sum() == (4 if missing is None else 2)
    rows = 1 if split_type == "original" else n_eras + 1
    bins = np.where(with_missing, 8, 7)
    assert (np.diff(grower.engine.offsets) == (rows * bins + 4 + 31) // 32 * 32).all()
    nodes = grower.make_predictor(bm.bin_thresholds_).nodes
    n_checked = check_tree(
        nodes,
        bm,
        Xb,
        g,
        h,
        eras,
        np.arange(len(y)),
        0,
        split_type,
        alpha,
        0.0,
        5,
        0,
        3,
    )
    assert n_checked >= 3  # the root and at least its two children split


@pytest.mark.parametrize("lam, shrinkage", [(0.0, 1.0), (2.0, 0.1)])
def test_leaf_values_are_pooled_newton_values(lam, shrinkage):
    X, y, eras = make_data(7)
    grower, *_ = grow(X, y, eras, "era", lam=lam, shrinkage=shrinkage, max_leaf_nodes=8)
    g = np.mean(y) - y
    assert len(grower.finalized_leaves) == 8
    covered = np.concatenate([leaf.sample_indices for leaf in grower.finalized_leaves])
    assert np.array_equal(np.sort(covered), np.arange(len(y)))
    for leaf in grower.finalized_leaves:
        rows = leaf.sample_indices
        expected = -shrinkage * g[rows].sum() / (len(rows) + lam)
        assert leaf.value == pytest.approx(expected, rel=1e-5, abs=1e-9)


def _leaf_rows(grower):
    return {tuple(np.sort(leaf.sample_indices)) for leaf in grower.finalized_leaves}


@pytest.mark.parametrize("split_type", SPLIT_TYPES)
def test_best_first_opens_the_best_leaf(split_type):
    """The tree with k + 1 leaves splits, among the k leaves of the tree with
    k leaves, the one whose reference split scores highest."""
    X, y, eras = make_data(3)
    g = np.mean(y) - y
    h = np.ones(len(y))
    for k in range(2, 6):
        small, bm, Xb, *_ = grow(X, y, eras, split_type, max_leaf_nodes=k)
        big, *_ = grow(X, y, eras, split_type, max_leaf_nodes=k + 1)
        before, after = _leaf_rows(small), _leaf_rows(big)
        split_leaf = before - after
        assert len(split_leaf) == 1, "exactly one leaf is opened"
        has_missing = (Xb == bm.missing_bin_[None, :]).any(axis=0)
        keys = {}
        for rows in before:
            ref = best_split(
                Xb,
                g,
                h,
                eras,
                np.array(rows),
                bm.n_bins_non_missing_,
                has_missing,
                split_type,
                0.0,
                0.0,
                5,
            )
            if ref is not None:
                # the growth order: gain, S_era, or (D, S_era)
                keys[rows] = ref[3][:2] if split_type == "directional" else ref[3]
        assert split_leaf.pop() == max(keys, key=keys.get)


def test_growth_limits():
    X, y, eras = make_data(4)
    grower, *_ = grow(X, y, eras, "era", min_samples_leaf=40, max_depth=2)
    leaves = grower.finalized_leaves
    assert all(len(leaf.sample_indices) >= 40 for leaf in leaves)
    assert all(leaf.depth <= 2 for leaf in leaves)
    assert len(leaves) <= 4
    # nothing to gain: a constant target gives a single leaf
    grower, *_ = grow(X, np.zeros_like(y), eras, "era", max_leaf_nodes=8)
    assert len(grower.finalized_leaves) == 1


def _tree(grower):
    """Each leaf's rows and value, in a canonical order."""
    return sorted(
        (tuple(np.sort(leaf.sample_indices)), leaf.value)
        for leaf in grower.finalized_leaves
    )


@pytest.mark.parametrize("split_type", SPLIT_TYPES)
def test_a_shared_partition_buffer_grows_the_same_tree(split_type):
    """The partition's scratch handed in (what a fit's trees share, holding
    the last tree's rows) gives the tree of a new one; a scratch of another
    length or type is refused."""
    X, y, eras = make_data(6, n_eras=7, n=2000, p=5)
    new, *_ = grow(X, y, eras, split_type, max_leaf_nodes=12)
    junk = np.random.default_rng(0).integers(0, 2000, 2000).astype(np.uint32)
    shared, *_ = grow(X, y, eras, split_type, max_leaf_nodes=12, buffer=junk)
    assert shared.buffer is junk
    assert len(new.finalized_leaves) == 12
    assert _tree(shared) == _tree(new)
    for bad in (np.zeros(1999, dtype=np.uint32), np.zeros(2000, dtype=np.int64)):
        with pytest.raises(ValueError, match="buffer"):
            grow(X, y, eras, split_type, max_leaf_nodes=12, buffer=bad)


@pytest.mark.parametrize("split_type", SPLIT_TYPES)
@pytest.mark.parametrize("max_leaf_nodes", [2, 3, 8, 31])
def test_hopeless_histograms_are_freed_without_changing_the_tree(
    split_type, max_leaf_nodes, monkeypatch
):
    """Open leaves that can no longer be split give their histograms back
    (grower._release_hopeless): the same tree, about half the histograms
    (dense ones: the pool's)."""
    X, y, eras = make_data(5, n_eras=7, n=3000, p=6)
    dense = dict(max_leaf_nodes=max_leaf_nodes, rows_per_cell=0.0)
    freed, *_ = grow(X, y, eras, split_type, **dense)
    with monkeypatch.context() as m:
        m.setattr(TreeGrower, "_release_hopeless", lambda self: None)
        kept, *_ = grow(X, y, eras, split_type, **dense)
    assert _tree(freed) == _tree(kept)
    assert len(freed.finalized_leaves) == max_leaf_nodes
    assert freed.builder.pool.n_allocated <= max_leaf_nodes // 2 + 2
    if max_leaf_nodes == 31:
        assert kept.builder.pool.n_allocated >= 20


@pytest.mark.parametrize("split_type", ["era", "directional"])
def test_small_nodes_get_sparse_histograms_outside_the_pool(split_type, monkeypatch):
    """On the per-era path, nodes of fewer rows than a feature's per-era
    cells get sparse histograms, built from their rows and dropped once
    scanned: they never enter the pool, and the tree is the one of dense
    histograms (up to rounding: the same leaves)."""
    X, y, eras = make_data(3, n_eras=200, n=4000, p=5)
    built = []
    build = TreeGrower._build

    def spy(self, node, root=False, dense=False):
        hist = build(self, node, root, dense)
        built.append((node.n_samples, isinstance(hist, SparseHistogram)))
        return hist

    monkeypatch.setattr(TreeGrower, "_build", spy)
    sparse, *_ = grow(X, y, eras, split_type, max_leaf_nodes=16)
    below = sparse.builder.sparse_below
    assert 0 < below < len(y)
    assert any(is_sparse for _, is_sparse in built)
    # sparse below sparse_below rows; dense above, and below to be subtracted
    assert all(n < below for n, is_sparse in built if is_sparse)
    free = sparse.builder.pool._free
    assert free and not any(isinstance(buf, SparseHistogram) for buf in free)
    dense, *_ = grow(X, y, eras, split_type, max_leaf_nodes=16, rows_per_cell=0.0)
    assert dense.builder.sparse_below == 0
    got, want = _tree(sparse), _tree(dense)
    assert [rows for rows, _ in got] == [rows for rows, _ in want]
    np.testing.assert_allclose([v for _, v in got], [v for _, v in want], rtol=1e-12)


def test_no_sparse_histograms_on_the_pooled_path():
    X, y, eras = make_data(3, n_eras=40, n=4000, p=5)
    grower, *_ = grow(X, y, eras, "original", max_leaf_nodes=16)
    assert grower.builder.sparse_below == 0


def test_a_deep_tree_is_flattened_without_recursion():
    """A chain of splits deeper than the interpreter's recursion limit
    (each left child a leaf) is numbered depth first, left before right,
    without raising that limit; its predictions follow the splits: node d
    sends feature d's values up to 0.5 to its left leaf, of value d."""
    import sys
    from types import SimpleNamespace

    from eraboost._engine.grower import TreeNode

    X, y, eras = make_data(0)
    grower, *_ = grow(X, y, eras, "original", max_depth=1)
    limit = sys.getrecursionlimit()
    depth = 2 * limit + 3
    rows = np.zeros(0, dtype=np.uint32)
    root = node = TreeNode(0, rows, 0.0, 0.0, value=0.0)
    for d in range(depth):
        node.split_info = SimpleNamespace(
            feature_idx=d,
            bin_idx=0,
            missing_go_to_left=False,
            is_categorical=False,
            gain=1.0,
        )
        node.left_child = TreeNode(d + 1, rows, 0.0, 0.0, value=float(d))
        node.left_child.is_leaf = True
        node.right_child = TreeNode(d + 1, rows, 0.0, 0.0, value=float(depth))
        node = node.right_child
    node.is_leaf = True
    grower.root, grower.n_nodes = root, 2 * depth + 1
    grower.n_bins_non_missing = np.full(depth, 2, dtype=np.uint32)
    nodes = grower.make_predictor(np.full((depth, 1), 0.5)).nodes
    assert sys.getrecursionlimit() == limit
    inner = np.arange(0, 2 * depth, 2)
    np.testing.assert_array_equal(nodes["left"][inner], inner + 1)
    np.testing.assert_array_equal(nodes["right"][inner], inner + 2)
    np.testing.assert_array_equal(nodes["feature"][inner], np.arange(depth))
    assert nodes["is_leaf"].sum() == depth + 1
    k = np.array([0, 1, limit, depth - 1, depth])
    Xq = (np.arange(depth)[None, :] < k[:, None]).astype(np.float64)
    predictor = grower.make_predictor(np.full((depth, 1), 0.5))
    np.testing.assert_array_equal(predictor.predict(Xq, n_threads=1), k)
