"""Model files saved before the persistence split still load bit-identically.

``tests/data/model_files/`` holds one small model file of every kind, saved
by the code of commit aa51f12 (before ``persistence.py`` became a package),
with that code's predictions beside each (see the README.md there). Each
file must load with the current code and predict exactly the stored arrays,
and a re-save with the current code must reload to the same predictions.
The stored predictions came from the old code, not from this one, so a
change to loading, to the predictor or to the model-file format that alters
a single bit of an output fails here.
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from eraboost import load_model, save_model

DATA = Path(__file__).parent / "data" / "model_files"
# the files record scikit-learn 1.9.1 and NumPy 2.5.5; under other versions
# load_model warns that they differ (tests/test_persistence.py asserts it)
pytestmark = pytest.mark.filterwarnings("ignore::eraboost.ModelVersionWarning")
NAMES = [
    "regressor",
    "binary",
    "multiclass",
    "categorical",
    "forest-regressor",
    "forest-classifier",
    "robust-tree",
]


def _rows(name):
    spec = importlib.util.spec_from_file_location("make_files", DATA / "make_files.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.rows_to_predict()[name]


def _assert_predicts_as_stored(est, name, X):
    np.testing.assert_array_equal(
        est.predict(X), np.load(DATA / f"{name}.predict.npy", allow_pickle=False)
    )
    proba = DATA / f"{name}.proba.npy"
    assert proba.exists() == hasattr(est, "predict_proba")
    if proba.exists():
        np.testing.assert_array_equal(
            est.predict_proba(X), np.load(proba, allow_pickle=False)
        )


def test_every_stored_kind_is_tested():
    stored = [p.name.removesuffix(".eraboost") for p in DATA.glob("*.eraboost")]
    assert sorted(stored) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_old_file_predicts_as_stored(name):
    X = _rows(name)
    _assert_predicts_as_stored(load_model(DATA / f"{name}.eraboost"), name, X)


@pytest.mark.parametrize("name", NAMES)
def test_old_file_resaved_predicts_as_stored(name, tmp_path):
    X = _rows(name)
    save_model(load_model(DATA / f"{name}.eraboost"), tmp_path / "m.eraboost")
    _assert_predicts_as_stored(load_model(tmp_path / "m.eraboost"), name, X)
