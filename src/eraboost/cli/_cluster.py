"""``eraboost train --scheduler ADDRESS``: one model fitted on a Dask cluster.

The training table is a parquet dataset (a file, or a folder of parquet
parts) read by parts on the workers (``dask.dataframe.read_parquet``): the
client reads its schema only, and the rows go from the files to the
workers, never through the client. The Dask estimators
(:mod:`eraboost.dask`) fit the model; its single-machine estimator
(``to_local()``) is saved as ``train`` saves any model, so ``predict`` and
``report`` read it unchanged.

Each part of the table is turned into arrays on its worker by one task
(:func:`_part_arrays`), from which the features, target and eras are cut:
the three get the same row chunks by construction (two projections of one
``read_parquet`` frame may be read in different partitions, dask fusing
the parts of the narrower one).

Imported by the command when it runs (numpy and the table reader at the
top); dask, distributed and the Dask estimators are imported by the
functions that use them.
"""

import os
import re
from contextlib import contextmanager
from time import perf_counter

from ._errors import CLIError, escaped
from ._tables import Table, table_format

#: Seconds to wait for the scheduler to answer, and for its first worker.
CONNECT_TIMEOUT_S = 10

#: Distinct target values a part sends for the check of class labels.
_MAX_CLASSES = 10_000

_ONE_MACHINE = re.compile(r"fit eraboost\.\w+ on one machine")


def check_cluster_options(args):
    """Refuse, before any work, what ``--scheduler`` cannot do."""
    if args.model == "recommended":
        raise CLIError(
            "--model recommended fits two models on one machine; with "
            "--scheduler use --model booster (e.g. --split-type directional "
            "--param irf_penalty=1), or leave out --scheduler"
        )
    if args.validation_data is not None:
        raise CLIError(
            "--validation-data (early stopping) is not supported with "
            "--scheduler yet; leave it out (the fit runs max_iter "
            "iterations), or leave out --scheduler"
        )
    if table_format(args.data) == "csv":
        raise CLIError(
            f"--scheduler reads the table by parts on the workers, which "
            f"needs parquet; {args.data} is CSV: write it as parquet "
            "(pyarrow.csv.read_csv then pyarrow.parquet.write_table), or "
            "leave out --scheduler"
        )


def _require_dask():
    try:
        import dask.dataframe  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        raise CLIError(
            "--scheduler needs dask and distributed: pip install 'eraboost[dask]'"
        ) from None


def _dataset_path(path):
    """A local path made absolute (the workers may run elsewhere); a URL
    (``s3://...``) as given."""
    text = os.fspath(path)
    if "://" in text:
        return text
    if not os.path.exists(text):
        raise CLIError(f"cannot read {text}: no such file or folder")
    return os.path.abspath(text)


class ParquetDataset(Table):
    """The columns of a parquet file or folder of parts, read lazily by
    ``dask.dataframe.read_parquet`` (only its schema on the client).

    Offers the column checks of :class:`Table` (``check_columns``,
    ``categorical_columns``, ``numeric_columns``); its rows are read on the
    workers, through :attr:`frame`.
    """

    def __init__(self, path):
        import dask.dataframe as dd

        self.path = str(path)
        self.format = "parquet"
        try:
            self.frame = dd.read_parquet(_dataset_path(path))
        except CLIError:
            raise
        except Exception as exc:  # pyarrow, fsspec and dask errors alike
            raise CLIError(
                f"cannot read {self.path} as a parquet dataset: "
                f"{escaped(_first_line(exc), 160)}"
            ) from None
        self.dtypes = dict(self.frame.dtypes.items())
        self.columns = [str(c) for c in self.frame.columns]

    def categorical_columns(self):
        """Names of the text and category columns."""
        return [
            c for c, t in self.dtypes.items() if getattr(t, "kind", "O") not in "biuf"
        ]

    def numeric_columns(self):
        return [
            c
            for c, t in self.dtypes.items()
            if str(t) != "category" and getattr(t, "kind", "O") in "biuf"
        ]


def _first_line(exc):
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def _feature_dtype(dtypes):
    """The type of the feature blocks: the columns' common integer type when
    all are integers (int8 stays int8), float64 otherwise (as the
    single-machine fit takes them)."""
    import numpy as np

    if all(d.kind in "biu" for d in dtypes):
        return np.result_type(*dtypes)
    return np.dtype(np.float64)


def _part_arrays(part, features, target, era, dtype, drop_missing):
    """One part of the table as (features, target, eras) arrays, on its
    worker; without the rows of a missing target when ``drop_missing``."""
    if drop_missing:
        part = part[part[target].notna()]
    return (
        part[features].to_numpy(dtype=dtype),
        part[target].to_numpy(),
        part[era].to_numpy(),
    )


def _part_summary(part, target, era, classes):
    """What the checks need from one part: its rows, its missing targets and
    eras, its eras (and classes when ``classes``)."""
    y = part[target]
    present = part[y.notna()]
    return {
        "rows": len(part),
        "missing_target": int(y.isna().sum()),
        "missing_era": int(part[era].isna().sum()),
        "eras": set(present[era].dropna().tolist()),
        # enough values to tell class labels from measurements
        "classes": set(present[target].unique()[:_MAX_CLASSES].tolist())
        if classes
        else None,
    }


def connect(address):
    """A ``distributed.Client`` of the scheduler at ``address`` (the default
    client while the command runs), with at least one worker; one line
    naming the address and the fix otherwise."""
    import asyncio  # its TimeoutError is not the builtin one before Python 3.11

    from distributed import Client

    try:
        client = Client(address, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError, asyncio.TimeoutError):
        raise CLIError(
            f"cannot reach the Dask scheduler at {escaped(address, 200)} (no "
            f"answer within {CONNECT_TIMEOUT_S} s): check the address, or "
            "start a scheduler there (dask scheduler) and workers (dask "
            f"worker {escaped(address, 200)})"
        ) from None
    except (ValueError, TypeError) as exc:
        raise CLIError(
            f"--scheduler {escaped(address, 200)!r} is not a scheduler address "
            f"({escaped(_first_line(exc), 160)}): give one such as "
            "tcp://HOST:8786"
        ) from None
    try:
        client.wait_for_workers(1, timeout=CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError, asyncio.TimeoutError):
        client.close()
        raise CLIError(
            f"the Dask scheduler at {escaped(address, 200)} has no workers "
            f"(none joined within {CONNECT_TIMEOUT_S} s): start some with "
            f"dask worker {escaped(address, 200)}"
        ) from None
    return client


def _dask_estimator(est, task):
    """The Dask estimator of ``est``'s parameters; what the Dask estimators
    refuse, in one line in the command line's words."""
    from ..dask import (
        DaskHistGradientBoostingClassifier,
        DaskHistGradientBoostingRegressor,
    )

    cls = (
        DaskHistGradientBoostingRegressor
        if task == "regression"
        else DaskHistGradientBoostingClassifier
    )
    dask_est = cls(**est.get_params())
    with _in_cluster_words():
        dask_est._refuse_unsupported()
    return dask_est


@contextmanager
def _in_cluster_words():
    """The errors of the Dask fit as one line each, with the command line's
    fix: ``leave out --scheduler`` where the Dask estimators say to fit on
    one machine, ``run the command again`` after a lost worker."""
    from distributed import KilledWorker

    from ..dask._train import WorkerLostError

    try:
        yield
    except CLIError:
        raise
    except ValueError as exc:
        text = _ONE_MACHINE.sub(
            "leave out --scheduler (a fit on one machine)", _first_line(exc)
        )
        raise CLIError(text.rstrip(".")) from exc
    except (WorkerLostError, KilledWorker) as exc:
        raise CLIError(
            f"{type(exc).__name__}: {escaped(_first_line(exc), 300)} (nothing "
            "was saved; check the workers' memory and logs, then run the "
            "command again)"
        ) from exc


def _check_summary(summary, args):
    """The checks ``train`` makes of the target and eras, from the parts'
    summaries; returns the rows kept in each part, the number of rows
    dropped, the eras and the classes (when the parts sent them)."""
    import numpy as np

    rows = np.array([s["rows"] for s in summary], dtype=np.int64)
    missing = np.array([s["missing_target"] for s in summary], dtype=np.int64)
    n_rows, n_missing = int(rows.sum()), int(missing.sum())
    if not n_rows:
        raise CLIError(
            f"{args.data} has no rows (only its columns): give a table with data"
        )
    if n_missing and not args.drop_missing_target:
        raise CLIError(
            f"target column {args.target!r} of {args.data} has {n_missing} "
            "missing values (NaN); drop those rows first, or pass "
            "--drop-missing-target"
        )
    if sum(s["missing_era"] for s in summary):
        raise CLIError(f"era column {args.era!r} of {args.data} has missing values")
    eras = set().union(*(s["eras"] for s in summary))
    classes = set().union(*(s["classes"] or () for s in summary))
    return rows - (missing if args.drop_missing_target else 0), n_missing, eras, classes


def train_on_cluster(args, note):
    """Fit the model of ``args`` on the cluster at ``args.scheduler``;
    returns the fitted single-machine estimator, the task, the features,
    the number of rows and the seconds from the first read to the fitted
    model.

    ``note`` prints a line of status.
    """
    from ._commands import _make_estimator
    from ._loading import _categorical_columns, _select_features

    check_cluster_options(args)
    _require_dask()
    table = ParquetDataset(args.data)
    table.check_columns([args.target], "target column")
    table.check_columns([args.era], "era column")
    est, task, _ = _make_estimator(args, table)
    features = _select_features(table, args)
    categorical = _categorical_columns(table, features, args)
    if categorical:
        raise CLIError(
            f"--scheduler takes numeric features only; {categorical[0]!r} is "
            "categorical (a text or category column, or named in "
            "--categorical-features): leave it out of the features, or leave "
            "out --scheduler"
        )
    dask_est = _dask_estimator(est, task)
    with connect(args.scheduler) as client:
        dask_est.set_params(client=client)
        local, n_rows, seconds = _fit(
            args, table, features, task, dask_est, client, note
        )
    return local, task, features, n_rows, seconds


def _fit(args, table, features, task, dask_est, client, note):
    import dask.array as da
    import numpy as np
    from dask import delayed

    from ._loading import _check_class_labels

    tic = perf_counter()
    frame = table.frame[[*features, args.target, args.era]]
    parts = frame.to_delayed()
    try:
        summary = client.compute(
            [
                delayed(_part_summary)(p, args.target, args.era, task != "regression")
                for p in parts
            ],
            sync=True,
        )
    except (OSError, ValueError) as exc:  # pyarrow's errors are ValueErrors
        hint = (
            "; give a path that every worker reads under the same name (a "
            "shared folder)"
            if isinstance(exc, (FileNotFoundError, PermissionError))
            else ""
        )
        raise CLIError(
            f"the workers cannot read {args.data}: "
            f"{escaped(_first_line(exc), 160)}{hint}"
        ) from None
    lengths, n_missing, eras, classes = _check_summary(summary, args)
    if n_missing:
        note(
            f"dropped {n_missing:,} of {int(sum(s['rows'] for s in summary)):,} "
            f"rows of {args.data} with a missing target {args.target!r} "
            "(--drop-missing-target)"
        )
    if len(eras) < 2:
        raise CLIError(
            f"the era column {args.era!r} of {args.data} holds "
            f"{'a single era' if eras else 'no era'}; --scheduler places whole "
            "eras on the workers and needs at least two: give --era a column "
            "of several eras, or leave out --scheduler"
        )
    if task == "classification":
        _check_class_labels(np.array(sorted(classes)), args.target, args.data)
    dtype = _feature_dtype([table.dtypes[f] for f in features])
    meta = table.frame._meta
    y_dtype = meta[args.target].to_numpy().dtype
    era_dtype = meta[args.era].to_numpy().dtype
    X, y, eras_ = [], [], []
    for part, n in zip(parts, lengths.tolist()):
        if not n:
            continue  # a part with no rows (left) makes no chunk
        arrays = delayed(_part_arrays, nout=3)(
            part, features, args.target, args.era, dtype, args.drop_missing_target
        )
        X.append(da.from_delayed(arrays[0], (n, len(features)), dtype=dtype))
        y.append(da.from_delayed(arrays[1], (n,), dtype=y_dtype))
        eras_.append(da.from_delayed(arrays[2], (n,), dtype=era_dtype))
    n_rows = int(lengths.sum())
    n_workers = len(client.scheduler_info(n_workers=-1)["workers"])
    note(
        f"{args.data}: {n_rows:,} rows x {len(features)} features ({dtype}) "
        f"and {len(eras)} eras in {len(X)} parts, read on the workers; "
        f"fitting on {n_workers} workers of {args.scheduler}..."
    )
    with _in_cluster_words():
        dask_est.fit(da.concatenate(X), da.concatenate(y), eras=da.concatenate(eras_))
    return dask_est.to_local(), n_rows, perf_counter() - tic
