"""The invariance penalty (IRF) and the per-era minimum (TRT) of docs/criteria.md."""

import numpy as np
import pytest

from eraboost import HistGradientBoostingRegressor
from eraboost._engine._criteria import value_variance_penalty
from tests.engine.reference import best_split
from tests.engine.reference import invariance_penalty as ref_penalty
from tests.engine.test_criteria import (
    SPLIT_TYPES,
    check_node,
    engine_tree,
    gradients,
    make_era_data,
)

OPTIONS = [
    {"irf_penalty": 0.5},
    {"irf_penalty": 20.0},
    {"min_samples_leaf_per_era": 1},
    {"min_samples_leaf_per_era": 3},
    {"irf_penalty": 5.0, "min_samples_leaf_per_era": 2},
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
    changed = {"irf": 0, "per_era": 0}
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
            changed["irf"] += (plain is None) != (irf is None) or (
                plain is not None and plain[:3] != irf[:3]
            )
            changed["per_era"] += (plain is None) != (per_era is None) or (
                plain is not None and plain[:3] != per_era[:3]
            )
    assert changed["irf"] >= 2 and changed["per_era"] >= 2, changed


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
