"""The partitions of a fit's nodes, this build's against another's.

Fits ``--trees`` trees on ``compare.py``'s data (the same generator) and, at
every split the grower applies, partitions the node's rows with this build's
``split_indices`` and with the builds' of ``--against`` in turn (the order
alternating from split to split, so that neither always finds the rows in
cache), checks that every build gives the same rows in the same order, and
prints each build's total time and its ratio to this build's. The fit itself
goes on with this build's partition. The partitions are timed where the fit
runs them, between histograms and scans, not over and over on the same rows.

Usage::

    pip install --no-build-isolation --target /tmp/before .   # at the old commit
    python benchmarks/engine/partition.py --kind int5 --eras 256 --split-type era \\
        --against /tmp/before
    python benchmarks/engine/partition.py --kind float --eras 64 \\
        --split-type original --against /tmp/before
"""

import argparse
import sys
import time

import numpy as np
from _builds import add_against_option, load_engine_module
from _data import add_data_options, make_data

try:
    from eraboost import HistGradientBoostingRegressor
    from eraboost._engine import grower
except ImportError as exc:  # pragma: no cover - a broken install
    sys.exit(f"cannot import eraboost: {exc}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_options(parser, trees=50, leaves=32)
    parser.add_argument(
        "--split-type", choices=["original", "era", "directional"], default="era"
    )
    add_against_option(parser)
    args = parser.parse_args(argv)

    builds = [("this build", grower.split_indices)]
    for i, directory in enumerate(args.against):
        try:
            module = load_engine_module(directory, "_partition", f"_partition_build{i}")
        except SystemExit:  # a build from before the partition had its module
            module = load_engine_module(directory, "_splitting", f"_partition_build{i}")
        builds.append((directory, module.split_indices))
    spent = {name: 0.0 for name, _ in builds}
    counts = {"splits": 0, "rows": 0}
    same = {name: True for name, _ in builds}

    def timed(X_binned, feature, bin_idx, missing_left, missing_bin, rows, buffer, nt):
        start = rows.copy()
        order = builds if counts["splits"] % 2 == 0 else builds[::-1]
        results = {}
        for name, split_indices in order:
            rows[:] = start
            tic = time.perf_counter()
            n_left = split_indices(
                X_binned, feature, bin_idx, missing_left, missing_bin, rows, buffer, nt
            )
            spent[name] += time.perf_counter() - tic
            results[name] = (n_left, rows.copy())
        n_left, mine = results["this build"]
        for name, (other_left, other) in results.items():
            same[name] &= other_left == n_left and np.array_equal(other, mine)
        rows[:] = mine
        counts["splits"] += 1
        counts["rows"] += rows.shape[0]
        return n_left

    X, y, eras = make_data(args.kind, args.rows, args.features, args.eras)
    est = HistGradientBoostingRegressor(
        max_iter=args.trees,
        max_leaf_nodes=args.leaves,
        early_stopping=False,
        split_type=args.split_type,
    )
    saved = grower.split_indices
    grower.split_indices = timed
    try:
        est.fit(X, y, eras=None if args.split_type == "original" else eras)
    finally:
        grower.split_indices = saved
    print(
        f"{args.kind}, {args.rows:,} x {args.features}, {args.eras} eras, "
        f"{args.split_type}: {counts['splits']} splits, "
        f"{counts['rows']:,} rows partitioned"
    )
    base = spent["this build"]
    ratios = {}
    for name, _ in builds:
        ratios[name] = spent[name] / base if base > 0 else float("nan")
        print(
            f"{name}: {spent[name] * 1e3:.1f} ms "
            f"({ratios[name]:.2f}x this build), the same rows: {same[name]}"
        )
    if not all(same.values()):
        raise SystemExit("the builds partitioned the rows differently")
    return {"splits": counts["splits"], "spent": spent, "ratios": ratios, "same": same}


if __name__ == "__main__":
    main()
