"""The command line's messages name the problem and the fix, in one line
(issue 64, item 4; issue 62, items 2-3): run in-process through
:func:`eraboost.cli.main`, each input made for the one message."""

import difflib
import warnings

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sklearn.metrics import mean_absolute_error, r2_score

from eraboost import HistGradientBoostingClassifier, load_model
from eraboost.cli import main

N_ROWS, N_ERAS = 600, 6


def _table(**changes):
    rng = np.random.default_rng(0)
    cols = {f"feature_{j}": rng.normal(size=N_ROWS) for j in range(3)}
    cols["target"] = cols["feature_0"] + rng.normal(size=N_ROWS)
    cols["era"] = np.repeat(np.arange(N_ERAS), N_ROWS // N_ERAS)
    cols.update(changes)
    return cols


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("messages")
    pq.write_table(pa.table(_table()), d / "t.parquet")
    assert main([*_train(d, "t.parquet"), "--out", str(d / "m.skops")]) == 0
    return d


def _train(d, data, *extra):
    return [
        *("train", str(d / data), "--target", "target", "--era", "era"),
        *("--param", "max_iter=5", "--quiet", *extra),
    ]


def _one_line(capsys, kind="error"):
    """The one line on stderr, checked to be printable (no raw bytes, no
    terminal escapes)."""
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"eraboost: {kind}: "), err
    assert lines[0].isprintable(), repr(lines[0])
    return lines[0]


def test_a_bad_argument_shows_the_command_usage(folder, capsys):
    args = [*_train(folder, "t.parquet"), "--param", "learning_rate", "0.1"]
    with pytest.raises(SystemExit) as exit:
        main([*args, "--out", str(folder / "x.skops")])
    assert exit.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: eraboost train ")
    assert err.splitlines()[-1] == (
        "eraboost train: error: unrecognized arguments: 0.1; --param takes "
        "NAME=VALUE as one argument: --param learning_rate=0.1"
    )
    with pytest.raises(SystemExit):
        main(["predict", "m.skops", "t.parquet", "--out", "p.csv", "--bogus"])
    err = capsys.readouterr().err
    assert err.startswith("usage: eraboost predict ")
    assert err.splitlines()[-1].endswith("unrecognized arguments: --bogus")


def test_a_misspelt_column_gets_its_close_match(folder, capsys):
    columns = list(_table())
    feature = _train(folder, "t.parquet", "--features", "feature_0,featur_1")
    target = [a if a != "target" else "targt" for a in _train(folder, "t.parquet")]
    for wrong, args in (("featur_1", feature), ("targt", target)):
        assert main([*args, "--out", "x.skops"]) == 1
        (close,) = difflib.get_close_matches(wrong, columns, n=1)
        assert _one_line(capsys).endswith(f"missing; did you mean {close!r}?)")


def test_a_column_without_a_close_match_lists_the_columns(tmp_path, capsys):
    many = {f"col{j}": np.zeros(N_ROWS) for j in range(30)}
    pq.write_table(pa.table(_table(**many)), tmp_path / "wide.parquet")
    args = [a if a != "era" else "zzz" for a in _train(tmp_path, "wide.parquet")]
    assert main([*args, "--out", "x.skops"]) == 1
    columns = ", ".join(repr(c) for c in list(_table(**many))[:10])
    assert _one_line(capsys).endswith(f"its columns are {columns}, ... (35 in all))")


def test_numbers_stored_as_text_are_named(tmp_path, capsys):
    numbers = np.array(["1.5", "2", "-3"])[np.arange(N_ROWS) % 3]
    pq.write_table(pa.table(_table(feature_1=numbers)), tmp_path / "text.parquet")
    args = _train(tmp_path, "text.parquet")
    assert main([*args, "--out", str(tmp_path / "x.skops")]) == 1
    assert _one_line(capsys) == (
        f"eraboost: error: feature column 'feature_1' of {tmp_path}/text.parquet "
        "holds numbers stored as text (e.g. '-3'): store them as numbers "
        "(pandas: df['feature_1'] = pd.to_numeric(df['feature_1'])), or name "
        "the column in --categorical-features to use its values as categories"
    )
    # named as categorical: taken as categories, as asked
    named = [*args, "--categorical-features", "feature_1"]
    assert main([*named, "--out", str(tmp_path / "x.skops")]) == 0
    # real text categories are no numbers
    words = np.array(["a", "b", "1"])[np.arange(N_ROWS) % 3]
    pq.write_table(pa.table(_table(feature_1=words)), tmp_path / "words.parquet")
    args = _train(tmp_path, "words.parquet", "--out", str(tmp_path / "w.skops"))
    assert main(args) == 0


def test_a_header_only_csv_has_no_rows(tmp_path, capsys):
    (tmp_path / "empty.csv").write_text("feature_0,feature_1,target,era\n")
    assert main([*_train(tmp_path, "empty.csv"), "--out", "x.skops"]) == 1
    assert _one_line(capsys) == (
        f"eraboost: error: {tmp_path}/empty.csv has no rows (only a header): "
        "give a table with data"
    )
    (tmp_path / "blank.csv").write_text("feature_0,target,era\n,1,1\n,2,1\n")
    assert main([*_train(tmp_path, "blank.csv"), "--out", "x.skops"]) == 1
    assert "feature column 'feature_0' of" in _one_line(capsys)


def test_a_binary_file_is_no_csv_and_no_raw_bytes_are_printed(tmp_path, capsys):
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x1b[31m" + bytes(range(256))
    (tmp_path / "image.csv").write_bytes(png)
    assert main([*_train(tmp_path, "image.csv"), "--out", "x.skops"]) == 1
    assert _one_line(capsys) == (
        f"eraboost: error: cannot read {tmp_path}/image.csv as csv: it is not a "
        "text file (a NUL byte at byte 8); give a CSV text file or a .parquet "
        "table"
    )
    # no NUL byte, but terminal escapes and a line that is not CSV: the
    # reader's message quotes the row, escaped and cut
    row = "\x1b[2J\x07" + "x" * 300
    (tmp_path / "odd.csv").write_text(f"a,b\n1,2\n{row},3,4\n")
    assert main([*_train(tmp_path, "odd.csv"), "--out", "x.skops"]) == 1
    line = _one_line(capsys)
    assert "\\x1b[2J\\x07xxx" in line and len(line) < 300


def test_a_constant_target_is_said_at_train_and_report_gives_nan(tmp_path, capsys):
    pq.write_table(pa.table(_table(target=np.zeros(N_ROWS))), tmp_path / "c.parquet")
    pq.write_table(pa.table(_table()), tmp_path / "t.parquet")
    model = str(tmp_path / "c.skops")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the estimator's warning is not shown
        assert main([*_train(tmp_path, "c.parquet"), "--out", model]) == 0
    assert _one_line(capsys, "warning") == (
        "eraboost: warning: the target column 'target' of "
        f"{tmp_path}/c.parquet holds one value (0.0) in every row: the model "
        "will predict it everywhere; check --target and the rows of the table"
    )
    # the model predicts one value: its Pearson correlation is undefined in
    # every era (era_scores gives 0 there, the report NaN)
    assert np.ptp(load_model(model).predict(np.zeros((3, 3)))) == 0
    out = tmp_path / "rep"
    assert main(["report", model, str(tmp_path / "t.parquet"), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    row = captured.out.splitlines()[-1].split()
    assert row[:5] == ["c", "nan", "nan", "nan", "nan"], captured.out
    assert "pearson of c is undefined (NaN) in 6 of 6 eras" in captured.err
    scores = (out / "era_scores.csv").read_text().splitlines()[1:]
    assert [line.split(",")[1] for line in scores] == ["nan"] * N_ERAS


def test_one_era_with_an_era_split_is_one_cli_line(tmp_path, capsys):
    data = tmp_path / "one.parquet"
    pq.write_table(pa.table(_table(era=np.zeros(N_ROWS, dtype=int))), data)
    args = _train(tmp_path, "one.parquet", "--split-type", "era")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main([*args, "--out", str(tmp_path / "x.skops")]) == 0
    assert _one_line(capsys, "warning") == (
        f"eraboost: warning: the era column 'era' of {data} holds a single era "
        "(0), so --split-type era cannot compare eras (the model is the one of "
        "--split-type original); give --era a column of several eras (e.g. the "
        "month of each row)"
    )


def test_python_warnings_of_a_command_are_one_line(tmp_path, capsys):
    """A warning of the estimators (here: every era of one row) is one line
    without a file path."""
    eras = np.arange(N_ROWS)
    pq.write_table(pa.table(_table(era=eras)), tmp_path / "rows.parquet")
    args = _train(tmp_path, "rows.parquet", "--split-type", "era")
    assert main([*args, "--out", str(tmp_path / "x.skops")]) == 0
    line = _one_line(capsys, "warning")
    assert "every era has fewer than 2 rows" in line and ".py" not in line


@pytest.mark.parametrize("metric", ["r2", "mae"])
def test_report_r2_and_mae_per_era(folder, metric, capsys):
    out = folder / f"rep_{metric}"
    args = ["report", str(folder / "m.skops"), str(folder / "t.parquet")]
    assert main([*args, "--metric", metric, "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    cols = _table()
    X = np.column_stack([cols[f"feature_{j}"] for j in range(3)])
    pred = load_model(folder / "m.skops").predict(X)
    score = {"r2": r2_score, "mae": mean_absolute_error}[metric]
    expected = [
        score(cols["target"][cols["era"] == e], pred[cols["era"] == e])
        for e in range(N_ERAS)
    ]
    rows = (out / "era_scores.csv").read_text().splitlines()[1:]
    np.testing.assert_allclose([float(r.split(",")[1]) for r in rows], expected)


@pytest.mark.parametrize("name", ["m.pkl", "m.joblib", "m.pickle", "m.csv"])
def test_out_refuses_pickle_and_table_names(folder, name, capsys):
    assert main([*_train(folder, "t.parquet"), "--out", name]) == 1
    line = _one_line(capsys)
    assert line.startswith(f"eraboost: error: --out {name} names a")
    assert line.endswith("a model file loads without running code: name it m.skops")
    assert main(["convert", str(folder / "m.skops"), "--out", name]) == 1
    assert "name it m.skops" in _one_line(capsys)


@pytest.mark.parametrize(
    "bad, shown",
    [(np.inf, "inf"), (np.nan, "nan"), (np.datetime64("NaT", "D"), "NaT")],
)
def test_predict_never_writes_non_finite_predictions(
    folder, monkeypatch, capsys, bad, shown
):
    """Infinite, NaN or NaT predictions (an overflowing model, a class NaT):
    one line, status 1, nothing written."""
    from eraboost import HistGradientBoostingRegressor

    def overflowing(self, X):
        out = np.full(
            X.shape[0], np.datetime64("1970-01-01") if shown == "NaT" else 1.0
        )
        out[7] = bad
        return out

    monkeypatch.setattr(HistGradientBoostingRegressor, "predict", overflowing)
    out = folder / "p.csv"
    args = ["predict", str(folder / "m.skops"), str(folder / "t.parquet")]
    assert main([*args, "--out", str(out)]) == 1
    assert _one_line(capsys) == (
        f"eraboost: error: model {folder}/m.skops gives 1 non-finite values of "
        f"'prediction' for {folder}/t.parquet (the first at row 7: {shown}); "
        "nothing was written: the model file is damaged, or train the model again"
    )
    assert not out.exists()


HOSTILE = "v9\x1b[2J\nTraceback (most recent call last):"
SHOWN = "v9\\x1b[2J\\nTraceback (most recent call last):"  # escaped


@pytest.mark.parametrize("error", [TypeError, NotImplementedError, KeyError])
def test_model_file_problems_are_one_escaped_line(folder, monkeypatch, capsys, error):
    import eraboost.persistence

    def failing(*args, **kwargs):
        raise error(HOSTILE)

    monkeypatch.setattr(eraboost.persistence, "load_model", failing)
    monkeypatch.setattr(eraboost.persistence, "convert_model", failing)
    model = str(folder / "m.skops")
    for args in (
        ["predict", model, str(folder / "t.parquet"), "--out", "p.csv"],
        ["report", model, str(folder / "t.parquet"), "--out", "rep"],
        ["convert", model, "--out", str(folder / "new.skops")],
    ):
        assert main(args) == 1
        line = _one_line(capsys)
        assert line.startswith(f"eraboost: error: model {model} cannot be used (")
        assert SHOWN in line


def test_model_file_errors_and_warnings_are_escaped(folder, monkeypatch, capsys):
    """A model file's strings (its version...) reach the message escaped,
    newlines included: no terminal escape, no fake line."""
    import eraboost.persistence
    from eraboost import ModelVersionWarning

    def refused(*args, **kwargs):
        raise eraboost.persistence.ModelFileError(f"version {HOSTILE!s}")

    monkeypatch.setattr(eraboost.persistence, "load_model", refused)
    model = str(folder / "m.skops")
    args = ["predict", model, str(folder / "t.parquet"), "--out", "p.csv"]
    assert main(args) == 1
    assert _one_line(capsys).endswith(
        "version v9\\x1b[2J\\nTraceback (most recent call last):"
    )
    monkeypatch.undo()
    real = eraboost.persistence.load_model

    def warned(*args, **kwargs):
        warnings.warn(f"by eraboost {HOSTILE}", ModelVersionWarning, stacklevel=2)
        return real(*args, **kwargs)

    monkeypatch.setattr(eraboost.persistence, "load_model", warned)
    assert main([*args[:-1], str(folder / "p.csv"), "--quiet"]) == 0
    assert _one_line(capsys, "warning").endswith(
        "v9\\x1b[2J\\nTraceback (most recent call last):"
    )


def test_classes_a_table_cannot_hold_are_one_line(folder, monkeypatch, capsys):
    """Classes stored big-endian (which fit never makes): pyarrow cannot
    write them (ArrowNotImplementedError), one line naming the model."""
    import eraboost.persistence

    cols = _table()
    X = np.column_stack([cols[f"feature_{j}"] for j in range(3)])
    est = HistGradientBoostingClassifier(max_iter=2).fit(X, cols["era"] % 2)
    est.classes_ = est.classes_.astype(">i8")
    meta = {"features": [f"feature_{j}" for j in range(3)], "categorical": []}
    monkeypatch.setattr(eraboost.persistence, "load_model", lambda *a, **k: (est, meta))
    model = str(folder / "m.skops")
    args = ["predict", model, str(folder / "t.parquet"), "--out", "p.csv"]
    assert main(args) == 1
    line = _one_line(capsys)
    assert line.startswith(f"eraboost: error: model {model} cannot be used (")
    assert "ArrowNotImplementedError" in line


def test_categories_of_another_kind_than_the_model_learnt(tmp_path, capsys):
    """A categorical column given as numbers to a model of text categories
    (the encoder raised a TypeError)."""
    rng = np.random.default_rng(1)
    words = np.array(["a", "b", "c"])[rng.integers(0, 3, N_ROWS)]
    pq.write_table(pa.table(_table(feature_2=words)), tmp_path / "words.parquet")
    codes = rng.integers(0, 3, N_ROWS)
    pq.write_table(pa.table(_table(feature_2=codes)), tmp_path / "codes.parquet")
    model = str(tmp_path / "w.skops")
    assert main([*_train(tmp_path, "words.parquet"), "--out", model]) == 0
    data = str(tmp_path / "codes.parquet")
    assert main(["predict", model, data, "--out", str(tmp_path / "p.csv")]) == 1
    assert _one_line(capsys) == (
        f"eraboost: error: feature column 'feature_2' of {data} holds numbers, "
        f"but model {model} learnt it as text (e.g. 'a'): give the column as "
        "text, as in the training data"
    )
