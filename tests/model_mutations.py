"""Load damaged and edited copies of model files; run by test_persistence.py.

``python model_mutations.py SEED N MODEL X [MODEL X ...]`` makes ``N``
mutations of each model file (``X``: a ``.npy`` or ``.pkl`` of rows to
predict) and loads each. It runs in its own process, so that a crash or a
hang fails the test instead of killing pytest. It prints one JSON line:
counts of outcomes and the mutations that went wrong.

Mutations, drawn with ``random.Random(SEED)``:

- ``flip``: a byte of the file changed; ``cut``: the file truncated;
- ``damage``: a byte of a decompressed member (``schema.json`` or a
  ``.npy``) changed, or a value of the JSON replaced or removed, and the zip
  rewritten with its original comment (the checksum written by save_model);
- ``edit``: the same changes with the checksum removed, as a deliberate
  edit of the file would do.

Every load must raise ``ModelFileError`` or give a model; after a flip, a
cut or a damage that model must predict exactly as the original, and after
an edit its predictions must at least run (their values are then the
editor's choice).
"""

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

ODD_VALUES = [None, -1, 0, 1, 2, 10**9, -(10**9), 1e308, 0.5, "x", "", [], {}, True]
ODD_JSON = ["-1", "0", "1e9", "4294967295", "1e999", "null", '"x"', "[]", "true"]


def outputs(est, X):
    out = [np.asarray(est.predict(X))]
    for method in ("predict_proba", "decision_function"):
        if hasattr(est, method):
            out.append(np.asarray(getattr(est, method)(X)))
    return out


def members(data):
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return archive.comment, [
            (i, archive.read(i.filename)) for i in archive.infolist()
        ]


def rezip(comment, contents):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for info, content in contents:
            archive.writestr(info.filename, content)
        archive.comment = comment
    return buffer.getvalue()


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


def mutate_json(text, rng):
    doc = json.loads(text)
    container, key = rng.choice(json_slots(doc, []))
    value = container[key]
    roll = rng.random()
    if roll < 0.2 and isinstance(container, dict):
        del container[key]
        what = f"removed {key!r}"
    elif isinstance(value, str) and key == "content" and roll < 0.7:
        container[key] = rng.choice(ODD_JSON)
        what = f"content {value[:20]!r} -> {container[key]!r}"
    else:
        container[key] = rng.choice(ODD_VALUES)
        what = f"{key!r} -> {container[key]!r}"
    return json.dumps(doc).encode(), what


def mutate_bytes(content, rng, start=0):
    content = bytearray(content)
    if len(content) <= start:
        start = 0
    pos = rng.randrange(start, len(content))
    content[pos] = rng.choice(
        [content[pos] ^ (1 << rng.randrange(8)), rng.randrange(256)]
    )
    return bytes(content), f"byte {pos}"


def mutate_member(data, rng):
    comment, contents = members(data)
    # larger members (the node arrays, the schema) more often
    i = rng.choices(range(len(contents)), [len(c) for _, c in contents])[0]
    info, content = contents[i]
    if info.filename == "schema.json" and rng.random() < 0.8:
        content, what = mutate_json(content, rng)
    else:
        # mostly the data, after the .npy header
        start = 128 if info.filename.endswith(".npy") and rng.random() < 0.8 else 0
        content, what = mutate_bytes(content, rng, start)
    contents[i] = (info, content)
    return comment, contents, f"{info.filename}: {what}"


def main():
    seed, n = int(sys.argv[1]), int(sys.argv[2])
    pairs = sys.argv[3:]
    rng = random.Random(seed)
    counts = {}
    failures = []
    folder = Path(tempfile.mkdtemp())
    for model_path, x_path in zip(pairs[::2], pairs[1::2]):
        data = Path(model_path).read_bytes()
        with open(x_path, "rb") as f:
            X = pickle.load(f)
        reference = outputs(load_model(model_path), X)
        for k in range(n):
            kind = rng.choice(["flip", "cut", "damage", "damage", "edit", "edit"])
            if kind == "flip":
                mutated, what = mutate_bytes(data, rng)
            elif kind == "cut":
                size = rng.randrange(len(data))
                mutated, what = data[:size], f"cut at {size}"
            else:
                comment, contents, what = mutate_member(data, rng)
                mutated = rezip(comment if kind == "damage" else b"", contents)
            path = folder / f"{k}.skops"
            path.write_bytes(mutated)
            label = f"{Path(model_path).name} #{k} {kind} {what}"
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    loaded = load_model(path)
            except ModelFileError:
                outcome = "refused"
            except BaseException as exc:
                failures.append(f"{label}: load raised {exc!r}")
                outcome = "error"
            else:
                try:
                    got = outputs(loaded, X)
                except BaseException:
                    failures.append(f"{label}: predict raised {traceback.format_exc()}")
                    outcome = "error"
                else:
                    same = len(got) == len(reference) and all(
                        a.shape == b.shape and np.array_equal(a, b, equal_nan=True)
                        for a, b in zip(got, reference)
                    )
                    outcome = "same" if same else "changed"
                    if not same and kind != "edit":
                        failures.append(f"{label}: loaded and predicts differently")
            counts[f"{kind} {outcome}"] = counts.get(f"{kind} {outcome}", 0) + 1
            path.unlink()
    print(json.dumps({"counts": counts, "failures": failures}))


if __name__ == "__main__":
    main()
