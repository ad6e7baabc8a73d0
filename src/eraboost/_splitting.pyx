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
from libc.math cimport INFINITY
from ._criteria cimport (score, era_gain_direction, boltzmann, newton_value,
                         era_variance, rate_ratio, ratio_spread)


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
    free(sc.era_off)
    free(sc.pooled)
    free(sc.cg)
    free(sc.cn)
    free(sc.dirs)
    free(sc.dirty)
    sc.era_off = NULL
    sc.pooled = NULL
    sc.cg = NULL
    sc.cn = NULL
    sc.dirs = NULL
    sc.dirty = NULL


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


cdef enum:
    CHUNK = 8            # candidates whose per-era sums are gathered at once


cdef struct cand_scratch:
    const hist_t *pooled  # (bins,) the block's pooled row
    unsigned int *cbin   # candidate k: its bin (lowest among equal partitions)
    unsigned int *scan   # candidate k: the bin where the scan evaluated it
    uint32_t *cnL        # candidate k: pooled left count
    double *cGL          # candidate k: pooled left sums
    double *cHL
    double *rg           # era i: sums of the scanned side so far
    double *rh
    double *rn
    double *tn           # era i: its row count in the node
    double *gains        # (M,): per-era gains of the current candidate
    double *cg           # (CHUNK, stride): per-era sums of a chunk of candidates
    double *ch
    double *cn
    size_t stride        # distance between two rows of cg, ch, cn


cdef bint cand_alloc(cand_scratch *cs, unsigned int nb, int M) noexcept nogil:
    """Two allocations: the unsigned and the double arrays."""
    cdef size_t m = M
    # rows of cg, ch, cn are M + 8 apart (an odd number of cache lines when
    # M is a power of two): stores to the CHUNK rows of one era do not all
    # fall in the same cache set
    cs.stride = m + 8
    cs.cbin = <unsigned int *> malloc(3 * nb * sizeof(unsigned int))
    cs.cGL = <double *> malloc((2 * nb + 5 * m + 3 * CHUNK * cs.stride + 16)
                               * sizeof(double))
    if cs.cbin == NULL or cs.cGL == NULL:
        cand_free(cs)
        return False
    cs.scan = cs.cbin + nb
    cs.cnL = <uint32_t *> (cs.cbin + 2 * nb)
    cs.cHL = cs.cGL + nb
    cs.rg = cs.cGL + 2 * nb
    cs.rh = cs.rg + m
    cs.rn = cs.rg + 2 * m
    cs.tn = cs.rg + 3 * m
    cs.gains = cs.rg + 4 * m
    cs.cg = cs.rg + 5 * m
    cs.ch = cs.cg + CHUNK * cs.stride + 8
    cs.cn = cs.ch + CHUNK * cs.stride + 8
    return True


cdef inline void cand_push(cand_scratch *cs, int k, unsigned int b,
                           unsigned int scan_bin, double GL, double HL,
                           uint32_t nL) noexcept nogil:
    cs.cbin[k] = b
    cs.scan[k] = scan_bin
    cs.cGL[k] = GL
    cs.cHL[k] = HL
    cs.cnL[k] = nL


cdef void cand_free(cand_scratch *cs) noexcept nogil:
    free(cs.cbin)
    free(cs.cGL)
    cs.cbin = NULL
    cs.cGL = NULL


cdef extern from *:
    """
    /* Per-era gains of one candidate from the sums of its scanned side: the
       same values as era_gain_direction in _criteria.pxd (gain 0 and no
       direction for an era with an empty side), written without branches so
       that the loop runs on SIMD lanes (and on AVX2 where the CPU has it).
       Returns the sum over eras of sign(v_other - v_scanned), the directions
       when the scanned side is the left one; *gsum receives the sum of the
       gains, added in four interleaved partial sums (eras i = l mod 4 in
       lane l, lanes combined as (l0 + l1) + (l2 + l3)). */
    #if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) \
        && defined(__linux__)
    #define EB_MULTIVERSION __attribute__((target_clones("avx2", "default"), \
        optimize("no-trapping-math")))
    #else
    #define EB_MULTIVERSION
    #endif
    /* one era: its gain into G and its direction into D (a macro, so that
       it is compiled inside each clone of the function below) */
    #define EB_ONE_ERA(i, G, D) do {                                           \
        double gs_ = cg[i], go_ = tg[i] - gs_;                                 \
        double ds_ = ch[i] + lam, dq_ = (th[i] - ch[i]) + lam;                 \
        double ms_ = (double)(ds_ != 0.0), mo_ = (double)(dq_ != 0.0);         \
        double sp_ = (double)(cn[i] != 0.0) * (double)(cn[i] != tn[i]);        \
        double vs_ = gs_ / (ds_ + (1.0 - ms_)) * ms_;                          \
        double vo_ = go_ / (dq_ + (1.0 - mo_)) * mo_;                          \
        (D) = ((int)(vo_ > vs_) - (int)(vo_ < vs_)) * (int)sp_;                \
        (G) = (gs_ * vs_ + go_ * vo_ - ts[i]) * sp_;                           \
    } while (0)
    EB_MULTIVERSION
    static int eb_era_gains_dense(const double *cg, const double *ch,
                                  const double *cn, const double *tg,
                                  const double *th, const double *tn,
                                  const double *ts, double lam, int M,
                                  double *gains, double *gsum)
    {
        int dsum = 0, i, d;
        double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
        for (i = 0; i < M; i++) {
            EB_ONE_ERA(i, gains[i], d);
            dsum += d;
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
        return dsum;
    }
    """
    int era_gains_dense "eb_era_gains_dense" (
        const double *cg, const double *ch, const double *cn, const double *tg,
        const double *th, const double *tn, const double *ts, double lam,
        int M, double *gains, double *gsum) noexcept nogil


cdef inline bint better(const split_t *a, const split_t *b,
                        int split_type) noexcept nogil:
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
        return (
            f"SplitInfo(feature={self.feature_idx}, bin={self.bin_idx}, "
            f"missing_left={self.missing_go_to_left}, gain={self.gain:.6g}, "
            f"crit={self.crit:.6g}, dnum={self.dnum})"
        )


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
    irf_kind : int, default=0
        0: SPEC.md's penalty ``H_node * Var_e CR_e``. 1: the IRF paper's
        classification penalty ``H_node / 2 * (max_e I_e / min_e I_e - 1)``
        (``rate_ratio`` in ``_criteria.pxd``), for gradients ``-w * y`` of a
        0/1 target and hessians ``w``, where the pooled gain is ``H_node / 2``
        times the decrease of weighted Gini impurity. Not for categorical
        features.

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
    cdef int irf_kind
    cdef bint per_era        # scan the per-era histograms
    cdef const uint8_t[::1] is_categorical

    def __init__(self, n_bins, offsets, int n_eras, has_missing_values,
                 monotonic_cst, int split_type, double alpha,
                 double l2_regularization, double min_hessian_to_split,
                 unsigned int min_samples_leaf, bint hessians_are_constant,
                 int n_threads, is_categorical=None, double irf_penalty=0.0,
                 unsigned int min_samples_leaf_per_era=0, int irf_kind=0):
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
        if irf_kind not in (0, 1):
            raise ValueError(f"irf_kind must be 0 or 1, got {irf_kind}")
        if irf_kind == 1 and np.any(self.is_categorical):
            raise ValueError("irf_kind=1 does not support categorical features")
        self.irf_kind = irf_kind

    def find_node_split(self, unsigned int n_samples, const hist_t[::1] hist,
                        double sum_gradients, double sum_hessians, double value,
                        double lower_bound, double upper_bound,
                        const uint32_t[::1] features, const uint8_t[::1] sampled):
        """Best split over ``features`` (those with ``sampled[k]`` set).

        Returns a :class:`SplitInfo`; ``found`` is False when no candidate is
        eligible.
        """
        cdef int n_feat = features.shape[0], k, best = 0, M = 0, e, f0, i, nt
        cdef split_t *infos = <split_t *> calloc(max(n_feat, 1), sizeof(split_t))
        cdef int32_t *present = <int32_t *> malloc(
            max(self.n_eras, 1) * sizeof(int32_t))
        # per-era totals of the node: g, h, score (doubles) and counts
        cdef double *tot = <double *> calloc(
            3 * max(self.n_eras, 1), sizeof(double))
        cdef uint32_t *tot_n = <uint32_t *> calloc(
            max(self.n_eras, 1), sizeof(uint32_t))
        cdef const hist_t *c
        cdef uint32_t cnt
        cdef unsigned int b
        cdef double loss_node
        if infos == NULL or present == NULL or tot == NULL or tot_n == NULL:
            free(infos)
            free(present)
            free(tot)
            free(tot_n)
            raise MemoryError()
        try:
            with nogil:
                # Eras present in the node: those with rows in the first feature.
                if self.per_era and n_feat > 0:
                    f0 = features[0]
                    for e in range(self.n_eras):
                        cnt = 0
                        for b in range(self.n_bins[f0]):
                            cnt = cnt + hist[
                                self.offsets[f0] + e * self.n_bins[f0] + b].n
                        if cnt > 0:
                            present[M] = e
                            M = M + 1
                    # their totals (every feature's histogram holds the same rows)
                    for i in range(M):
                        for b in range(self.n_bins[f0]):
                            c = &hist[self.offsets[f0]
                                      + present[i] * self.n_bins[f0] + b]
                            if c.n:
                                tot[i] += c.g
                                tot[M + i] += (<double>c.n) if self.const_h else c.h
                                tot_n[i] += c.n
                        tot[2 * M + i] = score(tot[i], tot[M + i], self.lam)
                else:
                    present[0] = 0
                    M = 1
                loss_node = sum_gradients * value
                # a small histogram is scanned on one thread (waking the
                # others costs more); the choice does not depend on it
                nt = (self.n_threads
                      if self.offsets[self.offsets.shape[0] - 1] >= 16384 else 1)
                for k in prange(n_feat, schedule='dynamic', num_threads=nt):
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
        GL = 0.0
        HL = 0.0
        nL = 0
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
            GR = 0.0
            HR = 0.0
            nR = 0
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
                GL = 0.0
                HL = 0.0
                nL = 0
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
        """Era criteria on a per-era histogram, candidates first.

        The pooled constraints pick the candidate bins from the block's pooled
        row, as scikit-learn's scan does (empty bins give the same partition
        as their neighbour and are skipped; the scan stops where the other
        side gets too small). Then :meth:`_era_candidates` computes every
        present era's gain at each candidate, walking each era's contiguous
        bins once, and scores the candidates in scan order, with the same
        tie rules as a candidate-by-candidate scan. The block's pooled row
        (``_histogram.pyx``) must be there when ``n_eras > 1``.
        """
        cdef unsigned int nb = self.n_bins[f]
        cdef unsigned int nbnm = nb - 1
        cdef bint miss = self.has_missing[f]
        cdef signed char mono = self.monotonic_cst[f]
        cdef const hist_t *base = &hist[self.offsets[f]]
        cdef unsigned int b, end, nL, nR
        cdef int j, st, K
        cdef double GL, HL, GR, HR
        cdef split_t best_lr, best_rl
        cdef cand_scratch cs
        best_lr.found = 0
        best_rl.found = 0
        out.found = 0
        if nbnm < 1 or M < 1:
            return
        if not cand_alloc(&cs, nb, M):
            return
        # the pooled row of the block (see _histogram.pyx)
        cs.pooled = base + (self.n_eras * <int64_t>nb if self.n_eras > 1 else 0)

        # Left to right: missing values go right.
        end = nbnm - 1 + miss
        GL = 0.0
        HL = 0.0
        nL = 0
        K = 0
        for b in range(end):
            if cs.pooled[b].n == 0:
                continue   # same partition as the previous bin
            nL = nL + cs.pooled[b].n
            nR = n_samples - nL
            HL = HL + (cs.pooled[b].n if self.const_h else cs.pooled[b].h)
            HR = H - HL
            GL = GL + cs.pooled[b].g
            GR = G - GL
            st = self._constraints(nL, nR, HL, HR)
            if st == CONTINUE:
                continue
            if st == BREAK:
                break
            cand_push(&cs, K, b, b, GL, HL, nL)
            K = K + 1
        if K > 0:
            self._era_candidates(&cs, base, nb, present, tot, tot_n, M, K, True,
                                 G, H, mono, lower, upper, &best_lr)

        # Right to left: missing values go left.
        if miss and nbnm >= 2:
            GR = 0.0
            HR = 0.0
            nR = 0
            K = 0
            for j in range(<int>nbnm - 2, -1, -1):
                b = <unsigned int>j
                if cs.pooled[b + 1].n == 0:
                    # same partition as bin b + 1: among equals keep the lowest bin
                    if K > 0 and cs.cbin[K - 1] == b + 1:
                        cs.cbin[K - 1] = b
                    continue
                nR = nR + cs.pooled[b + 1].n
                nL = n_samples - nR
                HR = HR + (cs.pooled[b + 1].n if self.const_h else cs.pooled[b + 1].h)
                HL = H - HR
                GR = GR + cs.pooled[b + 1].g
                GL = G - GR
                st = self._constraints(nR, nL, HR, HL)
                if st == CONTINUE:
                    continue
                if st == BREAK:
                    break
                cand_push(&cs, K, b, b, GL, HL, nL)
                K = K + 1
            if K > 0:
                self._era_candidates(&cs, base, nb, present, tot, tot_n, M, K,
                                     False, G, H, mono, lower, upper, &best_rl)
        if better(&best_rl, &best_lr, self.split_type):
            out[0] = best_rl
        else:
            out[0] = best_lr
        cand_free(&cs)

    cdef void _era_candidates(self, cand_scratch *cs, const hist_t *base,
                              unsigned int nb, const int32_t *present,
                              const double *tot, const uint32_t *tot_n, int M,
                              int K, bint left_to_right, double G, double H,
                              signed char mono, double lower, double upper,
                              split_t *best) noexcept nogil:
        """Score the K candidates of one scan direction; keep the best.

        Left to right, candidate k's scanned side is bins ``0 .. scan[k]``
        (its left side); right to left it is bins ``scan[k] + 1 .. nb - 2``
        (its right side; the missing-value bin is on the left). For a chunk
        of candidates, the eras' scanned-side sums at each candidate are the
        previous candidate's plus the bins in between, added for all eras at
        once; then, candidate by candidate, the gains of all eras are
        computed in one branch-free loop (:func:`era_gains_dense`) and the
        candidate is scored.
        """
        cdef int i, k, k0, k1, dsum
        cdef int b, stop
        cdef double gsum
        cdef bint const_h = self.const_h
        cdef const hist_t *c
        cdef double *pg
        cdef double *ph
        cdef double *pn
        cdef double *qg
        cdef double *qh
        cdef double *qn
        cdef int64_t off
        cdef split_t cand_tmp
        for i in range(M):
            cs.rg[i] = 0.0
            cs.rh[i] = 0.0
            cs.rn[i] = 0.0
            cs.tn[i] = tot_n[i]
        # next bin to add to the scanned side (the same for every era)
        b = 0 if left_to_right else <int>nb - 2
        k0 = 0
        while k0 < K:
            k1 = min(K, k0 + CHUNK)
            # the eras' scanned-side sums at the chunk's candidates: row k is
            # row k - 1 plus the bins between the two candidates, added for
            # all eras at once (independent eras, no branch)
            for k in range(k0, k1):
                qg = &cs.cg[(k - k0) * cs.stride]
                qh = &cs.ch[(k - k0) * cs.stride]
                qn = &cs.cn[(k - k0) * cs.stride]
                if k == k0:
                    pg = cs.rg
                    ph = cs.rh
                    pn = cs.rn
                else:
                    pg = qg - cs.stride
                    ph = qh - cs.stride
                    pn = qn - cs.stride
                for i in range(M):
                    qg[i] = pg[i]
                    qh[i] = ph[i]
                    qn[i] = pn[i]
                stop = <int>cs.scan[k]
                while (b <= stop) if left_to_right else (b > stop):
                    for i in range(M):
                        c = base + present[i] * <int64_t>nb + b
                        qg[i] += c.g
                        qh[i] += (<double>c.n) if const_h else c.h
                        qn[i] += c.n
                    b = b + 1 if left_to_right else b - 1
            off = (k1 - 1 - k0) * cs.stride
            for i in range(M):
                cs.rg[i] = cs.cg[off + i]
                cs.rh[i] = cs.ch[off + i]
                cs.rn[i] = cs.cn[off + i]
            # per candidate: the gains of all eras, then its score
            for k in range(k0, k1):
                dsum = era_gains_dense(&cs.cg[(k - k0) * cs.stride],
                                       &cs.ch[(k - k0) * cs.stride],
                                       &cs.cn[(k - k0) * cs.stride], tot, tot + M,
                                       cs.tn, tot + 2 * M, self.lam, M, cs.gains,
                                       &gsum)
                self._era_cand(&cand_tmp, cs, k, not left_to_right, G, H, mono,
                               lower, upper, M, dsum if left_to_right else -dsum,
                               gsum, (k - k0) * cs.stride, tot)
                if left_to_right:
                    if better(&cand_tmp, best, self.split_type):
                        best[0] = cand_tmp
                # descending bins: >= keeps the lowest bin among equals
                elif cand_tmp.found and not better(best, &cand_tmp, self.split_type):
                    best[0] = cand_tmp
            k0 = k1

    cdef inline void _era_cand(self, split_t *c, cand_scratch *cs, int k,
                               uint8_t missing_left, double G, double H,
                               signed char mono, double lower, double upper,
                               int M, int dsum, double gsum, size_t row,
                               const double *tot) noexcept nogil:
        """Score candidate k from the per-era gains in ``cs.gains`` (their
        sum ``gsum`` gives the mean, alpha = 0, in one division).

        ``row`` locates the candidate's per-era scanned-side sums in
        ``cs.cg``, ``cs.ch``, ``cs.cn`` (the right side when
        ``missing_left``, i.e. right to left), for the per-era minimum and
        the invariance penalty."""
        cdef double GL = cs.cGL[k], HL = cs.cHL[k]
        cdef double GR = G - GL, HR = H - HL, vL, vR
        cdef const double *qn = &cs.cn[row]
        cdef double m = self.min_per_era
        cdef int i
        c.bin = cs.cbin[k]
        c.missing_left = missing_left
        c.GL = GL
        c.HL = HL
        c.nL = cs.cnL[k]
        c.found = 0
        c.dnum = 0
        c.crit = 0.0
        if self.min_per_era:
            for i in range(M):
                if qn[i] < m or cs.tn[i] - qn[i] < m:
                    return
        vL = node_value(GL, HL, lower, upper, self.lam)
        vR = node_value(GR, HR, lower, upper, self.lam)
        if (mono == 1 and vL > vR) or (mono == -1 and vL < vR):
            return
        c.gain = (score(GL, HL, self.lam) + score(GR, HR, self.lam)
                  - score(GL + GR, HL + HR, self.lam))
        if self.split_type == 2:
            c.dnum = dsum if dsum >= 0 else -dsum
            if c.dnum == 0 or not c.gain > 0.0:
                return
        if self.split_type == 0:
            c.crit = c.gain
        elif self.alpha == 0.0:
            c.crit = gsum / M
        else:
            c.crit = boltzmann(cs.gains, M, self.alpha)
        if self.irf_penalty > 0.0 and self.irf_kind == 0:
            c.crit -= self.irf_penalty * (HL + HR) * self._left_value_variance(
                &cs.cg[row], &cs.ch[row], qn, tot, cs.tn, M, not missing_left)
        elif self.irf_penalty > 0.0:
            c.crit -= self.irf_penalty * 0.5 * (HL + HR) * self._left_rate_spread(
                &cs.cg[row], &cs.ch[row], tot, M, not missing_left)
        if self.split_type == 2:
            c.found = 1
        else:
            c.found = c.crit > 0.0

    cdef inline double _left_value_variance(self, const double *qg,
                                            const double *qh, const double *qn,
                                            const double *tot, const double *tn,
                                            int M, bint scanned_is_left) noexcept nogil:
        """Var_e CR_e of SPEC.md from the scanned-side sums of each era (see
        ``era_variance`` in ``_criteria.pxd``: population variance over the
        eras with rows on the left, two passes, 0 with fewer than two)."""
        cdef int i, pass_, n_left = 0
        cdef double gL, hL, nl, cr, mean = 0.0, acc = 0.0
        for pass_ in range(2):
            for i in range(M):
                if scanned_is_left:
                    gL = qg[i]
                    hL = qh[i]
                    nl = qn[i]
                else:
                    gL = tot[i] - qg[i]
                    hL = tot[M + i] - qh[i]
                    nl = tn[i] - qn[i]
                if nl <= 0.0:
                    continue
                cr = (newton_value(gL, hL, self.lam)
                      - newton_value(tot[i], tot[M + i], self.lam))
                if pass_ == 0:
                    mean += cr
                    n_left += 1
                else:
                    acc += (cr - mean) * (cr - mean)
            if n_left < 2:
                return 0.0
            if pass_ == 0:
                mean /= n_left
        return acc / n_left

    cdef inline double _left_rate_spread(self, const double *qg,
                                         const double *qh, const double *tot,
                                         int M, bint scanned_is_left) noexcept nogil:
        """IRF's classification penalty ``max_e I_e / min_e I_e - 1`` over the
        M eras of the node, from the scanned-side sums: with gradients
        ``-w * y`` (y in {0, 1}) and hessians ``w``, an era's positive rows
        going left are ``-G_Le`` and all its rows ``H_Le``."""
        cdef int i
        cdef double gL, hL, pos, posL, negL, r, lo = INFINITY, hi = 0.0
        if M < 2:
            return 0.0
        for i in range(M):
            if scanned_is_left:
                gL = qg[i]
                hL = qh[i]
            else:
                gL = tot[i] - qg[i]
                hL = tot[M + i] - qh[i]
            posL = max(-gL, 0.0)
            negL = max(hL - posL, 0.0)
            pos = max(-tot[i], 0.0)
            r = rate_ratio(posL, negL, pos, max(tot[M + i] - pos, 0.0))
            lo = min(lo, r)
            hi = max(hi, r)
        return ratio_spread(lo, hi)

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
                gL = sc.cg[i]
                hL = sc.ch[i]
                nl = sc.cn[i]
                gR = sc.tg[i] - gL
                hR = sc.th[i] - hL
                nr = sc.tn[i] - nl
            else:
                gR = sc.cg[i]
                hR = sc.ch[i]
                nr = sc.cn[i]
                gL = sc.tg[i] - gR
                hL = sc.th[i] - hR
                nl = sc.tn[i] - nr
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
    cdef Py_ssize_t i, lo, hi, nl, nr, pos_l, pos_r, total_left = 0
    cdef uint32_t row
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
                if goes_left[col[row]]:
                    buffer[lo + nl] = row
                    nl = nl + 1
                else:
                    buffer[hi - 1 - nr] = row
                    nr = nr + 1
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
