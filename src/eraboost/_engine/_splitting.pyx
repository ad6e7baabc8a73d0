"""The split scan: split finding on per-era histograms.

The split finder by role: this scan (the nodes, their features on the
threads, the orders of a feature's bins and the candidates they give; the
per-era scoring of the candidates in ``_scan_eras.pyx``), the one candidate
scorer (``_scorer.pxd``: the criteria's steps, bounds and short forms) and
the partition of a node's rows (``_partition.pyx``).

One scan serves every feature (:meth:`Splitter._scan`): bins join the
scanned side of the split one by one in a given order, the pooled
constraints (min_samples_leaf, min hessian) pick the candidates, and one
scorer (``score_candidate``, ``_scorer.pxd``) scores each candidate with the
criteria of ``_criteria.pxd``. The orders are

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
from libc.math cimport INFINITY

from ._common cimport (block_t, hist_block, block_subtract, cell_bytes, BIN_t, G_t,
                       uint8_t, uint32_t, int32_t, int64_t, in_bitset,
                       set_bitset, ORIGINAL, ERA, DIRECTIONAL, VALUE_VARIANCE,
                       RATE_SPREAD, VALUE_DIFFERENCE, SCAN_ONE_THREAD_BELOW,
                       rows_per_bin)
from ._criteria cimport score
from ._scan cimport (score_t, split_t, node_sums_t, scan_t, pooled_t, era_scratch_t,
                     cat_info_t, feature_scratch_t)
from ._scorer cimport (criterion_t, MIN_CAT_SUPPORT, better, keep, node_value,
                       score_candidate, bounded)
from ._scan_eras cimport score_per_era, score_per_era_sparse
from ._common import era_options_set
from ._histogram import SparseHistogram


# The codes of the criteria by name are ``_common.SPLIT_TYPES``, the one
# table; the C enum ``SplitType`` (``_common.pxd``) must give them the same
# values.
if (SPLIT_TYPES["original"], SPLIT_TYPES["era"],
        SPLIT_TYPES["directional"]) != (ORIGINAL, ERA, DIRECTIONAL):
    raise ImportError("_common.SPLIT_TYPES and the enum SplitType disagree")
PENALTY_KINDS = {"value_variance": VALUE_VARIANCE, "rate_spread": RATE_SPREAD,
                 "value_difference": VALUE_DIFFERENCE}


cdef enum Constraint:
    OK = 0
    CONTINUE = 1         # this side is still too small: next candidate
    BREAK = 2            # the other side is too small: no more candidates


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


cdef int cmp_cat_info(const void *a, const void *b) noexcept nogil:
    """Increasing value. Never 0, as scikit-learn's comparator: with the same
    libc qsort, equal values end up in the same order as in scikit-learn."""
    if (<const cat_info_t *>a).value < (<const cat_info_t *>b).value:
        return -1
    return 1


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
        decrease of weighted Gini impurity. 2: ``value_difference``
        (``irf_variance="difference"``), ``H_node * Var_e (v_Le - v_Re)``
        with every era of the node on both sides of a split.
    min_agreement : float, default=0
        The directional agreement gate (docs/criteria.md); 0 is off.
    pooled_weight : float, default=0
        The pooled gain's share of the era score (docs/criteria.md); 0 is
        off.

    With a single era, ``split_type=0`` and neither option, candidates are
    scored on the pooled histogram by scikit-learn's gain; otherwise from the
    per-era histograms.
    """
    cdef const uint32_t[::1] n_bins
    cdef const int64_t[::1] offsets
    cdef int n_eras
    cdef const uint8_t[::1] has_missing
    cdef const signed char[::1] monotonic_cst
    # the settings of the criterion, for the scorer (_scorer.pxd)
    cdef criterion_t crit
    cdef double min_hessian
    cdef unsigned int min_samples_leaf
    cdef int n_threads
    cdef readonly bint per_era  # score from the per-era histograms
    # skip blocks of candidates by their bound (bounded, _scorer.pxd); off
    # only to test that the splits are the same without
    cdef public bint bound_blocks
    # score a short scan's candidates by their eras' gain sums alone, all
    # at once, where the criterion needs nothing else (sums_only,
    # _scorer.pxd); off only to test that the splits are the same without
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
                 unsigned int min_samples_leaf_per_era=0, int penalty_kind=0,
                 double min_agreement=0.0, double pooled_weight=0.0):
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
        self.crit.split_type = split_type
        self.crit.alpha = alpha
        self.crit.lam = l2_regularization
        self.min_hessian = min_hessian_to_split
        self.min_samples_leaf = min_samples_leaf
        self.crit.const_h = hessians_are_constant
        self.n_threads = n_threads
        self.crit.irf_penalty = irf_penalty
        self.crit.min_per_era = min_samples_leaf_per_era
        self.crit.penalty_kind = penalty_kind
        self.crit.min_agreement = min_agreement
        self.crit.pooled_weight = pooled_weight
        self.bound_blocks = True
        self.gain_sums = True
        self.wins = np.zeros(len(n_bins), dtype=np.int64)
        self.per_era = n_eras > 1 and bool(era_options_set(
            split_type, irf_penalty, min_samples_leaf_per_era, min_agreement))
        if is_categorical is None:
            is_categorical = np.zeros(len(n_bins), dtype=np.uint8)
        self.is_categorical = np.ascontiguousarray(is_categorical, dtype=np.uint8)
        self._alloc_scratch(max(n_threads, 1))

    @property
    def split_type(self):
        """The criterion's code (``_common.SPLIT_TYPES``)."""
        return self.crit.split_type

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
        once (``score_gain_sums``, _scan_eras.pyx), since the splitter was
        made."""
        cdef int t
        cdef int64_t n = 0
        for t in range(self.n_scratch):
            n += self.scratch[t].era.sums_scans
        return n

    @property
    def candidates_screened(self):
        """The candidates of sparse scans that the running sum of their
        gains screened out (``score_per_era_sparse``) since the splitter
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
                             * cell_bytes(self.crit.const_h))
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
        # the best criterion found so far for each node (block_bound)
        cdef double *shared = <double *> malloc(n_alloc * sizeof(double))
        # the order in which the features are scanned (_scan_order)
        cdef feature_rank_t *order = <feature_rank_t *> malloc(
            max(n_feat, 1) * sizeof(feature_rank_t))
        self.busy = True
        # the test switches, as the scorer reads them
        self.crit.bound_blocks = self.bound_blocks
        self.crit.gain_sums = self.gain_sums
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
                                       &self.offsets[0], features[0], self.crit.const_h)
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
                                           self.crit.const_h)
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
                                           self.crit.const_h)
                        self._scan_task(j, k, features, hists, samps, sparses,
                                        is_sparse, node_sums, infos, n_feat,
                                        &self.scratch[threadid()])
            out = []
            for j in range(n_nodes):
                best = j * n_feat
                for t in range(j * n_feat + 1, (j + 1) * n_feat):
                    if better(&infos[t].sc, &infos[best].sc, self.crit.split_type):
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
        (``bounded``, _scorer.pxd), the features that won most nodes so far first,
        so that the best so far (``node.shared_best``) is high early and
        bounds skip more of the others; otherwise the order of
        ``features``. The split found is the same in any order: the best is
        taken over the features in the order of ``features``."""
        cdef int k, n_feat = features.shape[0]
        for k in range(n_feat):
            order[k].k = k
            order[k].wins = self.wins[features[k]] if bounded(&self.crit) else 0
        if bounded(&self.crit) and n_feat > 1:
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
                or (not self.crit.const_h and ph.shape[0] < cells)
                or g.shape[0] < m or (not self.crit.const_h and h.shape[0] < m)):
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
        cdef double splittable = 2.0 * max(1, self.crit.min_per_era)
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
                        tot[E + e] += 1.0 if self.crit.const_h else sp.h[base + j]
                        tot[2 * E + e] += 1.0
            else:
                blk = hist_block(hist, &self.offsets[0], f0, self.crit.const_h)
                for b in range(block_bins):
                    for e in range(E):
                        cell = b * R + e
                        tot[e] += blk.g[cell]
                        tot[E + e] += (<double>blk.n[cell] if self.crit.const_h
                                       else blk.h[cell])
                        tot[2 * E + e] += blk.n[cell]
            for e in range(E):
                tot[3 * E + e] = score(tot[e], tot[E + e], self.crit.lam)
                d = tot[E + e] + 2.0 * self.crit.lam
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
        info.value_left = node_value(s.GL, s.HL, lower, upper, self.crit.lam)
        info.value_right = node_value(G - s.GL, H - s.HL, lower, upper, self.crit.lam)
        if self.crit.split_type != DIRECTIONAL:
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
        if n_bins_non_missing < 1 or (node.M < 1 and self.crit.split_type != ORIGINAL):
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
            s.blk.h = sp.ph + i0 if not self.crit.const_h else NULL
            s.blk.n = sp.pn + i0
            s.R = 1
            s.pooled = 0
            s.start = sp.start + i0
            s.e_era = sp.era + base
            s.e_g = sp.g + base
            s.e_h = sp.h + base if not self.crit.const_h else NULL
        else:
            s.blk = hist_block(hist, &self.offsets[0], f, self.crit.const_h)
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
                if better(&best_rl.sc, &out.sc, self.crit.split_type):
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
            hb = (s.blk.n[b * s.R + s.pooled] if self.crit.const_h
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
        cdef bint const_h = self.crit.const_h
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
                sc = score_candidate(&self.crit, s, &p, node, NULL, NULL)
                if better(&sc, &best.sc, self.crit.split_type):
                    keep(best, s, &p, &sc)
                    changed = True
        if K > 0:
            if s.sparse:
                changed = score_per_era_sparse(&self.crit, s, fs, node, K, best)
            else:
                changed = score_per_era(&self.crit, s, fs, node, K, best)
        return changed
