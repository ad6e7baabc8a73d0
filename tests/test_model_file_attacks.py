"""Model files crafted by an attacker: each with a valid checksum (issue 55).

Whoever edits a model file can write a new checksum: these files are what
such a person can make. Every one is refused by ``load_model`` with a
one-line ``ModelFileError``, or loads into a model whose outputs are sound
(finite, of the right shape) though chosen by the attacker. The first part
crafts each case of issue 55 by hand; the last runs seeded campaigns of
model_mutations.py over the fields, the arrays and the bytes of the files.
"""

import io
import json
import os
import pickle
import re
import subprocess
import sys
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest

from eraboost import ModelFileError, load_model, save_model
from tests.model_mutations import (
    ATTACKS,
    npy_bytes,
    read_model_file,
    set_array,
    set_trees,
    single_leaves,
    write_model_file,
)


@pytest.fixture(scope="module")
def saved(fitted_models, tmp_path_factory):
    """name -> (model.json, members) of each model saved by save_model."""
    folder = tmp_path_factory.mktemp("saved")
    out = {}
    for name, (est, _) in fitted_models.items():
        path = folder / f"{name}.skops"
        save_model(est, path, metadata={"features": ["a"]})
        doc, members, _ = read_model_file(path)
        out[name] = (doc, members)
    return out


def _crafted(saved, name, edit, path):
    """Write model ``name`` edited by ``edit(doc, members)``, with a valid
    checksum."""
    doc, members = saved[name]
    doc, members = json.loads(json.dumps(doc)), dict(members)
    edit(doc, members)
    write_model_file(path, doc, members)
    return path


def _refused(path, message):
    with pytest.raises(ModelFileError, match=message) as e:
        load_model(path)
    text = str(e.value)
    assert text.startswith(f"cannot read model {path}: ") and "\n" not in text
    return text


def _set(part, key, value):
    def edit(doc, members):
        doc[part][key] = value

    return edit


def _drop(part, key):
    def edit(doc, members):
        del doc[part][key]

    return edit


def _array(name, transform, shape=None):
    """Replace the array member ``name`` (and its declared shape)."""

    def edit(doc, members):
        array = np.load(io.BytesIO(members[f"{name}.npy"]), allow_pickle=False)
        array = transform(array.copy())
        members[f"{name}.npy"] = npy_bytes(array)
        doc["arrays"][name]["shape"] = list(array.shape if shape is None else shape)

    return edit


def _nodes(field, value, node=slice(None)):
    def transform(nodes):
        nodes[field][node] = value
        return nodes

    return _array("tree_nodes", transform)


def _pickled_baseline(doc, members):
    # a pickle inside a .npy of objects: never unpickled
    out = io.BytesIO()
    np.save(out, np.array([[print]], dtype=object), allow_pickle=True)
    members["baseline.npy"] = out.getvalue()


def _both(*edits):
    def edit(doc, members):
        for e in edits:
            e(doc, members)

    return edit


CASES = [
    # (issue item, model, edit, message)
    # 1 and 2: attributes outside the schema, whatever they would do
    ("1 _in_fit", "binary", _set("fitted", "_in_fit", True), "undeclared fields"),
    ("1 _in_fit param", "binary", _set("params", "_in_fit", True), "undeclared"),
    ("2 predict", "regressor", _set("fitted", "predict", "negative"), "undeclared"),
    ("2 _raw_predict", "regressor", _set("fitted", "_raw_predict", 1), "undeclared"),
    (
        "2 a property",
        "regressor",
        _set("fitted", "feature_importances_", [1.0] * 5),
        "undeclared fields \\('feature_importances_'\\)",
    ),
    ("3 _loss", "binary", _set("fitted", "_loss", "identity"), "undeclared"),
    (
        "3 loss object",
        "regressor",
        _set("params", "loss", {"loss": "x"}),
        "unknown kind",
    ),
    ("3 loss name", "regressor", _set("params", "loss", "binomial"), "invalid param"),
    (
        "3 leaf_proba_ 3",
        "robust-tree",
        _array("leaf_proba", lambda p: p * 0 + 3.0),
        "leaf_proba_ must hold class shares",
    ),
    # 4: the encoder is rebuilt from its categories, never read
    ("4 _preprocessor", "categorical", _set("fitted", "_preprocessor", {}), "undecl"),
    (
        "4 categories out of order",
        "categorical",
        lambda doc, m: doc["fitted"]["categories"][0]["values"].reverse(),
        "not sorted and distinct",
    ),
    (
        "4 categories repeated",
        "categorical",
        lambda doc, m: doc["fitted"]["categories"][0]["values"].insert(0, "a"),
        "not sorted and distinct",
    ),
    (
        "4 categories of objects",
        "categorical",
        lambda doc, m: doc["fitted"]["categories"][0]["values"].insert(0, 3),
        "other than text",
    ),
    # 5: finite leaves whose sum is not
    (
        "5 leaves summing to inf",
        "regressor",
        _nodes("value", 1e308),
        "can sum to a non-finite prediction",
    ),
    (
        "5 leaves summing to inf in a classifier",
        "binary",
        _nodes("value", -1e308),
        "can sum to a non-finite prediction",
    ),
    (
        "5 a log link overflowing",
        "regressor",
        _both(_set("params", "loss", "poisson"), _nodes("value", 100.0)),
        r"whose exp\(\) \(the loss's log link\) is infinite",
    ),
    # 6: classes and metadata
    (
        "6 one class",
        "binary",
        lambda doc, m: doc["fitted"]["classes_"]["values"].pop(),
        "classes_ has 1 class",
    ),
    (
        "6 classes out of order",
        "multiclass",
        lambda doc, m: doc["fitted"]["classes_"]["values"].reverse(),
        "classes_ must be sorted and distinct",
    ),
    ("6 free metadata loads", "regressor", _set("metadata", "x", None), None),
    # 8: warm-start state
    ("8 no fit_signature", "regressor", _drop("fitted", "fit_signature"), "lacks"),
    (
        "8 negative seed",
        "regressor",
        _set("fitted", "random_seed", -5),
        r"random_seed must be an integer in \[0, 4294967295\], not -5",
    ),
    (
        "8 generator state",
        "regressor",
        _set("fitted", "tree_sample_rng", {"state": 1}),
        "tree_sample_rng lacks the field inc",
    ),
    # 10: no tree larger than fit grows, no more trees than max_iter
    (
        "10 more iterations than max_iter",
        "regressor",
        _set("params", "max_iter", 3),
        r"n_iter must be an integer in \[1, 3\], not 15",
    ),
    (
        "10 a tree array beyond the bound",
        "regressor",
        _array("tree_nodes", lambda n: np.concatenate([n] * 40)),
        "the model's parameters allow at most",
    ),
    # 11: messages
    ("11 format 0", "regressor", lambda d, m: d.update(version=0), "not a version"),
    ("11 format None", "regressor", lambda d, m: d.update(version=None), "not a ver"),
    (
        "11 metadata not a dict",
        "regressor",
        lambda d, m: d.update(metadata=[1]),
        "its metadata must be a JSON object",
    ),
    # the file itself
    (
        "an estimator outside the five",
        "regressor",
        lambda d, m: d.update(estimator="os.system"),
        "is not one that eraboost saves",
    ),
    (
        "an undeclared member",
        "regressor",
        lambda d, m: m.update({"payload.pkl": pickle.dumps(1)}),
        "undeclared members \\('payload.pkl'\\)",
    ),
    (
        "an object array",
        "regressor",
        _pickled_baseline,
        "the member baseline.npy is",
    ),
    (
        "a dtype other than declared",
        "regressor",
        lambda d, m: d["arrays"]["baseline"].update(dtype="<f4"),
        "the array baseline has dtype <f4; expected float64",
    ),
    (
        "bitsets of 4 words",
        "categorical",
        _array("tree_raw_bitsets", lambda b: b[:, :4].copy()),
        "tree_raw_bitsets has shape",
    ),
    ("a parameter out of range", "regressor", _set("params", "max_bins", 300), "max_b"),
    ("an unknown parameter", "regressor", _set("params", "n_jobs", 6), "undeclared"),
    (
        "a callable parameter",
        "regressor",
        _set("params", "scoring", {"callable": "os.system"}),
        "unknown kind",
    ),
]


@pytest.mark.parametrize(
    "name, edit, message", [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_crafted_files_are_refused_in_one_line(
    saved, fitted_models, name, edit, message, tmp_path
):
    path = _crafted(saved, name, edit, tmp_path / "crafted.skops")
    if message is None:  # free metadata: loads, and the model is the same
        est, Xp = fitted_models[name]
        np.testing.assert_array_equal(load_model(path).predict(Xp), est.predict(Xp))
        return
    _refused(path, message)


def test_a_decompression_bomb_is_refused_before_it_is_read(
    saved, tmp_path, monkeypatch
):
    # a member of 64 MB of zeros (a few hundred kB in the zip) where the
    # declared shape makes a few bytes: refused from the zip's directory
    doc, members = saved["regressor"]
    members = dict(members, **{"baseline.npy": bytes(64 * 2**20)})
    path = tmp_path / "bomb.skops"
    write_model_file(path, doc, members)
    assert path.stat().st_size < 2**20
    opened = []
    real_open = zipfile.ZipFile.open

    def open_member(self, name, *args, **kwargs):
        opened.append(getattr(name, "filename", name))
        return real_open(self, name, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "open", open_member)
    _refused(path, r"the member baseline.npy is 67,?108,?864 bytes; its declared")
    assert "baseline.npy" not in opened and opened == ["model.json"]


def test_a_padded_model_json_is_refused_before_it_is_read(saved, tmp_path):
    doc, members = saved["regressor"]
    doc = dict(doc, padding=" " * (64 * 2**20))
    path = tmp_path / "padded.skops"
    write_model_file(path, doc, members)
    _refused(path, r"its model.json is 67,1\d\d,\d{3} bytes; at most 67,108,864")


def test_a_member_named_twice_is_refused(saved, tmp_path):
    doc, members = saved["regressor"]
    path = tmp_path / "twice.skops"
    write_model_file(path, doc, members)
    with (
        zipfile.ZipFile(path, "a") as archive,
        pytest.warns(UserWarning, match="Duplicate name"),
    ):
        archive.writestr("baseline.npy", members["baseline.npy"])
    _refused(path, "appears twice")


def test_a_classifier_loss_comes_from_its_classes(saved, fitted_models, tmp_path):
    # issue 55, item 3: no file can give a classifier another link
    _, Xp = fitted_models["binary"]
    path = _crafted(saved, "binary", lambda d, m: None, tmp_path / "c.skops")
    proba = load_model(path).predict_proba(Xp)
    assert ((proba >= 0) & (proba <= 1)).all()
    assert type(load_model(path)._loss).__name__ == "HalfBinomialLoss"


def test_predict_checks_its_input_after_any_load(saved, tmp_path):
    # issue 55, item 1: the input checks cannot be switched off from a file
    path = _crafted(saved, "binary", lambda d, m: None, tmp_path / "c.skops")
    with pytest.raises(ValueError, match="features"):
        load_model(path).predict(np.zeros((3, 1), dtype=np.uint8))


def _campaign(models, tmp_path, mode, n, names):
    args = []
    for name in names:
        est, Xp = models[name]
        save_model(est, tmp_path / f"{name}.skops")
        with open(tmp_path / f"{name}.pkl", "wb") as f:
            pickle.dump(Xp[:40], f)
        args += [str(tmp_path / f"{name}.skops"), str(tmp_path / f"{name}.pkl")]
    script = Path(__file__).with_name("model_mutations.py")
    run = subprocess.run(
        [sys.executable, str(script), mode, str(n), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert run.returncode == 0, run.stderr[-3000:]
    report = json.loads(run.stdout.splitlines()[-1])
    assert report["failures"] == [], "\n".join(report["failures"][:10])
    return report["counts"]


def test_every_field_set_to_odd_values_is_refused_or_sound(fitted_models, tmp_path):
    # the attacker's view, field by field: every parameter and fitted field
    # of model.json set to None, -1, 2**40, NaN, "x" or {}, or removed, and
    # undeclared fields added, with a valid checksum
    counts = _campaign(
        fitted_models,
        tmp_path,
        "sweep",
        0,
        ["categorical", "binary", "forest-regressor"],
    )
    assert counts.get("edit refused", 0) > 400
    assert set(counts) <= {"edit refused", "edit same", "edit changed"}, counts


def test_a_seeded_campaign_of_edits_with_valid_checksums(fitted_models, tmp_path):
    # seeded random edits of model.json and of the arrays' values (node
    # fields, child indices, thresholds...), a new checksum each time
    counts = _campaign(
        fitted_models,
        tmp_path,
        "1",
        80,
        ["regressor", "binary", "forest-regressor", "robust-tree"],
    )
    assert sum(counts.values()) == 320
    assert sum(v for k, v in counts.items() if k.endswith("refused")) > 100


def test_a_bomb_within_declared_bounds_is_refused_by_its_ratio(saved, tmp_path):
    # parameters declaring a huge model (2**30 training rows, no limit on
    # leaves) let a tree array of 400,000 nodes through the shape bounds:
    # its 21 MB of zeros, which no fitted model holds, compress too well
    doc, members = saved["regressor"]
    doc = json.loads(json.dumps(doc))
    doc["params"]["max_leaf_nodes"] = None
    doc["fitted"]["fit_signature"][0] = 2**30
    nodes = np.load(io.BytesIO(members["tree_nodes.npy"]), allow_pickle=False)
    zeros = np.zeros(400_000, dtype=nodes.dtype)
    doc["arrays"]["tree_nodes"]["shape"] = [400_000]
    path = tmp_path / "bomb.skops"
    write_model_file(path, doc, dict(members, **{"tree_nodes.npy": npy_bytes(zeros)}))
    _refused(path, r"tree_nodes.npy compresses 20,800,\d+ bytes into .*more than 100")


# -- small files, large costs (issue 62) ---------------------------------------
# what load_model does with each crafted file of model_mutations.ATTACKS: the
# refusal's message, or None where the file loads within the bound
ATTACK_OUTCOMES = {
    "integer lookup tables": None,
    "eras 4096 wide": r"eras_ is stored 4096 characters wide; its longest label",
    "interaction_cst of empty strings": r"interaction_cst\[0\].*256 characters wide",
    "65,536 classes 4096 wide": r"classes_ has 65536 classes; fit finds at most "
    r"one per training row \(1200\)",
    "61 MiB of empty lists": r"its model.json holds more than 2,097,152 values",
    "285,000 single-leaf trees": None,
    "a forest of 285,000 single-leaf trees": None,
    "200,000 features, 257 categories": r"categories\[0\] holds 257 categories; "
    r"max_bins=255 allows at most 255",
    "a tree of depth 10**6": None,
}
# the bound docs/usage.md states: memory of a load and a one-row predict, per
# byte unpacked and a constant (a boosted model's trees stay joined arrays:
# no Python object per tree)
MEMORY_PER_UNPACKED_BYTE = 4
MEMORY_CONSTANT = 64 * 2**20
# issue 62's target for a file under 1 MB
SMALL_FILE = 2**20
SMALL_FILE_MEMORY = 256 * 2**20


def _traced_peak(call):
    """(call's result or the ModelFileError it raised, peak bytes traced)."""
    tracemalloc.start()
    try:
        try:
            result = call()
        except ModelFileError as exc:
            result = exc
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _load_and_predict_one_row(path):
    est = load_model(path)
    return est, est.predict(np.zeros((1, est.n_features_in_)))


@pytest.mark.parametrize("attack", list(ATTACKS))
def test_a_crafted_file_costs_what_its_size_allows(saved, attack, tmp_path):
    # issue 62: each file below cost gigabytes or tens of seconds to load;
    # now it is refused before the allocation, or loads within the bound
    # that docs/usage.md states (k bytes per unpacked byte, plus a constant)
    model, edit = ATTACKS[attack]
    doc, members = saved[model]
    doc, members = json.loads(json.dumps(doc)), dict(members)
    edit(doc, members)
    path = tmp_path / "crafted.skops"
    write_model_file(path, doc, members)
    with zipfile.ZipFile(path) as archive:
        unpacked = sum(info.file_size for info in archive.infolist())
    n_trees = doc["arrays"]["tree_n_nodes"]["shape"][0]
    result, peak = _traced_peak(lambda: _load_and_predict_one_row(path))
    bound = MEMORY_PER_UNPACKED_BYTE * unpacked + MEMORY_CONSTANT
    if path.stat().st_size < SMALL_FILE:
        bound = min(bound, SMALL_FILE_MEMORY)
    assert peak <= bound, (
        f"{peak / 2**20:.0f} MiB for {unpacked / 2**20:.1f} MiB unpacked, "
        f"{n_trees} trees"
    )
    message = ATTACK_OUTCOMES[attack]
    if message is None:
        _, prediction = result
        assert np.isfinite(prediction).all()
    else:
        assert isinstance(result, ModelFileError), result
        assert "\n" not in str(result)
        assert re.search(message, str(result)), str(result)


# -- valid outputs and escaped messages (issue 62, items 2 and 5) ----------------
LOG_MAX = float(np.log(np.finfo(np.float64).max))


def _poisson_leaves(total):
    """The regressor under a Poisson loss, its trees single leaves whose
    values sum to ``total`` (baseline 0)."""

    def edit(doc, members):
        doc["params"]["loss"] = "poisson"
        n = doc["fitted"]["n_iter"]
        nodes = single_leaves(members, n)
        nodes["value"] = total / n
        set_trees(doc, members, nodes, [1] * n)
        set_array(doc, members, "baseline", np.zeros((1, 1)))

    return edit


def test_a_log_link_within_reach_of_overflow_is_refused(saved, tmp_path):
    # issue 62: leaves summing to log(float max) in the check's order summed
    # to one ulp more in predict's, and every prediction was inf; the check
    # now adds them in predict's order and keeps a margin of e
    path = _crafted(saved, "regressor", _poisson_leaves(LOG_MAX), tmp_path / "a")
    _refused(path, r"whose exp\(\) \(the loss's log link\) is infinite or within")
    path = _crafted(saved, "regressor", _poisson_leaves(LOG_MAX - 1.5), tmp_path / "b")
    prediction = load_model(path).predict(np.zeros((3, 5)))
    assert np.isfinite(prediction).all() and (prediction > 1e307).all()


@pytest.mark.parametrize(
    "dtype, values, message",
    [
        (">i8", [0, 1], "non-native byte order"),
        ("<f2", [0.0, 1.0], "float16"),
        ("<M8[7ms]", [0, 1], "units"),
        ("<M8[h]", [0, 1], "units"),
        ("<m8[D]", [0, 1], "units"),
        ("<M8[ns]", [0, -(2**63)], "NaT"),
        ("<f8", [0.0, float("nan")], "NaN"),
        ("object", ["a", None], "must hold texts or numbers"),
    ],
)
def test_classes_of_a_dtype_fit_never_makes_are_refused(
    saved, dtype, values, message, tmp_path
):
    # issue 62: such classes loaded, and `eraboost predict` then failed
    # in Arrow (big-endian, odd units, float16) or predicted NaT
    def edit(doc, members):
        doc["fitted"]["classes_"] = {"dtype": dtype, "values": values}

    _refused(_crafted(saved, "binary", edit, tmp_path / "c.skops"), message)


def test_dated_classes_as_fit_makes_them_load(saved, tmp_path):
    def edit(doc, members):
        doc["fitted"]["classes_"] = {"dtype": "<M8[ns]", "values": [0, 10**9]}

    est = load_model(_crafted(saved, "binary", edit, tmp_path / "c.skops"))
    assert est.classes_.dtype == np.dtype("M8[ns]")
    assert set(est.predict(np.zeros((4, 5)))) <= set(est.classes_)


FAKE = "9.9\x1b[31m\nTraceback (most recent call last):\r\n  oops\x07"


def test_strings_from_the_file_are_escaped_in_messages(saved, tmp_path):
    # issue 62, item 5: the version a file names reached the warning and the
    # error as it was: terminal escape codes, newlines, a fake traceback
    def versions(doc, members):
        doc["versions"]["eraboost"] = FAKE

    path = _crafted(saved, "regressor", versions, tmp_path / "v.skops")
    with pytest.warns(UserWarning) as record:
        load_model(path)
    shown = str(record[0].message)
    assert "\\x1b[31m\\nTraceback (most recent call last):\\r\\n  oops\\x07" in shown
    assert not any(c in shown for c in "\x1b\n\r\x07")

    def newer(doc, members):
        versions(doc, members)
        doc["version"] = 3

    path = _crafted(saved, "regressor", newer, tmp_path / "n.skops")
    text = _refused(path, "a newer eraboost wrote it")
    assert "written by eraboost 9.9\\x1b[31m\\nTraceback" in text
    assert not any(c in text for c in "\x1b\r\x07")


# -- many small trees: predict adds them in one pass (issue 62, item 1) ----------
@pytest.mark.parametrize("name", ["regressor", "multiclass", "categorical"])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_one_pass_over_the_trees_sums_as_tree_by_tree(fitted_models, name, n_threads):
    # predict walks every tree of a row in one call (a file of 285,000
    # single-leaf trees spent its time in one call per tree); the reference
    # is staged_predict's tree-by-tree sums, which must agree bit for bit
    est, X = fitted_models[name]
    X = X.copy()
    if hasattr(X, "iloc"):
        X.iloc[::7, 0] = np.nan
        X.loc[::5, "sector"] = np.nan  # a missing category
    else:
        X[::7, 0] = np.nan
    *_, reference = est._staged_raw_predict(X)
    np.testing.assert_array_equal(est._raw_predict(X, n_threads), reference)
