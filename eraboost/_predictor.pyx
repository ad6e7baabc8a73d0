"""Tree traversal for raw (float) and binned input."""
from cython.parallel import prange
from libc.math cimport isnan
import numpy as np

from libc.stdint cimport int8_t, int16_t, uint16_t

from ._common cimport node_t, BIN_t, uint8_t, uint32_t


ctypedef fused raw_t:
    double
    int8_t
    uint8_t
    int16_t
    uint16_t


def predict_raw(const node_t[::1] nodes, const raw_t[:, :] X, double[::1] out,
                int n_threads):
    """out[i] = value of the leaf reached by row i of the raw matrix X.

    X is float64 (NaN = missing) or a small integer type, compared with the
    float thresholds as is (no float copy of X).
    """
    cdef Py_ssize_t i, n = X.shape[0]
    cdef const node_t *node
    cdef double x
    with nogil:
        for i in prange(n, schedule='static', num_threads=n_threads):
            node = &nodes[0]
            while not node.is_leaf:
                x = X[i, node.feature]
                if raw_t is double and isnan(x):
                    if node.missing_left:
                        node = &nodes[node.left]
                    else:
                        node = &nodes[node.right]
                elif x <= node.threshold:
                    node = &nodes[node.left]
                else:
                    node = &nodes[node.right]
            out[i] = node.value


def predict_binned(const node_t[::1] nodes, const BIN_t[:, :] X,
                   const uint32_t[::1] missing_bin, double[::1] out,
                   int n_threads):
    """out[i] = value of the leaf reached by row i of the binned matrix X."""
    cdef Py_ssize_t i, n = X.shape[0]
    cdef const node_t *node
    cdef BIN_t b
    with nogil:
        for i in prange(n, schedule='static', num_threads=n_threads):
            node = &nodes[0]
            while not node.is_leaf:
                b = X[i, node.feature]
                if b == missing_bin[node.feature]:
                    if node.missing_left:
                        node = &nodes[node.left]
                    else:
                        node = &nodes[node.right]
                elif b <= node.bin_threshold:
                    node = &nodes[node.left]
                else:
                    node = &nodes[node.right]
            out[i] = node.value


def add_leaf_values(double[::1] raw, const uint32_t[::1] indices, double value):
    """raw[indices] += value."""
    cdef Py_ssize_t i
    with nogil:
        for i in range(indices.shape[0]):
            raw[indices[i]] += value
