"""Whole eras to workers: the inputs' checks, the era inventory, the
placement balanced by rows and the shuffle that moves each era's rows to
its worker.

The user's chunks may cut through eras and arrive in any order. Each
chunk's rows are split by the worker that owns their eras, and each worker
receives, from every chunk, the rows of its eras: the whole table crosses
the network at most once (the rows already on their worker stay put),
before the first tree (docs/distributed.md, "Placement").

Then one shard (actor) starts on each worker used, and lives as long as
the fit: a worker lost meanwhile, or an error or Ctrl-C on the client,
ends the fit with its tasks cancelled and its shards released
(docs/distributed.md, "Faults").
"""

import asyncio
import contextlib
from dataclasses import dataclass

import numpy as np

from .._eras import check_eras
from ._train import WorkerLostError

#: Seconds between two looks at the workers while the shards start.
POLL_S = 0.5


def _dask_dataframe():
    """``dask.dataframe`` when it is already imported (a dask DataFrame or
    Series can only exist then), else None."""
    import sys

    return sys.modules.get("dask.dataframe")


def _is_dask_frame(obj):
    dd = _dask_dataframe()
    return dd is not None and isinstance(obj, dd.DataFrame)


def _is_dask_series(obj):
    dd = _dask_dataframe()
    return dd is not None and isinstance(obj, dd.Series)


def _numeric_names(frame, name):
    """A dask DataFrame's column names; its non-numeric columns refused
    (one line naming them)."""
    bad = [
        c
        for c, t in frame.dtypes.items()
        if str(t) == "category" or getattr(t, "kind", "O") not in "biuf"
    ]
    if bad:
        raise ValueError(
            f"{name} has non-numeric columns {bad}; the Dask estimators "
            "take numeric features only (encode them as numbers first)."
        )
    return np.asarray(frame.columns, dtype=object)


def as_row_blocks(obj, name, n_features=None):
    """A dask collection as a dask array with known row chunks.

    A DataFrame's non-numeric columns are refused (one line naming them);
    its column names are kept for the fitted estimator.
    """
    import dask.array as da

    names = None
    if _is_dask_frame(obj) or _is_dask_series(obj):
        if _is_dask_frame(obj):
            names = _numeric_names(obj, name)
        # lowered first (dask-expr): its lengths come from the lowered
        # graph, which may fuse a narrow parquet read's parts
        if hasattr(obj, "optimize"):
            obj = obj.optimize()
        obj = obj.to_dask_array(lengths=True)
    elif not isinstance(obj, da.Array):
        raise TypeError(
            f"{name} must be a dask array, DataFrame or Series; got "
            f"{type(obj).__name__} (use eraboost's single-machine estimators "
            "for in-memory data)."
        )
    if any(np.isnan(c) for c in obj.chunks[0]):
        obj = obj.compute_chunk_sizes()
    if obj.ndim == 2 and name == "X":
        if obj.dtype.kind not in "biuf":
            raise ValueError(
                f"X has dtype {obj.dtype}; the Dask estimators take numeric "
                "features only."
            )
        obj = obj.rechunk({1: -1})
    elif obj.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got {obj.ndim} dimensions.")
    return obj, names


def _joined_part(X, *columns, keys, names):
    """One partition of X with the other inputs' partitions beside it, by
    position (one line where their rows differ)."""
    for name, column in zip(names, columns):
        if len(column) != len(X):
            raise ValueError(
                f"{name} has {len(column)} rows in a partition where X has "
                f"{len(X)}: the partitions do not match; build them from one "
                "DataFrame, or rechunk them to X's chunks."
            )
    return X.assign(**{k: c.to_numpy() for k, c in zip(keys, columns)})


def _part_column(part, columns, dtype):
    """X's columns (a slice: a 2-D array) or another input's (a position: a
    1-D array) of a joined partition."""
    return part.iloc[:, columns].to_numpy(dtype=dtype)


def _frame_row_blocks(client, X, series):
    """X (a dask DataFrame) and ``series`` (dask Series, columns of the same
    DataFrame) as dask arrays cut from the parts of one lowered graph.

    dask lowers each collection on its own, and a narrow selection of a
    parquet read may fuse parts that a wide one keeps apart: columns of one
    DataFrame converted one by one may come out in different partitions.
    Joined partition by partition, they are read together (once per part
    for the lengths, not once per input) and every array is cut from the
    same parts.
    """
    import dask.array as da
    from dask import delayed

    names = _numeric_names(X, "X")
    keys = []
    for name in series:
        key = f"__eraboost_{name}"
        while key in X.columns or key in keys:
            key += "_"
        keys.append(key)
    meta = X._meta.assign(
        **{k: s._meta.to_numpy() for k, s in zip(keys, series.values())}
    )
    joined = _dask_dataframe().map_partitions(
        _joined_part,
        X,
        *series.values(),
        keys=keys,
        names=list(series),
        align_dataframes=False,
        meta=meta,
    )
    parts = joined.to_delayed()
    lengths = client.compute([delayed(len)(p) for p in parts], sync=True)
    # a part with no rows makes no chunk (one is kept where all are empty)
    kept = [i for i, n in enumerate(lengths) if n] or [0]
    p = len(names)
    columns = [(slice(0, p), X._meta)] + [
        (p + j, s._meta) for j, s in enumerate(series.values())
    ]
    arrays = []
    for where, meta_j in columns:
        dtype = meta_j.to_numpy().dtype
        shape = (p,) if isinstance(where, slice) else ()
        arrays.append(
            da.concatenate(
                [
                    da.from_delayed(
                        delayed(_part_column, pure=True)(parts[i], where, dtype),
                        (lengths[i], *shape),
                        dtype=dtype,
                    )
                    for i in kept
                ]
            )
        )
    return arrays[0], dict(zip(series, arrays[1:])), names


def _same_frame(X, column):
    """Whether ``column`` (a dask Series) and X (a dask DataFrame) are
    columns of one DataFrame: the same sources, up to partition-wise steps
    (dask-expr's test; False where dask has none)."""
    if not _is_dask_frame(X) or column.npartitions != X.npartitions:
        return False
    try:
        from dask.dataframe.dask_expr._expr import are_co_aligned
    except ImportError:
        return False
    try:
        return bool(are_co_aligned(X.expr, column.expr))
    except AttributeError:
        return False


def row_blocks(client, X, y, eras, sample_weight):
    """The inputs of ``fit`` as dask arrays with known row chunks, and X's
    column names (None for an array).

    Where X is a dask DataFrame, the others that are columns of the same
    DataFrame (as ``read_parquet`` gives them) are cut from the same parts
    as X (:func:`_frame_row_blocks`); every other input is converted on its
    own (:func:`as_row_blocks`), and :func:`check_partitions` refuses chunks
    that differ.
    """
    others = {"y": y, "eras": eras, "sample_weight": sample_weight}
    series = {
        k: v for k, v in others.items() if _is_dask_series(v) and _same_frame(X, v)
    }
    if series:
        X, joined, names = _frame_row_blocks(client, X, series)
        others.update(joined)
    X, x_names = as_row_blocks(X, "X")
    if not series:
        names = x_names
    converted = {
        k: None if v is None else as_row_blocks(v, k)[0] for k, v in others.items()
    }
    return X, converted["y"], converted["eras"], converted["sample_weight"], names


def check_partitions(X, others):
    """Every input cut into the same row chunks as X (one line otherwise)."""
    for name, arr in others.items():
        if arr is None:
            continue
        if arr.shape[0] != X.shape[0]:
            raise ValueError(
                f"{name} has {arr.shape[0]} rows but X has {X.shape[0]}; give "
                "one value per row."
            )
        if arr.chunks[0] != X.chunks[0]:
            raise ValueError(
                f"{name} is cut into row chunks {arr.chunks[0]}, X into "
                f"{X.chunks[0]}: the partitions do not match; build them from "
                "one DataFrame, or rechunk them to X's chunks."
            )


def _block_eras(eras, y=None, sample_weight=None):
    """The distinct eras of a chunk and their counts (checked labels), and
    the chunk's bad targets and weights: non-finite targets, non-finite
    weights, negative weights, and the weights' sum."""
    codes, labels = check_eras(eras, eras.shape[0])
    bad = {"y": 0, "w_nan": 0, "w_neg": 0, "w_sum": 0.0}
    y = np.asarray(y)
    if y.dtype.kind in "fc":
        bad["y"] = int(np.count_nonzero(~np.isfinite(y)))
    if sample_weight is not None:
        w = np.asarray(sample_weight, dtype=np.float64)
        finite = np.isfinite(w)
        bad["w_nan"] = int(np.count_nonzero(~finite))
        bad["w_neg"] = int(np.count_nonzero(w[finite] < 0))
        bad["w_sum"] = float(w[finite].sum())
    return labels, np.bincount(codes, minlength=labels.shape[0]), bad


@dataclass
class Inventory:
    """The eras of the table: labels in natural order, each chunk's codes
    and counts."""

    labels: np.ndarray
    counts: np.ndarray  # rows per era, all chunks
    block_counts: list  # per chunk: (codes, counts)


def _check_values(found, weighted):
    """One line for the first bad target or weight found."""
    total = {k: sum(b[k] for *_, b in found) for k in found[0][2]}
    if total["y"]:
        raise ValueError(
            f"y holds {total['y']} NaN or infinite values; drop those rows or "
            "fill their targets before fitting."
        )
    if total["w_nan"]:
        raise ValueError(
            f"sample_weight holds {total['w_nan']} NaN or infinite values; "
            "give every row a finite weight."
        )
    if total["w_neg"]:
        raise ValueError(
            f"sample_weight holds {total['w_neg']} negative values; weights "
            "must be 0 or more."
        )
    if weighted and total["w_sum"] <= 0:
        raise ValueError("sample_weight sums to 0; give some rows a positive weight.")


def era_inventory(client, eras, y=None, sample_weight=None):
    """Each chunk's eras, gathered (a few numbers per chunk), with the
    checks of the targets and weights on the same pass: the table's bad
    values are refused before any work on the features."""
    from dask import delayed

    blocks = eras.to_delayed().ravel()
    n = len(blocks)
    by = [None] * n if y is None else y.to_delayed().ravel()
    bw = [None] * n if sample_weight is None else sample_weight.to_delayed().ravel()
    found = client.compute(
        [delayed(_block_eras)(b, yb, wb) for b, yb, wb in zip(blocks, by, bw)],
        sync=True,
    )
    _check_values(found, sample_weight is not None)
    union = np.concatenate([labels for labels, _, _ in found])
    _, labels = check_eras(np.unique(union), np.unique(union).shape[0])
    code_of = {label: i for i, label in enumerate(labels.tolist())}
    counts = np.zeros(labels.shape[0], dtype=np.int64)
    block_counts = []
    for labels_b, counts_b, _ in found:
        codes_b = np.array([code_of[v] for v in labels_b.tolist()], dtype=np.int64)
        counts[codes_b] += counts_b
        block_counts.append((codes_b, counts_b))
    return Inventory(labels, counts, block_counts)


def _group_block(eras, labels, group_of, group_labels):
    """A chunk's eras replaced by their groups' labels."""
    code_of = {label: i for i, label in enumerate(labels.tolist())}
    codes_b, local = check_eras(eras, eras.shape[0])
    codes = np.array([code_of[v] for v in local.tolist()], dtype=np.int64)[codes_b]
    return group_labels[group_of[codes]]


def group_inventory(eras, inventory, era_groups):
    """The eras replaced by their groups (``era_groups``, grouped as the
    single machine's fit groups them, docs/criteria.md "Era groups").

    Returns the grouped eras (a dask array of the groups' labels, in the
    same chunks), their inventory, and the group code of each of the
    inventory's eras.
    """
    from .._eras import EncodedEras, group_eras

    labels = inventory.labels
    grouped = group_eras(
        EncodedEras(np.arange(labels.shape[0], dtype=np.int32), labels), era_groups
    )
    group_of = np.asarray(grouped.codes, dtype=np.int64)
    n_groups = grouped.labels.shape[0]
    counts = np.bincount(group_of, weights=inventory.counts, minlength=n_groups)
    block_counts = []
    for codes_b, counts_b in inventory.block_counts:
        per_group = np.bincount(group_of[codes_b], weights=counts_b, minlength=n_groups)
        used = np.flatnonzero(per_group)
        block_counts.append((used, per_group[used].astype(np.int64)))
    eras = eras.map_blocks(
        _group_block,
        labels=labels,
        group_of=group_of,
        group_labels=grouped.labels,
        dtype=grouped.labels.dtype,
    )
    return (
        eras,
        Inventory(grouped.labels, counts.astype(np.int64), block_counts),
        group_of,
    )


def place_eras(counts, n_workers):
    """The worker of each era: the largest eras first, each to the worker
    with the fewest rows so far (the lowest index on ties)."""
    owner = np.empty(counts.shape[0], dtype=np.int64)
    load = np.zeros(n_workers, dtype=np.int64)
    for e in np.argsort(-counts, kind="stable"):
        w = int(np.argmin(load))
        owner[e] = w
        load[w] += counts[e]
    return owner


def _select(X, y, sw, eras, start, labels, owner, worker):
    """The rows of a chunk whose eras belong to ``worker``: global row
    numbers, features, target, weights and era codes."""
    code_of = {label: i for i, label in enumerate(labels.tolist())}
    codes_b, local = check_eras(eras, eras.shape[0])
    codes = np.array([code_of[v] for v in local.tolist()], dtype=np.int64)[codes_b]
    mine = owner[codes] == worker
    rows = start + np.flatnonzero(mine)
    if rows.shape[0] == mine.shape[0]:
        # a chunk of this worker's eras alone: its arrays as they are (no
        # copy of the features where the chunk already is on its worker)
        mine = slice(None)
    return (
        rows,
        np.asarray(X)[mine],
        np.asarray(y)[mine],
        None if sw is None else np.asarray(sw, dtype=np.float64)[mine],
        codes[mine],
    )


def shuffle_to_workers(client, X, y, sw, eras, inventory, owner, workers):
    """Per worker, futures of its pieces of every chunk that holds its
    eras (the pieces are computed on the chunk's worker, then fetched by
    the shard that owns them)."""
    from dask import delayed

    starts = np.concatenate([[0], np.cumsum(X.chunks[0])[:-1]])
    bx = X.to_delayed().ravel()
    by = y.to_delayed().ravel()
    be = eras.to_delayed().ravel()
    bw = [None] * len(bx) if sw is None else list(sw.to_delayed().ravel())
    labels = inventory.labels
    tasks, where = [], []
    for i, (codes_b, _) in enumerate(inventory.block_counts):
        for w in np.unique(owner[codes_b]):
            tasks.append(
                delayed(_select, pure=True)(
                    bx[i], by[i], bw[i], be[i], int(starts[i]), labels, owner, int(w)
                )
            )
            where.append(int(w))
    futures = client.compute(tasks)
    pieces = [[] for _ in workers]
    for w, fut in zip(where, futures):
        pieces[w].append(fut)
    return pieces


def worker_addresses(client):
    """The addresses of the workers the scheduler knows now, sorted."""
    # n_workers=-1: all of them (older releases ignore it and list all)
    return sorted(client.scheduler_info(n_workers=-1)["workers"])


def _lost(workers, exc=None):
    """The fit's one line for workers lost while its shards started."""
    what = f"{', '.join(workers)} left while the shards started" if workers else ""
    if exc is not None:
        detail = " ".join(str(exc).split())
        what += f"{'; ' if what else ''}{type(exc).__name__}: {detail}"
    return WorkerLostError(
        f"a worker holding eras of this fit was lost ({what}); the fit "
        "stopped. The client, its data and the other workers are unaffected: "
        "fit again."
    )


def await_shards(client, futures, workers):
    """The shards (actors) of ``futures``, the i-th started on
    ``workers[i]``, once they have all started.

    A shard may only live on its worker (its eras were placed there), so a
    worker lost before its shard has started would leave the shard
    waiting for ever: the workers are looked at while the shards start,
    and a lost one ends the fit with one line.
    """
    from distributed import wait
    from distributed.scheduler import KilledWorker

    used = list(workers[: len(futures)])
    while True:
        with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
            wait(futures, timeout=POLL_S)
        gone = sorted(set(used) - set(worker_addresses(client)))
        if gone:
            raise _lost(gone)
        if all(f.done() for f in futures):
            break
    try:
        return [f.result() for f in futures]
    except KilledWorker as exc:
        # the pieces' tasks died with their workers too many times
        raise _lost(sorted(set(used) - set(worker_addresses(client))), exc) from None
    except Exception as exc:
        gone = sorted(set(used) - set(worker_addresses(client)))
        if gone:
            raise _lost(gone, exc) from None
        raise


def _new_futures(client, before):
    from distributed import Future

    return [Future(key, client) for key in list(client.futures) if key not in before]


@contextlib.contextmanager
def released_on_error(client):
    """Cancel the futures ``client`` made inside the block when the block
    raises (an error, a lost worker, Ctrl-C's KeyboardInterrupt): the
    fit's tasks leave the scheduler and its shards and pieces leave the
    workers. The futures held before the block (the user's data) are left
    alone."""
    if client is None:
        yield
        return
    before = set(client.futures)
    try:
        yield
    except BaseException:
        futures = _new_futures(client, before)
        if futures:
            client.cancel(futures)
        raise


@contextlib.contextmanager
def direct_to_workers(client):
    """Inside the block, ``client`` talks to the workers directly (its
    shards' calls, its gathers) unless it was made with
    ``direct_to_workers=False``: through the scheduler, each call's bytes
    cross the network twice each way, with two more hops of latency."""
    if client is None or client.direct_to_workers is not None:
        yield
        return
    client.direct_to_workers = True
    try:
        yield
    finally:
        client.direct_to_workers = None


def cancels_on_error(fit):
    """``fit`` (a Dask estimator's) inside :func:`released_on_error` of
    the estimator's client (or the default client, if there is one), its
    calls to the workers direct (:func:`direct_to_workers`)."""
    import functools

    @functools.wraps(fit)
    def wrapper(self, *args, **kwargs):
        from distributed import default_client

        client = self.client
        if client is None:
            with contextlib.suppress(ValueError):  # no client: fit says so
                client = default_client()
        with released_on_error(client), direct_to_workers(client):
            return fit(self, *args, **kwargs)

    return wrapper
