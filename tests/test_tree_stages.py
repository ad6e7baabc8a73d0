"""A boosted model read from a file holds its trees as joined arrays (issue 62).

``load_model`` gives a boosted model's ``_predictors`` as a ``TreeStages``:
the trees' nodes and bitsets joined, read as a list of stages of
``TreePredictor``. Each test compares a loaded model with the fitted one it
was saved from (whose ``_predictors`` is a plain list), or with the same
edit made to that list.
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
