"""Split finding alone, with and without the bounds of blocks of candidates
(or the scans by gain sums alone).

Fits ``--trees`` trees under ``era`` on ``compare.py``'s data (the same
generator), takes the next tree's nodes and their gradients at that point,
builds each dense node's histograms once, then times
``Splitter.find_node_split`` over those nodes with the bounds of
docs/criteria.md ("A bound over a block of candidates") off and on, in turn,
and checks that both find the same split at every node. Prints the best
time of each over the repeats, their ratio and the blocks skipped.

``--against DIR`` (repeatable) times this build's scans and those of the
build installed in DIR (``pip install --target DIR .``), each with its
defaults, in turn in this process, and prints the median of the ratios of
each repeat and whether the builds find the same splits.

``--compare gain-sums`` turns the scans by the candidates' gain sums alone
(``Splitter.gain_sums``: ``era`` with alpha 0, features of up to 9 bins)
off and on instead, the bounds on. ``--sparse`` takes the nodes the grower
gives sparse histograms instead (from 40 rows up to a quarter of a
feature's per-era cells) with those histograms: the bounds switch then
turns the screening of their candidates by a running sum of the gains
(``Splitter._sum_below``) off and on. ``--in-cache`` reads each node's
histogram just before its scan, as the fits scan it right after building
it, and times the scans alone.

Usage::

    python benchmarks/engine/scan_bounds.py --kind float --rows 30000 --features 10 \\
        --eras 20 --split-type era
    python benchmarks/engine/scan_bounds.py --kind int5 --rows 200000 --features 50 \\
        --eras 256 --split-type directional
    python benchmarks/engine/scan_bounds.py --kind int5 --rows 200000 --features 50 \\
        --eras 1024 --compare gain-sums --in-cache --repeats 15
    python benchmarks/engine/scan_bounds.py --kind int5 --rows 200000 --features 50 \\
        --eras 256 --in-cache --repeats 20 --against /tmp/before
    python benchmarks/engine/scan_bounds.py --kind float --rows 30000 --features 10 \\
        --eras 20 --sparse --repeats 30 --against /tmp/before

One thread (the scan's own threads are measured by the fits).
"""

import argparse
import sys
import time

import numpy as np
from _builds import add_against_option, load_engine_module
from _data import add_data_options, make_data

try:
    from eraboost import HistGradientBoostingRegressor
    from eraboost._engine._common import SPLIT_TYPES
    from eraboost._engine._histogram import (
        HistogramBuilder,
        SparseHistogram,
        histogram_layout,
    )
    from eraboost._engine._splitting import Splitter
except ImportError as exc:  # pragma: no cover - a broken install
    sys.exit(f"cannot import eraboost: {exc}")


def dense_nodes(kind, rows, features, eras, trees, leaves):
    """The binned data, the eras, the gradients before tree ``trees`` and
    that tree's node rows (rows grouped by era, as the grower keeps them)."""
    X, y, era = make_data(kind, rows, features, eras)
    est = HistGradientBoostingRegressor(
        max_iter=trees + 1,
        max_leaf_nodes=leaves,
        early_stopping=False,
        random_state=0,
        split_type="era",
    ).fit(X, y, eras=era)
    Xb = np.asfortranarray(est._bin_mapper.transform(X))
    pred = list(est.staged_predict(X))[trees - 1]
    g = (pred - y).astype(np.float32)
    tree = est._predictors[trees][0].nodes
    nodes, stack = [], [(np.argsort(era, kind="stable").astype(np.uint32), 0)]
    while stack:
        node_rows, i = stack.pop()
        nodes.append(node_rows)
        if not tree[i]["is_leaf"]:
            left = Xb[node_rows, tree[i]["feature"]] <= tree[i]["bin_threshold"]
            stack += [
                (node_rows[left], tree[i]["left"]),
                (node_rows[~left], tree[i]["right"]),
            ]
    return est, Xb, era.astype(np.int32), g, nodes


def skips(splitter, sparse):
    """What the bounds saved so far: the candidates screened out of the
    sparse scans, or the blocks skipped by the dense ones."""
    return splitter.candidates_screened if sparse else splitter.blocks_skipped


def make_splitter(splitter_class, n_bins, offsets, args):
    """A splitter of ``args``'s criterion, one thread, no options."""
    p = args.features
    return splitter_class(
        n_bins,
        offsets,
        args.eras,
        np.zeros(p, np.uint8),
        np.zeros(p, np.int8),
        SPLIT_TYPES[args.split_type],
        args.alpha,
        0.0,
        1e-3,
        20,
        True,
        1,
    )


def touch(hist):
    """Read a node's histogram, dense (a buffer) or sparse (its arrays)."""
    if isinstance(hist, SparseHistogram):
        for array in (hist.start, hist.pooled_g, hist.pooled_n, hist.era, hist.g):
            array.max()
    else:
        hist.max()


def node_histograms(builder, nodes, g, features, cells, sparse):
    """(rows, histogram, G, H) of the nodes the grower gives dense
    histograms (at least a quarter of a feature's per-era cells), or with
    ``sparse`` of those it gives sparse ones (from 40 rows)."""
    work = []
    for node_rows in nodes:
        dense = len(node_rows) >= max(0.25 * cells, 40)
        if sparse and len(node_rows) >= 40 and not dense:
            hist = builder.compute_sparse(node_rows, features)
        elif dense and not sparse:
            hist = builder.empty()
            builder.compute_brute(node_rows, hist, features)
        else:
            continue
        G = float(g[node_rows].astype(np.float64).sum())
        work.append((len(node_rows), hist, G, float(len(node_rows))))
    return work


def scan_nodes(splitter, work, features, sampled, in_cache):
    """The splits of the nodes of ``work`` and the seconds their scans
    took (each histogram read just before its scan with ``in_cache``)."""
    spent, infos = 0.0, []
    tic = time.perf_counter()
    for n, hist, G, H in work:
        if in_cache:
            touch(hist)  # read: in cache, as after its build
            tic = time.perf_counter()
        infos.append(
            splitter.find_node_split(
                n, hist, G, H, -G / H, -np.inf, np.inf, features, sampled
            )
        )
        if in_cache:
            spent += time.perf_counter() - tic
    if not in_cache:
        spent = time.perf_counter() - tic
    fields = [(i.found, i.feature_idx, i.bin_idx, i.criterion, i.gain) for i in infos]
    return fields, spent


def compare_builds(args, work, n_bins, offsets, features, sampled):
    """``--against``: this build's splitter and each other build's (their
    defaults) scan the same nodes in turn, repeat after repeat. Prints each
    build's best time, the median of its per-repeat ratios to this build's
    and whether it finds the same splits."""
    splitters = {"this build": make_splitter(Splitter, n_bins, offsets, args)}
    for i, directory in enumerate(args.against):
        module = load_engine_module(directory, "_splitting", f"_scan_build{i}")
        splitters[directory] = make_splitter(module.Splitter, n_bins, offsets, args)
    spent = {name: [] for name in splitters}
    splits = {}
    for _ in range(args.repeats):
        for name, splitter in splitters.items():
            splits[name], seconds = scan_nodes(
                splitter, work, features, sampled, args.in_cache
            )
            spent[name].append(seconds)
    kind = "sparse" if args.sparse else "dense"
    print(f"{len(work)} {kind} nodes, {args.split_type}, {args.eras} eras")
    ratios, same = {}, {}
    for name, times in spent.items():
        ratios[name] = float(np.median(np.array(times) / np.array(spent["this build"])))
        same[name] = splits[name] == splits["this build"]
        print(
            f"{name}: {min(times) * 1e3:.2f} ms, {ratios[name]:.2f}x this build's "
            f"time (median of the repeats), same splits: {same[name]}"
        )
    return {"nodes": len(work), "ratios": ratios, "same": same}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_options(parser, kind="float", rows=30_000, features=10, eras=20)
    parser.add_argument("--split-type", choices=["era", "directional"], default="era")
    parser.add_argument("--alpha", type=float, default=0.0)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--compare", choices=["bounds", "gain-sums"], default="bounds")
    parser.add_argument("--in-cache", action="store_true")
    parser.add_argument("--sparse", action="store_true")
    add_against_option(parser)
    args = parser.parse_args(argv)
    switch = "bound_blocks" if args.compare == "bounds" else "gain_sums"

    est, Xb, era, g, nodes = dense_nodes(
        args.kind, args.rows, args.features, args.eras, args.trees, args.leaves
    )
    n_bins = est._bin_mapper.n_bins_
    block_bins = (n_bins - 1).astype(np.uint32)  # no missing values
    offsets = histogram_layout(block_bins, args.eras)
    h = np.ones(1, dtype=np.float32)
    builder = HistogramBuilder(Xb, block_bins, offsets, args.eras, era, g, h, 1)
    p = args.features
    splitter = make_splitter(Splitter, n_bins, offsets, args)
    features = np.arange(p, dtype=np.uint32)
    sampled = np.ones(p, dtype=np.uint8)
    cells = float((block_bins * (args.eras + 1)).mean())
    work = node_histograms(builder, nodes, g, features, cells, args.sparse)
    if not work:
        raise SystemExit("no node of this kind in that tree")
    if args.against:
        return compare_builds(args, work, n_bins, offsets, features, sampled)
    best = {False: np.inf, True: np.inf}
    splits = {}
    for _ in range(args.repeats):
        for bounded in (False, True):
            setattr(splitter, switch, bounded)
            skipped = skips(splitter, args.sparse)
            summed = splitter.scans_by_gain_sums
            splits[bounded], spent = scan_nodes(
                splitter, work, features, sampled, args.in_cache
            )
            best[bounded] = min(best[bounded], spent)
            if bounded:
                skipped = skips(splitter, args.sparse) - skipped
                summed = splitter.scans_by_gain_sums - summed
    same = splits[False] == splits[True]
    print(
        f"{len(work)} {'sparse' if args.sparse else 'dense'} nodes of tree "
        f"{args.trees + 1}, {args.split_type}, {args.eras} eras"
    )
    if args.compare == "gain-sums":
        off, on = "candidate by candidate", "by gain sums"
    elif args.sparse:
        off, on = "every candidate scored", "candidates screened"
    else:
        off, on = "every candidate scored", "blocks bounded"
    what = "candidates screened out" if args.sparse else "blocks skipped"
    print(f"{off}: {best[False] * 1e3:.2f} ms")
    print(
        f"{on}: {best[True] * 1e3:.2f} ms ({best[True] / best[False]:.2f}x), "
        f"{skipped} {what} a pass, {summed} scans by gain sums"
    )
    print(f"same splits: {same}")
    if not same:
        raise SystemExit(f"{switch} changed a split")
    return {"nodes": len(work), "skipped": skipped, "summed": summed, "same": same}


if __name__ == "__main__":
    main()
