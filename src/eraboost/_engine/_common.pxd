# Shared C types of the engine.
from libc.stdint cimport uint8_t, uint32_t, int32_t, int64_t

ctypedef float G_t          # gradients and hessians, as scikit-learn (float32)
ctypedef double Y_t         # sums, values, raw predictions
ctypedef uint8_t BIN_t      # binned feature values

# One feature's block of a node's histogram (``_histogram.pyx``): for each
# of its cells the sums of the rows of one era falling in one bin, as three
# arrays. Bin-major: each bin's ``rows_per_bin`` cells (its eras, then the
# pooled cell) follow one another, then padding after the last bin.
cdef struct block_t:
    double *g            # gradients
    double *h            # hessians; NULL when the hessians are constant
    uint32_t *n          # rows


# Bytes per cell: g and n, plus h unless the hessians are constant.
cdef inline int cell_bytes(bint hessians_are_constant) noexcept nogil:
    return 12 if hessians_are_constant else 20


# Cells of one bin in a histogram block: with several eras one per era, then
# the pooled cell (``n_eras + 1``); a single one without eras.
cdef inline int rows_per_bin(int n_eras) noexcept nogil:
    return n_eras + 1 if n_eras > 1 else 1


cdef inline double lane_sum(const double *x, int64_t m) noexcept nogil:
    """x[0] + ... + x[m-1] in four interleaved partial sums (element i in
    lane i mod 4, lanes combined as (l0 + l1) + (l2 + l3)): vectorised."""
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef int64_t i = 0
    while i + 4 <= m:
        s0 += x[i]
        s1 += x[i + 1]
        s2 += x[i + 2]
        s3 += x[i + 3]
        i += 4
    if i < m:
        s0 += x[i]
    if i + 1 < m:
        s1 += x[i + 1]
    if i + 2 < m:
        s2 += x[i + 2]
    return (s0 + s1) + (s2 + s3)


# The C of the cell passes: _common.h.
cdef extern from "_common.h":
    void prefetch "EB_PREFETCH" (const void *p) noexcept nogil
    void prefetch_w "EB_PREFETCH_W" (const void *p) noexcept nogil
    void sub_d "eb_sub_d" (double *p, const double *s, int64_t n) noexcept nogil
    void sub_u32 "eb_sub_u32" (uint32_t *p, const uint32_t *s,
                               int64_t n) noexcept nogil
    void pool_eras_c "eb_pool_eras" (double *g, double *h, uint32_t *n,
                                     unsigned int nb, int64_t R) noexcept nogil


cdef inline block_t hist_block(const uint8_t *hist, const int64_t *offsets,
                               int f, bint hessians_are_constant) noexcept nogil:
    """The arrays of feature f's block in the buffer ``hist``: cells
    ``offsets[f] .. offsets[f + 1] - 1``, stored as g (8 bytes per cell),
    h (8, unless the hessians are constant), then n (4)."""
    cdef int64_t cells = offsets[f + 1] - offsets[f]
    cdef block_t blk
    blk.g = <double *> (hist + offsets[f] * cell_bytes(hessians_are_constant))
    blk.h = NULL if hessians_are_constant else blk.g + cells
    blk.n = <uint32_t *> (blk.g + (cells if hessians_are_constant else 2 * cells))
    return blk


cdef inline void block_subtract(uint8_t *parent, const uint8_t *sibling,
                                const int64_t *offsets, int f,
                                bint hessians_are_constant) noexcept nogil:
    """Feature f's block of ``parent`` minus that of ``sibling``, in place:
    the larger child's sums from its parent's and the smaller child's."""
    cdef int64_t cells = offsets[f + 1] - offsets[f]
    cdef block_t p = hist_block(parent, offsets, f, hessians_are_constant)
    cdef block_t s = hist_block(sibling, offsets, f, hessians_are_constant)
    sub_d(p.g, s.g, cells)
    sub_u32(p.n, s.n, cells)
    if not hessians_are_constant:
        sub_d(p.h, s.h, cells)

# One node of a fitted tree, as stored by the predictor. For a categorical
# node, ``threshold`` holds the number of known categories (raw values
# 0 .. threshold - 1), and rows go left when their category is in the bitset.
cdef packed struct node_t:
    double value
    uint32_t count
    int32_t feature
    double threshold        # raw-value threshold: left iff x <= threshold
    uint8_t missing_left
    uint32_t left
    uint32_t right
    double gain
    uint32_t depth
    uint8_t is_leaf
    uint8_t bin_threshold   # binned threshold: left iff bin <= bin_threshold
    uint8_t is_categorical  # left iff the bin is in the node's left bitset
    uint32_t bitset_idx     # row of the node's bitset in the predictor's arrays


# Bitsets of bins (categories): 8 x 32 bits cover the 256 possible bins.
cdef inline bint in_bitset(const uint32_t *bitset, unsigned int b) noexcept nogil:
    return (bitset[b >> 5] >> (b & 31)) & 1


cdef inline void set_bitset(uint32_t *bitset, unsigned int b) noexcept nogil:
    bitset[b >> 5] |= (<uint32_t>1) << (b & 31)


# The split criteria (``split_type``); ``_common.SPLIT_TYPES`` names them.
cdef enum SplitType:
    ORIGINAL = 0        # pooled gain, scikit-learn's
    ERA = 1             # Boltzmann operator of the per-era gains
    DIRECTIONAL = 2     # |sum of the per-era directions|, then the era score

# The invariance penalties (``penalty_kind``), named as the options of
# ``_splitting.PENALTY_KINDS`` and the functions of ``_criteria.pxd``.
cdef enum PenaltyKind:
    VALUE_VARIANCE = 0  # docs/criteria.md: H_node * Var_e CR_e
    RATE_SPREAD = 1     # IRF classification: H_node / 2 * (max I_e / min I_e - 1)
    VALUE_DIFFERENCE = 2  # irf_variance="difference": H_node * Var_e (v_Le - v_Re)

cdef enum:
    # Below this many row-feature updates, a histogram's parallel loop runs
    # on one thread: waking the others costs more than the work (tens of
    # microseconds with the passive wait policy). Results never depend on
    # the thread count.
    ONE_THREAD_BELOW = 16384
    # The same for a pass over histogram cells (the subtraction), which moves
    # 12 to 20 bytes a cell at tens of GB/s: one thread below about 3 MB.
    CELLS_ONE_THREAD_BELOW = 262144
    # The split scan of the nodes of a histogram of fewer cells (padding
    # included) runs on one thread. A cell costs the scan far more than a
    # row-feature costs a histogram (100 int8 features of 5 bins, 3,200
    # cells: about 45 us a node on one thread, 14 ns a cell), so this is
    # lower.
    SCAN_ONE_THREAD_BELOW = 2048
    # A loop of one subtraction a row (the half squared error's gradient,
    # ``_gradients.pyx``) runs on one thread below this many rows: a
    # thread's share of fewer rows is a few microseconds of work.
    ELEMENTWISE_ONE_THREAD_BELOW = 65536
    # A partition of a node's rows uses a thread per this many rows at least.
    ROWS_PER_THREAD = 4096
    # Prediction (``_predictor.pyx``: a row's walk down a tree, or a leaf
    # value added to a row) uses at most one thread per this many rows:
    # waking a thread costs microseconds, a row tens of nanoseconds.
    PREDICT_ROWS_PER_THREAD = 2048
    # Rows ahead whose bins are prefetched when gathered rows are read from
    # a matrix stored by rows (a cache line a row).
    PREFETCH_ROWS = 8
