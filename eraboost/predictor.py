"""A fitted tree, flattened for fast prediction."""
import numpy as np

from ._openmp import effective_n_threads
from ._predictor import predict_binned, predict_raw


class TreePredictor:
    """One tree as an array of ``NODE_DTYPE`` records (root first).

    Parameters
    ----------
    nodes : ndarray of NODE_DTYPE
    """

    def __init__(self, nodes):
        self.nodes = nodes

    def get_n_leaf_nodes(self):
        return int(self.nodes["is_leaf"].sum())

    def get_max_depth(self):
        return int(self.nodes["depth"].max())

    def predict(self, X, n_threads=None):
        """Leaf values for a raw matrix: float64 (NaN = missing) or 8/16-bit integers."""
        out = np.empty(X.shape[0], dtype=np.float64)
        predict_raw(self.nodes, X, out, n_threads or effective_n_threads())
        return out

    def predict_binned(self, X_binned, missing_bin, n_threads=None):
        """Leaf values for a binned matrix."""
        out = np.empty(X_binned.shape[0], dtype=np.float64)
        predict_binned(self.nodes, X_binned, missing_bin, out,
                       n_threads or effective_n_threads())
        return out
