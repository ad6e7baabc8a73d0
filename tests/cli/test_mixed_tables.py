"""The command line's tables of small integer and float feature columns
(issue 56): read into a ``MixedMatrix`` (no float64 copy of every column),
with the predictions and models of the same table read as float64."""

import tracemalloc

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from eraboost import HistGradientBoostingRegressor, cli, load_model
from eraboost._engine.binning import MixedMatrix
from eraboost.cli import _tables
from eraboost.cli._loading import _column, _select_columns
from eraboost.cli._tables import Table
from eraboost.demo import make_era_data

N_INT = 4


def _columns(X, y, eras, mixed):
    """Features of ``X`` (int8): the first N_INT as int8, the others made
    non-integer, as float32 but the last as float64; all float64 when not
    ``mixed``."""
    rng = np.random.RandomState(len(y))
    cols = {}
    for j in range(X.shape[1]):
        if j < N_INT:
            values = X[:, j]
        else:
            kind = np.float64 if j == X.shape[1] - 1 else np.float32
            values = (X[:, j] + rng.normal(size=len(y)) * 0.3).astype(kind)
        cols[f"f{j}"] = values if mixed else values.astype(np.float64)
    cols["target"] = y
    cols["era"] = np.array([f"era{e:03d}" for e in eras])
    return cols


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    d = tmp_path_factory.mktemp("mixed")
    X, y, eras, edges = make_era_data(8, 200, seed=0)
    Xt, yt, et, _ = make_era_data(4, 200, seed=1, edges=edges)
    for name, mixed in (("mixed", True), ("reference", False)):
        # small row groups: several batches when _BATCH_ROWS is small
        pq.write_table(
            pa.table(_columns(X, y, eras, mixed)),
            d / f"{name}.parquet",
            row_group_size=500,
        )
        pq.write_table(
            pa.table(_columns(Xt, yt, et + 100, mixed)),
            d / f"{name}_test.parquet",
            row_group_size=500,
        )
    return d, X.shape[1]


def test_table_read_gives_a_mixed_matrix_of_the_float64_table(tables, monkeypatch):
    d, n_features = tables
    monkeypatch.setattr(_tables, "_BATCH_ROWS", 300)
    names = [f"f{j}" for j in range(n_features)][::-1]
    X, cols, _ = Table(d / "mixed.parquet").read(names, ["era"])
    ref, ref_cols, _ = Table(d / "reference.parquet").read(names, ["era"])
    assert isinstance(X, MixedMatrix) and ref.dtype == np.float64
    assert X.ints.dtype == np.int8 and X.floats.dtype == np.float64
    np.testing.assert_array_equal(X.is_int, [int(n[1:]) < N_INT for n in names])
    np.testing.assert_array_equal(X.to_float64(), ref)
    np.testing.assert_array_equal(cols["era"], ref_cols["era"])
    # the command line's column access agrees with the float64 table's
    for j in range(n_features):
        np.testing.assert_array_equal(_column(X, j), ref[:, j])
    for idx in ([0, 5, 2], [n_features - 1, 1], [6, 7]):
        part = _select_columns(X, idx)
        as_array = part.to_float64() if isinstance(part, MixedMatrix) else part
        np.testing.assert_array_equal(as_array, ref[:, idx])
    assert _select_columns(X, [6, 7]).dtype == np.int8  # f3, f2: int8 only


def test_int_only_and_int_with_nulls_keep_their_types(tables, monkeypatch, tmp_path):
    d, _ = tables
    monkeypatch.setattr(_tables, "_BATCH_ROWS", 300)
    table = Table(d / "mixed.parquet")
    ints, _, _ = table.read(["f0", "f1"])
    assert ints.dtype == np.int8
    # an int8 column with a null after the first batch: one float32 matrix
    n = table.n_rows
    values = np.arange(n) % 5
    with_null = pa.array(
        [None if i == 700 else int(v) for i, v in enumerate(values)], pa.int8()
    )
    floats = np.linspace(0, 1, n, dtype=np.float32)
    pq.write_table(
        pa.table({"a": values.astype(np.int8), "b": floats, "c": with_null}),
        tmp_path / "nulls.parquet",
        row_group_size=500,
    )
    X, _, _ = Table(tmp_path / "nulls.parquet").read(["a", "b", "c"])
    assert isinstance(X, np.ndarray) and X.dtype == np.float32
    expected = np.column_stack([values, floats, values]).astype(np.float32)
    expected[700, 2] = np.nan
    np.testing.assert_array_equal(X, expected)


@pytest.fixture
def seen(monkeypatch):
    """The type of the X of each regressor's fit and predict."""
    seen = []
    for method in ("fit", "predict"):
        real = getattr(HistGradientBoostingRegressor, method)

        def spy(self, X, *args, _real=real, _method=method, **kw):
            seen.append((_method, type(X).__name__))
            return _real(self, X, *args, **kw)

        monkeypatch.setattr(HistGradientBoostingRegressor, method, spy)
    return seen


def _train(d, name, features, model, extra=()):
    status = cli.main(
        [
            "train",
            str(d / f"{name}.parquet"),
            "--target",
            "target",
            "--era",
            "era",
            "--quiet",
            "--features",
            ",".join(features),
            "--param",
            "max_iter=8",
            "--param",
            "early_stopping=True",
            "--validation-data",
            str(d / f"{name}_test.parquet"),
            "--out",
            str(model),
            *extra,
        ]
    )
    assert status == 0
    return load_model(model)


def _predict(d, model, data, out):
    data = str(d / f"{data}_test.parquet")
    status = cli.main(["predict", str(model), data, "--out", str(out), "--quiet"])
    assert status == 0
    return pq.read_table(out).column("prediction").to_numpy()


def test_train_and_predict_on_a_mixed_table_as_on_its_float64_table(
    tables, tmp_path, seen
):
    d, n_features = tables
    features = [f"f{j}" for j in range(n_features)]
    models = {}
    for name in ("mixed", "reference"):
        models[name] = _train(d, name, features, tmp_path / f"{name}.skops")
    mixed, ref = models["mixed"], models["reference"]
    assert mixed.n_iter_ == ref.n_iter_
    for stage_a, stage_b in zip(mixed._predictors, ref._predictors):
        for tree_a, tree_b in zip(stage_a, stage_b):
            np.testing.assert_array_equal(tree_a.nodes, tree_b.nodes)
    expected = _predict(d, tmp_path / "reference.skops", "reference", tmp_path / "r.pq")
    seen.clear()
    for name in ("mixed", "reference"):
        got = _predict(d, tmp_path / f"{name}.skops", "mixed", tmp_path / "p.parquet")
        np.testing.assert_array_equal(got, expected)
    assert set(seen) == {("predict", "MixedMatrix")}


def test_fit_takes_the_mixed_matrix_of_the_table(tables, tmp_path, seen):
    d, _ = tables
    _train(d, "mixed", ["f5", "f0", "f6"], tmp_path / "m.skops")
    assert ("fit", "MixedMatrix") in seen
    assert {kind for _, kind in seen} == {"MixedMatrix"}


def test_report_scores_a_mixed_table_as_its_float64_table(tables, tmp_path):
    d, n_features = tables
    full = [f"f{j}" for j in range(n_features)]
    # the second model's features: a part of the table's, in another order
    models = [tmp_path / "full.skops", tmp_path / "part.skops"]
    _train(d, "mixed", full, models[0])
    _train(d, "mixed", ["f6", "f1", "f4", "f2"], models[1])
    scores = {}
    for data in ("mixed", "reference"):
        out = tmp_path / data
        args = ["report", *map(str, models), str(d / f"{data}_test.parquet")]
        status = cli.main([*args, "--out", str(out), "--quiet"])
        assert status == 0
        scores[data] = (out / "era_scores.csv").read_text()
    assert scores["mixed"] == scores["reference"]


def test_categorical_features_next_to_a_mixed_table(tables, tmp_path):
    d, n_features = tables
    features = [f"f{j}" for j in range(n_features)]
    # f1 (int8) categorical: the others go to the frame from the MixedMatrix
    extra = ["--categorical-features", "f1"]
    preds = {}
    for name in ("mixed", "reference"):
        model = tmp_path / f"{name}.skops"
        est = _train(d, name, features, model, extra)
        assert est.is_categorical_.sum() == 1
        preds[name] = _predict(d, model, name, tmp_path / f"{name}.parquet")
    np.testing.assert_array_equal(preds["mixed"], preds["reference"])


@pytest.mark.parametrize(
    "types, ints",
    [
        (["int8", "uint8", "float32"], "int16"),
        (["uint16", "float64", "int16"], None),  # common type int32
        (["int32", "float64"], None),
        (["bool", "float32"], None),
    ],
)
def test_which_parquet_tables_are_mixed(types, ints, tmp_path):
    rng = np.random.RandomState(0)
    columns = {}
    for j, kind in enumerate(types):
        if np.dtype(kind).kind == "f":
            columns[f"c{j}"] = rng.normal(size=400).astype(kind)
        else:
            columns[f"c{j}"] = rng.randint(0, 5, 400).astype(kind)
    pq.write_table(pa.table(columns), tmp_path / "t.parquet", row_group_size=150)
    X, _, _ = Table(tmp_path / "t.parquet").read(list(columns))
    expected = np.column_stack(list(columns.values()))
    if ints is None:
        assert isinstance(X, np.ndarray)
        assert X.dtype == np.result_type(*map(np.dtype, types))
        np.testing.assert_array_equal(X, expected)
    else:
        assert isinstance(X, MixedMatrix) and X.ints.dtype == np.dtype(ints)
        np.testing.assert_array_equal(X.to_float64(), expected.astype(np.float64))


def test_a_csv_table_of_small_integers_and_floats_is_mixed(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(
        "a,b,c\n" + "".join(f"{i % 5},{i / 7},{i % 3}\n" for i in range(50))
    )
    X, _, _ = Table(path).read(["c", "b", "a"])
    assert isinstance(X, MixedMatrix) and X.ints.dtype == np.int8
    expected = np.array([[i % 3, i / 7, i % 5] for i in range(50)], dtype=np.float64)
    np.testing.assert_array_equal(X.to_float64(), expected)


def test_reading_a_mixed_table_makes_no_common_type_matrix(tmp_path):
    n, n_int, n_float = 20_000, 40, 2
    rng = np.random.RandomState(0)
    columns = {f"i{j}": rng.randint(0, 5, n).astype(np.int8) for j in range(n_int)}
    columns.update(
        {f"f{j}": rng.normal(size=n).astype(np.float32) for j in range(n_float)}
    )
    pq.write_table(pa.table(columns), tmp_path / "t.parquet", row_group_size=5000)
    table = Table(tmp_path / "t.parquet")
    tracemalloc.start()
    try:
        X, _, _ = table.read(list(columns))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert isinstance(X, MixedMatrix)
    # the float32 matrix of all columns, 4 bytes a value, is never made
    assert peak < n * (n_int + n_float) * 4 / 2
    assert X.nbytes == n * (n_int + 8 * n_float)
