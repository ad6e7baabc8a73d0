"""Split-frequency shares and importances (``eraboost.inspection``)."""

import numpy as np

from eraboost import HistGradientBoostingRegressor, InvariantForestRegressor
from eraboost.inspection import (
    feature_importances,
    split_counts,
    split_feature_shares,
    split_frequency_importances,
)


def test_shares_count_splits_and_row_shares():
    rng = np.random.RandomState(0)
    X = rng.randint(0, 4, size=(400, 3)).astype(float)
    y = 3 * X[:, 0] + X[:, 2] + rng.normal(scale=0.1, size=400)
    est = HistGradientBoostingRegressor(
        max_iter=1, max_depth=2, max_leaf_nodes=None, early_stopping=False
    ).fit(X, y)
    nodes = est._predictors[0][0].nodes
    split = nodes[nodes["is_leaf"] == 0]
    expected = np.bincount(split["feature"], minlength=3) / len(split)
    np.testing.assert_allclose(split_feature_shares(est), expected)
    weights = split["count"] / nodes[0]["count"]
    expected_w = np.bincount(split["feature"], weights=weights, minlength=3)
    np.testing.assert_allclose(
        split_feature_shares(est, weighted=True), expected_w / expected_w.sum()
    )
    assert nodes[0]["feature"] == 0


def test_forest_importances_are_per_tree_gain_shares_and_split_frequencies():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(300, 3))
    y = 2 * X[:, 0] + X[:, 1] + rng.normal(scale=0.1, size=300)
    est = InvariantForestRegressor(n_estimators=3, max_depth=3, random_state=0)
    est.fit(X, y)
    shares = np.zeros(3)
    frequency = np.zeros(3)
    n_splits = np.zeros(3, dtype=np.int64)
    for tree in est.estimators_:
        nodes = tree.nodes
        split = nodes[nodes["is_leaf"] == 0]
        gain = np.bincount(split["feature"], weights=split["gain"], minlength=3)
        shares += gain / gain.sum()
        frequency += np.bincount(
            split["feature"], weights=split["count"] / nodes[0]["count"], minlength=3
        )
        n_splits += np.bincount(split["feature"], minlength=3)
    np.testing.assert_allclose(est.feature_importances_, shares / shares.sum())
    np.testing.assert_allclose(feature_importances(est, per_tree=True), shares / 3)
    np.testing.assert_allclose(est.split_frequency_importances_, frequency / 3)
    np.testing.assert_allclose(split_frequency_importances(est), frequency / 3)
    np.testing.assert_allclose(
        split_feature_shares(est, weighted=True), frequency / frequency.sum()
    )
    np.testing.assert_array_equal(split_counts(est), n_splits)
