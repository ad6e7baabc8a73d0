"""Early stopping on whole validation eras, class weights, warm starts and
``keep_best_iteration`` in the Dask fit: the same validation eras, scores,
iterations and trees as the single-machine fit on the same rows.
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


def assert_same_fit(dask_est, local_est, scale):
    """Same iterations, trees and early-stopping scores."""
    assert_same_trees(dask_est, local_est, scale)
    assert dask_est.to_local().do_early_stopping_ == local_est.do_early_stopping_
    for name in ("train_score_", "validation_score_"):
        ours, ref = getattr(dask_est, name), getattr(local_est, name)
        assert ours.shape == ref.shape, name
        np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=0, err_msg=name)


# a fast learning rate on a noisy target: the validation loss stops
# improving after a few iterations, well before max_iter
STOPPING = dict(
    early_stopping=True,
    learning_rate=0.6,
    max_iter=40,
    n_iter_no_change=2,
    max_leaf_nodes=7,
    min_samples_leaf=10,
    random_state=0,
)


# the README's pytest: weights and a fraction, a row draw, whole groups
@pytest.mark.parametrize(
    "params, weighted",
    slow_but(
        [
            (dict(split_type="original"), False),
            (dict(split_type="era", validation_fraction=0.3), True),
            (dict(split_type="directional", subsample=0.7, tol=1e-3), True),
            (dict(split_type="original", validation_fraction=600), False),
            (dict(split_type="era", validation_fraction=None, tol=0.01), False),
            # whole groups held out, as on one machine
            (dict(split_type="era", era_groups=5, validation_fraction=0.3), True),
        ],
        1,
        2,
        5,
    ),
    ids=str,
)
def test_regressor_stops_as_the_single_machine(client, params, weighted):
    X, y, eras, w = era_data()
    w = w if weighted else None
    common = {**STOPPING, **params}
    dX, dy, dw, de = chunked(X, y, w, eras)
    est = DaskHistGradientBoostingRegressor(client=client, **common)
    est.fit(dX, dy, dw, eras=de)
    ref = HistGradientBoostingRegressor(**common).fit(X, y, w, eras=eras)
    # the case tests a stop: the single machine stopped early
    assert ref.n_iter_ < common["max_iter"]
    assert_same_fit(est, ref, np.std(y))
    np.testing.assert_allclose(
        est.predict(dX).compute(), ref.predict(X), rtol=0, atol=1e-9 * np.std(y)
    )


def _classes(y, n_classes):
    """Unbalanced classes (about 3:1, or 3:4:2), for class weights to
    change the fit."""
    cuts = [0.8] if n_classes == 2 else [-0.5, 1.0]
    return np.array(["low", "mid", "high"])[:n_classes][np.digitize(y, cuts)]


@pytest.mark.parametrize(
    "n_classes, class_weight",
    slow_but(
        [(2, None), (2, "balanced"), (3, "balanced"), (3, {0: 2.0, 2: 0.5})], 1, 3
    ),
    ids=str,
)
def test_classifier_stops_as_the_single_machine(client, n_classes, class_weight):
    X, y, eras, w = era_data(seed=1)
    yc = _classes(y, n_classes)
    common = dict(
        STOPPING,
        learning_rate=1.0,
        max_leaf_nodes=8,
        min_samples_leaf=60,
        class_weight=class_weight,
        split_type="era",
    )
    dX, dy, dw, de = chunked(X, yc, w, eras)
    est = DaskHistGradientBoostingClassifier(client=client, **common)
    est.fit(dX, dy, dw, eras=de)
    ref = HistGradientBoostingClassifier(**common).fit(X, yc, w, eras=eras)
    assert ref.n_iter_ < common["max_iter"]
    assert_same_fit(est, ref, 1.0)
    np.testing.assert_allclose(
        est.predict_proba(dX).compute(), ref.predict_proba(X), rtol=0, atol=1e-9
    )


def test_class_weight_without_early_stopping(client):
    X, y, eras, _ = era_data(seed=2)
    yc = _classes(y, 2)
    common = dict(
        max_iter=3, early_stopping=False, class_weight="balanced", random_state=0
    )
    dX, dy, de = chunked(X, yc, eras)
    est = DaskHistGradientBoostingClassifier(client=client, **common)
    est.fit(dX, dy, eras=de)
    ref = HistGradientBoostingClassifier(**common).fit(X, yc, eras=eras)
    unweighted = HistGradientBoostingClassifier(**{**common, "class_weight": None})
    unweighted.fit(X, yc, eras=eras)
    # the weights change the single machine's fit, and the Dask fit follows
    assert not np.allclose(ref.predict_proba(X), unweighted.predict_proba(X))
    assert_same_fit(est, ref, 1.0)


@pytest.mark.parametrize("early_stopping", slow_but([False, True], 1))
def test_warm_start_continues_as_the_single_machine(client, early_stopping):
    X, y, eras, w = era_data(seed=3)
    common = dict(
        STOPPING,
        early_stopping=early_stopping,
        n_iter_no_change=20,
        max_iter=2,
        warm_start=True,
        split_type="era",
        colsample_bytree=0.7,
    )
    dX, dy, dw, de = chunked(X, y, w, eras)
    est = DaskHistGradientBoostingRegressor(client=client, **common)
    ref = HistGradientBoostingRegressor(**common)
    est.fit(dX, dy, dw, eras=de)
    ref.fit(X, y, w, eras=eras)
    est.set_params(max_iter=4).fit(dX, dy, dw, eras=de)
    ref.set_params(max_iter=4).fit(X, y, w, eras=eras)
    assert est.n_iter_ == 4
    assert_same_fit(est, ref, np.std(y))
    with pytest.raises(ValueError, match="the eras differ"):
        est.fit(dX, dy, dw, eras=chunked(eras[::-1])[0])
    with pytest.raises(ValueError, match="max_iter=3 must be larger than or equal"):
        est.set_params(max_iter=3).fit(dX, dy, dw, eras=de)


def test_keep_best_iteration_as_the_single_machine(client):
    X, y, eras, _ = era_data(seed=4)
    common = dict(STOPPING, n_iter_no_change=4, keep_best_iteration=True)
    dX, dy, de = chunked(X, y, eras)
    est = DaskHistGradientBoostingRegressor(client=client, **common)
    est.fit(dX, dy, eras=de)
    ref = HistGradientBoostingRegressor(**common).fit(X, y, eras=eras)
    # the case keeps fewer iterations than it fitted
    fitted = HistGradientBoostingRegressor(**{**common, "keep_best_iteration": False})
    assert ref.best_iteration_ < fitted.fit(X, y, eras=eras).n_iter_
    assert est.best_iteration_ == ref.best_iteration_
    assert_same_fit(est, ref, np.std(y))


def test_early_stopping_auto_on_above_10000_rows(client):
    X, y, eras, _ = era_data(n=10_001, p=3)
    common = dict(max_iter=3, max_leaf_nodes=7, random_state=0)
    dX, dy, de = chunked(X, y, eras, rows=4000)
    est = DaskHistGradientBoostingRegressor(client=client, **common)
    est.fit(dX, dy, eras=de)
    ref = HistGradientBoostingRegressor(**common).fit(X, y, eras=eras)
    assert est.do_early_stopping_ and ref.do_early_stopping_
    assert_same_fit(est, ref, np.std(y))
