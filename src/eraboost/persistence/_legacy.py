"""Format 1 files (skops archives written by eraboost before format 2):
read only to convert them to format 2 (:func:`convert_model`)."""

import io
import json
import zipfile
from pathlib import Path

from ._errors import ModelFileError, printable, type_name
from ._files import MODEL_FORMAT, save_model
from ._limits import MAX_JSON_BYTES, MAX_RATIO, RATIO_FROM
from ._registry import KINDS, kind_of

#: Types a format 1 file may hold besides skops' defaults; read only by
#: :func:`convert_model`.
TRUSTED_TYPES = (
    "eraboost._engine.binning.BinMapper",
    "eraboost._engine.predictor.TreePredictor",
    "eraboost.classifier.HistGradientBoostingClassifier",
    "eraboost.forest.InvariantForestClassifier",
    "eraboost.forest.InvariantForestRegressor",
    "eraboost.gradient_boosting.HistGradientBoostingRegressor",
    "eraboost.metrics.EraScorer",
    "eraboost.robust._tree.RobustTreeClassifier",
    "functools.partial",
    "sklearn.utils.validation.check_array",
)

#: The names format 1 files written before the engine and the robust tree
#: became subpackages give three of those types.
LEGACY_TYPES = {
    "eraboost.binning.BinMapper": "eraboost._engine.binning.BinMapper",
    "eraboost.predictor.TreePredictor": "eraboost._engine.predictor.TreePredictor",
    "eraboost.robust.RobustTreeClassifier": (
        "eraboost.robust._tree.RobustTreeClassifier"
    ),
}


def renamed_legacy_types(data):
    """The skops archive ``data`` with the old type names of its schema
    (:data:`LEGACY_TYPES`) replaced by the current ones."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            raw = archive.read("schema.json")
            if not any(
                f'"{old.rpartition(".")[0]}"'.encode() in raw for old in LEGACY_TYPES
            ):
                return data
            schema = json.loads(raw)
            stack = [schema]
            while stack:
                node = stack.pop()
                if isinstance(node, dict):
                    module, name = node.get("__module__"), node.get("__class__")
                    if isinstance(module, str) and isinstance(name, str):
                        new = LEGACY_TYPES.get(f"{module}.{name}")
                        if new is not None:
                            node["__module__"] = new.rpartition(".")[0]
                    stack.extend(node.values())
                elif isinstance(node, list):
                    stack.extend(node)
            buffer = io.BytesIO()
            with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as out:
                for info in archive.infolist():
                    content = (
                        json.dumps(schema).encode()
                        if info.filename == "schema.json"
                        else archive.read(info)
                    )
                    out.writestr(info.filename, content)
            return buffer.getvalue()
    except Exception:
        return data


def _check_sizes(data, path):
    """The zip ``data`` unpacks to a size bounded by its own, as a model
    file of format 2 (:data:`MAX_RATIO`), before anything is read."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise ModelFileError(
            f"cannot read model {printable(path)}: not a format 1 model file "
            f"({type(exc).__name__})"
        ) from None
    packed = sum(info.compress_size for info in infos)
    unpacked = sum(info.file_size for info in infos)
    schema = [info.file_size for info in infos if info.filename == "schema.json"]
    if unpacked > RATIO_FROM and unpacked > MAX_RATIO * packed:
        raise ModelFileError(
            f"cannot read model {printable(path)}: its members unpack {packed:,} "
            f"bytes into {unpacked:,}, more than {MAX_RATIO} to 1, which no model "
            "file of eraboost does"
        )
    if schema and schema[0] > MAX_JSON_BYTES:
        raise ModelFileError(
            f"cannot read model {printable(path)}: its schema.json is "
            f"{schema[0]:,} bytes; at most {MAX_JSON_BYTES:,} are read"
        )


def read_format_1(path):
    """The estimator and metadata of a format 1 file, read by skops with
    its type allowlist (nothing outside it is built), once its sizes are
    checked."""
    try:
        import skops.io as sio
    except ImportError:
        raise ModelFileError(
            "converting a format 1 model file needs skops: pip install "
            '"eraboost[convert]"'
        ) from None
    data = Path(path).read_bytes()
    _check_sizes(data, path)
    data = renamed_legacy_types(data)
    shown = printable(path)
    try:
        untrusted = set(sio.get_untrusted_types(data=data))
    except Exception as exc:
        raise ModelFileError(
            f"cannot read model {shown}: not a format 1 model file "
            f"({type(exc).__name__})"
        ) from None
    refused = untrusted - set(TRUSTED_TYPES)
    if refused:
        names = printable(", ".join(sorted(refused)[:5]), 300)
        raise ModelFileError(
            f"cannot read model {shown}: it holds types that eraboost does not "
            f"load ({names})"
        )
    try:
        bundle = sio.loads(data, trusted=sorted(untrusted))
    except Exception as exc:
        raise ModelFileError(
            f"cannot read model {shown}: damaged model file ({type(exc).__name__})"
        ) from None
    if not (
        isinstance(bundle, dict)
        and bundle.get("format") == MODEL_FORMAT
        and bundle.get("version") == 1
    ):
        raise ModelFileError(
            f"cannot read model {shown}: not a format 1 eraboost model file"
        )
    return bundle.get("estimator"), bundle.get("metadata")


def convert_model(old_path, new_path):
    """Convert a format 1 model file (a skops archive) to format 2.

    The old file is read with skops and its type allowlist, as eraboost
    read such files before format 2; only the parameters and the fitted
    fields that format 2 declares are kept (anything else the file set is
    dropped: the loss, the encoder and the link are rebuilt), and the new
    file is checked as :func:`load_model` checks any file before it is
    written. Needs skops (``pip install "eraboost[convert]"``).

    Parameters
    ----------
    old_path : str or Path
        A model file written by an eraboost from before format 2.
    new_path : str or Path
        Where to write the format 2 file.

    Raises
    ------
    ModelFileError
        When the old file cannot be read or its model fails the checks of
        format 2.
    """
    from sklearn.exceptions import NotFittedError

    estimator, metadata = read_format_1(old_path)
    shown = printable(old_path)
    if not isinstance(metadata, dict):
        raise ModelFileError(f"cannot read model {shown}: its metadata is not a dict")
    if kind_of(estimator) is None:
        # a class of another library of the same name included
        raise ModelFileError(
            f"cannot read model {shown}: its estimator is a "
            f"{printable(type_name(estimator), 120)}, not one of eraboost's "
            f"estimators ({', '.join(KINDS)})"
        )
    try:
        save_model(estimator, new_path, metadata=metadata)
    except NotFittedError:
        raise ModelFileError(
            f"cannot read model {shown}: its estimator is not fitted"
        ) from None
