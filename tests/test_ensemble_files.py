"""Model files of EraEnsembleRegressor / EraEnsembleClassifier: each member
stored by its own kind's schema; edited files refused in one line."""

import json
import os
import pickle
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.linear_model import LinearRegression

from eraboost import (
    EraEnsembleClassifier,
    EraEnsembleRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    InvariantForestClassifier,
    InvariantForestRegressor,
    ModelFileError,
    load_model,
    save_model,
)
from eraboost.demo import make_era_data
from tests.model_mutations import read_model_file, write_model_file


@pytest.fixture(scope="module")
def era_data():
    X, y, eras, _ = make_era_data(n_eras=8, rows_per_era=50, seed=1)
    return X, y, eras


def _models(X, y, eras):
    label = (y > 0).astype(int)  # model_mutations.py compares numbers
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "recommended": EraEnsembleRegressor().fit(X, y, eras=eras),
            "one member": EraEnsembleRegressor(weights=(0, 1)).fit(X, y, eras=eras),
            "booster and forest": EraEnsembleRegressor(
                [
                    ("boost", HistGradientBoostingRegressor(max_iter=5)),
                    ("forest", InvariantForestRegressor(n_estimators=3)),
                ],
                weights=[2.0, 1.0],
            ).fit(X, y, eras=eras),
            "classifier": EraEnsembleClassifier(
                [
                    ("boost", HistGradientBoostingClassifier(max_iter=5)),
                    ("forest", InvariantForestClassifier(n_estimators=3)),
                ]
            ).fit(X, label, eras=eras),
        }


@pytest.fixture(scope="module")
def models(era_data):
    return _models(*era_data)


@pytest.mark.parametrize(
    "name", ["recommended", "one member", "booster and forest", "classifier"]
)
def test_round_trip_predicts_bit_identically(models, era_data, name, tmp_path):
    X = era_data[0]
    model = models[name]
    path = tmp_path / "ensemble.skops"
    save_model(model, path, metadata={"kind": name})
    loaded, meta = load_model(path, return_metadata=True)
    assert type(loaded) is type(model) and meta == {"kind": name}
    np.testing.assert_array_equal(loaded.predict(X), model.predict(X))
    if name == "classifier":
        np.testing.assert_array_equal(loaded.predict_proba(X), model.predict_proba(X))
        np.testing.assert_array_equal(loaded.classes_, model.classes_)
    assert list(loaded.named_estimators_) == list(model.named_estimators_)
    # the parameters come back: the same repr, members included
    assert repr(loaded.get_params(deep=False)) == repr(model.get_params(deep=False))
    assert json.loads(json.dumps(loaded.get_params()["weights"])) == json.loads(
        json.dumps(model.get_params()["weights"])
    )
    # the file is data: no pickle inside
    doc, members, _ = read_model_file(path)
    assert doc["estimator"] == type(model).__name__
    assert all(m == "model.json" or m.startswith("member") for m in members)


def test_a_member_eraboost_cannot_save_is_refused(era_data, tmp_path):
    X, y, _ = era_data
    model = EraEnsembleRegressor([("linear", LinearRegression())]).fit(X, y)
    path = tmp_path / "linear.skops"
    with pytest.raises(ModelFileError, match="the member 'linear' holds a Linear"):
        save_model(model, path)
    assert not path.exists()


def _edited(models, name, edit, tmp_path):
    path = tmp_path / "source.skops"
    save_model(models[name], path)
    doc, members, _ = read_model_file(path)
    edit(doc, members)
    edited = tmp_path / "edited.skops"
    write_model_file(edited, doc, members)
    return edited


def _set_member(i, key, value):
    def edit(doc, members):
        doc["fitted"]["members"][i][key] = value

    return edit


def _drop_array(doc, members):
    name = next(n for n in members if n.startswith("member1_"))
    del members[name]


def _many_members(doc, members):
    doc["fitted"]["members"] = doc["fitted"]["members"] * 40


def _weights(doc, members):
    doc["fitted"]["weights_"] = [1.0, 3.0]


def _nested(doc, members):
    inner = dict(doc["fitted"]["members"][0])
    inner["estimator"] = "EraEnsembleRegressor"
    doc["fitted"]["members"][0] = inner


def _param_member(doc, members):
    doc["params"]["estimators"][0]["estimator"] = "HistGradientBoostingClassifier"


@pytest.mark.parametrize(
    ("name", "edit", "message"),
    [
        ("recommended", _weights, "members of positive weight"),
        ("recommended", _set_member(0, "name", "other"), "members of positive"),
        ("recommended", _nested, "not a member eraboost saves"),
        ("recommended", _set_member(1, "fitted", []), "fitted must be a JSON object"),
        (
            "recommended",
            _set_member(0, "estimator", "HistGradientBoostingClassifier"),
            "in an ensemble of other estimators",
        ),
        ("recommended", _many_members, "a list of 1 to 64 members"),
        ("recommended", _drop_array, "is missing"),
        ("booster and forest", _param_member, "in an ensemble of other"),
        (
            "booster and forest",
            lambda doc, m: doc["params"].update(weights=[1, -1]),
            "invalid parameter: .*non-negative",
        ),
        (
            "classifier",
            lambda doc, m: doc["fitted"]["classes_"]["values"].append(2),
            "the member 'boost' has other classes",
        ),
        (
            "classifier",
            lambda doc, m: doc["fitted"].update(n_features_in_=3),
            "n_features_in_",
        ),
        (
            "recommended",
            lambda doc, m: doc["fitted"]["members"][0].update(extra=1),
            "undeclared fields",
        ),
    ],
)
def test_edited_files_are_refused(models, name, edit, message, tmp_path):
    path = _edited(models, name, edit, tmp_path)
    with pytest.raises(ModelFileError, match=message) as info:
        load_model(path)
    assert str(info.value).startswith(f"cannot read model {path}: ")
    assert "\n" not in str(info.value)


def test_mutated_files_never_crash_or_change_predictions(models, era_data, tmp_path):
    # seeded mutations (flipped bytes, cuts, edits with new checksums) in a
    # child process: a crash or a hang fails the test, not pytest
    X = era_data[0]
    args = []
    for name in ("recommended", "classifier"):
        save_model(models[name], tmp_path / f"{name}.skops")
        with open(tmp_path / f"{name}.pkl", "wb") as f:
            pickle.dump(X[:50], f)
        args += [str(tmp_path / f"{name}.skops"), str(tmp_path / f"{name}.pkl")]
    script = Path(__file__).with_name("model_mutations.py")
    run = subprocess.run(
        [sys.executable, str(script), "1", "60", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout.splitlines()[-1])
    assert report["failures"] == [], "\n".join(report["failures"][:10])
    counts = report["counts"]
    assert sum(v for k, v in counts.items() if k.endswith("refused")) > 20
