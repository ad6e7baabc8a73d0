"""Mapping of raw feature values to bins."""
from cython.parallel import prange
from libc.math cimport isnan

from ._common cimport BIN_t, uint32_t


def map_to_bins(const double[:, :] X, list thresholds,
                const uint32_t[::1] missing_bin, BIN_t[::1, :] out,
                int n_threads):
    """out[i, f] = number of thresholds of f strictly below X[i, f].

    Value x goes to bin k iff thresholds[k-1] < x <= thresholds[k]; NaN goes
    to ``missing_bin[f]``.
    """
    cdef Py_ssize_t i, n = X.shape[0]
    cdef int f, lo, hi, mid
    cdef const double[::1] t
    cdef double x
    for f in range(X.shape[1]):
        t = thresholds[f]
        with nogil:
            for i in prange(n, schedule='static', num_threads=n_threads):
                x = X[i, f]
                if isnan(x):
                    out[i, f] = <BIN_t>missing_bin[f]
                else:
                    lo = 0
                    hi = t.shape[0]
                    while lo < hi:
                        mid = (lo + hi) // 2
                        if x <= t[mid]:
                            hi = mid
                        else:
                            lo = mid + 1
                    out[i, f] = <BIN_t>lo
