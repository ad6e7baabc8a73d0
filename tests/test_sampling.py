"""Per-tree sampling (colsample_bytree, subsample, era_subsample) and
keep_best_iteration."""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.ensemble import HistGradientBoostingRegressor as SkRegressor
from sklearn.utils._param_validation import InvalidParameterError
from threadpoolctl import threadpool_limits

from eraboost import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from eraboost._engine import grower as grower_module
from eraboost.sampling import draw_count
from tests._sklearn_threads import scikit_learn_on_one_thread  # noqa: F401


def _data(n=6000, p=12, n_eras=20, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.randint(0, 5, size=(n, p)).astype(np.int8)
    eras = np.repeat(np.arange(n_eras), n // n_eras)
    level = rng.normal(size=n_eras)
    y = X[:, 0] - 0.5 * X[:, 1] + level[eras] * (X[:, 2] - 2) + rng.normal(size=n)
    return X, y, eras


def _trees(est):
    return [p.nodes for it in est._predictors for p in it]


def _same_model(a, b):
    ta, tb = _trees(a), _trees(b)
    return len(ta) == len(tb) and all(np.array_equal(x, y) for x, y in zip(ta, tb))


@pytest.fixture
def spy(monkeypatch):
    """Record each grower's root rows, tree features and histogram features."""
    calls = []
    original_init = grower_module.TreeGrower.__init__
    original_build = grower_module.TreeGrower._build

    def init(self, engine, root_indices, *args, **kwargs):
        record = {
            "rows": np.array(root_indices),
            "tree_features": kwargs.get("tree_features"),
            "built": set(),
        }
        calls.append(record)
        self._spy = record
        original_init(self, engine, root_indices, *args, **kwargs)

    def build(self, node, root=False, dense=False):
        self._spy["built"].update(int(f) for f in self._features(node))
        return original_build(self, node, root, dense)

    monkeypatch.setattr(grower_module.TreeGrower, "__init__", init)
    monkeypatch.setattr(grower_module.TreeGrower, "_build", build)
    return calls


COMMON = dict(max_iter=8, early_stopping=False, random_state=0)


@pytest.mark.parametrize(
    "option", [{"colsample_bytree": 0.5}, {"subsample": 0.5}, {"era_subsample": 0.5}]
)
@pytest.mark.parametrize("split_type", ["original", "era"])
def test_each_option_changes_the_model_only_when_set(option, split_type):
    X, y, eras = _data()
    base = HistGradientBoostingRegressor(split_type=split_type, **COMMON)
    ref = base.fit(X, y, eras=eras)
    at_default = HistGradientBoostingRegressor(
        split_type=split_type, **dict.fromkeys(option, 1.0), **COMMON
    ).fit(X, y, eras=eras)
    assert _same_model(ref, at_default)
    changed = HistGradientBoostingRegressor(
        split_type=split_type, **option, **COMMON
    ).fit(X, y, eras=eras)
    assert not _same_model(ref, changed)
    clf = HistGradientBoostingClassifier(split_type=split_type, **COMMON)
    ref = clone(clf).fit(X, y > 0, eras=eras)
    changed = clf.set_params(**option).fit(X, y > 0, eras=eras)
    assert not _same_model(ref, changed)


def test_defaults_keep_scikit_learns_feature_subsampling_stream():
    # the per-tree draws use their own generator: max_features still grows
    # scikit-learn's trees
    X, y, _ = _data()
    params = dict(max_iter=5, max_features=0.5, early_stopping=False, random_state=3)
    ours = HistGradientBoostingRegressor(**params).fit(X, y)
    theirs = SkRegressor(**params).fit(X, y)
    np.testing.assert_allclose(ours.predict(X), theirs.predict(X), rtol=1e-12)


def test_colsample_trees_use_only_their_drawn_features(spy):
    rng = np.random.RandomState(0)
    X = rng.randint(0, 5, size=(3000, 40)).astype(np.int8)
    y = X[:, :10].sum(1) + rng.normal(size=3000)
    est = HistGradientBoostingRegressor(
        colsample_bytree=0.1, max_features=0.5, **COMMON
    ).fit(X, y)
    drawn = [call["tree_features"] for call in spy]
    assert len(drawn) == est.n_iter_
    for features, nodes, call in zip(drawn, _trees(est), spy):
        assert features.size == draw_count(0.1, 40) == 4
        assert np.all(np.diff(features.astype(int)) > 0)
        split = nodes[nodes["is_leaf"] == 0]["feature"]
        assert set(split) <= set(features.tolist())
        # histograms, pooled and per era, only for the tree's features
        assert call["built"] == set(features.tolist())
    assert len({tuple(f) for f in drawn}) > 1
    # with interaction constraints too, splits stay within the tree's draw
    spy.clear()
    est = HistGradientBoostingRegressor(
        colsample_bytree=0.25, interaction_cst=[[0, 1, 2], [3, 4]], **COMMON
    ).fit(X, y)
    for call, nodes in zip(spy, _trees(est)):
        split = nodes[nodes["is_leaf"] == 0]["feature"]
        assert set(split) <= set(call["tree_features"].tolist())


def test_era_subsample_trees_see_only_their_drawn_eras(spy):
    X, y, eras = _data(n_eras=20)
    lr = 0.5
    est = HistGradientBoostingRegressor(
        era_subsample=0.3,
        split_type="era",
        learning_rate=lr,
        max_iter=4,
        early_stopping=False,
        random_state=0,
    ).fit(X, y, eras=eras)
    seen = []
    for call in spy:
        drawn = np.unique(eras[call["rows"]])
        assert drawn.size == draw_count(0.3, 20) == 6
        # every row of a drawn era, none of the others, grouped by era
        np.testing.assert_array_equal(
            np.sort(call["rows"]), np.flatnonzero(np.isin(eras, drawn))
        )
        assert np.all(np.diff(eras[call["rows"]]) >= 0)
        seen.append(tuple(drawn))
    assert len(set(seen)) > 1
    # the first tree's leaves: -lr * mean gradient of its in-bag rows only
    tree = est._predictors[0][0]
    rows = spy[0]["rows"]
    leaf_of = _leaf_index(tree, X)
    residual = y - est._baseline_prediction.item()
    for leaf in np.flatnonzero(tree.nodes["is_leaf"]):
        mine = rows[leaf_of[rows] == leaf]
        assert tree.nodes["count"][leaf] == mine.size
        assert tree.nodes["value"][leaf] == pytest.approx(lr * residual[mine].mean())


def _leaf_index(predictor, X):
    numbered = predictor.nodes.copy()
    numbered["value"] = np.arange(numbered.shape[0])
    return (
        type(predictor)(numbered, predictor.binned_left_cat_bitsets, None)
        .predict(X)
        .astype(int)
    )


def test_subsample_draws_rows_without_replacement_and_updates_every_row(spy):
    X, y, eras = _data()
    n = X.shape[0]
    est = HistGradientBoostingRegressor(
        subsample=0.4,
        era_subsample=0.5,
        max_iter=6,
        early_stopping=True,
        validation_fraction=None,
        n_iter_no_change=100,
        random_state=0,
    ).fit(X, y, eras=eras)
    for call in spy:
        rows = call["rows"]
        drawn_eras = np.unique(eras[rows])
        in_eras = np.flatnonzero(np.isin(eras, drawn_eras))
        assert drawn_eras.size == 10
        assert rows.size == draw_count(0.4, in_eras.size) == np.unique(rows).size
    # the training loss early stopping tracked is that of every training row:
    # the out-of-bag rows received each tree's values too
    raw = est._raw_predict(X).ravel()
    assert est.train_score_[-1] == pytest.approx(-est._loss(y, raw), rel=1e-10)
    assert n == X.shape[0]


def test_multiclass_trees_of_an_iteration_share_their_rows(spy):
    X, y, _ = _data()
    yc = np.digitize(y, [-1, 1])
    HistGradientBoostingClassifier(subsample=0.5, colsample_bytree=0.5, **COMMON).fit(
        X, yc
    )
    assert len(spy) == 3 * COMMON["max_iter"]
    for i in range(0, len(spy), 3):
        for j in (1, 2):
            np.testing.assert_array_equal(spy[i]["rows"], spy[i + j]["rows"])
    # but each tree draws its own features
    assert any(
        not np.array_equal(spy[i]["tree_features"], spy[i + 1]["tree_features"])
        for i in range(0, len(spy), 3)
    )


@pytest.mark.parametrize("cls", [HistGradientBoostingRegressor, "multiclass"])
def test_sampled_models_do_not_depend_on_the_thread_count(cls):
    X, y, eras = _data()
    if cls == "multiclass":
        cls, y = HistGradientBoostingClassifier, np.digitize(y, [-1, 1])
    params = dict(
        colsample_bytree=0.4,
        subsample=0.7,
        era_subsample=0.6,
        max_features=0.5,
        split_type="era",
        max_iter=6,
        random_state=7,
    )
    models = []
    for threads in (1, 2):
        with threadpool_limits(threads, "openmp"):
            models.append(cls(**params).fit(X, y, eras=eras))
    assert _same_model(*models)
    # the same seed grows the same model; another seed another one
    again = cls(**params).fit(X, y, eras=eras)
    assert _same_model(models[0], again)
    other = cls(**dict(params, random_state=8)).fit(X, y, eras=eras)
    assert not _same_model(models[0], other)


def test_warm_start_continues_the_sampling_stream():
    X, y, eras = _data()
    params = dict(colsample_bytree=0.5, subsample=0.5, early_stopping=False)
    one = HistGradientBoostingRegressor(max_iter=6, random_state=0, **params)
    one.fit(X, y, eras=eras)
    two = HistGradientBoostingRegressor(max_iter=3, random_state=0, **params)
    two.fit(X, y, eras=eras)
    two.set_params(max_iter=6, warm_start=True).fit(X, y, eras=eras)
    assert _same_model(one, two)


@pytest.mark.parametrize("scoring", ["loss", "r2"])
def test_keep_best_iteration_keeps_the_best_validation_score(scoring):
    X, y, eras = _data(n=12000)
    params = dict(
        learning_rate=0.8,
        max_iter=60,
        n_iter_no_change=8,
        early_stopping=True,
        scoring=scoring,
        random_state=0,
    )
    last = HistGradientBoostingRegressor(**params).fit(X, y, eras=eras)
    best = HistGradientBoostingRegressor(keep_best_iteration=True, **params).fit(
        X, y, eras=eras
    )
    assert not hasattr(last, "best_iteration_")
    k = int(np.argmax(last.validation_score_))
    assert 1 <= k < last.n_iter_  # the task overfits: the best is not the last
    assert best.best_iteration_ == best.n_iter_ == k
    assert best.validation_score_.size == best.train_score_.size == k + 1
    np.testing.assert_array_equal(
        best.validation_score_, last.validation_score_[: k + 1]
    )
    staged = list(last.staged_predict(X[:100]))
    np.testing.assert_array_equal(best.predict(X[:100]), staged[k - 1])
    # without early stopping every iteration is kept
    no_es = HistGradientBoostingRegressor(
        max_iter=5, early_stopping=False, keep_best_iteration=True
    ).fit(X, y)
    assert no_es.n_iter_ == no_es.best_iteration_ == 5


def test_bad_sampling_parameters():
    X, y, eras = _data(n=600)
    with pytest.raises(ValueError, match=r"era_subsample=0\.5 draws whole eras"):
        HistGradientBoostingRegressor(era_subsample=0.5).fit(X, y)
    for name in ("colsample_bytree", "subsample", "era_subsample"):
        for bad in (0.0, 1.5, 1):
            with pytest.raises(InvalidParameterError, match=name):
                HistGradientBoostingRegressor(**{name: bad}).fit(X, y, eras=eras)
