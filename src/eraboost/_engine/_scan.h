/* The split scan's kernels over a feature's per-era cells: the scanned
   side's per-era sums bin by bin, their gathering over a block of
   candidates with what its bound needs, the gain sums of all the
   candidates of a short scan in one pass, and the node's best so far
   shared by the threads. Declared to Cython in _scan.pxd. */
#ifndef ERABOOST_SCAN_H
#define ERABOOST_SCAN_H

#include <math.h>
#include <stdint.h>
#include "_simd.h"
#include "_criteria.h"
#include "_tuning.h"

/* A bin's per-era cells added to the scanned side's sums:
   q[i] = p[i] + b[i] (p may be q itself), or q[i] = b[i] when p is NULL;
   the row counts converted to double. Compiled for AVX-512 and AVX2 as
   well, chosen at run time (EB_MULTIVERSION, _simd.h): each
   element is one addition, the same in every version. */
EB_MULTIVERSION
static void eb_add_bin(double *q, const double *p, const double *b, int E)
{
    int i;
    if (p == NULL) {
        for (i = 0; i < E; i++) q[i] = b[i];
    } else {
        for (i = 0; i < E; i++) q[i] = p[i] + b[i];
    }
}

EB_MULTIVERSION
static void eb_add_counts(double *q, const double *p, const uint32_t *b,
                          int E)
{
    int i = 0;
#if EB_VECTORS
    /* four lanes a conversion (eb_counts4) */
    if (p == NULL) {
        for (; i + 4 <= E; i += 4) eb_store4(q + i, eb_counts4(b + i));
    } else {
        for (; i + 4 <= E; i += 4)
            eb_store4(q + i, eb_load4(p + i) + eb_counts4(b + i));
    }
#endif
    if (p == NULL) {
        for (; i < E; i++) q[i] = (double)(int32_t)b[i];
    } else {
        for (; i < E; i++) q[i] = p[i] + (double)(int32_t)b[i];
    }
}

/* The scanned side's per-era sums over a block of steps, and what
   eb_era_block_bound needs of them (eb_block_gather below), for era e
   alone or, with EB_VECTORS, the four eras from e. */
static inline EB_ALWAYS_INLINE void eb_gather_era(
    const double *g, const double *h, const uint32_t *n, int64_t R,
    const unsigned int *seq, int step, int first, int last,
    const double *pg, const double *ph, const double *pn, double *qg,
    double *qh, double *qn, const double *kk, double lam, double *dmin,
    double *dmax, double *n1, double *h1, int e)
{
    double xg = step == 0 ? 0.0 : pg[e], xn = step == 0 ? 0.0 : pn[e];
    double xh = step == 0 || h == NULL ? 0.0 : ph[e], d;
    double lo = INFINITY, hi = -INFINITY;
    int s;
    int64_t c;
    for (s = step; s <= last; s++) {
        c = (int64_t)seq[s] * R + e;
        xg += g[c];
        xn += (double)(int32_t)n[c];
        if (h != NULL) xh += h[c];
        if (s == first) {
            n1[e] = xn;
            h1[e] = h != NULL ? xh : xn;
        }
        if (s >= first) {
            d = xg - kk[e] * ((h != NULL ? xh : xn) + lam);
            lo = d < lo ? d : lo;
            hi = d > hi ? d : hi;
        }
    }
    qg[e] = xg;
    qn[e] = xn;
    if (h != NULL) qh[e] = xh;
    dmin[e] = lo;
    dmax[e] = hi;
}

#if EB_VECTORS
static inline EB_ALWAYS_INLINE void eb_gather_eras4(
    const double *g, const double *h, const uint32_t *n, int64_t R,
    const unsigned int *seq, int step, int first, int last,
    const double *pg, const double *ph, const double *pn, double *qg,
    double *qh, double *qn, const double *kk, double lam, double *dmin,
    double *dmax, double *n1, double *h1, int e, int with_h)
{
    const eb_v4d inf = {INFINITY, INFINITY, INFINITY, INFINITY};
    const eb_v4d zero = {0.0, 0.0, 0.0, 0.0};
    const eb_v4d vlam = {lam, lam, lam, lam};
    eb_v4d xg = step == 0 ? zero : eb_load4(pg + e);
    eb_v4d xn = step == 0 ? zero : eb_load4(pn + e);
    eb_v4d xh = step == 0 || !with_h ? zero : eb_load4(ph + e);
    eb_v4d vk = eb_load4(kk + e), lo = inf, hi = -inf, d;
    eb_v4l lt, gt;
    int s;
    int64_t c;
    for (s = step; s <= last; s++) {
        c = (int64_t)seq[s] * R + e;
        xg += eb_load4(g + c);
        xn += eb_counts4(n + c);
        if (with_h) xh += eb_load4(h + c);
        if (s == first) {
            eb_store4(n1 + e, xn);
            eb_store4(h1 + e, with_h ? xh : xn);
        }
        if (s >= first) {
            d = xg - vk * ((with_h ? xh : xn) + vlam);
            lt = (eb_v4l)(d < lo);
            gt = (eb_v4l)(d > hi);
            lo = eb_select4(lt, d, lo);
            hi = eb_select4(gt, d, hi);
        }
    }
    eb_store4(qg + e, xg);
    eb_store4(qn + e, xn);
    if (with_h) eb_store4(qh + e, xh);
    eb_store4(dmin + e, lo);
    eb_store4(dmax + e, hi);
}
#endif

/* The scanned side's per-era sums after step `last` into q (qg, qh, qn;
   qh unused when h is NULL: constant hessians, the counts): the sums
   after step `step - 1` (p; none when step is 0) plus the cells
   (g, h, n; bin b's cells of era e at b * R + e) of the bins seq[step]
   .. seq[last], added in scan order: the sums of eb_add_bin, bit for
   bit (a cell is never -0.0: 0.0 + a cell is the cell). For the
   candidates of steps `first` .. `last`, what eb_era_block_bound and
   eb_era_block_directions need: each era's smallest and largest
   D = G_L - kk (H_L + lam) (dmin, dmax) and its sums at step `first`
   (n1, h1). Four eras at a time stay in SIMD registers
   across the steps: each cell is read once. */
EB_MULTIVERSION
static void eb_block_gather(
    const double *g, const double *h, const uint32_t *n, int64_t R,
    const unsigned int *seq, int step, int first, int last,
    const double *pg, const double *ph, const double *pn, double *qg,
    double *qh, double *qn, const double *kk, double lam, double *dmin,
    double *dmax, double *n1, double *h1, int E, int n_steps)
{
    int e = 0, s, ahead = last + EB_BOUND_BLOCK < n_steps - 1
                          ? last + EB_BOUND_BLOCK : n_steps - 1;
    int64_t c, i;
#if defined(__GNUC__)
    /* the block's cells, a bin's eras contiguous, are read four eras at
       a time across the bins: ask for all their cache lines first, and
       for the next block's (EB_BOUND_BLOCK steps) */
    for (s = step; s <= ahead; s++) {
        c = (int64_t)seq[s] * R;
        for (i = 0; i < E; i += 8) {
            __builtin_prefetch(g + c + i, 0, 3);
            if (h != NULL) __builtin_prefetch(h + c + i, 0, 3);
        }
        for (i = 0; i < E; i += 16) __builtin_prefetch(n + c + i, 0, 3);
    }
#endif
#if EB_VECTORS
    if (h == NULL) {
        for (; e + 4 <= E; e += 4)
            eb_gather_eras4(g, h, n, R, seq, step, first, last, pg, ph,
                            pn, qg, qh, qn, kk, lam, dmin, dmax, n1, h1,
                            e, 0);
    } else {
        for (; e + 4 <= E; e += 4)
            eb_gather_eras4(g, h, n, R, seq, step, first, last, pg, ph,
                            pn, qg, qh, qn, kk, lam, dmin, dmax, n1, h1,
                            e, 1);
    }
#endif
    for (; e < E; e++)
        eb_gather_era(g, h, n, R, seq, step, first, last, pg, ph, pn, qg,
                      qh, qn, kk, lam, dmin, dmax, n1, h1, e);
}

/* The gains of era e's (scalar, any era) or of the eight eras from e
   (SIMD) at one candidate, from the scanned side's sums x (the left
   side) and the eras' totals, added to the candidate's four lanes acc:
   era i in lane i mod 4, in the order of the eras. */
static inline EB_ALWAYS_INLINE void eb_add_gain(
    double xg, double xh, double xn, const double *tg, const double *th,
    const double *tn, const double *ts, double lam, int e, double *acc,
    int counts)
{
    acc[e & 3] += eb_era_gain_of(xg, xh, xn, tg[e] - xg, th[e] - xh,
                                 tn[e] - xn, ts[e], lam, counts);
}

#if EB_VECTORS
static inline EB_ALWAYS_INLINE void eb_add_gains8(
    const double *xg, const double *xh, const double *xn,
    const double *tg, const double *th, const double *tn,
    const double *ts, double lam, int e, double *acc, int counts)
{
    double v[8];
    int j;
    for (j = 0; j < 8; j++)
        v[j] = eb_era_gain_of(xg[j], xh[j], xn[j], tg[e + j] - xg[j],
                              th[e + j] - xh[j], tn[e + j] - xn[j],
                              ts[e + j], lam, counts);
    eb_store4(acc, (eb_load4(acc) + eb_load4(v)) + eb_load4(v + 4));
}

/* The eight eras from e across the K candidates: their scanned-side
   sums in SIMD registers, with the hessian cells (with_h) or without
   (constant hessians: the counts). */
static inline EB_ALWAYS_INLINE void eb_gain_sums_eras8(
    const double *g, const double *h, const uint32_t *n, int64_t R,
    const unsigned int *seq, const int *steps, int K, const double *tg,
    const double *th, const double *tn, const double *ts, double lam,
    int e, double *EB_RESTRICT acc, int with_h, int counts)
{
    const eb_v4d zero = {0.0, 0.0, 0.0, 0.0};
    eb_v4d g0 = zero, g1 = zero, h0 = zero, h1 = zero, n0 = zero,
           n1 = zero;
    double xg[8], xh[8], xn[8];
    int k, s = 0;
    int64_t c;
    for (k = 0; k < K; k++) {
        for (; s <= steps[k]; s++) {
            c = (int64_t)seq[s] * R + e;
            g0 += eb_load4(g + c);
            g1 += eb_load4(g + c + 4);
            n0 += eb_counts4(n + c);
            n1 += eb_counts4(n + c + 4);
            if (with_h) {
                h0 += eb_load4(h + c);
                h1 += eb_load4(h + c + 4);
            }
        }
        eb_store4(xg, g0);
        eb_store4(xg + 4, g1);
        eb_store4(xn, n0);
        eb_store4(xn + 4, n1);
        eb_store4(xh, with_h ? h0 : n0);
        eb_store4(xh + 4, with_h ? h1 : n1);
        eb_add_gains8(xg, xh, xn, tg, th, tn, ts, lam, e, acc + 4 * k,
                      counts);
    }
}
#endif

/* Era e alone across the K candidates. */
static inline EB_ALWAYS_INLINE void eb_gain_sums_era(
    const double *g, const double *h, const uint32_t *n, int64_t R,
    const unsigned int *seq, const int *steps, int K, const double *tg,
    const double *th, const double *tn, const double *ts, double lam,
    int e, double *EB_RESTRICT acc, int counts)
{
    double xg = 0.0, xh = 0.0, xn = 0.0;
    int k, s = 0;
    int64_t c;
    for (k = 0; k < K; k++) {
        for (; s <= steps[k]; s++) {
            c = (int64_t)seq[s] * R + e;
            xg += g[c];
            xn += (double)(int32_t)n[c];
            if (h != NULL) xh += h[c];
        }
        eb_add_gain(xg, h != NULL ? xh : xn, xn, tg, th, tn, ts, lam, e,
                    acc + 4 * k, counts);
    }
}

/* The sums over the E eras of the per-era gains (eb_era_gain) of K
   candidates of one scan, candidate k's scanned side (playing the left
   side) holding the bins seq[0] .. seq[steps[k]] (steps increasing):
   eb_era_gains's sums bit for bit, with the scanned-side sums of
   _gather (the cells added in scan order; a cell is never -0.0) and
   era i summed in lane i mod 4, the lanes combined as
   (l0 + l1) + (l2 + l3). Eight eras at a time across all the
   candidates, their sums in registers: each cell is read once and no
   per-era array is written. acc: 4 K doubles of work space. `counts`:
   the hessian sums are the row counts (h is NULL) and lam = 0
   (eb_era_gain_of). */
EB_MULTIVERSION
static void eb_era_gain_sums(
    const double *g, const double *h, const uint32_t *n, int64_t R,
    const unsigned int *seq, const int *steps, int K, const double *tg,
    const double *th, const double *tn, const double *ts, double lam,
    int E, int counts, double *EB_RESTRICT acc, double *EB_RESTRICT gsum)
{
    int e = 0, k;
    for (k = 0; k < 4 * K; k++) acc[k] = 0.0;
#if EB_VECTORS
    for (; e + 8 <= E; e += 8) {
        if (counts && h == NULL)
            eb_gain_sums_eras8(g, h, n, R, seq, steps, K, tg, th, tn, ts,
                               lam, e, acc, 0, 1);
        else if (h == NULL)
            eb_gain_sums_eras8(g, h, n, R, seq, steps, K, tg, th, tn, ts,
                               lam, e, acc, 0, 0);
        else
            eb_gain_sums_eras8(g, h, n, R, seq, steps, K, tg, th, tn, ts,
                               lam, e, acc, 1, 0);
    }
#endif
    for (; e < E; e++)
        eb_gain_sums_era(g, h, n, R, seq, steps, K, tg, th, tn, ts, lam,
                         e, acc, counts);
    for (k = 0; k < K; k++)
        gsum[k] = (acc[4 * k] + acc[4 * k + 1])
                  + (acc[4 * k + 2] + acc[4 * k + 3]);
}

/* The best criterion found so far among a node's features, shared by
   the threads that scan them: read and raised atomically. Only a
   threshold below which blocks of candidates are skipped
   (score_per_era, _scan_eras.pyx): the split found never depends on when
   another thread raises it. */
static inline double eb_load_best(double *p)
{
    double v;
#if defined(__GNUC__)
    __atomic_load(p, &v, __ATOMIC_RELAXED);
#else
    #pragma omp critical(eb_best)
    v = *p;
#endif
    return v;
}

static inline void eb_raise_best(double *p, double v)
{
#if defined(__GNUC__)
    double cur;
    __atomic_load(p, &cur, __ATOMIC_RELAXED);
    while (v > cur && !__atomic_compare_exchange(
               p, &cur, &v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
#else
    #pragma omp critical(eb_best)
    {
        if (v > *p) *p = v;
    }
#endif
}

#endif  /* ERABOOST_SCAN_H */
