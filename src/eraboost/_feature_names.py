"""Feature names from every table, whatever the installed scikit-learn.

scikit-learn 1.7 and 1.8 read a table's column names through the dataframe
interchange protocol, which polars 2 no longer has: a model fitted on a
polars frame there would have no ``feature_names_in_`` (scikit-learn 1.9
reads them through narwhals). eraboost takes the names of a polars
DataFrame or a pyarrow Table from the table itself where scikit-learn sees
none, and checks them at predict time as scikit-learn checks a pandas
frame's, so that a model has the same ``feature_names_in_`` on every
supported scikit-learn.
"""

import os
import sys
import warnings

import numpy as np
import sklearn
from sklearn.utils.validation import _get_feature_names
from sklearn.utils.validation import validate_data as _sk_validate_data

_NO_NAMES = "X does not have valid feature names"


def table_feature_names(X):
    """The column names of a polars DataFrame or pyarrow Table (or
    RecordBatch) where the installed scikit-learn sees none; None for other
    inputs, for tables scikit-learn names itself, and for names that are not
    all strings (scikit-learn keeps only string names)."""
    module = type(X).__module__.split(".")[0]
    if module == "polars" and hasattr(X, "columns"):
        names = list(X.columns)
    elif module == "pyarrow" and hasattr(X, "column_names"):
        names = list(X.column_names)
    else:
        return None
    if not names or not all(isinstance(name, str) for name in names):
        return None
    if _get_feature_names(X) is not None:
        return None
    return np.asarray(names, dtype=object)


def check_feature_names(estimator, names, reset):
    """Set ``feature_names_in_`` to ``names`` (``reset``), or check ``names``
    against it with scikit-learn's rules: a warning when the model was fitted
    without names, an error naming the differences when they differ."""
    if reset:
        estimator.feature_names_in_ = names
        return
    fitted = getattr(estimator, "feature_names_in_", None)
    if fitted is None:
        warnings.warn(
            f"X has feature names, but {type(estimator).__name__} was fitted "
            "without feature names",
            UserWarning,
            stacklevel=_user_stacklevel(),
        )
        return
    if len(fitted) == len(names) and np.all(fitted == names):
        return
    unseen = sorted(set(names) - set(fitted))
    missing = sorted(set(fitted) - set(names))
    detail = []
    if unseen:
        detail.append(f"unseen at fit time: {unseen[:5]}")
    if missing:
        detail.append(f"seen at fit time, yet now missing: {missing[:5]}")
    if not detail:
        detail.append("they must be in the same order as they were in fit")
    raise ValueError(
        "The feature names should match those that were passed during fit; "
        + "; ".join(detail)
    )


def _user_stacklevel():
    """The ``stacklevel`` of the first caller outside eraboost and
    scikit-learn, for a warning raised by the function calling this one."""
    inside = (
        os.path.dirname(__file__) + os.sep,
        os.path.dirname(sklearn.__file__) + os.sep,
    )
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_code.co_filename.startswith(inside):
        frame, level = frame.f_back, level + 1
    return level


def validate_data(estimator, X, *args, reset=True, **kwargs):
    """scikit-learn's ``validate_data``, with the names of polars and pyarrow
    tables that the installed scikit-learn cannot read set and checked
    (``table_feature_names``)."""
    names = table_feature_names(X)
    if names is None:
        return _sk_validate_data(estimator, X, *args, reset=reset, **kwargs)
    if not reset:
        check_feature_names(estimator, names, reset=False)
    with warnings.catch_warnings():
        # the names were checked above, where scikit-learn sees none
        warnings.filterwarnings("ignore", message=_NO_NAMES, category=UserWarning)
        out = _sk_validate_data(estimator, X, *args, reset=reset, **kwargs)
    if reset:
        check_feature_names(estimator, names, reset=True)
    return out
