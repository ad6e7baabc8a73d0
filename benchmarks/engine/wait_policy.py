"""eraboost's fit with OpenMP's default wait policy against
``OMP_WAIT_POLICY=passive``: the default must never be the slower.

Each fit runs in a fresh process (``compare.run_one``); default and passive
take turns within every repeat, and the table gives medians of the ratio
default / passive within a repeat (below 1.0: the default is faster).

Usage::

    python benchmarks/engine/wait_policy.py --repeats 3
    python benchmarks/engine/wait_policy.py --quick --repeats 1

    # one size and criterion, more repeats
    python benchmarks/engine/wait_policy.py --only "200k.*era" --repeats 7
"""

import argparse
import os
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "peers"))  # compare.py
from compare import run_one

# (name, data): three sizes, each fitted by original and by era
SIZES = [
    ("20k x 10 float64, 40 eras", dict(n=20_000, p=10, kind="float", n_eras=40)),
    ("200k x 50 float64, 64 eras", dict(n=200_000, p=50, kind="float", n_eras=64)),
    ("1M x 100 int8, 256 eras", dict(n=1_000_000, p=100, kind="int5", n_eras=256)),
]
QUICK_N = {20_000: 20_000, 200_000: 50_000, 1_000_000: 100_000}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="smaller data, 20 trees")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument(
        "--only",
        default=None,
        help='regular expression on "DATA SPLIT_TYPE" (e.g. "200k.*era")',
    )
    args = ap.parse_args(argv)
    rows = []
    for name, data in SIZES:
        for split_type in ("original", "era"):
            if args.only and not re.search(args.only, f"{name} {split_type}"):
                continue
            spec = dict(
                data,
                lib="eraboost",
                extra={"split_type": split_type},
                iters=20 if args.quick else 100,
                leaves=31,
                threads=args.threads,
            )
            if args.quick:
                spec["n"] = QUICK_N[spec["n"]]
            if split_type == "original":
                spec["n_eras"] = 1
            ratios, times = [], {"default": [], "passive": []}
            for rep in range(args.repeats):
                pair = {}
                for policy in (
                    ("default", "passive")
                    if rep % 2 == 0
                    else (
                        "passive",
                        "default",
                    )
                ):
                    res = run_one(
                        dict(spec, wait_policy=None if policy == "default" else policy),
                        sys.executable,
                    )
                    if "fit_s" not in res:
                        sys.exit(f"{name} {split_type} {policy}: {res['error']}")
                    pair[policy] = res["fit_s"]
                    times[policy].append(res["fit_s"])
                ratios.append(pair["default"] / pair["passive"])
                print(
                    f"  {name} {split_type} rep {rep + 1}: default "
                    f"{pair['default']:.2f} s, passive {pair['passive']:.2f} s",
                    file=sys.stderr,
                    flush=True,
                )
            rows.append((name, split_type, times, ratios))
    print(
        f"\nMedians of {args.repeats} fresh-process fits, "
        f"{args.threads or os.cpu_count()} threads{' (--quick)' if args.quick else ''}"
    )
    print("| data | split_type | default (s) | passive (s) | default / passive |")
    print("|---|---|---:|---:|---:|")
    for name, split_type, times, ratios in rows:
        print(
            f"| {name} | {split_type} | {statistics.median(times['default']):.2f} | "
            f"{statistics.median(times['passive']):.2f} | "
            f"{statistics.median(ratios):.2f} |"
        )


if __name__ == "__main__":
    main()
