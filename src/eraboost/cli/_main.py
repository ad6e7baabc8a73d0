"""Running the command line (:func:`main`): parse, load the command's
libraries, run it, and turn its errors and interrupts into one line and an
exit status.

Errors in the input (a missing column, a target with missing values, an
unreadable file, not enough memory...) end the command with a one-line
message on stderr and exit status 1; a command line that argparse rejects
exits with status 2; Ctrl-C outside training exits with status 130. Set the
environment variable ``ERABOOST_TRACEBACK=1`` to see the traceback of an
error instead.

Imports only the standard library at the top.
"""

import os
import sys
import warnings

from . import _interrupts as interrupts
from ._errors import _MAX_ERROR_CHARS, CLIError, _error_line, escaped
from ._parser import parse_args


def _silence_stdout():
    """After a broken pipe: send what is left of stdout nowhere."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _show_warning(message, category, filename, lineno, file=None, line=None):
    """A Python warning during a command, as one line of the command line
    (no file path nor source line)."""
    text = escaped(str(message).strip(), _MAX_ERROR_CHARS)  # newlines escaped
    print(f"eraboost: warning: {text}", file=sys.stderr)


def _run(args):
    """Run the command of parsed arguments; returns the exit status."""
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _show_warning
            status = args.func(args)
        sys.stdout.flush()
        if interrupts._SIGINT_SEEN:  # compiled code swallowed the KeyboardInterrupt
            raise KeyboardInterrupt
        return status
    except Exception as exc:
        if interrupts._caused_by_interrupt(exc):
            raise KeyboardInterrupt from None
        if isinstance(exc, BrokenPipeError):
            # the reader of our output went away (``eraboost demo | head``)
            _silence_stdout()
            return 0
        if not isinstance(exc, (CLIError, ValueError, OSError, MemoryError)):
            raise
        # (a TableError is a ValueError)
        if os.environ.get("ERABOOST_TRACEBACK"):
            raise
        print(f"eraboost: error: {_error_line(exc)}", file=sys.stderr)
        return 1


def main(argv=None):
    """Run the command line; returns the exit status.

    A Ctrl-C while the command runs ends it with the line
    ``eraboost: interrupted`` and status 130 (its partly written files
    removed); during training the first Ctrl-C stops after the current
    iteration instead. Before and after the command, and while the
    libraries it uses load, the entry point (:func:`eraboost.__main__.main`)
    exits at once with the same line and status.

    Parameters
    ----------
    argv : list of str, default=None
        The arguments; ``sys.argv[1:]`` when None.

    Returns
    -------
    status : int
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = parse_args(argv)
        interrupts._load_libraries(args.func)
    except KeyboardInterrupt:
        return interrupts._interrupted()
    restore_hooks = interrupts._quiet_interrupt_hooks()
    previous = interrupts._sigint_raises()
    try:
        return _run(args)
    except KeyboardInterrupt:
        # the entry point's handler first: a second Ctrl-C exits at once
        interrupts._restore_sigint(previous)
        previous = None
        return interrupts._interrupted()
    finally:
        interrupts._restore_sigint(previous)
        restore_hooks()
