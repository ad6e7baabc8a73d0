"""Same trees as scikit-learn when no eras are given (and with eras under
split_type='original')."""

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor as SkHGBR

from eraboost import HistGradientBoostingRegressor
from tests._sklearn_threads import scikit_learn_on_one_thread  # noqa: F401

LOSSES = ["squared_error", "absolute_error", "poisson", "gamma", "quantile"]


def make_data(kind, loss, seed=0, n=600, p=6, nan=False):
    rng = np.random.RandomState(seed)
    if kind == "float":
        X = rng.normal(size=(n, p))
    else:  # integer-valued with few levels
        X = rng.randint(0, 5, size=(n, p)).astype(np.float64)
    f = X[:, 0] + 0.5 * X[:, 1] ** 2 - X[:, 2] * X[:, 3] * 0.3
    if loss in ("poisson",):
        y = rng.poisson(np.exp(0.3 * np.tanh(f)))
        y[0] = max(y[0], 1)
    elif loss == "gamma":
        y = rng.gamma(2.0, np.exp(0.3 * np.tanh(f)))
    else:
        y = f + rng.normal(size=n)
    if nan:
        X[rng.rand(*X.shape) < 0.1] = np.nan
    return X, y.astype(np.float64)


def assert_parity(ours, theirs, X, y):
    scale = np.std(y)
    np.testing.assert_allclose(
        ours.predict(X) / scale, theirs.predict(X) / scale, rtol=0, atol=1e-6
    )
    assert ours.n_iter_ == theirs.n_iter_


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("kind", ["float", "int"])
@pytest.mark.parametrize("nan", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_parity_losses(loss, kind, nan, weighted):
    X, y = make_data(kind, loss, seed=hash((loss, kind, nan)) % 1000, nan=nan)
    sw = None
    if weighted:
        sw = np.random.RandomState(1).uniform(0.1, 3.0, size=y.shape[0])
    params = dict(loss=loss, max_iter=15, early_stopping=False, random_state=0)
    if loss == "quantile":
        params["quantile"] = 0.8
    ours = HistGradientBoostingRegressor(**params).fit(X, y, sample_weight=sw)
    theirs = SkHGBR(**params).fit(X, y, sample_weight=sw)
    assert_parity(ours, theirs, X, y)


@pytest.mark.parametrize(
    "params",
    [
        dict(max_leaf_nodes=None, max_depth=3),
        dict(max_leaf_nodes=7, min_samples_leaf=5),
        dict(l2_regularization=2.0, learning_rate=0.3),
        dict(max_features=0.5, random_state=3),
        dict(max_bins=16),
        dict(min_samples_leaf=1, max_leaf_nodes=64),
        dict(monotonic_cst=[1, 0, -1, 0, 0, 0]),
        dict(interaction_cst=[[0, 1], [2, 3, 4]]),
    ],
)
def test_parity_parameters(params):
    X, y = make_data("float", "squared_error", seed=7, nan=True)
    p = {"max_iter": 20, "early_stopping": False, "random_state": 0, **params}
    ours = HistGradientBoostingRegressor(**p).fit(X, y)
    theirs = SkHGBR(**p).fit(X, y)
    assert_parity(ours, theirs, X, y)


def test_parity_original_with_eras():
    X, y = make_data("int", "squared_error", seed=3, nan=True)
    eras = np.repeat(np.arange(12), 50)[::-1]  # not sorted: order must not matter
    p = dict(max_iter=20, early_stopping=False, random_state=0)
    ours = HistGradientBoostingRegressor(split_type="original", **p)
    ours.fit(X, y, eras=eras)
    theirs = SkHGBR(**p).fit(X, y)
    assert_parity(ours, theirs, X, y)


@pytest.mark.parametrize("split_type", ["era", "directional"])
def test_era_types_without_eras_equal_sklearn(split_type):
    X, y = make_data("float", "squared_error", seed=5)
    p = dict(max_iter=10, early_stopping=False, random_state=0)
    with pytest.warns(UserWarning, match="without eras"):
        ours = HistGradientBoostingRegressor(split_type=split_type, **p).fit(X, y)
    theirs = SkHGBR(**p).fit(X, y)
    assert_parity(ours, theirs, X, y)


def test_parity_large_binning_subsample():
    # more rows than the binning subsample (2e5 is scikit-learn's): same bins
    rng = np.random.RandomState(0)
    X = rng.normal(size=(210_000, 2))
    y = X[:, 0] + rng.normal(size=X.shape[0])
    p = dict(max_iter=3, early_stopping=False, random_state=0)
    ours = HistGradientBoostingRegressor(**p).fit(X, y)
    theirs = SkHGBR(**p).fit(X, y)
    assert_parity(ours, theirs, X[:5000], y)


def test_parity_early_stopping_no_eras():
    X, y = make_data("float", "squared_error", seed=11, n=3000)
    for scoring in ["loss", "neg_mean_squared_error", None]:
        p = dict(
            max_iter=200,
            early_stopping=True,
            random_state=0,
            n_iter_no_change=3,
            scoring=scoring,
            validation_fraction=0.2,
        )
        ours = HistGradientBoostingRegressor(**p).fit(X, y)
        theirs = SkHGBR(**p).fit(X, y)
        assert_parity(ours, theirs, X, y)
        np.testing.assert_allclose(ours.validation_score_, theirs.validation_score_)


def test_pandas_input():
    pd = pytest.importorskip("pandas")
    X, y = make_data("float", "squared_error", seed=2)
    df = pd.DataFrame(X, columns=[f"c{i}" for i in range(X.shape[1])])
    p = dict(max_iter=10, early_stopping=False)
    ours = HistGradientBoostingRegressor(**p).fit(
        df, y, eras=pd.Series(np.arange(len(y)) % 4)
    )
    theirs = SkHGBR(**p).fit(df, y)
    assert list(ours.feature_names_in_) == list(df.columns)
    np.testing.assert_allclose(ours.predict(df), theirs.predict(df), atol=1e-9)
