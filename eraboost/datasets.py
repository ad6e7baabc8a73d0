"""Synthetic era datasets from the seed papers.

Each generator returns training data with its eras and a test set drawn from
new eras, so that out-of-era skill can be measured.
"""
import numpy as np
from sklearn.utils import check_random_state


def make_irf_regression(d=5, n_per_era=2000, sigmas=(0.1, 2.0), test_sigma=5.0,
                        n_test=None, random_state=None):
    """The Invariant Random Forest paper's synthetic regression (eq. 24).

    ``X1 ~ N(0, I_d)``, ``Y = 1'X1 + N(0, d)`` and the environmental
    features ``X2 = Y 1_d + N_e`` with ``N_e ~ N(0, sigma_e^2 d I_d)``:
    ``X2`` predicts ``Y`` well in the first training era (sigma 0.1), badly in
    the second (sigma 2) and worse in the test era (sigma 5). The paper leaves
    the dimension of ``X2`` implicit; here it is ``d``, like ``X1`` and like
    the classification task of the same section.

    Parameters
    ----------
    d : int
        Number of stable features (and of environmental ones).
    n_per_era : int
        Rows of each training era.
    sigmas : sequence of float
        Noise scale of ``X2`` in each training era.
    test_sigma : float
        Noise scale of ``X2`` in the test era.
    n_test : int or None
        Test rows (``n_per_era`` when None).
    random_state : int, RandomState instance or None

    Returns
    -------
    X : ndarray of shape (n, 2 * d)
        Columns ``0..d-1`` are ``X1`` (stable), ``d..2d-1`` are ``X2``.
    y : ndarray of shape (n,)
    eras : ndarray of shape (n,)
    X_test, y_test : ndarray
    """
    rng = check_random_state(random_state)

    def draw(n, sigma):
        x1 = rng.normal(size=(n, d))
        y = x1.sum(axis=1) + rng.normal(scale=np.sqrt(d), size=n)
        x2 = y[:, None] + rng.normal(scale=sigma * np.sqrt(d), size=(n, d))
        return np.hstack([x1, x2]), y

    parts = [draw(n_per_era, s) for s in sigmas]
    X = np.vstack([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    eras = np.repeat(np.arange(len(sigmas)), n_per_era)
    X_test, y_test = draw(n_per_era if n_test is None else n_test, test_sigma)
    return X, y, eras, X_test, y_test


def make_trt_example(n_per_period=2000, n_test_periods=2, random_state=None):
    """The Time Robust Tree paper's synthetic example.

    ``X1 ~ N(0, 1)``, ``Y = X1 + N(0, 1)``; ``X2 = Y`` in the first period
    and ``N(0, 1)`` in every other one; the binary target is ``Y > 0.5``.
    Two training periods; ``n_test_periods`` later periods are the test set.

    Returns
    -------
    X : ndarray of shape (2 * n_per_period, 2)
    y : ndarray of int, the binary target
    eras : ndarray, the period of each row (0 or 1)
    X_test, y_test : ndarray
    """
    rng = check_random_state(random_state)

    def draw(period):
        x1 = rng.normal(size=n_per_period)
        latent = x1 + rng.normal(size=n_per_period)
        x2 = latent if period == 0 else rng.normal(size=n_per_period)
        return np.column_stack([x1, x2]), (latent > 0.5).astype(np.int64)

    train = [draw(p) for p in range(2)]
    test = [draw(p) for p in range(2, 2 + n_test_periods)]
    X = np.vstack([t[0] for t in train])
    y = np.concatenate([t[1] for t in train])
    eras = np.repeat(np.arange(2), n_per_period)
    return (X, y, eras, np.vstack([t[0] for t in test]),
            np.concatenate([t[1] for t in test]))
