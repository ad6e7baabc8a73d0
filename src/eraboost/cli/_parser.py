"""The argparse parser of the ``eraboost`` command (:func:`build_parser`).

Imports only the standard library (and the commands, which do too), so
that ``eraboost --help`` and ``eraboost --version`` answer at once.
"""

import argparse
import sys

from . import _commands as commands
from ._loading import DEFAULT_FEATURE_PREFIX

#: ``split_type`` values and ``--metric`` names offered by the parser, kept
#: here so that building it imports no numpy (tests check them against
#: ``eraboost._engine._common.SPLIT_TYPES``, and ``eraboost.metrics.METRIC_NAMES``
#: with the report's own ``eraboost.cli.report.REPORT_METRICS``).
SPLIT_TYPE_CHOICES = ("directional", "era", "original")
METRIC_CHOICES = (
    "accuracy",
    "mae",
    "mse",
    "numerai_corr",
    "pearson",
    "r2",
    "roc_auc",
    "spearman",
)
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
    p.add_argument(
        "--model",
        choices=("booster", "recommended"),
        default="booster",
        help="booster: one model (--split-type); recommended: the average of "
        "split_type original and directional with irf_penalty=1 "
        "(EraEnsembleRegressor/Classifier; --param sets both members)",
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
    p.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="fit on the Dask cluster of this scheduler (e.g. tcp://HOST:8786; "
        "needs eraboost[dask]): DATA, a parquet file or folder of parts that "
        "every worker can read, is read by parts on the workers; early "
        "stopping is off (docs/distributed.md)",
    )
    _add_drop_missing_target(p)
    p.add_argument(
        "--out",
        required=True,
        help="model file to write (e.g. m.skops); never one of the input files",
    )
    p.add_argument("--quiet", action="store_true", help="no progress output")
    p.set_defaults(func=commands.cmd_train)

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
    p.set_defaults(func=commands.cmd_predict)

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
        help="per-era metric: one of eraboost.era_scores, or r2 or mae "
        "(default: pearson); a correlation or r2 is NaN in an era where it is "
        "undefined (constant predictions or target)",
    )
    _add_drop_missing_target(p)
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--quiet", action="store_true", help="no message on stderr")
    p.set_defaults(func=commands.cmd_report)

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
    p.set_defaults(func=commands.cmd_convert)

    p = sub.add_parser("demo", help=_DEMO_HELP, description=_DEMO_HELP + ".")
    p.add_argument("--n-eras", type=int, default=40, help="training eras (default: 40)")
    p.add_argument(
        "--rows-per-era", type=int, default=1000, help="rows per era (default: 1000)"
    )
    p.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    p.set_defaults(func=commands.cmd_demo)
    parser.command_parsers = sub.choices  # for parse_args's messages
    return parser


def parse_args(argv):
    """The parsed command line ``argv``; argparse's exit (status 2) on a bad
    one.

    An argument the command does not take is reported with that command's
    usage (argparse reports it with the top-level usage); a ``--param``
    value without ``=`` followed by that argument says how to write it.
    """
    parser = build_parser()
    args, extra = parser.parse_known_args(_join_negative_values(argv))
    if extra:
        message = f"unrecognized arguments: {' '.join(extra)}"
        loose = [p for p in getattr(args, "param", None) or () if "=" not in p]
        if loose and not extra[0].startswith("-"):
            message += (
                f"; --param takes NAME=VALUE as one argument: "
                f"--param {loose[0]}={extra[0]}"
            )
        parser.command_parsers[args.command].error(message)
    if getattr(args, "scheduler", None) is not None:
        args.func = commands.cmd_train_cluster
    return args


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
