"""Where the era criteria's extra time goes: phase times and rows histogrammed.

Fits ``original``, ``era`` and ``directional`` one after the other in one
process on ``benchmarks/compare.py``'s data (the same generator, seed and
target) and prints, for each, the fit time, eraboost's verbose phase times
(histograms, split finding, applying splits) and the rows whose histograms
are built row by row per tree (the root's and each split's smaller child's;
the larger child's come from a subtraction). Time per histogrammed row separates
what the per-era machinery costs from what the trees' shape costs.

Usage::

    OMP_WAIT_POLICY=passive python benchmarks/era_phases.py --kind int5 \\
        --rows 1000000 --features 100 --trees 100 --leaves 31 --eras 16,256,1024
    OMP_WAIT_POLICY=passive python benchmarks/era_phases.py --kind float \\
        --rows 200000 --features 50 --trees 50 --leaves 32 --eras 64

One process, one fit each: read the phase shares, not small differences in
seconds (``compare.py`` gives the fit-time ratios, in fresh processes).
"""

import argparse
import contextlib
import io
import re
import sys
import time

import numpy as np
from _data import make_data

try:
    from eraboost import HistGradientBoostingRegressor
except ImportError as exc:  # pragma: no cover - a broken install
    sys.exit(f"cannot import eraboost: {exc}")

PHASES = {
    "histograms": r"computing histograms:\s*([0-9.]+)s",
    "splits": r"finding best splits:\s*([0-9.]+)s",
    "apply": r"applying splits:\s*([0-9.]+)s",
}


def histogrammed_rows(estimator):
    """Rows whose histograms are built row by row, summed over the trees:
    the root's and the smaller child's of every split."""
    total = 0
    for trees in estimator._predictors:
        for predictor in trees:
            nodes = predictor.nodes
            total += int(nodes["count"][0])
            split = nodes[~nodes["is_leaf"].astype(bool)]
            left = nodes["count"][split["left"]].astype(np.int64)
            right = nodes["count"][split["right"]].astype(np.int64)
            total += int(np.minimum(left, right).sum())
    return total


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--kind", choices=["int5", "float"], default="int5")
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--features", type=int, default=50)
    ap.add_argument("--trees", type=int, default=50)
    ap.add_argument("--leaves", type=int, default=32)
    ap.add_argument("--eras", default="256,1024")
    ap.add_argument("--max-bins", type=int, default=255)
    args = ap.parse_args(argv)

    print(
        "| eras | split_type | fit (s) | histograms (s) | split finding (s) | "
        "applying splits (s) | histogrammed rows / tree | ns / histogrammed row |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for n_eras in (int(e) for e in args.eras.split(",")):
        X, y, eras = make_data(args.kind, args.rows, args.features, n_eras)
        for split_type in ("original", "era", "directional"):
            est = HistGradientBoostingRegressor(
                max_iter=args.trees,
                max_leaf_nodes=args.leaves,
                max_bins=args.max_bins,
                early_stopping=False,
                random_state=0,
                split_type=split_type,
                verbose=1,
            )
            out = io.StringIO()
            tic = time.perf_counter()
            with contextlib.redirect_stdout(out):
                est.fit(X, y, eras=eras)
            fit_s = time.perf_counter() - tic
            text = out.getvalue()
            t = {k: float(re.search(rx, text).group(1)) for k, rx in PHASES.items()}
            rows = histogrammed_rows(est)
            per_row = 1e9 * t["histograms"] / max(rows, 1)
            print(
                f"| {n_eras:,} | {split_type} | {fit_s:.2f} | {t['histograms']:.2f} "
                f"| {t['splits']:.2f} | {t['apply']:.2f} "
                f"| {rows / est.n_iter_:,.0f} | {per_row:.0f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
