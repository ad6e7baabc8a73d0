"""Model files whose loading runs no code: :func:`save_model`, :func:`load_model`.

A model file is a skops archive (``skops.io``, the format made for safe
persistence of scikit-learn estimators): a zip of JSON describing each
object and ``.npy`` arrays read with ``allow_pickle=False``. It holds a
dict ``{"format": "eraboost-model", "version": 1, "versions": {...},
"estimator": ..., "metadata": {...}}``: the versions of eraboost,
scikit-learn and NumPy that wrote it, the estimator's parameters and fitted
state (the trees' node arrays, the bin thresholds, the encoders of
categorical features...) and free metadata (the command line keeps its
feature list, target and era columns there). The zip's comment holds a
SHA-256 checksum of its members, which detects a damaged file.

Loading checks, before building any object, that the file names only types
of a fixed allowlist (:data:`TRUSTED_TYPES`: eraboost's own classes and the
few scikit-learn helpers a fitted model holds, on top of skops' defaults);
anything else is refused with :class:`ModelFileError`. Files written before
the engine and the robust tree became subpackages name three of those types
by their old module paths (``eraboost.binning.BinMapper``...): exactly these
names are read as the current ones (:data:`LEGACY_TYPES`). No pickle is ever
read: a pickle or joblib file is refused with a message saying so. Once
built, the estimator's fitted state is checked (``_model_checks``): every
array ``predict`` uses has the right dtype and shape, the trees are trees,
indices are in range and leaf values finite, so that no file can make
prediction crash, hang or read out of bounds. Saving runs the same checks
before writing anything: a file that ``load_model`` would refuse is never
written.

Pickling still works as for any scikit-learn estimator (``pickle``,
``joblib``), but loading a pickle runs code: load pickles only from sources
you trust.
"""

import functools
import hashlib
import io
import json
import warnings
import zipfile
from pathlib import Path

from ._atomic import atomic_write

__all__ = [
    "LEGACY_TYPES",
    "MODEL_FORMAT",
    "TRUSTED_TYPES",
    "ModelFileError",
    "ModelVersionWarning",
    "load_model",
    "save_model",
]

MODEL_FORMAT = "eraboost-model"
MODEL_VERSION = 1

#: Types a model file may hold besides skops' defaults (builtins, NumPy
#: arrays and scalars, scikit-learn estimators, losses and links).
TRUSTED_TYPES = (
    "eraboost._engine.binning.BinMapper",
    "eraboost._engine.predictor.TreePredictor",
    "eraboost.classifier.HistGradientBoostingClassifier",
    "eraboost.forest.InvariantForestClassifier",
    "eraboost.forest.InvariantForestRegressor",
    "eraboost.gradient_boosting.HistGradientBoostingRegressor",
    # scoring=make_era_scorer(...): a metric name and an aggregate name (a
    # callable metric would be a type outside the allowlist)
    "eraboost.metrics.EraScorer",
    "eraboost.robust._tree.RobustTreeClassifier",
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
    "eraboost.robust._tree.RobustTreeClassifier",
)

#: The types of :data:`TRUSTED_TYPES` under the names that files written
#: before the engine and the robust tree became subpackages (eraboost 0.1.0
#: development versions up to issue 29) record: ``load_model`` renames them
#: in the file's schema before checking and loading it, so that those files
#: load as before (and only these exact names are renamed).
LEGACY_TYPES = {
    "eraboost.binning.BinMapper": "eraboost._engine.binning.BinMapper",
    "eraboost.predictor.TreePredictor": "eraboost._engine.predictor.TreePredictor",
    "eraboost.robust.RobustTreeClassifier": (
        "eraboost.robust._tree.RobustTreeClassifier"
    ),
}

# attributes needed only during fit, dropped from the file (a user's
# scorer or callback would need types outside the allowlist)
_FIT_ONLY = ("_scorer",)

# the packages whose versions a file records
_PACKAGES = ("eraboost", "scikit-learn", "numpy")

# the zip comment: this prefix and the hex SHA-256 of the members
_CHECKSUM = b"eraboost-sha256:"


class ModelFileError(ValueError):
    """A file that is not a readable eraboost model file, or a model that
    cannot be saved to one."""


class ModelVersionWarning(UserWarning):
    """A model file written by other versions of eraboost, scikit-learn or
    NumPy than those loading it (or by an eraboost that did not record them).

    The model passed every check of :func:`load_model`; re-saving it with
    :func:`save_model` records the current versions.
    """


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


def _versions():
    """The versions of the packages that matter to a model file."""
    import numpy
    import sklearn

    from . import __version__

    return {
        "eraboost": __version__,
        "scikit-learn": sklearn.__version__,
        "numpy": numpy.__version__,
    }


def _renamed_legacy_types(data):
    """The skops archive ``data`` with the old type names of its schema
    (:data:`LEGACY_TYPES`) replaced by the current ones; ``data`` itself
    when it names none of them or cannot be read (the checks that follow
    refuse it then).

    Only the ``__module__`` of a ``(__module__, __class__)`` pair naming
    exactly one of those types changes; nothing is imported or built."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            raw = archive.read("schema.json")
            if not any(
                f'"{old.rpartition(".")[0]}"'.encode() in raw for old in LEGACY_TYPES
            ):
                return data
            schema = json.loads(raw)
            renamed = False
            stack = [schema]
            while stack:  # no recursion: a file may nest deeply
                node = stack.pop()
                if isinstance(node, dict):
                    module, name = node.get("__module__"), node.get("__class__")
                    if isinstance(module, str) and isinstance(name, str):
                        new = LEGACY_TYPES.get(f"{module}.{name}")
                        if new is not None:
                            node["__module__"] = new.rpartition(".")[0]
                            renamed = True
                    stack.extend(node.values())
                elif isinstance(node, list):
                    stack.extend(node)
            if not renamed:
                return data
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as out:
                for info in archive.infolist():
                    if info.filename == "schema.json":
                        content = json.dumps(schema).encode()
                    else:
                        content = archive.read(info)
                    out.writestr(info.filename, content)
            return buffer.getvalue()
    except Exception:
        return data


def _untrusted(data):
    """The types of a skops archive outside skops' defaults and the allowlist."""
    return set(_skops().get_untrusted_types(data=data)) - set(TRUSTED_TYPES)


def _checksum(archive):
    """SHA-256 of the members of an open zip archive, names and contents."""
    digest = hashlib.sha256()
    for name in sorted(archive.namelist()):
        content = archive.read(name)
        encoded = name.encode("utf-8", "surrogateescape")
        digest.update(len(encoded).to_bytes(8, "little") + encoded)
        digest.update(len(content).to_bytes(8, "little") + content)
    return _CHECKSUM + digest.hexdigest().encode("ascii")


def _with_checksum(data):
    """The skops archive ``data`` with the checksum of its members as comment."""
    buffer = io.BytesIO(data)
    with zipfile.ZipFile(buffer, "a") as archive:
        archive.comment = _checksum(archive)
    return buffer.getvalue()


# -- what save_model refuses ---------------------------------------------------
def _names_of(obj):
    """The names skops gives ``obj``'s type, or ``obj`` itself when it is a
    function or a class."""
    names = {_type_name(obj)}
    module = getattr(obj, "__module__", None)
    for attr in ("__qualname__", "__name__"):  # skops names functions by name
        name = getattr(obj, attr, None)
        if isinstance(name, str) and isinstance(module, str):
            names.add(f"{module}.{name}")
    if type(obj).__name__ == "ufunc":
        names.add(f"numpy.{obj.__name__}")
    return names


def _where(obj, refused, path, found, seen, depth=0):
    """Append (path, type name) for each object of a refused type in ``obj``."""
    if id(obj) in seen or depth > 50:
        return
    seen.add(id(obj))
    hit = _names_of(obj) & refused
    if hit:
        found.append((path, sorted(hit)[0]))
        return
    if isinstance(obj, dict):
        for key, value in obj.items():
            _where(key, refused, f"{path} (a key)", found, seen, depth + 1)
            _where(value, refused, f"{path}[{key!r}]", found, seen, depth + 1)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for i, value in enumerate(obj):
            _where(value, refused, f"{path}[{i}]", found, seen, depth + 1)
    elif isinstance(obj, functools.partial):
        _where(obj.func, refused, f"{path}.func", found, seen, depth + 1)
        _where(obj.args, refused, f"{path}.args", found, seen, depth + 1)
        _where(obj.keywords, refused, f"{path}.keywords", found, seen, depth + 1)
    elif hasattr(obj, "__dict__") and not isinstance(obj, type):
        for key, value in vars(obj).items():
            _where(value, refused, f"{path}.{key}", found, seen, depth + 1)


def _refusal(bundle, refused):
    """The message of save_model when the file would hold refused types."""
    found = []
    _where(bundle["estimator"], refused, "estimator", found, set())
    _where(bundle["metadata"], refused, "metadata", found, set())
    if not found:  # a type this search does not reach
        return (
            f"the model holds types that load_model refuses ({_shown(refused)}); "
            "remove them from the estimator and the metadata"
        )
    path, name = found[0]
    estimator = bundle["estimator"]
    attr = path.split(".")[1].split("[")[0] if path.startswith("estimator.") else ""
    if attr in estimator.get_params(deep=False):
        shown = f"the parameter {attr}" + (
            f" ({path[len('estimator.') :]})" if path != f"estimator.{attr}" else ""
        )
        fix = (
            f"est.set_params({attr}=...) with a value load_model accepts before saving"
        )
        if attr == "scoring":
            fix = (
                "set scoring to a string or to eraboost.make_era_scorer with "
                "a metric name, e.g. est.set_params(scoring='loss'), before "
                "saving: scoring steers early stopping during fit only, the "
                "fitted trees stay the same"
            )
    else:
        shown, fix = path, "remove it"
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    return (
        f"{shown} holds {name}{more}, which load_model refuses (a model file "
        "may hold only eraboost's estimators, plain Python values, NumPy "
        "arrays and a few scikit-learn helpers, so that loading it runs no "
        f"code); {fix}"
    )


def save_model(estimator, path, *, metadata=None):
    """Write a fitted estimator to a model file that loads without running code.

    Before writing anything, the model is checked as :func:`load_model` will
    check it (its types and its fitted state): a model that could not be
    loaded back, e.g. fitted with a scikit-learn ``make_scorer`` as
    ``scoring`` or saved with a function in ``metadata``, is refused with a
    :class:`ModelFileError` saying what to remove, and nothing is written.

    The file is written to a temporary name in the same folder and renamed
    into place once complete: a failed or refused save leaves any previous
    file at ``path`` intact.

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

    Raises
    ------
    ModelFileError
        When ``load_model`` would refuse the file: the estimator or the
        metadata hold a type outside the allowlist (a function, a custom
        class...), or the fitted state is unsound (e.g. NaN leaf values).

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

    from ._model_checks import UnsoundModel, check_fitted_state

    if _type_name(estimator) not in _ESTIMATORS:
        raise TypeError(
            f"save_model saves eraboost estimators; got {type(estimator).__name__}"
        )
    check_is_fitted(estimator)
    bundle = {
        "format": MODEL_FORMAT,
        "version": MODEL_VERSION,
        "versions": _versions(),
        "estimator": _storable(estimator),
        "metadata": dict(metadata or {}),
    }
    data = _skops().dumps(bundle, compression=zipfile.ZIP_DEFLATED, compresslevel=1)
    refused = _untrusted(data)
    if refused:
        raise ModelFileError(
            f"cannot save this model to {path}: {_refusal(bundle, refused)}"
        )
    try:
        check_fitted_state(bundle["estimator"])
    except UnsoundModel as exc:
        raise ModelFileError(
            f"cannot save this model to {path}: load_model would refuse it ({exc})"
        ) from None
    data = _with_checksum(data)
    with atomic_write(path, "wb") as f:
        f.write(data)


def _not_a_model(path, why):
    return ModelFileError(f"cannot read model {path}: {why}")


def _check_archive(path, data):
    """Check the zip's checksum, when it has one (files written before
    checksums were recorded have none)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            comment = archive.comment
            if not comment:
                return
            if not comment.startswith(_CHECKSUM):
                raise _not_a_model(path, "damaged model file (unknown zip comment)")
            if _checksum(archive) != comment:
                raise _not_a_model(
                    path,
                    "damaged model file: its contents do not match the "
                    "checksum written with them",
                )
    except ModelFileError:
        raise
    except Exception as exc:
        raise _not_a_model(
            path, f"damaged model file ({type(exc).__name__}: {exc})"
        ) from None


def _check_versions(path, bundle):
    """The warning to give about the versions that wrote the file, or None."""
    if "versions" not in bundle:
        return (
            f"model file {path} does not record which versions of eraboost, "
            "scikit-learn and NumPy wrote it (an eraboost from before version "
            "records); it passed the checks of load_model. Re-save it with "
            "save_model to record the current versions."
        )
    versions = bundle["versions"]
    if not (
        isinstance(versions, dict)
        and set(versions) == set(_PACKAGES)
        and all(isinstance(v, str) and 0 < len(v) <= 100 for v in versions.values())
    ):
        raise _not_a_model(path, "damaged model file (its 'versions' record)")
    current = _versions()
    differ = [name for name in _PACKAGES if versions[name] != current[name]]
    if not differ:
        return None
    written = ", ".join(f"{name} {versions[name]}" for name in differ)
    now = ", ".join(f"{name} {current[name]}" for name in differ)
    return (
        f"model file {path} was written by {written}; this is {now}. The "
        "model passed the checks of load_model, but check its predictions; "
        "re-save it with save_model to record the current versions."
    )


def _writer(bundle):
    versions = bundle.get("versions")
    if isinstance(versions, dict) and isinstance(versions.get("eraboost"), str):
        return f" (written by eraboost {versions['eraboost'][:40]})"
    return ""


def load_model(path, *, return_metadata=False):
    """Read a model file written by :func:`save_model` or ``eraboost train``.

    Runs no code from the file: the file may only describe objects of the
    allowlisted types (:data:`TRUSTED_TYPES` and skops' defaults), and
    arrays are read without pickle. Pickle and joblib files are refused.

    The model is then checked before it is returned: the fitted attributes
    ``predict`` needs are present, every array has the right dtype and
    shape, the trees' nodes form trees (child indices in range, no cycle,
    every node reached once), leaves are marked consistently, feature
    indices, bin thresholds and category bitsets are within bounds and leaf
    values are finite. A file whose checksum does not match its contents is
    refused as damaged.

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
        (a ``ValueError``) when the file is missing, not a model file,
        damaged, names a type outside the allowlist, claims a newer model
        format than this eraboost reads, or holds an unsound model.

    Warns
    -----
    ModelVersionWarning
        When the file was written by other versions of eraboost,
        scikit-learn or NumPy (naming them and the current ones), or does
        not record them (files of eraboost before version records).
    """
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    from ._model_checks import UnsoundModel, check_fitted_state

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
    _check_archive(path, data)
    # files written before the engine and the robust tree became
    # subpackages name their types by the old module paths
    data = _renamed_legacy_types(data)
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
    if type(version) is not int or not 1 <= version <= MODEL_VERSION:
        raise _not_a_model(
            path,
            f"model format version {version!r}{_writer(bundle)}; this eraboost "
            f"reads versions 1 to {MODEL_VERSION}: a newer eraboost wrote it "
            "(upgrade eraboost), or the file is damaged",
        )
    missing = [k for k in ("estimator", "metadata") if k not in bundle]
    if missing:
        raise _not_a_model(
            path, f"the file lacks {', '.join(map(repr, missing))} (damaged?)"
        )
    versions_warning = _check_versions(path, bundle)
    estimator, metadata = bundle["estimator"], bundle["metadata"]
    if _type_name(estimator) not in _ESTIMATORS or not isinstance(metadata, dict):
        raise _not_a_model(path, "its 'estimator' is not an eraboost estimator")
    try:
        check_is_fitted(estimator)
    except NotFittedError:
        raise _not_a_model(path, "its estimator is not fitted") from None
    except Exception as exc:
        raise _not_a_model(
            path, f"damaged model file ({type(exc).__name__}: {exc})"
        ) from None
    try:
        check_fitted_state(estimator)
    except UnsoundModel as exc:
        raise _not_a_model(path, f"unsound model: {exc}") from None
    except Exception as exc:  # a check meeting something it cannot handle
        raise _not_a_model(
            path, f"unsound model ({type(exc).__name__}: {exc})"
        ) from None
    if versions_warning is not None:
        warnings.warn(versions_warning, ModelVersionWarning, stacklevel=2)
    return (estimator, metadata) if return_metadata else estimator
