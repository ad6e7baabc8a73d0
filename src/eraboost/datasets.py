"""Synthetic era datasets from the seed papers.

Each generator returns training data with its eras and a test set drawn from
new eras, so that out-of-era skill can be measured.
"""

import numpy as np
from sklearn.utils import check_random_state


def _train_and_test(draw, train_params, test_param, n_per_era, n_test):
    """Training eras ``draw(n_per_era, p)`` for each ``p`` of
    ``train_params`` (era codes 0, 1, ...), then the test era."""
    parts = [draw(n_per_era, p) for p in train_params]
    X = np.vstack([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    eras = np.repeat(np.arange(len(train_params)), n_per_era)
    X_test, y_test = draw(n_per_era if n_test is None else n_test, test_param)
    return X, y, eras, X_test, y_test


def make_irf_regression(
    d=5,
    n_per_era=2000,
    sigmas=(0.1, 2.0),
    test_sigma=5.0,
    n_test=None,
    n_env_features=1,
    random_state=None,
):
    """The Invariant Random Forest paper's synthetic regression (eq. 24).

    ``X1 ~ N(0, I_d)``, ``Y = 1'X1 + N(0, d)`` and the environmental
    feature ``X2 = Y + N_e`` with ``N_e ~ N(0, sigma_e^2 d)``: ``X2`` predicts
    ``Y`` well in the first training era (sigma 0.1), badly in the second
    (sigma 2) and worse in the test era (sigma 5). The paper writes the noise
    of ``X2`` like the scalar noise of ``Y``, so ``X2`` is one feature by
    default; its Table 3 agrees: the environmental share of split importance
    of its unpenalised forest (0.43 at d=2 down to 0.29 at d=20) is what one
    ``X2`` column gives here, while ``d`` copies of ``X2`` take most splits
    (``n_env_features=d``: 0.67 at d=2, 0.96 at d=20, one deep tree).

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
    n_env_features : int, default=1
        Number of noisy copies of ``Y`` in ``X2``, each with its own noise.
    random_state : int, RandomState instance or None

    Returns
    -------
    X : ndarray of shape (n, d + n_env_features)
        Columns ``0..d-1`` are ``X1`` (stable), the rest are ``X2``.
    y : ndarray of shape (n,)
    eras : ndarray of shape (n,)
    X_test, y_test : ndarray
    """
    rng = check_random_state(random_state)

    def draw(n, sigma):
        x1 = rng.normal(size=(n, d))
        y = x1.sum(axis=1) + rng.normal(scale=np.sqrt(d), size=n)
        x2 = y[:, None] + rng.normal(scale=sigma * np.sqrt(d), size=(n, n_env_features))
        return np.hstack([x1, x2]), y

    return _train_and_test(draw, sigmas, test_sigma, n_per_era, n_test)


def make_irf_classification(
    d=5,
    n_per_era=2000,
    flip_rates=(0.1, 0.4),
    test_flip_rate=0.7,
    n_test=None,
    random_state=None,
):
    """The Invariant Random Forest paper's synthetic classification (eq. 23).

    ``Y ~ Bern(0.5)``; the stable features ``X1 = |Y 1_d - C1| + N1`` with
    ``C1 ~ Bern_d(0.3)`` and the environmental features
    ``X2 = |Y 1_d - C2| + N2`` with ``C2 ~ Bern_d(U_e)``, ``N1, N2 ~ N(0, I_d)``:
    each coordinate of ``X2`` flips the label with the era's rate ``U_e``
    (0.1 and 0.4 in the training eras, 0.7 in the test era), each of ``X1``
    with the same rate 0.3 everywhere.

    Parameters
    ----------
    d : int
        Number of stable features (and of environmental ones).
    n_per_era : int
        Rows of each training era.
    flip_rates : sequence of float
        ``U_e`` of each training era.
    test_flip_rate : float
        ``U_e`` of the test era.
    n_test : int or None
        Test rows (``n_per_era`` when None).
    random_state : int, RandomState instance or None

    Returns
    -------
    X : ndarray of shape (n, 2 * d)
        Columns ``0..d-1`` are ``X1`` (stable), ``d..2d-1`` are ``X2``.
    y : ndarray of int (n,)
    eras : ndarray of shape (n,)
    X_test, y_test : ndarray
    """
    rng = check_random_state(random_state)

    def draw(n, u):
        y = rng.binomial(1, 0.5, size=n)
        c1 = rng.binomial(1, 0.3, size=(n, d))
        c2 = rng.binomial(1, u, size=(n, d))
        x1 = np.abs(y[:, None] - c1) + rng.normal(size=(n, d))
        x2 = np.abs(y[:, None] - c2) + rng.normal(size=(n, d))
        return np.hstack([x1, x2]), y

    return _train_and_test(draw, flip_rates, test_flip_rate, n_per_era, n_test)


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
    return (
        X,
        y,
        eras,
        np.vstack([t[0] for t in test]),
        np.concatenate([t[1] for t in test]),
    )


def make_shifted_sine(
    n_eras=8, n_per_era=64, shift_scale=1.0, n_test=None, random_state=None
):
    """The era-splitting paper's shifted sine wave (DeLise, section 5.1).

    ``x ~ U[0, 2 pi]`` and ``y = sin(x) + s_e + N(0, 1)``, where the shift
    ``s_e ~ N(0, shift_scale^2)`` is drawn once per era: each era is a
    blurry sine wave moved up or down, and the pooled eras form a cloud in
    which the sine fades. The test set is one more era with its own shift.
    The paper does not give the shift's scale; with 1 (the noise's) the
    test MSE of a good fit is near the paper's (1.7-1.8: the noise, plus
    the test era's shift, which no model can predict).

    Parameters
    ----------
    n_eras, n_per_era : int
        Training eras and rows of each (the paper: 8 eras of 64 rows).
    shift_scale : float
        Standard deviation of the eras' shifts.
    n_test : int or None
        Rows of the test era (``n_per_era`` when None).
    random_state : int, RandomState instance or None

    Returns
    -------
    X : ndarray of shape (n_eras * n_per_era, 1)
    y : ndarray of shape (n_eras * n_per_era,)
    eras : ndarray of shape (n_eras * n_per_era,)
    X_test, y_test : ndarray
    """
    rng = check_random_state(random_state)

    def draw(n, _era):
        x = rng.uniform(0.0, 2.0 * np.pi, size=n)
        shift = rng.normal(scale=shift_scale)
        return x[:, None], np.sin(x) + shift + rng.normal(size=n)

    return _train_and_test(draw, range(n_eras), n_eras, n_per_era, n_test)


def make_synthetic_memorization(
    n_eras=16,
    n_per_era=768,
    n_signature_dims=16,
    n_rotations=3,
    n_test=2000,
    random_state=None,
):
    """The synthetic memorization task (Parascandolo et al. 2020, used by
    DeLise, section 5.2): an invariant spiral and per-era shortcuts.

    The first two columns hold two interleaved spirals, one per class: a
    radius ``r ~ U[0.08, 1]``, the angle ``2 pi n_rotations r`` plus ``pi``
    for class 1, the radius jittered by ``U[-0.02, 0.02]``, both coordinates
    scaled to unit variance. The other ``n_signature_dims`` columns are the
    era's signature: a vector ``u_e ~ N(0, I)`` drawn once per era, times
    +1 for class 1 and -1 for class 0, so that within an era the classes
    are separated perfectly by any of them (a shortcut to memorize). In the
    test set the signature columns are ``N(0, I)`` noise: only the spiral
    predicts. The paper's sizes: 16 eras, 12,288 training rows
    (768 per era), 18 columns, 2,000 test rows.

    Parameters
    ----------
    n_eras, n_per_era, n_signature_dims, n_rotations, n_test : int
    random_state : int, RandomState instance or None

    Returns
    -------
    X : ndarray of shape (n_eras * n_per_era, 2 + n_signature_dims)
    y : ndarray of int, the class (0 or 1)
    eras : ndarray of shape (n_eras * n_per_era,)
    X_test, y_test : ndarray
    """
    rng = check_random_state(random_state)
    signatures = rng.normal(size=(n_eras, n_signature_dims))

    def draw(n, era):
        radius = rng.uniform(0.08, 1.0, size=n)
        labels = rng.randint(0, 2, size=n)
        angle = 2.0 * n_rotations * np.pi * radius + np.pi * labels
        radius = radius + rng.uniform(-0.02, 0.02, size=n)
        spiral = np.column_stack([np.cos(angle), np.sin(angle)]) * radius[:, None]
        spiral /= spiral.std(axis=0)
        if era is None:
            shortcut = rng.normal(size=(n, n_signature_dims))
        else:
            shortcut = (2 * labels - 1)[:, None] * signatures[era]
        return np.hstack([spiral, shortcut]), labels

    return _train_and_test(draw, range(n_eras), None, n_per_era, n_test)
