"""Tables as users hold them (pandas, polars, pyarrow, the command line's
parquet reader): what reaches the engine, and the models they give.

A table of int8 columns 0..4 stored by columns is its own binned matrix:
the histograms read a copy by rows, the partition the table's own matrix,
no float64 copy anywhere, and the model is the one fitted from the same
values as a C-ordered array, bit for bit.
"""

import tracemalloc

import numpy as np
import pytest

from eraboost import HistGradientBoostingRegressor
from eraboost._engine import binning
from eraboost._engine import engine as engine_module
from eraboost._engine.binning import small_int_table_matrix

pd = pytest.importorskip("pandas")
pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")


def int5_data(n=6000, p=12, n_eras=30, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randint(0, 5, size=(n, p)).astype(np.int8)
    y = X[:, 0] - 0.5 * X[:, 1] * X[:, 2] + rng.normal(size=n)
    eras = np.repeat(np.arange(n_eras), -(-n // n_eras))[:n]
    return X, y, eras


def tables_of(X, tmp_path):
    """The same int8 columns as each kind of table a user may hold."""
    names = [f"f{j}" for j in range(X.shape[1])]
    arrow = pa.table({c: X[:, j] for j, c in enumerate(names)})
    path = tmp_path / "x.parquet"
    pq.write_table(arrow, path, row_group_size=1000)  # several chunks
    return {
        "pandas from columns": pd.DataFrame({c: X[:, j] for j, c in enumerate(names)}),
        "pandas from parquet": pd.read_parquet(path),
        "polars": pl.DataFrame({c: X[:, j] for j, c in enumerate(names)}),
        "pyarrow": pq.read_table(path),
    }


def traced_peak(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(
    "split_type, n_eras", [("original", 1), ("era", 30), ("directional", 30)]
)
def test_int8_tables_reach_the_engine_by_rows_without_a_copy_for_the_partition(
    split_type, n_eras, tmp_path, monkeypatch
):
    X, y, eras = int5_data(n_eras=n_eras)
    fit_eras = eras if n_eras > 1 else None
    params = dict(
        max_iter=8, max_leaf_nodes=15, split_type=split_type, early_stopping=False
    )
    reference = HistGradientBoostingRegressor(**params).fit(X, y, eras=fit_eras)
    expected = reference.predict(X)
    given, partition = [], []
    real_transform = binning.BinMapper.transform
    real_columns = engine_module.columns_for_partition

    def transform_spy(self, Xin, by_rows=False):
        out = real_transform(self, Xin, by_rows)
        given.append((Xin, by_rows, out))
        return out

    def columns_spy(X_binned, n_threads, budget=None, by_columns=None):
        out = real_columns(X_binned, n_threads, budget, by_columns)
        partition.append(out)
        return out

    monkeypatch.setattr(binning.BinMapper, "transform", transform_spy)
    monkeypatch.setattr(engine_module, "columns_for_partition", columns_spy)
    for name, table in tables_of(X, tmp_path).items():
        given.clear()
        partition.clear()
        est = HistGradientBoostingRegressor(**params).fit(table, y, eras=fit_eras)
        Xin, by_rows, X_binned = given[0]
        assert Xin.dtype == np.int8 and Xin.flags.f_contiguous, name
        assert by_rows and X_binned.flags.c_contiguous, name
        # the partition reads the input matrix itself, viewed as uint8
        assert partition[0].dtype == np.uint8, name
        assert np.shares_memory(partition[0], Xin), name
        if name.startswith("pandas"):
            assert np.shares_memory(Xin, table.to_numpy()), name
        np.testing.assert_array_equal(est.predict(table), expected, err_msg=name)
        assert list(est.feature_names_in_) == [f"f{j}" for j in range(X.shape[1])]


def test_int8_tables_make_no_float64_copy(tmp_path):
    n, p = 100_000, 20
    X, y, _ = int5_data(n=n, p=p)
    float_copy = n * p * 8
    params = dict(max_iter=2, early_stopping=False)
    for name, table in tables_of(X, tmp_path).items():
        est = HistGradientBoostingRegressor(**params)
        # the polars and pyarrow columns are copied into one int8 matrix
        # (n * p bytes); the bins by rows take as much again
        assert traced_peak(lambda t=table, e=est: e.fit(t, y)) < float_copy / 2, name
        assert traced_peak(lambda t=table, e=est: e.predict(t)) < float_copy / 4, name
    # the measure sees a float64 copy where there is one (int32 columns)
    wide = pl.DataFrame({f"f{j}": X[:, j].astype(np.int32) for j in range(p)})
    est = HistGradientBoostingRegressor(**params)
    assert traced_peak(lambda: est.fit(wide, y)) > float_copy


def test_which_tables_keep_their_integer_type():
    X = np.arange(12, dtype=np.int8).reshape(4, 3)
    mixed = pl.DataFrame({"a": X[:, 0], "b": X[:, 1].astype(np.uint8)})
    out = small_int_table_matrix(mixed)
    assert out.dtype == np.int16 and out.flags.f_contiguous
    np.testing.assert_array_equal(out, X[:, :2])
    batch = pa.RecordBatch.from_arrays(
        [pa.array(X[:, 0]), pa.array(X[:, 2])], ["a", "b"]
    )
    np.testing.assert_array_equal(small_int_table_matrix(batch), X[:, [0, 2]])
    # nulls, wider or float columns, other inputs: scikit-learn's checks
    assert (
        small_int_table_matrix(pl.DataFrame({"a": [1, None, 3]}).cast(pl.Int8)) is None
    )
    assert small_int_table_matrix(pl.DataFrame({"a": X[:, 0].astype(np.int32)})) is None
    assert small_int_table_matrix(pa.table({"a": X[:, 0], "b": [0.5] * 4})) is None
    # int16 and uint16: no common type of at most 16 bits
    a16, b16 = pl.Series(X[:, 0]).cast(pl.Int16), pl.Series(X[:, 1]).cast(pl.UInt16)
    assert small_int_table_matrix(pl.DataFrame({"a": a16, "b": b16})) is None
    assert small_int_table_matrix(X) is None
    assert small_int_table_matrix(pd.DataFrame(X)) is None


def test_a_table_with_nulls_fits_as_floats_with_nan():
    """Not a small-integer matrix: scikit-learn's checks give float64 with
    NaN, the model of the same float array."""
    X, y, _ = int5_data(n=3000, p=4)
    Xf = X.astype(np.float64)
    Xf[::7, 1] = np.nan
    table = pl.DataFrame(
        {f"f{j}": pl.Series(Xf[:, j]).fill_nan(None).cast(pl.Int8) for j in range(4)}
    )
    assert small_int_table_matrix(table) is None
    params = dict(max_iter=5, early_stopping=False)
    np.testing.assert_array_equal(
        HistGradientBoostingRegressor(**params).fit(table, y).predict(table),
        HistGradientBoostingRegressor(**params).fit(Xf, y).predict(Xf),
    )


def test_the_command_line_reads_int8_parquet_as_its_own_bins(tmp_path):
    """The command line's parquet reader gives int8 columns as an int8
    matrix by columns: what the engine takes as its own binned matrix."""
    from eraboost.cli._tables import Table

    X, _, _ = int5_data(n=5000, p=6)
    path = tmp_path / "t.parquet"
    pq.write_table(
        pa.table({f"f{j}": X[:, j] for j in range(6)}), path, row_group_size=1000
    )
    Xr, _, _ = Table(path).read([f"f{j}" for j in range(6)])
    assert Xr.dtype == np.int8 and Xr.flags.f_contiguous
    np.testing.assert_array_equal(Xr, X)
    bm = binning.BinMapper().fit(Xr)
    assert bm.rows_layout_pays(Xr) and bm.is_identity(Xr)
