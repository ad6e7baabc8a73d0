"""Era-aware searches run unchanged on a Dask cluster (joblib's Dask backend)
and give the local results."""

import joblib
import numpy as np
import pytest
import sklearn
from distributed import Client, LocalCluster, get_task_stream
from scipy.stats import loguniform
from sklearn.model_selection import GridSearchCV, RandomizedSearchCV

from eraboost import (
    EraKFold,
    EraTimeSeriesSplit,
    HistGradientBoostingRegressor,
    make_era_scorer,
    worst_fold_refit,
)


@pytest.fixture(scope="module")
def client():
    """A real two-process cluster on loopback, closed after the module."""
    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=":0",
        # one OpenMP thread per worker on a small machine; results do not
        # depend on the thread count
        env={"OMP_NUM_THREADS": "1"},
    )
    try:
        with Client(cluster) as c:
            yield c
    finally:
        cluster.close()


def _data():
    rng = np.random.RandomState(0)
    eras = np.repeat(np.array([f"{i:04d}" for i in range(12)]), 50)
    X = rng.normal(size=(eras.size, 4))
    sign = np.where(np.arange(12) % 4 == 0, -1.0, 1.0)[np.arange(eras.size) // 50]
    y = sign * X[:, 0] + 0.5 * X[:, 1] + rng.normal(size=eras.size)
    return X, y, eras


def _on_dask(client, fit):
    """Run ``fit()`` through joblib's Dask backend; also count the tasks the
    cluster ran."""
    with get_task_stream(client) as ts, joblib.parallel_config(backend="dask"):
        result = fit()
    return result, len(ts.data)


def _assert_same(local, remote, X):
    assert remote.best_params_ == local.best_params_
    assert remote.best_index_ == local.best_index_
    for key, value in local.cv_results_.items():
        if "test_" in key:  # split<i>_test_*, mean/std/rank_test_*
            np.testing.assert_array_equal(remote.cv_results_[key], value, err_msg=key)
    np.testing.assert_array_equal(
        remote.best_estimator_.predict(X), local.best_estimator_.predict(X)
    )


def test_grid_search_on_dask_equals_local(client):
    X, y, eras = _data()
    with sklearn.config_context(enable_metadata_routing=True):
        est = HistGradientBoostingRegressor(max_iter=10, random_state=0)
        est = est.set_fit_request(eras=True)

        def search():
            return GridSearchCV(
                est,
                {"split_type": ["original", "era"], "max_depth": [2, None]},
                cv=EraKFold(4),
                scoring=make_era_scorer("pearson", "min"),
                refit=worst_fold_refit,
            )

        local = search().fit(X, y, eras=eras)
        remote, n_tasks = _on_dask(client, lambda: search().fit(X, y, eras=eras))
    assert n_tasks > 0  # the fits ran on the cluster's workers
    assert np.isfinite(local.cv_results_["mean_test_score"]).all()
    _assert_same(local, remote, X)


def test_randomized_search_on_dask_equals_local(client):
    X, y, eras = _data()
    est = HistGradientBoostingRegressor(max_iter=10, random_state=0)

    def search():
        return RandomizedSearchCV(
            est,
            {
                "learning_rate": loguniform(0.01, 0.5),
                "split_type": ["original", "era", "directional"],
            },
            n_iter=4,
            random_state=0,
            scoring="neg_mean_squared_error",
            cv=EraTimeSeriesSplit(3, embargo=1, test_eras=3),
        )

    # routing off: groups go to the splitter, eras to the estimator's fit
    local = search().fit(X, y, groups=eras, eras=eras)
    remote, n_tasks = _on_dask(
        client, lambda: search().fit(X, y, groups=eras, eras=eras)
    )
    assert n_tasks > 0
    assert len({p["split_type"] for p in local.cv_results_["params"]}) > 1
    _assert_same(local, remote, X)
