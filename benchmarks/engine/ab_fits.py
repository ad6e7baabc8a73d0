"""Paired A/B of whole fits: this build against another installed build.

Each fit runs in a fresh process, A and B in turn (A B, then B A, ...), on
``compare.py``'s data (the same generator, cases and parameters), and the
script prints each case's median fit time per build and the median of the
per-pair ratios A / B (below 1: A faster). Pairs in turn cancel the drift of
a shared machine; a ratio inside the spread of its pairs is no difference.

A is the Python running this script (or ``--python-a``), B ``--against``:
each a Python whose site-packages hold an eraboost build (a virtual
environment's ``bin/python``; without ``--against``, A's). ``--params-a``
and ``--params-b`` add estimator parameters to one side: the same build
then measures what a parameter costs. The time is that of ``fit`` alone,
wall clock, the data read from ``--cache``.

Usage::

    # the four cases of a restructuring's check, 5 pairs each
    python benchmarks/engine/ab_fits.py --against /tmp/before/bin/python
    python benchmarks/engine/ab_fits.py --against /tmp/before/bin/python \\
        --cases int8:original,float-eras:era --pairs 7
    # one thread, as compare.py's small-float case runs
    python benchmarks/engine/ab_fits.py --against B --cases small-float:era
    # one build, a knob's cost: A with irf_penalty=1, B without
    python benchmarks/engine/ab_fits.py --cases float-eras:directional \
        --params-a '{"irf_penalty": 1.0}'

A case is ``NAME:SPLIT_TYPE`` with NAME one of ``int8`` (1M x 100 int8,
100 trees of 31 leaves; 256 eras for an era criterion), ``float`` (1M x 50
float64), ``float-eras`` (200k x 50 float64, 64 eras, 50 trees of 32
leaves) and ``small-float`` (30k x 10 float64, 20 eras, 100 trees, one
thread). ``--quick`` shrinks every case to a few seconds.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "peers"))  # compare.py, for its cases

from compare import FULL, QUICK  # noqa: E402

DEFAULT_CASES = "int8:original,float:original,float-eras:era,small-float:era"

CHILD = """
import json, sys, time, warnings
spec = json.loads(sys.argv[1])
sys.path.insert(0, sys.argv[2])
from _data import make_data
X, y, eras = make_data(spec["kind"], spec["n"], spec["p"], spec["n_eras"],
                       cache=spec["cache"])
from eraboost import HistGradientBoostingRegressor
est = HistGradientBoostingRegressor(
    max_iter=spec["iters"], max_leaf_nodes=spec["leaves"],
    early_stopping=False, random_state=0,
    **{"split_type": spec["split_type"], **spec.get("params", {})})
warnings.simplefilter("ignore")
t = time.perf_counter()
est.fit(X, y, eras=eras) if spec["n_eras"] > 1 else est.fit(X, y)
print(json.dumps({"fit_s": time.perf_counter() - t}))
"""


def case_spec(case, quick, cache):
    """The fit of ``NAME:SPLIT_TYPE`` as ``compare.py`` runs it."""
    name, _, split_type = case.partition(":")
    if name not in ("int8", "float", "float-eras", "small-float"):
        raise SystemExit(f"unknown case {name!r} in {case!r}")
    if split_type not in ("original", "era", "directional"):
        raise SystemExit(f"unknown split type {split_type!r} in {case!r}")
    spec = dict(FULL[name])
    if quick:
        spec.update(QUICK[name])
    # compare.py's era counts: int8's criteria on 256 eras, its original
    # (and float's) on none; the era cases on theirs for every criterion
    n_eras = {"int8": 1, "float": 1}.get(name) or spec["eras"][0]
    if name == "int8" and split_type != "original":
        n_eras = 256
    if n_eras == 1 and split_type != "original":
        raise SystemExit(f"{case!r}: the {name} case has no eras")
    return {
        "kind": spec["kind"],
        "n": spec["n"],
        "p": spec["p"],
        "n_eras": n_eras,
        "iters": spec["iters"],
        "leaves": spec["leaves"],
        "split_type": split_type,
        "threads": spec.get("threads"),
        "cache": str(cache),
    }


def fit_time(python, spec):
    """Seconds of one fit in a fresh process of ``python``."""
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)
    if spec["threads"]:
        env["OMP_NUM_THREADS"] = str(spec["threads"])
    proc = subprocess.run(
        [python, "-c", CHILD, json.dumps(spec), str(HERE)],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(Path.home()),  # never the repository's uncompiled tree
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"{python} failed: {proc.stderr.strip()[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])["fit_s"]


def paired(python_a, python_b, spec, pairs, params_a=None, params_b=None):
    """Fit times of A and B in turn (A B, B A, ...) after one warm-up; each
    side's estimator takes its ``params`` besides the case's."""
    spec_a = dict(spec, params=params_a or {})
    spec_b = dict(spec, params=params_b or {})
    fit_time(python_a, spec_a)  # the data's cache and the page cache
    a_s, b_s = [], []
    for i in range(pairs):
        if i % 2 == 0:
            a_s.append(fit_time(python_a, spec_a))
            b_s.append(fit_time(python_b, spec_b))
        else:
            b_s.append(fit_time(python_b, spec_b))
            a_s.append(fit_time(python_a, spec_a))
    return a_s, b_s


def summary(case, a_s, b_s):
    """One Markdown row: medians, the median ratio and its pairs' spread."""
    ratios = [a / b for a, b in zip(a_s, b_s)]
    return (
        f"| {case} | {statistics.median(a_s):.3f} | {statistics.median(b_s):.3f} "
        f"| {statistics.median(ratios):.3f} | {min(ratios):.3f}-{max(ratios):.3f} "
        f"| {len(ratios)} |"
    )


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--against", default=sys.executable, help="B: another Python (default A)"
    )
    parser.add_argument("--python-a", default=sys.executable, help="A")
    parser.add_argument("--cases", default=DEFAULT_CASES)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--cache", default="/tmp/eb-data")
    parser.add_argument(
        "--params-a", type=json.loads, default=None, help="A's parameters (JSON)"
    )
    parser.add_argument(
        "--params-b", type=json.loads, default=None, help="B's parameters (JSON)"
    )
    args = parser.parse_args(argv)
    if args.pairs < 1:
        parser.error("--pairs must be at least 1")
    print("| case | A median s | B median s | A / B median | pairs' range | pairs |")
    print("|---|---:|---:|---:|---:|---:|")
    specs = {
        case: case_spec(case, args.quick, args.cache) for case in args.cases.split(",")
    }
    results = {}
    for case, spec in specs.items():
        results[case] = paired(
            args.python_a, args.against, spec, args.pairs, args.params_a, args.params_b
        )
        print(summary(case, *results[case]), flush=True)
    return results


if __name__ == "__main__":
    main()
