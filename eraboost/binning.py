"""Binning of raw features into at most ``max_bins`` bins per feature.

Thresholds are those of scikit-learn (midpoints of distinct values when there
are few, quantiles otherwise), so that eraboost and scikit-learn grow the same
trees. Unlike scikit-learn, each feature's missing-value bin is its own last
bin (``n_bins_non_missing_[f]``), so histograms can be sized to each feature's
real number of bins.

Categorical features are binned separately (``map_categories``): their
values are already ordinal codes 0 .. k - 1 (see ``_categorical.py``), and
code c is bin c, as in scikit-learn; the missing-value bin is k.
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
    is_categorical : ndarray of bool (n_features,) or None
        Categorical features.
    known_categories : list of (ndarray or None), or None
        For each categorical feature, its categories ``0 .. k - 1`` as
        floats (``k <= max_bins``); None for the numeric features.

    Attributes
    ----------
    bin_thresholds_ : list of ndarray
        For a categorical feature, its known categories.
    n_bins_non_missing_ : ndarray of uint32
    missing_bin_ : ndarray of uint32
        Bin of missing values for each feature (= ``n_bins_non_missing_``).
    n_bins_ : ndarray of uint32
        Bins per feature, missing-value bin included.
    """

    def __init__(self, max_bins=255, subsample=int(2e5), random_state=None,
                 n_threads=None, is_categorical=None, known_categories=None):
        self.max_bins = max_bins
        self.subsample = subsample
        self.random_state = random_state
        self.n_threads = n_threads
        self.is_categorical = is_categorical
        self.known_categories = known_categories

    def _categorical_mask(self, n_features):
        if self.is_categorical is None:
            return np.zeros(n_features, dtype=bool)
        return np.asarray(self.is_categorical, dtype=bool)

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
        is_cat = self._categorical_mask(X.shape[1])
        numeric = np.flatnonzero(~is_cat)
        with ThreadPoolExecutor(max_workers=n_threads) as pool:
            numeric_thresholds = list(pool.map(
                lambda f: find_binning_thresholds(X[:, f], self.max_bins,
                                                  sample_weight),
                numeric))
        self.bin_thresholds_ = [None] * X.shape[1]
        for f, t in zip(numeric, numeric_thresholds):
            self.bin_thresholds_[f] = t
        for f in np.flatnonzero(is_cat):
            self.bin_thresholds_[f] = check_known_categories(
                self.known_categories[f], self.max_bins, f)
        self.n_bins_non_missing_ = np.array(
            [t.size if c else t.size + 1
             for t, c in zip(self.bin_thresholds_, is_cat)], dtype=np.uint32
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
        for f in np.flatnonzero(self._categorical_mask(X.shape[1])):
            out[:, f] = map_categories(X[:, f], self.n_bins_non_missing_[f])
        return out

    def fit_transform(self, X, sample_weight=None):
        return self.fit(X, sample_weight).transform(X)


def check_known_categories(categories, max_bins, feature):
    """The known categories of a categorical feature: exactly ``0 .. k - 1``
    with ``k <= max_bins`` (ordinal codes), as float64."""
    categories = np.asarray(categories, dtype=np.float64)
    k = categories.size
    if k > max_bins:
        raise ValueError(
            f"Categorical feature at index {feature} is expected to have a "
            f"cardinality <= {max_bins} but actually has a cardinality of {k}."
        )
    if not np.array_equal(categories, np.arange(k)):
        raise ValueError(
            f"the known categories of feature {feature} must be the ordinal "
            f"codes 0 .. {k - 1}."
        )
    return categories


def map_categories(col, n_categories):
    """Bins of a categorical column of ordinal codes.

    Code c in ``0 .. n_categories - 1`` is bin c; NaN, negative and unknown
    codes (>= ``n_categories``) go to the missing-value bin ``n_categories``.
    """
    col = np.asarray(col, dtype=np.float64)
    n_categories = int(n_categories)
    known = (col >= 0) & (col < n_categories)   # False for NaN
    out = np.full(col.shape, n_categories, dtype=np.uint8)
    out[known] = col[known].astype(np.uint8)
    return out
