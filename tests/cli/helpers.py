"""Helpers shared by the command line's tests (not a test module: pytest
collects only ``test_*.py``): the training table's columns, writing it, running
the command and reading its CSV output."""

import contextlib
import csv
import io
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

# the feature columns of the tables ``write`` writes
FEATURES = [f"feature_{i}" for i in range(10)]
# the installed command, next to this Python
SCRIPT = Path(sys.executable).with_name("eraboost")


def write(path, X, y, eras, extra=None):
    """Write a Parquet table of ``FEATURES``, ``target``, ``era`` (labels
    ``era000``...) and a text column ``note``, plus the ``extra`` columns."""
    cols = {name: X[:, j] for j, name in enumerate(FEATURES)}
    cols["target"] = y
    cols["era"] = np.array([f"era{e:03d}" for e in eras])
    cols["note"] = np.array(["text"] * len(y))  # a column never to be read
    cols.update(extra or {})
    pq.write_table(pa.table(cols), path)


def run(args, cwd, module=False, process=False, **kw):
    """Run the command line on ``args`` in the folder ``cwd``; the completed
    process, its output as text.

    In this process (``eraboost.cli.main``, stdout and stderr captured), which
    spares each run the start of a Python and its imports; in a process of
    its own, the ``eraboost`` script (``python -m eraboost`` with ``module``),
    with ``process``, ``module`` or any ``subprocess.run`` argument in ``kw``
    (an environment, a limit set before the command starts).
    """
    args = [str(a) for a in args]
    if process or module or kw:
        # from another folder: the installed package, not the source tree
        cmd = [sys.executable, "-m", "eraboost"] if module else [str(SCRIPT)]
        return subprocess.run(
            cmd + args,
            check=False,
            capture_output=True,
            text=True,
            timeout=300,
            cwd=cwd,
            **kw,
        )
    from eraboost.cli import main

    out, err = io.StringIO(), io.StringIO()
    before = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(args)
            except SystemExit as exc:  # argparse's exits (usage, --help)
                status = exc.code if isinstance(exc.code, int) else int(bool(exc.code))
    finally:
        os.chdir(before)
    return subprocess.CompletedProcess(args, status, out.getvalue(), err.getvalue())


def read_csv(path):
    """The rows of a CSV file, as dicts of strings."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))
