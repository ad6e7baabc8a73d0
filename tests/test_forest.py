"""Invariant forests: CART parity, the IRF penalties against NumPy, OOB,
per-era bootstrap, determinism and bad input."""

import warnings

import numpy as np
import pytest
from sklearn.metrics import r2_score, roc_auc_score
from sklearn.tree import DecisionTreeRegressor
from threadpoolctl import threadpool_limits

from eraboost import InvariantForestClassifier, InvariantForestRegressor
from eraboost._engine._criteria import rate_spread_penalty
from eraboost.datasets import make_trt_example
from eraboost.forest import era_bootstrap, era_groups


def int_data(seed, n=300, p=4, levels=12):
    rng = np.random.RandomState(seed)
    X = rng.randint(0, levels, size=(n, p)).astype(np.float64)
    y = X[:, 0] - 0.5 * X[:, 1] + rng.normal(scale=2.0, size=n)
    return X, y


# -- CART parity --------------------------------------------------------------
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("depth,min_leaf", [(3, 1), (6, 1), (8, 5)])
def test_single_tree_is_a_decision_tree(seed, depth, min_leaf):
    """No eras, no penalty, no bootstrap: one tree has the partition of
    scikit-learn's DecisionTreeRegressor on integer data."""
    X, y = int_data(seed)
    ours = InvariantForestRegressor(
        n_estimators=1,
        bootstrap=False,
        max_depth=depth,
        min_samples_leaf=min_leaf,
        random_state=0,
    ).fit(X, y)
    ref = DecisionTreeRegressor(
        max_depth=depth, min_samples_leaf=min_leaf, random_state=0
    ).fit(X, y)
    leaf_ref = ref.apply(X)
    pred = ours.predict(X)
    # same partition: one of our values per reference leaf, one reference
    # leaf per value, and the leaf values are the leaves' mean targets
    for leaf in np.unique(leaf_ref):
        vals = pred[leaf_ref == leaf]
        assert np.ptp(vals) == 0.0
    assert np.unique(pred).size == np.unique(leaf_ref).size
    np.testing.assert_allclose(pred, ref.predict(X), rtol=1e-6, atol=1e-6)
    assert ours.estimators_[0].get_max_depth() == ref.get_depth()


# -- penalties against NumPy ---------------------------------------------------
def gini(y, w):
    if w.sum() == 0:
        return 0.0
    p = np.dot(w, y) / w.sum()
    return 2 * p * (1 - p)


def classification_objective(left, y, eras, lam):
    """Weighted Gini decrease minus lam * (max I_e / min I_e - 1), eq. 15-19,
    straight from the counts."""
    w = np.ones_like(y)
    n = len(y)
    dec = gini(y, w) - (
        left.sum() / n * gini(y[left], w[left])
        + (~left).sum() / n * gini(y[~left], w[~left])
    )
    ratios = []
    for e in np.unique(eras):
        m = eras == e
        n1, n0 = (y[m] == 1).sum(), (y[m] == 0).sum()
        n1L, n0L = (y[m & left] == 1).sum(), (y[m & left] == 0).sum()
        ratios.append(((n1L + 0.5) / (n1 + 1)) / ((n0L + 0.5) / (n0 + 1)))
    pen = max(ratios) / min(ratios) - 1 if len(ratios) > 1 else 0.0
    return dec - lam * pen


def regression_objective(left, y, eras, lam):
    """Decrease of the mean squared error minus lam * Var_e CR_e (eq. 20-22
    with docs/criteria.md's eras: those with rows on the left)."""
    n = len(y)
    dec = y.var() - (
        left.sum() / n * y[left].var() + (~left).sum() / n * y[~left].var()
    )
    cr = [
        y[(eras == e) & left].mean() - y[eras == e].mean()
        for e in np.unique(eras)
        if ((eras == e) & left).any()
    ]
    return dec - lam * (np.var(cr) if len(cr) > 1 else 0.0)


def reference_stump(X, y, eras, lam, objective, min_leaf=1):
    best, best_val, second = None, -np.inf, -np.inf
    for f in range(X.shape[1]):
        values = np.unique(X[:, f])
        for t in values[:-1]:
            left = X[:, f] <= t
            if left.sum() < min_leaf or (~left).sum() < min_leaf:
                continue
            v = objective(left, y, eras, lam)
            if v > best_val:
                best, best_val, second = (f, t), v, best_val
            elif v > second:
                second = v
    return best, best_val, second


def stump_data(seed, classification):
    rng = np.random.RandomState(seed)
    sizes = [60, 150, 35]  # unequal eras
    eras = np.repeat(np.arange(3), sizes)
    n = eras.size
    X = rng.randint(0, 8, size=(n, 3)).astype(np.float64)
    # feature 1 works in era 0 only; feature 0 everywhere, more weakly
    latent = 0.6 * X[:, 0] + np.where(eras == 0, 1.5, 0.0) * X[:, 1]
    latent += rng.normal(scale=3.0, size=n)
    y = (latent > np.median(latent)).astype(np.float64) if classification else latent
    return X, y, eras


@pytest.mark.parametrize("classification", [True, False])
def test_stump_matches_numpy_reference(classification):
    """Unequal eras, penalties 0 to 20: the root split is the reference's.
    Draws whose best split is not unique (or absent) are not compared; at
    least 16 of the 24 are."""
    objective = classification_objective if classification else regression_objective
    cls = InvariantForestClassifier if classification else InvariantForestRegressor
    # the Gini decrease is a few hundredths here, the MSE decrease about 2
    lams = (0.0, 0.01, 0.05, 0.3) if classification else (0.0, 0.3, 2.0, 20.0)
    compared = 0
    for seed in range(6):
        if classification and seed >= 3:
            X, y, eras = era_zero_feature_data(seed)
        else:
            X, y, eras = stump_data(seed, classification)
        for lam in lams:
            best, val, second = reference_stump(X, y, eras, lam, objective)
            if val <= 0 or val - second < 1e-9 * max(abs(val), 1.0):
                continue
            f, t = best
            est = cls(
                n_estimators=1,
                bootstrap=False,
                max_depth=1,
                irf_penalty=lam,
                random_state=0,
            )
            est.fit(X, y.astype(int) if classification else y, eras=eras)
            root = est.estimators_[0].nodes[0]
            assert root["is_leaf"] == 0, (seed, lam)
            assert root["feature"] == f, (seed, lam)
            # our threshold is the midpoint between t and the next value
            values = np.unique(X[:, f])
            nxt = values[np.searchsorted(values, t) + 1]
            assert root["threshold"] == pytest.approx((t + nxt) / 2), (seed, lam)
            compared += 1
    assert compared >= 16


def era_zero_feature_data(seed):
    """Feature 1 predicts the class strongly in era 0 only, feature 0
    weakly in every era; each era has half positives."""
    rng = np.random.RandomState(seed)
    eras = np.repeat(np.arange(3), [150, 80, 80])
    X = rng.randint(0, 8, size=(eras.size, 3)).astype(np.float64)
    latent = 0.8 * X[:, 0] + np.where(eras == 0, 3.0, 0.0) * X[:, 1]
    latent += rng.normal(scale=3.0, size=eras.size)
    y = np.zeros(eras.size)
    for e in range(3):
        m = eras == e
        y[m] = latent[m] > np.median(latent[m])
    return X, y, eras


def test_penalty_changes_the_stump():
    """The classification penalty moves the root off the era-0-only feature."""
    X, y, eras = era_zero_feature_data(0)
    roots = {}
    for lam in (0.0, 0.05):
        ref = reference_stump(X, y, eras, lam, classification_objective)[0]
        est = InvariantForestClassifier(
            n_estimators=1, bootstrap=False, max_depth=1, irf_penalty=lam
        ).fit(X, y.astype(int), eras=eras)
        roots[lam] = est.estimators_[0].nodes[0]["feature"]
        assert roots[lam] == ref[0]
    assert roots[0.0] == 1 and roots[0.05] == 0


def test_rate_spread_penalty_formula():
    pos_left = np.array([3.0, 10.0, 0.0])
    n_left = np.array([5.0, 12.0, 0.0])
    pos = np.array([4.0, 20.0, 2.0])
    n = np.array([10.0, 40.0, 5.0])
    ratios = ((pos_left + 0.5) / (pos + 1)) / (
        (n_left - pos_left + 0.5) / (n - pos + 1)
    )
    assert rate_spread_penalty(pos_left, n_left, pos, n) == pytest.approx(
        ratios.max() / ratios.min() - 1
    )
    # eras absent from the node do not count; one era gives 0
    assert rate_spread_penalty([1.0, 0.0], [2.0, 0.0], [1.0, 0.0], [3.0, 0.0]) == 0.0


# -- bootstrap, OOB, importances ------------------------------------------------
def test_era_bootstrap_keeps_each_era_size():
    codes = np.repeat([2, 0, 1], [5, 50, 7]).astype(np.int32)
    rng = np.random.RandomState(0)
    groups = era_groups(codes, 3)
    for e in range(3):
        np.testing.assert_array_equal(groups[e], np.flatnonzero(codes == e))
    for _ in range(5):
        counts = era_bootstrap(groups, codes.size, rng)
        for e, size in ((0, 50), (1, 7), (2, 5)):
            assert counts[codes == e].sum() == size


@pytest.mark.parametrize("classification", [False, True])
def test_oob_score_matches_direct_computation(classification):
    X, y, eras = stump_data(3, classification)
    cls = InvariantForestClassifier if classification else InvariantForestRegressor
    y_fit = y.astype(int) if classification else y
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        est = cls(n_estimators=15, oob_score=True, max_depth=4, random_state=0).fit(
            X, y_fit, eras=eras
        )
    n = len(y)
    total, count = np.zeros(n), np.zeros(n)
    for tree, inbag in zip(est.estimators_, est.estimators_samples_):
        oob = np.ones(n, dtype=bool)
        oob[inbag] = False
        total[oob] += tree.predict(X)[oob]
        count[oob] += 1
    has = count > 0
    mean = total[has] / count[has]
    if classification:
        np.testing.assert_allclose(est.oob_decision_function_[has, 1], mean)
        assert est.oob_score_ == pytest.approx(np.mean((mean > 0.5) == y[has]))
    else:
        np.testing.assert_allclose(est.oob_prediction_[has], mean)
        assert est.oob_score_ == pytest.approx(r2_score(y[has], mean))


def test_split_frequency_importance():
    X, y, eras = stump_data(1, False)
    est = InvariantForestRegressor(n_estimators=4, max_depth=3, random_state=0).fit(
        X, y, eras=eras
    )
    expected = np.zeros(X.shape[1])
    for tree in est.estimators_:
        nodes = tree.nodes
        for node in nodes[nodes["is_leaf"] == 0]:
            expected[node["feature"]] += node["count"] / nodes[0]["count"] / 4
    np.testing.assert_allclose(est.split_frequency_importances_, expected)
    assert est.feature_importances_.sum() == pytest.approx(1.0)
    # the root alone contributes 1 per tree: depth-3 trees score at most 3
    assert 1.0 <= est.split_frequency_importances_.sum() <= 3.0


def test_max_features_counts():
    X, y = int_data(0, p=10)
    for mf, k in ((3, 3), ("sqrt", 3), ("log2", 3), (0.5, 5), (None, 10)):
        est = InvariantForestRegressor(max_features=mf)
        assert est._features_per_split(10) == k
        # the grower draws ceil(fraction * n) features
        fraction = 1.0 if k == 10 else (k - 0.5) / 10
        assert int(np.ceil(fraction * 10)) == k
    with pytest.raises(ValueError, match="max_features=11"):
        InvariantForestRegressor(max_features=11).fit(X, y)


# -- behaviour ------------------------------------------------------------------
def test_same_forest_whatever_the_thread_count():
    X, y, eras = stump_data(2, False)
    preds = [
        InvariantForestRegressor(
            n_estimators=5, n_jobs=nj, irf_penalty=1.0, split_type="era", random_state=0
        )
        .fit(X, y, eras=eras)
        .predict(X)
        for nj in (1, 2)
    ]
    np.testing.assert_array_equal(preds[0], preds[1])


def test_same_forest_whatever_the_blas_thread_count():
    """Leaf values do not depend on the BLAS threads (issue 16, item 11: a
    BLAS dot in the leaf offset gave 3e-17 differences)."""
    rng = np.random.RandomState(0)
    n = 40_000  # above the size at which BLAS splits a dot product
    X = rng.randint(0, 6, size=(n, 2)).astype(np.float64)
    y = X[:, 0] + rng.standard_normal(n) * (1 + 1e3 * (rng.rand(n) < 0.01))
    preds = []
    for n_blas in (1, 2):
        with threadpool_limits(limits=n_blas, user_api="blas"):
            est = InvariantForestRegressor(
                n_estimators=3, max_depth=3, random_state=0
            ).fit(X, y)
            preds.append(est.predict(X))
    np.testing.assert_array_equal(preds[0], preds[1])


@pytest.mark.parametrize("scale", [130, 400, 1000])
def test_huge_targets_are_scaled_exactly(scale):
    """|y| beyond float32 (issue 16, item 4): the forest of ``2**s * y`` is
    exactly ``2**s`` times the forest of ``y``, not NaN."""
    X, y, eras = stump_data(1, False)
    kw = dict(n_estimators=4, split_type="era", irf_penalty=1.0, random_state=0)
    small = InvariantForestRegressor(**kw).fit(X, y, eras=eras)
    big = InvariantForestRegressor(**kw).fit(X, np.ldexp(y, scale), eras=eras)
    np.testing.assert_array_equal(big.predict(X), np.ldexp(small.predict(X), scale))


@pytest.mark.parametrize("classification", [False, True])
def test_huge_sample_weights_change_nothing(classification):
    """``sample_weight`` above float32's range (issue 16, item 4): the same
    forest as with the weights divided by the same power of two."""
    X, y, eras = stump_data(2, classification)
    est = InvariantForestClassifier if classification else InvariantForestRegressor
    w = np.random.RandomState(0).randint(1, 4, size=len(y)).astype(np.float64)
    kw = dict(n_estimators=4, irf_penalty=0.5, random_state=0)
    a = est(**kw).fit(X, y, sample_weight=w, eras=eras)
    b = est(**kw).fit(X, y, sample_weight=np.ldexp(w, 140), eras=eras)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    if classification:
        np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_big_targets_and_weights_predict_like_a_random_forest():
    """y near 1e39 and weights near 1e40 (not powers of two): finite
    predictions, those of the unscaled problem to float32 precision."""
    X, y = int_data(3)
    kw = dict(n_estimators=3, bootstrap=False, max_depth=4, random_state=0)
    ref = InvariantForestRegressor(**kw).fit(X, y).predict(X)
    got = InvariantForestRegressor(**kw).fit(
        X, y * 1e39, sample_weight=np.full(len(y), 1e40)
    )
    np.testing.assert_allclose(got.predict(X) / 1e39, ref, rtol=1e-5, atol=1e-5)


def test_trt_settings_beat_the_plain_forest_on_the_trt_example():
    """Moneda's synthetic example: the worst-period criterion with a per-era
    minimum gives a better holdout AUC than the plain forest."""
    aucs = {"plain": [], "trt": []}
    for seed in range(3):
        X, y, eras, Xt, yt = make_trt_example(n_per_period=1000, random_state=seed)
        for name, kw in (
            ("plain", {}),
            (
                "trt",
                dict(
                    split_type="era",
                    boltzmann_alpha=-np.inf,
                    min_samples_leaf_per_era=10,
                ),
            ),
        ):
            est = InvariantForestClassifier(
                n_estimators=20, random_state=seed, **kw
            ).fit(X, y, eras=eras)
            aucs[name].append(roc_auc_score(yt, est.predict_proba(Xt)[:, 1]))
    assert np.mean(aucs["trt"]) > np.mean(aucs["plain"]) + 0.02


def test_classifier_labels_and_proba():
    X, y, eras = stump_data(4, True)
    labels = np.where(y == 1, "up", "down")
    est = InvariantForestClassifier(n_estimators=5, random_state=0).fit(
        X, labels, eras=eras
    )
    assert list(est.classes_) == ["down", "up"]
    proba = est.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert set(est.predict(X)) <= {"down", "up"}


def test_int8_input_and_nan():
    X, y = int_data(5)
    Xi = X.astype(np.int8)
    a = InvariantForestRegressor(n_estimators=3, random_state=0).fit(X, y)
    b = InvariantForestRegressor(n_estimators=3, random_state=0).fit(Xi, y)
    np.testing.assert_allclose(a.predict(X), b.predict(Xi))
    Xn = X.copy()
    Xn[::7, 0] = np.nan
    est = InvariantForestRegressor(n_estimators=3, random_state=0).fit(Xn, y)
    assert np.all(np.isfinite(est.predict(Xn)))


# -- bad input ------------------------------------------------------------------
def test_bad_input():
    X, y, eras = stump_data(0, True)
    with pytest.raises(ValueError, match="n_estimators"):
        InvariantForestRegressor(n_estimators=0).fit(X, y)
    with pytest.raises(ValueError, match="irf_penalty"):
        InvariantForestRegressor(irf_penalty=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="min_samples_leaf_per_era"):
        InvariantForestRegressor(min_samples_leaf_per_era=0).fit(X, y)
    with (
        pytest.raises(UserWarning, match=r"irf_penalty=1\.0 given without eras"),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("error", UserWarning)
        InvariantForestRegressor(n_estimators=1, irf_penalty=1.0).fit(X, y)
    with (
        pytest.raises(UserWarning, match=r"irf_penalty=1\.0 given without eras"),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("error", UserWarning)
        InvariantForestRegressor(n_estimators=1, irf_penalty=1.0).fit(
            X, y, eras=np.zeros(len(y))
        )
    with pytest.raises(ValueError, match="Only binary classification"):
        InvariantForestClassifier().fit(X, np.arange(len(y)) % 3)
    with pytest.raises(ValueError, match=r"only 1 class: \[0\.0\]\.$"):
        InvariantForestClassifier().fit(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match=r"only 1 class: \['apple'\]\.$"):
        InvariantForestClassifier().fit(X, np.full(len(y), "apple"))
    with pytest.raises(ValueError, match="bootstrap"):
        InvariantForestRegressor(oob_score=True, bootstrap=False).fit(X, y)
    with pytest.raises(ValueError, match="labels but X has"):
        InvariantForestRegressor().fit(X, y, eras=eras[:-1])
    with pytest.raises(ValueError, match="NaN"):
        InvariantForestRegressor().fit(X, np.where(y > 0, np.nan, y))
    for est in (InvariantForestRegressor, InvariantForestClassifier):
        # as the boosters (issue 16, item 5)
        with pytest.raises(ValueError, match="boltzmann_alpha=nan"):
            est(boltzmann_alpha=np.nan, split_type="era").fit(X, y > 0, eras=eras)
