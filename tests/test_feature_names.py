"""Feature names from every kind of table, on every supported scikit-learn.

scikit-learn 1.7 and 1.8 see no column names in a polars 2 frame (they read
them through the dataframe interchange protocol, which polars 2 dropped);
eraboost takes them from the table (``_feature_names.py``). The reference is
the same model fitted on a pandas frame, whose names every scikit-learn
reads.
"""

import warnings

import numpy as np
import pytest

from eraboost import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    InvariantForestRegressor,
    RobustTreeClassifier,
)

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")

NAMES = ["alpha", "beta", "gamma"]


def data(n=300, seed=0):
    rng = np.random.RandomState(seed)
    X = np.round(2 * rng.normal(size=(n, len(NAMES))))
    y = X[:, 0] - X[:, 1] + 0.1 * rng.normal(size=n)
    eras = np.repeat(np.arange(6), n // 6)
    return X, y, eras


def tables(X, names=NAMES):
    columns = {c: X[:, j] for j, c in enumerate(names)}
    return {
        "pandas": pd.DataFrame(columns),
        "polars": pl.DataFrame(columns),
        "pyarrow": pa.table(columns),
    }


def fitters():
    return {
        "boosting": lambda X, y, eras: HistGradientBoostingRegressor(
            max_iter=5, split_type="era"
        ).fit(X, y, eras=eras),
        "classifier": lambda X, y, eras: HistGradientBoostingClassifier(max_iter=5).fit(
            X, y > 0, eras=eras
        ),
        "forest": lambda X, y, eras: InvariantForestRegressor(
            n_estimators=3, max_depth=3, random_state=0
        ).fit(X, y, eras=eras),
        # integer-valued features only (data() gives them rounded)
        "robust tree": lambda X, y, eras: RobustTreeClassifier(max_depth=2).fit(
            X, y > 0
        ),
    }


@pytest.mark.parametrize("fitter", list(fitters()))
@pytest.mark.parametrize("kind", ["polars", "pyarrow"])
def test_a_model_fitted_on_a_table_has_its_column_names_as_from_pandas(kind, fitter):
    X, y, eras = data()
    frames = tables(X)
    fit = fitters()[fitter]
    reference = fit(frames["pandas"], y, eras)
    est = fit(frames[kind], y, eras)
    assert list(reference.feature_names_in_) == NAMES
    assert est.feature_names_in_.dtype == object
    assert list(est.feature_names_in_) == NAMES
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the same names: nothing to warn about
        np.testing.assert_array_equal(
            est.predict(frames[kind]), reference.predict(frames["pandas"])
        )


@pytest.mark.parametrize("kind", ["pandas", "polars", "pyarrow"])
def test_other_columns_at_predict_are_refused_as_from_pandas(kind):
    X, y, eras = data()
    est = HistGradientBoostingRegressor(max_iter=3).fit(tables(X)[kind], y, eras=eras)
    renamed = tables(X, ["alpha", "beta", "delta"])[kind]
    with pytest.raises(ValueError, match="feature names should match") as error:
        est.predict(renamed)
    assert "delta" in str(error.value) and "gamma" in str(error.value)
    swapped = tables(X, ["beta", "alpha", "gamma"])[kind]
    with pytest.raises(ValueError, match="feature names should match"):
        est.predict(swapped)


@pytest.mark.parametrize("kind", ["pandas", "polars", "pyarrow"])
def test_names_given_at_predict_to_a_model_fitted_without_are_warned_about(kind):
    X, y, eras = data()
    est = HistGradientBoostingRegressor(max_iter=3).fit(X, y, eras=eras)
    assert not hasattr(est, "feature_names_in_")
    with pytest.warns(UserWarning, match="fitted without feature names"):
        est.predict(tables(X)[kind])


def test_a_polars_frame_with_a_categorical_column_keeps_its_names():
    X, y, eras = data()
    codes = np.where(X[:, 2] > 0, "up", "down")
    frame = pl.DataFrame({"alpha": X[:, 0], "beta": X[:, 1], "gamma": codes})
    frame = frame.with_columns(pl.col("gamma").cast(pl.Categorical))
    reference_frame = pd.DataFrame(
        {"alpha": X[:, 0], "beta": X[:, 1], "gamma": pd.Categorical(codes)}
    )
    params = dict(max_iter=5, categorical_features="from_dtype")
    est = HistGradientBoostingRegressor(**params).fit(frame, y, eras=eras)
    reference = HistGradientBoostingRegressor(**params).fit(
        reference_frame, y, eras=eras
    )
    assert list(est.feature_names_in_) == NAMES
    np.testing.assert_array_equal(est.is_categorical_, [False, False, True])
    np.testing.assert_allclose(est.predict(frame), reference.predict(reference_frame))
    # scikit-learn 1.9's encoder speaks first: "columns are missing: {'beta'}"
    with pytest.raises(ValueError, match="beta"):
        est.predict(frame.rename({"beta": "delta"}))
