"""The per-era histograms of one tree's nodes, alone.

Fits ``--trees`` trees under ``era`` on ``compare.py``'s data (the same
generator), takes the next tree's nodes (rows grouped by era, as the grower
keeps them), then times ``HistogramBuilder.compute_brute`` over the nodes the
grower gives dense histograms (each into a buffer of its own, as the
grower's), from the binned matrix stored by rows and by columns, one
thread. Prints the best time of each layout over the repeats
and checks that both give the same bytes at every node.

Compare two builds by running it with each on ``PYTHONPATH``, in turn::

    python benchmarks/era_fill.py --kind int5 --rows 200000 --features 50 \\
        --eras 1024
    python benchmarks/era_fill.py --kind float --rows 200000 --features 50 \\
        --eras 64 --layouts columns
"""

import argparse
import sys
import time

import numpy as np
from scan_bounds import dense_nodes

try:
    from eraboost._engine._histogram import HistogramBuilder, histogram_layout
except ImportError as exc:  # pragma: no cover - a broken install
    sys.exit(f"cannot import eraboost: {exc}")

# the grower's threshold of dense histograms (grower.SPARSE_ROWS_PER_CELL)
SPARSE_ROWS_PER_CELL = 0.25


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=["int5", "float"], default="int5")
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--features", type=int, default=50)
    parser.add_argument("--eras", type=int, default=256)
    parser.add_argument("--trees", type=int, default=10)
    parser.add_argument("--leaves", type=int, default=31)
    parser.add_argument("--layouts", default="rows,columns")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    layouts = args.layouts.split(",")

    est, Xb, era, g, nodes = dense_nodes(
        args.kind, args.rows, args.features, args.eras, args.trees, args.leaves
    )
    block_bins = (est._bin_mapper.n_bins_ - 1).astype(np.uint32)  # no NaN
    offsets = histogram_layout(block_bins, args.eras)
    h = np.ones(1, dtype=np.float32)
    features = np.arange(args.features, dtype=np.uint32)
    cells = float((block_bins * (args.eras + 1)).mean())
    work = [rows for rows in nodes if len(rows) >= SPARSE_ROWS_PER_CELL * cells]
    times, hists = {}, {}
    for layout in layouts:
        X = np.ascontiguousarray(Xb) if layout == "rows" else np.asfortranarray(Xb)
        builder = HistogramBuilder(X, block_bins, offsets, args.eras, era, g, h, 1)
        # a buffer for each node, as the grower's: out of cache when filled
        outs = [builder.empty() for _ in work]
        best = np.inf
        for _ in range(args.repeats):
            tic = time.perf_counter()
            for rows, out in zip(work, outs):
                builder.compute_brute(rows, out, features)
            best = min(best, time.perf_counter() - tic)
        times[layout] = best
        hists[layout] = [out.tobytes() for out in outs]
        del outs
    same = all(hists[layout] == hists[layouts[0]] for layout in layouts)
    n_rows = sum(len(rows) for rows in work)
    print(
        f"{len(work)} dense nodes of tree {args.trees + 1} ({n_rows:,} rows), "
        f"{args.kind}, {args.eras} eras"
    )
    for layout in layouts:
        ns = times[layout] / max(n_rows * args.features, 1) * 1e9
        print(f"stored by {layout}: {times[layout] * 1e3:.1f} ms ({ns:.2f} ns a cell)")
    print(f"same bytes: {same}")
    if not same:
        raise SystemExit("the layouts gave different histograms")
    return {"nodes": len(work), "times": times, "same": same}


if __name__ == "__main__":
    main()
