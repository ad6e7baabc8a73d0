"""The synthetic datasets of ``eraboost.datasets`` (the era-splitting, IRF
and TRT papers') follow their definitions."""

import numpy as np
import pytest

from eraboost.datasets import (
    make_irf_regression,
    make_shifted_sine,
    make_synthetic_memorization,
    make_trt_example,
)


def test_shifted_sine_is_a_sine_shifted_per_era():
    X, y, eras, X_test, y_test = make_shifted_sine(
        n_eras=8, n_per_era=4000, shift_scale=3.0, random_state=0
    )
    assert X.shape == (32000, 1) and X_test.shape == (4000, 1)
    assert np.bincount(eras).tolist() == [4000] * 8
    assert X.min() >= 0 and X.max() <= 2 * np.pi
    resid = y - np.sin(X[:, 0])
    shifts = np.array([resid[eras == e].mean() for e in range(8)])
    noise = resid - shifts[eras]
    # unit Gaussian noise around a constant shift in every era
    assert abs(noise.std() - 1.0) < 0.02
    assert all(abs(noise[eras == e].mean()) < 1e-12 for e in range(8))
    assert shifts.std() > 1.0  # shifts on the scale 3, not noise
    # the test era has its own shift
    test_shift = (y_test - np.sin(X_test[:, 0])).mean()
    assert np.min(np.abs(shifts - test_shift)) > 0.05


def test_synthetic_memorization_shortcuts_and_spiral():
    X, y, eras, X_test, y_test = make_synthetic_memorization(random_state=0)
    # the paper's sizes
    assert X.shape == (12288, 18) and X_test.shape == (2000, 18)
    assert np.bincount(eras).tolist() == [768] * 16
    sig = X[:, 2:]
    for e in range(16):
        rows = eras == e
        # one signature per era, signed by the class: a perfect shortcut
        u = sig[rows & (y == 1)][0]
        pos, neg = rows & (y == 1), rows & (y == 0)
        np.testing.assert_array_equal(sig[pos], np.tile(u, (pos.sum(), 1)))
        np.testing.assert_array_equal(sig[neg], np.tile(-u, (neg.sum(), 1)))
    # in the test set the signature columns are noise, unrelated to the class
    corr = [abs(np.corrcoef(X_test[:, j], y_test)[0, 1]) for j in range(2, 18)]
    assert max(corr) < 0.1
    # the spiral (unit variance columns) predicts the class in every era
    # and in the test set: a nearest-neighbour rule trained on it
    from sklearn.neighbors import KNeighborsClassifier

    assert np.allclose(X[:, :2].std(axis=0), 1.0, atol=0.05)
    knn = KNeighborsClassifier(5).fit(X[:, :2], y)
    assert knn.score(X_test[:, :2], y_test) > 0.95
    # the shortcut columns do not
    knn = KNeighborsClassifier(5).fit(X[:, 2:], y)
    assert knn.score(X_test[:, 2:], y_test) < 0.6


def test_datasets_follow_their_equations():
    X, y, eras, Xt, yt = make_irf_regression(d=3, n_per_era=20000, random_state=0)
    assert X.shape == (40000, 4) and Xt.shape == (20000, 4)
    # one environmental column by default, d of them on request
    assert make_irf_regression(d=3, n_per_era=10, n_env_features=3, random_state=0)[
        0
    ].shape == (20, 6)
    np.testing.assert_array_equal(np.bincount(eras), [20000, 20000])
    # X2 - Y has standard deviation sigma_e * sqrt(d) in each era
    for e, sigma in enumerate((0.1, 2.0)):
        noise = X[eras == e, 3:] - y[eras == e, None]
        assert np.std(noise) == pytest.approx(sigma * np.sqrt(3), rel=0.02)
    assert np.std(Xt[:, 3:] - yt[:, None]) == pytest.approx(5 * np.sqrt(3), rel=0.02)
    X, y, eras, Xt, yt = make_trt_example(n_per_period=5000, random_state=0)
    first = eras == 0
    # X2 is the latent target in period 1 and unrelated later
    np.testing.assert_array_equal(X[first, 1] > 0.5, y[first] == 1)
    assert abs(np.corrcoef(Xt[:, 1], yt)[0, 1]) < 0.05
