"""Command line: ``python -m eraboost demo``."""
import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="eraboost", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p_demo = sub.add_parser("demo", help="train the three split types on a "
                            "synthetic era dataset and print their scores")
    p_demo.add_argument("--n-eras", type=int, default=40)
    p_demo.add_argument("--rows-per-era", type=int, default=1000)
    p_demo.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    if args.command == "demo":
        from .demo import run_demo

        run_demo(n_eras=args.n_eras, rows_per_era=args.rows_per_era,
                 seed=args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
