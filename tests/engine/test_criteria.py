"""The engine chooses the split that the NumPy reference of docs/criteria.md chooses."""

import numpy as np
import pytest
from sklearn.base import clone

from eraboost import HistGradientBoostingRegressor
from eraboost._engine._criteria import (
    block_bound,
    block_directions,
    boltzmann_operator,
    era_split_score,
    per_era_directions,
    per_era_gains,
)
from tests.engine.helpers import (
    SPLIT_TYPES,
    check_node,
    engine_tree,
    gradients,
    make_era_data,
)
from tests.engine.reference import boltzmann, newton, score

ALPHAS = [-np.inf, -2.0, 0.0, 2.0, np.inf]


@pytest.mark.parametrize("split_type", SPLIT_TYPES)
@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("seed", range(4))
def test_stump_matches_reference(split_type, alpha, seed):
    n_eras = 2 + seed * 2  # 2, 4, 6, 8
    X, y, eras = make_era_data(seed, n_eras, nan=seed % 2 == 1, tiny_era=seed == 2)
    est = engine_tree(X, y, eras, split_type, alpha)
    Xb = est._bin_mapper.transform(X)
    g, h = gradients(y)
    check_node(
        est, Xb, g, h, eras, np.arange(len(y)), 0, split_type, alpha, 0.0, 1, 0, 1
    )


@pytest.mark.parametrize("split_type", SPLIT_TYPES)
@pytest.mark.parametrize("alpha", [-np.inf, 0.0, 2.0])
@pytest.mark.parametrize("lam,min_samples_leaf", [(0.0, 1), (1.5, 4)])
def test_depth_two_matches_reference_with_absent_eras(
    split_type, alpha, lam, min_samples_leaf
):
    X, y, eras = make_era_data(11, 6, nan=True)
    est = engine_tree(
        X,
        y,
        eras,
        split_type,
        alpha,
        lam=lam,
        min_samples_leaf=min_samples_leaf,
        depth=2,
    )
    Xb = est._bin_mapper.transform(X)
    g, h = gradients(y)
    check_node(
        est,
        Xb,
        g,
        h,
        eras,
        np.arange(len(y)),
        0,
        split_type,
        alpha,
        lam,
        min_samples_leaf,
        0,
        2,
    )
    if split_type == "era" and alpha in (0.0, 2.0):
        # on this data these roots leave some eras out of one child, so the
        # children were checked with eras absent from the node
        node = est._predictors[0][0].nodes[0]
        f, b = node["feature"], node["bin_threshold"]
        miss = est._bin_mapper.missing_bin_[f]
        left = (Xb[:, f] <= b) & (Xb[:, f] != miss)
        if node["missing_left"]:
            left |= Xb[:, f] == miss
        assert min(len(set(eras[left])), len(set(eras[~left]))) < len(set(eras))


def test_boltzmann_operator_special_cases():
    g = np.array([0.5, -1.0, 3.0, 2.0])
    assert boltzmann_operator(g, 0.0) == pytest.approx(g.mean())
    assert boltzmann_operator(g, np.inf) == 3.0
    assert boltzmann_operator(g, -np.inf) == -1.0
    for a in [-7.0, -0.5, 0.3, 4.0]:
        w = np.exp(a * g)
        assert boltzmann_operator(g, a) == pytest.approx((g * w).sum() / w.sum())
        assert boltzmann_operator(g, a) == pytest.approx(boltzmann(g, a))


@pytest.mark.parametrize("alpha", [-1000.0, -50.0, 50.0, 1000.0])
def test_boltzmann_stable_with_huge_gains(alpha):
    g = np.array([1e6, 2e6, 1.5e6, -1e6])
    s = boltzmann_operator(g, alpha)
    assert np.isfinite(s)
    assert s == pytest.approx(g.max() if alpha > 0 else g.min())


@pytest.mark.parametrize("split_type", ["era", "directional"])
@pytest.mark.parametrize("alpha", [-50.0, 50.0])
def test_huge_gains_choose_reference_split(split_type, alpha):
    X, y, eras = make_era_data(5, 4)
    y = y * 1e3  # per-era gains of order 1e6 and more
    est = engine_tree(X, y, eras, split_type, alpha)
    assert np.all(np.isfinite(est.predict(X)))
    assert np.isfinite(est._predictors[0][0].nodes["gain"]).all()
    Xb = est._bin_mapper.transform(X)
    g, h = gradients(y)
    check_node(
        est, Xb, g, h, eras, np.arange(len(y)), 0, split_type, alpha, 0.0, 1, 0, 1
    )


def test_proposition_3_criteria():
    """DeLise, Proposition 3, with the paper's own gradients (1, 2, 3, 4)."""
    g = np.array([1.0, 2.0, 3.0, 4.0])
    eras = np.array([0, 0, 1, 1])
    f1 = np.array([1, 2, 3, 4])
    f2 = np.array([1, 3, 2, 4])

    def sums(left):
        GL = [g[(eras == e) & left].sum() for e in (0, 1)]
        GR = [g[(eras == e) & ~left].sum() for e in (0, 1)]
        nL = [((eras == e) & left).sum() for e in (0, 1)]
        nR = [((eras == e) & ~left).sum() for e in (0, 1)]
        return GL, nL, GR, nR

    # feature 1 between 2 and 3: the paper's score 2 (its gain has a factor
    # 1/2, ours does not), the best pooled split; no era is split
    def pooled(left):
        return (
            g[left].sum() ** 2 / left.sum()
            + g[~left].sum() ** 2 / (~left).sum()
            - g.sum() ** 2 / 4
        )

    assert pooled(f1 <= 2) / 2 == pytest.approx(2.0)
    others = [pooled(f <= t) for f in (f1, f2) for t in (1, 2, 3)]
    assert max(others) == pooled(f1 <= 2)
    GL, nL, GR, nR = sums(f1 <= 2)
    gains, s, _ = era_split_score(GL, nL, nL, GR, nR, nR, 0.0, -np.inf)
    np.testing.assert_array_equal(gains, [0.0, 0.0])
    assert s == 0.0
    # feature 2 between 2 and 3 splits both eras: positive in each
    GL, nL, GR, nR = sums(f2 <= 2)
    gains, s, _ = era_split_score(GL, nL, nL, GR, nR, nR, 0.0, -np.inf)
    assert np.all(gains > 0) and s > 0


def test_proposition_3_estimator():
    X = np.array([[1, 1], [2, 3], [3, 2], [4, 4]], dtype=float)
    y = np.array([-1.0, -2.0, -3.0, -4.0])
    eras = np.array([0, 0, 1, 1])
    orig = engine_tree(X, y, eras, "original", 0.0)
    era = engine_tree(X, y, eras, "era", -np.inf)
    n_o, n_e = orig._predictors[0][0].nodes, era._predictors[0][0].nodes
    assert (n_o[0]["feature"], n_o[0]["threshold"]) == (0, 2.5)  # degenerate
    assert (n_e[0]["feature"], n_e[0]["threshold"]) == (1, 2.5)
    # the chosen split leaves rows of both eras on each side
    left = X[:, 1] <= 2.5
    assert set(eras[left]) == set(eras[~left]) == {0, 1}


def test_directional_column_order_invariance():
    X, y, eras = make_era_data(21, 8, p=6)
    X = X + np.random.RandomState(0).normal(scale=1e-3, size=X.shape)
    perm = np.array([3, 0, 5, 1, 4, 2])
    params = dict(
        split_type="directional",
        boltzmann_alpha=0.0,
        max_iter=10,
        early_stopping=False,
        random_state=0,
    )
    a = HistGradientBoostingRegressor(**params).fit(X, y, eras=eras)
    b = HistGradientBoostingRegressor(**params).fit(X[:, perm], y, eras=eras)
    np.testing.assert_allclose(a.predict(X), b.predict(X[:, perm]), rtol=1e-12)
    for ta, tb in zip(a._predictors, b._predictors):
        na, nb = ta[0].nodes, tb[0].nodes
        inner = ~na["is_leaf"].astype(bool)
        np.testing.assert_array_equal(na["feature"][inner], perm[nb["feature"][inner]])


@pytest.mark.parametrize(
    "split_type,alpha", [("era", 0.0), ("era", 2.0), ("directional", 0.0)]
)
def test_single_row_era_does_not_stop_growth(split_type, alpha):
    rng = np.random.RandomState(0)
    n = 400
    X = rng.normal(size=(n, 3))
    y = X[:, 0] + 0.1 * rng.normal(size=n)
    eras = np.r_[np.repeat([0, 1, 2], [150, 150, 99]), 3]  # era 3 has one row
    est = HistGradientBoostingRegressor(
        split_type=split_type,
        boltzmann_alpha=alpha,
        max_iter=5,
        min_samples_leaf=5,
        early_stopping=False,
    )
    est.fit(X, y, eras=eras)
    for stage in est._predictors:
        assert stage[0].get_n_leaf_nodes() == 31
    # about as good as with the lone row merged into another era
    merged = eras.copy()
    merged[-1] = 2
    ref = clone(est).fit(X, y, eras=merged)
    assert est.score(X, y) > ref.score(X, y) - 0.02


@pytest.mark.parametrize("split_type", SPLIT_TYPES)
@pytest.mark.parametrize("alpha", [-np.inf, 0.0, 2.0])
def test_weighted_rows_match_reference(split_type, alpha):
    """Non-constant hessians: sample weights scale gradient and hessian."""
    X, y, eras = make_era_data(7, 5, nan=True)
    w = np.random.RandomState(3).uniform(0.2, 3.0, size=y.shape[0])
    est = HistGradientBoostingRegressor(
        split_type=split_type,
        boltzmann_alpha=alpha,
        min_samples_leaf=1,
        max_iter=1,
        max_depth=2,
        max_leaf_nodes=None,
        learning_rate=1.0,
        early_stopping=False,
        random_state=0,
    )
    est.fit(X, y, sample_weight=w, eras=eras)
    Xb = est._bin_mapper.transform(X)
    raw = np.float64(np.average(y, weights=w))
    g = (w * (raw - y)).astype(np.float32).astype(np.float64)
    h = w.astype(np.float32).astype(np.float64)
    check_node(
        est, Xb, g, h, eras, np.arange(len(y)), 0, split_type, alpha, 0.0, 1, 0, 2
    )


def test_fused_era_terms_equal_the_formulas():
    """The fused per-era gain and direction equal docs/criteria.md's g_e and
    d_e written out with NumPy (zero for an era with an empty side)."""
    rng = np.random.RandomState(0)
    for lam in (0.0, 0.7):
        GL, GR = rng.normal(size=(2, 200)) * 10
        HL, HR = rng.uniform(0, 5, size=(2, 200))
        nL, nR = rng.randint(0, 4, size=(2, 200))
        HL[:5] = 0.0  # zero hessians: H + lam may be 0
        gains, _, dsum = era_split_score(GL, HL, nL, GR, HR, nR, lam, 0.0)
        present = (nL + nR) > 0
        split = (nL > 0) & (nR > 0)
        score_, newton_ = np.vectorize(score), np.vectorize(newton)
        g_e = np.where(
            split,
            score_(GL, HL, lam) + score_(GR, HR, lam) - score_(GL + GR, HL + HR, lam),
            0.0,
        )
        d_e = np.where(split, np.sign(newton_(GL, HL, lam) - newton_(GR, HR, lam)), 0)
        np.testing.assert_allclose(gains, g_e[present], rtol=1e-12, atol=1e-9)
        assert dsum == int(d_e[present].sum())


def row_count_sums(rng, n_eras, scale, tie=False):
    """One candidate's per-era sums where the hessian sums are the row
    counts: totals (tg, tn) and the scanned side's (qg, qn), with eras of
    no rows, of one row, and with an empty side. With ``tie`` every row of
    an era has the same gradient: both sides' values are equal."""
    tn = rng.integers(0, 9, size=n_eras).astype(np.float64)
    qn = np.floor(rng.uniform(0, 1, size=n_eras) * (tn + 1))
    if tie:
        unit = rng.normal(size=n_eras) * scale
        return unit * qn, qn, unit * tn, tn
    tg = rng.normal(size=n_eras) * tn * scale
    qg = np.where(qn > 0, rng.normal(size=n_eras) * qn * scale, 0.0)
    tg = np.where(tn > qn, tg, qg)  # a full left side holds it all
    return qg, qn, tg, tn


@pytest.mark.parametrize("n_eras", [1, 3, 4, 7, 8, 13, 64, 257])
@pytest.mark.parametrize("scale", [1.0, 1e-6, 1e6])
def test_gains_of_row_counts_are_the_general_form_bit_for_bit(n_eras, scale):
    """With hessian sums that are the row counts and lam = 0, the scans use
    the short form of the per-era gain (``eb_era_gain_of``): its gains and
    their sum are the general form's, bit for bit (an unsplit era's gain
    may be -0.0 in the one and 0.0 in the other), and match g_e of
    docs/criteria.md written out with NumPy. Eras with an empty side, a
    single row, or none."""
    rng = np.random.default_rng(n_eras)
    for _ in range(20):
        qg, qn, tg, tn = row_count_sums(rng, n_eras, scale)
        general, gsum = per_era_gains(qg, qn, qn, tg, tn, tn, 0.0)
        short, ssum = per_era_gains(qg, qn, qn, tg, tn, tn, 0.0, counts=True)
        assert np.array_equal(short, general)
        assert ssum == gsum
        split = (qn > 0) & (tn > qn)
        score_ = np.vectorize(score)
        g_e = np.where(
            split,
            score_(qg, qn, 0.0) + score_(tg - qg, tn - qn, 0.0) - score_(tg, tn, 0.0),
            0.0,
        )
        np.testing.assert_allclose(short, g_e, rtol=1e-12, atol=1e-12 * scale**2)
    with pytest.raises(ValueError, match="counts"):
        per_era_gains(qg, qn, qn, tg, tn, tn, 0.5, counts=True)
    with pytest.raises(ValueError, match="counts"):
        per_era_gains(qg, qn + 1.0, qn, tg, tn, tn, 0.0, counts=True)


@pytest.mark.parametrize("n_eras", [1, 3, 4, 7, 8, 13, 64, 257])
@pytest.mark.parametrize("scale", [1.0, 1e-6, 1e6])
def test_directions_of_row_counts_are_the_general_form(n_eras, scale):
    """With hessian sums that are the row counts and lam = 0, the scans take
    an era's direction as the sign of one cross product (the dense loop
    counting in 64-bit lanes, ``eb_era_directions``; the sparse scans,
    ``eb_era_direction_of``): the general form's directions and sum, and
    d_e of docs/criteria.md written out with NumPy. Eras with an empty
    side, a single row, or none, and ties (equal values on both sides)."""
    rng = np.random.default_rng(100 + n_eras)
    for trial in range(20):
        qg, qn, tg, tn = row_count_sums(rng, n_eras, scale, tie=trial % 4 == 0)
        general, gsum = per_era_directions(qg, qn, qn, tg, tn, tn, 0.0)
        short, ssum = per_era_directions(qg, qn, qn, tg, tn, tn, 0.0, counts=True)
        assert np.array_equal(short, general)
        assert ssum == gsum == int(general.sum())
        split = (qn > 0) & (tn > qn)
        newton_ = np.vectorize(newton)
        with np.errstate(invalid="ignore", divide="ignore"):
            d_e = np.where(
                split,
                np.sign(newton_(qg, qn, 0.0) - newton_(tg - qg, tn - qn, 0.0)),
                0,
            )
        # ties of the values in exact arithmetic may round either way
        exact = np.abs(qg * (tn - qn) - (tg - qg) * qn) > 1e-9 * np.abs(tg) * tn
        assert np.array_equal(short[exact], d_e[exact].astype(np.int64))
    with pytest.raises(ValueError, match="counts"):
        per_era_directions(qg, qn, qn, tg, tn, tn, 0.5, counts=True)
    with pytest.raises(ValueError, match="counts"):
        per_era_directions(qg, qn + 1.0, qn, tg, tn, tn, 0.0, counts=True)


def block_of_candidates(rng, n_eras, n_bins, lam, const_h, scale=1.0):
    """The left sides of the candidates of one scan (``bins <= t`` go left)
    in every era: the cumulative sums of gradients, hessians and rows, shape
    (n_bins - 1, n_eras), and the eras' totals. Some eras are empty, some
    have a single row, some have every row in the first bin (their left
    side is full at once), some zero hessians."""
    sizes = rng.integers(0, 30, size=n_eras)
    sizes[:3] = (0, 1, 2)
    G = np.zeros((n_bins, n_eras))
    H = np.zeros((n_bins, n_eras))
    N = np.zeros((n_bins, n_eras))
    for e, size in enumerate(sizes):
        b = rng.integers(0, n_bins, size=size)
        if e == 3:
            b[:] = 0
        g = rng.normal(loc=rng.normal(), size=size) * scale
        h = np.ones(size) if const_h else rng.uniform(0.0, 2.0, size=size)
        if not const_h and e == 4:
            h[:] = 0.0
        np.add.at(G[:, e], b, g)
        np.add.at(H[:, e], b, h)
        np.add.at(N[:, e], b, 1.0)
    QG, QH, QN = (np.cumsum(a, axis=0)[:-1] for a in (G, H, N))
    return QG, QH, QN, G.sum(0), H.sum(0), N.sum(0)


def gains_at(Q, totals, t, lam, alpha=0.0):
    """The engine's per-era gains (0 for the eras absent from the node)
    and S_era of candidate t, its left side Q = (QG, QH, QN) in each era."""
    (QG, QH, QN), (tg, th, tn) = Q, totals
    GL, HL, nL = QG[t], QH[t], QN[t]
    gains, s_era, _ = era_split_score(GL, HL, nL, tg - GL, th - HL, tn - nL, lam, alpha)
    g_e = np.zeros_like(totals[0])
    g_e[totals[2] > 0] = gains
    return g_e, s_era


def directions_at(Q, totals, t, lam, present):
    """The engine's sum of the directions of the eras with ``present`` set
    at candidate t."""
    tg, th, tn = totals
    keep = present & (tn > 0)
    GL, HL, nL = (q[t][keep] for q in Q)
    args = (GL, HL, nL, tg[keep] - GL, th[keep] - HL, tn[keep] - nL, lam, 0.0)
    return era_split_score(*args)[2]


@pytest.mark.parametrize("const_h", [True, False])
@pytest.mark.parametrize("lam", [0.0, 0.5])
@pytest.mark.parametrize("scale", [1.0, 1e6])
def test_era_block_bound_holds_on_every_candidate(const_h, lam, scale):
    """docs/criteria.md, "A bound over a block of candidates": for any run of
    consecutive candidates, the engine's bound is at least every
    candidate's sum of per-era gains (the engine's own), and so at least
    M S_era at any alpha <= 0, and its bound of |sum_e d_e| at least every
    candidate's; with a single candidate, lam = 0 and an era split, the
    era's bound is its gain (up to the bound's margin)."""
    rng = np.random.default_rng(int(const_h) + 10 * int(lam > 0) + int(scale))
    checked = tight = tight_dirs = 0
    for _ in range(40):
        n_bins = int(rng.integers(2, 12))
        data = block_of_candidates(rng, 9, n_bins, lam, const_h, scale)
        QG, QH, QN, tg, th, tn = data
        Q, totals = data[:3], data[3:]
        d = th + 2 * lam
        kk = np.divide(tg, d, out=np.zeros_like(tg), where=d != 0)
        m = int((tn > 0).sum())
        for t0 in range(n_bins - 1):
            for t1 in range(t0, n_bins - 1):
                D = QG[t0 : t1 + 1] - kk * (QH[t0 : t1 + 1] + lam)
                ends = (D.min(axis=0), D.max(axis=0), QN[t0], QH[t0], QN[t1], QH[t1])
                total, per_era = block_bound(*ends, *totals, lam, const_h)
                dc = block_directions(*ends, *totals, tn >= 2, lam, const_h)
                assert np.all(per_era >= 0.0)
                for t in range(t0, t1 + 1):
                    assert gains_at(Q, totals, t, lam)[0].sum() <= total
                    assert abs(directions_at(Q, totals, t, lam, tn >= 2)) <= dc
                    for alpha in (-1.0, -np.inf):
                        s_era = gains_at(Q, totals, t, lam, alpha)[1]
                        assert s_era * m <= total * (1 + 1e-12)
                    checked += 1
                # one candidate, over the eras it splits (with hessians on
                # both sides): the directions' bound is their sum
                split = (QN[t0] > 0) & (QN[t0] < tn) & (QH[t0] > 0) & (QH[t0] < th)
                pres = split & (tn >= 2)
                if t0 == t1:
                    dc = block_directions(*ends, *totals, pres, lam, const_h)
                    assert dc == abs(directions_at(Q, totals, t0, lam, pres))
                    tight_dirs += 1
                if t0 == t1 and lam == 0.0:
                    g_e = gains_at(Q, totals, t0, lam)[0]
                    ql, qr = QH[t0], th - QH[t0]
                    split = (QN[t0] > 0) & (tn - QN[t0] > 0) & (ql > 0) & (qr > 0)
                    slack = 2e-12 * tg**2 * th / np.where(split, ql * qr, 1.0)
                    b, g, slack = per_era[split], g_e[split], slack[split]
                    assert np.all(b <= g * (1 + 1e-9) + slack)
                    assert np.all(b >= g * (1 - 1e-9))
                    tight += int(split.sum())
    assert checked > 1000
    assert tight > 100 or lam > 0
    assert tight_dirs > 0


def test_boltzmann_below_zero_is_at_most_the_mean():
    """The bound of docs/criteria.md holds below alpha = 0 because the
    Boltzmann operator then weighs the smaller gains more: at most their
    mean."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        g = rng.normal(size=int(rng.integers(1, 30))) * 10.0 ** rng.integers(-3, 6)
        for alpha in (-np.inf, -10.0, -1.0, -1e-3):
            assert boltzmann_operator(g, alpha) <= g.mean() + 1e-12 * np.abs(g).max()
