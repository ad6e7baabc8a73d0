"""The invariance penalty (IRF) and the per-era minimum (TRT) of docs/criteria.md."""

import numpy as np
import pytest

from eraboost import HistGradientBoostingRegressor
from eraboost._engine._criteria import (
    difference_variance_penalty,
    every_era_on_both_sides,
    value_variance_penalty,
)
from tests.engine.helpers import (
    SPLIT_TYPES,
    check_node,
    engine_tree,
    gradients,
    make_era_data,
)
from tests.engine.reference import best_split, difference_penalty
from tests.engine.reference import invariance_penalty as ref_penalty

OPTIONS = [
    {"irf_penalty": 0.5},
    {"irf_penalty": 20.0},
    {"min_samples_leaf_per_era": 1},
    {"min_samples_leaf_per_era": 3},
    {"irf_penalty": 5.0, "min_samples_leaf_per_era": 2},
    {"irf_penalty": 0.5, "irf_variance": "difference"},
    {"irf_penalty": 20.0, "irf_variance": "difference"},
    {"irf_penalty": 5.0, "irf_variance": "difference", "min_samples_leaf_per_era": 2},
]


@pytest.mark.parametrize("options", OPTIONS, ids=str)
@pytest.mark.parametrize("split_type", SPLIT_TYPES)
@pytest.mark.parametrize("alpha", [-np.inf, 0.0, 2.0])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_stump_matches_reference(options, split_type, alpha, seed):
    X, y, eras = make_era_data(seed, 3 + 2 * seed, nan=seed == 1, tiny_era=seed == 2)
    est = engine_tree(X, y, eras, split_type, alpha, **options)
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
        0.0,
        1,
        0,
        1,
        **options,
    )


@pytest.mark.parametrize("options", OPTIONS, ids=str)
@pytest.mark.parametrize("split_type", SPLIT_TYPES)
@pytest.mark.parametrize("alpha", [-np.inf, 0.0])
def test_depth_three_matches_reference_with_absent_eras(options, split_type, alpha):
    # feature 0 tracks the era, so nodes below the root miss some eras
    X, y, eras = make_era_data(11, 6, nan=True)
    est = engine_tree(
        X, y, eras, split_type, alpha, lam=1.0, min_samples_leaf=3, depth=3, **options
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
        1.0,
        3,
        0,
        3,
        **options,
    )


def test_reference_cases_are_not_vacuous():
    """The options change the reference's choice on the test data, so the
    tests above compare choices that the options decide."""
    changed = {"irf": 0, "per_era": 0, "difference": 0}
    for seed in range(3):
        X, y, eras = make_era_data(
            seed, 3 + 2 * seed, nan=seed == 1, tiny_era=seed == 2
        )
        est = engine_tree(X, y, eras, "original", 0.0)
        Xb = est._bin_mapper.transform(X)
        bm = est._bin_mapper
        has_missing = (Xb == bm.missing_bin_[None, :]).any(axis=0)
        g, h = gradients(y)
        rows = np.arange(len(y))
        args = (Xb, g, h, eras, rows, bm.n_bins_non_missing_, has_missing)
        for st in SPLIT_TYPES:
            plain = best_split(*args, st, 0.0)
            irf = best_split(*args, st, 0.0, irf_penalty=20.0)
            per_era = best_split(*args, st, 0.0, min_samples_leaf_per_era=3)
            diff = best_split(
                *args, st, 0.0, irf_penalty=20.0, irf_variance="difference"
            )
            changed["difference"] += (irf is None) != (diff is None) or (
                irf is not None and irf[:3] != diff[:3]
            )
            changed["irf"] += (plain is None) != (irf is None) or (
                plain is not None and plain[:3] != irf[:3]
            )
            changed["per_era"] += (plain is None) != (per_era is None) or (
                plain is not None and plain[:3] != per_era[:3]
            )
    assert min(changed.values()) >= 2, changed


@pytest.mark.parametrize("split_type", SPLIT_TYPES)
@pytest.mark.parametrize("m", [1, 4])
def test_every_split_keeps_rows_of_every_splittable_era_on_both_sides(split_type, m):
    rng = np.random.RandomState(3)
    eras = np.repeat(np.arange(5), [30, 45, 60, 12, 80])
    X = rng.randint(0, 8, size=(eras.size, 5)).astype(np.float64)
    y = X[:, 0] + rng.normal(size=5)[eras] * X[:, 1] + rng.normal(size=eras.size)
    est = HistGradientBoostingRegressor(
        split_type=split_type,
        min_samples_leaf_per_era=m,
        min_samples_leaf=1,
        max_iter=5,
        max_leaf_nodes=16,
        early_stopping=False,
        random_state=0,
    )
    est.fit(X, y, eras=eras)
    Xb = est._bin_mapper.transform(X)
    miss = est._bin_mapper.missing_bin_
    n_splits = 0
    for (pred,) in est._predictors:
        nodes = pred.nodes

        def visit(i, rows, nodes=nodes):
            nonlocal n_splits
            node = nodes[i]
            if node["is_leaf"]:
                return
            f, b = node["feature"], node["bin_threshold"]
            col = Xb[rows, f]
            left = (col <= b) & (col != miss[f])
            if node["missing_left"]:
                left |= col == miss[f]
            # every splittable era of the node (docs/criteria.md): those
            # with at least 2 * m rows in it
            for e in np.unique(eras[rows]):
                in_e = eras[rows] == e
                if in_e.sum() < 2 * m:
                    continue
                assert (left & in_e).sum() >= m and (~left & in_e).sum() >= m
            n_splits += 1
            visit(node["left"], rows[left])
            visit(node["right"], rows[~left])

        visit(0, np.arange(len(y)))
    assert n_splits > 0


def test_penalty_function_matches_numpy():
    rng = np.random.RandomState(0)
    for lam in (0.0, 1.5):
        GL, GR = rng.normal(size=6), rng.normal(size=6)
        HL, HR = rng.uniform(1, 5, size=6), rng.uniform(1, 5, size=6)
        nL = np.array([3, 0, 4, 2, 0, 7])  # two eras send nothing left
        nR = np.array([1, 5, 2, 0, 3, 1])
        HL[nL == 0] = 0.0
        GL[nL == 0] = 0.0
        ok = nL > 0
        cr = -GL[ok] / (HL[ok] + lam) + (GL + GR)[ok] / (HL + HR + lam)[ok]
        expected = np.var(cr)
        assert value_variance_penalty(GL, HL, nL, GR, HR, nR, lam) == pytest.approx(
            expected, rel=1e-12
        )
    # fewer than two eras with rows on the left: no variance
    assert (
        value_variance_penalty(
            [1.0, 0.0], [2.0, 0.0], [2, 0], [1.0, 3.0], [1.0, 4.0], [1, 4], 0.0
        )
        == 0.0
    )


def test_reference_penalty_is_population_variance_of_value_changes():
    # hand-worked: two eras, unit hessians, lam = 0
    g = np.array([1.0, 3.0, -2.0, -2.0, 4.0])
    h = np.ones(5)
    eras = np.array([0, 0, 1, 1, 1])
    left = np.array([True, False, True, False, False])
    # era 0: left value -1, era value -2 -> CR 1; era 1: left 2, era 0 -> CR 2
    assert ref_penalty(left, g, h, eras, 0.0) == pytest.approx(0.25)


def test_difference_penalty_function_matches_numpy():
    """The engine's kernel of ``irf_variance="difference"`` against NumPy:
    random weighted sums, eras with an empty left or right child or none
    of the node's rows, with and without ``lam``."""
    rng = np.random.RandomState(1)
    for case in range(20):
        m = rng.randint(1, 9)
        nL = rng.randint(0, 4, size=m).astype(float)
        nR = rng.randint(0, 4, size=m).astype(float)
        # weights: hessian sums that are not the row counts
        HL, HR = nL * rng.uniform(0.2, 3, size=m), nR * rng.uniform(0.2, 3, size=m)
        GL, GR = rng.normal(size=m) * (nL > 0), rng.normal(size=m) * (nR > 0)
        for lam in (0.0, 0.7):
            both = (nL > 0) & (nR > 0)
            diff = -GL[both] / (HL[both] + lam) + GR[both] / (HR[both] + lam)
            expected = np.var(diff) if both.sum() >= 2 else 0.0
            got = difference_variance_penalty(GL, HL, nL, GR, HR, nR, lam)
            assert got == pytest.approx(expected, rel=1e-12, abs=1e-15), (case, lam)


def test_difference_penalty_brute_force_over_rows():
    """The kernel on per-era sums equals the reference's brute force over
    the rows of a node (tests/engine/reference.py), weights included."""
    rng = np.random.RandomState(2)
    for _ in range(10):
        n = 40
        eras = rng.randint(0, 5, size=n)
        g, h = rng.normal(size=n), rng.uniform(0.1, 2, size=n)
        left = rng.rand(n) < rng.uniform(0.05, 0.95)
        # an era wholly on one side
        left[eras == 0] = True
        labels = np.unique(eras)
        sums = [
            [(g * m).sum(), (h * m).sum(), m.sum()]
            for e in labels
            for m in ((eras == e) & left, (eras == e) & ~left)
        ]
        sums = np.array(sums).reshape(len(labels), 2, 3)
        GL, HL, nL = sums[:, 0].T
        GR, HR, nR = sums[:, 1].T
        for lam in (0.0, 1.3):
            assert difference_variance_penalty(
                GL, HL, nL, GR, HR, nR, lam
            ) == pytest.approx(difference_penalty(left, g, h, eras, lam), rel=1e-10)


def test_difference_penalty_hand_worked():
    # era 0: left value -1, right 0 -> -1; era 1: left 2, right -1 -> 3;
    # era 2 has no right rows and takes no part: variance of (-1, 3) = 4
    g = np.array([1.0, 0.0, -2.0, 1.0, 5.0])
    h = np.ones(5)
    eras = np.array([0, 0, 1, 1, 2])
    left = np.array([True, False, True, False, True])
    assert difference_penalty(left, g, h, eras, 0.0) == pytest.approx(4.0)


def test_every_era_on_both_sides_matches_numpy():
    rng = np.random.RandomState(3)
    for _ in range(30):
        E = rng.randint(1, 7)
        n = rng.randint(0, 5, size=E).astype(float)
        q = np.floor(rng.uniform(0, n + 1))
        present = np.flatnonzero(rng.rand(E) < 0.7)
        expected = len(present) < 2 or bool(
            np.all((q[present] > 0) & (n[present] - q[present] > 0))
        )
        assert every_era_on_both_sides(q, n, present) == expected


@pytest.mark.parametrize("split_type", SPLIT_TYPES)
def test_difference_keeps_every_splittable_era_on_both_sides(split_type):
    """A tree grown with ``irf_variance="difference"`` splits no node so
    that an era of two rows or more (when the node holds two such) lies
    wholly on one side."""
    X, y, eras = make_era_data(5, 5)
    est = engine_tree(
        X,
        y,
        eras,
        split_type,
        0.0,
        depth=4,
        irf_penalty=0.01,
        irf_variance="difference",
    )
    Xb = est._bin_mapper.transform(X)
    miss = est._bin_mapper.missing_bin_
    nodes = est._predictors[0][0].nodes
    n_splits = 0

    def visit(i, rows):
        nonlocal n_splits
        node = nodes[i]
        if node["is_leaf"]:
            return
        col = Xb[rows, node["feature"]]
        left = (col <= node["bin_threshold"]) & (col != miss[node["feature"]])
        if node["missing_left"]:
            left |= col == miss[node["feature"]]
        labels, counts = np.unique(eras[rows], return_counts=True)
        big = labels[counts >= 2]
        if len(big) >= 2:
            for e in big:
                in_e = eras[rows] == e
                assert (left & in_e).any() and (~left & in_e).any()
        n_splits += 1
        visit(node["left"], rows[left])
        visit(node["right"], rows[~left])

    visit(0, np.arange(len(y)))
    assert n_splits >= 3


def test_irf_variance_default_is_the_formula_as_written():
    """``irf_variance="change"`` (the default) is the model without it, bit
    for bit; "difference" changes the model on these data."""
    X, y, eras = make_era_data(0, 5)
    kw = dict(
        max_iter=5,
        irf_penalty=0.05,
        min_samples_leaf=3,
        random_state=0,
        early_stopping=False,
    )
    plain = HistGradientBoostingRegressor(**kw).fit(X, y, eras=eras).predict(X)
    change = (
        HistGradientBoostingRegressor(irf_variance="change", **kw)
        .fit(X, y, eras=eras)
        .predict(X)
    )
    diff = (
        HistGradientBoostingRegressor(irf_variance="difference", **kw)
        .fit(X, y, eras=eras)
        .predict(X)
    )
    np.testing.assert_array_equal(plain, change)
    assert not np.array_equal(plain, diff)


def test_irf_variance_refused_with_one_line():
    from eraboost import InvariantForestClassifier

    X, y, eras = make_era_data(0, 3)
    with pytest.raises(ValueError, match="irf_variance") as info:
        HistGradientBoostingRegressor(irf_variance="diff").fit(X, y, eras=eras)
    assert "\n" not in str(info.value)
    with pytest.raises(ValueError, match="irf_variance='change'") as info:
        InvariantForestClassifier(n_estimators=2, irf_variance="difference").fit(
            X, y > 0, eras=eras
        )
    assert "\n" not in str(info.value)


def test_forest_regressor_takes_irf_variance():
    """InvariantForestRegressor passes ``irf_variance`` to the engine: the
    form changes the forest with a penalty, and none without."""
    from eraboost import InvariantForestRegressor

    X, y, eras = make_era_data(0, 5)

    def fit(**kw):
        forest = InvariantForestRegressor(n_estimators=3, random_state=0, **kw)
        return forest.fit(X, y, eras=eras).predict(X)

    np.testing.assert_array_equal(fit(), fit(irf_variance="difference"))
    change = fit(irf_penalty=1.0)
    assert not np.array_equal(change, fit(irf_penalty=1.0, irf_variance="difference"))
    np.testing.assert_array_equal(change, fit(irf_penalty=1.0, irf_variance="change"))


def test_classifier_takes_irf_variance():
    from eraboost import HistGradientBoostingClassifier

    X, y, eras = make_era_data(0, 5)
    kw = dict(max_iter=5, irf_penalty=0.05, min_samples_leaf=3, early_stopping=False)

    def proba(**extra):
        est = HistGradientBoostingClassifier(random_state=0, **kw, **extra)
        return est.fit(X, y > np.median(y), eras=eras).predict_proba(X)

    np.testing.assert_array_equal(proba(), proba(irf_variance="change"))
    assert not np.array_equal(proba(), proba(irf_variance="difference"))
