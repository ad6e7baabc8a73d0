"""Loading what the commands read: a model file with its feature list, and
the columns of a table as the estimators take them (features, categorical
features, target, eras), with the checks of each that end a command with one
line.

Imports only the standard library at the top (the parser reads
:data:`DEFAULT_FEATURE_PREFIX`): numpy, pandas and the table readers are
imported by the functions that need them.
"""

from contextlib import contextmanager
from time import perf_counter

from ._errors import _MAX_ERROR_CHARS, CLIError, escaped

#: Longest error message of a model quoted in a line (it may quote the file).
_MAX_QUOTED_CHARS = 300

#: Prefix of the feature columns taken when none are named.
DEFAULT_FEATURE_PREFIX = "feature"


def _split_list(text, option):
    names = [c.strip() for c in text.split(",") if c.strip()]
    seen = set()
    for name in names:
        if name in seen:
            raise CLIError(f"{option} names the column {name!r} more than once")
        seen.add(name)
    return names


def _shown(values, limit=5):
    values = [repr(v) for v in values]
    more = f" and {len(values) - limit} more" if len(values) > limit else ""
    return ", ".join(values[:limit]) + more


# -- model files --------------------------------------------------------------
def _load(path):
    """The estimator of a model file and its metadata, with the feature list.

    The metadata the command line reads (``features``, ``categorical``,
    ``target``, ``era``) is checked against the model: a problem is one
    line, as every problem of a model file."""
    from ..persistence import load_model

    est, meta = load_model(path, return_metadata=True)
    meta = dict(meta)
    names = getattr(est, "feature_names_in_", None)
    if not meta.get("features"):
        if names is None:
            raise CLIError(
                f"model {path} has no feature list: fit it on a DataFrame, "
                "or save it with save_model(..., metadata={'features': [...]})"
            )
        meta["features"] = [str(n) for n in names]
    features = meta["features"]
    if not (
        isinstance(features, list)
        and all(isinstance(f, str) for f in features)
        and len(set(features)) == len(features)
    ):
        raise CLIError(
            f"model {path}: its metadata 'features' must be a list of distinct "
            "column names"
        )
    if len(features) != est.n_features_in_:
        raise CLIError(
            f"model {path}: its metadata lists {len(features)} features; the "
            f"model was fitted on {est.n_features_in_}"
        )
    if names is not None and [str(n) for n in names] != features:
        raise CLIError(
            f"model {path}: its metadata 'features' differ from the features "
            "the model was fitted on (feature_names_in_)"
        )
    categorical = meta.setdefault("categorical", [])
    if not (
        isinstance(categorical, list)
        and all(isinstance(c, str) and c in features for c in categorical)
    ):
        raise CLIError(
            f"model {path}: its metadata 'categorical' must be a list of some "
            "of its features"
        )
    for key in ("target", "era"):
        if meta.get(key) is not None and not isinstance(meta[key], str):
            raise CLIError(f"model {path}: its metadata {key!r} must be a column name")
    return est, meta


@contextmanager
def _model_file_problems(path):
    """Any error a model raises while it is loaded or used, as one line
    naming its file.

    A file that loads but holds what fit never writes (classes of an odd
    dtype, text categories of a numeric column, a crafted format 1 file)
    can make numpy, pyarrow or an encoder raise TypeError,
    NotImplementedError...; a ModelFileError is kept whole, its newlines
    escaped; other ValueErrors (one line already: a TableError), OSError,
    MemoryError and ImportError (an interrupted import) pass through.
    """
    try:
        yield
    except ValueError as exc:
        from ..persistence import ModelFileError

        if not isinstance(exc, ModelFileError):
            raise
        # one line already, but it may quote the file's strings: newlines
        # included, escaped rather than cut
        raise CLIError(escaped(str(exc).strip(), _MAX_ERROR_CHARS)) from exc
    except (CLIError, OSError, MemoryError, ImportError):
        raise
    except Exception as exc:
        raise CLIError(
            f"model {path} cannot be used ({type(exc).__name__}: "
            f"{escaped(exc, _MAX_QUOTED_CHARS)}): the "
            "file holds values that fit never writes; train the model again"
        ) from exc


def _check_category_kinds(est, X, path, data):
    """A categorical feature of the table holds text where the model learnt
    numeric categories, or numbers where it learnt text ones (the encoder
    would fail with a TypeError)."""
    import numpy as np

    mask = getattr(est, "is_categorical_", None)
    if mask is None or not hasattr(X, "columns"):
        return
    try:
        learnt = est._preprocessor.named_transformers_["encoder"].categories_
    except (AttributeError, KeyError):
        return
    for name, categories in zip(X.columns[np.flatnonzero(mask)], learnt):
        model_text = any(isinstance(c, str) for c in categories)
        column = X[name]
        data_text = column.dtype == "category" and any(
            isinstance(c, str) for c in column.cat.categories[:1]
        )
        if model_text != data_text:
            kinds = ("text", "numbers") if data_text else ("numbers", "text")
            example = categories[:1].tolist()
            raise CLIError(
                f"feature column {name!r} of {data} holds {kinds[0]}, but model "
                f"{path} learnt it as {kinds[1]}"
                + (f" (e.g. {example[0]!r})" if example else "")
                + f": give the column as {kinds[1]}, as in the training data"
            )


def _check_finite_predictions(columns, path, data):
    """Refuse predictions that are infinite, NaN or NaT (nothing is written)."""
    import numpy as np

    for name, values in columns.items():
        kind = values.dtype.kind
        if kind in "mM":
            bad = np.isnat(values)
        elif kind in "fc":
            bad = ~np.isfinite(values)
        else:
            continue
        if bad.any():
            row = int(np.argmax(bad))
            raise CLIError(
                f"model {path} gives {int(bad.sum()):,} non-finite values of "
                f"{name!r} for {data} (the first at row {row}: {values[row]}); "
                "nothing was written: the model file is damaged, or train the "
                "model again"
            )


# -- reading tables -----------------------------------------------------------
def _select_features(table, args):
    """The feature columns: named, by prefix, or those starting with 'feature'."""
    if args.features and args.feature_prefix:
        raise CLIError("give --features or --feature-prefix, not both")
    if args.features:
        features = _split_list(args.features, "--features")
        table.check_columns(features, "feature column")
    else:
        prefix = args.feature_prefix or DEFAULT_FEATURE_PREFIX
        features = [c for c in table.columns if c.startswith(prefix)]
        if not features and args.feature_prefix:
            raise CLIError(
                f"{table.path} has no column whose name starts with {prefix!r}"
            )
        if not features:
            raise CLIError(
                f"{table.path} has no column whose name starts with "
                f"{prefix!r}: name the feature columns with --features A,B,C "
                "or --feature-prefix PREFIX"
            )
    for role, name in (("target", args.target), ("era", args.era)):
        if name in features:
            raise CLIError(f"the {role} column {name!r} is also a feature")
    return features


def _categorical_columns(table, features, args):
    """Features named by --categorical-features, plus text/dictionary columns."""
    named = (
        _split_list(args.categorical_features, "--categorical-features")
        if args.categorical_features
        else []
    )
    outside = [c for c in named if c not in features]
    if outside:
        raise CLIError(
            f"--categorical-features names {_shown(outside)}, which "
            f"{'is' if len(outside) == 1 else 'are'} not among the features"
        )
    by_type = set(table.categorical_columns())
    return [c for c in features if c in by_type or c in named]


def _missing(values, null_count):
    """Mask of the missing values (NaN, or None of a text column) of a column."""
    import numpy as np

    if values.dtype.kind == "f":
        return np.isnan(values)
    if null_count and values.dtype.kind == "O":
        return np.array([v is None for v in values], dtype=bool)
    return np.zeros(values.shape[0], dtype=bool)


def _check_target(y, null_count, name, path):
    import numpy as np

    n_missing = int(_missing(y, null_count).sum()) or null_count
    if n_missing:
        raise CLIError(
            f"target column {name!r} of {path} has {n_missing} "
            "missing values (NaN); drop those rows first, or pass "
            "--drop-missing-target"
        )
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise CLIError(f"target column {name!r} of {path} has infinite values")


def _drop_missing_target(X, cols, nulls, target, path, note):
    """The rows whose target is present: X and the columns without the others.

    ``note`` is told how many rows were dropped (when any were).
    """
    missing = _missing(cols[target], nulls[target])
    n_missing = int(missing.sum())
    if not n_missing:
        return X, cols, nulls
    keep = ~missing
    if hasattr(X, "iloc"):
        X = X.iloc[keep].reset_index(drop=True)
    else:
        X = X[keep]
    cols = {name: values[keep] for name, values in cols.items()}
    nulls = {
        name: int(_missing(values, nulls[name]).sum()) for name, values in cols.items()
    }
    note(
        f"dropped {n_missing:,} of {missing.size:,} rows of {path} with a "
        f"missing target {target!r} (--drop-missing-target)"
    )
    return X, cols, nulls


def _check_eras(eras, null_count, name, path):
    import numpy as np

    if null_count or (eras.dtype.kind == "f" and np.isnan(eras).any()):
        raise CLIError(f"era column {name!r} of {path} has missing values")


def _column(X, j):
    """Column ``j`` of a feature array or MixedMatrix (without a copy)."""
    if hasattr(X, "is_int"):
        place = int((X.is_int[:j] == X.is_int[j]).sum())
        return (X.ints if X.is_int[j] else X.floats)[:, place]
    return X[:, j]


def _select_columns(X, idx):
    """Columns ``idx`` of a feature array or MixedMatrix; of a MixedMatrix,
    a MixedMatrix again, or the array of its one group when all of ``idx``
    are in it."""
    if not hasattr(X, "is_int"):
        return X[:, idx]
    import numpy as np

    from .._engine.binning import MixedMatrix

    idx = np.asarray(idx, dtype=np.intp)
    is_int = X.is_int
    place = np.where(is_int, np.cumsum(is_int), np.cumsum(~is_int)) - 1
    ints = X.ints[:, place[idx[is_int[idx]]]]
    floats = X.floats[:, place[idx[~is_int[idx]]]]
    if not floats.shape[1]:
        return ints
    if not ints.shape[1]:
        return floats
    return MixedMatrix(ints, floats, is_int[idx])


def _feature_frame(X, numeric, cat_columns, features):
    """A DataFrame of the features, the categorical ones as pandas categories."""
    try:
        import pandas as pd
    except ImportError:
        raise CLIError(
            "categorical features need pandas: pip install 'eraboost[cli]'"
        ) from None
    columns = {name: _column(X, j) for j, name in enumerate(numeric)}
    for name, values in cat_columns.items():
        columns[name] = (
            values if values.dtype.kind in "iufb" else pd.Categorical(values)
        )
    return pd.DataFrame({name: columns[name] for name in features})


def _read_features(table, features, categorical, others):
    """The feature matrix (or a DataFrame with categorical features) and others."""
    numeric = [f for f in features if f not in categorical]
    X, cols, nulls = table.read(numeric, [*others, *categorical])
    if categorical:
        X = _feature_frame(X, numeric, {c: cols[c] for c in categorical}, features)
    return X, cols, nulls


def _describe(X):
    if hasattr(X, "dtypes"):
        return f"{X.shape[0]:,} rows x {X.shape[1]} features (with categorical)"
    dtype = f"{X.ints.dtype} and float64" if hasattr(X, "is_int") else X.dtype
    return (
        f"{X.shape[0]:,} rows x {X.shape[1]} features ({dtype}, "
        f"{X.nbytes / 1e6:,.1f} MB)"
    )


def _infer_task(table, target):
    """'regression' for a numeric target column, 'classification' otherwise."""
    return "regression" if target in table.numeric_columns() else "classification"


def _check_numbers_as_text(X, columns, path):
    """Refuse text ``columns`` (taken as categorical by their type) whose
    every value is a number: numbers stored as text, which would make one
    category of each distinct value."""
    import pyarrow as pa

    for name in columns:
        categories = X[name].cat.categories
        if not len(categories) or categories.dtype.kind != "O":
            continue
        values = [v for v in categories if isinstance(v, str)]
        if len(values) != len(categories):
            continue
        try:
            pa.array(values, type=pa.string()).cast(pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue  # some value is not a number: real categories
        raise CLIError(
            f"feature column {name!r} of {path} holds numbers stored as text "
            f"(e.g. {values[0]!r}): store them as numbers (pandas: "
            f"df[{name!r}] = pd.to_numeric(df[{name!r}])), or name the column "
            "in --categorical-features to use its values as categories"
        )


def _read_training_data(path, table, args, features, categorical, note):
    import numpy as np

    tic = perf_counter()
    X, cols, nulls = _read_features(
        table, features, categorical, [args.target, args.era]
    )
    if args.drop_missing_target:
        X, cols, nulls = _drop_missing_target(X, cols, nulls, args.target, path, note)
    named = (
        _split_list(args.categorical_features, "--categorical-features")
        if args.categorical_features
        else []
    )
    _check_numbers_as_text(X, [c for c in categorical if c not in named], path)
    y, eras = cols[args.target], cols[args.era]
    _check_target(y, nulls[args.target], args.target, path)
    _check_eras(eras, nulls[args.era], args.era, path)
    n_eras = len(np.unique(eras))
    note(
        f"read {_describe(X)} and {n_eras} eras from "
        f"{path} in {perf_counter() - tic:.1f} s"
    )
    return X, y, eras, n_eras


def _check_class_labels(y, name, path):
    """A classifier's target must hold class labels, not measurements."""
    from sklearn.utils.multiclass import type_of_target

    kind = type_of_target(y, input_name="y")
    if kind.startswith("continuous"):
        raise CLIError(
            f"target column {name!r} of {path} holds continuous values "
            "(scikit-learn: Unknown label type: continuous), which a "
            "classifier cannot take: use --task regression, or bin the "
            "target into classes first (e.g. 0/0.25/0.5/0.75/1 as 0/1/2/3/4)"
        )
