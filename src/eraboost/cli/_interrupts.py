"""Ctrl-C (SIGINT) on the command line: one line, ``eraboost: interrupted``,
and exit status 130, never a traceback nor a death by the signal.

- From the start of the entry point until a command runs, and after it,
  :func:`exit_on_sigint`'s handler writes the line and exits at once.
- While the libraries of a command load (:func:`_load_libraries`), that
  handler still holds: an import has nothing to clean up.
- While the command runs, :func:`_sigint_raises` makes Ctrl-C raise
  ``KeyboardInterrupt`` instead, so that partly written files are removed;
  :func:`_quiet_interrupt_hooks` and :func:`_caused_by_interrupt` catch the
  interrupts that compiled code prints, drops or turns into another error.

Imports only ``os``, ``signal`` and ``sys``: ``__main__.py`` installs the
first handler before anything else is imported.
"""

import os
import signal
import sys

#: The line printed on Ctrl-C (outside training), with exit status 130.
INTERRUPTED = "eraboost: interrupted"
_INTERRUPTED_LINE = (INTERRUPTED + "\n").encode()


def _exit_interrupted(signum, frame):
    """SIGINT handler: the one line on stderr, then exit 130 at once."""
    try:
        os.write(2, _INTERRUPTED_LINE)
    finally:
        os._exit(130)


def exit_on_sigint():
    """Install :func:`_exit_interrupted`, unless SIGINT is ignored (a
    background job of a shell)."""
    try:
        if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
            signal.signal(signal.SIGINT, _exit_interrupted)
    except ValueError:  # pragma: no cover - not the main thread
        pass


# set by the handler of _sigint_raises: a Ctrl-C arrived while the command ran
_SIGINT_SEEN = []


def _raise_interrupt(signum, frame):
    """SIGINT handler while a command runs: remember it, raise
    KeyboardInterrupt. Compiled code may turn the KeyboardInterrupt into
    another error (numpy's import raises an ImportError of its own) or drop
    it; the record still makes the command end as interrupted."""
    _SIGINT_SEEN.append(signum)
    raise KeyboardInterrupt


def _sigint_raises():
    """Make Ctrl-C raise KeyboardInterrupt while a command runs (its files
    are then cleaned up); returns the handler to restore, or None when
    SIGINT is left alone (ignored, or not the main thread)."""
    try:
        if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, None):
            return None
        return signal.signal(signal.SIGINT, _raise_interrupt)
    except ValueError:  # not the main thread
        return None


def _restore_sigint(previous):
    if previous is not None:
        signal.signal(signal.SIGINT, previous)


def _quiet_interrupt_hooks():
    """Install hooks that keep a KeyboardInterrupt Python or compiled code
    cannot propagate from being printed; returns a function that restores
    the previous hooks.

    Such an interrupt is either unraisable (a weakref callback of the import
    system, a ``__del__``: ``sys.unraisablehook`` prints ``Exception ignored
    in ...``) or caught and printed by compiled code (numpy's
    ``import_array()`` prints it with ``PyErr_Print``, which calls
    ``sys.excepthook``, and raises an ImportError of its own). The hooks
    record it in ``_SIGINT_SEEN`` instead, so that the command ends as
    interrupted with the one line; anything else goes to the previous
    hooks."""
    previous_unraisable = sys.unraisablehook
    previous_except = sys.excepthook

    def unraisable_hook(unraisable):
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            _SIGINT_SEEN.append(signal.SIGINT)
            return
        previous_unraisable(unraisable)

    def except_hook(exc_type, exc_value, exc_traceback):
        if isinstance(exc_value, KeyboardInterrupt):
            _SIGINT_SEEN.append(signal.SIGINT)
            return
        previous_except(exc_type, exc_value, exc_traceback)

    sys.unraisablehook = unraisable_hook
    sys.excepthook = except_hook

    def restore():
        sys.unraisablehook = previous_unraisable
        sys.excepthook = previous_except

    return restore


def _load_libraries(func):
    """Import the libraries the command ``func`` uses, before a Ctrl-C
    raises KeyboardInterrupt (see :func:`main`).

    Under the entry point a Ctrl-C then still ends the process at once, with
    the one line: an import has nothing to clean up, and code outside
    eraboost prints an interrupt it catches there (numpy's
    ``import_array()`` prints a traceback, scipy's generated functions print
    their source). A missing optional library is left for the command to
    report."""
    import importlib
    from contextlib import suppress

    from ._commands import (
        cmd_convert,
        cmd_demo,
        cmd_predict,
        cmd_report,
        cmd_train,
        cmd_train_cluster,
    )

    tables = ("pyarrow", "pyarrow.csv", "pyarrow.parquet", "pyarrow.compute")
    cluster = ("dask.array", "dask.dataframe", "distributed", "eraboost.dask")
    modules = {
        cmd_train: (*tables, "eraboost.persistence"),
        cmd_train_cluster: (*tables, *cluster, "eraboost.persistence"),
        cmd_predict: (*tables, "eraboost.persistence"),
        cmd_report: (*tables, "eraboost.persistence", "eraboost.metrics"),
        cmd_convert: ("eraboost.persistence",),
        cmd_demo: ("eraboost.demo",),
    }.get(func, ())
    for name in ("numpy", "eraboost.gradient_boosting", *modules):
        with suppress(ImportError):
            importlib.import_module(name)
    if func is cmd_report:
        from .report import _pyplot

        with suppress(ValueError):  # no matplotlib
            _pyplot()


def _interrupted():
    print(INTERRUPTED, file=sys.stderr)
    return 130


def _caused_by_interrupt(exc):
    """Whether ``exc`` follows a Ctrl-C: one arrived while the command ran,
    or a KeyboardInterrupt is in its chain (a Ctrl-C inside the import of a
    compiled module comes back as an ImportError)."""
    if _SIGINT_SEEN:
        return True
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False
