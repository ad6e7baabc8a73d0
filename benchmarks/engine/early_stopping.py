"""What early stopping on an era metric costs, against ``scoring="loss"``.

Each fit runs in a fresh Python process; the scorers take turns repeat after
repeat and the table reports, per scorer, the median fit time and the median
over repeats of its time divided by the ``"loss"`` fit of the same repeat.
Every fit runs all ``--trees`` iterations (``n_iter_no_change`` is larger),
holding out 10% of the eras, so only the scoring differs.

Usage::

    python benchmarks/engine/early_stopping.py --repeats 5

The data are those of ``compare.py``'s ``numerai-example`` case: 500,000 x
300 int8 features (0..4), 200 eras, learning rate 0.01, depth 5, 32 leaves,
``colsample_bytree=0.1``.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

CHILD = r"""
import json, sys, time
import numpy as np
from eraboost import HistGradientBoostingRegressor, make_era_scorer
spec = json.loads(sys.argv[1])
rng = np.random.default_rng(0)
n, p, n_eras = spec["n"], spec["p"], spec["n_eras"]
eras = (np.arange(n) * n_eras // n).astype(np.int32)
X = rng.integers(0, 5, size=(n, p), dtype=np.int8)
coef = np.random.default_rng(1).normal(size=n_eras)
y = 0.5 * X[:, 0] - 0.25 * X[:, 1] * X[:, 2] + coef[eras] * (X[:, 3] - 2.0)
y += rng.standard_normal(n)
scoring = spec["scoring"]
if scoring != "loss":
    scoring = make_era_scorer(*scoring.split(":"))
est = HistGradientBoostingRegressor(
    max_iter=spec["trees"], learning_rate=0.01, max_depth=5, max_leaf_nodes=32,
    colsample_bytree=0.1, early_stopping=True, validation_fraction=0.1,
    n_iter_no_change=10 * spec["trees"], scoring=scoring, random_state=0)
t = time.perf_counter()
est.fit(X, y, eras=eras)
print(json.dumps({"fit_s": time.perf_counter() - t, "n_iter": est.n_iter_}))
"""

SCORERS = ["loss", "pearson:mean", "numerai_corr:mean", "spearman:sharpe"]


def main(argv=None):
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--trees", type=int, default=300)
    ap.add_argument("--rows", type=int, default=500_000)
    args = ap.parse_args(argv)
    spec = dict(n=args.rows, p=300, n_eras=200, trees=args.trees)
    env = dict(os.environ)
    times = {s: [] for s in SCORERS}
    for rep in range(args.repeats):
        for scoring in SCORERS:
            out = subprocess.run(
                [sys.executable, "-c", CHILD, json.dumps(dict(spec, scoring=scoring))],
                capture_output=True,
                text=True,
                env=env,
                check=True,
            )
            rec = json.loads(out.stdout.strip().splitlines()[-1])
            times[scoring].append(rec["fit_s"])
            print(
                f"rep {rep + 1}/{args.repeats} {scoring:<18} {rec['fit_s']:7.2f} s",
                file=sys.stderr,
                flush=True,
            )
    print(
        f"\n{args.rows:,} x 300 int8, 200 eras (20 held out), {args.trees} trees; "
        f"medians of {args.repeats} fresh-process fits\n"
    )
    print("| scoring | fit (s) | vs loss |")
    print("|---|---:|---:|")
    for scoring in SCORERS:
        ratio = statistics.median(
            t / base for t, base in zip(times[scoring], times["loss"])
        )
        label = (
            scoring
            if scoring == "loss"
            else "make_era_scorer("
            + ", ".join(repr(part) for part in scoring.split(":"))
            + ")"
        )
        print(f"| {label} | {statistics.median(times[scoring]):.2f} | {ratio:.2f}x |")


if __name__ == "__main__":
    main()
