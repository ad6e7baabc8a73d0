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

    python benchmarks/engine/era_fill.py --kind int5 --rows 200000 --features 50 \\
        --eras 1024
    python benchmarks/engine/era_fill.py --kind float --rows 200000 --features 50 \\
        --eras 64 --layouts columns

``--pooled`` times, instead, each dense node's per-era build against a
pooled build of the same rows (a builder without eras: what ``original``
pays for the node), node by node, the best time of each over the repeats,
and prints them by node size (rows per per-era cell of a feature): what
the per-era cells add to a node, from rows that both builds read::

    python benchmarks/engine/era_fill.py --eras 256 --layouts rows --pooled \
        --repeats 20

or, where single processes vary more than the difference (a shared
machine), in one process: ``--against DIR`` loads the histogram module of
another build (installed with ``pip install --target DIR .``) beside the
imported one, and the builds fill the same nodes in turn, repeat after
repeat; the median of the ratios of each repeat is printed::

    pip install --no-build-isolation --target /tmp/before .   # at the old commit
    python benchmarks/engine/era_fill.py --eras 256 --layouts rows --repeats 20 \\
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

# the builder's threshold of dense histograms (HistogramBuilder.build)
SPARSE_ROWS_PER_CELL = _histogram.SPARSE_ROWS_PER_CELL


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_options(parser)
    parser.add_argument("--layouts", default="rows,columns")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1, help="the builder's")
    parser.add_argument(
        "--pooled",
        action="store_true",
        help="each node's per-era build against a pooled build of its rows",
    )
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
    if args.pooled:
        return against_pooled(args, layouts, Xb, era, g, h, work, block_bins, cells)
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


# node sizes, in rows per per-era cell of a feature (--pooled)
SIZE_EDGES = (0.25, 1, 4, 16, 64)


def against_pooled(args, layouts, Xb, era, g, h, work, block_bins, cells):
    """--pooled: each node's per-era build against a pooled build of the
    same rows, the best time of each node over the repeats, the two
    builds in turn node after node; printed by node size."""
    features = np.arange(args.features, dtype=np.uint32)
    sizes = np.array([len(rows) / cells for rows in work])
    edges = (*SIZE_EDGES, np.inf)
    result = {}
    for layout in layouts:
        X = np.ascontiguousarray(Xb) if layout == "rows" else np.asfortranarray(Xb)
        builders = {}
        for name, n_eras in (("eras", args.eras), ("pooled", 1)):
            offsets = _histogram.histogram_layout(block_bins, n_eras)
            builder = _histogram.HistogramBuilder(
                X,
                block_bins,
                offsets,
                n_eras,
                era if n_eras > 1 else None,
                g,
                h,
                args.threads,
            )
            builders[name] = (builder, [builder.empty() for _ in work])
        best = {name: np.full(len(work), np.inf) for name in builders}
        for _ in range(args.repeats):
            for i, rows in enumerate(work):
                for name, (builder, outs) in builders.items():
                    tic = time.perf_counter()
                    builder.compute_brute(rows, outs[i], features)
                    best[name][i] = min(best[name][i], time.perf_counter() - tic)
        print(
            f"{len(work)} dense nodes of tree {args.trees + 1}, {args.kind}, "
            f"{args.eras} eras, stored by {layout}, {args.threads} thread(s); "
            f"best of {args.repeats}"
        )
        print(
            "| rows per per-era cell | nodes | rows a node | per-era build (us) "
            "| pooled build (us) | per-era / pooled | added a node (us) |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|")
        lo = SIZE_EDGES[0]
        for hi in edges[1:]:
            sel = (sizes >= lo) & (sizes < hi)
            if sel.any():
                k = int(sel.sum())
                t_e, t_p = best["eras"][sel].sum(), best["pooled"][sel].sum()
                n_rows = sum(len(rows) for rows, s in zip(work, sel) if s)
                print(
                    f"| {lo:g} to {hi:g} | {k} | {n_rows // k:,} | "
                    f"{t_e / k * 1e6:,.0f} | {t_p / k * 1e6:,.0f} | "
                    f"{t_e / t_p:.2f} | {(t_e - t_p) / k * 1e6:,.0f} |"
                )
            lo = hi
        total = best["eras"].sum() / best["pooled"].sum()
        print(f"all nodes: per-era / pooled {total:.2f}")
        same = all(
            same_pooled(builders["eras"], builders["pooled"], i, args.features)
            for i in range(len(work))
        )
        print(f"the per-era builds' pooled sums match the pooled builds: {same}")
        if not same:
            raise SystemExit("the per-era and the pooled builds disagree")
        result[layout] = total
    return {"nodes": len(work), "pooled": result}


def same_pooled(eras, pooled, i, n_features):
    """Whether node i's per-era histograms (their pooled cells) and its
    pooled ones hold the same rows in every bin, and gradient sums equal
    but for the order of the additions."""
    (b_e, outs_e), (b_p, outs_p) = eras, pooled
    for f in range(n_features):
        e, p = b_e.block(outs_e[i], f), b_p.block(outs_p[i], f)
        if not np.array_equal(e["n"][-1], p["n"][0]):
            return False
        if not np.allclose(e["g"][-1], p["g"][0], rtol=1e-9, atol=1e-9):
            return False
    return True


if __name__ == "__main__":
    main()
