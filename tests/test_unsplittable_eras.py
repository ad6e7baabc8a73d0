"""Eras too small to split (docs/criteria.md, "Splittable eras"): a warning."""

import warnings

import numpy as np
import pytest

from eraboost import (
    HistGradientBoostingRegressor,
    InvariantForestRegressor,
)

RNG = np.random.RandomState(0)
X = RNG.normal(size=(400, 3))
Y = X[:, 0] + RNG.normal(scale=0.1, size=400)


@pytest.mark.parametrize(
    "est",
    [
        HistGradientBoostingRegressor(max_iter=5, split_type="era"),
        HistGradientBoostingRegressor(max_iter=5, split_type="directional"),
        InvariantForestRegressor(n_estimators=2, split_type="era"),
    ],
    ids=["booster-era", "booster-directional", "forest-era"],
)
def test_one_row_per_era_warns_naming_the_rule(est):
    # every era a single row: no era can be split, the model is constant
    with pytest.warns(UserWarning, match="'Splittable eras'") as record:
        est.fit(X, Y, eras=np.arange(400))
    assert record[0].filename == __file__  # points at the caller's fit
    assert np.unique(est.predict(X)).size == 1


def test_eras_below_twice_the_per_era_minimum_warn():
    est = HistGradientBoostingRegressor(
        max_iter=3, split_type="era", min_samples_leaf_per_era=5
    )
    with pytest.warns(UserWarning, match="every era has fewer than 10 rows"):
        est.fit(X, Y, eras=np.repeat(np.arange(50), 8))


@pytest.mark.parametrize("rows_per_era", [2, 10])
def test_eras_that_can_split_do_not_warn(rows_per_era):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        HistGradientBoostingRegressor(max_iter=3, split_type="era").fit(
            X, Y, eras=np.repeat(np.arange(400 // rows_per_era), rows_per_era)
        )
    # pooled splits need no splittable era: no warning either
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        HistGradientBoostingRegressor(max_iter=3).fit(X, Y, eras=np.arange(400))
