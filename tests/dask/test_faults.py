"""A worker lost at any stage of a fit ends it with one clear error, and
Ctrl-C cancels it; after either, the scheduler and the workers hold
nothing of the fit, and the client, its data and the other workers go on
(the client fits again at once)."""

import contextlib
import os
import threading
import time

import numpy as np
import pytest

import eraboost.dask._train as train
import eraboost.dask.estimators as estimators
from eraboost import HistGradientBoostingRegressor
from eraboost.dask import DaskHistGradientBoostingRegressor

from .conftest import _client, chunked, era_data

BARRIER = "test-faults-barrier"
PARAMS = dict(max_iter=5, early_stopping=False, split_type="era", random_state=0)


@pytest.fixture(scope="module")
def own_client():
    """A cluster of its own: the tests kill its workers (their nannies
    start new ones)."""
    yield from _client(2)


@pytest.fixture
def client(own_client):
    """The module's cluster, for the tests that lose no worker."""
    own_client.wait_for_workers(2, timeout=180)
    return own_client


@pytest.fixture
def fresh_client():
    """A cluster for one test that kills a worker: on a busy machine a
    nanny may take minutes to start the next one."""
    yield from _client(2)


def _kill(client, worker):
    """End ``worker``'s process at once (as a crash or a lost machine)."""
    with contextlib.suppress(Exception):  # the worker dies before it answers
        client.run(os._exit, 1, workers=[worker])


def _cluster_keys(client):
    """The keys the scheduler knows, and those each worker holds (data or
    actors)."""
    on_scheduler = set(
        client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.tasks))
    )
    held = client.run(
        lambda dask_worker: list(dask_worker.data) + list(dask_worker.state.actors)
    )
    return on_scheduler, {k for keys in held.values() for k in keys}


def _left_after(client, before, patience=30.0):
    """The keys beyond ``before`` still on the scheduler or the workers.

    A task of one's own goes first: the client's messages travel on one
    stream, in order, so once it is done the scheduler has handled every
    submission and cancellation sent before it. The workers then drop
    what the scheduler released; they are looked at until nothing is
    left, for at most ``patience`` seconds.
    """
    client.submit(int, 0, key=BARRIER).result()
    deadline = time.monotonic() + patience
    while True:
        on_scheduler, held = _cluster_keys(client)
        left = (on_scheduler - before[0]) | (held - before[1])
        left.discard(BARRIER)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.2)


def _persisted(dX):
    """The client's data: ``dX`` held on the workers (computed before the
    keys are counted)."""
    from distributed import wait

    kept = dX.persist()
    wait(kept)
    return kept


def _data():
    X, y, eras, _ = era_data(n=1500, p=4)
    return X, y, eras, chunked(X, y, eras, rows=400)


def _fit_in_thread(est, *args, **kwargs):
    """The fit's outcome (the estimator or the exception); the fit must end
    within 60 s (never hang)."""
    outcome = {}

    def fit():
        try:
            outcome["result"] = est.fit(*args, **kwargs)
        except Exception as exc:  # the error is the outcome under test
            outcome["result"] = exc

    thread = threading.Thread(target=fit, daemon=True)
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), "the fit hung after a worker was lost"
    return outcome["result"]


def _interrupt_in_shuffle(monkeypatch):
    """Ctrl-C while the pieces are computed and the shards not started."""
    real = estimators.shuffle_to_workers
    held = []

    def shuffle(*args):
        # the pieces' futures stay referenced, as by the interrupted frames
        held.append(real(*args))
        raise KeyboardInterrupt

    monkeypatch.setattr(estimators, "shuffle_to_workers", shuffle)
    return held


def _interrupt_in_tree_loop(monkeypatch):
    """Ctrl-C in the middle of the second tree (every shard holds its
    eras, bins and nodes)."""
    real = train.Cluster.call
    calls = {"n": 0}

    def call(self, name, *args):
        if name == "split":
            calls["n"] += 1
            if calls["n"] == 6:
                raise KeyboardInterrupt
        return real(self, name, *args)

    monkeypatch.setattr(train.Cluster, "call", call)


@pytest.mark.parametrize(
    "interrupt",
    [_interrupt_in_shuffle, _interrupt_in_tree_loop],
    ids=["shuffle", "tree_loop"],
)
def test_ctrl_c_cancels_the_fit(client, monkeypatch, interrupt):
    X, y, eras, (dX, dy, de) = _data()
    kept = _persisted(dX)
    before = _cluster_keys(client)
    held = interrupt(monkeypatch)
    est = DaskHistGradientBoostingRegressor(client=client, **PARAMS)
    # the traceback is kept, as an interactive session keeps the last one:
    # its frames still reference the fit's futures and shards
    with pytest.raises(KeyboardInterrupt) as interrupted:
        est.fit(dX, dy, eras=de)
    monkeypatch.undo()
    # its tasks are cancelled and its shards released all the same
    assert not _left_after(client, before)
    del interrupted, held
    np.testing.assert_array_equal(kept.compute(), X)
    est.fit(dX, dy, eras=de)
    ref = HistGradientBoostingRegressor(**PARAMS).fit(X, y, eras=eras)
    np.testing.assert_allclose(
        est.predict(dX).compute(), ref.predict(X), rtol=0, atol=1e-9 * np.std(y)
    )


def _kill_during_placement(client, monkeypatch):
    """The shuffle has placed the pieces; the worker of the first shard dies
    before its shard starts."""
    real = estimators.shuffle_to_workers

    def shuffle(client_, X, y, sw, eras, inventory, owner, workers):
        from distributed import wait

        pieces = real(client_, X, y, sw, eras, inventory, owner, workers)
        wait([f for p in pieces for f in p])
        _kill(client, workers[0])
        return pieces

    monkeypatch.setattr(estimators, "shuffle_to_workers", shuffle)


def _kill_while_shards_start(client, monkeypatch):
    """Every shard is submitted; one worker dies before they are awaited."""
    real = client.submit
    submitted = []

    def submit(*args, **kwargs):
        future = real(*args, **kwargs)
        if kwargs.get("actor"):
            submitted.append(kwargs["workers"][0])
            if len(submitted) == 2:
                _kill(client, submitted[0])
        return future

    monkeypatch.setattr(client, "submit", submit)


def _kill_at(method, nth):
    """The worker of the first shard dies just before the ``nth`` call of
    the shards' ``method``."""

    def hook(client, monkeypatch):
        real = train.Cluster.call
        calls = {"n": 0}

        def call(self, name, *args):
            if name == method:
                calls["n"] += 1
                if calls["n"] == nth:
                    _kill(client, self.shards[0]._address)
            return real(self, name, *args)

        monkeypatch.setattr(train.Cluster, "call", call)

    return hook


STAGES = {
    "placement": _kill_during_placement,
    "shards_start": _kill_while_shards_start,
    "binning": _kill_at("bin", 1),
    "tree_loop": _kill_at("split", 3),
}


@pytest.mark.slow
@pytest.mark.parametrize("stage", list(STAGES))
def test_lost_worker_ends_the_fit(fresh_client, monkeypatch, stage):
    client = fresh_client
    X, y, eras, (dX, dy, de) = _data()
    kept = _persisted(dX)
    before = _cluster_keys(client)
    STAGES[stage](client, monkeypatch)
    est = DaskHistGradientBoostingRegressor(client=client, **PARAMS)
    error = _fit_in_thread(est, dX, dy, eras=de)
    monkeypatch.undo()
    assert isinstance(error, train.WorkerLostError), error
    assert "was lost" in str(error)
    assert "\n" not in str(error)
    # nothing of the fit is left on the scheduler or the surviving worker
    assert not _left_after(client, before)
    # the client, its data and the other worker go on: a fit at once gives
    # the single machine's model
    assert client.submit(sum, [1, 2]).result() == 3
    np.testing.assert_array_equal(kept.compute(), X)
    est.fit(dX, dy, eras=de)
    ref = HistGradientBoostingRegressor(**PARAMS).fit(X, y, eras=eras)
    np.testing.assert_allclose(
        est.predict(dX).compute(), ref.predict(X), rtol=0, atol=1e-9 * np.std(y)
    )
