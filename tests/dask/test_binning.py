"""The driver's bins are the single machine's on the same rows, above the
binning subsample too (the same draw from the same seed)."""

import numpy as np
import pytest

from eraboost import HistGradientBoostingRegressor
from eraboost._engine.binning import BinMapper
from eraboost.dask._binning import SUBSAMPLE, fit_bin_mapper


@pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])
@pytest.mark.parametrize("n", [5_000, SUBSAMPLE + 1_000])
def test_same_thresholds(n, weighted):
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(n, 2))
    X[rng.random((n, 2)) < 0.01] = np.nan
    w = rng.uniform(0.1, 3.0, n) if weighted else None
    local = HistGradientBoostingRegressor(random_state=3, max_bins=63)
    local._init_random_streams()
    dX = da.from_array(X, chunks=(7_000, -1))
    dw = None if w is None else da.from_array(w, chunks=7_000)
    with __import__("dask").config.set(scheduler="synchronous"):
        mapper = fit_bin_mapper(local, dX, dw, None)
    # what the single machine's fit (``_bin``) fits
    expected = BinMapper(
        max_bins=63,
        random_state=local._random_seed,
        is_categorical=np.zeros(2, dtype=bool),
        known_categories=[None, None],
    ).fit(X, w)
    for got, want in zip(mapper.bin_thresholds_, expected.bin_thresholds_, strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(mapper.transform(X), expected.transform(X))
