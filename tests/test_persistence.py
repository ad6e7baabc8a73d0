"""Model files (save_model / load_model) and atomic writes (_atomic)."""

import copy
import errno
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
from eraboost.persistence import convert_model
from tests.model_mutations import read_model_file, write_model_file

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
                n_estimators=5,
                irf_penalty=1.0,
                irf_variance="difference",
                random_state=0,
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
    est = copy.deepcopy(MODEL[name][0])
    edit(est)
    Path(path).write_bytes(persistence._model_bytes(est, {}, path, check=False))


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


def _chain(n_nodes):
    """An edit making the first tree a chain of ``n_nodes`` nodes (each split
    has a leaf on the right): a valid tree, but larger than fit can grow."""

    def edit(est):
        tree = _tree(est)
        nodes = np.zeros(n_nodes, dtype=tree.nodes.dtype)
        splits = np.arange(0, n_nodes - 1, 2)
        nodes["left"][splits] = splits + 2
        nodes["right"][splits] = splits + 1
        nodes["depth"] = (np.arange(n_nodes) + 1) // 2
        nodes["is_leaf"][:] = 1
        nodes["is_leaf"][splits] = 0
        nodes["threshold"][splits] = 0.0
        nodes["bin_threshold"][splits] = 1
        tree.nodes = nodes
        for stage in est._predictors[1:]:  # single leaves: the total stays small
            stage[0].nodes = np.zeros(1, dtype=nodes.dtype)
            stage[0].nodes["is_leaf"] = 1

    return edit


def _leaves_summing_to_inf(est):
    # every leaf 1e308: finite, but two trees' leaves add up to inf
    for stage in est._predictors[:2]:
        nodes = stage[0].nodes
        nodes["value"][nodes["is_leaf"] == 1] = 1e308


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
        "tree 0 has 0 nodes",
    ),
    (
        "regressor",
        "nodes cut short",
        _edit_tree_attr("nodes", lambda n: n[:5]),
        "child index",
    ),
    ("regressor", "leaf with children", _set("left", 4, 1), "leaf but has children"),
    ("regressor", "is_leaf 7", _set("is_leaf", 4, 7), "is_leaf=7"),
    (
        "regressor",
        "baseline nan",
        _set_array("_baseline_prediction", lambda b: b * np.nan),
        "_baseline_prediction is not finite",
    ),
    (
        "regressor",
        "finite leaves summing to inf",
        _leaves_summing_to_inf,
        "can sum to a non-finite prediction",
    ),
    (
        "regressor",
        "a chain larger than fit grows",
        _chain(101),
        # max_leaf_nodes=31: at most 61 nodes
        "tree 0 has 101 nodes; the model's parameters let fit grow between 1 and 61",
    ),
    (
        "multiclass",
        "a tree missing from an iteration",
        _set_array("_predictors", lambda p: [p[0][:2], *p[1:]]),
        r"the array tree_n_nodes has shape",
    ),
    (
        "multiclass",
        "classes_ too short",
        _set_array("classes_", lambda c: c[:2]),
        r"n_trees_per_iteration_ must be an integer in \[1, 1\], not 4",
    ),
    (
        "binary",
        "one class",
        _set_array("classes_", lambda c: c[:1]),
        "classes_ has 1 class; a classifier has at least 2",
    ),
    ("regressor", "n_features_in_ -1", _setattr("n_features_in_", -1), "n_features"),
    (
        "regressor",
        "a negative seed",
        _setattr("_random_seed", -1),
        r"random_seed must be an integer in \[0, 4294967295\]",
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
        "categorical node 2 has 1000000.0 known categories",
    ),
    (
        "categorical",
        "categorical split on a numeric feature",
        _set("is_categorical", 0, 1),
        "categorical split on the numeric feature",
    ),
    ("categorical", "no encoder", _setattr("_preprocessor", None), "categories must"),
    (
        "forest-regressor",
        "forest child 1e9",
        _set("right", 0, 10**9, tree=2),
        r"estimators_\[2\]: node 0 has the child index",
    ),
    (
        "forest-regressor",
        "forest without trees",
        _setattr("estimators_", []),
        "tree_n_nodes has shape",
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
        "tree_thresholds has shape",
    ),
    (
        "robust-tree",
        "robust leaf_proba_ 3",
        _set_array("leaf_proba_", lambda p: p * 0 + 3.0),
        "leaf_proba_ must hold class shares",
    ),
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
    assert str(e.value).startswith(f"cannot read model {path}: ")
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("name", list(MODEL))
def test_unedited_model_files_pass_the_checks(name, tmp_path):
    path = tmp_path / "same.skops"
    _dump_edited(name, lambda est: None, path)
    est, Xp = MODEL[name]
    for a, b in zip(_outputs(load_model(path), Xp), _outputs(est, Xp)):
        np.testing.assert_array_equal(a, b)


def _mutation_campaign(tmp_path, names, seed, n):
    """Run model_mutations.py on the models ``names``: its JSON report."""
    args = []
    for name in names:
        est, Xp = MODEL[name]
        save_model(est, tmp_path / f"{name}.skops")
        with open(tmp_path / f"{name}.pkl", "wb") as f:
            pickle.dump(Xp[:50], f)
        args += [str(tmp_path / f"{name}.skops"), str(tmp_path / f"{name}.pkl")]
    script = Path(__file__).with_name("model_mutations.py")
    run = subprocess.run(
        [sys.executable, str(script), str(seed), str(n), *args],
        capture_output=True,
        text=True,
        timeout=180,
        # one thread: predicting 50 rows needs no more, and waking threads
        # for every tree is slow on a busy machine
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout.splitlines()[-1])
    assert report["failures"] == [], "\n".join(report["failures"][:10])
    return report["counts"]


def test_damaged_and_edited_files_never_crash_hang_or_change_predictions(tmp_path):
    # a few hundred seeded mutations of four model files (flipped bytes,
    # truncations, changed or removed values inside the members, edits with
    # a new checksum), all loaded in one child process: a crash or a hang
    # fails the test, not pytest
    counts = _mutation_campaign(
        tmp_path,
        ["categorical", "multiclass", "forest-classifier", "robust-tree"],
        0,
        90,
    )
    assert sum(counts.values()) == 360
    # both outcomes occur: the test exercises the checks and the loading
    assert sum(v for k, v in counts.items() if k.endswith("refused")) > 100
    assert sum(v for k, v in counts.items() if not k.endswith("refused")) > 10
    print(counts)


# -- versions (issue 28, item 3) -------------------------------------------------
def test_the_file_records_the_versions_that_wrote_it(tmp_path):
    import sklearn

    import eraboost

    path = tmp_path / "m.skops"
    save_model(MODEL["regressor"][0], path)
    doc, _, _ = read_model_file(path)
    assert doc["versions"] == {
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
    doc, members, _ = read_model_file(path)
    doc["versions"].update({"eraboost": "0.0.7", "numpy": "1.26.4"})
    write_model_file(path, doc, members)
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


def test_a_future_format_is_refused_naming_its_writer(tmp_path):
    path = _saved_file(tmp_path)
    doc, members, _ = read_model_file(path)
    doc["version"] = 3
    doc["versions"]["eraboost"] = "7.0"
    write_model_file(path, doc, members)
    with pytest.raises(
        ModelFileError,
        match=r"format version 3 \(written by eraboost 7.0\); this eraboost "
        r"reads version 2: a newer eraboost wrote it \(upgrade eraboost\)",
    ):
        load_model(path)
    for version in (True, 2.0, "2", 0, None, -1):
        doc["version"] = version
        write_model_file(path, doc, members)
        with pytest.raises(ModelFileError, match="is not a version eraboost wrote"):
            load_model(path)


def test_a_damaged_versions_record_is_refused(tmp_path):
    path = _saved_file(tmp_path)
    doc, members, _ = read_model_file(path)
    doc["versions"] = {"eraboost": 1}
    write_model_file(path, doc, members)
    with pytest.raises(ModelFileError, match="its 'versions' record"):
        load_model(path)


def test_contents_that_do_not_match_the_checksum_are_refused(tmp_path):
    path = _saved_file(tmp_path)
    doc, members, comment = read_model_file(path)
    assert comment.startswith(b"eraboost-sha256:")
    doc["metadata"]["note"] = "edited"
    write_model_file(path, doc, members, comment=comment)
    with pytest.raises(ModelFileError, match="do not match the checksum"):
        load_model(path)
    write_model_file(path, doc, members, comment=b"")
    with pytest.raises(ModelFileError, match="it has no checksum"):
        load_model(path)


# -- format 1 files (skops archives): converted, never loaded --------------------
def _format_1_file(est, path, metadata=None, edit=None, versions=True):
    """Write ``est`` as eraboost wrote model files before format 2: a
    skops archive of the estimator object."""
    est = copy.deepcopy(est)
    vars(est).pop("_scorer", None)
    if edit is not None:
        edit(est)
    bundle = {"format": "eraboost-model", "version": 1, "estimator": est}
    if versions:
        bundle["versions"] = persistence._versions()
    bundle["metadata"] = {} if metadata is None else metadata
    skops.io.dump(bundle, path)
    return path


def test_format_1_files_are_refused_saying_how_to_convert(tmp_path):
    path = _format_1_file(MODEL["regressor"][0], tmp_path / "old.skops")
    with pytest.raises(ModelFileError, match=r"format 1 .*convert_model\(OLD, NEW\)"):
        load_model(path)


@pytest.mark.parametrize("name, est, Xp", MODELS, ids=[m[0] for m in MODELS])
def test_format_1_files_convert_and_predict_the_same(name, est, Xp, tmp_path):
    old = _format_1_file(est, tmp_path / "old.skops", {"note": "before"})
    convert_model(old, tmp_path / "new.skops")
    loaded, meta = load_model(tmp_path / "new.skops", return_metadata=True)
    assert type(loaded) is type(est) and meta == {"note": "before"}
    for a, b in zip(_outputs(loaded, Xp), _outputs(est, Xp)):
        np.testing.assert_array_equal(a, b)


def _attacked(est):
    # attributes a format 1 file could set: predict's input checks off, a
    # method shadowed by a ufunc, the classifier's loss replaced
    from sklearn._loss.loss import HalfSquaredError

    est._in_fit = True
    est.predict = np.negative
    est._loss = HalfSquaredError()


def test_conversion_keeps_only_the_declared_fields(tmp_path):
    est, Xp = MODEL["binary"]
    old = _format_1_file(est, tmp_path / "old.skops", edit=_attacked)
    convert_model(old, tmp_path / "new.skops")
    loaded = load_model(tmp_path / "new.skops")
    assert "_in_fit" not in vars(loaded) and "predict" not in vars(loaded)
    for a, b in zip(_outputs(loaded, Xp), _outputs(est, Xp)):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="features"):
        loaded.predict(np.zeros((3, 1), dtype=np.uint8))


def test_conversion_builds_no_type_outside_the_allowlist(tmp_path):
    Marker.path = str(tmp_path / "ran")
    path = _format_1_file(
        MODEL["regressor"][0],
        tmp_path / "old.skops",
        {"payload": Marker.__new__(Marker), "call": os.system},
    )
    with pytest.raises(ModelFileError, match="types that eraboost does not load"):
        convert_model(path, tmp_path / "new.skops")
    assert not os.path.exists(Marker.path)
    assert not os.path.exists(tmp_path / "new.skops")


# the modules whose classes a format 1 file names, before and after the
# engine and the robust tree became subpackages (issue 29)
_OLD_MODULES = {
    "eraboost._engine.binning": "eraboost.binning",
    "eraboost._engine.predictor": "eraboost.predictor",
    "eraboost.robust._tree": "eraboost.robust",
}


def _as_written_before_the_move(path):
    """Rewrite a format 1 file as the eraboost of before the move wrote it:
    its schema names the old module paths."""
    import zipfile

    with zipfile.ZipFile(path) as archive:
        contents = {name: archive.read(name) for name in archive.namelist()}
    schema = contents["schema.json"].decode()
    for new, old in _OLD_MODULES.items():
        schema = schema.replace(f'"__module__": "{new}"', f'"__module__": "{old}"')
    assert "eraboost._engine" not in schema and "robust._tree" not in schema
    contents["schema.json"] = schema.encode()
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in contents.items():
            archive.writestr(name, content)


@pytest.mark.parametrize("name", ["categorical", "forest-regressor", "robust-tree"])
def test_format_1_files_written_before_the_move_convert(name, tmp_path):
    est, Xp = MODEL[name]
    old = _format_1_file(est, tmp_path / "old.skops", versions=False)
    _as_written_before_the_move(old)
    names = set(skops.io.get_untrusted_types(file=old))
    assert names & set(persistence.LEGACY_TYPES), names
    convert_model(old, tmp_path / "new.skops")
    loaded = load_model(tmp_path / "new.skops")
    for a, b in zip(_outputs(loaded, Xp), _outputs(est, Xp)):
        np.testing.assert_array_equal(a, b)


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
            r"metadata\['when'\] holds (tests\.)?test_persistence\.Marker.*; remove it",
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


# -- temporary files (issue 55, item 9) -------------------------------------------
def test_the_temporary_file_is_visible_beside_the_destination(tmp_path):
    seen = []
    with atomic_write(tmp_path / "model.skops", "wb") as f:
        f.write(b"x")
        seen = os.listdir(tmp_path)
    assert len(seen) == 1 and seen[0].startswith("model.skops.tmp-"), seen
    assert os.listdir(tmp_path) == ["model.skops"]


def test_a_missing_folder_is_named_not_the_temporary_file(tmp_path):
    target = tmp_path / "absent" / "out.csv"
    with pytest.raises(FileNotFoundError) as e, atomic_write(target, "w") as f:
        f.write("x")
    assert str(e.value) == (
        f"cannot write {target}: the folder {tmp_path / 'absent'} does not exist"
    )


_WRITER = """
import signal, sys, time
from eraboost._atomic import atomic_write
with atomic_write(sys.argv[1], "wb") as f:
    f.write(b"part")
    print("writing", flush=True)
    time.sleep(60)
"""


@pytest.mark.parametrize("previous", ["default", "handler"])
def test_sigterm_while_writing_removes_the_temporary_file(previous, tmp_path):
    target = tmp_path / "model.skops"
    target.write_bytes(b"the previous model")
    script = _WRITER
    if previous == "handler":
        # a program's own SIGTERM handler is restored, then called
        script = (
            "import signal, sys\n"
            "signal.signal(signal.SIGTERM, lambda s, f: sys.exit(7))\n" + script
        )
    child = subprocess.Popen(
        [sys.executable, "-c", script, str(target)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout.readline() == "writing\n"
    assert len(os.listdir(tmp_path)) == 2  # the temporary file is there
    child.terminate()
    child.wait(timeout=60)
    assert child.returncode == (-15 if previous == "default" else 7), (
        child.stderr.read()
    )
    assert os.listdir(tmp_path) == ["model.skops"]
    assert target.read_bytes() == b"the previous model"
