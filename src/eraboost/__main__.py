"""Entry point of ``eraboost`` and ``python -m eraboost`` (see ``cli.py``)."""

import sys


def main():
    """Run the command line; a Ctrl-C while it loads exits with status 130."""
    try:
        from .cli import main as run
    except KeyboardInterrupt:
        print("eraboost: interrupted", file=sys.stderr)
        return 130
    return run()


if __name__ == "__main__":
    sys.exit(main())
