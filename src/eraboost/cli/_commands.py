"""The commands: ``eraboost train | predict | report | convert | demo``.

Each ``cmd_NAME`` takes the parsed arguments and returns the exit status.
Tables are parquet (read with pyarrow, only the needed columns, int8
columns kept int8) or CSV (``.csv``, ``.csv.gz``; integer columns read as
the smallest integer type holding them). Models are model files of
:func:`eraboost.save_model` (loading one runs no code), holding the
estimator with its feature list, target and era column names. Every output
file is written to a temporary name and renamed into place once complete.

This module imports only the standard library at the top (the parser
refers to the commands): each command imports what it needs.
"""

import ast
import sys
import warnings
from pathlib import Path
from time import perf_counter

from ._errors import CLIError
from ._loading import (
    _categorical_columns,
    _check_category_kinds,
    _check_class_labels,
    _check_eras,
    _check_finite_predictions,
    _check_target,
    _drop_missing_target,
    _infer_task,
    _load,
    _model_file_problems,
    _read_features,
    _read_training_data,
    _select_columns,
    _select_features,
    _shown,
    _split_list,
)
from ._outputs import _check_model_out, _check_not_an_input, _check_out_folder

#: The first column of ``era_scores.csv``; no model column may take it.
_ERA_COLUMN = "era"


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


def _recommended(args, task, params):
    """``--model recommended``: the ensemble of the recommended pair, each
    member with ``params`` (checked as fit checks them)."""
    for given, option in (
        (args.split_type, "--split-type"),
        (args.boltzmann_alpha, "--boltzmann-alpha"),
        (args.validation_data, "--validation-data"),
    ):
        if given is not None:
            raise CLIError(
                f"--model recommended fixes its members' split types and takes "
                f"no {option}; use --model booster for it"
            )
    fixed = sorted({"split_type", "irf_penalty"} & set(params))
    if fixed:
        raise CLIError(
            f"--model recommended fixes its members' {fixed[0]} (original; "
            "directional with irf_penalty=1); use --model booster to set it"
        )
    from ..ensemble import EraEnsembleClassifier, EraEnsembleRegressor
    from ..gradient_boosting import check_params

    cls = EraEnsembleRegressor if task == "regression" else EraEnsembleClassifier
    est = cls()
    est.set_params(
        **{
            f"{m}__{k}": v
            for m in ("original", "directional")
            for k, v in params.items()
        }
    )
    for _, member in est.estimators:
        check_params(member)
    return est


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
    if getattr(args, "model", "booster") == "recommended":
        return _recommended(args, task, params), task, given
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


def _check_roles(args):
    if args.target == args.era:
        raise CLIError(
            f"--target and --era both name the column {args.target!r}; the "
            "target and the eras must be different columns"
        )


def _check_train_outputs(args):
    """``train``'s checks of its columns' roles and of ``--out``."""
    _check_roles(args)
    _check_out_folder(args.out, "model")
    _check_not_an_input(
        [args.out],
        [("DATA", args.data), ("--validation-data", args.validation_data)],
    )
    _check_model_out(args.out)


def _save(est, args, metadata):
    from ..persistence import save_model

    try:
        save_model(est, args.out, metadata=metadata)
    except OSError as exc:
        raise CLIError(
            f"cannot write the model to {args.out}: {exc.strerror or exc} "
            "(any previous file there is left as it was)"
        ) from None


def cmd_train(args):
    """``eraboost train``: fit a model on a table and save it."""
    from ._progress import TrainingProgress
    from ._tables import Table

    _check_train_outputs(args)
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
        members = [n for n, _ in getattr(est, "estimators", None) or ()]
        est.set_params(
            **{f"{m}__categorical_features": categorical for m in members}
            or {"categorical_features": categorical}
        )
    val_table = None
    if args.validation_data is not None:
        val_table = Table(args.validation_data)
        val_table.check_columns(
            [*features, args.target, args.era], "column of the training data"
        )
    progress = TrainingProgress(quiet=args.quiet)
    X, y, eras, n_eras = _read_training_data(
        args.data, table, args, features, categorical, progress.message
    )
    told = _warn_single_era(est, n_eras, eras, args) + _warn_constant_target(y, args)
    if task == "classification":
        _check_class_labels(y, args.target, args.data)
    fit_params = {"eras": eras}
    if val_table is not None:
        X_val, y_val, eras_val, _ = _read_training_data(
            args.validation_data,
            val_table,
            args,
            features,
            categorical,
            progress.message,
        )
        fit_params.update(X_val=X_val, y_val=y_val, eras_val=eras_val)
    tic = perf_counter()
    if hasattr(est, "estimators"):
        # an ensemble: no per-iteration progress, Ctrl-C aborts (nothing saved)
        progress.message(f"fitting {len(est.estimators)} models...")
        with warnings.catch_warnings():
            for message in told:  # said above, in the command line's words
                warnings.filterwarnings("ignore", message, UserWarning)
            est.fit(X, y, **fit_params)
        n_iter = sum(int(m.n_iter_) for m in est.estimators_)
        max_iter = sum(int(m.max_iter) for m in est.estimators_)
    else:
        with progress.catch_interrupt(), warnings.catch_warnings():
            for message in told:  # said above, in the command line's words
                warnings.filterwarnings("ignore", message, UserWarning)
            progress.start()
            est.fit(X, y, callbacks=[progress], **fit_params)
        n_iter, max_iter = int(est.n_iter_), int(est.max_iter)
    fit_seconds = perf_counter() - tic
    progress.done()
    interrupted = progress.stop_requested and n_iter < max_iter
    metadata = {
        "features": features,
        "categorical": categorical,
        "target": args.target,
        "era": args.era,
        "task": task,
        "cli_params": list(args.param or ()),
        "model": getattr(args, "model", "booster"),
        "n_iter": n_iter,
        "max_iter": max_iter,
        "interrupted": bool(interrupted),
        "data": str(args.data),
        "validation_data": (
            None if args.validation_data is None else str(args.validation_data)
        ),
        "n_rows": int(X.shape[0]),
        "fit_seconds": fit_seconds,
    }
    _save(est, args, metadata)
    what = (
        f"interrupted: saved the {n_iter} iterations fitted so far "
        f"(of max_iter={max_iter})"
        if interrupted
        else f"saved {n_iter} iterations"
        + (" (early stopping)" if n_iter < max_iter else "")
    )
    progress.message(f"{what} in {fit_seconds:.1f} s to {args.out}")
    return 0


def cmd_train_cluster(args):
    """``eraboost train --scheduler ADDRESS``: fit a model on a Dask cluster,
    the table read by parts on the workers, and save it as ``train`` does
    (``_cluster.py``). Ctrl-C aborts the fit (nothing is saved)."""
    from ._cluster import train_on_cluster

    _check_train_outputs(args)
    note = (lambda text: None) if args.quiet else _note
    est, task, features, n_rows, fit_seconds = train_on_cluster(args, note)
    n_iter, max_iter = int(est.n_iter_), int(est.max_iter)
    metadata = {
        "features": features,
        "categorical": [],
        "target": args.target,
        "era": args.era,
        "task": task,
        "cli_params": list(args.param or ()),
        "model": "booster",
        "n_iter": n_iter,
        "max_iter": max_iter,
        "interrupted": False,
        "data": str(args.data),
        "validation_data": None,
        "n_rows": n_rows,
        "fit_seconds": fit_seconds,
        "scheduler": args.scheduler,
    }
    _save(est, args, metadata)
    note(
        f"saved {n_iter} iterations in {fit_seconds:.1f} s to {args.out} "
        f"(fitted on the Dask cluster at {args.scheduler})"
    )
    return 0


def _warn(text):
    """A warning of the command line: one line on stderr."""
    print(f"eraboost: warning: {text}", file=sys.stderr)


def _warn_single_era(est, n_eras, eras, args):
    """Say that era-aware options have a single era to work with; returns
    the estimator's warning it replaces (a pattern), or none."""
    from .._eras import era_options_text

    members = [m for _, m in getattr(est, "estimators", None) or ()]
    options = [o for m in members or [est] for o in era_options_text(m)]
    if not options or n_eras > 1:
        return []
    flags = [
        f"--split-type {o.split('=', 1)[1].strip(chr(39))}"
        if o.startswith("split_type=")
        else f"--param {o}"
        for o in options
    ]
    if members:  # --model recommended
        flags = ["--model recommended"]
    _warn(
        f"the era column {args.era!r} of {args.data} holds a single era "
        f"({eras[:1].tolist()[0]!r}), so {', '.join(flags)} cannot compare "
        "eras (the model is the one of --split-type original); give --era a "
        "column of several eras (e.g. the month of each row)"
    )
    return [".* given without eras"]


def _warn_constant_target(y, args):
    """Say that the target holds one value; returns the estimator's warning
    it replaces (a pattern), or none."""
    if y.shape[0] < 2 or (y != y[0]).any():
        return []
    _warn(
        f"the target column {args.target!r} of {args.data} holds one value "
        f"({y[:1].tolist()[0]!r}) in every row: the model will predict it "
        "everywhere; check --target and the rows of the table"
    )
    return ["y holds "]


def _proba_columns(est, proba):
    return {f"proba_{label}": proba[:, k] for k, label in enumerate(est.classes_)}


def cmd_predict(args):
    """``eraboost predict``: predictions of a saved model for a table."""
    import numpy as np

    from ._tables import Table, check_output_format, write_table

    _check_not_an_input([args.out], [("MODEL", args.model), ("DATA", args.data)])
    check_output_format(args.out)
    _check_out_folder(args.out, "predictions")
    with _model_file_problems(args.model):
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
    _check_category_kinds(est, X, args.model, args.data)
    with _model_file_problems(args.model):
        new = (
            _proba_columns(est, np.asarray(est.predict_proba(X)))
            if args.proba
            else {"prediction": np.asarray(est.predict(X))}
        )
        _check_finite_predictions(new, args.model, args.data)
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
    from .report import REPORT_METRICS

    scorer = make_era_scorer("mse" if metric in REPORT_METRICS else metric)
    return np.asarray(scorer.response(est, X))


#: The metrics of ``report`` that score numbers (not class labels).
_NUMERIC_METRICS = ("pearson", "spearman", "numerai_corr", "mse", "r2", "mae")


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
    import numpy as np

    from ._tables import Table
    from .report import REPORT_FILES, compare_models, write_report

    _check_not_an_input(
        [Path(args.out) / name for name in REPORT_FILES],
        [*(("MODEL", m) for m in args.models), ("DATA", args.data)],
    )
    loaded = []
    for path in args.models:
        with _model_file_problems(path):
            loaded.append(_load(path))
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
    names = _model_names(args.models)
    for name, path, (est, meta) in zip(names, args.models, loaded):
        if hasattr(X, "columns"):
            Xm = X[meta["features"]]
        else:
            idx = [index[f] for f in meta["features"]]
            Xm = X if idx == list(range(X.shape[1])) else _select_columns(X, idx)
        _check_category_kinds(est, Xm, path, args.data)
        with _model_file_problems(path):
            predictions[name] = _scores_for(est, Xm, args.metric)
    labels, scores, summaries = compare_models(
        predictions, cols[target], cols[era], args.metric
    )
    for name, s in scores.items():
        undefined = int((~np.isfinite(s)).sum())
        if undefined and not args.quiet:
            _warn(
                f"{args.metric} of {name} is undefined (NaN) in {undefined} of "
                f"{s.size} eras: its predictions or the target do not vary "
                "there (a model of a constant target predicts one value)"
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
    _check_model_out(args.out)
    _check_out_folder(args.out, "model")
    with _model_file_problems(args.model):
        convert_model(args.model, args.out)
    if not args.quiet:
        print(f"wrote {args.out} (model format 2)", file=sys.stderr)
    return 0


def cmd_demo(args):
    """``eraboost demo``: the split types side by side on synthetic eras."""
    from ..demo import run_demo

    run_demo(n_eras=args.n_eras, rows_per_era=args.rows_per_era, seed=args.seed)
    return 0
