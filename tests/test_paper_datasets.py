"""The era-splitting paper's synthetic datasets follow their definitions."""

import numpy as np

from eraboost.datasets import make_shifted_sine, make_synthetic_memorization


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
