"""Fit time and peak memory per split type and era count; predict time.

Run from ``asv_benchmarks/``: ``asv run --quick`` (OpenMP defaults, as users run).
"""

import numpy as np

from eraboost import HistGradientBoostingRegressor

from .common import float_era_data, int8_era_data

N, P, TREES = 100_000, 50, 30


class Fit:
    """``fit`` on int8 data (values 0..4), 31 leaves, early stopping off."""

    params = (("original", "era", "directional"), (1, 16, 256, 1024))
    param_names = ("split_type", "n_eras")
    timeout = 600

    def setup(self, split_type, n_eras):
        if split_type != "original" and n_eras == 1:
            raise NotImplementedError("era criteria need eras")
        self.X, self.y, self.eras = int8_era_data(N, P, n_eras)
        if n_eras == 1:
            self.eras = None
        self.est = HistGradientBoostingRegressor(
            split_type=split_type, max_iter=TREES, early_stopping=False, random_state=0
        )

    def time_fit(self, split_type, n_eras):
        self.est.fit(self.X, self.y, eras=self.eras)

    def peakmem_fit(self, split_type, n_eras):
        self.est.fit(self.X, self.y, eras=self.eras)


class FitFloat:
    """``fit`` on float64 data (255 bins), without eras (scikit-learn's own
    setting) and with 64 eras: continuous features make the per-era
    histograms 40 times larger than 5-valued ones."""

    params = (("original", "era", "directional"), (1, 64))
    param_names = ("split_type", "n_eras")
    timeout = 600

    def setup(self, split_type, n_eras):
        if split_type != "original" and n_eras == 1:
            raise NotImplementedError("era criteria need eras")
        self.X, self.y, self.eras = float_era_data(N, P, n_eras)
        if n_eras == 1:
            self.eras = None
        self.est = HistGradientBoostingRegressor(
            split_type=split_type, max_iter=TREES, early_stopping=False, random_state=0
        )

    def time_fit(self, split_type, n_eras):
        self.est.fit(self.X, self.y, eras=self.eras)

    def peakmem_fit(self, split_type, n_eras):
        self.est.fit(self.X, self.y, eras=self.eras)


class Predict:
    """``predict`` of a fitted 30-tree model on int8 and float64 input."""

    params = (("int8", "float64"),)
    param_names = ("dtype",)

    def setup(self, dtype):
        X, y, eras = int8_era_data(N, P, 64)
        self.est = HistGradientBoostingRegressor(
            split_type="era", max_iter=TREES, early_stopping=False, random_state=0
        ).fit(X, y, eras=eras)
        self.X = X if dtype == "int8" else X.astype(np.float64)

    def time_predict(self, dtype):
        self.est.predict(self.X)
