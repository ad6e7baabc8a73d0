"""The one candidate scorer of the split scan, in named steps.

A candidate of a scan (``_splitting.pyx``, ``_scan_eras.pyx``) is scored by
:func:`score_candidate`; its steps, in order (docs/criteria.md, "The
scorer's steps"):

1. ``era_minimum_ok``: ``min_samples_leaf_per_era``;
2. ``monotonic_ok`` on the children's values (``node_value``);
3. ``pooled_gain``: scikit-learn's gain on the pooled path, the score
   difference on the per-era path;
4. ``pooled_progress``, under the era criteria;
5. the direction count (``directional``);
6. ``agreement_ok``: the directional agreement gate, with
   ``min_agreement``;
7. ``criterion_of``: the criterion of ``split_type`` (with
   ``pooled_weight``, blended with the pooled gain per era);
8. ``penalty``: the invariance penalty, when ``irf_penalty > 0`` (with
   ``irf_variance="difference"``, first the rule that every era taking
   part keeps rows on both sides: ``eras_on_both_sides``).

``better`` and ``takes_over`` rank the scores; ``offer`` scores a candidate
of a per-era scan and keeps it when it takes over.

Each criterion's bound and short form is a named step here too, called by
the scans; none changes the split found (the tests compare each against the
full path, split for split). The short forms, with when each is chosen, the
case it serves and its gain over the next simpler path (figures of
docs/performance-history.md, its section and the row's date named, on the
2-core AMD machine of that day):

``counts``
    Chosen with constant hessians and ``l2_regularization = 0`` (any
    criterion but the pooled path): the per-era gains and directions in
    their short form (``eb_era_gain_of``, ``eb_era_direction_of``), the
    same values bit for bit. Serves squared error, the default. Gain: the
    directions' loop from 10.4% to 3.5% of a ``directional`` fit (200,000
    x 50 int8, 1,024 eras); split finding 0.97-1.41x faster alone
    ("Scan and criteria", 2026-11-27); the gains' share not
    measured apart from ``sums_only``.
``bounded``
    Chosen under ``era`` with ``boltzmann_alpha <= 0`` and under
    ``directional``: the dense scans go by blocks of candidates, skipping a
    block whose bound (``block_below_best``) is below the best so far of
    the node, and a node's features are scanned in the order of the nodes
    they won. Serves the era criteria at their defaults. Gain: the scan
    alone 0.66-0.92x the time without, 1.00x on 5-bin int8 at 256 eras
    ("Scan and criteria", 2026-11-26).
``sums_only``
    Chosen under ``era`` with ``boltzmann_alpha = 0``, no penalty, no
    per-era minimum, every era with rows taking part, and a scan of at most
    ``GAIN_SUMS_MAX_STEPS`` steps (features of up to 9 bins) whose bound
    failed: the candidates' gain sums in one pass (``eb_era_gain_sums``).
    Serves Numerai-like int8 data (5 bins) with many eras. Gain: the scan
    alone 0.96 / 0.88 / 0.71 of the per-candidate scan's time at 64 / 256 /
    1,024 eras ("Scan and criteria", 2026-11-27).
``below_best``
    Chosen under ``era`` with ``boltzmann_alpha = 0`` and no penalty: a
    candidate whose gain sum is below the best so far skips the scorer's
    other steps. Serves ``era`` at its default. Gain: 0.906 / 0.957 / 0.999
    of the instructions on ``small-float`` / ``float-eras`` / int8 256
    eras; wall time 0.97-1.00x ("Scan and criteria",
    2026-11-26).
``direction_floor``
    Chosen under ``directional``: a candidate with fewer agreeing eras than
    the best so far is not scored (its gains not computed). Serves
    ``directional``. Gain: with the directions without divisions, 0.90x
    the fit on 200,000 x 50 float64, 64 eras ("Scan and criteria",
    2026-11-24); not measured apart.
``sum_below``
    Chosen on sparse histograms (small nodes) under the bounds at
    ``boltzmann_alpha <= 0``: a running sum of the eras' gains screens the
    candidates before their gains are summed anew. Serves the era criteria
    on many-bin features. Gain: the sparse scans 1.04-1.32x faster
    ("Scan and criteria", 2026-11-27).
"""
from libc.math cimport INFINITY

from ._common cimport (ORIGINAL, ERA, DIRECTIONAL, VALUE_VARIANCE,
                       VALUE_DIFFERENCE, int64_t)
from ._criteria cimport (score, boltzmann, value_variance, rate_spread,
                         difference_variance, eras_on_both_sides,
                         era_directions, era_direction, era_direction_of,
                         era_block_bound, era_block_directions)
from ._scan cimport (score_t, split_t, node_sums_t, scan_t, pooled_t,
                     era_scratch_t, era_view_t, load_best, raise_best)


# The tuned constants of the scan and the scorer, their reasons with them.
cdef extern from "_tuning.h":
    double MIN_CAT_SUPPORT "EB_MIN_CAT_SUPPORT"
    double POOLED_PROGRESS_RTOL "EB_POOLED_PROGRESS_RTOL"
    double BOUND_RTOL "EB_BOUND_RTOL"
    double SUM_RTOL "EB_SUM_RTOL"
    enum:
        BOUND_BLOCK "EB_BOUND_BLOCK"
        BOUND_MAX_MISSES "EB_BOUND_MAX_MISSES"
        GAIN_SUMS_MAX_STEPS "EB_GAIN_SUMS_MAX_STEPS"


cdef struct criterion_t:
    # what the scorer needs of the splitter's settings
    int split_type       # SplitType (_common.pxd)
    double alpha         # boltzmann_alpha
    double lam           # l2_regularization
    double irf_penalty
    unsigned int min_per_era  # min_samples_leaf_per_era; 0 is off
    int penalty_kind     # PenaltyKind (_common.pxd)
    double min_agreement  # the agreement gate; 0 is off
    double pooled_weight  # the pooled gain's share of the era score; 0 is off
    bint const_h         # constant hessians: the hessian sums are the rows
    # the short forms that can be turned off, only to test that the splits
    # are the same without: the bounds (bounded) and the gain sums
    # (sums_only)
    bint bound_blocks
    bint gain_sums


# Ranking scores.

cdef inline bint better(const score_t *a, const score_t *b,
                        int split_type) noexcept nogil:
    """True when candidate a is strictly better than candidate b."""
    if not a.found:
        return False
    if not b.found:
        return True
    if split_type != DIRECTIONAL:
        return a.criterion > b.criterion
    if a.direction_count != b.direction_count:
        return a.direction_count > b.direction_count
    if a.criterion != b.criterion:
        return a.criterion > b.criterion
    return a.gain > b.gain


cdef inline bint takes_over(const score_t *sc, const score_t *best,
                            bint ties_to_later, int split_type) noexcept nogil:
    """Whether a candidate scored ``sc`` becomes the best of a per-era scan:
    strictly better, or tied in a scan whose labels decrease (the later,
    lower label wins the tie)."""
    return better(sc, best, split_type) or (
        ties_to_later and sc.found and not better(best, sc, split_type))


cdef inline void keep(split_t *best, const scan_t *s, const pooled_t *p,
                      const score_t *sc) noexcept nogil:
    """Make candidate ``p`` of scan ``s``, scored ``sc``, the best."""
    best.sc = sc[0]
    best.feature = s.feature
    best.bin = p.label
    best.missing_left = s.missing_left
    best.GL = p.GL
    best.HL = p.HL
    best.nL = p.nL
    best.is_cat = 0


# The scorer's steps.

cdef inline double node_value(double G, double H, double lower, double upper,
                              double lam) noexcept nogil:
    """Leaf value from pooled sums, as scikit-learn (bounded for monotonicity)."""
    cdef double v = -G / (H + lam + 1e-15)
    if v < lower:
        v = lower
    elif v > upper:
        v = upper
    return v


cdef inline bint monotonic_ok(signed char mono, double vL,
                              double vR) noexcept nogil:
    """The monotonic constraint of a feature (1 increasing, -1 decreasing,
    0 none) on the children's (bounded) values."""
    return not ((mono == 1 and vL > vR) or (mono == -1 and vL < vR))


cdef inline double pooled_gain(const pooled_t *p, const node_sums_t *node,
                               double vL, double vR, double lam,
                               bint from_values) noexcept nogil:
    """The pooled gain of candidate ``p``, with children's values vL, vR
    (``node_value``: bounded by the node's bounds).

    docs/criteria.md's gain is ``score(G_L, H_L) + score(G_R, H_R) -
    score(G, H)``, computed so on the per-era path. On the pooled path
    (``from_values``) it is scikit-learn's, bit for bit (the parity tests):
    ``G * v - G_L * v_L - G_R * v_R`` from the node's value ``v`` and the
    children's. The two agree, up to rounding, when no bound binds
    (``v = -G / (H + lam)``, so ``-G v = score(G, H)``), and under monotonic
    constraints whenever the bounds leave the values alone: the constraint
    itself only rules candidates out, on both paths from the same bounded
    values. They differ when a bound binds, i.e. below a monotonic split:
    there scikit-learn's gain uses the clipped values, the per-era path the
    unclipped sums (tests/engine/test_monotonic_reference.py shows both).
    One formula for both would change either the parity with scikit-learn
    or the era criteria's results, so both stay, side by side here."""
    if from_values:
        return node.loss_node - p.GL * vL - p.GR * vR
    return (score(p.GL, p.HL, lam) + score(p.GR, p.HR, lam)
            - score(p.GL + p.GR, p.HL + p.HR, lam))


cdef inline bint era_minimum_ok(const criterion_t *crit,
                                const node_sums_t *node,
                                const era_view_t *era_sums) noexcept nogil:
    """``min_samples_leaf_per_era``: every era taking part keeps that
    many rows on each side (the scanned side's count against the
    era's total)."""
    cdef double m = crit.min_per_era
    cdef int i, e
    for i in range(node.M):
        e = node.present[i]
        if era_sums.qn[e] < m or node.tn[e] - era_sums.qn[e] < m:
            return False
    return True


cdef inline double present_gain_sum(const node_sums_t *node,
                                    const era_view_t *era_sums,
                                    const era_scratch_t *era_scratch
                                    ) noexcept nogil:
    """The sum of the gains of the eras taking part: ``era_gains``'s sum
    over all eras, unless some eras with rows take no part (then summed
    again over the eras taking part)."""
    cdef double gsum = era_sums.gsum
    cdef int i
    if node.n_out_split > 0:
        gsum = 0.0
        for i in range(node.M):
            gsum += era_scratch.gains[node.present[i]]
    return gsum


cdef inline bint pooled_progress(double gain, double gsum,
                                 const node_sums_t *node) noexcept nogil:
    """Pooled progress (docs/criteria.md): a positive pooled gain above
    POOLED_PROGRESS_RTOL of the per-era children's score, the eras'
    gains plus their total scores."""
    return gain > 0.0 and gain > POOLED_PROGRESS_RTOL * (gsum + node.ts_part)


cdef inline bint agreement_ok(const criterion_t *crit, const scan_t *s,
                              const pooled_t *p, const node_sums_t *node,
                              const era_view_t *era_sums) noexcept nogil:
    """The directional agreement gate (docs/criteria.md, "Directional
    agreement"): the share of the eras taking part whose left-minus-right
    value difference has the pooled one's sign, at least
    ``min_agreement``. An era with an empty side, or equal values, and
    every era when the pooled values are equal, does not agree; 0 eras
    taking part agree 0."""
    cdef int i, e, d, pooled, agree = 0
    cdef bint by_counts = crit.const_h and crit.lam == 0.0
    # the scanned side plays the left side of the eras, so the pool's
    # too (both directions negated together); a candidate has rows on
    # both sides (min_samples_leaf >= 1)
    if s.scanned_is_left:
        pooled = era_direction(p.GL, p.HL, 1.0, p.GR, p.HR, 1.0, crit.lam)
    else:
        pooled = era_direction(p.GR, p.HR, 1.0, p.GL, p.HL, 1.0, crit.lam)
    if pooled != 0:
        for i in range(node.M):
            e = node.present[i]
            d = era_direction_of(
                era_sums.qg[e], era_sums.qh[e], era_sums.qn[e],
                node.tg[e] - era_sums.qg[e], node.th[e] - era_sums.qh[e],
                node.tn[e] - era_sums.qn[e], crit.lam, by_counts)
            agree += d == pooled
    if node.M == 0:
        return 0.0 >= crit.min_agreement
    return (<double> agree) / node.M >= crit.min_agreement


cdef inline double pooled_blend(const criterion_t *crit, double era_score,
                                double gain, int M) noexcept nogil:
    """``pooled_weight`` w (docs/criteria.md, "Pooled weight"): ``(1 - w)
    era_score + w gain / M``, the pooled gain per era taking part, in the
    units of the per-era gains."""
    cdef double w = crit.pooled_weight
    return (1.0 - w) * era_score + w * (gain / M)


cdef inline double criterion_of(const criterion_t *crit, double gain,
                                double gsum, const node_sums_t *node,
                                era_scratch_t *era_scratch) noexcept nogil:
    """The criterion of ``split_type`` before the penalty: the pooled
    gain (original), or the Boltzmann operator of the gains of the eras
    taking part (era, and directional's tie-break)."""
    cdef int i, M = node.M
    cdef double c
    if crit.split_type == ORIGINAL:
        return gain
    if crit.alpha == 0.0:
        c = gsum / M  # the absent eras' gains are zeros
    else:
        for i in range(M):
            era_scratch.gc[i] = era_scratch.gains[node.present[i]]
        c = boltzmann(era_scratch.gc, M, crit.alpha)
    if crit.pooled_weight > 0.0:
        return pooled_blend(crit, c, gain, M)
    return c


cdef inline double penalty(const criterion_t *crit, const scan_t *s,
                           const node_sums_t *node,
                           const era_view_t *era_sums,
                           era_scratch_t *era_scratch,
                           double H) noexcept nogil:
    """The invariance penalty of ``penalty_kind``, weighted by
    ``irf_penalty`` and the node's hessian sum ``H``, over the eras
    taking part: the others count as absent (no rows on the left)."""
    cdef int i, E = node.E
    cdef const double *lg
    cdef const double *lh
    cdef const double *ln
    if s.scanned_is_left:
        lg = era_sums.qg
        lh = era_sums.qh
        ln = era_sums.qn
    else:
        for i in range(E):
            era_scratch.lg[i] = node.tg[i] - era_sums.qg[i]
            era_scratch.lh[i] = node.th[i] - era_sums.qh[i]
            era_scratch.ln[i] = node.tn[i] - era_sums.qn[i]
        lg = era_scratch.lg
        lh = era_scratch.lh
        ln = era_scratch.ln
    if node.n_out > 0:
        # the eras taking no part count as absent: no rows left
        if ln != era_scratch.ln:
            for i in range(E):
                era_scratch.ln[i] = ln[i]
            ln = era_scratch.ln
        for i in range(node.n_out):
            era_scratch.ln[node.out[i]] = 0.0
    # over the eras of the node (absent eras have no rows)
    if crit.penalty_kind == VALUE_VARIANCE:
        return crit.irf_penalty * H * value_variance(
            lg, lh, ln, node.tg, node.th, E, crit.lam, era_scratch.cr,
            era_scratch.ok)
    if crit.penalty_kind == VALUE_DIFFERENCE:
        return crit.irf_penalty * H * difference_variance(
            lg, lh, ln, node.tg, node.th, node.tn, E, crit.lam,
            era_scratch.cr, era_scratch.ok)
    return crit.irf_penalty * 0.5 * H * rate_spread(
        lg, lh, node.tg, node.th, node.is_present, E)


cdef inline score_t score_candidate(const criterion_t *crit, const scan_t *s,
                                    const pooled_t *p, const node_sums_t *node,
                                    const era_view_t *era_sums,
                                    era_scratch_t *era_scratch) noexcept nogil:
    """The one candidate scorer: the score of candidate ``p``.

    ``era_sums`` holds its per-era sums and gains (NULL on the pooled
    path). The steps, in order: the per-era minimum
    (``era_minimum_ok``), the monotonic constraint (``monotonic_ok``), the
    pooled gain (``pooled_gain``), pooled progress under the era criteria
    (``pooled_progress``), the direction count (directional), the
    agreement gate (``agreement_ok``, with ``min_agreement``), the
    criterion of ``split_type`` (``criterion_of``) minus the invariance
    penalty (``penalty``). A step that rules the candidate out returns it
    not found."""
    cdef double vL, vR, gsum
    cdef score_t c
    c.found = 0
    c.direction_count = 0
    c.gain = 0.0
    c.criterion = 0.0
    if (era_sums != NULL and crit.min_per_era
            and not era_minimum_ok(crit, node, era_sums)):
        return c
    vL = node_value(p.GL, p.HL, node.lower, node.upper, crit.lam)
    vR = node_value(p.GR, p.HR, node.lower, node.upper, crit.lam)
    if not monotonic_ok(s.mono, vL, vR):
        return c
    c.gain = pooled_gain(p, node, vL, vR, crit.lam, era_sums == NULL)
    if era_sums == NULL:
        c.criterion = c.gain
        c.found = c.gain > 0.0
        return c
    gsum = era_sums.gsum
    if crit.split_type != ORIGINAL:
        gsum = present_gain_sum(node, era_sums, era_scratch)
        if not pooled_progress(c.gain, gsum, node):
            return c
    if crit.split_type == DIRECTIONAL:
        c.direction_count = abs(era_sums.dsum)
        if c.direction_count == 0:
            return c
    if (crit.min_agreement > 0.0
            and not agreement_ok(crit, s, p, node, era_sums)):
        return c
    c.criterion = criterion_of(crit, c.gain, gsum, node, era_scratch)
    if crit.irf_penalty > 0.0:
        # the children's difference: every era taking part on both sides
        if (crit.penalty_kind == VALUE_DIFFERENCE and not eras_on_both_sides(
                era_sums.qn, node.tn, node.present, node.M)):
            c.criterion = 0.0
            return c
        c.criterion -= penalty(crit, s, node, era_sums, era_scratch,
                               p.HL + p.HR)
    if crit.split_type == DIRECTIONAL:
        c.found = 1
    else:
        c.found = c.criterion > 0.0
    return c


# The criteria's short forms and bounds (the inventory: the docstring).

cdef inline bint counts(const criterion_t *crit) noexcept nogil:
    """Whether the per-era gains may take the form of ``eb_era_gain_of``
    for hessian sums that are the row counts, and lam = 0."""
    return crit.const_h and crit.lam == 0.0


cdef inline bint bounded(const criterion_t *crit) noexcept nogil:
    """Whether the scans skip blocks of candidates by their bounds
    (docs/criteria.md): under ``era`` with ``boltzmann_alpha <= 0``,
    whose criterion is at most the mean of the gains of the eras taking
    part (the mean itself at 0; the Boltzmann operator weighs the
    smaller gains more below 0), less an invariance penalty (>= 0); and
    under ``directional``, by the eras that agree (and their gains at
    ``boltzmann_alpha <= 0``, between candidates as many eras agree
    on)."""
    return crit.bound_blocks and (
        (crit.split_type == ERA and crit.alpha <= 0.0
         and crit.pooled_weight == 0.0)
        or crit.split_type == DIRECTIONAL)


cdef inline bint sums_only(const criterion_t *crit, const scan_t *s,
                           const node_sums_t *node) noexcept nogil:
    """Whether the scan ``s`` is scored by its candidates' gain sums
    alone (``score_gain_sums``, _scan_eras.pyx): under ``era`` with
    ``boltzmann_alpha = 0`` (the criterion is the mean of the gains),
    no invariance penalty, no per-era minimum, every era with rows
    taking part (the sum over all eras is then theirs), and at most
    GAIN_SUMS_MAX_STEPS steps; not with the agreement gate, which needs
    each candidate's per-era sums."""
    return (crit.gain_sums and crit.min_agreement == 0.0
            and s.n_steps <= GAIN_SUMS_MAX_STEPS
            and crit.split_type == ERA and crit.alpha == 0.0
            and crit.irf_penalty == 0.0 and crit.min_per_era == 0
            and node.n_out_split == 0)


cdef inline double rank_value(const criterion_t *crit,
                              const score_t *sc) noexcept nogil:
    """What a node's shared best holds of a score: its agreeing eras
    under ``directional``, its criterion otherwise."""
    if crit.split_type == DIRECTIONAL:
        return <double> sc.direction_count
    return sc.criterion


cdef inline double best_so_far(const criterion_t *crit,
                               const node_sums_t *node,
                               const split_t *best) noexcept nogil:
    """The best so far for the node, as ``rank_value`` gives it: this
    scan's ``best``, or another feature's (``node.shared_best``, raised
    only under the bounds), whichever is higher; -inf before any."""
    cdef double thr = load_best(node.shared_best), own
    if best.sc.found:
        own = rank_value(crit, &best.sc)
        if own > thr:
            thr = own
    return thr


cdef inline double direction_floor(const criterion_t *crit,
                                   const node_sums_t *node,
                                   const split_t *best) noexcept nogil:
    """directional: the fewest agreeing eras a candidate needs to be
    worth its gains: as many as the best so far (``best_so_far``); 0
    before any."""
    return max(0.0, best_so_far(crit, node, best))


cdef inline int direction_sum(const criterion_t *crit, const double *qg,
                              const double *qh, const double *qn,
                              const node_sums_t *node) noexcept nogil:
    """The sum of the directions of the eras taking part, from a
    candidate's per-era sums (the scanned side plays the left side):
    all eras' (``era_directions``), less those taking no part."""
    cdef int i, e
    cdef int dsum = era_directions(qg, qh, qn, node.tg, node.th, node.tn,
                                   crit.lam, node.E, counts(crit))
    for i in range(node.n_out_split):
        e = node.out[i]
        dsum -= era_direction_of(qg[e], qh[e], qn[e], node.tg[e] - qg[e],
                                 node.th[e] - qh[e], node.tn[e] - qn[e],
                                 crit.lam, counts(crit))
    return dsum


cdef inline bint block_below_best(const criterion_t *crit,
                                  const node_sums_t *node,
                                  const split_t *best,
                                  era_scratch_t *era_scratch,
                                  const double *qn, const double *qh,
                                  double thr) noexcept nogil:
    """Whether no candidate of a block can win or tie against the best so
    far ``thr`` (``best_so_far``, above 0): from the block's gathered
    per-era extremes (``era_scratch.dmin`` .. ``h1``) and the scanned
    side's sums after its last candidate (qn, qh), the bound of their
    gain sums (``era_block_bound``, docs/criteria.md) and, under
    ``directional``, of their agreeing eras (``era_block_directions``).

    The margin covers the rounding of the gains and of their sum: a
    block is skipped only when none of its candidates can win or tie,
    so the split found is the same as without the bound."""
    cdef double bsum
    cdef int dc
    if crit.split_type == DIRECTIONAL:
        # fewer agreeing eras than the best so far, or as many and a
        # lower era score than this scan's best (alpha <= 0)
        dc = era_block_directions(
            era_scratch.dmin, era_scratch.dmax, era_scratch.n1,
            era_scratch.h1, qn, qh, node.tg, node.th, node.tn,
            node.is_present, crit.lam, crit.const_h, node.E)
        if dc < thr:
            return True
        # the era score's bound holds no pooled gain (pooled_weight)
        if (crit.alpha > 0.0 or crit.pooled_weight > 0.0
                or not best.sc.found or dc != best.sc.direction_count):
            return False
        thr = best.sc.criterion
    bsum = era_block_bound(era_scratch.dmin, era_scratch.dmax,
                           era_scratch.n1, era_scratch.h1, qn, qh, node.tg,
                           node.th, node.tn, crit.lam, crit.const_h,
                           node.E, era_scratch.ub)
    return bsum + BOUND_RTOL * (bsum + node.ts_part) < thr * node.M


cdef inline bint sum_below(double run, double moved, int64_t updates, int M,
                           double thr) noexcept nogil:
    """Whether a candidate's criterion is surely below ``thr``
    (``boltzmann_alpha <= 0``: at most the mean of the gains of the M
    eras taking part, less a penalty), from ``run``, their sum kept
    by ``updates`` changes whose sizes add up to ``moved``
    (``score_per_era_sparse``, _scan_eras.pyx). ``run`` differs from any
    sum of the gains by at most about ``(updates + M) u moved`` (u, the
    unit roundoff: each change and each addition rounds once, and every
    partial sum and gain is at most ``moved``); the margin is four
    times that, plus BOUND_RTOL of ``moved`` for the rounding of the
    Boltzmann operator. False when ``thr`` is not above 0 (nothing to
    beat yet, or no candidate could be eligible below it)."""
    if not thr > 0.0:
        return False
    return ((run + (BOUND_RTOL + SUM_RTOL * <double>(updates + M + 1))
             * moved) / M < thr)


cdef inline bint below_best(const criterion_t *crit, const node_sums_t *node,
                            const era_view_t *era_sums,
                            const era_scratch_t *era_scratch,
                            const split_t *best) noexcept nogil:
    """Under ``era`` with ``boltzmann_alpha = 0`` and no invariance
    penalty a candidate's criterion is its eras' gain sum over M
    (``criterion_of``), known before the rest of its score: one
    below the best's (this scan's, or another feature's of the node:
    ``node.shared_best``) can neither beat it nor tie, so the scorer's
    other steps (the children's values, the pooled gain and
    progress) are skipped. The split found is the same as when it is
    scored."""
    cdef double thr
    if (crit.split_type != ERA or crit.alpha != 0.0
            or crit.irf_penalty > 0.0 or crit.pooled_weight > 0.0):
        return False
    thr = best_so_far(crit, node, best)
    if not thr > 0.0:
        return False
    return present_gain_sum(node, era_sums, era_scratch) / node.M < thr


cdef inline bint offer(const criterion_t *crit, const scan_t *s,
                       const pooled_t *p, const node_sums_t *node,
                       const era_view_t *era_sums,
                       era_scratch_t *era_scratch,
                       split_t *best) noexcept nogil:
    """A candidate of a per-era scan, with its per-era sums and gains,
    against the best of the scan: scored (unless below the best,
    ``below_best``) and kept when it takes over; under the bounds the
    node's shared best is raised to it. True when kept."""
    cdef score_t sc
    if below_best(crit, node, era_sums, era_scratch, best):
        return False
    sc = score_candidate(crit, s, p, node, era_sums, era_scratch)
    if takes_over(&sc, &best.sc, s.ties_to_later, crit.split_type):
        keep(best, s, p, &sc)
        if bounded(crit):
            raise_best(node.shared_best, rank_value(crit, &sc))
        return True
    return False
