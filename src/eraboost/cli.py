"""Command line of eraboost: ``eraboost train | predict | report | demo``.

Also ``python -m eraboost ...``. Run ``eraboost COMMAND --help`` for the
options. Tables are parquet (read with pyarrow, only the needed columns,
int8 columns kept int8) or CSV (``.csv``, ``.csv.gz``); models are joblib
files holding the estimator with its feature list, target and era column
names and the parameters used. Errors in the input (a missing column, a
target with missing values, an unreadable file...) end the command with a
one-line message on stderr and exit status 1; a command line that argparse
rejects exits with status 2; Ctrl-C outside training exits with status 130.
Set the environment variable ``ERABOOST_TRACEBACK=1`` to see the traceback
of an error instead.
"""

import argparse
import ast
import os
import sys
from pathlib import Path
from time import perf_counter

import numpy as np

from ._tables import Table, TableError, write_table

MODEL_FORMAT = "eraboost-model"
MODEL_VERSION = 1


class CLIError(Exception):
    """An error of the user's input: printed on one line, exit status 1."""


# -- estimators ---------------------------------------------------------------
def _estimator_class(task):
    import eraboost

    if task == "regression":
        return eraboost.HistGradientBoostingRegressor
    return eraboost.HistGradientBoostingClassifier


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


def _split_list(text):
    return [c.strip() for c in text.split(",") if c.strip()]


# -- model files --------------------------------------------------------------
def save_model(path, bundle):
    """Write a model bundle (a dict) with joblib."""
    import joblib

    try:
        joblib.dump(bundle, path)
    except OSError as exc:
        raise CLIError(
            f"cannot write the model to {path}: {exc.strerror or exc}"
        ) from None


def load_model(path):
    """Read a model bundle written by ``eraboost train``.

    Returns
    -------
    bundle : dict
        ``estimator``, ``features``, ``target``, ``era``, ``task``,
        ``params``, ``n_iter``, ``max_iter``, ``interrupted``, ...
    """
    import joblib

    if not Path(path).is_file():
        raise CLIError(f"cannot read model {path}: no such file")
    try:
        bundle = joblib.load(path)
    except Exception as exc:
        raise CLIError(
            f"cannot read model {path}: not an eraboost model file "
            f"({type(exc).__name__})"
        ) from None
    if not (isinstance(bundle, dict) and bundle.get("format") == MODEL_FORMAT):
        raise CLIError(f"cannot read model {path}: not an eraboost model file")
    return bundle


# -- commands -----------------------------------------------------------------
def _open(path):
    return Table(path)


def _select_features(table, args):
    if args.features and args.feature_prefix:
        raise CLIError("give --features or --feature-prefix, not both")
    if args.features:
        features = _split_list(args.features)
        table.check_columns(features, "feature column")
    elif args.feature_prefix:
        features = [c for c in table.columns if c.startswith(args.feature_prefix)]
        if not features:
            raise CLIError(
                f"{table.path} has no column whose name starts "
                f"with {args.feature_prefix!r}"
            )
    else:
        features = [
            c for c in table.numeric_columns() if c not in (args.target, args.era)
        ]
        if not features:
            raise CLIError(f"{table.path} has no numeric feature column")
    for role, name in (("target", args.target), ("era", args.era)):
        if name in features:
            raise CLIError(f"the {role} column {name!r} is also a feature")
    return features


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
    params.update(_parse_params(args.param))
    valid = cls().get_params()
    unknown = sorted(set(params) - set(valid))
    if unknown:
        raise CLIError(
            f"unknown parameter {unknown[0]!r} of {cls.__name__}; "
            f"valid ones: {', '.join(sorted(valid))}"
        )
    est = cls(**params)
    est._validate_params()  # scikit-learn's checks, as fit does them
    return est, task, params


def _read_training_data(args, table, note):
    tic = perf_counter()
    features = _select_features(table, args)
    X, cols, nulls = table.read(features, [args.target, args.era])
    y, eras = cols[args.target], cols[args.era]
    _check_target(y, nulls[args.target], args.target, args.data)
    _check_eras(eras, nulls[args.era], args.era, args.data)
    note(
        f"read {X.shape[0]:,} rows x {X.shape[1]} features ({X.dtype}, "
        f"{X.nbytes / 1e6:,.1f} MB) and {len(np.unique(eras))} eras from "
        f"{args.data} in {perf_counter() - tic:.1f} s"
    )
    return X, y, eras, features


def cmd_train(args):
    """``eraboost train``: fit a model on a table and save it."""
    from ._progress import TrainingProgress

    progress = TrainingProgress(quiet=args.quiet)
    table = _open(args.data)
    table.check_columns([args.target], "target column")
    table.check_columns([args.era], "era column")
    est, task, params = _make_estimator(args, table)
    X, y, eras, features = _read_training_data(args, table, progress.message)
    tic = perf_counter()
    with progress.catch_interrupt():
        progress.start()
        est.fit(X, y, eras=eras, callbacks=[progress])
    progress.done()
    n_iter = int(est.n_iter_)
    interrupted = progress.stop_requested and n_iter < est.max_iter
    bundle = {
        "format": MODEL_FORMAT,
        "version": MODEL_VERSION,
        "estimator": est,
        "features": features,
        "target": args.target,
        "era": args.era,
        "task": task,
        "params": est.get_params(deep=False),
        "cli_params": params,
        "n_iter": n_iter,
        "max_iter": int(est.max_iter),
        "interrupted": bool(interrupted),
        "data": str(args.data),
        "n_rows": int(X.shape[0]),
        "fit_seconds": perf_counter() - tic,
    }
    save_model(args.out, bundle)
    what = (
        f"interrupted: saved the {n_iter} iterations fitted so far "
        f"(of max_iter={est.max_iter})"
        if interrupted
        else f"saved {n_iter} iterations"
        + (" (early stopping)" if n_iter < est.max_iter else "")
    )
    progress.message(f"{what} in {bundle['fit_seconds']:.1f} s to {args.out}")
    return 0


def _read_for_model(path, features, others):
    table = _open(path)
    table.check_columns(features, "feature column of the model")
    return table.read(features, others)


def _model_response(est, X, metric=None):
    if metric == "roc_auc":
        from .metrics import make_era_scorer

        return make_era_scorer("roc_auc").response(est, X)
    return np.asarray(est.predict(X))


def cmd_predict(args):
    """``eraboost predict``: predictions of a saved model for a table."""
    bundle = load_model(args.model)
    features = bundle["features"]
    table = _open(args.data)
    table.check_columns(features, "feature column of the model")
    keep = (
        _split_list(args.keep)
        if args.keep is not None
        else [c for c in (bundle["era"],) if c in table.columns]
    )
    table.check_columns(keep)
    X, cols, _ = table.read(features, keep)
    out = {name: cols[name] for name in keep}
    if "prediction" in out:
        raise CLIError("--keep cannot name a column 'prediction'")
    out["prediction"] = _model_response(bundle["estimator"], X)
    write_table(args.out, out)
    if not args.quiet:
        print(f"wrote {X.shape[0]:,} predictions to {args.out}", file=sys.stderr)
    return 0


def _model_names(paths):
    names = []
    for p in paths:
        name, i = Path(p).stem, 2
        while name in names:
            name, i = f"{Path(p).stem}-{i}", i + 1
        names.append(name)
    return names


def cmd_report(args):
    """``eraboost report``: per-era scores, summary and plots of models."""
    from .report import compare_models, write_report

    bundles = [load_model(p) for p in args.models]
    target = args.target or bundles[0]["target"]
    era = args.era or bundles[0]["era"]
    features = list(dict.fromkeys(f for b in bundles for f in b["features"]))
    table = _open(args.data)
    table.check_columns([target], "target column")
    table.check_columns([era], "era column")
    table.check_columns(features, "feature column of the models")
    X, cols, nulls = table.read(features, [target, era])
    _check_target(cols[target], nulls[target], target, args.data)
    _check_eras(cols[era], nulls[era], era, args.data)
    index = {f: j for j, f in enumerate(features)}
    predictions = {}
    for name, b in zip(_model_names(args.models), bundles):
        idx = [index[f] for f in b["features"]]
        Xm = X if idx == list(range(X.shape[1])) else X[:, idx]
        predictions[name] = _model_response(b["estimator"], Xm, args.metric)
    labels, scores, summaries = compare_models(
        predictions, cols[target], cols[era], args.metric
    )
    paths = write_report(args.out, labels, scores, summaries, args.metric)
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
def build_parser():
    """The argparse parser of the ``eraboost`` command."""
    from ._common import SPLIT_TYPES
    from .metrics import METRIC_NAMES

    parser = argparse.ArgumentParser(
        prog="eraboost", description="Era-aware gradient boosting on large tables."
    )
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser(
        "train",
        help="fit a model on a parquet/CSV table",
        description="Fit a model on a parquet or CSV table and "
        "save it (joblib) with its feature list and parameters. "
        "Ctrl-C stops after the current iteration and saves "
        "the trees fitted so far.",
    )
    p.add_argument("data", help="training table (.parquet or .csv)")
    p.add_argument("--target", required=True, help="target column")
    p.add_argument("--era", required=True, help="era column")
    p.add_argument(
        "--features",
        help="comma-separated feature columns (default: every other numeric column)",
    )
    p.add_argument(
        "--feature-prefix",
        help="the feature columns are those whose names start with this",
    )
    p.add_argument(
        "--task",
        choices=("auto", "regression", "classification"),
        default="auto",
        help="auto: regression for a numeric target",
    )
    p.add_argument("--split-type", choices=sorted(SPLIT_TYPES))
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
    p.add_argument("--out", required=True, help="model file to write")
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=cmd_train)

    p = sub.add_parser(
        "predict",
        help="predictions of a saved model",
        description="Write the predictions of a saved model "
        "for a table (parquet or CSV, by the --out extension).",
    )
    p.add_argument("model")
    p.add_argument("data")
    p.add_argument("--out", required=True, help="predictions file to write")
    p.add_argument(
        "--keep",
        help="comma-separated columns of DATA copied to "
        "the output (default: the model's era column, if present)",
    )
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_predict)

    p = sub.add_parser(
        "report",
        help="per-era scores, summary and plots",
        description="Score models era by era on a table: "
        "era_scores.csv, summary.csv, era_scores.png and "
        "cumulative.png in the output folder.",
    )
    p.add_argument("models", nargs="+", metavar="MODEL")
    p.add_argument("data", metavar="DATA")
    p.add_argument("--target", help="default: the first model's target")
    p.add_argument("--era", help="default: the first model's era column")
    p.add_argument(
        "--metric",
        default="pearson",
        choices=sorted(METRIC_NAMES),
        help="default: pearson",
    )
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser(
        "demo",
        help="train the three split types on a "
        "synthetic era dataset and print their scores",
    )
    p.add_argument("--n-eras", type=int, default=40)
    p.add_argument("--rows-per-era", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
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


def main(argv=None):
    """Run the command line; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = build_parser().parse_args(_join_negative_values(argv))
    try:
        return args.func(args)
    except (CLIError, TableError, ValueError, OSError) as exc:
        if os.environ.get("ERABOOST_TRACEBACK"):
            raise
        text = str(exc).strip().splitlines()
        print(
            f"eraboost: error: {text[0] if text else type(exc).__name__}",
            file=sys.stderr,
        )
        return 1
    except KeyboardInterrupt:
        print("eraboost: interrupted", file=sys.stderr)
        return 130
