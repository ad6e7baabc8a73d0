"""The ``eraboost`` command: ``eraboost train | predict | report | convert | demo``.

- ``_commands.py``: the parser and the commands (``main``);
- ``_tables.py``: reading parquet and CSV tables, writing prediction tables;
- ``_progress.py``: the training progress line;
- ``report.py``: the per-era report of ``eraboost report`` (its scores,
  summary and plots).

The entry point is :func:`eraboost.__main__.main`, which installs its
Ctrl-C handling first. This package and ``_commands.py`` import only the
standard library at the top, so that ``eraboost --help`` and ``eraboost
--version`` load no numpy: each command imports what it needs.
"""

from ._commands import (
    DEFAULT_FEATURE_PREFIX,
    INTERRUPTED,
    METRIC_CHOICES,
    SPLIT_TYPE_CHOICES,
    CLIError,
    build_parser,
    main,
)

__all__ = [
    "DEFAULT_FEATURE_PREFIX",
    "INTERRUPTED",
    "METRIC_CHOICES",
    "SPLIT_TYPE_CHOICES",
    "CLIError",
    "build_parser",
    "main",
]
