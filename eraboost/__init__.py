"""eraboost: era-aware histogram gradient boosting.

Drop-in replacements for scikit-learn's histogram gradient boosting
estimators that learn from data split into eras (environments) and prefer
relationships holding in every era.
"""
from .classifier import HistGradientBoostingClassifier
from .gradient_boosting import HistGradientBoostingRegressor

__all__ = ["HistGradientBoostingClassifier", "HistGradientBoostingRegressor"]
__version__ = "0.1.0.dev0"
