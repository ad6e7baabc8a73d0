# Era-aware split criteria as pure functions of per-era sums
# (docs/criteria.md).
# Every function here is nogil, allocation-free and exact for +-inf alpha.
from libc.math cimport exp, isinf, INFINITY
from libc.stdint cimport int32_t

cdef inline double score(double G, double H, double lam) noexcept nogil:
    """score(G, H) = G^2 / (H + lam), 0 when H + lam == 0."""
    cdef double d = H + lam
    if d == 0.0:
        return 0.0
    return G * G / d


cdef inline double newton_value(double G, double H, double lam) noexcept nogil:
    """-G / (H + lam), 0 when H + lam == 0."""
    cdef double d = H + lam
    if d == 0.0:
        return 0.0
    return -G / d


cdef inline double boltzmann(const double *g, int m, double alpha) noexcept nogil:
    """Boltzmann operator B_alpha over g[0..m-1].

    Shifted by the max (alpha > 0) or the min (alpha < 0) so that every
    exponent is <= 0: no overflow and no NaN for any alpha. alpha = 0 is the
    mean, +inf the max and -inf the min, all exact.
    """
    cdef int i
    cdef double c, w, num = 0.0, den = 0.0
    if m <= 0:
        return 0.0
    if alpha == 0.0:
        for i in range(m):
            num += g[i]
        return num / m
    c = g[0]
    if alpha > 0.0:
        for i in range(1, m):
            if g[i] > c:
                c = g[i]
    else:
        for i in range(1, m):
            if g[i] < c:
                c = g[i]
    if isinf(alpha):
        return c
    for i in range(m):
        w = exp(alpha * (g[i] - c))
        num += g[i] * w
        den += w
    return num / den


# The per-era kernels, in C: _criteria.h.
cdef extern from "_criteria.h":
    double era_gain_direction "eb_era_gain_direction" (
        double GL, double HL, double nL, double GR, double HR, double nR,
        double score_parent, double lam, int *direction) noexcept nogil
    void era_gains "eb_era_gains" (
        const double *qg, const double *qh, const double *qn, const double *tg,
        const double *th, const double *tn, const double *ts, double lam, int M,
        int counts, double *gains, double *gsum) noexcept nogil
    int era_directions "eb_era_directions" (
        const double *qg, const double *qh, const double *qn, const double *tg,
        const double *th, const double *tn, double lam, int M,
        int counts) noexcept nogil
    double era_gain "eb_era_gain" (
        double GL, double HL, double nL, double GR, double HR, double nR,
        double score_parent, double lam) noexcept nogil
    double era_gain_of "eb_era_gain_of" (
        double GL, double HL, double nL, double GR, double HR, double nR,
        double score_parent, double lam, int counts) noexcept nogil
    double era_block_bound "eb_era_block_bound" (
        const double *dmin, const double *dmax, const double *n1,
        const double *h1, const double *n2, const double *h2, const double *tg,
        const double *th, const double *tn, double lam, int const_h, int E,
        double *ub) noexcept nogil
    int era_block_directions "eb_era_block_directions" (
        const double *dmin, const double *dmax, const double *n1,
        const double *h1, const double *n2, const double *h2, const double *tg,
        const double *th, const double *tn, const signed char *present,
        double lam, int const_h, int E) noexcept nogil
    int era_direction "eb_era_direction" (
        double GL, double HL, double nL, double GR, double HR, double nR,
        double lam) noexcept nogil
    int era_direction_of "eb_era_direction_of" (
        double GL, double HL, double nL, double GR, double HR, double nR,
        double lam, int counts) noexcept nogil
    double difference_variance "eb_difference_variance" (
        const double *gL, const double *hL, const double *nL, const double *g,
        const double *h, const double *n, int m, double lam, double *x,
        signed char *ok) noexcept nogil
    int eras_on_both_sides "eb_eras_on_both_sides" (
        const double *q, const double *tn, const int32_t *present,
        int M) noexcept nogil


cdef inline double era_variance(const double *x, const signed char *ok,
                                int m) noexcept nogil:
    """Population variance of x[i] over the i < m with ok[i] set.

    Two passes (mean, then squared deviations), so that values large against
    their spread lose no precision; 0 when fewer than two values are set.
    """
    cdef int i, k = 0
    cdef double mean = 0.0, acc = 0.0, d
    for i in range(m):
        if ok[i]:
            mean += x[i]
            k += 1
    if k < 2:
        return 0.0
    mean /= k
    for i in range(m):
        if ok[i]:
            d = x[i] - mean
            acc += d * d
    return acc / k


cdef inline double rate_ratio(double pos_left, double neg_left, double pos,
                              double neg) noexcept nogil:
    """IRF's classification invariant I_e (Liao et al. eq. 17-19).

    The changing rate of each class going left, smoothed by a dummy half
    sample: ``((pos_left + 0.5) / (pos + 1)) / ((neg_left + 0.5) / (neg + 1))``.
    Always finite and positive for non-negative counts.
    """
    return ((pos_left + 0.5) * (neg + 1.0)) / ((pos + 1.0) * (neg_left + 0.5))


cdef inline double value_variance(const double *gL, const double *hL,
                                  const double *nL, const double *g,
                                  const double *h, int m, double lam,
                                  double *cr, signed char *ok) noexcept nogil:
    """The ``value_variance`` invariance penalty of docs/criteria.md,
    P(s) = Var_e CR_e over m eras.

    ``CR_e = v(G_Le, H_Le) - v(G_e, H_e)`` with the Newton value ``v``, from
    each era's left sums (gL, hL, nL) and totals (g, h), over the eras with
    rows on the left (``era_variance``). ``cr`` and ``ok`` are scratch
    arrays of m entries.
    """
    cdef int i
    for i in range(m):
        ok[i] = nL[i] > 0
        cr[i] = 0.0
        if ok[i]:
            cr[i] = newton_value(gL[i], hL[i], lam) - newton_value(g[i], h[i], lam)
    return era_variance(cr, ok, m)


cdef inline double rate_spread(const double *gL, const double *hL,
                               const double *g, const double *h,
                               const signed char *ok, int m) noexcept nogil:
    """The ``rate_spread`` invariance penalty, IRF's classification penalty
    ``max_e I_e / min_e I_e - 1`` (Liao et al. eq. 16) over the eras i < m
    with ok[i] set (the eras of the node).

    From each era's left sums (gL, hL) and totals (g, h) of gradients
    ``-w * y`` (y in {0, 1}) and hessians ``w``: an era's positive rows
    going left weigh ``-G_Le``, all its rows going left ``H_Le``. 0 with
    fewer than two eras.
    """
    cdef int i, k = 0
    cdef double pos, posL, r, lo = INFINITY, hi = 0.0
    for i in range(m):
        if not ok[i]:
            continue
        k += 1
        posL = max(-gL[i], 0.0)
        pos = max(-g[i], 0.0)
        r = rate_ratio(posL, max(hL[i] - posL, 0.0), pos, max(h[i] - pos, 0.0))
        lo = min(lo, r)
        hi = max(hi, r)
    return hi / lo - 1.0 if k >= 2 else 0.0
