"""Monotonic and interaction constraints and era groups on the Dask fit:
the single-machine fit's trees on the same rows.

On clusters of 2 (and, in the slow suite, 3) worker processes, with
chunks that cut through eras, for ``original``, ``era`` and
``directional``, the regressor and the classifier (binary; multiclass
without monotonic constraints, which it refuses): identical
splits and leaf values within 1e-9 of the target's scale (the checks of
test_parity.py). Each option is first shown to change the single
machine's trees on these data, so that the comparison exercises it.
"""

import numpy as np
import pytest

from eraboost import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from eraboost.dask import (
    DaskHistGradientBoostingClassifier,
    DaskHistGradientBoostingRegressor,
)

from .conftest import chunked, era_data, slow_but
from .helpers import SPLIT_FIELDS, assert_same_trees

P = 6
# feature 0's effect is positive pooled (it flips sign in a third of the
# eras), feature 1's positive: the bounds of feature 0's splits bind below
# them, and decreasing on feature 1 rules out its splits
MONOTONIC = dict(monotonic_cst=[1, -1, 0, 0, 0, 0])
# feature 0 alone, features 1 and 2 together; 3 .. 5 form the last group
INTERACTION = dict(interaction_cst=[[0], [1, 2]])
# 20 eras in 4 groups of 5
GROUPS = dict(era_groups=4)
# a mapping of each era to a group of its own labels
MAPPED = dict(era_groups={e: f"g{e % 3}" for e in range(20)})

OPTIONS = {
    "monotonic": MONOTONIC,
    "interaction": INTERACTION,
    "groups": GROUPS,
    "mapped": MAPPED,
}
SPLIT_TYPES = ["original", "era", "directional"]


def _params(split_type, option, **growth):
    params = dict(split_type=split_type, **growth, **OPTIONS[option])
    if split_type == "original" and "era_groups" in params:
        # original uses the eras only through the era options
        params["irf_penalty"] = 1.0
    return params


def _same_trees(a, b):
    """Whether two fitted estimators hold the same splits."""
    for stage_a, stage_b in zip(a._predictors, b._predictors):
        for tree_a, tree_b in zip(stage_a, stage_b):
            x, y = tree_a.nodes, tree_b.nodes
            if x.shape != y.shape or any(
                not np.array_equal(x[f], y[f]) for f in SPLIT_FIELDS
            ):
                return False
    return len(a._predictors) == len(b._predictors)


def _check(client, dask_cls, local_cls, X, y, w, eras, params, scale):
    common = dict(
        max_iter=2,
        random_state=0,
        early_stopping=False,
        **params,
    )
    dX, dy, dw, de = chunked(X, y, w, eras)
    est = dask_cls(client=client, **common).fit(dX, dy, dw, eras=de)
    ref = local_cls(**common).fit(X, y, w, eras=eras)
    assert_same_trees(est, ref, scale)
    option = {k: v for k, v in params.items() if k in OPTIONS_KEYS}
    plain = {k: v for k, v in common.items() if k not in option}
    # the option changes the single machine's trees on these data
    assert not _same_trees(ref, local_cls(**plain).fit(X, y, w, eras=eras))
    return est, ref


OPTIONS_KEYS = ("monotonic_cst", "interaction_cst", "era_groups")


@pytest.mark.parametrize("split_type", slow_but(SPLIT_TYPES, 1))
@pytest.mark.parametrize("option", list(OPTIONS), ids=str)
def test_regressor_same_trees(client, option, split_type):
    X, y, eras, w = era_data(n=2000, p=P)
    params = _params(split_type, option, max_leaf_nodes=15, min_samples_leaf=10)
    est, ref = _check(
        client,
        DaskHistGradientBoostingRegressor,
        HistGradientBoostingRegressor,
        X,
        y,
        w if split_type != "era" else None,
        eras,
        params,
        np.std(y),
    )
    np.testing.assert_array_equal(est.eras_, ref.eras_)
    assert est.n_eras_ == ref.n_eras_
    # the fit signature (warm starts) is the user's eras', as on one machine
    assert est.to_local()._fit_signature == ref._fit_signature


@pytest.mark.parametrize("split_type", slow_but(SPLIT_TYPES, 2))
@pytest.mark.parametrize("option", list(OPTIONS), ids=str)
def test_binary_classifier_same_trees(client, option, split_type):
    X, y, eras, w = era_data(n=2000, p=P, seed=1)
    yc = np.where(y > np.median(y), "up", "down")
    # trees of a few leaves keep the eras' rows many (test_parity.py)
    params = _params(split_type, option, max_leaf_nodes=8, min_samples_leaf=60)
    est, ref = _check(
        client,
        DaskHistGradientBoostingClassifier,
        HistGradientBoostingClassifier,
        X,
        yc,
        w if split_type == "era" else None,
        eras,
        params,
        1.0,
    )
    dX = chunked(X)[0]
    np.testing.assert_allclose(
        est.predict_proba(dX).compute(), ref.predict_proba(X), rtol=0, atol=1e-9
    )


@pytest.mark.parametrize("split_type", slow_but(SPLIT_TYPES, 1))
def test_multiclass_same_trees(client, split_type):
    """Interaction constraints and era groups on three classes (monotonic
    constraints are refused there, as on one machine)."""
    X, y, eras, w = era_data(n=2000, p=P, seed=1)
    labels = np.array(["low", "mid", "high"])
    yc = labels[np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))]
    params = dict(
        split_type=split_type,
        max_leaf_nodes=8,
        min_samples_leaf=60,
        **INTERACTION,
        **GROUPS,
    )
    if split_type == "original":
        params["irf_penalty"] = 1.0
    _check(
        client,
        DaskHistGradientBoostingClassifier,
        HistGradientBoostingClassifier,
        X,
        yc,
        w,
        eras,
        params,
        1.0,
    )


@pytest.mark.parametrize("split_type", slow_but(SPLIT_TYPES, 1))
def test_all_options_together(client, split_type):
    """The three options at once, with column and row draws."""
    X, y, eras, w = era_data(n=2000, p=P, seed=2)
    params = dict(
        split_type=split_type,
        max_leaf_nodes=15,
        min_samples_leaf=10,
        colsample_bytree=0.8,
        max_features=0.7,
        era_subsample=0.75,
        **MONOTONIC,
        **INTERACTION,
        **GROUPS,
    )
    _check(
        client,
        DaskHistGradientBoostingRegressor,
        HistGradientBoostingRegressor,
        X,
        y,
        w,
        eras,
        params,
        np.std(y),
    )


def test_bad_constraints_refused(client2):
    X, y, eras, _ = era_data(n=500, p=P)
    dX, dy, de = chunked(X, y, eras, rows=200)
    for option, match in [
        (dict(era_groups=21), "era_groups=21 asks for more groups"),
        (dict(monotonic_cst=[1, 0]), "monotonic_cst"),
        (dict(interaction_cst=[[0, 7]]), "Interaction constraints"),
    ]:
        est = DaskHistGradientBoostingRegressor(client=client2, max_iter=1, **option)
        with pytest.raises(ValueError, match=match):
            est.fit(dX, dy, eras=de)
    labels = np.array(["a", "b", "c"])[np.digitize(y, np.quantile(y, [0.3, 0.6]))]
    est = DaskHistGradientBoostingClassifier(
        client=client2, max_iter=1, monotonic_cst=[1] + [0] * (P - 1)
    )
    with pytest.raises(ValueError, match="not supported for multiclass"):
        est.fit(dX, chunked(labels, rows=200)[0], eras=de)
