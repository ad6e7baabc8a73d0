"""The partition of a node's rows by its split: a stable partition in place,
left rows first, on the threads, and the copy of a tree's rows into the
buffer its grower reorders."""
from cython.parallel import prange
from libc.stdlib cimport calloc, free
from libc.string cimport memcpy

from ._common cimport (BIN_t, uint8_t, uint32_t, in_bitset, ROWS_PER_THREAD,
                       prefetch, PREFETCH_ROWS)


def split_indices(const BIN_t[:, :] X_binned, int feature, unsigned int bin_idx,
                  bint missing_go_to_left, unsigned int missing_bin,
                  uint32_t[::1] sample_indices, uint32_t[::1] buffer,
                  int n_threads):
    """Stable partition of ``sample_indices`` in place: left rows first.

    A row goes left when its bin is <= ``bin_idx``, or when it is missing
    (bin == ``missing_bin``) and ``missing_go_to_left``. The relative order of
    rows is kept on each side (so rows stay grouped by era), whatever the
    number of threads. Returns the number of rows going left.
    """
    cdef uint8_t goes_left[256]
    cdef unsigned int v
    for v in range(256):
        goes_left[v] = v <= bin_idx or (missing_go_to_left and v == missing_bin)
    return _partition(X_binned[:, feature], goes_left, sample_indices, buffer,
                      n_threads)


def copy_rows(uint32_t[::1] dst not None, const uint32_t[::1] src not None,
              int n_threads):
    """``dst[:] = src``, in contiguous chunks on ``n_threads`` threads (a
    tree's root rows into the partition buffer that its grower reorders:
    a serial copy of millions of rows a tree does not scale)."""
    cdef Py_ssize_t n = src.shape[0], chunk, lo, hi
    cdef int t, nt = n_threads if n >= ROWS_PER_THREAD * n_threads else 1
    if dst.shape[0] != n:
        raise ValueError(f"copy_rows: {dst.shape[0]} rows for {n}")
    if n == 0:
        return
    nt = max(1, nt)
    chunk = (n + nt - 1) // nt
    with nogil:
        for t in prange(nt, schedule='static', chunksize=1, num_threads=nt):
            lo = t * chunk
            hi = min(n, lo + chunk)
            if hi > lo:
                memcpy(&dst[lo], &src[lo], (hi - lo) * sizeof(uint32_t))


def split_indices_categorical(const BIN_t[:, :] X_binned, int feature,
                              const uint32_t[::1] left_cat_bitset,
                              uint32_t[::1] sample_indices, uint32_t[::1] buffer,
                              int n_threads):
    """As :func:`split_indices` for a categorical split: a row goes left when
    its bin (the missing-value bin included) is in ``left_cat_bitset``."""
    cdef uint8_t goes_left[256]
    cdef unsigned int v
    for v in range(256):
        goes_left[v] = in_bitset(&left_cat_bitset[0], v)
    return _partition(X_binned[:, feature], goes_left, sample_indices, buffer,
                      n_threads)


cdef Py_ssize_t _partition(const BIN_t[:] col, const uint8_t *goes_left,
                           uint32_t[::1] sample_indices, uint32_t[::1] buffer,
                           int n_threads) except -1:
    """Stable in-place partition of the rows by ``goes_left[bin]``."""
    cdef Py_ssize_t n = sample_indices.shape[0]
    cdef int t, nt = n_threads if n >= ROWS_PER_THREAD * n_threads else 1
    cdef Py_ssize_t chunk = (n + nt - 1) // nt if nt > 0 else n
    cdef Py_ssize_t *nleft = <Py_ssize_t *> calloc(nt + 1, sizeof(Py_ssize_t))
    cdef Py_ssize_t *nright = <Py_ssize_t *> calloc(nt + 1, sizeof(Py_ssize_t))
    cdef Py_ssize_t i, lo, hi, nl, nr, gl, pos_l, pos_r, total_left = 0
    cdef uint32_t row
    cdef bint strided = col.strides[0] != 1
    if nleft == NULL or nright == NULL:
        free(nleft)
        free(nright)
        raise MemoryError()
    with nogil:
        for t in prange(nt, schedule='static', chunksize=1, num_threads=nt):
            lo = t * chunk
            hi = min(n, lo + chunk)
            nl = 0
            nr = 0
            # left rows go to the front of the chunk in buffer, right rows to
            # the back (reversed), then are copied out in order
            for i in range(lo, hi):
                row = sample_indices[i]
                if strided and i + 4 * PREFETCH_ROWS < hi:
                    # a matrix stored by rows: a cache line a row, asked
                    # for further ahead than the histograms' rows (a row
                    # here is a few instructions of work, not a chunk of
                    # features)
                    prefetch(&col[sample_indices[i + 4 * PREFETCH_ROWS]])
                # both ends written, one kept: no branch to mispredict
                # (balanced splits send rows either way at random)
                gl = goes_left[col[row]]
                buffer[lo + nl] = row
                buffer[hi - 1 - nr] = row
                nl = nl + gl
                nr = nr + (1 - gl)
            nleft[t] = nl
            nright[t] = nr
        for t in range(nt):
            total_left = total_left + nleft[t]
        for t in prange(nt, schedule='static', chunksize=1, num_threads=nt):
            lo = t * chunk
            hi = min(n, lo + chunk)
            pos_l = 0
            pos_r = total_left
            for i in range(t):
                pos_l = pos_l + nleft[i]
                pos_r = pos_r + nright[i]
            if nleft[t] > 0:
                memcpy(&sample_indices[pos_l], &buffer[lo], nleft[t] * sizeof(uint32_t))
            for i in range(nright[t]):
                sample_indices[pos_r + i] = buffer[hi - 1 - i]
    free(nleft)
    free(nright)
    return total_left
