/* Compiler attributes shared by the extension modules' C helpers. */
#ifndef ERABOOST_SIMD_H
#define ERABOOST_SIMD_H

/* Always inline a small function, into each clone of its callers too. */
#if defined(__GNUC__)
#define EB_ALWAYS_INLINE __attribute__((always_inline))
#else
#define EB_ALWAYS_INLINE
#endif

/* A dense loop compiled for AVX-512 and AVX2 as well as the baseline, the
   version chosen at run time by the CPU (GCC on x86-64 Linux). No fused
   multiply-add (fp-contract=off) and no trapping math: every version
   computes the same values, bit for bit. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) \
    && defined(__linux__)
#define EB_MULTIVERSION __attribute__((target_clones( \
    "arch=x86-64-v4", "avx2", "default"), \
    optimize("no-trapping-math", "fp-contract=off")))
#else
#define EB_MULTIVERSION
#endif

/* A pointer through which alone its data are reached in the function (C99
   restrict), so that a loop of several arrays vectorises without alias
   checks. */
#if defined(_MSC_VER)
#define EB_RESTRICT __restrict
#else
#define EB_RESTRICT restrict
#endif

#include <float.h>
#include <stdint.h>

/* Four doubles as one SIMD value (GCC and Clang vector extensions; two SSE2
   registers in the baseline version of a multiversioned loop). */
#if defined(__GNUC__)
#define EB_VECTORS 1
typedef double eb_v4d __attribute__((vector_size(32)));
typedef long long eb_v4l __attribute__((vector_size(32)));
typedef int eb_v4i __attribute__((vector_size(16)));

static inline EB_ALWAYS_INLINE eb_v4d eb_load4(const double *p)
{
    eb_v4d v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}

static inline EB_ALWAYS_INLINE void eb_store4(double *p, eb_v4d v)
{
    __builtin_memcpy(p, &v, sizeof v);
}

/* Four row counts (cells of uint32, never above INT32_MAX) as doubles.
   Written lane by lane: GCC 12 makes one conversion of four lanes
   (vcvtdq2pd to a 256-bit register) of this, but two halves and two
   shuffles of __builtin_convertvector. */
static inline EB_ALWAYS_INLINE eb_v4d eb_counts4(const uint32_t *p)
{
    double t[4];
    eb_v4d v;
    int j;
    for (j = 0; j < 4; j++) t[j] = (double)(int32_t)p[j];
    __builtin_memcpy(&v, t, sizeof v);
    return v;
}

/* a where the lanes of mask m (a comparison's result) are set, else b:
   bits chosen, no arithmetic on either */
static inline EB_ALWAYS_INLINE eb_v4d eb_select4(eb_v4l m, eb_v4d a,
                                                 eb_v4d b)
{
    return (eb_v4d)((m & (eb_v4l)a) | (~m & (eb_v4l)b));
}
#else
#define EB_VECTORS 0
#endif

#endif
