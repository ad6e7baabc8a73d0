"""Where a fit's time goes, phase by phase: eraboost, scikit-learn, XGBoost.

Fits each library on ``compare.py``'s data (the same cases, generator, seed
and parameters) in a fresh process per fit and prints a Markdown table of
the median time of each phase:

* binning: mapping the features to bins (XGBoost: building the
  ``QuantileDMatrix``);
* histograms: building the nodes' histograms (XGBoost's ``BuildHist``, the
  roots' included);
* scan: finding the best split of each node from its histograms
  (XGBoost's ``EvaluateSplits``);
* partition: moving each split node's rows to its children (XGBoost's
  ``UpdatePosition`` and ``LeafPartition``);
* prediction update: adding each tree's leaf values to the raw predictions
  (XGBoost does this outside its timers: it is in "other");
* other: the rest of the fit, mostly the gradients and Hessians and the
  boosting loop.

eraboost and scikit-learn report their phases with ``verbose=1``; XGBoost
with ``verbosity=3`` (its internal monitor). The fit time is the wall-clock
time of ``fit`` (XGBoost: ``QuantileDMatrix`` plus ``xgboost.train``, what
``XGBRegressor.fit`` does), so "other" is what the libraries' own timers do
not cover.

Usage::

    python benchmarks/phases.py --case int8 --threads 1,2
    python benchmarks/phases.py --case float --threads 16 --repeats 3
    # eraboost on the same data stored by columns (Fortran order)
    python benchmarks/phases.py --case int8 --libs eraboost --order C,F
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from compare import FULL, QUICK  # noqa: E402

PHASES = ["binning", "histograms", "scan", "partition", "prediction update"]

# eraboost and scikit-learn print the same lines with verbose=1
VERBOSE = {
    "binning": r"Binning [0-9.]+ GB of (?:training|validation) data:\s*([0-9.]+)\s*s",
    "histograms": r"Time spent computing histograms:\s*([0-9.]+)s",
    "scan": r"Time spent finding best splits:\s*([0-9.]+)s",
    "partition": r"Time spent applying splits:\s*([0-9.]+)s",
    "prediction update": r"Time spent predicting:\s*([0-9.]+)s",
}
# XGBoost's monitor, verbosity=3: "BuildHist: 0.32s, 600 calls @ 324911us"
MONITOR = r"\]\s*([A-Za-z]+):\s*([0-9.eE+-]+)s,\s*\d+ calls"

CHILD = r"""
import json, os, sys, time, warnings
import numpy as np
spec = json.loads(sys.argv[1])
sys.path.insert(0, sys.argv[2])
from _data import make_data
X, y, _ = make_data(spec["kind"], spec["n"], spec["p"], 1)
if spec["order"] == "F":
    X = np.asfortranarray(X)
warnings.simplefilter("ignore")
lib, threads = spec["lib"], spec["threads"]
if lib == "xgboost":
    import xgboost as xgb
    params = dict(tree_method="hist", grow_policy="lossguide",
                  max_leaves=spec["leaves"], max_depth=0, max_bin=255,
                  min_child_weight=1e-3, reg_lambda=0.0, subsample=1.0,
                  learning_rate=0.1, nthread=threads, seed=0, verbosity=3,
                  objective="reg:squarederror")
    t0 = time.perf_counter()
    dtrain = xgb.QuantileDMatrix(X, y, max_bin=255, nthread=threads)
    t1 = time.perf_counter()
    xgb.train(params, dtrain, num_boost_round=spec["iters"])
    t2 = time.perf_counter()
    print(json.dumps({"fit_s": t2 - t0, "binning": t1 - t0}), flush=True)
else:
    if lib == "sklearn":
        from sklearn.ensemble import HistGradientBoostingRegressor
    else:
        from eraboost import HistGradientBoostingRegressor
    est = HistGradientBoostingRegressor(
        max_iter=spec["iters"], learning_rate=0.1, max_leaf_nodes=spec["leaves"],
        early_stopping=False, random_state=0, verbose=1)
    t = time.perf_counter()
    est.fit(X, y)
    print(json.dumps({"fit_s": time.perf_counter() - t}), flush=True)
"""


def parse_verbose(text):
    """Phase seconds from the ``verbose=1`` output of eraboost or
    scikit-learn: a dict with every key of ``PHASES``."""
    out = {}
    for phase, pattern in VERBOSE.items():
        found = re.findall(pattern, text)
        if not found:
            raise ValueError(f"no {phase!r} time in the verbose output")
        out[phase] = sum(float(v) for v in found)
    return out


def parse_monitor(text):
    """Phase seconds from XGBoost's monitor (``verbosity=3``): histograms,
    scan, partition and the trees' total (``BoostNewTrees``). The monitor
    prints one line a timer; a timer printed twice is summed."""
    timers = {}
    for name, seconds in re.findall(MONITOR, text):
        timers[name] = timers.get(name, 0.0) + float(seconds)
    needed = ["BuildHist", "EvaluateSplits", "UpdatePosition", "BoostNewTrees"]
    missing = [n for n in needed if n not in timers]
    if missing:
        raise ValueError(f"XGBoost's monitor printed no {', '.join(missing)}")
    return {
        "histograms": timers["BuildHist"],
        "scan": timers["EvaluateSplits"],
        "partition": timers["UpdatePosition"] + timers.get("LeafPartition", 0.0),
        "trees": timers["BoostNewTrees"],
    }


def run_one(spec):
    """One fit in a fresh process: its fit time and phases (seconds)."""
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(spec["threads"])
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(spec), str(HERE)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["?"])[-1]}
    rec = json.loads(proc.stdout.strip().splitlines()[-1])
    text = proc.stdout + proc.stderr
    if spec["lib"] == "xgboost":
        mon = parse_monitor(text)
        rec.update({k: mon[k] for k in ("histograms", "scan", "partition")})
        rec["prediction update"] = None  # not timed apart by XGBoost
    else:
        rec.update(parse_verbose(text))
    known = sum(rec[p] for p in PHASES if rec[p] is not None)
    rec["other"] = rec["fit_s"] - known
    return rec


def _fmt(value, fit):
    if value is None:
        return "(in other)"
    return f"{value:.2f} ({100 * value / fit:.0f}%)"


def table(records):
    """Markdown table: one row per (library, order, threads), the median of
    each phase over the repeats and its share of the median fit."""
    groups = {}
    for r in records:
        if "fit_s" in r:
            groups.setdefault((r["lib"], r["order"], r["threads"]), []).append(r)
    cols = ["fit (s)"] + [f"{p} (s)" for p in PHASES] + ["other (s)"]
    lines = [
        "| library | order | threads | fits | " + " | ".join(cols) + " |",
        "|---|---|---:|---:|" + "---:|" * len(cols),
    ]
    for (lib, order, threads), recs in sorted(
        groups.items(), key=lambda kv: (kv[0][2], kv[0][0], kv[0][1])
    ):
        fit = statistics.median(r["fit_s"] for r in recs)
        cells = [f"{fit:.2f}"]
        for p in [*PHASES, "other"]:
            vals = [r[p] for r in recs if r[p] is not None]
            cells.append(_fmt(statistics.median(vals) if vals else None, fit))
        lines.append(
            f"| {lib} | {order} | {threads} | {len(recs)} | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--case", default="int8", choices=["int8", "float"])
    ap.add_argument("--threads", default=str(os.cpu_count()))
    ap.add_argument("--libs", default="eraboost,sklearn,xgboost")
    ap.add_argument("--order", default="C", help="C, F or C,F (eraboost only)")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="small data, few trees")
    ap.add_argument("--rows", type=int, default=None, help="override the rows")
    ap.add_argument("--trees", type=int, default=None, help="override the trees")
    ap.add_argument("--out", default=None, help="also append the records here")
    args = ap.parse_args(argv)

    data = dict(FULL[args.case])
    if args.quick:
        data.update(QUICK[args.case])
    if args.rows:
        data["n"] = args.rows
    if args.trees:
        data["iters"] = args.trees
    specs = []
    for threads in (int(t) for t in args.threads.split(",")):
        for lib in args.libs.split(","):
            orders = args.order.split(",") if lib == "eraboost" else ["C"]
            for order in orders:
                specs.append(
                    {
                        "lib": lib,
                        "order": order,
                        "threads": threads,
                        **{k: data[k] for k in ("n", "p", "kind", "iters", "leaves")},
                    }
                )
    records = []
    for rep in range(args.repeats):
        for spec in specs:
            rec = dict(spec, repeat=rep, case=args.case, **run_one(spec))
            records.append(rec)
            if args.out:
                with open(args.out, "a") as f:
                    f.write(json.dumps(rec) + "\n")
            msg = f"{rec['fit_s']:.2f} s" if "fit_s" in rec else rec["error"]
            print(
                f"  rep {rep + 1}/{args.repeats} {spec['lib']:<8} "
                f"{spec['order']} threads={spec['threads']:<3} {msg}",
                file=sys.stderr,
                flush=True,
            )
    print(
        f"\n{args.case}: {data['n']:,} x {data['p']} {data['kind']}, "
        f"{data['iters']} trees of {data['leaves']} leaves, {os.cpu_count()} CPUs; "
        f"medians of {args.repeats} fresh-process fit(s)."
    )
    print(table(records))
    failed = [r for r in records if "error" in r]
    if failed:
        print(f"{len(failed)} fit(s) FAILED: {failed[0]['error']}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
