"""Checks of the files a command writes, made before any work: never over
an input, in a folder that exists, under a name that says what it holds.
Standard library only."""

import os
from pathlib import Path

from ._errors import CLIError

#: Names that promise a pickle: a model file is not one, and pickles are
#: never loaded by the command line.
_PICKLE_SUFFIXES = (".pkl", ".pickle", ".joblib", ".jl", ".pck")
#: Names of tables (``predict`` writes these, ``train`` never does).
_TABLE_SUFFIXES = (".parquet", ".pq", ".csv", ".csv.gz", ".csv.bz2", ".txt")


def _same_file(a, b):
    """Whether two paths name one file (the same path, a link to it, or a
    hard link: the same device and inode)."""
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    try:
        sa, sb = os.stat(a), os.stat(b)
    except (OSError, ValueError):
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _check_not_an_input(outputs, inputs):
    """Refuse to write over a file that the command reads.

    Parameters
    ----------
    outputs : list of str or Path
        The files the command would write.
    inputs : list of (str, str or Path or None)
        What each input is (``"DATA"``, ``"MODEL"``...) and its path.
    """
    for out in outputs:
        for what, path in inputs:
            if path is not None and _same_file(out, path):
                raise CLIError(
                    f"--out {out} is the input {what} {path}"
                    + ("" if str(out) == str(path) else " (the same file)")
                    + ": writing there would destroy it; choose another "
                    "output file"
                )


def _check_out_folder(out, what):
    """The folder of an output file exists (checked before any work)."""
    folder = os.path.dirname(os.fspath(out)) or "."
    if not os.path.isdir(folder):
        raise CLIError(
            f"cannot write the {what} to {out}: the folder does not exist: {folder}"
        )


def _check_model_out(out):
    """A model file is not named as a pickle or a table (``predict`` would
    refuse to read it as one, or write a table there)."""
    name = Path(out).name.lower()
    stem = Path(out).name.split(".")[0] or "model"
    if name.endswith(_PICKLE_SUFFIXES):
        what = "a pickle, which eraboost never writes nor loads"
    elif name.endswith(_TABLE_SUFFIXES):
        what = "a table"
    else:
        return
    raise CLIError(
        f"--out {out} names {what}; a model file loads without running code: "
        f"name it {stem}.skops"
    )
