"""asv benchmarks: fit time and peak memory of the three split types.

Run from this folder: ``OMP_WAIT_POLICY=passive asv run``.
"""
import numpy as np

from eraboost import HistGradientBoostingRegressor


def _data(kind, n, p, n_eras):
    rng = np.random.RandomState(0)
    if kind == "float":
        X = rng.normal(size=(n, p))
        y = X[:, 0] + np.sin(X[:, 1]) + rng.normal(size=n)
    else:
        X = rng.randint(0, 5, size=(n, p)).astype(np.int8)
        y = X[:, 0] - 0.5 * X[:, 1] * X[:, 2] + rng.normal(size=n)
    eras = np.repeat(np.arange(n_eras), -(-n // n_eras))[:n]
    return X, y, eras


class Fit:
    params = (["int5", "float"], ["original", "era", "directional"], [1, 64])
    param_names = ["data", "split_type", "n_eras"]
    timeout = 300

    def setup(self, data, split_type, n_eras):
        self.X, self.y, self.eras = _data(data, 100_000, 50, n_eras)
        self.est = HistGradientBoostingRegressor(
            split_type=split_type, max_iter=50, early_stopping=False,
            random_state=0)

    def time_fit(self, data, split_type, n_eras):
        self.est.fit(self.X, self.y, eras=self.eras)

    def peakmem_fit(self, data, split_type, n_eras):
        self.est.fit(self.X, self.y, eras=self.eras)


class Predict:
    def setup(self):
        X, y, eras = _data("int5", 100_000, 50, 16)
        self.X = X
        self.est = HistGradientBoostingRegressor(
            split_type="era", max_iter=50, early_stopping=False).fit(X, y, eras=eras)

    def time_predict(self):
        self.est.predict(self.X)
