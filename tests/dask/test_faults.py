"""A worker lost during a fit ends it with one clear error, and the client,
its data and the other workers survive."""

import contextlib
import os
import threading

import numpy as np
import pytest

import eraboost.dask._train as train
from eraboost.dask import DaskHistGradientBoostingRegressor

from .conftest import _cluster, chunked, era_data


@pytest.fixture(scope="module")
def own_client():
    """A cluster of its own: the test kills one of its workers."""
    from distributed import Client

    cluster = _cluster(2)
    try:
        with Client(cluster) as c:
            yield c
    finally:
        cluster.close()


@pytest.mark.slow
def test_lost_worker_ends_the_fit(own_client, monkeypatch):
    client = own_client
    X, y, eras, _ = era_data(n=1500, p=4)
    dX, dy, de = chunked(X, y, eras, rows=400)
    kept = dX.persist()
    calls = {"split": 0}
    real_call = train.Cluster.call

    def call(self, method, *args):
        # the third split of the first tree: one worker process exits
        if method == "split":
            calls["split"] += 1
            if calls["split"] == 3:
                victim = sorted(client.scheduler_info()["workers"])[0]
                # the worker is gone before it answers
                with contextlib.suppress(Exception):
                    client.run(os._exit, 1, workers=[victim])
        return real_call(self, method, *args)

    monkeypatch.setattr(train.Cluster, "call", call)
    est = DaskHistGradientBoostingRegressor(
        client=client, max_iter=20, early_stopping=False, split_type="era"
    )
    outcome = {}

    def fit():
        try:
            est.fit(dX, dy, eras=de)
            outcome["result"] = "finished"
        except Exception as exc:  # the error is the outcome under test
            outcome["result"] = exc

    thread = threading.Thread(target=fit, daemon=True)
    thread.start()
    # never hangs: the fit ends (here, with the error) within 60 s
    thread.join(60)
    assert not thread.is_alive()
    error = outcome["result"]
    assert isinstance(error, train.WorkerLostError)
    assert "was lost" in str(error)
    assert "\n" not in str(error)
    # the client, its data and the surviving worker go on
    assert client.submit(sum, [1, 2]).result() == 3
    np.testing.assert_array_equal(kept.compute(), X)
