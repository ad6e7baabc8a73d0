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
"""
from cython.parallel import prange
from libc.stdlib cimport malloc, free, calloc
from libc.string cimport memcpy
from libc.math cimport INFINITY
import numpy as np

from ._common cimport hist_t, BIN_t, uint8_t, uint32_t, int32_t, int64_t
from ._criteria cimport score, era_gain, era_direction, boltzmann


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


cdef inline bint better(const split_t *a, const split_t *b, int split_type) noexcept nogil:
    """True when candidate a is strictly better than candidate b."""
    if not a.found:
        return False
    if not b.found:
        return True
    if split_type == 0:
        return a.gain > b.gain
    if split_type == 1:
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
                 "priority", "is_categorical")

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

    def __init__(self, n_bins, offsets, int n_eras, has_missing_values,
                 monotonic_cst, int split_type, double alpha,
                 double l2_regularization, double min_hessian_to_split,
                 unsigned int min_samples_leaf, bint hessians_are_constant,
                 int n_threads):
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

    def find_node_split(self, unsigned int n_samples, const hist_t[::1] hist,
                        double sum_gradients, double sum_hessians, double value,
                        double lower_bound, double upper_bound,
                        const uint32_t[::1] features, const uint8_t[::1] sampled):
        """Best split over ``features`` (those with ``sampled[k]`` set).

        Returns a :class:`SplitInfo`; ``found`` is False when no candidate is
        eligible.
        """
        cdef int n_feat = features.shape[0], k, best = 0, M = 0, e, f0
        cdef split_t *infos = <split_t *> calloc(max(n_feat, 1), sizeof(split_t))
        cdef int32_t *present = <int32_t *> malloc(max(self.n_eras, 1) * sizeof(int32_t))
        cdef uint32_t cnt
        cdef unsigned int b
        cdef double loss_node
        if infos == NULL or present == NULL:
            free(infos); free(present)
            raise MemoryError()
        try:
            with nogil:
                # Eras present in the node: those with rows in the first feature.
                if self.n_eras > 1 and n_feat > 0:
                    f0 = features[0]
                    for e in range(self.n_eras):
                        cnt = 0
                        for b in range(self.n_bins[f0]):
                            cnt = cnt + hist[self.offsets[f0] + e * self.n_bins[f0] + b].n
                        if cnt > 0:
                            present[M] = e
                            M = M + 1
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
                                           present, M, &infos[k])
                for k in range(1, n_feat):
                    if better(&infos[k], &infos[best], self.split_type):
                        best = k
            return self._make_info(&infos[best], n_samples, sum_gradients,
                                   sum_hessians, lower_bound, upper_bound, M)
        finally:
            free(infos)
            free(present)

    cdef object _make_info(self, split_t *s, unsigned int n_samples,
                           double G, double H, double lower, double upper, int M):
        info = SplitInfo()
        info.found = bool(s.found)
        info.is_categorical = False
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
        if self.split_type == 0:
            info.priority = (info.gain, 0.0)
        elif self.split_type == 1:
            info.priority = (info.crit, 0.0)
        else:
            info.priority = (s.dnum / <double>M if M else 0.0, info.crit)
        return info

    cdef void _scan_feature(self, int f, const hist_t[::1] hist,
                            unsigned int n_samples, double G, double H,
                            double loss_node, double lower, double upper,
                            const int32_t *present, int M,
                            split_t *out) noexcept nogil:
        cdef unsigned int nb = self.n_bins[f]          # incl. missing bin
        cdef unsigned int nbnm = nb - 1                # non-missing bins
        cdef bint miss = self.has_missing[f]
        cdef signed char mono = self.monotonic_cst[f]
        cdef int64_t base = self.offsets[f]
        cdef bint per_era = self.split_type != 0
        cdef hist_t *pooled = NULL
        cdef double *era_buf = NULL
        cdef uint32_t *era_n = NULL
        cdef const hist_t *ph
        cdef const hist_t *eh
        cdef unsigned int b, end, nL, nR
        cdef int i, e, j
        cdef double GL, HL, GR, HR, gain
        cdef split_t cand, best_lr, best_rl
        # per-era scratch: cumulative g, h; totals g, h, score; gains
        cdef double *cg
        cdef double *ch
        cdef double *tg
        cdef double *th
        cdef double *ts
        cdef double *gains
        cdef uint32_t *cn
        cdef uint32_t *tn

        best_lr.found = 0
        best_rl.found = 0
        if nbnm < 1:
            out.found = 0
            return

        # Pooled histogram of the feature.
        if self.n_eras == 1:
            ph = &hist[base]
        else:
            pooled = <hist_t *> calloc(nb, sizeof(hist_t))
            for b in range(nb):
                for i in range(M):
                    eh = &hist[base + present[i] * nb + b]
                    pooled[b].g += eh.g
                    pooled[b].h += eh.h
                    pooled[b].n += eh.n
            ph = pooled
        if per_era:
            era_buf = <double *> malloc(6 * M * sizeof(double))
            era_n = <uint32_t *> malloc(2 * M * sizeof(uint32_t))
            cg = era_buf; ch = era_buf + M; tg = era_buf + 2 * M
            th = era_buf + 3 * M; ts = era_buf + 4 * M; gains = era_buf + 5 * M
            cn = era_n; tn = era_n + M
            for i in range(M):
                tg[i] = 0.0; th[i] = 0.0; tn[i] = 0
                for b in range(nb):
                    eh = &hist[base + present[i] * nb + b]
                    tg[i] += eh.g
                    th[i] += (<double>eh.n) if self.const_h else eh.h
                    tn[i] += eh.n
                ts[i] = score(tg[i], th[i], self.lam)
                cg[i] = 0.0; ch[i] = 0.0; cn[i] = 0

        # Left to right: missing values go right.
        end = nbnm - 1 + miss
        GL = 0.0; HL = 0.0; nL = 0
        for b in range(end):
            nL = nL + ph[b].n
            nR = n_samples - nL
            if self.const_h:
                HL = HL + ph[b].n
            else:
                HL = HL + ph[b].h
            HR = H - HL
            GL = GL + ph[b].g
            GR = G - GL
            if per_era:
                for i in range(M):
                    eh = &hist[base + present[i] * nb + b]
                    cg[i] += eh.g
                    ch[i] += (<double>eh.n) if self.const_h else eh.h
                    cn[i] += eh.n
            if nL < self.min_samples_leaf:
                continue
            if nR < self.min_samples_leaf:
                break
            if HL < self.min_hessian:
                continue
            if HR < self.min_hessian:
                break
            cand.bin = b
            cand.missing_left = 0
            self._evaluate(&cand, GL, HL, nL, GR, HR, loss_node, mono, lower,
                           upper, cg, ch, cn, tg, th, tn, ts, gains, M, True)
            if better(&cand, &best_lr, self.split_type):
                best_lr = cand

        # Right to left: missing values go left (only if the feature has some).
        if miss and nbnm >= 2:
            if per_era:
                for i in range(M):
                    cg[i] = 0.0; ch[i] = 0.0; cn[i] = 0
            GR = 0.0; HR = 0.0; nR = 0
            for j in range(<int>nbnm - 2, -1, -1):
                b = <unsigned int>j
                nR = nR + ph[b + 1].n
                nL = n_samples - nR
                if self.const_h:
                    HR = HR + ph[b + 1].n
                else:
                    HR = HR + ph[b + 1].h
                HL = H - HR
                GR = GR + ph[b + 1].g
                GL = G - GR
                if per_era:
                    for i in range(M):
                        eh = &hist[base + present[i] * nb + b + 1]
                        cg[i] += eh.g
                        ch[i] += (<double>eh.n) if self.const_h else eh.h
                        cn[i] += eh.n
                if nR < self.min_samples_leaf:
                    continue
                if nL < self.min_samples_leaf:
                    break
                if HR < self.min_hessian:
                    continue
                if HL < self.min_hessian:
                    break
                cand.bin = b
                cand.missing_left = 1
                self._evaluate(&cand, GL, HL, nL, GR, HR, loss_node, mono, lower,
                               upper, cg, ch, cn, tg, th, tn, ts, gains, M, False)
                if self.split_type == 0:
                    # scikit-learn: replace only on a strictly larger gain
                    if better(&cand, &best_rl, 0):
                        best_rl = cand
                elif not better(&best_rl, &cand, self.split_type) and cand.found:
                    # descending bins: keep the lowest bin among equals
                    best_rl = cand

        if self.split_type == 0 and best_rl.found and best_lr.found:
            # scikit-learn's right-to-left scan starts from the left-to-right best
            if not (best_rl.gain > best_lr.gain):
                best_rl.found = 0
        if better(&best_rl, &best_lr, self.split_type):
            out[0] = best_rl
        else:
            out[0] = best_lr
        out.feature = f
        free(pooled)
        free(era_buf)
        free(era_n)

    cdef inline void _evaluate(self, split_t *c, double GL, double HL,
                               unsigned int nL, double GR, double HR,
                               double loss_node, signed char mono,
                               double lower, double upper,
                               const double *cg, const double *ch,
                               const uint32_t *cn, const double *tg,
                               const double *th, const uint32_t *tn,
                               const double *ts, double *gains, int M,
                               bint cum_is_left) noexcept nogil:
        """Score one candidate; cg/ch/cn are the per-era cumulative sums of the
        side being accumulated (left if ``cum_is_left``)."""
        cdef int i, dsum = 0
        cdef double gL, hL, gR, hR, vL, vR
        cdef unsigned int nl, nr
        c.GL = GL
        c.HL = HL
        c.nL = nL
        c.found = 0
        c.dnum = 0
        c.crit = 0.0
        if self.split_type == 0:
            c.gain = pooled_gain_sklearn(GL, HL, GR, HR, loss_node, mono, lower,
                                         upper, self.lam)
            c.crit = c.gain
            c.found = c.gain > 0.0
            return
        # Era-aware criteria: pooled monotonic constraint first.
        vL = node_value(GL, HL, lower, upper, self.lam)
        vR = node_value(GR, HR, lower, upper, self.lam)
        if (mono == 1 and vL > vR) or (mono == -1 and vL < vR):
            return
        c.gain = (score(GL, HL, self.lam) + score(GR, HR, self.lam)
                  - score(GL + GR, HL + HR, self.lam))
        for i in range(M):
            if cum_is_left:
                gL = cg[i]; hL = ch[i]; nl = cn[i]
                gR = tg[i] - gL; hR = th[i] - hL; nr = tn[i] - nl
            else:
                gR = cg[i]; hR = ch[i]; nr = cn[i]
                gL = tg[i] - gR; hL = th[i] - hR; nl = tn[i] - nr
            gains[i] = era_gain(gL, hL, nl, gR, hR, nr, ts[i], self.lam)
            if self.split_type == 2:
                dsum += era_direction(gL, hL, nl, gR, hR, nr, self.lam)
        c.crit = boltzmann(gains, M, self.alpha)
        if self.split_type == 1:
            c.found = c.crit > 0.0
        else:
            c.dnum = dsum if dsum >= 0 else -dsum
            c.found = c.dnum > 0 and c.gain > 0.0


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
    cdef Py_ssize_t n = sample_indices.shape[0]
    cdef int t, nt = n_threads if n >= 4096 * n_threads else 1
    cdef Py_ssize_t chunk = (n + nt - 1) // nt if nt > 0 else n
    cdef const BIN_t[::1] col = X_binned[:, feature]
    cdef Py_ssize_t *nleft = <Py_ssize_t *> calloc(nt + 1, sizeof(Py_ssize_t))
    cdef Py_ssize_t *nright = <Py_ssize_t *> calloc(nt + 1, sizeof(Py_ssize_t))
    cdef Py_ssize_t i, lo, hi, l, r, pos_l, pos_r, total_left = 0
    cdef uint32_t row
    cdef BIN_t v
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
                v = col[row]
                if v <= bin_idx or (missing_go_to_left and v == missing_bin):
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
