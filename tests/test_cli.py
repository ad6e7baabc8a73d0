"""The command line: train, predict, report, Ctrl-C, bad input."""

import csv
import signal
import subprocess
import sys
import time
from pathlib import Path

import joblib
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from eraboost import HistGradientBoostingRegressor, cli
from eraboost.demo import make_era_data
from eraboost.metrics import era_scores, era_summary

FEATURES = [f"feature_{i}" for i in range(10)]
SCRIPT = Path(sys.executable).with_name("eraboost")


def _write(path, X, y, eras, extra=None):
    cols = {name: X[:, j] for j, name in enumerate(FEATURES)}
    cols["target"] = y
    cols["era"] = np.array([f"era{e:03d}" for e in eras])
    cols["note"] = np.array(["text"] * len(y))  # a column never to be read
    cols.update(extra or {})
    pq.write_table(pa.table(cols), path)


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    X, y, eras, edges = make_era_data(12, 300, seed=0)
    _write(d / "train.parquet", X, y, eras)
    Xt, yt, et, _ = make_era_data(6, 300, spurious_sign=-1.0, seed=1, edges=edges)
    _write(d / "test.parquet", Xt, yt, et + 100)
    return d, (X, y, eras), (Xt, yt, et + 100)


def run(args, cwd, module=False, **kw):
    # from another folder: the installed package, not the source tree
    cmd = [sys.executable, "-m", "eraboost"] if module else [str(SCRIPT)]
    return subprocess.run(
        cmd + [str(a) for a in args],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
        **kw,
    )


def _read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


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
    res = run(["train", "train.parquet", *common, "--out", "original.joblib"], d)
    assert res.returncode == 0, res.stderr
    assert "1/30 iterations" in res.stderr and "train -" in res.stderr
    assert "validation -" in res.stderr and "ETA" in res.stderr
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
            "directional.joblib",
            "--quiet",
        ],
        d,
    )
    assert res.returncode == 0, res.stderr
    assert res.stderr == "" and res.stdout == ""

    bundle = joblib.load(d / "directional.joblib")
    assert bundle["features"] == FEATURES
    assert bundle["params"]["split_type"] == "directional"
    assert bundle["params"]["boltzmann_alpha"] == -np.inf
    assert bundle["n_iter"] == bundle["estimator"].n_iter_
    assert not bundle["interrupted"]
    # the same model as fitted in-process with the same parameters
    ref = HistGradientBoostingRegressor(
        split_type="directional",
        boltzmann_alpha=-np.inf,
        max_iter=30,
        early_stopping=True,
        random_state=0,
    ).fit(X, y, eras=eras)
    assert ref.n_iter_ == bundle["n_iter"]
    np.testing.assert_array_equal(bundle["estimator"].predict(Xt), ref.predict(Xt))

    for out in ("pred.parquet", "pred.csv"):
        res = run(["predict", "directional.joblib", "test.parquet", "--out", out], d)
        assert res.returncode == 0, res.stderr
    table = pq.read_table(d / "pred.parquet")
    assert table.column_names == ["era", "prediction"]
    expected = ref.predict(Xt)
    np.testing.assert_array_equal(table.column("prediction").to_numpy(), expected)
    rows = _read_csv(d / "pred.csv")
    np.testing.assert_allclose(
        [float(r["prediction"]) for r in rows], expected, rtol=1e-15
    )
    assert [r["era"] for r in rows] == [f"era{e:03d}" for e in et]

    res = run(
        [
            "report",
            "original.joblib",
            "directional.joblib",
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
        "original": joblib.load(d / "original.joblib")["estimator"].predict(Xt),
        "directional": expected,
    }
    scores_rows = _read_csv(rep / "era_scores.csv")
    summary_rows = {r["model"]: r for r in _read_csv(rep / "summary.csv")}
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


def test_int8_columns_reach_fit_as_int8(data, monkeypatch, tmp_path):
    d, (X, y, eras), _ = data
    seen = []
    original_fit = HistGradientBoostingRegressor.fit

    def spy(self, X, y, **kw):
        seen.append(X)
        return original_fit(self, X, y, **kw)

    monkeypatch.setattr(HistGradientBoostingRegressor, "fit", spy)
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
            str(tmp_path / "m.joblib"),
            "--quiet",
        ]
    )
    assert status == 0
    (X_fit,) = seen
    assert X_fit.dtype == np.int8
    np.testing.assert_array_equal(X_fit, X[:, ::-1])

    # int8 next to float32 gives float32; an int8 column with nulls, NaN
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
    from eraboost._tables import Table

    table = Table(tmp_path / "mixed.parquet")
    Xab, _, _ = table.read(["a", "b"])
    assert Xab.dtype == np.float32
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
            "interrupted.joblib",
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
    bundle = joblib.load(d / "interrupted.joblib")
    est = bundle["estimator"]
    assert bundle["interrupted"]
    assert 1 <= bundle["n_iter"] == est.n_iter_ < max_iter
    assert len(est.train_score_) == len(est.validation_score_) == est.n_iter_ + 1
    assert np.isfinite(est.predict(Xt)).all()


@pytest.fixture(scope="module")
def bad_files(data):
    d, (X, y, eras), _ = data
    y_nan = y.copy()
    y_nan[[3, 10]] = np.nan
    _write(d / "nan_target.parquet", X, y_nan, eras)
    (d / "garbage.parquet").write_bytes(b"this is not a parquet file\n" * 10)
    (d / "garbage.joblib").write_bytes(b"not a model")
    cols = {name: X[:, j] for j, name in enumerate(FEATURES[:5])}
    pq.write_table(pa.table(cols), d / "fewer.parquet")
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
            "small.joblib",
            "--quiet",
        ],
        d,
    )
    assert res.returncode == 0, res.stderr
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
                "x.joblib",
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
                "x.joblib",
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
                "x.joblib",
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
                "x.joblib",
            ],
            "no target column 'y'",
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
                "feature_0,note",
                "--out",
                "x.joblib",
            ],
            "feature column 'note' of train.parquet has type string",
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
                "x.joblib",
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
                "x.joblib",
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
                "x.joblib",
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
                "x.joblib",
            ],
            "'max_iter' parameter",
        ),
        (
            ["predict", "small.joblib", "fewer.parquet", "--out", "p.parquet"],
            "fewer.parquet has no feature column of the model 'feature_5'",
        ),
        (
            ["predict", "garbage.joblib", "test.parquet", "--out", "p.parquet"],
            "cannot read model garbage.joblib: not an eraboost model file",
        ),
        (
            ["report", "small.joblib", "garbage.parquet", "--out", "rep"],
            "cannot read garbage.parquet",
        ),
        (
            ["report", "small.joblib", "nan_target.parquet", "--out", "rep"],
            "has 2 missing values",
        ),
    ],
)
def test_bad_input_one_line_error(bad_files, args, message):
    res = run(args, bad_files, module=args[0] == "predict")
    assert res.returncode == 1, res.stderr
    assert "Traceback" not in res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("eraboost: error: ")
    assert message in lines[0]
