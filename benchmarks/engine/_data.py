"""The synthetic era data of ``compare.py`` and ``era_phases.py``."""

import os
from pathlib import Path

import numpy as np


def make_data(kind, n, p, n_eras, order="C", cache=None):
    """``n`` rows of ``p`` features in ``n_eras`` equal eras of consecutive
    rows: int8 values 0..4 (``kind="int5"``) or standard normal float64
    (``"float"``). The target has a stable signal, an interaction and an
    effect whose sign changes by era. Returns ``X, y, eras``.

    ``order="F"`` draws the matrix feature by feature and returns it
    stored by columns (Fortran order), as a pandas frame of one dtype
    gives it, without a copy: other values than ``"C"``'s, from the same
    generator. ``cache``: a folder where the matrix and the target's noise
    are saved the first time and read back afterwards (drawing billions of
    values takes longer than reading them from the page cache); the same
    values either way."""
    eras = (np.arange(n) * n_eras // n).astype(np.int32)
    files = None
    if cache is not None:
        stem = f"{kind}-{n}x{p}-{order}"
        files = [Path(cache) / f"{stem}.{part}.npy" for part in ("X", "noise")]
    if files and all(f.exists() for f in files):
        X, noise = np.load(files[0]), np.load(files[1])
    else:
        X, noise = _draw(kind, n, p, order)
        if files:
            Path(cache).mkdir(parents=True, exist_ok=True)
            for f, a in zip(files, (X, noise)):
                # written under a temporary name, then renamed into place
                tmp = f.with_name(f"{f.name}.{os.getpid()}.tmp")
                with open(tmp, "wb") as fh:
                    np.save(fh, a)
                os.replace(tmp, f)
    x3 = X[:, 3] if kind == "float" else X[:, 3].astype(np.float64) - 2
    coef = np.random.default_rng(1).normal(size=n_eras)
    y = 0.5 * X[:, 0] - 0.25 * X[:, 1] * X[:, 2] + coef[eras] * x3 + noise
    return X, y, eras


def _draw(kind, n, p, order):
    """The matrix of :func:`make_data`, then the target's noise."""
    rng = np.random.default_rng(0)
    shape = (n, p) if order == "C" else (p, n)
    if kind == "float":
        X = rng.standard_normal(shape)
    else:
        X = rng.integers(0, 5, size=shape, dtype=np.int8)
    if order != "C":
        X = X.T
    return X, rng.standard_normal(n)


def add_data_options(
    parser, kind="int5", rows=200_000, features=50, eras=256, trees=10, leaves=31
):
    """The options of the scripts that fit trees on this data and time a
    part of the fit: ``--kind``, ``--rows``, ``--features``, ``--eras``,
    ``--trees`` and ``--leaves``, with the script's defaults."""
    parser.add_argument("--kind", choices=["int5", "float"], default=kind)
    parser.add_argument("--rows", type=int, default=rows)
    parser.add_argument("--features", type=int, default=features)
    parser.add_argument("--eras", type=int, default=eras)
    parser.add_argument("--trees", type=int, default=trees)
    parser.add_argument("--leaves", type=int, default=leaves)
