"""Model files whose loading runs no code: :func:`save_model`, :func:`load_model`.

A model file is a skops archive (``skops.io``, the format made for safe
persistence of scikit-learn estimators): a zip of JSON describing each
object and ``.npy`` arrays read with ``allow_pickle=False``. It holds a
dict ``{"format": "eraboost-model", "version": 1, "estimator": ...,
"metadata": {...}}``: the estimator's parameters and fitted state (the
trees' node arrays, the bin thresholds, the encoders of categorical
features...) and free metadata (the command line keeps its feature list,
target and era columns there).

Loading checks, before building any object, that the file names only types
of a fixed allowlist (:data:`TRUSTED_TYPES`: eraboost's own classes and the
few scikit-learn helpers a fitted model holds, on top of skops' defaults);
anything else is refused with :class:`ModelFileError`. No pickle is ever
read: a pickle or joblib file is refused with a message saying so.

Pickling still works as for any scikit-learn estimator (``pickle``,
``joblib``), but loading a pickle runs code: load pickles only from sources
you trust.
"""

import zipfile
from pathlib import Path

from ._atomic import atomic_write

__all__ = [
    "MODEL_FORMAT",
    "TRUSTED_TYPES",
    "ModelFileError",
    "load_model",
    "save_model",
]

MODEL_FORMAT = "eraboost-model"
MODEL_VERSION = 1

#: Types a model file may hold besides skops' defaults (builtins, NumPy
#: arrays and scalars, scikit-learn estimators, losses and links).
TRUSTED_TYPES = (
    "eraboost.binning.BinMapper",
    "eraboost.classifier.HistGradientBoostingClassifier",
    "eraboost.forest.InvariantForestClassifier",
    "eraboost.forest.InvariantForestRegressor",
    "eraboost.gradient_boosting.HistGradientBoostingRegressor",
    "eraboost.predictor.TreePredictor",
    "eraboost.robust.RobustTreeClassifier",
    # the encoder of categorical features converts the numeric columns with
    # functools.partial(check_array, dtype=...)
    "functools.partial",
    "sklearn.utils.validation.check_array",
)

#: The estimators a model file may hold.
_ESTIMATORS = (
    "eraboost.classifier.HistGradientBoostingClassifier",
    "eraboost.forest.InvariantForestClassifier",
    "eraboost.forest.InvariantForestRegressor",
    "eraboost.gradient_boosting.HistGradientBoostingRegressor",
    "eraboost.robust.RobustTreeClassifier",
)

# attributes needed only during fit, dropped from the file (a user's
# scorer or callback would need types outside the allowlist)
_FIT_ONLY = ("_scorer",)


class ModelFileError(ValueError):
    """A file that is not a readable eraboost model file."""


def _skops():
    try:
        import skops.io
    except ImportError:  # pragma: no cover - skops is a dependency
        raise ModelFileError(
            "model files need skops: pip install 'skops>=0.16,<0.17'"
        ) from None
    return skops.io


def _type_name(obj):
    cls = type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


def _shown(names, limit=5):
    names = sorted(names)
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more


def _storable(estimator):
    """A shallow copy of the estimator without its fit-only attributes."""
    if not any(hasattr(estimator, name) for name in _FIT_ONLY):
        return estimator
    copy = object.__new__(type(estimator))
    copy.__dict__.update(
        {k: v for k, v in vars(estimator).items() if k not in _FIT_ONLY}
    )
    return copy


def save_model(estimator, path, *, metadata=None):
    """Write a fitted estimator to a model file that loads without running code.

    The file is written to a temporary name in the same folder and renamed
    into place once complete: a failed save leaves any previous file at
    ``path`` intact.

    Parameters
    ----------
    estimator : fitted eraboost estimator
        A ``HistGradientBoostingRegressor`` or ``...Classifier``, an
        ``InvariantForestRegressor`` or ``...Classifier``, or a
        ``RobustTreeClassifier``.
    path : str or Path
        The model file (any extension; ``.skops`` is the convention).
    metadata : dict, default=None
        Free information kept with the model (strings, numbers, booleans,
        None, and lists and dicts of them), returned by
        ``load_model(path, return_metadata=True)``.

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

    if _type_name(estimator) not in _ESTIMATORS:
        raise TypeError(
            f"save_model saves eraboost estimators; got {type(estimator).__name__}"
        )
    check_is_fitted(estimator)
    bundle = {
        "format": MODEL_FORMAT,
        "version": MODEL_VERSION,
        "estimator": _storable(estimator),
        "metadata": dict(metadata or {}),
    }
    data = _skops().dumps(bundle, compression=zipfile.ZIP_DEFLATED, compresslevel=1)
    with atomic_write(path, "wb") as f:
        f.write(data)


def _not_a_model(path, why):
    return ModelFileError(f"cannot read model {path}: {why}")


def load_model(path, *, return_metadata=False):
    """Read a model file written by :func:`save_model` or ``eraboost train``.

    Runs no code from the file: the file may only describe objects of the
    allowlisted types (:data:`TRUSTED_TYPES` and skops' defaults), and
    arrays are read without pickle. Pickle and joblib files are refused.

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
        (a ``ValueError``) when the file is missing, not a model file, names
        a type outside the allowlist, or lacks part of a model.
    """
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    sio = _skops()
    path = Path(path)
    if not path.is_file():
        raise _not_a_model(path, "no such file")
    if not zipfile.is_zipfile(path):
        raise _not_a_model(
            path,
            "not an eraboost model file (model files are zip archives "
            "written by eraboost.save_model or `eraboost train`; pickle and "
            "joblib files are never loaded here because loading them runs "
            "code: if you trust its source, load it with joblib.load in "
            "Python and save it with eraboost.save_model)",
        )
    data = path.read_bytes()  # checked and loaded from the same bytes
    try:
        untrusted = set(sio.get_untrusted_types(data=data))
    except Exception as exc:
        raise _not_a_model(
            path, f"not an eraboost model file ({type(exc).__name__})"
        ) from None
    refused = untrusted - set(TRUSTED_TYPES)
    if refused:
        raise _not_a_model(
            path,
            f"it holds types that eraboost does not load ({_shown(refused)}); "
            "a model file written by eraboost holds only eraboost estimators, "
            "NumPy arrays and scikit-learn helpers",
        )
    try:
        bundle = sio.loads(data, trusted=sorted(untrusted))
    except Exception as exc:
        raise _not_a_model(
            path, f"damaged model file ({type(exc).__name__}: {exc})"
        ) from None
    if not (isinstance(bundle, dict) and bundle.get("format") == MODEL_FORMAT):
        raise _not_a_model(path, "not an eraboost model file")
    version = bundle.get("version")
    if not isinstance(version, int) or not 1 <= version <= MODEL_VERSION:
        raise _not_a_model(
            path,
            f"model format version {version!r}; this eraboost reads versions "
            f"1 to {MODEL_VERSION} (a newer eraboost wrote it?)",
        )
    missing = [k for k in ("estimator", "metadata") if k not in bundle]
    if missing:
        raise _not_a_model(
            path, f"the file lacks {', '.join(map(repr, missing))} (damaged?)"
        )
    estimator, metadata = bundle["estimator"], bundle["metadata"]
    if _type_name(estimator) not in _ESTIMATORS or not isinstance(metadata, dict):
        raise _not_a_model(path, "its 'estimator' is not an eraboost estimator")
    try:
        check_is_fitted(estimator)
    except NotFittedError:
        raise _not_a_model(path, "its estimator is not fitted") from None
    return (estimator, metadata) if return_metadata else estimator
