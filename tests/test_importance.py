"""Feature importances, split counts and per-era importances."""

import numpy as np
import pandas as pd
import pytest
from sklearn.feature_selection import SelectFromModel
from sklearn.utils.validation import NotFittedError

from eraboost import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from eraboost.inspection import (
    era_importances,
    feature_importances,
    split_counts,
    split_feature_shares,
)
from tests.engine.reference import newton


def _planted(n=4000, seed=0):
    """Feature 3 carries most of the signal, feature 1 a little, the rest none."""
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, 6))
    y = 3 * X[:, 3] + 0.5 * X[:, 1] + 0.3 * rng.normal(size=n)
    return X, y


@pytest.mark.parametrize("kind", ["regression", "binary", "multiclass"])
def test_importances_sum_to_one_and_rank_the_planted_feature_first(kind):
    X, y = _planted()
    if kind == "regression":
        est = HistGradientBoostingRegressor(max_iter=30, random_state=0)
    else:
        est = HistGradientBoostingClassifier(max_iter=30, random_state=0)
        y = y > 0 if kind == "binary" else np.digitize(y, [-2, 2])
    est.fit(X, y)
    imp = est.feature_importances_
    assert imp.shape == (6,)
    assert imp.sum() == pytest.approx(1.0)
    assert (imp >= 0).all()
    assert np.argmax(imp) == 3
    assert imp[1] == np.sort(imp)[-2]
    # SelectFromModel (mean threshold) keeps the informative feature
    selector = SelectFromModel(est, prefit=True)
    assert selector.get_support()[3]
    assert selector.transform(X).shape[1] == selector.get_support().sum()


def test_importances_are_normalised_pooled_node_gains():
    X, y = _planted(2000)
    est = HistGradientBoostingRegressor(max_iter=5).fit(X, y)
    totals = np.zeros(6)
    for (tree,) in est._predictors:
        for node in tree.nodes:
            if not node["is_leaf"]:
                totals[node["feature"]] += max(node["gain"], 0.0)
                # the stored gain is the pooled gain of the node's rows
                assert node["gain"] > 0
    np.testing.assert_allclose(est.feature_importances_, totals / totals.sum())
    counts = np.zeros(6, dtype=int)
    for (tree,) in est._predictors:
        split = tree.nodes[tree.nodes["is_leaf"] == 0]
        counts += np.bincount(split["feature"], minlength=6)
    np.testing.assert_array_equal(split_counts(est), counts)
    np.testing.assert_allclose(split_feature_shares(est), counts / counts.sum())


def test_no_split_gives_zero_importances():
    X = np.random.RandomState(0).normal(size=(200, 3))
    with pytest.warns(UserWarning, match="one value"):
        est = HistGradientBoostingRegressor(max_iter=3).fit(X, np.ones(200))
    np.testing.assert_array_equal(est.feature_importances_, np.zeros(3))
    np.testing.assert_array_equal(split_counts(est), np.zeros(3))


def test_unfitted_has_no_importances():
    est = HistGradientBoostingRegressor()
    assert not hasattr(est, "feature_importances_")
    with pytest.raises(NotFittedError):
        feature_importances(est)


def test_importances_follow_user_columns_with_categorical_features():
    # the engine moves categorical columns first; importances must not
    rng = np.random.RandomState(0)
    n = 3000
    X = pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "b": rng.normal(size=n),
            "c": pd.Categorical(rng.choice(["x", "y", "z"], size=n)),
        }
    )
    y = 3.0 * (X["c"] == "y") + 0.2 * X["a"] + 0.1 * rng.normal(size=n)
    est = HistGradientBoostingRegressor(max_iter=20).fit(X, y)
    assert est.is_categorical_.tolist() == [False, False, True]
    assert np.argmax(est.feature_importances_) == 2
    assert np.argmax(split_counts(est)[:2]) == 0
    assert est.feature_importances_[1] < est.feature_importances_[0]
    imp = era_importances(est, X, y, np.repeat([0, 1], n // 2))
    assert np.argmax(imp.sum(0)) == 2


def _leaf_rows(nodes, X):
    """Rows reaching each node, by walking the tree in Python."""
    rows = {0: np.arange(X.shape[0])}
    for i, node in enumerate(nodes):
        if node["is_leaf"]:
            continue
        x = X[rows[i], node["feature"]]
        go_left = np.where(
            np.isnan(x), bool(node["missing_left"]), x <= node["threshold"]
        )
        rows[int(node["left"])] = rows[i][go_left]
        rows[int(node["right"])] = rows[i][~go_left]
    return rows


def _reference_era_importances(est, X, y, eras, grad_hess):
    """Each era's loss improvement by each split, recomputed row by row."""
    labels = np.unique(eras)
    out = np.zeros((labels.size, X.shape[1]))
    raw = np.full(X.shape[0], est._baseline_prediction.item())
    lam = est.l2_regularization
    for (tree,) in est._predictors:
        g, h = grad_hess(y, raw)
        nodes = tree.nodes
        rows = _leaf_rows(nodes, X)
        for i, node in enumerate(nodes):
            if node["is_leaf"]:
                raw[rows[i]] += node["value"]
                continue
            here = rows[i]
            v_node = newton(g[here].sum(), h[here].sum(), lam)
            for child in (rows[int(node["left"])], rows[int(node["right"])]):
                step = newton(g[child].sum(), h[child].sum(), lam) - v_node
                # second-order loss change of each row moved to the child's value
                change = 2 * g[child] * step + h[child] * step**2
                for e, label in enumerate(labels):
                    out[e, node["feature"]] -= change[eras[child] == label].sum()
    return out


def test_era_importances_match_a_direct_recomputation():
    rng = np.random.RandomState(1)
    n = 1200
    X = rng.normal(size=(n, 4))
    X[rng.rand(n) < 0.15, 2] = np.nan
    eras = rng.choice(["e1", "e2", "e3"], size=n)
    y = X[:, 0] * (eras == "e1") + np.nan_to_num(X[:, 2]) + 0.1 * rng.normal(size=n)
    est = HistGradientBoostingRegressor(
        max_iter=4, l2_regularization=0.5, split_type="era", early_stopping=False
    ).fit(X, y, eras=eras)
    labels, got = era_importances(est, X, y, eras, return_eras=True)
    assert labels.tolist() == ["e1", "e2", "e3"]
    expected = _reference_era_importances(
        est, X, y, eras, lambda y, raw: (raw - y, np.ones_like(y))
    )
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)

    # binary log loss: g = p - y, h = p (1 - p); with weights, both scaled
    yb = (y > 0).astype(float)
    w = rng.uniform(0.5, 2.0, size=n)
    clf = HistGradientBoostingClassifier(max_iter=3, early_stopping=False).fit(
        X, yb, sample_weight=w
    )

    def grad_hess(y, raw):
        p = 1 / (1 + np.exp(-raw))
        return w * (p - y), w * p * (1 - p)

    np.testing.assert_allclose(
        era_importances(clf, X, yb, eras, sample_weight=w),
        _reference_era_importances(clf, X, yb, eras, grad_hess),
        rtol=1e-9,
        atol=1e-9,
    )


def test_era_importances_locate_an_era_specific_feature():
    rng = np.random.RandomState(0)
    n = 6000
    X = rng.normal(size=(n, 3))
    eras = np.repeat(np.arange(6), n // 6)
    # feature 0 matters in eras 0-2 only, feature 1 everywhere
    y = 2 * X[:, 0] * (eras < 3) + X[:, 1] + 0.1 * rng.normal(size=n)
    est = HistGradientBoostingRegressor(max_iter=30).fit(X, y)
    imp = era_importances(est, X, y, eras)
    assert imp.shape == (6, 3)
    # the splits on feature 0 help eras 0-2 and harm the others
    assert imp[:3, 0].min() > 0 > imp[3:, 0].max()
    # feature 1 is about as important in every era
    assert imp[:, 1].max() < 1.5 * imp[:, 1].min()
    # the noise feature's splits (in-sample) weigh little
    assert imp[:, 2].sum() < 0.1 * imp[:, 1].sum()


def test_era_importances_add_up_to_the_pooled_gains_of_the_fit():
    # on the training rows, with lam = 0, the eras' improvements sum to the
    # gain the splitter stored for each split (float32 gradients in the fit)
    rng = np.random.RandomState(3)
    n = 4000
    X = rng.normal(size=(n, 4))
    eras = rng.randint(0, 7, size=n)
    y = X[:, 0] + X[:, 1] * (eras % 2) + 0.2 * rng.normal(size=n)
    for split_type in ("original", "era", "directional"):
        est = HistGradientBoostingRegressor(
            max_iter=10, split_type=split_type, early_stopping=False
        ).fit(X, y, eras=eras)
        gains = np.zeros(4)
        for (tree,) in est._predictors:
            split = tree.nodes[tree.nodes["is_leaf"] == 0]
            np.add.at(gains, split["feature"], split["gain"])
        imp = era_importances(est, X, y, eras)
        np.testing.assert_allclose(imp.sum(axis=0), gains, rtol=1e-4)


def test_era_importances_multiclass_and_bad_input():
    X, y = _planted(1500)
    yc = np.digitize(y, [-2, 2])
    eras = np.arange(1500) % 5
    clf = HistGradientBoostingClassifier(max_iter=4).fit(X, yc)
    imp = era_importances(clf, X, yc, eras)
    assert imp.shape == (5, 6)
    assert (imp.sum(0).argmax()) == 3
    with pytest.raises(ValueError, match="eras has 10 labels"):
        era_importances(clf, X, yc, eras[:10])
    with pytest.raises(ValueError, match="sample_weight must have shape"):
        era_importances(clf, X, yc, eras, sample_weight=np.ones(3))
    with pytest.raises(ValueError, match="y has 10 rows"):
        era_importances(clf, X, yc[:10], eras)
