"""Numerai helpers: numerai-tools applied era by era."""

import numpy as np
import pandas as pd
import pytest
from scipy.special import ndtri
from scipy.stats import rankdata

from eraboost import HistGradientBoostingRegressor, era_scores
from eraboost.numerai import (
    era_rank,
    feature_exposure,
    neutralize,
    numerai_corr,
    numerai_summary,
)


@pytest.fixture
def data():
    rng = np.random.RandomState(0)
    n = 1500
    X = rng.randint(0, 5, size=(n, 6)).astype(np.int8)
    # eras shuffled across rows, labelled by strings: order must be restored
    eras = rng.choice([f"era{i:02d}" for i in range(8)], size=n)
    y = (X[:, 0] - X[:, 1] + rng.normal(size=n)) / 8 + 0.5
    pred = X[:, 0] + 0.5 * X[:, 2] + 0.3 * rng.normal(size=n)
    return X, y, pred, eras


def test_numerai_corr_matches_the_metrics_implementation(data):
    _, y, pred, eras = data
    labels, scores = numerai_corr(y, pred, eras, return_eras=True)
    assert labels.tolist() == sorted(set(eras))
    from_series = numerai_corr(pd.Series(y), pd.Series(pred), pd.Series(eras))
    np.testing.assert_array_equal(from_series, scores)
    np.testing.assert_allclose(scores, era_scores(y, pred, eras, "numerai_corr"))


def test_feature_exposure_is_the_largest_absolute_correlation(data):
    X, _, pred, eras = data
    labels, exposure = feature_exposure(pred, X, eras, return_eras=True)
    for label, value in zip(labels, exposure):
        m = eras == label
        corr = [abs(np.corrcoef(pred[m], X[m, j])[0, 1]) for j in range(6)]
        assert value == pytest.approx(max(corr))
    # a subset of the columns, by name on a DataFrame
    frame = pd.DataFrame(X, columns=list("abcdef"))
    sub = feature_exposure(pred, frame, eras, features=["b", "d"])
    m = eras == labels[0]
    expected = max(abs(np.corrcoef(pred[m], X[m, j])[0, 1]) for j in (1, 3))
    assert sub[0] == pytest.approx(expected)


def test_neutralize_removes_the_linear_part_in_every_era(data):
    X, _, pred, eras = data
    neutral = neutralize(pred, X, eras)
    for label in np.unique(eras):
        m = eras == label
        A = np.column_stack([X[m].astype(float), np.ones(m.sum())])
        # orthogonal to every feature and the constant within the era
        np.testing.assert_allclose(A.T @ neutral[m], 0, atol=1e-8)
        # and what was removed lies in the span of the features
        coef = np.linalg.lstsq(A, pred[m], rcond=None)[0]
        np.testing.assert_allclose(neutral[m], pred[m] - A @ coef, atol=1e-8)
    half = neutralize(pred, X, eras, proportion=0.5)
    np.testing.assert_allclose(half, (pred + neutral) / 2, atol=1e-8)
    exposure = feature_exposure(neutral, X, eras)
    assert exposure.max() < 1e-8
    gauss = neutralize(pred, X, eras, rank_gaussianize=True)
    for label in np.unique(eras):
        m = eras == label
        assert np.std(gauss[m]) == pytest.approx(1.0)
        assert abs(np.corrcoef(gauss[m], X[m, 0])[0, 1]) < 1e-8


def test_era_rank_ranks_within_each_era(data):
    _, _, pred, eras = data
    pred = np.round(pred, 1)  # ties
    ranks = era_rank(pred, eras)
    gauss = era_rank(pred, eras, gaussianize=True)
    for label in np.unique(eras):
        m = eras == label
        expected = (rankdata(pred[m]) - 0.5) / m.sum()
        np.testing.assert_allclose(ranks[m], expected)
        np.testing.assert_allclose(gauss[m], ndtri(expected))


def test_summary_of_a_fitted_model(data):
    X, y, _, eras = data
    est = HistGradientBoostingRegressor(max_iter=20).fit(X, y, eras=eras)
    pred = est.predict(X)
    summary = numerai_summary(y, pred, eras, X)
    scores = numerai_corr(y, pred, eras)
    assert summary["mean"] == pytest.approx(scores.mean())
    assert summary["n_eras"] == 8
    exposure = feature_exposure(pred, X, eras)
    assert summary["feature_exposure_mean"] == pytest.approx(exposure.mean())
    assert summary["feature_exposure_max"] == pytest.approx(exposure.max())
    assert "feature_exposure_mean" not in numerai_summary(y, pred, eras)


def test_bad_inputs_get_clear_errors(data):
    X, y, pred, eras = data
    Xn = X.astype(float)
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        neutralize(pred, Xn, eras)
    yn = y.copy()
    yn[3] = np.nan
    with pytest.raises(ValueError, match="y_true contains NaN"):
        numerai_corr(yn, pred, eras)
    with pytest.raises(ValueError, match="y_pred has 10 rows"):
        feature_exposure(pred[:10], X, eras)
    const = np.where(eras == "era03", 1.0, pred)
    with pytest.raises(ValueError, match=r"era 'era03'.*constant"):
        neutralize(const, X, eras)
    with pytest.raises(ValueError, match=r"era 'era03'.*constant"):
        feature_exposure(const, X, eras)
    with pytest.raises(ValueError, match="proportion"):
        neutralize(pred, X, eras, proportion=2)
