"""The synthetic era data of ``compare.py`` and ``era_phases.py``."""

import numpy as np


def make_data(kind, n, p, n_eras):
    """``n`` rows of ``p`` features in ``n_eras`` equal eras of consecutive
    rows: int8 values 0..4 (``kind="int5"``) or standard normal float64
    (``"float"``). The target has a stable signal, an interaction and an
    effect whose sign changes by era. Returns ``X, y, eras``."""
    rng = np.random.default_rng(0)
    eras = (np.arange(n) * n_eras // n).astype(np.int32)
    if kind == "float":
        X = rng.standard_normal((n, p))
        x3 = X[:, 3]
    else:
        X = rng.integers(0, 5, size=(n, p), dtype=np.int8)
        x3 = X[:, 3].astype(np.float64) - 2
    coef = np.random.default_rng(1).normal(size=n_eras)
    y = (
        0.5 * X[:, 0]
        - 0.25 * X[:, 1] * X[:, 2]
        + coef[eras] * x3
        + rng.standard_normal(n)
    )
    return X, y, eras


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
