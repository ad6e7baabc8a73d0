# Era-aware split criteria as pure functions of per-era sums (SPEC.md).
# Every function here is nogil, allocation-free and exact for +-inf alpha.
from libc.math cimport exp, isinf, INFINITY

cdef inline double score(double G, double H, double lam) noexcept nogil:
    """score(G, H) = G^2 / (H + lam), 0 when H + lam == 0."""
    cdef double d = H + lam
    if d == 0.0:
        return 0.0
    return G * G / d


cdef inline double era_gain(double GL, double HL, unsigned int nL,
                            double GR, double HR, unsigned int nR,
                            double score_parent, double lam) noexcept nogil:
    """Per-era gain g_e; exactly 0 when the era is not split."""
    if nL == 0 or nR == 0:
        return 0.0
    return score(GL, HL, lam) + score(GR, HR, lam) - score_parent


cdef inline double newton_value(double G, double H, double lam) noexcept nogil:
    """-G / (H + lam), 0 when H + lam == 0."""
    cdef double d = H + lam
    if d == 0.0:
        return 0.0
    return -G / d


cdef inline int era_direction(double GL, double HL, unsigned int nL,
                              double GR, double HR, unsigned int nR,
                              double lam) noexcept nogil:
    """d_e = sign(v_Le - v_Re) in {-1, 0, 1}; 0 when a side is empty."""
    cdef double diff
    if nL == 0 or nR == 0:
        return 0
    diff = newton_value(GL, HL, lam) - newton_value(GR, HR, lam)
    if diff > 0.0:
        return 1
    if diff < 0.0:
        return -1
    return 0


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


cdef inline double era_gain_direction(double GL, double HL, unsigned int nL,
                                      double GR, double HR, unsigned int nR,
                                      double score_parent, double lam,
                                      int *direction) noexcept nogil:
    """Per-era gain and direction together, one division per side.

    Same values as ``era_gain`` and ``era_direction``: with v = G / (H + lam),
    score = G * v and the Newton value is -v.
    """
    cdef double dL = HL + lam, dR = HR + lam, vL = 0.0, vR = 0.0
    direction[0] = 0
    if nL == 0 or nR == 0:
        return 0.0
    if dL != 0.0:
        vL = GL / dL
    if dR != 0.0:
        vR = GR / dR
    # Newton values are -vL and -vR: sign(-vL - (-vR)) = sign(vR - vL),
    # without a branch (the sign is unpredictable)
    direction[0] = <int>(vR > vL) - <int>(vR < vL)
    return GL * vL + GR * vR - score_parent


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


cdef inline double ratio_spread(double lo, double hi) noexcept nogil:
    """IRF's classification penalty L = max_e I_e / min_e I_e - 1 (eq. 16)."""
    return hi / lo - 1.0
