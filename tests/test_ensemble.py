"""EraEnsembleRegressor / EraEnsembleClassifier: the members' average, eras
routed to each, their parameters reachable for a search over whole eras."""

import warnings

import numpy as np
import pytest
import sklearn
from sklearn.base import clone
from sklearn.linear_model import LinearRegression
from sklearn.model_selection import GridSearchCV, cross_val_score

from eraboost import (
    EraEnsembleClassifier,
    EraEnsembleRegressor,
    EraKFold,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)
from eraboost.demo import make_era_data


@pytest.fixture(scope="module")
def era_data():
    X, y, eras, _ = make_era_data(n_eras=8, rows_per_era=60, seed=0)
    return X, y, eras


def _pair(cls, **params):
    return [
        ("original", cls(max_iter=15, **params)),
        (
            "directional",
            cls(max_iter=15, split_type="directional", irf_penalty=1.0, **params),
        ),
    ]


def test_regressor_is_the_mean_of_its_members_fitted_alone(era_data):
    X, y, eras = era_data
    weights = np.random.RandomState(0).uniform(0.5, 1.5, len(y))
    model = EraEnsembleRegressor(_pair(HistGradientBoostingRegressor))
    model.fit(X, y, sample_weight=weights, eras=eras)
    alone = [
        clone(est).fit(X, y, sample_weight=weights, eras=eras).predict(X)
        for _, est in _pair(HistGradientBoostingRegressor)
    ]
    # the user's own average, the same floats
    np.testing.assert_array_equal(model.predict(X), np.mean(alone, axis=0))
    assert model.score(X, y) == pytest.approx(
        1 - np.sum((y - np.mean(alone, axis=0)) ** 2) / np.sum((y - y.mean()) ** 2)
    )
    weighted = model.set_params(weights=[1, 3]).fit(X, y, eras=eras)
    alone = [
        clone(est).fit(X, y, eras=eras).predict(X)
        for _, est in _pair(HistGradientBoostingRegressor)
    ]
    np.testing.assert_allclose(
        weighted.predict(X), 0.25 * alone[0] + 0.75 * alone[1], rtol=0, atol=1e-12
    )


def test_classifier_averages_probabilities(era_data):
    X, y, eras = era_data
    label = np.where(y > np.median(y), "high", "low")
    model = EraEnsembleClassifier(_pair(HistGradientBoostingClassifier))
    model.fit(X, label, eras=eras)
    proba = [
        clone(est).fit(X, label, eras=eras).predict_proba(X)
        for _, est in _pair(HistGradientBoostingClassifier)
    ]
    np.testing.assert_array_equal(model.predict_proba(X), np.mean(proba, axis=0))
    assert list(model.classes_) == ["high", "low"]
    expected = model.classes_[np.argmax(np.mean(proba, axis=0), axis=1)]
    np.testing.assert_array_equal(model.predict(X), expected)


def test_default_members_are_the_recommended_pair(era_data):
    X, y, eras = era_data
    model = EraEnsembleRegressor()
    params = model.get_params()
    assert params["estimators"] is None
    assert params["original__split_type"] == "original"
    assert params["directional__split_type"] == "directional"
    assert params["directional__irf_penalty"] == 1.0
    default = HistGradientBoostingRegressor().get_params()
    for name in ("original", "directional"):
        changed = {
            k
            for k, v in params[name].get_params().items()
            if not (v == default[k] or (v is None and default[k] is None))
        }
        assert changed <= {"split_type", "irf_penalty"}
    model.fit(X, y, eras=eras)
    alone = HistGradientBoostingRegressor(split_type="directional", irf_penalty=1.0)
    np.testing.assert_array_equal(
        model.named_estimators_["directional"].predict(X),
        alone.fit(X, y, eras=eras).predict(X),
    )


def test_eras_reach_every_member_that_takes_them(era_data):
    X, y, eras = era_data
    members = [*_pair(HistGradientBoostingRegressor), ("linear", LinearRegression())]
    model = EraEnsembleRegressor(members).fit(X, y, eras=eras)
    with_eras = clone(members[1][1]).fit(X, y, eras=eras).predict(X)
    without = clone(members[1][1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # fit without eras warns
        without = without.fit(X, y).predict(X)
    got = model.named_estimators_["directional"].predict(X)
    np.testing.assert_array_equal(got, with_eras)
    assert not np.array_equal(got, without)  # the eras changed the member
    # a member whose fit takes no eras fits without them
    np.testing.assert_array_equal(
        model.named_estimators_["linear"].predict(X),
        LinearRegression().fit(X, y).predict(X),
    )


def test_members_warnings_point_at_the_users_call(era_data):
    X, y, _ = era_data
    model = EraEnsembleRegressor(_pair(HistGradientBoostingRegressor))
    with pytest.warns(UserWarning, match="without eras") as record:
        model.fit(X, y)
    assert {w.filename for w in record} == {__file__}


def test_weight_zero_member_is_left_out(era_data):
    X, y, eras = era_data
    model = EraEnsembleRegressor(_pair(HistGradientBoostingRegressor), weights=(1, 0))
    model.fit(X, y, eras=eras)
    assert list(model.named_estimators_) == ["original"]
    alone = HistGradientBoostingRegressor(max_iter=15).fit(X, y, eras=eras)
    np.testing.assert_array_equal(model.predict(X), alone.predict(X))


def test_params_clone_and_set_params():
    model = EraEnsembleRegressor()
    copy = clone(model)
    assert copy.estimators is None and copy.get_params().keys() == (
        model.get_params().keys()
    )
    # setting a member's parameter makes the recommended pair explicit
    model.set_params(directional__irf_penalty=2.0, weights=(1, 2))
    assert [n for n, _ in model.estimators] == ["original", "directional"]
    assert model.estimators[1][1].irf_penalty == 2.0
    assert clone(model).get_params()["directional__irf_penalty"] == 2.0
    # a member replaced whole, by name
    model.set_params(original=LinearRegression())
    assert isinstance(model.estimators[0][1], LinearRegression)
    assert model.get_params()["original__fit_intercept"] is True
    with pytest.raises(ValueError, match="Invalid parameter"):
        EraEnsembleRegressor().set_params(nothing__max_iter=3)


def test_cross_val_score_over_whole_eras(era_data):
    X, y, eras = era_data
    model = EraEnsembleRegressor(_pair(HistGradientBoostingRegressor))
    cv = EraKFold(n_splits=4)
    expected = []
    for train, test in cv.split(X, groups=eras):
        fitted = clone(model).fit(X[train], y[train], eras=eras[train])
        expected.append(fitted.score(X[test], y[test]))
    with sklearn.config_context(enable_metadata_routing=True):
        routed = cross_val_score(
            clone(model).set_fit_request(eras=True),
            X,
            y,
            cv=cv,
            params={"eras": eras},
        )
    np.testing.assert_allclose(routed, expected, rtol=0, atol=1e-12)
    plain = cross_val_score(model, X, y, groups=eras, cv=cv, params={"eras": eras})
    np.testing.assert_allclose(plain, expected, rtol=0, atol=1e-12)


def test_one_grid_search_chooses_between_the_ensemble_and_its_members(era_data):
    X, y, eras = era_data
    cv = EraKFold(n_splits=4)
    grid = {"weights": [(1, 0), (0, 1), (0.5, 0.5)]}
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(
            EraEnsembleRegressor(_pair(HistGradientBoostingRegressor)).set_fit_request(
                eras=True
            ),
            grid,
            cv=cv,
        )
        search.fit(X, y, eras=eras)
        alone = [
            cross_val_score(
                clone(est).set_fit_request(eras=True),
                X,
                y,
                cv=cv,
                params={"eras": eras},
            ).mean()
            for _, est in _pair(HistGradientBoostingRegressor)
        ]
    means = search.cv_results_["mean_test_score"]
    # (1, 0) is `original` alone, (0, 1) `directional, irf 1` alone
    np.testing.assert_allclose(means[:2], alone, rtol=0, atol=1e-12)
    best = grid["weights"][int(np.argmax(means))]
    assert search.best_params_ == {"weights": best}
    assert search.best_estimator_.weights == best
    # the members' parameters are in the same search (routing off: the eras
    # go to fit, the groups to the splitter)
    search = GridSearchCV(
        EraEnsembleRegressor(_pair(HistGradientBoostingRegressor)),
        {"directional__irf_penalty": [0.0, 1.0]},
        cv=cv,
    ).fit(X, y, groups=eras, eras=eras)
    penalty = search.cv_results_["param_directional__irf_penalty"]
    assert list(penalty) == [0.0, 1.0]
    # irf_penalty=1 is the equal-weight pair of the first search
    np.testing.assert_allclose(
        search.cv_results_["mean_test_score"][1], means[2], rtol=0, atol=1e-12
    )
    assert search.cv_results_["mean_test_score"][0] != means[2]


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"estimators": []}, "non-empty list of \\(name, estimator\\) pairs"),
        ({"estimators": [LinearRegression()]}, "pairs"),
        (
            {"estimators": [("a", LinearRegression()), ("a", LinearRegression())]},
            "unique",
        ),
        ({"estimators": [("weights", LinearRegression())]}, "other than"),
        (
            {"estimators": [("c", HistGradientBoostingClassifier())]},
            "averages regressors; member 'c' is a HistGradientBoostingClassifier",
        ),
        ({"weights": [1, 2, 3]}, "2 numbers, one per member"),
        ({"weights": [1, -1]}, "non-negative"),
        ({"weights": [0, 0]}, "not all zero"),
        ({"weights": [1, np.nan]}, "finite"),
    ],
)
def test_bad_members_and_weights(era_data, params, match):
    X, y, eras = era_data
    with pytest.raises(ValueError, match=match) as info:
        EraEnsembleRegressor(**params).fit(X, y, eras=eras)
    assert "\n" not in str(info.value)


def test_sample_weight_needs_every_member_to_take_it(era_data):
    from sklearn.neighbors import KNeighborsRegressor

    X, y, _ = era_data
    model = EraEnsembleRegressor([("knn", KNeighborsRegressor())])
    with pytest.raises(ValueError, match=r"member 'knn' .* takes no sample_weight"):
        model.fit(X, y, sample_weight=np.ones(len(y)))
