"""Fit time and peak memory: scikit-learn vs eraboost, side by side.

Each fit runs in a fresh Python process (so peak RSS is that fit's), the
estimators take turns run after run, and the table reports medians and the
ratio to scikit-learn. Usage::

    OMP_WAIT_POLICY=passive python benchmarks/compare_sklearn.py --repeats 5

``--quick`` runs smaller data for a smoke test.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

DATASETS = {
    "float": dict(n=200_000, p=50, kind="float", n_eras=64),
    "int5": dict(n=200_000, p=50, kind="int5", n_eras=64),
}

ESTIMATORS = {
    "sklearn": ("sklearn", {}),
    "eraboost original": ("eraboost", {"split_type": "original"}),
    "eraboost era": ("eraboost", {"split_type": "era"}),
    "eraboost directional": ("eraboost", {"split_type": "directional"}),
}

CHILD = r"""
import json, resource, sys, time
import numpy as np
spec = json.loads(sys.argv[1])
rng = np.random.RandomState(0)
n, p = spec["n"], spec["p"]
if spec["kind"] == "float":
    X = rng.normal(size=(n, p))
    y = X[:, 0] + np.sin(X[:, 1]) + rng.normal(size=n)
else:
    X = rng.randint(0, 5, size=(n, p)).astype(np.int8)
    y = X[:, 0] - 0.5 * X[:, 1] * X[:, 2] + rng.normal(size=n)
eras = np.repeat(np.arange(spec["n_eras"]), -(-n // spec["n_eras"]))[:n]
params = dict(max_iter=spec["max_iter"], early_stopping=False, random_state=0)
if spec["lib"] == "sklearn":
    from sklearn.ensemble import HistGradientBoostingRegressor
    est = HistGradientBoostingRegressor(**params)
    fit = lambda: est.fit(X, y)
else:
    from eraboost import HistGradientBoostingRegressor
    est = HistGradientBoostingRegressor(**params, **spec["extra"])
    fit = lambda: est.fit(X, y, eras=eras)
t = time.perf_counter()
fit()
t = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"fit_s": t, "peak_rss_mb": rss}))
"""


def run_one(spec):
    env = dict(os.environ, OMP_WAIT_POLICY="passive")
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(spec)],
                         capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--max-iter", type=int, default=100)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--datasets", default=",".join(DATASETS))
    args = ap.parse_args(argv)
    results = {}
    for dname in args.datasets.split(","):
        data = dict(DATASETS[dname])
        if args.quick:
            data["n"] = 20_000
        for r in range(args.repeats):
            for ename, (lib, extra) in ESTIMATORS.items():
                spec = dict(data, lib=lib, extra=extra, max_iter=args.max_iter)
                res = run_one(spec)
                results.setdefault((dname, ename), []).append(res)
                print(f"  run {r + 1}/{args.repeats} {dname:<6} {ename:<22} "
                      f"{res['fit_s']:7.2f} s {res['peak_rss_mb']:7.0f} MB",
                      file=sys.stderr, flush=True)
    print(f"\nmedian of {args.repeats} fresh-process fits, max_iter={args.max_iter}, "
          f"31 leaves, early stopping off, {os.cpu_count()} CPUs\n")
    print("| data | estimator | fit (s) | vs sklearn | vs original | peak RSS (MB) | RSS vs sklearn |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for dname in args.datasets.split(","):
        d = DATASETS[dname]
        n = 20_000 if args.quick else d["n"]
        label = f"{n:,} x {d['p']} {d['kind']}, {d['n_eras']} eras"
        med = {e: (statistics.median(x["fit_s"] for x in results[(dname, e)]),
                   statistics.median(x["peak_rss_mb"] for x in results[(dname, e)]))
               for e in ESTIMATORS}
        for e in ESTIMATORS:
            t, m = med[e]
            vs_orig = (f"{t / med['eraboost original'][0]:.2f}x"
                       if e.startswith("eraboost") else "")
            print(f"| {label} | {e} | {t:.2f} | {t / med['sklearn'][0]:.2f}x | "
                  f"{vs_orig} | {m:.0f} | {m / med['sklearn'][1]:.2f}x |")


if __name__ == "__main__":
    main()
