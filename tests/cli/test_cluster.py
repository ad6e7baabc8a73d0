"""``eraboost train --scheduler ADDRESS`` (issue 61, item 8): a parquet
dataset read by parts on the workers of a Dask cluster, fitted by the Dask
estimators, saved as ``train`` saves a model. Run in-process through
:func:`eraboost.cli.main` on a ``LocalCluster`` of 2 worker processes,
against the single-machine ``train`` of the same table."""

import os
import signal
import subprocess
import threading

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from eraboost import load_model
from eraboost.cli import INTERRUPTED, main
from eraboost.demo import make_era_data
from tests.cli.helpers import SCRIPT, read_csv

pytest.importorskip("distributed")

SPLIT_FIELDS = ["feature", "bin_threshold", "missing_left", "is_leaf", "left", "right"]
N_PARTS = 4


@pytest.fixture(scope="module")
def scheduler():
    """The address of a LocalCluster of 2 worker processes."""
    from distributed import LocalCluster

    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=":0",
        env={"OMP_NUM_THREADS": "1"},
    )
    try:
        from distributed import Client

        with Client(cluster) as client:
            client.run(_import_the_fit)  # the workers' imports, once
        yield cluster.scheduler_address
    finally:
        cluster.close()


def _import_the_fit():
    import eraboost.dask  # noqa: F401


def _columns(n_eras=10, rows_per_era=200, seed=0):
    """The demo's int8 features, a regression target with a few missing
    values, a binary class label and text eras, rows shuffled so that every
    part of the table cuts through eras; a text column never read."""
    X, y, eras, _ = make_era_data(n_eras, rows_per_era, seed=seed)
    order = np.random.default_rng(seed).permutation(y.shape[0])
    X, y, eras = X[order], y[order], eras[order]
    cols = {f"feature_{j}": X[:, j] for j in range(X.shape[1])}
    target = y.astype(np.float64)
    target[::97] = np.nan
    cols["target"] = target
    cols["label"] = (y > np.median(y)).astype(np.int64)
    cols["era"] = np.array([f"era{e}" for e in eras])
    cols["note"] = np.array(["text"] * y.shape[0])
    return cols, X


def _write(folder, cols):
    """The table as one file ``train.parquet`` and as a folder ``parts`` of
    ``N_PARTS`` parquet files, the same rows in the same order."""
    table = pa.table(cols)
    pq.write_table(table, folder / "train.parquet")
    (folder / "parts").mkdir()
    n = table.num_rows
    for i in range(N_PARTS):
        start = i * n // N_PARTS
        part = table.slice(start, (i + 1) * n // N_PARTS - start)
        pq.write_table(part, folder / "parts" / f"part{i}.parquet")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("cluster")
    cols, X = _columns()
    _write(d, cols)
    return d, X


def _train(d, table, target, *extra):
    return [
        *("train", str(d / table), "--target", target, "--era", "era"),
        *("--feature-prefix", "feature_", "--param", "max_iter=3", "--quiet"),
        *extra,
    ]


def _same_model(a, b, X):
    """Identical splits, leaf values and predictions within 1e-9."""
    assert a.n_iter_ == b.n_iter_
    for stage_a, stage_b in zip(a._predictors, b._predictors, strict=True):
        for tree_a, tree_b in zip(stage_a, stage_b, strict=True):
            na, nb = tree_a.nodes, tree_b.nodes
            assert na.shape == nb.shape
            for field in SPLIT_FIELDS:
                np.testing.assert_array_equal(na[field], nb[field], err_msg=field)
            np.testing.assert_allclose(na["value"], nb["value"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=0, atol=1e-9)
    if hasattr(a, "predict_proba"):
        np.testing.assert_allclose(
            a.predict_proba(X), b.predict_proba(X), rtol=0, atol=1e-9
        )


@pytest.mark.parametrize(
    "table, target, options",
    [
        # a folder of parts, rows of a missing target dropped on the workers
        ("parts", "target", ["--split-type", "era", "--drop-missing-target"]),
        # one file of the table, a classifier
        ("train.parquet", "label", ["--split-type", "directional"]),
    ],
    ids=["parts-regression-era", "file-classifier-directional"],
)
def test_scheduler_fit_is_the_single_machine_fit(
    scheduler, data, table, target, options
):
    d, X = data
    out = d / f"cluster-{target}.skops"
    args = _train(d, table, target, *options, "--scheduler", scheduler)
    assert main([*args, "--out", str(out)]) == 0
    local = d / f"local-{target}.skops"
    # the single machine's early stopping ("auto") is off at this size
    assert (
        main([*_train(d, "train.parquet", target, *options), "--out", str(local)]) == 0
    )
    (a, meta_a), (b, meta_b) = (
        load_model(p, return_metadata=True) for p in (out, local)
    )
    assert type(a) is type(b)
    _same_model(a, b, X)
    for key in ("features", "categorical", "target", "era", "task", "n_rows"):
        assert meta_a[key] == meta_b[key], key
    assert meta_a["scheduler"] == scheduler
    # predict reads the model as any other
    for model in (out, local):
        assert (
            main(
                [
                    "predict",
                    str(model),
                    str(d / "train.parquet"),
                    "--quiet",
                    "--out",
                    str(model.with_suffix(".csv")),
                ]
            )
            == 0
        )
    rows = [read_csv(m.with_suffix(".csv")) for m in (out, local)]
    assert [r["era"] for r in rows[0]] == [r["era"] for r in rows[1]]
    # the leaf values agree to 1e-9 (summed in another order), not bit for bit
    predictions = [np.array([r["prediction"] for r in rs], dtype=float) for rs in rows]
    if target == "label":
        np.testing.assert_array_equal(*predictions)
    np.testing.assert_allclose(*predictions, rtol=0, atol=1e-9)


def _error(capsys):
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("eraboost: error: "), err
    return lines[0]


@pytest.mark.parametrize(
    "extra, expected",
    [
        (["--model", "recommended"], "--model recommended fits two models"),
        (
            ["--validation-data", "parts"],
            "--validation-data (early stopping) is not supported with --scheduler",
        ),
        (
            ["--param", "loss=absolute_error"],
            "loss='absolute_error' is not supported by the "
            "Dask estimators yet; leave out --scheduler (a fit on one machine)",
        ),
        (
            ["--param", "early_stopping=True", "--param", "scoring=r2"],
            "leave out --scheduler",
        ),
        (["--features", "feature_0,note"], "'note' is categorical"),
        (["--categorical-features", "feature_1"], "'feature_1' is categorical"),
    ],
    ids=[
        "recommended",
        "validation",
        "loss",
        "scorer",
        "text",
        "categorical",
    ],
)
def test_refused_before_connecting(data, capsys, extra, expected):
    """What the Dask fit cannot do is refused before the scheduler is
    contacted (none listens at this address)."""
    d, _ = data
    args = [*_train(d, "parts", "target"), *extra, "--scheduler", "tcp://127.0.0.1:1"]
    if "--features" in extra:
        args.remove("--feature-prefix")
        args.remove("feature_")
    assert main([*args, "--out", str(d / "x.skops")]) == 1
    assert expected in _error(capsys)
    assert not (d / "x.skops").exists()


def test_csv_and_missing_tables_refused(tmp_path, capsys):
    (tmp_path / "t.csv").write_text("feature_0,target,era\n1,2,3\n")
    for table, expected in [
        ("t.csv", "needs parquet; " + str(tmp_path / "t.csv") + " is CSV"),
        ("none", "no such file or folder"),
    ]:
        args = [*_train(tmp_path, table, "target"), "--scheduler", "tcp://127.0.0.1:1"]
        assert main([*args, "--out", str(tmp_path / "x.skops")]) == 1
        assert expected in _error(capsys)


def test_unreachable_scheduler(data, monkeypatch, capsys):
    from eraboost.cli import _cluster

    monkeypatch.setattr(_cluster, "CONNECT_TIMEOUT_S", 1)
    d, _ = data
    for address, expected in [
        (
            "tcp://127.0.0.1:1",
            "cannot reach the Dask scheduler at tcp://127.0.0.1:1 "
            "(no answer within 1 s): check the address",
        ),
        ("nothing://here", "is not a scheduler address"),
    ]:
        args = [*_train(d, "parts", "target"), "--scheduler", address]
        assert main([*args, "--out", str(d / "x.skops")]) == 1
        assert expected in _error(capsys)


def test_scheduler_without_workers(data, monkeypatch, capsys):
    from distributed import LocalCluster

    from eraboost.cli import _cluster

    monkeypatch.setattr(_cluster, "CONNECT_TIMEOUT_S", 1)
    d, _ = data
    with LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as empty:
        address = empty.scheduler_address
        args = [*_train(d, "parts", "target"), "--scheduler", address]
        assert main([*args, "--out", str(d / "x.skops")]) == 1
    assert (
        f"the Dask scheduler at {address} has no workers (none joined within "
        f"1 s): start some with dask worker {address}"
    ) in _error(capsys)


def test_table_checks_on_the_workers(scheduler, tmp_path, capsys):
    """The checks of ``train`` on rows read on the workers: a missing target
    (without --drop-missing-target), a single era."""
    cols, _ = _columns(n_eras=3, rows_per_era=50)
    _write(tmp_path, cols)
    args = [*_train(tmp_path, "parts", "target"), "--scheduler", scheduler]
    assert main([*args, "--out", str(tmp_path / "x.skops")]) == 1
    assert "has 2 missing values (NaN)" in _error(capsys)
    cols["era"][:] = "era0"
    pq.write_table(pa.table(cols), tmp_path / "one.parquet")
    args = [*_train(tmp_path, "one.parquet", "label"), "--scheduler", scheduler]
    assert main([*args, "--out", str(tmp_path / "x.skops")]) == 1
    assert "holds a single era; --scheduler places whole eras" in _error(capsys)


def test_part_missing_on_the_workers(scheduler, tmp_path, monkeypatch, capsys):
    """A part the workers cannot read (here removed once the client has
    listed the parts): one line naming the table and the fix."""
    from eraboost.cli import _cluster

    cols, _ = _columns(n_eras=3, rows_per_era=50)
    _write(tmp_path, cols)
    listed = _cluster.ParquetDataset

    def listed_then_removed(path):
        table = listed(path)
        (tmp_path / "parts" / "part1.parquet").unlink()
        return table

    monkeypatch.setattr(_cluster, "ParquetDataset", listed_then_removed)
    args = [*_train(tmp_path, "parts", "label"), "--scheduler", scheduler]
    assert main([*args, "--out", str(tmp_path / "x.skops")]) == 1
    line = _error(capsys)
    assert f"the workers cannot read {tmp_path / 'parts'}: " in line
    assert line.endswith(
        "give a path that every worker reads under the same name (a shared folder)"
    )


def test_lost_worker(scheduler, data, monkeypatch, capsys):
    """A worker lost during the fit (``tests/dask/test_faults.py`` kills
    one): one line, nothing saved."""
    from eraboost.dask import estimators
    from eraboost.dask._train import WorkerLostError

    def lost(*args, **kwargs):
        raise WorkerLostError("a worker holding eras of this fit was lost")

    monkeypatch.setattr(estimators, "boost", lost)
    d, _ = data
    out = d / "lost.skops"
    args = [*_train(d, "parts", "label"), "--scheduler", scheduler]
    assert main([*args, "--out", str(out)]) == 1
    assert _error(capsys) == (
        "eraboost: error: WorkerLostError: a worker holding eras of this fit "
        "was lost (nothing was saved; check the workers' memory and logs, then "
        "run the command again)"
    )
    assert not out.exists()


def test_without_dask(data, monkeypatch, capsys):
    import sys

    monkeypatch.setitem(sys.modules, "distributed", None)  # import fails
    d, _ = data
    args = [*_train(d, "parts", "target"), "--scheduler", "tcp://127.0.0.1:1"]
    assert main([*args, "--out", str(d / "x.skops")]) == 1
    assert _error(capsys) == (
        "eraboost: error: --scheduler needs dask and distributed: "
        "pip install 'eraboost[dask]'"
    )


def _n_tasks(dask_scheduler):
    return len(dask_scheduler.tasks)


def _cluster_released_the_fit(address):
    """The interrupted fit's tasks and actors are released (its client
    closed), and the cluster still computes."""
    import time

    from distributed import Client

    with Client(address, timeout=10) as client:
        for _ in range(100):  # the scheduler forgets them shortly after
            if client.run_on_scheduler(_n_tasks) == 0:
                break
            time.sleep(0.1)
        assert client.run_on_scheduler(_n_tasks) == 0
        assert client.submit(sum, [1, 2]).result() == 3


def test_ctrl_c_during_the_fit(scheduler, data, monkeypatch, capsys):
    """Ctrl-C while the cluster fits: the one line and status 130, nothing
    saved; the cluster goes on."""
    from eraboost.cli import _interrupts as interrupts
    from eraboost.dask import estimators

    monkeypatch.setattr(interrupts, "_SIGINT_SEEN", [])
    boost = estimators.boost

    def interrupted_boost(*args, **kwargs):
        # Ctrl-C 0.3 s into the trees, while the driver waits on the workers
        threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
        return boost(*args, **kwargs)

    monkeypatch.setattr(estimators, "boost", interrupted_boost)
    d, _ = data
    out = d / "ctrl-c.skops"
    args = _train(d, "parts", "label", "--param", "max_iter=200")
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        assert main([*args, "--scheduler", scheduler, "--out", str(out)]) == 130
    finally:
        signal.signal(signal.SIGINT, previous)
    assert capsys.readouterr().err == INTERRUPTED + "\n"
    assert not out.exists()
    _cluster_released_the_fit(scheduler)


@pytest.mark.slow
def test_command_on_a_cluster(scheduler, data):
    """The installed command: its lines on stderr and nothing else (no log
    of dask), then Ctrl-C during a second fit ends it with the one line."""
    d, _ = data
    args = [str(SCRIPT), *_train(d, "parts", "label"), "--scheduler", scheduler]
    args.remove("--quiet")
    res = subprocess.run(
        [*args, "--out", "m.skops"],
        cwd=d,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 2, res.stderr
    assert lines[0].startswith(f"{d / 'parts'}: 2,000 rows x 10 features (int8)")
    assert lines[1].startswith("saved 3 iterations in ")
    assert load_model(d / "m.skops").n_iter_ == 3
    proc = subprocess.Popen(
        [*args, "--param", "max_iter=500", "--out", "long.skops"],
        cwd=d,
        stderr=subprocess.PIPE,
        text=True,
        # a pytest-xdist worker (as a shell's background job) ignores SIGINT,
        # and its children inherit that; a terminal's command does not
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert "fitting on 2 workers" in proc.stderr.readline()
    proc.send_signal(signal.SIGINT)
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 130
    assert err == INTERRUPTED + "\n"
    assert not (d / "long.skops").exists()
