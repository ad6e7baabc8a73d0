"""Model files that hold data, never objects: :func:`save_model`, :func:`load_model`.

A model file (format 2) is a zip of ``model.json`` and a few ``.npy``
arrays. ``model.json`` names the estimator's class (one of five), its
parameters as plain JSON values, its fitted state as the fields that
:mod:`eraboost.persistence` declares for that class, the shape and dtype of
each array member, free metadata, and the versions of eraboost,
scikit-learn and NumPy that wrote it. The zip's comment holds a SHA-256 of
each member, which detects damage (not edits: whoever edits a file can
write new digests).

Loading restores nothing: it reads data into known fields and rebuilds the
estimator from them, as LightGBM's text models and XGBoost's JSON models
are read.

1. ``model.json`` (at most :data:`MAX_JSON_BYTES`) is parsed; every key it
   holds must be a declared one, and every value has its declared type.
2. The estimator is made by its constructor, and its parameters are set
   with ``set_params`` and checked by scikit-learn's parameter constraints.
3. Each array's declared shape is checked against bounds that the
   parameters set (no more trees than ``max_iter``, no tree larger than
   ``max_leaf_nodes``, ``max_depth`` and the training rows allow...), and
   each member's uncompressed size against its declared shape, before it is
   read; arrays are read with ``allow_pickle=False``.
4. The fitted objects are rebuilt from those arrays and values: the trees
   (``TreePredictor``), the bin mapper, the loss from ``loss`` and the
   classes, the encoder of categorical features from the recorded
   categories, the random generators from their recorded states.
5. The rebuilt model is checked as before (trees are trees, indices in
   range, leaf values finite, ``_model_checks``), and the sum of the leaf
   values along any path of the trees must be finite.

Format 1 files (skops archives, eraboost up to this change) are not loaded:
:func:`convert_model` reads one with the old loader (skops and its type
allowlist) and writes it again in format 2, keeping only the declared
fields.

Pickling still works as for any scikit-learn estimator (``pickle``,
``joblib``), but loading a pickle runs code: load pickles only from sources
you trust.
"""

import hashlib
import io
import json
import math
import numbers
import warnings
import zipfile
from pathlib import Path

import numpy as np

from ._atomic import atomic_write

__all__ = [
    "LEGACY_TYPES",
    "MAX_JSON_BYTES",
    "MODEL_FORMAT",
    "TRUSTED_TYPES",
    "ModelFileError",
    "ModelVersionWarning",
    "convert_model",
    "load_model",
    "save_model",
]

MODEL_FORMAT = "eraboost-model"
MODEL_VERSION = 2
#: Largest ``model.json`` read (the metadata and feature names live there).
MAX_JSON_BYTES = 64 * 2**20
_JSON_MEMBER = "model.json"
# the zip comment: this prefix, then "NAME HEXDIGEST" lines, one per member
_CHECKSUM = b"eraboost-sha256:"
# the packages whose versions a file records
_PACKAGES = ("eraboost", "scikit-learn", "numpy")
# bounds of plain values: nesting of JSON, lengths of lists and strings
_MAX_NESTING = 32
_MAX_FEATURES = 2**24
_MAX_PARAM_ARRAY = 10**6
_MAX_SAMPLES = 2**40
# members larger than this may not compress more than _MAX_RATIO to 1
# (arrays of a model hold varied values; a bomb of zeros compresses ~1000:1)
_RATIO_FROM = 16 * 2**20
_MAX_RATIO = 100
# the largest raw prediction a path of trees may sum to, and below which
# exp() of a log link stays finite
_MAX_RAW = 1e300
_MAX_LOG_RAW = math.log(np.finfo(np.float64).max)

_TOP_KEYS = (
    "format",
    "version",
    "versions",
    "estimator",
    "params",
    "fitted",
    "arrays",
    "metadata",
)


class ModelFileError(ValueError):
    """A file that is not a readable eraboost model file, or a model that
    cannot be saved to one."""


class ModelVersionWarning(UserWarning):
    """A model file written by other versions of eraboost, scikit-learn or
    NumPy than those loading it.

    The model passed every check of :func:`load_model`; re-saving it with
    :func:`save_model` records the current versions.
    """


class _Refused(Exception):
    """Why a model file is refused (turned into a ModelFileError)."""


def _fail(why):
    raise _Refused(why)


def _type_name(obj):
    cls = type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


def _versions():
    """The versions of the packages that matter to a model file."""
    import sklearn

    from . import __version__

    return {
        "eraboost": __version__,
        "scikit-learn": sklearn.__version__,
        "numpy": np.__version__,
    }


# -- plain values: the parameters and the metadata -----------------------------
class _Unstorable(Exception):
    """A value that a model file cannot hold: (where, what)."""


def _what(obj):
    """The name of ``obj`` (a function, a class) or of its type."""
    module = getattr(obj, "__module__", None)
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if isinstance(module, str) and isinstance(name, str) and callable(obj):
        return f"{module}.{name}"
    if type(obj).__name__ == "ufunc":
        return f"numpy.{obj.__name__}"
    return _type_name(obj)


def _plain(value, where, depth=0):
    """``value`` as plain JSON (metadata): None, bool, int, float, str, and
    lists and str-keyed dicts of them (a tuple becomes a list)."""
    if depth > _MAX_NESTING:
        raise _Unstorable(where, f"more than {_MAX_NESTING} levels of nesting")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral) and type(value) in (int, np.int64):
        return int(value)
    if type(value) in (float, np.float64):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [_plain(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)]
    if isinstance(value, dict):
        out = {}
        for key, v in value.items():
            if not isinstance(key, str):
                raise _Unstorable(f"{where} (a key)", _what(key))
            out[key] = _plain(v, f"{where}[{key!r}]", depth + 1)
        return out
    raise _Unstorable(where, _what(value))


def _check_plain(value, where, depth=0):
    """Check that a value read from ``model.json`` is plain JSON."""
    if depth > _MAX_NESTING:
        _fail(f"{where} nests more than {_MAX_NESTING} levels")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        for i, v in enumerate(value):
            _check_plain(v, f"{where}[{i}]", depth + 1)
        return value
    if isinstance(value, dict):
        for key, v in value.items():
            _check_plain(v, f"{where}[{key!r}]", depth + 1)
        return value
    _fail(f"{where} is not a plain JSON value")  # pragma: no cover - json gives these


def _param_array_dtype(text):
    """A dtype of a parameter array: booleans, numbers or fixed-size text."""
    if not isinstance(text, str) or len(text) > 10:
        _fail(f"unknown dtype {text!r}")
    try:
        dtype = np.dtype(text)
    except TypeError:
        _fail(f"unknown dtype {text!r}")
    if dtype.kind not in "biufU" or dtype.itemsize > 4 * 256:
        _fail(f"dtype {text!r} is not allowed in a parameter")
    return dtype


def _encode_param(value, where, depth=0):
    """A parameter value as JSON: plain values, and tagged one-key objects
    for tuples, sets, dicts, arrays, era scorers and RandomState."""
    from .metrics import _AGGREGATES, _METRICS, EraScorer

    if depth > _MAX_NESTING:
        raise _Unstorable(where, "deeply nested values")
    if value is None or isinstance(value, (bool, np.bool_, str)):
        return bool(value) if isinstance(value, np.bool_) else value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real) and isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, list):
        return [
            _encode_param(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)
        ]
    if isinstance(value, (tuple, set, frozenset)):
        items = list(value)
        if not isinstance(value, tuple):
            items = sorted(items, key=repr)
        tag = "tuple" if isinstance(value, tuple) else "set"
        return {
            tag: [
                _encode_param(v, f"{where}[{i}]", depth + 1)
                for i, v in enumerate(items)
            ]
        }
    if isinstance(value, dict):
        return {
            "dict": [
                [
                    _encode_param(k, f"{where} (a key)", depth + 1),
                    _encode_param(v, f"{where}[{k!r}]", depth + 1),
                ]
                for k, v in value.items()
            ]
        }
    if type(value) is np.ndarray and value.dtype.kind in "biufU":
        return {"ndarray": [value.dtype.str, list(value.shape), value.ravel().tolist()]}
    if type(value) is EraScorer:
        if (
            isinstance(value.metric, str)
            and value.metric in _METRICS
            and isinstance(value.aggregate, str)
            and value.aggregate in _AGGREGATES
            and set(vars(value)) == {"metric", "aggregate"}
        ):
            return {"era_scorer": [value.metric, value.aggregate]}
        raise _Unstorable(f"{where}.metric", _what(value.metric))
    if type(value) is np.random.RandomState:
        _, keys, pos, has_gauss, cached = value.get_state(legacy=True)
        return {
            "random_state": [keys.tolist(), int(pos), int(has_gauss), float(cached)]
        }
    raise _Unstorable(where, _what(value))


def _decode_param(value, where, depth=0):
    """The parameter value of :func:`_encode_param`'s JSON, checked."""
    from .metrics import EraScorer

    if depth > _MAX_NESTING:
        _fail(f"{where} nests more than {_MAX_NESTING} levels")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [
            _decode_param(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)
        ]
    if not (isinstance(value, dict) and len(value) == 1):
        _fail(f"{where} is not a parameter value")
    ((tag, content),) = value.items()
    if tag in ("tuple", "set", "dict", "ndarray", "era_scorer", "random_state"):
        if not isinstance(content, list):
            _fail(f"{where}: {tag} must be a list")
    else:
        _fail(f"{where} is of an unknown kind {tag[:40]!r}")
    if tag in ("tuple", "set"):
        items = [
            _decode_param(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(content)
        ]
        if tag == "tuple":
            return tuple(items)
        try:
            return set(items)
        except TypeError:
            _fail(f"{where}: a set of unhashable values")
    if tag == "dict":
        out = {}
        for item in content:
            if not (isinstance(item, list) and len(item) == 2):
                _fail(f"{where}: a dict item must be [key, value]")
            key = _decode_param(item[0], f"{where} (a key)", depth + 1)
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                _fail(f"{where}: a dict key must be a plain value")
            out[key] = _decode_param(item[1], f"{where}[{key!r}]", depth + 1)
        return out
    if tag == "ndarray":
        if len(content) != 3:
            _fail(f"{where}: an array is [dtype, shape, values]")
        dtype = _param_array_dtype(content[0])
        shape, values = content[1], content[2]
        if not (
            isinstance(shape, list)
            and len(shape) <= 2
            and all(type(s) is int and 0 <= s <= _MAX_PARAM_ARRAY for s in shape)
            and isinstance(values, list)
            and len(values) == math.prod(shape) <= _MAX_PARAM_ARRAY
        ):
            _fail(f"{where}: an array of a wrong shape or size")
        kinds = {"b": (bool,), "i": (int,), "u": (int,), "f": (int, float), "U": (str,)}
        if not all(type(v) in kinds[dtype.kind] for v in values):
            _fail(f"{where}: array values of the wrong type for {dtype}")
        try:
            return np.array(values, dtype=dtype).reshape(shape)
        except (OverflowError, ValueError):
            _fail(f"{where}: array values outside {dtype}")
    if tag == "era_scorer":
        from .metrics import _AGGREGATES, _METRICS

        if not (
            len(content) == 2
            and isinstance(content[0], str)
            and content[0] in _METRICS
            and isinstance(content[1], str)
            and content[1] in _AGGREGATES
        ):
            _fail(f"{where}: an era scorer of an unknown metric or aggregate")
        return EraScorer(content[0], content[1])
    # random_state: the state of a legacy RandomState (MT19937)
    if not (
        len(content) == 4
        and isinstance(content[0], list)
        and len(content[0]) == 624
        and all(type(k) is int and 0 <= k < 2**32 for k in content[0])
        and type(content[1]) is int
        and 0 <= content[1] <= 624
        and content[2] in (0, 1)
        and type(content[2]) is int
        and type(content[3]) in (int, float)
        and math.isfinite(content[3])
    ):
        _fail(f"{where}: not the state of a RandomState")
    rs = np.random.RandomState()
    rs.set_state(
        (
            "MT19937",
            np.array(content[0], dtype=np.uint32),
            *content[1:3],
            float(content[3]),
        )
    )
    return rs


# -- labels: classes, eras, categories -------------------------------------------
def _encode_labels(values, where, text_fallback=False):
    """A 1-D array of labels as {"dtype": ..., "values": [...]}.

    Numbers, booleans, NumPy text and dates keep their dtype; an object
    array may hold text, and None and NaN (missing values of categories).
    With ``text_fallback``, other objects are kept as their text."""
    values = np.asarray(values)
    if values.ndim != 1:
        raise _Unstorable(where, f"an array of {values.ndim} dimensions")
    kind = values.dtype.kind
    if kind in "biufU":
        return {"dtype": values.dtype.str, "values": values.tolist()}
    if kind in "Mm":
        return {"dtype": values.dtype.str, "values": values.view(np.int64).tolist()}
    if kind == "O":
        out = []
        for v in values.tolist():
            if v is None or isinstance(v, str) or (isinstance(v, float) and v != v):
                out.append(v)
            elif text_fallback:
                out.append(str(v))
            else:
                raise _Unstorable(where, _what(v))
        return {"dtype": "object", "values": out}
    raise _Unstorable(where, f"an array of dtype {values.dtype}")


def _decode_labels(value, where, max_len):
    """The array of :func:`_encode_labels`'s JSON, checked."""
    if not (isinstance(value, dict) and set(value) == {"dtype", "values"}):
        _fail(f"{where} must be {{'dtype': ..., 'values': [...]}}")
    text, values = value["dtype"], value["values"]
    if not isinstance(values, list) or len(values) > max_len:
        _fail(f"{where} must be a list of at most {max_len} values")
    if text == "object":
        if not all(
            isinstance(v, str) or v is None or (isinstance(v, float) and math.isnan(v))
            for v in values
        ):
            _fail(f"{where} holds values other than text and missing values")
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    if not isinstance(text, str) or len(text) > 20:
        _fail(f"{where} has an unknown dtype")
    try:
        dtype = np.dtype(text)
    except TypeError:
        _fail(f"{where} has an unknown dtype {text!r}")
    kinds = {
        "b": (bool,),
        "i": (int,),
        "u": (int,),
        "f": (int, float),
        "U": (str,),
        "M": (int,),
        "m": (int,),
    }
    if dtype.kind not in kinds or dtype.itemsize > 4 * 4096:
        _fail(f"{where} has a dtype {text!r} that labels may not have")
    if not all(type(v) in kinds[dtype.kind] for v in values):
        _fail(f"{where} holds values of the wrong type for {dtype}")
    try:
        if dtype.kind in "Mm":
            return np.array(values, dtype=np.int64).view(dtype)
        return np.array(values, dtype=dtype)
    except (OverflowError, ValueError):
        _fail(f"{where} holds values outside {dtype}")


def _same_labels(a, b):
    """Equal label arrays (dtype, values; NaN equal to NaN)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    for x, y in zip(a.tolist(), b.tolist()):
        if not (
            x is y
            or (type(x) is type(y) and x == y)
            or (isinstance(x, float) and isinstance(y, float) and x != x and y != y)
        ):
            return False
    return True


# -- reading fields of model.json -----------------------------------------------
def _int(fields, name, low, high):
    value = fields.get(name, _MISSING)
    if value is _MISSING:
        _fail(f"the field {name} is missing")
    if type(value) is not int or not low <= value <= high:
        _fail(f"{name} must be an integer in [{low}, {high}], not {value!r}"[:300])
    return value


def _bool(fields, name):
    value = fields.get(name, _MISSING)
    if type(value) is not bool:
        _fail(f"{name} must be true or false")
    return value


def _float(fields, name, low=-math.inf, high=math.inf):
    value = fields.get(name, _MISSING)
    if type(value) not in (int, float) or math.isnan(value) or not low <= value <= high:
        _fail(f"{name} must be a number in [{low}, {high}]")
    return float(value)


def _text(fields, name, options=None, max_len=200):
    value = fields.get(name, _MISSING)
    if not isinstance(value, str) or len(value) > max_len:
        _fail(f"{name} must be a text of at most {max_len} characters")
    if options is not None and value not in options:
        _fail(f"{name} is {value!r}; expected one of {', '.join(options)}")
    return value


_MISSING = object()


def _fields(doc, name, declared, optional=()):
    """The dict ``doc[name]``, whose keys are exactly ``declared`` (plus any
    of ``optional``)."""
    fields = doc
    if not isinstance(fields, dict):
        _fail(f"{name} must be a JSON object")
    unknown = sorted(set(fields) - set(declared) - set(optional))
    if unknown:
        shown = ", ".join(repr(k)[:60] for k in unknown[:5])
        _fail(
            f"{name} holds undeclared fields ({shown}); a model file may set only "
            "the declared ones"
        )
    missing = [k for k in declared if k not in fields]
    if missing:
        _fail(f"{name} lacks the field {missing[0]}")
    return fields


# -- arrays ------------------------------------------------------------------------
def _npy_size(dtype, shape):
    """Bytes of the .npy (format 1.0) of an array of this dtype and shape."""
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buffer,
        {
            "descr": np.lib.format.dtype_to_descr(dtype),
            "fortran_order": False,
            "shape": tuple(shape),
        },
    )
    return buffer.tell() + math.prod(shape) * dtype.itemsize


class _Arrays:
    """The arrays of a model file: declared in ``model.json``, checked
    against the bounds of the model before any member is read."""

    def __init__(self, archive, declared, digests):
        self.archive = archive
        self.declared = declared
        self.digests = digests
        self.expected = {}

    def expect(self, name, dtype, shape):
        """Declare the array ``name``: its dtype and shape, where an int is
        an exact length and ``("max", n)`` a bound."""
        self.expected[name] = (np.dtype(dtype), shape)

    def check_declarations(self, infos):
        """Each declared array is expected, of its dtype, within its bounds,
        and its member is exactly the size its shape makes."""
        declared = self.declared
        if not isinstance(declared, dict):
            _fail("arrays must be a JSON object")
        extra = sorted(set(declared) - set(self.expected))
        if extra:
            _fail(
                "the file declares undeclared arrays "
                f"({', '.join(map(repr, extra[:5]))})"
            )
        missing = sorted(set(self.expected) - set(declared))
        if missing:
            _fail(f"the array {missing[0]} is missing")
        self.shapes = {}
        for name, (dtype, pattern) in self.expected.items():
            decl = declared[name]
            if not (isinstance(decl, dict) and set(decl) == {"dtype", "shape"}):
                _fail(f"the array {name} must be declared as {{'dtype', 'shape'}}")
            if decl["dtype"] != json.loads(
                json.dumps(np.lib.format.dtype_to_descr(dtype))
            ):
                _fail(
                    f"the array {name} has dtype {str(decl['dtype'])[:80]}; expected "
                    f"{dtype}"
                )
            shape = decl["shape"]
            if not (
                isinstance(shape, list)
                and len(shape) == len(pattern)
                and all(type(s) is int and s >= 0 for s in shape)
            ):
                _fail(
                    f"the array {name} has a shape that is not {len(pattern)} lengths"
                )
            for s, p in zip(shape, pattern):
                if isinstance(p, tuple) and s > p[1]:
                    _fail(
                        f"the array {name} has shape {tuple(shape)}: the model's "
                        f"parameters allow at most {p[1]} along an axis"
                    )
                if isinstance(p, int) and s != p:
                    _fail(
                        f"the array {name} has shape {tuple(shape)}; expected {p} "
                        "along an axis"
                    )
            member = f"{name}.npy"
            info = infos.get(member)
            if info is None:
                _fail(f"the member {member} is missing")
            size = _npy_size(dtype, shape)
            if info.file_size != size:
                _fail(
                    f"the member {member} is {info.file_size} bytes; its declared "
                    f"shape {tuple(shape)} makes {size}"
                )
            if info.file_size > _RATIO_FROM and info.file_size > (
                _MAX_RATIO * info.compress_size
            ):
                _fail(
                    f"the member {member} compresses {info.file_size:,} bytes "
                    f"into {info.compress_size:,}: more than {_MAX_RATIO} to 1, "
                    "which no array of a model does"
                )
            self.shapes[name] = tuple(shape)

    def __getitem__(self, name):
        dtype, _ = self.expected[name]
        shape = self.shapes[name]
        content = _read_member(self.archive, f"{name}.npy", self.digests)
        try:
            array = np.load(io.BytesIO(content), allow_pickle=False)
        except Exception as exc:
            _fail(f"the member {name}.npy is not a NumPy array ({type(exc).__name__})")
        if array.dtype != dtype or array.shape != shape or not array.flags.c_contiguous:
            _fail(f"the member {name}.npy does not hold the declared array")
        return array


def _read_member(archive, name, digests):
    """A member's content (its size already checked), checked against its
    digest."""
    with archive.open(name) as f:
        content = f.read()
    if hashlib.sha256(content).hexdigest() != digests.get(name):
        _fail(
            "damaged model file: its contents do not match the checksum written with "
            "them"
        )
    return content


# -- trees ------------------------------------------------------------------------
def _store_trees(trees, arrays, prefix):
    """The trees' nodes and bitsets, concatenated, with each tree's counts."""
    from ._engine._common import BITSET_DTYPE, NODE_DTYPE

    arrays[f"{prefix}_nodes"] = (
        np.concatenate([t.nodes for t in trees]) if trees else np.zeros(0, NODE_DTYPE)
    )
    arrays[f"{prefix}_n_nodes"] = np.array(
        [t.nodes.shape[0] for t in trees], dtype=np.uint32
    )
    for which in ("binned", "raw"):
        bitsets = [getattr(t, f"{which}_left_cat_bitsets") for t in trees]
        arrays[f"{prefix}_{which}_bitsets"] = (
            np.concatenate(bitsets).astype(BITSET_DTYPE, copy=False)
            if trees
            else np.zeros((0, 8), BITSET_DTYPE)
        )
    arrays[f"{prefix}_n_bitsets"] = np.array(
        [t.binned_left_cat_bitsets.shape[0] for t in trees], dtype=np.uint32
    )


def _expect_trees(arrays, prefix, n_trees, max_nodes):
    from ._engine._common import BITSET_DTYPE, NODE_DTYPE

    total = n_trees * max_nodes
    arrays.expect(f"{prefix}_nodes", NODE_DTYPE, (("max", total),))
    arrays.expect(f"{prefix}_n_nodes", np.uint32, (n_trees,))
    arrays.expect(f"{prefix}_binned_bitsets", BITSET_DTYPE, (("max", total), 8))
    arrays.expect(f"{prefix}_raw_bitsets", BITSET_DTYPE, (("max", total), 8))
    arrays.expect(f"{prefix}_n_bitsets", np.uint32, (n_trees,))


def _load_trees(arrays, prefix, max_nodes):
    """The TreePredictors of the stored arrays, each within ``max_nodes``."""
    from ._engine.predictor import TreePredictor

    nodes = arrays[f"{prefix}_nodes"]
    counts = arrays[f"{prefix}_n_nodes"].astype(np.int64)
    binned = arrays[f"{prefix}_binned_bitsets"]
    raw = arrays[f"{prefix}_raw_bitsets"]
    n_bitsets = arrays[f"{prefix}_n_bitsets"].astype(np.int64)
    if binned.shape != raw.shape:
        _fail("the trees' binned and raw category bitsets differ in number")
    if np.any(counts < 1) or np.any(counts > max_nodes):
        i = int(np.flatnonzero((counts < 1) | (counts > max_nodes))[0])
        _fail(
            f"tree {i} has {counts[i]} nodes; the model's parameters let fit grow "
            f"between 1 and {max_nodes}"
        )
    if counts.sum() != nodes.shape[0] or n_bitsets.sum() != binned.shape[0]:
        _fail("the trees' node or bitset counts do not add up to the stored arrays")
    node_ends = np.cumsum(counts)
    bitset_ends = np.cumsum(n_bitsets)
    trees = []
    for i in range(counts.size):
        a, b = node_ends[i] - counts[i], node_ends[i]
        c, d = bitset_ends[i] - n_bitsets[i], bitset_ends[i]
        trees.append(TreePredictor(nodes[a:b], binned[c:d], raw[c:d]))
    return trees


def _max_tree_nodes(n_samples, min_samples_leaf, max_leaf_nodes=None, max_depth=None):
    """Most nodes a tree can have under these parameters: every leaf holds
    at least min_samples_leaf rows, at most max_leaf_nodes leaves, depth at
    most max_depth."""
    leaves = (
        n_samples // max(1, min_samples_leaf)
        if isinstance(min_samples_leaf, numbers.Integral)
        else n_samples
    )
    if max_leaf_nodes is not None:
        leaves = min(leaves, max_leaf_nodes)
    if max_depth is not None:
        leaves = min(leaves, 2 ** min(max_depth, 62))
    return 2 * max(1, leaves) - 1


def _check_depth(trees, max_depth, where):
    if max_depth is None:
        return
    for i, tree in enumerate(trees):
        if tree.nodes["depth"].max() > max_depth:
            _fail(f"{where}[{i}] is deeper than max_depth={max_depth}")


def _path_range(trees):
    """The least and the greatest sum of leaf values along a path through
    each of ``trees`` (one leaf per tree)."""
    with np.errstate(over="ignore", invalid="ignore"):
        lo = hi = 0.0
        for tree in trees:
            leaves = tree.nodes["value"][tree.nodes["is_leaf"] == 1]
            lo = lo + float(leaves.min())
            hi = hi + float(leaves.max())
    return lo, hi


def _check_sums(trees_per_output, baselines, log_link=False):
    """The raw prediction of any row is finite (baseline plus one leaf of
    each tree), and exp() of it too under a log link."""
    for k, trees in enumerate(trees_per_output):
        lo, hi = _path_range(trees)
        lo, hi = lo + baselines[k], hi + baselines[k]
        if not (math.isfinite(lo) and math.isfinite(hi)) or max(-lo, hi) > _MAX_RAW:
            _fail(
                "the trees' leaf values can sum to a non-finite prediction "
                f"(from {lo:.3g} to {hi:.3g})"
            )
        if log_link and hi > _MAX_LOG_RAW:
            _fail(
                f"the trees' leaf values can sum to {hi:.4g}, whose exp() (the "
                "loss's log link) is infinite"
            )


# -- bin mappers ------------------------------------------------------------------
def _store_bin_mapper(mapper, arrays, fitted):
    fitted["bin_mapper_is_integer"] = bool(mapper.is_integer_)
    thresholds = mapper.bin_thresholds_
    arrays["bin_thresholds"] = (
        np.concatenate(thresholds).astype(np.float64) if thresholds else np.zeros(0)
    )
    arrays["bin_n_thresholds"] = np.array([t.size for t in thresholds], dtype=np.uint32)
    if mapper.is_integer_:
        arrays["bin_lo"] = np.asarray(mapper._lo, dtype=np.int32)
        arrays["bin_hi"] = np.asarray(mapper._hi, dtype=np.int32)


def _expect_bin_mapper(arrays, fitted, n_features, max_bins):
    is_integer = _bool(fitted, "bin_mapper_is_integer")
    arrays.expect("bin_thresholds", np.float64, (("max", n_features * max_bins),))
    arrays.expect("bin_n_thresholds", np.uint32, (n_features,))
    if is_integer:
        arrays.expect("bin_lo", np.int32, (n_features,))
        arrays.expect("bin_hi", np.int32, (n_features,))
    return is_integer


def _load_bin_mapper(arrays, is_integer, is_categorical, max_bins):
    """The BinMapper of the stored thresholds; its lookup tables, numbers
    of bins and missing-value bins are rebuilt, never read."""
    from ._engine._binning import build_lookup
    from ._engine.binning import BinMapper

    values = arrays["bin_thresholds"]
    counts = arrays["bin_n_thresholds"].astype(np.int64)
    if counts.sum() != values.size:
        _fail("the bin thresholds do not add up to the stored array")
    ends = np.cumsum(counts)
    thresholds = [values[e - c : e] for e, c in zip(ends, counts)]
    n_bins = counts + ~is_categorical
    if np.any(n_bins > max_bins):
        _fail(f"a feature has more than max_bins={max_bins} bins")
    for f, t in enumerate(thresholds):
        if np.isnan(t).any() or np.any(np.diff(t) < 0):
            _fail(f"the bin thresholds of feature {f} are NaN or not increasing")
    mapper = BinMapper(max_bins=max_bins)
    mapper.is_integer_ = is_integer
    mapper.bin_thresholds_ = thresholds
    mapper.n_bins_non_missing_ = n_bins.astype(np.uint32)
    mapper.missing_bin_ = mapper.n_bins_non_missing_.copy()
    mapper.n_bins_ = mapper.n_bins_non_missing_ + 1
    if is_integer:
        lo, hi = arrays["bin_lo"], arrays["bin_hi"]
        # 8- and 16-bit input: values in [-32768, 65535]
        if np.any(lo < -32768) or np.any(hi > 65535) or np.any(lo > hi):
            _fail("the integer bin mapper's value ranges are out of bounds")
        mapper._lo, mapper._hi = lo, hi
        mapper._lut, mapper._lut_start = build_lookup(thresholds, lo, hi)
    return mapper


# -- the estimators ----------------------------------------------------------------
def _rng_state(generator):
    state = generator.bit_generator.state
    if state.get("bit_generator") != "PCG64":
        raise _Unstorable("a random generator", state.get("bit_generator"))
    return {
        "state": int(state["state"]["state"]),
        "inc": int(state["state"]["inc"]),
        "has_uint32": int(state["has_uint32"]),
        "uinteger": int(state["uinteger"]),
    }


def _rng(fields, name):
    state = _fields(fields.get(name), name, ("state", "inc", "has_uint32", "uinteger"))
    if not (
        type(state["state"]) is int
        and 0 <= state["state"] < 2**128
        and type(state["inc"]) is int
        and 0 < state["inc"] < 2**128
        and state["inc"] % 2 == 1
        and state["has_uint32"] in (0, 1)
        and type(state["has_uint32"]) is int
        and type(state["uinteger"]) is int
        and 0 <= state["uinteger"] < 2**32
    ):
        _fail(f"{name} is not the state of a PCG64 generator")
    generator = np.random.Generator(np.random.PCG64())
    generator.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": state["state"], "inc": state["inc"]},
        "has_uint32": state["has_uint32"],
        "uinteger": state["uinteger"],
    }
    return generator


def _feature_names(est):
    names = getattr(est, "feature_names_in_", None)
    return None if names is None else [str(n) for n in names]


def _load_features(est, fitted):
    est.n_features_in_ = _int(fitted, "n_features_in_", 1, _MAX_FEATURES)
    names = fitted.get("feature_names_in_", _MISSING)
    if names is _MISSING:
        _fail("the field feature_names_in_ is missing")
    if names is not None:
        if not (
            isinstance(names, list)
            and len(names) == est.n_features_in_
            and all(isinstance(s, str) for s in names)
        ):
            _fail("feature_names_in_ must be a list of n_features_in_ texts")
        est.feature_names_in_ = np.array(names, dtype=object)
    return est.n_features_in_


def _load_classes(est, fitted, n_allowed=None):
    classes = _decode_labels(fitted.get("classes_"), "classes_", 2**16)
    if classes.size < 2:
        _fail(f"classes_ has {classes.size} class; a classifier has at least 2")
    if classes.dtype.kind == "O" and not all(isinstance(c, str) for c in classes):
        _fail("classes_ must hold texts or numbers")
    if classes.dtype.kind == "f" and not np.isfinite(classes).all():
        _fail("classes_ holds NaN or infinity")
    order = (
        np.array(sorted(classes.tolist()))
        if classes.dtype.kind == "O"
        else np.unique(classes)
    )
    if order.size != classes.size or not all(
        a == b for a, b in zip(order.tolist(), classes.tolist())
    ):
        _fail("classes_ must be sorted and distinct")
    if n_allowed is not None and classes.size not in n_allowed:
        _fail(
            f"classes_ has {classes.size} classes; expected "
            f"{' or '.join(map(str, n_allowed))}"
        )
    est.classes_ = classes
    return classes


def _load_eras(est, fitted, n_eras):
    eras = fitted.get("eras_", _MISSING)
    if eras is _MISSING:
        _fail("the field eras_ is missing")
    if eras is not None:
        eras = _decode_labels(eras, "eras_", n_eras)
        if eras.size != n_eras:
            _fail(f"eras_ has {eras.size} labels; n_eras_ is {n_eras}")
    est.eras_ = eras
    est.n_eras_ = n_eras


_BOOSTER_FIELDS = (
    "n_features_in_",
    "feature_names_in_",
    "n_trees_per_iteration_",
    "is_categorical_",
    "categories",
    "eras_",
    "n_eras_",
    "random_seed",
    "feature_subsample_rng",
    "tree_sample_rng",
    "do_early_stopping_",
    "use_validation_data",
    "fit_signature",
    "n_iter",
    "best_iteration_",
    "bin_mapper_is_integer",
)


def _store_booster(est, arrays):
    pre = est._preprocessor
    categories = None
    if pre is not None:
        encoder = pre.named_transformers_["encoder"]
        categories = [
            _encode_labels(c, f"the categories of feature {i}")
            for i, c in enumerate(encoder.categories_)
        ]
    signature = est._fit_signature
    fitted = {
        "n_features_in_": int(est.n_features_in_),
        "feature_names_in_": _feature_names(est),
        "n_trees_per_iteration_": int(est.n_trees_per_iteration_),
        "is_categorical_": (
            None
            if est.is_categorical_ is None
            else [bool(b) for b in est.is_categorical_]
        ),
        "categories": categories,
        "eras_": None
        if est.eras_ is None
        else _encode_labels(est.eras_, "eras_", True),
        "n_eras_": int(est.n_eras_),
        "random_seed": int(est._random_seed),
        "feature_subsample_rng": _rng_state(est._feature_subsample_rng),
        "tree_sample_rng": _rng_state(est._tree_sample_rng),
        "do_early_stopping_": bool(est.do_early_stopping_),
        "use_validation_data": bool(est._use_validation_data),
        "fit_signature": [int(signature[0]), signature[1]],
        "n_iter": len(est._predictors),
        "best_iteration_": (
            int(est.best_iteration_) if hasattr(est, "best_iteration_") else None
        ),
    }
    if hasattr(est, "classes_"):
        fitted["classes_"] = _encode_labels(est.classes_, "classes_")
    arrays["baseline"] = np.ascontiguousarray(
        est._baseline_prediction, dtype=np.float64
    )
    arrays["train_score"] = np.asarray(est.train_score_, dtype=np.float64)
    arrays["validation_score"] = np.asarray(est.validation_score_, dtype=np.float64)
    _store_trees([t for stage in est._predictors for t in stage], arrays, "tree")
    _store_bin_mapper(est._bin_mapper, arrays, fitted)
    return fitted


def _plan_booster(est, fitted, arrays, is_classifier):
    declared = (*_BOOSTER_FIELDS, "classes_") if is_classifier else _BOOSTER_FIELDS
    _fields(fitted, "fitted", declared)
    n_features = _load_features(est, fitted)
    if is_classifier:
        classes = _load_classes(est, fitted)
        k_expected = 1 if classes.size == 2 else classes.size
    else:
        k_expected = 1
    k = _int(fitted, "n_trees_per_iteration_", k_expected, k_expected)
    est.n_trees_per_iteration_ = k
    signature = fitted.get("fit_signature")
    if not (
        isinstance(signature, list)
        and len(signature) == 2
        and type(signature[0]) is int
        and 1 <= signature[0] <= _MAX_SAMPLES
        and (
            signature[1] is None
            or (
                isinstance(signature[1], str)
                and len(signature[1]) == 32
                and all(c in "0123456789abcdef" for c in signature[1])
            )
        )
    ):
        _fail("fit_signature must be [training rows, a 32-digit hex digest or null]")
    est._fit_signature = (signature[0], signature[1])
    n_samples = signature[0]
    n_iter = _int(fitted, "n_iter", 1, est.max_iter)
    max_nodes = _max_tree_nodes(
        n_samples, est.min_samples_leaf, est.max_leaf_nodes, est.max_depth
    )
    arrays.expect("baseline", np.float64, (1, k))
    arrays.expect("train_score", np.float64, (("max", n_iter + 1),))
    arrays.expect("validation_score", np.float64, (("max", n_iter + 1),))
    _expect_trees(arrays, "tree", n_iter * k, max_nodes)
    _expect_bin_mapper(arrays, fitted, n_features, est.max_bins)
    return n_iter, k, max_nodes


def _load_booster(est, fitted, arrays, plan):
    from ._categorical import category_counts

    n_iter, k, max_nodes = plan
    n_features = est.n_features_in_
    n_eras = _int(fitted, "n_eras_", 1, est._fit_signature[0])
    if (fitted["eras_"] is None) != (est._fit_signature[1] is None):
        _fail("eras_ and fit_signature disagree about the eras")
    _load_eras(est, fitted, n_eras)
    seed = _int(fitted, "random_seed", 0, 2**32 - 1)
    est._random_seed = np.uint64(seed)
    est._feature_subsample_rng = _rng(fitted, "feature_subsample_rng")
    est._tree_sample_rng = _rng(fitted, "tree_sample_rng")
    est.do_early_stopping_ = _bool(fitted, "do_early_stopping_")
    est._use_validation_data = _bool(fitted, "use_validation_data")
    best = fitted.get("best_iteration_")
    if best is not None:
        est.best_iteration_ = _int(fitted, "best_iteration_", 1, n_iter)
    # the loss from the parameters and the classes, never from the file
    est._loss = est._get_loss(sample_weight=None)
    est._scorer = None

    is_categorical = fitted.get("is_categorical_")
    if is_categorical is None:
        if fitted.get("categories") is not None:
            _fail("categories are set but is_categorical_ is null")
        est.is_categorical_ = None
        est._preprocessor = None
        est._n_categories = np.zeros(0, dtype=np.int64)
        mask = np.zeros(n_features, dtype=bool)
    else:
        if not (
            isinstance(is_categorical, list)
            and len(is_categorical) == n_features
            and all(type(b) is bool for b in is_categorical)
            and any(is_categorical)
        ):
            _fail("is_categorical_ must be n_features_in_ booleans, one of them true")
        est.is_categorical_ = np.array(is_categorical, dtype=bool)
        n_cat = int(est.is_categorical_.sum())
        categories = fitted.get("categories")
        if not (isinstance(categories, list) and len(categories) == n_cat):
            _fail(
                f"categories must list the categories of the {n_cat} categorical "
                "features"
            )
        categories = [
            _decode_labels(c, f"categories[{i}]", est.max_bins + 2)
            for i, c in enumerate(categories)
        ]
        est._preprocessor = _rebuild_encoder(
            est.is_categorical_, categories, getattr(est, "feature_names_in_", None)
        )
        try:
            est._n_categories = category_counts(
                est._preprocessor, est.is_categorical_, est.max_bins
            )
        except ValueError as exc:
            _fail(str(exc))
        mask = np.arange(n_features) < n_cat

    est._baseline_prediction = arrays["baseline"]
    if not np.isfinite(est._baseline_prediction).all():
        _fail("_baseline_prediction is not finite")
    est.train_score_ = arrays["train_score"]
    est.validation_score_ = arrays["validation_score"]
    est._bin_mapper = _load_bin_mapper(
        arrays, fitted["bin_mapper_is_integer"], mask, est.max_bins
    )
    for f, count in enumerate(est._n_categories):
        if not np.array_equal(est._bin_mapper.bin_thresholds_[f], np.arange(count)):
            _fail(
                f"the bin thresholds of the categorical feature {f} are not its "
                "categories"
            )
    trees = _load_trees(arrays, "tree", max_nodes)
    _check_depth(trees, est.max_depth, "the trees")
    est._predictors = [trees[i * k : (i + 1) * k] for i in range(n_iter)]
    return est


def _booster_sums(est):
    per_output = [
        [stage[j] for stage in est._predictors]
        for j in range(est.n_trees_per_iteration_)
    ]
    log_link = not hasattr(est, "classes_") and est.loss in ("poisson", "gamma")
    _check_sums(per_output, est._baseline_prediction[0], log_link)


def _rebuild_encoder(is_categorical, categories, feature_names):
    """The fitted encoder of categorical features, fitted again on rows made
    of the recorded categories; refused unless it finds them exactly."""
    from ._categorical import make_encoder

    n_rows = max([1, *(c.size for c in categories)])
    columns = []
    cat = iter(categories)
    for is_cat in is_categorical:
        if not is_cat:
            columns.append(np.zeros(n_rows))
            continue
        values = next(cat)
        column = np.empty(n_rows, dtype=values.dtype)
        if values.size == 0:
            if values.dtype.kind not in "fO":
                _fail("a categorical feature without categories")
            column[:] = np.nan
        else:
            column[: values.size] = values
            column[values.size :] = values[-1]
        columns.append(column)
    if feature_names is not None:
        try:
            import pandas as pd
        except ImportError:
            _fail("this model's encoder of categorical features needs pandas")
        X = pd.DataFrame(dict(zip(feature_names, columns)))
    elif all(c.dtype.kind == "f" for c in columns):
        X = np.column_stack(columns)
    else:
        X = np.empty((n_rows, len(columns)), dtype=object)
        for j, column in enumerate(columns):
            X[:, j] = column
    encoder = make_encoder(is_categorical)
    try:
        encoder.fit(X)
    except Exception as exc:
        _fail(
            "the encoder of categorical features cannot be rebuilt "
            f"({type(exc).__name__}: {exc})"
        )
    found = encoder.named_transformers_["encoder"].categories_
    if len(found) != len(categories) or not all(
        _same_labels(a, b) for a, b in zip(found, categories)
    ):
        _fail("the categories of a categorical feature are not sorted and distinct")
    return encoder


_FOREST_FIELDS = (
    "n_features_in_",
    "feature_names_in_",
    "eras_",
    "n_eras_",
    "n_samples",
    "oob_score_",
    "bin_mapper_is_integer",
)


def _store_forest(est, arrays):
    fitted = {
        "n_features_in_": int(est.n_features_in_),
        "feature_names_in_": _feature_names(est),
        "eras_": None
        if est.eras_ is None
        else _encode_labels(est.eras_, "eras_", True),
        "n_eras_": int(est.n_eras_),
        "n_samples": int(est._era_codes.shape[0]),
        "oob_score_": float(est.oob_score_) if hasattr(est, "oob_score_") else None,
    }
    if hasattr(est, "classes_"):
        fitted["classes_"] = _encode_labels(est.classes_, "classes_")
    arrays["tree_seeds"] = np.asarray(est._tree_seeds, dtype=np.int64)
    # the rows' era codes as runs: rows usually come era by era
    codes = np.asarray(est._era_codes, dtype=np.int32)
    starts = np.concatenate([[0], np.flatnonzero(np.diff(codes)) + 1])
    arrays["era_run_codes"] = codes[starts]
    arrays["era_run_lengths"] = np.diff(np.append(starts, codes.size)).astype(np.int64)
    for name in ("oob_prediction_", "oob_decision_function_"):
        if hasattr(est, name):
            arrays[name.rstrip("_")] = np.ascontiguousarray(
                getattr(est, name), dtype=np.float64
            )
    _store_trees(est.estimators_, arrays, "tree")
    _store_bin_mapper(est._bin_mapper, arrays, fitted)
    return fitted


def _plan_forest(est, fitted, arrays, is_classifier):
    declared = (*_FOREST_FIELDS, "classes_") if is_classifier else _FOREST_FIELDS
    _fields(fitted, "fitted", declared)
    n_features = _load_features(est, fitted)
    if is_classifier:
        _load_classes(est, fitted, (2,))
    n_samples = _int(fitted, "n_samples", 1, _MAX_SAMPLES)
    max_nodes = _max_tree_nodes(n_samples, est.min_samples_leaf, None, est.max_depth)
    has_oob = fitted.get("oob_score_") is not None
    if has_oob and not est.oob_score:
        _fail("oob_score_ is set but the parameter oob_score is False")
    arrays.expect("tree_seeds", np.int64, (est.n_estimators,))
    arrays.expect("era_run_codes", np.int32, (("max", n_samples),))
    arrays.expect("era_run_lengths", np.int64, (("max", n_samples),))
    if has_oob:
        if is_classifier:
            arrays.expect("oob_decision_function", np.float64, (n_samples, 2))
        else:
            arrays.expect("oob_prediction", np.float64, (n_samples,))
    _expect_trees(arrays, "tree", est.n_estimators, max_nodes)
    _expect_bin_mapper(arrays, fitted, n_features, est.max_bins)
    return n_samples, max_nodes, has_oob


def _load_forest(est, fitted, arrays, plan):
    n_samples, max_nodes, has_oob = plan
    n_eras = _int(fitted, "n_eras_", 1, n_samples)
    _load_eras(est, fitted, n_eras)
    est._tree_seeds = arrays["tree_seeds"]
    if np.any(est._tree_seeds < 0) or np.any(est._tree_seeds >= 2**31):
        _fail("the trees' seeds are out of range")
    codes, lengths = arrays["era_run_codes"], arrays["era_run_lengths"]
    if codes.shape != lengths.shape or np.any(lengths < 1):
        _fail("the runs of the rows' era codes are malformed")
    if lengths.sum() != n_samples:
        _fail(
            f"the runs of the rows' era codes cover {lengths.sum()} rows, "
            f"not {n_samples}"
        )
    if np.any(codes < 0) or np.any(codes >= n_eras):
        _fail(f"the rows' era codes are outside 0 .. {n_eras - 1}")
    est._era_codes = np.repeat(codes, lengths).astype(np.int32)
    if has_oob:
        est.oob_score_ = _float(fitted, "oob_score_")
        if hasattr(est, "classes_"):
            est.oob_decision_function_ = arrays["oob_decision_function"]
        else:
            est.oob_prediction_ = arrays["oob_prediction"]
    est._bin_mapper = _load_bin_mapper(
        arrays,
        fitted["bin_mapper_is_integer"],
        np.zeros(est.n_features_in_, dtype=bool),
        est.max_bins,
    )
    est.estimators_ = _load_trees(arrays, "tree", max_nodes)
    _check_depth(est.estimators_, est.max_depth, "estimators_")
    if hasattr(est, "classes_"):
        for i, tree in enumerate(est.estimators_):
            leaves = tree.nodes["value"][tree.nodes["is_leaf"] == 1]
            if np.any(leaves < 0) or np.any(leaves > 1):
                _fail(f"estimators_[{i}] has leaf values outside [0, 1] (class shares)")
    return est


def _forest_finish(est):
    from .inspection import feature_importances, split_frequency_importances

    _check_sums([est.estimators_], [0.0])
    # derived from the trees, never read
    est.feature_importances_ = feature_importances(est, per_tree=True)
    est.split_frequency_importances_ = split_frequency_importances(est)


_ROBUST_FIELDS = (
    "n_features_in_",
    "feature_names_in_",
    "classes_",
    "formulation_",
    "worst_case_accuracy_",
    "nominal_accuracy_",
    "solver_status_",
    "gap_",
    "n_cuts_",
    "n_iterations_",
    "solve_time_",
)


def _store_robust(est, arrays):
    fitted = {
        "n_features_in_": int(est.n_features_in_),
        "feature_names_in_": _feature_names(est),
        "classes_": _encode_labels(est.classes_, "classes_"),
        "formulation_": getattr(est, "formulation_", None),
        "worst_case_accuracy_": float(est.worst_case_accuracy_),
        "nominal_accuracy_": float(est.nominal_accuracy_),
        "solver_status_": str(est.solver_status_),
        "gap_": float(est.gap_),
        "n_cuts_": int(est.n_cuts_),
        "n_iterations_": int(est.n_iterations_),
        "solve_time_": float(est.solve_time_),
    }
    arrays["tree_features"] = np.asarray(est.tree_features_, dtype=np.int64)
    arrays["tree_thresholds"] = np.asarray(est.tree_thresholds_, dtype=np.float64)
    arrays["leaf_values"] = np.asarray(est.leaf_values_, dtype=np.int64)
    arrays["leaf_proba"] = np.ascontiguousarray(est.leaf_proba_, dtype=np.float64)
    return fitted


def _plan_robust(est, fitted, arrays, is_classifier):
    _fields(fitted, "fitted", _ROBUST_FIELDS)
    _load_features(est, fitted)
    n_classes = _load_classes(est, fitted).size
    depth = est.max_depth
    arrays.expect("tree_features", np.int64, (2**depth - 1,))
    arrays.expect("tree_thresholds", np.float64, (2**depth - 1,))
    arrays.expect("leaf_values", np.int64, (2**depth,))
    arrays.expect("leaf_proba", np.float64, (2**depth, n_classes))
    return None


def _load_robust(est, fitted, arrays, plan):
    formulation = fitted.get("formulation_")
    if formulation is not None:
        est.formulation_ = _text(fitted, "formulation_", ("subtree", "flow"))
    est.worst_case_accuracy_ = _float(fitted, "worst_case_accuracy_", 0.0, 1.0)
    est.nominal_accuracy_ = _float(fitted, "nominal_accuracy_", 0.0, 1.0)
    est.solver_status_ = _text(fitted, "solver_status_")
    gap = fitted.get("gap_")
    if type(gap) not in (int, float) or gap != gap:
        _fail("gap_ must be a number")
    est.gap_ = float(gap)
    est.n_cuts_ = _int(fitted, "n_cuts_", 0, 2**62)
    est.n_iterations_ = _int(fitted, "n_iterations_", 0, 2**62)
    est.solve_time_ = _float(fitted, "solve_time_", 0.0)
    est.tree_features_ = arrays["tree_features"]
    est.tree_thresholds_ = arrays["tree_thresholds"]
    est.leaf_values_ = arrays["leaf_values"]
    proba = arrays["leaf_proba"]
    if not (
        np.all(proba >= 0)
        and np.all(proba <= 1)
        and np.allclose(proba.sum(axis=1), 1.0)
    ):
        _fail(
            "leaf_proba_ must hold class shares: values in [0, 1], each row summing "
            "to 1"
        )
    est.leaf_proba_ = proba
    return est


def _kinds():
    """The estimators a model file may hold: class name -> (class, store,
    plan, load, is_classifier)."""
    from .classifier import HistGradientBoostingClassifier
    from .forest import InvariantForestClassifier, InvariantForestRegressor
    from .gradient_boosting import HistGradientBoostingRegressor
    from .robust import RobustTreeClassifier

    return {
        "HistGradientBoostingRegressor": (
            HistGradientBoostingRegressor,
            _store_booster,
            _plan_booster,
            _load_booster,
            False,
        ),
        "HistGradientBoostingClassifier": (
            HistGradientBoostingClassifier,
            _store_booster,
            _plan_booster,
            _load_booster,
            True,
        ),
        "InvariantForestRegressor": (
            InvariantForestRegressor,
            _store_forest,
            _plan_forest,
            _load_forest,
            False,
        ),
        "InvariantForestClassifier": (
            InvariantForestClassifier,
            _store_forest,
            _plan_forest,
            _load_forest,
            True,
        ),
        "RobustTreeClassifier": (
            RobustTreeClassifier,
            _store_robust,
            _plan_robust,
            _load_robust,
            True,
        ),
    }


# Parameters added after model format 2 was set: a file written before them
# lacks them, and the estimator keeps their defaults (the models it held).
_ADDED_PARAMS = ("era_groups", "min_agreement", "pooled_weight", "irf_variance")


def _make_estimator(cls, params):
    """The estimator made by its constructor, with the file's parameters set
    and checked by scikit-learn's constraints."""
    est = cls()
    known = est.get_params(deep=False)
    params = _fields(
        params,
        "params",
        tuple(k for k in known if k not in _ADDED_PARAMS),
        tuple(k for k in known if k in _ADDED_PARAMS),
    )
    decoded = {
        name: _decode_param(value, f"the parameter {name}")
        for name, value in params.items()
    }
    est.set_params(**decoded)
    from sklearn.utils._param_validation import InvalidParameterError

    try:
        est._validate_params()
    except InvalidParameterError as exc:
        _fail(f"invalid parameter: {exc}")
    if "loss" in known and not isinstance(est.loss, str):
        _fail("the parameter loss must be a loss name")
    if "boltzmann_alpha" in known:
        from ._eras import check_boltzmann_alpha

        try:
            check_boltzmann_alpha(est.boltzmann_alpha)
        except ValueError as exc:
            _fail(f"invalid parameter: {exc}")
    return est


# -- the file ------------------------------------------------------------------------
def _archive(doc, arrays):
    """The zip of ``model.json`` and the arrays, with the members' digests
    as its comment."""
    buffer = io.BytesIO()
    digests = []
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
        content = json.dumps(doc, allow_nan=True).encode()
        zf.writestr(_JSON_MEMBER, content)
        digests.append((_JSON_MEMBER, content))
        for name, array in arrays.items():
            out = io.BytesIO()
            np.lib.format.write_array(
                out, np.ascontiguousarray(array), version=(1, 0), allow_pickle=False
            )
            zf.writestr(f"{name}.npy", out.getvalue())
            digests.append((f"{name}.npy", out.getvalue()))
        zf.comment = _CHECKSUM + b"".join(
            f"\n{name} {hashlib.sha256(c).hexdigest()}".encode() for name, c in digests
        )
    return buffer.getvalue()


def _digests(comment):
    if not comment.startswith(_CHECKSUM):
        _fail("damaged model file: it has no checksum (unknown zip comment)")
    digests = {}
    for line in comment[len(_CHECKSUM) :].decode("ascii", "replace").split("\n")[1:]:
        name, _, digest = line.partition(" ")
        digests[name] = digest
    return digests


def _check_versions(path, versions):
    """The warning to give about the versions that wrote the file, or None."""
    if not (
        isinstance(versions, dict)
        and set(versions) == set(_PACKAGES)
        and all(isinstance(v, str) and 0 < len(v) <= 100 for v in versions.values())
    ):
        _fail("damaged model file (its 'versions' record)")
    current = _versions()
    differ = [name for name in _PACKAGES if versions[name] != current[name]]
    if not differ:
        return None
    written = ", ".join(f"{name} {versions[name]}" for name in differ)
    now = ", ".join(f"{name} {current[name]}" for name in differ)
    return (
        f"model file {path} was written by {written}; this is {now}. The "
        "model passed the checks of load_model, but check its predictions; "
        "re-save it with save_model to record the current versions."
    )


def _writer(doc):
    versions = doc.get("versions")
    if isinstance(versions, dict) and isinstance(versions.get("eraboost"), str):
        return f" (written by eraboost {versions['eraboost'][:40]})"
    return ""


_OLD_FORMAT = (
    "a model file of format 1 (a skops archive written by an eraboost before "
    "format 2); this eraboost loads format 2 only: convert it once with "
    "`eraboost convert OLD --out NEW` or eraboost.persistence.convert_model("
    "OLD, NEW) (needs skops; it keeps only the fields format 2 declares), or "
    "fit the model again"
)


def _read(archive, path):
    """(estimator, metadata, warning about versions) of an open model file."""
    from ._model_checks import UnsoundModel, check_fitted_state

    infos = {}
    for info in archive.infolist():
        if info.filename in infos:
            _fail(f"damaged model file: the member {info.filename[:80]} appears twice")
        infos[info.filename] = info
    if _JSON_MEMBER not in infos:
        if "schema.json" in infos:
            _fail(_OLD_FORMAT)
        _fail("not an eraboost model file (it has no model.json)")
    info = infos[_JSON_MEMBER]
    size = info.file_size
    if size > MAX_JSON_BYTES:
        _fail(f"its model.json is {size:,} bytes; at most {MAX_JSON_BYTES:,} are read")
    if size > _RATIO_FROM and size > _MAX_RATIO * info.compress_size:
        _fail(
            f"its model.json compresses {size:,} bytes into "
            f"{info.compress_size:,}: more than {_MAX_RATIO} to 1"
        )
    digests = _digests(archive.comment)
    content = _read_member(archive, _JSON_MEMBER, digests)
    try:
        doc = json.loads(content)
    except (ValueError, RecursionError):
        _fail("damaged model file: its model.json is not JSON")
    if not isinstance(doc, dict) or doc.get("format") != MODEL_FORMAT:
        _fail("not an eraboost model file")
    version = doc.get("version")
    if type(version) is int and version > MODEL_VERSION:
        _fail(
            f"model format version {version}{_writer(doc)}; this eraboost reads "
            f"version {MODEL_VERSION}: a newer eraboost wrote it (upgrade eraboost)"
        )
    if type(version) is int and version == 1:
        _fail(_OLD_FORMAT)
    if version != MODEL_VERSION or type(version) is not int:
        _fail(
            f"damaged model file: its format version {str(version)[:40]!r} is not a "
            "version eraboost wrote"
        )
    _fields(doc, "the file", _TOP_KEYS)
    warning = _check_versions(path, doc["versions"])
    kinds = _kinds()
    name = doc["estimator"]
    if not isinstance(name, str) or name not in kinds:
        _fail(f"its estimator {str(name)[:60]!r} is not one that eraboost saves")
    metadata = doc["metadata"]
    if not isinstance(metadata, dict):
        _fail("its metadata must be a JSON object")
    _check_plain(metadata, "metadata")
    cls, _, plan, load, is_classifier = kinds[name]
    est = _make_estimator(cls, doc["params"])
    arrays = _Arrays(archive, doc["arrays"], digests)
    fitted = doc["fitted"]
    if not isinstance(fitted, dict):
        _fail("fitted must be a JSON object")
    planned = plan(est, fitted, arrays, is_classifier)
    arrays.check_declarations(infos)
    extra = sorted(set(infos) - {_JSON_MEMBER} - {f"{n}.npy" for n in arrays.expected})
    if extra:
        _fail(f"the file holds undeclared members ({', '.join(map(repr, extra[:5]))})")
    load(est, fitted, arrays, planned)
    try:
        check_fitted_state(est)
    except UnsoundModel as exc:
        _fail(f"unsound model: {exc}")
    if name.startswith("HistGradientBoosting"):
        _booster_sums(est)
    elif name.startswith("InvariantForest"):
        _forest_finish(est)
    return est, metadata, warning


def _read_path(path):
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"cannot read model {path}: no such file")
    if not zipfile.is_zipfile(path):
        raise ModelFileError(
            f"cannot read model {path}: not an eraboost model file (model files "
            "are zip archives written by eraboost.save_model or `eraboost "
            "train`; pickle and joblib files are never loaded here because "
            "loading them runs code: if you trust its source, load it with "
            "joblib.load in Python and save it with eraboost.save_model)"
        )
    try:
        with zipfile.ZipFile(path) as archive:
            return _read(archive, path)
    except _Refused as exc:
        why = " ".join(str(exc).split())  # one line
        raise ModelFileError(f"cannot read model {path}: {why}") from None
    except MemoryError:
        raise ModelFileError(f"cannot read model {path}: not enough memory") from None
    except Exception as exc:  # zlib, zipfile, numpy: whatever damage raises
        why = " ".join(f"damaged model file ({type(exc).__name__}: {exc})".split())
        raise ModelFileError(f"cannot read model {path}: {why}"[:1000]) from None


def save_model(estimator, path, *, metadata=None):
    """Write a fitted estimator to a model file that loads without running code.

    The file holds the estimator's parameters, the fields of its fitted
    state that eraboost declares for its class, and ``metadata``, as JSON
    and NumPy arrays. Before writing anything, the file is read back as
    :func:`load_model` reads it: a model that could not be loaded, e.g.
    fitted with a scikit-learn ``make_scorer`` as ``scoring`` or saved with
    a function in ``metadata``, is refused with a :class:`ModelFileError`
    saying what to remove, and nothing is written.

    The file is written to a temporary name in the same folder
    (``NAME.tmp-XXXXXXXX``) and renamed into place once complete: a failed
    or refused save leaves any previous file at ``path`` intact.

    Parameters
    ----------
    estimator : fitted eraboost estimator
        A ``HistGradientBoostingRegressor`` or ``...Classifier``, an
        ``InvariantForestRegressor`` or ``...Classifier``, or a
        ``RobustTreeClassifier``.
    path : str or Path
        The model file (any extension; ``.skops`` is the convention).
    metadata : dict, default=None
        Free information kept with the model: strings, numbers, booleans,
        None, and lists and dicts (with string keys) of them; tuples come
        back as lists. Returned by ``load_model(path, return_metadata=True)``.

    Raises
    ------
    ModelFileError
        When ``load_model`` would refuse the file: a parameter or the
        metadata hold a value that a model file cannot (a function, an
        object of your own...), or the fitted state is unsound (e.g. NaN
        leaf values).

    Examples
    --------
    >>> import numpy as np
    >>> from eraboost import HistGradientBoostingRegressor, load_model, save_model
    >>> X = np.arange(200.0).reshape(-1, 1)
    >>> est = HistGradientBoostingRegressor(max_iter=5).fit(X, X[:, 0])
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "model.skops")
    >>> save_model(est, path)
    >>> bool((load_model(path).predict(X) == est.predict(X)).all())
    True
    """
    from sklearn.utils.validation import check_is_fitted

    data = _model_bytes(estimator, metadata, path, check_is_fitted)
    with atomic_write(path, "wb") as f:
        f.write(data)


def _model_bytes(estimator, metadata, path, check_is_fitted=None, check=True):
    """The bytes of the model file of ``estimator``, read back as
    load_model reads them (``check=False``, for tests that craft files:
    not read back)."""
    kinds = _kinds()
    name = type(estimator).__name__
    if name not in kinds or type(estimator) is not kinds[name][0]:
        raise TypeError(
            f"save_model saves eraboost estimators; got {type(estimator).__name__}"
        )
    if check_is_fitted is not None:
        check_is_fitted(estimator)
    _, store, *_ = kinds[name]
    prefix = f"cannot save this model to {path}: "
    try:
        params = {
            key: _encode_param(value, key)
            for key, value in estimator.get_params(deep=False).items()
        }
        meta = _plain(dict(metadata or {}), "metadata")
        arrays = {}
        fitted = store(estimator, arrays)
    except _Unstorable as exc:
        where, what = exc.args
        raise ModelFileError(
            prefix + _unstorable_message(estimator, where, what)
        ) from None
    except AttributeError as exc:
        raise ModelFileError(
            prefix + f"its fitted state is incomplete ({exc})"
        ) from None
    doc = {
        "format": MODEL_FORMAT,
        "version": MODEL_VERSION,
        "versions": _versions(),
        "estimator": name,
        "params": params,
        "fitted": fitted,
        "arrays": {
            key: {
                "dtype": np.lib.format.dtype_to_descr(a.dtype),
                "shape": list(a.shape),
            }
            for key, a in arrays.items()
        },
        "metadata": meta,
    }
    doc = json.loads(json.dumps(doc, allow_nan=True))  # tuples of dtypes as lists
    data = _archive(doc, arrays)
    if not check:
        return data
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            _read(archive, path)
    except _Refused as exc:
        why = " ".join(str(exc).split())
        raise ModelFileError(prefix + f"load_model would refuse it ({why})") from None
    return data


def _unstorable_message(estimator, where, what):
    attr = where.split("[")[0].split(".")[0].split(" ")[0]
    if attr in estimator.get_params(deep=False):
        shown = f"the parameter {attr}" + (f" ({where})" if where != attr else "")
        fix = f"est.set_params({attr}=...) with a plain value before saving"
        if attr == "scoring":
            fix = (
                "set scoring to a string or to eraboost.make_era_scorer with "
                "a metric name, e.g. est.set_params(scoring='loss'), before "
                "saving: scoring steers early stopping during fit only, the "
                "fitted trees stay the same"
            )
    else:
        shown, fix = where, "remove it"
    return (
        f"{shown} holds {what}, which a model file cannot hold (it holds "
        "plain values and NumPy arrays, so that loading it runs no code); "
        f"{fix}"
    )


def load_model(path, *, return_metadata=False):
    """Read a model file written by :func:`save_model` or ``eraboost train``.

    Restores no object and runs no code from the file: the estimator is
    made by its constructor from the file's parameters (checked by
    scikit-learn's constraints), and only the fitted fields that eraboost
    declares for its class are set, each of its declared type, dtype and
    shape; the loss, the link, the encoder of categorical features, the bin
    mapper and the trees are rebuilt from plain values and arrays. Sizes
    are checked before reading: ``model.json`` is at most
    :data:`MAX_JSON_BYTES`, and each array's uncompressed size must match
    its declared shape, itself bounded by the parameters (trees no larger
    than fit could grow them).

    The model is then checked: the trees' nodes form trees (child indices
    in range, no cycle, every node reached once), feature indices, bin
    thresholds and category bitsets are within bounds, leaf values are
    finite and any path's sum of them too. A file whose contents do not
    match their checksum is refused as damaged.

    Parameters
    ----------
    path : str or Path
    return_metadata : bool, default=False
        Also return the metadata saved with the model.

    Returns
    -------
    estimator : fitted estimator
    metadata : dict
        Only with ``return_metadata=True``.

    Raises
    ------
    ModelFileError
        (a ``ValueError``) when the file is missing, not a model file,
        damaged, of another format (format 1: see :func:`convert_model`),
        declares fields or values outside the schema, or holds an unsound
        model. The message is one line.

    Warns
    -----
    ModelVersionWarning
        When the file was written by other versions of eraboost,
        scikit-learn or NumPy (naming them and the current ones).
    """
    estimator, metadata, warning = _read_path(path)
    if warning is not None:
        warnings.warn(warning, ModelVersionWarning, stacklevel=2)
    return (estimator, metadata) if return_metadata else estimator


# -- format 1 (skops), read only to convert -------------------------------------
#: Types a format 1 file may hold besides skops' defaults; read only by
#: :func:`convert_model`.
TRUSTED_TYPES = (
    "eraboost._engine.binning.BinMapper",
    "eraboost._engine.predictor.TreePredictor",
    "eraboost.classifier.HistGradientBoostingClassifier",
    "eraboost.forest.InvariantForestClassifier",
    "eraboost.forest.InvariantForestRegressor",
    "eraboost.gradient_boosting.HistGradientBoostingRegressor",
    "eraboost.metrics.EraScorer",
    "eraboost.robust._tree.RobustTreeClassifier",
    "functools.partial",
    "sklearn.utils.validation.check_array",
)

#: The names format 1 files written before the engine and the robust tree
#: became subpackages give three of those types.
LEGACY_TYPES = {
    "eraboost.binning.BinMapper": "eraboost._engine.binning.BinMapper",
    "eraboost.predictor.TreePredictor": "eraboost._engine.predictor.TreePredictor",
    "eraboost.robust.RobustTreeClassifier": (
        "eraboost.robust._tree.RobustTreeClassifier"
    ),
}


def _renamed_legacy_types(data):
    """The skops archive ``data`` with the old type names of its schema
    (:data:`LEGACY_TYPES`) replaced by the current ones."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            raw = archive.read("schema.json")
            if not any(
                f'"{old.rpartition(".")[0]}"'.encode() in raw for old in LEGACY_TYPES
            ):
                return data
            schema = json.loads(raw)
            stack = [schema]
            while stack:
                node = stack.pop()
                if isinstance(node, dict):
                    module, name = node.get("__module__"), node.get("__class__")
                    if isinstance(module, str) and isinstance(name, str):
                        new = LEGACY_TYPES.get(f"{module}.{name}")
                        if new is not None:
                            node["__module__"] = new.rpartition(".")[0]
                    stack.extend(node.values())
                elif isinstance(node, list):
                    stack.extend(node)
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as out:
                for info in archive.infolist():
                    content = (
                        json.dumps(schema).encode()
                        if info.filename == "schema.json"
                        else archive.read(info)
                    )
                    out.writestr(info.filename, content)
            return buffer.getvalue()
    except Exception:
        return data


def _read_format_1(path):
    """The estimator and metadata of a format 1 file, read by skops with
    its type allowlist (nothing outside it is built)."""
    try:
        import skops.io as sio
    except ImportError:
        raise ModelFileError(
            "converting a format 1 model file needs skops: pip install "
            "'skops>=0.16,<0.17'"
        ) from None
    data = _renamed_legacy_types(Path(path).read_bytes())
    try:
        untrusted = set(sio.get_untrusted_types(data=data))
    except Exception as exc:
        raise ModelFileError(
            f"cannot read model {path}: not a format 1 model file "
            f"({type(exc).__name__})"
        ) from None
    refused = untrusted - set(TRUSTED_TYPES)
    if refused:
        raise ModelFileError(
            f"cannot read model {path}: it holds types that eraboost does not "
            f"load ({', '.join(sorted(refused)[:5])})"
        )
    try:
        bundle = sio.loads(data, trusted=sorted(untrusted))
    except Exception as exc:
        raise ModelFileError(
            f"cannot read model {path}: damaged model file ({type(exc).__name__})"
        ) from None
    if not (
        isinstance(bundle, dict)
        and bundle.get("format") == MODEL_FORMAT
        and bundle.get("version") == 1
    ):
        raise ModelFileError(
            f"cannot read model {path}: not a format 1 eraboost model file"
        )
    return bundle.get("estimator"), bundle.get("metadata")


def convert_model(old_path, new_path):
    """Convert a format 1 model file (a skops archive) to format 2.

    The old file is read with skops and its type allowlist, as eraboost
    read such files before format 2; only the parameters and the fitted
    fields that format 2 declares are kept (anything else the file set is
    dropped: the loss, the encoder and the link are rebuilt), and the new
    file is checked as :func:`load_model` checks any file before it is
    written. Needs skops.

    Parameters
    ----------
    old_path : str or Path
        A model file written by an eraboost from before format 2.
    new_path : str or Path
        Where to write the format 2 file.

    Raises
    ------
    ModelFileError
        When the old file cannot be read or its model fails the checks of
        format 2.
    """
    estimator, metadata = _read_format_1(old_path)
    if not isinstance(metadata, dict):
        raise ModelFileError(
            f"cannot read model {old_path}: its metadata is not a dict"
        )
    if type(estimator).__name__ not in _kinds():
        raise ModelFileError(
            f"cannot read model {old_path}: its 'estimator' is not an eraboost "
            "estimator"
        )
    save_model(estimator, new_path, metadata=metadata)
