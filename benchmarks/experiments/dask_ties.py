"""How often a Dask fit's trees leave the single machine's (issue 61).

The workers sum their eras' parts and the driver adds the workers' sums:
the same numbers added in another order, equal to within about 1e-16 of
their size. Where two candidates' scores tie in exact arithmetic, that
rounding can turn the tie (docs/distributed.md, "The same model"). This
script fits ``--seeds`` tables of the Dask tests' kind (``--rows`` x
``--features`` normal features with 5% missing values, ``--eras`` eras
drawn per row, an effect whose sign flips in a third of the eras) with each
setting, on a ``LocalCluster`` of ``--workers`` worker processes with
chunks that cut through eras, and on one machine, and counts:

* the fits whose trees are all identical (splits and structure);
* the nodes compared, up to and including the first tree that differs,
  and the nodes whose split differs there.

Usage::

    python benchmarks/experiments/dask_ties.py --seeds 20
"""

import argparse
import logging
import warnings

import numpy as np

SETTINGS = {
    "era": dict(split_type="era"),
    "era, alpha 1": dict(split_type="era", boltzmann_alpha=1.0),
    "directional": dict(split_type="directional"),
    "original": dict(split_type="original"),
    "classifier, 3 classes, era": dict(split_type="era", classes=3),
}
FIELDS = ("feature", "bin_threshold", "missing_left", "is_leaf", "left", "right")


def table_of(seed, n, p, n_eras, n_classes):
    rng = np.random.RandomState(seed)
    eras = rng.randint(0, n_eras, n)
    X = rng.normal(size=(n, p))
    X[rng.rand(n, p) < 0.05] = np.nan
    sign = np.where(eras % 3 == 0, -1.0, 1.0)
    y = sign * np.nan_to_num(X[:, 0]) + 0.5 * np.nan_to_num(X[:, 1])
    y = y + rng.normal(size=n)
    if n_classes:
        y = np.digitize(y, np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y, eras


def compare(a, b):
    """(identical, nodes compared, nodes differing) of two fits' trees, up
    to the first tree that differs."""
    compared = differing = 0
    for stage_a, stage_b in zip(a._predictors, b._predictors):
        for ta, tb in zip(stage_a, stage_b):
            na, nb = ta.nodes, tb.nodes
            if na.shape != nb.shape:
                m = min(na.shape[0], nb.shape[0])
                compared += max(na.shape[0], nb.shape[0])
                differing += abs(na.shape[0] - nb.shape[0])
                na, nb = na[:m], nb[:m]
            else:
                compared += na.shape[0]
            same = np.ones(na.shape[0], dtype=bool)
            for field in FIELDS:
                same &= na[field] == nb[field]
            differing += int((~same).sum())
            if differing:
                return False, compared, differing
    return True, compared, differing


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--rows", type=int, default=3000)
    ap.add_argument("--features", type=int, default=10)
    ap.add_argument("--eras", type=int, default=20)
    ap.add_argument("--trees", type=int, default=5)
    ap.add_argument("--leaves", type=int, default=31)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    logging.getLogger("distributed").setLevel(logging.ERROR)
    import dask.array as da
    from distributed import Client, LocalCluster

    from eraboost import HistGradientBoostingClassifier, HistGradientBoostingRegressor
    from eraboost.dask import (
        DaskHistGradientBoostingClassifier,
        DaskHistGradientBoostingRegressor,
    )

    rows = [
        "| setting | fits | identical | nodes compared | nodes differing |",
        "|---|---:|---:|---:|---:|",
    ]
    with (
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        for label, setting in SETTINGS.items():
            setting = dict(setting)
            n_classes = setting.pop("classes", 0)
            same = compared = differing = 0
            for seed in range(args.seeds):
                X, y, eras = table_of(
                    seed, args.rows, args.features, args.eras, n_classes
                )
                params = dict(
                    max_iter=args.trees,
                    max_leaf_nodes=args.leaves,
                    early_stopping=False,
                    random_state=seed,
                    **setting,
                )
                chunk = args.rows // (2 * args.workers) + 1
                dX = da.from_array(X, chunks=(chunk, -1))
                dy = da.from_array(y, chunks=chunk)
                de = da.from_array(eras, chunks=chunk)
                if n_classes:
                    local = HistGradientBoostingClassifier(**params)
                    dist = DaskHistGradientBoostingClassifier(client=client, **params)
                else:
                    local = HistGradientBoostingRegressor(**params)
                    dist = DaskHistGradientBoostingRegressor(client=client, **params)
                local.fit(X, y, eras=eras)
                dist.fit(dX, dy, eras=de)
                ok, c, d = compare(dist.to_local(), local)
                same += ok
                compared += c
                differing += d
            rows.append(
                f"| {label} | {args.seeds} | {same} | {compared:,} | {differing:,} |"
            )
            print(rows[-1], flush=True)
    print(
        f"\n{args.rows:,} x {args.features}, {args.eras} eras, {args.trees} trees "
        f"of {args.leaves} leaves, {args.workers} workers\n"
    )
    print("\n".join(rows))


if __name__ == "__main__":
    main()
