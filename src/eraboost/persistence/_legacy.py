"""Format 1 files (skops archives written by eraboost before format 2):
read only to convert them to format 2 (:func:`convert_model`)."""

import io
import json
import zipfile
from pathlib import Path

from ._errors import ModelFileError
from ._files import MODEL_FORMAT, save_model
from ._registry import KINDS

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


def read_format_1(path):
    """The estimator and metadata of a format 1 file, read by skops with
    its type allowlist (nothing outside it is built)."""
    try:
        import skops.io as sio
    except ImportError:
        raise ModelFileError(
            "converting a format 1 model file needs skops: pip install "
            "'skops>=0.16,<0.17'"
        ) from None
    data = renamed_legacy_types(Path(path).read_bytes())
    try:
        untrusted = set(sio.get_untrusted_types(data=data))
    except Exception as exc:
        raise ModelFileError(
            f"cannot read model {path}: not a format 1 model file "
            f"({type(exc).__name__})"
        ) from None
    refused = untrusted - set(TRUSTED_TYPES)
    if refused:
        raise ModelFileError(
            f"cannot read model {path}: it holds types that eraboost does not "
            f"load ({', '.join(sorted(refused)[:5])})"
        )
    try:
        bundle = sio.loads(data, trusted=sorted(untrusted))
    except Exception as exc:
        raise ModelFileError(
            f"cannot read model {path}: damaged model file ({type(exc).__name__})"
        ) from None
    if not (
        isinstance(bundle, dict)
        and bundle.get("format") == MODEL_FORMAT
        and bundle.get("version") == 1
    ):
        raise ModelFileError(
            f"cannot read model {path}: not a format 1 eraboost model file"
        )
    return bundle.get("estimator"), bundle.get("metadata")


def convert_model(old_path, new_path):
    """Convert a format 1 model file (a skops archive) to format 2.

    The old file is read with skops and its type allowlist, as eraboost
    read such files before format 2; only the parameters and the fitted
    fields that format 2 declares are kept (anything else the file set is
    dropped: the loss, the encoder and the link are rebuilt), and the new
    file is checked as :func:`load_model` checks any file before it is
    written. Needs skops.

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
    estimator, metadata = read_format_1(old_path)
    if not isinstance(metadata, dict):
        raise ModelFileError(
            f"cannot read model {old_path}: its metadata is not a dict"
        )
    if type(estimator).__name__ not in KINDS:
        raise ModelFileError(
            f"cannot read model {old_path}: its 'estimator' is not an eraboost "
            "estimator"
        )
    save_model(estimator, new_path, metadata=metadata)
