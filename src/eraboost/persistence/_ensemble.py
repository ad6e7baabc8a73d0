"""The schema of EraEnsembleRegressor and EraEnsembleClassifier: each member
stored by its own kind's schema, its arrays under the prefix ``member<i>_``.

The parameters hold the weights and, when ``estimators`` is not None, each
member's name, class and parameters (``params`` below, in place of the
plain encoding of every parameter). ``fitted`` holds the fitted members of
positive weight, each as ``{"name", "estimator", "params", "fitted"}``, and
their weights. A member is a booster, a forest or the robust tree, never
an ensemble.
"""

import math

import numpy as np

from ._errors import refuse
from ._fields import (
    declared_fields,
    feature_names,
    load_classes,
    load_features,
)
from ._limits import MAX_MEMBERS
from ._values import (
    UnstorableValue,
    decode_param,
    encode_labels,
    encode_param,
    same_labels,
)

FIELDS = ("n_features_in_", "feature_names_in_", "weights_", "members")
MEMBER_KEYS = ("name", "estimator", "params")


class _Prefixed:
    """A member's view of the file's arrays: its names under a prefix."""

    def __init__(self, arrays, prefix):
        self.arrays = arrays
        self.prefix = prefix

    def __setitem__(self, name, value):
        self.arrays[self.prefix + name] = value

    def __getitem__(self, name):
        return self.arrays[self.prefix + name]

    def expect(self, name, dtype, shape):
        self.arrays.expect(self.prefix + name, dtype, shape)


def _member_kind(name, model):
    from ._registry import kind_of

    kind = kind_of(model)
    if kind is None or kind.schema.__name__ == __name__:
        raise UnstorableValue(
            f"the member {name!r}",
            f"a {type(model).__name__} (a member must be an eraboost booster, "
            "forest or robust tree)",
        )
    return kind


def _member_params(name, model):
    _member_kind(name, model)
    return {
        key: encode_param(value, f"the member {name!r}'s parameter {key}")
        for key, value in model.get_params(deep=False).items()
    }


def params(est):
    """The ensemble's parameters as JSON: the weights, and each member's
    name, class and parameters."""
    members = est.estimators
    if members is not None:
        members = [
            {
                "name": str(name),
                "estimator": type(model).__name__,
                "params": _member_params(name, model),
            }
            for name, model in est._check_members()
        ]
    return {"estimators": members, "weights": encode_param(est.weights, "weights")}


def _read_member(doc, where, is_classifier, keys=MEMBER_KEYS):
    """(name, unfitted member, its kind) of a member's record."""
    from ._registry import KINDS, estimator_class, make_estimator

    declared_fields(doc, where, keys)
    name, cls = doc["name"], doc["estimator"]
    if not (isinstance(name, str) and 0 < len(name) <= 200):
        refuse(f"{where}: its name must be a text of 1 to 200 characters")
    if not isinstance(cls, str) or cls not in KINDS or cls.startswith("EraEnsemble"):
        refuse(f"{where}: {str(cls)[:60]!r} is not a member eraboost saves")
    kind = KINDS[cls]
    if kind.is_classifier != is_classifier:
        refuse(f"{where}: a {cls} in an ensemble of other estimators")
    return name, make_estimator(estimator_class(cls), doc["params"]), kind


def _members(value, where):
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_MEMBERS:
        refuse(f"{where} must be a list of 1 to {MAX_MEMBERS} members")
    return value


def make(cls, params):
    """The ensemble made by its constructor, with its members made by theirs
    and the file's parameters checked."""
    declared_fields(params, "params", ("estimators", "weights"))
    est = cls()
    is_classifier = est._kind == "classifier"
    members = params["estimators"]
    if members is not None:
        est.estimators = [
            _read_member(doc, f"member {i} of estimators", is_classifier)[:2]
            for i, doc in enumerate(_members(members, "estimators"))
        ]
    est.weights = decode_param(params["weights"], "the parameter weights")
    try:
        est._check_weights(len(est._check_members()))
    except ValueError as exc:
        refuse(f"invalid parameter: {exc}")
    return est


def store(est, arrays):
    members = []
    for i, (name, model) in enumerate(est.named_estimators_.items()):
        kind = _member_kind(name, model)
        members.append(
            {
                "name": str(name),
                "estimator": type(model).__name__,
                "params": _member_params(name, model),
                "fitted": kind.schema.store(model, _Prefixed(arrays, f"member{i}_")),
            }
        )
    fitted = {
        "n_features_in_": int(est.n_features_in_),
        "feature_names_in_": feature_names(est),
        "weights_": [float(w) for w in est.weights_],
        "members": members,
    }
    if est._kind == "classifier":
        fitted["classes_"] = encode_labels(est.classes_, "classes_")
    return fitted


def plan(est, fitted, arrays, is_classifier):
    declared_fields(fitted, "fitted", FIELDS + (("classes_",) * is_classifier))
    load_features(est, fitted)
    if is_classifier:
        load_classes(est, fitted)
    # the fitted members are those of positive weight, with those weights
    expected = [
        (name, float(w))
        for (name, _), w in zip(
            est._check_members(), est._check_weights(len(est._check_members()))
        )
        if w > 0
    ]
    members = _members(fitted["members"], "fitted members")
    weights = fitted["weights_"]
    if not (
        isinstance(weights, list)
        and all(type(w) in (int, float) and math.isfinite(w) for w in weights)
    ):
        refuse("weights_ must be a list of finite numbers")
    names = [m.get("name") if isinstance(m, dict) else None for m in members]
    if list(zip(names, weights)) != expected:
        refuse(
            "the fitted members and their weights are not the members of "
            "positive weight that the parameters give"
        )
    planned = []
    for i, doc in enumerate(members):
        where = f"fitted member {i}"
        declared_fields(doc, where, (*MEMBER_KEYS, "fitted"))
        _, model, kind = _read_member(
            {k: doc[k] for k in MEMBER_KEYS}, where, is_classifier
        )
        view = _Prefixed(arrays, f"member{i}_")
        fields = doc["fitted"]
        if not isinstance(fields, dict):
            refuse(f"{where}: fitted must be a JSON object")
        planned.append(
            (
                model,
                kind,
                fields,
                view,
                kind.schema.plan(model, fields, view, is_classifier),
            )
        )
    return planned


def load(est, fitted, arrays, planned):
    from sklearn.utils import Bunch

    for model, kind, fields, view, member_plan in planned:
        kind.schema.load(model, fields, view, member_plan)
    models = [p[0] for p in planned]
    est.estimators_ = models
    est.named_estimators_ = Bunch(
        **{m["name"]: model for m, model in zip(fitted["members"], models)}
    )
    est.weights_ = np.array(fitted["weights_"], dtype=np.float64)
    return est


def check(est, is_classifier):
    """Each member's fitted state, and the members' features and classes
    are the ensemble's."""
    from .._model_checks import UnsoundModel, check_params
    from ._registry import kind_of

    for name, model in est.named_estimators_.items():
        check_params(model)
        kind_of(model).schema.check(model, is_classifier)
        if model.n_features_in_ != est.n_features_in_:
            raise UnsoundModel(f"the member {name!r} has another n_features_in_")
        if feature_names(model) != feature_names(est):
            raise UnsoundModel(f"the member {name!r} has other feature names")
        if is_classifier and not same_labels(model.classes_, est.classes_):
            raise UnsoundModel(f"the member {name!r} has other classes")


def finish(est):
    """Each member's own."""
    from ._registry import kind_of

    for model in est.estimators_:
        kind_of(model).schema.finish(model)
