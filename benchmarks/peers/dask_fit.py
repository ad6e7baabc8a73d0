"""One model on a Dask cluster: eraboost's Dask estimator against
``lightgbm.dask.DaskLGBMRegressor`` and ``xgboost.dask.DaskXGBRegressor`` on
the same ``LocalCluster`` and data, beside the single-process eraboost fit
on the same cores (issue 61).

Settings: eraboost ``original``, ``era`` (``boltzmann_alpha=0``) and
``directional`` on each ``--workers`` count of worker processes of
``--threads-per-worker`` threads (default: the CPUs over the workers), the
two peers likewise, and the single-process eraboost fits with the workers'
threads together.

Data: ``--rows`` x ``--features`` int8 values 0..4 in ``--eras`` eras of
consecutive rows, with a target whose signal changes by era
(``benchmarks/engine/_data.py``, ``compare.py``'s), cut into
``--chunks-per-worker`` chunks per worker whose edges fall inside eras,
scattered to the workers in turn before the clock starts: the same dask
arrays for every library (int8 features, float64 target, int32 eras).

Each fit runs in a fresh Python process that starts its own
``LocalCluster`` of worker processes, draws the data and scatters it: memory
peaks, caches and sockets are that fit's alone. The figures of a fit:

* **fit (s)**: the wall time of ``fit`` alone (placement, binning and
  training for eraboost; the peers' own setup for theirs).
* **traffic per tree**: the bytes sent on the loopback interface during the
  fit (``/proc/net/dev``, ``lo`` transmit; every peer counted the same way,
  LightGBM's own sockets included) over the trees fitted, setup included.
  Each Dask fit runs in a network namespace of its own (``unshare --net
  --map-root-user``, ``lo`` brought up with ``ip``), whose ``lo`` carries
  that fit's traffic alone; where none can be made (or with
  ``--shared-loopback``) the machine's ``lo`` counts everyone's, and the
  table says so. For eraboost, also the same bytes from its first tree
  on over the trees (**trees only**: the placement, the binning and the
  shards' start left out, and given whole as **setup**), and the bytes
  its driver received per tree (``reduced_bytes_per_tree_``).
* **memory**: each worker process's peak RSS during the fit (``VmHWM``,
  reset just before the fit through ``/proc/self/clear_refs``; where that
  is refused, ``ru_maxrss`` since the worker started, and the table says
  so), read by ``client.run`` in the worker process itself (the nannies
  live in the benchmark's process, the workers are their children), minus
  the bytes of the chunks scattered to it; the largest worker's figure.
  Single-process fits: peak RSS minus the RSS with the data drawn. A
  worker's peak includes its process's own baseline: a bare Dask worker
  holds about 65 MB, and one that has imported ``eraboost.dask`` (with
  scikit-learn, SciPy, pandas and pyarrow, which scikit-learn imports)
  about 245 MB, before any data.
* **memory_limit** (``--memory-limit``, e.g. ``800MB``): each worker's
  ``memory_limit`` (``LocalCluster``'s; Dask spills its data to disk above
  70% of it, pauses the worker above 80% and restarts it above 95%). A
  second table lists, per worker, its peak beside its limit, the bytes it
  spilled to disk, and whether it paused or was restarted (a new pid).

Every library's OpenMP follows ``OMP_NUM_THREADS`` (per worker, or the
single process's) and ``--wait-policy``. On a machine busier than its cores
OpenMP's default spinning can slow a multi-threaded single process many
times over while one-thread workers do not spin: compare with
``--wait-policy passive`` there too.

Ratios are medians over ``--repeats`` of the ratio within one repeat (the
settings take turns within a repeat); times and bytes are medians.

Usage::

    # issue 61's size: 1M x 100, 256 eras, 100 trees of 31 leaves
    python benchmarks/peers/dask_fit.py --workers 2,4 --repeats 3

    # a few minutes on a small machine
    python benchmarks/peers/dask_fit.py --rows 100000 --features 50 \\
        --eras 64 --trees 20 --workers 2 --repeats 1

    # a table larger than any one worker's memory_limit: 8M x 100 int8
    # (896 MB, 854 MiB, with the target and eras) on 8 workers of 800 MB
    # (763 MiB) each
    python benchmarks/peers/dask_fit.py --rows 8000000 --trees 5 \\
        --workers 8 --repeats 1 --only eraboost --criteria original \\
        --memory-limit 800MB

On the shared 2-core AMD machine (noisy), in three runs of that last
command, the table was 1.12x a worker's limit and every worker's peak 508
to 580 MiB of its 763 MiB (0.67x to 0.76x); each spilled 0 to 211 MiB of
its data to disk, none paused or was restarted (fits of 23 to 42 s).
Before the shards kept their pieces unconcatenated, the same command's
worker peaks were 577 to 641 MiB, and one worker paused.

Where ``eraboost.dask`` (or a peer) cannot be imported, the other fits
still run and the table says ``eraboost.dask unavailable: <why>``.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ENGINE = HERE.parent / "engine"
CRITERIA = ("original", "era", "directional")
PEERS = {"lightgbm": "lightgbm.dask", "xgboost": "xgboost.dask"}


def lo_sent():
    """Bytes sent on the loopback interface so far (``/proc/net/dev``)."""
    with open("/proc/net/dev") as f:
        for line in f:
            name, _, counters = line.partition(":")
            if name.strip() == "lo":
                return int(counters.split()[8])
    raise OSError("no lo interface in /proc/net/dev")


def _status_mb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def worker_memory_start():
    """In a worker: its RSS now, and its high-water mark reset to it."""
    import resource

    rss = _status_mb("VmRSS")
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        reset = True
    except OSError:
        reset = False
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"pid": os.getpid(), "rss_mb": rss, "reset": reset, "maxrss_mb": maxrss}


def worker_memory_peak():
    """In a worker: its high-water mark and ``ru_maxrss``."""
    import resource

    return {
        "pid": os.getpid(),
        "hwm_mb": _status_mb("VmHWM"),
        "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def worker_limits(dask_worker):
    """In a worker: its ``memory_limit``, its pid, the bytes it has
    written to disk (its data spilled, since it started) and whether its
    memory manager paused it (its log says so)."""
    metrics = getattr(dask_worker.data, "cumulative_metrics", {})
    spilled = metrics.get(("disk-write", "bytes"), 0)
    paused = any("Pausing worker" in msg for _, msg in dask_worker.get_logs())
    return {
        "pid": os.getpid(),
        "limit_mb": (dask_worker.memory_manager.memory_limit or 0) / 2**20,
        "spilled_mb": spilled / 2**20,
        "paused": paused or str(dask_worker.status) == "Status.paused",
    }


def trees_started(lib):
    """For eraboost, a list that receives the loopback's bytes sent when
    the first tree starts (its boosting loop entered: the placement, the
    binning and the shards' start are behind); None for the peers."""
    if lib != "eraboost":
        return None
    from eraboost.dask import estimators

    mark, boost = [], estimators.boost

    def marked(*args, **kwargs):
        mark.append(lo_sent())
        return boost(*args, **kwargs)

    estimators.boost = marked
    return mark


def chunk_rows(n, n_eras, n_chunks):
    """Rows per chunk: about ``n / n_chunks``, moved off any multiple of an
    era's size so that the chunks' edges fall inside eras."""
    rows = max(1, -(-n // n_chunks))
    era = n / n_eras
    while n_eras > 1 and rows > 1 and abs(rows / era - round(rows / era)) < 0.1:
        rows += max(1, int(era // 3))
    return rows


def omp_env(threads, wait_policy):
    """The OpenMP settings of a fit's processes."""
    env = {"OMP_NUM_THREADS": str(threads)}
    if wait_policy:
        env["OMP_WAIT_POLICY"] = wait_policy
    return env


def make_estimator(spec, client):
    lib, t = spec["lib"], spec["threads_per_worker"]
    trees, leaves, lr = spec["trees"], spec["leaves"], spec["lr"]
    if lib == "eraboost":
        from eraboost.dask import DaskHistGradientBoostingRegressor

        return DaskHistGradientBoostingRegressor(
            client=client,
            split_type=spec["criterion"],
            boltzmann_alpha=0.0,
            max_iter=trees,
            max_leaf_nodes=leaves,
            learning_rate=lr,
            early_stopping=False,
            random_state=0,
        )
    if lib == "lightgbm":
        from lightgbm.dask import DaskLGBMRegressor

        return DaskLGBMRegressor(
            client=client,
            n_estimators=trees,
            num_leaves=leaves,
            learning_rate=lr,
            max_bin=255,
            min_child_samples=20,
            min_child_weight=1e-3,
            reg_lambda=0.0,
            force_col_wise=True,
            n_jobs=t,
            verbose=-1,
            random_state=0,
        )
    from xgboost.dask import DaskXGBRegressor

    est = DaskXGBRegressor(
        n_estimators=trees,
        learning_rate=lr,
        tree_method="hist",
        grow_policy="lossguide",
        max_leaves=leaves,
        max_depth=0,
        max_bin=255,
        min_child_weight=1e-3,
        reg_lambda=0.0,
        n_jobs=t,
        random_state=0,
    )
    est.client = client
    return est


def child(spec):
    """One Dask fit in this fresh process: its own cluster, the data
    scattered, the fit timed; returns the fit's record."""
    import warnings

    warnings.simplefilter("ignore")
    import logging

    logging.getLogger("distributed").setLevel(logging.ERROR)
    import time

    import dask.array as da
    import numpy as np
    from distributed import Client, LocalCluster

    sys.path.insert(0, str(ENGINE))
    from _data import make_data

    w, t = spec["workers"], spec["threads_per_worker"]
    n, n_eras = spec["rows"], spec["eras"]
    X, y, eras = make_data("int5", n, spec["features"], n_eras)
    rows = chunk_rows(n, n_eras, w * spec["chunks_per_worker"])
    limit = {}
    if spec.get("memory_limit"):
        limit["memory_limit"] = spec["memory_limit"]
    cluster = LocalCluster(
        n_workers=w,
        threads_per_worker=t,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        env=omp_env(t, spec.get("wait_policy")),
        **limit,
    )
    with cluster, Client(cluster) as client:
        workers = sorted(client.scheduler_info()["workers"])
        share = dict.fromkeys(workers, 0)
        parts = {"X": [], "y": [], "eras": []}
        for i, start in enumerate(range(0, n, rows)):
            to = workers[i % w]
            for name, a in (("X", X), ("y", y), ("eras", eras)):
                block = np.ascontiguousarray(a[start : start + rows])
                share[to] += block.nbytes
                f = client.scatter(block, workers=[to])
                parts[name].append(da.from_delayed(f, block.shape, block.dtype))
        dX, dy, de = (da.concatenate(parts[k]) for k in ("X", "y", "eras"))
        del X, y, eras
        est = make_estimator(spec, client)
        kwargs = {"eras": de} if spec["lib"] == "eraboost" else {}
        at_trees = trees_started(spec["lib"])
        before = client.run(worker_memory_start)
        sent = lo_sent()
        start = time.perf_counter()
        est.fit(dX, dy, **kwargs)
        fit_s = time.perf_counter() - start
        setup = at_trees[0] - sent if at_trees else None
        sent = lo_sent() - sent
        after = client.run(worker_memory_peak)
        limits = client.run(worker_limits)
        alive = sorted(client.scheduler_info(n_workers=-1)["workers"])
    if spec["lib"] == "eraboost":
        trees = int(est.n_iter_)
        reduced = getattr(est, "reduced_bytes_per_tree_", None)
        reduced = None if reduced is None else float(np.mean(reduced))
    elif spec["lib"] == "lightgbm":
        trees, reduced = int(est.booster_.num_trees()), None
    else:
        trees, reduced = int(est.get_booster().num_boosted_rounds()), None
    mem = []
    for addr in workers:
        reset = before[addr]["reset"]
        peak = after[addr]["hwm_mb"] if reset else after[addr]["maxrss_mb"]
        data_mb = share[addr] / 2**20
        mem.append(
            {
                "peak_mb": peak,
                "data_mb": data_mb,
                "above_data_mb": peak - data_mb,
                "added_mb": peak - before[addr]["rss_mb"],
                "hwm_reset": reset,
                "limit_mb": limits[addr]["limit_mb"] if addr in limits else None,
                "spilled_mb": limits[addr]["spilled_mb"] if addr in limits else None,
                "paused": limits[addr]["paused"] if addr in limits else None,
                # a worker restarted by its nanny (over its memory_limit)
                # has a new pid, or is gone
                "restarted": addr not in alive
                or limits[addr]["pid"] != before[addr]["pid"],
            }
        )
    return {
        "fit_s": fit_s,
        "trees": trees,
        "lo_sent_per_tree": sent / max(trees, 1),
        "lo_setup": setup,
        "lo_trees_per_tree": None if setup is None else (sent - setup) / max(trees, 1),
        "reduced_per_tree": reduced,
        "workers_memory": mem,
        "chunk_rows": rows,
        "data_mb": sum(share.values()) / 2**20,
    }


# a private network namespace: its loopback carries the fit's traffic alone
NAMESPACE = ["unshare", "--net", "--map-root-user", "sh", "-c"]
LO_UP = 'ip link set lo up && exec "$@"'


def private_loopback():
    """Whether a fit can run in a network namespace of its own (``unshare``
    and ``ip``, unprivileged user namespaces allowed)."""
    try:
        proc = subprocess.run(
            [*NAMESPACE, LO_UP, "sh", "true"], capture_output=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def run_child(spec, timeout, private):
    cmd = [sys.executable, str(HERE / "dask_fit.py"), "--child", json.dumps(spec)]
    if private:
        cmd = [*NAMESPACE, LO_UP, "sh", *cmd]
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
        return {"error": lines[-1] if lines else f"exit status {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run_single(spec):
    """The single-process eraboost fit of ``spec``'s criterion, with the
    workers' threads together (``compare.py``'s child, a fresh process, no
    timeout)."""
    sys.path.insert(0, str(HERE))
    import compare

    names = {"n": "rows", "p": "features", "n_eras": "eras", "iters": "trees"}
    one = {k: spec[v] for k, v in names.items()}
    one.update({k: spec.get(k) for k in ("leaves", "lr", "threads", "wait_policy")})
    one.update(lib="eraboost", kind="int5", extra={"split_type": spec["criterion"]})
    rec = compare.run_one(one, sys.executable)
    if "error" in rec:
        return {"error": " ".join(rec["error"]) or "failed"}
    return {
        "fit_s": rec["fit_s"],
        "above_data_mb": rec["peak_rss_mb"] - rec["data_rss_mb"],
    }


def unavailable(module):
    """None if ``module`` imports, else the one line of why not."""
    try:
        __import__(module)
    except Exception as exc:  # the reason is the row
        lines = str(exc).strip().splitlines()
        return f"{type(exc).__name__}: {lines[0] if lines else ''}"
    return None


def settings(args):
    """(label, spec) of every fit of one repeat, in the order they run."""
    out = []
    n_cpu = os.cpu_count() or 1
    base = {
        "rows": args.rows,
        "features": args.features,
        "eras": args.eras,
        "trees": args.trees,
        "leaves": args.leaves,
        "lr": args.learning_rate,
        "chunks_per_worker": args.chunks_per_worker,
        "wait_policy": args.wait_policy,
        "memory_limit": args.memory_limit,
    }
    singles = set()
    for w in args.workers:
        t = args.threads_per_worker or max(1, n_cpu // w)
        cl = dict(base, workers=w, threads_per_worker=t)
        for c in args.criteria:
            out.append((f"eraboost {c}", dict(cl, lib="eraboost", criterion=c)))
        for peer in PEERS:
            out.append((peer, dict(cl, lib=peer)))
        singles.add(w * t)
    for threads in sorted(singles):
        for c in args.criteria:
            spec = dict(base, lib="single", criterion=c, threads=threads)
            out.append((f"eraboost {c}, one process", spec))
    return out


def group_key(spec):
    if spec["lib"] == "single":
        return ("single", spec["threads"])
    return (spec["workers"], spec["threads_per_worker"])


def ratio(num, den, field):
    """Median over repeats of num[field] / den[field], the same repeat."""
    by_rep = {r["repeat"]: r[field] for r in den if r.get(field)}
    vals = [
        r[field] / by_rep[r["repeat"]]
        for r in num
        if r.get(field) is not None and r["repeat"] in by_rep
    ]
    return statistics.median(vals) if vals else None


def faster_peer_ratio(num, lgb, xgb):
    """Median over repeats of the fit time over the faster peer's."""
    peers = {}
    for r in (lgb or []) + (xgb or []):
        if "fit_s" in r:
            peers[r["repeat"]] = min(peers.get(r["repeat"], r["fit_s"]), r["fit_s"])
    return ratio(num, [{"repeat": k, "fit_s": v} for k, v in peers.items()], "fit_s")


def med(recs, f):
    vals = [f(r) for r in recs]
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None


def fmt(x, suffix="x", digits=2):
    return "" if x is None else f"{x:.{digits}f}{suffix}"


def table(records, reasons):
    """The markdown tables of ``records`` (one per fit); ``reasons``: label
    prefix -> why those fits could not run."""
    by = {}
    for r in records:
        by.setdefault((r["label"], r["group"]), []).append(r)
    lines = [
        "| fit | workers x threads | fit (s) | vs one process | vs faster peer "
        "| vs lightgbm | lo bytes/tree (KB) | vs original | trees only (KB) "
        "| vs original | setup (MB) | reductions/tree (KB) "
        "| worker peak above data (MB) | fit added (MB) | runs |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    targets = []
    groups = sorted({g for _, g in by}, key=lambda g: (g[0] == "single", g))
    for g in groups:
        dask_group = g[0] != "single"
        labels = [lab for lab, gg in by if gg == g]
        for label in labels:
            rs = by[label, g]
            ok = [r for r in rs if "fit_s" in r]
            where = f"{g[0]} x {g[1]}" if dask_group else f"1 x {g[1]}"
            if not ok:
                why = rs[0].get("error", "")
                lines.append(f"| {label} | {where} | FAILED: {why} |" + " |" * 12)
                continue
            fit = med(ok, lambda r: r["fit_s"])
            cells = {"single": None, "peer": None, "lgb": None}
            traffic = reduced = vs_orig = above = added = None
            in_trees = vs_orig_trees = setup = None
            if dask_group:
                traffic = med(ok, lambda r: r["lo_sent_per_tree"])
                in_trees = med(ok, lambda r: r.get("lo_trees_per_tree"))
                setup = med(ok, lambda r: r.get("lo_setup"))
                reduced = med(ok, lambda r: r.get("reduced_per_tree"))
                above = med(
                    ok, lambda r: max(m["above_data_mb"] for m in r["workers_memory"])
                )
                added = med(
                    ok, lambda r: max(m["added_mb"] for m in r["workers_memory"])
                )
                lgb, xgb = by.get(("lightgbm", g)), by.get(("xgboost", g))
                if label.startswith("eraboost"):
                    c = label.split()[1]
                    single = by.get(
                        (f"eraboost {c}, one process", ("single", g[0] * g[1]))
                    )
                    cells["single"] = ratio(ok, single or [], "fit_s")
                    cells["peer"] = faster_peer_ratio(ok, lgb, xgb)
                    cells["lgb"] = ratio(ok, lgb or [], "fit_s")
                    orig = by.get(("eraboost original", g))
                    if orig:
                        vs_orig = ratio(ok, orig, "lo_sent_per_tree")
                        vs_orig_trees = ratio(ok, orig, "lo_trees_per_tree")
                    traffic_ratios = (vs_orig, vs_orig_trees)
                    targets += check_targets(label, where, cells, traffic_ratios, above)
                elif label == "xgboost" and lgb:
                    cells["lgb"] = ratio(ok, lgb, "fit_s")
            else:
                above = med(ok, lambda r: r["above_data_mb"])
            lines.append(
                f"| {label} | {where} | {fit:.2f} | {fmt(cells['single'])} | "
                f"{fmt(cells['peer'])} | {fmt(cells['lgb'])} | "
                f"{fmt(traffic and traffic / 1024, '', 1)} | {fmt(vs_orig)} | "
                f"{fmt(in_trees and in_trees / 1024, '', 1)} | {fmt(vs_orig_trees)} | "
                f"{fmt(setup and setup / 2**20, '', 1)} | "
                f"{fmt(reduced and reduced / 1024, '', 1)} | {fmt(above, '', 0)} | "
                f"{fmt(added, '', 0)} | {len(ok)} |"
            )
    for prefix, why in reasons.items():
        lines.append(f"| {prefix} unavailable: {why} |" + " |" * 14)
    if targets:
        lines += ["", "| target (issue 61) | measured | met |", "|---|---:|:---:|"]
        for name, value, met in targets:
            lines.append(f"| {name} | {value:.3f} | {'yes' if met else 'NO'} |")
    return "\n".join(lines)


def limit_table(records):
    """Each worker's peak beside its ``memory_limit``, per Dask fit: the
    table's bytes, the data spilled, whether a worker paused or was
    restarted."""
    lines = [
        "| fit | workers x threads | repeat | table (MB) | worker | memory_limit (MB) "
        "| peak (MB) | peak / limit | its chunks (MB) | spilled (MB) | paused "
        "| restarted |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|:---:|:---:|",
    ]
    for r in records:
        if "workers_memory" not in r:
            continue
        where = f"{r['group'][0]} x {r['group'][1]}"
        for i, m in enumerate(r["workers_memory"]):
            lim = m.get("limit_mb") or 0
            lines.append(
                f"| {r['label']} | {where} | {r['repeat'] + 1} | "
                f"{r['data_mb']:.0f} | {i} | {lim:.0f} | {m['peak_mb']:.0f} | "
                f"{fmt(m['peak_mb'] / lim if lim else None)} | {m['data_mb']:.0f} "
                f"| {m['spilled_mb'] or 0:.0f} | {'yes' if m['paused'] else 'no'} "
                f"| {'yes' if m['restarted'] else 'no'} |"
            )
    lines += ["", "| fit | repeat | table / largest limit | fitted, none paused |"]
    lines.append("|---|---:|---:|:---:|")
    for r in records:
        mem = r.get("workers_memory")
        if not mem:
            if "error" in r:
                why = r["error"]
                lines.append(f"| {r['label']} | {r['repeat'] + 1} | | NO: {why} |")
            continue
        lim = max(m.get("limit_mb") or 0 for m in mem)
        ok = not any(m["paused"] or m["restarted"] for m in mem)
        lines.append(
            f"| {r['label']} | {r['repeat'] + 1} | "
            f"{fmt(r['data_mb'] / lim if lim else None)} | {'yes' if ok else 'NO'} |"
        )
    return "\n".join(lines)


def check_targets(label, where, cells, traffic_ratios, above):
    c = label.split()[1]
    out = []
    if c == "original" and cells["peer"] is not None:
        v = cells["peer"]
        out.append((f"{where}: original time / faster peer <= 1.0", v, v <= 1.0))
    if c == "era" and cells["lgb"] is not None:
        v = cells["lgb"]
        out.append((f"{where}: era time / lightgbm <= 1.25", v, v <= 1.25))
    for what, v in zip(("lo bytes/tree", "trees only"), traffic_ratios):
        if c != "original" and v is not None:
            out.append((f"{where}: {c} {what} / original <= 1.2", v, v <= 1.2))
    if above is not None:
        out.append(
            (f"{where}: {c} worker peak above data (MB) <= 300", above, above <= 300)
        )
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--features", type=int, default=100)
    ap.add_argument("--eras", type=int, default=256)
    ap.add_argument("--trees", type=int, default=100)
    ap.add_argument("--leaves", type=int, default=31)
    ap.add_argument("--learning-rate", type=float, default=0.1)
    ap.add_argument(
        "--workers",
        default="2,4",
        type=lambda s: [int(v) for v in s.split(",")],
        help="comma-separated worker process counts (default 2,4)",
    )
    ap.add_argument(
        "--threads-per-worker",
        type=int,
        default=None,
        help="threads of each worker (default: the CPUs over the workers, at least 1)",
    )
    ap.add_argument("--chunks-per-worker", type=int, default=4)
    ap.add_argument(
        "--wait-policy",
        default=None,
        choices=["passive", "active"],
        help="OMP_WAIT_POLICY of every fit, the workers' and the single "
        "process's (default: unset, as users run)",
    )
    ap.add_argument(
        "--memory-limit",
        default=None,
        help="each worker's memory_limit (LocalCluster's, e.g. 600MB; default: "
        "LocalCluster's, the machine's memory over the workers); the table of "
        "each worker's peak against it follows",
    )
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--criteria",
        default=",".join(CRITERIA),
        type=lambda s: [c for c in s.split(",") if c],
        help="comma-separated eraboost split types (default all three)",
    )
    ap.add_argument(
        "--only",
        default=None,
        help="comma-separated: eraboost, lightgbm, xgboost, single (default all)",
    )
    ap.add_argument(
        "--shared-loopback",
        action="store_true",
        help="run the Dask fits in this network namespace even where a private "
        "one is possible (their traffic is then counted with everyone's)",
    )
    ap.add_argument("--timeout", type=int, default=3600, help="seconds per fit")
    ap.add_argument("--out", default=None, help="also write the records (JSON lines)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return None

    reasons, skip = {}, set()
    for lib, module in [("eraboost", "eraboost.dask"), *PEERS.items()]:
        why = unavailable(module)
        if why:
            reasons[module] = why
            skip.add(lib)
    only = set(args.only.split(",")) if args.only else None
    runs = [
        (label, spec)
        for label, spec in settings(args)
        if spec["lib"] not in skip and (only is None or spec["lib"] in only)
    ]
    private = not args.shared_loopback and private_loopback()
    records = []
    for rep in range(args.repeats):
        for label, spec in runs:
            if spec["lib"] == "single":
                rec = run_single(spec)
            else:
                rec = run_child(spec, args.timeout, private)
            rec.update(label=label, group=group_key(spec), repeat=rep, spec=spec)
            records.append(rec)
            if args.out:
                with open(args.out, "a") as f:
                    f.write(json.dumps(rec) + "\n")
            msg = (
                f"{rec['fit_s']:8.2f} s" if "fit_s" in rec else f"FAILED {rec['error']}"
            )
            print(
                f"  rep {rep + 1}/{args.repeats} {label:<34} {rec['group']} {msg}",
                file=sys.stderr,
                flush=True,
            )
    reset = [m["hwm_reset"] for r in records for m in r.get("workers_memory", [])]
    peak = "VmHWM reset before the fit" if all(reset) else "ru_maxrss since start"
    chunks = ", ".join(
        f"{chunk_rows(args.rows, args.eras, w * args.chunks_per_worker):,} rows "
        f"on {w} workers"
        for w in args.workers
    )
    print(
        f"\n{args.rows:,} x {args.features} int8 (0..4), {args.eras} eras, "
        f"{args.trees} trees of {args.leaves} leaves, learning rate "
        f"{args.learning_rate}; chunks of {chunks}; "
        f"{os.cpu_count()} CPUs; OMP_WAIT_POLICY {args.wait_policy or 'unset'}; "
        "loopback "
        f"{'private to each fit' if private else 'SHARED with the machine'}. "
        f"Medians of {args.repeats} fits, a fresh process "
        f"and LocalCluster each; ratios: medians of within-repeat ratios; worker "
        f"peak: {peak}, the largest worker's.\n"
    )
    print(table(records, reasons))
    if args.memory_limit:
        print(f"\nmemory_limit {args.memory_limit} per worker:\n")
        print(limit_table(records))
    return records


if __name__ == "__main__":
    main()
