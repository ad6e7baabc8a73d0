"""A real cluster of worker processes on loopback, one per module and
worker count, and the small era data of the tests."""

import numpy as np
import pytest

pytest.importorskip("distributed")


def _cluster(n_workers):
    from distributed import LocalCluster

    return LocalCluster(
        n_workers=n_workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=":0",
        # one OpenMP thread per worker on a small machine; results do not
        # depend on the thread count
        env={"OMP_NUM_THREADS": "1"},
    )


# three workers run in CI's full suite (slow); two in the README's pytest
@pytest.fixture(
    scope="module",
    params=[2, pytest.param(3, marks=pytest.mark.slow)],
    ids=["2workers", "3workers"],
)
def client(request):
    from distributed import Client

    cluster = _cluster(request.param)
    try:
        with Client(cluster) as c:
            yield c
    finally:
        cluster.close()


@pytest.fixture(scope="module")
def client2():
    """Two workers only (the input checks)."""
    from distributed import Client

    cluster = _cluster(2)
    try:
        with Client(cluster) as c:
            yield c
    finally:
        cluster.close()


def slow_but(cases, *keep):
    """``cases`` for ``pytest.mark.parametrize``, all but those at the
    indices ``keep`` marked slow: the README's ``pytest`` fits a few cases
    of each Dask test, CI's full suite every one."""
    return [
        case
        if i in keep
        else pytest.param(
            *(case if isinstance(case, tuple) else (case,)), marks=pytest.mark.slow
        )
        for i, case in enumerate(cases)
    ]


def era_data(n=3000, p=10, n_eras=20, seed=0):
    """Eras drawn per row (so every chunk cuts through eras), a few missing
    values, an effect whose sign flips in a third of the eras, weights."""
    rng = np.random.RandomState(seed)
    eras = rng.randint(0, n_eras, n)
    X = rng.normal(size=(n, p))
    X[rng.rand(n, p) < 0.05] = np.nan
    sign = np.where(eras % 3 == 0, -1.0, 1.0)
    y = (
        sign * np.nan_to_num(X[:, 0])
        + 0.5 * np.nan_to_num(X[:, 1])
        + rng.normal(size=n)
    )
    w = rng.uniform(0.5, 2.0, n)
    return X, y, eras, w


def chunked(*arrays, rows=700):
    """Dask arrays of the same row chunks (the last one shorter)."""
    import dask.array as da

    return [
        None
        if a is None
        else da.from_array(a, chunks=(rows, -1) if a.ndim == 2 else rows)
        for a in arrays
    ]
