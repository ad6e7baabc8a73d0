"""Tables of small integer and float columns (issue 56): the integer columns
reach the bin mapper in their own type, the float ones as float64
(``MixedMatrix``), and the model is the one fitted from the whole table as
a float64 array, bit for bit."""

import tracemalloc

import numpy as np
import pytest

from eraboost import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    load_model,
    save_model,
)
from eraboost import gradient_boosting as gb_module
from eraboost._engine import binning
from eraboost._engine.binning import BinMapper, MixedMatrix, mixed_table_matrix

pd = pytest.importorskip("pandas")


def table_libraries():
    """polars, pyarrow and pyarrow.parquet, or a skip where they are not
    installed (the oldest environment): the pandas tests run without them."""
    return (
        pytest.importorskip("polars"),
        pytest.importorskip("pyarrow"),
        pytest.importorskip("pyarrow.parquet"),
    )


# integer column types of one table: int8 and uint8 (common type int16),
# with a wide int16 column (quantile thresholds); uint16 alone
INT_SETS = {
    "8-bit and int16": ["int8", "uint8", "int16"],
    "uint16": ["uint16"],
}


def mixed_frame(int_types, n=3000, seed=0, nan=True):
    """A pandas frame whose integer columns (of ``int_types``, in turn) are
    interleaved with float64 and float32 ones, NaN in a float column; its
    float64 array; a target with interactions; 30 eras."""
    rng = np.random.RandomState(seed)
    columns = {}
    for j in range(9):
        kind = int_types[j % len(int_types)]
        info = np.iinfo(kind)
        if j % 3 == 0:
            columns[f"x{j}"] = rng.normal(size=n) * (j + 1)
        elif j % 3 == 1:
            columns[f"x{j}"] = rng.randint(0, 5, size=n).astype(kind)
        elif info.bits == 16:  # > 255 distinct values
            low = int(max(info.min, -1000))
            columns[f"x{j}"] = rng.randint(low, low + 3000, size=n).astype(kind)
        else:
            columns[f"x{j}"] = rng.randint(0, 40, size=n).astype(kind)
    columns["x3"] = columns["x3"].astype(np.float32)
    if nan:
        columns["x0"][rng.rand(n) < 0.1] = np.nan
    frame = pd.DataFrame(columns)
    X = frame.to_numpy(dtype=np.float64)
    Z = np.nan_to_num(X)
    y = Z[:, 0] * 0.1 + Z[:, 1] - 0.5 * Z[:, 4] * Z[:, 1] + rng.normal(size=n)
    eras = np.repeat(np.arange(30), -(-n // 30))[:n]
    return frame, X, y, eras


def assert_same_trees(a, b):
    assert a.n_iter_ == b.n_iter_
    for stage_a, stage_b in zip(a._predictors, b._predictors):
        for tree_a, tree_b in zip(stage_a, stage_b):
            np.testing.assert_array_equal(tree_a.nodes, tree_b.nodes)


@pytest.fixture
def fitted_inputs(monkeypatch):
    """The matrices that BinMapper.fit receives, in order."""
    seen = []
    real = binning.BinMapper.fit

    def spy(self, X, sample_weight=None):
        seen.append(X)
        return real(self, X, sample_weight)

    monkeypatch.setattr(binning.BinMapper, "fit", spy)
    return seen


@pytest.mark.parametrize("ints", list(INT_SETS))
@pytest.mark.parametrize(
    "Est", [HistGradientBoostingRegressor, HistGradientBoostingClassifier]
)
@pytest.mark.parametrize("with_eras", [False, True])
@pytest.mark.parametrize("early_stopping", [False, True])
def test_mixed_frame_fits_the_model_of_its_float64_array(
    ints, Est, with_eras, early_stopping, fitted_inputs
):
    frame, X, y, eras = mixed_frame(INT_SETS[ints])
    if Est is HistGradientBoostingClassifier:
        y = np.digitize(y, np.quantile(y, [0.3, 0.7]))  # three classes
    params = dict(
        max_iter=15,
        max_leaf_nodes=15,
        early_stopping=early_stopping,
        n_iter_no_change=2,
        validation_fraction=0.2,
        random_state=0,
        split_type="era" if with_eras else "original",
    )
    fit_eras = eras if with_eras else None
    reference = Est(**params).fit(X, y, eras=fit_eras)
    est = Est(**params).fit(frame, y, eras=fit_eras)
    assert isinstance(fitted_inputs[-1], MixedMatrix)
    assert not isinstance(fitted_inputs[0], MixedMatrix)  # the reference's
    assert_same_trees(est, reference)
    if early_stopping:
        np.testing.assert_array_equal(
            est.validation_score_, reference.validation_score_
        )
    methods = ["predict"] + ["predict_proba"] * hasattr(est, "predict_proba")
    for method in methods:
        np.testing.assert_array_equal(
            getattr(est, method)(frame), getattr(reference, method)(X)
        )
    assert list(est.feature_names_in_) == list(frame.columns)


def test_mixed_frame_with_sample_weight_fits_the_model_of_its_array(fitted_inputs):
    frame, X, y, _ = mixed_frame(INT_SETS["8-bit and int16"], seed=3)
    sw = np.random.RandomState(1).uniform(0, 2, size=len(y))
    sw[::5] = 0.0  # rows of zero weight do not count in the thresholds
    params = dict(max_iter=10, early_stopping=False, random_state=0)
    reference = HistGradientBoostingRegressor(**params).fit(X, y, sample_weight=sw)
    est = HistGradientBoostingRegressor(**params).fit(frame, y, sample_weight=sw)
    assert isinstance(fitted_inputs[-1], MixedMatrix)
    assert_same_trees(est, reference)


@pytest.mark.parametrize("ints", list(INT_SETS))
@pytest.mark.parametrize("sample_weight", [False, True])
def test_mixed_binning_equals_float64_binning_with_subsample(ints, sample_weight):
    """Thresholds found on a subsample of the rows (the same draw for both
    groups), and the bins of other rows, out-of-range integers included."""
    frame, X, _, _ = mixed_frame(INT_SETS[ints], n=4000, seed=1)
    mixed = mixed_table_matrix(frame)
    sw = (
        np.random.RandomState(2).uniform(0.1, 2, size=len(X)) if sample_weight else None
    )
    ours = BinMapper(max_bins=63, subsample=700, random_state=5).fit(mixed, sw)
    theirs = BinMapper(max_bins=63, subsample=700, random_state=5).fit(X, sw)
    assert not ours.is_integer_
    for t_ours, t_theirs in zip(ours.bin_thresholds_, theirs.bin_thresholds_):
        np.testing.assert_array_equal(t_ours, t_theirs)
    other, *_ = mixed_frame(INT_SETS[ints], n=500, seed=2)
    for col in other.columns:
        if other[col].dtype.kind in "iu":  # the type's extremes, unseen at fit
            info = np.iinfo(other[col].dtype)
            values = other[col].to_numpy().copy()
            values[:2] = [info.min, info.max]
            other[col] = values
    X_other = other.to_numpy(dtype=np.float64)
    mixed_other = mixed_table_matrix(other)
    for by_rows in (False, True):
        got = ours.transform(mixed_other, by_rows=by_rows)
        assert got.flags.c_contiguous if by_rows else got.flags.f_contiguous
        np.testing.assert_array_equal(got, theirs.transform(X_other))


def test_mixed_tables_of_each_kind_fit_the_model_of_the_array(tmp_path, fitted_inputs):
    pl, pa, pq = table_libraries()
    frame, X, y, eras = mixed_frame(["int8"], n=3000, nan=False)
    arrow = pa.Table.from_pandas(frame, preserve_index=False)
    path = tmp_path / "x.parquet"
    pq.write_table(arrow, path, row_group_size=700)  # several chunks
    tables = {
        "polars": pl.from_pandas(frame),
        "pyarrow": pq.read_table(path),
        "pandas from parquet": pd.read_parquet(path),
    }
    params = dict(max_iter=10, early_stopping=True, n_iter_no_change=3, random_state=0)
    reference = HistGradientBoostingRegressor(**params).fit(X, y, eras=eras)
    for name, table in tables.items():
        est = HistGradientBoostingRegressor(**params).fit(table, y, eras=eras)
        assert isinstance(fitted_inputs[-1], MixedMatrix), name
        assert_same_trees(est, reference)
        np.testing.assert_array_equal(est.predict(table), reference.predict(X))


def test_which_tables_are_mixed():
    n = 6
    a = np.arange(n, dtype=np.int8)
    f = np.linspace(0, 1, n)
    mixed = mixed_table_matrix(
        pd.DataFrame({"a": a, "f": f, "b": a.astype(np.uint8), "g": f.astype("f4")})
    )
    assert mixed.ints.dtype == np.int16 and mixed.ints.flags.f_contiguous
    assert mixed.floats.dtype == np.float64 and mixed.floats.flags.f_contiguous
    np.testing.assert_array_equal(mixed.is_int, [True, False, True, False])
    np.testing.assert_array_equal(mixed.ints, np.c_[a, a])
    np.testing.assert_array_equal(mixed.floats, np.c_[f, f.astype("f4")])
    assert mixed.shape == (n, 4) and len(mixed) == n
    rows = mixed[np.array([True, False] * 3)]
    np.testing.assert_array_equal(rows.ints, np.c_[a, a][::2])
    np.testing.assert_array_equal(rows.floats, np.c_[f, f.astype("f4")][::2])
    not_mixed = {
        "only integers": pd.DataFrame({"a": a, "b": a}),
        "only floats": pd.DataFrame({"f": f, "g": f}),
        "int16 and uint16": pd.DataFrame(
            {"a": a.astype(np.int16), "b": a.astype(np.uint16), "f": f}
        ),
        "int32": pd.DataFrame({"a": a.astype(np.int32), "f": f}),
        "bool": pd.DataFrame({"a": a, "b": a > 2, "f": f}),
        "nullable Int8": pd.DataFrame({"a": pd.array(a, dtype="Int8"), "f": f}),
        "no rows": pd.DataFrame({"a": a[:0], "f": f[:0]}),
        "array": np.c_[a, f],
    }
    for name, table in not_mixed.items():
        assert mixed_table_matrix(table) is None, name
    with pytest.raises(ValueError, match="one table"):
        MixedMatrix(np.c_[a], np.c_[f], [True, True])


def test_which_polars_and_arrow_tables_are_mixed():
    pl, pa, _ = table_libraries()
    n = 6
    a = np.arange(n, dtype=np.int8)
    f = np.linspace(0, 1, n)
    assert mixed_table_matrix(pl.DataFrame({"a": a, "f": f})) is not None
    assert mixed_table_matrix(pa.table({"a": a, "f": f})) is not None
    with_nulls = {
        "polars nulls": pl.DataFrame({"a": a, "f": [None, *f[1:]]}),
        "pyarrow nulls": pa.table({"a": pa.array([None, *a[1:]], pa.int8()), "f": f}),
    }
    for name, table in with_nulls.items():
        assert mixed_table_matrix(table) is None, name


def test_a_frame_with_categories_keeps_its_path(fitted_inputs):
    frame, _, y, _ = mixed_frame(["int8"], n=1000)
    frame["c"] = pd.Categorical(np.arange(1000) % 3)
    est = HistGradientBoostingRegressor(max_iter=3, early_stopping=False)
    est.fit(frame, y)
    assert not isinstance(fitted_inputs[-1], MixedMatrix)
    assert fitted_inputs[-1].dtype == np.float64


def traced_peak(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def wide_mixed_frame(n=50_000, n_int=95, n_float=5):
    """A frame of ``n_int`` int8 and ``n_float`` float64 columns, its target,
    and the bytes of its float64 copy."""
    rng = np.random.RandomState(0)
    ints = rng.randint(0, 5, size=(n, n_int)).astype(np.int8)
    columns = {f"i{j}": ints[:, j] for j in range(n_int)}
    columns.update({f"f{j}": rng.normal(size=n) for j in range(n_float)})
    y = ints[:, 0] - 0.5 * ints[:, 1] * ints[:, 2] + rng.normal(size=n)
    return pd.DataFrame(columns), y, n * (n_int + n_float) * 8


@pytest.mark.parametrize("early_stopping", [False, True])
def test_mixed_frame_fit_makes_no_float64_copy_of_all_columns(early_stopping):
    frame, y, float_copy = wide_mixed_frame()
    est = HistGradientBoostingRegressor(max_iter=2, early_stopping=early_stopping)
    # the integer columns (1 byte a value) and the float ones (8) are
    # copied out of the frame, the bins take 1 byte a value
    assert traced_peak(lambda: est.fit(frame, y)) < float_copy / 2


def test_a_model_fitted_on_a_mixed_frame_saves_and_loads(tmp_path):
    frame, X, y, eras = mixed_frame(INT_SETS["8-bit and int16"])
    params = dict(max_iter=8, early_stopping=False)
    est = HistGradientBoostingRegressor(**params).fit(frame, y, eras=eras)
    reference = HistGradientBoostingRegressor(**params).fit(X, y, eras=eras)
    save_model(est, tmp_path / "mixed.ebm")
    loaded = load_model(tmp_path / "mixed.ebm")
    assert_same_trees(loaded, reference)
    np.testing.assert_array_equal(loaded.predict(frame), reference.predict(X))
    # the bin mapper is the one of the float64 array: nothing new to store
    assert loaded._bin_mapper.is_integer_ is False
    for t_loaded, t_ref in zip(
        loaded._bin_mapper.bin_thresholds_, reference._bin_mapper.bin_thresholds_
    ):
        np.testing.assert_array_equal(t_loaded, t_ref)


@pytest.mark.parametrize(
    "Est", [HistGradientBoostingRegressor, HistGradientBoostingClassifier]
)
def test_mixed_frame_predicts_by_blocks_of_rows(Est, monkeypatch):
    """Prediction converts blocks of rows to float64 (here of 7 rows, the
    last one shorter): the predictions of the whole float64 array."""
    frame, X, y, eras = mixed_frame(INT_SETS["8-bit and int16"], n=1000)
    if Est is HistGradientBoostingClassifier:
        y = (y > np.median(y)).astype(int)
    params = dict(max_iter=10, early_stopping=False, random_state=0)
    reference = Est(**params).fit(X, y, eras=eras)
    est = Est(**params).fit(frame, y, eras=eras)
    monkeypatch.setattr(gb_module, "_MIXED_BLOCK_VALUES", 7 * X.shape[1] + 3)
    converted = []
    real = MixedMatrix.to_float64

    def spy(self, rows=slice(None)):
        out = real(self, rows)
        converted.append(out.shape[0])
        return out

    monkeypatch.setattr(MixedMatrix, "to_float64", spy)
    methods = ["predict"] + ["predict_proba"] * hasattr(est, "predict_proba")
    for method in methods:
        converted.clear()
        np.testing.assert_array_equal(
            getattr(est, method)(frame), getattr(reference, method)(X)
        )
        assert converted == [7] * 142 + [6], method
    *_, last = est.staged_predict(frame)
    np.testing.assert_array_equal(last, reference.predict(X))


def test_mixed_frame_predict_makes_no_float64_copy_of_all_columns(monkeypatch):
    frame, y, float_copy = wide_mixed_frame()
    est = HistGradientBoostingRegressor(max_iter=2, early_stopping=False)
    est.fit(frame, y)
    # blocks of 2 MB here (32 MB by default, most of this table)
    monkeypatch.setattr(gb_module, "_MIXED_BLOCK_VALUES", 1 << 18)
    assert traced_peak(lambda: est.predict(frame)) < float_copy / 2


def test_mixed_validation_frame_gives_the_model_of_its_array():
    frame, X, y, eras = mixed_frame(INT_SETS["uint16"], n=2000)
    frame_val, X_val, y_val, eras_val = mixed_frame(INT_SETS["uint16"], 600, 4)
    params = dict(max_iter=20, early_stopping=True, n_iter_no_change=2)
    reference = HistGradientBoostingRegressor(**params).fit(
        X, y, eras=eras, X_val=X_val, y_val=y_val, eras_val=eras_val
    )
    seen = []
    real = binning.BinMapper.transform

    def spy(self, X, by_rows=False):
        seen.append(X)
        return real(self, X, by_rows)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(binning.BinMapper, "transform", spy)
        est = HistGradientBoostingRegressor(**params).fit(
            frame, y, eras=eras, X_val=frame_val, y_val=y_val, eras_val=eras_val
        )
    assert all(isinstance(X, MixedMatrix) for X in seen) and len(seen) == 2
    assert_same_trees(est, reference)
    np.testing.assert_array_equal(est.validation_score_, reference.validation_score_)


def test_warm_start_on_a_mixed_frame_continues_the_model_of_its_array():
    frame, X, y, eras = mixed_frame(INT_SETS["8-bit and int16"], n=1500)
    models = []
    for data in (X, frame):
        est = HistGradientBoostingRegressor(
            max_iter=5, warm_start=True, early_stopping=False, split_type="era"
        )
        est.fit(data, y, eras=eras)
        est.set_params(max_iter=9).fit(data, y, eras=eras)
        models.append(est)
    assert models[1].n_iter_ == 9
    assert_same_trees(models[1], models[0])


def test_a_mixed_matrix_given_as_x_fits_and_predicts_as_its_array():
    frame, X, y, eras = mixed_frame(INT_SETS["uint16"], n=1200, nan=True)
    matrix = mixed_table_matrix(frame)
    assert mixed_table_matrix(matrix) is matrix
    params = dict(max_iter=5, random_state=0)
    from_matrix = HistGradientBoostingRegressor(**params).fit(matrix, y, eras=eras)
    from_array = HistGradientBoostingRegressor(**params).fit(X, y, eras=eras)
    assert_same_trees(from_matrix, from_array)
    np.testing.assert_array_equal(from_matrix.predict(matrix), from_array.predict(X))
    # the staged path converts a MixedMatrix to float64 as a whole
    staged = list(from_matrix.staged_predict(matrix))
    np.testing.assert_array_equal(staged[-1], from_array.predict(X))
    fewer = MixedMatrix(matrix.ints, matrix.floats[:, 1:], matrix.is_int[1:])
    with pytest.raises(ValueError, match=r"X has 8 features, but \w+ is expecting 9"):
        from_matrix.predict(fewer)
