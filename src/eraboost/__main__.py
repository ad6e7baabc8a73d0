"""Entry point of ``eraboost`` and ``python -m eraboost`` (see ``cli/``).

Its first act is to make Ctrl-C (SIGINT) end the process at once with one
line and exit status 130: while the command line loads (numpy, scikit-learn)
and after the command has run, an interruption is never a traceback, nor a
death by the signal. While a command runs, :func:`eraboost.cli.main` turns
Ctrl-C into a ``KeyboardInterrupt`` instead, so that partly written files are
removed. This module imports only ``os``, ``signal`` and ``sys``.
"""

import os
import signal
import sys

_INTERRUPTED = b"eraboost: interrupted\n"


def _exit_interrupted(signum, frame):
    """SIGINT handler: the one line on stderr, then exit 130 at once."""
    try:
        os.write(2, _INTERRUPTED)
    finally:
        os._exit(130)


def _exit_on_sigint():
    """Install :func:`_exit_interrupted`, unless SIGINT is ignored (a
    background job of a shell)."""
    try:
        if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            signal.signal(signal.SIGINT, _exit_interrupted)
    except ValueError:  # pragma: no cover - not the main thread
        pass


def main():
    """Run the command line; returns its exit status (130 on Ctrl-C)."""
    _exit_on_sigint()
    from .cli import main as run

    return run()


if __name__ == "__main__":
    sys.exit(main())
