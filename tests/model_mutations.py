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
