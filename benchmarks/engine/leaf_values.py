"""The raw-prediction update alone: a tree's leaf values added to its rows.

Draws ``--leaves`` leaves over ``--rows`` rows (one leaf holding
``--big`` of them, the rest spread evenly, each leaf's rows ascending and
interleaved with the others', as a tree grown from rows ``0, 1, ...``
leaves them), then times ``add_leaf_values`` at each thread count, the
threads sharing out the leaves (``ascending=False``) or owning ranges of
rows (``ascending=True``), and checks both give the same sums. Prints the
median and best of ``--repeats`` calls.

Usage::

    python benchmarks/engine/leaf_values.py --threads 1,4,16
"""

import argparse
import sys
import time

import numpy as np

try:
    from eraboost._engine._predictor import add_leaf_values
except ImportError as exc:  # pragma: no cover - a broken install
    sys.exit(f"cannot import eraboost: {exc}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--leaves", type=int, default=31)
    ap.add_argument("--big", type=float, default=0.3, help="share of the big leaf")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeats", type=int, default=40)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    leaf = rng.integers(0, args.leaves, args.rows)
    leaf[rng.random(args.rows) < args.big] = 0
    leaves = [np.flatnonzero(leaf == j).astype(np.uint32) for j in range(args.leaves)]
    values = rng.normal(size=args.leaves)
    results = []
    for threads in [int(t) for t in args.threads.split(",")]:
        sums = []
        for ascending in (False, True):
            raw = np.zeros(args.rows)
            times = []
            for _ in range(args.repeats):
                tic = time.perf_counter()
                add_leaf_values(raw, leaves, values, threads, ascending=ascending)
                times.append(time.perf_counter() - tic)
            sums.append(raw)
            med, best = np.median(times) * 1e3, min(times) * 1e3
            print(
                f"threads {threads:3d}  ascending {ascending!s:5}  "
                f"median {med:7.2f} ms  best {best:7.2f} ms",
                flush=True,
            )
            results.append((threads, ascending, med))
        if not np.array_equal(sums[0], sums[1]):
            sys.exit(f"{threads} threads: the two ways gave different sums")
    return results


if __name__ == "__main__":
    main()
