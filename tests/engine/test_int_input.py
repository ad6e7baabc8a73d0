"""Integer input: scikit-learn's bins without a float64 copy of X, and the
memory guard that fails before allocating the per-era histograms."""

import tracemalloc

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor as SkHGBR
from sklearn.ensemble._hist_gradient_boosting.binning import _BinMapper
from threadpoolctl import threadpool_limits

from eraboost import HistGradientBoostingRegressor
from eraboost._engine import _memory, binning
from eraboost._engine._binning import int_column_range, int_value_counts
from eraboost._engine.binning import BinMapper
from tests._sklearn_threads import scikit_learn_on_one_thread  # noqa: F401
from tests.engine.helpers import fit_sklearn_mapper

INT_DTYPES = [np.int8, np.uint8, np.int16, np.uint16]


def int_matrix(dtype, n, seed=0):
    """Columns: 5 values; a rare value; many values (quantile thresholds for
    16-bit types); a constant; values with gaps."""
    rng = np.random.RandomState(seed)
    info = np.iinfo(dtype)
    lo = max(int(info.min), -20)
    X = np.empty((n, 5), dtype=dtype)
    X[:, 0] = rng.randint(0, 5, size=n)
    X[:, 1] = rng.randint(0, 3, size=n)
    X[rng.choice(n, 3, replace=False), 1] = min(int(info.max), 90)  # rare
    wide_hi = int(info.max) if info.bits == 8 else 3000
    X[:, 2] = rng.randint(lo, wide_hi, size=n)
    X[:, 3] = 7
    X[:, 4] = rng.choice([0, 2, 9, 40], size=n)
    if info.min < 0:
        X[:, 4] -= 5
    return X


def assert_same_bins(ours, theirs, X):
    for t_ours, t_theirs in zip(ours.bin_thresholds_, theirs.bin_thresholds_):
        np.testing.assert_array_equal(t_ours, t_theirs)
    np.testing.assert_array_equal(
        ours.transform(X), theirs.transform(X.astype(np.float64))
    )


@pytest.mark.parametrize("dtype", INT_DTYPES)
def test_int_binning_equals_sklearn_with_subsample(dtype):
    # more rows than the 2e5 subsample: same subsample, same thresholds, and
    # values left out of the subsample still land in scikit-learn's bins
    X = int_matrix(dtype, 210_000)
    ours = BinMapper(random_state=42).fit(X)
    theirs = _BinMapper(random_state=42).fit(X.astype(np.float64))
    assert ours.is_integer_
    assert_same_bins(ours, theirs, X)
    if np.iinfo(dtype).bits == 16:  # > 255 distinct values: quantiles
        assert ours.bin_thresholds_[2].size == 254


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("max_bins", [3, 16, 255])
def test_int_binning_equals_sklearn_weighted(dtype, max_bins):
    X = int_matrix(dtype, 3000, seed=1)
    sw = np.random.RandomState(2).uniform(0, 2, size=X.shape[0])
    sw[::7] = 0.0  # zero-weight rows do not count as values
    ours = BinMapper(max_bins=max_bins, random_state=0).fit(X, sw)
    theirs = fit_sklearn_mapper(
        _BinMapper(n_bins=max_bins + 1, random_state=0), X.astype(np.float64), sw
    )
    assert_same_bins(ours, theirs, X)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("layout", ["C", "F", "view"])
@pytest.mark.parametrize("n_threads", [1, 3])
def test_value_counts_equal_bincount(dtype, layout, n_threads):
    # 70 columns: three tasks of COUNT_COLUMNS columns, the last one short
    info = np.iinfo(dtype)
    rng = np.random.RandomState(0)
    X = rng.randint(info.min, int(info.max) + 1, size=(3001, 70)).astype(dtype)
    X[:, 5] = info.min
    X[:, 6] = info.max
    if layout == "F":
        X = np.asfortranarray(X)
    elif layout == "view":  # neither C nor F contiguous, rows reversed
        X = np.asfortranarray(X)[::-2, ::3]
    offset = -int(info.min)
    subset = rng.randint(0, X.shape[0], size=1500)  # repeated rows count twice
    for rows in (None, subset, np.zeros(0, dtype=np.int64)):
        got = int_value_counts(X, rows, n_threads)
        taken = X if rows is None else X[rows]
        assert got.shape == (X.shape[1], 256)
        for f in range(X.shape[1]):
            want = np.bincount(taken[:, f].astype(np.int64) + offset, minlength=256)
            np.testing.assert_array_equal(got[f], want)


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("layout", ["C", "F", "view"])
def test_column_range_equals_numpy(dtype, layout):
    """Each column's minimum and maximum, read through a pointer when the
    column is contiguous (Fortran order), by strides otherwise: extremes
    first, last or alone, and a single row."""
    info = np.iinfo(dtype)
    rng = np.random.RandomState(1)
    lo, hi = max(int(info.min), -3000), min(int(info.max), 3000)
    X = rng.randint(lo, hi + 1, size=(1001, 9)).astype(dtype)
    X[0, 1], X[-1, 1] = info.min, info.max
    X[0, 2], X[-1, 2] = info.max, info.min
    X[:, 3] = info.max
    X[500, 4] = info.min
    if layout == "F":
        X = np.asfortranarray(X)
    elif layout == "view":
        X = np.asfortranarray(X)[::-3, ::2]
    for Y in (X, X[:1], X[-2:]):
        for n_threads in (1, 2):
            mins, maxs = int_column_range(Y, n_threads)
            assert mins.dtype == maxs.dtype == np.int32
            np.testing.assert_array_equal(mins, Y.min(axis=0))
            np.testing.assert_array_equal(maxs, Y.max(axis=0))


def test_value_counts_refuse_rows_out_of_range():
    X = np.zeros((10, 3), dtype=np.uint8)
    with pytest.raises(IndexError, match="rows outside"):
        int_value_counts(X, np.array([0, 10]), 1)
    with pytest.raises(IndexError, match="rows outside"):
        int_value_counts(X, np.array([-1]), 1)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
@pytest.mark.parametrize("order", ["C", "F"])
def test_byte_thresholds_past_max_bins_with_subsample(dtype, order, monkeypatch):
    # column 0 holds each of the 256 values 20 times, so the subsample of
    # 4,000 of its 5,120 rows has more distinct values than max_bins: that
    # column of the subsample goes to the quantiles, as scikit-learn's does
    info = np.iinfo(dtype)
    rng = np.random.RandomState(3)
    values = np.arange(int(info.min), int(info.max) + 1)
    X = np.empty((5120, 3), dtype=dtype)
    X[:, 0] = rng.permutation(np.tile(values, 20))
    X[:, 1] = rng.randint(0, 5, size=5120)
    X[:, 2] = rng.randint(int(info.min), int(info.min) + 100, size=5120)
    X = np.asarray(X, order=order)
    calls = []
    quantiles = binning.find_binning_thresholds

    def spy(col, *args):
        calls.append(col.size)
        return quantiles(col, *args)

    monkeypatch.setattr(binning, "find_binning_thresholds", spy)
    for max_bins in (16, 255):
        calls.clear()
        ours = BinMapper(max_bins=max_bins, subsample=4000, random_state=7).fit(X)
        theirs = _BinMapper(n_bins=max_bins + 1, subsample=4000, random_state=7).fit(
            X.astype(np.float64)
        )
        assert_same_bins(ours, theirs, X)
        # column 0's subsample, and column 2's (100 values) past 16 bins
        assert calls == [4000] * (1 if max_bins == 255 else 2)


def test_every_integer_value_goes_to_sklearn_bin():
    # all 256 int8 values, including those between and beyond the thresholds
    X = np.random.RandomState(0).randint(-3, 4, size=(500, 1)).astype(np.int8) * 9
    ours = BinMapper().fit(X)
    theirs = _BinMapper().fit(X.astype(np.float64))
    every = np.arange(-128, 128, dtype=np.int8).reshape(-1, 1)
    np.testing.assert_array_equal(
        ours.transform(every), theirs.transform(every.astype(np.float64))
    )


def test_int_path_never_calls_float_binning(monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("float binning called on integer input")

    monkeypatch.setattr(binning, "map_to_bins", fail)
    X = int_matrix(np.int8, 1000)
    y = X[:, 0] + np.random.RandomState(0).normal(size=1000)
    HistGradientBoostingRegressor(max_iter=3).fit(X, y)


def traced_peak(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("split_type", ["original", "era"])
def test_int8_fit_and_predict_make_no_float64_copy(split_type):
    n, p = 200_000, 40
    rng = np.random.RandomState(0)
    X = rng.randint(0, 5, size=(n, p)).astype(np.int8)
    y = X[:, 0] - X[:, 1] * X[:, 2] * 0.5 + rng.normal(size=n)
    eras = np.repeat(np.arange(50), n // 50)
    float_copy = n * p * 8
    params = {"max_iter": 3, "early_stopping": False, "split_type": split_type}
    est = HistGradientBoostingRegressor(**params)
    peak_int = traced_peak(lambda: est.fit(X, y, eras=eras))
    assert peak_int < float_copy / 2
    assert traced_peak(lambda: est.predict(X)) < float_copy / 4
    # the measure sees a float64 copy when there is one (int64 input)
    X64 = X.astype(np.int64)
    peak_float = traced_peak(
        lambda: HistGradientBoostingRegressor(**params).fit(X64, y, eras=eras)
    )
    assert peak_float > float_copy


def test_fortran_uint8_in_range_is_the_binned_matrix():
    rng = np.random.RandomState(0)
    X = np.asfortranarray(rng.randint(0, 5, size=(2000, 6)).astype(np.uint8))
    X[:, 5] = rng.randint(0, 2, size=2000)
    bm = BinMapper().fit(X)
    assert np.shares_memory(bm.transform(X), X)
    np.testing.assert_array_equal(bm.transform(X), X)
    # int8 with non-negative values: viewed as uint8, no copy either
    X8 = X.view(np.int8)
    assert np.shares_memory(BinMapper().fit(X8).transform(X8), X)
    # a gap in the values (0, 1, 3): bins differ from values, a copy is made
    Xg = X.copy(order="F")
    Xg[Xg[:, 0] == 2, 0] = 3
    bmg = BinMapper().fit(Xg)
    out = bmg.transform(Xg)
    assert not np.shares_memory(out, Xg)
    np.testing.assert_array_equal(
        out, _BinMapper().fit_transform(Xg.astype(np.float64))
    )
    # C-ordered input is copied into a Fortran-ordered binned matrix
    Xc = np.ascontiguousarray(X)
    assert not np.shares_memory(BinMapper().fit(Xc).transform(Xc), Xc)


@pytest.mark.parametrize("dtype", INT_DTYPES)
@pytest.mark.parametrize("order", ["C", "F"])
def test_int_input_parity_with_sklearn(dtype, order):
    X = np.asarray(int_matrix(dtype, 3000, seed=3), order=order)
    rng = np.random.RandomState(4)
    y = X[:, 0] * 1.0 - 0.01 * X[:, 2] + (X[:, 4] > 5) + rng.normal(size=3000)
    p = {"max_iter": 15, "early_stopping": False, "random_state": 0}
    ours = HistGradientBoostingRegressor(**p).fit(X, y)
    theirs = SkHGBR(**p).fit(X.astype(np.float64), y)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=0, atol=1e-9)
    # raw (unbinned) integer prediction equals the float one
    np.testing.assert_array_equal(ours.predict(X), ours.predict(X.astype(np.float64)))


def test_memory_guard_raises_before_allocating(monkeypatch):
    # 20,000 continuous rows in 10,000 eras, 50 features of 255 bins:
    # 10,000 x 50 x 255 cells x 12 B = 1.5 GB per node, x 16 live nodes
    allocations = []
    real_get = _memory.HistogramPool.get

    def get(self):
        allocations.append(self.size)
        return real_get(self)

    monkeypatch.setattr(_memory.HistogramPool, "get", get)
    monkeypatch.setattr(_memory, "available_memory", lambda: 24 * 2**30)
    rng = np.random.RandomState(0)
    X = rng.normal(size=(20_000, 50))
    y = X[:, 0] + rng.normal(size=20_000)
    eras = np.arange(20_000) // 2
    est = HistGradientBoostingRegressor(
        split_type="era", max_iter=2, early_stopping=False
    )
    tracemalloc.start()
    try:
        with pytest.raises(MemoryError) as err:
            est.fit(X, y, eras=eras)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert allocations == []
    assert peak < 100 * 2**20  # data-sized allocations only
    msg = str(err.value)
    # 255 bins a feature: no missing values, no missing-value bin
    assert "10000 eras x 12750 bins" in msg and "GiB" in msg
    for remedy in ("fewer eras", "max_leaf_nodes", "max_bins"):
        assert remedy in msg


def test_few_bins_are_stored_by_rows():
    """``rows_layout_pays``: features of at most ``ROWS_MAX_BINS`` bins
    (the missing-value bin included), their own binned matrix included;
    ``transform(by_rows=True)`` then gives the same bins in C order."""
    rng = np.random.RandomState(0)
    X = rng.randint(-2, 3, size=(3000, 5)).astype(np.int8)
    bm = BinMapper().fit(X)
    assert bm.rows_layout_pays(X)
    by_rows = bm.transform(X, by_rows=True)
    assert by_rows.flags.c_contiguous and not by_rows.flags.f_contiguous
    by_cols = bm.transform(X)
    assert by_cols.flags.f_contiguous
    np.testing.assert_array_equal(by_rows, by_cols)
    np.testing.assert_array_equal(
        bm.has_missing_values(by_rows), bm.has_missing_values(by_cols)
    )
    # one feature of more bins than ROWS_MAX_BINS: by columns
    Xw = X.astype(np.int16)
    Xw[:, 2] = rng.randint(0, binning.ROWS_MAX_BINS, size=3000)
    assert not BinMapper().fit(Xw).rows_layout_pays(Xw)
    Xw[:, 2] = rng.randint(0, binning.ROWS_MAX_BINS - 1, size=3000)
    assert BinMapper().fit(Xw).rows_layout_pays(Xw)
    # its own binned matrix (Fortran-ordered, values 0 .. k-1): by rows
    # too, a copy in C order, the matrix itself by columns (no copy)
    Xf = np.asfortranarray(X - X.min())
    bmf = BinMapper().fit(Xf)
    assert bmf.rows_layout_pays(Xf)
    rows_f = bmf.transform(Xf, by_rows=True)
    assert rows_f.flags.c_contiguous and not np.shares_memory(rows_f, Xf)
    np.testing.assert_array_equal(rows_f, Xf)
    assert np.shares_memory(bmf.transform(Xf), Xf)
    cols_f = bmf.bins_by_columns(Xf, rows_f)
    assert cols_f.dtype == np.uint8 and np.shares_memory(cols_f, Xf)
    # nothing to spare otherwise: not its own bins, or C-ordered
    assert bm.bins_by_columns(np.asfortranarray(X), by_rows) is None
    Xc = np.ascontiguousarray(Xf)
    assert bmf.bins_by_columns(Xc, bmf.transform(Xc, by_rows=True)) is None
    # floats of few distinct values too
    Xd = np.round(rng.normal(size=(3000, 4)))
    Xd[::5, 1] = np.nan
    bmd = BinMapper().fit(Xd)
    assert bmd.rows_layout_pays(Xd)
    np.testing.assert_array_equal(bmd.transform(Xd, by_rows=True), bmd.transform(Xd))


def test_missing_bins_found_in_either_layout():
    """``has_missing_values`` reads a matrix stored by rows in blocks of
    rows, one stored by columns column by column: the same flags, whether
    the missing-value bin is in the first row, the last, or nowhere."""
    bm = BinMapper().fit(np.arange(12.0).reshape(-1, 3) % 2)
    Xb = np.zeros((10_000, 3), dtype=np.uint8)
    Xb[9_999, 0] = bm.missing_bin_[0]
    Xb[0, 2] = bm.missing_bin_[2]
    for X in (np.asfortranarray(Xb), np.ascontiguousarray(Xb)):
        np.testing.assert_array_equal(bm.has_missing_values(X), [1, 0, 1])


def int5_era_data(seed, n, p, low, n_eras):
    """``n`` x ``p`` int8 values ``low .. low + 4``, a target with an
    interaction, and ``n_eras`` equal eras of consecutive rows."""
    rng = np.random.RandomState(seed)
    X = rng.randint(low, low + 5, size=(n, p)).astype(np.int8)
    y = X[:, 0] - 0.5 * X[:, 1] * X[:, 2] + rng.normal(size=n)
    eras = np.repeat(np.arange(n_eras), -(-n // n_eras))[:n]
    return X, y, eras


@pytest.mark.parametrize(
    "split_type, n_eras, loss",
    [
        ("original", 1, "squared_error"),
        ("original", 30, "absolute_error"),
        ("era", 30, "squared_error"),
        ("directional", 400, "squared_error"),
    ],
)
def test_same_model_from_c_and_fortran_input(split_type, n_eras, loss):
    """int8 input in C order is binned by rows (the histograms filled row by
    row), in Fortran order by columns: the same trees, predictions equal
    bit for bit, missing values and a feature subset included; with
    ``colsample_bytree`` < 1 both are binned by columns."""
    n = 6000
    X, y, eras = int5_era_data(1, n, 70, -2, n_eras)
    Xf = X.astype(np.float32)
    Xf[np.random.RandomState(1).rand(n) < 0.05, 5] = np.nan
    params = dict(
        max_iter=12,
        max_leaf_nodes=15,
        split_type=split_type,
        loss=loss,
        early_stopping=False,
        random_state=0,
        interaction_cst=[list(range(60)), list(range(50, 70))],
    )
    for data in (X, Xf):
        preds = []
        for order in "CF":
            Xo = np.asarray(data, order=order)
            est = HistGradientBoostingRegressor(**params)
            est.fit(Xo, y, eras=eras if n_eras > 1 else None)
            preds.append(est.predict(Xo))
        np.testing.assert_array_equal(preds[0], preds[1])
    captured = []
    real = binning.BinMapper.transform

    def spy(self, X, by_rows=False):
        captured.append(by_rows)
        return real(self, X, by_rows)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(binning.BinMapper, "transform", spy)
        fit_eras = eras if n_eras > 1 else None
        HistGradientBoostingRegressor(**params).fit(X, y, eras=fit_eras)
        HistGradientBoostingRegressor(**params, colsample_bytree=0.5).fit(
            X, y, eras=fit_eras
        )
    assert captured == [True, False]


@pytest.mark.parametrize("split_type, n_eras", [("original", 1), ("era", 64)])
def test_same_model_from_either_layout_and_any_threads_on_large_nodes(
    split_type, n_eras
):
    """Nodes of more rows than a block (16,384; without eras each block is
    summed apart, then the blocks in order) and eras split into groups
    among the threads: C and Fortran input, one thread or two, the same
    model bit for bit."""
    X, y, eras = int5_era_data(2, 40_000, 30, 0, n_eras)
    params = dict(
        max_iter=6,
        max_leaf_nodes=15,
        split_type=split_type,
        early_stopping=False,
        random_state=0,
    )
    preds = []
    for order, threads in (("C", 1), ("C", 2), ("F", 1), ("F", 2)):
        Xo = np.asarray(X, order=order)
        with threadpool_limits(threads, user_api="openmp"):
            est = HistGradientBoostingRegressor(**params)
            est.fit(Xo, y, eras=eras if n_eras > 1 else None)
        preds.append(est.predict(Xo))
    for p in preds[1:]:
        np.testing.assert_array_equal(p, preds[0])


@pytest.mark.parametrize("split_type, n_eras", [("original", 1), ("era", 40)])
def test_the_partition_reads_a_copy_by_columns(split_type, n_eras, monkeypatch):
    """Bins stored by rows (few-bin features) get a copy stored by columns
    for the partition of the nodes' rows, which reads one feature of each
    row; bins stored by columns are read as they are. With the copy or
    without it (too large for the memory budget), the same model bit for
    bit."""
    from eraboost._engine import engine as engine_module
    from eraboost._engine import grower as grower_module
    from eraboost._engine.grower import TreeGrower

    X, y, eras = int5_era_data(3, 5000, 12, 0, n_eras)
    fit_eras = eras if n_eras > 1 else None
    params = dict(max_iter=8, max_leaf_nodes=15, split_type=split_type, random_state=0)
    seen = []
    real = TreeGrower.__init__

    def spy(self, engine, *args, **kwargs):
        real(self, engine, *args, **kwargs)
        seen.append((engine.X_binned, engine.X_columns, self.X_columns))

    monkeypatch.setattr(TreeGrower, "__init__", spy)
    read = []
    real_split = grower_module.split_indices

    def split_spy(X_binned, *args):
        read.append(X_binned)
        return real_split(X_binned, *args)

    monkeypatch.setattr(grower_module, "split_indices", split_spy)
    preds = []
    for copy in (True, False):
        monkeypatch.setattr(
            engine_module, "column_copy_fits", lambda nbytes, budget=None, c=copy: c
        )
        seen.clear()
        read.clear()
        est = HistGradientBoostingRegressor(**params).fit(X, y, eras=fit_eras)
        preds.append(est.predict(X))
        X_binned, X_columns, used = seen[0]
        assert X_binned.flags.c_contiguous and used is X_columns
        assert read and all(r is X_columns for r in read)
        if copy:
            assert X_columns.flags.f_contiguous and X_columns is not X_binned
            np.testing.assert_array_equal(X_columns, X_binned)
        else:
            assert X_columns is X_binned
    np.testing.assert_array_equal(preds[0], preds[1])
    # stored by columns already, as its own bins (values 0 .. 4 in Fortran
    # order, as a pandas frame of int8 columns gives them): histograms by
    # rows from a copy in C order, the partition reads the input itself
    seen.clear()
    Xf = np.asfortranarray(X)
    pred_f = HistGradientBoostingRegressor(**params).fit(Xf, y, eras=fit_eras)
    X_binned, X_columns, _ = seen[0]
    assert X_binned.flags.c_contiguous and not np.shares_memory(X_binned, Xf)
    assert X_columns.dtype == np.uint8 and np.shares_memory(X_columns, Xf)
    np.testing.assert_array_equal(pred_f.predict(X), preds[0])
    # stored by columns, not its own bins (values -2 .. 2): never read as is
    seen.clear()
    Xs = np.asfortranarray(X - 2)
    HistGradientBoostingRegressor(**params).fit(Xs, y, eras=fit_eras)
    X_binned, X_columns, _ = seen[0]
    assert not np.shares_memory(X_columns, Xs)


def test_a_grower_refuses_columns_of_another_shape():
    """The engine's ``X_columns`` must hold the same bins as its
    ``X_binned``: a grower refuses another shape."""
    from dataclasses import replace

    from eraboost._engine.engine import EngineSettings, build_engine
    from eraboost._engine.grower import TreeGrower

    X, y, _ = int5_era_data(4, 500, 4, 0, 1)
    bm = BinMapper().fit(X)
    Xb = bm.transform(X, by_rows=True)
    g = np.zeros(len(y), dtype=np.float32)
    h = np.ones(1, dtype=np.float32)
    engine = build_engine(EngineSettings(), Xb, bm, None, g, h)
    engine = replace(engine, X_columns=np.asfortranarray(Xb[:, :3]))
    with pytest.raises(ValueError, match="X_columns"):
        TreeGrower(engine, engine.root_rows, True)
