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
