"""Binning of raw features into at most ``max_bins`` bins per feature.

Thresholds are those of scikit-learn (midpoints of distinct values when there
are few, quantiles otherwise), so that eraboost and scikit-learn grow the same
trees. Unlike scikit-learn, each feature's missing-value bin is its own last
bin (``n_bins_non_missing_[f]``), so histograms can be sized to each feature's
real number of bins.
"""
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.stats import _weighted_percentile

from ._binning import map_to_bins
from ._openmp import effective_n_threads

ALMOST_INF = 1e300


def find_binning_thresholds(col, max_bins, sample_weight=None):
    """Increasing thresholds of one feature; NaN values are ignored.

    Value x falls in bin k iff thresholds[k - 1] < x <= thresholds[k].
    """
    col = np.asarray(col, dtype=np.float64)
    keep = ~np.isnan(col)
    if sample_weight is not None:
        keep &= sample_weight != 0
    col = col[keep]
    if sample_weight is not None:
        sample_weight = sample_weight[keep]
    if sample_weight is None:
        col = np.sort(col)
    else:
        order = np.argsort(col, kind="stable")
        col, sample_weight = col[order], sample_weight[order]
    distinct = col[np.r_[True, col[1:] != col[:-1]]] if col.size else col
    if distinct.size <= 1:
        return np.zeros(0, dtype=np.float64)
    if distinct.size <= max_bins:
        thresholds = (distinct[:-1] + distinct[1:]) / 2.0
    else:
        percentiles = np.linspace(0, 100, num=max_bins + 1)[1:-1]
        if sample_weight is None:
            thresholds = np.percentile(
                col, percentiles, method="averaged_inverted_cdf"
            )
        else:
            thresholds = np.array(
                [
                    _weighted_percentile(col, sample_weight, p, average=True)
                    for p in percentiles
                ]
            )
        thresholds = np.unique(thresholds)
    np.clip(thresholds, a_min=None, a_max=ALMOST_INF, out=thresholds)
    return np.ascontiguousarray(thresholds, dtype=np.float64)


class BinMapper:
    """Maps a float matrix to a Fortran-ordered uint8 matrix of bins.

    Parameters
    ----------
    max_bins : int
        Maximum number of bins for non-missing values (2 to 255).
    subsample : int or None
        Rows drawn (with replacement, weighted by ``sample_weight``) to find
        the quantiles when there are more.
    random_state : int
    n_threads : int or None

    Attributes
    ----------
    bin_thresholds_ : list of ndarray
    n_bins_non_missing_ : ndarray of uint32
    missing_bin_ : ndarray of uint32
        Bin of missing values for each feature (= ``n_bins_non_missing_``).
    n_bins_ : ndarray of uint32
        Bins per feature, missing-value bin included.
    """

    def __init__(self, max_bins=255, subsample=int(2e5), random_state=None,
                 n_threads=None):
        self.max_bins = max_bins
        self.subsample = subsample
        self.random_state = random_state
        self.n_threads = n_threads

    def fit(self, X, sample_weight=None):
        if not 2 <= self.max_bins <= 255:
            raise ValueError(f"max_bins={self.max_bins} must be in [2, 255].")
        rng = check_random_state(self.random_state)
        if self.subsample is not None and X.shape[0] > self.subsample:
            p = None
            if sample_weight is not None:
                p = sample_weight / np.sum(sample_weight)
            subset = rng.choice(X.shape[0], self.subsample, p=p, replace=True)
            X = X.take(subset, axis=0)
            sample_weight = None
        n_threads = self.n_threads or effective_n_threads()
        with ThreadPoolExecutor(max_workers=n_threads) as pool:
            self.bin_thresholds_ = list(pool.map(
                lambda f: find_binning_thresholds(X[:, f], self.max_bins,
                                                  sample_weight),
                range(X.shape[1])))
        self.n_bins_non_missing_ = np.array(
            [t.size + 1 for t in self.bin_thresholds_], dtype=np.uint32
        )
        self.missing_bin_ = self.n_bins_non_missing_.copy()
        self.n_bins_ = self.n_bins_non_missing_ + 1
        return self

    def transform(self, X):
        n_threads = self.n_threads or effective_n_threads()
        out = np.empty(X.shape, dtype=np.uint8, order="F")
        map_to_bins(
            np.asarray(X, dtype=np.float64), self.bin_thresholds_,
            self.missing_bin_, out, n_threads,
        )
        return out

    def fit_transform(self, X, sample_weight=None):
        return self.fit(X, sample_weight).transform(X)
