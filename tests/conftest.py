"""Fixtures shared by the tests: the OpenMP threads of each pytest-xdist
worker, and, for the model-file tests (test_persistence.py and
test_model_file_attacks.py), one fitted model of every kind a model file
holds, fitted once a session, on first use."""

import os

import numpy as np
import pytest

from eraboost import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    InvariantForestClassifier,
    InvariantForestRegressor,
    RobustTreeClassifier,
)


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # macOS
        return os.cpu_count() or 1


@pytest.fixture(scope="session", autouse=True)
def openmp_threads_shared_by_the_xdist_workers():
    """Under pytest-xdist (``-n auto`` in pyproject.toml), each worker's
    OpenMP runtimes get an equal share of the cores, at least one: fits on
    as many threads as cores in every worker at once would wait on each
    other's spinning threads (tens of times slower on 2 cores). A test that
    sets its own threads (``threadpool_limits(2)``) still gets them."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers <= 1:
        yield
        return
    from threadpoolctl import threadpool_limits

    import eraboost._engine._openmp  # noqa: F401  (loads eraboost's runtime)

    with threadpool_limits(limits=max(1, _cores() // workers), user_api="openmp"):
        yield


def _frame(X, seed):
    # pandas is imported here: the wheel's smoke tests run without it
    import pandas as pd

    rng = np.random.RandomState(seed)
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    df["sector"] = pd.Categorical(rng.choice(["a", "b", "c", "d"], size=len(df)))
    return df


@pytest.fixture(scope="session")
def fitted_models():
    """name -> (fitted estimator, X to predict): every kind of model, with
    eras, categories, early stopping and out-of-bag scores among them."""
    rng = np.random.RandomState(0)
    n = 1200
    X = rng.normal(size=(n, 5))
    eras = np.repeat(np.arange(12), n // 12)
    y_reg = X[:, 0] + 0.5 * X[:, 1] * (eras % 2) + rng.normal(scale=0.5, size=n)
    y_bin = (y_reg > 0).astype(int)
    y_multi = np.digitize(y_reg, [-0.7, 0.0, 0.7])
    X_new = rng.normal(size=(300, 5))
    df = _frame(X, 0)
    y_cat = y_reg + (df["sector"] == "a").to_numpy()
    common = dict(max_iter=15, random_state=0)
    era = dict(split_type="era", boltzmann_alpha=-np.inf)
    return {
        "regressor": (
            HistGradientBoostingRegressor(**common, **era).fit(X, y_reg, eras=eras),
            X_new,
        ),
        "binary": (
            HistGradientBoostingClassifier(**common, split_type="directional").fit(
                X, y_bin, eras=eras
            ),
            X_new,
        ),
        "multiclass": (
            HistGradientBoostingClassifier(**common, **era).fit(X, y_multi, eras=eras),
            X_new,
        ),
        "categorical": (
            HistGradientBoostingRegressor(
                **common, scoring="r2", early_stopping=True
            ).fit(df, y_cat, eras=eras),
            _frame(X_new, 1),
        ),
        "forest-regressor": (
            InvariantForestRegressor(
                n_estimators=5,
                irf_penalty=1.0,
                irf_variance="difference",
                random_state=0,
            ).fit(X, y_reg, eras=eras),
            X_new,
        ),
        "forest-classifier": (
            InvariantForestClassifier(n_estimators=5, random_state=0).fit(
                X, y_bin, eras=eras
            ),
            X_new,
        ),
        "robust-tree": (
            RobustTreeClassifier(max_depth=1, budget=2.0).fit(
                np.round(X[:80] * 2), y_bin[:80]
            ),
            np.round(X_new * 2),
        ),
    }
