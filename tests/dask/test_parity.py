"""The Dask fit grows the single-machine fit's trees on the same rows.

On clusters of 2 and 3 worker processes, with chunks that cut through eras:
identical splits (feature, threshold, missing side, shape) and leaf values
and predictions within 1e-9 of the target's scale, against
``eraboost.HistGradientBoostingRegressor`` / ``Classifier`` fitted on the
same rows.
"""

import numpy as np
import pytest

from eraboost import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from eraboost.dask import (
    DaskHistGradientBoostingClassifier,
    DaskHistGradientBoostingRegressor,
)

from .conftest import chunked, era_data, slow_but
from .helpers import assert_same_trees

REGRESSOR_CASES = [
    (dict(split_type="original"), False),
    (dict(split_type="original"), True),
    (dict(split_type="era"), False),
    (dict(split_type="era"), True),
    (dict(split_type="era", boltzmann_alpha=0.05), True),
    (dict(split_type="era", boltzmann_alpha=-0.05), False),
    (dict(split_type="era", boltzmann_alpha=np.inf), True),
    (dict(split_type="era", boltzmann_alpha=-np.inf), False),
    (dict(split_type="directional"), False),
    (dict(split_type="directional", l2_regularization=1.0), True),
    (dict(split_type="original", min_samples_leaf_per_era=3), True),
    (dict(split_type="era", min_samples_leaf_per_era=2), False),
    (dict(split_type="era", boltzmann_alpha=-np.inf, min_samples_leaf_per_era=3), True),
    (dict(split_type="original", colsample_bytree=0.5, max_features=0.5), True),
    (dict(split_type="directional", subsample=0.7, max_features=0.6), False),
    (dict(split_type="era", era_subsample=0.5, colsample_bytree=0.7), True),
    (dict(split_type="original", era_subsample=0.6, subsample=0.8), False),
    (dict(split_type="original", irf_penalty=1.0), True),
    (dict(split_type="era", irf_penalty=1.0), False),
    (dict(split_type="directional", irf_penalty=1.0), True),
    (dict(split_type="era", boltzmann_alpha=0.05, irf_penalty=0.5), False),
    (dict(split_type="era", pooled_weight=0.5), True),
    (dict(split_type="directional", pooled_weight=0.3, irf_penalty=0.5), False),
    (dict(split_type="original", min_agreement=0.6), True),
    (dict(split_type="era", min_agreement=0.7), False),
]


# the README's pytest: each split type, weights, the per-era minimum, a row
# draw and the invariance penalty
@pytest.mark.parametrize(
    "params, weighted", slow_but(REGRESSOR_CASES, 1, 4, 8, 12, 14, 19), ids=str
)
def test_regressor_same_trees(client, params, weighted):
    X, y, eras, w = era_data()
    w = w if weighted else None
    common = dict(
        max_iter=2,
        max_leaf_nodes=15,
        min_samples_leaf=10,
        random_state=0,
        early_stopping=False,
        **params,
    )
    dX, dy, dw, de = chunked(X, y, w, eras)
    est = DaskHistGradientBoostingRegressor(client=client, **common)
    est.fit(dX, dy, dw, eras=de)
    ref = HistGradientBoostingRegressor(**common).fit(X, y, w, eras=eras)
    scale = np.std(y)
    assert_same_trees(est, ref, scale)
    pred = est.predict(dX)
    assert pred.chunks[0] == dX.chunks[0]
    np.testing.assert_allclose(
        pred.compute(), ref.predict(X), rtol=0, atol=1e-9 * scale
    )


CLASSIFIER_CASES = [
    dict(split_type="original"),
    dict(split_type="era"),
    dict(split_type="directional"),
]


@pytest.mark.parametrize("n_classes", slow_but([2, 3], 0))
@pytest.mark.parametrize("params", CLASSIFIER_CASES, ids=str)
def test_classifier_same_trees(client, params, n_classes):
    X, y, eras, w = era_data(seed=1)
    cuts = np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1])
    labels = np.array(["low", "mid", "high"])[:n_classes]
    yc = labels[np.digitize(y, cuts)]
    # nodes of a few rows per era make per-era gains that are 0 up to
    # rounding, where a sum in another order can turn a tie
    # (docs/distributed.md): trees of a few leaves keep the eras' rows many
    common = dict(
        max_iter=2,
        random_state=0,
        early_stopping=False,
        max_leaf_nodes=8,
        min_samples_leaf=60,
        **params,
    )
    dX, dy, dw, de = chunked(X, yc, w, eras)
    est = DaskHistGradientBoostingClassifier(client=client, **common)
    est.fit(dX, dy, dw, eras=de)
    ref = HistGradientBoostingClassifier(**common).fit(X, yc, w, eras=eras)
    assert_same_trees(est, ref, 1.0)
    np.testing.assert_array_equal(est.classes_, ref.classes_)
    proba = est.predict_proba(dX).compute()
    np.testing.assert_allclose(proba, ref.predict_proba(X), rtol=0, atol=1e-9)
    np.testing.assert_array_equal(est.predict(dX).compute(), ref.predict(X))
