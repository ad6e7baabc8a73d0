"""HistGradientBoostingClassifier: parity with scikit-learn, docs/criteria.md
reference on log-loss gradients, era behaviour, warm start, metadata routing
and input errors."""

import numpy as np
import pytest
import sklearn
from scipy.special import expit
from sklearn.ensemble import HistGradientBoostingClassifier as SkHGBC
from sklearn.ensemble import HistGradientBoostingRegressor as SkHGBR
from sklearn.model_selection import GridSearchCV, GroupKFold, cross_validate

from eraboost import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from eraboost._eras import era_train_val_split
from eraboost.demo import make_era_classification_data
from tests._sklearn_threads import scikit_learn_on_one_thread  # noqa: F401
from tests.engine.helpers import check_tree

SPLIT_TYPES = ["original", "era", "directional"]


def make_clf_data(n_classes, seed=0, n=900, p=6, nan=False, eras=False):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(n, p))
    X[:, 4] = rng.randint(0, 4, size=n)  # a few distinct values
    score = X[:, 0] + 0.6 * X[:, 1] ** 2 - 0.5 * X[:, 2] * X[:, 3]
    if eras:
        era = np.repeat(np.arange(12), n // 12)
        score = score + rng.normal(scale=0.8, size=12)[era] * X[:, 5]
    noisy = score + rng.normal(scale=0.7, size=n)
    edges = np.quantile(noisy, np.linspace(0, 1, n_classes + 1)[1:-1])
    y = np.searchsorted(edges, noisy)
    if nan:
        X[rng.rand(n, p) < 0.08] = np.nan
    return (X, y, era) if eras else (X, y)


def assert_proba_parity(ours, theirs, X):
    np.testing.assert_allclose(
        ours.predict_proba(X), theirs.predict_proba(X), rtol=0, atol=1e-6
    )
    assert ours.n_iter_ == theirs.n_iter_
    np.testing.assert_array_equal(ours.classes_, theirs.classes_)
    assert ours.n_trees_per_iteration_ == theirs.n_trees_per_iteration_


# -- parity with scikit-learn (no eras) -------------------------------------------


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize(
    "params",
    [
        {},
        {"max_leaf_nodes": None, "max_depth": 3, "min_samples_leaf": 5},
        {"l2_regularization": 1.5, "learning_rate": 0.3, "max_bins": 32},
        {"max_features": 0.5},
        {"class_weight": "balanced"},
        {"interaction_cst": [[0, 1], [2, 3, 4]]},
        {"interaction_cst": "pairwise"},
    ],
)
def test_parity_with_sklearn(n_classes, params):
    X, y = make_clf_data(n_classes, seed=n_classes, nan=True)
    p = {"max_iter": 25, "early_stopping": False, "random_state": 0, **params}
    ours = HistGradientBoostingClassifier(**p).fit(X, y)
    theirs = SkHGBC(**p).fit(X, y)
    assert_proba_parity(ours, theirs, X)
    np.testing.assert_allclose(
        ours.decision_function(X), theirs.decision_function(X), rtol=0, atol=1e-6
    )
    np.testing.assert_array_equal(ours.predict(X), theirs.predict(X))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_parity_class_weight_dict_and_sample_weight(n_classes):
    X, y = make_clf_data(n_classes, seed=5)
    sw = np.random.RandomState(2).uniform(0.2, 3.0, size=y.size)
    cw = {c: 1.0 + c for c in range(n_classes)}
    p = {"max_iter": 20, "early_stopping": False, "random_state": 0, "class_weight": cw}
    ours = HistGradientBoostingClassifier(**p).fit(X, y, sample_weight=sw)
    theirs = SkHGBC(**p).fit(X, y, sample_weight=sw)
    assert_proba_parity(ours, theirs, X)


def test_parity_monotonic_constraints_binary():
    X, y = make_clf_data(2, seed=9)
    p = {
        "max_iter": 30,
        "early_stopping": False,
        "random_state": 0,
        "monotonic_cst": [1, 0, -1, 0, 1, 0],
    }
    ours = HistGradientBoostingClassifier(**p).fit(X, y)
    theirs = SkHGBC(**p).fit(X, y)
    assert_proba_parity(ours, theirs, X)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("scoring", ["loss", "accuracy", None])
def test_parity_early_stopping(n_classes, scoring):
    X, y = make_clf_data(n_classes, seed=4, n=2000)
    p = {
        "max_iter": 200,
        "early_stopping": True,
        "random_state": 0,
        "n_iter_no_change": 3,
        "scoring": scoring,
        "validation_fraction": 0.2,
    }
    ours = HistGradientBoostingClassifier(**p).fit(X, y)
    theirs = SkHGBC(**p).fit(X, y)
    assert_proba_parity(ours, theirs, X)
    np.testing.assert_allclose(ours.train_score_, theirs.train_score_)
    np.testing.assert_allclose(ours.validation_score_, theirs.validation_score_)


def test_parity_string_labels_and_staged_methods():
    X, y = make_clf_data(3, seed=6)
    labels = np.array(["cat", "dog", "eel"])[y]
    p = {"max_iter": 8, "early_stopping": False, "random_state": 0}
    ours = HistGradientBoostingClassifier(**p).fit(X, labels)
    theirs = SkHGBC(**p).fit(X, labels)
    assert_proba_parity(ours, theirs, X)
    stages = list(
        zip(
            ours.staged_predict_proba(X),
            theirs.staged_predict_proba(X),
            ours.staged_predict(X),
            theirs.staged_predict(X),
            ours.staged_decision_function(X),
            theirs.staged_decision_function(X),
        )
    )
    assert len(stages) == ours.n_iter_ == 8
    for po, pt, co, ct, do, dt in stages:
        np.testing.assert_allclose(po, pt, rtol=0, atol=1e-6)
        np.testing.assert_array_equal(co, ct)
        np.testing.assert_allclose(do, dt, rtol=0, atol=1e-6)
    np.testing.assert_allclose(stages[-1][0], ours.predict_proba(X))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_parity_original_with_eras(n_classes):
    X, y, eras = make_clf_data(n_classes, seed=8, eras=True)
    p = {"max_iter": 15, "early_stopping": False, "random_state": 0}
    ours = HistGradientBoostingClassifier(split_type="original", **p)
    ours.fit(X, y, eras=eras[::-1])
    theirs = SkHGBC(**p).fit(X, y)
    assert_proba_parity(ours, theirs, X)


def test_pandas_input_feature_names():
    pd = pytest.importorskip("pandas")
    X, y = make_clf_data(2, seed=3)
    df = pd.DataFrame(X, columns=[f"c{i}" for i in range(X.shape[1])])
    p = {
        "max_iter": 10,
        "early_stopping": False,
        "random_state": 0,
        "monotonic_cst": {"c0": 1},
    }
    ours = HistGradientBoostingClassifier(**p).fit(df, y)
    theirs = SkHGBC(**p).fit(df, y)
    assert list(ours.feature_names_in_) == list(df.columns)
    assert ours.n_features_in_ == X.shape[1]
    assert_proba_parity(ours, theirs, df)


# -- the reference of docs/criteria.md on the classifier's first trees --------


def logloss_grad_hess(y, n_classes):
    """Gradients and hessians of the log loss at the intercept-only model,
    per class (columns), rounded to float32 as the engine stores them."""
    if n_classes == 2:
        p = np.full(y.size, y.mean())
        g, h = (p - y)[:, None], (p * (1 - p))[:, None]
    else:
        share = np.bincount(y, minlength=n_classes) / y.size
        onehot = y[:, None] == np.arange(n_classes)
        p = np.broadcast_to(share, onehot.shape)
        g, h = p - onehot, p * (1 - p)
    f32 = np.float32
    return g.astype(f32).astype(float), h.astype(f32).astype(float)


def era_clf_data(seed, n_classes, nan):
    rng = np.random.RandomState(seed)
    sizes = rng.geometric(0.06, size=7) + 15  # every era has both classes
    eras = np.repeat(np.arange(7), sizes)
    n = eras.size
    X = rng.randint(0, 5, size=(n, 4)).astype(float)
    X[:, 0] = np.clip(eras * 5 // 7 + rng.randint(-1, 2, size=n), 0, 4)
    slope = rng.normal(size=7)[eras]
    score = 0.8 * X[:, 1] + slope * X[:, 2] + rng.normal(size=n)
    y = np.searchsorted(
        np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1]), score
    )
    if nan:
        X[rng.rand(n, 4) < 0.1] = np.nan
    perm = rng.permutation(n)
    return X[perm], y[perm], eras[perm]


@pytest.mark.parametrize("split_type", SPLIT_TYPES)
@pytest.mark.parametrize("alpha", [-np.inf, 0.0, 2.0])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize(
    "options",
    [
        {},
        {"irf_penalty": 0.1},
        {"irf_penalty": 0.02, "min_samples_leaf_per_era": 2},
    ],
    ids=str,
)
def test_first_trees_match_reference(split_type, alpha, n_classes, seed, options):
    X, y, eras = era_clf_data(seed, n_classes, nan=seed == 1)
    lam, min_leaf, max_depth = 0.5, 2, 2
    est = HistGradientBoostingClassifier(
        split_type=split_type,
        boltzmann_alpha=alpha,
        l2_regularization=lam,
        min_samples_leaf=min_leaf,
        max_iter=1,
        max_depth=max_depth,
        max_leaf_nodes=None,
        learning_rate=1.0,
        early_stopping=False,
        random_state=0,
        **options,
    )
    est.fit(X, y, eras=eras)
    Xb = est._bin_mapper.transform(X)
    g, h = logloss_grad_hess(y, n_classes)
    rows = np.arange(y.size)
    trees = est._predictors[0]
    assert len(trees) == (1 if n_classes == 2 else n_classes)
    checked = 0
    for k, tree in enumerate(trees):  # tree k grown on class k's gradients
        checked += check_tree(
            tree.nodes,
            est._bin_mapper,
            Xb,
            g[:, k],
            h[:, k],
            eras,
            rows,
            0,
            split_type,
            alpha,
            lam,
            min_leaf,
            0,
            max_depth,
            **options,
        )
    # every tree splits, except that a penalty on the worst era's gain (often
    # about 0) may leave the root whole, as the reference then does too
    penalised_min = options.get("irf_penalty") and split_type == "era" and alpha < 0
    assert checked >= (0 if penalised_min else len(trees))


def test_binary_leaf_values_are_newton_steps_of_log_loss():
    # hand-computed: one stump, learning rate 1, on a 2-valued feature
    X = np.repeat([[0.0], [1.0]], [60, 40], axis=0)
    y = np.r_[np.ones(45), np.zeros(15), np.ones(10), np.zeros(30)].astype(int)
    est = HistGradientBoostingClassifier(
        max_iter=1, learning_rate=1.0, min_samples_leaf=1, early_stopping=False
    )
    est.fit(X, y)
    p = y.mean()
    raw0 = np.log(p / (1 - p))
    for mask in (X[:, 0] == 0, X[:, 0] == 1):
        G = np.sum(p - y[mask])
        H = mask.sum() * p * (1 - p)
        expected = expit(raw0 - G / H)
        np.testing.assert_allclose(
            est.predict_proba(X[mask][:1])[0, 1], expected, rtol=1e-6
        )


# -- era criteria on a shortcut task ----------------------------------------------


def fresh_era_accuracy(n_classes):
    X, y, eras = make_era_classification_data(
        n_eras=40, rows_per_era=150, n_classes=n_classes, seed=0
    )
    X_new, y_new, _ = make_era_classification_data(
        n_eras=20, rows_per_era=150, n_classes=n_classes, seed=1
    )
    acc = {}
    for split_type, alpha in [
        ("original", 0.0),
        ("era", 0.0),
        ("era", -np.inf),
        ("directional", 0.0),
    ]:
        est = HistGradientBoostingClassifier(
            split_type=split_type,
            boltzmann_alpha=alpha,
            max_iter=50,
            early_stopping=False,
            random_state=0,
        )
        est.fit(X, y, eras=eras)
        acc[split_type, alpha] = est.score(X_new, y_new)
    return acc


# three classes: 600 trees of era criteria over 40 eras, 47-96 s on 2 cores
@pytest.mark.parametrize("n_classes", [2, pytest.param(3, marks=pytest.mark.slow)])
def test_era_criteria_ignore_an_era_specific_shortcut(n_classes):
    acc = fresh_era_accuracy(n_classes)
    orig = acc["original", 0.0]
    assert acc["directional", 0.0] > orig + 0.05, acc
    assert acc["era", -np.inf] > orig + 0.05, acc
    assert acc["era", 0.0] > orig + 0.03, acc


# -- whole-era validation split for classifiers ----------------------------------


def test_era_split_keeps_every_class_on_both_sides():
    rng = np.random.RandomState(0)
    codes = np.repeat(np.arange(20), 50).astype(np.int32)
    y = rng.randint(0, 2, size=codes.size)
    # a rare class present in three eras only
    y[codes == 3] = 2
    y[(codes == 11) & (np.arange(codes.size) % 2 == 0)] = 2
    y[(codes == 17) & (np.arange(codes.size) % 5 == 0)] = 2
    for seed in range(10):
        mask = era_train_val_split(codes, 0.2, seed, y=y)
        # whole eras
        for e in range(20):
            assert len(set(mask[codes == e])) == 1
        assert set(y[mask]) == set(y[~mask]) == {0, 1, 2}
        assert abs(mask.mean() - 0.2) <= 0.05


def test_era_split_without_y_is_unchanged_by_y_when_possible():
    codes = np.repeat(np.arange(10), 30).astype(np.int32)
    y = np.arange(codes.size) % 2  # every class in every era
    np.testing.assert_array_equal(
        era_train_val_split(codes, 0.3, 4, y=y), era_train_val_split(codes, 0.3, 4)
    )


def test_class_in_a_single_era_is_a_clear_error():
    X, y = make_clf_data(2, seed=0, n=1200)
    eras = np.repeat(np.arange(12), 100)
    y = y.copy()
    y[eras == 5] = 2  # class 2 lives in era 5 only
    est = HistGradientBoostingClassifier(max_iter=5, early_stopping=True)
    with pytest.raises(ValueError, match=r"1 class\(es\) occur in a single era: \[2\]"):
        est.fit(X, y, eras=eras)
    # string classes: the message names the labels, not their codes
    names = np.array(["apple", "banana", "cherry"])[y]
    with pytest.raises(
        ValueError, match=r"1 class\(es\) occur in a single era: \['cherry'\]\."
    ):
        est.fit(X, names, eras=eras)
    # an external validation set avoids the internal split
    est.fit(X, y, eras=eras, X_val=X[:100], y_val=y[:100])


@pytest.mark.parametrize("split_type", SPLIT_TYPES)
def test_early_stopping_with_eras_runs_for_multiclass(split_type):
    X, y, eras = make_clf_data(3, seed=2, n=1200, eras=True)
    est = HistGradientBoostingClassifier(
        max_iter=30,
        early_stopping=True,
        n_iter_no_change=3,
        random_state=0,
        split_type=split_type,
    )
    est.fit(X, y, eras=eras)
    assert est.validation_score_.shape == (est.n_iter_ + 1,)
    assert np.all(np.isfinite(est.validation_score_))


# -- warm start ---------------------------------------------------------------------


def assert_same_trees(a, b):
    assert a.n_iter_ == b.n_iter_
    for stage_a, stage_b in zip(a._predictors, b._predictors):
        for pa, pb in zip(stage_a, stage_b):
            np.testing.assert_array_equal(pa.nodes, pb.nodes)


@pytest.mark.parametrize(
    "Est", [HistGradientBoostingClassifier, HistGradientBoostingRegressor]
)
@pytest.mark.parametrize("split_type", SPLIT_TYPES)
@pytest.mark.parametrize("early_stopping", [False, True])
def test_warm_start_with_eras_equals_one_long_fit(Est, split_type, early_stopping):
    X, y, eras = make_clf_data(3, seed=1, n=1200, eras=True)
    if Est is HistGradientBoostingRegressor:
        y = y + np.random.RandomState(0).normal(size=y.size)
    p = {
        "split_type": split_type,
        "max_features": 0.7,
        "random_state": 0,
        "early_stopping": early_stopping,
        "n_iter_no_change": 100,
    }
    long = Est(max_iter=24, **p).fit(X, y, eras=eras)
    warm = Est(max_iter=8, warm_start=True, **p).fit(X, y, eras=eras)
    assert warm.n_iter_ == 8
    warm.set_params(max_iter=16).fit(X, y, eras=eras)
    warm.set_params(max_iter=24).fit(X, y, eras=eras)
    assert_same_trees(long, warm)
    np.testing.assert_array_equal(long.predict(X), warm.predict(X))
    np.testing.assert_allclose(long.train_score_, warm.train_score_)
    np.testing.assert_allclose(long.validation_score_, warm.validation_score_)


def test_warm_start_matches_sklearn_without_eras():
    X, y = make_clf_data(3, seed=3)
    ours = HistGradientBoostingClassifier(
        max_iter=5, warm_start=True, early_stopping=False, random_state=0
    )
    theirs = SkHGBC(max_iter=5, warm_start=True, early_stopping=False, random_state=0)
    for it in (5, 12):
        ours.set_params(max_iter=it).fit(X, y)
        theirs.set_params(max_iter=it).fit(X, y)
    assert_proba_parity(ours, theirs, X)


def test_warm_start_errors():
    X, y, eras = make_clf_data(2, seed=1, eras=True)
    est = HistGradientBoostingClassifier(
        max_iter=5, warm_start=True, early_stopping=False
    )
    est.fit(X, y, eras=eras)
    est.set_params(max_iter=10)
    with pytest.raises(ValueError, match="eras has 899 labels but X has 900 rows"):
        est.fit(X, y, eras=eras[:-1])
    with pytest.raises(
        ValueError,
        match="previous fit, which had 900 training rows, but X has 899 rows",
    ):
        est.fit(X[:-1], y[:-1], eras=eras[:-1])
    with pytest.raises(
        ValueError, match="the eras differ from those of the previous fit"
    ):
        est.fit(X, y, eras=np.roll(eras, 1))
    with pytest.raises(
        ValueError, match="called without eras but the previous fit was with eras"
    ):
        est.fit(X, y)
    est.set_params(max_iter=3)
    with pytest.raises(
        ValueError, match="max_iter=3 must be larger than or equal to n_iter_=5"
    ):
        est.fit(X, y, eras=eras)
    # the failed calls left the model intact: it continues from 5 iterations
    est.set_params(max_iter=7).fit(X, y, eras=eras)
    assert est.n_iter_ == 7
    # warm_start=False starts afresh on other data
    est.set_params(warm_start=False).fit(X[:-1], y[:-1], eras=eras[:-1])
    assert est.n_iter_ == 7


@pytest.mark.parametrize(
    "Est", [HistGradientBoostingClassifier, HistGradientBoostingRegressor]
)
def test_warm_start_on_other_columns_is_refused(Est):
    """A warm start on fewer (or more) columns than the first fit is refused
    with scikit-learn's message, and leaves the model as it was (its trees
    read 50 columns: on one, predict read outside X)."""
    rng = np.random.RandomState(0)
    X = rng.normal(size=(400, 50))
    y = (X[:, 0] + X[:, 30] > 0).astype(int)
    est = Est(max_iter=5, warm_start=True, early_stopping=False).fit(X, y)
    before = est.predict(X)
    est.set_params(max_iter=10)
    name = Est.__name__
    for cols in (X[:, :1], np.hstack([X, X[:, :2]])):
        with pytest.raises(
            ValueError,
            match=f"X has {cols.shape[1]} features, but {name} is expecting "
            "50 features as input",
        ):
            est.fit(cols, y)
    assert est.n_iter_ == 5 and est.n_features_in_ == 50
    np.testing.assert_array_equal(est.predict(X), before)
    est.fit(X, y)  # the same columns again: it continues
    assert est.n_iter_ == 10


def test_regressor_warm_start_matches_sklearn():
    rng = np.random.RandomState(0)
    X = rng.normal(size=(500, 4))
    y = X[:, 0] + rng.normal(size=500)
    ours = HistGradientBoostingRegressor(
        max_iter=4, warm_start=True, early_stopping=True, random_state=0
    )
    theirs = SkHGBR(max_iter=4, warm_start=True, early_stopping=True, random_state=0)
    for it in (4, 9):
        ours.set_params(max_iter=it).fit(X, y)
        theirs.set_params(max_iter=it).fit(X, y)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), atol=1e-9)
    np.testing.assert_allclose(ours.validation_score_, theirs.validation_score_)


# -- metadata routing ---------------------------------------------------------------


def per_fold_scores_with_eras(est, X, y, eras, cv):
    out = []
    for train, test in cv.split(X, y, groups=eras):
        fitted = sklearn.base.clone(est).fit(X[train], y[train], eras=eras[train])
        out.append(fitted.score(X[test], y[test]))
    return np.array(out)


def test_eras_flow_through_cross_validate_with_metadata_routing():
    X, y, eras = make_era_classification_data(n_eras=12, rows_per_era=60, seed=2)
    cv = GroupKFold(n_splits=3)
    est = HistGradientBoostingClassifier(
        split_type="directional", max_iter=10, early_stopping=False, random_state=0
    )
    expected = per_fold_scores_with_eras(est, X, y, eras, cv)
    with sklearn.config_context(enable_metadata_routing=True):
        routed = sklearn.base.clone(est).set_fit_request(eras=True)
        res = cross_validate(routed, X, y, cv=cv, params={"eras": eras, "groups": eras})
        np.testing.assert_allclose(res["test_score"], expected)
        # without the request, scikit-learn refuses to drop the metadata
        with pytest.raises(Exception, match="eras"):
            cross_validate(
                sklearn.base.clone(est),
                X,
                y,
                cv=cv,
                params={"eras": eras, "groups": eras},
            )
    # without routing, params go to fit directly
    res = cross_validate(est, X, y, cv=cv, groups=eras, params={"eras": eras})
    np.testing.assert_allclose(res["test_score"], expected)


def test_eras_flow_through_grid_search_with_metadata_routing():
    X, y, eras = make_era_classification_data(n_eras=12, rows_per_era=60, seed=3)
    cv = GroupKFold(n_splits=3)
    grid = {"split_type": ["original", "directional"]}
    base = HistGradientBoostingClassifier(
        max_iter=10, early_stopping=False, random_state=0
    )
    with sklearn.config_context(enable_metadata_routing=True):
        search = GridSearchCV(base.set_fit_request(eras=True), grid, cv=cv)
        search.fit(X, y, eras=eras, groups=eras)
    for i, params in enumerate(search.cv_results_["params"]):
        expected = per_fold_scores_with_eras(base.set_params(**params), X, y, eras, cv)
        np.testing.assert_allclose(
            [search.cv_results_[f"split{k}_test_score"][i] for k in range(3)], expected
        )
    assert search.best_estimator_.eras_ is not None  # refit got the eras


# -- bad input ----------------------------------------------------------------------


def test_continuous_target_is_a_clear_error():
    X, _ = make_clf_data(2)
    y = np.random.RandomState(0).normal(size=X.shape[0])
    with pytest.raises(ValueError, match="Unknown label type: continuous"):
        HistGradientBoostingClassifier().fit(X, y)


def test_multiclass_monotonic_constraints_are_an_error():
    X, y = make_clf_data(3)
    est = HistGradientBoostingClassifier(monotonic_cst=[1, 0, 0, 0, 0, 0])
    with pytest.raises(ValueError, match="not supported for multiclass"):
        est.fit(X, y)


def test_unfitted_classifier_raises_not_fitted():
    X, _ = make_clf_data(2)
    with pytest.raises(sklearn.exceptions.NotFittedError):
        HistGradientBoostingClassifier().predict_proba(X)
