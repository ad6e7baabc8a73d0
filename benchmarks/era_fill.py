"""The per-era histograms of one tree's nodes, alone.

Fits ``--trees`` trees under ``era`` on ``compare.py``'s data (the same
generator), takes the next tree's nodes (rows grouped by era, as the grower
keeps them), then times ``HistogramBuilder.compute_brute`` over the nodes the
grower gives dense histograms (each into a buffer of its own, as the
grower's), from the binned matrix stored by rows and by columns, on one
thread (``--threads``: more). Prints the best time of each layout over the repeats
and checks that both give the same bytes at every node (and says whether
the builds of ``--against`` do).

Compare two builds by running it with each on ``PYTHONPATH``, in turn::

    python benchmarks/era_fill.py --kind int5 --rows 200000 --features 50 \\
        --eras 1024
    python benchmarks/era_fill.py --kind float --rows 200000 --features 50 \\
        --eras 64 --layouts columns

or, where single processes vary more than the difference (a shared
machine), in one process: ``--against DIR`` loads the histogram module of
another build (installed with ``pip install --target DIR .``) beside the
imported one, and the builds fill the same nodes in turn, repeat after
repeat; the median of the ratios of each repeat is printed::

    pip install --no-build-isolation --target /tmp/before .   # at the old commit
    python benchmarks/era_fill.py --eras 256 --layouts rows --repeats 20 \\
        --against /tmp/before
"""

import argparse
import sys
import time

import numpy as np
from _builds import add_against_option, load_engine_module
from _data import add_data_options
from scan_bounds import dense_nodes

try:
    from eraboost._engine import _histogram
except ImportError as exc:  # pragma: no cover - a broken install
    sys.exit(f"cannot import eraboost: {exc}")

# the grower's threshold of dense histograms (grower.SPARSE_ROWS_PER_CELL)
SPARSE_ROWS_PER_CELL = 0.25


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_options(parser)
    parser.add_argument("--layouts", default="rows,columns")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="the builder's")
    add_against_option(parser)
    args = parser.parse_args(argv)
    layouts = args.layouts.split(",")
    builds = {"this build": _histogram}
    for i, directory in enumerate(args.against):
        builds[directory] = load_engine_module(
            directory, "_histogram", f"_era_fill_build{i}"
        )

    est, Xb, era, g, nodes = dense_nodes(
        args.kind, args.rows, args.features, args.eras, args.trees, args.leaves
    )
    block_bins = (est._bin_mapper.n_bins_ - 1).astype(np.uint32)  # no NaN
    h = np.ones(1, dtype=np.float32)
    features = np.arange(args.features, dtype=np.uint32)
    cells = float((block_bins * (args.eras + 1)).mean())
    work = [rows for rows in nodes if len(rows) >= SPARSE_ROWS_PER_CELL * cells]
    times, hists, ratios = {}, {}, {}
    for layout in layouts:
        X = np.ascontiguousarray(Xb) if layout == "rows" else np.asfortranarray(Xb)
        runs = {}
        for name, module in builds.items():
            offsets = module.histogram_layout(block_bins, args.eras)
            builder = module.HistogramBuilder(
                X, block_bins, offsets, args.eras, era, g, h, args.threads
            )
            # a buffer for each node, as the grower's: out of cache when filled
            runs[name] = (builder, [builder.empty() for _ in work], [])
        for _ in range(args.repeats):
            for builder, outs, spent in runs.values():
                tic = time.perf_counter()
                for rows, out in zip(work, outs):
                    builder.compute_brute(rows, out, features)
                spent.append(time.perf_counter() - tic)
        for name, (_, outs, spent) in runs.items():
            times[layout, name] = min(spent)
            hists[layout, name] = [out.tobytes() for out in outs]
            ratios[layout, name] = float(
                np.median(np.array(spent) / np.array(runs["this build"][2]))
            )
        del runs
    first = hists[layouts[0], "this build"]
    same = all(hists[layout, "this build"] == first for layout in layouts)
    n_rows = sum(len(rows) for rows in work)
    print(
        f"{len(work)} dense nodes of tree {args.trees + 1} ({n_rows:,} rows), "
        f"{args.kind}, {args.eras} eras"
    )
    for layout, name in times:
        ns = times[layout, name] / max(n_rows * args.features, 1) * 1e9
        line = (
            f"stored by {layout}: {times[layout, name] * 1e3:.1f} ms "
            f"({ns:.2f} ns a cell)"
        )
        if len(builds) > 1:
            line = (
                f"{name}, {line}; median over the repeats of its time over "
                f"this build's: {ratios[layout, name]:.3f}"
            )
        print(line)
    print(f"same bytes: {same}")
    for name in list(builds)[1:]:
        alike = all(hists[layout, name] == first for layout in layouts)
        # a build may change a sum's order on purpose: said, not an error
        print(f"{name} gave the same bytes as this build: {alike}")
    if not same:
        raise SystemExit("the layouts gave different histograms")
    if len(builds) == 1:
        times = {layout: times[layout, "this build"] for layout in layouts}
    return {"nodes": len(work), "times": times, "same": same, "ratios": ratios}


if __name__ == "__main__":
    main()
