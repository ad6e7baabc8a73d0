"""The kinds of estimator a model file may hold, and how each is made.

Each kind is a class of eraboost and the schema module that stores and
reads its fitted state. A schema module defines ``FIELDS`` (the fitted
fields of ``model.json``) and five functions:

- ``store(est, arrays)``: the fitted fields as JSON; the arrays added to
  ``arrays``;
- ``plan(est, fitted, arrays, is_classifier)``: reads the fields that bound
  the arrays and declares each array (``arrays.expect``) before any member
  is read; returns what ``load`` needs;
- ``load(est, fitted, arrays, planned)``: sets the fitted state;
- ``check(est, is_classifier)``: the fitted state that predict relies on;
- ``finish(est)``: what is checked or derived once the state is sound;

and may define two more, where its parameters are not plain values (the
ensembles' members):

- ``params(est)``: the parameters as JSON (else each parameter encoded);
- ``make(cls, params)``: the estimator made from them (else
  :func:`make_estimator`).

A new kind is one schema module and one line of :data:`KINDS`.
"""

from dataclasses import dataclass
from importlib import import_module

from . import _booster, _ensemble, _forest, _robust
from ._errors import refuse
from ._fields import declared_fields
from ._values import decode_param


@dataclass(frozen=True)
class Kind:
    """A class of eraboost (``module`` under ``eraboost``) and its schema."""

    module: str
    schema: object
    is_classifier: bool


#: class name -> its kind
KINDS = {
    "HistGradientBoostingRegressor": Kind("gradient_boosting", _booster, False),
    "HistGradientBoostingClassifier": Kind("classifier", _booster, True),
    "InvariantForestRegressor": Kind("forest", _forest, False),
    "InvariantForestClassifier": Kind("forest", _forest, True),
    "RobustTreeClassifier": Kind("robust", _robust, True),
    "EraEnsembleRegressor": Kind("ensemble", _ensemble, False),
    "EraEnsembleClassifier": Kind("ensemble", _ensemble, True),
}


def estimator_class(name):
    """The class of eraboost named ``name`` (a key of :data:`KINDS`)."""
    module = import_module(f"eraboost.{KINDS[name].module}")
    return getattr(module, name)


def kind_of(estimator):
    """The kind of ``estimator`` (an instance of one of eraboost's classes,
    never a subclass or another library's class of the same name), or None."""
    name = type(estimator).__name__
    if name in KINDS and type(estimator) is estimator_class(name):
        return KINDS[name]
    return None


# Parameters added after model format 2 was set: a file written before them
# lacks them, and the estimator keeps their defaults (the models it held).
_ADDED_PARAMS = ("era_groups", "min_agreement", "pooled_weight", "irf_variance")


def make_estimator(cls, params):
    """The estimator made by its constructor, with the file's parameters set
    and checked by scikit-learn's constraints."""
    est = cls()
    known = est.get_params(deep=False)
    params = declared_fields(
        params,
        "params",
        tuple(k for k in known if k not in _ADDED_PARAMS),
        tuple(k for k in known if k in _ADDED_PARAMS),
    )
    decoded = {
        name: decode_param(value, f"the parameter {name}")
        for name, value in params.items()
    }
    est.set_params(**decoded)
    from sklearn.utils._param_validation import InvalidParameterError

    try:
        est._validate_params()
    except InvalidParameterError as exc:
        refuse(f"invalid parameter: {exc}")
    if "loss" in known and not isinstance(est.loss, str):
        refuse("the parameter loss must be a loss name")
    if "boltzmann_alpha" in known:
        from .._eras import check_boltzmann_alpha

        try:
            check_boltzmann_alpha(est.boltzmann_alpha)
        except ValueError as exc:
            refuse(f"invalid parameter: {exc}")
    return est
