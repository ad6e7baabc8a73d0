"""A fitted tree, flattened for fast prediction."""

import numpy as np

from ._common import BITSET_DTYPE
from ._openmp import effective_n_threads
from ._predictor import predict_binned, predict_raw


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
