"""A fitted tree, flattened for fast prediction."""

import numpy as np

from ._common import BITSET_DTYPE
from ._openmp import effective_n_threads
from ._predictor import predict_binned, predict_raw, predict_raw_trees


class TreePredictor:
    """One tree as an array of ``NODE_DTYPE`` records (root first).

    Parameters
    ----------
    nodes : ndarray of NODE_DTYPE
    binned_left_cat_bitsets : ndarray of uint32 (n_categorical_splits, 8), \
            default=None
        Bins going left at each categorical split (row ``bitset_idx`` of the
        node), missing-value bin included when missing values go left.
    raw_left_cat_bitsets : ndarray of uint32 (n_categorical_splits, 8), \
            default=None
        The same sets as raw (ordinal-encoded) category values, without the
        missing-value bin.
    """

    def __init__(self, nodes, binned_left_cat_bitsets=None, raw_left_cat_bitsets=None):
        self.nodes = nodes
        if binned_left_cat_bitsets is None or raw_left_cat_bitsets is None:
            empty = np.zeros((0, 8), dtype=BITSET_DTYPE)
        self.binned_left_cat_bitsets = (
            empty if binned_left_cat_bitsets is None else binned_left_cat_bitsets
        )
        self.raw_left_cat_bitsets = (
            empty if raw_left_cat_bitsets is None else raw_left_cat_bitsets
        )

    def get_n_leaf_nodes(self):
        return int(self.nodes["is_leaf"].sum())

    def get_max_depth(self):
        return int(self.nodes["depth"].max())

    def predict(self, X, n_threads=None):
        """Leaf values of a raw matrix: float64 (NaN = missing) or 8/16-bit ints."""
        out = np.empty(X.shape[0], dtype=np.float64)
        predict_raw(
            self.nodes,
            X,
            self.raw_left_cat_bitsets,
            out,
            n_threads or effective_n_threads(),
        )
        return out

    def predict_binned(self, X_binned, missing_bin, n_threads=None):
        """Leaf values for a binned matrix."""
        out = np.empty(X_binned.shape[0], dtype=np.float64)
        predict_binned(
            self.nodes,
            X_binned,
            missing_bin,
            self.binned_left_cat_bitsets,
            out,
            n_threads or effective_n_threads(),
        )
        return out


def _joined(arrays, dtype):
    """``arrays`` (C-contiguous, of one dtype) joined as bytes, by blocks:
    concatenating structured arrays compares their dtypes one by one."""
    if len(arrays) == 1:
        return arrays[0]
    step = 4096
    blocks = [
        np.concatenate([a.view(np.uint8).ravel() for a in arrays[i : i + step]])
        for i in range(0, len(arrays), step)
    ]
    return np.concatenate(blocks).view(dtype)


def stacked_trees(stages):
    """The trees of ``stages`` (lists of :class:`TreePredictor`, the
    ``k``-th tree of a stage adding to output ``k``) as the arguments of
    :func:`add_raw_predictions`: their nodes and raw category bitsets
    concatenated, where each tree starts, and its output. None without
    trees."""
    trees = [tree for stage in stages for tree in stage]
    if not trees:
        return None
    columns = np.fromiter(
        (k for stage in stages for k in range(len(stage))), np.intp, len(trees)
    )
    counts = np.fromiter((t.nodes.shape[0] for t in trees), np.intp, len(trees))
    bitsets = [t.raw_left_cat_bitsets for t in trees]
    n_bitsets = np.fromiter((b.shape[0] for b in bitsets), np.intp, len(trees))
    nonempty = [b for b in bitsets if b.shape[0]]
    cat_bitsets = (
        np.concatenate(nonempty) if nonempty else np.zeros((0, 8), BITSET_DTYPE)
    )
    return (
        _joined([t.nodes for t in trees], trees[0].nodes.dtype),
        np.cumsum(counts) - counts,
        np.cumsum(n_bitsets) - n_bitsets,
        columns,
        cat_bitsets,
    )


def add_raw_predictions(stacked, X, raw, n_threads=None):
    """``raw[:, k] += tree.predict(X)`` for the ``k``-th tree of each stage
    of :func:`stacked_trees`, stage by stage: the same sums, bit for bit,
    in one pass over the rows instead of one call per tree (a model of many
    small trees spends its time in the calls).

    ``raw`` is float64 of shape (n_samples, K), Fortran order.
    """
    if stacked is None:
        return
    nodes, node_starts, bitset_starts, columns, cat_bitsets = stacked
    predict_raw_trees(
        nodes,
        node_starts,
        bitset_starts,
        columns,
        X,
        cat_bitsets,
        raw,
        n_threads or effective_n_threads(),
    )
