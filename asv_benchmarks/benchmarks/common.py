"""Synthetic data shared by the asv suites (deterministic, generated in
memory, nothing downloaded)."""

import numpy as np


def int8_era_data(n, p, n_eras, seed=0):
    """n x p int8 features with values 0..4 in ``n_eras`` contiguous eras; the
    target has a stable part and an effect whose sign changes by era."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 5, size=(n, p), dtype=np.int8)
    eras = (np.arange(n) * n_eras // n).astype(np.int32)
    coef = np.random.default_rng(seed + 1).normal(size=n_eras)
    y = (
        0.5 * X[:, 0]
        - 0.25 * X[:, 1] * X[:, 2]
        + coef[eras] * (X[:, 3] - 2.0)
        + rng.standard_normal(n)
    )
    return X, y, eras


def float_era_data(n, p, n_eras, seed=0):
    """n x p standard normal float64 features in ``n_eras`` contiguous eras;
    the target as :func:`int8_era_data`'s, on continuous features."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, p))
    eras = (np.arange(n) * n_eras // n).astype(np.int32)
    coef = np.random.default_rng(seed + 1).normal(size=n_eras)
    y = (
        0.5 * X[:, 0]
        - 0.25 * X[:, 1] * X[:, 2]
        + coef[eras] * X[:, 3]
        + rng.standard_normal(n)
    )
    return X, y, eras
