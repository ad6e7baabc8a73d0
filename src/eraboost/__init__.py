"""eraboost: era-aware histogram gradient boosting.

Drop-in replacements for scikit-learn's histogram gradient boosting
estimators that learn from data split into eras (environments) and prefer
relationships holding in every era.

The names below, and ``__version__``, are imported on first use (PEP 562),
so that ``import eraboost`` and the ``eraboost`` command start at once (the
command imports nothing else before installing its Ctrl-C handling, see
``__main__.py``).
"""

from importlib import import_module

# typing.TYPE_CHECKING without importing typing (tens of milliseconds at
# start-up); type checkers read this name the same way
TYPE_CHECKING = False

# public name -> module defining it
_EXPORTS = {
    "EraEnsembleClassifier": "ensemble",
    "EraEnsembleRegressor": "ensemble",
    "EraKFold": "model_selection",
    "EraTimeSeriesSplit": "model_selection",
    "HistGradientBoostingClassifier": "classifier",
    "HistGradientBoostingRegressor": "gradient_boosting",
    "InvariantForestClassifier": "forest",
    "InvariantForestRegressor": "forest",
    "IterationInfo": "callbacks",
    "ModelFileError": "persistence",
    "ModelVersionWarning": "persistence",
    "RobustTreeClassifier": "robust",
    "era_scores": "metrics",
    "era_summary": "metrics",
    "load_model": "persistence",
    "make_era_scorer": "metrics",
    "save_model": "persistence",
    "to_shap": "explain",
    "worst_fold_refit": "model_selection",
}
_SUBMODULES = {
    "callbacks",
    "classifier",
    "cli",
    "datasets",
    "demo",
    "ensemble",
    "explain",
    "forest",
    "gradient_boosting",
    "inspection",
    "metrics",
    "model_selection",
    "numerai",
    "persistence",
    "plot",
    "report",
    "robust",
    "sampling",
}
# public submodule names that live elsewhere: ``eraboost.report`` is the
# command line's report, ``eraboost.cli.report`` (it was ``eraboost/report.py``
# before the command line became a package)
_MOVED = {"report": "cli.report"}

__all__ = [
    "EraEnsembleClassifier",
    "EraEnsembleRegressor",
    "EraKFold",
    "EraTimeSeriesSplit",
    "HistGradientBoostingClassifier",
    "HistGradientBoostingRegressor",
    "InvariantForestClassifier",
    "InvariantForestRegressor",
    "IterationInfo",
    "ModelFileError",
    "ModelVersionWarning",
    "RobustTreeClassifier",
    "era_scores",
    "era_summary",
    "load_model",
    "make_era_scorer",
    "save_model",
    "to_shap",
    "worst_fold_refit",
]

if TYPE_CHECKING:  # pragma: no cover - for static analysis only
    from .callbacks import IterationInfo
    from .classifier import HistGradientBoostingClassifier
    from .ensemble import EraEnsembleClassifier, EraEnsembleRegressor
    from .explain import to_shap
    from .forest import InvariantForestClassifier, InvariantForestRegressor
    from .gradient_boosting import HistGradientBoostingRegressor
    from .metrics import era_scores, era_summary, make_era_scorer
    from .model_selection import EraKFold, EraTimeSeriesSplit, worst_fold_refit
    from .persistence import (
        ModelFileError,
        ModelVersionWarning,
        load_model,
        save_model,
    )
    from .robust import RobustTreeClassifier


def _version():
    from importlib.metadata import PackageNotFoundError, version

    try:
        # the one version number is meson.build's (pyproject.toml reads it)
        return version("eraboost")
    except PackageNotFoundError:  # pragma: no cover - not installed
        return "unknown"


def __getattr__(name):
    if name == "__version__":
        value = _version()
    elif name in _EXPORTS:
        value = getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
    elif name in _SUBMODULES:
        value = import_module(f".{_MOVED.get(name, name)}", __name__)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__) | _SUBMODULES | {"__version__"})
