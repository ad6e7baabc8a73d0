"""The estimators' messages about the target and the eras name the problem
and the fix, and their warnings point at the user's line (issue 64, item 4):
the line of the call to fit, through scikit-learn's ``fit`` wrapper and
through ``cross_validate``."""

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.model_selection import cross_validate

from eraboost import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    InvariantForestRegressor,
)

rng = np.random.default_rng(0)
X = rng.normal(size=(120, 3))
Y = X[:, 0] + rng.normal(size=120)
ERAS = np.repeat(np.arange(4), 30)


def _caught(fit):
    """The warnings of ``fit()``, and the line of this file that called it."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit()
    return caught


def _assert_at_this_line(caught, match):
    found = [w for w in caught if match in str(w.message)]
    assert found, [str(w.message) for w in caught]
    for w in found:
        assert w.filename == __file__, (w.filename, w.lineno)
        assert "\n" not in str(w.message)


@pytest.mark.parametrize(
    "fit, match",
    [
        (
            lambda: HistGradientBoostingRegressor(split_type="era", max_iter=2).fit(
                X, Y
            ),
            "given without eras",
        ),
        (
            lambda: HistGradientBoostingRegressor(split_type="era", max_iter=2).fit(
                X, Y, eras=np.arange(120)
            ),
            "every era has fewer than 2 rows",
        ),
        (
            lambda: HistGradientBoostingRegressor(
                split_type="era",
                max_iter=2,
                early_stopping=True,
                validation_fraction=0.75,
            ).fit(X, Y, eras=ERAS),
            "the trees are trained on a single era",
        ),
        (
            lambda: InvariantForestRegressor(
                split_type="era", n_estimators=2, max_depth=2
            ).fit(X, Y, eras=np.zeros(120)),
            "given without eras",
        ),
        (
            lambda: HistGradientBoostingRegressor(max_iter=2).fit(X, np.full(120, 3.0)),
            "y holds one value (3) in every row",
        ),
        (
            lambda: HistGradientBoostingClassifier(max_iter=2).fit(
                X, np.full(120, "up")
            ),
            "y holds a single class ('up') in every row",
        ),
    ],
)
def test_warnings_point_at_the_users_call(fit, match):
    _assert_at_this_line(_caught(fit), match)


def test_warnings_point_at_the_users_call_through_cross_validate():
    est = HistGradientBoostingRegressor(split_type="era", max_iter=2)
    caught = _caught(lambda: cross_validate(est, X, Y, cv=2))
    _assert_at_this_line(caught, "given without eras")


def test_a_varying_target_gives_no_constant_warning():
    caught = _caught(lambda: HistGradientBoostingRegressor(max_iter=2).fit(X, Y))
    assert not [w for w in caught if "y holds" in str(w.message)]
    y = np.r_[np.zeros(119), 1.0]  # one row differs: not constant
    caught = _caught(lambda: HistGradientBoostingRegressor(max_iter=2).fit(X, y))
    assert not [w for w in caught if "y holds" in str(w.message)]


@pytest.mark.parametrize(
    "est", [HistGradientBoostingRegressor(max_iter=2), InvariantForestRegressor()]
)
def test_a_column_name_as_eras_is_refused(est):
    df = pd.DataFrame(X, columns=["a", "b", "c"]).assign(year=ERAS)
    with pytest.raises(ValueError) as info:
        est.fit(df[["a", "b", "c"]], Y, eras="year")
    assert str(info.value) == (
        "eras='year' is a string, not one era label per row: a column name is "
        "not accepted; pass the column's values, e.g. eras=df['year']."
    )
