"""Where a Dask fit's time per node goes (issue 61): one eraboost Dask fit
on a ``LocalCluster``, its driver's calls timed by kind.

``dask_fit.py``'s data and cluster (``--rows`` x ``--features`` int8
values 0..4 in ``--eras`` eras, ``--workers`` worker processes of
``--threads-per-worker`` threads), one fit of ``--criterion``. Printed:

* the driver's wall time in each actor call (``root``, ``split``,
  ``update_gradients``, ``add_leaves``), in the reduction (``combine``) and
  in the split choice (``best_split``), per call;
* in each worker (timers wrapped around its module's functions with
  ``client.run``, and ``EraShard.profile`` where the shard has one): the
  seconds of its histograms, its partial sums and its partition, per
  node scanned;
* the actor round trip left: a node call's wall time less the slowest
  worker's compute for it (Dask's messages, the pickling of arguments and
  results, the event loops' latency), beside the floor: an actor per
  worker that only sends back as many bytes as a node call's share.

Usage::

    python benchmarks/peers/dask_profile.py --rows 100000 --features 50 \\
        --eras 64 --trees 20 --workers 2 --criterion era
"""

import argparse
import contextlib
import sys
import time
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "engine"))
sys.path.insert(0, str(HERE))

WRAPPED = ("era_histograms", "worker_partials", "era_partials", "split_indices")


def wrap_worker_functions():
    """In a worker: time the shard module's histogram, partial-sum and
    partition functions (those it has)."""
    from eraboost.dask import _worker

    if hasattr(_worker, "_timed"):
        return
    _worker._timed = defaultdict(float)
    for name in WRAPPED:
        fn = getattr(_worker, name, None)
        if fn is None:
            continue

        def timed(*a, _fn=fn, _name=name, **k):
            tic = time.perf_counter()
            try:
                return _fn(*a, **k)
            finally:
                _worker._timed[_name] += time.perf_counter() - tic

        setattr(_worker, name, timed)


def worker_timers():
    from eraboost.dask import _worker

    return dict(getattr(_worker, "_timed", {}))


class Echo:
    """An actor that returns what it is sent: the round trip's floor."""

    def call(self, payload):
        return payload


def echo_ms(client, n_calls, nbytes):
    """Milliseconds of a call to one ``Echo`` actor per worker, all at once
    as the driver calls its shards, each sending back ``nbytes``."""
    import numpy as np

    workers = sorted(client.scheduler_info(n_workers=-1)["workers"])
    echoes = [client.submit(Echo, actor=True, workers=[w]).result() for w in workers]
    payload = {"sums": np.zeros(max(1, nbytes // 8))}
    tic = time.perf_counter()
    for _ in range(n_calls):
        for f in [e.call(payload) for e in echoes]:
            f.result()
    return 1e3 * (time.perf_counter() - tic) / n_calls


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--features", type=int, default=50)
    ap.add_argument("--eras", type=int, default=64)
    ap.add_argument("--trees", type=int, default=20)
    ap.add_argument("--leaves", type=int, default=31)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--threads-per-worker", type=int, default=1)
    ap.add_argument("--criterion", default="era")
    args = ap.parse_args(argv)

    import logging
    import warnings

    warnings.simplefilter("ignore")
    logging.getLogger("distributed").setLevel(logging.ERROR)
    import dask.array as da
    from _data import make_data
    from dask_fit import chunk_rows, omp_env
    from distributed import Client, LocalCluster

    from eraboost.dask import DaskHistGradientBoostingRegressor, _train, estimators

    spent, calls = defaultdict(float), defaultdict(int)

    def timed(name, fn):
        def inner(*a, **k):
            tic = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[name] += time.perf_counter() - tic
                calls[name] += 1

        return inner

    call_each = _train.Cluster.call_each

    def call_each_timed(self, method, a):
        return timed(method, call_each)(self, method, a)

    _train.Cluster.call_each = call_each_timed
    _train.best_split = timed("best_split", _train.best_split)
    _train.combine = timed("combine", _train.combine)
    shard_profiles = []
    boost = estimators.boost

    def boost_then_profile(cluster, *a, **k):
        out = boost(cluster, *a, **k)
        # (a shard without profile(): its module's timers only)
        with contextlib.suppress(Exception):
            shard_profiles.extend(call_each(cluster, "profile", [()] * 1000))
        return out

    estimators.boost = boost_then_profile

    n, w, t = args.rows, args.workers, args.threads_per_worker
    X, y, eras = make_data("int5", n, args.features, args.eras)
    rows = chunk_rows(n, args.eras, w * 4)
    cluster = LocalCluster(
        n_workers=w,
        threads_per_worker=t,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        env=omp_env(t, None),
    )
    with cluster, Client(cluster) as client:
        client.run(wrap_worker_functions)
        dX = da.from_array(X, chunks=(rows, -1))
        dy = da.from_array(y, chunks=rows)
        de = da.from_array(eras, chunks=rows)
        est = DaskHistGradientBoostingRegressor(
            client=client,
            split_type=args.criterion,
            max_iter=args.trees,
            max_leaf_nodes=args.leaves,
            early_stopping=False,
            random_state=0,
        )
        tic = time.perf_counter()
        est.fit(dX, dy, eras=de)
        fit_s = time.perf_counter() - tic
        timers = client.run(worker_timers)
        sent = est.reduced_bytes_per_tree_.mean()
        share = int(sent / max(calls["root"] + calls["split"], 1) * args.trees / w)
        floor = echo_ms(client, 200, share)
    nodes = calls["best_split"]
    print(
        f"{n:,} x {args.features} int8, {args.eras} eras, {args.trees} trees of "
        f"{args.leaves} leaves, {args.criterion}; {w} workers x {t} threads; "
        f"fit {fit_s:.2f} s; {nodes} nodes scanned\n"
    )
    print("| driver | calls | s | ms per call |\n|---|---:|---:|---:|")
    for name in sorted(spent, key=spent.get, reverse=True):
        ms = 1e3 * spent[name] / calls[name]
        print(f"| {name} | {calls[name]} | {spent[name]:.2f} | {ms:.1f} |")
    print("\n| worker | s | ms per node scanned |\n|---|---:|---:|")
    compute = []
    for i, (addr, tm) in enumerate(sorted(timers.items())):
        prof = shard_profiles[i] if i < len(shard_profiles) else {}
        parts = {
            "histograms": prof.get("histograms", tm.get("era_histograms")),
            "partials": prof.get("partials", tm.get("worker_partials", 0.0)),
            "partition": prof.get("partition", tm.get("split_indices")),
        }
        parts = {k: v for k, v in parts.items() if v is not None}
        compute.append(sum(parts.values()))
        for name, s in parts.items():
            print(f"| {addr} {name} | {s:.2f} | {1e3 * s / max(nodes, 1):.2f} |")
    node_calls = spent["root"] + spent["split"]
    n_calls = calls["root"] + calls["split"]
    if n_calls:
        left = node_calls - max(compute, default=0.0)
        print(
            f"\nnode calls (root + split): {n_calls}, {1e3 * node_calls / n_calls:.1f}"
            f" ms each; the slowest worker's compute {max(compute, default=0):.2f} s"
            f" of {node_calls:.2f} s; the round trip beyond it "
            f"{1e3 * left / n_calls:.1f} ms a call; an actor that only echoes "
            f"{share:,} bytes (a node call's share): {floor:.1f} ms a call"
        )


if __name__ == "__main__":
    main()
