"""Split finding on per-era histograms, and the partition of a node's rows.

For each feature the splitter scans the bins left to right (missing values go
right) and, when the feature has missing values, right to left (missing values
go left), exactly as scikit-learn does. Pooled constraints (min_samples_leaf,
min hessian, monotonic bounds) filter candidates; the criterion then scores
each one from the per-era cumulative sums (``_criteria.pxd``):

* original (0): pooled gain, scikit-learn's formula;
* era (1): Boltzmann operator of the per-era gains, eligible when > 0;
* directional (2): |sum_e d_e|, eligible when > 0 and the pooled gain > 0,
  ties broken by the era score, then the pooled gain.

Ties that remain go to the first candidate in the scan order: lowest feature
(in the order of ``features``), left-to-right scan, lowest bin.

Categorical features (``_scan_categorical``) are split into two sets of
categories: the categories are ordered by scikit-learn's pooled statistic and
each prefix of that order (from either end) is a candidate, scored by the
same criteria.
"""
from cython.parallel import prange
import numpy as np
from libc.stdlib cimport malloc, free, calloc, qsort
from libc.string cimport memcpy

from ._common cimport (hist_t, BIN_t, uint8_t, uint32_t, int32_t, int64_t,
                      in_bitset, set_bitset)
from ._criteria cimport (score, era_gain_direction, boltzmann, newton_value,
                         era_variance)


cdef enum:
    OK = 0
    CONTINUE = 1
    BREAK = 2


cdef struct split_t:
    int found
    int feature
    int bin
    uint8_t missing_left
    double gain          # pooled gain
    double crit          # criterion score: gain, S_era, or S_era (directional)
    int dnum             # directional: |sum_e d_e|
    double GL
    double HL
    uint32_t nL
    uint8_t is_cat       # categorical split: the left bins are in cat_bitset
    uint32_t cat_bitset[8]


cdef struct eras_scratch:
    const hist_t *base   # the feature's block of the node's histogram
    int64_t *era_off     # offset of each present era's bins in the block
    hist_t *pooled       # (bins,) pooled over eras
    double *cg           # per-era cumulative g, h of the scanned side
    double *ch
    uint32_t *cn
    double *tg           # per-era totals and their score
    double *th
    uint32_t *tn
    double *ts
    double *gains        # per-era gain of the current candidate
    signed char *dirs    # per-era direction of the current candidate
    signed char *dirty_flag
    int *dirty           # eras whose cumulative sums changed
    int n_dirty
    int dsum
    double *cr           # invariance penalty: per-era change of value going left
    signed char *cr_ok   # ... defined (the era has rows on the left)
    signed char *small   # per-era minimum: the era has too few rows on a side
    int n_small


cdef bint scratch_alloc(eras_scratch *sc, unsigned int nb, int M) noexcept nogil:
    sc.era_off = <int64_t *> malloc(M * sizeof(int64_t))
    sc.pooled = <hist_t *> calloc(nb, sizeof(hist_t))
    sc.cg = <double *> calloc(7 * M, sizeof(double))
    sc.cn = <uint32_t *> calloc(2 * M, sizeof(uint32_t))
    sc.dirs = <signed char *> calloc(4 * M, sizeof(signed char))
    sc.dirty = <int *> malloc(M * sizeof(int))
    if (sc.era_off == NULL or sc.pooled == NULL or sc.cg == NULL or sc.cn == NULL
            or sc.dirs == NULL or sc.dirty == NULL):
        scratch_free(sc)
        return False
    sc.ch = sc.cg + M
    sc.tg = sc.cg + 2 * M
    sc.th = sc.cg + 3 * M
    sc.ts = sc.cg + 4 * M
    sc.gains = sc.cg + 5 * M
    sc.cr = sc.cg + 6 * M
    sc.tn = sc.cn + M
    sc.dirty_flag = sc.dirs + M
    sc.cr_ok = sc.dirs + 2 * M
    sc.small = sc.dirs + 3 * M
    return True


cdef void scratch_reset(eras_scratch *sc, int M, bint cum_is_left,
                        bint per_era_min) noexcept nogil:
    """An empty scanned side: every era unsplit, all its rows on the other
    side. Its value change going left is undefined when the left side is the
    empty one, and exactly 0 when the whole era goes left."""
    cdef int i
    for i in range(M):
        sc.cg[i] = 0.0
        sc.ch[i] = 0.0
        sc.cn[i] = 0
        sc.gains[i] = 0.0
        sc.dirs[i] = 0
        sc.dirty_flag[i] = 0
        sc.cr[i] = 0.0
        sc.cr_ok[i] = not cum_is_left
        sc.small[i] = per_era_min
    sc.n_dirty = 0
    sc.dsum = 0
    sc.n_small = M if per_era_min else 0


cdef void scratch_free(eras_scratch *sc) noexcept nogil:
    free(sc.era_off); free(sc.pooled); free(sc.cg); free(sc.cn); free(sc.dirs)
    free(sc.dirty)
    sc.era_off = NULL; sc.pooled = NULL; sc.cg = NULL; sc.cn = NULL
    sc.dirs = NULL; sc.dirty = NULL


# Categories need a hessian sum of at least MIN_CAT_SUPPORT (in units of
# rows) to take part in a categorical split, and their order is smoothed by
# it: scikit-learn's constant (LightGBM's cat_smooth).
cdef double MIN_CAT_SUPPORT = 10.0


cdef struct cat_info_t:
    BIN_t bin
    double value         # pooled g / (h + MIN_CAT_SUPPORT) of the category


cdef int cmp_cat_info(const void *a, const void *b) noexcept nogil:
    """Increasing value. Never 0, as scikit-learn's comparator: with the same
    libc qsort, equal values end up in the same order as in scikit-learn."""
    if (<const cat_info_t *>a).value < (<const cat_info_t *>b).value:
        return -1
    return 1


cdef inline bint better(const split_t *a, const split_t *b, int split_type) noexcept nogil:
    """True when candidate a is strictly better than candidate b."""
    if not a.found:
        return False
    if not b.found:
        return True
    if split_type <= 1:
        return a.crit > b.crit
    if a.dnum != b.dnum:
        return a.dnum > b.dnum
    if a.crit != b.crit:
        return a.crit > b.crit
    return a.gain > b.gain


cdef inline double node_value(double G, double H, double lower, double upper,
                              double lam) noexcept nogil:
    """Leaf value from pooled sums, as scikit-learn (bounded for monotonicity)."""
    cdef double v = -G / (H + lam + 1e-15)
    if v < lower:
        v = lower
    elif v > upper:
        v = upper
    return v


cdef inline double pooled_gain_sklearn(double GL, double HL, double GR, double HR,
                                       double loss_node, signed char mono,
                                       double lower, double upper,
                                       double lam) noexcept nogil:
    """scikit-learn's gain, from the node's (bounded) value; -1 if not monotonic."""
    cdef double vL = node_value(GL, HL, lower, upper, lam)
    cdef double vR = node_value(GR, HR, lower, upper, lam)
    if (mono == 1 and vL > vR) or (mono == -1 and vL < vR):
        return -1.0
    return loss_node - GL * vL - GR * vR


class SplitInfo:
    """The best split of a node and the sums of its children."""
    __slots__ = ("found", "gain", "crit", "dnum", "n_eras", "feature_idx",
                 "bin_idx", "missing_go_to_left", "sum_gradient_left",
                 "sum_hessian_left", "sum_gradient_right", "sum_hessian_right",
                 "n_samples_left", "n_samples_right", "value_left", "value_right",
                 "priority", "is_categorical", "left_cat_bitset")

    def __repr__(self):
        return ("SplitInfo(feature={}, bin={}, missing_left={}, gain={:.6g}, "
                "crit={:.6g}, dnum={})".format(self.feature_idx, self.bin_idx,
                                                self.missing_go_to_left, self.gain,
                                                self.crit, self.dnum))


cdef class Splitter:
    """Finds the best split of a node from its per-era histograms.

    Parameters
    ----------
    n_bins : ndarray of uint32 (n_features,)
        Bins per feature including the missing-value bin (the last one).
    offsets : ndarray of int64 (n_features + 1,)
        Histogram layout, see ``_histogram.histogram_layout``.
    n_eras : int
        Eras kept apart in the histograms.
    has_missing_values : ndarray of uint8 (n_features,)
    monotonic_cst : ndarray of int8 (n_features,)
    split_type : int
        0 original, 1 era, 2 directional.
    alpha : float
        Boltzmann alpha.
    l2_regularization, min_hessian_to_split : float
    min_samples_leaf : int
    hessians_are_constant : bool
    n_threads : int
    irf_penalty : float, default=0
        Weight of the invariance penalty (SPEC.md); 0 is off.
    min_samples_leaf_per_era : int, default=0
        Rows every era of the node keeps on each side; 0 is off.

    With a single era and ``split_type=0`` and neither option, candidates are
    scored on the pooled histogram by scikit-learn's scan; otherwise by the
    per-era scan.
    is_categorical : ndarray of uint8 (n_features,) or None
        Categorical features (split by ``_scan_categorical``).
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
    cdef bint per_era        # scan the per-era histograms
    cdef const uint8_t[::1] is_categorical

    def __init__(self, n_bins, offsets, int n_eras, has_missing_values,
                 monotonic_cst, int split_type, double alpha,
                 double l2_regularization, double min_hessian_to_split,
                 unsigned int min_samples_leaf, bint hessians_are_constant,
                 int n_threads, is_categorical=None, double irf_penalty=0.0,
                 unsigned int min_samples_leaf_per_era=0):
        self.n_bins = n_bins
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
        self.per_era = n_eras > 1 and (split_type != 0 or irf_penalty > 0
                                       or min_samples_leaf_per_era > 0)
        if is_categorical is None:
            is_categorical = np.zeros(len(n_bins), dtype=np.uint8)
        self.is_categorical = np.ascontiguousarray(is_categorical, dtype=np.uint8)

    def find_node_split(self, unsigned int n_samples, const hist_t[::1] hist,
                        double sum_gradients, double sum_hessians, double value,
                        double lower_bound, double upper_bound,
                        const uint32_t[::1] features, const uint8_t[::1] sampled):
        """Best split over ``features`` (those with ``sampled[k]`` set).

        Returns a :class:`SplitInfo`; ``found`` is False when no candidate is
        eligible.
        """
        cdef int n_feat = features.shape[0], k, best = 0, M = 0, e, f0, i
        cdef split_t *infos = <split_t *> calloc(max(n_feat, 1), sizeof(split_t))
        cdef int32_t *present = <int32_t *> malloc(max(self.n_eras, 1) * sizeof(int32_t))
        # per-era totals of the node: g, h, score (doubles) and counts
        cdef double *tot = <double *> calloc(3 * max(self.n_eras, 1), sizeof(double))
        cdef uint32_t *tot_n = <uint32_t *> calloc(max(self.n_eras, 1), sizeof(uint32_t))
        cdef const hist_t *c
        cdef uint32_t cnt
        cdef unsigned int b
        cdef double loss_node
        if infos == NULL or present == NULL or tot == NULL or tot_n == NULL:
            free(infos); free(present); free(tot); free(tot_n)
            raise MemoryError()
        try:
            with nogil:
                # Eras present in the node: those with rows in the first feature.
                if self.per_era and n_feat > 0:
                    f0 = features[0]
                    for e in range(self.n_eras):
                        cnt = 0
                        for b in range(self.n_bins[f0]):
                            cnt = cnt + hist[self.offsets[f0] + e * self.n_bins[f0] + b].n
                        if cnt > 0:
                            present[M] = e
                            M = M + 1
                    # their totals (every feature's histogram holds the same rows)
                    for i in range(M):
                        for b in range(self.n_bins[f0]):
                            c = &hist[self.offsets[f0] + present[i] * self.n_bins[f0] + b]
                            if c.n:
                                tot[i] += c.g
                                tot[M + i] += (<double>c.n) if self.const_h else c.h
                                tot_n[i] += c.n
                        tot[2 * M + i] = score(tot[i], tot[M + i], self.lam)
                else:
                    present[0] = 0
                    M = 1
                loss_node = sum_gradients * value
                for k in prange(n_feat, schedule='dynamic', num_threads=self.n_threads):
                    infos[k].found = 0
                    infos[k].feature = features[k]
                    if sampled[k]:
                        self._scan_feature(features[k], hist, n_samples,
                                           sum_gradients, sum_hessians, loss_node,
                                           lower_bound, upper_bound,
                                           present, tot, tot_n, M, &infos[k])
                for k in range(1, n_feat):
                    if better(&infos[k], &infos[best], self.split_type):
                        best = k
            return self._make_info(&infos[best], n_samples, sum_gradients,
                                   sum_hessians, lower_bound, upper_bound, M)
        finally:
            free(infos)
            free(present)
            free(tot)
            free(tot_n)

    cdef object _make_info(self, split_t *s, unsigned int n_samples,
                           double G, double H, double lower, double upper, int M):
        info = SplitInfo()
        info.found = bool(s.found)
        info.is_categorical = bool(s.found and s.is_cat)
        info.left_cat_bitset = None
        if info.is_categorical:
            info.left_cat_bitset = np.array(
                [s.cat_bitset[i] for i in range(8)], dtype=np.uint32)
        info.n_eras = M
        info.feature_idx = s.feature
        info.bin_idx = s.bin
        info.missing_go_to_left = bool(s.missing_left)
        info.gain = s.gain if s.found else -1.0
        info.crit = s.crit if s.found else -1.0
        info.dnum = s.dnum
        info.sum_gradient_left = s.GL
        info.sum_hessian_left = s.HL
        info.sum_gradient_right = G - s.GL
        info.sum_hessian_right = H - s.HL
        info.n_samples_left = s.nL
        info.n_samples_right = n_samples - s.nL
        info.value_left = node_value(s.GL, s.HL, lower, upper, self.lam)
        info.value_right = node_value(G - s.GL, H - s.HL, lower, upper, self.lam)
        if self.split_type <= 1:
            info.priority = (info.crit, 0.0)
        else:
            info.priority = (s.dnum / <double>M if M else 0.0, info.crit)
        return info

    cdef void _scan_feature(self, int f, const hist_t[::1] hist,
                            unsigned int n_samples, double G, double H,
                            double loss_node, double lower, double upper,
                            const int32_t *present, const double *tot,
                            const uint32_t *tot_n, int M,
                            split_t *out) noexcept nogil:
        if self.is_categorical[f]:
            self._scan_categorical(f, hist, n_samples, G, H, loss_node, lower,
                                   upper, present, tot, tot_n, M, out)
        elif not self.per_era:
            self._scan_pooled(f, hist, n_samples, G, H, loss_node, lower, upper, out)
            out.is_cat = 0
        else:
            self._scan_eras(f, hist, n_samples, G, H, lower, upper, present, tot,
                            tot_n, M, out)
            out.is_cat = 0
        out.feature = f

    cdef inline int _constraints(self, unsigned int n_grow, unsigned int n_other,
                                 double h_grow, double h_other) noexcept nogil:
        """Pooled constraints of a candidate, from the side the scan grows.

        CONTINUE while the growing side is too small, BREAK once the other
        side is (scikit-learn's order of checks), else OK.
        """
        if n_grow < self.min_samples_leaf:
            return CONTINUE
        if n_other < self.min_samples_leaf:
            return BREAK
        if h_grow < self.min_hessian:
            return CONTINUE
        if h_other < self.min_hessian:
            return BREAK
        return OK

    cdef void _scan_pooled(self, int f, const hist_t[::1] hist,
                           unsigned int n_samples, double G, double H,
                           double loss_node, double lower, double upper,
                           split_t *out) noexcept nogil:
        """Pooled gain on a pooled histogram: scikit-learn's scan, exactly."""
        cdef unsigned int nbnm = self.n_bins[f] - 1
        cdef bint miss = self.has_missing[f]
        cdef signed char mono = self.monotonic_cst[f]
        cdef const hist_t *ph = &hist[self.offsets[f]]
        cdef unsigned int b, end, nL, nR
        cdef int j, st
        cdef double GL, HL, GR, HR
        cdef split_t cand, best_lr, best_rl
        best_lr.found = 0
        best_rl.found = 0
        out.found = 0
        if nbnm < 1:
            return
        end = nbnm - 1 + miss
        GL = 0.0; HL = 0.0; nL = 0
        for b in range(end):
            nL = nL + ph[b].n
            nR = n_samples - nL
            HL = HL + (ph[b].n if self.const_h else ph[b].h)
            HR = H - HL
            GL = GL + ph[b].g
            GR = G - GL
            st = self._constraints(nL, nR, HL, HR)
            if st == CONTINUE:
                continue
            if st == BREAK:
                break
            self._pooled_candidate(&cand, b, 0, GL, HL, nL, GR, HR, loss_node,
                                   mono, lower, upper)
            if better(&cand, &best_lr, 0):
                best_lr = cand
        if miss and nbnm >= 2:
            GR = 0.0; HR = 0.0; nR = 0
            for j in range(<int>nbnm - 2, -1, -1):
                b = <unsigned int>j
                nR = nR + ph[b + 1].n
                nL = n_samples - nR
                HR = HR + (ph[b + 1].n if self.const_h else ph[b + 1].h)
                HL = H - HR
                GR = GR + ph[b + 1].g
                GL = G - GR
                st = self._constraints(nR, nL, HR, HL)
                if st == CONTINUE:
                    continue
                if st == BREAK:
                    break
                self._pooled_candidate(&cand, b, 1, GL, HL, nL, GR, HR, loss_node,
                                       mono, lower, upper)
                if better(&cand, &best_rl, 0):
                    best_rl = cand
        # scikit-learn's right-to-left scan must beat the left-to-right best
        if best_rl.found and best_rl.gain > (best_lr.gain if best_lr.found else 0.0):
            out[0] = best_rl
        else:
            out[0] = best_lr

    cdef inline void _pooled_candidate(self, split_t *c, unsigned int b,
                                       uint8_t missing_left, double GL, double HL,
                                       unsigned int nL, double GR, double HR,
                                       double loss_node, signed char mono,
                                       double lower, double upper) noexcept nogil:
        c.bin = b
        c.missing_left = missing_left
        c.GL = GL
        c.HL = HL
        c.nL = nL
        c.dnum = 0
        c.gain = pooled_gain_sklearn(GL, HL, GR, HR, loss_node, mono, lower,
                                     upper, self.lam)
        c.crit = c.gain
        c.found = c.gain > 0.0

    cdef void _scan_categorical(self, int f, const hist_t[::1] hist,
                                unsigned int n_samples, double G, double H,
                                double loss_node, double lower, double upper,
                                const int32_t *present, const double *tot,
                                const uint32_t *tot_n, int M,
                                split_t *out) noexcept nogil:
        """Best split of a categorical feature into two sets of categories.

        As scikit-learn: categories (the missing-value bin counts as one)
        with a pooled hessian sum of at least MIN_CAT_SUPPORT rows are
        sorted by pooled ``g / (h + MIN_CAT_SUPPORT)``; the candidates are
        the prefixes of that order from the start, then from the end, each up
        to about half of the categories; the prefix goes left and the
        categories left out of the order always go right.

        Under the era criteria the order stays the pooled one; each prefix
        is scored from its per-era sums (accumulated along the same order)
        exactly as a numeric candidate: S_era, or D then S_era. The pooled
        constraints apply as usual. Among equal candidates the first one in
        this scan order wins.
        """
        cdef unsigned int nb = self.n_bins[f]
        cdef unsigned int nbnm = nb - 1
        cdef bint miss = self.has_missing[f]
        cdef bint per_era = self.per_era
        cdef const hist_t *pooled
        cdef cat_info_t *cats
        cdef unsigned int b, n_used = 0, middle, nL, nR, i, k, best_k = 0
        cdef int d, st, best_d = 0
        cdef double hb, GL, HL, GR, HR, support = n_samples / H
        cdef split_t cand, best
        cdef eras_scratch sc
        cdef const hist_t *c
        best.found = 0
        out.found = 0
        out.is_cat = 0
        if per_era:
            if M < 1 or not scratch_alloc(&sc, nb, M):
                return
            sc.base = &hist[self.offsets[f]]
            sc.tg = <double *> tot
            sc.th = <double *> tot + M
            sc.ts = <double *> tot + 2 * M
            sc.tn = <uint32_t *> tot_n
            for i in range(<unsigned int>M):
                sc.era_off[i] = present[i] * <int64_t>nb
                for b in range(nb):
                    c = &sc.base[sc.era_off[i] + b]
                    sc.pooled[b].g += c.g
                    sc.pooled[b].h += c.h
                    sc.pooled[b].n += c.n
            pooled = sc.pooled
        else:
            pooled = &hist[self.offsets[f]]
        cats = <cat_info_t *> malloc(nb * sizeof(cat_info_t))
        if cats == NULL:
            if per_era:
                scratch_free(&sc)
            return
        # bins 0 .. nbnm - 1 are the categories, bin nbnm the missing values
        for b in range(nbnm + miss):
            hb = pooled[b].n if self.const_h else pooled[b].h
            if hb * support >= MIN_CAT_SUPPORT:
                cats[n_used].bin = <BIN_t>b
                cats[n_used].value = pooled[b].g / (hb + MIN_CAT_SUPPORT)
                n_used = n_used + 1
        if n_used > 1:
            qsort(cats, n_used, sizeof(cat_info_t), cmp_cat_info)
            for d in range(2):
                # from the start: prefixes of up to ceil(n/2) categories;
                # from the end: up to ceil(n/2) - 1
                middle = (n_used + 1) // 2 - d
                GL = 0.0; HL = 0.0; nL = 0
                if per_era:
                    scratch_reset(&sc, M, True, self.min_per_era > 0)
                for i in range(middle):
                    k = i if d == 0 else n_used - 1 - i
                    b = cats[k].bin
                    nL = nL + pooled[b].n
                    nR = n_samples - nL
                    HL = HL + (pooled[b].n if self.const_h else pooled[b].h)
                    HR = H - HL
                    GL = GL + pooled[b].g
                    GR = G - GL
                    if per_era:
                        self._accumulate(&sc, b, M)
                    st = self._constraints(nL, nR, HL, HR)
                    if st == CONTINUE:
                        continue
                    if st == BREAK:
                        break
                    if per_era:
                        self._era_candidate(&cand, &sc, 0, 0, GL, HL, nL, GR, HR,
                                            0, lower, upper, M, True)
                    else:
                        self._pooled_candidate(&cand, 0, 0, GL, HL, nL, GR, HR,
                                               loss_node, 0, lower, upper)
                    if better(&cand, &best, self.split_type):
                        best = cand
                        best_d = d
                        best_k = k
        if best.found:
            best.is_cat = 1
            for i in range(8):
                best.cat_bitset[i] = 0
            if best_d == 0:
                for k in range(best_k + 1):
                    set_bitset(best.cat_bitset, cats[k].bin)
            else:
                for k in range(best_k, n_used):
                    set_bitset(best.cat_bitset, cats[k].bin)
            best.missing_left = miss and in_bitset(best.cat_bitset, nbnm)
            out[0] = best
        free(cats)
        if per_era:
            scratch_free(&sc)

    cdef void _scan_eras(self, int f, const hist_t[::1] hist,
                         unsigned int n_samples, double G, double H,
                         double lower, double upper,
                         const int32_t *present, const double *tot,
                         const uint32_t *tot_n, int M,
                         split_t *out) noexcept nogil:
        """Era criteria on a per-era histogram.

        The cells of the eras present in the node are read in place. A bin
        with no rows gives the same partition as its neighbour and is not
        evaluated again; a per-era gain is recomputed only for the eras whose
        sums changed since the last evaluated candidate.
        """
        cdef unsigned int nb = self.n_bins[f]
        cdef unsigned int nbnm = nb - 1
        cdef bint miss = self.has_missing[f]
        cdef signed char mono = self.monotonic_cst[f]
        cdef int64_t base = self.offsets[f]
        cdef unsigned int b, end, nL, nR
        cdef int i, j, st
        cdef double GL, HL, GR, HR
        cdef split_t cand, best_lr, best_rl
        cdef const hist_t *c
        cdef eras_scratch sc
        best_lr.found = 0
        best_rl.found = 0
        out.found = 0
        if nbnm < 1 or M < 1:
            return
        if not scratch_alloc(&sc, nb, M):
            return
        # pooled bins of the present eras; their totals are the node's
        sc.base = &hist[base]
        sc.tg = <double *> tot
        sc.th = <double *> tot + M
        sc.ts = <double *> tot + 2 * M
        sc.tn = <uint32_t *> tot_n
        for i in range(M):
            sc.era_off[i] = present[i] * <int64_t>nb
            for b in range(nb):
                c = &sc.base[sc.era_off[i] + b]
                sc.pooled[b].g += c.g
                sc.pooled[b].h += c.h
                sc.pooled[b].n += c.n

        # Left to right: missing values go right.
        scratch_reset(&sc, M, True, self.min_per_era > 0)
        end = nbnm - 1 + miss
        GL = 0.0; HL = 0.0; nL = 0
        for b in range(end):
            if sc.pooled[b].n == 0:
                continue   # same partition as the previous bin
            nL = nL + sc.pooled[b].n
            nR = n_samples - nL
            HL = HL + (sc.pooled[b].n if self.const_h else sc.pooled[b].h)
            HR = H - HL
            GL = GL + sc.pooled[b].g
            GR = G - GL
            self._accumulate(&sc, b, M)
            st = self._constraints(nL, nR, HL, HR)
            if st == CONTINUE:
                continue
            if st == BREAK:
                break
            self._era_candidate(&cand, &sc, b, 0, GL, HL, nL, GR, HR, mono,
                                lower, upper, M, True)
            if better(&cand, &best_lr, self.split_type):
                best_lr = cand

        # Right to left: missing values go left.
        if miss and nbnm >= 2:
            scratch_reset(&sc, M, False, self.min_per_era > 0)
            GR = 0.0; HR = 0.0; nR = 0
            for j in range(<int>nbnm - 2, -1, -1):
                b = <unsigned int>j
                if sc.pooled[b + 1].n == 0:
                    # same partition as bin b + 1: among equals keep the lowest bin
                    if best_rl.found and best_rl.bin == b + 1:
                        best_rl.bin = b
                    continue
                nR = nR + sc.pooled[b + 1].n
                nL = n_samples - nR
                HR = HR + (sc.pooled[b + 1].n if self.const_h else sc.pooled[b + 1].h)
                HL = H - HR
                GR = GR + sc.pooled[b + 1].g
                GL = G - GR
                self._accumulate(&sc, b + 1, M)
                st = self._constraints(nR, nL, HR, HL)
                if st == CONTINUE:
                    continue
                if st == BREAK:
                    break
                self._era_candidate(&cand, &sc, b, 1, GL, HL, nL, GR, HR, mono,
                                    lower, upper, M, False)
                # descending bins: >= keeps the lowest bin among equals
                if cand.found and not better(&best_rl, &cand, self.split_type):
                    best_rl = cand
        if better(&best_rl, &best_lr, self.split_type):
            out[0] = best_rl
        else:
            out[0] = best_lr
        scratch_free(&sc)

    cdef inline void _accumulate(self, eras_scratch *sc, unsigned int b,
                                 int M) noexcept nogil:
        """Add bin b to the per-era cumulative sums; mark changed eras."""
        cdef int i
        cdef const hist_t *c
        for i in range(M):
            c = &sc.base[sc.era_off[i] + b]
            if c.n:
                sc.cg[i] += c.g
                sc.ch[i] += (<double>c.n) if self.const_h else c.h
                sc.cn[i] += c.n
                if not sc.dirty_flag[i]:
                    sc.dirty_flag[i] = 1
                    sc.dirty[sc.n_dirty] = i
                    sc.n_dirty += 1

    cdef inline void _era_candidate(self, split_t *c, eras_scratch *sc,
                                    unsigned int b, uint8_t missing_left,
                                    double GL, double HL, unsigned int nL,
                                    double GR, double HR, signed char mono,
                                    double lower, double upper, int M,
                                    bint cum_is_left) noexcept nogil:
        """Score a candidate from the per-era cumulative sums (of the left side
        if ``cum_is_left``, else of the right side)."""
        cdef int k, i, d
        cdef signed char small
        cdef double gL, hL, gR, hR, vL, vR
        cdef unsigned int nl, nr
        c.bin = b
        c.missing_left = missing_left
        c.GL = GL
        c.HL = HL
        c.nL = nL
        c.found = 0
        c.dnum = 0
        c.crit = 0.0
        # refresh the per-era gains and directions of the eras that changed
        for k in range(sc.n_dirty):
            i = sc.dirty[k]
            sc.dirty_flag[i] = 0
            if cum_is_left:
                gL = sc.cg[i]; hL = sc.ch[i]; nl = sc.cn[i]
                gR = sc.tg[i] - gL; hR = sc.th[i] - hL; nr = sc.tn[i] - nl
            else:
                gR = sc.cg[i]; hR = sc.ch[i]; nr = sc.cn[i]
                gL = sc.tg[i] - gR; hL = sc.th[i] - hR; nl = sc.tn[i] - nr
            sc.gains[i] = era_gain_direction(gL, hL, nl, gR, hR, nr, sc.ts[i],
                                             self.lam, &d)
            sc.dsum += d - sc.dirs[i]
            sc.dirs[i] = d
            if self.min_per_era:
                small = nl < self.min_per_era or nr < self.min_per_era
                sc.n_small += small - sc.small[i]
                sc.small[i] = small
            if self.irf_penalty > 0.0:
                sc.cr_ok[i] = nl > 0
                if nl > 0:
                    sc.cr[i] = (newton_value(gL, hL, self.lam)
                                - newton_value(sc.tg[i], sc.th[i], self.lam))
        sc.n_dirty = 0
        if sc.n_small:
            return
        vL = node_value(GL, HL, lower, upper, self.lam)
        vR = node_value(GR, HR, lower, upper, self.lam)
        if (mono == 1 and vL > vR) or (mono == -1 and vL < vR):
            return
        c.gain = (score(GL, HL, self.lam) + score(GR, HR, self.lam)
                  - score(GL + GR, HL + HR, self.lam))
        if self.split_type == 2:
            c.dnum = sc.dsum if sc.dsum >= 0 else -sc.dsum
            if c.dnum == 0 or not c.gain > 0.0:
                return
        if self.split_type == 0:
            c.crit = c.gain
        else:
            c.crit = boltzmann(sc.gains, M, self.alpha)
        if self.irf_penalty > 0.0:
            c.crit -= self.irf_penalty * (HL + HR) * era_variance(sc.cr, sc.cr_ok, M)
        if self.split_type == 2:
            c.found = 1
        else:
            c.found = c.crit > 0.0


def split_indices(const BIN_t[::1, :] X_binned, int feature, unsigned int bin_idx,
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


def split_indices_categorical(const BIN_t[::1, :] X_binned, int feature,
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


cdef Py_ssize_t _partition(const BIN_t[::1] col, const uint8_t *goes_left,
                           uint32_t[::1] sample_indices, uint32_t[::1] buffer,
                           int n_threads) except -1:
    """Stable in-place partition of the rows by ``goes_left[bin]``."""
    cdef Py_ssize_t n = sample_indices.shape[0]
    cdef int t, nt = n_threads if n >= 4096 * n_threads else 1
    cdef Py_ssize_t chunk = (n + nt - 1) // nt if nt > 0 else n
    cdef Py_ssize_t *nleft = <Py_ssize_t *> calloc(nt + 1, sizeof(Py_ssize_t))
    cdef Py_ssize_t *nright = <Py_ssize_t *> calloc(nt + 1, sizeof(Py_ssize_t))
    cdef Py_ssize_t i, lo, hi, l, r, pos_l, pos_r, total_left = 0
    cdef uint32_t row
    if nleft == NULL or nright == NULL:
        free(nleft); free(nright)
        raise MemoryError()
    with nogil:
        for t in prange(nt, schedule='static', chunksize=1, num_threads=nt):
            lo = t * chunk
            hi = min(n, lo + chunk)
            l = 0
            r = 0
            # left rows go to the front of the chunk in buffer, right rows to
            # the back (reversed), then are copied out in order
            for i in range(lo, hi):
                row = sample_indices[i]
                if goes_left[col[row]]:
                    buffer[lo + l] = row
                    l = l + 1
                else:
                    buffer[hi - 1 - r] = row
                    r = r + 1
            nleft[t] = l
            nright[t] = r
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
