"""Command line of eraboost: ``eraboost train | predict | report | demo``.

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
"""

import argparse
import ast
import os
import sys
from pathlib import Path
from time import perf_counter

import numpy as np

from ._tables import Table, TableError, write_table

#: Prefix of the feature columns taken when none are named.
DEFAULT_FEATURE_PREFIX = "feature"
#: Longest error line printed (the rest is cut).
_MAX_ERROR_CHARS = 1000


class CLIError(Exception):
    """An error of the user's input: printed on one line, exit status 1."""


def _estimator_class(task):
    from .classifier import HistGradientBoostingClassifier
    from .gradient_boosting import HistGradientBoostingRegressor

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
    """The estimator of a model file and its metadata, with the feature list."""
    from .persistence import load_model

    est, meta = load_model(path, return_metadata=True)
    meta = dict(meta)
    if not meta.get("features"):
        names = getattr(est, "feature_names_in_", None)
        if names is None:
            raise CLIError(
                f"model {path} has no feature list: fit it on a DataFrame, "
                "or save it with save_model(..., metadata={'features': [...]})"
            )
        meta["features"] = [str(n) for n in names]
    meta.setdefault("categorical", [])
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


def _check_target(y, null_count, name, path):
    n_missing = null_count
    if y.dtype.kind == "f":
        n_missing = int(np.isnan(y).sum())
    if n_missing:
        raise CLIError(
            f"target column {name!r} of {path} has {n_missing} "
            "missing values (NaN); drop those rows first"
        )
    if y.dtype.kind == "f" and not np.isfinite(y).all():
        raise CLIError(f"target column {name!r} of {path} has infinite values")


def _check_eras(eras, null_count, name, path):
    if null_count or (eras.dtype.kind == "f" and np.isnan(eras).any()):
        raise CLIError(f"era column {name!r} of {path} has missing values")


def _feature_frame(X, numeric, cat_columns, features):
    """A DataFrame of the features, the categorical ones as pandas categories."""
    try:
        import pandas as pd
    except ImportError:
        raise CLIError(
            "categorical features need pandas: pip install 'eraboost[cli]'"
        ) from None
    columns = {name: X[:, j] for j, name in enumerate(numeric)}
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


def _n_features(X):
    return X.shape[1]


def _describe(X):
    if hasattr(X, "dtypes"):
        return f"{X.shape[0]:,} rows x {X.shape[1]} features (with categorical)"
    return (
        f"{X.shape[0]:,} rows x {X.shape[1]} features ({X.dtype}, "
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
    from .gradient_boosting import check_params

    est = check_params(cls(**params))  # scikit-learn's checks, as fit does them
    return est, task, given


def _read_training_data(path, table, args, features, categorical, note):
    tic = perf_counter()
    X, cols, nulls = _read_features(
        table, features, categorical, [args.target, args.era]
    )
    y, eras = cols[args.target], cols[args.era]
    _check_target(y, nulls[args.target], args.target, path)
    _check_eras(eras, nulls[args.era], args.era, path)
    note(
        f"read {_describe(X)} and {len(np.unique(eras))} eras from "
        f"{path} in {perf_counter() - tic:.1f} s"
    )
    return X, y, eras


def _check_roles(args):
    if args.target == args.era:
        raise CLIError(
            f"--target and --era both name the column {args.target!r}; the "
            "target and the eras must be different columns"
        )


def cmd_train(args):
    """``eraboost train``: fit a model on a table and save it."""
    from ._progress import TrainingProgress
    from .persistence import save_model

    _check_roles(args)
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
    from ._tables import check_output_format

    check_output_format(args.out)
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
    names = []
    for p in paths:
        name, i = Path(p).stem, 2
        while name in names:
            name, i = f"{Path(p).stem}-{i}", i + 1
        names.append(name)
    return names


def _scores_for(est, X, metric):
    """What ``metric`` scores: decisions for ROC AUC, predictions otherwise."""
    from .metrics import make_era_scorer

    return np.asarray(make_era_scorer(metric).response(est, X))


def cmd_report(args):
    """``eraboost report``: per-era scores, summary and plots of models."""
    from .report import compare_models, write_report

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
    _check_target(cols[target], nulls[target], target, args.data)
    _check_eras(cols[era], nulls[era], era, args.data)
    index = {f: j for j, f in enumerate(features)}
    predictions = {}
    for name, (est, meta) in zip(_model_names(args.models), loaded):
        if hasattr(X, "columns"):
            Xm = X[meta["features"]]
        else:
            idx = [index[f] for f in meta["features"]]
            Xm = X if idx == list(range(X.shape[1])) else X[:, idx]
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


def cmd_demo(args):
    """``eraboost demo``: the split types side by side on synthetic eras."""
    from .demo import run_demo

    run_demo(n_eras=args.n_eras, rows_per_era=args.rows_per_era, seed=args.seed)
    return 0


# -- parser -------------------------------------------------------------------
_DEMO_HELP = (
    "train four models (split_type original; era with boltzmann_alpha 0 and "
    "-inf; directional) on synthetic eras with a spurious feature and print "
    "their in-era and out-of-era scores"
)


def _version():
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("eraboost")
    except PackageNotFoundError:  # pragma: no cover - run from a source tree
        return "unknown"


def build_parser():
    """The argparse parser of the ``eraboost`` command."""
    from ._common import SPLIT_TYPES
    from .metrics import METRIC_NAMES

    parser = argparse.ArgumentParser(
        prog="eraboost",
        description="Era-aware gradient boosting on large tables. Model files "
        "load without running code; pickles (joblib) are never loaded here: "
        "load a pickle in Python only from a source you trust.",
    )
    parser.add_argument("--version", action="version", version=f"eraboost {_version()}")
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
    p.add_argument(
        "--split-type", choices=sorted(SPLIT_TYPES), help="default: original"
    )
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
    p.add_argument("--out", required=True, help="model file to write (e.g. m.skops)")
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
        choices=sorted(METRIC_NAMES),
        help="per-era metric of eraboost.era_scores (default: pearson)",
    )
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--quiet", action="store_true", help="no message on stderr")
    p.set_defaults(func=cmd_report)

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


def main(argv=None):
    """Run the command line; returns the exit status."""
    try:
        argv = list(sys.argv[1:] if argv is None else argv)
        args = build_parser().parse_args(_join_negative_values(argv))
        try:
            status = args.func(args)
            sys.stdout.flush()
            return status
        except BrokenPipeError:
            # the reader of our output went away (``eraboost demo | head``)
            _silence_stdout()
            return 0
        except (CLIError, TableError, ValueError, OSError, MemoryError) as exc:
            if os.environ.get("ERABOOST_TRACEBACK"):
                raise
            print(f"eraboost: error: {_error_line(exc)}", file=sys.stderr)
            return 1
    except KeyboardInterrupt:
        print("eraboost: interrupted", file=sys.stderr)
        return 130
