"""The decisions of 2026-11-22 (docs/criteria.md): splittable eras, pooled
progress, and the end of a fit whose rounds can no longer split.

Node by node, the engine must choose the reference's split (tests/engine/reference.py)
on nodes with eras too small to be split; on hand-made data, the rules must
change what is chosen as the specification says.
"""

import numpy as np
import pytest

from eraboost import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from eraboost._engine._common import SPLIT_TYPES as SPLIT_CODES
from eraboost._engine._common import era_options_set
from eraboost._engine.engine import EngineSettings
from tests.engine import reference
from tests.engine.helpers import CATEGORICAL, Case, check_node, engine_tree, gradients

SPLIT_TYPES = ["original", "era", "directional"]


# -- splittable eras ---------------------------------------------------------
# eras of 1 to 80 rows: the single-row eras never take part; with a per-era
# minimum of 3 the eras of 4 and 5 rows do not either, although they could
# be split 2/2 or 2/3
ERA_SIZES = np.array([1, 40, 55, 70, 35, 60, 1, 80, 5, 4])


OPTIONS = [
    {"min_samples_leaf_per_era": 3},
    {"irf_penalty": 0.002},
    {"irf_penalty": 0.002, "min_samples_leaf_per_era": 2},
]
# (the pooled criterion without options ignores eras)
CRITERIA = [(s, {}) for s in SPLIT_TYPES[1:]] + [
    (s, o) for s in SPLIT_TYPES for o in OPTIONS
]


@pytest.mark.parametrize("split_type,options", CRITERIA)
@pytest.mark.parametrize("alpha", [-np.inf, 0.0, 2.0])
@pytest.mark.parametrize("categorical", [False, True])
def test_nodes_with_unsplittable_eras_match_reference(
    split_type, options, alpha, categorical
):
    data = dict(CATEGORICAL if categorical else {}, sizes=ERA_SIZES)
    case = Case(3, len(ERA_SIZES), split_type, alpha, data=data, **options)
    assert case.check(3) >= 3


def test_splittable_eras_of_the_reference():
    eras = np.array([0, 0, 0, 0, 1, 2, 2, 3, 3, 3])
    np.testing.assert_array_equal(reference.splittable_eras(eras), [0, 2, 3])
    np.testing.assert_array_equal(reference.splittable_eras(eras, 2), [0])
    assert reference.splittable_eras(eras, 3).size == 0


def tiny_era_data():
    """The issue's case: ten eras of 200 rows and one of a single row."""
    rng = np.random.RandomState(0)
    eras = np.r_[np.repeat(np.arange(10), 200), 10]
    X = rng.normal(size=(eras.size, 4))
    y = X[:, 0] + 0.5 * X[:, 1] ** 2 + 0.3 * rng.normal(size=eras.size)
    return X, y, eras


@pytest.mark.parametrize("split_type", ["era", "directional"])
def test_single_row_era_does_not_stop_the_minimum(split_type):
    X, y, eras = tiny_era_data()
    est = HistGradientBoostingRegressor(
        split_type=split_type,
        boltzmann_alpha=-np.inf,
        max_iter=5,
        early_stopping=False,
    ).fit(X, y, eras=eras)
    assert [p[0].get_n_leaf_nodes() for p in est._predictors] == [31] * 5


def test_single_row_era_at_the_minimum_with_the_per_era_minimum():
    """TRT's worst-period setting: min_samples_leaf_per_era=10 and an era of
    15 rows (it cannot keep 10 rows on each side): the other eras decide."""
    X, y, eras = tiny_era_data()
    eras = eras.copy()
    eras[-15:] = 10
    est = HistGradientBoostingRegressor(
        split_type="era",
        boltzmann_alpha=-np.inf,
        min_samples_leaf_per_era=10,
        max_iter=3,
        early_stopping=False,
    ).fit(X, y, eras=eras)
    assert all(p[0].get_n_leaf_nodes() > 10 for p in est._predictors)


# -- pooled progress ---------------------------------------------------------
def twin_data(pooled_effect, reps=3):
    """Two eras with the same rows (twins), every pair of values of the two
    features present ``reps`` times; feature 0's effect is +3 x0 in era 0
    and -3 x0 in era 1, so that every split's pooled sums cancel it exactly;
    feature 1 carries a pooled effect of size ``pooled_effect``."""
    x0, x1 = (a.ravel().astype(np.float64) for a in np.mgrid[0:8, 0:8])
    x0, x1 = np.tile(x0, reps), np.tile(x1, reps)
    X = np.vstack([np.c_[x0, x1], np.c_[x0, x1]])
    eras = np.repeat([0, 1], x0.size)
    era_part = np.r_[3.0 * x0, -3.0 * x0]
    pooled_part = np.r_[x1 >= 4, x1 >= 4] * pooled_effect
    return X, era_part + pooled_part, eras


@pytest.mark.parametrize("alpha", [0.0, np.inf, -np.inf])
def test_split_without_pooled_gain_is_not_eligible(alpha):
    """Feature 0 splits each era well but leaves the pooled values equal:
    era splitting must take feature 1, whose pooled gain is real."""
    X, y, eras = twin_data(1.0)
    est = engine_tree(X, y, eras, "era", alpha)
    root = est._predictors[0][0].nodes[0]
    assert root["feature"] == 1 and not root["is_leaf"]
    Xb = est._bin_mapper.transform(X)
    g, h = gradients(y)
    # feature 0 has the larger era score, feature 1 the pooled gain
    ref = reference.best_split(
        Xb,
        g,
        h,
        eras,
        np.arange(len(y)),
        est._bin_mapper.n_bins_non_missing_,
        np.zeros(2, dtype=bool),
        "era",
        alpha,
    )
    assert ref[0] == 1
    by_era = []
    for f in (0, 1):
        left = Xb[:, f] <= 3
        gain, S, _, _, _ = reference.evaluate(left, g, h, eras, 0.0, alpha)
        by_era.append((gain, S))
    assert by_era[0][0] == 0.0 and by_era[0][1] > by_era[1][1] > 0
    check_node(est, Xb, g, h, eras, np.arange(len(y)), 0, "era", alpha, 0.0, 1, 0, 1)


@pytest.mark.parametrize("split_type", ["era", "directional"])
@pytest.mark.parametrize("effect,splits", [(3e-5, False), (3e-3, True)])
def test_pooled_progress_tolerance(split_type, effect, splits):
    """A pooled effect of 3e-5 against era effects of 3 per bin gives a pooled
    gain near 1e-12 of the per-era children's score: below the tolerance
    (1e-9); 3e-3 gives about 1e-8: above it."""
    X, y, eras = twin_data(effect)
    est = engine_tree(X, y, eras, split_type, 0.0)
    root = est._predictors[0][0].nodes[0]
    assert bool(root["is_leaf"]) != splits
    Xb = est._bin_mapper.transform(X)
    g, h = gradients(y)
    left = Xb[:, 1] <= 3
    gain, _, _, _, children = reference.evaluate(left, g, h, eras, 0.0, 0.0)
    ratio = gain / children
    assert (ratio > reference.POOLED_PROGRESS_RTOL) == splits
    assert 1e-3 < ratio / reference.POOLED_PROGRESS_RTOL < 1e3  # near the edge
    check_node(est, Xb, g, h, eras, np.arange(len(y)), 0, split_type, 0.0, 0.0, 1, 0, 1)


# -- the end of a stalled fit ------------------------------------------------
@pytest.mark.parametrize("split_type", ["era", "directional"])
def test_stalled_fit_stops(split_type, capsys):
    """After the first tree learns the pooled effect exactly (learning rate
    1), only the twins' cancelling effect is left: no candidate improves the
    pooled loss, the second round cannot split and the fit ends there."""
    X, y, eras = twin_data(2.0)
    params = dict(max_iter=50, learning_rate=1.0, early_stopping=False)
    est = HistGradientBoostingRegressor(split_type=split_type, verbose=1, **params)
    est.fit(X, y, eras=eras)
    assert est.n_iter_ == 2
    assert est._predictors[0][0].get_n_leaf_nodes() == 2
    assert est._predictors[1][0].get_n_leaf_nodes() == 1
    out = capsys.readouterr().out
    assert "no tree could split" in out and "n_iter_=2" in out
    # original keeps scikit-learn's behaviour: single-leaf trees to max_iter
    orig = HistGradientBoostingRegressor(split_type="original", **params)
    assert orig.fit(X, y, eras=eras).n_iter_ == 50
    # without eras every split type is original
    plain = HistGradientBoostingRegressor(split_type=split_type, **params)
    with pytest.warns(UserWarning, match="without eras"):
        assert plain.fit(X, y).n_iter_ == 50


def test_stalled_classifier_stops():
    """The log loss: labels x0 >= 4 in era 0 and x0 < 4 in era 1. Every
    split separates the classes within eras, none changes the pooled
    probabilities (one half everywhere): the first round cannot split."""
    X, _, eras = twin_data(0.0)
    labels = np.where(eras == 0, X[:, 0] >= 4, X[:, 0] < 4).astype(int)
    params = dict(max_iter=30, early_stopping=False)
    est = HistGradientBoostingClassifier(split_type="era", **params)
    assert est.fit(X, labels, eras=eras).n_iter_ == 1
    orig = HistGradientBoostingClassifier(split_type="original", **params)
    assert orig.fit(X, labels, eras=eras).n_iter_ == 30


def test_era_fit_without_pooled_signal_keeps_learning():
    """Era effects of opposite signs and a pooled effect: with pooled
    progress the trees keep learning the pooled effect (no leaf values
    shrinking to nothing, as before the decision)."""
    rng = np.random.RandomState(0)
    eras = np.repeat(np.arange(8), 250)
    X = rng.normal(size=(eras.size, 3))
    sign = np.where(eras % 2 == 0, 1.0, -1.0)
    y = sign * X[:, 0] + 0.5 * X[:, 1] + 0.1 * rng.normal(size=eras.size)
    est = HistGradientBoostingRegressor(
        split_type="era", max_iter=300, max_leaf_nodes=15, early_stopping=False
    ).fit(X, y, eras=eras)
    last = [np.abs(p[0].nodes["value"]).max() for p in est._predictors[-50:]]
    assert min(last) > 1e-6
    Xt = rng.normal(size=(2000, 3))
    # the pooled effect is learnt (x0's era effects average to nothing)
    assert np.corrcoef(est.predict(Xt), Xt[:, 1])[0, 1] > 0.8


# -- the penalty's scale -----------------------------------------------------
@pytest.mark.parametrize("split_type", SPLIT_TYPES)
def test_irf_penalty_does_not_depend_on_the_target_scale(split_type):
    """gain and H_node * Var_e CR_e are both in the target's squared units
    times rows: irf_penalty is a pure number, and scaling the target scales
    the model (docs/criteria.md)."""
    rng = np.random.RandomState(0)
    eras = rng.randint(0, 10, 3000)
    X = rng.normal(size=(3000, 4))
    y = X[:, 0] + rng.normal(size=10)[eras] * X[:, 1] + rng.normal(size=3000)
    params = dict(
        split_type=split_type, irf_penalty=0.3, max_iter=20, early_stopping=False
    )
    a = HistGradientBoostingRegressor(**params).fit(X, y, eras=eras)
    b = HistGradientBoostingRegressor(**params).fit(X, 1000.0 * y, eras=eras)
    for ta, tb in zip(a._predictors, b._predictors):
        np.testing.assert_array_equal(ta[0].nodes["feature"], tb[0].nodes["feature"])
    # (up to the float32 rounding of the gradients)
    np.testing.assert_allclose(1000.0 * a.predict(X), b.predict(X), rtol=1e-4)


@pytest.mark.parametrize("split_type", SPLIT_TYPES)
@pytest.mark.parametrize("irf_penalty", [0.0, 0.5])
@pytest.mark.parametrize("per_era", [None, 3])
def test_one_test_of_the_era_options(split_type, irf_penalty, per_era):
    names = era_options_set(split_type, irf_penalty, per_era)
    expected = [
        name
        for name, is_set in (
            ("split_type", split_type != "original"),
            ("irf_penalty", irf_penalty > 0),
            ("min_samples_leaf_per_era", per_era is not None),
        )
        if is_set
    ]
    assert names == expected
    # the splitter's form: the criterion's code, 0 for no per-era minimum
    assert era_options_set(SPLIT_CODES[split_type], irf_penalty, per_era or 0) == names
    settings = EngineSettings(
        split_type=split_type, irf_penalty=irf_penalty, min_samples_leaf_per_era=per_era
    )
    assert settings.era_aware == bool(names)
