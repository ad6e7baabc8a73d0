"""The command line: train, predict, report, Ctrl-C, bad input."""

import ast
import contextlib
import csv
import os
import pickle
import re
import resource
import signal
import stat
import subprocess
import sys
import threading
import time

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import skops.io

from eraboost import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    cli,
    load_model,
    save_model,
)
from eraboost.cli import INTERRUPTED
from eraboost.demo import make_era_data
from eraboost.metrics import era_scores, era_summary
from tests.cli.helpers import FEATURES, SCRIPT, read_csv, run, write


class Marker:
    """Unpickling it would create the file ``Marker.path``: a crafted model."""

    path = None

    def __reduce__(self):
        return (open, (str(Marker.path), "w"))


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    X, y, eras, edges = make_era_data(12, 300, seed=0)
    write(d / "train.parquet", X, y, eras)
    Xt, yt, et, _ = make_era_data(6, 300, spurious_sign=-1.0, seed=1, edges=edges)
    write(d / "test.parquet", Xt, yt, et + 100)
    return d, (X, y, eras), (Xt, yt, et + 100)


def test_train_predict_report_end_to_end(data):
    d, (X, y, eras), (Xt, yt, et) = data
    common = [
        "--target",
        "target",
        "--era",
        "era",
        "--feature-prefix",
        "feature_",
        "--param",
        "max_iter=30",
        "--param",
        "early_stopping=True",
    ]
    # the installed script in a process of its own, once end to end
    res = run(
        ["train", "train.parquet", *common, "--out", "original.skops"], d, process=True
    )
    assert res.returncode == 0, res.stderr
    assert "1/30 iterations" in res.stderr and "ETA" in res.stderr
    # the scores are named, the loss positive (as scikit-learn prints it)
    line = res.stderr.splitlines()[1]
    assert re.search(r"train loss \d\.\d+, valid loss \d\.\d+", line), line
    res = run(
        [
            "train",
            "train.parquet",
            *common,
            "--split-type",
            "directional",
            "--boltzmann-alpha",
            "-inf",
            "--out",
            "directional.skops",
            "--quiet",
        ],
        d,
    )
    assert res.returncode == 0, res.stderr
    assert res.stderr == "" and res.stdout == ""

    model, meta = load_model(d / "directional.skops", return_metadata=True)
    assert meta["features"] == FEATURES
    assert model.split_type == "directional"
    assert model.boltzmann_alpha == -np.inf
    assert meta["n_iter"] == model.n_iter_
    assert not meta["interrupted"]
    # the same model as fitted in-process with the same parameters
    ref = HistGradientBoostingRegressor(
        split_type="directional",
        boltzmann_alpha=-np.inf,
        max_iter=30,
        early_stopping=True,
        random_state=0,
    ).fit(X, y, eras=eras)
    assert ref.n_iter_ == meta["n_iter"]
    np.testing.assert_array_equal(model.predict(Xt), ref.predict(Xt))

    for out in ("pred.parquet", "pred.csv"):
        res = run(["predict", "directional.skops", "test.parquet", "--out", out], d)
        assert res.returncode == 0, res.stderr
    table = pq.read_table(d / "pred.parquet")
    assert table.column_names == ["era", "prediction"]
    expected = ref.predict(Xt)
    np.testing.assert_array_equal(table.column("prediction").to_numpy(), expected)
    rows = read_csv(d / "pred.csv")
    np.testing.assert_allclose(
        [float(r["prediction"]) for r in rows], expected, rtol=1e-15
    )
    assert [r["era"] for r in rows] == [f"era{e:03d}" for e in et]

    res = run(
        [
            "report",
            "original.skops",
            "directional.skops",
            "test.parquet",
            "--target",
            "target",
            "--era",
            "era",
            "--out",
            "rep",
        ],
        d,
    )
    assert res.returncode == 0, res.stderr
    assert "directional" in res.stdout and "sharpe" in res.stdout
    rep = d / "rep"
    for name in ("era_scores.png", "cumulative.png"):
        raw = (rep / name).read_bytes()
        assert raw.startswith(b"\x89PNG\r\n\x1a\n")
        import matplotlib.image

        img = matplotlib.image.imread(rep / name)
        assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100

    era_labels = np.array([f"era{e:03d}" for e in et])
    preds = {
        "original": load_model(d / "original.skops").predict(Xt),
        "directional": expected,
    }
    scores_rows = read_csv(rep / "era_scores.csv")
    summary_rows = {r["model"]: r for r in read_csv(rep / "summary.csv")}
    for name, pred in preds.items():
        labels, scores = era_scores(yt, pred, era_labels, "pearson", return_eras=True)
        assert [r["era"] for r in scores_rows] == list(labels)
        np.testing.assert_allclose(
            [float(r[name]) for r in scores_rows], scores, rtol=1e-12
        )
        summary = era_summary(scores)
        row = summary_rows[name]
        for key in ("mean", "std", "sharpe", "worst", "positive_share", "max_drawdown"):
            np.testing.assert_allclose(float(row[key]), summary[key], rtol=1e-12)
        assert int(row["n_eras"]) == 6
        assert row["worst_era"] == labels[np.argmin(scores)]


@pytest.fixture
def seen(monkeypatch):
    """The X of every regressor fit (a spy on ``fit``)."""
    seen = []
    original_fit = HistGradientBoostingRegressor.fit

    def spy(self, X, y, **kw):
        seen.append(X)
        return original_fit(self, X, y, **kw)

    monkeypatch.setattr(HistGradientBoostingRegressor, "fit", spy)
    return seen


def test_int8_columns_reach_fit_as_int8(data, seen, tmp_path):
    d, (X, y, eras), _ = data
    status = cli.main(
        [
            "train",
            str(d / "train.parquet"),
            "--target",
            "target",
            "--era",
            "era",
            "--features",
            ",".join(FEATURES[::-1]),
            "--param",
            "max_iter=3",
            "--out",
            str(tmp_path / "m.skops"),
            "--quiet",
        ]
    )
    assert status == 0
    (X_fit,) = seen
    assert X_fit.dtype == np.int8
    np.testing.assert_array_equal(X_fit, X[:, ::-1])

    # int8 next to float32 gives a MixedMatrix (tests/cli/test_mixed_tables.py);
    # an int8 column with nulls, NaN in one float32 matrix
    col = pa.array([1, None, 3] + [0] * 297, type=pa.int8())
    pq.write_table(
        pa.table(
            {
                "a": X[:300, 0],
                "b": X[:300, 1].astype(np.float32),
                "c": col,
                "target": y[:300],
                "era": eras[:300],
            }
        ),
        tmp_path / "mixed.parquet",
    )
    from eraboost.cli._tables import Table

    table = Table(tmp_path / "mixed.parquet")
    Xab, _, _ = table.read(["a", "b"])
    assert Xab.ints.dtype == np.int8 and Xab.floats.dtype == np.float64
    Xac, cols, _ = table.read(["a", "c"], ["era"])
    assert Xac.dtype == np.float32 and np.isnan(Xac[1, 1]) and Xac[2, 1] == 3
    np.testing.assert_array_equal(cols["era"], eras[:300])


def test_iteration_callback_stops_cleanly(data):
    _, (X, y, eras), (Xt, _, _) = data
    calls = []

    def callback(info):
        assert info.estimator is est and info.score_name == "loss"
        calls.append(
            (info.iteration, info.max_iter, info.train_score, info.validation_score)
        )
        return info.iteration == 5

    est = HistGradientBoostingRegressor(
        max_iter=50, early_stopping=True, random_state=0
    )
    est.fit(X, y, eras=eras, callbacks=[callback])
    assert [c[0] for c in calls] == [1, 2, 3, 4, 5]
    assert all(c[1] == 50 for c in calls)
    assert est.n_iter_ == 5
    assert len(est.train_score_) == len(est.validation_score_) == 6
    assert calls[-1][2] == est.train_score_[-1]
    assert calls[-1][3] == est.validation_score_[-1]
    ref = HistGradientBoostingRegressor(
        max_iter=5, early_stopping=True, random_state=0
    ).fit(X, y, eras=eras)
    np.testing.assert_array_equal(est.predict(Xt), ref.predict(Xt))
    np.testing.assert_array_equal(est.validation_score_, ref.validation_score_)


def test_ctrl_c_keeps_the_trees(data):
    d, _, (Xt, _, _) = data
    max_iter = 1_000_000
    proc = subprocess.Popen(
        [
            str(SCRIPT),
            "train",
            "train.parquet",
            "--target",
            "target",
            "--era",
            "era",
            "--feature-prefix",
            "feature_",
            "--param",
            f"max_iter={max_iter}",
            "--param",
            "early_stopping=True",
            "--param",
            "n_iter_no_change=1000000",
            "--param",
            "learning_rate=0.001",
            "--out",
            "interrupted.skops",
        ],
        cwd=d,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        lines = []
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            assert line, f"no progress before exit: {lines}"
            lines.append(line)
            if "iterations," in line:
                break
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        rest = proc.stderr.read()
        assert proc.wait(timeout=120) == 0, "".join(lines) + rest
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "interrupted: saved the" in rest
    est, meta = load_model(d / "interrupted.skops", return_metadata=True)
    assert meta["interrupted"]
    assert 1 <= meta["n_iter"] == est.n_iter_ < max_iter
    assert len(est.train_score_) == len(est.validation_score_) == est.n_iter_ + 1
    assert np.isfinite(est.predict(Xt)).all()


@pytest.fixture(scope="module")
def bad_files(data):
    d, (X, y, eras), _ = data
    y_nan = y.copy()
    y_nan[[3, 10]] = np.nan
    write(d / "nan_target.parquet", X, y_nan, eras)
    (d / "garbage.parquet").write_bytes(b"this is not a parquet file\n" * 10)
    (d / "garbage.skops").write_bytes(b"not a model")
    Marker.path = d / "code-ran"
    (d / "crafted.skops").write_bytes(pickle.dumps(Marker()))
    skops.io.dump({"format": "eraboost-model", "version": 1}, d / "keyless.skops")
    cols = {name: X[:, j] for j, name in enumerate(FEATURES[:5])}
    pq.write_table(pa.table(cols), d / "fewer.parquet")
    cols = {f"x{j}": X[:, j] for j in range(3)}
    pq.write_table(pa.table({**cols, "target": y, "era": eras}), d / "unnamed.parquet")
    res = run(
        [
            "train",
            "train.parquet",
            "--target",
            "target",
            "--era",
            "era",
            "--feature-prefix",
            "feature_",
            "--param",
            "max_iter=3",
            "--out",
            "small.skops",
            "--quiet",
        ],
        d,
    )
    assert res.returncode == 0, res.stderr
    # metadata the command line cannot use (issue 55, item 6): each a
    # one-line error, never a traceback
    small = load_model(d / "small.skops")
    for name, meta in {
        "meta_int": {"features": 5},
        "meta_nested": {"features": [FEATURES[:2], "feature_2"]},
        "meta_one": {"features": ["feature_0"]},
        "meta_cat": {"features": FEATURES, "categorical": 5},
    }.items():
        save_model(small, d / f"{name}.skops", metadata=meta)
    labels = np.where(y > np.median(y), "up", "down")
    classifier = HistGradientBoostingClassifier(max_iter=2).fit(X, labels)
    save_model(
        classifier,
        d / "text_classes.skops",
        metadata={"features": FEATURES, "target": "target", "era": "era"},
    )
    return d


@pytest.mark.parametrize(
    "args, message",
    [
        (
            [
                "train",
                "train.parquet",
                "--target",
                "target",
                "--era",
                "era",
                "--features",
                "feature_0,feature_99",
                "--out",
                "x.skops",
            ],
            "no feature column 'feature_99'",
        ),
        (
            [
                "train",
                "nan_target.parquet",
                "--target",
                "target",
                "--era",
                "era",
                "--out",
                "x.skops",
            ],
            "target column 'target' of nan_target.parquet has 2 missing values",
        ),
        (
            [
                "train",
                "train.parquet",
                "--target",
                "target",
                "--era",
                "epoch",
                "--out",
                "x.skops",
            ],
            "no era column 'epoch'",
        ),
        (
            [
                "train",
                "train.parquet",
                "--target",
                "y",
                "--era",
                "era",
                "--out",
                "x.skops",
            ],
            "no target column 'y'",
        ),
        (
            [
                "train",
                "garbage.parquet",
                "--target",
                "target",
                "--era",
                "era",
                "--out",
                "x.skops",
            ],
            "cannot read garbage.parquet as parquet",
        ),
        (
            [
                "train",
                "absent.parquet",
                "--target",
                "target",
                "--era",
                "era",
                "--out",
                "x.skops",
            ],
            "cannot read absent.parquet: no such file",
        ),
        (
            [
                "train",
                "train.parquet",
                "--target",
                "target",
                "--era",
                "era",
                "--param",
                "max_iters=3",
                "--out",
                "x.skops",
            ],
            "unknown parameter 'max_iters'",
        ),
        (
            [
                "train",
                "train.parquet",
                "--target",
                "target",
                "--era",
                "era",
                "--param",
                "max_iter=0",
                "--out",
                "x.skops",
            ],
            "'max_iter' parameter",
        ),
        (
            ["predict", "small.skops", "fewer.parquet", "--out", "p.parquet"],
            "fewer.parquet has no feature column of the model 'feature_5'",
        ),
        (
            ["predict", "garbage.skops", "test.parquet", "--out", "p.parquet"],
            "cannot read model garbage.skops: not an eraboost model file",
        ),
        (
            ["predict", "crafted.skops", "test.parquet", "--out", "p.parquet"],
            "pickle and joblib files are never loaded here",
        ),
        (
            ["predict", "keyless.skops", "test.parquet", "--out", "p.parquet"],
            "a model file of format 1 (a skops archive written by an eraboost "
            "before format 2)",
        ),
        (
            ["predict", "meta_int.skops", "test.parquet", "--out", "p.parquet"],
            "its metadata 'features' must be a list of distinct column names",
        ),
        (
            ["predict", "meta_nested.skops", "test.parquet", "--out", "p.parquet"],
            "its metadata 'features' must be a list of distinct column names",
        ),
        (
            ["predict", "meta_one.skops", "test.parquet", "--out", "p.parquet"],
            "its metadata lists 1 features; the model was fitted on 10",
        ),
        (
            ["predict", "meta_cat.skops", "test.parquet", "--out", "p.parquet"],
            "its metadata 'categorical' must be a list of some of its features",
        ),
        (
            ["predict", "small.skops", "test.parquet", "--out", "absent/p.csv"],
            "the folder does not exist: absent",
        ),
        (
            ["report", "text_classes.skops", "test.parquet", "--out", "rep"],
            "--metric pearson scores numbers, but model text_classes.skops is a "
            "classifier of the classes 'down', 'up': use --metric accuracy",
        ),
        (
            ["predict", "small.skops", "test.parquet", "--out", "p.xyz"],
            "cannot tell the format of p.xyz from its extension",
        ),
        (
            ["predict", "small.skops", "test.parquet", "--out", "p.csv", "--proba"],
            "--proba needs a classifier",
        ),
        (
            [
                "train",
                "train.parquet",
                "--target",
                "target",
                "--era",
                "era",
                "--features",
                "feature_0,feature_1,feature_0",
                "--out",
                "x.skops",
            ],
            "--features names the column 'feature_0' more than once",
        ),
        (
            ["train", "train.parquet", "--target", "era", "--era", "era", "--out", "x"],
            "--target and --era both name the column 'era'",
        ),
        (
            [
                *("train", "fewer.parquet", "--target", "feature_0"),
                *("--era", "feature_1", "--feature-prefix", "f", "--out", "x"),
            ],
            "the target column 'feature_0' is also a feature",
        ),
        (
            [
                "train",
                "unnamed.parquet",
                "--target",
                "target",
                "--era",
                "era",
                "--out",
                "x",
            ],
            "no column whose name starts with 'feature': name the feature "
            "columns with --features",
        ),
        (
            [
                *("train", "train.parquet", "--target", "target", "--era", "era"),
                *("--categorical-features", "note", "--out", "x"),
            ],
            "--categorical-features names 'note', which is not among the features",
        ),
        (
            [
                *("train", "train.parquet", "--target", "target", "--era", "era"),
                *("--validation-data", "test.parquet"),
                *("--param", "early_stopping=False", "--out", "x"),
            ],
            "--validation-data is for early stopping",
        ),
        (
            ["report", "small.skops", "garbage.parquet", "--out", "rep"],
            "cannot read garbage.parquet",
        ),
        (
            ["report", "small.skops", "nan_target.parquet", "--out", "rep"],
            "has 2 missing values",
        ),
    ],
)
def test_bad_input_one_line_error(bad_files, args, message):
    res = run(args, bad_files, module=args[0] == "predict")
    assert not (bad_files / "code-ran").exists()  # the crafted pickle never ran
    assert res.returncode == 1, res.stderr
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("eraboost: error: ")
    assert message in lines[0]


def _train_args(out, *extra, data="train.parquet"):
    return [
        "train",
        data,
        "--target",
        "target",
        "--era",
        "era",
        "--feature-prefix",
        "feature_",
        *extra,
        "--out",
        out,
        "--quiet",
    ]


def _limit_file_size(limit):
    def set_limit():
        # a file size limit makes writes fail with EFBIG (not kill the process)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return set_limit


def test_failed_writes_keep_the_previous_files(data, tmp_path):
    d, _, (Xt, _, _) = data
    model = tmp_path / "model.skops"
    res = run(_train_args(model, "--param", "max_iter=3"), d)
    assert res.returncode == 0, res.stderr
    good = model.read_bytes()
    # a bigger model under a file size limit: the save fails part-way
    res = run(
        _train_args(model, "--param", "max_iter=60", "--param", "max_leaf_nodes=63"),
        d,
        preexec_fn=_limit_file_size(len(good) + 1000),
    )
    assert res.returncode == 1, res.stderr
    assert res.stderr.startswith(f"eraboost: error: cannot write the model to {model}")
    assert len(res.stderr.splitlines()) == 1
    assert model.read_bytes() == good  # the previous model is intact
    assert sorted(os.listdir(tmp_path)) == ["model.skops"]  # no temporary file
    assert np.isfinite(load_model(model).predict(Xt)).all()

    pred = tmp_path / "pred.csv"
    pred.write_text("previous predictions\n")
    res = run(
        ["predict", model, "test.parquet", "--out", pred],
        d,
        preexec_fn=_limit_file_size(2000),
    )
    assert res.returncode == 1 and "cannot write" in res.stderr, res.stderr
    assert pred.read_text() == "previous predictions\n"
    assert sorted(os.listdir(tmp_path)) == ["model.skops", "pred.csv"]


def test_a_special_output_file_is_never_deleted(data, tmp_path):
    d, _, _ = data
    model = tmp_path / "model.skops"
    assert run(_train_args(model, "--param", "max_iter=3"), d).returncode == 0
    # predictions of 200,000 rows: more than a pipe holds (64 KiB), so the
    # write fails whenever the reader leaves, before or after it starts
    # (40,000 rows of a 3-tree model made a 37 KB file, which the pipe could
    # take whole before the reader left)
    Xt, yt, et, _ = make_era_data(200, 1000, seed=2)
    write(tmp_path / "big.parquet", Xt, yt, et)
    regular = tmp_path / "regular.parquet"
    res = run(["predict", model, tmp_path / "big.parquet", "--out", regular], d)
    assert res.returncode == 0, res.stderr
    assert regular.stat().st_size > 2 * 65536
    fifo = tmp_path / "out.parquet"
    os.mkfifo(fifo)

    def reader_that_leaves():
        with open(fifo, "rb"):
            pass  # the reader goes away without reading: writing fails

    reader = threading.Thread(target=reader_that_leaves)
    reader.start()
    res = run(["predict", model, tmp_path / "big.parquet", "--out", fifo], d)
    reader.join(timeout=60)
    assert res.returncode == 1, res.stderr
    assert res.stderr.startswith(f"eraboost: error: cannot write {fifo}")
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # still there, still a pipe


def test_memory_guard_error_is_one_line(tmp_path):
    # 5,000 eras x 100 float features x 256 bins: far more histogram memory
    # than any machine has, refused by the guard before fitting
    rng = np.random.RandomState(0)
    n = 10_000
    cols = {f"feature_{j}": rng.normal(size=n) for j in range(100)}
    cols.update(target=rng.normal(size=n), era=np.arange(n) // 2)
    pq.write_table(pa.table(cols), tmp_path / "many_eras.parquet")
    res = run(
        _train_args("m.skops", "--split-type", "era", data="many_eras.parquet"),
        tmp_path,
    )
    assert res.returncode == 1, res.stderr
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("eraboost: error: not enough memory: ")
    assert "per-era histograms would need" in lines[0]


def test_ctrl_c_while_importing_exits_130(tmp_path):
    # sitecustomize sends SIGINT to the process as soon as numpy starts to
    # load: a Ctrl-C typed in the first second of the command
    (tmp_path / "sitecustomize.py").write_text(
        "import os, signal, sys\n"
        # a shell starts background jobs with SIGINT ignored: restore the
        # handler Python installs in a terminal
        "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'numpy':\n"
        "            sys.meta_path.remove(self)\n"
        "            os.kill(os.getpid(), signal.SIGINT)\n"
        "        return None\n"
        "sys.meta_path.insert(0, Interrupt())\n"
    )
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    for module in (False, True):
        res = run(["demo", "--n-eras", "4"], tmp_path, module=module, env=env)
        assert res.returncode == 130, res.stderr
        assert res.stderr == "eraboost: interrupted\n"
        assert res.stdout == ""


def test_demo_into_a_closed_pipe_exits_0(tmp_path):
    proc = subprocess.Popen(
        [str(SCRIPT), "demo", "--n-eras", "4", "--rows-per-era", "200"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    proc.stdout.close()  # the reader is gone, as after `| head -1`
    err = proc.stderr.read()
    assert proc.wait(timeout=300) == 0, err
    assert err == b""
    res = subprocess.run(
        ["bash", "-o", "pipefail", "-c", f"'{SCRIPT}' demo --n-eras 4 | head -1"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert res.stdout.startswith("eraboost demo: 4 training eras")


def test_version_and_help(tmp_path):
    from importlib.metadata import version

    res = run(["--version"], tmp_path, process=True)
    assert res.returncode == 0 and res.stdout == f"eraboost {version('eraboost')}\n"
    res = run(["--help"], tmp_path, process=True)
    assert "train four models" in res.stdout
    assert "pickle" in res.stdout and "trust" in res.stdout
    res = run(["predict", "--help"], tmp_path)
    assert re.search(r"MODEL\s+model file written by train", res.stdout)
    assert re.search(r"DATA\s+table with the model's feature columns", res.stdout)
    res = run(["report", "--help"], tmp_path)
    assert re.search(r"MODEL\s+model files written by train", res.stdout)
    res = run(["demo", "--help"], tmp_path)
    assert "--rows-per-era ROWS_PER_ERA\n" in res.stdout
    assert "rows per era (default: 1000)" in res.stdout


def test_new_parameters_and_validation_data(data, tmp_path):
    d, (X, y, eras), (Xt, yt, et) = data
    era_labels = np.array([f"era{e:03d}" for e in et])
    res = run(
        _train_args(
            tmp_path / "m.skops",
            "--param",
            "max_iter=40",
            "--param",
            "colsample_bytree=0.5",
            "--param",
            "era_subsample=0.5",
            "--validation-data",
            "test.parquet",
        ),
        d,
    )
    assert res.returncode == 0, res.stderr
    model = load_model(tmp_path / "m.skops")
    ref = HistGradientBoostingRegressor(
        max_iter=40,
        colsample_bytree=0.5,
        era_subsample=0.5,
        early_stopping=True,
        random_state=0,
    )
    ref.fit(X, y, eras=eras, X_val=Xt, y_val=yt, eras_val=era_labels)
    assert model.n_iter_ == ref.n_iter_
    np.testing.assert_array_equal(model.validation_score_, ref.validation_score_)
    np.testing.assert_array_equal(model.predict(Xt), ref.predict(Xt))


def test_classifier_probabilities(data, tmp_path):
    _, (X, y, eras), (Xt, _, _) = data
    labels = np.where(y > 0.5, "up", np.where(y < -0.5, "down", "flat"))
    write(tmp_path / "train.parquet", X, labels, eras)
    write(tmp_path / "test.parquet", Xt, np.zeros(len(Xt)), np.zeros(len(Xt), int))
    res = run(_train_args("clf.skops", "--param", "max_iter=10"), tmp_path)
    assert res.returncode == 0, res.stderr
    ref = HistGradientBoostingClassifier(max_iter=10, random_state=0)
    ref.fit(X, labels, eras=np.array([f"era{e:03d}" for e in eras]))
    for extra, out in (([], "labels.csv"), (["--proba"], "proba.parquet")):
        res = run(
            ["predict", "clf.skops", "test.parquet", "--out", out, *extra], tmp_path
        )
        assert res.returncode == 0, res.stderr
    rows = read_csv(tmp_path / "labels.csv")
    assert [r["prediction"] for r in rows] == list(ref.predict(Xt))
    table = pq.read_table(tmp_path / "proba.parquet")
    assert table.column_names == ["era", "proba_down", "proba_flat", "proba_up"]
    proba = np.column_stack(
        [table.column(c).to_numpy() for c in table.column_names[1:]]
    )
    np.testing.assert_array_equal(proba, ref.predict_proba(Xt))


def test_categorical_feature_columns(data, tmp_path):
    import pandas as pd

    _, (X, y, eras), (Xt, _, _) = data
    rng = np.random.RandomState(0)
    sector = rng.choice(["energy", "health", "tech"], size=len(y))
    grade = rng.randint(0, 4, size=len(y)).astype(np.int8)
    y_cat = y + (sector == "tech") - 0.5 * (grade == 2)
    write(
        tmp_path / "train.parquet", X, y_cat, eras, {"sector": sector, "grade": grade}
    )
    new_sector = rng.choice(["energy", "tech", "unknown"], size=len(Xt))
    new_grade = rng.randint(0, 5, size=len(Xt)).astype(np.int8)
    write(
        tmp_path / "test.parquet",
        Xt,
        np.zeros(len(Xt)),
        np.zeros(len(Xt), int),
        {"sector": new_sector, "grade": new_grade},
    )
    features = "feature_0,feature_1,sector,grade"
    args = _train_args("cat.skops", "--param", "max_iter=10")
    i = args.index("--feature-prefix")
    args[i : i + 2] = ["--features", features, "--categorical-features", "grade"]
    res = run(args, tmp_path)
    assert res.returncode == 0, res.stderr
    _, meta = load_model(tmp_path / "cat.skops", return_metadata=True)
    assert meta["categorical"] == ["sector", "grade"]  # text by type, grade named

    def frame(X, sector, grade):
        return pd.DataFrame(
            {
                "feature_0": X[:, 0],
                "feature_1": X[:, 1],
                "sector": pd.Categorical(sector),
                "grade": grade,
            }
        )

    ref = HistGradientBoostingRegressor(
        max_iter=10, random_state=0, categorical_features=["sector", "grade"]
    )
    ref.fit(
        frame(X, sector, grade), y_cat, eras=np.array([f"era{e:03d}" for e in eras])
    )
    res = run(["predict", "cat.skops", "test.parquet", "--out", "p.parquet"], tmp_path)
    assert res.returncode == 0, res.stderr
    got = pq.read_table(tmp_path / "p.parquet").column("prediction").to_numpy()
    np.testing.assert_array_equal(got, ref.predict(frame(Xt, new_sector, new_grade)))


def test_default_features_and_csv_integers(data, tmp_path, seen):
    _, (X, y, eras), _ = data
    import pandas as pd

    table = pd.DataFrame(X, columns=FEATURES)
    table["target"] = y
    table["target_other"] = y * 2  # another target: never a default feature
    table["era"] = eras
    table["wide"] = np.arange(len(y)) * 1000  # needs more than int16
    table.to_csv(tmp_path / "train.csv", index=False)
    from eraboost.cli._tables import Table

    Xr, cols, _ = Table(tmp_path / "train.csv").read(FEATURES, ["era", "wide"])
    assert Xr.dtype == np.int8 and cols["era"].dtype == np.int8
    assert cols["wide"].dtype == np.int32
    np.testing.assert_array_equal(Xr, X)

    args = _train_args(str(tmp_path / "m.skops"), "--param", "max_iter=3")
    i = args.index("--feature-prefix")
    del args[i : i + 2]
    args[1] = str(tmp_path / "train.csv")
    assert cli.main(args) == 0
    (X_fit,) = seen
    assert X_fit.dtype == np.int8
    np.testing.assert_array_equal(X_fit, X)
    assert load_model(tmp_path / "m.skops", return_metadata=True)[1]["features"] == (
        FEATURES
    )


# -- issue 28: inputs from elsewhere --------------------------------------------
def _one_error_line(res):
    assert res.returncode == 1, res.stderr
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("eraboost: error: ")
    return lines[0]


def test_out_is_never_an_input(data, tmp_path):
    """--out naming an input file, directly, by another spelling, through a
    symbolic link or a hard link, is refused before anything is written."""
    d, _, _ = data
    train = tmp_path / "train.parquet"
    train.write_bytes((d / "train.parquet").read_bytes())
    (tmp_path / "other.parquet").write_bytes(train.read_bytes())
    original = train.read_bytes()
    (tmp_path / "sub").mkdir()
    os.symlink(train, tmp_path / "link.parquet")
    os.link(train, tmp_path / "hard.parquet")
    model = tmp_path / "m.skops"
    assert run(_train_args(model, "--param", "max_iter=2"), d).returncode == 0
    model_bytes = model.read_bytes()
    for out in (
        "train.parquet",
        "./sub/../train.parquet",
        tmp_path / "train.parquet",
        "link.parquet",
        "hard.parquet",
    ):
        res = run(_train_args(out, "--param", "max_iter=2"), tmp_path)
        line = _one_error_line(res)
        assert f"--out {out} is the input DATA train.parquet" in line
        assert "writing there would destroy it" in line
        res = run(
            [
                *("train", "other.parquet", "--target", "target", "--era", "era"),
                *("--validation-data", out, "--out", out),
            ],
            tmp_path,
        )
        assert "is the input" in _one_error_line(res)
        res = run(["predict", model, "train.parquet", "--out", out], tmp_path)
        assert "is the input DATA train.parquet" in _one_error_line(res)
        assert train.read_bytes() == original
    # predict over the model file itself
    for out in (model, tmp_path / "model-link.parquet"):
        if out != model:
            os.symlink(model, out)
        res = run(["predict", model, "train.parquet", "--out", out], tmp_path)
        assert "is the input MODEL" in _one_error_line(res)
        assert model.read_bytes() == model_bytes
    # report: an input inside the output folder, under a report file's name
    rep = tmp_path / "rep"
    rep.mkdir()
    pq.read_table(train).to_pandas().to_csv(rep / "era_scores.csv", index=False)
    table = (rep / "era_scores.csv").read_bytes()
    res = run(["report", model, rep / "era_scores.csv", "--out", rep], tmp_path)
    assert "is the input DATA" in _one_error_line(res)
    assert (rep / "era_scores.csv").read_bytes() == table
    assert sorted(os.listdir(rep)) == ["era_scores.csv"]
    assert sorted(os.listdir(tmp_path)) == [
        "hard.parquet",
        "link.parquet",
        "m.skops",
        "model-link.parquet",
        "other.parquet",
        "rep",
        "sub",
        "train.parquet",
    ]


def test_train_out_in_a_missing_folder(data, tmp_path):
    d, _, _ = data
    out = tmp_path / "absent" / "m.skops"
    line = _one_error_line(run(_train_args(out, "--param", "max_iter=2"), d))
    assert f"cannot write the model to {out}" in line
    assert not (tmp_path / "absent").exists()


def test_report_of_a_model_named_era(data, tmp_path):
    """A model file era.skops: era_scores.csv had the header era,...,era."""
    d, _, _ = data
    for name in ("era", "original"):
        res = run(_train_args(tmp_path / f"{name}.skops", "--param", "max_iter=2"), d)
        assert res.returncode == 0, res.stderr
    res = run(
        [
            "report",
            tmp_path / "era.skops",
            tmp_path / "original.skops",
            tmp_path / "era.skops",
            "test.parquet",
            "--out",
            tmp_path / "rep",
        ],
        d,
    )
    assert res.returncode == 0, res.stderr
    with open(tmp_path / "rep" / "era_scores.csv", newline="") as f:
        header = next(csv.reader(f))
    assert header == ["era", "era (model)", "original", "era (model)-2"]
    rows = read_csv(tmp_path / "rep" / "summary.csv")
    assert [r["model"] for r in rows] == header[1:]
    from eraboost.cli.report import write_report

    with pytest.raises(ValueError, match="a model cannot be named 'era'"):
        write_report(tmp_path / "x", [1], {"era": [0.1]}, {"era": {}}, "pearson")


def test_continuous_target_as_classes_names_the_fix(data, tmp_path):
    _, (X, y, eras), _ = data
    # Numerai's targets: 0, 0.25, 0.5, 0.75, 1
    levels = np.digitize(y, np.quantile(y, [0.2, 0.4, 0.6, 0.8])) / 4
    write(tmp_path / "levels.parquet", X, levels, eras)
    args = _train_args("m.skops", "--task", "classification", data="levels.parquet")
    line = _one_error_line(run(args, tmp_path))
    assert "target column 'target' of levels.parquet holds continuous values" in line
    assert "use --task regression, or bin the target into classes" in line
    assert not (tmp_path / "m.skops").exists()


def test_drop_missing_target(data, tmp_path):
    """Numerai's extra targets have NaN rows: an error by default (naming
    the option), dropped and counted with --drop-missing-target."""
    _, (X, y, eras), (Xt, yt, et) = data
    y_nan = y.copy()
    y_nan[[3, 10, 500]] = np.nan
    write(tmp_path / "nan.parquet", X, y_nan, eras)
    yt_nan = yt.copy()
    yt_nan[:7] = np.nan
    write(tmp_path / "test_nan.parquet", Xt, yt_nan, et)
    args = _train_args("m.skops", "--param", "max_iter=5", data="nan.parquet")
    line = _one_error_line(run(args, tmp_path))
    assert "has 3 missing values (NaN); drop those rows first, or pass " in line
    assert "--drop-missing-target" in line
    args = [a for a in args if a != "--quiet"] + ["--drop-missing-target"]
    res = run(args, tmp_path)
    assert res.returncode == 0, res.stderr
    assert (
        f"dropped 3 of {len(y):,} rows of nan.parquet with a missing target "
        "'target' (--drop-missing-target)"
    ) in res.stderr
    keep = ~np.isnan(y_nan)
    ref = HistGradientBoostingRegressor(max_iter=5, random_state=0).fit(
        X[keep], y[keep], eras=np.array([f"era{e:03d}" for e in eras])[keep]
    )
    ours = load_model(tmp_path / "m.skops")
    np.testing.assert_array_equal(ours.predict(Xt), ref.predict(Xt))
    # report: the same option
    res = run(["report", "m.skops", "test_nan.parquet", "--out", "rep"], tmp_path)
    assert "--drop-missing-target" in _one_error_line(res)
    res = run(
        [
            *("report", "m.skops", "test_nan.parquet", "--out", "rep"),
            "--drop-missing-target",
        ],
        tmp_path,
    )
    assert res.returncode == 0, res.stderr
    assert "dropped 7 of 1,800 rows of test_nan.parquet" in res.stderr
    labels = np.array([f"era{e:03d}" for e in et])
    scores = era_scores(yt[7:], ours.predict(Xt[7:]), labels[7:], "pearson")
    rows = read_csv(tmp_path / "rep" / "era_scores.csv")
    np.testing.assert_allclose([float(r["m"]) for r in rows], scores)


# sitecustomize of the Ctrl-C tests: writes a byte to the file descriptor
# READY_FD when Python starts to import the package eraboost (the console
# script's first line), the first moment that code of eraboost can act on
_READY_HOOK = """\
import os, sys
class Ready:
    def find_spec(self, name, path=None, target=None):
        if name == "eraboost":
            sys.meta_path.remove(self)
            os.write(int(os.environ["READY_FD"]), b"1")
        return None
sys.meta_path.insert(0, Ready())
"""


def _start_demo(tmp_path, ready_fd=None):
    env = dict(os.environ)
    if ready_fd is not None:
        (tmp_path / "sitecustomize.py").write_text(_READY_HOOK)
        env.update(PYTHONPATH=str(tmp_path), READY_FD=str(ready_fd))
    return subprocess.Popen(
        [str(SCRIPT), "demo", "--n-eras", "4", "--rows-per-era", "300"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        pass_fds=() if ready_fd is None else (ready_fd,),
        # a shell starts background jobs with SIGINT ignored; a terminal
        # does not
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


@pytest.mark.skipif(
    "_eraboost_editable_loader" in sys.modules,
    reason="an editable install rebuilds the package as it is imported, "
    "before any code of eraboost runs",
)
@pytest.mark.parametrize("delay", [0.02, 0.04, 0.1, 0.25, 0.5])
def test_ctrl_c_at_any_moment(tmp_path, delay):
    """Ctrl-C at any moment once Python imports eraboost (loading numpy and
    scikit-learn, parsing, running the command): status 130 and the one
    line, never a traceback nor a death by the signal (a Ctrl-C in the
    first 0.1 s printed a traceback of ``import eraboost`` and ended the
    process by the signal). The few hundred microseconds between the start
    of that import and the entry point's handler are not tested."""
    for _ in range(2):
        read_end, write_end = os.pipe()
        try:
            proc = _start_demo(tmp_path, write_end)
            os.close(write_end)
            assert os.read(read_end, 1) == b"1"  # eraboost is being imported
        finally:
            os.close(read_end)
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        err = proc.stderr.read()
        assert proc.wait(timeout=120) == 130, err
        assert err == "eraboost: interrupted\n"


def test_ctrl_c_as_the_command_starts(tmp_path):
    """SIGINT sent as soon as the process exists. Before Python has
    installed its own handler, the signal ends the process (a shell shows
    status 130) with nothing printed: no code of eraboost runs yet. Once the
    entry point runs, it is the one line and status 130."""
    for _ in range(3):
        proc = _start_demo(tmp_path)
        proc.send_signal(signal.SIGINT)
        err = proc.stderr.read()
        status = proc.wait(timeout=120)
        assert (status, err) in ((-signal.SIGINT, ""), (130, INTERRUPTED + "\n")), err


def test_help_and_version_load_no_numpy(tmp_path):
    """--help and --version import neither numpy nor scikit-learn (they took
    1.2 s): the package, its entry point and the parser are standard library
    only until a command runs."""
    heavy = ("numpy", "scipy", "sklearn", "pandas", "pyarrow", "skops")
    code = (
        "import sys\n"
        "from eraboost.__main__ import main\n"
        "sys.argv[1:] = {args!r}\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
        "heavy = {heavy!r}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    for args in (["--help"], ["--version"], ["train", "--help"], ["report", "--help"]):
        res = subprocess.run(
            [sys.executable, "-c", code.format(args=args, heavy=heavy)],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=120,
            check=False,
        )
        assert res.returncode == 0, res.stderr
        assert res.stdout.splitlines()[-1] == "[]", (args, res.stdout)
    res = subprocess.run(
        [sys.executable, "-c", "import sys, eraboost; print(sorted(sys.modules))"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    loaded = {m.split(".")[0] for m in ast.literal_eval(res.stdout)}
    assert not loaded & set(heavy), loaded


def test_parser_choices_match_the_package():
    from eraboost._engine._common import SPLIT_TYPES
    from eraboost.cli.report import REPORT_METRICS
    from eraboost.metrics import METRIC_NAMES

    assert tuple(sorted(SPLIT_TYPES)) == cli.SPLIT_TYPE_CHOICES
    assert tuple(sorted((*METRIC_NAMES, *REPORT_METRICS))) == cli.METRIC_CHOICES


def test_package_names_stay_importable():
    import eraboost

    assert set(eraboost.__all__) <= set(dir(eraboost))
    assert "__version__" in dir(eraboost)
    from importlib.metadata import version

    assert eraboost.__version__ == version("eraboost")
    for name in eraboost.__all__:
        assert getattr(eraboost, name) is not None


def test_ctrl_c_inside_an_import_is_an_interruption(capsys):
    """A Ctrl-C while a command imports a compiled module (numpy) comes back
    as an ImportError raised while handling the KeyboardInterrupt: it is an
    interruption (130, one line), not a traceback (seen with numpy 1.25)."""
    from types import SimpleNamespace

    from eraboost.cli import _interrupts as interrupts
    from eraboost.cli import _main as cli

    def command(args):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt:
            raise ImportError("PyCapsule_Import could not import module") from None

    with pytest.raises(KeyboardInterrupt):
        cli._run(SimpleNamespace(func=command))
    assert not interrupts._caused_by_interrupt(ImportError("no interrupt"))

    def failing(args):
        raise ValueError("a plain error")

    assert cli._run(SimpleNamespace(func=failing)) == 1
    assert "a plain error" in capsys.readouterr().err


def test_an_error_after_a_ctrl_c_is_an_interruption(monkeypatch):
    """Compiled code may replace the KeyboardInterrupt by an error of its own
    (numpy 1.25's import: "Importing the numpy C-extensions failed", with no
    KeyboardInterrupt left in the chain) or drop it: once a Ctrl-C arrived
    while the command ran, the command ends as interrupted."""
    from types import SimpleNamespace

    from eraboost.cli import _interrupts as interrupts
    from eraboost.cli import _main as cli

    monkeypatch.setattr(interrupts, "_SIGINT_SEEN", [])

    def command(args):
        with contextlib.suppress(KeyboardInterrupt):  # swallowed
            interrupts._raise_interrupt(signal.SIGINT, None)
        raise ImportError("Importing the numpy C-extensions failed.")

    with pytest.raises(KeyboardInterrupt):
        cli._run(SimpleNamespace(func=command))

    monkeypatch.setattr(interrupts, "_SIGINT_SEEN", [])

    def swallowed(args):
        with contextlib.suppress(KeyboardInterrupt):
            interrupts._raise_interrupt(signal.SIGINT, None)
        return 0

    with pytest.raises(KeyboardInterrupt):
        cli._run(SimpleNamespace(func=swallowed))


def test_ctrl_c_in_a_callback_python_cannot_raise_from(monkeypatch, capsys):
    """A Ctrl-C that lands in code Python cannot raise from (the weakref
    callback of an import's module lock, a ``__del__``) printed
    ``Exception ignored in ...`` and a traceback before the one line (seen
    on CI, Python 3.11, Ctrl-C 0.02 s into ``eraboost demo``): the command
    still ends as interrupted, with the one line only, and the hook for
    other unraisable errors is restored."""
    from eraboost.cli import _commands as commands
    from eraboost.cli import _interrupts as interrupts
    from eraboost.cli import _main as cli

    monkeypatch.setattr(interrupts, "_SIGINT_SEEN", [])

    class Dropped:
        def __del__(self):
            interrupts._raise_interrupt(signal.SIGINT, None)

    def command(args):
        Dropped()  # the KeyboardInterrupt is unraisable here
        return 0

    monkeypatch.setattr(commands, "cmd_demo", command)
    reported = []  # what Python would print as "Exception ignored in ..."
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    assert cli.main(["demo"]) == 130
    assert capsys.readouterr().err == INTERRUPTED + "\n"
    assert reported == []
    assert sys.unraisablehook == reported.append


def test_ctrl_c_printed_by_compiled_code(monkeypatch, capsys):
    """A Ctrl-C inside the import of a compiled extension printed a
    ``KeyboardInterrupt`` traceback before the one line (seen on CI, Python
    3.11, Ctrl-C 0.1 s into ``eraboost demo``): numpy's ``import_array()``
    prints the error it caught with ``PyErr_Print`` (that is,
    ``sys.excepthook``) and raises an ImportError of its own. The command
    ends as interrupted with the one line only, and the excepthook is
    restored."""
    import ctypes

    from eraboost.cli import _commands as commands
    from eraboost.cli import _interrupts as interrupts
    from eraboost.cli import _main as cli

    monkeypatch.setattr(interrupts, "_SIGINT_SEEN", [])
    printed = []  # what PyErr_Print would write as a traceback

    def command(args):
        # compiled code that catches the error and prints it, as
        # import_array() does; returns -1 with no error set
        status = ctypes.pythonapi.PyRun_SimpleString(
            b"import signal; signal.raise_signal(signal.SIGINT)"
        )
        assert status == -1
        return 0

    monkeypatch.setattr(commands, "cmd_demo", command)
    hook = lambda *exc_info: printed.append(exc_info)  # noqa: E731
    monkeypatch.setattr(sys, "excepthook", hook)
    # Ctrl-C's default handler, as in a terminal: a job started in the
    # background by a shell without job control inherits SIGINT ignored
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        assert cli.main(["demo"]) == 130
    finally:
        signal.signal(signal.SIGINT, previous)
    assert capsys.readouterr().err == INTERRUPTED + "\n"
    assert printed == []
    assert sys.excepthook is hook


def test_keyboard_interrupt_printed_without_a_signal_still_interrupts(
    monkeypatch, capsys
):
    """A KeyboardInterrupt that compiled code prints with ``PyErr_Print``
    without any Ctrl-C (raised by code) is not lost in silence: the command
    ends as interrupted."""
    import ctypes

    from eraboost.cli import _commands as commands
    from eraboost.cli import _interrupts as interrupts
    from eraboost.cli import _main as cli

    monkeypatch.setattr(interrupts, "_SIGINT_SEEN", [])

    def command(args):
        ctypes.pythonapi.PyRun_SimpleString(b"raise KeyboardInterrupt")
        return 0

    monkeypatch.setattr(commands, "cmd_demo", command)
    assert cli.main(["demo"]) == 130
    assert capsys.readouterr().err == INTERRUPTED + "\n"


def test_libraries_load_before_ctrl_c_raises(monkeypatch):
    """A command's libraries are imported while the entry point's handler
    still ends the process at once on Ctrl-C (a KeyboardInterrupt raised
    inside an import is printed by code outside eraboost: numpy's
    ``import_array()``; scipy 1.10 printed ``Error in generated code:`` and
    a function's source, seen 0.49 s into ``eraboost demo``)."""
    from eraboost.cli import _commands as commands
    from eraboost.cli import _interrupts as interrupts
    from eraboost.cli import _main as cli

    handlers = []
    monkeypatch.setattr(
        interrupts, "_load_libraries", lambda func: handlers.append(signal.getsignal(2))
    )
    monkeypatch.setattr(commands, "cmd_demo", lambda args: 0)
    assert cli.main(["demo"]) == 0
    assert len(handlers) == 1 and handlers[0] is not interrupts._raise_interrupt


@pytest.mark.parametrize(
    "command, modules",
    [
        ("cmd_demo", ["numpy", "sklearn", "scipy", "eraboost.demo"]),
        ("cmd_train", ["pyarrow.parquet", "eraboost.persistence"]),
        ("cmd_report", ["pyarrow.csv", "eraboost.metrics", "matplotlib.pyplot"]),
    ],
)
def test_load_libraries_imports_what_the_command_uses(command, modules):
    code = (
        "import sys; from eraboost.cli import _commands as c, _interrupts as i; "
        f"i._load_libraries(c.{command}); "
        f"print([m for m in {modules!r} if m not in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_convert_a_model_file_of_format_1(data, tmp_path):
    """A file of model format 1 (a skops archive, eraboost before issue 55)
    is refused by predict, saying how to convert it; convert writes it in
    format 2, which predicts as the original."""
    d, (X, y, _), (Xt, _, _) = data
    est = HistGradientBoostingRegressor(max_iter=3, random_state=0).fit(X, y)
    old = tmp_path / "old.skops"
    skops.io.dump(
        {
            "format": "eraboost-model",
            "version": 1,
            "estimator": est,
            "metadata": {"features": FEATURES, "target": "target", "era": "era"},
        },
        old,
    )
    line = _one_error_line(run(["predict", old, "test.parquet", "--out", "p.csv"], d))
    assert "`eraboost convert OLD --out NEW`" in line
    new = tmp_path / "new.skops"
    res = run(["convert", old, "--out", new], d)
    assert res.returncode == 0, res.stderr
    res = run(["predict", new, "test.parquet", "--out", tmp_path / "p.csv"], d)
    assert res.returncode == 0, res.stderr
    got = [float(r["prediction"]) for r in read_csv(tmp_path / "p.csv")]
    np.testing.assert_array_equal(got, est.predict(Xt))
    # converting a format 2 file: one line saying it is not of format 1
    line = _one_error_line(run(["convert", new, "--out", tmp_path / "x.skops"], d))
    assert "not a format 1 model file" in line
