"""What the processor gives each core when many are busy.

Runs the same two pieces of work in 1, then N processes at once (one per
core, ``multiprocessing``) and prints each process's time:

* a compute-bound loop of Python integer arithmetic (no memory traffic):
  how much slower one core runs while the others work (frequency drops,
  cores shared by the host), the bound on any program's speedup;
* a memory-bound pass, ``sum`` over a float64 array larger than the caches,
  in GB/s per process and together.

If the loop takes ``s`` times as long in each of 16 processes as alone, no
program, eraboost included, runs more than ``16 / s`` times faster on 16
threads than on one (where its work is bound by the cores, not memory).

Usage::

    python benchmarks/engine/core_speed.py --processes 1,8,16
"""

import argparse
import multiprocessing as mp
import statistics
import time

import numpy as np


def compute(n):
    """Seconds for ``n`` iterations of Python integer arithmetic."""
    t = time.perf_counter()
    x = 0
    for i in range(n):
        x += i * i
    return time.perf_counter() - t


def memory(n_bytes):
    """GB/s of three sums over a float64 array of ``n_bytes``, after one
    sum that brings its pages in."""
    a = np.ones(n_bytes // 8)
    a.sum()
    t = time.perf_counter()
    for _ in range(3):
        a.sum()
    return 3 * a.nbytes / (time.perf_counter() - t) / 1e9


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--processes", default="1,16", help="process counts, e.g. 1,8,16")
    ap.add_argument("--loop", type=int, default=6_000_000, help="loop iterations")
    ap.add_argument("--megabytes", type=int, default=400, help="array per process")
    args = ap.parse_args(argv)
    counts = [int(c) for c in args.processes.split(",")]
    alone = None
    print(
        "| processes | loop, median (s) | loop, slowest (s) "
        f"| vs {counts[0]} | GB/s each | GB/s together |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    # spawned, not forked: a process with threads (OpenMP, BLAS) may deadlock
    # in a forked child, and Python 3.12+ warns of it
    spawn = mp.get_context("spawn")
    for n in counts:
        with spawn.Pool(n) as pool:
            loop = pool.map(compute, [args.loop] * n)
        with spawn.Pool(n) as pool:
            rate = pool.map(memory, [args.megabytes * 1_000_000] * n)
        med = statistics.median(loop)
        alone = med if alone is None else alone
        print(
            f"| {n} | {med:.3f} | {max(loop):.3f} | {med / alone:.2f}x "
            f"| {statistics.median(rate):.1f} | {sum(rate):.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
