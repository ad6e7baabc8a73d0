"""The bin thresholds of the single-machine fit on the same rows.

The single-machine fit finds each feature's thresholds on all the rows, or,
above ``BinMapper``'s subsample, on a subsample drawn from its seed. The
driver draws the same subsample's row numbers from the number of rows (and
the weights, where the binning is weighted), fetches only those rows from
the cluster, and fits the same ``BinMapper`` on them.
"""

import numpy as np
from sklearn.utils import check_random_state

from .._engine.binning import WEIGHTED_BINNING, BinMapper

#: ``BinMapper``'s default subsample (scikit-learn's).
SUBSAMPLE = int(2e5)


def binning_rows(n_samples, seed, sample_weight):
    """The single machine's binning subsample: row numbers (in its draw
    order, repeats kept), or None for all the rows.

    ``sample_weight`` is a callable giving all the weights (fetched only
    when the draw needs them), or None.
    """
    if n_samples <= SUBSAMPLE:
        return None
    rng = check_random_state(seed)
    if WEIGHTED_BINNING:
        p = None
        if sample_weight is not None:
            w = sample_weight()
            p = w / np.sum(w)
        return rng.choice(n_samples, SUBSAMPLE, p=p, replace=True)
    return rng.choice(n_samples, SUBSAMPLE, replace=False)


def fit_bin_mapper(local, X, sample_weight, names):
    """Fit ``local``'s input checks and its ``BinMapper`` on the binning
    rows of the dask array ``X``; returns the fitted mapper.

    Sets the fitted input attributes of ``local`` (``n_features_in_``,
    ``feature_names_in_``) as its own fit does.
    """
    n_samples, n_features = X.shape
    seed = local._random_seed
    subset = binning_rows(
        n_samples,
        seed,
        None if sample_weight is None else lambda: sample_weight.compute(),
    )
    if subset is None:
        X_fit = X.compute()
        sw_fit = None if sample_weight is None else sample_weight.compute()
    else:
        # fetch each drawn row once, then repeat it as the draw does
        rows = np.unique(subset)
        X_fit = X[rows].compute()[np.searchsorted(rows, subset)]
        sw_fit = None
    if names is not None:
        import pandas as pd

        X_fit = pd.DataFrame(X_fit, columns=names)
    X_fit = local._check_X(X_fit, reset=True)
    if local.is_categorical_ is not None:
        raise ValueError(
            "categorical features are not supported by the Dask estimators "
            "yet; fit eraboost.HistGradientBoostingRegressor on one machine."
        )
    mapper = BinMapper(
        max_bins=local.max_bins,
        random_state=seed,
        subsample=None if subset is not None else SUBSAMPLE,
        n_threads=1,
        is_categorical=np.zeros(n_features, dtype=bool),
        known_categories=[None] * n_features,
    )
    return mapper.fit(X_fit, sw_fit)
