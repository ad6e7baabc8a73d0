"""Fit time and peak memory, side by side: scikit-learn, LightGBM, XGBoost
(``hist``), eraboost (``original``, ``era``, ``directional``) and the
era-splitting peer ``erasplit`` 1.0.9.

Every fit runs in a fresh Python process (its peak RSS, from
``getrusage(RUSAGE_SELF).ru_maxrss``, is that fit's, data included), the
estimators of a case take turns repeat after repeat, and the table reports
medians. Ratios are medians over repeats of the ratio measured within the same
repeat, so that slow phases of a busy machine hit both sides.

Usage::

    python benchmarks/peers/compare.py --repeats 5 \\
        --peer-python /work/venv-erasplit/bin/python

    # one case at 1, 2 and 16 threads
    python benchmarks/peers/compare.py --cases int8 --threads 1,2,16

    # eraboost's three criteria on one case at 256 eras only
    python benchmarks/peers/compare.py --cases int8 --eras 256 --only '^eraboost'

    # the same fits under OMP_WAIT_POLICY=passive (labelled so in the table)
    python benchmarks/peers/compare.py --cases float --wait-policy passive

    # Numerai at full scale (issue 30's target 3; 16 cores, 128 GB):
    # every fit once, then era twice more, the data drawn once
    python benchmarks/peers/compare.py --cases numerai-full --repeats 1 \
        --data-cache /tmp/eb-data --phases
    python benchmarks/peers/compare.py --cases numerai-full --repeats 3 \
        --only '^eraboost era$' --data-cache /tmp/eb-data --phases

    # quick smoke run, one case, one repeat
    python benchmarks/peers/compare.py --quick --cases peer --repeats 1

Results are appended to ``--out`` (JSON lines) as they come; running again
with the same file resumes: finished (case, estimator, repeat) runs are
skipped and the table covers everything in the file. ``--table-only`` prints
the table of an existing file.

Cases (``--cases``, comma-separated; default all but ``numerai``):

* ``int8``: 1,000,000 x 100 int8 features with values 0..4, eras in
  {1, 16, 256, 1024}, 100 trees of 31 leaves.
* ``int8-frame``: 1,000,000 x 100 int8 features with values 0..4 stored
  by columns (drawn feature by feature), 100 trees of 31 leaves, given to
  every library as a pandas DataFrame of int8 columns (one block over the
  matrix, no copy), as a parquet file loads; eras in {1, 256}.
* ``int8-frame-c``: the same values as a C-ordered array (the frame's
  path against the array's on the same data).
* ``mixed-frame``: the same, its last 10 columns float64 (their values
  plus noise): a DataFrame of 90 int8 and 10 float64 columns.
* ``float``: 1,000,000 x 50 float64 features, no eras, 100 trees.
* ``int8-small``: 200,000 x 50 int8 features with values 0..4, eras in
  {256, 1024}, 50 trees of 32 leaves.
* ``float-eras``: 200,000 x 50 float64 features (255 bins), 64 eras, 50
  trees of 32 leaves.
* ``float-eras-31``: the same with ``max_bins=31`` for ``era`` and
  ``directional`` (``original`` keeps 255 bins): what coarser bins buy.
* ``peer``: the peer's own setting, 102,400 x 50 int8 features with values
  0..4, 256 eras, 50 trees of 32 leaves, learning_rate 0.1.
* ``numerai``: scaled-down Numerai, 2,700,000 x 500 int8 features with
  values 0..4, 570 eras, 100 trees of 31 leaves (eraboost only).
* ``growth``: 200,000 x 100 int8 rows, one factor varied at a time (rows,
  features, eras, leaves) for eraboost ``era``: how time and memory grow.
* ``numerai-full``: Numerai at full scale (issue 30), 2,700,000 x 2,376
  int8 features with values 0..4 stored by columns (as a pandas frame
  gives them), 570 eras, the example model's parameters for 100 trees
  (learning rate 0.01, depth 5, 32 leaves, ``colsample_bytree=0.1``),
  against LightGBM. 6.4 GB of data: use ``--data-cache``.
* ``numerai-example``: Numerai's example model scaled to this machine,
  500,000 x 300 int8 features with values 0..4, 200 eras, 500 trees,
  learning rate 0.01, depth 5, 32 leaves, ``colsample_bytree=0.1``, against
  LightGBM with the same parameters (scikit-learn has no column sampling).

* ``small-float``: 30,000 x 10 float64 features, 20 eras, 100 trees of 31
  leaves, one thread: a small panel with continuous features.

Early stopping is off everywhere. Every library uses all CPUs, or the
``--threads`` given (``OMP_NUM_THREADS`` for scikit-learn and eraboost,
``n_jobs`` for LightGBM and XGBoost). The children run in the environment
this script runs in, with the OpenMP defaults users have; ``--wait-policy``
sets ``OMP_WAIT_POLICY`` for them and the table says so. XGBoost grows the
same trees as the others: ``grow_policy="lossguide"``, ``max_leaves``,
``max_bin=255``, ``reg_lambda=0``.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

# the fits' processes import the data generator from benchmarks/engine/_data.py
ENGINE = Path(__file__).resolve().parents[1] / "engine"

CHILD = r"""
import json, os, resource, sys, time, warnings
import numpy as np
spec = json.loads(sys.argv[1])

def rss_now_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")

sys.path.insert(0, sys.argv[2])  # benchmarks/engine/, for _data
from _data import make_data
n_eras = spec["n_eras"]
X, y, eras = make_data(spec["kind"], spec["n"], spec["p"], n_eras,
                       order=spec.get("order", "C"), cache=spec.get("data_cache"))
if spec.get("frame") == "pandas":
    # a frame of one int8 block over the matrix stored by columns, as a
    # parquet file loads: each library is fitted from the frame itself
    import pandas as pd
    X = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])], copy=False)
elif spec.get("frame") == "c-array":
    X = np.ascontiguousarray(X)  # the frame's values, stored by rows
elif spec.get("frame") == "pandas-mixed":
    # the last n_float columns as float64 (their values plus noise) beside
    # an int8 block: a table of mixed column types
    import pandas as pd
    k = X.shape[1] - spec["n_float"]
    noise = np.random.RandomState(1).standard_normal((X.shape[0], spec["n_float"]))
    floats = pd.DataFrame(X[:, k:] + 0.1 * noise,
                          columns=[f"f{j}" for j in range(k, X.shape[1])])
    X = pd.concat([pd.DataFrame(X[:, :k], columns=[f"f{j}" for j in range(k)],
                                copy=False), floats], axis=1, copy=False)
    del noise, floats
lib, extra = spec["lib"], spec["extra"]
lr, depth = spec.get("lr", 0.1), spec.get("max_depth")
colsample = spec.get("colsample", 1.0)
threads = spec.get("threads") or os.cpu_count()
common = dict(max_iter=spec["iters"], learning_rate=lr, max_depth=depth,
              max_leaf_nodes=spec["leaves"], early_stopping=False)
if lib == "sklearn":
    from sklearn.ensemble import HistGradientBoostingRegressor
    est = HistGradientBoostingRegressor(**common, random_state=0)
    fit = lambda: est.fit(X, y)
elif lib == "lightgbm":
    from lightgbm import LGBMRegressor
    est = LGBMRegressor(n_estimators=spec["iters"], learning_rate=lr,
                        num_leaves=spec["leaves"], max_depth=depth or -1,
                        max_bin=255, min_child_samples=20, min_child_weight=1e-3,
                        reg_lambda=0.0, subsample=1.0,
                        colsample_bytree=colsample,
                        n_jobs=threads, force_col_wise=True,
                        verbose=-1, random_state=0)
    fit = lambda: est.fit(X, y)
elif lib == "xgboost":
    from xgboost import XGBRegressor
    est = XGBRegressor(n_estimators=spec["iters"], learning_rate=lr,
                       tree_method="hist", grow_policy="lossguide",
                       max_leaves=spec["leaves"], max_depth=depth or 0,
                       max_bin=255, min_child_weight=1e-3, reg_lambda=0.0,
                       subsample=1.0, colsample_bytree=colsample,
                       n_jobs=threads, random_state=0)
    fit = lambda: est.fit(X, y)
elif lib == "eraboost":
    from eraboost import HistGradientBoostingRegressor
    if colsample < 1.0:
        extra = dict(extra, colsample_bytree=colsample)
    est = HistGradientBoostingRegressor(**common, random_state=0, **extra,
                                        verbose=int(bool(spec.get("phases"))))
    if n_eras > 1:
        fit = lambda: est.fit(X, y, eras=eras)
    else:
        fit = lambda: est.fit(X, y)
elif lib == "erasplit":
    from erasplit.ensemble import EraHistGradientBoostingRegressor
    est = EraHistGradientBoostingRegressor(**common, random_state=0,
                                           n_jobs=threads, **extra)
    fit = lambda: est.fit(X, y, eras)
rss_data = rss_now_mb()
warnings.simplefilter("ignore")
import contextlib, io
said = io.StringIO()
t = time.perf_counter()
with contextlib.redirect_stdout(said):
    fit()
t = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
rec = {"fit_s": t, "peak_rss_mb": peak, "data_rss_mb": rss_data}
if spec.get("phases") and lib == "eraboost":
    from phases import parse_verbose
    rec["phases"] = parse_verbose(said.getvalue())
print(json.dumps(rec))
"""

FULL = {
    "int8": {
        "n": 1_000_000,
        "p": 100,
        "kind": "int5",
        "iters": 100,
        "leaves": 31,
        "eras": [1, 16, 256, 1024],
    },
    # the int8 case's matrix stored by columns, given as a pandas DataFrame
    "int8-frame": {
        "n": 1_000_000,
        "p": 100,
        "kind": "int5",
        "order": "F",
        "frame": "pandas",
        "iters": 100,
        "leaves": 31,
        "eras": [1, 256],
    },
    # the same values as a C-ordered array: the frame's path against the
    # array's on the same data
    "int8-frame-c": {
        "n": 1_000_000,
        "p": 100,
        "kind": "int5",
        "order": "F",
        "frame": "c-array",
        "iters": 100,
        "leaves": 31,
        "eras": [1, 256],
    },
    # the same with its last 10 columns float64: a frame of mixed types
    "mixed-frame": {
        "n": 1_000_000,
        "p": 100,
        "kind": "int5",
        "order": "F",
        "frame": "pandas-mixed",
        "n_float": 10,
        "iters": 100,
        "leaves": 31,
        "eras": [1, 256],
    },
    "float": {
        "n": 1_000_000,
        "p": 50,
        "kind": "float",
        "iters": 100,
        "leaves": 31,
        "eras": [1],
    },
    "int8-small": {
        "n": 200_000,
        "p": 50,
        "kind": "int5",
        "iters": 50,
        "leaves": 32,
        "eras": [256, 1024],
    },
    "float-eras": {
        "n": 200_000,
        "p": 50,
        "kind": "float",
        "iters": 50,
        "leaves": 32,
        "eras": [64],
    },
    # the same, the era criteria on 31 bins (max_bins), original on 255
    "float-eras-31": {
        "n": 200_000,
        "p": 50,
        "kind": "float",
        "iters": 50,
        "leaves": 32,
        "eras": [64],
        "era_params": {"max_bins": 31},
    },
    "peer": {
        "n": 102_400,
        "p": 50,
        "kind": "int5",
        "iters": 50,
        "leaves": 32,
        "eras": [256],
    },
    "numerai": {
        "n": 2_700_000,
        "p": 500,
        "kind": "int5",
        "iters": 100,
        "leaves": 31,
        "eras": [570],
    },
    "small-float": {
        "n": 30_000,
        "p": 10,
        "kind": "float",
        "iters": 100,
        "leaves": 31,
        "eras": [20],
        "threads": 1,
    },
    "numerai-full": {
        "n": 2_700_000,
        "p": 2376,
        "kind": "int5",
        "order": "F",
        "iters": 100,
        "leaves": 32,
        "max_depth": 5,
        "lr": 0.01,
        "colsample": 0.1,
        "eras": [570],
    },
    "numerai-example": {
        "n": 500_000,
        "p": 300,
        "kind": "int5",
        "iters": 500,
        "leaves": 32,
        "max_depth": 5,
        "lr": 0.01,
        "colsample": 0.1,
        "eras": [200],
    },
}
QUICK = {
    "int8": {"n": 100_000, "iters": 20},
    "int8-frame": {"n": 100_000, "iters": 20},
    "int8-frame-c": {"n": 100_000, "iters": 20},
    "mixed-frame": {"n": 100_000, "iters": 20},
    "float": {"n": 100_000, "iters": 20},
    "int8-small": {"n": 50_000, "iters": 10},
    "float-eras": {"n": 50_000, "iters": 10},
    "float-eras-31": {"n": 50_000, "iters": 10},
    "peer": {"n": 102_400, "iters": 10},
    "numerai": {"n": 270_000, "p": 100, "iters": 10, "eras": [57]},
    "numerai-example": {"n": 50_000, "iters": 20, "eras": [20]},
    "numerai-full": {"n": 54_000, "p": 240, "iters": 10, "eras": [57]},
    "small-float": {"n": 10_000, "iters": 20},
}
# the estimator the "vs ..." columns compare with
BASELINE = {"numerai-example": "lightgbm", "numerai-full": "lightgbm"}
ERA_TYPES = {
    "original": {"split_type": "original"},
    "era": {"split_type": "era"},
    "directional": {"split_type": "directional"},
}
PEER_TYPES = {
    "original": {"vanna": 1.0, "gamma": 0.0, "blama": 0.0},
    "era": {"vanna": 0.0, "gamma": 1.0, "blama": 0.0},
    "directional": {"vanna": 0.0, "gamma": 0.0, "blama": 1.0},
}
GROWTH_BASE = {
    "n": 200_000,
    "p": 100,
    "kind": "int5",
    "iters": 20,
    "leaves": 31,
    "n_eras": 256,
}
GROWTH = {
    "n": [100_000, 200_000, 400_000, 800_000],
    "p": [50, 100, 200, 400],
    "n_eras": [64, 256, 1024, 4096],
    "leaves": [15, 31, 63, 127],
}


def runs_of_case(case, quick, peer_python, max_iter=None):
    """(label, spec) of every fit of a case."""
    out = _runs_of_case(case, quick, peer_python)
    if max_iter is not None:
        for _, spec in out:
            spec["iters"] = max_iter
    return out


def _runs_of_case(case, quick, peer_python):
    if case == "growth":
        out = []
        for factor, values in GROWTH.items():
            for v in values:
                data = dict(GROWTH_BASE, **{factor: v})
                if quick:
                    data["n"] //= 10
                    data["iters"] = 5
                out.append(
                    (
                        f"era, {factor}={v}",
                        dict(
                            data,
                            lib="eraboost",
                            extra=ERA_TYPES["era"],
                            factor=factor,
                            value=v,
                        ),
                    )
                )
        return out
    data = dict(FULL[case])
    if quick:
        data.update(QUICK[case])
    eras = data.pop("eras")
    base = dict(data, n_eras=1)
    out = []
    if case in ("numerai-example", "numerai-full"):
        out.append(("lightgbm", dict(base, lib="lightgbm", extra={})))
    elif case != "numerai":
        out += [
            ("sklearn", dict(base, lib="sklearn", extra={})),
            ("lightgbm", dict(base, lib="lightgbm", extra={})),
            ("xgboost", dict(base, lib="xgboost", extra={})),
        ]
    out.append(
        ("eraboost original", dict(base, lib="eraboost", extra=ERA_TYPES["original"]))
    )
    for m in eras:
        if m == 1:
            continue
        for name, extra in ERA_TYPES.items():
            if name != "original":
                extra = dict(extra, **data.get("era_params", {}))
            out.append(
                (f"eraboost {name}", dict(data, n_eras=m, lib="eraboost", extra=extra))
            )
        if case == "peer" and peer_python:
            for name, extra in PEER_TYPES.items():
                out.append(
                    (
                        f"erasplit {name}",
                        dict(data, n_eras=m, lib="erasplit", extra=extra),
                    )
                )
    return out


def select_runs(runs, only=None, eras=None):
    """The ``(label, spec)`` runs whose label matches the regular expression
    ``only`` and whose era count is one of ``eras`` (comma-separated), each
    filter skipped when None."""
    if only:
        runs = [(lab, s) for lab, s in runs if re.search(only, lab)]
    if eras:
        keep = {int(e) for e in eras.split(",")}
        runs = [(lab, s) for lab, s in runs if s["n_eras"] in keep]
    return runs


def run_one(spec, python):
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)
    if spec.get("wait_policy"):
        env["OMP_WAIT_POLICY"] = spec["wait_policy"]
    if spec.get("threads"):
        env["OMP_NUM_THREADS"] = str(spec["threads"])
    proc = subprocess.run(
        [python, "-c", CHILD, json.dumps(spec), str(ENGINE)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1:]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def with_threads(runs, threads, wait_policy):
    """Every run at each of the ``threads`` (comma-separated) counts, and
    under ``wait_policy``."""
    out = []
    counts = [int(t) for t in threads.split(",")] if threads else [None]
    for t in counts:
        for label, spec in runs:
            spec = dict(spec)
            if t is not None:
                spec["threads"] = t
            if wait_policy:
                spec["wait_policy"] = wait_policy
            out.append((label, spec))
    return out


def key(rec):
    return (
        rec["case"],
        rec["label"],
        rec["n_eras"],
        rec.get("quick", False),
        rec["iters"],
        rec.get("threads"),
        rec.get("wait_policy"),
        rec["repeat"],
    )


def median_ratio(recs, num, den, field):
    """Median over repeats of num[field] / den[field] (same repeat)."""
    by_rep = {r["repeat"]: r[field] for r in den}
    vals = [r[field] / by_rep[r["repeat"]] for r in num if r["repeat"] in by_rep]
    return statistics.median(vals) if vals else None


def fmt(x, suffix="x", digits=2):
    return "" if x is None else f"{x:.{digits}f}{suffix}"


def describe(value):
    """A spec value as text: ``a=1, b=2`` for a dict."""
    if isinstance(value, dict):
        return ", ".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def table(records, quick):
    recs = [r for r in records if r.get("quick", False) == quick and "fit_s" in r]
    lines = []
    groups = {}
    for r in recs:
        gkey = (
            (r["case"],)
            if r["case"] == "growth"
            else (
                r["case"],
                r["n"],
                r["p"],
                r["iters"],
                r.get("threads"),
                r.get("wait_policy"),
            )
        )
        groups.setdefault(gkey, {}).setdefault((r["label"], r["n_eras"]), []).append(r)
    targets = []
    for gkey, g in groups.items():
        case = gkey[0]
        if case == "growth":
            continue
        first = next(iter(g.values()))[0]
        more = "".join(
            f", {name} {describe(first[k])}"
            for k, name in [
                ("max_depth", "depth"),
                ("lr", "learning rate"),
                ("colsample", "colsample_bytree"),
                ("order", "stored in order"),
                ("frame", "given as a DataFrame of"),
                ("era_params", "era criteria with"),
                ("threads", "threads"),
                ("wait_policy", "OMP_WAIT_POLICY"),
            ]
            if first.get(k)
        )
        lines.append(
            f"\n**{case}**: {first['n']:,} x {first['p']} "
            f"{'float64' if first['kind'] == 'float' else 'int8 (0..4)'}, "
            f"{first['iters']} trees of {first['leaves']} leaves{more}\n"
        )
        base = BASELINE.get(case, "sklearn")
        lines.append(
            f"| estimator | eras | fit (s) | vs {base} | vs xgboost | vs eraboost "
            f"original | vs erasplit | peak RSS (MB) | RSS vs {base} | "
            "RSS vs eraboost original | runs |"
        )
        lines.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        sk = g.get((base, 1))
        xgb = g.get(("xgboost", 1))
        for (label, m), rs in sorted(g.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            t = statistics.median(r["fit_s"] for r in rs)
            mem = statistics.median(r["peak_rss_mb"] for r in rs)
            vs_sk = median_ratio(rs, rs, sk, "fit_s") if sk else None
            vs_xgb = median_ratio(rs, rs, xgb, "fit_s") if xgb else None
            mem_sk = median_ratio(rs, rs, sk, "peak_rss_mb") if sk else None
            orig = g.get(("eraboost original", m)) or g.get(("eraboost original", 1))
            vs_orig = mem_orig = None
            if orig and label.startswith("eraboost"):
                vs_orig = median_ratio(rs, rs, orig, "fit_s")
                mem_orig = median_ratio(rs, rs, orig, "peak_rss_mb")
            vs_peer = None
            if label.startswith("eraboost") and m > 1:
                peer = g.get(("erasplit " + label.split()[1], m))
                if peer:
                    vs_peer = median_ratio(rs, rs, peer, "fit_s")
            lines.append(
                f"| {label} | {m} | {t:.2f} | {fmt(vs_sk)} | {fmt(vs_xgb)} | "
                f"{fmt(vs_orig)} | {fmt(vs_peer, 'x', 3)} | {mem:.0f} | "
                f"{fmt(mem_sk)} | {fmt(mem_orig)} | {len(rs)} |"
            )
            targets += check_targets(
                case, label, m, vs_sk, vs_orig, vs_peer, mem_sk, mem_orig
            )
            if case == "numerai-full" and label == "eraboost era":
                # issue 30: at most 0.3x LightGBM's time, and the
                # data plus 1.5 GB of memory
                above = statistics.median(
                    r["peak_rss_mb"] - r["data_rss_mb"] for r in rs
                )
                if vs_sk is not None:
                    targets.append(
                        (f"{case}: era time / lightgbm <= 0.3", vs_sk, vs_sk <= 0.3)
                    )
                targets.append(
                    (
                        f"{case}: era peak RSS above the data (MB) <= 1536",
                        above,
                        above <= 1536,
                    )
                )
            if (
                case in ("int8", "float")
                and label == "eraboost original"
                and m == 1
                and vs_xgb is not None
            ):
                targets.append(
                    (f"{case}: original time / xgboost <= 1.0", vs_xgb, vs_xgb <= 1.0)
                )
    lines += phases_table(recs)
    if ("growth",) in groups:
        lines += growth_table(groups[("growth",)])
    if targets:
        lines.append("\n| target | measured | met |")
        lines.append("|---|---:|:---:|")
        for name, value, ok in targets:
            lines.append(f"| {name} | {value:.3f} | {'yes' if ok else 'NO'} |")
    return "\n".join(lines)


# issues 17 and 30: era criteria against eraboost's own original, by eras
ERA_TIME_TARGETS = {
    "int8": {256: 1.25, 1024: 1.5},
    "int8-small": {256: 1.25, 1024: 1.5},
    "float-eras": {64: 2.0},
    "small-float": {20: 2.0},
}


def check_targets(case, label, m, vs_sk, vs_orig, vs_peer, mem_sk, mem_orig=None):
    out = []
    name = label.split()[1] if label.startswith("eraboost") else ""
    limit = ERA_TIME_TARGETS.get(case, {}).get(m)
    if limit and name in ("era", "directional") and vs_orig is not None:
        out.append(
            (
                f"{case}, {m} eras: {name} / original <= {limit}",
                vs_orig,
                vs_orig <= limit,
            )
        )
    if (
        case in ERA_TIME_TARGETS
        and m == 1024
        and name in ("era", "directional")
        and mem_orig is not None
    ):
        out.append(
            (
                f"{case}, 1024 eras: {name} peak RSS / original <= 1.3",
                mem_orig,
                mem_orig <= 1.3,
            )
        )
    if (
        case in ("int8", "float")
        and label == "eraboost original"
        and m == 1
        and vs_sk is not None
    ):
        out.append((f"{case}: original time / sklearn <= 1.0", vs_sk, vs_sk <= 1.0))
    if (
        case == "int8"
        and m == 256
        and label.startswith("eraboost")
        and mem_sk is not None
    ):
        out.append(
            (
                f"int8, 256 eras: {label.split()[1]} peak RSS / sklearn <= 0.5",
                mem_sk,
                mem_sk <= 0.5,
            )
        )
    if case == "numerai-example" and label.startswith("eraboost"):
        name = label.split()[1]
        if name == "original" and m > 1:
            return out  # the no-era fit is the reference
        if name == "original" and vs_sk is not None:
            out.append(
                (f"{case}: original time / lightgbm <= 1.0", vs_sk, vs_sk <= 1.0)
            )
        if name != "original" and vs_orig is not None:
            out.append(
                (f"{case}: {name} time / original <= 1.3", vs_orig, vs_orig <= 1.3)
            )
        if mem_sk is not None:
            out.append(
                (f"{case}: {name} peak RSS / lightgbm <= 0.5", mem_sk, mem_sk <= 0.5)
            )
    if case == "peer" and label.startswith("eraboost") and m > 1:
        if vs_peer is not None:
            out.append(
                (
                    f"peer setting: erasplit time / {label.split()[1]} >= 40",
                    1 / vs_peer,
                    1 / vs_peer >= 40,
                )
            )
        if mem_sk is not None:
            out.append(
                (
                    f"peer setting: {label.split()[1]} peak RSS / sklearn <= 1.5",
                    mem_sk,
                    mem_sk <= 1.5,
                )
            )
    return out


def phases_table(recs):
    """eraboost's phases (``--phases``): the median seconds of each, by
    case, estimator and eras."""
    groups = {}
    for r in recs:
        if isinstance(r.get("phases"), dict):
            k = (r["case"], r["label"], r["n_eras"], r.get("threads"))
            groups.setdefault(k, []).append(r)
    if not groups:
        return []
    names = list(next(iter(groups.values()))[0]["phases"])
    lines = [
        "\n**eraboost's phases** (seconds, medians; other: the rest of the fit)\n",
        "| case | estimator | eras | threads | fit | "
        + " | ".join(names)
        + " | other |",
        "|---|---|---:|---:|---:|" + "---:|" * (len(names) + 1),
    ]
    for (case, label, m, threads), rs in sorted(groups.items(), key=str):
        fit = statistics.median(r["fit_s"] for r in rs)
        cells = [statistics.median(r["phases"][n] for r in rs) for n in names]
        other = statistics.median(r["fit_s"] - sum(r["phases"].values()) for r in rs)
        lines.append(
            f"| {case} | {label} | {m} | {threads or 'all'} | {fit:.2f} | "
            + " | ".join(f"{c:.2f}" for c in cells)
            + f" | {other:.2f} |"
        )
    return lines


def growth_table(g):
    lines = [
        (
            "\n**growth** of eraboost `era` from 200,000 x 100 int8, 256 eras, "
            "31 leaves, one factor at a time\n"
        ),
        "| factor | value | fit (s) | peak RSS (MB) | fit RSS above data (MB) |",
        "|---|---:|---:|---:|---:|",
    ]
    for _, rs in sorted(
        g.items(), key=lambda kv: (kv[1][0]["factor"], kv[1][0]["value"])
    ):
        r0 = rs[0]
        t = statistics.median(r["fit_s"] for r in rs)
        mem = statistics.median(r["peak_rss_mb"] for r in rs)
        extra = statistics.median(r["peak_rss_mb"] - r["data_rss_mb"] for r in rs)
        lines.append(
            f"| {r0['factor']} | {r0['value']:,} | {t:.2f} | {mem:.0f} | {extra:.0f} |"
        )
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--cases",
        default="int8,float,peer",
        help="comma-separated: int8, float, int8-small, float-eras, float-eras-31, "
        "peer, numerai, growth, numerai-example, numerai-full",
    )
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="small data, few trees")
    ap.add_argument(
        "--max-iter",
        type=int,
        default=None,
        help="override the number of trees of every case",
    )
    ap.add_argument(
        "--only",
        default=None,
        help="regular expression: run only estimators whose label matches",
    )
    ap.add_argument(
        "--peer-python",
        default=None,
        help="python of a virtualenv with erasplit==1.0.9 (skipped if absent)",
    )
    ap.add_argument(
        "--threads",
        default=None,
        help="comma-separated thread counts: run every case at each "
        "(default: the case's own, else all CPUs)",
    )
    ap.add_argument(
        "--wait-policy",
        default=None,
        choices=["passive", "active"],
        help="OMP_WAIT_POLICY for the fits (default: unset, as users run)",
    )
    ap.add_argument(
        "--eras",
        default=None,
        help="comma-separated era counts: run only the fits of a case with "
        "one of them (1: the fits without eras)",
    )
    ap.add_argument(
        "--data-cache",
        default=None,
        help="folder where the children save each case's data the first time "
        "and read it back afterwards (the same values, drawn once)",
    )
    ap.add_argument(
        "--phases",
        action="store_true",
        help="record eraboost's phases (its verbose timers) with each fit",
    )
    ap.add_argument("--out", default="bench_results/compare.jsonl")
    ap.add_argument("--table-only", action="store_true")
    args = ap.parse_args(argv)

    peer = args.peer_python
    if peer and not Path(peer).exists():
        print(f"peer python {peer} not found: the peer is skipped", file=sys.stderr)
        peer = None
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    records = []
    if out.exists():
        records = [json.loads(line) for line in out.read_text().splitlines() if line]
    done = {key(r) for r in records if "fit_s" in r}
    failed = 0
    if not args.table_only:
        for case in args.cases.split(","):
            runs = runs_of_case(case, args.quick, peer, args.max_iter)
            runs = with_threads(runs, args.threads, args.wait_policy)
            runs = select_runs(runs, args.only, args.eras)
            for rep in range(args.repeats):
                for label, spec in runs:
                    rec = dict(
                        spec, case=case, label=label, repeat=rep, quick=args.quick
                    )
                    if key(rec) in done:
                        continue
                    python = peer if spec["lib"] == "erasplit" else sys.executable
                    extra = {"data_cache": args.data_cache, "phases": args.phases}
                    rec.update(run_one(dict(spec, **extra), python))
                    records.append(rec)
                    with out.open("a") as f:
                        f.write(json.dumps(rec) + "\n")
                    msg = (
                        f"{rec['fit_s']:8.2f} s {rec['peak_rss_mb']:7.0f} MB"
                        if "fit_s" in rec
                        else f"FAILED {rec['error']}"
                    )
                    failed += "fit_s" not in rec
                    print(
                        f"  {case:<7} rep {rep + 1}/{args.repeats} "
                        f"{label:<22} eras={spec['n_eras']:<5} "
                        f"threads={spec.get('threads') or os.cpu_count()} {msg}",
                        file=sys.stderr,
                        flush=True,
                    )
    print(
        f"\nMedians of {args.repeats} fresh-process fits per row"
        f"{' (--quick)' if args.quick else ''}, {os.cpu_count()} CPUs, "
        "early stopping off. Ratios: median over repeats of the ratio within "
        "a repeat."
    )
    print(table(records, args.quick))
    if failed:
        print(f"{failed} fit(s) FAILED (see above)", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
