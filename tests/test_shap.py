"""shap.TreeExplainer on eraboost models through ``to_shap``."""

import numpy as np
import pandas as pd
import pytest
import shap

from eraboost import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    to_shap,
)


def _data(n=3000, seed=0, missing=True):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 5))
    if missing:
        X[rng.rand(n) < 0.1, 2] = np.nan
        X[rng.rand(n) < 0.05, 0] = np.nan
    y = (
        np.nan_to_num(X[:, 0])
        - 2 * X[:, 1]
        + np.nan_to_num(X[:, 2], nan=3.0)
        + X[:, 3] * X[:, 4]
        + 0.3 * rng.normal(size=n)
    )
    eras = np.repeat(np.arange(10), n // 10)
    return X, y, eras


def _models():
    X, y, eras = _data()
    common = dict(max_iter=25, random_state=0, early_stopping=False)
    yield (
        "regression",
        HistGradientBoostingRegressor(**common).fit(X, y),
        X,
        "predict",
    )
    yield (
        "era regression",
        HistGradientBoostingRegressor(split_type="era", **common).fit(X, y, eras=eras),
        X,
        "predict",
    )
    yield (
        "binary",
        HistGradientBoostingClassifier(**common).fit(X, y > 0),
        X,
        "decision_function",
    )
    yield (
        "multiclass",
        HistGradientBoostingClassifier(split_type="directional", **common).fit(
            X, np.digitize(y, [-1.5, 1.5]), eras=eras
        ),
        X,
        "decision_function",
    )


@pytest.mark.parametrize("case", list(_models()), ids=lambda c: c[0])
def test_shap_values_add_up_to_the_raw_prediction(case):
    _, est, X, method = case
    explainer = shap.TreeExplainer(to_shap(est))
    sv = np.asarray(explainer.shap_values(X[:500]))
    raw = getattr(est, method)(X[:500])
    total = sv.sum(axis=1) + explainer.expected_value
    np.testing.assert_allclose(total, raw, rtol=0, atol=1e-6)
    # rows with missing values are explained on the side predict sends them
    assert np.isnan(X[:500]).any()
    # expected value: the raw prediction averaged over the training rows
    np.testing.assert_allclose(
        explainer.expected_value, np.mean(getattr(est, method)(X), axis=0), atol=1e-6
    )
    if method == "decision_function" and raw.ndim == 2:
        assert sv.shape == (500, 5, raw.shape[1])


def test_shap_ranks_features_like_the_model():
    X, y, _ = _data(missing=False)
    est = HistGradientBoostingRegressor(max_iter=30, random_state=0).fit(X, y)
    sv = shap.TreeExplainer(to_shap(est)).shap_values(X[:1000])
    # feature 1 has the largest effect, and SHAP gives it the largest share
    assert np.argmax(np.abs(sv).mean(0)) == 1


def test_shap_on_int8_features_and_dataframes():
    rng = np.random.RandomState(0)
    X = rng.randint(0, 5, size=(3000, 6)).astype(np.int8)
    y = X[:, 0] - 2 * X[:, 1] + X[:, 2] * X[:, 3] + rng.normal(size=3000)
    est = HistGradientBoostingRegressor(max_iter=40).fit(X, y)
    path = shap.TreeExplainer(to_shap(est))
    sv = path.shap_values(X[:300])
    np.testing.assert_allclose(
        sv.sum(1) + path.expected_value, est.predict(X[:300]), atol=1e-6
    )
    # interventional TreeSHAP (shap's float32 arithmetic) on integer features
    inter = shap.TreeExplainer(
        to_shap(est), data=X[:100], feature_perturbation="interventional"
    )
    sv = inter.shap_values(X[:300])
    np.testing.assert_allclose(
        sv.sum(1) + inter.expected_value, est.predict(X[:300]), atol=1e-5
    )
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(6)])
    est = HistGradientBoostingRegressor(max_iter=10).fit(frame, y)
    explanation = shap.TreeExplainer(to_shap(est))(frame.iloc[:50])
    assert list(explanation.feature_names) == list(frame.columns)
    np.testing.assert_allclose(
        explanation.values.sum(1) + explanation.base_values,
        est.predict(frame.iloc[:50]),
        atol=1e-6,
    )


def test_to_shap_does_not_change_the_model_and_refuses_categorical_models():
    X, y, _ = _data(600)
    est = HistGradientBoostingRegressor(max_iter=3).fit(X, y)
    before = [p.nodes.copy() for (p,) in est._predictors]
    model = to_shap(est)
    shap.TreeExplainer(model, data=X[:50], feature_perturbation="interventional")
    for (p,), nodes in zip(est._predictors, before):
        np.testing.assert_array_equal(p.nodes, nodes)
    assert len(model["trees"]) == 3

    frame = pd.DataFrame({"a": X[:, 1], "c": pd.Categorical(np.arange(600) % 3)})
    cat = HistGradientBoostingRegressor(max_iter=3).fit(frame, y)
    with pytest.raises(ValueError, match="categorical features"):
        to_shap(cat)
    with pytest.raises(Exception, match="fitted"):
        to_shap(HistGradientBoostingRegressor())
