"""Load damaged and edited copies of model files; run by the persistence tests.

``python model_mutations.py SEED N MODEL X [MODEL X ...]`` makes ``N``
mutations of each model file (``sweep 0`` instead of ``SEED N``: every
parameter and fitted field set to each of a few odd values, removed, and
undeclared fields added) (``X``: a ``.pkl`` of rows to predict) and
loads each. It runs in its own process, so that a crash or a hang fails the
test instead of killing pytest. It prints one JSON line: counts of outcomes
and the mutations that went wrong.

Mutations, drawn with ``random.Random(SEED)``:

- ``flip``: a byte of the file changed; ``cut``: the file truncated;
- ``damage``: a byte of a member changed, or a value of ``model.json``
  replaced or removed, the zip rewritten with its original comment (the
  checksum written by save_model);
- ``edit``: a value of ``model.json`` replaced, removed or added (an
  undeclared field, e.g. ``_in_fit`` or ``predict``), with the checksum
  written anew, as an attacker would;
- ``array``: bytes or fields of an array member changed (node values,
  child indices, features...), with the checksum written anew.

Every load must raise ``ModelFileError`` or give a model. After a flip, a
cut or a damage that model must predict exactly as the original. After an
edit or an array change (the attacker's view) its outputs are the editor's
choice, but they must come out: finite, of the right shape, probabilities in
[0, 1]; or predict refuses the rows with a ``ValueError`` (e.g. an edited
feature count).

The helpers :func:`read_model_file` and :func:`write_model_file` are also
used by the tests to craft files.
"""

import hashlib
import io
import json
import pickle
import random
import sys
import tempfile
import traceback
import warnings
import zipfile
from pathlib import Path

import numpy as np

from eraboost import load_model
from eraboost.persistence import ModelFileError

ODD_VALUES = [
    None,
    -1,
    0,
    1,
    2,
    3,
    10**9,
    -(10**9),
    2**40,
    1e308,
    -1e308,
    0.5,
    float("nan"),
    float("inf"),
    "x",
    "",
    [],
    {},
    [1, 2],
    True,
    False,
]
UNDECLARED = ["_in_fit", "predict", "_raw_predict", "_loss", "_preprocessor", "x_"]


def read_model_file(path):
    """(model.json as a dict, {member name: bytes}, zip comment)."""
    with zipfile.ZipFile(path) as archive:
        members = {name: archive.read(name) for name in archive.namelist()}
        comment = archive.comment
    return json.loads(members["model.json"]), members, comment


def npy_bytes(array):
    out = io.BytesIO()
    np.lib.format.write_array(out, array, version=(1, 0), allow_pickle=False)
    return out.getvalue()


def zip_bytes(members, comment):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
        archive.comment = comment
    return buffer.getvalue()


def digests(members):
    """The zip comment save_model writes: the members' SHA-256 digests."""
    return b"eraboost-sha256:" + b"".join(
        f"\n{name} {hashlib.sha256(c).hexdigest()}".encode()
        for name, c in members.items()
    )


def write_model_file(path, doc, members, comment=None):
    """Write ``doc`` as model.json with ``members``; the checksum is written
    anew unless ``comment`` is given."""
    members = dict(members)
    members["model.json"] = json.dumps(doc).encode()
    Path(path).write_bytes(
        zip_bytes(members, digests(members) if comment is None else comment)
    )


def outputs(est, X):
    out = [np.asarray(est.predict(X))]
    for method in ("predict_proba", "decision_function"):
        if hasattr(est, method):
            out.append(np.asarray(getattr(est, method)(X)))
    return out


def json_slots(node, slots):
    """Every (container, key) of a parsed JSON document."""
    if isinstance(node, dict):
        for key, value in node.items():
            slots.append((node, key))
            json_slots(value, slots)
    elif isinstance(node, list):
        for i, value in enumerate(node):
            slots.append((node, i))
            json_slots(value, slots)
    return slots


def mutate_json(doc, rng):
    doc = json.loads(json.dumps(doc))
    roll = rng.random()
    if roll < 0.15:
        part = rng.choice(["fitted", "params"])
        name = rng.choice(UNDECLARED)
        doc[part][name] = rng.choice([True, 1, "x", None])
        return doc, f"added {part}[{name!r}]"
    container, key = rng.choice(json_slots(doc, []))
    if roll < 0.3 and isinstance(container, dict):
        del container[key]
        return doc, f"removed {key!r}"
    old = container[key]
    if isinstance(old, (int, float)) and not isinstance(old, bool) and roll < 0.6:
        container[key] = rng.choice([old + 1, old - 1, -old, old * 2, old * 1000])
    else:
        container[key] = rng.choice(ODD_VALUES)
    return doc, f"{key!r}: {str(old)[:20]} -> {str(container[key])[:20]}"


def mutate_bytes(content, rng, start=0):
    content = bytearray(content)
    if len(content) <= start:
        start = 0
    pos = rng.randrange(start, len(content))
    content[pos] = rng.choice(
        [content[pos] ^ (1 << rng.randrange(8)), rng.randrange(256)]
    )
    return bytes(content), f"byte {pos}"


def mutate_array(members, rng):
    """A field or a byte of an array member, the member rewritten."""
    names = [n for n in members if n.endswith(".npy")]
    name = rng.choice(names)
    array = np.load(io.BytesIO(members[name]), allow_pickle=False)
    if array.size == 0:
        content, what = mutate_bytes(members[name], rng)
        members[name] = content
        return f"{name}: {what}"
    array = array.copy()
    flat = array.reshape(-1)
    i = rng.randrange(flat.size)
    if array.dtype.names:
        field = rng.choice(array.dtype.names)
        kind = array.dtype[field].kind
        values = [0, 1, 2, 7, 255, 10**6] if kind in "iu" else [0.0, 1e308, -1e308]
        if kind == "f":
            values += [np.nan, np.inf, flat[field][i] * 1e6]
        value = rng.choice(values)
        try:
            flat[field][i] = value
        except OverflowError:
            flat[field][i] = 0
        what = f"{name}[{i}].{field} = {value}"
    else:
        kind = array.dtype.kind
        values = [0, 1, -1, 255, 2**31 - 1] if kind in "iu" else [0.0, np.nan, 1e308]
        value = rng.choice(values)
        try:
            flat[i] = value
        except (OverflowError, ValueError):
            flat[i] = 0
        what = f"{name}[{i}] = {value}"
    members[name] = npy_bytes(array)
    return what


def check_outputs(est, X, reference):
    """None when the outputs are sound (finite, shaped as the original's,
    probabilities in [0, 1]), else what is wrong."""
    got = outputs(est, X)
    if len(got) != len(reference):
        return "other outputs"
    for k, (a, b) in enumerate(zip(got, reference)):
        if a.shape != b.shape:
            return f"output {k} has shape {a.shape}, not {b.shape}"
        if a.dtype.kind == "f" and not np.isfinite(a).all():
            return f"output {k} is not finite"
    if hasattr(est, "predict_proba") and not (
        (got[1] >= 0).all() and (got[1] <= 1).all()
    ):
        return "probabilities outside [0, 1]"
    return None


def sweep(doc, members):
    """Every parameter and fitted field of model.json set to each of a few
    odd values or removed, and undeclared fields added: (kind, what, bytes)."""
    values = [None, -1, 2**40, float("nan"), "x", {}]
    for part in ("params", "fitted"):
        for key in list(doc[part]):
            for value in [*values, "removed"]:
                new = json.loads(json.dumps(doc))
                if value == "removed":
                    del new[part][key]
                else:
                    new[part][key] = value
                yield "edit", f"{part}[{key!r}] = {value!r}", new
        for name in UNDECLARED:
            new = json.loads(json.dumps(doc))
            new[part][name] = True
            yield "edit", f"added {part}[{name!r}]", new


def mutations(rng, n, data, doc, original, comment):
    """(kind, what, bytes) of ``n`` seeded mutations of a model file."""
    for _ in range(n):
        kind = rng.choice(["flip", "cut", "damage", "edit", "edit", "array"])
        members = dict(original)
        if kind == "flip":
            mutated, what = mutate_bytes(data, rng)
        elif kind == "cut":
            size = rng.randrange(len(data))
            mutated, what = data[:size], f"cut at {size}"
        elif kind == "damage":
            name = rng.choice(list(members))
            if name == "model.json":
                new, what = mutate_json(doc, rng)
                members[name] = json.dumps(new).encode()
            else:
                members[name], what = mutate_bytes(members[name], rng, 128)
            mutated = zip_bytes(members, comment)
        elif kind == "edit":
            new, what = mutate_json(doc, rng)
            members["model.json"] = json.dumps(new).encode()
            mutated = zip_bytes(members, digests(members))
        else:
            what = mutate_array(members, rng)
            mutated = zip_bytes(members, digests(members))
        yield kind, what, mutated


def main():
    """``SEED N`` or ``sweep 0``, then MODEL X pairs."""
    mode, n = sys.argv[1], int(sys.argv[2])
    pairs = sys.argv[3:]
    rng = random.Random(0 if mode == "sweep" else int(mode))
    counts = {}
    failures = []
    folder = Path(tempfile.mkdtemp())
    for model_path, x_path in zip(pairs[::2], pairs[1::2]):
        data = Path(model_path).read_bytes()
        doc, original, comment = read_model_file(model_path)
        with open(x_path, "rb") as f:
            X = pickle.load(f)
        reference = outputs(load_model(model_path), X)
        if mode == "sweep":
            cases = []
            for kind, what, new in sweep(doc, original):
                members = dict(original)
                members["model.json"] = json.dumps(new).encode()
                cases.append((kind, what, zip_bytes(members, digests(members))))
        else:
            cases = mutations(rng, n, data, doc, original, comment)
        for k, (kind, what, mutated) in enumerate(cases):
            path = folder / f"{k}.skops"
            path.write_bytes(mutated)
            label = f"{Path(model_path).name} #{k} {kind} {what}"
            outcome = load_and_predict(path, X, reference, kind, label, failures)
            counts[f"{kind} {outcome}"] = counts.get(f"{kind} {outcome}", 0) + 1
            path.unlink()
    print(json.dumps({"counts": counts, "failures": failures}))


def load_and_predict(path, X, reference, kind, label, failures):
    """Load a mutated file and predict with it: the outcome, failures added."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loaded = load_model(path)
    except ModelFileError as exc:
        if "\n" in str(exc):
            failures.append(f"{label}: a message of several lines")
        return "refused"
    except BaseException as exc:
        failures.append(f"{label}: load raised {exc!r}")
        return "error"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            problem = check_outputs(loaded, X, reference)
            got = outputs(loaded, X)
    except ValueError as exc:
        if kind not in ("edit", "array"):
            failures.append(f"{label}: predict raised {exc!r}")
        return "input refused"
    except BaseException:
        failures.append(f"{label}: predict raised {traceback.format_exc()}")
        return "error"
    same = all(np.array_equal(a, b, equal_nan=True) for a, b in zip(got, reference))
    if problem is not None:
        failures.append(f"{label}: {problem}")
    elif not same and kind not in ("edit", "array"):
        failures.append(f"{label}: loaded and predicts differently")
    return "same" if same else "changed"


if __name__ == "__main__":
    main()


# -- crafted files: small files whose load would cost much (issue 62) -------------
# Each takes the parsed model.json and the members of a file written by
# save_model and edits them in place, as an attacker who rewrites the
# checksum would; the tests write them with write_model_file.
def array_of(members, name):
    return np.load(io.BytesIO(members[f"{name}.npy"]), allow_pickle=False)


def set_array(doc, members, name, array):
    """Replace the array member ``name`` and its declaration."""
    array = np.ascontiguousarray(array)
    members[f"{name}.npy"] = npy_bytes(array)
    descr = json.loads(json.dumps(np.lib.format.dtype_to_descr(array.dtype)))
    doc["arrays"][name] = {"dtype": descr, "shape": list(array.shape)}


def set_trees(doc, members, nodes, counts):
    """The trees' arrays: ``nodes`` concatenated, ``counts`` nodes each, no
    categorical split."""
    set_array(doc, members, "tree_nodes", nodes)
    set_array(doc, members, "tree_n_nodes", np.asarray(counts, dtype=np.uint32))
    bitsets = np.zeros((0, 8), dtype=np.uint32)
    set_array(doc, members, "tree_binned_bitsets", bitsets)
    set_array(doc, members, "tree_raw_bitsets", bitsets)
    set_array(doc, members, "tree_n_bitsets", np.zeros(len(counts), np.uint32))


def single_leaves(members, n_trees):
    nodes = np.zeros(n_trees, dtype=array_of(members, "tree_nodes").dtype)
    nodes["is_leaf"] = 1
    return nodes


def boosted_iterations(doc, members, n_iter):
    """A booster of ``n_iter`` iterations: the scores and the best
    iteration cut to fit."""
    doc["fitted"]["n_iter"] = n_iter
    doc["fitted"]["best_iteration_"] = None
    for name in ("train_score", "validation_score"):
        set_array(doc, members, name, np.zeros(0))


def more_features(doc, members, n_features):
    """``n_features`` features: the file's first ones, then features that
    no tree uses, without thresholds."""
    fitted = doc["fitted"]
    fitted["n_features_in_"] = n_features
    fitted["feature_names_in_"] = None
    counts = array_of(members, "bin_n_thresholds")
    wide = np.zeros(n_features, dtype=np.uint32)
    wide[: counts.size] = counts
    set_array(doc, members, "bin_n_thresholds", wide)


def wide_integer_lookup(doc, members, n_features=12_000):
    """Integer bin mappers of range 0 .. 65535 for ``n_features`` features:
    lookup tables of 64 KiB each (a 4.7 KB file)."""
    more_features(doc, members, n_features)
    doc["fitted"]["bin_mapper_is_integer"] = True
    set_array(doc, members, "bin_lo", np.zeros(n_features, dtype=np.int32))
    set_array(doc, members, "bin_hi", np.full(n_features, 65535, dtype=np.int32))


def wide_eras(doc, members, n_eras=150_000, width=4096):
    """``n_eras`` empty era labels stored ``width`` characters wide."""
    doc["fitted"]["fit_signature"][0] = 2**30
    doc["fitted"]["n_eras_"] = n_eras
    doc["fitted"]["eras_"] = {"dtype": f"<U{width}", "values": [""] * n_eras}


def wide_interaction_cst(doc, members, n=10**6):
    """interaction_cst as two arrays of ``n`` empty strings, 256 wide."""
    array = {"ndarray": ["<U256", [n], [""] * n]}
    doc["params"]["interaction_cst"] = [array, array]


def many_classes(doc, members, n_classes=65_536, width=4096, n_samples=None):
    """A multiclass model of ``n_classes`` classes stored ``width`` wide,
    one iteration of single-leaf trees."""
    fitted = doc["fitted"]
    fitted["classes_"] = {
        "dtype": f"<U{width}",
        "values": [f"{i:05d}" for i in range(n_classes)],
    }
    fitted["n_trees_per_iteration_"] = n_classes
    if n_samples is not None:
        fitted["fit_signature"][0] = n_samples
    boosted_iterations(doc, members, 1)
    set_trees(doc, members, single_leaves(members, n_classes), [1] * n_classes)
    set_array(doc, members, "baseline", np.zeros((1, n_classes)))


def padded_json(doc, members, mib=61):
    """``mib`` MiB of empty lists in the metadata, with random text to keep
    model.json within 100 to 1 of compression (0.9 MB in the zip)."""
    import zlib

    doc["metadata"]["lists"] = [[]] * (mib * 2**20 // 4)
    size = len(json.dumps(doc))
    # hex of random bytes compresses about 2 to 1: enough of it that the
    # whole compresses less than 99 to 1
    doc["metadata"]["noise"] = np.random.default_rng(0).bytes(size // 90).hex()
    content = json.dumps(doc).encode()
    assert len(content) < 99 * len(zlib.compress(content, 6))


def many_trees(doc, members, n_trees=285_000):
    """``n_trees`` iterations of single-leaf trees (a 59 KB file)."""
    doc["params"]["max_iter"] = n_trees
    boosted_iterations(doc, members, n_trees)
    set_trees(doc, members, single_leaves(members, n_trees), [1] * n_trees)


def many_forest_trees(doc, members, n_trees=285_000):
    """A forest of ``n_trees`` single-leaf trees (a 0.5 MB file)."""
    doc["params"]["n_estimators"] = n_trees
    set_trees(doc, members, single_leaves(members, n_trees), [1] * n_trees)
    set_array(doc, members, "tree_seeds", np.arange(n_trees, dtype=np.int64))


def wide_categorical(doc, members, n_features=200_000, n_categories=257):
    """One categorical feature of ``n_categories`` text categories among
    ``n_features`` (an 8 KB file)."""
    more_features(doc, members, n_features)
    fitted = doc["fitted"]
    fitted["is_categorical_"] = [True] + [False] * (n_features - 1)
    fitted["categories"] = [
        {"dtype": "object", "values": [f"c{i:03d}" for i in range(n_categories)]}
    ]


def deep_tree(doc, members, depth=10**6):
    """One tree: a chain of ``depth`` splits on feature 0, each with a leaf
    on its right (a 23.6 MB file)."""
    doc["params"].update(max_leaf_nodes=None, max_depth=None, max_iter=1)
    doc["fitted"]["fit_signature"][0] = 2**30
    boosted_iterations(doc, members, 1)
    n = 2 * depth + 1
    nodes = np.zeros(n, dtype=array_of(members, "tree_nodes").dtype)
    splits = np.arange(0, n - 1, 2)
    nodes["left"][splits] = splits + 2
    nodes["right"][splits] = splits + 1
    nodes["depth"] = (np.arange(n) + 1) // 2
    nodes["is_leaf"] = 1
    nodes["is_leaf"][splits] = 0
    nodes["value"][nodes["is_leaf"] == 1] = 0.001
    set_trees(doc, members, nodes, [n])


ATTACKS = {
    # name: (model saved, edit): the cases of issue 62, "Small files, large costs"
    "integer lookup tables": ("regressor", wide_integer_lookup),
    "eras 4096 wide": ("regressor", wide_eras),
    "interaction_cst of empty strings": ("regressor", wide_interaction_cst),
    "65,536 classes 4096 wide": ("multiclass", many_classes),
    "61 MiB of empty lists": ("regressor", padded_json),
    "285,000 single-leaf trees": ("regressor", many_trees),
    "a forest of 285,000 single-leaf trees": ("forest-regressor", many_forest_trees),
    "200,000 features, 257 categories": ("categorical", wide_categorical),
    "a tree of depth 10**6": ("regressor", deep_tree),
}
