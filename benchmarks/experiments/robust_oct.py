"""Time robust optimal classification trees to proven optimality.

Instance of issue 8: 200 rows x 5 integer features with 5 levels, costs and
budget calibrated (section 4 of Justin et al.) from an unshifted probability
of 0.8 and a likelihood threshold of 0.9; depth 2 and depth 3, plus the
nominal tree (budget 0) for reference. Each configuration is run on a few
data seeds. When ``odtlearn`` and ``gurobipy`` import, their ``RobustOCT``
is timed on the same data (optional; not needed otherwise).

Usage::

    python benchmarks/experiments/robust_oct.py [--seeds 0 1 2]
        [--depths 2 3] [--time-limit 600] [--gurobi-time-limit 600]
        [--gurobi-seeds 0] [--skip-eraboost]
"""

import argparse
import platform
import time

import numpy as np
import scipy

from eraboost.robust import RobustTreeClassifier, calibrate_costs_budget


def make_instance(seed, n=200, p=5, levels=5):
    """Integer features with ``levels`` values and a noisy 3-feature rule."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, p))
    score = (X[:, 0] >= 2).astype(int) + (X[:, 1] >= 3) + (X[:, 2] <= 1)
    y = ((score + rng.normal(0, 0.7, n)) >= 1.5).astype(int)
    return X, y


def run_odtlearn(X, y, costs, budget, depth, time_limit):
    """Time odtlearn's RobustOCT with Gurobi; None when unavailable."""
    try:
        import gurobipy  # noqa: F401
        import pandas as pd
        from odtlearn.robust_oct import RobustOCT
    except Exception:  # pragma: no cover - optional
        return None
    Xd = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    cost_df = pd.DataFrame(np.broadcast_to(costs, X.shape).copy(), columns=Xd.columns)
    model = RobustOCT(
        solver="gurobi",
        depth=depth,
        time_limit=time_limit,
        num_threads=1,
        verbose=False,
    )
    t0 = time.perf_counter()
    model.fit(Xd, y, costs=cost_df, budget=budget)
    elapsed = time.perf_counter() - t0
    acc = float(np.mean(model.predict(Xd) == y))
    return elapsed, acc


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--depths", type=int, nargs="+", default=[2, 3])
    parser.add_argument("--time-limit", type=float, default=600.0)
    parser.add_argument("--gurobi-time-limit", type=float, default=600.0)
    parser.add_argument(
        "--gurobi-seeds",
        type=int,
        nargs="*",
        default=[0],
        help="seeds on which odtlearn + Gurobi is also run",
    )
    parser.add_argument("--skip-eraboost", action="store_true")
    args = parser.parse_args()

    print(
        f"python {platform.python_version()}, scipy {scipy.__version__} "
        f"(HiGHS via scipy.optimize.milp), {platform.machine()}"
    )
    header = (
        f"{'solver':<22} {'depth':>5} {'seed':>4} {'budget':>7} {'status':>10} "
        f"{'gap':>6} {'worst acc':>9} {'nominal acc':>11} {'cuts':>5} "
        f"{'time (s)':>9}"
    )
    print(header)
    print("-" * len(header))
    for depth in args.depths:
        for seed in args.seeds:
            X, y = make_instance(seed)
            costs, budget = calibrate_costs_budget(0.8, 0.9, n_samples=len(X))
            for b in () if args.skip_eraboost else (0.0, budget):
                clf = RobustTreeClassifier(
                    max_depth=depth, budget=b, costs=costs, time_limit=args.time_limit
                )
                t0 = time.perf_counter()
                clf.fit(X, y)
                elapsed = time.perf_counter() - t0
                print(
                    f"{'eraboost (HiGHS)':<22} {depth:>5} {seed:>4} {b:>7.2f} "
                    f"{clf.solver_status_:>10} {clf.gap_:>6.3f} "
                    f"{clf.worst_case_accuracy_:>9.3f} {clf.nominal_accuracy_:>11.3f} "
                    f"{clf.n_cuts_:>5} {elapsed:>9.2f}",
                    flush=True,
                )
            res = None
            if seed in args.gurobi_seeds:
                res = run_odtlearn(X, y, costs, budget, depth, args.gurobi_time_limit)
            if res is not None:
                elapsed, acc = res
                print(
                    f"{'odtlearn (Gurobi)':<22} {depth:>5} {seed:>4} {budget:>7.2f} "
                    f"{'':>10} {'':>6} {'':>9} {acc:>11.3f} {'':>5} "
                    f"{elapsed:>9.2f}",
                    flush=True,
                )
    try:
        import gurobipy  # noqa: F401
        import odtlearn  # noqa: F401
    except Exception:
        print("(odtlearn + gurobipy not importable: Gurobi comparison skipped)")


if __name__ == "__main__":
    main()
