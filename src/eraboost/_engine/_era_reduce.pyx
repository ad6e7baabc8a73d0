"""A worker's share of a node's reduction across workers (the Dask fit,
docs/distributed.md): from the engine's histogram buffer of the worker's
eras, the pooled cells and, per candidate split, the sums over the
worker's eras that the era criteria need.

The per-era gains and directions are the engine's (``_criteria.pxd``);
the candidates are in the scan order of ``eraboost.dask._split.Candidates``,
whose NumPy ``worker_partials`` is this module's reference (the tests
compare the two). A categorical feature has its pooled cells here but no
candidates: its candidates follow an order of its categories that the
driver finds from the reduced cells (``eraboost.dask._categorical``).
"""
from libc.math cimport exp, isinf, INFINITY
from libc.stdint cimport INT32_MAX

import numpy as np

from ._common cimport (uint8_t, int32_t, int64_t, block_t, ORIGINAL, ERA,
                       DIRECTIONAL)
from ._common cimport hist_block, rows_per_bin
from ._criteria cimport score, newton_value, era_gains, era_direction_of

cdef extern from "<math.h>" nogil:
    float nextafterf(float x, float y)


cdef struct era_sums_t:
    # the eras kept (at least the per-era row minimum in the node)
    int M
    int *kept
    # their totals and scores
    double *tg
    double *th
    double *tn
    double *ts
    # the left side's sums of the current candidate, and its gains
    double *qg
    double *qh
    double *qn
    double *gains


cdef struct outs_t:
    int split_type
    double alpha
    double lam
    bint const_h
    bint min_side
    bint irf
    bint agree
    bint scores
    double era_score
    int32_t *fewest
    int32_t *d_up
    int32_t *d_down
    int32_t *dsum
    int32_t *cr_count
    double *cr_mean
    double *cr_m2
    double *gain_sum
    float *children
    double *extreme
    float *shift
    double *num
    double *den


cdef inline void add_cell(era_sums_t *s, block_t blk, int64_t at,
                          bint const_h) noexcept nogil:
    """Add the cells of the kept eras at ``at + era`` to the left sums."""
    cdef int i, e
    for i in range(s.M):
        e = s.kept[i]
        s.qg[i] += blk.g[at + e]
        s.qn[i] += blk.n[at + e]
        if not const_h:
            s.qh[i] += blk.h[at + e]


cdef void candidate(era_sums_t *s, outs_t *o, int64_t c) noexcept nogil:
    """Candidate ``c``'s sums over the kept eras, from their left sums."""
    cdef int i, d, up = 0, down = 0, total = 0, k = 0
    cdef int M = s.M
    cdef bint counts = o.const_h and o.lam == 0.0
    cdef double nL, nR, fewest = INFINITY, gsum = 0.0, cr, mean = 0.0
    cdef double acc = 0.0, ext, w, num = 0.0, den = 0.0
    cdef float c32
    if o.min_side:
        for i in range(M):
            nL = s.qn[i]
            nR = s.tn[i] - nL
            fewest = min(fewest, min(nL, nR))
        o.fewest[c] = INT32_MAX if M == 0 else <int32_t> fewest
    if o.irf:
        # the variance's parts of CR_e over the eras with rows on the left
        for i in range(M):
            if s.qn[i] > 0:
                mean += (newton_value(s.qg[i], s.qh[i], o.lam)
                         - newton_value(s.tg[i], s.th[i], o.lam))
                k += 1
        mean = mean / k if k > 0 else 0.0
        for i in range(M):
            if s.qn[i] > 0:
                cr = (newton_value(s.qg[i], s.qh[i], o.lam)
                      - newton_value(s.tg[i], s.th[i], o.lam)) - mean
                acc += cr * cr
        o.cr_count[c] = k
        o.cr_mean[c] = mean
        o.cr_m2[c] = acc
    if o.agree or o.split_type == DIRECTIONAL:
        for i in range(M):
            d = era_direction_of(s.qg[i], s.qh[i], s.qn[i], s.tg[i] - s.qg[i],
                                 s.th[i] - s.qh[i], s.tn[i] - s.qn[i], o.lam,
                                 counts)
            up += d > 0
            down += d < 0
            total += d
        if o.agree:
            o.d_up[c] = up
            o.d_down[c] = down
        if o.split_type == DIRECTIONAL:
            o.dsum[c] = total
    if not o.scores:
        return
    if M > 0:
        era_gains(s.qg, s.qh, s.qn, s.tg, s.th, s.tn, s.ts, o.lam, M, counts,
                  s.gains, &gsum)
    if o.alpha == 0.0:
        o.gain_sum[c] = gsum
        return
    # C(s) of pooled progress only scales a tolerance: float32
    o.children[c] = <float> (gsum + o.era_score)
    if M == 0:
        if isinf(o.alpha):
            o.extreme[c] = -o.alpha
        else:
            o.shift[c] = -INFINITY if o.alpha > 0 else INFINITY
            o.num[c] = 0.0
            o.den[c] = 0.0
        return
    ext = s.gains[0]
    for i in range(1, M):
        if (s.gains[i] > ext) if o.alpha > 0 else (s.gains[i] < ext):
            ext = s.gains[i]
    if isinf(o.alpha):
        o.extreme[c] = ext
        return
    # the shift as float32, rounded away from the gains: every exponent
    # stays <= 0 (the shift cancels in the ratio whatever it is)
    c32 = <float> ext
    if ((<double> c32) - ext) * (1.0 if o.alpha > 0 else -1.0) < 0:
        c32 = nextafterf(c32, INFINITY if o.alpha > 0 else -INFINITY)
    for i in range(M):
        w = exp(o.alpha * (s.gains[i] - <double> c32))
        num += s.gains[i] * w
        den += w
    o.shift[c] = c32
    o.num[c] = num
    o.den[c] = den


def era_partials(const uint8_t[::1] hist not None,
                 const int64_t[::1] offsets not None,
                 n_bins_non_missing, has_missing, int n_eras,
                 bint constant_hessian, dict settings):
    """One worker's share of a node's reduction, from its histogram.

    Parameters
    ----------
    hist : ndarray of uint8
        The engine's dense histogram buffer (``HistogramBuilder.build``)
        of the worker's eras.
    offsets : ndarray of int64
        ``histogram_layout(n_bins_non_missing + has_missing, n_eras)``.
    n_bins_non_missing, has_missing : array-like
        Each feature's bins and whether it has a missing-value bin.
    n_eras : int
        The histogram's eras (1: pooled only).
    constant_hessian : bool
    settings : dict
        ``eraboost.dask._split.worker_partials``'s; its
        ``is_categorical`` (a mask of the features, or None) leaves the
        categorical features' candidates out.

    Returns
    -------
    partials : dict of ndarray
        The keys and values of ``worker_partials`` on the same sums.
    """
    nb_arr = np.asarray(n_bins_non_missing, dtype=np.int64)
    miss_arr = np.asarray(has_missing, dtype=bool)
    cdef int64_t[::1] nb = nb_arr
    cdef uint8_t[::1] miss = miss_arr.view(np.uint8)
    cat_arr = np.zeros(nb_arr.shape[0], dtype=bool)
    if settings.get("is_categorical") is not None:
        cat_arr = np.ascontiguousarray(settings["is_categorical"], dtype=bool)
    cdef uint8_t[::1] cat = cat_arr.view(np.uint8)
    cdef int p = nb.shape[0], f, i, e, E = n_eras
    cdef int64_t R = rows_per_bin(E), pooled_at = E if E > 1 else 0
    cdef int64_t b, c = 0, at
    cdef bint const_h = constant_hessian
    if offsets.shape[0] != p + 1 or hist.shape[0] < offsets[p] * (
            12 if const_h else 20):
        raise ValueError("the histogram buffer does not match its layout")
    if cat.shape[0] != p:
        raise ValueError("is_categorical does not match the features")
    block_bins = nb_arr + miss_arr
    n_cells = int(block_bins.sum())
    pooled_g = np.empty(n_cells)
    pooled_n = np.empty(n_cells, dtype=np.int32)
    pooled_h = np.empty(0 if const_h else n_cells)
    cdef double[::1] pg = pooled_g, ph = pooled_h
    cdef int32_t[::1] pn = pooled_n
    cdef block_t blk
    with nogil:
        for f in range(p):
            blk = hist_block(&hist[0], &offsets[0], f, const_h)
            for b in range(nb[f] + miss[f]):
                at = b * R + pooled_at
                pg[c] = blk.g[at]
                pn[c] = blk.n[at]
                if not const_h:
                    ph[c] = blk.h[at]
                c += 1
    out = {"pooled_g": pooled_g, "pooled_n": pooled_n}
    if not const_h:
        out["pooled_h"] = pooled_h
    if not settings["era_path"]:
        return out
    split_type = {"original": ORIGINAL, "era": ERA, "directional": DIRECTIONAL}[
        settings["split_type"]]
    cdef outs_t o
    o.split_type = split_type
    o.alpha = settings["alpha"]
    o.lam = settings["lam"]
    o.const_h = const_h
    o.min_side = bool(settings["min_samples_leaf_per_era"])
    o.irf = settings["irf_penalty"] > 0
    o.agree = settings["min_agreement"] > 0
    o.scores = split_type != ORIGINAL
    if not (o.min_side or o.irf or o.agree or o.scores):
        return out
    n_cand = int((((nb_arr - 1 + miss_arr) + np.where(miss_arr, nb_arr - 1, 0))
                  * ~cat_arr).sum())
    arrays = {}

    def new(name, dtype):
        arrays[name] = np.zeros(n_cand, dtype=dtype)
        return arrays[name]

    cdef int32_t[::1] fewest = new("min_side", np.int32) if o.min_side else None
    cdef int32_t[::1] cr_count = new("cr_count", np.int32) if o.irf else None
    cdef double[::1] cr_mean = new("cr_mean", np.float64) if o.irf else None
    cdef double[::1] cr_m2 = new("cr_m2", np.float64) if o.irf else None
    cdef int32_t[::1] d_up = new("d_up", np.int32) if o.agree else None
    cdef int32_t[::1] d_down = new("d_down", np.int32) if o.agree else None
    directional = split_type == DIRECTIONAL
    cdef int32_t[::1] dsum = new("dsum", np.int32) if directional else None
    boltz = o.scores and not (o.alpha == 0.0 or isinf(o.alpha))
    cdef double[::1] gain_sum = (new("gain_sum", np.float64)
                                 if o.scores and o.alpha == 0.0 else None)
    cdef float[::1] children = (new("children", np.float32)
                                if o.scores and o.alpha != 0.0 else None)
    cdef double[::1] extreme = (new("extreme", np.float64)
                                if o.scores and isinf(o.alpha) else None)
    cdef float[::1] shift = new("shift", np.float32) if boltz else None
    cdef double[::1] num = new("num", np.float64) if boltz else None
    cdef double[::1] den = new("den", np.float64) if boltz else None

    # the eras' totals (feature 0's cells) and those kept
    scratch = np.zeros((9, max(E, 1)))
    kept_arr = np.zeros(max(E, 1), dtype=np.intc)
    cdef double[:, ::1] sc = scratch
    cdef int[::1] kept = kept_arr
    cdef era_sums_t s
    s.kept = &kept[0]
    s.tg, s.th, s.tn, s.ts = &sc[0, 0], &sc[1, 0], &sc[2, 0], &sc[3, 0]
    s.qg, s.qh, s.qn, s.gains = &sc[4, 0], &sc[5, 0], &sc[6, 0], &sc[7, 0]
    cdef double *total_g = &sc[8, 0]
    cdef double min_rows = settings["min_rows_per_era_split"]
    cdef double era_score = 0.0, gsum, hsum, nsum
    cdef int64_t last
    o.fewest = &fewest[0] if o.min_side else NULL
    o.cr_count = &cr_count[0] if o.irf else NULL
    o.cr_mean = &cr_mean[0] if o.irf else NULL
    o.cr_m2 = &cr_m2[0] if o.irf else NULL
    o.d_up = &d_up[0] if o.agree else NULL
    o.d_down = &d_down[0] if o.agree else NULL
    o.dsum = &dsum[0] if directional else NULL
    o.gain_sum = &gain_sum[0] if gain_sum is not None else NULL
    o.children = &children[0] if children is not None else NULL
    o.extreme = &extreme[0] if extreme is not None else NULL
    o.shift = &shift[0] if boltz else NULL
    o.num = &num[0] if boltz else NULL
    o.den = &den[0] if boltz else NULL
    with nogil:
        s.M = 0
        if p > 0:
            blk = hist_block(&hist[0], &offsets[0], 0, const_h)
            for e in range(E):
                gsum = hsum = nsum = 0.0
                for b in range(nb[0] + miss[0]):
                    gsum += blk.g[b * R + e]
                    nsum += blk.n[b * R + e]
                    if not const_h:
                        hsum += blk.h[b * R + e]
                if nsum >= min_rows:
                    kept[s.M] = e
                    total_g[s.M] = gsum
                    s.tn[s.M] = nsum
                    s.th[s.M] = nsum if const_h else hsum
                    s.M += 1
            for i in range(s.M):
                s.tg[i] = total_g[i]
                s.ts[i] = score(s.tg[i], s.th[i], o.lam)
                era_score += s.ts[i]
        if const_h:
            s.qh = s.qn
        o.era_score = era_score
        c = 0
        for f in range(p):
            if cat[f]:
                continue
            blk = hist_block(&hist[0], &offsets[0], f, const_h)
            # the missing values right: bins 0 .. nb - 2, and nb - 1 (every
            # value left) when the feature has missing values
            last = nb[f] - 1 + miss[f]
            for i in range(s.M):
                s.qg[i] = 0.0
                s.qn[i] = 0.0
                s.qh[i] = 0.0
            for b in range(last):
                add_cell(&s, blk, b * R, const_h)
                candidate(&s, &o, c)
                c += 1
            if not miss[f]:
                continue
            # the missing values left, bins 0 .. nb - 2 (the per-era order)
            for i in range(s.M):
                s.qg[i] = 0.0
                s.qn[i] = 0.0
                s.qh[i] = 0.0
            add_cell(&s, blk, nb[f] * R, const_h)
            for b in range(nb[f] - 1):
                add_cell(&s, blk, b * R, const_h)
                candidate(&s, &o, c)
                c += 1
    for name in ("dsum", "d_up", "d_down", "cr_count"):
        if name in arrays:
            # counts of at most E eras: the narrowest integers that hold
            # them (a third to a quarter of the bytes sent)
            arrays[name] = arrays[name].astype(np.min_scalar_type(-E - 1))
    out.update(arrays)
    if o.irf or o.agree or o.scores:
        out["M"] = np.array([s.M], dtype=np.int32)
    if o.scores:
        out["era_score"] = np.array([era_score])
    return out
