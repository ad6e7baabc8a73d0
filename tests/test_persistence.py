"""Model files (save_model / load_model) and atomic writes (_atomic)."""

import copy
import errno
import io
import json
import os
import pickle
import stat
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import skops.io
from sklearn.metrics import make_scorer, r2_score

from eraboost import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    InvariantForestClassifier,
    InvariantForestRegressor,
    ModelFileError,
    ModelVersionWarning,
    RobustTreeClassifier,
    load_model,
    make_era_scorer,
    persistence,
    save_model,
)
from eraboost import _atomic as atomic_module
from eraboost._atomic import atomic_write

RNG = np.random.RandomState(0)
N = 1200
X = RNG.normal(size=(N, 5))
ERAS = np.repeat(np.arange(12), N // 12)
Y_REG = X[:, 0] + 0.5 * X[:, 1] * (ERAS % 2) + RNG.normal(scale=0.5, size=N)
Y_BIN = (Y_REG > 0).astype(int)
Y_MULTI = np.digitize(Y_REG, [-0.7, 0.0, 0.7])
X_NEW = RNG.normal(size=(300, 5))


def _frame(X, seed):
    rng = np.random.RandomState(seed)
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    df["sector"] = pd.Categorical(rng.choice(["a", "b", "c", "d"], size=len(df)))
    return df


def _fitted():
    """(name, estimator, X to predict) of every kind of model."""
    df = _frame(X, 0)
    y_cat = Y_REG + (df["sector"] == "a").to_numpy()
    common = dict(max_iter=15, random_state=0)
    era = dict(split_type="era", boltzmann_alpha=-np.inf)
    return [
        (
            "regressor",
            HistGradientBoostingRegressor(**common, **era).fit(X, Y_REG, eras=ERAS),
            X_NEW,
        ),
        (
            "binary",
            HistGradientBoostingClassifier(**common, split_type="directional").fit(
                X, Y_BIN, eras=ERAS
            ),
            X_NEW,
        ),
        (
            "multiclass",
            HistGradientBoostingClassifier(**common, **era).fit(X, Y_MULTI, eras=ERAS),
            X_NEW,
        ),
        (
            "categorical",
            HistGradientBoostingRegressor(
                **common, scoring="r2", early_stopping=True
            ).fit(df, y_cat, eras=ERAS),
            _frame(X_NEW, 1),
        ),
        (
            "forest-regressor",
            InvariantForestRegressor(
                n_estimators=5, irf_penalty=1.0, random_state=0
            ).fit(X, Y_REG, eras=ERAS),
            X_NEW,
        ),
        (
            "forest-classifier",
            InvariantForestClassifier(n_estimators=5, random_state=0).fit(
                X, Y_BIN, eras=ERAS
            ),
            X_NEW,
        ),
        (
            "robust-tree",
            RobustTreeClassifier(max_depth=1, budget=2.0).fit(
                np.round(X[:80] * 2), Y_BIN[:80]
            ),
            np.round(X_NEW * 2),
        ),
    ]


MODELS = _fitted()


def _outputs(est, Xp):
    out = [est.predict(Xp)]
    for method in ("predict_proba", "decision_function"):
        if hasattr(est, method):
            out.append(getattr(est, method)(Xp))
    return out


@pytest.mark.parametrize("name, est, Xp", MODELS, ids=[m[0] for m in MODELS])
def test_round_trip_predicts_bit_identically(name, est, Xp, tmp_path):
    path = tmp_path / "model.skops"
    save_model(est, path, metadata={"features": ["a", "b"], "note": None})
    loaded, meta = load_model(path, return_metadata=True)
    assert type(loaded) is type(est)
    assert meta == {"features": ["a", "b"], "note": None}
    assert loaded.get_params() == est.get_params()
    for a, b in zip(_outputs(loaded, Xp), _outputs(est, Xp)):
        np.testing.assert_array_equal(a, b)
    # pickle keeps working, as for any scikit-learn estimator
    for a, b in zip(_outputs(pickle.loads(pickle.dumps(est)), Xp), _outputs(est, Xp)):
        np.testing.assert_array_equal(a, b)


def test_saved_model_continues_warm_start(tmp_path):
    est = HistGradientBoostingRegressor(max_iter=10, random_state=0)
    est.fit(X, Y_REG, eras=ERAS)
    save_model(est, tmp_path / "m.skops")
    loaded = load_model(tmp_path / "m.skops")
    loaded.set_params(max_iter=20, warm_start=True).fit(X, Y_REG, eras=ERAS)
    ref = HistGradientBoostingRegressor(max_iter=20, random_state=0)
    ref.fit(X, Y_REG, eras=ERAS)
    np.testing.assert_array_equal(loaded.predict(X_NEW), ref.predict(X_NEW))


class Marker:
    """An object whose construction or unpickling would leave a file behind."""

    path = None

    def __init__(self):
        open(Marker.path, "w").close()

    def __setstate__(self, state):
        open(Marker.path, "w").close()

    def __reduce__(self):
        return (open, (Marker.path, "w"))


def test_a_pickle_is_never_unpickled(tmp_path):
    Marker.path = str(tmp_path / "ran")
    model = tmp_path / "model.pkl"
    model.write_bytes(pickle.dumps(Marker.__new__(Marker)))
    assert not os.path.exists(Marker.path)
    with pytest.raises(ModelFileError, match="pickle and joblib files are never"):
        load_model(model)
    assert not os.path.exists(Marker.path)


def test_unlisted_types_are_refused_before_any_object_is_built(tmp_path):
    Marker.path = str(tmp_path / "ran")
    path = tmp_path / "model.skops"
    est = HistGradientBoostingRegressor(max_iter=2).fit(X, Y_REG)
    bundle = {"format": "eraboost-model", "version": 1, "estimator": est}
    bundle["metadata"] = {"payload": Marker.__new__(Marker), "call": os.system}
    skops.io.dump(bundle, path)
    with pytest.raises(ModelFileError, match="types that eraboost does not load") as e:
        load_model(path)
    assert "posix.system" in str(e.value) and "Marker" in str(e.value)
    assert not os.path.exists(Marker.path)


@pytest.mark.parametrize(
    "bundle, message",
    [
        ({"format": "eraboost-model", "version": 1}, "lacks 'estimator', 'metadata'"),
        ({"format": "eraboost-model", "version": 99}, "model format version 99"),
        ({"format": "other", "version": 1}, "not an eraboost model file"),
        (
            {"format": "eraboost-model", "version": 1, "estimator": 3, "metadata": {}},
            "not an eraboost estimator",
        ),
    ],
)
def test_malformed_model_files_give_clear_errors(bundle, message, tmp_path):
    path = tmp_path / "model.skops"
    skops.io.dump(bundle, path)
    with pytest.raises(ModelFileError, match=message):
        load_model(path)


def test_damaged_and_missing_files(tmp_path):
    with pytest.raises(ModelFileError, match="no such file"):
        load_model(tmp_path / "absent.skops")
    est = HistGradientBoostingRegressor(max_iter=2).fit(X, Y_REG)
    save_model(est, tmp_path / "m.skops")
    raw = (tmp_path / "m.skops").read_bytes()
    (tmp_path / "cut.skops").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ModelFileError, match="cannot read model"):
        load_model(tmp_path / "cut.skops")
    with pytest.raises(TypeError, match="saves eraboost estimators"):
        save_model(object(), tmp_path / "x.skops")


def test_a_failed_save_keeps_the_previous_model(tmp_path, monkeypatch):
    path = tmp_path / "model.skops"
    good = HistGradientBoostingRegressor(max_iter=5, random_state=0).fit(X, Y_REG)
    save_model(good, path)
    before = path.read_bytes()

    def disk_full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic_module.os, "fsync", disk_full)
    bigger = HistGradientBoostingRegressor(max_iter=50, random_state=0).fit(X, Y_REG)
    with pytest.raises(OSError, match="No space left"):
        save_model(bigger, path)
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["model.skops"]  # no temporary file left


def test_atomic_write_permissions_and_links(tmp_path):
    mask = os.umask(0o022)
    try:
        new = tmp_path / "new.txt"
        with atomic_write(new, "w") as f:
            f.write("x")
        assert stat.S_IMODE(new.stat().st_mode) == 0o644
        old = tmp_path / "old.txt"
        old.write_text("old")
        old.chmod(0o600)
        link = tmp_path / "link.txt"
        link.symlink_to(old)
        with atomic_write(link, "w") as f:
            f.write("new")
        assert link.is_symlink() and old.read_text() == "new"
        assert stat.S_IMODE(old.stat().st_mode) == 0o600
        with (
            pytest.raises(IsADirectoryError, match="it is a folder"),
            atomic_write(tmp_path, "w") as f,
        ):
            f.write("x")
    finally:
        os.umask(mask)


def test_atomic_write_never_replaces_or_deletes_a_special_file(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    with atomic_write(fifo, "wb") as f:
        f.write(b"through the pipe")
    reader.join(timeout=30)
    assert received == [b"through the pipe"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)

    # a failure while writing into it leaves it in place too
    reader = threading.Thread(target=lambda: fifo.read_bytes())
    reader.start()
    with (
        pytest.raises(RuntimeError, match="writer failed"),
        atomic_write(fifo, "wb") as f,
    ):
        f.write(b"part")
        raise RuntimeError("writer failed")
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert os.listdir(tmp_path) == ["pipe"]


# -- model files from elsewhere: checked on load (issue 28) ----------------------
MODEL = {name: (est, Xp) for name, est, Xp in MODELS}


def _dump_edited(name, edit, path):
    """Write model ``name`` to ``path`` as a model file, edited by ``edit``
    (a function of the estimator's copy), without save_model's checks."""
    est = persistence._storable(copy.deepcopy(MODEL[name][0]))
    edit(est)
    bundle = {
        "format": "eraboost-model",
        "version": 1,
        "versions": persistence._versions(),
        "estimator": est,
        "metadata": {},
    }
    skops.io.dump(bundle, path)


def _tree(est, i=0):
    return est._predictors[i][0] if hasattr(est, "_predictors") else est.estimators_[i]


def _set(field, node, value, tree=0):
    def edit(est):
        _tree(est, tree).nodes[field][node] = value

    return edit


def _cycle(est):
    # the regressor's first tree: 0 -> 1 -> 2 -> 3 -> (4, 5); 3 -> 1 closes
    # a loop
    nodes = _tree(est).nodes
    assert list(nodes["left"][:4]) == [1, 2, 3, 4] and nodes["is_leaf"][4]
    nodes["left"][3] = 1


def _detached_cycle(est):
    # node 3 becomes its own child and node 2 takes node 5 instead of node 3:
    # every node but the root still has one parent, but 3 and 4 hang in a
    # loop that the root does not reach
    nodes = _tree(est).nodes
    assert list(nodes["left"][:4]) == [1, 2, 3, 4] and nodes["right"][3] == 5
    nodes["left"][2] = 5
    nodes["right"][3] = 3
    nodes["depth"][5] = nodes["depth"][2] + 1


def _setattr(attr, value):
    def edit(est):
        setattr(est, attr, value)

    return edit


def _delattr(attr):
    def edit(est):
        delattr(est, attr)

    return edit


def _set_array(attr, transform):
    def edit(est):
        setattr(est, attr, transform(getattr(est, attr)))

    return edit


def _edit_tree_attr(attr, transform, tree=0):
    def edit(est):
        t = _tree(est, tree)
        setattr(t, attr, transform(getattr(t, attr)))

    return edit


EDITS = [
    # (model, what, edit, message)
    ("categorical", "child 1e9", _set("left", 0, 10**9), "child index 1000000000"),
    ("categorical", "negative feature", _set("feature", 0, -1), "feature -1"),
    ("categorical", "feature 1e6", _set("feature", 3, 10**6), "feature 1000000"),
    ("regressor", "left/right cycle", _cycle, "node 1 is the child of 2 nodes"),
    ("regressor", "detached cycle", _detached_cycle, "2 of its .* not reached"),
    ("regressor", "root as a child", _set("right", 1, 0), "root is the child"),
    ("regressor", "nan leaf", _set("value", 4, np.nan), "leaf 4 has the value nan"),
    ("regressor", "inf leaf", _set("value", 4, np.inf), "leaf 4 has the value inf"),
    (
        "regressor",
        "empty nodes",
        _edit_tree_attr("nodes", lambda n: n[:0]),
        "nodes is empty",
    ),
    (
        "regressor",
        "nodes of float64",
        _edit_tree_attr("nodes", lambda n: n["value"].copy()),
        "nodes has dtype float64",
    ),
    (
        "regressor",
        "nodes of another layout",
        _edit_tree_attr("nodes", lambda n: n.astype(n.dtype.descr[::-1])),
        "nodes has dtype",
    ),
    (
        "regressor",
        "nodes cut short",
        _edit_tree_attr("nodes", lambda n: n[:5]),
        "child index",
    ),
    ("regressor", "leaf with children", _set("left", 4, 1), "leaf but has children"),
    ("regressor", "is_leaf 7", _set("is_leaf", 4, 7), "is_leaf=7"),
    ("regressor", "missing _predictors", _delattr("_predictors"), "_predictors"),
    (
        "regressor",
        "missing _baseline_prediction",
        _delattr("_baseline_prediction"),
        "_baseline_prediction is missing",
    ),
    (
        "regressor",
        "baseline of float32",
        _set_array("_baseline_prediction", lambda b: b.astype(np.float32)),
        "_baseline_prediction has dtype float32",
    ),
    (
        "regressor",
        "baseline nan",
        _set_array("_baseline_prediction", lambda b: b * np.nan),
        "_baseline_prediction is not finite",
    ),
    (
        "multiclass",
        "a tree missing from an iteration",
        _set_array("_predictors", lambda p: [p[0][:2], *p[1:]]),
        r"_predictors\[0\] has 2 items; expected 4",
    ),
    (
        "multiclass",
        "classes_ too short",
        _set_array("classes_", lambda c: c[:2]),
        "classes_ has 2 classes",
    ),
    ("regressor", "n_features_in_ -1", _setattr("n_features_in_", -1), "at least 1"),
    (
        "regressor",
        "predictor of another type",
        _set_array("_predictors", lambda p: [["tree"], *p[1:]]),
        "must be a TreePredictor, not str",
    ),
    (
        "regressor",
        "missing_bin_ too short",
        lambda est: setattr(
            est._bin_mapper, "missing_bin_", est._bin_mapper.missing_bin_[:2]
        ),
        "missing_bin_ has shape",
    ),
    (
        "categorical",
        "bitset beyond the bitsets",
        _set("bitset_idx", 2, 10**6),
        "uses bitset 1000000",
    ),
    (
        "categorical",
        "categories beyond the bitset",
        _set("threshold", 2, 1e6),
        "known categories",
    ),
    (
        "categorical",
        "bitsets of 4 words",
        _edit_tree_attr("raw_left_cat_bitsets", lambda b: b[:, :4].copy()),
        "raw_left_cat_bitsets has shape",
    ),
    (
        "categorical",
        "categorical split on a numeric feature",
        _set("is_categorical", 0, 1),
        "categorical split on the numeric feature",
    ),
    ("categorical", "no encoder", _setattr("_preprocessor", None), "_preprocessor"),
    (
        "forest-regressor",
        "forest child 1e9",
        _set("right", 0, 10**9, tree=2),
        r"estimators_\[2\]: node 0 has the child index",
    ),
    ("forest-regressor", "forest without trees", _setattr("estimators_", []), "empty"),
    (
        "forest-classifier",
        "forest missing estimators_",
        _delattr("estimators_"),
        "estimators_",
    ),
    (
        "forest-classifier",
        "forest feature 1e6",
        _set("feature", 0, 10**6, tree=1),
        "feature 1000000",
    ),
    (
        "robust-tree",
        "robust feature 1e6",
        _set_array("tree_features_", lambda f: f + 10**6),
        "tree_features_ holds a feature outside",
    ),
    (
        "robust-tree",
        "robust leaf class 5",
        _set_array("leaf_values_", lambda v: v + 5),
        "leaf_values_ holds a class outside",
    ),
    (
        "robust-tree",
        "robust thresholds cut",
        _set_array("tree_thresholds_", lambda t: t[:0]),
        "tree_thresholds_ has shape",
    ),
    ("robust-tree", "robust missing leaf_proba_", _delattr("leaf_proba_"), "leaf_pro"),
]


@pytest.mark.parametrize(
    "name, edit, message", [e[::2] + e[3:] for e in EDITS], ids=[e[1] for e in EDITS]
)
def test_edited_model_files_are_refused(name, edit, message, tmp_path):
    # before these checks, several such files loaded, and predict then
    # crashed (segmentation fault), looped forever or read out of bounds
    path = tmp_path / "edited.skops"
    _dump_edited(name, edit, path)
    with pytest.raises(ModelFileError, match=message) as e:
        load_model(path)
    assert str(e.value).startswith(f"cannot read model {path}: unsound model: ")


@pytest.mark.parametrize("name", list(MODEL))
def test_unedited_model_files_pass_the_checks(name, tmp_path):
    path = tmp_path / "same.skops"
    _dump_edited(name, lambda est: None, path)
    est, Xp = MODEL[name]
    for a, b in zip(_outputs(load_model(path), Xp), _outputs(est, Xp)):
        np.testing.assert_array_equal(a, b)


def _drop_numeric_columns(est):
    # the encoder then gives the categorical column only: the trees, which
    # index 6 columns, would read beyond the rows of the encoded matrix
    name, _, columns = est._preprocessor.transformers_[1]
    est._preprocessor.transformers_[1] = (name, "drop", columns)


def test_an_encoder_giving_too_few_columns_is_refused_at_predict(tmp_path):
    path = tmp_path / "edited.skops"
    _dump_edited("categorical", _drop_numeric_columns, path)
    loaded = load_model(path)
    with pytest.raises(ValueError, match="gave 1 columns; the model expects 6"):
        loaded.predict(MODEL["categorical"][1])


def test_damaged_and_edited_files_never_crash_hang_or_change_predictions(tmp_path):
    # a few hundred seeded mutations of four model files (flipped bytes,
    # truncations, changed or removed values inside the members), all loaded
    # in one child process: a crash or a hang fails the test, not pytest
    args = []
    for name in ("categorical", "multiclass", "forest-classifier", "robust-tree"):
        est, Xp = MODEL[name]
        save_model(est, tmp_path / f"{name}.skops")
        with open(tmp_path / f"{name}.pkl", "wb") as f:
            pickle.dump(Xp[:50], f)
        args += [str(tmp_path / f"{name}.skops"), str(tmp_path / f"{name}.pkl")]
    script = Path(__file__).with_name("model_mutations.py")
    run = subprocess.run(
        [sys.executable, str(script), "0", "90", *args],
        capture_output=True,
        text=True,
        timeout=120,
        # one thread: predicting 50 rows needs no more, and waking threads
        # for every tree is slow on a busy machine
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout.splitlines()[-1])
    assert report["failures"] == [], "\n".join(report["failures"][:10])
    counts = report["counts"]
    assert sum(counts.values()) == 360
    # both outcomes occur: the test exercises the checks and the loading
    assert sum(v for k, v in counts.items() if k.endswith("refused")) > 100
    assert sum(v for k, v in counts.items() if not k.endswith("refused")) > 10
    print(counts)


# -- versions (issue 28, item 3) -------------------------------------------------
def _bundle(path):
    """The dict a model file holds, read with skops directly."""
    return skops.io.load(path, trusted=skops.io.get_untrusted_types(file=path))


def test_the_file_records_the_versions_that_wrote_it(tmp_path):
    import sklearn

    import eraboost

    path = tmp_path / "m.skops"
    save_model(MODEL["regressor"][0], path)
    assert _bundle(path)["versions"] == {
        "eraboost": eraboost.__version__,
        "scikit-learn": sklearn.__version__,
        "numpy": np.__version__,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelVersionWarning)
        load_model(path)  # the same versions: no warning


def test_a_file_of_other_versions_warns_naming_both(tmp_path):
    import eraboost

    path = tmp_path / "m.skops"
    save_model(MODEL["regressor"][0], path)
    bundle = _bundle(path)
    bundle["versions"].update({"eraboost": "0.0.7", "numpy": "1.26.4"})
    skops.io.dump(bundle, path)
    with pytest.warns(ModelVersionWarning) as record:
        loaded = load_model(path)
    message = str(record[0].message)
    assert "written by eraboost 0.0.7, numpy 1.26.4" in message
    assert f"this is eraboost {eraboost.__version__}, numpy {np.__version__}" in (
        message
    )
    assert "scikit-learn" not in message  # the same version
    assert issubclass(ModelVersionWarning, UserWarning)
    np.testing.assert_array_equal(
        loaded.predict(X_NEW), MODEL["regressor"][0].predict(X_NEW)
    )


def test_a_file_without_version_records_loads_with_a_warning(tmp_path):
    # files written by eraboost before version records (and checksums)
    path = tmp_path / "old.skops"
    bundle = _bundle(_saved_file(tmp_path))
    del bundle["versions"]
    skops.io.dump(bundle, path)
    with pytest.warns(ModelVersionWarning, match="does not record which versions"):
        loaded = load_model(path)
    np.testing.assert_array_equal(
        loaded.predict(X_NEW), MODEL["regressor"][0].predict(X_NEW)
    )


def test_a_future_format_is_refused_naming_its_writer(tmp_path):
    path = tmp_path / "future.skops"
    bundle = _bundle(_saved_file(tmp_path))
    bundle["version"] = 2
    bundle["versions"]["eraboost"] = "7.0"
    skops.io.dump(bundle, path)
    with pytest.raises(
        ModelFileError,
        match=r"format version 2 \(written by eraboost 7.0\); this eraboost "
        r"reads versions 1 to 1: a newer eraboost wrote it \(upgrade eraboost\)",
    ):
        load_model(path)
    for version in (True, 1.0, "1"):
        bundle["version"] = version
        skops.io.dump(bundle, path)
        with pytest.raises(ModelFileError, match="model format version"):
            load_model(path)


def test_a_damaged_versions_record_is_refused(tmp_path):
    path = tmp_path / "m.skops"
    bundle = _bundle(_saved_file(tmp_path))
    bundle["versions"] = {"eraboost": 1}
    skops.io.dump(bundle, path)
    with pytest.raises(ModelFileError, match="its 'versions' record"):
        load_model(path)


def test_contents_that_do_not_match_the_checksum_are_refused(tmp_path):
    import zipfile

    path = _saved_file(tmp_path)
    with zipfile.ZipFile(path) as archive:
        comment = archive.comment
        contents = {name: archive.read(name) for name in archive.namelist()}
    assert comment.startswith(b"eraboost-sha256:")
    # a value changed inside a member, the zip rewritten with its comment
    schema = json.loads(contents["schema.json"])
    schema["content"]["metadata"]["content"]["note"] = {
        "__class__": "str",
        "__module__": "builtins",
        "__loader__": "JsonNode",
        "content": '"edited"',
        "is_json": True,
    }
    contents["schema.json"] = json.dumps(schema).encode()
    with zipfile.ZipFile(path, "w") as archive:
        for name, content in contents.items():
            archive.writestr(name, content)
        archive.comment = comment
    with pytest.raises(ModelFileError, match="do not match the checksum"):
        load_model(path)


# -- files written before the layout of issue 29 ------------------------------
# the modules whose classes a model file names, before and after the engine
# and the robust tree became subpackages
_OLD_MODULES = {
    "eraboost._engine.binning": "eraboost.binning",
    "eraboost._engine.predictor": "eraboost.predictor",
    "eraboost.robust._tree": "eraboost.robust",
}


def _as_written_before_the_move(path, edit=None):
    """Rewrite a model file as the eraboost of before the move wrote it: its
    schema names the old module paths, and the checksum is of the rewritten
    members (as that eraboost computed it)."""
    import zipfile

    with zipfile.ZipFile(path) as archive:
        contents = {name: archive.read(name) for name in archive.namelist()}
    schema = contents["schema.json"].decode()
    for new, old in _OLD_MODULES.items():
        schema = schema.replace(f'"__module__": "{new}"', f'"__module__": "{old}"')
    assert "eraboost._engine" not in schema and "robust._tree" not in schema
    if edit is not None:
        schema = edit(schema)
    contents["schema.json"] = schema.encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in contents.items():
            archive.writestr(name, content)
    path.write_bytes(persistence._with_checksum(buffer.getvalue()))


@pytest.mark.parametrize("name, est, Xp", MODELS, ids=[m[0] for m in MODELS])
def test_files_written_before_the_move_load_and_predict_the_same(
    name, est, Xp, tmp_path
):
    path = tmp_path / "old.skops"
    save_model(est, path, metadata={"note": "before"})
    _as_written_before_the_move(path)
    names = set(skops.io.get_untrusted_types(file=path))
    assert names & set(persistence.LEGACY_TYPES), names
    assert not names & set(persistence.LEGACY_TYPES.values())
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelVersionWarning)
        loaded, meta = load_model(path, return_metadata=True)
    assert type(loaded) is type(est) and meta == {"note": "before"}
    for a, b in zip(_outputs(loaded, Xp), _outputs(est, Xp)):
        np.testing.assert_array_equal(a, b)
    # without the checksum (files from before checksums) too
    import zipfile

    with zipfile.ZipFile(path, "a") as archive:
        archive.comment = b""
    np.testing.assert_array_equal(load_model(path).predict(Xp), est.predict(Xp))


def test_only_the_exact_old_names_are_renamed(tmp_path):
    """Another class of an old module path, or an old name of a module
    path that never held the class, stays refused."""
    path = tmp_path / "old.skops"
    for edit, refused in [
        (
            lambda s: s.replace('"__class__": "BinMapper"', '"__class__": "Evil"'),
            "eraboost.binning.Evil",
        ),
        (
            lambda s: s.replace(
                '"__module__": "eraboost.predictor"', '"__module__": "eraboost.binning"'
            ),
            "eraboost.binning.TreePredictor",
        ),
    ]:
        save_model(MODEL["regressor"][0], path)
        _as_written_before_the_move(path, edit)
        with pytest.raises(ModelFileError, match=rf"does not load \({refused}"):
            load_model(path)


def test_the_renaming_leaves_current_and_unreadable_files_alone(tmp_path):
    save_model(MODEL["regressor"][0], tmp_path / "m.skops")
    data = (tmp_path / "m.skops").read_bytes()
    assert persistence._renamed_legacy_types(data) is data
    for junk in (b"", b"PK\x03\x04 not a zip", data[: len(data) // 2]):
        assert persistence._renamed_legacy_types(junk) is junk


def _saved_file(folder):
    """The regressor, saved by save_model in ``folder``."""
    path = folder / "saved.skops"
    save_model(MODEL["regressor"][0], path, metadata={"note": "original"})
    return path


# -- save accepts only what load accepts (issue 28, item 4) ----------------------
ERA_X = RNG.normal(size=(600, 3))
ERA_Y = ERA_X[:, 0] + RNG.normal(size=600)
ERA_ERAS = np.repeat(np.arange(12), 50)


def _fit_scored(scoring):
    return HistGradientBoostingRegressor(
        max_iter=5, scoring=scoring, early_stopping=True, random_state=0
    ).fit(ERA_X, ERA_Y, eras=ERA_ERAS)


def test_a_model_fitted_with_an_era_scorer_saves_and_loads(tmp_path):
    est = _fit_scored(make_era_scorer("pearson", aggregate="min"))
    save_model(est, tmp_path / "m.skops")
    loaded = load_model(tmp_path / "m.skops")
    assert repr(loaded.scoring) == repr(est.scoring)
    np.testing.assert_array_equal(loaded.predict(ERA_X), est.predict(ERA_X))
    # the loaded model continues with the same scorer
    loaded.set_params(max_iter=8, warm_start=True).fit(ERA_X, ERA_Y, eras=ERA_ERAS)


def _unloadable():
    est = _fit_scored(make_era_scorer("pearson"))
    return [
        (
            "make_scorer",
            _fit_scored(make_scorer(r2_score)),
            None,
            r"the parameter scoring holds sklearn\.metrics\._scorer\._Scorer.*"
            r"set scoring to a string or to eraboost\.make_era_scorer",
        ),
        (
            "era scorer of a function",
            _fit_scored(make_era_scorer(lambda a, b: 0.0)),
            None,
            r"the parameter scoring \(scoring\.metric\) holds .*<lambda>",
        ),
        (
            "lambda in metadata",
            est,
            {"x": lambda z: z},
            r"metadata\['x'\] holds .*<lambda>.*; remove it",
        ),
        (
            "function deep in metadata",
            est,
            {"a": [1, {"b": np.corrcoef}]},
            r"metadata\['a'\]\[1\]\['b'\] holds numpy\.corrcoef.*; remove it",
        ),
        (
            "object in metadata",
            est,
            {"when": Marker.__new__(Marker)},
            r"metadata\['when'\] holds test_persistence\.Marker.*; remove it",
        ),
    ]


@pytest.mark.parametrize("what, est, metadata, message", _unloadable())
def test_save_refuses_what_load_would_refuse_and_writes_nothing(
    what, est, metadata, message, tmp_path
):
    path = tmp_path / "model.skops"
    path.write_bytes(b"the previous model")
    with pytest.raises(ModelFileError, match=message) as e:
        save_model(est, path, metadata=metadata)
    assert str(e.value).startswith(f"cannot save this model to {path}: ")
    assert path.read_bytes() == b"the previous model"
    assert os.listdir(tmp_path) == ["model.skops"]


def test_save_refuses_an_unsound_model(tmp_path):
    est = copy.deepcopy(MODEL["regressor"][0])
    est._predictors[0][0].nodes["value"][4] = np.nan
    with pytest.raises(ModelFileError, match="leaf 4 has the value nan"):
        save_model(est, tmp_path / "m.skops")
    assert os.listdir(tmp_path) == []
