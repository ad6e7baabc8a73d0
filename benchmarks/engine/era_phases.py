"""Where the era criteria's extra time goes: phase times and rows histogrammed.

Fits ``original``, ``era`` and ``directional`` one after the other in one
process on ``benchmarks/peers/compare.py``'s data (the same generator, seed and
target) and prints, for each, the fit time, eraboost's verbose phase times
(histograms, split finding, applying splits) and the rows whose histograms
are built row by row per tree (the root's and each split's smaller child's;
the larger child's come from a subtraction). Time per histogrammed row separates
what the per-era machinery costs from what the trees' shape costs: the last
three columns give each criterion's fit time, histogrammed rows and
histogram time per row as ratios to ``original``'s.

Usage::

    python benchmarks/engine/era_phases.py --kind int5 \\
        --rows 1000000 --features 100 --trees 100 --leaves 31 --eras 16,256,1024
    python benchmarks/engine/era_phases.py --kind float \\
        --rows 200000 --features 50 --trees 50 --leaves 32 --eras 64

``--per-call`` also times each histogram build and each call of split
finding of the fits, by kind: dense or sparse builds, and the nodes scanned
together (``D`` dense, ``S`` sparse, ``+sub`` when the larger child's
histogram is its parent's less the smaller child's), with their calls,
microseconds a call and rows a call.

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
    from eraboost._engine._histogram import SparseHistogram
    from eraboost._engine.grower import TreeGrower
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


def size_class(n_rows, n_root):
    """A node's class by its rows: ``root``, or the power of ten at or
    below its row count (``10,000+ rows``)."""
    if n_rows >= n_root:
        return "root"
    return f"{10 ** max(len(str(max(n_rows, 1))) - 1, 0):,}+ rows"


@contextlib.contextmanager
def per_call(stats, sizes=False):
    """Time the growers' histogram builds and split-finding calls into
    ``stats`` (kind -> [calls, seconds, rows]) while in the block; with
    ``sizes``, the builds by the node's size too (:func:`size_class`)."""
    build, scan = TreeGrower._build, TreeGrower._compute_best_splits_and_push

    def add(kind, seconds, rows):
        entry = stats.setdefault(kind, [0, 0.0, 0])
        entry[0] += 1
        entry[1] += seconds
        entry[2] += rows

    def timed_build(self, node, root=False, dense=False):
        tic = time.perf_counter()
        hist = build(self, node, root, dense)
        seconds = time.perf_counter() - tic
        kind = f"build {'sparse' if isinstance(hist, SparseHistogram) else 'dense'}"
        if sizes:
            kind += f", {size_class(node.n_samples, self.root.n_samples)}"
        add(kind, seconds, node.n_samples)
        return hist

    def timed_scan(self, nodes, subtract=None):
        kind = "".join(
            sorted(
                "S" if isinstance(n.histograms, SparseHistogram) else "D" for n in nodes
            )
        )
        tic = time.perf_counter()
        out = scan(self, nodes, subtract)
        add(
            f"scan {kind}{'+sub' if subtract else ''}",
            time.perf_counter() - tic,
            sum(n.n_samples for n in nodes),
        )
        return out

    TreeGrower._build = timed_build
    TreeGrower._compute_best_splits_and_push = timed_scan
    try:
        yield stats
    finally:
        TreeGrower._build = build
        TreeGrower._compute_best_splits_and_push = scan


def cell_occupancy(estimator, X, eras, n_trees):
    """Over the smaller children of the first ``n_trees`` trees: the share
    of their per-era cells (``(eras + 1) x bins`` per feature) that hold
    rows, and the rows per cell."""
    X_binned = estimator._bin_mapper.transform(X)
    n_bins = estimator._bin_mapper.n_bins_
    n_eras = int(eras.max()) + 1
    codes = eras.astype(np.int64) * 256
    held = dense = rows = 0
    for trees in estimator._predictors[:n_trees]:
        nodes = trees[0].nodes
        members = {0: np.arange(X.shape[0])}
        todo = [0]
        while todo:
            i = todo.pop()
            node, r = nodes[i], members.pop(i)
            if node["is_leaf"]:
                continue
            left = X_binned[r, node["feature"]] <= node["bin_threshold"]
            members[node["left"]], members[node["right"]] = r[left], r[~left]
            todo += [node["left"], node["right"]]
            small = r[left] if left.sum() <= (~left).sum() else r[~left]
            for f in range(X.shape[1]):
                held += np.unique(codes[small] + X_binned[small, f]).size
                dense += (n_eras + 1) * int(n_bins[f])
            rows += small.size * X.shape[1]
    return held / dense, rows / dense


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
    ap.add_argument(
        "--cells",
        type=int,
        default=0,
        metavar="TREES",
        help="also print, for the era fit, how many of the smaller children's "
        "per-era cells hold rows over its first TREES trees (no missing values)",
    )
    ap.add_argument(
        "--per-call",
        action="store_true",
        help="also print each fit's histogram builds and split-finding calls "
        "by kind: calls, microseconds a call, rows a call",
    )
    ap.add_argument(
        "--sizes",
        action="store_true",
        help="with --per-call, the builds by node size too (root, 10,000+ "
        "rows, ...): where more threads help",
    )
    args = ap.parse_args(argv)
    calls = []

    print(
        "| eras | split_type | fit (s) | histograms (s) | split finding (s) | "
        "applying splits (s) | histogrammed rows / tree | ns / histogrammed row | "
        "fit / original | rows / original | ns per row / original |"
    )
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    cells = []
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
            stats = {}
            timing = (
                per_call(stats, args.sizes)
                if args.per_call
                else contextlib.nullcontext()
            )
            tic = time.perf_counter()
            with contextlib.redirect_stdout(out), timing:
                est.fit(X, y, eras=eras)
            fit_s = time.perf_counter() - tic
            for kind, (n, seconds, n_rows) in sorted(stats.items()):
                calls.append(
                    f"| {n_eras:,} | {split_type} | {kind} | {n:,} | {seconds:.2f} "
                    f"| {1e6 * seconds / n:.0f} | {n_rows / n:,.0f} |"
                )
            text = out.getvalue()
            t = {k: float(re.search(rx, text).group(1)) for k, rx in PHASES.items()}
            rows = histogrammed_rows(est)
            per_row = 1e9 * t["histograms"] / max(rows, 1)
            if split_type == "original":
                ref = (fit_s, rows, per_row)
            print(
                f"| {n_eras:,} | {split_type} | {fit_s:.2f} | {t['histograms']:.2f} "
                f"| {t['splits']:.2f} | {t['apply']:.2f} "
                f"| {rows / est.n_iter_:,.0f} | {per_row:.0f} "
                f"| {fit_s / ref[0]:.2f}x | {rows / max(ref[1], 1):.2f}x "
                # n/a: original's histograms took under the verbose
                # output's millisecond
                f"| {f'{per_row / ref[2]:.2f}x' if ref[2] > 0 else 'n/a'} |",
                flush=True,
            )
            if args.cells and split_type == "era":
                share, per_cell = cell_occupancy(est, X, eras, args.cells)
                cells.append(
                    f"{n_eras:,} eras, `era`, first {args.cells} trees: the "
                    f"smaller children's rows fall in {share:.1%} of their "
                    f"per-era cells ({per_cell:.2f} rows per cell)"
                )
    for line in cells:
        print(line)
    if calls:
        print()
        print("| eras | split_type | kind | calls | s | us / call | rows / call |")
        print("|---:|---|---|---:|---:|---:|---:|")
        for line in calls:
            print(line)


if __name__ == "__main__":
    main()
