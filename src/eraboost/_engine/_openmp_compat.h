/* OpenMP's thread count, or one thread when the extension is built
   without OpenMP (the `openmp` meson option), so that _openmp.pyx compiles
   either way. */
#ifndef ERABOOST_OPENMP_COMPAT_H
#define ERABOOST_OPENMP_COMPAT_H

#ifdef _OPENMP
#include <omp.h>
#define EB_OPENMP_ENABLED 1
static inline int eb_omp_max_threads(void) { return omp_get_max_threads(); }
#else
#define EB_OPENMP_ENABLED 0
static inline int eb_omp_max_threads(void) { return 1; }
#endif

#endif
