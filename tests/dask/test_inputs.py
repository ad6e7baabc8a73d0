"""The Dask estimators' API and their checks: unsupported options and bad
inputs are refused with one line before any task runs."""

import numpy as np
import pytest

from eraboost import HistGradientBoostingRegressor, load_model, save_model
from eraboost.dask import (
    DaskHistGradientBoostingClassifier,
    DaskHistGradientBoostingRegressor,
)

from .conftest import chunked, era_data


def _tasks_run(client, fit):
    """Run ``fit`` (expected to raise); return the number of tasks the
    cluster ran meanwhile."""
    from distributed import get_task_stream

    with get_task_stream(client) as stream, pytest.raises(ValueError) as info:
        fit()
    return len(stream.data), str(info.value)


@pytest.mark.parametrize(
    "option",
    [
        dict(scoring="r2", early_stopping=True),
        dict(loss="absolute_error"),
    ],
    ids=str,
)
def test_unsupported_options_refused_before_work(client2, option):
    X, y, eras, _ = era_data(n=500)
    dX, dy, de = chunked(X, y, eras, rows=200)
    est = DaskHistGradientBoostingRegressor(client=client2, max_iter=2, **option)
    n_tasks, message = _tasks_run(client2, lambda: est.fit(dX, dy, eras=de))
    assert n_tasks == 0
    name = next(iter(option))
    assert f"{name}=" in message
    assert "not supported by the Dask estimators yet" in message
    assert "\n" not in message


def test_scorer_refused_when_auto_turns_early_stopping_on(client2):
    X, y, eras, _ = era_data(n=10_001, p=2)
    dX, dy, de = chunked(X, y, eras, rows=4000)
    est = DaskHistGradientBoostingRegressor(client=client2, max_iter=2, scoring="r2")
    n_tasks, message = _tasks_run(client2, lambda: est.fit(dX, dy, eras=de))
    assert n_tasks == 0
    assert "scoring='r2'" in message and "early_stopping=False" in message


def test_bad_inputs(client2):
    import dask.array as da

    X, y, eras, _ = era_data(n=600)
    dX, dy, de = chunked(X, y, eras, rows=200)
    est = DaskHistGradientBoostingRegressor(client=client2, max_iter=2)
    with pytest.raises(ValueError, match="eras is required"):
        est.fit(dX, dy)
    bad_eras = eras.astype(float)
    bad_eras[5] = np.nan
    with pytest.raises(ValueError, match="contains NaN"):
        est.fit(dX, dy, eras=chunked(bad_eras, rows=200)[0])
    with pytest.raises(ValueError, match="partitions do not match"):
        est.fit(dX, da.from_array(y, chunks=300), eras=de)
    with pytest.raises(ValueError, match="has 599 rows but X has 600"):
        est.fit(dX, dy[:599], eras=de)
    with pytest.raises(ValueError, match="single era"):
        est.fit(dX, dy, eras=chunked(np.zeros(600, dtype=int), rows=200)[0])
    with pytest.raises(TypeError, match="dask array, DataFrame or Series"):
        est.fit(X, y, eras=eras)


def _refused_before_work_on_X(client, dX, fit):
    """Run ``fit`` (expected to raise ValueError); check that no task read
    X (the checks run on the eras, targets and weights only); return the
    one-line message."""
    from distributed import get_task_stream

    with get_task_stream(client) as stream, pytest.raises(ValueError) as info:
        fit()
    keys = [str(t["key"]) for t in stream.data]
    assert not [k for k in keys if dX.name in k or "_select" in k or "Shard" in k]
    message = str(info.value)
    assert "\n" not in message
    return message


def _with(values, at, value):
    values = values.astype(float) if values.dtype.kind in "iu" else values.copy()
    values[at] = value
    return values


BAD_VALUES = {
    "y NaN": (lambda y, w, e: (_with(y, 7, np.nan), None, e), "y holds 1 NaN"),
    "y infinite": (
        lambda y, w, e: (_with(y, [3, 500], np.inf), None, e),
        "y holds 2 NaN or infinite",
    ),
    "weight NaN": (
        lambda y, w, e: (y, _with(w, 9, np.nan), e),
        "sample_weight holds 1 NaN",
    ),
    "weight negative": (
        lambda y, w, e: (y, _with(w, 450, -1.0), e),
        "sample_weight holds 1 negative",
    ),
    "weights all zero": (lambda y, w, e: (y, 0 * w, e), "sample_weight sums to 0"),
    "era missing": (
        lambda y, w, e: (y, None, _with(e, 550, np.nan)),
        "contains NaN",
    ),
    "era None": (
        lambda y, w, e: (y, None, _with(e.astype(object), 0, None)),
        "eras",
    ),
    "single era": (lambda y, w, e: (y, None, 0 * e), "single era"),
}


@pytest.mark.parametrize("case", list(BAD_VALUES))
def test_bad_values_refused_before_work_on_X(client2, case):
    X, y, eras, w = era_data(n=600)
    make, expected = BAD_VALUES[case]
    y, w, eras = make(y, w, eras)
    dX, dy, dw, de = chunked(X, y, w, eras, rows=200)
    est = DaskHistGradientBoostingRegressor(client=client2, max_iter=2)
    message = _refused_before_work_on_X(
        client2, dX, lambda: est.fit(dX, dy, dw, eras=de)
    )
    assert expected in message


def test_mismatched_inputs_refused_before_any_task(client2):
    """Rows and partitions are compared before any task runs."""
    import dask.array as da

    X, y, eras, w = era_data(n=600)
    dX, dy, dw, de = chunked(X, y, w, eras, rows=200)
    est = DaskHistGradientBoostingRegressor(client=client2, max_iter=2)
    for args, kwargs, expected in [
        ((dX, dy), dict(eras=de[:590]), "eras has 590 rows but X has 600"),
        ((dX, dy, dw[:10]), dict(eras=de), "sample_weight has 10 rows"),
        ((dX, dy, da.from_array(w, chunks=250)), dict(eras=de), "partitions"),
        ((dX, dy), dict(eras=da.from_array(eras, chunks=300)), "partitions"),
        ((dX.astype(str), dy), dict(eras=de), "numeric features only"),
    ]:
        n_tasks, message = _tasks_run(
            client2, lambda a=args, k=kwargs: est.fit(*a, **k)
        )
        assert n_tasks == 0
        assert expected in message
        assert "\n" not in message


def test_mismatched_frame_partitions_refused(client2):
    """A DataFrame and a Series cut differently: one line before X is
    read (their lengths are counted, nothing else)."""
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y, eras, _ = era_data(n=600, p=3)
    ddf = dd.from_pandas(pd.DataFrame(X, columns=["a", "b", "c"]), npartitions=3)
    dy = dd.from_pandas(pd.Series(y), npartitions=2)
    de = dd.from_pandas(pd.Series(eras), npartitions=3)
    est = DaskHistGradientBoostingRegressor(client=client2, max_iter=2)
    with pytest.raises(ValueError, match="partitions do not match") as info:
        est.fit(ddf, dy, eras=de)
    assert "\n" not in str(info.value)


def test_non_numeric_frame_refused(client2):
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": np.arange(100.0), "b": ["x"] * 100})
    ddf = dd.from_pandas(frame, npartitions=2)
    y = dd.from_pandas(pd.Series(np.arange(100.0)), npartitions=2)
    eras = dd.from_pandas(pd.Series(np.arange(100) % 5), npartitions=2)
    est = DaskHistGradientBoostingRegressor(client=client2, max_iter=2)
    with pytest.raises(ValueError, match=r"non-numeric columns \['b'\]"):
        est.fit(ddf, y, eras=eras)


def test_dataframe_fit_predict_and_model_file(client2, tmp_path):
    """A dask DataFrame fits the model of its rows (feature names kept);
    predict gives a dask Series; to_local is the single-machine estimator,
    saved and loaded by the model files."""
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y, eras, w = era_data(n=1200, p=4)
    names = [f"f{i}" for i in range(4)]
    frame = pd.DataFrame(X, columns=names)
    ddf = dd.from_pandas(frame, npartitions=3)
    dy = dd.from_pandas(pd.Series(y), npartitions=3)
    de = dd.from_pandas(pd.Series(eras), npartitions=3)
    dw = dd.from_pandas(pd.Series(w), npartitions=3)
    params = dict(max_iter=3, random_state=0, early_stopping=False, split_type="era")
    est = DaskHistGradientBoostingRegressor(client=client2, **params)
    est.fit(ddf, dy, dw, eras=de)
    ref = HistGradientBoostingRegressor(**params).fit(frame, y, w, eras=eras)
    np.testing.assert_array_equal(est.feature_names_in_, names)
    pred = est.predict(ddf)
    assert isinstance(pred, dd.Series)
    np.testing.assert_allclose(pred.compute().to_numpy(), ref.predict(frame), atol=1e-9)
    local = est.to_local()
    assert type(local) is HistGradientBoostingRegressor
    np.testing.assert_array_equal(local.eras_, ref.eras_)
    assert local._fit_signature == ref._fit_signature
    path = tmp_path / "model.json"
    save_model(local, path)
    np.testing.assert_allclose(load_model(path).predict(frame), ref.predict(frame))


def test_params_and_clone():
    from sklearn.base import clone

    est = DaskHistGradientBoostingClassifier(split_type="directional", max_iter=7)
    params = est.get_params()
    assert params["client"] is None
    assert params["split_type"] == "directional"
    local = set(HistGradientBoostingRegressor().get_params())
    assert local <= set(DaskHistGradientBoostingRegressor().get_params())
    assert clone(est).get_params() == params
    with pytest.raises(TypeError):
        DaskHistGradientBoostingRegressor(no_such_option=1)


@pytest.mark.parametrize("setting", [None, False, True])
def test_shard_calls_go_direct_unless_the_client_says_not(
    client2, monkeypatch, setting
):
    """The driver calls its shards directly on their workers during a fit
    (the client's default, ``direct_to_workers=None``, would send every
    call's bytes through the scheduler); a client made with
    ``direct_to_workers=False`` keeps its word, and the setting is the
    client's again after the fit."""
    from eraboost.dask import _train

    seen = []
    call_each = _train.Cluster.call_each

    def recording(self, method, args):
        seen.append(client2.direct_to_workers)
        return call_each(self, method, args)

    monkeypatch.setattr(_train.Cluster, "call_each", recording)
    monkeypatch.setattr(client2, "direct_to_workers", setting)
    X, y, eras, _ = era_data(n=600, p=3)
    dX, dy, de = chunked(X, y, eras, rows=200)
    DaskHistGradientBoostingRegressor(
        client=client2, max_iter=2, early_stopping=False
    ).fit(dX, dy, eras=de)
    assert seen and set(seen) == {setting is not False}
    assert client2.direct_to_workers is setting
