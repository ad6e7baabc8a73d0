"""eraboost ``original`` beside the libraries it is measured against:
scikit-learn, LightGBM and XGBoost (``hist``), the same trees (31 leaves,
255 bins, no L2 regularisation), no eras, early stopping off.

Run from ``asv_benchmarks/``: ``asv run --quick``. asv times each library on
its own; ``benchmarks/peers/compare.py`` prints the ratios side by side.
"""

import os

from .common import float_era_data, int8_era_data

N, P, TREES, LEAVES = 100_000, 50, 30, 31


def make_estimator(lib):
    """A regressor of ``lib`` growing the same trees as eraboost's."""
    if lib == "eraboost":
        from eraboost import HistGradientBoostingRegressor

        return HistGradientBoostingRegressor(
            max_iter=TREES, max_leaf_nodes=LEAVES, early_stopping=False, random_state=0
        )
    if lib == "sklearn":
        from sklearn.ensemble import HistGradientBoostingRegressor

        return HistGradientBoostingRegressor(
            max_iter=TREES, max_leaf_nodes=LEAVES, early_stopping=False, random_state=0
        )
    try:
        if lib == "lightgbm":
            from lightgbm import LGBMRegressor

            return LGBMRegressor(
                n_estimators=TREES,
                num_leaves=LEAVES,
                max_bin=255,
                min_child_samples=20,
                min_child_weight=1e-3,
                reg_lambda=0.0,
                n_jobs=os.cpu_count(),
                force_col_wise=True,
                verbose=-1,
                random_state=0,
            )
        from xgboost import XGBRegressor

        return XGBRegressor(
            n_estimators=TREES,
            tree_method="hist",
            grow_policy="lossguide",
            max_leaves=LEAVES,
            max_depth=0,
            max_bin=255,
            min_child_weight=1e-3,
            reg_lambda=0.0,
            n_jobs=os.cpu_count(),
            random_state=0,
        )
    except ImportError as exc:  # the peer is not installed in this env
        raise NotImplementedError(str(exc)) from exc


class PeerFit:
    """``fit`` of each library on int8 (values 0..4) and float64 data."""

    params = (("eraboost", "sklearn", "lightgbm", "xgboost"), ("int8", "float64"))
    param_names = ("library", "dtype")
    timeout = 600

    def setup(self, library, dtype):
        data = int8_era_data if dtype == "int8" else float_era_data
        self.X, self.y, _ = data(N, P, 1)
        self.est = make_estimator(library)

    def time_fit(self, library, dtype):
        self.est.fit(self.X, self.y)

    def peakmem_fit(self, library, dtype):
        self.est.fit(self.X, self.y)
