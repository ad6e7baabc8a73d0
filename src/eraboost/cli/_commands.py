"""Command line of eraboost: ``eraboost train | predict | report | convert | demo``.

Also ``python -m eraboost ...``. Run ``eraboost COMMAND --help`` for the
options. Tables are parquet (read with pyarrow, only the needed columns,
int8 columns kept int8) or CSV (``.csv``, ``.csv.gz``; integer columns read
as the smallest integer type holding them). Models are model files of
:func:`eraboost.save_model` (loading one runs no code), holding the
estimator with its feature list, target and era column names. Every output
file is written to a temporary name and renamed into place once complete.

Errors in the input (a missing column, a target with missing values, an
unreadable file, not enough memory...) end the command with a one-line
message on stderr and exit status 1; a command line that argparse rejects
exits with status 2; Ctrl-C outside training exits with status 130. Set the
environment variable ``ERABOOST_TRACEBACK=1`` to see the traceback of an
error instead.

This module imports only the standard library: numpy, scikit-learn and the
table readers are imported by the commands that need them, so that
``eraboost --help`` and ``eraboost --version`` answer at once.
"""

import argparse
import ast
import os
import signal
import sys
from pathlib import Path
from time import perf_counter

#: Prefix of the feature columns taken when none are named.
DEFAULT_FEATURE_PREFIX = "feature"
#: Longest error line printed (the rest is cut).
_MAX_ERROR_CHARS = 1000
#: ``split_type`` values and ``--metric`` names offered by the parser, kept
#: here so that building it imports no numpy (tests check them against
#: ``eraboost._engine._common.SPLIT_TYPES`` and ``eraboost.metrics.METRIC_NAMES``).
SPLIT_TYPE_CHOICES = ("directional", "era", "original")
METRIC_CHOICES = ("accuracy", "mse", "numerai_corr", "pearson", "roc_auc", "spearman")
#: The line printed on Ctrl-C (outside training), with exit status 130.
INTERRUPTED = "eraboost: interrupted"
#: The first column of ``era_scores.csv``; no model column may take it.
_ERA_COLUMN = "era"


class CLIError(Exception):
    """An error of the user's input: printed on one line, exit status 1."""


def _estimator_class(task):
    from ..classifier import HistGradientBoostingClassifier
    from ..gradient_boosting import HistGradientBoostingRegressor

    if task == "regression":
        return HistGradientBoostingRegressor
    return HistGradientBoostingClassifier


def _parse_value(text):
    """A Python literal (numbers, True, None, 'inf'...) or the text itself."""
    low = text.strip().lower()
    if low in ("inf", "+inf", "-inf", "nan"):
        return float(low)
    if low in ("true", "false", "none"):
        return {"true": True, "false": False, "none": None}[low]
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _parse_params(items):
    params = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise CLIError(f"--param takes NAME=VALUE; got {item!r}")
        params[name.strip()] = _parse_value(value)
    return params


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


def _make_estimator(args, table):
    """The estimator of ``train``, its parameters checked before any reading."""
    task = args.task if args.task != "auto" else _infer_task(table, args.target)
    cls = _estimator_class(task)
    params = {"random_state": 0}
    if args.split_type is not None:
        params["split_type"] = args.split_type
    if args.boltzmann_alpha is not None:
        params["boltzmann_alpha"] = args.boltzmann_alpha
    given = _parse_params(args.param)
    params.update(given)
    valid = cls().get_params()
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise CLIError(
            f"unknown parameter {unknown[0]!r} of {cls.__name__}; "
            f"valid ones: {', '.join(sorted(valid))}"
        )
    if args.validation_data is not None:
        if given.get("early_stopping", "auto") is False:
            raise CLIError(
                "--validation-data is for early stopping; it cannot go with "
                "--param early_stopping=False"
            )
        params["early_stopping"] = True
    from ..gradient_boosting import check_params

    est = check_params(cls(**params))  # scikit-learn's checks, as fit does them
    return est, task, given


def _read_training_data(path, table, args, features, categorical, note):
    import numpy as np

    tic = perf_counter()
    X, cols, nulls = _read_features(
        table, features, categorical, [args.target, args.era]
    )
    if args.drop_missing_target:
        X, cols, nulls = _drop_missing_target(X, cols, nulls, args.target, path, note)
    y, eras = cols[args.target], cols[args.era]
    _check_target(y, nulls[args.target], args.target, path)
    _check_eras(eras, nulls[args.era], args.era, path)
    note(
        f"read {_describe(X)} and {len(np.unique(eras))} eras from "
        f"{path} in {perf_counter() - tic:.1f} s"
    )
    return X, y, eras


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


def _same_file(a, b):
    """Whether two paths name one file (the same path, a link to it, or a
    hard link: the same device and inode)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        sa, sb = os.stat(a), os.stat(b)
    except (OSError, ValueError):
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _check_not_an_input(outputs, inputs):
    """Refuse to write over a file that the command reads.

    Parameters
    ----------
    outputs : list of str or Path
        The files the command would write.
    inputs : list of (str, str or Path or None)
        What each input is (``"DATA"``, ``"MODEL"``...) and its path.
    """
    for out in outputs:
        for what, path in inputs:
            if path is not None and _same_file(out, path):
                raise CLIError(
                    f"--out {out} is the input {what} {path}"
                    + ("" if str(out) == str(path) else " (the same file)")
                    + ": writing there would destroy it; choose another "
                    "output file"
                )


def _check_out_folder(out, what):
    """The folder of an output file exists (checked before any work)."""
    folder = os.path.dirname(os.fspath(out)) or "."
    if not os.path.isdir(folder):
        raise CLIError(
            f"cannot write the {what} to {out}: the folder does not exist: {folder}"
        )


def _check_roles(args):
    if args.target == args.era:
        raise CLIError(
            f"--target and --era both name the column {args.target!r}; the "
            "target and the eras must be different columns"
        )


def cmd_train(args):
    """``eraboost train``: fit a model on a table and save it."""
    from ..persistence import save_model
    from ._progress import TrainingProgress
    from ._tables import Table

    _check_roles(args)
    _check_out_folder(args.out, "model")
    _check_not_an_input(
        [args.out],
        [("DATA", args.data), ("--validation-data", args.validation_data)],
    )
    table = Table(args.data)
    table.check_columns([args.target], "target column")
    table.check_columns([args.era], "era column")
    est, task, given = _make_estimator(args, table)
    features = _select_features(table, args)
    categorical = _categorical_columns(table, features, args)
    if categorical:
        if "categorical_features" in given:
            raise CLIError(
                "give the categorical features with --categorical-features, "
                "not --param categorical_features"
            )
        est.set_params(categorical_features=categorical)
    val_table = None
    if args.validation_data is not None:
        val_table = Table(args.validation_data)
        val_table.check_columns(
            [*features, args.target, args.era], "column of the training data"
        )
    progress = TrainingProgress(quiet=args.quiet)
    X, y, eras = _read_training_data(
        args.data, table, args, features, categorical, progress.message
    )
    if task == "classification":
        _check_class_labels(y, args.target, args.data)
    fit_params = {"eras": eras}
    if val_table is not None:
        X_val, y_val, eras_val = _read_training_data(
            args.validation_data,
            val_table,
            args,
            features,
            categorical,
            progress.message,
        )
        fit_params.update(X_val=X_val, y_val=y_val, eras_val=eras_val)
    tic = perf_counter()
    with progress.catch_interrupt():
        progress.start()
        est.fit(X, y, callbacks=[progress], **fit_params)
    fit_seconds = perf_counter() - tic
    progress.done()
    n_iter = int(est.n_iter_)
    interrupted = progress.stop_requested and n_iter < est.max_iter
    metadata = {
        "features": features,
        "categorical": categorical,
        "target": args.target,
        "era": args.era,
        "task": task,
        "cli_params": list(args.param or ()),
        "n_iter": n_iter,
        "max_iter": int(est.max_iter),
        "interrupted": bool(interrupted),
        "data": str(args.data),
        "validation_data": (
            None if args.validation_data is None else str(args.validation_data)
        ),
        "n_rows": int(X.shape[0]),
        "fit_seconds": fit_seconds,
    }
    try:
        save_model(est, args.out, metadata=metadata)
    except OSError as exc:
        raise CLIError(
            f"cannot write the model to {args.out}: {exc.strerror or exc} "
            "(any previous file there is left as it was)"
        ) from None
    what = (
        f"interrupted: saved the {n_iter} iterations fitted so far "
        f"(of max_iter={est.max_iter})"
        if interrupted
        else f"saved {n_iter} iterations"
        + (" (early stopping)" if n_iter < est.max_iter else "")
    )
    progress.message(f"{what} in {fit_seconds:.1f} s to {args.out}")
    return 0


def _proba_columns(est, proba):
    return {f"proba_{label}": proba[:, k] for k, label in enumerate(est.classes_)}


def cmd_predict(args):
    """``eraboost predict``: predictions of a saved model for a table."""
    import numpy as np

    from ._tables import Table, check_output_format, write_table

    _check_not_an_input([args.out], [("MODEL", args.model), ("DATA", args.data)])
    check_output_format(args.out)
    _check_out_folder(args.out, "predictions")
    est, meta = _load(args.model)
    if args.proba and not hasattr(est, "predict_proba"):
        raise CLIError(
            f"--proba needs a classifier; model {args.model} is a {type(est).__name__}"
        )
    features = meta["features"]
    table = Table(args.data)
    table.check_columns(features, "feature column of the model")
    keep = (
        _split_list(args.keep, "--keep")
        if args.keep is not None
        else [c for c in (meta.get("era"),) if c in table.columns]
    )
    table.check_columns(keep)
    X, cols, _ = _read_features(table, features, meta["categorical"], keep)
    out = {name: cols[name] for name in keep}
    new = (
        _proba_columns(est, np.asarray(est.predict_proba(X)))
        if args.proba
        else {"prediction": np.asarray(est.predict(X))}
    )
    clash = [c for c in new if c in out]
    if clash:
        raise CLIError(f"--keep cannot name the output column {clash[0]!r}")
    out.update(new)
    write_table(args.out, out)
    if not args.quiet:
        what = "class probabilities" if args.proba else "predictions"
        print(f"wrote {X.shape[0]:,} {what} to {args.out}", file=sys.stderr)
    return 0


def _model_names(paths):
    """Unique, readable names of the models: their file names without the
    extension (``a``, ``a-2`` for a second ``a``); a model that would be
    named like the era column of ``era_scores.csv`` is ``era (model)``."""
    names = []
    for p in paths:
        base = Path(p).stem
        if base == _ERA_COLUMN:
            base = f"{base} (model)"
        name, i = base, 2
        while name in names:
            name, i = f"{base}-{i}", i + 1
        names.append(name)
    return names


def _scores_for(est, X, metric):
    """What ``metric`` scores: decisions for ROC AUC, predictions otherwise."""
    import numpy as np

    from ..metrics import make_era_scorer

    return np.asarray(make_era_scorer(metric).response(est, X))


#: The metrics of ``report`` that score numbers (not class labels).
_NUMERIC_METRICS = ("pearson", "spearman", "numerai_corr", "mse")


def _check_metric_fits(args, loaded, y, target):
    """A metric that scores numbers needs a numeric target, and numeric
    predictions: a classifier of text classes cannot give them."""
    if args.metric not in _NUMERIC_METRICS:
        return
    if y.dtype.kind not in "biuf":
        held = "text" if y.dtype.kind in "OU" else y.dtype
        raise CLIError(
            f"--metric {args.metric} scores numbers, but the target column "
            f"{target!r} holds {held}: use "
            "--metric accuracy (or roc_auc for two classes)"
        )
    for path, (est, _) in zip(args.models, loaded):
        classes = getattr(est, "classes_", None)
        if classes is not None and classes.dtype.kind not in "biuf":
            raise CLIError(
                f"--metric {args.metric} scores numbers, but model {path} is a "
                f"classifier of the classes {_shown(classes.tolist(), 3)}: use "
                "--metric accuracy (or roc_auc for two classes)"
            )


def cmd_report(args):
    """``eraboost report``: per-era scores, summary and plots of models."""
    from ._tables import Table
    from .report import REPORT_FILES, compare_models, write_report

    _check_not_an_input(
        [Path(args.out) / name for name in REPORT_FILES],
        [*(("MODEL", m) for m in args.models), ("DATA", args.data)],
    )
    loaded = [_load(p) for p in args.models]
    target = args.target or loaded[0][1].get("target")
    era = args.era or loaded[0][1].get("era")
    if target is None or era is None:
        raise CLIError("give --target and --era (the model does not name them)")
    features = list(dict.fromkeys(f for _, m in loaded for f in m["features"]))
    categorical = list(dict.fromkeys(c for _, m in loaded for c in m["categorical"]))
    table = Table(args.data)
    table.check_columns([target], "target column")
    table.check_columns([era], "era column")
    table.check_columns(features, "feature column of the models")
    X, cols, nulls = _read_features(table, features, categorical, [target, era])
    if args.drop_missing_target:
        note = (lambda text: None) if args.quiet else _note
        X, cols, nulls = _drop_missing_target(X, cols, nulls, target, args.data, note)
    _check_target(cols[target], nulls[target], target, args.data)
    _check_eras(cols[era], nulls[era], era, args.data)
    _check_metric_fits(args, loaded, cols[target], target)
    index = {f: j for j, f in enumerate(features)}
    predictions = {}
    for name, (est, meta) in zip(_model_names(args.models), loaded):
        if hasattr(X, "columns"):
            Xm = X[meta["features"]]
        else:
            idx = [index[f] for f in meta["features"]]
            Xm = X if idx == list(range(X.shape[1])) else _select_columns(X, idx)
        predictions[name] = _scores_for(est, Xm, args.metric)
    labels, scores, summaries = compare_models(
        predictions, cols[target], cols[era], args.metric
    )
    try:
        paths = write_report(args.out, labels, scores, summaries, args.metric)
    except OSError as exc:
        raise CLIError(
            f"cannot write the report to {args.out}: {exc.strerror or exc}"
        ) from None
    print(_summary_table(summaries, args.metric))
    if not args.quiet:
        print(
            f"wrote {', '.join(p.name for p in paths)} to {args.out}", file=sys.stderr
        )
    return 0


def _note(text):
    print(text, file=sys.stderr)


def _summary_table(summaries, metric):
    head = (
        f"{'model':<20} {'mean':>9} {'std':>9} {'sharpe':>8} {'worst':>9} "
        f"{'worst era':>10} {'drawdown':>9} {'eras':>5}"
    )
    lines = [f"per-era {metric}", head, "-" * len(head)]
    for name, s in summaries.items():
        lines.append(
            f"{name:<20} {s['mean']:>9.4f} {s['std']:>9.4f} "
            f"{s['sharpe']:>8.3f} {s['worst']:>9.4f} "
            f"{s['worst_era']!s:>10} {s['max_drawdown']:>9.4f} "
            f"{s['n_eras']:>5}"
        )
    return "\n".join(lines)


def cmd_convert(args):
    """``eraboost convert``: a model file of format 1 written again in format 2."""
    from ..persistence import convert_model

    _check_not_an_input([args.out], [("MODEL", args.model)])
    _check_out_folder(args.out, "model")
    convert_model(args.model, args.out)
    if not args.quiet:
        print(f"wrote {args.out} (model format 2)", file=sys.stderr)
    return 0


def cmd_demo(args):
    """``eraboost demo``: the split types side by side on synthetic eras."""
    from ..demo import run_demo

    run_demo(n_eras=args.n_eras, rows_per_era=args.rows_per_era, seed=args.seed)
    return 0


# -- parser -------------------------------------------------------------------
_DEMO_HELP = (
    "train four models (split_type original; era with boltzmann_alpha 0 and "
    "-inf; directional) on synthetic eras with a spurious feature and print "
    "their in-era and out-of-era scores"
)


class _VersionAction(argparse.Action):
    """``--version``: argparse's version action, the version looked up
    (``importlib.metadata``) only when asked for."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, **kwargs):
        super().__init__(
            option_strings,
            dest,
            default=argparse.SUPPRESS,
            nargs=0,
            help="show program's version number and exit",
        )

    def __call__(self, parser, namespace, values, option_string=None):
        from .. import __version__

        parser._print_message(f"eraboost {__version__}\n", sys.stdout)
        parser.exit()


def _add_drop_missing_target(parser):
    parser.add_argument(
        "--drop-missing-target",
        action="store_true",
        help="drop the rows whose target is missing (NaN or empty) and say "
        "how many; without it such rows are an error",
    )


def build_parser():
    """The argparse parser of the ``eraboost`` command."""
    parser = argparse.ArgumentParser(
        prog="eraboost",
        description="Era-aware gradient boosting on large tables. Model files "
        "load without running code; pickles (joblib) are never loaded here: "
        "load a pickle in Python only from a source you trust.",
    )
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "train",
        help="fit a model on a parquet/CSV table",
        description="Fit a model on a parquet or CSV table and save it with "
        "its feature list (a model file that loads without running code). "
        "Ctrl-C stops after the current iteration and saves the trees "
        "fitted so far.",
    )
    p.add_argument("data", metavar="DATA", help="training table (.parquet or .csv)")
    p.add_argument("--target", required=True, help="target column")
    p.add_argument("--era", required=True, help="era column")
    p.add_argument(
        "--features",
        help="comma-separated feature columns (default: the columns whose "
        f"names start with {DEFAULT_FEATURE_PREFIX!r})",
    )
    p.add_argument(
        "--feature-prefix",
        help="the feature columns are those whose names start with this",
    )
    p.add_argument(
        "--categorical-features",
        metavar="A,B",
        help="comma-separated categorical feature columns (text and "
        "dictionary columns are categorical anyway; needs pandas)",
    )
    p.add_argument(
        "--task",
        choices=("auto", "regression", "classification"),
        default="auto",
        help="auto: regression for a numeric target",
    )
    p.add_argument("--split-type", choices=SPLIT_TYPE_CHOICES, help="default: original")
    p.add_argument(
        "--boltzmann-alpha", type=float, help="e.g. 0, 2, --boltzmann-alpha=-inf"
    )
    p.add_argument(
        "--param",
        action="append",
        metavar="NAME=VALUE",
        help="any estimator parameter, e.g. max_iter=500 "
        "(repeatable; random_state defaults to 0)",
    )
    p.add_argument(
        "--validation-data",
        metavar="FILE",
        help="a table of other eras for early stopping (same columns); "
        "turns early stopping on",
    )
    _add_drop_missing_target(p)
    p.add_argument(
        "--out",
        required=True,
        help="model file to write (e.g. m.skops); never one of the input files",
    )
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser(
        "predict",
        help="predictions of a saved model",
        description="Write the predictions of a saved model for a table "
        "(parquet or CSV, by the --out extension).",
    )
    p.add_argument("model", metavar="MODEL", help="model file written by train")
    p.add_argument(
        "data", metavar="DATA", help="table with the model's feature columns"
    )
    p.add_argument(
        "--out",
        required=True,
        help="predictions file to write (.parquet, .csv, .csv.gz or .csv.bz2)",
    )
    p.add_argument(
        "--keep",
        help="comma-separated columns of DATA copied to "
        "the output (default: the model's era column, if present)",
    )
    p.add_argument(
        "--proba",
        action="store_true",
        help="classifiers: one column proba_CLASS per class instead of the "
        "predicted class",
    )
    p.add_argument("--quiet", action="store_true", help="no message on stderr")
    p.set_defaults(func=cmd_predict)

    p = sub.add_parser(
        "report",
        help="per-era scores, summary and plots",
        description="Score models era by era on a table: "
        "era_scores.csv, summary.csv, era_scores.png and "
        "cumulative.png in the output folder.",
    )
    p.add_argument(
        "models", nargs="+", metavar="MODEL", help="model files written by train"
    )
    p.add_argument(
        "data", metavar="DATA", help="table with the target, era and feature columns"
    )
    p.add_argument("--target", help="default: the first model's target")
    p.add_argument("--era", help="default: the first model's era column")
    p.add_argument(
        "--metric",
        default="pearson",
        choices=METRIC_CHOICES,
        help="per-era metric of eraboost.era_scores (default: pearson)",
    )
    _add_drop_missing_target(p)
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--quiet", action="store_true", help="no message on stderr")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser(
        "convert",
        help="write a model file of format 1 (eraboost before format 2) in format 2",
        description="Read a model file of model format 1 (a skops archive, "
        "written by an eraboost before format 2; needs skops) and write it in "
        "format 2, keeping only the fields format 2 declares.",
    )
    p.add_argument("model", metavar="MODEL", help="model file of format 1")
    p.add_argument("--out", required=True, help="model file to write")
    p.add_argument("--quiet", action="store_true", help="no message on stderr")
    p.set_defaults(func=cmd_convert)

    p = sub.add_parser("demo", help=_DEMO_HELP, description=_DEMO_HELP + ".")
    p.add_argument("--n-eras", type=int, default=40, help="training eras (default: 40)")
    p.add_argument(
        "--rows-per-era", type=int, default=1000, help="rows per era (default: 1000)"
    )
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.set_defaults(func=cmd_demo)
    return parser


def _join_negative_values(argv):
    """``--boltzmann-alpha -inf`` as ``--boltzmann-alpha=-inf`` (argparse
    would take ``-inf`` for an option)."""
    out, it = [], iter(argv)
    for token in it:
        if token == "--boltzmann-alpha":
            value = next(it, None)
            out.append(token if value is None else f"{token}={value}")
        else:
            out.append(token)
    return out


def _error_line(exc):
    text = str(exc).strip().splitlines()
    line = text[0] if text else type(exc).__name__
    if isinstance(exc, MemoryError) and not line.startswith("not enough memory"):
        line = f"not enough memory: {line}"
    if len(line) > _MAX_ERROR_CHARS:
        line = line[: _MAX_ERROR_CHARS - 3] + "..."
    return line


def _silence_stdout():
    """After a broken pipe: send what is left of stdout nowhere."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


# set by the handler of _sigint_raises: a Ctrl-C arrived while the command ran
_SIGINT_SEEN = []


def _raise_interrupt(signum, frame):
    """SIGINT handler while a command runs: remember it, raise
    KeyboardInterrupt. Compiled code may turn the KeyboardInterrupt into
    another error (numpy's import raises an ImportError of its own) or drop
    it; the record still makes the command end as interrupted."""
    _SIGINT_SEEN.append(signum)
    raise KeyboardInterrupt


def _sigint_raises():
    """Make Ctrl-C raise KeyboardInterrupt while a command runs (its files
    are then cleaned up); returns the handler to restore, or None when
    SIGINT is left alone (ignored, or not the main thread)."""
    try:
        if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, None):
            return None
        return signal.signal(signal.SIGINT, _raise_interrupt)
    except ValueError:  # not the main thread
        return None


def _restore_sigint(previous):
    if previous is not None:
        signal.signal(signal.SIGINT, previous)


def _quiet_interrupt_hooks():
    """Install hooks that keep a KeyboardInterrupt Python or compiled code
    cannot propagate from being printed; returns a function that restores
    the previous hooks.

    Such an interrupt is either unraisable (a weakref callback of the import
    system, a ``__del__``: ``sys.unraisablehook`` prints ``Exception ignored
    in ...``) or caught and printed by compiled code (numpy's
    ``import_array()`` prints it with ``PyErr_Print``, which calls
    ``sys.excepthook``, and raises an ImportError of its own). The hooks
    record it in ``_SIGINT_SEEN`` instead, so that the command ends as
    interrupted with the one line; anything else goes to the previous
    hooks."""
    previous_unraisable = sys.unraisablehook
    previous_except = sys.excepthook

    def unraisable_hook(unraisable):
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            _SIGINT_SEEN.append(signal.SIGINT)
            return
        previous_unraisable(unraisable)

    def except_hook(exc_type, exc_value, exc_traceback):
        if isinstance(exc_value, KeyboardInterrupt):
            _SIGINT_SEEN.append(signal.SIGINT)
            return
        previous_except(exc_type, exc_value, exc_traceback)

    sys.unraisablehook = unraisable_hook
    sys.excepthook = except_hook

    def restore():
        sys.unraisablehook = previous_unraisable
        sys.excepthook = previous_except

    return restore


def _load_libraries(func):
    """Import the libraries the command ``func`` uses, before a Ctrl-C
    raises KeyboardInterrupt (see :func:`main`).

    Under the entry point a Ctrl-C then still ends the process at once, with
    the one line: an import has nothing to clean up, and code outside
    eraboost prints an interrupt it catches there (numpy's
    ``import_array()`` prints a traceback, scipy's generated functions print
    their source). A missing optional library is left for the command to
    report."""
    import importlib
    from contextlib import suppress

    tables = ("pyarrow", "pyarrow.csv", "pyarrow.parquet", "pyarrow.compute")
    modules = {
        cmd_train: (*tables, "eraboost.persistence"),
        cmd_predict: (*tables, "eraboost.persistence"),
        cmd_report: (*tables, "eraboost.persistence", "eraboost.metrics"),
        cmd_convert: ("eraboost.persistence",),
        cmd_demo: ("eraboost.demo",),
    }.get(func, ())
    for name in ("numpy", "eraboost.gradient_boosting", *modules):
        with suppress(ImportError):
            importlib.import_module(name)
    if func is cmd_report:
        from .report import _pyplot

        with suppress(ValueError):  # no matplotlib
            _pyplot()


def _interrupted():
    print(INTERRUPTED, file=sys.stderr)
    return 130


def _caused_by_interrupt(exc):
    """Whether ``exc`` follows a Ctrl-C: one arrived while the command ran,
    or a KeyboardInterrupt is in its chain (a Ctrl-C inside the import of a
    compiled module comes back as an ImportError)."""
    if _SIGINT_SEEN:
        return True
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _run(args):
    """Run the command of parsed arguments; returns the exit status."""
    try:
        status = args.func(args)
        sys.stdout.flush()
        if _SIGINT_SEEN:  # compiled code swallowed the KeyboardInterrupt
            raise KeyboardInterrupt
        return status
    except Exception as exc:
        if _caused_by_interrupt(exc):
            raise KeyboardInterrupt from None
        if isinstance(exc, BrokenPipeError):
            # the reader of our output went away (``eraboost demo | head``)
            _silence_stdout()
            return 0
        if not isinstance(exc, (CLIError, ValueError, OSError, MemoryError)):
            raise
        # (a TableError is a ValueError)
        if os.environ.get("ERABOOST_TRACEBACK"):
            raise
        print(f"eraboost: error: {_error_line(exc)}", file=sys.stderr)
        return 1


def main(argv=None):
    """Run the command line; returns the exit status.

    A Ctrl-C while the command runs ends it with the line
    ``eraboost: interrupted`` and status 130 (its partly written files
    removed); during training the first Ctrl-C stops after the current
    iteration instead. Before and after the command, and while the
    libraries it uses load, the entry point (:func:`eraboost.__main__.main`)
    exits at once with the same line and status.

    Parameters
    ----------
    argv : list of str, default=None
        The arguments; ``sys.argv[1:]`` when None.

    Returns
    -------
    status : int
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(_join_negative_values(argv))
        _load_libraries(args.func)
    except KeyboardInterrupt:
        return _interrupted()
    restore_hooks = _quiet_interrupt_hooks()
    previous = _sigint_raises()
    try:
        return _run(args)
    except KeyboardInterrupt:
        # the entry point's handler first: a second Ctrl-C exits at once
        _restore_sigint(previous)
        previous = None
        return _interrupted()
    finally:
        _restore_sigint(previous)
        restore_hooks()
