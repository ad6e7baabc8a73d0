/* The era criteria's per-era kernels (docs/criteria.md): an era's gain
   and direction from its left and right sums, the dense loops over the
   eras of one candidate, and the bounds over a block of candidates.
   Declared to Cython in _criteria.pxd; tested through _criteria.pyx
   (tests/engine/test_criteria.py). */
#ifndef ERABOOST_CRITERIA_H
#define ERABOOST_CRITERIA_H

#include <math.h>
#include <stdint.h>
#include "_simd.h"

/* The direction of one era from its left and right sums (docs/criteria.md):
   sign(v_R - v_L) with v = G / (H + lam) (0 when H + lam == 0), the
   negated Newton values, so -d_e of docs/criteria.md; 0 when a side is
   empty. Without divisions: the sign of
   (G_R d_L - G_L d_R) / (d_L d_R), from the sign of its numerator and
   of its denominator (the same sign as v_R - v_L in exact arithmetic).
   Written without branches for SIMD lanes; always inlined. */
static inline EB_ALWAYS_INLINE int eb_era_direction(
    double GL, double HL, double nL, double GR, double HR, double nR,
    double lam)
{
    double dL = HL + lam, dR = HR + lam;
    double mL = (double)(dL != 0.0), mR = (double)(dR != 0.0);
    double dLs = dL + (1.0 - mL), dRs = dR + (1.0 - mR);
    double num = GR * mR * dLs - GL * mL * dRs, den = dLs * dRs;
    int split = (int)(nL != 0.0) & (int)(nR != 0.0);
    int sn = (int)(num > 0.0) - (int)(num < 0.0);
    int sd = (int)(den > 0.0) - (int)(den < 0.0);
    return sn * sd * split;
}

/* eb_era_direction where, with `counts` (a constant where it is
   inlined), the caller vouches that the hessian sums are the row
   counts and lam = 0 (eb_era_gain_of): an era split in two then has
   positive hessian sums on both sides, eb_era_direction's masks are
   1.0, its shifts 0.0 and its denominator positive, and the direction
   is the sign of the numerator G_R d_L - G_L d_R, the same products,
   bit for bit; 0 where a side has no rows. */
static inline EB_ALWAYS_INLINE int eb_era_direction_of(
    double GL, double HL, double nL, double GR, double HR, double nR,
    double lam, int counts)
{
    if (counts) {
        double num = GR * HL - GL * HR;
        int split = (int)(nL != 0.0) & (int)(nR != 0.0);
        return ((int)(num > 0.0) - (int)(num < 0.0)) * split;
    }
    return eb_era_direction(GL, HL, nL, GR, HR, nR, lam);
}

/* The per-era gain of one era from its left and right sums (docs/criteria.md):
   score(G, H) = G^2 / d with d = H + lam (0 when d == 0), both sides'
   scores over one division, (G_L^2 d_R + G_R^2 d_L) / (d_L d_R); 0
   when a side is empty (the sums of float32 gradients and hessians
   keep every product far from overflow). Written without branches so
   that eb_era_gains below runs on SIMD lanes; the same values as
   the per-era gain of docs/criteria.md (an unsplit era's gain may be
   -0.0). Always inlined: into each clone of eb_era_gains as well
   (EB_ALWAYS_INLINE and EB_MULTIVERSION: _simd.h).

   With `counts` (a constant where it is inlined) the caller vouches
   that the hessian sums are the row counts (HL = nL, HR = nR: constant
   hessians) and lam = 0: a side with rows then has a positive
   denominator, so one mask, the split's, serves both sides. The same
   value, bit for bit (where the era is split, a product by a mask of
   1.0 and a sum with 0.0 change nothing; where it is not, the value is
   a finite number times 0.0 in both), in about half the operations. */
static inline EB_ALWAYS_INLINE double eb_era_gain_of(
    double GL, double HL, double nL, double GR, double HR, double nR,
    double score_parent, double lam, int counts)
{
    double dL = HL + lam, dR = HR + lam;
    if (counts) {
        double split = (double)(nL != 0.0) * (double)(nR != 0.0);
        double dLs = dL + (1.0 - split), dRs = dR + (1.0 - split);
        double num = GL * GL * dRs + GR * GR * dLs;
        return (num / (dLs * dRs) - score_parent) * split;
    } else {
        double mL = (double)(dL != 0.0), mR = (double)(dR != 0.0);
        double split = (double)(nL != 0.0) * (double)(nR != 0.0);
        double dLs = dL + (1.0 - mL), dRs = dR + (1.0 - mR);
        double num = GL * GL * mL * dRs + GR * GR * mR * dLs;
        return (num / (dLs * dRs) - score_parent) * split;
    }
}

static inline EB_ALWAYS_INLINE double eb_era_gain(
    double GL, double HL, double nL, double GR, double HR, double nR,
    double score_parent, double lam)
{
    return eb_era_gain_of(GL, HL, nL, GR, HR, nR, score_parent, lam, 0);
}

/* The per-era gain and direction of one era from its left and right
   sums (docs/criteria.md): eb_era_gain's and eb_era_direction's. */
static inline EB_ALWAYS_INLINE double eb_era_gain_direction(
    double GL, double HL, double nL, double GR, double HR, double nR,
    double score_parent, double lam, int *direction)
{
    *direction = eb_era_direction(GL, HL, nL, GR, HR, nR, lam);
    return eb_era_gain(GL, HL, nL, GR, HR, nR, score_parent, lam);
}

/* The dense era loop, compiled for AVX-512 and AVX2 as well, chosen at
   run time by the CPU (EB_MULTIVERSION): every version computes the
   same values. */

/* Gains of the M eras of one candidate from the sums of its scanned side
   (qg, qh, qn) and the eras' totals (tg, th, tn) and total scores (ts):
   the scanned side plays the left side. Writes gains[0 .. M-1] and their
   sum into *gsum (four interleaved partial sums: era i in lane i mod 4,
   lanes combined as (l0 + l1) + (l2 + l3)). `counts`: the hessian sums
   are the row counts and lam = 0 (eb_era_gain_of). */
EB_MULTIVERSION
static void eb_era_gains(const double *qg, const double *qh,
                         const double *qn, const double *tg,
                         const double *th, const double *tn,
                         const double *ts, double lam, int M,
                         int counts, double *gains, double *gsum)
{
    int i;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    if (counts) {
        for (i = 0; i < M; i++)
            gains[i] = eb_era_gain_of(qg[i], qh[i], qn[i], tg[i] - qg[i],
                                      th[i] - qh[i], tn[i] - qn[i], ts[i],
                                      lam, 1);
    } else {
        for (i = 0; i < M; i++)
            gains[i] = eb_era_gain(qg[i], qh[i], qn[i], tg[i] - qg[i],
                                   th[i] - qh[i], tn[i] - qn[i], ts[i],
                                   lam);
    }
    for (i = 0; i + 4 <= M; i += 4) {
        s0 += gains[i]; s1 += gains[i + 1];
        s2 += gains[i + 2]; s3 += gains[i + 3];
    }
    for (; i < M; i++) {
        if (i % 4 == 0) s0 += gains[i]; else if (i % 4 == 1) s1 += gains[i];
        else s2 += gains[i];
    }
    *gsum = (s0 + s1) + (s2 + s3);
}

/* The sum of the directions of the M eras of one candidate, from the
   same sums as eb_era_gains (the scanned side plays the left side), and
   without its divisions: what a candidate's |sum of directions| needs
   before its gains are worth computing.

   With `counts`, eb_era_direction_of's cross product, its signs
   counted in 64-bit lanes, as wide as the doubles, so that the loop
   needs no shuffles on SIMD lanes. */
EB_MULTIVERSION
static int eb_era_directions(const double *qg, const double *qh,
                             const double *qn, const double *tg,
                             const double *th, const double *tn,
                             double lam, int M, int counts)
{
    int dsum = 0, i;
    int64_t up = 0, down = 0, split;
    double dL, dR, num;
    if (counts) {
        for (i = 0; i < M; i++) {
            dL = qh[i];
            dR = th[i] - qh[i];
            num = (tg[i] - qg[i]) * dL - qg[i] * dR;
            split = (int64_t)(qn[i] != 0.0) & (int64_t)(tn[i] - qn[i] != 0.0);
            up += (int64_t)(num > 0.0) & split;
            down += (int64_t)(num < 0.0) & split;
        }
        return (int)(up - down);
    }
    for (i = 0; i < M; i++)
        dsum += eb_era_direction(qg[i], qh[i], qn[i], tg[i] - qg[i],
                                 th[i] - qh[i], tn[i] - qn[i], lam);
    return dsum;
}

/* Bounds over a block of candidates (docs/criteria.md, "A bound over a
   block of candidates"), from each era's smallest and largest D over
   the block's candidates (dmin, dmax; D = G_L - G a / (a + b), computed
   with G / (H + 2 lam)) and the scanned side's rows and hessian sums
   at its first candidate (n1, h1) and last (n2, h2). The scanned side
   plays the left side; with constant hessians the hessian sums are the
   counts (h1 = n1, h2 = n2, th = tn).

   a b (a = H_L + lam, b = H_R + lam) is concave in H_L: over the
   block's candidates with rows on both sides it is at least its value
   at the ends of their range of H_L, which starts at h1 if n1 >= 1
   (else at 1 row with constant hessians, 0 otherwise) and ends at h2
   if n2 < n (else at n - 1 rows, or H). eb_era_ab_low returns that
   lower bound, and in *any whether a candidate of the block has rows
   on both sides. */
static inline EB_ALWAYS_INLINE double eb_era_ab_low(
    double n1, double h1, double n2, double h2, double H, double n,
    double lam, int const_h, double *any)
{
    double lo = n1 >= 1.0 ? h1 : (const_h ? 1.0 : 0.0);
    double hi = n2 <= n - 1.0 ? h2 : (const_h ? n - 1.0 : H);
    double flo = (lo + lam) * ((H - lo) + lam);
    double fhi = (hi + lam) * ((H - hi) + lam);
    *any = (double)(n2 >= 1.0) * (double)(n1 <= n - 1.0);
    return flo < fhi ? flo : fhi;
}

#if EB_VECTORS
/* eb_era_ab_low for the four eras from i, its ternaries as selections
   of bits; *any a mask (all bits set where true). */
static inline EB_ALWAYS_INLINE eb_v4d eb_era_ab_low4(
    const double *n1, const double *h1, const double *n2,
    const double *h2, const double *th, const double *tn, double lam,
    int const_h, int i, eb_v4l *any)
{
    const eb_v4d zero = {0.0, 0.0, 0.0, 0.0}, one = {1.0, 1.0, 1.0, 1.0};
    const eb_v4d vlam = {lam, lam, lam, lam};
    eb_v4d a1 = eb_load4(n1 + i), a2 = eb_load4(n2 + i);
    eb_v4d H = eb_load4(th + i), nm1 = eb_load4(tn + i) - one;
    eb_v4d lo = eb_select4((eb_v4l)(a1 >= one), eb_load4(h1 + i),
                           const_h ? one : zero);
    eb_v4d hi = eb_select4((eb_v4l)(a2 <= nm1), eb_load4(h2 + i),
                           const_h ? nm1 : H);
    eb_v4d flo = (lo + vlam) * ((H - lo) + vlam);
    eb_v4d fhi = (hi + vlam) * ((H - hi) + vlam);
    *any = (eb_v4l)(a2 >= one) & (eb_v4l)(a1 <= nm1);
    return eb_select4((eb_v4l)(flo < fhi), flo, fhi);
}
#endif

/* The bound of the gain sum of the E eras. An era's gain is, exactly,
       G^2 / (a + b) - score(G, H) + (a + b) D^2 / (a b),
   where the first two terms sum to at most 0 (lam >= 0): it is at most
   (H + 2 lam) (D^2 (1 + 1e-12) + 1e-12 G^2) / min a b over the block,
   >= 0 (the terms in 1e-12 cover the rounding of D, about 1e-15 of
   D^2 + G^2); 0 when no candidate has rows on both sides; +inf when
   min a b is not positive (a zero hessian sum, or lam = 0 at an end of
   the range left open). Writes the eras' bounds into ub and returns
   their sum (four interleaved partial sums, as eb_era_gains). */
EB_MULTIVERSION
static double eb_era_block_bound(const double *dmin, const double *dmax,
                                 const double *n1, const double *h1,
                                 const double *n2, const double *h2,
                                 const double *tg, const double *th,
                                 const double *tn, double lam,
                                 int const_h, int E,
                                 double *EB_RESTRICT ub)
{
    int i = 0;
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, any;
#if EB_VECTORS
    /* four eras at a time, the same operations as the loop below on
       each lane (its ternaries as selections of bits), the partial
       sums the lanes */
    const eb_v4d zero = {0.0, 0.0, 0.0, 0.0}, one = {1.0, 1.0, 1.0, 1.0};
    const eb_v4d inf = {INFINITY, INFINITY, INFINITY, INFINITY};
    const eb_v4d lam2 = {2.0 * lam, 2.0 * lam, 2.0 * lam, 2.0 * lam};
    const eb_v4d rel = {1.0 + 1e-12, 1.0 + 1e-12, 1.0 + 1e-12,
                        1.0 + 1e-12};
    const eb_v4d tiny = {1e-12, 1e-12, 1e-12, 1e-12};
    eb_v4d acc = zero;
    for (; i + 4 <= E; i += 4) {
        eb_v4l on;
        eb_v4d ab = eb_era_ab_low4(n1, h1, n2, h2, th, tn, lam, const_h,
                                   i, &on);
        eb_v4d H = eb_load4(th + i), g = eb_load4(tg + i);
        eb_v4d lo_d = eb_load4(dmin + i), hi_d = eb_load4(dmax + i);
        eb_v4d dx = hi_d * hi_d, dn = lo_d * lo_d;
        eb_v4d dd = eb_select4((eb_v4l)(dx > dn), dx, dn);
        eb_v4d u = (H + lam2) * (dd * rel + tiny * (g * g));
        eb_v4l pos = (eb_v4l)(ab > zero);
        /* divided by 1 where not positive: no division by 0 */
        eb_v4d b = eb_select4(pos, u / eb_select4(pos, ab, one), inf);
        eb_v4d v = eb_select4(on, b, zero);
        eb_store4(ub + i, v);
        acc += v;
    }
    s0 = acc[0]; s1 = acc[1]; s2 = acc[2]; s3 = acc[3];
#endif
    for (; i < E; i++) {
        double ab = eb_era_ab_low(n1[i], h1[i], n2[i], h2[i], th[i],
                                  tn[i], lam, const_h, &any);
        double dd = dmax[i] * dmax[i] > dmin[i] * dmin[i]
                    ? dmax[i] * dmax[i] : dmin[i] * dmin[i];
        double u = (th[i] + 2.0 * lam)
                   * (dd * (1.0 + 1e-12) + 1e-12 * (tg[i] * tg[i]));
        double b = ab > 0.0 ? u / ab : INFINITY;
        ub[i] = any != 0.0 ? b : 0.0;
    }
    /* era i in lane i mod 4, the eras after the last four in lane 0 */
#if EB_VECTORS
    for (i = E & ~3; i < E; i++) s0 += ub[i];
#else
    for (i = 0; i + 4 <= E; i += 4) {
        s0 += ub[i]; s1 += ub[i + 1]; s2 += ub[i + 2]; s3 += ub[i + 3];
    }
    for (; i < E; i++) s0 += ub[i];
#endif
    return (s0 + s1) + (s2 + s3);
}

/* The bound of |sum_e d_e| over the block's candidates, the eras taking
   part (present) only. An era's direction is -sign(D) where both
   sides have rows and a b > 0 (eb_era_direction: the sign of
   G_R a - G_L b = -(a + b) D), 0 elsewhere. An era with rows on both
   sides at every candidate of the block, min a b > 0, and D away from
   0 over the whole block (beyond 1e-12 (|D| + |G|), far above the
   rounding of D and of the direction's own products) keeps one
   direction; any other era counts 1. */
EB_MULTIVERSION
static int eb_era_block_directions(const double *dmin, const double *dmax,
                                   const double *n1, const double *h1,
                                   const double *n2, const double *h2,
                                   const double *tg, const double *th,
                                   const double *tn,
                                   const signed char *present, double lam,
                                   int const_h, int E)
{
    int i = 0, fixed = 0, loose = 0;
#if EB_VECTORS
    /* four eras at a time: masks (all bits set where true) for the
       loop's flags below, counted exactly in integer lanes */
    const eb_v4d zero = {0.0, 0.0, 0.0, 0.0}, one = {1.0, 1.0, 1.0, 1.0};
    const eb_v4d tiny = {1e-12, 1e-12, 1e-12, 1e-12};
    const eb_v4l magnitude = {0x7fffffffffffffffLL, 0x7fffffffffffffffLL,
                              0x7fffffffffffffffLL, 0x7fffffffffffffffLL};
    eb_v4l vfixed = {0, 0, 0, 0}, vloose = {0, 0, 0, 0};
    for (; i + 4 <= E; i += 4) {
        eb_v4l any, pos, neg, valid;
        eb_v4l p = {-(long long)(present[i] != 0),
                    -(long long)(present[i + 1] != 0),
                    -(long long)(present[i + 2] != 0),
                    -(long long)(present[i + 3] != 0)};
        eb_v4d ab = eb_era_ab_low4(n1, h1, n2, h2, th, tn, lam, const_h,
                                   i, &any);
        eb_v4d lo_d = eb_load4(dmin + i), hi_d = eb_load4(dmax + i);
        eb_v4d g = eb_load4(tg + i);
        eb_v4d tol = tiny * ((eb_v4d)((eb_v4l)lo_d & magnitude)
                             + (eb_v4d)((eb_v4l)hi_d & magnitude)
                             + 2.0 * (eb_v4d)((eb_v4l)g & magnitude));
        valid = (eb_v4l)(eb_load4(n1 + i) >= one)
                & (eb_v4l)(eb_load4(n2 + i) <= eb_load4(tn + i) - one)
                & (eb_v4l)(ab > zero);
        pos = valid & (eb_v4l)(lo_d > tol);
        neg = valid & (eb_v4l)(hi_d < -tol);
        /* masks are -1 where true: pos - neg counts neg - pos */
        vfixed += p & (pos - neg);
        vloose -= p & ~(pos | neg);
    }
    fixed = (int)((vfixed[0] + vfixed[1]) + (vfixed[2] + vfixed[3]));
    loose = (int)((vloose[0] + vloose[1]) + (vloose[2] + vloose[3]));
#endif
    for (; i < E; i++) {
        double any, ab, tol;
        int p, valid, pos, neg;
        ab = eb_era_ab_low(n1[i], h1[i], n2[i], h2[i], th[i], tn[i], lam,
                           const_h, &any);
        tol = 1e-12 * (fabs(dmin[i]) + fabs(dmax[i]) + 2.0 * fabs(tg[i]));
        p = present[i] != 0;
        valid = (n1[i] >= 1.0) & (n2[i] <= tn[i] - 1.0) & (ab > 0.0);
        pos = valid & (dmin[i] > tol);
        neg = valid & (dmax[i] < -tol);
        /* without branches, for SIMD lanes */
        fixed += p * (neg - pos);
        loose += p & !(pos | neg);
    }
    return (fixed < 0 ? -fixed : fixed) + loose;
}

/* The invariance penalty of irf_variance="difference" (docs/criteria.md,
   "The children's difference"): the population variance, over the eras
   i < m with rows on both sides (nL > 0 and n - nL > 0), of the
   difference of the children's Newton values
   x_i = v(G_Li, H_Li) - v(G_i - G_Li, H_i - H_Li), v(G, H) = -G / (H + lam)
   (0 when H + lam == 0). From each era's left sums (gL, hL, nL) and
   totals (g, h, n); x and ok are scratch arrays of m entries. Two passes
   (the mean, then the squared deviations); 0 with fewer than two such
   eras. */
static double eb_difference_variance(
    const double *gL, const double *hL, const double *nL, const double *g,
    const double *h, const double *n, int m, double lam, double *x,
    signed char *ok)
{
    int i, k = 0;
    double mean = 0.0, acc = 0.0;
    for (i = 0; i < m; i++) {
        double dL = hL[i] + lam, dR = (h[i] - hL[i]) + lam;
        ok[i] = (nL[i] > 0.0) && (n[i] - nL[i] > 0.0);
        x[i] = 0.0;
        if (!ok[i])
            continue;
        x[i] = (dL == 0.0 ? 0.0 : -gL[i] / dL)
               - (dR == 0.0 ? 0.0 : -(g[i] - gL[i]) / dR);
        mean += x[i];
        k++;
    }
    if (k < 2)
        return 0.0;
    mean /= k;
    for (i = 0; i < m; i++) {
        if (ok[i]) {
            double d = x[i] - mean;
            acc += d * d;
        }
    }
    return acc / k;
}

/* The eligibility of irf_variance="difference": 1 when every era taking
   part (present[0 .. M-1], the node's splittable eras) keeps rows on
   both sides, from the scanned side's rows q and the eras' rows tn; 1
   with fewer than two eras taking part (the rule compares eras). */
static inline int eb_eras_on_both_sides(
    const double *q, const double *tn, const int32_t *present, int M)
{
    int i;
    if (M < 2)
        return 1;
    for (i = 0; i < M; i++) {
        int32_t e = present[i];
        if (!(q[e] > 0.0) || !(tn[e] - q[e] > 0.0))
            return 0;
    }
    return 1;
}

#endif  /* ERABOOST_CRITERIA_H */
