# The split scan's kernels (_scan.h), declared for the scan module and for
# their tests' wrappers in _criteria.pyx.
from ._common cimport uint32_t, int64_t

cdef extern from "_scan.h":
    void add_bin "eb_add_bin" (double *q, const double *p, const double *b,
                               int E) noexcept nogil
    void add_counts "eb_add_counts" (double *q, const double *p,
                                     const uint32_t *b, int E) noexcept nogil
    void era_gain_sums "eb_era_gain_sums" (
        const double *g, const double *h, const uint32_t *n, int64_t R,
        const unsigned int *seq, const int *steps, int K, const double *tg,
        const double *th, const double *tn, const double *ts, double lam,
        int E, int counts, double *acc, double *gsum) noexcept nogil
    double load_best "eb_load_best" (double *p) noexcept nogil
    void block_gather "eb_block_gather" (
        const double *g, const double *h, const uint32_t *n, int64_t R,
        const unsigned int *seq, int step, int first, int last,
        const double *pg, const double *ph, const double *pn, double *qg,
        double *qh, double *qn, const double *kk, double lam, double *dmin,
        double *dmax, double *n1, double *h1, int E, int n_steps) noexcept nogil
    void raise_best "eb_raise_best" (double *p, double v) noexcept nogil
