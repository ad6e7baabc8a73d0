"""Fit time of the invariant forests: shallow trees on many rows (the Time
Robust Forest setting) and deep trees on few rows (the IRF setting).

Run from ``asv_benchmarks/``: ``asv run --quick`` (OpenMP defaults, as users run).
"""

import numpy as np

from eraboost import InvariantForestClassifier, InvariantForestRegressor
from eraboost.datasets import make_irf_regression, make_trt_example


class ForestFit:
    """10 trees of depth 5 on the TRT example (20,000 rows, 2 periods)."""

    params = (("plain", "trt"),)
    param_names = ("settings",)
    timeout = 300

    def setup(self, settings):
        self.X, self.y, self.eras, _, _ = make_trt_example(
            n_per_period=10_000, random_state=0
        )
        kw = (
            {}
            if settings == "plain"
            else dict(
                split_type="era", boltzmann_alpha=-np.inf, min_samples_leaf_per_era=10
            )
        )
        self.est = InvariantForestClassifier(
            n_estimators=10, max_depth=5, random_state=0, **kw
        )

    def time_fit(self, settings):
        self.est.fit(self.X, self.y, eras=self.eras)


class DeepForestFit:
    """20 trees of depth 20 on the IRF regression (4,000 rows, d=5)."""

    params = ((0.0, 10.0),)
    param_names = ("irf_penalty",)
    timeout = 300

    def setup(self, irf_penalty):
        self.X, self.y, self.eras, _, _ = make_irf_regression(d=5, random_state=0)
        self.est = InvariantForestRegressor(
            n_estimators=20, max_depth=20, irf_penalty=irf_penalty, random_state=0
        )

    def time_fit(self, irf_penalty):
        self.est.fit(self.X, self.y, eras=self.eras)
