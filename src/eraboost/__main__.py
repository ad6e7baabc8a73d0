"""Entry point of ``eraboost`` and ``python -m eraboost`` (see ``cli/``).

Its first act is to make Ctrl-C (SIGINT) end the process at once with one
line and exit status 130 (:func:`eraboost.cli._interrupts.exit_on_sigint`):
while the command line loads (numpy, scikit-learn) and after the command has
run, an interruption is never a traceback, nor a death by the signal. While
a command runs, :func:`eraboost.cli.main` turns Ctrl-C into a
``KeyboardInterrupt`` instead, so that partly written files are removed.
This module, ``eraboost/cli/__init__.py`` and ``cli/_interrupts.py`` import
only the standard library (``importlib``, ``os``, ``signal``, ``sys``).
"""

import sys

from .cli._interrupts import exit_on_sigint


def main():
    """Run the command line; returns its exit status (130 on Ctrl-C)."""
    exit_on_sigint()
    from .cli import main as run

    return run()


if __name__ == "__main__":
    sys.exit(main())
