"""Split finding on per-era histograms, and the partition of a node's rows.

One scan serves every feature (:meth:`Splitter._scan`): bins join the
scanned side of the split one by one in a given order, the pooled
constraints (min_samples_leaf, min hessian) pick the candidates, and one
scorer (:meth:`Splitter._score`) scores each candidate with the criteria of
``_criteria.pxd``. The orders are

* left to right (missing values go right);
* right to left (missing values go left), when the feature has missing
  values, as scikit-learn does;
* for a categorical feature, scikit-learn's order of the categories by their
  pooled ``g / (h + MIN_CAT_SUPPORT)``, from the start and from the end: each
  prefix goes left (about half of the categories at most), the categories
  left out of the order always go right.

The criteria (``SplitType`` in ``_common.pxd``):

* ORIGINAL: pooled gain, scikit-learn's formula;
* ERA: Boltzmann operator of the per-era gains, eligible when > 0;
* DIRECTIONAL: |sum_e d_e|, eligible when > 0 and the pooled gain > 0,
  ties broken by the era score, then the pooled gain;

minus the invariance penalty when ``irf_penalty > 0``; with
``min_samples_leaf_per_era``, a candidate leaving an era fewer rows on a
side is not eligible.

With one era, ORIGINAL and neither option, the candidates are scored on the
pooled histogram with scikit-learn's gain, in scikit-learn's order (the
right-to-left scan keeps the first best candidate it meets and must beat
the left-to-right one). Otherwise every present era's sums at each candidate
are gathered from the per-era rows, a chunk of candidates at a time, and
their gains computed in one dense loop (``era_gains``); candidates with the
same partition (empty bins in between) are one candidate labelled with the
lowest bin, and ties go to the first candidate of docs/criteria.md's order: lowest
feature (in the order of ``features``), left-to-right scan, lowest bin
(lowest prefix for categorical features, the prefixes from the start first).
"""
cimport cython
from cython.parallel import prange, threadid
import numpy as np

from ._common import SPLIT_TYPES
from libc.stdlib cimport malloc, free, calloc, qsort
from libc.string cimport memcpy
from libc.math cimport INFINITY, fabs

from ._common cimport (block_t, hist_block, block_subtract, cell_bytes, BIN_t, G_t,
                       uint8_t, uint32_t, int32_t, int64_t, in_bitset,
                       set_bitset, ORIGINAL, ERA, DIRECTIONAL, VALUE_VARIANCE,
                       RATE_SPREAD, SCAN_ONE_THREAD_BELOW, ROWS_PER_THREAD,
                       lane_sum, rows_per_bin, prefetch, PREFETCH_ROWS)
from ._criteria cimport (score, era_gain_of, era_gains, era_directions,
                         era_direction_of, era_block_bound,
                         era_block_directions, boltzmann,
                         value_variance, rate_spread)
from ._scan cimport (add_bin, add_counts, era_gain_sums, load_best,
                     block_gather, raise_best)
from ._common import era_options_set
from ._histogram import SparseHistogram


# The codes of the criteria by name are ``_common.SPLIT_TYPES``, the one
# table; the C enum ``SplitType`` (``_common.pxd``) must give them the same
# values.
if (SPLIT_TYPES["original"], SPLIT_TYPES["era"],
        SPLIT_TYPES["directional"]) != (ORIGINAL, ERA, DIRECTIONAL):
    raise ImportError("_common.SPLIT_TYPES and the enum SplitType disagree")
PENALTY_KINDS = {"value_variance": VALUE_VARIANCE, "rate_spread": RATE_SPREAD}


cdef enum Constraint:
    OK = 0
    CONTINUE = 1         # this side is still too small: next candidate
    BREAK = 2            # the other side is too small: no more candidates


# Categories need a hessian sum of at least MIN_CAT_SUPPORT (in units of
# rows) to take part in a categorical split, and their order is smoothed by
# it: scikit-learn's constant (LightGBM's cat_smooth).
cdef double MIN_CAT_SUPPORT = 10.0

# Pooled progress (docs/criteria.md): under the era criteria a candidate is
# eligible only when its pooled gain exceeds this share of its per-era
# children's score, sum_e score(G_Le, H_Le) + score(G_Re, H_Re) over the
# eras taking part (itself at most the node's sum of g^2 / h). Far above
# the rounding of the gain (about 1e-16 of that score), far below any split
# that changes the pooled values.
cdef double POOLED_PROGRESS_RTOL = 1e-9

# Under ``era`` (boltzmann_alpha <= 0) the per-era scans bound blocks of this
# many candidates at once (Splitter._score_per_era, docs/criteria.md): a
# bound costs about a third of its block's gains, and a block whose bound is
# below the best so far is skipped. After BOUND_MAX_MISSES failed bounds in
# a row a thread tries one every 2 ** BOUND_MAX_MISSES blocks. The margin,
# relative to the bound plus the eras' scores, is far above the rounding of
# the gains and their sum (about 1e-16 of those), far below the gaps
# between candidates that it skips.
cdef enum:
    BOUND_BLOCK = 8
    BOUND_MAX_MISSES = 6
# Scans of at most this many steps (features of up to 9 bins; one block of
# BOUND_BLOCK candidates) are scored by their candidates' gain sums alone
# where the criterion needs nothing else (Splitter._sums_only): all the
# candidates' sums in one pass over the cells, eight eras at a time, with no
# per-era array. That pass reads a bin's eight eras from as many cache lines
# as there are bins; with more bins, the scan candidate by candidate, which
# reads a bin's eras in a row, is faster (33 bins, 256 eras: 1.3x slower in
# one pass).
cdef enum:
    GAIN_SUMS_MAX_STEPS = 8
cdef double BOUND_RTOL = 1e-10
# four unit roundoffs (2 ** -53 each): Splitter._sum_below
cdef double SUM_RTOL = 4.0 * 1.1102230246251565e-16


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
    # below it are skipped (Splitter._score_per_era)
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


cdef struct sparse_t:
    # the arrays of a ``SparseHistogram``
    const int64_t *bin_offsets
    const int64_t *entry_base
    const uint32_t *start
    const double *pg
    const double *ph
    const uint32_t *pn
    const int32_t *era
    const G_t *g
    const G_t *h


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
    # to score without trying one (_score_per_era)
    int bound_misses
    int bound_wait
    int64_t bound_skips  # blocks skipped by their bound
    int64_t sums_scans   # scans scored by their gain sums (_score_gain_sums)
    int64_t screened     # sparse candidates screened out (_sum_below)


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


cdef bint scratch_alloc(feature_scratch_t *fs, unsigned int nb, int E,
                        bint per_era) noexcept nogil:
    """Work arrays for features of up to nb bins and E eras."""
    cdef size_t m = E if per_era else 0
    cdef era_scratch_t *era_scratch = &fs.era
    fs.cands = <pooled_t *> malloc(nb * sizeof(pooled_t))
    fs.cats = <cat_info_t *> malloc(nb * sizeof(cat_info_t))
    fs.seq = <unsigned int *> malloc(nb * sizeof(unsigned int))
    fs.steps = <int *> malloc(nb * sizeof(int))
    fs.gsums = <double *> malloc(5 * nb * sizeof(double))
    era_scratch.ok = <signed char *> malloc(2 * m + 1)
    era_scratch.pg = <double *> malloc((17 * m + 1) * sizeof(double))
    era_scratch.pos = <int32_t *> malloc((m + 1) * sizeof(int32_t))
    era_scratch.bound_misses = 0
    era_scratch.bound_wait = 0
    era_scratch.bound_skips = 0
    era_scratch.sums_scans = 0
    era_scratch.screened = 0
    if (fs.cands == NULL or fs.cats == NULL or fs.seq == NULL
            or fs.steps == NULL or fs.gsums == NULL or era_scratch.ok == NULL
            or era_scratch.pg == NULL or era_scratch.pos == NULL):
        scratch_free(fs)
        return False
    fs.acc = fs.gsums + nb
    era_scratch.ph = era_scratch.pg + m
    era_scratch.pn = era_scratch.pg + 2 * m
    era_scratch.qg = era_scratch.pg + 3 * m
    era_scratch.qh = era_scratch.pg + 4 * m
    era_scratch.qn = era_scratch.pg + 5 * m
    era_scratch.gains = era_scratch.pg + 6 * m
    era_scratch.lg = era_scratch.pg + 7 * m
    era_scratch.lh = era_scratch.pg + 8 * m
    era_scratch.ln = era_scratch.pg + 9 * m
    era_scratch.cr = era_scratch.pg + 10 * m
    era_scratch.gc = era_scratch.pg + 11 * m
    era_scratch.dmin = era_scratch.pg + 12 * m
    era_scratch.dmax = era_scratch.pg + 13 * m
    era_scratch.n1 = era_scratch.pg + 14 * m
    era_scratch.h1 = era_scratch.pg + 15 * m
    era_scratch.ub = era_scratch.pg + 16 * m
    era_scratch.dirs = era_scratch.ok + m
    return True


cdef void scratch_free(feature_scratch_t *fs) noexcept nogil:
    free(fs.cands)
    free(fs.cats)
    free(fs.seq)
    free(fs.steps)
    free(fs.gsums)
    free(fs.era.ok)
    free(fs.era.pg)
    free(fs.era.pos)
    fs.cands = NULL
    fs.cats = NULL
    fs.seq = NULL
    fs.steps = NULL
    fs.gsums = NULL
    fs.acc = NULL
    fs.era.ok = NULL
    fs.era.dirs = NULL
    fs.era.pg = NULL
    fs.era.pos = NULL


cdef struct feature_rank_t:
    int64_t wins         # nodes whose split was on the feature
    int32_t k            # its position in ``features``


cdef int cmp_feature_rank(const void *a, const void *b) noexcept nogil:
    """More wins first, then the order of ``features``."""
    cdef const feature_rank_t *x = <const feature_rank_t *> a
    cdef const feature_rank_t *y = <const feature_rank_t *> b
    if x.wins != y.wins:
        return -1 if x.wins > y.wins else 1
    return -1 if x.k < y.k else (1 if x.k > y.k else 0)


cdef inline void swap_sums(double **pg, double **ph, double **pn, double **qg,
                           double **qh, double **qn) noexcept nogil:
    """The scanned side's sums at the current candidate (q) become the
    previous ones (p), and p's arrays q's scratch."""
    cdef double *t = pg[0]
    pg[0] = qg[0]
    qg[0] = t
    t = ph[0]
    ph[0] = qh[0]
    qh[0] = t
    t = pn[0]
    pn[0] = qn[0]
    qn[0] = t


cdef int cmp_cat_info(const void *a, const void *b) noexcept nogil:
    """Increasing value. Never 0, as scikit-learn's comparator: with the same
    libc qsort, equal values end up in the same order as in scikit-learn."""
    if (<const cat_info_t *>a).value < (<const cat_info_t *>b).value:
        return -1
    return 1


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


class SplitInfo:
    """The best split of a node and the sums of its children."""
    __slots__ = ("found", "gain", "criterion", "direction_count", "n_eras",
                 "feature_idx", "bin_idx", "missing_go_to_left", "sum_gradient_left",
                 "sum_hessian_left", "sum_gradient_right", "sum_hessian_right",
                 "n_samples_left", "n_samples_right", "value_left", "value_right",
                 "priority", "is_categorical", "left_cat_bitset")

    def __repr__(self):
        return (
            f"SplitInfo(feature={self.feature_idx}, bin={self.bin_idx}, "
            f"missing_left={self.missing_go_to_left}, gain={self.gain:.6g}, "
            f"criterion={self.criterion:.6g}, direction_count={self.direction_count})"
        )


@cython.final
cdef class SplitNode:
    """What :meth:`Splitter.find_node_splits` needs of one node.

    Parameters
    ----------
    n_samples : int
    histogram : ndarray of uint8
        The node's histograms (``HistogramBuilder``'s buffer).
    sum_gradients, sum_hessians : float
    value : float
        The node's value (scikit-learn's gain: ``sum_gradients * value``).
    lower_bound, upper_bound : float
        Bounds of the children's values (monotonic constraints).
    sampled : ndarray of uint8 (n_features,)
        Whether each of the features is considered.
    """
    cdef readonly unsigned int n_samples
    cdef readonly object histogram
    cdef readonly double sum_gradients
    cdef readonly double sum_hessians
    cdef readonly double value
    cdef readonly double lower_bound
    cdef readonly double upper_bound
    cdef readonly object sampled

    def __init__(self, unsigned int n_samples, histogram, double sum_gradients,
                 double sum_hessians, double value, double lower_bound,
                 double upper_bound, sampled):
        self.n_samples = n_samples
        self.histogram = histogram
        self.sum_gradients = sum_gradients
        self.sum_hessians = sum_hessians
        self.value = value
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.sampled = sampled

    def __repr__(self):
        return (f"SplitNode(n_samples={self.n_samples}, "
                f"sum_gradients={self.sum_gradients:.6g}, "
                f"sum_hessians={self.sum_hessians:.6g}, value={self.value:.6g}, "
                f"bounds=({self.lower_bound:.6g}, {self.upper_bound:.6g}))")


@cython.final
cdef class Splitter:
    """Finds the best split of a node from its per-era histograms.

    Parameters
    ----------
    n_bins : ndarray of uint32 (n_features,)
        Bins per feature including the missing-value bin (the last one).
    offsets : ndarray of int64 (n_features + 1,)
        Histogram layout, see ``_histogram.histogram_layout``: each block
        has the ``n_bins`` bins, or all but the missing-value bin for a
        feature without missing values (never read then).
    n_eras : int
        Eras kept apart in the histograms.
    has_missing_values : ndarray of uint8 (n_features,)
    monotonic_cst : ndarray of int8 (n_features,)
    split_type : int
        A code of ``_common.SPLIT_TYPES``: 0 original, 1 era, 2 directional.
    alpha : float
        Boltzmann alpha.
    l2_regularization, min_hessian_to_split : float
    min_samples_leaf : int
    hessians_are_constant : bool
    n_threads : int
    is_categorical : ndarray of uint8 (n_features,) or None
        Categorical features (their bins are categories).
    irf_penalty : float, default=0
        Weight of the invariance penalty (docs/criteria.md); 0 is off.
    min_samples_leaf_per_era : int, default=0
        Rows every era of the node keeps on each side; 0 is off.
    penalty_kind : int, default=0
        A code of ``PENALTY_KINDS``. 0: ``value_variance``, the penalty
        ``H_node * Var_e CR_e``. 1: the IRF paper's classification penalty
        ``H_node / 2 * (max_e I_e / min_e I_e - 1)`` (``rate_spread`` in
        ``_criteria.pxd``), for gradients ``-w * y`` of a 0/1 target and
        hessians ``w``, where the pooled gain is ``H_node / 2`` times the
        decrease of weighted Gini impurity.

    With a single era, ``split_type=0`` and neither option, candidates are
    scored on the pooled histogram by scikit-learn's gain; otherwise from the
    per-era histograms.
    """
    cdef const uint32_t[::1] n_bins
    cdef const int64_t[::1] offsets
    cdef int n_eras
    cdef const uint8_t[::1] has_missing
    cdef const signed char[::1] monotonic_cst
    cdef public int split_type
    cdef double alpha
    cdef double lam
    cdef double min_hessian
    cdef unsigned int min_samples_leaf
    cdef bint const_h
    cdef int n_threads
    cdef double irf_penalty
    cdef unsigned int min_per_era
    cdef int penalty_kind
    cdef readonly bint per_era  # score from the per-era histograms
    # skip blocks of candidates by their bound (_bounded); off only to test
    # that the splits are the same without
    cdef public bint bound_blocks
    # score the candidates of a scan by their eras' gain sums alone, all at
    # once, where the criterion needs nothing else (_sums_only); off only to
    # test that the splits are the same without
    cdef public bint gain_sums
    # the nodes split on each feature so far: the scans under bounds take
    # the features that won most first (find_node_splits)
    cdef int64_t[::1] wins
    cdef unsigned int max_nb  # the most bins of a feature
    cdef const uint8_t[::1] is_categorical
    # per-thread work arrays, for features of up to max_nb bins and the
    # eras scored (n_eras on the per-era path): one per thread
    cdef feature_scratch_t *scratch
    cdef int n_scratch
    cdef bint busy           # a call of find_node_splits uses the scratch

    def __cinit__(self):
        self.scratch = NULL
        self.n_scratch = 0
        self.busy = False

    def __dealloc__(self):
        self._free_scratch()

    cdef void _free_scratch(self) noexcept:
        cdef int t
        if self.scratch != NULL:
            for t in range(self.n_scratch):
                scratch_free(&self.scratch[t])
            free(self.scratch)
        self.scratch = NULL
        self.n_scratch = 0

    cdef void _alloc_scratch(self, int n) except *:
        """Work arrays for n threads; MemoryError when they cannot be had."""
        cdef int t
        cdef int E = self.n_eras if self.per_era else 1
        self._free_scratch()
        self.scratch = <feature_scratch_t *> calloc(n, sizeof(feature_scratch_t))
        if self.scratch == NULL:
            raise MemoryError()
        self.n_scratch = n
        for t in range(n):
            if not scratch_alloc(&self.scratch[t], self.max_nb, E, self.per_era):
                self._free_scratch()
                raise MemoryError()

    def __init__(self, n_bins, offsets, int n_eras, has_missing_values,
                 monotonic_cst, int split_type, double alpha,
                 double l2_regularization, double min_hessian_to_split,
                 unsigned int min_samples_leaf, bint hessians_are_constant,
                 int n_threads, is_categorical=None, double irf_penalty=0.0,
                 unsigned int min_samples_leaf_per_era=0, int penalty_kind=0):
        if split_type not in SPLIT_TYPES.values():
            raise ValueError(f"split_type must be one of "
                             f"{sorted(SPLIT_TYPES.values())}, got {split_type}")
        if penalty_kind not in PENALTY_KINDS.values():
            raise ValueError(f"penalty_kind must be one of "
                             f"{sorted(PENALTY_KINDS.values())}, got {penalty_kind}")
        self.n_bins = n_bins
        self.max_nb = max(n_bins) if len(n_bins) else 1
        self.offsets = offsets
        self.n_eras = n_eras
        self.has_missing = has_missing_values
        self.monotonic_cst = monotonic_cst
        self.split_type = split_type
        self.alpha = alpha
        self.lam = l2_regularization
        self.min_hessian = min_hessian_to_split
        self.min_samples_leaf = min_samples_leaf
        self.const_h = hessians_are_constant
        self.n_threads = n_threads
        self.irf_penalty = irf_penalty
        self.min_per_era = min_samples_leaf_per_era
        self.penalty_kind = penalty_kind
        self.bound_blocks = True
        self.gain_sums = True
        self.wins = np.zeros(len(n_bins), dtype=np.int64)
        self.per_era = n_eras > 1 and bool(era_options_set(
            split_type, irf_penalty, min_samples_leaf_per_era))
        if is_categorical is None:
            is_categorical = np.zeros(len(n_bins), dtype=np.uint8)
        self.is_categorical = np.ascontiguousarray(is_categorical, dtype=np.uint8)
        self._alloc_scratch(max(n_threads, 1))

    @property
    def blocks_skipped(self):
        """The blocks of candidates that the scans skipped by their bound
        (docs/criteria.md, "A bound over a block of candidates") since
        the splitter was made: what the bound saved."""
        cdef int t
        cdef int64_t n = 0
        for t in range(self.n_scratch):
            n += self.scratch[t].era.bound_skips
        return n

    @property
    def scans_by_gain_sums(self):
        """The scans scored by their candidates' gain sums alone, all at
        once (``_score_gain_sums``), since the splitter was made."""
        cdef int t
        cdef int64_t n = 0
        for t in range(self.n_scratch):
            n += self.scratch[t].era.sums_scans
        return n

    @property
    def candidates_screened(self):
        """The candidates of sparse scans that the running sum of their
        gains screened out (``_score_per_era_sparse``) since the splitter
        was made."""
        cdef int t
        cdef int64_t n = 0
        for t in range(self.n_scratch):
            n += self.scratch[t].era.screened
        return n

    def find_node_split(self, unsigned int n_samples, histogram,
                        double sum_gradients, double sum_hessians, double value,
                        double lower_bound, double upper_bound,
                        const uint32_t[::1] features not None, sampled):
        """Best split over ``features`` (those with ``sampled[k]`` set) of
        one node, given as the fields of :class:`SplitNode`.

        Returns a :class:`SplitInfo`; ``found`` is False when no candidate is
        eligible.
        """
        return self.find_node_splits(
            [SplitNode(n_samples, histogram, sum_gradients, sum_hessians, value,
                       lower_bound, upper_bound, sampled)], features)[0]

    def find_node_splits(self, nodes, const uint32_t[::1] features not None,
                         subtract=None):
        """Best splits of several nodes over the same ``features``, in one
        parallel loop (each parallel region wakes the threads).

        Parameters
        ----------
        nodes : list of :class:`SplitNode`
        features : ndarray of uint32
        subtract : tuple (j, sibling) or None
            Node ``j``'s ``histogram`` holds its parent's histogram: the
            ``sibling``'s (the other child's) is subtracted from it, feature
            by feature over all ``features``, before that feature is scanned
            (``HistogramBuilder.compute_subtraction`` in the same loop).

        Returns
        -------
        infos : list of :class:`SplitInfo`, one per node.

        One call at a time: the calls share the splitter's per-thread work
        arrays.
        """
        cdef int n_nodes = len(nodes), n_feat = features.shape[0]
        cdef int64_t need = (self.offsets[self.offsets.shape[0] - 1]
                             * cell_bytes(self.const_h))
        cdef int sub_j = -1, j, k, t, nt, n_tasks = n_nodes * n_feat
        cdef bint paired
        cdef const uint8_t[::1] hist
        cdef const uint8_t[::1] samp
        cdef const uint8_t[::1] sibling
        cdef const uint8_t *sib = NULL
        cdef SplitNode node
        views = []
        for node in nodes:
            if node.histogram is None or node.sampled is None:
                raise TypeError("a node's histogram and sampled flags are needed")
            samp = node.sampled
            if samp.shape[0] != n_feat:
                raise ValueError(f"{samp.shape[0]} sampled flags for "
                                 f"{n_feat} features")
            if isinstance(node.histogram, SparseHistogram):
                # checked and read once the work arrays are allocated
                views.append((None, samp, node.histogram))
                continue
            hist = node.histogram
            if hist.shape[0] < need:
                raise ValueError(f"histogram buffer of {hist.shape[0]} bytes, "
                                 f"{need} needed")
            views.append((hist, samp, None))
        cdef uint8_t[::1] _writable
        if subtract is not None:
            sub_j = subtract[0]
            if not 0 <= sub_j < n_nodes:
                raise ValueError(f"subtract: no node {sub_j}")
            if views[sub_j][0] is None:
                raise ValueError("subtract: a sparse histogram cannot be "
                                 "subtracted from")
            _writable = (<SplitNode> nodes[sub_j]).histogram  # must be writable
            sibling = subtract[1]
            if sibling is None or sibling.shape[0] < need:
                raise ValueError("subtract needs the sibling's whole histogram")
            sib = &sibling[0]
        if self.busy:
            raise RuntimeError("this Splitter is already finding splits (one "
                               "call at a time: its work arrays are shared)")
        cdef int E = self.n_eras if self.per_era else 1
        cdef int best
        cdef int n_alloc = max(n_nodes, 1)
        cdef node_sums_t *node_sums = <node_sums_t *> calloc(
            n_alloc, sizeof(node_sums_t))
        cdef const uint8_t **hists = <const uint8_t **> calloc(
            n_alloc, sizeof(uint8_t *))
        cdef const uint8_t **samps = <const uint8_t **> calloc(
            n_alloc, sizeof(uint8_t *))
        # the nodes' sparse histograms (is_sparse[j])
        cdef sparse_t *sparses = <sparse_t *> calloc(n_alloc, sizeof(sparse_t))
        cdef char *is_sparse = <char *> calloc(n_alloc, 1)
        cdef split_t *infos = <split_t *> calloc(max(n_tasks, 1), sizeof(split_t))
        cdef int32_t *present = <int32_t *> malloc(
            n_alloc * 2 * E * sizeof(int32_t))
        cdef signed char *is_present = <signed char *> calloc(n_alloc * E, 1)
        # per-era totals of each node: g, h, rows, score, kk
        cdef double *tot = <double *> calloc(n_alloc * 5 * E, sizeof(double))
        # the best criterion found so far for each node (_block_bound)
        cdef double *shared = <double *> malloc(n_alloc * sizeof(double))
        # the order in which the features are scanned (_scan_order)
        cdef feature_rank_t *order = <feature_rank_t *> malloc(
            max(n_feat, 1) * sizeof(feature_rank_t))
        self.busy = True
        try:
            if (node_sums == NULL or hists == NULL or samps == NULL
                    or infos == NULL or present == NULL or is_present == NULL
                    or tot == NULL or sparses == NULL or is_sparse == NULL
                    or shared == NULL or order == NULL):
                raise MemoryError()
            for j in range(n_nodes):
                dense, samp, sparse_hist = views[j]
                if dense is None:
                    is_sparse[j] = 1
                    self._read_sparse(sparse_hist, features, &sparses[j])
                else:
                    hist = dense
                    hists[j] = &hist[0]
                samps[j] = &samp[0]
                node = nodes[j]
                node_sums[j].n_samples = node.n_samples
                node_sums[j].G = node.sum_gradients
                node_sums[j].H = node.sum_hessians
                node_sums[j].loss_node = node.sum_gradients * node.value
                node_sums[j].lower = node.lower_bound
                node_sums[j].upper = node.upper_bound
                shared[j] = -INFINITY
                node_sums[j].shared_best = &shared[j]
            self._scan_order(features, order)
            with nogil:
                for j in range(n_nodes):
                    if j == sub_j and n_feat > 0:
                        # the first feature first: the node's totals
                        block_subtract(<uint8_t *> hists[j], sib,
                                       &self.offsets[0], features[0], self.const_h)
                    self._node_totals(hists[j],
                                      &sparses[j] if is_sparse[j] else NULL,
                                      features, E, &node_sums[j],
                                      present + 2 * E * j, is_present + E * j,
                                      tot + 5 * E * j)
                nt = (self.n_threads
                      if (self.offsets[self.offsets.shape[0] - 1]
                          >= SCAN_ONE_THREAD_BELOW)
                      else 1)
                # one work array per thread, allocated with the splitter
                nt = max(1, min(nt, self.n_scratch))
                # with a subtraction from the sibling of a node also scanned
                # here, a task is a feature of both: the sibling's block is
                # subtracted, and scanned, while it is in cache (read once,
                # not once more for its own task)
                paired = n_nodes == 2 and sub_j >= 0
                for t in prange(n_feat if paired else n_tasks,
                                schedule='dynamic', num_threads=nt):
                    if paired:
                        k = order[t].k
                        if k > 0:
                            block_subtract(<uint8_t *> hists[sub_j], sib,
                                           &self.offsets[0], features[k],
                                           self.const_h)
                        for j in range(2):
                            self._scan_task(j, k, features, hists, samps,
                                            sparses, is_sparse, node_sums,
                                            infos, n_feat,
                                            &self.scratch[threadid()])
                    else:
                        j = t // n_feat
                        k = order[t - j * n_feat].k
                        if j == sub_j and k > 0:
                            block_subtract(<uint8_t *> hists[j], sib,
                                           &self.offsets[0], features[k],
                                           self.const_h)
                        self._scan_task(j, k, features, hists, samps, sparses,
                                        is_sparse, node_sums, infos, n_feat,
                                        &self.scratch[threadid()])
            out = []
            for j in range(n_nodes):
                best = j * n_feat
                for t in range(j * n_feat + 1, (j + 1) * n_feat):
                    if better(&infos[t].sc, &infos[best].sc, self.split_type):
                        best = t
                if infos[best].sc.found:
                    self.wins[infos[best].feature] += 1
                out.append(self._make_info(&infos[best], &node_sums[j]))
            return out
        finally:
            self.busy = False
            free(node_sums)
            free(hists)
            free(samps)
            free(sparses)
            free(is_sparse)
            free(infos)
            free(present)
            free(is_present)
            free(tot)
            free(shared)
            free(order)

    cdef inline void _scan_task(self, int j, int k,
                                const uint32_t[::1] features,
                                const uint8_t **hists, const uint8_t **samps,
                                sparse_t *sparses, const char *is_sparse,
                                node_sums_t *node_sums, split_t *infos,
                                int n_feat,
                                feature_scratch_t *fs) noexcept nogil:
        """Node j's best split on its k-th listed feature into
        ``infos[j * n_feat + k]`` (not found when the feature is not
        sampled), with the work arrays ``fs`` (the thread's)."""
        cdef int i = j * n_feat + k
        infos[i].sc.found = 0
        infos[i].feature = features[k]
        if samps[j][k]:
            self._scan_feature(features[k], hists[j],
                               &sparses[j] if is_sparse[j] else NULL,
                               &node_sums[j], fs, &infos[i])

    cdef void _scan_order(self, const uint32_t[::1] features,
                          feature_rank_t *order) noexcept:
        """The order in which a node's features are scanned: under bounds
        (:meth:`_bounded`), the features that won most nodes so far first,
        so that the best so far (``node.shared_best``) is high early and
        bounds skip more of the others; otherwise the order of
        ``features``. The split found is the same in any order: the best is
        taken over the features in the order of ``features``."""
        cdef int k, n_feat = features.shape[0]
        for k in range(n_feat):
            order[k].k = k
            order[k].wins = self.wins[features[k]] if self._bounded() else 0
        if self._bounded() and n_feat > 1:
            qsort(order, n_feat, sizeof(feature_rank_t), cmp_feature_rank)

    cdef int _read_sparse(self, hist, const uint32_t[::1] features,
                          sparse_t *sp) except -1:
        """The arrays of a node's ``SparseHistogram`` into ``sp``, checked
        against this splitter's bins and eras and the features to scan
        (the histogram, held by its node, keeps them alive)."""
        if not self.per_era:
            raise ValueError("sparse histograms serve the per-era path only")
        cdef const int64_t[::1] bin_offsets = hist.bin_offsets
        cdef const int64_t[::1] entry_base = hist.entry_base
        cdef Py_ssize_t p = self.n_bins.shape[0], m, i, f, j
        cdef int64_t n_rows = hist.n_rows
        cdef int64_t cells, width
        if (bin_offsets.shape[0] != p + 1 or entry_base.shape[0] != p
                or bin_offsets[0] != 0):
            raise ValueError("sparse histogram of another layout")
        for i in range(p):
            # the block's bins and one: the missing-value bin may be left
            # out without missing values (engine.build_engine)
            width = bin_offsets[i + 1] - bin_offsets[i]
            if not (self.n_bins[i] + self.has_missing[i] <= width
                    <= self.n_bins[i] + 1):
                raise ValueError("sparse histogram of another layout")
        cells = bin_offsets[p]
        arrays = (hist.start, hist.pooled_g, hist.pooled_h, hist.pooled_n,
                  hist.era, hist.g, hist.h)
        cdef const uint32_t[::1] start = arrays[0]
        cdef const double[::1] pg = arrays[1]
        cdef const double[::1] ph = arrays[2]
        cdef const uint32_t[::1] pn = arrays[3]
        cdef const int32_t[::1] era = arrays[4]
        cdef const G_t[::1] g = arrays[5]
        cdef const G_t[::1] h = arrays[6]
        cdef uint32_t b
        m = era.shape[0]
        if (start.shape[0] < cells or pg.shape[0] < cells or pn.shape[0] < cells
                or (not self.const_h and ph.shape[0] < cells)
                or g.shape[0] < m or (not self.const_h and h.shape[0] < m)):
            raise ValueError("sparse histogram arrays too short")
        for i in range(features.shape[0]):
            f = features[i]
            if entry_base[f] < 0 or entry_base[f] + n_rows > m:
                raise ValueError(f"sparse histogram without feature {f}")
            # the bins' rows in order, within the feature's n_rows entries
            if start[bin_offsets[f]] != 0:
                raise ValueError("sparse histogram of another layout")
            for b in range(bin_offsets[f], bin_offsets[f + 1] - 1):
                if start[b + 1] < start[b]:
                    raise ValueError("sparse histogram of another layout")
            if start[bin_offsets[f + 1] - 1] > n_rows:
                raise ValueError("sparse histogram of another layout")
            for j in range(entry_base[f], entry_base[f] + n_rows):
                if not 0 <= era[j] < self.n_eras:
                    raise ValueError(f"sparse histogram with era {era[j]}")
        sp.bin_offsets = &bin_offsets[0]
        sp.entry_base = &entry_base[0]
        sp.start = &start[0]
        sp.pg = &pg[0]
        sp.ph = &ph[0]
        sp.pn = &pn[0]
        sp.era = &era[0]
        sp.g = &g[0]
        sp.h = &h[0]
        return 0

    cdef void _node_totals(self, const uint8_t *hist, const sparse_t *sp,
                           const uint32_t[::1] features, int E,
                           node_sums_t *node, int32_t *present,
                           signed char *is_present,
                           double *tot) noexcept nogil:
        """The node's per-era totals and the eras taking part, into ``node``
        (``present``: 2 E entries, ``is_present``: E, ``tot``: 5 E, zeros).

        Every feature's histogram holds the same rows: the totals are the
        first feature's bins, in order. E_node: the eras with enough rows to
        be split; the others take no part, as the eras absent from the node;
        then the single-row eras (no gain, no direction)."""
        cdef int M = 0, n_out = 0, n_out_split = 0, e, f0
        cdef double ts_part = 0.0, d
        # an era with fewer rows in the node cannot be split there
        cdef double splittable = 2.0 * max(1, self.min_per_era)
        cdef block_t blk
        cdef int64_t cell, R = rows_per_bin(self.n_eras), base, i0
        cdef unsigned int b, block_bins
        cdef uint32_t j
        if self.per_era and features.shape[0] > 0:
            f0 = features[0]
            # the block's bins: no missing-value bin without missing values
            # (engine.build_engine)
            block_bins = self.n_bins[f0] - 1 + self.has_missing[f0]
            if sp != NULL:
                # the rows of the first feature, bin by bin
                base = sp.entry_base[f0]
                i0 = sp.bin_offsets[f0]
                for b in range(block_bins):
                    for j in range(sp.start[i0 + b], sp.start[i0 + b + 1]):
                        e = sp.era[base + j]
                        tot[e] += sp.g[base + j]
                        tot[E + e] += 1.0 if self.const_h else sp.h[base + j]
                        tot[2 * E + e] += 1.0
            else:
                blk = hist_block(hist, &self.offsets[0], f0, self.const_h)
                for b in range(block_bins):
                    for e in range(E):
                        cell = b * R + e
                        tot[e] += blk.g[cell]
                        tot[E + e] += (<double>blk.n[cell] if self.const_h
                                       else blk.h[cell])
                        tot[2 * E + e] += blk.n[cell]
            for e in range(E):
                tot[3 * E + e] = score(tot[e], tot[E + e], self.lam)
                d = tot[E + e] + 2.0 * self.lam
                tot[4 * E + e] = tot[e] / d if d != 0.0 else 0.0
                if tot[2 * E + e] >= splittable:
                    is_present[e] = 1
                    present[M] = e
                    M = M + 1
                    ts_part += tot[3 * E + e]
                elif tot[2 * E + e] >= 2:
                    present[E + n_out] = e
                    n_out = n_out + 1
            n_out_split = n_out
            for e in range(E):
                if tot[2 * E + e] == 1:
                    present[E + n_out] = e
                    n_out = n_out + 1
        else:
            present[0] = 0
            is_present[0] = 1
            M = 1
        node.E = E
        node.M = M
        node.present = present
        node.is_present = is_present
        node.n_out = n_out
        node.n_out_split = n_out_split
        node.out = present + E
        node.ts_part = ts_part
        node.tg = tot
        node.th = tot + E
        node.tn = tot + 2 * E
        node.ts = tot + 3 * E
        node.kk = tot + 4 * E

    cdef object _make_info(self, const split_t *s, const node_sums_t *node):
        cdef double G = node.G, H = node.H, lower = node.lower, upper = node.upper
        cdef int M = node.M
        info = SplitInfo()
        info.found = bool(s.sc.found)
        info.is_categorical = bool(s.sc.found and s.is_cat)
        info.left_cat_bitset = None
        if info.is_categorical:
            info.left_cat_bitset = np.array(
                [s.cat_bitset[i] for i in range(8)], dtype=np.uint32)
        info.n_eras = M
        info.feature_idx = s.feature
        info.bin_idx = s.bin
        info.missing_go_to_left = bool(s.missing_left)
        info.gain = s.sc.gain if s.sc.found else -1.0
        info.criterion = s.sc.criterion if s.sc.found else -1.0
        info.direction_count = s.sc.direction_count
        info.sum_gradient_left = s.GL
        info.sum_hessian_left = s.HL
        info.sum_gradient_right = G - s.GL
        info.sum_hessian_right = H - s.HL
        info.n_samples_left = s.nL
        info.n_samples_right = node.n_samples - s.nL
        info.value_left = node_value(s.GL, s.HL, lower, upper, self.lam)
        info.value_right = node_value(G - s.GL, H - s.HL, lower, upper, self.lam)
        if self.split_type != DIRECTIONAL:
            info.priority = (info.criterion, 0.0)
        else:
            info.priority = (s.sc.direction_count / <double>M if M else 0.0,
                             info.criterion)
        return info

    cdef void _scan_feature(self, int f, const uint8_t *hist, const sparse_t *sp,
                            const node_sums_t *node, feature_scratch_t *fs,
                            split_t *out) noexcept nogil:
        """The best split of feature f: both numeric scans, or the two
        categorical ones. From the dense histogram ``hist``, or the sparse
        one ``sp`` when not NULL."""
        cdef unsigned int nb = self.n_bins[f]
        cdef unsigned int n_bins_non_missing = nb - 1
        cdef bint miss = self.has_missing[f]
        cdef int i
        cdef int64_t i0, base
        cdef split_t best_rl
        cdef scan_t s
        out.sc.found = 0
        out.is_cat = 0
        out.feature = f
        best_rl.sc.found = 0
        if n_bins_non_missing < 1 or (node.M < 1 and self.split_type != ORIGINAL):
            return
        s.feature = f
        s.nb = nb
        s.seq = fs.seq
        s.sparse = sp != NULL
        if s.sparse:
            # the pooled sums of the bins, one cell each, and the lists of
            # their per-era cells
            i0 = sp.bin_offsets[f]
            base = sp.entry_base[f]
            s.blk.g = sp.pg + i0
            s.blk.h = sp.ph + i0 if not self.const_h else NULL
            s.blk.n = sp.pn + i0
            s.R = 1
            s.pooled = 0
            s.start = sp.start + i0
            s.e_era = sp.era + base
            s.e_g = sp.g + base
            s.e_h = sp.h + base if not self.const_h else NULL
        else:
            s.blk = hist_block(hist, &self.offsets[0], f, self.const_h)
            # the block's pooled cells (see _histogram.pyx)
            s.R = rows_per_bin(self.n_eras)
            s.pooled = s.R - 1
        if self.is_categorical[f]:
            self._scan_categorical(&s, fs, node, miss, out)
        else:
            s.mono = self.monotonic_cst[f]
            s.label_is_step = False
            # left to right: missing values go right
            s.n_steps = n_bins_non_missing - 1 + miss
            for i in range(s.n_steps):
                s.seq[i] = i
            s.scanned_is_left = True
            s.shift = 0
            s.missing_left = 0
            s.ties_to_later = False
            self._scan(&s, fs, node, out)
            # right to left: missing values go left; bin b + 1 joins the
            # right side at candidate b
            if miss and n_bins_non_missing >= 2:
                s.n_steps = n_bins_non_missing - 1
                for i in range(s.n_steps):
                    s.seq[i] = n_bins_non_missing - 1 - i
                s.scanned_is_left = False
                s.shift = 1
                s.missing_left = 1
                s.ties_to_later = self.per_era
                self._scan(&s, fs, node, &best_rl)
                # scikit-learn: the right-to-left best must beat the other
                if better(&best_rl.sc, &out.sc, self.split_type):
                    out[0] = best_rl

    cdef void _scan_categorical(self, scan_t *s, feature_scratch_t *fs,
                                const node_sums_t *node, bint miss,
                                split_t *out) noexcept nogil:
        """Categories (the missing-value bin counts as one) with a pooled
        hessian sum of at least MIN_CAT_SUPPORT rows are sorted by pooled
        ``g / (h + MIN_CAT_SUPPORT)``, as scikit-learn does; the scan from
        the start takes prefixes of up to ceil(n/2) categories, the scan from
        the end up to ceil(n/2) - 1. Under the era criteria the order stays
        the pooled one."""
        cdef unsigned int n_bins_non_missing = s.nb - 1, b, n_used = 0, i
        cdef int d, best_d = 0
        cdef double hb, support = node.n_samples / node.H
        cdef cat_info_t *cats = fs.cats
        # bins 0 .. n_bins_non_missing - 1 are the categories, bin
        # n_bins_non_missing the missing values
        for b in range(n_bins_non_missing + miss):
            hb = (s.blk.n[b * s.R + s.pooled] if self.const_h
                  else s.blk.h[b * s.R + s.pooled])
            if hb * support >= MIN_CAT_SUPPORT:
                cats[n_used].bin = <BIN_t>b
                cats[n_used].value = (s.blk.g[b * s.R + s.pooled]
                                      / (hb + MIN_CAT_SUPPORT))
                n_used = n_used + 1
        if n_used <= 1:
            return
        qsort(cats, n_used, sizeof(cat_info_t), cmp_cat_info)
        s.mono = 0
        s.label_is_step = True
        s.scanned_is_left = True
        s.missing_left = 0
        s.ties_to_later = False
        for d in range(2):
            s.n_steps = (n_used + 1) // 2 - d
            for i in range(<unsigned int>s.n_steps):
                s.seq[i] = cats[i].bin if d == 0 else cats[n_used - 1 - i].bin
            if self._scan(s, fs, node, out):
                best_d = d
        if not out.sc.found:
            return
        out.is_cat = 1
        for i in range(8):
            out.cat_bitset[i] = 0
        for i in range(<unsigned int>out.bin + 1):
            set_bitset(out.cat_bitset, cats[i if best_d == 0 else n_used - 1 - i].bin)
        out.missing_left = miss and in_bitset(out.cat_bitset, n_bins_non_missing)

    cdef inline Constraint _constraints(self, unsigned int n_grow,
                                        unsigned int n_other, double h_grow,
                                        double h_other) noexcept nogil:
        """Pooled constraints of a candidate, from the side the scan grows
        (scikit-learn's order of checks)."""
        if n_grow < self.min_samples_leaf:
            return CONTINUE
        if n_other < self.min_samples_leaf:
            return BREAK
        if h_grow < self.min_hessian:
            return CONTINUE
        if h_other < self.min_hessian:
            return BREAK
        return OK

    cdef bint _scan(self, const scan_t *s, feature_scratch_t *fs,
                    const node_sums_t *node, split_t *best) noexcept nogil:
        """The one scan (:meth:`_scan_path`), compiled once for each path:
        the per-era path and the pooled one."""
        if self.per_era:
            return self._scan_path(s, fs, node, best, True)
        return self._scan_path(s, fs, node, best, False)

    cdef inline bint _scan_path(self, const scan_t *s, feature_scratch_t *fs,
                                const node_sums_t *node, split_t *best,
                                const bint per_era) noexcept nogil:
        """The one scan: the candidates of the order ``s`` and their pooled
        sums, scored in scan order (at once on the pooled path, after the
        scan from the per-era sums otherwise); the best is kept in
        ``best``. True when ``best`` changed.

        On the per-era path a bin with no rows adds a candidate with the
        same partition as the previous one: they are one candidate, with
        the lowest label."""
        cdef int i, K = 0
        cdef bint open_ = False, changed = False
        cdef unsigned int label, nS = 0
        cdef double GS = 0.0, HS = 0.0
        cdef int64_t c
        cdef uint32_t cn
        cdef Constraint st
        cdef pooled_t p
        cdef score_t sc
        # locals: the stores below could alias the fields of s, node, self
        cdef const double *pg = s.blk.g + s.pooled
        cdef const double *ph = s.blk.h + s.pooled if s.blk.h != NULL else NULL
        cdef const uint32_t *pn = s.blk.n + s.pooled
        cdef const unsigned int *seq = s.seq
        cdef unsigned int shift = s.shift, n = node.n_samples
        cdef bint by_step = s.label_is_step, left = s.scanned_is_left
        cdef bint const_h = self.const_h
        cdef double G = node.G, H = node.H
        cdef int64_t R = s.R
        for i in range(s.n_steps):
            c = seq[i] * R
            cn = pn[c]
            label = i if by_step else seq[i] - shift
            if per_era and cn == 0:
                if open_ and label < fs.cands[K - 1].label:
                    fs.cands[K - 1].label = label
                continue
            nS = nS + cn
            HS = HS + ((<double>cn) if const_h else ph[c])
            GS = GS + pg[c]
            st = self._constraints(nS, n - nS, HS, H - HS)
            if st == CONTINUE:
                open_ = False
                continue
            if st == BREAK:
                break
            p.label = label
            p.step = i
            if left:
                p.nL = nS
                p.GL = GS
                p.HL = HS
                p.GR = G - GS
                p.HR = H - HS
            else:
                p.nL = n - nS
                p.GL = G - GS
                p.HL = H - HS
                p.GR = GS
                p.HR = HS
            open_ = True
            if per_era:
                fs.cands[K] = p
                K = K + 1
            else:
                sc = self._score(s, &p, node, NULL, NULL)
                if better(&sc, &best.sc, self.split_type):
                    keep(best, s, &p, &sc)
                    changed = True
        if K > 0:
            if s.sparse:
                changed = self._score_per_era_sparse(s, fs, node, K, best)
            else:
                changed = self._score_per_era(s, fs, node, K, best)
        return changed

    cdef bint _score_per_era(self, const scan_t *s, feature_scratch_t *fs,
                             const node_sums_t *node, int K,
                             split_t *best) noexcept nogil:
        """Score the K candidates of one order from the per-era sums.

        A candidate's per-era scanned-side sums are the previous
        candidate's plus the bins in between, the cells of all eras of a
        bin being contiguous (one vectorised pass, :meth:`_gather`; the
        eras absent from the node add zeros); then the gains of all eras
        come from one dense loop (``era_gains``) and the candidate is
        scored. With constant hessians the hessian sums are the row counts:
        one array serves both.

        Under bounds (:meth:`_bounded`: ``era`` with ``boltzmann_alpha <=
        0``, ``directional``) the candidates go by blocks of BOUND_BLOCK:
        a block whose bound (:meth:`_block_bound`) is below the best found
        so far for the node, over all its features, holds no candidate that
        could win or tie, and its gains (and directions) are not
        computed."""
        cdef era_scratch_t *era_scratch = &fs.era
        cdef const pooled_t *cands = fs.cands
        cdef int E = node.E, k = 0, kb = 0, step = 0
        cdef bint const_h = self.const_h, changed = False, scored
        cdef bint bounded = self._bounded()
        cdef double *pg = era_scratch.pg
        cdef double *ph = era_scratch.ph
        cdef double *pn = era_scratch.pn
        cdef double *qg = era_scratch.qg
        cdef double *qh = era_scratch.qh
        cdef double *qn = era_scratch.qn
        cdef era_view_t era_sums
        if const_h:
            ph = pn
            qh = qn
        if self._sums_only(s, node):
            # one block of candidates: bounded as a whole, or scored by
            # their gain sums
            if bounded and self._try_bound(s, era_scratch, node, cands[0].step,
                                           cands[K - 1].step, 0, pg, ph, pn,
                                           qg, qh, qn, best):
                return False
            return self._score_gain_sums(s, fs, node, K, best)
        while k < K:
            if bounded and k == kb:
                kb = min(k + BOUND_BLOCK, K)
                if self._try_bound(s, era_scratch, node, cands[k].step,
                                   cands[kb - 1].step, step, pg, ph, pn, qg,
                                   qh, qn, best):
                    # the block's sums are the next one's start
                    step = cands[kb - 1].step + 1
                    k = kb
                    swap_sums(&pg, &ph, &pn, &qg, &qh, &qn)
                    continue
            self._gather(s, node, step, cands[k].step, pg, ph, pn, qg, qh, qn)
            step = cands[k].step + 1
            # directional: the directions first, without divisions; a
            # candidate with fewer agreeing eras than the best cannot beat
            # it, whatever its gains (docs/criteria.md), and is not scored
            era_sums.dsum = 0
            scored = True
            if self.split_type == DIRECTIONAL:
                era_sums.dsum = self._directions(qg, qh, qn, node)
                scored = (abs(era_sums.dsum)
                          >= self._direction_floor(node, best))
            if scored:
                era_sums.qg = qg
                era_sums.qh = qh
                era_sums.qn = qn
                era_gains(qg, qh, qn, node.tg, node.th, node.tn, node.ts,
                          self.lam, E, self._counts(), era_scratch.gains,
                          &era_sums.gsum)
                if not s.scanned_is_left:
                    era_sums.dsum = -era_sums.dsum
                if self._offer(s, &cands[k], node, &era_sums, era_scratch,
                               best):
                    changed = True
            # this candidate's sums are the next one's start
            swap_sums(&pg, &ph, &pn, &qg, &qh, &qn)
            k = k + 1
        return changed

    cdef inline bint _sums_only(self, const scan_t *s,
                                const node_sums_t *node) noexcept nogil:
        """Whether the scan ``s`` is scored by its candidates' gain sums
        alone (:meth:`_score_gain_sums`): under ``era`` with
        ``boltzmann_alpha = 0`` (the criterion is the mean of the gains),
        no invariance penalty, no per-era minimum, every era with rows
        taking part (the sum over all eras is then theirs), and at most
        GAIN_SUMS_MAX_STEPS steps."""
        return (self.gain_sums and s.n_steps <= GAIN_SUMS_MAX_STEPS
                and self.split_type == ERA and self.alpha == 0.0
                and self.irf_penalty == 0.0 and self.min_per_era == 0
                and node.n_out_split == 0)

    cdef bint _score_gain_sums(self, const scan_t *s, feature_scratch_t *fs,
                               const node_sums_t *node, int K,
                               split_t *best) noexcept nogil:
        """:meth:`_score_per_era` where the criterion is the eras' gain
        sum over M (:meth:`_sums_only`): the sums of all K candidates in one
        pass over the cells (``era_gain_sums``: the sums of ``era_gains``,
        bit for bit, without a per-era array), then each candidate is
        offered to the scorer in scan order. Such a scan is one block of
        candidates (GAIN_SUMS_MAX_STEPS <= BOUND_BLOCK): :meth:`_score_per_era`
        tries its bound first."""
        cdef int k
        cdef bint changed = False
        cdef era_view_t era_sums
        fs.era.sums_scans += 1
        for k in range(K):
            fs.steps[k] = fs.cands[k].step
        era_gain_sums(s.blk.g, NULL if self.const_h else s.blk.h, s.blk.n,
                      s.R, s.seq, fs.steps, K, node.tg, node.th, node.tn,
                      node.ts, self.lam, node.E, self._counts(), fs.acc,
                      fs.gsums)
        era_sums.qg = NULL
        era_sums.qh = NULL
        era_sums.qn = NULL
        era_sums.dsum = 0
        for k in range(K):
            era_sums.gsum = fs.gsums[k]
            if self._offer(s, &fs.cands[k], node, &era_sums, &fs.era, best):
                changed = True
        return changed

    cdef inline bint _counts(self) noexcept nogil:
        """Whether the per-era gains may take the form of ``eb_era_gain_of``
        for hessian sums that are the row counts, and lam = 0."""
        return self.const_h and self.lam == 0.0

    cdef inline bint _bounded(self) noexcept nogil:
        """Whether the scans skip blocks of candidates by their bounds
        (docs/criteria.md): under ``era`` with ``boltzmann_alpha <= 0``,
        whose criterion is at most the mean of the gains of the eras taking
        part (the mean itself at 0; the Boltzmann operator weighs the
        smaller gains more below 0), less an invariance penalty (>= 0); and
        under ``directional``, by the eras that agree (and their gains at
        ``boltzmann_alpha <= 0``, between candidates as many eras agree
        on)."""
        return self.bound_blocks and (
            (self.split_type == ERA and self.alpha <= 0.0)
            or self.split_type == DIRECTIONAL)

    cdef inline double _rank_value(self, const score_t *sc) noexcept nogil:
        """What a node's shared best holds of a score: its agreeing eras
        under ``directional``, its criterion otherwise."""
        if self.split_type == DIRECTIONAL:
            return <double> sc.direction_count
        return sc.criterion

    cdef inline double _best_so_far(self, const node_sums_t *node,
                                    const split_t *best) noexcept nogil:
        """The best so far for the node, as :meth:`_rank_value` gives it:
        this scan's ``best``, or another feature's (``node.shared_best``,
        raised only under the bounds), whichever is higher; -inf before
        any."""
        cdef double thr = load_best(node.shared_best), own
        if best.sc.found:
            own = self._rank_value(&best.sc)
            if own > thr:
                thr = own
        return thr

    cdef inline double _direction_floor(self, const node_sums_t *node,
                                        const split_t *best) noexcept nogil:
        """directional: the fewest agreeing eras a candidate needs to be
        worth its gains: as many as the best so far
        (:meth:`_best_so_far`); 0 before any."""
        return max(0.0, self._best_so_far(node, best))

    cdef inline void _gather(self, const scan_t *s, const node_sums_t *node,
                             int step, int last, const double *pg,
                             const double *ph, const double *pn, double *qg,
                             double *qh, double *qn) noexcept nogil:
        """The scanned side's per-era sums after step ``last`` into q: the
        sums after step ``step - 1`` (p; none when ``step`` is 0) plus the
        bins of steps ``step .. last``, added in scan order, so that any
        grouping of the steps gives the same sums, bit for bit."""
        cdef int64_t c
        cdef bint const_h = self.const_h, first = True
        cdef int E = node.E
        while step <= last:
            c = s.seq[step] * s.R
            # q = p + the bin, or q += the bin; the first bin has no
            # previous sums (cells are never -0.0, so this is 0.0 + the
            # bin's sums, bit for bit)
            add_bin(qg, NULL if step == 0 else (pg if first else qg),
                    s.blk.g + c, E)
            add_counts(qn, NULL if step == 0 else (pn if first else qn),
                       s.blk.n + c, E)
            if not const_h:
                add_bin(qh, NULL if step == 0 else (ph if first else qh),
                        s.blk.h + c, E)
            first = False
            step = step + 1

    cdef inline bint _try_bound(self, const scan_t *s,
                                era_scratch_t *era_scratch,
                                const node_sums_t *node, int first, int last,
                                int step, const double *pg, const double *ph,
                                const double *pn, double *qg, double *qh,
                                double *qn, const split_t *best) noexcept nogil:
        """:meth:`_block_bound`, tried unless the last ones failed: a bound
        costs about a third of the gains of its block, so where bounds
        rarely skip a block (many small eras) they are tried less and less
        often, after 1, 3, 7 ... 63 blocks scored in full; one that skips
        its block starts over. The split found does not depend on it."""
        cdef int r
        if era_scratch.bound_wait > 0:
            era_scratch.bound_wait -= 1
            return False
        r = self._block_bound(s, era_scratch, node, first, last, step, pg, ph,
                              pn, qg, qh, qn, best)
        if r == 1:
            era_scratch.bound_misses = 0
            era_scratch.bound_skips += 1
        elif r == 0:
            era_scratch.bound_misses = min(era_scratch.bound_misses + 1,
                                           BOUND_MAX_MISSES)
            era_scratch.bound_wait = (1 << era_scratch.bound_misses) - 1
        return r == 1

    cdef int _block_bound(self, const scan_t *s, era_scratch_t *era_scratch,
                          const node_sums_t *node, int first, int last,
                          int step, const double *pg, const double *ph,
                          const double *pn, double *qg, double *qh,
                          double *qn, const split_t *best) noexcept nogil:
        """1 when the candidates of the steps ``first .. last`` are all
        below the best criterion found so far for the node (this scan's
        ``best``, or another feature's: ``node.shared_best``), from an upper
        bound of their gain sums (``era_block_bound``, docs/criteria.md);
        then q holds the sums after step ``last``, gathered from p (the
        sums after step ``step - 1``) as :meth:`_gather` does. Otherwise
        the block is to be scored and q is scratch: 0, or -1 when there is
        no best yet to compare with.

        The margin covers the rounding of the gains and of their sum: a
        block is skipped only when none of its candidates can win or tie,
        so the split found is the same as without the bound."""
        cdef double thr = self._best_so_far(node, best), bsum
        cdef bint directional = self.split_type == DIRECTIONAL
        cdef int dc
        if not thr > 0.0:
            return -1
        block_gather(s.blk.g, NULL if self.const_h else s.blk.h, s.blk.n,
                     s.R, s.seq, step, first, last, pg, ph, pn, qg, qh, qn,
                     node.kk, self.lam, era_scratch.dmin, era_scratch.dmax,
                     era_scratch.n1, era_scratch.h1, node.E, s.n_steps)
        if directional:
            # fewer agreeing eras than the best so far, or as many and a
            # lower era score than this scan's best (alpha <= 0)
            dc = era_block_directions(
                era_scratch.dmin, era_scratch.dmax, era_scratch.n1,
                era_scratch.h1, qn, qh, node.tg, node.th, node.tn,
                node.is_present, self.lam, self.const_h, node.E)
            if dc < thr:
                return 1
            if (self.alpha > 0.0 or not best.sc.found
                    or dc != best.sc.direction_count):
                return 0
            thr = best.sc.criterion
        bsum = era_block_bound(era_scratch.dmin, era_scratch.dmax,
                               era_scratch.n1, era_scratch.h1, qn, qh, node.tg,
                               node.th, node.tn, self.lam, self.const_h,
                               node.E, era_scratch.ub)
        return bsum + BOUND_RTOL * (bsum + node.ts_part) < thr * node.M

    cdef bint _score_per_era_sparse(self, const scan_t *s, feature_scratch_t *fs,
                                    const node_sums_t *node, int K,
                                    split_t *best) noexcept nogil:
        """:meth:`_score_per_era` from a sparse histogram: as each bin joins
        the scanned side, its rows update their eras' sums, gains and
        directions (the sum of the directions of the eras taking part by the
        differences); then each candidate is scored as on the dense path,
        its gain sum summed anew over the eras taking part (``lane_sum``),
        so that a partition has the same sum from either scan. The gains
        follow the rows, not ``E`` per candidate; the sum rounds differently
        from the dense path's sum over all eras.

        Under the bounds (:meth:`_bounded`) at ``boltzmann_alpha <= 0`` a
        running sum of the gains of the eras taking part, updated by each
        change of an era's gain, screens the candidates first
        (:meth:`_sum_below`): one whose criterion cannot reach the best so
        far is not summed anew nor scored. The split found is the same as
        when every candidate is scored."""
        cdef era_scratch_t *era_scratch = &fs.era
        cdef const pooled_t *cands = fs.cands
        cdef int E = node.E, M = node.M, k, step = 0, e, d, dsum = 0, i
        cdef bint const_h = self.const_h, changed = False
        cdef bint directional = self.split_type == DIRECTIONAL
        cdef bint screen = self._bounded() and self.alpha <= 0.0
        # constant hessians and lam = 0: the gains' shorter form, the same
        # values (eb_era_gain_of)
        cdef bint counts = self._counts()
        cdef uint32_t j, end
        cdef unsigned int b
        cdef double gain, xg, xh, xn, delta
        # the running sum of the present eras' gains, the sum of the sizes
        # of its changes and their number (_sum_below)
        cdef double run = 0.0, moved = 0.0
        cdef int64_t updates = 0
        # the scanned side's per-era sums, the eras' gains (by era, and of
        # the eras taking part in their order) and directions
        cdef double *qg = era_scratch.qg
        cdef double *qh = era_scratch.qh if not const_h else era_scratch.qn
        cdef double *qn = era_scratch.qn
        cdef double *gains = era_scratch.gains
        cdef double *gc = era_scratch.gc
        cdef int32_t *pos = era_scratch.pos
        cdef signed char *dirs = era_scratch.dirs
        cdef const double *tg = node.tg
        cdef const double *th = node.th
        cdef const double *tn = node.tn
        cdef const double *ts = node.ts
        cdef const signed char *is_present = node.is_present
        cdef const int32_t *e_era = s.e_era
        cdef const G_t *e_g = s.e_g
        cdef const G_t *e_h = s.e_h
        cdef double lam = self.lam
        cdef era_view_t era_sums
        for e in range(E):
            qg[e] = 0.0
            qn[e] = 0.0
            qh[e] = 0.0
            gains[e] = 0.0
            dirs[e] = 0
        # the gains of the eras taking part, in their order
        for i in range(M):
            pos[node.present[i]] = i
            gc[i] = 0.0
        for k in range(K):
            while step <= cands[k].step:
                b = s.seq[step]
                end = s.start[b + 1]
                for j in range(s.start[b], end):
                    e = e_era[j]
                    xg = qg[e] + e_g[j]
                    xn = qn[e] + 1.0
                    qg[e] = xg
                    qn[e] = xn
                    if const_h:
                        xh = xn
                    else:
                        xh = qh[e] + e_h[j]
                        qh[e] = xh
                    # the era's gain once its rows of the bin (consecutive)
                    # are in
                    if is_present[e] and (j + 1 == end or e_era[j + 1] != e):
                        gain = era_gain_of(xg, xh, xn, tg[e] - xg,
                                           th[e] - xh, tn[e] - xn, ts[e], lam,
                                           counts)
                        delta = gain - gains[e]
                        gains[e] = gain
                        gc[pos[e]] = gain
                        run = run + delta
                        moved = moved + fabs(delta)
                        if directional:
                            d = era_direction_of(xg, xh, xn, tg[e] - xg,
                                                 th[e] - xh, tn[e] - xn, lam,
                                                 counts)
                            dsum += d - dirs[e]
                            dirs[e] = <signed char>d
                updates += end - s.start[b]
                step = step + 1
            if directional:
                if abs(dsum) < self._direction_floor(node, best):
                    continue
                # as many agreeing eras as this scan's best: it wins by its
                # criterion only
                if (screen and best.sc.found
                        and abs(dsum) == best.sc.direction_count
                        and self._sum_below(run, moved, updates, M,
                                            best.sc.criterion)):
                    era_scratch.screened += 1
                    continue
            elif screen and self._sum_below(run, moved, updates, M,
                                            self._best_so_far(node, best)):
                era_scratch.screened += 1
                continue
            era_sums.qg = qg
            era_sums.qh = qh
            era_sums.qn = qn
            era_sums.gsum = lane_sum(gc, M)
            era_sums.dsum = dsum if s.scanned_is_left else -dsum
            if self._offer(s, &cands[k], node, &era_sums, era_scratch, best):
                changed = True
        return changed

    cdef inline bint _sum_below(self, double run, double moved,
                                int64_t updates, int M,
                                double thr) noexcept nogil:
        """Whether a candidate's criterion is surely below ``thr``
        (``boltzmann_alpha <= 0``: at most the mean of the gains of the M
        eras taking part, less a penalty), from ``run``, their sum kept
        by ``updates`` changes whose sizes add up to ``moved``
        (:meth:`_score_per_era_sparse`). ``run`` differs from any sum of
        the gains by at most about ``(updates + M) u moved`` (u, the unit
        roundoff: each change and each addition rounds once, and every
        partial sum and gain is at most ``moved``); the margin is four
        times that, plus BOUND_RTOL of ``moved`` for the rounding of the
        Boltzmann operator. False when ``thr`` is not above 0 (nothing to
        beat yet, or no candidate could be eligible below it)."""
        if not thr > 0.0:
            return False
        return ((run + (BOUND_RTOL + SUM_RTOL * <double>(updates + M + 1))
                 * moved) / M < thr)

    cdef inline bint _offer(self, const scan_t *s, const pooled_t *p,
                            const node_sums_t *node,
                            const era_view_t *era_sums,
                            era_scratch_t *era_scratch,
                            split_t *best) noexcept nogil:
        """A candidate of a per-era scan, with its per-era sums and gains,
        against the best of the scan: scored (unless below the best,
        :meth:`_below_best`) and kept when it takes over. True when
        kept."""
        cdef score_t sc
        if self._below_best(node, era_sums, era_scratch, best):
            return False
        sc = self._score(s, p, node, era_sums, era_scratch)
        if takes_over(&sc, &best.sc, s.ties_to_later, self.split_type):
            keep(best, s, p, &sc)
            if self._bounded():
                raise_best(node.shared_best, self._rank_value(&sc))
            return True
        return False

    cdef inline bint _below_best(self, const node_sums_t *node,
                                 const era_view_t *era_sums,
                                 const era_scratch_t *era_scratch,
                                 const split_t *best) noexcept nogil:
        """Under ``era`` with ``boltzmann_alpha = 0`` and no invariance
        penalty a candidate's criterion is its eras' gain sum over M
        (:meth:`_criterion`), known before the rest of its score: one
        below the best's (this scan's, or another feature's of the node:
        ``node.shared_best``) can neither beat it nor tie, so the scorer's
        other steps (the children's values, the pooled gain and
        progress) are skipped. The split found is the same as when it is
        scored."""
        cdef double thr
        if (self.split_type != ERA or self.alpha != 0.0
                or self.irf_penalty > 0.0):
            return False
        thr = self._best_so_far(node, best)
        if not thr > 0.0:
            return False
        return (self._present_gain_sum(node, era_sums, era_scratch) / node.M
                < thr)

    cdef inline int _directions(self, const double *qg, const double *qh,
                                const double *qn,
                                const node_sums_t *node) noexcept nogil:
        """The sum of the directions of the eras taking part, from a
        candidate's per-era sums (the scanned side plays the left side):
        all eras' (``era_directions``), less those taking no part."""
        cdef int i, e
        cdef int dsum = era_directions(qg, qh, qn, node.tg, node.th, node.tn,
                                       self.lam, node.E, self._counts())
        for i in range(node.n_out_split):
            e = node.out[i]
            dsum -= era_direction_of(qg[e], qh[e], qn[e], node.tg[e] - qg[e],
                                     node.th[e] - qh[e], node.tn[e] - qn[e],
                                     self.lam, self._counts())
        return dsum

    cdef inline score_t _score(self, const scan_t *s, const pooled_t *p,
                               const node_sums_t *node, const era_view_t *era_sums,
                               era_scratch_t *era_scratch) noexcept nogil:
        """The one candidate scorer: the score of candidate ``p``.

        ``era_sums`` holds its per-era sums and gains (NULL on the pooled
        path). The steps, in order: the per-era minimum
        (:meth:`_era_minimum_ok`), the monotonic constraint
        (``monotonic_ok``), the pooled gain (``pooled_gain``), pooled
        progress under the era criteria (:meth:`_pooled_progress`), the
        direction count (directional), the criterion of ``split_type``
        (:meth:`_criterion`) minus the invariance penalty
        (:meth:`_penalty`). A step that rules the candidate out returns it
        not found."""
        cdef double vL, vR, gsum
        cdef score_t c
        c.found = 0
        c.direction_count = 0
        c.gain = 0.0
        c.criterion = 0.0
        if (era_sums != NULL and self.min_per_era
                and not self._era_minimum_ok(node, era_sums)):
            return c
        vL = node_value(p.GL, p.HL, node.lower, node.upper, self.lam)
        vR = node_value(p.GR, p.HR, node.lower, node.upper, self.lam)
        if not monotonic_ok(s.mono, vL, vR):
            return c
        c.gain = pooled_gain(p, node, vL, vR, self.lam, era_sums == NULL)
        if era_sums == NULL:
            c.criterion = c.gain
            c.found = c.gain > 0.0
            return c
        gsum = era_sums.gsum
        if self.split_type != ORIGINAL:
            gsum = self._present_gain_sum(node, era_sums, era_scratch)
            if not self._pooled_progress(c.gain, gsum, node):
                return c
        if self.split_type == DIRECTIONAL:
            c.direction_count = abs(era_sums.dsum)
            if c.direction_count == 0:
                return c
        c.criterion = self._criterion(c.gain, gsum, node, era_scratch)
        if self.irf_penalty > 0.0:
            c.criterion -= self._penalty(s, node, era_sums, era_scratch,
                                         p.HL + p.HR)
        if self.split_type == DIRECTIONAL:
            c.found = 1
        else:
            c.found = c.criterion > 0.0
        return c

    cdef inline bint _era_minimum_ok(self, const node_sums_t *node,
                                     const era_view_t *era_sums) noexcept nogil:
        """``min_samples_leaf_per_era``: every era taking part keeps that
        many rows on each side (the scanned side's count against the
        era's total)."""
        cdef double m = self.min_per_era
        cdef int i, e
        for i in range(node.M):
            e = node.present[i]
            if era_sums.qn[e] < m or node.tn[e] - era_sums.qn[e] < m:
                return False
        return True

    cdef inline double _present_gain_sum(self, const node_sums_t *node,
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

    cdef inline bint _pooled_progress(self, double gain, double gsum,
                                      const node_sums_t *node) noexcept nogil:
        """Pooled progress (docs/criteria.md): a positive pooled gain above
        POOLED_PROGRESS_RTOL of the per-era children's score, the eras'
        gains plus their total scores."""
        return gain > 0.0 and gain > POOLED_PROGRESS_RTOL * (gsum + node.ts_part)

    cdef inline double _criterion(self, double gain, double gsum,
                                  const node_sums_t *node,
                                  era_scratch_t *era_scratch) noexcept nogil:
        """The criterion of ``split_type`` before the penalty: the pooled
        gain (original), or the Boltzmann operator of the gains of the eras
        taking part (era, and directional's tie-break)."""
        cdef int i, M = node.M
        if self.split_type == ORIGINAL:
            return gain
        if self.alpha == 0.0:
            return gsum / M  # the absent eras' gains are zeros
        for i in range(M):
            era_scratch.gc[i] = era_scratch.gains[node.present[i]]
        return boltzmann(era_scratch.gc, M, self.alpha)

    cdef inline double _penalty(self, const scan_t *s, const node_sums_t *node,
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
        if self.penalty_kind == VALUE_VARIANCE:
            return self.irf_penalty * H * value_variance(
                lg, lh, ln, node.tg, node.th, E, self.lam, era_scratch.cr,
                era_scratch.ok)
        return self.irf_penalty * 0.5 * H * rate_spread(
            lg, lh, node.tg, node.th, node.is_present, E)


def split_indices(const BIN_t[:, :] X_binned, int feature, unsigned int bin_idx,
                  bint missing_go_to_left, unsigned int missing_bin,
                  uint32_t[::1] sample_indices, uint32_t[::1] buffer,
                  int n_threads):
    """Stable partition of ``sample_indices`` in place: left rows first.

    A row goes left when its bin is <= ``bin_idx``, or when it is missing
    (bin == ``missing_bin``) and ``missing_go_to_left``. The relative order of
    rows is kept on each side (so rows stay grouped by era), whatever the
    number of threads. Returns the number of rows going left.
    """
    cdef uint8_t goes_left[256]
    cdef unsigned int v
    for v in range(256):
        goes_left[v] = v <= bin_idx or (missing_go_to_left and v == missing_bin)
    return _partition(X_binned[:, feature], goes_left, sample_indices, buffer,
                      n_threads)


def copy_rows(uint32_t[::1] dst not None, const uint32_t[::1] src not None,
              int n_threads):
    """``dst[:] = src``, in contiguous chunks on ``n_threads`` threads (a
    tree's root rows into the partition buffer that its grower reorders:
    a serial copy of millions of rows a tree does not scale)."""
    cdef Py_ssize_t n = src.shape[0], chunk, lo, hi
    cdef int t, nt = n_threads if n >= ROWS_PER_THREAD * n_threads else 1
    if dst.shape[0] != n:
        raise ValueError(f"copy_rows: {dst.shape[0]} rows for {n}")
    if n == 0:
        return
    nt = max(1, nt)
    chunk = (n + nt - 1) // nt
    with nogil:
        for t in prange(nt, schedule='static', chunksize=1, num_threads=nt):
            lo = t * chunk
            hi = min(n, lo + chunk)
            if hi > lo:
                memcpy(&dst[lo], &src[lo], (hi - lo) * sizeof(uint32_t))


def split_indices_categorical(const BIN_t[:, :] X_binned, int feature,
                              const uint32_t[::1] left_cat_bitset,
                              uint32_t[::1] sample_indices, uint32_t[::1] buffer,
                              int n_threads):
    """As :func:`split_indices` for a categorical split: a row goes left when
    its bin (the missing-value bin included) is in ``left_cat_bitset``."""
    cdef uint8_t goes_left[256]
    cdef unsigned int v
    for v in range(256):
        goes_left[v] = in_bitset(&left_cat_bitset[0], v)
    return _partition(X_binned[:, feature], goes_left, sample_indices, buffer,
                      n_threads)


cdef Py_ssize_t _partition(const BIN_t[:] col, const uint8_t *goes_left,
                           uint32_t[::1] sample_indices, uint32_t[::1] buffer,
                           int n_threads) except -1:
    """Stable in-place partition of the rows by ``goes_left[bin]``."""
    cdef Py_ssize_t n = sample_indices.shape[0]
    cdef int t, nt = n_threads if n >= ROWS_PER_THREAD * n_threads else 1
    cdef Py_ssize_t chunk = (n + nt - 1) // nt if nt > 0 else n
    cdef Py_ssize_t *nleft = <Py_ssize_t *> calloc(nt + 1, sizeof(Py_ssize_t))
    cdef Py_ssize_t *nright = <Py_ssize_t *> calloc(nt + 1, sizeof(Py_ssize_t))
    cdef Py_ssize_t i, lo, hi, nl, nr, gl, pos_l, pos_r, total_left = 0
    cdef uint32_t row
    cdef bint strided = col.strides[0] != 1
    if nleft == NULL or nright == NULL:
        free(nleft)
        free(nright)
        raise MemoryError()
    with nogil:
        for t in prange(nt, schedule='static', chunksize=1, num_threads=nt):
            lo = t * chunk
            hi = min(n, lo + chunk)
            nl = 0
            nr = 0
            # left rows go to the front of the chunk in buffer, right rows to
            # the back (reversed), then are copied out in order
            for i in range(lo, hi):
                row = sample_indices[i]
                if strided and i + 4 * PREFETCH_ROWS < hi:
                    # a matrix stored by rows: a cache line a row, asked
                    # for further ahead than the histograms' rows (a row
                    # here is a few instructions of work, not a chunk of
                    # features)
                    prefetch(&col[sample_indices[i + 4 * PREFETCH_ROWS]])
                # both ends written, one kept: no branch to mispredict
                # (balanced splits send rows either way at random)
                gl = goes_left[col[row]]
                buffer[lo + nl] = row
                buffer[hi - 1 - nr] = row
                nl = nl + gl
                nr = nr + (1 - gl)
            nleft[t] = nl
            nright[t] = nr
        for t in range(nt):
            total_left = total_left + nleft[t]
        for t in prange(nt, schedule='static', chunksize=1, num_threads=nt):
            lo = t * chunk
            hi = min(n, lo + chunk)
            pos_l = 0
            pos_r = total_left
            for i in range(t):
                pos_l = pos_l + nleft[i]
                pos_r = pos_r + nright[i]
            if nleft[t] > 0:
                memcpy(&sample_indices[pos_l], &buffer[lo], nleft[t] * sizeof(uint32_t))
            for i in range(nright[t]):
                sample_indices[pos_r + i] = buffer[hi - 1 - i]
    free(nleft)
    free(nright)
    return total_left
