"""Invariant forests on the seed papers' synthetic tasks, and against the
``time-robust-forest`` package.

Part ``irf`` (Liao et al., section 5.2): eq. 23 classification and eq. 24
regression, d in {2, 5, 10, 20}, irf_penalty in {0, 1, 5, 10}; test accuracy,
test MSE as a ratio to the unpenalised forest, and the summed split-frequency
importance of the stable and the environmental features (the paper's
Table 3), with the paper's numbers beside ours. Forests as in the paper:
per-era bootstrap, no feature subsampling, depth 10 (classification) and 20
(regression).

Part ``trt`` (Moneda, thesis section 5.3.3): holdout AUC and fit time of
the plain forest, the time-robust settings, scikit-learn's random forest and
the ``time-robust-forest`` package (run with ``--peer-python``, the Python of
a virtual environment where it is installed; on Python 3.11 install it with
``pip install --no-deps time-robust-forest`` next to current numpy, pandas
and scikit-learn). Times are medians of ``--repeats`` fits.

Usage::

    python benchmarks/experiments/forests.py --part irf --seeds 3
    python benchmarks/experiments/forests.py --part trt \\
        --peer-python /path/to/venv/bin/python
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from time import perf_counter

import numpy as np
from sklearn.ensemble import RandomForestClassifier
from sklearn.metrics import roc_auc_score

from eraboost import InvariantForestClassifier, InvariantForestRegressor
from eraboost.datasets import (
    make_irf_classification,
    make_irf_regression,
    make_trt_example,
)

# The paper's Tables 1-3, for lambda = 0 (its RF), 1, 5, 10.
PAPER_ACCURACY = {
    2: (48.74, 50.24, 51.20, 51.06),
    5: (47.62, 52.24, 55.04, 55.12),
    10: (43.26, 51.26, 53.06, 54.94),
    20: (40.08, 52.56, 55.08, 57.42),
}
PAPER_MSE_RATIO = {
    2: (1.0, 0.982, 0.914, 0.796),
    5: (1.0, 1.015, 0.956, 0.761),
    10: (1.0, 1.022, 0.930, 0.721),
    20: (1.0, 0.990, 0.874, 0.684),
}
PAPER_IMPORTANCE = {
    ("classification", 2): ((4.25, 4.76), (6.06, 3.42), (6.44, 3.10), (6.54, 3.02)),
    ("classification", 5): ((3.84, 4.83), (5.67, 3.61), (6.25, 3.20), (6.38, 3.11)),
    ("classification", 10): ((3.22, 5.18), (5.26, 3.83), (5.86, 3.46), (6.12, 3.27)),
    ("classification", 20): ((2.84, 5.44), (5.26, 3.64), (5.70, 3.43), (5.90, 3.31)),
    ("regression", 2): ((6.54, 4.87), (6.69, 4.65), (8.15, 3.56), (9.26, 2.17)),
    ("regression", 5): ((7.52, 4.01), (7.43, 3.91), (8.75, 3.00), (9.72, 1.75)),
    ("regression", 10): ((7.95, 3.65), (7.88, 3.52), (9.12, 2.54), (10.13, 1.34)),
    ("regression", 20): ((8.31, 3.42), (8.21, 3.27), (9.54, 2.16), (10.49, 1.03)),
}
PENALTIES = (0.0, 1.0, 5.0, 10.0)


def irf_part(seeds, n_per_era, n_estimators, dims):
    for task in ("classification", "regression"):
        print(
            f"\nIRF {task} (eq. {23 if task == 'classification' else 24}): "
            f"{n_per_era} rows per training era, {n_estimators} trees, "
            f"means over {len(seeds)} seeds"
        )
        metric = "test accuracy %" if task == "classification" else "test MSE ratio"
        print(
            f"| d | penalty | {metric} | paper | stable importance | paper "
            "| environmental importance | paper | fit s |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        for d in dims:
            rows = []
            for pen in PENALTIES:
                score, stable, env, secs = [], [], [], []
                for seed in seeds:
                    if task == "classification":
                        X, y, eras, Xt, yt = make_irf_classification(
                            d=d, n_per_era=n_per_era, random_state=seed
                        )
                        est = InvariantForestClassifier(
                            n_estimators=n_estimators,
                            max_depth=10,
                            irf_penalty=pen,
                            random_state=seed,
                        )
                    else:
                        X, y, eras, Xt, yt = make_irf_regression(
                            d=d, n_per_era=n_per_era, random_state=seed
                        )
                        est = InvariantForestRegressor(
                            n_estimators=n_estimators,
                            max_depth=20,
                            irf_penalty=pen,
                            random_state=seed,
                        )
                    tic = perf_counter()
                    est.fit(X, y, eras=eras)
                    secs.append(perf_counter() - tic)
                    pred = est.predict(Xt)
                    score.append(
                        100 * np.mean(pred == yt)
                        if task == "classification"
                        else np.mean((pred - yt) ** 2)
                    )
                    imp = est.split_frequency_importances_
                    stable.append(imp[:d].sum())
                    env.append(imp[d:].sum())
                rows.append(
                    (np.mean(score), np.mean(stable), np.mean(env), np.median(secs))
                )
            for i, (pen, (s, st, en, sec)) in enumerate(zip(PENALTIES, rows)):
                p_st, p_en = PAPER_IMPORTANCE[(task, d)][i]
                if task == "classification":
                    shown, paper = f"{s:.2f}", f"{PAPER_ACCURACY[d][i]:.2f}"
                else:
                    shown = f"{s / rows[0][0]:.3f} ({s:.2f})"
                    paper = f"{PAPER_MSE_RATIO[d][i]:.3f}"
                print(
                    f"| {d} | {pen:g} | {shown} | {paper} | {st:.2f} | {p_st:.2f} "
                    f"| {en:.2f} | {p_en:.2f} | {sec:.2f} |",
                    flush=True,
                )


PEER_SCRIPT = r"""
import json, sys, time
import numpy as np, pandas as pd
from sklearn.metrics import roc_auc_score
from time_robust_forest.models import TimeForestClassifier
data = np.load(sys.argv[1])
X, y, eras, Xt, yt = (data[k] for k in ("X", "y", "eras", "Xt", "yt"))
args = json.loads(sys.argv[2])
frame = pd.DataFrame(X, columns=[f"x{i}" for i in range(X.shape[1])])
frame["period"] = eras
test = pd.DataFrame(Xt, columns=[f"x{i}" for i in range(X.shape[1])])
out = []
for r in range(args["repeats"]):
    model = TimeForestClassifier(
        n_estimators=args["n_estimators"], max_depth=args["max_depth"],
        min_sample_periods=args["min_per_era"], max_features=1.0,
        period_criterion=args["criterion"], n_jobs=args["n_jobs"],
        multi=args["n_jobs"] > 1, random_state=r)
    tic = time.perf_counter()
    model.fit(frame.copy(), y)
    fit = time.perf_counter() - tic
    auc = roc_auc_score(yt, model.predict_proba(test)[:, 1])
    out.append({"fit": fit, "auc": auc})
print(json.dumps(out))
"""


def trt_part(
    n_per_period, n_estimators, max_depth, min_per_era, repeats, peer_python, n_jobs
):
    X, y, eras, Xt, yt = make_trt_example(n_per_period=n_per_period, random_state=0)
    print(
        f"\nTRT example: {X.shape[0]} training rows in 2 periods, "
        f"{Xt.shape[0]} holdout rows in 2 later periods; {n_estimators} trees "
        f"of depth {max_depth}, {min_per_era} rows per period on each side; "
        f"median of {repeats} fits"
    )
    results = {}

    def ours(name, **kw):
        fits, aucs = [], []
        for r in range(repeats):
            est = InvariantForestClassifier(
                n_estimators=n_estimators,
                max_depth=max_depth,
                n_jobs=n_jobs,
                random_state=r,
                **kw,
            )
            tic = perf_counter()
            est.fit(X, y, eras=eras)
            fits.append(perf_counter() - tic)
            aucs.append(roc_auc_score(yt, est.predict_proba(Xt)[:, 1]))
        results[name] = (np.median(fits), np.mean(aucs))

    ours("eraboost forest, plain")
    ours(
        "eraboost forest, TRT worst period (era, alpha=-inf)",
        split_type="era",
        boltzmann_alpha=-np.inf,
        min_samples_leaf_per_era=min_per_era,
    )
    ours(
        "eraboost forest, TRT average (era, alpha=0)",
        split_type="era",
        boltzmann_alpha=0.0,
        min_samples_leaf_per_era=min_per_era,
    )
    fits, aucs = [], []
    for r in range(repeats):
        rf = RandomForestClassifier(
            n_estimators=n_estimators,
            max_depth=max_depth,
            max_features=None,
            n_jobs=n_jobs,
            random_state=r,
        )
        tic = perf_counter()
        rf.fit(X, y)
        fits.append(perf_counter() - tic)
        aucs.append(roc_auc_score(yt, rf.predict_proba(Xt)[:, 1]))
    results["scikit-learn RandomForestClassifier"] = (np.median(fits), np.mean(aucs))
    if peer_python:
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "data.npz")
            np.savez(path, X=X, y=y, eras=eras, Xt=Xt, yt=yt)
            for criterion, label in (("max", "worst period"), ("avg", "average")):
                args = {
                    "n_estimators": n_estimators,
                    "max_depth": max_depth,
                    "min_per_era": min_per_era,
                    "criterion": criterion,
                    "n_jobs": n_jobs,
                    "repeats": repeats,
                }
                proc = subprocess.run(
                    [peer_python, "-c", PEER_SCRIPT, path, json.dumps(args)],
                    capture_output=True,
                    text=True,
                    check=True,
                )
                runs = json.loads(proc.stdout.strip().splitlines()[-1])
                results[f"time-robust-forest, {label} ({criterion})"] = (
                    np.median([r["fit"] for r in runs]),
                    np.mean([r["auc"] for r in runs]),
                )
    print("| model | fit s | holdout AUC |")
    print("|---|---|---|")
    for name, (fit, auc) in results.items():
        print(f"| {name} | {fit:.3f} | {auc:.3f} |")
    peer = {k: v for k, v in results.items() if k.startswith("time-robust")}
    if peer:
        print("\n| ratio | value |")
        print("|---|---|")
        for (pname, (pfit, pauc)), oname in zip(
            peer.items(),
            (
                "eraboost forest, TRT worst period (era, alpha=-inf)",
                "eraboost forest, TRT average (era, alpha=0)",
            ),
        ):
            ofit, oauc = results[oname]
            print(
                f"| {pname} fit time / eraboost's | {pfit / ofit:.0f}x "
                f"(AUC {pauc:.3f} vs {oauc:.3f}) |"
            )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["irf", "trt", "all"], default="all")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument(
        "--rows", type=int, default=2000, help="rows per training era (irf)"
    )
    parser.add_argument("--trees", type=int, default=50, help="trees (irf)")
    parser.add_argument("--dims", default="2,5,10,20")
    parser.add_argument(
        "--trt-rows", type=int, default=10000, help="rows per period (trt)"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--peer-python", default=None)
    args = parser.parse_args()
    if args.part in ("irf", "all"):
        irf_part(
            list(range(args.seeds)),
            args.rows,
            args.trees,
            [int(d) for d in args.dims.split(",")],
        )
    if args.part in ("trt", "all"):
        trt_part(args.trt_rows, 10, 5, 10, args.repeats, args.peer_python, args.n_jobs)


if __name__ == "__main__":
    sys.exit(main())
