"""Per-era metrics, their summary and the era scorers (incl. metadata routing
and eraboost's early stopping), against direct NumPy/SciPy computations."""

import numpy as np
import pandas as pd
import pytest
import sklearn
from numerai_tools.scoring import numerai_corr as nt_numerai_corr
from scipy import stats
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
from sklearn.model_selection import GridSearchCV, cross_validate

from eraboost import (
    EraKFold,
    HistGradientBoostingRegressor,
    era_scores,
    era_summary,
    make_era_scorer,
)
from eraboost.metrics import EraScorer


@pytest.fixture
def hand_data():
    """Four eras of different sizes, string labels given out of order."""
    rng = np.random.RandomState(0)
    sizes = {"b": 30, "d": 7, "a": 50, "c": 12}
    eras = np.concatenate([[k] * n for k, n in sizes.items()])
    perm = rng.permutation(eras.size)
    eras = eras[perm]
    y = rng.normal(size=eras.size)
    pred = 0.5 * y + rng.normal(size=eras.size)
    pred[eras == "c"] = np.round(pred[eras == "c"])  # ties in one era
    return y, pred, eras


def _by_era(eras):
    labels = np.unique(eras)
    return labels, [np.flatnonzero(eras == e) for e in labels]


def _published_numerai_corr(target, pred):
    """numerai-tools' definition, written out with SciPy."""
    ranked = (stats.rankdata(pred, method="average") - 0.5) / len(pred)
    g = stats.norm.ppf(ranked)
    p = np.sign(g) * np.abs(g) ** 1.5
    t = target - target.mean()
    t = np.sign(t) * np.abs(t) ** 1.5
    return np.corrcoef(t, p)[0, 1]


@pytest.mark.parametrize(
    "metric,reference",
    [
        ("pearson", lambda t, p: stats.pearsonr(t, p)[0]),
        ("spearman", lambda t, p: stats.spearmanr(t, p)[0]),
        ("numerai_corr", _published_numerai_corr),
        ("mse", lambda t, p: np.mean((t - p) ** 2)),
    ],
)
def test_continuous_metrics_match_scipy(hand_data, metric, reference):
    y, pred, eras = hand_data
    labels, scores = era_scores(y, pred, eras, metric, return_eras=True)
    ref_labels, rows = _by_era(eras)
    np.testing.assert_array_equal(labels, ["a", "b", "c", "d"])
    np.testing.assert_array_equal(labels, ref_labels)
    expected = [reference(y[r], pred[r]) for r in rows]
    np.testing.assert_allclose(scores, expected, rtol=1e-12, atol=1e-14)


def test_numerai_corr_matches_numerai_tools(hand_data):
    y, pred, eras = hand_data
    target = np.digitize(y, [-1, -0.3, 0.3, 1]) / 4.0  # Numerai's 0..1 buckets
    scores = era_scores(target, pred, eras, "numerai_corr")
    for score, rows in zip(scores, _by_era(eras)[1]):
        idx = pd.RangeIndex(rows.size)
        nt = nt_numerai_corr(
            pd.DataFrame({"p": pred[rows]}, index=idx),
            pd.Series(target[rows], index=idx, name="t"),
        )
        assert score == pytest.approx(float(nt["p"]), rel=1e-12, abs=1e-14)


def test_accuracy_and_roc_auc(hand_data):
    y, pred, eras = hand_data
    labels_true = (y > 0).astype(int)
    labels_pred = (pred > 0).astype(int)
    _, rows = _by_era(eras)
    acc = era_scores(labels_true, labels_pred, eras, "accuracy")
    np.testing.assert_allclose(
        acc, [np.mean(labels_true[r] == labels_pred[r]) for r in rows]
    )
    # string classes: the larger label ("yes") is the positive one
    cls = np.where(labels_true == 1, "yes", "no")
    auc = era_scores(cls, pred, eras, "roc_auc")
    np.testing.assert_allclose(
        auc, [roc_auc_score(labels_true[r], pred[r]) for r in rows], rtol=1e-12
    )
    # brute force over all (positive, negative) pairs, ties count 1/2
    for score, r in zip(auc, rows):
        pos, neg = pred[r][labels_true[r] == 1], pred[r][labels_true[r] == 0]
        diff = pos[:, None] - neg[None, :]
        assert score == pytest.approx(((diff > 0) + 0.5 * (diff == 0)).mean())


def test_callable_metric_and_integer_eras():
    y = np.arange(10.0)
    pred = y[::-1].copy()
    eras = np.array([3, 3, 3, 1, 1, 1, 1, 2, 2, 2])
    got = era_scores(y, pred, eras, lambda t, p: float(np.sum(t - p)))
    np.testing.assert_allclose(
        got,
        [
            np.sum(y[3:7] - pred[3:7]),
            np.sum(y[7:] - pred[7:]),
            np.sum(y[:3] - pred[:3]),
        ],
    )


@pytest.mark.parametrize("metric", ["pearson", "spearman", "numerai_corr"])
def test_constant_predictions_score_zero(metric):
    # constant predictions rank nothing: 0, not NaN (0.1 * 3 is not exactly
    # representable, so a naive centring leaves rounding noise)
    y = np.array([0.0, 1.0, 2.0, 0.5, 0.25, 0.75])
    pred = np.full(6, 0.1 + 0.2)
    eras = [0, 0, 0, 1, 1, 1]
    np.testing.assert_array_equal(era_scores(y, pred, eras, metric), [0.0, 0.0])


def test_era_scores_bad_input():
    y = np.array([0, 1, 0, 1.0])
    with pytest.raises(ValueError, match="metric must be one of"):
        era_scores(y, y, [0, 0, 1, 1], "r2")
    with pytest.raises(ValueError, match="4 rows but y_pred has 3"):
        era_scores(y, y[:3], [0, 0, 1, 1])
    with pytest.raises(ValueError, match="eras has 3 labels"):
        era_scores(y, y, [0, 0, 1])
    with pytest.raises(ValueError, match="era 1: ROC AUC is undefined"):
        era_scores(np.array([0, 1, 1, 1]), y, [0, 0, 1, 1], "roc_auc")
    with pytest.raises(ValueError, match="two classes; y_true has 3"):
        era_scores(np.array([0, 1, 2, 1]), y, [0, 0, 1, 1], "roc_auc")
    with pytest.raises(ValueError, match="finite"):
        era_scores(y, np.array([0, np.nan, 1, 2]), [0, 0, 1, 1])


def test_era_summary_hand_computed():
    s = [0.1, -0.2, 0.3, -0.1, 0.05]
    out = era_summary(s)
    mean = 0.15 / 5
    std = np.sqrt(sum((v - mean) ** 2 for v in s) / 4)
    assert out["mean"] == pytest.approx(mean)
    assert out["std"] == pytest.approx(std)
    assert out["sharpe"] == pytest.approx(mean / std)
    assert out["worst"] == -0.2
    assert out["positive_share"] == pytest.approx(3 / 5)
    # cumulative 0, .1, -.1, .2, .1, .15: the largest fall is .1 -> -.1
    assert out["max_drawdown"] == pytest.approx(0.2)
    assert out["n_eras"] == 5
    assert era_summary([0.5, 0.1, 0.9], greater_is_better=False)["worst"] == 0.9
    assert era_summary([0.1, 0.2])["max_drawdown"] == 0.0
    # a first era below zero is a drawdown from the start
    assert era_summary([-0.3, 0.1])["max_drawdown"] == pytest.approx(0.3)
    single = era_summary([0.4])
    assert np.isnan(single["std"]) and np.isnan(single["sharpe"])


def test_max_drawdown_brute_force():
    rng = np.random.RandomState(3)
    for _ in range(20):
        s = rng.normal(size=rng.randint(1, 30))
        cum = np.r_[0.0, np.cumsum(s)]
        brute = max(cum[i] - cum[j] for j in range(cum.size) for i in range(j + 1))
        assert era_summary(s)["max_drawdown"] == pytest.approx(brute)


def test_era_summary_bad_input():
    with pytest.raises(ValueError, match="non-empty 1-D"):
        era_summary([])
    with pytest.raises(ValueError, match="NaN"):
        era_summary([0.1, np.nan])


# -- scorers -----------------------------------------------------------------


class FirstColumn(RegressorMixin, BaseEstimator):
    """Predicts X[:, 0]; fitting learns nothing."""

    def fit(self, X, y):
        self.n_features_in_ = np.asarray(X).shape[1]
        return self

    def predict(self, X):
        return np.asarray(X)[:, 0]


def _designed_data(r_per_era, n_per_era=40, seed=0):
    """X[:, 0] has Pearson correlation exactly r_e with y in era e."""
    rng = np.random.RandomState(seed)
    X, y, eras = [], [], []
    for e, r in enumerate(r_per_era):
        z = rng.normal(size=(n_per_era, 2))
        z -= z.mean(axis=0)
        q, _ = np.linalg.qr(z)  # orthonormal, still centred
        X.append(q[:, :1])
        y.append(r * q[:, 0] + np.sqrt(1 - r**2) * q[:, 1])
        eras.append(np.full(n_per_era, e))
    return np.vstack(X), np.concatenate(y), np.concatenate(eras)


def test_scorer_direct_call(hand_data):
    y, pred, eras = hand_data
    X = pred[:, None]
    est = FirstColumn().fit(X, y)
    per_era = era_scores(y, pred, eras, "pearson")
    assert make_era_scorer("pearson")(est, X, y, eras=eras) == pytest.approx(
        per_era.mean()
    )
    assert make_era_scorer("pearson", "min")(est, X, y, eras=eras) == per_era.min()
    assert make_era_scorer("pearson", "sharpe")(est, X, y, eras=eras) == (
        pytest.approx(per_era.mean() / per_era.std(ddof=1))
    )
    mse = era_scores(y, pred, eras, "mse")
    assert make_era_scorer("mse", "min")(est, X, y, eras=eras) == -mse.max()
    assert make_era_scorer("mse")(est, X, y, eras=eras) == pytest.approx(-mse.mean())
    assert repr(make_era_scorer("spearman", "min")) == (
        "make_era_scorer('spearman', aggregate='min')"
    )


def test_roc_auc_scorer_uses_decision_function():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(200, 2))
    y = (X[:, 0] + rng.normal(size=200) > 0).astype(int)
    eras = np.repeat(np.arange(4), 50)
    clf = LogisticRegression().fit(X, y)
    expected = era_scores(y, clf.decision_function(X), eras, "roc_auc")
    got = make_era_scorer("roc_auc", "min")(clf, X, y, eras=eras)
    assert got == expected.min()


def test_make_era_scorer_bad_arguments():
    with pytest.raises(ValueError, match="aggregate must be one of"):
        make_era_scorer("pearson", "median")
    with pytest.raises(ValueError, match="metric must be one of"):
        make_era_scorer("r2")
    with pytest.raises(ValueError, match="Sharpe ratio of"):
        make_era_scorer("mse", "sharpe")
    X, y, eras = _designed_data([0.5])
    est = FirstColumn().fit(X, y)
    with pytest.raises(ValueError, match="at least two eras"):
        make_era_scorer("pearson", "sharpe")(est, X, y, eras=eras)


def test_scorer_without_eras_is_a_clear_error():
    X, y, eras = _designed_data([0.1, 0.2, 0.3, 0.4])
    scorer = make_era_scorer("pearson")
    with pytest.raises(ValueError, match="needs the era of each scored row"):
        scorer(FirstColumn().fit(X, y), X, y)
    # routing off: cross_validate cannot hand the eras to the scorer
    with pytest.raises(ValueError, match="enable_metadata_routing=True"):
        cross_validate(
            FirstColumn(),
            X,
            y,
            groups=eras,
            cv=EraKFold(2),
            scoring=scorer,
            error_score="raise",
        )
    # routing on but no eras given
    with (
        sklearn.config_context(enable_metadata_routing=True),
        pytest.raises(ValueError, match="needs the era of each row"),
    ):
        cross_validate(
            FirstColumn(), X, y, cv=EraKFold(2), scoring=scorer, error_score="raise"
        )


def test_scorer_requests_eras():
    with sklearn.config_context(enable_metadata_routing=True):
        routing = make_era_scorer("pearson").get_metadata_routing()
        assert routing.score.requests == {"eras": True}


def test_routed_scorer_gets_each_folds_eras():
    # per-era correlations known by construction: fold scores are their means
    r = np.array([0.9, 0.8, 0.7, -0.5, 0.1, 0.2, 0.3, -0.9, 0.6, 0.0, 0.4, -0.2])
    X, y, eras = _designed_data(r)
    np.testing.assert_allclose(era_scores(y, X[:, 0], eras), r, atol=1e-12)
    blocks = np.array_split(np.arange(r.size), 4)
    scoring = {
        "mean": make_era_scorer("pearson"),
        "min": make_era_scorer("pearson", "min"),
        "sharpe": make_era_scorer("pearson", "sharpe"),
    }
    with sklearn.config_context(enable_metadata_routing=True):
        res = cross_validate(
            FirstColumn(),
            X,
            y,
            cv=EraKFold(4),
            scoring=scoring,
            params={"eras": eras},
            error_score="raise",
        )
    np.testing.assert_allclose(
        res["test_mean"], [r[b].mean() for b in blocks], atol=1e-12
    )
    np.testing.assert_allclose(
        res["test_min"], [r[b].min() for b in blocks], atol=1e-12
    )
    np.testing.assert_allclose(
        res["test_sharpe"],
        [r[b].mean() / r[b].std(ddof=1) for b in blocks],
        rtol=1e-10,
        atol=1e-12,  # a fold whose mean is 0 up to rounding
    )


def test_routed_eras_reach_eraboost_fit_and_scorer():
    rng = np.random.RandomState(0)
    eras = np.repeat(np.arange(12), 40)
    X = rng.normal(size=(eras.size, 3))
    y = X[:, 0] * np.where(eras % 3 == 0, -1.0, 1.0) + rng.normal(size=eras.size)
    est = HistGradientBoostingRegressor(
        split_type="era", boltzmann_alpha=-np.inf, max_iter=15, random_state=0
    )
    scorer = make_era_scorer("spearman", "min")
    cv = EraKFold(3)
    with sklearn.config_context(enable_metadata_routing=True):
        routed = est.set_fit_request(eras=True)
        res = cross_validate(
            routed,
            X,
            y,
            cv=cv,
            scoring=scorer,
            params={"eras": eras},
            error_score="raise",
        )
    expected = []
    for train, test in cv.split(X, groups=eras):
        fitted = clone(est).fit(X[train], y[train], eras=eras[train])
        expected.append(
            era_scores(y[test], fitted.predict(X[test]), eras[test], "spearman").min()
        )
    np.testing.assert_array_equal(res["test_score"], expected)
    # without the eras, the era criterion would have grown other trees
    no_eras = []
    for train, test in cv.split(X, groups=eras):
        fitted = clone(est).set_params(split_type="original").fit(X[train], y[train])
        no_eras.append(
            era_scores(y[test], fitted.predict(X[test]), eras[test], "spearman").min()
        )
    assert not np.array_equal(no_eras, expected)


def test_grid_search_with_routed_era_scorer():
    X, y, eras = _designed_data(np.linspace(-0.3, 0.9, 9), seed=2)
    with sklearn.config_context(enable_metadata_routing=True):
        est = HistGradientBoostingRegressor(max_iter=5).set_fit_request(eras=True)
        gs = GridSearchCV(
            est,
            {"max_depth": [1, 3]},
            cv=EraKFold(3),
            scoring=make_era_scorer("pearson", "min"),
            error_score="raise",
        ).fit(X, y, eras=eras)
    for i, params in enumerate(gs.cv_results_["params"]):
        for k, (train, test) in enumerate(EraKFold(3).split(X, groups=eras)):
            fitted = (
                clone(est)
                .set_params(**params)
                .fit(X[train], y[train], eras=eras[train])
            )
            want = era_scores(y[test], fitted.predict(X[test]), eras[test]).min()
            assert gs.cv_results_[f"split{k}_test_score"][i] == want


# -- early stopping with an era scorer -------------------------------------------


class SpyScorer(EraScorer):
    """Records the eras it is given."""

    def __init__(self, metric, aggregate):
        super().__init__(metric, aggregate)
        self.seen = []

    def __call__(self, estimator, X, y_true, *, eras=None):
        self.seen.append(None if eras is None else np.asarray(eras).copy())
        return super().__call__(estimator, X, y_true, eras=eras)


def _es_data(seed=0):
    rng = np.random.RandomState(seed)
    eras = np.repeat(np.array([f"e{i:02d}" for i in range(10)]), 60)
    X = rng.normal(size=(eras.size, 3))
    y = X[:, 0] + 0.5 * X[:, 1] ** 2 + rng.normal(size=eras.size)
    return X, y, eras


def test_early_stopping_with_external_validation_eras():
    X, y, eras = _es_data()
    val = np.isin(eras, ["e07", "e08", "e09"])
    scorer = make_era_scorer("pearson", "min")
    est = HistGradientBoostingRegressor(
        early_stopping=True,
        scoring=scorer,
        max_iter=30,
        n_iter_no_change=5,
        random_state=0,
    )
    est.fit(
        X[~val],
        y[~val],
        eras=eras[~val],
        X_val=X[val],
        y_val=y[val],
        eras_val=eras[val],
    )
    # score 0 before the first tree (constant predictions), then the staged scores
    want_val = [0.0] + [
        era_scores(y[val], p, eras[val]).min() for p in est.staged_predict(X[val])
    ]
    want_train = [0.0] + [
        era_scores(y[~val], p, eras[~val]).min() for p in est.staged_predict(X[~val])
    ]
    np.testing.assert_allclose(est.validation_score_, want_val, rtol=1e-12)
    np.testing.assert_allclose(est.train_score_, want_train, rtol=1e-12)


def test_early_stopping_holds_out_whole_eras_for_the_scorer():
    X, y, eras = _es_data(1)
    spy = SpyScorer("spearman", "mean")
    est = HistGradientBoostingRegressor(
        early_stopping=True,
        scoring=spy,
        validation_fraction=0.3,
        max_iter=5,
        random_state=0,
    ).fit(X, y, eras=eras)
    train_eras, val_eras = spy.seen[0], spy.seen[1]
    assert len(spy.seen) == 2 * (est.n_iter_ + 1)  # train and val every time
    assert train_eras.size + val_eras.size == eras.size
    assert not set(train_eras) & set(val_eras)
    assert set(train_eras) | set(val_eras) == set(eras)
    for e in set(val_eras):  # whole eras
        assert np.sum(val_eras == e) == np.sum(eras == e)
    val = np.isin(eras, list(set(val_eras)))
    np.testing.assert_allclose(
        est.validation_score_[-1],
        era_scores(y[val], est.predict(X[val]), eras[val], "spearman").mean(),
        rtol=1e-12,
    )


def test_early_stopping_era_scorer_needs_eras():
    X, y, eras = _es_data()
    est = HistGradientBoostingRegressor(
        early_stopping=True, scoring=make_era_scorer("pearson"), max_iter=5
    )
    with pytest.raises(ValueError, match="eras of the training rows"):
        est.fit(X, y)
    val = eras == "e09"
    with pytest.raises(ValueError, match="eras of the validation rows"):
        est.fit(X[~val], y[~val], eras=eras[~val], X_val=X[val], y_val=y[val])


def test_era_scores_natural_order_and_pandas_series():
    rng = np.random.RandomState(0)
    labels = ["era10", "era2", "era1", "era9"]
    eras = np.repeat(labels, 20)
    y = rng.normal(size=eras.size)
    pred = y + rng.normal(size=eras.size)
    got, scores = era_scores(y, pred, eras, return_eras=True)
    assert list(got) == ["era1", "era2", "era9", "era10"]
    for label, score in zip(got, scores):
        rows = eras == label
        assert score == pytest.approx(np.corrcoef(y[rows], pred[rows])[0, 1])
    # numeric strings by value, dates in time
    nums = np.repeat(["10", "9", "100"], 20)
    assert list(era_scores(y[:60], pred[:60], nums, return_eras=True)[0]) == [
        "9",
        "10",
        "100",
    ]
    # pandas input: a Series indexed by era label, named after the eras
    s = era_scores(pd.Series(y), pd.Series(pred), pd.Series(eras, name="week"))
    assert isinstance(s, pd.Series)
    assert s.index.name == "week" and s.name == "pearson"
    assert list(s.index) == ["era1", "era2", "era9", "era10"]
    np.testing.assert_array_equal(s.to_numpy(), scores)
    # plain arrays stay arrays
    assert isinstance(era_scores(y, pred, eras), np.ndarray)


def test_era_scores_datetime_eras_in_time_order():
    rng = np.random.RandomState(1)
    days = np.array(["2024-03-01", "2023-12-31", "2024-01-15"], dtype="datetime64[D]")
    eras = np.repeat(days, 15)
    y = rng.normal(size=eras.size)
    got, _ = era_scores(y, y + rng.normal(size=eras.size), eras, return_eras=True)
    assert list(got) == sorted(days)
    with pytest.raises(ValueError, match="NaT"):
        era_scores(y[:2], y[:2], np.array(["NaT", "2024-01-01"], dtype="datetime64[D]"))


@pytest.mark.parametrize("metric", ["pearson", "spearman", "numerai_corr"])
def test_grouped_correlations_equal_the_era_by_era_functions(metric):
    # era_scores computes these three for all eras at once; each era's value
    # must be that of the one-era function (ties, constant eras, one-row era)
    from eraboost.metrics import _METRICS

    rng = np.random.default_rng(0)
    n = 4000
    eras = rng.choice(["a", "b", "c", "d", "e", "f"], size=n)
    eras[0] = "single"
    y_true = rng.normal(size=n).round(1)
    y_pred = rng.normal(size=n).round(1)
    y_true[eras == "b"] = 0.1 + 0.2  # constant target
    y_pred[eras == "c"] = 2.0  # constant predictions
    labels, scores = era_scores(y_true, y_pred, eras, metric, return_eras=True)
    one_era = _METRICS[metric][0]
    expected = [one_era(y_true[eras == e], y_pred[eras == e]) for e in labels]
    np.testing.assert_allclose(scores, expected, rtol=1e-12, atol=1e-14)
    assert scores[list(labels).index("b")] == scores[list(labels).index("c")] == 0


@pytest.mark.parametrize("value", [0.1, 1 / 3, -0.02])
def test_era_summary_of_identical_scores(value):
    """Identical scores have no spread: std exactly 0 and an undefined
    (NaN) Sharpe, not 1e15 or inf by rounding."""
    s = era_summary(np.full(7, value))
    assert s["std"] == 0.0
    assert np.isnan(s["sharpe"])
    assert s["mean"] == pytest.approx(value)


def test_accuracy_on_continuous_labels_is_an_error():
    rng = np.random.RandomState(0)
    y = rng.normal(size=40)
    with pytest.raises(ValueError, match="continuous"):
        era_scores(y, y, np.repeat([0, 1], 20), metric="accuracy")
