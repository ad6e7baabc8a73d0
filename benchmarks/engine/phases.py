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

    python benchmarks/engine/phases.py --case int8 --threads 1,2
    python benchmarks/engine/phases.py --case float --threads 16 --repeats 3
    # eraboost on the same data stored by columns (Fortran order)
    python benchmarks/engine/phases.py --case int8 --libs eraboost --order C,F
    # how each phase scales with the threads, with and without eras
    python benchmarks/engine/phases.py --case int8 --libs eraboost --threads 1,4,16 \\
        --split-types original,era --eras 256

With several thread counts, a second table gives each phase's speedup: its
median time at the fewest threads over its median time at each count.
``--split-types`` fits eraboost with each criterion (``original`` without
eras, the others on ``--eras`` eras of consecutive rows, ``compare.py``'s).
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
sys.path.insert(0, str(HERE.parent / "peers"))  # compare.py, for its cases

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
X, y, eras = make_data(spec["kind"], spec["n"], spec["p"], spec["eras"])
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
    kw = {} if lib == "sklearn" else {"split_type": spec["split_type"]}
    fit_kw = {} if spec["split_type"] == "original" else {"eras": eras}
    est = HistGradientBoostingRegressor(
        max_iter=spec["iters"], learning_rate=0.1, max_leaf_nodes=spec["leaves"],
        early_stopping=False, random_state=0, verbose=1, **kw)
    t = time.perf_counter()
    est.fit(X, y, **fit_kw)
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


def _label(rec):
    """The row label of a record: the library, and eraboost's criterion."""
    if rec["lib"] == "eraboost" and rec.get("split_type", "original") != "original":
        return f"eraboost {rec['split_type']} ({rec['eras']} eras)"
    return rec["lib"]


def _groups(records):
    groups = {}
    for r in records:
        if "fit_s" in r:
            groups.setdefault((_label(r), r["order"], r["threads"]), []).append(r)
    return groups


def _median(recs, phase):
    vals = [r[phase] for r in recs if r[phase] is not None]
    return statistics.median(vals) if vals else None


def table(records):
    """Markdown table: one row per (library, order, threads), the median of
    each phase over the repeats and its share of the median fit."""
    cols = ["fit (s)"] + [f"{p} (s)" for p in PHASES] + ["other (s)"]
    lines = [
        "| library | order | threads | fits | " + " | ".join(cols) + " |",
        "|---|---|---:|---:|" + "---:|" * len(cols),
    ]
    for (lib, order, threads), recs in sorted(
        _groups(records).items(), key=lambda kv: (kv[0][2], kv[0][0], kv[0][1])
    ):
        fit = statistics.median(r["fit_s"] for r in recs)
        cells = [f"{fit:.2f}"]
        for p in [*PHASES, "other"]:
            cells.append(_fmt(_median(recs, p), fit))
        lines.append(
            f"| {lib} | {order} | {threads} | {len(recs)} | " + " | ".join(cells) + " |"
        )
    return "\n".join(lines)


def speedups(records):
    """Markdown table: for each (library, order) fitted at several thread
    counts, each phase's median time at the fewest threads over its median
    time at each count (the fit's too); None with one thread count."""
    groups = _groups(records)
    by_model = {}
    for (lib, order, threads), recs in groups.items():
        by_model.setdefault((lib, order), {})[threads] = recs
    phases = ["fit_s", *PHASES, "other"]
    lines = [
        "| library | order | threads | fit | " + " | ".join(PHASES) + " | other |",
        "|---|---|---:|" + "---:|" * len(phases),
    ]
    rows = 0
    for (lib, order), runs in sorted(by_model.items()):
        if len(runs) < 2:
            continue
        base = runs[min(runs)]
        for threads in sorted(runs)[1:]:
            cells = []
            for p in phases:
                a, b = _median(base, p), _median(runs[threads], p)
                cells.append(
                    "" if a is None or b is None or b <= 0 else f"{a / b:.1f}x"
                )
            lines.append(f"| {lib} | {order} | {threads} | " + " | ".join(cells) + " |")
            rows += 1
    return "\n".join(lines) if rows else None


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
    ap.add_argument(
        "--split-types",
        default="original",
        help="eraboost's criteria, e.g. original,era,directional",
    )
    ap.add_argument(
        "--eras", type=int, default=256, help="eras of the criteria but original"
    )
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
            eb = lib == "eraboost"
            orders = args.order.split(",") if eb else ["C"]
            split_types = args.split_types.split(",") if eb else ["original"]
            for order in orders:
                for split_type in split_types:
                    specs.append(
                        {
                            "lib": lib,
                            "order": order,
                            "threads": threads,
                            "split_type": split_type,
                            "eras": 1 if split_type == "original" else args.eras,
                            **{
                                k: data[k]
                                for k in ("n", "p", "kind", "iters", "leaves")
                            },
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
                f"  rep {rep + 1}/{args.repeats} {_label(spec):<8} "
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
    scaling = speedups(records)
    if scaling:
        print("\nSpeedup over the fewest threads (medians):")
        print(scaling)
    failed = [r for r in records if "error" in r]
    if failed:
        print(f"{len(failed)} fit(s) FAILED: {failed[0]['error']}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
