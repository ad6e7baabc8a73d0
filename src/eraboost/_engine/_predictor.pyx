"""Tree traversal for raw (float) and binned input."""
from cython.parallel import prange
from libc.math cimport isnan
import numpy as np

from libc.stdint cimport int8_t, int16_t, uint16_t

from ._common cimport (node_t, BIN_t, uint8_t, uint32_t, in_bitset,
                       PREDICT_ROWS_PER_THREAD)


ctypedef fused raw_t:
    double
    int8_t
    uint8_t
    int16_t
    uint16_t


cdef inline bint raw_goes_left(const node_t *node, double x,
                               const uint32_t[:, ::1] cat_bitsets) noexcept nogil:
    """Side of raw value x at a split node.

    Categorical node: categories 0 .. threshold - 1 are known; a known
    category goes left iff it is in the node's bitset. NaN and values outside
    the known range (unknown or negative categories) go to the missing-value
    side, as in scikit-learn.
    """
    if isnan(x):
        return node.missing_left
    if node.is_categorical:
        if x < 0.0 or x >= node.threshold:
            return node.missing_left
        return in_bitset(&cat_bitsets[node.bitset_idx, 0], <unsigned int>x)
    return x <= node.threshold


cdef inline int threads_for_rows(Py_ssize_t n, int n_threads) noexcept:
    """At most one thread per PREDICT_ROWS_PER_THREAD rows, at least one."""
    cdef Py_ssize_t nt = n // PREDICT_ROWS_PER_THREAD
    if nt < 1:
        return 1
    return <int>nt if nt < n_threads else n_threads


def predict_raw(const node_t[::1] nodes, const raw_t[:, :] X,
                const uint32_t[:, ::1] cat_bitsets, double[::1] out,
                int n_threads):
    """out[i] = value of the leaf reached by row i of the raw matrix X.

    X is float64 (NaN = missing) or a small integer type, compared with the
    float thresholds as is (no float copy of X). ``cat_bitsets`` holds the
    left categories of the categorical nodes (row ``bitset_idx``); it may
    have zero rows when there are none.
    """
    cdef Py_ssize_t i, n = X.shape[0]
    cdef const node_t *node
    cdef int nt = threads_for_rows(n, n_threads)
    with nogil:
        for i in prange(n, schedule='static', num_threads=nt):
            node = &nodes[0]
            while not node.is_leaf:
                if raw_goes_left(node, <double>X[i, node.feature], cat_bitsets):
                    node = &nodes[node.left]
                else:
                    node = &nodes[node.right]
            out[i] = node.value


def predict_raw_trees(const node_t[::1] nodes, const Py_ssize_t[::1] node_starts,
                      const Py_ssize_t[::1] bitset_starts,
                      const Py_ssize_t[::1] columns, const raw_t[:, :] X,
                      const uint32_t[:, ::1] cat_bitsets, double[::1, :] raw,
                      int n_threads):
    """raw[i, columns[t]] += value of the leaf of tree t reached by row i,
    for every tree t in order: :func:`predict_raw` of many trees in one call.

    The trees' nodes are concatenated in ``nodes``, tree t from
    ``node_starts[t]`` (its child indices relative to it), and their
    category bitsets in ``cat_bitsets``, from ``bitset_starts[t]``. Each
    element of ``raw`` gets the same additions, in the same order, as
    adding the trees' predictions one tree after the other.
    """
    cdef Py_ssize_t i, t, base, n = X.shape[0], n_trees = node_starts.shape[0]
    cdef const node_t *node
    cdef const uint32_t *bits
    cdef double x
    cdef bint left
    cdef int nt = threads_for_rows(n, n_threads)
    if bitset_starts.shape[0] != n_trees or columns.shape[0] != n_trees:
        raise ValueError("one start of bitsets and one column per tree")
    with nogil:
        for i in prange(n, schedule='static', num_threads=nt):
            for t in range(n_trees):
                base = node_starts[t]
                node = &nodes[base]
                while not node.is_leaf:
                    x = <double>X[i, node.feature]
                    if isnan(x):
                        left = node.missing_left
                    elif node.is_categorical:
                        if x < 0.0 or x >= node.threshold:
                            left = node.missing_left
                        else:
                            bits = &cat_bitsets[bitset_starts[t] + node.bitset_idx, 0]
                            left = in_bitset(bits, <unsigned int>x)
                    else:
                        left = x <= node.threshold
                    if left:
                        node = &nodes[base + node.left]
                    else:
                        node = &nodes[base + node.right]
                raw[i, columns[t]] += node.value


def predict_binned(const node_t[::1] nodes, const BIN_t[:, :] X,
                   const uint32_t[::1] missing_bin,
                   const uint32_t[:, ::1] cat_bitsets, double[::1] out,
                   int n_threads):
    """out[i] = value of the leaf reached by row i of the binned matrix X."""
    cdef Py_ssize_t i, n = X.shape[0]
    cdef const node_t *node
    cdef BIN_t b
    cdef bint left
    cdef int nt = threads_for_rows(n, n_threads)
    with nogil:
        for i in prange(n, schedule='static', num_threads=nt):
            node = &nodes[0]
            while not node.is_leaf:
                b = X[i, node.feature]
                if b == missing_bin[node.feature]:
                    left = node.missing_left
                elif node.is_categorical:
                    left = in_bitset(&cat_bitsets[node.bitset_idx, 0], b)
                else:
                    left = b <= node.bin_threshold
                if left:
                    node = &nodes[node.left]
                else:
                    node = &nodes[node.right]
            out[i] = node.value


cdef inline Py_ssize_t lower_bound(const uint32_t *p, Py_ssize_t n,
                                   Py_ssize_t x) noexcept nogil:
    """The first position of ascending ``p[:n]`` holding ``x`` or more."""
    cdef Py_ssize_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) >> 1
        if p[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


# rows a range of raw predictions owned by a thread starts at a multiple of:
# 16 doubles, the two 64-byte lines Intel processors fetch together
cdef Py_ssize_t RANGE_ALIGN = 16


def add_leaf_values(double[::1] raw, leaves_indices, const double[::1] values,
                    int n_threads=1, bint ascending=False):
    """``raw[leaves_indices[j]] += values[j]`` for every leaf ``j``, on
    ``n_threads`` threads.

    The leaves' rows (uint32 arrays) must be disjoint, as a tree's leaves
    are: each row gets one addition, so the result does not depend on the
    threads.

    With ``ascending`` (each leaf's rows in ascending order, as a stable
    partition of rows ``0, 1, ...`` leaves them), each thread owns a range
    of ``raw`` and adds, leaf by leaf, the rows that fall in it (found by
    bisection). No two threads then write to one cache line, whereas a
    tree's leaves interleave their rows and the threads sharing out the
    leaves would pass the lines between their caches; and a leaf with most
    rows is shared too. The sums are right whatever the order of the rows;
    only the ranges' ownership needs it. Otherwise the threads share out
    the leaves.
    """
    cdef Py_ssize_t m = len(leaves_indices), j, i, total = 0
    cdef Py_ssize_t n_raw = raw.shape[0], t, n_ranges, step
    if values.shape[0] != m:
        raise ValueError(f"{m} leaves and {values.shape[0]} values")
    starts = np.zeros(m, dtype=np.intp)
    lengths = np.zeros(m, dtype=np.intp)
    cdef Py_ssize_t[::1] start = starts
    cdef Py_ssize_t[::1] length = lengths
    cdef const uint32_t[::1] idx
    cdef const uint32_t *p
    cdef double v
    for j in range(m):
        idx = leaves_indices[j]
        length[j] = idx.shape[0]
        if idx.shape[0]:
            start[j] = <Py_ssize_t> &idx[0]
        total += idx.shape[0]
    cdef int nt = max(1, min(n_threads, total // PREDICT_ROWS_PER_THREAD))
    cdef Py_ssize_t[:, ::1] cut
    if ascending and nt > 1:
        n_ranges = nt
        # each range a whole number of aligned blocks of rows
        step = (n_raw + n_ranges * RANGE_ALIGN - 1) // (n_ranges * RANGE_ALIGN)
        step *= RANGE_ALIGN
        # range t adds positions cut[j, t] to cut[j, t + 1] of leaf j: the
        # cuts rise and end at the leaf's length, so each row is added
        # once, whatever the order of the rows (ascending only makes each
        # range's rows its own)
        cut = np.empty((m, n_ranges + 1), dtype=np.intp)
        with nogil:
            for j in range(m):
                p = <const uint32_t *> start[j]
                cut[j, 0] = 0
                for t in range(1, n_ranges):
                    cut[j, t] = max(cut[j, t - 1],
                                    lower_bound(p, length[j], t * step))
                cut[j, n_ranges] = length[j]
            for t in prange(n_ranges, schedule='static', num_threads=nt):
                for j in range(m):
                    p = <const uint32_t *> start[j]
                    v = values[j]
                    for i in range(cut[j, t], cut[j, t + 1]):
                        raw[p[i]] += v
        return
    with nogil:
        for j in prange(m, schedule='dynamic', num_threads=nt):
            p = <const uint32_t *> start[j]
            v = values[j]
            for i in range(length[j]):
                raw[p[i]] += v
