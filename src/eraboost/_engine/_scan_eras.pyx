"""The per-era scoring of a scan's candidates (the scan's second half;
``_splitting.pyx`` has the first): from a dense histogram, candidate by
candidate or by blocks of candidates under a bound, or all of a short scan's
candidates by their gain sums at once; and from a sparse histogram, row by
row. Each candidate goes to the scorer (``offer``, ``_scorer.pxd``) with
its per-era sums and gains; the criterion's bounds and short forms are the
scorer's named steps (its docstring lists them).
"""
from libc.math cimport fabs

from ._common cimport uint32_t, int32_t, int64_t, G_t, DIRECTIONAL, lane_sum
from ._criteria cimport era_gain_of, era_gains, era_direction_of
from ._scan cimport (scan_t, pooled_t, split_t, node_sums_t, era_scratch_t,
                     era_view_t, feature_scratch_t, add_bin, add_counts,
                     era_gain_sums, block_gather)
from ._scorer cimport (criterion_t, BOUND_BLOCK, BOUND_MAX_MISSES, counts,
                       bounded, sums_only, best_so_far, direction_floor,
                       direction_sum, block_below_best, sum_below, offer)


cdef inline void swap_sums(double **pg, double **ph, double **pn, double **qg,
                           double **qh, double **qn) noexcept nogil:
    """The scanned side's sums at the current candidate (q) become the
    previous ones (p), and p's arrays q's scratch."""
    cdef double *t = pg[0]
    pg[0] = qg[0]
    qg[0] = t
    t = ph[0]
    ph[0] = qh[0]
    qh[0] = t
    t = pn[0]
    pn[0] = qn[0]
    qn[0] = t


cdef bint score_per_era(const criterion_t *crit, const scan_t *s,
                        feature_scratch_t *fs, const node_sums_t *node,
                        int K, split_t *best) noexcept nogil:
    """Score the K candidates of one order from the per-era sums.

    A candidate's per-era scanned-side sums are the previous
    candidate's plus the bins in between, the cells of all eras of a
    bin being contiguous (one vectorised pass, ``gather``; the
    eras absent from the node add zeros); then the gains of all eras
    come from one dense loop (``era_gains``) and the candidate is
    scored. With constant hessians the hessian sums are the row counts:
    one array serves both.

    Under bounds (``bounded``, _scorer.pxd: ``era`` with ``boltzmann_alpha <=
    0``, ``directional``) the candidates go by blocks of BOUND_BLOCK:
    a block whose bound (``block_bound``) is below the best found
    so far for the node, over all its features, holds no candidate that
    could win or tie, and its gains (and directions) are not
    computed."""
    cdef era_scratch_t *era_scratch = &fs.era
    cdef const pooled_t *cands = fs.cands
    cdef int E = node.E, k = 0, kb = 0, step = 0
    cdef bint const_h = crit.const_h, changed = False, scored
    cdef bint by_blocks = bounded(crit)
    cdef double *pg = era_scratch.pg
    cdef double *ph = era_scratch.ph
    cdef double *pn = era_scratch.pn
    cdef double *qg = era_scratch.qg
    cdef double *qh = era_scratch.qh
    cdef double *qn = era_scratch.qn
    cdef era_view_t era_sums
    if const_h:
        ph = pn
        qh = qn
    if sums_only(crit, s, node):
        # one block of candidates: bounded as a whole, or scored by
        # their gain sums
        if by_blocks and try_bound(crit, s, era_scratch, node, cands[0].step,
                                   cands[K - 1].step, 0, pg, ph, pn, qg, qh,
                                   qn, best):
            return False
        return score_gain_sums(crit, s, fs, node, K, best)
    while k < K:
        if by_blocks and k == kb:
            kb = min(k + BOUND_BLOCK, K)
            if try_bound(crit, s, era_scratch, node, cands[k].step,
                         cands[kb - 1].step, step, pg, ph, pn, qg, qh, qn,
                         best):
                # the block's sums are the next one's start
                step = cands[kb - 1].step + 1
                k = kb
                swap_sums(&pg, &ph, &pn, &qg, &qh, &qn)
                continue
        gather(crit, s, node, step, cands[k].step, pg, ph, pn, qg, qh, qn)
        step = cands[k].step + 1
        # directional: the directions first, without divisions; a
        # candidate with fewer agreeing eras than the best cannot beat
        # it, whatever its gains (docs/criteria.md), and is not scored
        era_sums.dsum = 0
        scored = True
        if crit.split_type == DIRECTIONAL:
            era_sums.dsum = direction_sum(crit, qg, qh, qn, node)
            scored = (abs(era_sums.dsum)
                      >= direction_floor(crit, node, best))
        if scored:
            era_sums.qg = qg
            era_sums.qh = qh
            era_sums.qn = qn
            era_gains(qg, qh, qn, node.tg, node.th, node.tn, node.ts,
                      crit.lam, E, counts(crit), era_scratch.gains,
                      &era_sums.gsum)
            if not s.scanned_is_left:
                era_sums.dsum = -era_sums.dsum
            if offer(crit, s, &cands[k], node, &era_sums, era_scratch,
                     best):
                changed = True
        # this candidate's sums are the next one's start
        swap_sums(&pg, &ph, &pn, &qg, &qh, &qn)
        k = k + 1
    return changed


cdef bint score_gain_sums(const criterion_t *crit, const scan_t *s,
                          feature_scratch_t *fs, const node_sums_t *node,
                          int K, split_t *best) noexcept nogil:
    """``score_per_era`` where the criterion is the eras' gain
    sum over M (``sums_only``, _scorer.pxd): the sums of all K candidates in one
    pass over the cells (``era_gain_sums``: the sums of ``era_gains``,
    bit for bit, without a per-era array), then each candidate is
    offered to the scorer in scan order. Such a scan is one block of
    candidates (GAIN_SUMS_MAX_STEPS <= BOUND_BLOCK): ``score_per_era``
    tries its bound first."""
    cdef int k
    cdef bint changed = False
    cdef era_view_t era_sums
    fs.era.sums_scans += 1
    for k in range(K):
        fs.steps[k] = fs.cands[k].step
    era_gain_sums(s.blk.g, NULL if crit.const_h else s.blk.h, s.blk.n,
                  s.R, s.seq, fs.steps, K, node.tg, node.th, node.tn,
                  node.ts, crit.lam, node.E, counts(crit), fs.acc,
                  fs.gsums)
    era_sums.qg = NULL
    era_sums.qh = NULL
    era_sums.qn = NULL
    era_sums.dsum = 0
    for k in range(K):
        era_sums.gsum = fs.gsums[k]
        if offer(crit, s, &fs.cands[k], node, &era_sums, &fs.era, best):
            changed = True
    return changed


cdef inline void gather(const criterion_t *crit, const scan_t *s,
                        const node_sums_t *node, int step, int last,
                        const double *pg, const double *ph,
                        const double *pn, double *qg, double *qh,
                        double *qn) noexcept nogil:
    """The scanned side's per-era sums after step ``last`` into q: the
    sums after step ``step - 1`` (p; none when ``step`` is 0) plus the
    bins of steps ``step .. last``, added in scan order, so that any
    grouping of the steps gives the same sums, bit for bit."""
    cdef int64_t c
    cdef bint const_h = crit.const_h, first = True
    cdef int E = node.E
    while step <= last:
        c = s.seq[step] * s.R
        # q = p + the bin, or q += the bin; the first bin has no
        # previous sums (cells are never -0.0, so this is 0.0 + the
        # bin's sums, bit for bit)
        add_bin(qg, NULL if step == 0 else (pg if first else qg),
                s.blk.g + c, E)
        add_counts(qn, NULL if step == 0 else (pn if first else qn),
                   s.blk.n + c, E)
        if not const_h:
            add_bin(qh, NULL if step == 0 else (ph if first else qh),
                    s.blk.h + c, E)
        first = False
        step = step + 1


cdef inline bint try_bound(const criterion_t *crit, const scan_t *s,
                           era_scratch_t *era_scratch,
                           const node_sums_t *node, int first, int last,
                           int step, const double *pg, const double *ph,
                           const double *pn, double *qg, double *qh,
                           double *qn, const split_t *best) noexcept nogil:
    """``block_bound``, tried unless the last ones failed: a bound
    costs about a third of the gains of its block, so where bounds
    rarely skip a block (many small eras) they are tried less and less
    often, after 1, 3, 7 ... 63 blocks scored in full; one that skips
    its block starts over. The split found does not depend on it."""
    cdef int r
    if era_scratch.bound_wait > 0:
        era_scratch.bound_wait -= 1
        return False
    r = block_bound(crit, s, era_scratch, node, first, last, step, pg, ph,
                    pn, qg, qh, qn, best)
    if r == 1:
        era_scratch.bound_misses = 0
        era_scratch.bound_skips += 1
    elif r == 0:
        era_scratch.bound_misses = min(era_scratch.bound_misses + 1,
                                       BOUND_MAX_MISSES)
        era_scratch.bound_wait = (1 << era_scratch.bound_misses) - 1
    return r == 1


cdef int block_bound(const criterion_t *crit, const scan_t *s,
                     era_scratch_t *era_scratch, const node_sums_t *node,
                     int first, int last, int step, const double *pg,
                     const double *ph, const double *pn, double *qg,
                     double *qh, double *qn,
                     const split_t *best) noexcept nogil:
    """1 when the candidates of the steps ``first .. last`` are all
    below the best criterion found so far for the node (this scan's
    ``best``, or another feature's: ``node.shared_best``), from an upper
    bound of their gain sums (``era_block_bound``, docs/criteria.md);
    then q holds the sums after step ``last``, gathered from p (the
    sums after step ``step - 1``) as ``gather`` does. Otherwise
    the block is to be scored and q is scratch: 0, or -1 when there is
    no best yet to compare with.

    The scorer's step ``block_below_best`` decides, from what the
    gather leaves in ``era_scratch``."""
    cdef double thr = best_so_far(crit, node, best)
    if not thr > 0.0:
        return -1
    block_gather(s.blk.g, NULL if crit.const_h else s.blk.h, s.blk.n,
                 s.R, s.seq, step, first, last, pg, ph, pn, qg, qh, qn,
                 node.kk, crit.lam, era_scratch.dmin, era_scratch.dmax,
                 era_scratch.n1, era_scratch.h1, node.E, s.n_steps)
    return block_below_best(crit, node, best, era_scratch, qn, qh, thr)


cdef bint score_per_era_sparse(const criterion_t *crit, const scan_t *s,
                               feature_scratch_t *fs,
                               const node_sums_t *node, int K,
                               split_t *best) noexcept nogil:
    """``score_per_era`` from a sparse histogram: as each bin joins
    the scanned side, its rows update their eras' sums, gains and
    directions (the sum of the directions of the eras taking part by the
    differences); then each candidate is scored as on the dense path,
    its gain sum summed anew over the eras taking part (``lane_sum``),
    so that a partition has the same sum from either scan. The gains
    follow the rows, not ``E`` per candidate; the sum rounds differently
    from the dense path's sum over all eras.

    Under the bounds (``bounded``, _scorer.pxd) at ``boltzmann_alpha <= 0`` a
    running sum of the gains of the eras taking part, updated by each
    change of an era's gain, screens the candidates first
    (``sum_below``, _scorer.pxd): one whose criterion cannot reach the best so
    far is not summed anew nor scored. The split found is the same as
    when every candidate is scored."""
    cdef era_scratch_t *era_scratch = &fs.era
    cdef const pooled_t *cands = fs.cands
    cdef int E = node.E, M = node.M, k, step = 0, e, d, dsum = 0, i
    cdef bint const_h = crit.const_h, changed = False
    cdef bint directional = crit.split_type == DIRECTIONAL
    # the running gain sum bounds the era score, not a blend with the
    # pooled gain (pooled_weight)
    cdef bint screen = (bounded(crit) and crit.alpha <= 0.0
                        and crit.pooled_weight == 0.0)
    # constant hessians and lam = 0: the gains' shorter form, the same
    # values (eb_era_gain_of)
    cdef bint by_counts = counts(crit)
    cdef uint32_t j, end
    cdef unsigned int b
    cdef double gain, xg, xh, xn, delta
    # the running sum of the present eras' gains, the sum of the sizes
    # of its changes and their number (sum_below)
    cdef double run = 0.0, moved = 0.0
    cdef int64_t updates = 0
    # the scanned side's per-era sums, the eras' gains (by era, and of
    # the eras taking part in their order) and directions
    cdef double *qg = era_scratch.qg
    cdef double *qh = era_scratch.qh if not const_h else era_scratch.qn
    cdef double *qn = era_scratch.qn
    cdef double *gains = era_scratch.gains
    cdef double *gc = era_scratch.gc
    cdef int32_t *pos = era_scratch.pos
    cdef signed char *dirs = era_scratch.dirs
    cdef const double *tg = node.tg
    cdef const double *th = node.th
    cdef const double *tn = node.tn
    cdef const double *ts = node.ts
    cdef const signed char *is_present = node.is_present
    cdef const int32_t *e_era = s.e_era
    cdef const G_t *e_g = s.e_g
    cdef const G_t *e_h = s.e_h
    cdef double lam = crit.lam
    cdef era_view_t era_sums
    for e in range(E):
        qg[e] = 0.0
        qn[e] = 0.0
        qh[e] = 0.0
        gains[e] = 0.0
        dirs[e] = 0
    # the gains of the eras taking part, in their order
    for i in range(M):
        pos[node.present[i]] = i
        gc[i] = 0.0
    for k in range(K):
        while step <= cands[k].step:
            b = s.seq[step]
            end = s.start[b + 1]
            for j in range(s.start[b], end):
                e = e_era[j]
                xg = qg[e] + e_g[j]
                xn = qn[e] + 1.0
                qg[e] = xg
                qn[e] = xn
                if const_h:
                    xh = xn
                else:
                    xh = qh[e] + e_h[j]
                    qh[e] = xh
                # the era's gain once its rows of the bin (consecutive)
                # are in
                if is_present[e] and (j + 1 == end or e_era[j + 1] != e):
                    gain = era_gain_of(xg, xh, xn, tg[e] - xg,
                                       th[e] - xh, tn[e] - xn, ts[e], lam,
                                       by_counts)
                    delta = gain - gains[e]
                    gains[e] = gain
                    gc[pos[e]] = gain
                    run = run + delta
                    moved = moved + fabs(delta)
                    if directional:
                        d = era_direction_of(xg, xh, xn, tg[e] - xg,
                                             th[e] - xh, tn[e] - xn, lam,
                                             by_counts)
                        dsum += d - dirs[e]
                        dirs[e] = <signed char>d
            updates += end - s.start[b]
            step = step + 1
        if directional:
            if abs(dsum) < direction_floor(crit, node, best):
                continue
            # as many agreeing eras as this scan's best: it wins by its
            # criterion only
            if (screen and best.sc.found
                    and abs(dsum) == best.sc.direction_count
                    and sum_below(run, moved, updates, M,
                                  best.sc.criterion)):
                era_scratch.screened += 1
                continue
        elif screen and sum_below(run, moved, updates, M,
                                  best_so_far(crit, node, best)):
            era_scratch.screened += 1
            continue
        era_sums.qg = qg
        era_sums.qh = qh
        era_sums.qn = qn
        era_sums.gsum = lane_sum(gc, M)
        era_sums.dsum = dsum if s.scanned_is_left else -dsum
        if offer(crit, s, &cands[k], node, &era_sums, era_scratch, best):
            changed = True
    return changed
