"""The invariance penalty (IRF) and the per-era minimum (TRT) as estimator
options (docs/criteria.md): their off values, their use without eras, bad
values, and the papers' examples. The engine's choices against the NumPy
reference are in ``tests/engine/test_invariance.py``."""

import numpy as np
import pytest
from sklearn.base import clone

from eraboost import HistGradientBoostingRegressor
from tests.engine.helpers import SPLIT_TYPES, make_era_data


@pytest.mark.parametrize("split_type", SPLIT_TYPES)
def test_off_values_leave_model_bit_identical(split_type):
    X, y, eras = make_era_data(5, 7, nan=True, p=5)
    base = HistGradientBoostingRegressor(
        split_type=split_type,
        max_iter=15,
        max_leaf_nodes=8,
        min_samples_leaf=3,
        early_stopping=False,
        random_state=0,
    )
    off = clone(base).set_params(irf_penalty=0.0, min_samples_leaf_per_era=None)
    a = base.fit(X, y, eras=eras)
    b = off.fit(X, y, eras=eras)
    for pa, pb in zip(a._predictors, b._predictors):
        assert pa[0].nodes.tobytes() == pb[0].nodes.tobytes()
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_per_era_minimum_without_eras_is_a_pooled_minimum():
    X, y, _ = make_era_data(4, 5, p=5)
    kw = dict(max_iter=5, max_leaf_nodes=12, early_stopping=False, random_state=0)
    with pytest.warns(UserWarning, match="min_samples_leaf_per_era=9.*without eras"):
        a = HistGradientBoostingRegressor(
            min_samples_leaf=2, min_samples_leaf_per_era=9, **kw
        ).fit(X, y)
    b = HistGradientBoostingRegressor(min_samples_leaf=9, **kw).fit(X, y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_penalty_without_eras_warns_and_changes_nothing():
    X, y, _ = make_era_data(4, 5, p=5)
    kw = dict(max_iter=5, early_stopping=False, random_state=0)
    with pytest.warns(UserWarning, match="irf_penalty=3.0.*without eras"):
        a = HistGradientBoostingRegressor(irf_penalty=3.0, **kw).fit(X, y)
    b = HistGradientBoostingRegressor(**kw).fit(X, y)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))


def test_time_robust_settings_beat_plain_booster_on_holdout_auc():
    """The Time Robust Tree paper's example: X2 = Y in period 1 only."""
    from sklearn.metrics import roc_auc_score

    from eraboost.datasets import make_trt_example

    # one deep tree, as the thesis compares a single TRT with a single tree
    X, y, eras, X_test, y_test = make_trt_example(n_per_period=2000, random_state=0)
    kw = dict(
        max_iter=1,
        learning_rate=1.0,
        max_depth=30,
        max_leaf_nodes=None,
        min_samples_leaf=10,
        early_stopping=False,
        random_state=0,
    )
    plain = HistGradientBoostingRegressor(**kw).fit(X, y, eras=eras)
    trt = HistGradientBoostingRegressor(
        split_type="era", boltzmann_alpha=-np.inf, min_samples_leaf_per_era=10, **kw
    )
    trt.fit(X, y, eras=eras)
    auc_plain = roc_auc_score(y_test, plain.predict(X_test))
    auc_trt = roc_auc_score(y_test, trt.predict(X_test))
    assert auc_trt > auc_plain + 0.015, (auc_plain, auc_trt)


@pytest.mark.parametrize("d", [2, 10])
def test_penalty_lowers_environmental_splits_and_test_mse(d):
    """The IRF paper's regression (eq. 24): with a penalty of 10 the booster
    splits less on the environmental feature X2 and predicts the test era
    better than without it (means over two seeds)."""
    from eraboost.datasets import make_irf_regression
    from eraboost.inspection import split_feature_shares

    share, mse = {}, {}
    for pen in (0.0, 10.0):
        s, m = [], []
        for seed in range(2):
            X, y, eras, Xt, yt = make_irf_regression(d=d, random_state=seed)
            est = HistGradientBoostingRegressor(
                max_iter=100,
                max_leaf_nodes=15,
                irf_penalty=pen,
                early_stopping=False,
                random_state=seed,
            ).fit(X, y, eras=eras)
            s.append(split_feature_shares(est)[d:].sum())
            m.append(np.mean((est.predict(Xt) - yt) ** 2))
        share[pen], mse[pen] = np.mean(s), np.mean(m)
    assert share[10.0] < 0.9 * share[0.0], share
    assert mse[10.0] < 0.98 * mse[0.0], mse


@pytest.mark.parametrize(
    "params,match",
    [
        ({"irf_penalty": -1.0}, "irf_penalty"),
        ({"irf_penalty": np.nan}, "irf_penalty"),
        ({"min_samples_leaf_per_era": 0}, "min_samples_leaf_per_era"),
        ({"min_samples_leaf_per_era": -3}, "min_samples_leaf_per_era"),
        ({"min_samples_leaf_per_era": 2.5}, "min_samples_leaf_per_era"),
    ],
)
def test_bad_option_values_raise(params, match):
    X, y, eras = make_era_data(0, 3)
    with pytest.raises(ValueError, match=match):
        HistGradientBoostingRegressor(**params).fit(X, y, eras=eras)
