"""A model read from a file holds its trees as joined arrays (issue 62).

``load_model`` gives a boosted model's ``_predictors`` as a ``TreeStages``:
the trees' nodes and bitsets joined, read as a list of stages of
``TreePredictor`` (a forest's ``estimators_``: as a list of trees). Each
test compares a loaded model with the fitted one it was saved from (whose
trees are plain lists), or with the same edit made to that list.
"""

import copy
import pickle
import zipfile

import numpy as np
import pytest

from eraboost import load_model, save_model
from eraboost._engine.predictor import TreePredictor, TreeStages

BOOSTED = ["regressor", "binary", "multiclass", "categorical"]
TREE_MEMBERS = [
    f"tree_{name}.npy"
    for name in ("nodes", "n_nodes", "binned_bitsets", "raw_bitsets", "n_bitsets")
]


def _loaded(fitted_models, name, tmp_path):
    est, X = fitted_models[name]
    path = tmp_path / f"{name}.eraboost"
    save_model(est, path)
    return est, load_model(path), X, path


def _assert_same_trees(stages, reference):
    assert len(stages) == len(reference)
    for stage, expected in zip(stages, reference):
        assert type(stage) is list and len(stage) == len(expected)
        for tree, other in zip(stage, expected):
            assert type(tree) is TreePredictor
            for attr in ("nodes", "binned_left_cat_bitsets", "raw_left_cat_bitsets"):
                np.testing.assert_array_equal(getattr(tree, attr), getattr(other, attr))


@pytest.mark.parametrize("name", BOOSTED)
def test_loaded_trees_read_as_the_fitted_ones(name, fitted_models, tmp_path):
    est, loaded, X, _ = _loaded(fitted_models, name, tmp_path)
    stages = loaded._predictors
    assert type(stages) is TreeStages
    _assert_same_trees(stages, est._predictors)
    # indexing as a list indexes: negative, slices, out of range
    _assert_same_trees([stages[-1]], [est._predictors[-1]])
    _assert_same_trees(stages[1:3], est._predictors[1:3])
    _assert_same_trees(stages[::-4], est._predictors[::-4])
    with pytest.raises(IndexError):
        stages[len(est._predictors)]
    # a stage read twice is the same list of the same trees
    assert stages[0] is stages[0]
    assert loaded.n_iter_ == est.n_iter_
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))


def _edit_nodes(est):
    # a stage's tree replaced by a single leaf, a value edited in place
    leaf = np.zeros(1, dtype=est._predictors[2][0].nodes.dtype)
    leaf["is_leaf"] = 1
    leaf["value"] = 0.25
    est._predictors[2][0].nodes = leaf
    nodes = est._predictors[4][-1].nodes
    if not nodes.flags.writeable:  # arrays read from a file
        est._predictors[4][-1].nodes = nodes = nodes.copy()
    nodes["value"][nodes["is_leaf"] == 1] += 1.0


def _replace_tree(est):
    est._predictors[1][0] = TreePredictor(est._predictors[3][0].nodes)


def _drop_stages(est):
    est._predictors.pop()
    del est._predictors[5:8]


def _add_a_stage(est):
    est.set_params(max_iter=est.max_iter + 1)
    est._predictors.append([copy.copy(t) for t in est._predictors[0]])


@pytest.mark.parametrize("name", ["regressor", "multiclass"])
@pytest.mark.parametrize(
    "edit", [_edit_nodes, _replace_tree, _drop_stages, _add_a_stage]
)
def test_an_edit_of_a_loaded_model_predicts_as_the_same_edit_of_a_list(
    name, edit, fitted_models, tmp_path
):
    est, loaded, X, _ = _loaded(fitted_models, name, tmp_path)
    reference = copy.deepcopy(est)
    edit(reference)
    edit(loaded)
    _assert_same_trees(loaded._predictors, reference._predictors)
    expected = reference._raw_predict(X)
    np.testing.assert_array_equal(loaded._raw_predict(X), expected)
    # pickled, saved and loaded again: the edit is kept
    np.testing.assert_array_equal(
        pickle.loads(pickle.dumps(loaded))._raw_predict(X), expected
    )
    save_model(loaded, tmp_path / "edited.eraboost")
    again = load_model(tmp_path / "edited.eraboost")
    np.testing.assert_array_equal(again._raw_predict(X), expected)


@pytest.mark.parametrize("name", BOOSTED)
def test_a_loaded_model_saves_the_trees_it_was_saved_with(
    name, fitted_models, tmp_path
):
    # saving a loaded model writes its joined arrays as they are: the same
    # bytes as the fitted model's trees, concatenated
    _, loaded, _, path = _loaded(fitted_models, name, tmp_path)
    save_model(loaded, tmp_path / "again.eraboost")
    with zipfile.ZipFile(path) as a, zipfile.ZipFile(tmp_path / "again.eraboost") as b:
        for member in TREE_MEMBERS:
            assert a.read(member) == b.read(member), member
    assert type(loaded._predictors) is TreeStages  # nothing made per tree
    assert loaded._predictors._made == {}


def test_a_pickled_loaded_model_stays_joined(fitted_models, tmp_path):
    est, loaded, X, _ = _loaded(fitted_models, "multiclass", tmp_path)
    copied = pickle.loads(pickle.dumps(loaded))
    assert type(copied._predictors) is TreeStages
    _assert_same_trees(copied._predictors, est._predictors)
    np.testing.assert_array_equal(copied.predict_proba(X), est.predict_proba(X))


@pytest.mark.parametrize("name", ["forest-regressor", "forest-classifier"])
def test_a_loaded_forest_reads_and_weighs_its_trees_as_fitted(
    name, fitted_models, tmp_path
):
    est, loaded, _, path = _loaded(fitted_models, name, tmp_path)
    trees = loaded.estimators_
    assert type(trees) is TreeStages and len(trees) == len(est.estimators_)
    _assert_same_trees([list(trees)], [est.estimators_])
    _assert_same_trees([trees[1:3]], [est.estimators_[1:3]])
    # the importances, derived from the trees at load, as fit derived them
    for attr in ("feature_importances_", "split_frequency_importances_"):
        np.testing.assert_array_equal(getattr(loaded, attr), getattr(est, attr))
    save_model(loaded, tmp_path / "again.eraboost")
    with zipfile.ZipFile(path) as a, zipfile.ZipFile(tmp_path / "again.eraboost") as b:
        for member in TREE_MEMBERS:
            assert a.read(member) == b.read(member), member


def _per_tree_importances(est):
    # the brute-force reference: tree by tree, each tree's gains by column
    # normalised to sum 1, and its split shares n_m / n
    gains, shares = np.zeros(est.n_features_in_), np.zeros(est.n_features_in_)
    for tree in est.estimators_:
        nodes = tree.nodes
        split = nodes[nodes["is_leaf"] == 0]
        g = np.zeros(est.n_features_in_)
        for node in split:
            g[node["feature"]] += max(node["gain"], 0.0)
            shares[node["feature"]] += node["count"] / nodes[0]["count"]
        gains += g / g.sum() if g.sum() > 0 else g
    return gains / gains.sum(), shares / len(est.estimators_)


@pytest.mark.parametrize("name", ["forest-regressor", "forest-classifier"])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_a_forest_predicts_and_weighs_as_tree_by_tree(
    name, n_jobs, fitted_models, tmp_path
):
    # a forest adds its trees in one pass over the rows: the same sums, bit
    # for bit, as adding tree.predict(X) tree after tree
    est, loaded, X, _ = _loaded(fitted_models, name, tmp_path)
    X = X.copy()
    X[::7, 0] = np.nan
    expected = np.zeros(X.shape[0])
    for tree in est.estimators_:
        expected += tree.predict(X, n_jobs)
    for model in (copy.deepcopy(est), loaded):
        model.set_params(n_jobs=n_jobs)
        np.testing.assert_array_equal(
            model._mean_tree_output(X), expected / len(est.estimators_)
        )
    gains, shares = _per_tree_importances(est)
    np.testing.assert_allclose(loaded.feature_importances_, gains, rtol=1e-12)
    np.testing.assert_allclose(loaded.split_frequency_importances_, shares, rtol=1e-12)
