"""Out-of-era skill on a fixed synthetic era dataset (a ``track_``: asv
records the value per commit, so a change that alters the trees shows up)."""

import numpy as np

from eraboost import HistGradientBoostingRegressor
from eraboost.demo import make_era_data


def _mean_era_corr(y, pred, eras):
    return float(
        np.mean(
            [np.corrcoef(y[eras == e], pred[eras == e])[0, 1] for e in np.unique(eras)]
        )
    )


class OutOfEraScore:
    """Mean per-era correlation on new eras whose spurious feature is
    reversed (``eraboost.demo``'s data: 40 training eras, 20 test eras)."""

    params = (("original", "era", "directional"),)
    param_names = ("split_type",)
    timeout = 300

    def setup(self, split_type):
        X, y, eras, edges = make_era_data(n_eras=40, rows_per_era=500, seed=0)
        X_te, self.y_te, self.eras_te, _ = make_era_data(
            n_eras=20, rows_per_era=500, spurious_sign=-1.0, seed=1, edges=edges
        )
        est = HistGradientBoostingRegressor(
            split_type=split_type, max_iter=50, early_stopping=False, random_state=0
        )
        self.pred = est.fit(X, y, eras=eras).predict(X_te)

    def track_out_of_era_corr(self, split_type):
        return _mean_era_corr(self.y_te, self.pred, self.eras_te)

    track_out_of_era_corr.unit = "correlation"
