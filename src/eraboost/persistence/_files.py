"""Model files as a whole: :func:`save_model`, :func:`load_model`."""

import io
import json
import warnings
import zipfile
from pathlib import Path

import numpy as np

from .._atomic import atomic_write
from ._container import (
    JSON_MEMBER,
    DeclaredArrays,
    read_digests,
    read_json_member,
    write_archive,
)
from ._errors import (
    ModelFileError,
    ModelVersionWarning,
    RefusedFile,
    printable,
    refuse,
)
from ._fields import declared_fields
from ._limits import (
    MAX_JSON_BYTES,
    MAX_JSON_VALUES,
    MAX_RATIO,
    RATIO_FROM,
    TEXT_BYTES,
    TEXT_BYTES_PER_JSON_BYTE,
)
from ._registry import KINDS, estimator_class, kind_of, make_estimator
from ._values import (
    UnstorableValue,
    check_json_value,
    encode_param,
    metadata_to_json,
    text_budget,
)

MODEL_FORMAT = "eraboost-model"
MODEL_VERSION = 2
# the packages whose versions a file records
PACKAGES = ("eraboost", "scikit-learn", "numpy")
TOP_KEYS = (
    "format",
    "version",
    "versions",
    "estimator",
    "params",
    "fitted",
    "arrays",
    "metadata",
)


def current_versions():
    """The versions of the packages that matter to a model file."""
    import sklearn

    from .. import __version__

    return {
        "eraboost": __version__,
        "scikit-learn": sklearn.__version__,
        "numpy": np.__version__,
    }


def check_versions(path, versions):
    """The warning to give about the versions that wrote the file, or None."""
    if not (
        isinstance(versions, dict)
        and set(versions) == set(PACKAGES)
        and all(isinstance(v, str) and 0 < len(v) <= 100 for v in versions.values())
    ):
        refuse("damaged model file (its 'versions' record)")
    current = current_versions()
    differ = [name for name in PACKAGES if versions[name] != current[name]]
    if not differ:
        return None
    written = ", ".join(f"{name} {printable(versions[name])}" for name in differ)
    now = ", ".join(f"{name} {current[name]}" for name in differ)
    return (
        f"model file {printable(path)} was written by {written}; this is {now}. The "
        "model passed the checks of load_model, but check its predictions; "
        "re-save it with save_model to record the current versions."
    )


def writer_note(doc):
    versions = doc.get("versions")
    if isinstance(versions, dict) and isinstance(versions.get("eraboost"), str):
        return f" (written by eraboost {printable(versions['eraboost'], 40)})"
    return ""


OLD_FORMAT_MESSAGE = (
    "a model file of format 1 (a skops archive written by an eraboost before "
    "format 2); this eraboost loads format 2 only: convert it once with "
    "`eraboost convert OLD --out NEW` or eraboost.persistence.convert_model("
    "OLD, NEW) (needs skops; it keeps only the fields format 2 declares), or "
    "fit the model again"
)


def read_model(archive, path):
    """(estimator, metadata, warning about versions) of an open model file."""
    infos = {}
    for info in archive.infolist():
        if info.filename in infos:
            refuse(f"damaged model file: the member {info.filename[:80]} appears twice")
        infos[info.filename] = info
    if JSON_MEMBER not in infos:
        if "schema.json" in infos:
            refuse(OLD_FORMAT_MESSAGE)
        refuse("not an eraboost model file (it has no model.json)")
    info = infos[JSON_MEMBER]
    size = info.file_size
    if size > MAX_JSON_BYTES:
        refuse(f"its model.json is {size:,} bytes; at most {MAX_JSON_BYTES:,} are read")
    if size > RATIO_FROM and size > MAX_RATIO * info.compress_size:
        refuse(
            f"its model.json compresses {size:,} bytes into "
            f"{info.compress_size:,}: more than {MAX_RATIO} to 1"
        )
    digests = read_digests(archive.comment)
    content = read_json_member(archive, digests, MAX_JSON_VALUES)
    try:
        doc = json.loads(content)
    except (ValueError, RecursionError):
        refuse("damaged model file: its model.json is not JSON")
    text_bytes = TEXT_BYTES + TEXT_BYTES_PER_JSON_BYTE * len(content)
    del content
    with text_budget(text_bytes):
        est, metadata = _read_model(archive, path, infos, digests, doc)
    return est, metadata, check_versions(path, doc["versions"])


def _read_model(archive, path, infos, digests, doc):
    """(estimator, metadata) of the parsed model.json ``doc``."""
    from .._model_checks import UnsoundModel, check_params

    if not isinstance(doc, dict) or doc.get("format") != MODEL_FORMAT:
        refuse("not an eraboost model file")
    version = doc.get("version")
    if type(version) is int and version > MODEL_VERSION:
        refuse(
            f"model format version {version}{writer_note(doc)}; this eraboost reads "
            f"version {MODEL_VERSION}: a newer eraboost wrote it (upgrade eraboost)"
        )
    if type(version) is int and version == 1:
        refuse(OLD_FORMAT_MESSAGE)
    if version != MODEL_VERSION or type(version) is not int:
        refuse(
            f"damaged model file: its format version {str(version)[:40]!r} is not a "
            "version eraboost wrote"
        )
    declared_fields(doc, "the file", TOP_KEYS)
    check_versions(path, doc["versions"])
    name = doc["estimator"]
    if not isinstance(name, str) or name not in KINDS:
        refuse(f"its estimator {str(name)[:60]!r} is not one that eraboost saves")
    metadata = doc["metadata"]
    if not isinstance(metadata, dict):
        refuse("its metadata must be a JSON object")
    check_json_value(metadata, "metadata")
    kind = KINDS[name]
    make = getattr(kind.schema, "make", make_estimator)
    est = make(estimator_class(name), doc["params"])
    arrays = DeclaredArrays(archive, doc["arrays"], digests)
    fitted = doc["fitted"]
    if not isinstance(fitted, dict):
        refuse("fitted must be a JSON object")
    planned = kind.schema.plan(est, fitted, arrays, kind.is_classifier)
    arrays.check_declarations(infos)
    extra = sorted(set(infos) - {JSON_MEMBER} - {f"{n}.npy" for n in arrays.expected})
    if extra:
        refuse(f"the file holds undeclared members ({', '.join(map(repr, extra[:5]))})")
    kind.schema.load(est, fitted, arrays, planned)
    try:
        check_params(est)
        kind.schema.check(est, kind.is_classifier)
    except UnsoundModel as exc:
        refuse(f"unsound model: {exc}")
    kind.schema.finish(est)
    return est, metadata


def read_model_path(path):
    path = Path(path)
    if not path.is_file():
        raise ModelFileError(f"cannot read model {path}: no such file")
    if not zipfile.is_zipfile(path):
        raise ModelFileError(
            f"cannot read model {path}: not an eraboost model file (model files "
            "are zip archives written by eraboost.save_model or `eraboost "
            "train`; pickle and joblib files are never loaded here because "
            "loading them runs code: if you trust its source, load it with "
            "joblib.load in Python and save it with eraboost.save_model)"
        )
    try:
        with zipfile.ZipFile(path) as archive:
            return read_model(archive, path)
    except RefusedFile as exc:
        why = printable(exc)  # one line, whatever the file holds
        raise ModelFileError(f"cannot read model {printable(path)}: {why}") from None
    except MemoryError:
        raise ModelFileError(f"cannot read model {path}: not enough memory") from None
    except Exception as exc:  # zlib, zipfile, numpy: whatever damage raises
        why = printable(f"damaged model file ({type(exc).__name__}: {exc})", 500)
        raise ModelFileError(f"cannot read model {printable(path)}: {why}") from None


def save_model(estimator, path, *, metadata=None):
    """Write a fitted estimator to a model file that loads without running code.

    The file holds the estimator's parameters, the fields of its fitted
    state that eraboost declares for its class, and ``metadata``, as JSON
    and NumPy arrays. Before writing anything, the file is read back as
    :func:`load_model` reads it: a model that could not be loaded, e.g.
    fitted with a scikit-learn ``make_scorer`` as ``scoring`` or saved with
    a function in ``metadata``, is refused with a :class:`ModelFileError`
    saying what to remove, and nothing is written.

    The file is written to a temporary name in the same folder
    (``NAME.tmp-XXXXXXXX``) and renamed into place once complete: a failed
    or refused save leaves any previous file at ``path`` intact.

    Parameters
    ----------
    estimator : fitted eraboost estimator
        A ``HistGradientBoostingRegressor`` or ``...Classifier``, an
        ``InvariantForestRegressor`` or ``...Classifier``, a
        ``RobustTreeClassifier``, or an ``EraEnsembleRegressor`` or
        ``...Classifier`` of them.
    path : str or Path
        The model file (any extension; ``.skops`` is the convention).
    metadata : dict, default=None
        Free information kept with the model: strings, numbers, booleans,
        None, and lists and dicts (with string keys) of them; tuples come
        back as lists. Returned by ``load_model(path, return_metadata=True)``.

    Raises
    ------
    ModelFileError
        When ``load_model`` would refuse the file: a parameter or the
        metadata hold a value that a model file cannot (a function, an
        object of your own...), or the fitted state is unsound (e.g. NaN
        leaf values).

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

    data = model_bytes(estimator, metadata, path, check_is_fitted)
    with atomic_write(path, "wb") as f:
        f.write(data)


def model_bytes(estimator, metadata, path, check_is_fitted=None, check=True):
    """The bytes of the model file of ``estimator``, read back as
    load_model reads them (``check=False``, for tests that craft files:
    not read back)."""
    kind = kind_of(estimator)
    if kind is None:
        raise TypeError(
            f"save_model saves eraboost estimators; got {type(estimator).__name__}"
        )
    if check_is_fitted is not None:
        check_is_fitted(estimator)
    prefix = f"cannot save this model to {path}: "
    try:
        if hasattr(kind.schema, "params"):
            params = kind.schema.params(estimator)
        else:
            params = {
                key: encode_param(value, key)
                for key, value in estimator.get_params(deep=False).items()
            }
        meta = metadata_to_json(dict(metadata or {}), "metadata")
        arrays = {}
        fitted = kind.schema.store(estimator, arrays)
    except UnstorableValue as exc:
        where, what = exc.args
        raise ModelFileError(
            prefix + _unstorable_message(estimator, where, what)
        ) from None
    except AttributeError as exc:
        raise ModelFileError(
            prefix + f"its fitted state is incomplete ({printable(exc, 200)})"
        ) from None
    except (TypeError, ValueError, KeyError, IndexError, OverflowError) as exc:
        # a fitted state that eraboost's fit did not make (an edited or
        # converted object): a field of another type or shape
        raise ModelFileError(
            prefix + "its fitted state is not one eraboost's fit makes "
            f"({type(exc).__name__}: {printable(exc, 200)})"
        ) from None
    doc = {
        "format": MODEL_FORMAT,
        "version": MODEL_VERSION,
        "versions": current_versions(),
        "estimator": type(estimator).__name__,
        "params": params,
        "fitted": fitted,
        "arrays": {
            key: {
                "dtype": np.lib.format.dtype_to_descr(a.dtype),
                "shape": list(a.shape),
            }
            for key, a in arrays.items()
        },
        "metadata": meta,
    }
    doc = json.loads(json.dumps(doc, allow_nan=True))  # tuples of dtypes as lists
    data = write_archive(doc, arrays)
    if not check:
        return data
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            read_model(archive, path)
    except RefusedFile as exc:
        why = printable(exc)
        raise ModelFileError(prefix + f"load_model would refuse it ({why})") from None
    return data


def _unstorable_message(estimator, where, what):
    attr = where.split("[")[0].split(".")[0].split(" ")[0]
    if attr in estimator.get_params(deep=False):
        shown = f"the parameter {attr}" + (f" ({where})" if where != attr else "")
        fix = f"est.set_params({attr}=...) with a plain value before saving"
        if attr == "scoring":
            fix = (
                "set scoring to a string or to eraboost.make_era_scorer with "
                "a metric name, e.g. est.set_params(scoring='loss'), before "
                "saving: scoring steers early stopping during fit only, the "
                "fitted trees stay the same"
            )
    else:
        shown, fix = where, "remove it"
    return (
        f"{shown} holds {what}, which a model file cannot hold (it holds "
        "plain values and NumPy arrays, so that loading it runs no code); "
        f"{fix}"
    )


def load_model(path, *, return_metadata=False):
    """Read a model file written by :func:`save_model` or ``eraboost train``.

    Restores no object and runs no code from the file: the estimator is
    made by its constructor from the file's parameters (checked by
    scikit-learn's constraints), and only the fitted fields that eraboost
    declares for its class are set, each of its declared type, dtype and
    shape; the loss, the link, the encoder of categorical features, the bin
    mapper and the trees are rebuilt from plain values and arrays. Sizes
    are checked before reading: ``model.json`` is at most
    :data:`MAX_JSON_BYTES`, and each array's uncompressed size must match
    its declared shape, itself bounded by the parameters (trees no larger
    than fit could grow them).

    The model is then checked: the trees' nodes form trees (child indices
    in range, no cycle, every node reached once), feature indices, bin
    thresholds and category bitsets are within bounds, leaf values are
    finite and any path's sum of them too. A file whose contents do not
    match their checksum is refused as damaged.

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
        damaged, of another format (format 1: see :func:`convert_model`),
        declares fields or values outside the schema, or holds an unsound
        model. The message is one line.

    Warns
    -----
    ModelVersionWarning
        When the file was written by other versions of eraboost,
        scikit-learn or NumPy (naming them and the current ones).
    """
    estimator, metadata, warning = read_model_path(path)
    if warning is not None:
        warnings.warn(warning, ModelVersionWarning, stacklevel=2)
    return (estimator, metadata) if return_metadata else estimator
