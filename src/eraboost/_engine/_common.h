/* Passes over histogram cells shared by the engine's modules: prefetch
   hints, a block's subtraction, the four-lane sum and the pooled cells
   of a block. Declared to Cython in _common.pxd. */
#ifndef ERABOOST_COMMON_H
#define ERABOOST_COMMON_H

#include <stdint.h>
#include "_simd.h"

/* Ask for the cache line of p ahead of its read (a hint, never a
   fault) */
#define EB_PREFETCH(p) __builtin_prefetch((p), 0, 3)
/* the same for a line about to be written */
#define EB_PREFETCH_W(p) __builtin_prefetch((p), 1, 3)

/* parent -= sibling over n cells, compiled for AVX-512 and AVX2 as
   well (EB_MULTIVERSION, _simd.h): one subtraction each. */
EB_MULTIVERSION __attribute__((unused))
static void eb_sub_d(double *p, const double *s, int64_t n)
{
    int64_t i;
    for (i = 0; i < n; i++) p[i] = p[i] - s[i];
}
EB_MULTIVERSION __attribute__((unused))
static void eb_sub_u32(uint32_t *p, const uint32_t *s, int64_t n)
{
    int64_t i;
    for (i = 0; i < n; i++) p[i] = p[i] - s[i];
}

/* lane_sum (_common.pxd) of x[0 .. m-1]: element i in lane i mod 4, the
   lanes combined as (l0 + l1) + (l2 + l3); the lanes one SIMD value. */
static inline EB_ALWAYS_INLINE double eb_lane_sum(const double *x,
                                                  int64_t m)
{
    int64_t i = 0;
#if EB_VECTORS
    const eb_v4d zero = {0.0, 0.0, 0.0, 0.0};
    eb_v4d acc = zero;
    double l[4];
    for (; i + 4 <= m; i += 4) acc += eb_load4(x + i);
    eb_store4(l, acc);
#else
    double l[4] = {0.0, 0.0, 0.0, 0.0};
    for (; i + 4 <= m; i += 4) {
        l[0] += x[i]; l[1] += x[i + 1]; l[2] += x[i + 2]; l[3] += x[i + 3];
    }
#endif
    if (i < m) l[0] += x[i];
    if (i + 1 < m) l[1] += x[i + 1];
    if (i + 2 < m) l[2] += x[i + 2];
    return (l[0] + l[1]) + (l[2] + l[3]);
}

/* The pooled cells of a block of nb bins of R cells (the R - 1 eras',
   then the pooled cell): each bin's sums over its eras, the gradients
   and hessians as lane_sum adds them, the counts as integers. Compiled
   for AVX-512 and AVX2 as well (EB_MULTIVERSION): the same values. */
EB_MULTIVERSION __attribute__((unused))
static void eb_pool_eras(double *g, double *h, uint32_t *n,
                         unsigned int nb, int64_t R)
{
    unsigned int b;
    int64_t j, e, E = R - 1;
    uint32_t c;
    for (b = 0; b < nb; b++) {
        j = (int64_t)b * R;
        g[j + E] = eb_lane_sum(g + j, E);
        if (h != NULL) h[j + E] = eb_lane_sum(h + j, E);
        c = 0;
        for (e = 0; e < E; e++) c += n[j + e];
        n[j + E] = c;
    }
}

#endif  /* ERABOOST_COMMON_H */
