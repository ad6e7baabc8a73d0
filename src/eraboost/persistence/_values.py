"""The JSON value codec: parameters, metadata and labels as plain JSON.

Parameters are plain JSON values and tagged one-key objects (tuples, sets,
dicts, arrays, era scorers, RandomState); metadata is plain JSON; labels
(classes, eras, categories) are ``{"dtype": ..., "values": [...]}``. Every
decoder checks what it reads and refuses anything else.
"""

import contextlib
import contextvars
import math
import numbers

import numpy as np

from ._errors import refuse, type_name
from ._limits import MAX_NESTING, MAX_PARAM_ARRAY

# bytes that the text arrays of the file being read may still take
_TEXT_BYTES_LEFT = contextvars.ContextVar("text_bytes_left", default=None)


@contextlib.contextmanager
def text_budget(n_bytes):
    """Within it, the text arrays decoded take at most ``n_bytes`` in all:
    a label is as wide as the array's dtype says, whatever its length in
    the file, so the width times the count is checked before the array is
    made."""
    token = _TEXT_BYTES_LEFT.set([n_bytes])
    try:
        yield
    finally:
        _TEXT_BYTES_LEFT.reset(token)


def _spend_text_bytes(dtype, values, where):
    """Check a text array of ``values`` as ``dtype`` against the budget
    before it is made."""
    left = _TEXT_BYTES_LEFT.get()
    n_bytes = dtype.itemsize * len(values)
    if left is None or n_bytes <= left[0]:
        if left is not None:
            left[0] -= n_bytes
        return
    longest = max(map(len, values), default=0)
    refuse(
        f"{where} is stored {dtype.itemsize // 4} characters wide; its longest "
        f"label has {longest}: {len(values):,} labels of that width take "
        f"{n_bytes:,} bytes, more than a model.json of this size may make "
        f"({left[0]:,} left)"
    )


# -- plain values: the parameters and the metadata -----------------------------
class UnstorableValue(Exception):
    """A value that a model file cannot hold: (where, what)."""


def value_name(obj):
    """The name of ``obj`` (a function, a class) or of its type."""
    module = getattr(obj, "__module__", None)
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if isinstance(module, str) and isinstance(name, str) and callable(obj):
        return f"{module}.{name}"
    if type(obj).__name__ == "ufunc":
        return f"numpy.{obj.__name__}"
    return type_name(obj)


def metadata_to_json(value, where, depth=0):
    """``value`` as plain JSON (metadata): None, bool, int, float, str, and
    lists and str-keyed dicts of them (a tuple becomes a list)."""
    if depth > MAX_NESTING:
        raise UnstorableValue(where, f"more than {MAX_NESTING} levels of nesting")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, numbers.Integral) and type(value) in (int, np.int64):
        return int(value)
    if type(value) in (float, np.float64):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [
            metadata_to_json(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)
        ]
    if isinstance(value, dict):
        out = {}
        for key, v in value.items():
            if not isinstance(key, str):
                raise UnstorableValue(f"{where} (a key)", value_name(key))
            out[key] = metadata_to_json(v, f"{where}[{key!r}]", depth + 1)
        return out
    raise UnstorableValue(where, value_name(value))


def check_json_value(value, where, depth=0):
    """Check that a value read from ``model.json`` is plain JSON."""
    if depth > MAX_NESTING:
        refuse(f"{where} nests more than {MAX_NESTING} levels")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        for i, v in enumerate(value):
            check_json_value(v, f"{where}[{i}]", depth + 1)
        return value
    if isinstance(value, dict):
        for key, v in value.items():
            check_json_value(v, f"{where}[{key!r}]", depth + 1)
        return value
    refuse(f"{where} is not a plain JSON value")  # pragma: no cover - json gives these


def _param_array_dtype(text):
    """A dtype of a parameter array: booleans, numbers or fixed-size text."""
    if not isinstance(text, str) or len(text) > 10:
        refuse(f"unknown dtype {text!r}")
    try:
        dtype = np.dtype(text)
    except TypeError:
        refuse(f"unknown dtype {text!r}")
    if dtype.kind not in "biufU" or dtype.itemsize > 4 * 256:
        refuse(f"dtype {text!r} is not allowed in a parameter")
    return dtype


def encode_param(value, where, depth=0):
    """A parameter value as JSON: plain values, and tagged one-key objects
    for tuples, sets, dicts, arrays, era scorers and RandomState."""
    from ..metrics import _AGGREGATES, _METRICS, EraScorer

    if depth > MAX_NESTING:
        raise UnstorableValue(where, "deeply nested values")
    if value is None or isinstance(value, (bool, np.bool_, str)):
        return bool(value) if isinstance(value, np.bool_) else value
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real) and isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, list):
        return [
            encode_param(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)
        ]
    if isinstance(value, (tuple, set, frozenset)):
        items = list(value)
        if not isinstance(value, tuple):
            items = sorted(items, key=repr)
        tag = "tuple" if isinstance(value, tuple) else "set"
        return {
            tag: [
                encode_param(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(items)
            ]
        }
    if isinstance(value, dict):
        return {
            "dict": [
                [
                    encode_param(k, f"{where} (a key)", depth + 1),
                    encode_param(v, f"{where}[{k!r}]", depth + 1),
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
        raise UnstorableValue(f"{where}.metric", value_name(value.metric))
    if type(value) is np.random.RandomState:
        _, keys, pos, has_gauss, cached = value.get_state(legacy=True)
        return {
            "random_state": [keys.tolist(), int(pos), int(has_gauss), float(cached)]
        }
    raise UnstorableValue(where, value_name(value))


def decode_param(value, where, depth=0):
    """The parameter value of :func:`encode_param`'s JSON, checked."""
    from ..metrics import EraScorer

    if depth > MAX_NESTING:
        refuse(f"{where} nests more than {MAX_NESTING} levels")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, list):
        return [
            decode_param(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(value)
        ]
    if not (isinstance(value, dict) and len(value) == 1):
        refuse(f"{where} is not a parameter value")
    ((tag, content),) = value.items()
    if tag in ("tuple", "set", "dict", "ndarray", "era_scorer", "random_state"):
        if not isinstance(content, list):
            refuse(f"{where}: {tag} must be a list")
    else:
        refuse(f"{where} is of an unknown kind {tag[:40]!r}")
    if tag in ("tuple", "set"):
        items = [
            decode_param(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(content)
        ]
        if tag == "tuple":
            return tuple(items)
        try:
            return set(items)
        except TypeError:
            refuse(f"{where}: a set of unhashable values")
    if tag == "dict":
        out = {}
        for item in content:
            if not (isinstance(item, list) and len(item) == 2):
                refuse(f"{where}: a dict item must be [key, value]")
            key = decode_param(item[0], f"{where} (a key)", depth + 1)
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                refuse(f"{where}: a dict key must be a plain value")
            out[key] = decode_param(item[1], f"{where}[{key!r}]", depth + 1)
        return out
    if tag == "ndarray":
        if len(content) != 3:
            refuse(f"{where}: an array is [dtype, shape, values]")
        dtype = _param_array_dtype(content[0])
        shape, values = content[1], content[2]
        if not (
            isinstance(shape, list)
            and len(shape) <= 2
            and all(type(s) is int and 0 <= s <= MAX_PARAM_ARRAY for s in shape)
            and isinstance(values, list)
            and len(values) == math.prod(shape) <= MAX_PARAM_ARRAY
        ):
            refuse(f"{where}: an array of a wrong shape or size")
        kinds = {"b": (bool,), "i": (int,), "u": (int,), "f": (int, float), "U": (str,)}
        if not all(type(v) in kinds[dtype.kind] for v in values):
            refuse(f"{where}: array values of the wrong type for {dtype}")
        if dtype.kind == "U":
            _spend_text_bytes(dtype, values, where)
        try:
            return np.array(values, dtype=dtype).reshape(shape)
        except (OverflowError, ValueError):
            refuse(f"{where}: array values outside {dtype}")
    if tag == "era_scorer":
        from ..metrics import _AGGREGATES, _METRICS

        if not (
            len(content) == 2
            and isinstance(content[0], str)
            and content[0] in _METRICS
            and isinstance(content[1], str)
            and content[1] in _AGGREGATES
        ):
            refuse(f"{where}: an era scorer of an unknown metric or aggregate")
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
        refuse(f"{where}: not the state of a RandomState")
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
def encode_labels(values, where, text_fallback=False):
    """A 1-D array of labels as {"dtype": ..., "values": [...]}.

    Numbers, booleans, NumPy text and dates keep their dtype; an object
    array may hold text, and None and NaN (missing values of categories).
    With ``text_fallback``, other objects are kept as their text."""
    values = np.asarray(values)
    if values.ndim != 1:
        raise UnstorableValue(where, f"an array of {values.ndim} dimensions")
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
                raise UnstorableValue(where, value_name(v))
        return {"dtype": "object", "values": out}
    raise UnstorableValue(where, f"an array of dtype {values.dtype}")


# datetime and timedelta units of labels: those Arrow writes (no multiples)
_DATETIME_UNITS = {"M": ("D", "s", "ms", "us", "ns"), "m": ("s", "ms", "us", "ns")}


def decode_labels(value, where, max_len, too_many=None):
    """The array of :func:`encode_labels`'s JSON, checked: at most
    ``max_len`` values (else refused saying ``too_many``, or a bound), of a
    dtype that fit makes (native byte order, no float16, datetimes in
    whole units Arrow writes)."""
    if not (isinstance(value, dict) and set(value) == {"dtype", "values"}):
        refuse(f"{where} must be {{'dtype': ..., 'values': [...]}}")
    text, values = value["dtype"], value["values"]
    if not isinstance(values, list):
        refuse(f"{where} must be a list of at most {max_len} values")
    if len(values) > max_len:
        if too_many is not None:
            refuse(f"{where} holds {len(values)} values; {too_many}")
        refuse(f"{where} must be a list of at most {max_len} values")
    if text == "object":
        if not all(
            isinstance(v, str) or v is None or (isinstance(v, float) and math.isnan(v))
            for v in values
        ):
            refuse(f"{where} holds values other than text and missing values")
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    if not isinstance(text, str) or len(text) > 20:
        refuse(f"{where} has an unknown dtype")
    try:
        dtype = np.dtype(text)
    except TypeError:
        refuse(f"{where} has an unknown dtype {text!r}")
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
        refuse(f"{where} has a dtype {text!r} that labels may not have")
    if not dtype.isnative:
        refuse(
            f"{where} has the non-native byte order of {text!r}; fit makes labels "
            "of the machine's byte order"
        )
    if dtype == np.float16:
        refuse(f"{where} is float16, which fit does not make labels of")
    if dtype.kind in "Mm":
        unit, count = np.datetime_data(dtype)
        if count != 1 or unit not in _DATETIME_UNITS[dtype.kind]:
            units = ", ".join(_DATETIME_UNITS[dtype.kind])
            refuse(
                f"{where} has the dtype {text!r}; labels of dates or durations "
                f"have one of the units {units}"
            )
    if not all(type(v) in kinds[dtype.kind] for v in values):
        refuse(f"{where} holds values of the wrong type for {dtype}")
    if dtype.kind == "U":
        _spend_text_bytes(dtype, values, where)
    try:
        if dtype.kind in "Mm":
            return np.array(values, dtype=np.int64).view(dtype)
        return np.array(values, dtype=dtype)
    except (OverflowError, ValueError):
        refuse(f"{where} holds values outside {dtype}")


def same_labels(a, b):
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
