"""Binning of float features against scikit-learn's ``_BinMapper``.

eraboost's trees equal scikit-learn's only if every value lands in the same
bin: thresholds, the missing-value bin, subsampling, weights, categorical
features and ``max_bins`` are compared here on hand-made columns (integer
input has its own tests in ``test_int_input.py``).
"""

import warnings

import numpy as np
import pytest
from sklearn.ensemble._hist_gradient_boosting.binning import (
    _BinMapper as SkBinMapper,
)

from eraboost._engine.binning import BinMapper, find_binning_thresholds
from tests._sklearn_threads import scikit_learn_on_one_thread  # noqa: F401
from tests.engine.helpers import fit_sklearn_mapper


def assert_same_binning(X, max_bins=255, sample_weight=None, **kw):
    ours = BinMapper(max_bins=max_bins, random_state=0, **kw)
    ref = SkBinMapper(n_bins=max_bins + 1, random_state=0, **kw)
    got = ours.fit_transform(X, sample_weight)
    want = fit_sklearn_mapper(ref, X, sample_weight).transform(X)
    # scikit-learn's missing-value bin is always bin max_bins; eraboost's is
    # each feature's own last bin (histograms sized to the real bin count)
    is_missing = got == ours.missing_bin_[None, :]
    np.testing.assert_array_equal(
        np.where(is_missing, ref.missing_values_bin_idx_, got), want
    )
    np.testing.assert_array_equal(ours.n_bins_non_missing_, ref.n_bins_non_missing_)
    for a, b in zip(ours.bin_thresholds_, ref.bin_thresholds_):
        np.testing.assert_array_equal(a, b)
    # the missing-value bin is each feature's own last bin
    miss = np.isnan(X)
    for f in range(X.shape[1]):
        assert (got[miss[:, f], f] == ours.missing_bin_[f]).all()
        assert (got[~miss[:, f], f] < ours.missing_bin_[f]).all()
    return ours


@pytest.mark.parametrize("max_bins", [2, 5, 16, 255])
def test_float_bins_equal_sklearn(max_bins):
    rng = np.random.RandomState(0)
    X = np.column_stack(
        [
            rng.normal(size=3000),  # continuous: quantiles
            rng.randint(0, 4, size=3000).astype(float),  # few distinct values
            np.round(rng.exponential(size=3000), 1),  # ties
            np.zeros(3000),  # constant
        ]
    )
    X[rng.rand(*X.shape) < 0.07] = np.nan
    assert_same_binning(X, max_bins)


def test_subsampled_and_weighted_bins_equal_sklearn():
    rng = np.random.RandomState(1)
    X = rng.standard_t(3, size=(250_000, 2))  # above the 2e5-row subsample
    assert_same_binning(X, 64)
    Xs = X[:5000]
    assert_same_binning(Xs, 32, sample_weight=rng.uniform(0.1, 5, size=5000))


def test_rules_before_scikit_learn_1_9():
    # scikit-learn 1.7 and 1.8 (1.7: the newest on Python 3.10) bin with
    # midpoint percentiles, keep duplicated thresholds, ignore sample weights
    # and draw their subsample without replacement; eraboost follows them
    rng = np.random.RandomState(3)
    col = np.round(rng.exponential(size=5000), 2)  # > 255 distinct values, ties
    col[::11] = np.nan
    percentiles = np.linspace(0, 100, 256)[1:-1]
    got = find_binning_thresholds(col, 255, weighted=False)
    want = np.percentile(np.sort(col[~np.isnan(col)]), percentiles, method="midpoint")
    np.testing.assert_array_equal(got, want)
    assert np.unique(got).size < got.size  # duplicates kept
    newer = find_binning_thresholds(col, 255, weighted=True)
    np.testing.assert_array_equal(newer, np.unique(newer))  # removed by 1.9's rules

    X = col.reshape(-1, 1)
    sw = rng.uniform(0.1, 5, size=col.size)
    with_weights = BinMapper(weighted=False, random_state=0).fit(X, sw)
    np.testing.assert_array_equal(with_weights.bin_thresholds_[0], want)
    assert with_weights.n_bins_non_missing_[0] == 255

    big = rng.normal(size=(250_000, 1))
    mapper = BinMapper(max_bins=64, weighted=False, random_state=0).fit(big)
    subset = np.random.RandomState(0).choice(big.shape[0], 200_000, replace=False)
    want = np.percentile(
        np.sort(big[subset, 0]), np.linspace(0, 100, 65)[1:-1], method="midpoint"
    )
    np.testing.assert_array_equal(mapper.bin_thresholds_[0], want)


def test_float_bins_of_any_memory_layout():
    # the bins are the number of thresholds strictly below each value, for
    # C and Fortran arrays, views with negative or odd strides, row counts
    # that are not a multiple of the blocks, NaN values and features with
    # one or no threshold
    rng = np.random.RandomState(5)
    X = rng.normal(size=(1203, 6))
    X[:, 4] = 1.0  # constant: no threshold
    X[:, 5] = np.where(rng.rand(1203) < 0.5, 0.0, 2.0)  # one threshold
    X[rng.rand(*X.shape) < 0.05] = np.nan
    mapper = BinMapper(max_bins=40, random_state=0).fit(X)

    def reference(A):
        out = np.empty(A.shape, dtype=np.uint8)
        for f, t in enumerate(mapper.bin_thresholds_):
            out[:, f] = np.searchsorted(t, A[:, f], side="left")
            out[np.isnan(A[:, f]), f] = mapper.missing_bin_[f]
        return out

    wide = np.zeros((1203, 13))
    wide[:, ::2][:, :6] = X
    for A in (X, np.asfortranarray(X), X[::-1], X[::-3], wide[:, ::2][:, :6], X[:5]):
        np.testing.assert_array_equal(mapper.transform(A), reference(A))


def test_values_outside_the_fitted_range():
    rng = np.random.RandomState(2)
    X = rng.normal(size=(1000, 1))
    ours = BinMapper(max_bins=16, random_state=0).fit(X)
    ref = SkBinMapper(n_bins=17, random_state=0).fit(X)
    new = np.array([[-1e300], [-np.inf], [1e300], [np.inf], [np.nan], [0.0]])
    got = ours.transform(new)
    got = np.where(got == ours.missing_bin_, ref.missing_values_bin_idx_, got)
    np.testing.assert_array_equal(got, ref.transform(new))


def test_categorical_bins_are_the_categories():
    rng = np.random.RandomState(3)
    cats = rng.randint(0, 5, size=(500, 1)).astype(float)
    cats[::17] = np.nan
    num = rng.normal(size=(500, 1))
    X = np.hstack([cats, num])
    is_cat = np.array([True, False])
    known = [np.arange(5, dtype=float), None]
    ours = assert_same_binning(X, 255, is_categorical=is_cat, known_categories=known)
    # categories 0..4 are bins 0..4
    got = ours.transform(X)
    ok = ~np.isnan(X[:, 0])
    np.testing.assert_array_equal(got[ok, 0], X[ok, 0].astype(np.uint8))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_many_infinite_values_bin_and_predict_as_sklearn(dtype):
    """More than max_bins distinct values plus many +inf: a quantile
    threshold is NaN (the mean of two infinities); the bins, and so the
    trees and predictions, must still be scikit-learn's."""
    from sklearn.ensemble import HistGradientBoostingRegressor as SkHGB

    from eraboost import HistGradientBoostingRegressor

    rng = np.random.RandomState(0)
    X = rng.normal(size=(2000, 2)).astype(dtype)
    X[:600, 0] = np.inf
    if dtype == np.float32:
        X[-200:-100, 1] = 3e38
        X[-100:, 1] = -3e38
    y = rng.normal(size=2000) + np.isinf(X[:, 0])
    with np.errstate(invalid="ignore"):
        ours = assert_same_binning(X.astype(np.float64), 16)
    assert np.isnan(ours.bin_thresholds_[0]).any()  # the case at hand
    params = dict(max_bins=16, max_iter=20, early_stopping=False, random_state=0)
    with np.errstate(invalid="ignore"):
        got = HistGradientBoostingRegressor(**params).fit(X, y).predict(X)
        want = SkHGB(**params).fit(X, y).predict(X)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize(
    "shape", [(0, 3), (1, 1), (63, 2), (64, 5), (65, 7), (1000, 100), (129, 300)]
)
def test_binned_by_columns_copies_every_bin(shape, n_threads):
    """``binned_by_columns``: the rows' bins stored by columns, every byte
    in its place whatever the tiles' edges and the threads."""
    from eraboost._engine._binning import binned_by_columns

    X = np.random.default_rng(shape[0]).integers(0, 256, shape, dtype=np.uint8)
    got = binned_by_columns(X, n_threads)
    assert got.flags.f_contiguous and got.dtype == np.uint8
    np.testing.assert_array_equal(got, X)


def test_the_callers_numpy_error_state_holds_in_the_binning_threads():
    """Thresholds are found on worker threads: a column of many infinite
    values has a NaN threshold (inf - inf between two percentiles, as
    scikit-learn's), which warns as NumPy does in the caller's thread, and
    not under the caller's ``np.errstate(invalid="ignore")``."""
    X = np.random.RandomState(0).normal(size=(2000, 3))
    X[:600] = np.inf
    with pytest.warns(RuntimeWarning, match="invalid value"):
        BinMapper(max_bins=16, random_state=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(invalid="ignore"):
            mapper = BinMapper(max_bins=16, random_state=0).fit(X)
    assert np.isnan(mapper.bin_thresholds_[0]).any()
