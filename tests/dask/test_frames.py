"""Columns of one dask DataFrame, as ``dask.dataframe.read_parquet`` gives
them, fit the single machine's model of the same rows.

dask lowers each column selection on its own, and a narrow selection of a
parquet read may fuse parts that a wide one keeps apart: ``X=df[features]``,
``y=df["target"]`` and ``eras=df["era"]`` converted one by one come out in
different partitions. The Dask fit cuts them from the same parts.
"""

import numpy as np
import pytest

from eraboost import HistGradientBoostingRegressor
from eraboost.dask import DaskHistGradientBoostingRegressor

from .conftest import era_data
from .helpers import assert_same_trees

dd = pytest.importorskip("dask.dataframe")
pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

FEATURES = [f"f{i}" for i in range(10)]
# parts of unequal rows, each cutting through eras
PART_ROWS = [1200, 900, 900]


def _parquet_table(tmp_path, string_eras=False):
    """era_data's rows written as a folder of parquet parts; returns the
    folder and the table as pandas reads it."""
    X, y, eras, w = era_data(n=sum(PART_ROWS), p=len(FEATURES))
    table = pd.DataFrame(X, columns=FEATURES)
    table["target"] = y
    table["era"] = [f"era{e:03d}" for e in eras] if string_eras else eras
    table["w"] = w
    folder = tmp_path / "table"
    folder.mkdir()
    start = 0
    for i, n in enumerate(PART_ROWS):
        table.iloc[start : start + n].to_parquet(
            folder / f"part.{i}.parquet", index=False
        )
        start += n
    return folder, pd.read_parquet(folder)


@pytest.mark.parametrize(
    "weighted, string_eras, filtered",
    [(False, False, False), (True, True, True)],
    ids=["plain", "weighted-string-eras-filtered"],
)
def test_columns_of_one_parquet_frame(
    client2, tmp_path, weighted, string_eras, filtered
):
    folder, table = _parquet_table(tmp_path, string_eras)
    df = dd.read_parquet(folder)
    if hasattr(df, "optimize"):  # dask-expr; the legacy frames of dask 2024.1 lack it
        # the case of the bug: the narrow selections lower into fewer parts
        target, features = df["target"].optimize(), df[FEATURES].optimize()
        assert target.npartitions < features.npartitions
    if filtered:
        # rows dropped part by part: still columns of one DataFrame
        df = df[df["target"] > -1.0]
        table = table[table["target"] > -1.0].reset_index(drop=True)
    params = dict(
        max_iter=3,
        max_leaf_nodes=15,
        min_samples_leaf=10,
        random_state=0,
        early_stopping=False,
        split_type="era",
    )
    est = DaskHistGradientBoostingRegressor(client=client2, **params)
    est.fit(
        df[FEATURES],
        df["target"],
        df["w"] if weighted else None,
        eras=df["era"],
    )
    ref = HistGradientBoostingRegressor(**params).fit(
        table[FEATURES],
        table["target"],
        table["w"] if weighted else None,
        eras=table["era"],
    )
    scale = float(np.std(table["target"]))
    assert_same_trees(est, ref, scale)
    local = est.to_local()
    # the fit signature digests the eras row by row: the same rows, in the
    # same order
    assert local._fit_signature == ref._fit_signature
    np.testing.assert_array_equal(local.eras_, ref.eras_)
    np.testing.assert_array_equal(est.feature_names_in_, FEATURES)
    pred = est.predict(df[FEATURES]).compute().to_numpy()
    np.testing.assert_allclose(
        pred, ref.predict(table[FEATURES]), rtol=0, atol=1e-9 * scale
    )


def test_columns_of_different_partitions_refused(client2, tmp_path):
    """Inputs that truly differ in their row chunks keep the one-line
    refusal, whichever way they differ."""
    import dask.array as da

    folder, table = _parquet_table(tmp_path)
    df = dd.read_parquet(folder)
    X = df[FEATURES]
    est = DaskHistGradientBoostingRegressor(client=client2, max_iter=2)
    target = table["target"]
    cases = {
        # as many partitions, cut elsewhere (1000 rows each)
        "same count": dd.from_pandas(target, npartitions=len(PART_ROWS)),
        "fewer": dd.from_pandas(target, npartitions=2),
        # a column of the same read with rows dropped part by part
        "filtered": df[df["target"] > 0.0]["target"],
        # a dask array X and a column of the parquet read (lowered alone,
        # fused into fewer parts than the array's chunks; dask 2024.1's
        # legacy frames keep the parts, whose chunks then match: no case)
        **({"array X": None} if hasattr(df, "optimize") else {}),
    }
    for case, y in cases.items():
        fit_X = X
        if y is None:
            fit_X = da.from_array(
                table[FEATURES].to_numpy(), chunks=(tuple(PART_ROWS), -1)
            )
            y = df["target"]
        # (dask 2024.1 counts the filtered column's rows first: "y has ... rows")
        refused = "partitions do not match|rows but X has"
        with pytest.raises(ValueError, match=refused) as info:
            est.fit(fit_X, y, eras=df["era"])
        assert "\n" not in str(info.value), case
