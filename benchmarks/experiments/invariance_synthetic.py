"""The seed papers' synthetic tasks for irf_penalty and min_samples_leaf_per_era.

IRF (Liao et al., section 5.2, eq. 24): for d in {2, 5, 10, 20} and
irf_penalty in {0, 1, 5, 10}, the share of splits on the environmental
features X2 (by count, and weighted by node share as the paper's Table 3),
and the test MSE as a ratio to irf_penalty=0, means over seeds. Two models:
a booster (100 trees of 15 leaves) and one deep tree (depth 20, as the
paper's forest trees).

TRT (Moneda, section 5.3.3): holdout AUC of one deep tree and of a booster,
plain against the time-robust settings (split_type='era' with alpha -inf or
0, min_samples_leaf_per_era=10).

``--irf-variance difference`` runs the IRF table with the penalty on the
children's difference (docs/criteria.md, "The children's difference");
``--part irf`` or ``--part trt`` runs one table.

Usage: python benchmarks/experiments/invariance_synthetic.py [--seeds 5]
"""

import argparse

import numpy as np
from sklearn.metrics import roc_auc_score

from eraboost import HistGradientBoostingRegressor
from eraboost.datasets import make_irf_regression, make_trt_example
from eraboost.inspection import split_feature_shares

MODELS = {
    "booster": {"max_iter": 100, "max_leaf_nodes": 15, "learning_rate": 0.1},
    "deep tree": {
        "max_iter": 1,
        "learning_rate": 1.0,
        "max_depth": 20,
        "max_leaf_nodes": None,
        "min_samples_leaf": 5,
    },
}


def irf_table(seeds, n_per_era, irf_variance="change"):
    print(
        f"IRF eq. 24: {n_per_era} rows per training era, irf_variance="
        f"{irf_variance!r}, means over {len(seeds)} seeds"
    )
    print(
        "| model | d | penalty | X2 share (splits) | X2 share (node-weighted) "
        "| test MSE | MSE ratio to penalty 0 |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, params in MODELS.items():
        for d in (2, 5, 10, 20):
            rows = {}
            for pen in (0.0, 1.0, 5.0, 10.0):
                shares, wshares, mses = [], [], []
                for seed in seeds:
                    X, y, eras, Xt, yt = make_irf_regression(
                        d=d, n_per_era=n_per_era, random_state=seed
                    )
                    est = HistGradientBoostingRegressor(
                        irf_penalty=pen,
                        irf_variance=irf_variance,
                        early_stopping=False,
                        random_state=seed,
                        **params,
                    ).fit(X, y, eras=eras)
                    shares.append(split_feature_shares(est)[d:].sum())
                    wshares.append(split_feature_shares(est, weighted=True)[d:].sum())
                    mses.append(np.mean((est.predict(Xt) - yt) ** 2))
                rows[pen] = (np.mean(shares), np.mean(wshares), np.mean(mses))
            for pen, (s, w, m) in rows.items():
                print(
                    f"| {name} | {d} | {pen:g} | {s:.3f} | {w:.3f} | {m:.2f} "
                    f"| {m / rows[0.0][2]:.3f} |",
                    flush=True,
                )


def trt_table(seeds, n_per_period):
    print(
        f"\nTRT example: {n_per_period} rows per period, 2 training periods, "
        f"2 holdout periods; holdout AUC, mean over {len(seeds)} seeds"
    )
    settings = {
        "plain": {},
        "TRT worst period (era, alpha=-inf, 10 per era)": {
            "split_type": "era",
            "boltzmann_alpha": -np.inf,
            "min_samples_leaf_per_era": 10,
        },
        "TRT average (era, alpha=0, 10 per era)": {
            "split_type": "era",
            "boltzmann_alpha": 0.0,
            "min_samples_leaf_per_era": 10,
        },
    }
    models = {
        "deep tree": {
            "max_iter": 1,
            "learning_rate": 1.0,
            "max_depth": 30,
            "max_leaf_nodes": None,
            "min_samples_leaf": 10,
        },
        "booster": {"max_iter": 30, "max_leaf_nodes": 8, "learning_rate": 0.1},
    }
    print("| model | settings | holdout AUC |")
    print("|---|---|---|")
    for mname, mparams in models.items():
        for sname, sparams in settings.items():
            aucs = []
            for seed in seeds:
                X, y, eras, Xt, yt = make_trt_example(
                    n_per_period=n_per_period, random_state=seed
                )
                est = HistGradientBoostingRegressor(
                    early_stopping=False, random_state=seed, **mparams, **sparams
                )
                est.fit(X, y, eras=eras)
                aucs.append(roc_auc_score(yt, est.predict(Xt)))
            print(f"| {mname} | {sname} | {np.mean(aucs):.3f} |", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--rows", type=int, default=2000)
    parser.add_argument(
        "--irf-variance", choices=("change", "difference"), default="change"
    )
    parser.add_argument("--part", choices=("irf", "trt", "all"), default="all")
    args = parser.parse_args()
    seeds = list(range(args.seeds))
    if args.part in ("irf", "all"):
        irf_table(seeds, args.rows, args.irf_variance)
    if args.part in ("trt", "all"):
        trt_table(seeds, args.rows)


if __name__ == "__main__":
    main()
