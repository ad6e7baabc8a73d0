"""Fit time with categorical features: eraboost vs scikit-learn.

Usage: python benchmarks/peers/categorical.py [n_samples]

Data: 4 numeric and 4 categorical features (50, 50, 200 and 200
categories, 5% missing), 32 eras; 50 iterations, 31 leaves, early stopping
off. Prints the median of 3 fits of each model, the maximum prediction
difference with scikit-learn, and the training R^2 of each.
"""

import sys
from statistics import median
from time import perf_counter

import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor as SkHGBR

from eraboost import HistGradientBoostingRegressor


def make_data(n, seed=0):
    rng = np.random.RandomState(seed)
    eras = np.repeat(np.arange(32), n // 32)
    n = eras.size
    num = rng.normal(size=(n, 4))
    cards = [50, 50, 200, 200]
    cat = np.column_stack([rng.randint(0, k, size=n) for k in cards]).astype(float)
    y = num[:, 0] - num[:, 1] + rng.normal(size=n)
    for j, k in enumerate(cards):
        y += rng.normal(scale=0.5, size=k)[cat[:, j].astype(int)]
    # an era-specific category effect on the last feature
    y += rng.normal(size=(32, 200))[eras, cat[:, 3].astype(int)]
    cat[rng.rand(*cat.shape) < 0.05] = np.nan
    return np.column_stack([num, cat]), y, eras


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    X, y, eras = make_data(n)
    common = {
        "max_iter": 50,
        "early_stopping": False,
        "random_state": 0,
        "categorical_features": [4, 5, 6, 7],
    }
    models = {
        "scikit-learn": (lambda: SkHGBR(**common), False),
        "eraboost original": (lambda: HistGradientBoostingRegressor(**common), False),
        "eraboost era, 32 eras": (
            lambda: HistGradientBoostingRegressor(split_type="era", **common),
            True,
        ),
        "eraboost directional, 32 eras": (
            lambda: HistGradientBoostingRegressor(split_type="directional", **common),
            True,
        ),
    }
    times = {name: [] for name in models}
    fitted = {}
    for _ in range(3):
        for name, (make, with_eras) in models.items():
            est = make()
            tic = perf_counter()
            if with_eras:
                est.fit(X, y, eras=eras)
            else:
                est.fit(X, y)
            times[name].append(perf_counter() - tic)
            fitted[name] = est
    ref = fitted["scikit-learn"].predict(X)
    print(f"n_samples={X.shape[0]}, 8 features (4 categorical), 50 iterations")
    for name, est in fitted.items():
        pred = est.predict(X)
        r2 = 1 - np.mean((y - pred) ** 2) / np.var(y)
        print(
            f"{name:<32} fit {median(times[name]):6.2f} s   "
            f"max |pred - sklearn| {np.abs(pred - ref).max():.1e}   R^2 {r2:.3f}"
        )


if __name__ == "__main__":
    main()
