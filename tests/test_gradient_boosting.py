"""Estimator behaviour: input checks, eras, early stopping, determinism."""

import warnings

import numpy as np
import pytest
from sklearn._loss.loss import HalfSquaredError
from sklearn.ensemble import HistGradientBoostingRegressor as SkHGBR
from threadpoolctl import threadpool_limits

from eraboost import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from eraboost._engine._openmp import effective_n_threads
from eraboost._eras import check_eras, era_train_val_split, label_list
from tests._sklearn_threads import scikit_learn_on_one_thread  # noqa: F401


@pytest.fixture
def data():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 4))
    y = X[:, 0] + rng.normal(size=300)
    eras = np.repeat(np.arange(6), 50)
    return X, y, eras


@pytest.mark.parametrize(
    "eras,match",
    [
        (np.arange(299), "299 labels but X has 300 rows"),
        (np.zeros((300, 2)), "must be 1-D"),
        (np.r_[np.zeros(299), np.nan], "contains NaN"),
        (np.array([None] + ["a"] * 299, dtype=object), "None or NaN"),
        (np.array([1] * 150 + ["a"] * 150, dtype=object), "one type"),
    ],
)
def test_bad_eras(data, eras, match):
    X, y, _ = data
    with pytest.raises(ValueError, match=match):
        HistGradientBoostingRegressor(split_type="era").fit(X, y, eras=eras)


@pytest.mark.parametrize(
    "make",
    [list, tuple, lambda v: np.array(v, dtype=object)],
    # names that are the same in every process (pytest-xdist's workers must
    # collect the same ids; a lambda's repr holds its address)
    ids=["list", "tuple", "object-array"],
)
def test_mixed_type_eras_are_one_error(make):
    """``[1, "1", ...]``: a list once became one era (numpy made strings of
    every label) while the object array was refused; both are refused alike."""
    labels = make([1, "1"] * 2)
    with pytest.raises(ValueError) as exc:
        check_eras(labels, 4)
    assert str(exc.value) == (
        "eras labels cannot be compared with each other ('<' not supported "
        "between instances of 'str' and 'int'); use labels of one type."
    )
    with pytest.raises(ValueError, match="use labels of one type"):
        check_eras(make([b"a", "a", "b", "b"]), 4)
    # labels of one type keep their own dtype
    codes, uniq = check_eras(make(["b", "a", "b", "a"]), 4)
    np.testing.assert_array_equal(codes, [1, 0, 1, 0])
    assert list(uniq) == ["a", "b"]


def test_label_list_is_capped():
    assert label_list(np.array(["apple", "banana"])) == "['apple', 'banana']"
    assert label_list(np.arange(3)) == "[0, 1, 2]"
    assert label_list(range(25), limit=3) == "[0, 1, 2, ... and 22 more]"


def test_bad_split_type_and_alpha(data):
    X, y, eras = data
    with pytest.raises(ValueError, match="split_type"):
        HistGradientBoostingRegressor(split_type="foo").fit(X, y, eras=eras)
    with pytest.raises(ValueError, match="boltzmann_alpha=nan"):
        HistGradientBoostingRegressor(boltzmann_alpha=np.nan).fit(X, y, eras=eras)


def test_eras_val_checks(data):
    X, y, eras = data
    est = HistGradientBoostingRegressor(early_stopping=True, max_iter=5)
    with pytest.raises(ValueError, match="eras_val has 3 labels"):
        est.fit(X, y, eras=eras, X_val=X[:10], y_val=y[:10], eras_val=[1, 2, 3])
    with pytest.raises(ValueError, match="X_val was not provided"):
        est.fit(X, y, eras=eras, eras_val=eras[:10])


def test_era_label_types():
    pd = pytest.importorskip("pandas")
    labels = ["2020-01", "2020-02", "2020-01", "2020-03"]
    for eras in (
        labels,
        np.array(labels),
        pd.Series(labels),
        pd.Categorical(labels),
        pd.Series(labels, dtype="category"),
    ):
        codes, uniq = check_eras(eras, 4)
        np.testing.assert_array_equal(codes, [0, 1, 0, 2])
        assert list(uniq) == ["2020-01", "2020-02", "2020-03"]
    with pytest.raises(ValueError, match="None or NaN"):
        check_eras(pd.Series(["a", None, "b", "a"]), 4)
    with pytest.raises(ValueError, match="NaN"):
        check_eras(pd.Categorical(["a", np.nan, "b", "a"]), 4)


def test_single_era_warning(data):
    X, y, _ = data
    with pytest.warns(UserWarning, match="without eras"):
        HistGradientBoostingRegressor(split_type="era", max_iter=2).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        HistGradientBoostingRegressor(max_iter=2).fit(X, y)  # original: silent


def test_validation_holds_out_whole_eras():
    rng = np.random.RandomState(0)
    sizes = rng.randint(50, 400, size=30)
    codes = np.repeat(np.arange(30), sizes)
    mask = era_train_val_split(codes, 0.2, 0)
    held = set(codes[mask])
    assert held and held.isdisjoint(codes[~mask])
    assert abs(mask.mean() - 0.2) < 0.05
    np.testing.assert_array_equal(mask, era_train_val_split(codes, 0.2, 0))
    assert not np.array_equal(mask, era_train_val_split(codes, 0.2, 1))


def test_early_stopping_with_eras_uses_whole_eras():
    rng = np.random.RandomState(0)
    n = 12000
    X = rng.normal(size=(n, 3))
    eras = rng.randint(0, 40, size=n)
    y = X[:, 0] + rng.normal(size=40)[eras] * X[:, 1] + rng.normal(size=n)
    est = HistGradientBoostingRegressor(
        split_type="era", max_iter=300, n_iter_no_change=5, random_state=0
    )
    est.fit(X, y, eras=eras)
    assert est.do_early_stopping_
    assert est.n_iter_ < 300
    assert len(est.validation_score_) == est.n_iter_ + 1


@pytest.mark.parametrize("split_type", ["original", "era", "directional"])
def test_deterministic_across_threads(split_type):
    rng = np.random.RandomState(0)
    n = 20000  # large enough for the parallel partition to split work
    X = rng.randint(0, 5, size=(n, 10)).astype(float)
    eras = rng.randint(0, 16, size=n)
    y = X[:, 0] + rng.normal(size=16)[eras] * X[:, 1] + rng.normal(size=n)
    X[rng.rand(n, 10) < 0.05] = np.nan
    params = dict(
        split_type=split_type,
        boltzmann_alpha=1.0,
        max_iter=15,
        max_features=0.7,
        early_stopping=True,
        random_state=7,
    )
    preds = []
    for threads in (1, 2):
        with threadpool_limits(threads, user_api="openmp"):
            assert effective_n_threads() == min(threads, effective_n_threads())
            est = HistGradientBoostingRegressor(**params).fit(X, y, eras=eras)
            preds.append(
                (est.predict(X), [t[0].nodes.tobytes() for t in est._predictors])
            )
    np.testing.assert_array_equal(preds[0][0], preds[1][0])
    assert preds[0][1] == preds[1][1]
    # and the same again
    with threadpool_limits(2, user_api="openmp"):
        again = HistGradientBoostingRegressor(**params).fit(X, y, eras=eras).predict(X)
    np.testing.assert_array_equal(preds[1][0], again)


@pytest.mark.parametrize("split_type", ["original", "era", "directional"])
@pytest.mark.parametrize("grouped", [True, False])
def test_fit_raw_predictions_are_the_models(split_type, grouped):
    """The raw predictions the fit keeps (each tree's leaf values added to
    its leaves' rows, on 2 threads: by ranges of rows when the eras come
    grouped, by leaves otherwise) are the model's own: the last training
    loss early stopping tracked is that of ``predict``. Enough rows for the
    update to use both threads; a categorical feature and missing values."""
    rng = np.random.RandomState(3)
    n = 9_000
    eras = rng.randint(0, 12, size=n)
    if grouped:
        eras = np.sort(eras)
    X = rng.normal(size=(n, 5))
    X[:, 4] = rng.randint(0, 6, size=n)
    X[rng.rand(n, 5) < 0.05] = np.nan
    y = np.nan_to_num(X[:, 0]) + (np.nan_to_num(X[:, 4]) % 3) + rng.normal(size=n)
    with threadpool_limits(2, user_api="openmp"):
        est = HistGradientBoostingRegressor(
            split_type=split_type,
            categorical_features=[4],
            max_iter=8,
            early_stopping=True,
            validation_fraction=None,
            n_iter_no_change=100,
        ).fit(X, y, eras=eras)
    raw = est._raw_predict(X).ravel()
    assert est.train_score_[-1] == pytest.approx(-est._loss(y, raw), rel=1e-10)


def test_threadpool_limits_reach_engine():
    with threadpool_limits(1, user_api="openmp"):
        assert effective_n_threads() == 1


def test_staged_predict_and_n_iter(data):
    X, y, eras = data
    est = HistGradientBoostingRegressor(
        max_iter=7, early_stopping=False, split_type="directional"
    ).fit(X, y, eras=eras)
    stages = list(est.staged_predict(X))
    assert len(stages) == est.n_iter_ == 7
    np.testing.assert_allclose(stages[-1], est.predict(X))


def test_string_eras_give_the_same_model_as_integer_eras(data):
    X, y, eras = data
    names = np.array([f"week-{e:02d}" for e in eras])
    params = dict(split_type="directional", max_iter=5, early_stopping=False)
    a = HistGradientBoostingRegressor(**params).fit(X, y, eras=eras)
    b = HistGradientBoostingRegressor(**params).fit(X, y, eras=list(names))
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    assert list(b.eras_) == sorted(set(names)) and b.n_eras_ == 6


def test_external_validation_set_with_eras(data):
    X, y, eras = data
    est = HistGradientBoostingRegressor(
        split_type="era", early_stopping=True, max_iter=50, n_iter_no_change=3
    )
    est.fit(
        X[:240],
        y[:240],
        eras=eras[:240],
        X_val=X[240:],
        y_val=y[240:],
        eras_val=eras[240:],
    )
    assert len(est.validation_score_) == est.n_iter_ + 1
    with pytest.raises(ValueError, match="early_stopping is False"):
        HistGradientBoostingRegressor(early_stopping=False).fit(X, y, X_val=X, y_val=y)


def test_validation_fraction_as_row_count_with_eras():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(2000, 3))
    y = X[:, 0] + rng.normal(size=2000)
    eras = np.repeat(np.arange(20), 100)
    est = HistGradientBoostingRegressor(
        split_type="era", early_stopping=True, validation_fraction=300, max_iter=5
    )
    est.fit(X, y, eras=eras)
    assert est.n_iter_ == 5
    mask = era_train_val_split(eras.astype(np.int32), 300, 0)
    assert mask.sum() == 300 and len(set(eras[mask])) == 3


def test_verbose_output(data, capsys):
    X, y, eras = data
    HistGradientBoostingRegressor(
        max_iter=3, verbose=2, split_type="era", early_stopping=True
    ).fit(X, y, eras=eras)
    out = capsys.readouterr().out
    assert "Fit 3 trees" in out and "[3/3]" in out and "val loss" in out


def test_callbacks_see_every_iteration_and_can_stop():
    """fit(callbacks=...): each callback gets an IterationInfo after every
    iteration; any that returns True stops there, and the estimator equals
    one fitted with that many iterations."""
    from eraboost import IterationInfo

    rng = np.random.RandomState(0)
    X, y = rng.normal(size=(400, 3)), rng.normal(size=400)
    seen, other = [], []

    def stop_at_4(info):
        assert isinstance(info, IterationInfo) and info.max_iter == 30
        seen.append(info.iteration)
        return info.iteration == 4

    est = HistGradientBoostingRegressor(max_iter=30, random_state=0)
    est.fit(X, y, callbacks=[stop_at_4, lambda info: other.append(info.score_name)])
    assert seen == [1, 2, 3, 4] and other == [None] * 4
    assert est.n_iter_ == 4
    ref = HistGradientBoostingRegressor(max_iter=4, random_state=0).fit(X, y)
    np.testing.assert_array_equal(est.predict(X), ref.predict(X))
    # warm start: iterations count on from the first fit
    est.set_params(warm_start=True, max_iter=6)
    seen.clear()
    est.fit(X, y, callbacks=lambda info: seen.append(info.iteration))
    assert seen == [5, 6]
    with pytest.raises(TypeError, match="callable"):
        HistGradientBoostingRegressor().fit(X, y, callbacks=[1])
    with pytest.raises(TypeError, match="list of callables"):
        HistGradientBoostingRegressor().fit(X, y, callbacks=3)


def test_validation_size_with_eras_is_checked_as_scikit_learn_does():
    """An integer validation size must be below the number of rows and a
    fraction must leave training rows (scikit-learn's train_test_split
    raises there too); a whole-era split that trains on one era warns."""
    from sklearn.ensemble import HistGradientBoostingRegressor as SkHGB

    rng = np.random.RandomState(0)
    X, y = rng.normal(size=(2000, 3)), rng.normal(size=2000)
    eras = np.repeat(np.arange(20), 100)
    kw = dict(early_stopping=True, max_iter=3)
    with pytest.raises(ValueError, match="smaller than the number of samples"):
        SkHGB(validation_fraction=10000, **kw).fit(X, y)
    with pytest.raises(ValueError, match="smaller than the number of samples 2000"):
        HistGradientBoostingRegressor(validation_fraction=10000, **kw).fit(
            X, y, eras=eras
        )
    with pytest.raises(ValueError, match="training set would be empty"):
        HistGradientBoostingRegressor(validation_fraction=0.9999, **kw).fit(
            X, y, eras=eras
        )
    with pytest.warns(UserWarning, match="holds out 19 of the 20 eras"):
        HistGradientBoostingRegressor(validation_fraction=0.999, **kw).fit(
            X, y, eras=eras
        )


def test_error_listing_classes_is_bounded():
    """2,000 classes that each occur in a single era: the message names a
    few and the count, not all of them."""
    codes = np.repeat(np.arange(4), 1000).astype(np.int32)
    y = np.arange(4000) // 2  # 2,000 classes, each inside one era
    with pytest.raises(ValueError) as exc:
        era_train_val_split(codes, 0.1, 0, y=y)
    msg = str(exc.value)
    assert "2000 class(es) occur in a single era" in msg
    assert "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ... and 1990 more]" in msg
    assert len(msg) < 400


def test_huge_weights_and_targets_are_clear_errors():
    """sample_weight=1e308 gave NaN predictions and probabilities, a target
    of 1e150 a constant, all silently: now a ValueError before training,
    with a backstop for non-finite gradients during it."""
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 4))
    y = X[:, 0] + rng.normal(size=300)
    huge = np.full(300, 1e308)
    with pytest.raises(ValueError, match=r"sample_weight has values up to 1e\+308"):
        HistGradientBoostingRegressor(max_iter=3).fit(X, y, sample_weight=huge)
    with pytest.raises(ValueError, match="Divide the weights by their maximum"):
        HistGradientBoostingClassifier(max_iter=3).fit(X, y > 0, sample_weight=huge)
    est = HistGradientBoostingRegressor(max_iter=3, early_stopping=True)
    with pytest.raises(ValueError, match="sample_weight_val has values up to"):
        est.fit(X, y, X_val=X, y_val=y, sample_weight_val=huge)
    for loss in ("squared_error", "poisson"):
        with pytest.raises(ValueError, match=r"y has values up to .*e\+150"):
            HistGradientBoostingRegressor(loss=loss, max_iter=3).fit(
                X, np.abs(y) * 1e150
            )
    with pytest.raises(ValueError, match=r"times sample_weight up to 1e\+38"):
        HistGradientBoostingRegressor(max_iter=3).fit(
            X, y, sample_weight=np.full(300, 1e38)
        )
    # the backstop: a loss object is not checked beforehand
    est = HistGradientBoostingRegressor(loss=HalfSquaredError(), max_iter=3)
    with (
        pytest.raises(ValueError, match="of iteration 1 are not finite"),
        np.errstate(all="ignore"),
    ):
        est.fit(X, y * 1e150)
    # bounded gradients: large targets fit (as scikit-learn fits them)
    for loss in ("absolute_error", "gamma"):
        target = np.exp(y) * 1e150
        ours = HistGradientBoostingRegressor(loss=loss, max_iter=3).fit(X, target)
        theirs = SkHGBR(loss=loss, max_iter=3).fit(X, target)
        np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-9)
        assert np.ptp(ours.predict(X)) > 0
