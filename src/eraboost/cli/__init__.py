"""The ``eraboost`` command: ``eraboost train | predict | report | convert | demo``.

- ``_main.py``: :func:`main`, which parses, runs a command and turns its
  errors into one line and an exit status;
- ``_parser.py``: the argparse parser (:func:`build_parser`);
- ``_commands.py``: the commands, ``cmd_train`` ... ``cmd_demo``;
- ``_cluster.py``: ``train --scheduler``, the fit on a Dask cluster of a
  parquet dataset read by parts on the workers;
- ``_loading.py``: a model file with its feature list, and a table's
  columns as the estimators take them, with their checks;
- ``_tables.py``: reading parquet and CSV tables, writing prediction tables;
- ``_interrupts.py``: Ctrl-C, one line and exit status 130 (its first
  handler is installed by ``eraboost/__main__.py``);
- ``_errors.py``: :class:`CLIError` and the one line of an error;
- ``_progress.py``: the training progress line;
- ``report.py``: the per-era report of ``eraboost report`` (its scores,
  summary and plots).

The entry point is :func:`eraboost.__main__.main`, which installs its
Ctrl-C handling first. The names below are imported on first use (PEP 562),
and ``_main``, ``_parser``, ``_commands``, ``_loading``, ``_interrupts`` and
``_errors`` import only the standard library at the top, so that
``eraboost --help`` and ``eraboost --version`` load no numpy: each command
imports what it needs.
"""

from importlib import import_module

# public name -> module defining it
_EXPORTS = {
    "DEFAULT_FEATURE_PREFIX": "_loading",
    "INTERRUPTED": "_interrupts",
    "METRIC_CHOICES": "_parser",
    "SPLIT_TYPE_CHOICES": "_parser",
    "CLIError": "_errors",
    "build_parser": "_parser",
    "main": "_main",
}

__all__ = [
    "DEFAULT_FEATURE_PREFIX",
    "INTERRUPTED",
    "METRIC_CHOICES",
    "SPLIT_TYPE_CHOICES",
    "CLIError",
    "build_parser",
    "main",
]


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
