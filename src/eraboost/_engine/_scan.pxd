# The split scan's data (a scan, its candidates, the node's sums, the
# best split) and its C kernels (_scan.h), shared by the scan's modules
# (_splitting.pyx, _scan_eras.pyx), the scorer (_scorer.pxd) and the
# kernels' test wrappers in _criteria.pyx.
from ._common cimport block_t, BIN_t, G_t, uint8_t, uint32_t, int32_t, int64_t


cdef struct score_t:
    # a candidate's score
    bint found           # eligible
    int direction_count  # directional: |sum_e d_e|
    double gain          # pooled gain
    double criterion     # criterion score: gain, S_era, or S_era (directional)


cdef struct split_t:
    score_t sc
    int feature
    int bin              # numeric: left iff bin <= bin; categorical: the prefix
    uint8_t missing_left
    double GL
    double HL
    uint32_t nL
    uint8_t is_cat       # categorical split: the left bins are in cat_bitset
    uint32_t cat_bitset[8]


cdef struct node_sums_t:
    # what the scorer needs of the node
    unsigned int n_samples
    double G
    double H
    double loss_node     # G * value (scikit-learn's gain)
    double lower         # bounds of the node's values (monotonic constraints)
    double upper
    int E                # eras of the histogram (1 on the pooled path)
    int M                # eras taking part: E_node, the splittable eras
    const int32_t *present   # (M,) the eras taking part
    const signed char *is_present  # (E,) whether each era takes part
    int n_out            # eras with rows in the node that take no part
    int n_out_split      # those of them with two rows or more, out[0 ..]
    const int32_t *out   # (n_out,) those eras
    double ts_part       # sum of the scores ts over the eras taking part
    const double *tg     # (E,) per-era totals of g, h, rows, and their score
    const double *th     # (0 for the eras absent from the node)
    const double *tn
    const double *ts
    # the best criterion found so far over the node's features (shared by
    # the threads, load_best and raise_best): blocks of candidates bounded
    # below it are skipped (score_per_era, _scan_eras.pyx)
    double *shared_best
    # (E,) G_e / (H_e + 2 lam), 0 for 0 / 0: the bound of a block of
    # candidates (era_block_bound)
    const double *kk


cdef struct scan_t:
    # one feature's block and one order of its bins
    int feature
    block_t blk          # the block: nb bins of R cells (eras, then pooled)
    int64_t R
    int64_t pooled       # the pooled cell of bin 0 (cell of bin b: b * R + it)
    unsigned int nb
    unsigned int *seq    # seq[i]: the bin that joins the scanned side at step i
    int n_steps
    bint scanned_is_left
    bint label_is_step   # a candidate's label: its step (categorical), or
    unsigned int shift   # the bin it added minus ``shift`` (numeric)
    uint8_t missing_left
    signed char mono
    bint ties_to_later   # labels decrease along the scan (right to left)
    # a sparse histogram (``SparseHistogram``): the rows of bin b are the
    # entries start[b] .. start[b + 1] - 1; blk holds the pooled sums
    # (R = 1, pooled = 0)
    bint sparse
    const uint32_t *start
    const int32_t *e_era
    const G_t *e_g
    const G_t *e_h


cdef struct pooled_t:
    # a candidate and its pooled sums
    unsigned int label   # its bin, or its step (categorical)
    int step             # the last step on its scanned side
    uint32_t nL
    double GL
    double HL
    double GR
    double HR


cdef struct era_scratch_t:
    # per-era work arrays of one feature's scan
    double *pg           # (E,) scanned-side sums at the previous candidate
    double *ph
    double *pn
    double *qg           # (E,) scanned-side sums at the current candidate
    double *qh
    double *qn
    double *gains        # (E,) per-era gains of the current candidate
    double *gc           # (M,) the gains of the present eras
    double *lg           # (E,) left sums, when the scanned side is the right
    double *lh
    double *ln
    double *cr           # (E,) invariance penalty scratch
    signed char *ok
    signed char *dirs    # (E,) directions of the eras (sparse scan)
    int32_t *pos         # (E,) position of each era taking part (sparse scan)
    double *dmin         # (E,) each era's smallest and largest D over a
    double *dmax         # block of candidates (block_gather)
    double *ub           # (E,) each era's bound of its gains over the block
    double *n1           # (E,) the scanned side's rows and hessians at the
    double *h1           # block's first candidate
    # the bounds that failed in a row on this thread, and the blocks still
    # to score without trying one (try_bound, _scan_eras.pyx)
    int bound_misses
    int bound_wait
    int64_t bound_skips  # blocks skipped by their bound
    int64_t sums_scans   # scans scored by their gain sums (score_gain_sums)
    int64_t screened     # sparse candidates screened out (sum_below)


cdef struct era_view_t:
    # one candidate's per-era sums and gains, for the scorer
    const double *qg     # (E,) scanned-side sums
    const double *qh
    const double *qn
    # directional only: sum of the directions d_e of the eras taking part
    # (left against right)
    int dsum
    double gsum          # sum of the gains (alpha = 0 in one division)


cdef struct cat_info_t:
    BIN_t bin
    double value         # pooled g / (h + MIN_CAT_SUPPORT) of the category


cdef struct feature_scratch_t:
    pooled_t *cands      # (nb,) the candidates of a scan, in scan order
    int *steps           # (nb,) their steps (era_gain_sums)
    double *gsums        # (nb,) their eras' gain sums, and 4 nb doubles of
    double *acc          # work space (era_gain_sums)
    era_scratch_t era
    cat_info_t *cats     # (nb,) categories in order
    unsigned int *seq    # (nb,) scan order


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
