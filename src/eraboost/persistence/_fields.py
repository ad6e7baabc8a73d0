"""Reading the fields of ``model.json``: typed values within bounds, and
the fitted fields several kinds share (features, classes, eras, random
generators)."""

import math

import numpy as np

from ._errors import refuse
from ._limits import MAX_FEATURES
from ._values import UnstorableValue, decode_labels

MISSING = object()


def read_int(fields, name, low, high):
    value = fields.get(name, MISSING)
    if value is MISSING:
        refuse(f"the field {name} is missing")
    if type(value) is not int or not low <= value <= high:
        refuse(f"{name} must be an integer in [{low}, {high}], not {value!r}"[:300])
    return value


def read_bool(fields, name):
    value = fields.get(name, MISSING)
    if type(value) is not bool:
        refuse(f"{name} must be true or false")
    return value


def read_float(fields, name, low=-math.inf, high=math.inf):
    value = fields.get(name, MISSING)
    if type(value) not in (int, float) or math.isnan(value) or not low <= value <= high:
        refuse(f"{name} must be a number in [{low}, {high}]")
    return float(value)


def read_text(fields, name, options=None, max_len=200):
    value = fields.get(name, MISSING)
    if not isinstance(value, str) or len(value) > max_len:
        refuse(f"{name} must be a text of at most {max_len} characters")
    if options is not None and value not in options:
        refuse(f"{name} is {value!r}; expected one of {', '.join(options)}")
    return value


def declared_fields(doc, name, declared, optional=()):
    """The dict ``doc[name]``, whose keys are exactly ``declared`` (plus any
    of ``optional``)."""
    fields = doc
    if not isinstance(fields, dict):
        refuse(f"{name} must be a JSON object")
    unknown = sorted(set(fields) - set(declared) - set(optional))
    if unknown:
        shown = ", ".join(repr(k)[:60] for k in unknown[:5])
        refuse(
            f"{name} holds undeclared fields ({shown}); a model file may set only "
            "the declared ones"
        )
    missing = [k for k in declared if k not in fields]
    if missing:
        refuse(f"{name} lacks the field {missing[0]}")
    return fields


# -- fitted fields that several kinds share --------------------------------------
def rng_state(generator):
    state = generator.bit_generator.state
    if state.get("bit_generator") != "PCG64":
        raise UnstorableValue("a random generator", state.get("bit_generator"))
    return {
        "state": int(state["state"]["state"]),
        "inc": int(state["state"]["inc"]),
        "has_uint32": int(state["has_uint32"]),
        "uinteger": int(state["uinteger"]),
    }


def read_rng(fields, name):
    state = declared_fields(
        fields.get(name), name, ("state", "inc", "has_uint32", "uinteger")
    )
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
        refuse(f"{name} is not the state of a PCG64 generator")
    generator = np.random.Generator(np.random.PCG64())
    generator.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": state["state"], "inc": state["inc"]},
        "has_uint32": state["has_uint32"],
        "uinteger": state["uinteger"],
    }
    return generator


def feature_names(est):
    names = getattr(est, "feature_names_in_", None)
    return None if names is None else [str(n) for n in names]


def load_features(est, fitted):
    est.n_features_in_ = read_int(fitted, "n_features_in_", 1, MAX_FEATURES)
    names = fitted.get("feature_names_in_", MISSING)
    if names is MISSING:
        refuse("the field feature_names_in_ is missing")
    if names is not None:
        if not (
            isinstance(names, list)
            and len(names) == est.n_features_in_
            and all(isinstance(s, str) for s in names)
        ):
            refuse("feature_names_in_ must be a list of n_features_in_ texts")
        est.feature_names_in_ = np.array(names, dtype=object)
    return est.n_features_in_


def load_classes(est, fitted, n_allowed=None, n_samples=None):
    """``classes_``: at most 65,536, and no more than the ``n_samples``
    training rows when known (fit finds a class in a row)."""
    max_classes, too_many = 2**16, "a classifier has at most 65536"
    if n_samples is not None and n_samples < max_classes:
        max_classes = n_samples
        too_many = f"fit finds at most one per training row ({n_samples})"
    classes = fitted.get("classes_")
    if isinstance(classes, dict) and isinstance(classes.get("values"), list):
        n = len(classes["values"])
        if n > max_classes:
            refuse(f"classes_ has {n} classes; {too_many}")
    classes = decode_labels(classes, "classes_", max_classes, too_many)
    if classes.size < 2:
        refuse(f"classes_ has {classes.size} class; a classifier has at least 2")
    if classes.dtype.kind == "O" and not all(isinstance(c, str) for c in classes):
        refuse("classes_ must hold texts or numbers")
    if classes.dtype.kind == "f" and not np.isfinite(classes).all():
        refuse("classes_ holds NaN or infinity")
    if classes.dtype.kind in "Mm" and np.isnat(classes).any():
        refuse("classes_ holds NaT (a missing date), which fit never makes a class")
    order = (
        np.array(sorted(classes.tolist()))
        if classes.dtype.kind == "O"
        else np.unique(classes)
    )
    if order.size != classes.size or not all(
        a == b for a, b in zip(order.tolist(), classes.tolist())
    ):
        refuse("classes_ must be sorted and distinct")
    if n_allowed is not None and classes.size not in n_allowed:
        refuse(
            f"classes_ has {classes.size} classes; expected "
            f"{' or '.join(map(str, n_allowed))}"
        )
    est.classes_ = classes
    return classes


def load_eras(est, fitted, n_eras):
    eras = fitted.get("eras_", MISSING)
    if eras is MISSING:
        refuse("the field eras_ is missing")
    if eras is not None:
        eras = decode_labels(eras, "eras_", n_eras)
        if eras.size != n_eras:
            refuse(f"eras_ has {eras.size} labels; n_eras_ is {n_eras}")
    est.eras_ = eras
    est.n_eras_ = n_eras
