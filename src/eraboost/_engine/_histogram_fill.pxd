# The fill kernels of ``_histogram.pyx``: loops without the GIL that add a
# node's rows to its histogram cells, column by column or row by row, for
# the builder's fill paths (the inventory in ``_histogram.pyx``'s
# docstring). Inline, so that each compiles into its caller's loops.
from libc.string cimport memset

from ._common cimport (block_t, hist_block, cell_bytes, pool_eras_c,
                       prefetch, prefetch_w, PREFETCH_ROWS, G_t, BIN_t,
                       uint8_t, uint32_t, int32_t, int64_t)

cdef enum:
    # sizes of the kernels' buffers on the stack, not tuned:
    # bins of a lane of ``fill_rows4`` (all a feature can have)
    LANE_BINS = 256
    # eras of a group of slots (``rows_era_slots``), at most
    MAX_SLOTS = 64


cdef inline Py_ssize_t count_runs(const int32_t *eras, Py_ssize_t n,
                                  int64_t *era, int64_t *start,
                                  int64_t *stop) noexcept nogil:
    """The number of maximal runs of equal values in ``eras[0 .. n-1]``;
    with ``era`` not NULL, also each run's value, start and stop."""
    cdef Py_ssize_t i, k = 0
    for i in range(n):
        if i == 0 or eras[i] != eras[i - 1]:
            if era != NULL:
                era[k] = eras[i]
                start[k] = i
                if k > 0:
                    stop[k - 1] = i
            k = k + 1
    if era != NULL and k > 0:
        stop[k - 1] = n
    return k


cdef inline void fill_rows(double *g, double *h, uint32_t *c, int64_t stride,
                           const BIN_t *col, Py_ssize_t rs,
                           const uint32_t[::1] rows,
                           const int32_t *era, const G_t[::1] grad,
                           const G_t[::1] hess, Py_ssize_t lo, Py_ssize_t hi,
                           bint const_h, bint root) noexcept nogil:
    """Add the rows lo .. hi - 1 (positions in ``rows``; themselves with
    ``root``) to the cells ``g[b * stride + era[i]]``, ``h``, ``c`` of
    their bins b (``era`` NULL: no era offset); row r's bin is
    ``col[r * rs]``. The conditions do not change in the loop: the compiler
    makes one loop for each case."""
    cdef Py_ssize_t i
    cdef int64_t b
    for i in range(lo, hi):
        b = (col[i * rs] if root else col[rows[i] * rs]) * stride
        if era != NULL:
            b = b + era[i]
        g[b] += grad[i]
        if not const_h:
            h[b] += hess[i]
        c[b] += 1


cdef inline void fill_rows4(double *g, double *h, uint32_t *c,
                            const BIN_t *col, Py_ssize_t rs,
                            const uint32_t[::1] rows,
                            const G_t[::1] grad, const G_t[::1] hess,
                            Py_ssize_t lo, Py_ssize_t hi, bint const_h,
                            bint root) noexcept nogil:
    """:func:`fill_rows` into four buffers of LANE_BINS bins, row i into
    buffer ``(i - lo) % 4``: four independent chains of additions instead of
    one where consecutive rows fall in the same few bins."""
    cdef Py_ssize_t i = lo
    cdef int64_t b0, b1, b2, b3
    while i + 4 <= hi:
        if root:
            b0 = col[i * rs]
            b1 = col[(i + 1) * rs] + LANE_BINS
            b2 = col[(i + 2) * rs] + 2 * LANE_BINS
            b3 = col[(i + 3) * rs] + 3 * LANE_BINS
        else:
            b0 = col[rows[i] * rs]
            b1 = col[rows[i + 1] * rs] + LANE_BINS
            b2 = col[rows[i + 2] * rs] + 2 * LANE_BINS
            b3 = col[rows[i + 3] * rs] + 3 * LANE_BINS
        g[b0] += grad[i]
        g[b1] += grad[i + 1]
        g[b2] += grad[i + 2]
        g[b3] += grad[i + 3]
        c[b0] += 1
        c[b1] += 1
        c[b2] += 1
        c[b3] += 1
        if not const_h:
            h[b0] += hess[i]
            h[b1] += hess[i + 1]
            h[b2] += hess[i + 2]
            h[b3] += hess[i + 3]
        i += 4
    fill_rows(g, h, c, 1, col, rs, rows, NULL, grad, hess, i, hi, const_h, root)


cdef inline void column_run(block_t blk, unsigned int nb, int64_t R,
                            const BIN_t *col, Py_ssize_t rs,
                            const uint32_t[::1] rows, const G_t[::1] grad,
                            const G_t[::1] hess, Py_ssize_t lo, Py_ssize_t hi,
                            int64_t e, bint const_h, bint root, double *sg,
                            double *sh, uint32_t *sn,
                            unsigned int *cleared) noexcept nogil:
    """One feature's run of rows lo .. hi - 1 of era e (column ``col``, row
    stride ``rs``) into its block: straight into the cells without eras or
    when the run has fewer rows than bins, else through the four per-bin
    buffers ``sg``, ``sh``, ``sn`` (of :func:`fill_rows4`), whose first
    ``*cleared`` bins are zeros: cleared up to ``nb`` here when needed, and
    cleared again by every flush."""
    cdef unsigned int b, b1, b2, b3
    cdef int64_t j
    if R == 1 or hi - lo < nb:
        fill_rows(blk.g + e, blk.h + e if not const_h else NULL, blk.n + e,
                  R, col, rs, rows, NULL, grad, hess, lo, hi, const_h, root)
        return
    if cleared[0] < nb:
        # the lanes' first nb bins, once per width: the flush below clears
        # them
        for j in range(4):
            memset(sg + j * LANE_BINS, 0, nb * sizeof(double))
            memset(sn + j * LANE_BINS, 0, nb * sizeof(uint32_t))
            if not const_h:
                memset(sh + j * LANE_BINS, 0, nb * sizeof(double))
        cleared[0] = nb
    fill_rows4(sg, sh, sn, col, rs, rows, grad, hess, lo, hi, const_h, root)
    for b in range(nb):
        b1 = b + LANE_BINS
        b2 = b + 2 * LANE_BINS
        b3 = b + 3 * LANE_BINS
        j = b * R + e
        blk.g[j] += (sg[b] + sg[b1]) + (sg[b2] + sg[b3])
        blk.n[j] += (sn[b] + sn[b1]) + (sn[b2] + sn[b3])
        sg[b] = sg[b1] = sg[b2] = sg[b3] = 0.0
        sn[b] = sn[b1] = sn[b2] = sn[b3] = 0
        if not const_h:
            blk.h[j] += (sh[b] + sh[b1]) + (sh[b2] + sh[b3])
            sh[b] = sh[b1] = sh[b2] = sh[b3] = 0.0


cdef inline void pool_eras(block_t blk, unsigned int nb, int64_t R,
                           bint const_h) noexcept nogil:
    """The pooled cells of a block, bin by bin: the sums over its eras (no
    branch: empty cells are exact zeros), the gradients and hessians as
    ``lane_sum`` adds them (``eb_pool_eras``)."""
    pool_eras_c(blk.g, NULL if const_h else blk.h, blk.n, nb, R)


cdef inline int chunk_start(int c, int n_chunks, int n_feat) noexcept nogil:
    """The first listed feature of chunk c of ``n_chunks`` (c = n_chunks:
    the end)."""
    return c * n_feat // n_chunks


cdef inline void add_blocks(uint8_t *out, const uint8_t *sums,
                            Py_ssize_t nbytes, int n_blocks,
                            const int64_t *offsets, int f,
                            bint const_h) noexcept nogil:
    """Feature f's block of ``out``: zeros, plus its blocks in the
    ``n_blocks`` histograms at ``sums``, ``sums + nbytes``, ..., in that
    order."""
    cdef int64_t j, cells = offsets[f + 1] - offsets[f]
    cdef block_t o = hist_block(out, offsets, f, const_h)
    cdef block_t s
    cdef int u
    memset(o.g, 0, cells * cell_bytes(const_h))
    for u in range(n_blocks):
        s = hist_block(sums + u * nbytes, offsets, f, const_h)
        for j in range(cells):
            o.g[j] += s.g[j]
            o.n[j] += s.n[j]
        if not const_h:
            for j in range(cells):
                o.h[j] += s.h[j]


cdef struct row_chunk_t:
    # a chunk of features filled row by row (``_feature_rows``)
    int nf                   # its features: feats[0 .. nf-1]
    const uint32_t *feats
    block_t *blk             # their blocks
    uint32_t *nb             # their bins
    # four lanes of lg, lh, ln: each holds every feature's bins, feature
    # k's from lane[k] / 4 (a lane is lane[nf] / 4 cells)
    int64_t *lane
    double *lg
    double *lh
    uint32_t *ln
    int64_t R                # cells of a bin
    const BIN_t *x0          # the matrix, stored by rows: row r at x0 + r * rs
    Py_ssize_t rs
    # feats[k] = feats[0] + k and nb[k] = nb[0]: lane[k] / 4 = k * nb[0]
    bint uniform


cdef inline const BIN_t *gathered_row(
        const BIN_t *first, Py_ssize_t rs, Py_ssize_t last,
        const uint32_t[::1] rows, Py_ssize_t i, Py_ssize_t end,
        bint root) noexcept nogil:
    """The bins of row ``rows[i]`` (``i`` itself with ``root``) from the
    chunk's first feature (``first``, its last ``last`` bytes further);
    the row PREFETCH_ROWS ahead is asked for when it is before ``end``."""
    if root:
        return first + i * rs
    if i + PREFETCH_ROWS < end:
        prefetch(first + rows[i + PREFETCH_ROWS] * rs)
        prefetch(first + rows[i + PREFETCH_ROWS] * rs + last)
    return first + rows[i] * rs


cdef inline void rows_direct(row_chunk_t *ch, const uint32_t[::1] rows,
                             const int32_t *era, int64_t e,
                             const G_t[::1] grad, const G_t[::1] hess,
                             Py_ssize_t lo, Py_ssize_t hi, bint const_h,
                             bint root) noexcept nogil:
    """The rows lo .. hi - 1 straight into their cells, row by row: cell
    ``b * R + era[i]`` (``e`` when ``era`` is NULL) of each feature."""
    cdef Py_ssize_t i
    cdef int k, nf = ch.nf
    cdef int64_t j, eo = e, R = ch.R
    cdef const BIN_t *row
    cdef const uint32_t *feats = ch.feats
    cdef const BIN_t *first = ch.x0 + feats[0]
    cdef Py_ssize_t last = feats[nf - 1] - feats[0]
    cdef double gi, hi_ = 0.0
    for i in range(lo, hi):
        # the row's start: its bins of the features at feats[k]
        row = gathered_row(first, ch.rs, last, rows, i, hi, root) - feats[0]
        if era != NULL:
            eo = era[i]
        gi = grad[i]
        if not const_h:
            hi_ = hess[i]
        for k in range(nf):
            j = row[feats[k]] * R + eo
            ch.blk[k].g[j] += gi
            ch.blk[k].n[j] += 1
            if not const_h:
                ch.blk[k].h[j] += hi_


cdef inline void add_row(const BIN_t *row, double gi, double hi_, int64_t j,
                         int nf, bint uniform, int64_t NB, const int64_t *lane,
                         const uint32_t *feats, double *lg, double *lh,
                         uint32_t *ln, bint const_h) noexcept nogil:
    """One row of a chunk (its bins at ``row``, relative to the chunk's
    first feature) into per-bin buffers laid out as a lane from cell j:
    feature k's bin b at ``j + lane[k] / 4 + b`` (``j + k NB + b`` when
    ``uniform``)."""
    cdef int k
    cdef int64_t base
    if uniform:
        for k in range(nf):
            base = j + k * NB + row[k]
            lg[base] += gi
            ln[base] += 1
            if not const_h:
                lh[base] += hi_
    else:
        for k in range(nf):
            base = j + (lane[k] >> 2) + row[feats[k] - feats[0]]
            lg[base] += gi
            ln[base] += 1
            if not const_h:
                lh[base] += hi_


cdef inline void rows_lanes(row_chunk_t *ch, const uint32_t[::1] rows,
                            const G_t[::1] grad, const G_t[::1] hess,
                            Py_ssize_t lo, Py_ssize_t hi, Py_ssize_t end,
                            int64_t e, bint four, bint const_h,
                            bint root) noexcept nogil:
    """The rows lo .. hi - 1 of era e (the run of an era, or all rows
    without eras) into the features' per-bin buffers, then into their
    cells ``b * R + e``, the buffers cleared.

    The buffers are lanes of ``LS`` cells, every feature's bins in a row
    (feature k's at ``lane[k] / 4``), so that a row's additions stay within
    a few cache lines. Without ``four`` the rows go to lane 0 in order, as
    :func:`fill_rows`. With ``four`` row i goes to lane ``(i - lo) % 4``
    and the last ``(hi - lo) % 4`` rows to lane 0, as :func:`fill_rows4`,
    and the lanes are added as ``(l0 + l1) + (l2 + l3)``. A chunk of
    consecutive features of one bin count (``uniform``) takes a loop
    without per-feature lookups. The rows ahead are prefetched up to row
    ``end`` (the last run's end): the next run's first rows are asked for
    while this run's last ones are summed."""
    cdef Py_ssize_t i, full = lo + ((hi - lo) & ~(<Py_ssize_t>3))
    cdef int k, nf = ch.nf
    cdef int64_t j, base, nbk, R = ch.R
    cdef unsigned int b
    cdef const BIN_t *row
    cdef const uint32_t *feats = ch.feats
    cdef const BIN_t *first = ch.x0 + feats[0]
    cdef Py_ssize_t last = feats[nf - 1] - feats[0]
    cdef double gi, hi_ = 0.0
    cdef double *lg = ch.lg
    cdef double *lh = ch.lh
    cdef uint32_t *ln = ch.ln
    # the cells of a lane
    cdef int64_t LS = ch.lane[nf] >> 2
    cdef int64_t NB = ch.nb[0]
    cdef const int64_t *lane = ch.lane
    cdef bint uniform = ch.uniform
    if not four:
        full = lo
    else:
        # an era's run: ask for the cache lines of the flush below while
        # the rows are summed (a line for each bin and feature)
        for k in range(nf):
            for b in range(ch.nb[k]):
                prefetch_w(ch.blk[k].g + b * R + e)
                prefetch_w(ch.blk[k].n + b * R + e)
                if not const_h:
                    prefetch_w(ch.blk[k].h + b * R + e)
    for i in range(lo, hi):
        row = gathered_row(first, ch.rs, last, rows, i, end, root)
        gi = grad[i]
        if not const_h:
            hi_ = hess[i]
        j = ((i - lo) & 3) * LS if i < full else 0
        add_row(row, gi, hi_, j, nf, uniform, NB, lane, feats, lg, lh, ln,
                const_h)
    for k in range(nf):
        nbk = ch.nb[k]
        base = ch.lane[k] >> 2
        for b in range(nbk):
            j = b * R + e
            i = base + b
            if four:
                ch.blk[k].g[j] += (lg[i] + lg[i + LS]) + (lg[i + 2 * LS]
                                                          + lg[i + 3 * LS])
                ch.blk[k].n[j] += (ln[i] + ln[i + LS]) + (ln[i + 2 * LS]
                                                          + ln[i + 3 * LS])
                lg[i + LS] = lg[i + 2 * LS] = lg[i + 3 * LS] = 0.0
                ln[i + LS] = ln[i + 2 * LS] = ln[i + 3 * LS] = 0
                if not const_h:
                    ch.blk[k].h[j] += (lh[i] + lh[i + LS]) + (lh[i + 2 * LS]
                                                              + lh[i + 3 * LS])
                    lh[i + LS] = lh[i + 2 * LS] = lh[i + 3 * LS] = 0.0
            else:
                ch.blk[k].g[j] += lg[i]
                ch.blk[k].n[j] += ln[i]
                if not const_h:
                    ch.blk[k].h[j] += lh[i]
            lg[i] = 0.0
            ln[i] = 0
            if not const_h:
                lh[i] = 0.0


cdef inline void rows_era_slots(row_chunk_t *ch, const uint32_t[::1] rows,
                                const int64_t *run_era,
                                const int64_t *run_start,
                                const int64_t *run_stop, Py_ssize_t r0,
                                Py_ssize_t r1, const G_t[::1] grad,
                                const G_t[::1] hess, double *bg, double *bh,
                                uint32_t *bn, int S, bint const_h,
                                bint root) noexcept nogil:
    """The short runs ``r0 .. r1 - 1`` (each of its own era, the cells
    cleared) into their cells, S eras at a time: each era's rows summed in
    order in a slot of per-bin buffers (``bg``, ``bh``, ``bn``: S slots of
    a lane's ``LS`` cells, zeros), then the slots added to the cells, the
    eras of a bin next to each other, and cleared. A cell is the sum of
    its era's rows in order from 0.0, as :func:`rows_direct` makes it, but
    the rows' additions stay within the slots (a few kB) instead of a cache
    line of the block a feature and row."""
    cdef Py_ssize_t i, r = r0
    cdef int k, s, ns, nf = ch.nf
    cdef int64_t j, base, slot, e_last, R = ch.R, NB = ch.nb[0]
    cdef int64_t LS = ch.lane[nf] >> 2
    cdef int64_t era_of[MAX_SLOTS]
    cdef unsigned int b
    cdef const BIN_t *row
    cdef const uint32_t *feats = ch.feats
    cdef const BIN_t *first = ch.x0 + feats[0]
    cdef Py_ssize_t last = feats[nf - 1] - feats[0]
    cdef Py_ssize_t hi, end = run_stop[r1 - 1] if r1 > r0 else 0
    cdef double gi, hi_ = 0.0
    cdef bint uniform = ch.uniform
    cdef const int64_t *lane = ch.lane
    cdef block_t *blk
    if S > MAX_SLOTS:
        S = MAX_SLOTS
    while r < r1:
        # ask for the cache lines of the flush below while the rows are
        # summed (those of the group's first and last eras: the eras of a
        # group are neighbours when the rows are grouped by era): its cells
        # miss the cache, a line or two a bin and feature
        e_last = run_era[min(r + S, r1) - 1]
        for k in range(nf):
            blk = &ch.blk[k]
            for b in range(ch.nb[k]):
                prefetch_w(blk.g + b * R + run_era[r])
                prefetch_w(blk.n + b * R + run_era[r])
                prefetch_w(blk.g + b * R + e_last)
                prefetch_w(blk.n + b * R + e_last)
                if not const_h:
                    prefetch_w(blk.h + b * R + run_era[r])
                    prefetch_w(blk.h + b * R + e_last)
        ns = 0
        while r < r1 and ns < S:
            era_of[ns] = run_era[r]
            slot = ns * LS
            hi = run_stop[r]
            for i in range(run_start[r], hi):
                row = gathered_row(first, ch.rs, last, rows, i, end, root)
                gi = grad[i]
                if not const_h:
                    hi_ = hess[i]
                add_row(row, gi, hi_, slot, nf, uniform, NB, lane, feats, bg,
                        bh, bn, const_h)
            ns = ns + 1
            r = r + 1
        for k in range(nf):
            blk = &ch.blk[k]
            for b in range(ch.nb[k]):
                j = b * R
                base = (ch.lane[k] >> 2) + b
                for s in range(ns):
                    blk.g[j + era_of[s]] += bg[base]
                    blk.n[j + era_of[s]] += bn[base]
                    bg[base] = 0.0
                    bn[base] = 0
                    if not const_h:
                        blk.h[j + era_of[s]] += bh[base]
                        bh[base] = 0.0
                    base = base + LS
