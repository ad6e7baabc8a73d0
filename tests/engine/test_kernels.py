"""The C kernels of the scan (``_scan.h``) and of the histogram cells
(``_common.h``) against NumPy, through their thin wrappers in
``_criteria.pyx`` (the criteria's kernels: test_criteria.py)."""

import numpy as np
import pytest

from eraboost._engine._criteria import (
    added_cells,
    gain_sums,
    gathered_block,
    per_era_gains,
    pooled_cells,
    raised_best,
    subtracted_cells,
)
from tests.engine.reference import score

ERA_COUNTS = [1, 3, 4, 5, 8, 9, 13, 64]


def block(rng, n_eras, n_bins, const_h, scale=1.0):
    """A feature's block: n_bins bins of R = n_eras + 1 cells (the eras',
    then the pooled one), some era cells empty; hessians None when
    constant."""
    R = n_eras + 1
    n = rng.integers(0, 4, size=n_bins * R).astype(np.uint32)
    n[rng.random(n.shape[0]) < 0.3] = 0
    g = np.where(n > 0, rng.normal(size=n.shape[0]) * n * scale, 0.0)
    h = None if const_h else np.where(n > 0, rng.uniform(0.1, 2.0, n.shape[0]) * n, 0.0)
    return g, h, n, R


def four_lanes(x):
    """x[0] + ... + x[m-1], element i in lane i mod 4, the lanes combined as
    (l0 + l1) + (l2 + l3): each lane added in order, as Python floats."""
    lanes = [0.0, 0.0, 0.0, 0.0]
    for i, v in enumerate(x):
        lanes[i % 4] += float(v)
    return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3])


@pytest.mark.parametrize("m", [0, 1, 3, 4, 7, 8, 33])
def test_added_cells_are_one_addition_each(m):
    """``eb_add_bin`` and ``eb_add_counts``: each era's sum plus its cell
    (the counts as doubles), or the cells alone without previous sums."""
    rng = np.random.default_rng(m)
    p = rng.normal(size=m) * 1e3
    cells = rng.normal(size=m)
    counts = rng.integers(0, 2**31 - 1, size=m).astype(np.uint32)
    assert np.array_equal(added_cells(p, cells), p + cells)
    assert np.array_equal(added_cells(None, cells), cells)
    assert np.array_equal(added_cells(p, counts), p + counts.astype(np.float64))
    assert np.array_equal(added_cells(None, counts), counts.astype(np.float64))
    with pytest.raises(ValueError, match="one value an era"):
        added_cells(np.zeros(m + 1), cells)


@pytest.mark.parametrize("n_eras", ERA_COUNTS)
@pytest.mark.parametrize("const_h", [True, False])
def test_gathered_block_is_the_sums_in_scan_order(n_eras, const_h):
    """``eb_block_gather``: the scanned side's per-era sums after the last
    step, the previous sums plus the bins added in scan order (bit for bit),
    and over the block's candidates each era's least and greatest
    ``D = G - kk (H + lam)`` and its sums at the first candidate."""
    rng = np.random.default_rng(n_eras + 100 * const_h)
    E = n_eras
    for trial in range(12):
        n_bins = int(rng.integers(2, 14))
        g, h, n, R = block(rng, E, n_bins, const_h)
        seq = rng.permutation(n_bins)
        step = int(rng.integers(0, n_bins))
        first = int(rng.integers(step, n_bins))
        last = int(rng.integers(first, n_bins))
        pg, ph, pn = rng.normal(size=E), rng.uniform(0, 5, E), rng.integers(0, 9, E)
        pn = pn.astype(np.float64)
        kk = rng.normal(size=E)
        lam = 0.0 if trial % 2 else 0.7
        got = gathered_block(
            g, h, n, R, seq, step, first, last, pg, None if const_h else ph, pn, kk, lam
        )
        # the reference: the sums carried step by step in NumPy
        xg = np.zeros(E) if step == 0 else pg.copy()
        xn = np.zeros(E) if step == 0 else pn.copy()
        xh = np.zeros(E) if step == 0 else ph.copy()
        lo, hi = np.full(E, np.inf), np.full(E, -np.inf)
        for s in range(step, last + 1):
            cells = slice(seq[s] * R, seq[s] * R + E)
            xg = xg + g[cells]
            xn = xn + n[cells].astype(np.float64)
            if not const_h:
                xh = xh + h[cells]
            hs = xn if const_h else xh
            if s == first:
                n1, h1 = xn.copy(), hs.copy()
            if s >= first:
                d = xg - kk * (hs + lam)
                lo, hi = np.minimum(lo, d), np.maximum(hi, d)
        want = (xg, xn if const_h else xh, xn, lo, hi, n1, h1)
        for a, b in zip(got, want):
            assert np.array_equal(a, b)
    with pytest.raises(ValueError, match="steps"):
        gathered_block(g, h, n, R, seq, 1, 0, 0, pg, ph, pn, kk, 0.0)


@pytest.mark.parametrize("n_eras", ERA_COUNTS)
@pytest.mark.parametrize("const_h", [True, False])
def test_gain_sums_are_the_per_era_gains_summed(n_eras, const_h):
    """``eb_era_gain_sums``: each candidate's sum of per-era gains, the
    gains of docs/criteria.md written out with NumPy (to rounding) and the
    dense loop's sum at the same sums (``eb_era_gains``, bit for bit); with
    constant hessians and lam 0, the short form gives the same sums."""
    rng = np.random.default_rng(7 * n_eras + const_h)
    E = n_eras
    for trial in range(10):
        n_bins = int(rng.integers(2, 10))
        g, h, n, R = block(rng, E, n_bins, const_h)
        seq = rng.permutation(n_bins)
        K = int(rng.integers(1, n_bins + 1))
        steps = np.sort(rng.choice(n_bins, size=K, replace=False))
        G, N = (a.reshape(n_bins, R)[:, :E].astype(np.float64) for a in (g, n))
        Hc = N if const_h else h.reshape(n_bins, R)[:, :E]
        tg, th, tn = G.sum(0), Hc.sum(0), N.sum(0)
        lam = 0.0 if trial % 2 else 0.4
        got = gain_sums(g, h, n, R, seq, steps, tg, th, tn, lam)
        if const_h and lam == 0.0:
            short = gain_sums(g, h, n, R, seq, steps, tg, th, tn, 0.0, counts=True)
            assert np.array_equal(short, got)
        for k, last in enumerate(steps):
            # the scanned side, its bins added in scan order
            qg, qh, qn = np.zeros(E), np.zeros(E), np.zeros(E)
            for s in range(last + 1):
                qg, qh, qn = qg + G[seq[s]], qh + Hc[seq[s]], qn + N[seq[s]]
            dense = per_era_gains(qg, qh, qn, tg, th, tn, lam)[1]
            assert got[k] == dense
            ref = [
                score(qg[e], qh[e], lam)
                + score(tg[e] - qg[e], th[e] - qh[e], lam)
                - score(tg[e], th[e], lam)
                if qn[e] > 0 and tn[e] > qn[e]
                else 0.0
                for e in range(E)
            ]
            scale = sum(score(tg[e], th[e], lam) for e in range(E)) + 1.0
            assert got[k] == pytest.approx(sum(ref), rel=1e-12, abs=1e-12 * scale)
    with pytest.raises(ValueError, match="steps"):
        gain_sums(g, h, n, R, seq, [1, 0], tg, th, tn, lam)
    with pytest.raises(ValueError, match="counts"):
        gain_sums(g, h, n, R, seq, steps, tg, th, tn, 0.5, counts=True)


def test_the_shared_best_is_only_raised():
    """``eb_raise_best`` keeps the greatest value offered; ``eb_load_best``
    reads it."""
    rng = np.random.default_rng(0)
    for _ in range(50):
        values = rng.normal(size=int(rng.integers(0, 8)))
        start = float(rng.choice([-np.inf, 0.0, rng.normal()]))
        assert raised_best(start, values) == max([start, *values])


@pytest.mark.parametrize("m", [0, 1, 5, 64, 1001])
def test_subtracted_cells_are_one_subtraction_each(m):
    """``eb_sub_d`` and ``eb_sub_u32``: the parent's cells less the
    sibling's."""
    rng = np.random.default_rng(m)
    parent = rng.normal(size=m) * 100
    sibling = rng.normal(size=m)
    assert np.array_equal(subtracted_cells(parent, sibling), parent - sibling)
    pn = rng.integers(0, 2**32, size=m, dtype=np.uint32)
    sn = (pn * rng.random(m)).astype(np.uint32)
    assert np.array_equal(subtracted_cells(pn, sn), pn - sn)


@pytest.mark.parametrize("n_eras", [1, 2, 3, 4, 5, 7, 8, 9, 64])
@pytest.mark.parametrize("const_h", [True, False])
def test_pooled_cells_are_four_lane_sums_of_the_eras(n_eras, const_h):
    """``eb_pool_eras``: each bin's pooled cell is the four-lane sum of its
    eras' cells (``lane_sum``'s order), the counts summed as integers; the
    era cells are left as they were."""
    rng = np.random.default_rng(n_eras)
    g, h, n, R = block(rng, n_eras, 6, const_h, scale=10.0 ** rng.integers(-3, 4))
    pg, ph, pn = pooled_cells(g, h, n, R)
    for b in range(6):
        eras = slice(b * R, b * R + n_eras)
        assert pg[b * R + n_eras] == four_lanes(g[eras])
        assert pn[b * R + n_eras] == n[eras].sum()
        if not const_h:
            assert ph[b * R + n_eras] == four_lanes(h[eras])
        assert np.array_equal(pg[eras], g[eras])
    if const_h:
        assert ph is None
    with pytest.raises(ValueError, match="whole bins"):
        pooled_cells(g[:-1], None, n[:-1], R)
