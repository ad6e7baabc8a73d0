"""Wall time of one era-aware grid search: local (one process) vs a Dask
LocalCluster through joblib's Dask backend, and whether their results agree.

Usage::

    python benchmarks/experiments/dask_sweep.py --workers 2

Local runs use every core through OpenMP; each Dask worker is one process
with one thread (``OMP_NUM_THREADS=1``). On a multi-machine cluster, pass
``--scheduler tcp://host:8786`` instead of starting a local one.
"""

import argparse
import time

import joblib
import numpy as np
import sklearn
from distributed import Client, LocalCluster
from sklearn.model_selection import GridSearchCV

from eraboost import (
    EraKFold,
    HistGradientBoostingRegressor,
    make_era_scorer,
    worst_fold_refit,
)


def make_data(n_eras, rows_per_era, n_features, seed=0):
    rng = np.random.RandomState(seed)
    eras = np.repeat(np.arange(n_eras), rows_per_era)
    X = rng.randint(0, 5, size=(eras.size, n_features)).astype(np.float64)
    beta = rng.normal(size=n_eras)[eras]  # a feature whose effect varies by era
    y = X[:, 0] - X[:, 1] + beta * X[:, 2] + rng.normal(size=eras.size)
    return X, y, eras


def make_search():
    est = HistGradientBoostingRegressor(
        max_iter=50, early_stopping=False, random_state=0
    ).set_fit_request(eras=True)
    grid = {
        "split_type": ["original", "era", "directional"],
        "max_leaf_nodes": [7, 31],
        "learning_rate": [0.05, 0.1],
    }
    return GridSearchCV(
        est,
        grid,
        cv=EraKFold(5),
        scoring=make_era_scorer("pearson", "mean"),
        refit=worst_fold_refit,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--scheduler", default=None)
    parser.add_argument("--eras", type=int, default=40)
    parser.add_argument("--rows-per-era", type=int, default=500)
    parser.add_argument("--features", type=int, default=20)
    args = parser.parse_args()
    X, y, eras = make_data(args.eras, args.rows_per_era, args.features)
    sklearn.set_config(enable_metadata_routing=True)

    tic = time.perf_counter()
    local = make_search().fit(X, y, eras=eras)
    t_local = time.perf_counter() - tic

    if args.scheduler:
        client, cluster = Client(args.scheduler), None
    else:
        cluster = LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            dashboard_address=None,
            env={"OMP_NUM_THREADS": "1"},
        )
        client = Client(cluster)
    try:
        tic = time.perf_counter()
        with joblib.parallel_config(backend="dask"):
            remote = make_search().fit(X, y, eras=eras)
        t_dask = time.perf_counter() - tic
    finally:
        client.close()
        if cluster is not None:
            cluster.close()

    n_fits = len(local.cv_results_["params"]) * 5
    same = local.best_params_ == remote.best_params_ and all(
        np.array_equal(local.cv_results_[k], remote.cv_results_[k])
        for k in local.cv_results_
        if "test_" in k
    )
    print(
        f"{X.shape[0]} rows x {X.shape[1]} features, {args.eras} eras, "
        f"{n_fits} fits + refit"
    )
    print(f"local (1 process, OpenMP): {t_local:8.2f} s")
    print(
        f"dask ({args.workers if not args.scheduler else '?'} workers): {t_dask:8.2f} s"
    )
    print(f"identical cv_results_ and best_params_: {same}")
    print(f"best_params_: {local.best_params_}")


if __name__ == "__main__":
    main()
