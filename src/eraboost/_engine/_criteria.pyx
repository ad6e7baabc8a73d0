"""Python access to the criteria of ``_criteria.pxd``, for tests and users,
and thin wrappers of the C kernels of the scan (``_scan.h``) and of the
histogram cells (``_common.h``), for their tests against NumPy."""
import numpy as np

from ._common cimport uint32_t, int32_t, sub_d, sub_u32, pool_eras_c
from ._scan cimport (add_bin, add_counts, era_gain_sums, block_gather,
                     load_best, raise_best)


def boltzmann_operator(gains, double alpha):
    """Boltzmann operator of a 1-D array of gains (see docs/criteria.md)."""
    cdef double[::1] g = np.ascontiguousarray(gains, dtype=np.float64)
    return boltzmann(&g[0] if g.shape[0] else NULL, g.shape[0], alpha)


def era_split_score(GL, HL, nL, GR, HR, nR, double lam, double alpha):
    """Per-era gains and their Boltzmann score for one candidate split.

    Computed with the same fused function as the engine's scans. Eras with
    no rows (nL + nR == 0) are excluded.

    Returns
    -------
    gains : ndarray of the per-era gains of the eras present
    score : float, B_alpha(gains)
    direction_sum : int, sum of the per-era directions d_e
    """
    GL = np.asarray(GL, dtype=np.float64)
    HL = np.asarray(HL, dtype=np.float64)
    GR = np.asarray(GR, dtype=np.float64)
    HR = np.asarray(HR, dtype=np.float64)
    nL = np.asarray(nL, dtype=np.int64)
    nR = np.asarray(nR, dtype=np.int64)
    present = (nL + nR) > 0
    cdef double[::1] gains = np.zeros(int(present.sum()), dtype=np.float64)
    cdef int k = 0, dsum = 0, d
    for e in np.flatnonzero(present):
        gains[k] = era_gain_direction(GL[e], HL[e], nL[e], GR[e], HR[e], nR[e],
                                      score(GL[e] + GR[e], HL[e] + HR[e], lam),
                                      lam, &d)
        dsum += d
        k += 1
    s = boltzmann(&gains[0] if k else NULL, k, alpha)
    return np.asarray(gains), s, dsum


def _candidate_arrays(qg, qh, qn, tg, th, tn, double lam, bint counts):
    """One candidate's per-era sums as contiguous float64 arrays of one
    length, checked; with ``counts``, the hessian sums must be the row
    counts and ``lam`` 0."""
    arrays = [np.ascontiguousarray(a, dtype=np.float64)
              for a in (qg, qh, qn, tg, th, tn)]
    m = arrays[0].shape[0]
    if any(a.shape != (m,) for a in arrays):
        raise ValueError("arrays of one length expected, one value an era")
    if counts and (lam != 0.0 or not np.array_equal(arrays[1], arrays[2])
                   or not np.array_equal(arrays[4], arrays[5])):
        raise ValueError("counts: the hessian sums must be the row counts "
                         "(qh == qn, th == tn) and lam 0")
    return arrays


def per_era_gains(qg, qh, qn, tg, th, tn, double lam, bint counts=False):
    """The per-era gains of one candidate and their sum, computed by the
    engine's dense loop (``eb_era_gains``): the scanned side's sums (qg,
    qh, qn) play the left side, the eras' totals (tg, th, tn) the node's.

    With ``counts``, the form for hessian sums that are the row counts and
    ``lam = 0`` (``eb_era_gain_of``), the one the scans use then: ``qh``
    must equal ``qn``, ``th`` equal ``tn`` and ``lam`` be 0.

    Returns
    -------
    gains : ndarray of shape (n_eras,)
    total : float, their sum (era i in lane i mod 4)
    """
    arrays = _candidate_arrays(qg, qh, qn, tg, th, tn, lam, counts)
    cdef int m = arrays[0].shape[0]
    ts = np.array([score(g, h, lam) for g, h in zip(arrays[3], arrays[4])],
                  dtype=np.float64)
    cdef double[::1] a0 = arrays[0], a1 = arrays[1], a2 = arrays[2]
    cdef double[::1] a3 = arrays[3], a4 = arrays[4], a5 = arrays[5]
    cdef double[::1] s = np.ascontiguousarray(ts)
    cdef double[::1] gains = np.zeros(max(m, 1))
    cdef double total = 0.0
    if m == 0:
        return np.zeros(0), 0.0
    era_gains(&a0[0], &a1[0], &a2[0], &a3[0], &a4[0], &a5[0], &s[0], lam, m,
              counts, &gains[0], &total)
    return np.asarray(gains), total


def per_era_directions(qg, qh, qn, tg, th, tn, double lam, bint counts=False):
    """The per-era directions of one candidate and their sum, as the
    engine's scans compute them: each era's by ``eb_era_direction_of`` (the
    sparse scans), the sum by the dense loop (``eb_era_directions``). The
    scanned side's sums (qg, qh, qn) play the left side, the eras' totals
    (tg, th, tn) the node's.

    With ``counts``, the form for hessian sums that are the row counts and
    ``lam = 0``, the one the scans use then: ``qh`` must equal ``qn``,
    ``th`` equal ``tn`` and ``lam`` be 0.

    Returns
    -------
    directions : ndarray of int, shape (n_eras,)
    total : int, the dense loop's sum
    """
    arrays = _candidate_arrays(qg, qh, qn, tg, th, tn, lam, counts)
    cdef int m = arrays[0].shape[0], i
    if m == 0:
        return np.zeros(0, dtype=np.int64), 0
    cdef double[::1] a0 = arrays[0], a1 = arrays[1], a2 = arrays[2]
    cdef double[::1] a3 = arrays[3], a4 = arrays[4], a5 = arrays[5]
    cdef long long[::1] d = np.zeros(m, dtype=np.int64)
    for i in range(m):
        d[i] = era_direction_of(a0[i], a1[i], a2[i], a3[i] - a0[i],
                                a4[i] - a1[i], a5[i] - a2[i], lam, counts)
    total = era_directions(&a0[0], &a1[0], &a2[0], &a3[0], &a4[0], &a5[0],
                           lam, m, counts)
    return np.asarray(d), total


def _block_arrays(dmin, dmax, n1, h1, n2, h2, tg, th, tn):
    arrays = [np.ascontiguousarray(a, dtype=np.float64)
              for a in (dmin, dmax, n1, h1, n2, h2, tg, th, tn)]
    m = arrays[0].shape[0]
    if any(a.shape != (m,) for a in arrays):
        raise ValueError("arrays of one length expected, one value an era")
    return arrays


def block_bound(dmin, dmax, n1, h1, n2, h2, tg, th, tn, double lam,
                bint const_h):
    """The bound of the per-era gains over a block of candidates
    (docs/criteria.md, "A bound over a block of candidates"), computed by
    the engine's own function.

    Parameters
    ----------
    dmin, dmax : array-like of shape (n_eras,)
        Each era's smallest and largest ``D_e`` over the block's candidates.
    n1, h1, n2, h2 : array-like of shape (n_eras,)
        The left side's rows and hessian sums at the block's first and
        last candidates.
    tg, th, tn : array-like of shape (n_eras,)
        The eras' sums of gradients and hessians and their rows.
    lam : float
    const_h : bool
        Constant hessians: the hessian sums are the row counts.

    Returns
    -------
    total : float, the bound of the gain sum of any candidate of the block
    bounds : ndarray of shape (n_eras,), each era's bound
    """
    arrays = _block_arrays(dmin, dmax, n1, h1, n2, h2, tg, th, tn)
    cdef int m = arrays[0].shape[0]
    cdef double[::1] ub = np.zeros(max(m, 1))
    cdef double[::1] d0 = arrays[0], d1 = arrays[1], x1 = arrays[2]
    cdef double[::1] y1 = arrays[3], x2 = arrays[4], y2 = arrays[5]
    cdef double[::1] g = arrays[6], h = arrays[7], n = arrays[8]
    if m == 0:
        return 0.0, np.zeros(0)
    total = era_block_bound(&d0[0], &d1[0], &x1[0], &y1[0], &x2[0], &y2[0],
                            &g[0], &h[0], &n[0], lam, const_h, m, &ub[0])
    return total, np.asarray(ub)


def block_directions(dmin, dmax, n1, h1, n2, h2, tg, th, tn, present,
                     double lam, bint const_h):
    """The bound of ``|sum_e d_e|`` over a block of candidates, the eras
    with ``present`` set only (docs/criteria.md, "A bound over a block of
    candidates"), computed by the engine's own function; the arguments as
    :func:`block_bound`'s."""
    arrays = _block_arrays(dmin, dmax, n1, h1, n2, h2, tg, th, tn)
    cdef int m = arrays[0].shape[0]
    cdef signed char[::1] ok = np.ascontiguousarray(present, dtype=np.int8)
    cdef double[::1] d0 = arrays[0], d1 = arrays[1], x1 = arrays[2]
    cdef double[::1] y1 = arrays[3], x2 = arrays[4], y2 = arrays[5]
    cdef double[::1] g = arrays[6], h = arrays[7], n = arrays[8]
    if ok.shape[0] != m:
        raise ValueError("present: one flag an era expected")
    if m == 0:
        return 0
    return era_block_directions(&d0[0], &d1[0], &x1[0], &y1[0], &x2[0],
                                &y2[0], &g[0], &h[0], &n[0], &ok[0], lam,
                                const_h, m)


def value_variance_penalty(GL, HL, nL, GR, HR, nR, double lam):
    """The ``value_variance`` penalty P(s) = Var_e CR_e(s) of
    docs/criteria.md for one candidate split.

    ``CR_e = v(G_Le, H_Le) - v(G_e, H_e)`` with the Newton value
    ``v = -G / (H + lam)``, over the eras with rows on the left; population
    variance, 0 with fewer than two such eras. Computed with the engine's own
    functions.
    """
    GL, HL, nL, GR, HR = (np.atleast_1d(np.asarray(a, dtype=np.float64))
                          for a in (GL, HL, nL, GR, HR))
    cdef Py_ssize_t m = GL.shape[0]
    if m == 0:
        return 0.0
    cdef double[::1] gL = np.ascontiguousarray(GL), hL = np.ascontiguousarray(HL)
    cdef double[::1] nl = np.ascontiguousarray(nL)
    cdef double[::1] g = GL + GR, h = HL + HR
    cdef double[::1] cr = np.zeros(m, dtype=np.float64)
    cdef signed char[::1] ok = np.zeros(m, dtype=np.int8)
    return value_variance(&gL[0], &hL[0], &nl[0], &g[0], &h[0], <int>m, lam,
                          &cr[0], &ok[0])


def difference_variance_penalty(GL, HL, nL, GR, HR, nR, double lam):
    """The penalty of ``irf_variance="difference"`` (docs/criteria.md, "The
    children's difference") for one candidate split: the population
    variance of ``v(G_Le, H_Le) - v(G_Re, H_Re)``, ``v = -G / (H + lam)``,
    over the eras with rows on both sides; 0 with fewer than two such eras.
    Computed with the engine's kernel (``eb_difference_variance``)."""
    GL, HL, nL, GR, HR, nR = (np.atleast_1d(np.asarray(a, dtype=np.float64))
                              for a in (GL, HL, nL, GR, HR, nR))
    cdef Py_ssize_t m = GL.shape[0]
    if m == 0:
        return 0.0
    cdef double[::1] gL = np.ascontiguousarray(GL), hL = np.ascontiguousarray(HL)
    cdef double[::1] nl = np.ascontiguousarray(nL)
    cdef double[::1] g = GL + GR, h = HL + HR, n = nL + nR
    cdef double[::1] x = np.zeros(m, dtype=np.float64)
    cdef signed char[::1] ok = np.zeros(m, dtype=np.int8)
    return difference_variance(&gL[0], &hL[0], &nl[0], &g[0], &h[0], &n[0],
                               <int>m, lam, &x[0], &ok[0])


def every_era_on_both_sides(n_scanned, n, present):
    """The rule of ``irf_variance="difference"``: whether every era of
    ``present`` (the node's splittable eras) keeps rows on both sides,
    from each era's rows on the scanned side and in the node; True with
    fewer than two such eras. The engine's kernel (``eb_eras_on_both_sides``)."""
    cdef double[::1] q = np.ascontiguousarray(n_scanned, dtype=np.float64)
    cdef double[::1] tn = np.ascontiguousarray(n, dtype=np.float64)
    cdef int32_t[::1] p = np.ascontiguousarray(present, dtype=np.int32)
    if q.shape[0] != tn.shape[0]:
        raise ValueError("n_scanned and n: one count an era each expected")
    if p.shape[0] and (np.min(p) < 0 or np.max(p) >= q.shape[0]):
        raise ValueError("present: era indices below the number of eras expected")
    if p.shape[0] < 2:
        return True
    return bool(eras_on_both_sides(&q[0], &tn[0], &p[0], <int>p.shape[0]))


def rate_spread_penalty(pos_left, n_left, pos, n):
    """The ``rate_spread`` penalty, IRF's classification penalty
    ``max_e I_e / min_e I_e - 1`` (eq. 16-19).

    Parameters
    ----------
    pos_left, n_left : array-like of shape (n_eras,)
        Positive rows and all rows of each era going left (weighted sums).
    pos, n : array-like of shape (n_eras,)
        The same in the whole node. Eras with ``n == 0`` are not in the node
        and take no part; 0 with fewer than two eras.
    """
    n = np.asarray(n, dtype=np.float64)
    keep = n > 0
    # gradients -y and hessians 1 per row: G = -positives, H = rows
    cdef double[::1] gL = -np.asarray(pos_left, dtype=np.float64)[keep]
    cdef double[::1] hL = np.ascontiguousarray(
        np.asarray(n_left, dtype=np.float64)[keep])
    cdef double[::1] g = -np.asarray(pos, dtype=np.float64)[keep]
    cdef double[::1] h = np.ascontiguousarray(n[keep])
    cdef signed char[::1] ok = np.ones(max(gL.shape[0], 1), dtype=np.int8)
    if gL.shape[0] < 2:
        return 0.0
    return rate_spread(&gL[0], &hL[0], &g[0], &h[0], &ok[0], <int>gL.shape[0])


def _cells(g, h, n, R):
    """Checked contiguous copies of a block's cells: gradients, hessians
    (None: constant, the counts) and rows, whole bins of R cells."""
    g = np.ascontiguousarray(g, dtype=np.float64)
    n = np.ascontiguousarray(n, dtype=np.uint32)
    if h is not None:
        h = np.ascontiguousarray(h, dtype=np.float64)
    if (g.ndim != 1 or n.shape != g.shape or (h is not None and h.shape != g.shape)
            or R < 1 or g.shape[0] % R):
        raise ValueError("cells: three arrays of whole bins of R cells expected")
    return g, h, n


def added_cells(p, cells):
    """``p + cells`` by the scan's kernels: ``eb_add_counts`` for cells of
    uint32 row counts, ``eb_add_bin`` otherwise; ``p`` None: the cells
    alone (as doubles)."""
    cells = np.asarray(cells)
    cdef int m = cells.shape[0]
    cdef double[::1] q = np.zeros(max(m, 1))
    cdef double[::1] pv = (np.zeros(1) if p is None
                           else np.ascontiguousarray(p, dtype=np.float64))
    cdef double[::1] b
    cdef uint32_t[::1] c
    if cells.ndim != 1 or (p is not None and pv.shape[0] != m):
        raise ValueError("p and cells: one value an era")
    if m == 0:
        return np.zeros(0)
    if cells.dtype == np.uint32:
        c = np.ascontiguousarray(cells)
        add_counts(&q[0], NULL if p is None else &pv[0], &c[0], m)
    else:
        b = np.ascontiguousarray(cells, dtype=np.float64)
        add_bin(&q[0], NULL if p is None else &pv[0], &b[0], m)
    return np.asarray(q)


def gathered_block(g, h, n, int R, seq, int step, int first, int last, pg,
                   ph, pn, kk, double lam):
    """``eb_block_gather``: the scanned side's per-era sums (the first
    ``R - 1`` cells of each bin) after step ``last``, from those after step
    ``step - 1`` (pg, ph, pn; unused when ``step`` is 0) and the bins
    ``seq[step] .. seq[last]``; and over the steps ``first .. last``, each
    era's smallest and largest ``D = G - kk (H + lam)`` and its sums at
    step ``first``. ``h`` None: constant hessians (the counts).

    Returns
    -------
    qg, qh, qn, dmin, dmax, n1, h1 : ndarrays of shape (R - 1,)
        (``qh`` is ``qn`` with constant hessians).
    """
    g, h, n = _cells(g, h, n, R)
    cdef unsigned int[::1] sq = np.ascontiguousarray(seq, dtype=np.uintc)
    cdef int E = R - 1, n_steps = sq.shape[0], nb = g.shape[0] // R
    if E < 1 or not 0 <= step <= first <= last < n_steps:
        raise ValueError("steps: 0 <= step <= first <= last < len(seq) expected")
    if any(not 0 <= b < nb for b in seq):
        raise ValueError("seq: a bin of the block expected at each step")
    prev = [np.ascontiguousarray(a if a is not None else np.zeros(E),
                                 dtype=np.float64) for a in (pg, ph, pn, kk)]
    if any(a.shape != (E,) for a in prev):
        raise ValueError("pg, ph, pn, kk: one value an era")
    out = np.zeros((7, E))
    cdef double[::1] vg = g, vp0 = prev[0], vp1 = prev[1], vp2 = prev[2]
    cdef double[::1] vk = prev[3]
    cdef double[::1] vh = h if h is not None else np.zeros(1)
    cdef uint32_t[::1] vn = n
    cdef double[:, ::1] o = out
    block_gather(&vg[0], NULL if h is None else &vh[0], &vn[0], R, &sq[0],
                 step, first, last, &vp0[0], &vp1[0] if h is not None else &vp2[0],
                 &vp2[0], &o[0, 0], &o[1, 0] if h is not None else &o[2, 0],
                 &o[2, 0], &vk[0], lam, &o[3, 0], &o[4, 0], &o[5, 0], &o[6, 0],
                 E, n_steps)
    if h is None:
        out[1] = out[2]
    return tuple(out)


def gain_sums(g, h, n, int R, seq, steps, tg, th, tn, double lam,
              bint counts=False):
    """``eb_era_gain_sums``: for each candidate k, its scanned side (the
    left side) holding the bins ``seq[0] .. seq[steps[k]]``, the sum of its
    per-era gains (the first ``R - 1`` cells of each bin are the eras')
    against the eras' totals (tg, th, tn). ``h`` None: constant hessians;
    ``counts``: the gains' form for hessian sums that are the row counts
    and lam 0 (``h`` must be None and ``lam`` 0)."""
    g, h, n = _cells(g, h, n, R)
    cdef unsigned int[::1] sq = np.ascontiguousarray(seq, dtype=np.uintc)
    cdef int[::1] st = np.ascontiguousarray(steps, dtype=np.intc)
    cdef int E = R - 1, K = st.shape[0], nb = g.shape[0] // R, k
    totals = [np.ascontiguousarray(a, dtype=np.float64) for a in (tg, th, tn)]
    if E < 1 or any(a.shape != (E,) for a in totals):
        raise ValueError("tg, th, tn: one value an era")
    if any(not 0 <= b < nb for b in seq):
        raise ValueError("seq: a bin of the block expected at each step")
    for k in range(K):
        if not (0 <= st[k] < sq.shape[0] and (k == 0 or st[k] > st[k - 1])):
            raise ValueError("steps: increasing steps of seq expected")
    if counts and (h is not None or lam != 0.0):
        raise ValueError("counts: constant hessians (h None) and lam 0")
    ts = np.array([score(a, b, lam) for a, b in zip(totals[0], totals[1])])
    cdef double[::1] vg = g, vt0 = totals[0], vt1 = totals[1], vt2 = totals[2]
    cdef double[::1] vts = ts
    cdef double[::1] vh = h if h is not None else np.zeros(1)
    cdef uint32_t[::1] vn = n
    cdef double[::1] acc = np.zeros(4 * max(K, 1))
    cdef double[::1] gsum = np.zeros(max(K, 1))
    if K == 0:
        return np.zeros(0)
    era_gain_sums(&vg[0], NULL if h is None else &vh[0], &vn[0], R, &sq[0],
                  &st[0], K, &vt0[0], &vt1[0], &vt2[0], &vts[0], lam, E,
                  counts, &acc[0], &gsum[0])
    return np.asarray(gsum)


def raised_best(double best, values):
    """The shared best after ``eb_raise_best`` of each of ``values`` in
    turn, as ``eb_load_best`` reads it."""
    cdef double b = best
    for v in values:
        raise_best(&b, v)
    return load_best(&b)


def subtracted_cells(parent, sibling):
    """``parent - sibling`` by ``eb_sub_u32`` (uint32 cells) or ``eb_sub_d``
    (otherwise, as doubles), the histogram's subtraction."""
    parent = np.array(parent, dtype=np.uint32 if np.asarray(parent).dtype
                      == np.uint32 else np.float64)
    sibling = np.ascontiguousarray(sibling, dtype=parent.dtype)
    if parent.ndim != 1 or sibling.shape != parent.shape:
        raise ValueError("parent and sibling: two arrays of one length")
    cdef double[::1] pd, sd
    cdef uint32_t[::1] pu, su
    if parent.shape[0] == 0:
        return parent
    if parent.dtype == np.uint32:
        pu = parent
        su = sibling
        sub_u32(&pu[0], &su[0], pu.shape[0])
    else:
        pd = parent
        sd = sibling
        sub_d(&pd[0], &sd[0], pd.shape[0])
    return parent


def pooled_cells(g, h, n, int R):
    """``eb_pool_eras``: each bin's last cell (of R) set to the sums of its
    first ``R - 1`` cells, the era cells. ``h`` None: constant hessians.
    Returns the cells (g, h, n) so pooled."""
    g, h, n = _cells(g, h, n, R)
    if R < 2:
        raise ValueError("R: the eras' cells and the pooled one, 2 or more")
    g, n = g.copy(), n.copy()
    h = None if h is None else h.copy()
    cdef double[::1] vg = g
    cdef double[::1] vh = h if h is not None else np.zeros(1)
    cdef uint32_t[::1] vn = n
    cdef unsigned int nb = g.shape[0] // R
    if nb:
        pool_eras_c(&vg[0], NULL if h is None else &vh[0], &vn[0], nb, R)
    return g, h, n
