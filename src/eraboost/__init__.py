"""eraboost: era-aware histogram gradient boosting.

Drop-in replacements for scikit-learn's histogram gradient boosting
estimators that learn from data split into eras (environments) and prefer
relationships holding in every era.
"""

from importlib.metadata import PackageNotFoundError, version

from .callbacks import IterationInfo
from .classifier import HistGradientBoostingClassifier
from .explain import to_shap
from .forest import InvariantForestClassifier, InvariantForestRegressor
from .gradient_boosting import HistGradientBoostingRegressor
from .metrics import era_scores, era_summary, make_era_scorer
from .model_selection import EraKFold, EraTimeSeriesSplit, worst_fold_refit

__all__ = [
    "EraKFold",
    "EraTimeSeriesSplit",
    "HistGradientBoostingClassifier",
    "HistGradientBoostingRegressor",
    "InvariantForestClassifier",
    "InvariantForestRegressor",
    "IterationInfo",
    "era_scores",
    "era_summary",
    "make_era_scorer",
    "to_shap",
    "worst_fold_refit",
]
try:
    # the one version number is meson.build's (pyproject.toml reads it)
    __version__ = version("eraboost")
except PackageNotFoundError:  # pragma: no cover - not installed
    __version__ = "unknown"
