"""Mapping of raw feature values to bins.

Float input goes through a binary search of each feature's thresholds,
eight values at a time in lockstep and without branches (``bin_lanes``).
Small-integer input (8 or 16 bits) goes through a lookup table per feature,
``lut[v - lo[f]]`` for ``lo[f] <= v <= hi[f]``, built once from the
thresholds; values below ``lo[f]`` go to bin 0 and values above ``hi[f]`` to
the last non-missing bin. Both give exactly scikit-learn's bins: the number of
thresholds strictly below the value.
"""
from cython.parallel import prange
from libc.math cimport isnan
import numpy as np

from ._common cimport BIN_t, uint8_t, uint32_t, int64_t
from libc.stdint cimport int8_t, int16_t, uint16_t, int32_t

ctypedef fused small_int_t:
    int8_t
    uint8_t
    int16_t
    uint16_t

ctypedef fused byte_int_t:
    int8_t
    uint8_t

# columns whose value counts one task keeps (int_value_counts): 32 x 256
# int64 counters, 64 kB, stay in the second-level cache
cdef enum:
    COUNT_COLUMNS = 32


# rows of a block: its values of every feature stay in cache while each
# feature's thresholds are searched, and its bins are written contiguously
cdef enum:
    BLOCK_ROWS = 512


cdef enum:
    LANES = 8


cdef inline int search_steps(int m) noexcept nogil:
    """The most steps the binary search of ``bin_lanes`` takes over m
    thresholds (each step leaves at most ceil((size - 1) / 2) of them)."""
    cdef int steps = 0
    while m > 0:
        m = m - 1 - ((m - 1) >> 1)
        steps += 1
    return steps


cdef void bin_lanes(const double *x, Py_ssize_t stride, int k,
                    const double *t, int m, int steps, BIN_t missing,
                    BIN_t *out) noexcept nogil:
    """out[j] = number of thresholds t[0 .. m-1] strictly below x[j * stride],
    ``missing`` for NaN, for j < k <= LANES.

    scikit-learn's binary search (its midpoint, so that the bins are the same
    even when a threshold is NaN), run on k values in lockstep: their
    searches are independent chains of loads and compares, and integer
    arithmetic replaces the unpredictable branches (a third of the time of
    one search after another). A lane whose search has ended (lo == hi)
    keeps its bounds."""
    cdef double v[LANES]
    cdef int lo[LANES]
    cdef int hi[LANES]
    cdef int j, _step, mid, active, left, right
    for j in range(k):
        v[j] = x[j * stride]
        lo[j] = 0
        hi[j] = m
    for _step in range(steps):
        for j in range(k):
            # in integer arithmetic, without branches
            active = <int>(hi[j] > lo[j])
            mid = (lo[j] + ((hi[j] - lo[j] - 1) >> 1)) & -active
            left = active & <int>(v[j] <= t[mid])
            right = active - left
            hi[j] += left * (mid - hi[j])
            lo[j] += right * (mid + 1 - lo[j])
    for j in range(k):
        out[j] = missing if isnan(v[j]) else <BIN_t>lo[j]


cdef void map_block(const double[:, :] X, Py_ssize_t i0, Py_ssize_t i1,
                    const size_t *ta, const int32_t *tn, const int32_t *steps,
                    const uint32_t *missing_bin, BIN_t[:, :] out) noexcept nogil:
    """Bins of rows i0 .. i1-1 of X, feature by feature."""
    cdef Py_ssize_t f, i, p = X.shape[1]
    cdef Py_ssize_t stride = X.strides[0] // <Py_ssize_t>sizeof(double)
    cdef BIN_t lanes[LANES]
    cdef int j, k
    for f in range(p):
        if tn[f] == 0:
            for i in range(i0, i1):
                out[i, f] = <BIN_t>missing_bin[f] if isnan(X[i, f]) else 0
            continue
        i = i0
        while i < i1:
            k = <int>min(<Py_ssize_t>LANES, i1 - i)
            bin_lanes(&X[i, f], stride, k, <const double *>ta[f], tn[f],
                      steps[f], <BIN_t>missing_bin[f], lanes)
            for j in range(k):
                out[i + j, f] = lanes[j]
            i += LANES


def map_to_bins(const double[:, :] X, list thresholds,
                const uint32_t[::1] missing_bin, BIN_t[:, :] out,
                int n_threads):
    """out[i, f] = number of thresholds of f strictly below X[i, f].

    Value x goes to bin k iff thresholds[k-1] < x <= thresholds[k]; NaN goes
    to ``missing_bin[f]``. Blocks of rows in parallel, every feature of a
    block in turn.
    """
    cdef Py_ssize_t n = X.shape[0], p = X.shape[1], b, i0, i1, n_blocks
    cdef Py_ssize_t f
    cdef const double[::1] t
    if len(thresholds) != p or missing_bin.shape[0] < p:
        raise ValueError("one threshold array and missing bin per feature")
    if X.strides[0] % <Py_ssize_t>sizeof(double):
        X = np.ascontiguousarray(X)
    # the thresholds' addresses (the list keeps the arrays alive)
    addresses = np.zeros(p, dtype=np.uintp)
    sizes = np.zeros(p, dtype=np.int32)
    search = np.zeros(p, dtype=np.int32)
    cdef size_t[::1] ta = addresses
    cdef int32_t[::1] tn = sizes
    cdef int32_t[::1] steps = search
    for f in range(p):
        t = thresholds[f]
        tn[f] = t.shape[0]
        steps[f] = search_steps(tn[f])
        if t.shape[0]:
            ta[f] = <size_t> &t[0]
    if n == 0 or p == 0:
        return
    n_blocks = (n + BLOCK_ROWS - 1) // BLOCK_ROWS
    with nogil:
        for b in prange(n_blocks, schedule='static', num_threads=n_threads):
            i0 = b * BLOCK_ROWS
            i1 = min(i0 + BLOCK_ROWS, n)
            map_block(X, i0, i1, &ta[0], &tn[0], &steps[0], &missing_bin[0], out)


def build_lookup(list thresholds, const int32_t[::1] lo, const int32_t[::1] hi):
    """Lookup tables of all features, concatenated.

    Entry ``start[f] + v - lo[f]`` is the number of thresholds of ``f``
    strictly below the integer ``v``, for ``lo[f] <= v <= hi[f]``.

    Returns
    -------
    lut : ndarray of uint8
    start : ndarray of int64, shape (n_features + 1,)
    """
    cdef Py_ssize_t f, p = lo.shape[0]
    cdef int64_t j, k
    cdef int32_t v
    cdef const double[::1] t
    start = np.zeros(p + 1, dtype=np.int64)
    cdef int64_t[::1] st = start
    for f in range(p):
        st[f + 1] = st[f] + max(hi[f] - lo[f] + 1, 0)
    lut = np.empty(st[p], dtype=np.uint8)
    cdef uint8_t[::1] L = lut
    for f in range(p):
        t = thresholds[f]
        k = 0
        j = st[f]
        for v in range(lo[f], hi[f] + 1):
            while k < t.shape[0] and t[k] < v:
                k += 1
            L[j] = <uint8_t>k
            j += 1
    return lut, start


def map_int_to_bins(const small_int_t[:, :] X, const uint8_t[::1] lut,
                    const int64_t[::1] start, const int32_t[::1] lo,
                    const int32_t[::1] hi, const uint32_t[::1] n_thresholds,
                    BIN_t[:, :] out, int n_threads):
    """Bins of integer input through the lookup tables of :func:`build_lookup`.

    Rows are processed in blocks (one block per task, all features of the
    block), so a C-ordered ``X`` is read in cache-sized pieces and each
    column of ``out`` is written contiguously.
    """
    cdef Py_ssize_t n = X.shape[0], p = X.shape[1]
    cdef Py_ssize_t block = 256, n_blocks = (n + block - 1) // block
    cdef Py_ssize_t blk, i, i0, i1, f
    cdef int32_t v, a, b
    cdef int64_t s
    cdef uint8_t top
    with nogil:
        for blk in prange(n_blocks, schedule='static', num_threads=n_threads):
            i0 = blk * block
            i1 = min(n, i0 + block)
            for f in range(p):
                a = lo[f]
                b = hi[f]
                s = start[f] - a
                top = <uint8_t>n_thresholds[f]
                for i in range(i0, i1):
                    v = X[i, f]
                    if v < a:
                        out[i, f] = 0
                    elif v > b:
                        out[i, f] = top
                    else:
                        out[i, f] = lut[s + v]


def int_column_range(const small_int_t[:, :] X, int n_threads):
    """Minimum and maximum of each column (int32 arrays).

    A column stored contiguously (Fortran order) is read through a pointer,
    its minimum and maximum kept in its own type without branches, which
    the compiler vectorises: a pass at memory speed over the bytes of a
    Numerai-sized int8 matrix, which would otherwise wait on a branch a
    value."""
    cdef Py_ssize_t n = X.shape[0], p = X.shape[1], i, f
    mins = np.zeros(p, dtype=np.int32)
    maxs = np.zeros(p, dtype=np.int32)
    cdef int32_t[::1] mn = mins, mx = maxs
    cdef small_int_t v, a, b
    cdef const small_int_t *col
    if n == 0:
        return mins, maxs
    cdef bint columns = X.strides[0] == sizeof(small_int_t)
    with nogil:
        for f in prange(p, schedule='dynamic', num_threads=n_threads):
            a = X[0, f]
            b = a
            if columns:
                col = &X[0, f]
                for i in range(1, n):
                    v = col[i]
                    a = v if v < a else a
                    b = v if v > b else b
            else:
                for i in range(1, n):
                    v = X[i, f]
                    a = v if v < a else a
                    b = v if v > b else b
            mn[f] = a
            mx[f] = b
    return mins, maxs


def int_value_counts(const byte_int_t[:, :] X, rows, int n_threads):
    """How many times each value occurs in each column of ``X``, over ``rows``.

    Parameters
    ----------
    X : ndarray of int8 or uint8, any memory layout
    rows : ndarray of int64 or None
        The rows counted, in any order and possibly repeated (a subsample);
        None for all of them.
    n_threads : int

    Returns
    -------
    counts : ndarray of int64, shape (n_features, 256)
        ``counts[f, v + 128]`` for int8, ``counts[f, v]`` for uint8.

    One pass over the rows, each row's bytes read together when ``X`` is
    stored by rows: the thresholds of a C-ordered matrix need no column
    copied out of it (a column of a C-ordered matrix is one cache line a
    value). Tasks are blocks of ``COUNT_COLUMNS`` columns, each with its own
    counters: the counts do not depend on the threads.
    """
    cdef Py_ssize_t n = X.shape[0], p = X.shape[1]
    cdef Py_ssize_t rs = X.strides[0], cs = X.strides[1]
    cdef Py_ssize_t m, i, r, j, j0, j1, blk
    cdef Py_ssize_t n_blocks = (p + COUNT_COLUMNS - 1) // COUNT_COLUMNS
    cdef const int64_t[::1] rr
    cdef const int64_t *rp = NULL
    cdef const char *base
    cdef const char *row
    cdef int off = 128 if byte_int_t is int8_t else 0
    counts = np.zeros((p, 256), dtype=np.int64)
    cdef int64_t[:, ::1] c = counts
    if rows is not None:
        rr = np.ascontiguousarray(rows, dtype=np.int64)
        m = rr.shape[0]
        if m:
            rp = &rr[0]
            if np.any(np.asarray(rr) < 0) or np.any(np.asarray(rr) >= n):
                raise IndexError(f"rows outside 0 .. {n - 1}")
    else:
        m = n
    if m == 0 or p == 0:
        return counts
    base = <const char *> &X[0, 0]
    with nogil:
        for blk in prange(n_blocks, schedule='dynamic', num_threads=n_threads):
            j0 = blk * COUNT_COLUMNS
            j1 = min(p, j0 + COUNT_COLUMNS)
            if (rs if rs > 0 else -rs) < (cs if cs > 0 else -cs):
                # stored by columns: a column at a time
                for j in range(j0, j1):
                    for i in range(m):
                        r = rp[i] if rp != NULL else i
                        c[j, <int>(<const byte_int_t *>(base + r * rs + j * cs))[0]
                          + off] += 1
            else:
                for i in range(m):
                    r = rp[i] if rp != NULL else i
                    row = base + r * rs
                    for j in range(j0, j1):
                        c[j, <int>(<const byte_int_t *>(row + j * cs))[0]
                          + off] += 1
    return counts


def columns_with_value(const BIN_t[:, :] X_binned,
                       const uint32_t[::1] value, int n_threads):
    """uint8 flags: does column f of ``X_binned`` hold ``value[f]`` anywhere.

    A matrix stored by columns is searched column by column (each search
    stops at the first match); one stored by rows, in blocks of rows."""
    cdef Py_ssize_t n = X_binned.shape[0], p = X_binned.shape[1], i, f
    cdef Py_ssize_t rs = X_binned.strides[0], cs = X_binned.strides[1]
    cdef Py_ssize_t b, n_blocks, block = 4096
    flags = np.zeros(p, dtype=np.uint8)
    cdef uint8_t[::1] fl = flags
    cdef BIN_t target
    cdef const BIN_t *col
    cdef const BIN_t *row
    if n == 0 or p == 0:
        return flags
    # the values sought, -1 for none (a bin above 255 is never stored)
    sought = np.asarray(value[:p]).astype(np.int64)
    sought = np.where(sought <= 255, sought, -1).astype(np.int16)
    cdef int16_t[::1] t = sought
    cdef uint8_t[:, ::1] found
    if cs == 1 and p > 1:
        n_blocks = (n + block - 1) // block
        found_blocks = np.zeros((n_blocks, p), dtype=np.uint8)
        found = found_blocks
        with nogil:
            for b in prange(n_blocks, schedule='static', num_threads=n_threads):
                for i in range(b * block, min(n, (b + 1) * block)):
                    row = &X_binned[i, 0]
                    for f in range(p):
                        found[b, f] |= <uint8_t>(row[f] == t[f])
        return found_blocks.any(axis=0).astype(np.uint8)
    with nogil:
        for f in prange(p, schedule='dynamic', num_threads=n_threads):
            if t[f] >= 0:
                target = <BIN_t>t[f]
                col = &X_binned[0, f]
                for i in range(n):
                    if col[i * rs] == target:
                        fl[f] = 1
                        break
    return flags


# rows of a tile of ``binned_by_columns``: the tile's rows (64 x the
# features' bytes) stay in cache while each column's 64 bytes, one cache
# line, are written
cdef enum:
    TILE_ROWS = 64


def binned_by_columns(const BIN_t[:, ::1] X_binned, int n_threads):
    """A copy of ``X_binned`` (stored by rows) stored by columns (Fortran
    order), written tile by tile of TILE_ROWS rows on the threads.

    The partition of a node's rows reads one feature of each row: a byte
    of a column here, against a cache line of every row from the matrix
    stored by rows (``engine.build_engine``)."""
    cdef Py_ssize_t n = X_binned.shape[0], p = X_binned.shape[1]
    cdef Py_ssize_t t, i, j, i1, n_tiles = (n + TILE_ROWS - 1) // TILE_ROWS
    out = np.empty((n, p), dtype=np.uint8, order="F")
    cdef BIN_t[::1, :] o = out
    if n == 0 or p == 0:
        return out
    with nogil:
        for t in prange(n_tiles, schedule='static', num_threads=n_threads):
            i1 = min(n, (t + 1) * TILE_ROWS)
            for j in range(p):
                for i in range(t * TILE_ROWS, i1):
                    o[i, j] = X_binned[i, j]
    return out
