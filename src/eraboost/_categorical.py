"""Categorical features: which columns, and their ordinal encoding.

The rules are the installed scikit-learn's (1.7 to 1.9):
``categorical_features`` is a boolean mask, integer indices, feature names,
``"from_dtype"`` (the Categorical and Enum columns of a dataframe) or None.
Categorical columns are ordinal-encoded by a fitted ``OrdinalEncoder``
(categories sorted, codes ``0 .. k - 1``; missing and unknown values become
NaN) and placed first, before the numeric columns, as scikit-learn does, so
that the engine sees the same matrix and grows the same trees. Constraints
given per user column are remapped to that internal order.
"""

from functools import partial

import numpy as np
from sklearn.compose import ColumnTransformer
from sklearn.preprocessing import FunctionTransformer, OrdinalEncoder
from sklearn.utils._missing import is_scalar_nan
from sklearn.utils.validation import check_array

try:  # scikit-learn 1.9 and newer
    from sklearn.utils.validation import _check_categorical_features
except ImportError:  # scikit-learn 1.7 and 1.8: a method of the estimators
    from sklearn.ensemble import HistGradientBoostingRegressor

    def _check_categorical_features(X, categorical_features):
        if isinstance(categorical_features, str) and categorical_features == (
            "from_dtype"
        ):
            mask = _polars_categorical_mask(X)
            if mask is not None:
                categorical_features = mask
        estimator = HistGradientBoostingRegressor(
            categorical_features=categorical_features
        )
        return estimator._check_categorical_features(X)


def _polars_categorical_mask(X):
    """The Categorical and Enum columns of a polars DataFrame that has no
    dataframe interchange protocol (polars 2), where scikit-learn 1.7 and 1.8
    look for them; None for anything else."""
    if hasattr(X, "__dataframe__") or not type(X).__module__.startswith("polars"):
        return None
    schema = getattr(X, "schema", None)
    if schema is None:
        return None

    def kind(dtype):
        return (dtype if isinstance(dtype, type) else type(dtype)).__name__

    return np.array([kind(d) in ("Categorical", "Enum") for d in schema.values()])


def check_categorical_features(X, categorical_features):
    """Boolean mask (n_features,) of the categorical columns of X, or None
    when there are none. Raises the installed scikit-learn's errors for bad
    specifications, and finds the categorical dtypes as it does."""
    if categorical_features is not None and not hasattr(X, "shape"):
        X = check_array(X, dtype=None, ensure_all_finite=False)
    return _check_categorical_features(X, categorical_features)


def make_encoder(is_categorical):
    """Unfitted transformer: encoded categorical columns first, then the
    numeric columns as float64."""
    encoder = OrdinalEncoder(
        categories="auto",
        handle_unknown="use_encoded_value",
        unknown_value=np.nan,
        encoded_missing_value=np.nan,
        dtype=np.float64,
    )
    numeric = FunctionTransformer(
        partial(check_array, dtype=[np.float64], ensure_all_finite=False)
    )
    preprocessor = ColumnTransformer(
        [("encoder", encoder, is_categorical), ("numerical", numeric, ~is_categorical)]
    )
    preprocessor.set_output(transform="default")
    return preprocessor


def category_counts(preprocessor, is_categorical, max_bins):
    """Number of known categories of each categorical feature (internal
    order), missing values excluded.

    Raises ValueError when a feature has more than ``max_bins`` categories
    (each category needs its own bin).
    """
    encoder = preprocessor.named_transformers_["encoder"]
    columns = np.flatnonzero(is_categorical)
    names = getattr(preprocessor, "feature_names_in_", None)
    counts = []
    for column, categories in zip(columns, encoder.categories_):
        k = len(categories)
        if k and is_scalar_nan(categories[-1]):
            k -= 1  # NaN is the missing-value bin, not a category
        if k > max_bins:
            name = f"at index {column}" if names is None else repr(names[column])
            raise ValueError(
                f"Categorical feature {name} is expected to have a "
                f"cardinality <= {max_bins} but actually has a cardinality "
                f"of {k}. Group rare categories, or raise max_bins (at most "
                "255)."
            )
        counts.append(k)
    return np.asarray(counts, dtype=np.int64)


def internal_order(is_categorical):
    """User column index of each internal column (categorical ones first)."""
    return np.concatenate(
        [np.flatnonzero(is_categorical), np.flatnonzero(~is_categorical)]
    )


def remap_monotonic_cst(cst, is_categorical):
    """Constraints in internal order; categorical features cannot have one."""
    if np.any(cst[is_categorical] != 0):
        raise ValueError("Categorical features cannot have monotonic constraints.")
    return cst[internal_order(is_categorical)]


def remap_interaction_cst(groups, is_categorical):
    """Interaction groups of user column indices, in internal indices."""
    position = np.argsort(internal_order(is_categorical))
    return [{int(position[i]) for i in group} for group in groups]
