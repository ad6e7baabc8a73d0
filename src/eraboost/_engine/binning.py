"""Binning of raw features into at most ``max_bins`` bins per feature.

Thresholds are those of scikit-learn (midpoints of distinct values when there
are few, quantiles otherwise), so that eraboost and scikit-learn grow the same
trees. The rules are those of the installed scikit-learn release
(:data:`WEIGHTED_BINNING`): from 1.9 on, the subsample is drawn with
replacement in proportion to the sample weights, and the quantiles are
averaged inverted-CDF percentiles, weighted when the weights were not spent
on the subsample; up to 1.8, the subsample is drawn without replacement,
sample weights play no part, and the quantiles are midpoint percentiles
(duplicates kept).

Unlike scikit-learn, each feature's missing-value bin is its own last bin
(``n_bins_non_missing_[f]``), so histograms can be sized to each feature's
real number of bins.

Integer input of 8 or 16 bits (int8, uint8, int16, uint16) is never
converted to float64: each feature's thresholds come from its distinct values
(the same subsample and the same midpoints or quantiles as scikit-learn) and
its values go to bins through a lookup table indexed by the integer. A
Fortran-ordered uint8 (or non-negative int8) matrix whose values already are
their own bins (every column's values in ``0 .. k-1`` with ``k`` its number of
non-missing bins) is used as the binned matrix itself, without a copy.

A table (pandas, polars or pyarrow) of small integer and float columns
reaches the bin mapper as a :class:`MixedMatrix`: its integer columns in one
matrix of their common type, its float columns in a float64 matrix. Each
group is binned by its own path into one uint8 matrix, with the thresholds
(and so the model) of the whole table converted to float64.

Categorical features are binned separately (``map_categories``): their
values are already ordinal codes 0 .. k - 1 (see ``_categorical.py``), and
code c is bin c, as in scikit-learn; the missing-value bin is k.
"""

from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise

import numpy as np
import sklearn
from sklearn.utils import check_random_state
from sklearn.utils.fixes import parse_version
from sklearn.utils.stats import _weighted_percentile

from ._binning import (
    build_lookup,
    columns_with_value,
    int_column_range,
    int_value_counts,
    map_int_to_bins,
    map_to_bins,
)
from ._openmp import effective_n_threads

ALMOST_INF = 1e300

#: The installed scikit-learn bins with sample weights (1.9 and newer); see
#: the module's docstring. eraboost follows the installed release, so that a
#: fit without eras grows the trees of that release's estimators.
WEIGHTED_BINNING = parse_version(sklearn.__version__).release >= (1, 9)

# Features of at most this many bins (the missing-value bin included) are
# stored by rows for the booster (``BinMapper.rows_layout_pays``): their
# per-bin buffers of a chunk of 64 features stay in L1 cache.
ROWS_MAX_BINS = 32

#: Integer dtypes binned through lookup tables, without a float64 copy.
INT_DTYPES = tuple(np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16))

# columns whose thresholds are found together (bounds the subsample's copy)
_COLUMN_CHUNK = 256


def is_small_int(X):
    """True when ``X`` is an array of one of :data:`INT_DTYPES`."""
    return getattr(X, "dtype", None) in INT_DTYPES


# column types of polars and pyarrow tables read as one of INT_DTYPES
_TABLE_INT_TYPES = {
    "int8": np.int8,
    "uint8": np.uint8,
    "int16": np.int16,
    "uint16": np.uint16,
}


def small_int_table_matrix(X):
    """A polars DataFrame or pyarrow Table (or RecordBatch) of small
    integer columns as a Fortran-ordered matrix of their dtype; None for
    any other input.

    scikit-learn's checks turn such tables into float64 (8 bytes a value);
    their columns are copied here one by one into a matrix of their own
    integer type instead, which is binned without a float copy. Only
    tables without nulls whose column types (:data:`INT_DTYPES`) have a
    common type among them qualify.
    """
    # a pandas frame of one integer type reaches validate_data as is
    if type(X).__module__.split(".")[0] not in ("polars", "pyarrow"):
        return None
    table = _table_columns(X)
    if table is None:
        return None
    names, column = table
    if not names or any(n not in _TABLE_INT_TYPES for n in names):
        return None
    dtype = np.result_type(*(_TABLE_INT_TYPES[n] for n in names))
    if dtype not in INT_DTYPES:
        return None
    out = np.empty((sum(map(len, column(0))), len(names)), dtype=dtype, order="F")
    for j in range(len(names)):
        _fill_column(out, j, column(j))
    return out


# float column types of pandas, polars and pyarrow tables
_TABLE_FLOAT_TYPES = {
    "float32": np.float32,
    "float64": np.float64,
    "float": np.float32,
    "double": np.float64,
}


class MixedMatrix:
    """The columns of a table of small integer and float columns, in two
    matrices: the integer ones in their common type, the float ones in
    float64, both in Fortran order.

    Rows are selected as from an array (``X[rows]``); the columns stay in
    their two matrices, so no float64 matrix of all columns is made.

    Parameters
    ----------
    ints : ndarray of shape (n_samples, n_int_features)
        One of :data:`INT_DTYPES`.
    floats : ndarray of float64, shape (n_samples, n_float_features)
    is_int : ndarray of bool, shape (n_features,)
        Which columns of the table are in ``ints`` (in order); the others
        are in ``floats`` (in order).
    """

    ndim = 2

    def __init__(self, ints, floats, is_int):
        is_int = np.asarray(is_int, dtype=bool)
        if (
            ints.dtype not in INT_DTYPES
            or floats.dtype != np.float64
            or ints.shape[0] != floats.shape[0]
            or ints.shape[1] != is_int.sum()
            or floats.shape[1] != is_int.size - is_int.sum()
        ):
            raise ValueError("ints, floats and is_int do not describe one table")
        self.ints, self.floats, self.is_int = ints, floats, is_int

    @property
    def shape(self):
        return (self.ints.shape[0], self.is_int.size)

    @property
    def nbytes(self):
        return self.ints.nbytes + self.floats.nbytes

    def __len__(self):
        return self.shape[0]

    def __getitem__(self, rows):
        return MixedMatrix(self.ints[rows], self.floats[rows], self.is_int)

    def to_float64(self, rows=slice(None)):
        """The table's ``rows`` as one float64 matrix (C order), in its
        column order."""
        ints, floats = self.ints[rows], self.floats[rows]
        out = np.empty((ints.shape[0], self.is_int.size), dtype=np.float64)
        out[:, self.is_int] = ints
        out[:, ~self.is_int] = floats
        return out

    def column_runs(self):
        """Runs of consecutive columns of one group: ``(start, stop,
        is_int, first)``, ``first`` the run's first column in its group."""
        is_int = self.is_int
        first = np.where(is_int, np.cumsum(is_int), np.cumsum(~is_int)) - 1
        edges = np.flatnonzero(is_int[1:] != is_int[:-1]) + 1
        bounds = [0, *edges.tolist(), is_int.size]
        return [(a, b, bool(is_int[a]), int(first[a])) for a, b in pairwise(bounds)]


def _table_columns(X):
    """The column type names and a reader of each column (to a NumPy
    array) of a pandas DataFrame, polars DataFrame or pyarrow Table (or
    RecordBatch) without nulls; None for any other input."""
    module = type(X).__module__.split(".")[0]
    if module == "pandas" and hasattr(X, "iloc") and getattr(X, "ndim", 0) == 2:
        dtypes = list(X.dtypes)
        # extension types (nullable, categorical, sparse...) keep today's path
        if not all(isinstance(d, np.dtype) for d in dtypes):
            return None
        return [d.name for d in dtypes], lambda j: [X.iloc[:, j].to_numpy()]
    if module == "polars" and hasattr(X, "get_columns"):
        columns = X.get_columns()
        if sum(c.null_count() for c in columns):
            return None
        return (
            [str(c.dtype).lower() for c in columns],
            lambda j: [columns[j].to_numpy()],
        )
    if module == "pyarrow" and hasattr(X, "columns") and hasattr(X, "schema"):
        columns = X.columns
        if sum(c.null_count for c in columns):
            return None
        # a pyarrow Table's columns come in chunks, a RecordBatch's do not
        return (
            [str(t) for t in X.schema.types],
            lambda j: [
                c.to_numpy() for c in getattr(columns[j], "chunks", [columns[j]])
            ],
        )
    return None


def _fill_column(out, j, pieces):
    """Copy the pieces of a column, one after the other, into ``out[:, j]``."""
    start = 0
    for values in pieces:
        out[start : start + len(values), j] = values
        start += len(values)


def mixed_table_matrix(X):
    """A pandas DataFrame, polars DataFrame or pyarrow Table of small
    integer columns (:data:`INT_DTYPES`, with a common type among them) and
    float32 or float64 columns, as a :class:`MixedMatrix`; None for any
    other input (one without columns of both kinds, with nulls, with other
    column types, without rows).

    scikit-learn's checks turn such a table into one float64 matrix (8 bytes
    a value); here only the float columns are converted, column by column.
    A :class:`MixedMatrix` (as the command line reads tables) is returned
    as is.
    """
    if isinstance(X, MixedMatrix):
        return X
    table = _table_columns(X)
    if table is None:
        return None
    names, column = table
    is_int = np.array([n in _TABLE_INT_TYPES for n in names], dtype=bool)
    is_float = np.array([n in _TABLE_FLOAT_TYPES for n in names], dtype=bool)
    if not (is_int.any() and is_float.any() and np.all(is_int | is_float)):
        return None
    dtype = np.result_type(*(_TABLE_INT_TYPES[n] for n in np.array(names)[is_int]))
    n = sum(map(len, column(0)))
    if dtype not in INT_DTYPES or n == 0:
        return None
    ints = np.empty((n, int(is_int.sum())), dtype=dtype, order="F")
    floats = np.empty((n, int(is_float.sum())), dtype=np.float64, order="F")
    positions = np.where(is_int, np.cumsum(is_int), np.cumsum(is_float)) - 1
    for j, (k, integer) in enumerate(zip(positions, is_int)):
        _fill_column(ints if integer else floats, k, column(j))
    return MixedMatrix(ints, floats, is_int)


def find_binning_thresholds(col, max_bins, sample_weight=None, weighted=None):
    """Increasing thresholds of one feature; NaN values are ignored.

    Value x falls in bin k iff thresholds[k - 1] < x <= thresholds[k].
    ``weighted`` picks the rules (default :data:`WEIGHTED_BINNING`): True,
    scikit-learn 1.9's; False, 1.8's and older, where ``sample_weight`` must
    be None.
    """
    if weighted is None:
        weighted = WEIGHTED_BINNING
    if not weighted:
        if sample_weight is not None:
            raise ValueError("scikit-learn 1.8's binning takes no sample weights")
        return _unweighted_thresholds(col, max_bins)
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
            thresholds = np.percentile(col, percentiles, method="averaged_inverted_cdf")
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


def _unweighted_thresholds(col, max_bins):
    """scikit-learn 1.8's (and 1.7's) thresholds: midpoints of the distinct values when
    there are at most ``max_bins``, else midpoint percentiles, duplicates
    kept."""
    col = np.asarray(col, dtype=np.float64)
    col = np.sort(col[~np.isnan(col)])
    distinct = col[np.r_[True, col[1:] != col[:-1]]] if col.size else col
    if distinct.size <= max_bins:
        thresholds = (distinct[:-1] + distinct[1:]) * 0.5
    else:
        percentiles = np.linspace(0, 100, num=max_bins + 1)[1:-1]
        thresholds = np.percentile(col, percentiles, method="midpoint")
    np.clip(thresholds, a_min=None, a_max=ALMOST_INF, out=thresholds)
    return np.ascontiguousarray(thresholds, dtype=np.float64)


def find_int_thresholds(col, max_bins, sample_weight=None, weighted=None):
    """Thresholds of an integer feature, without converting it to float64.

    Equal to ``find_binning_thresholds(col.astype(np.float64), ...)``: when
    the column has at most ``max_bins`` distinct values (counted with
    ``np.bincount``) they are the midpoints between consecutive ones,
    otherwise the column is handed to :func:`find_binning_thresholds`.

    Returns
    -------
    thresholds : ndarray of float64
    lo, hi : int
        Smallest and largest value seen (``0, -1`` when there is none). Every
        threshold lies in ``[lo, hi]``, so values below ``lo`` are in bin 0
        and values above ``hi`` in the last bin.
    """
    counted = col if sample_weight is None else col[sample_weight != 0]
    if counted.size == 0:
        return np.zeros(0, dtype=np.float64), 0, -1
    lo = int(counted.min())
    counts = np.bincount(counted.astype(np.int32) - lo)
    return int_thresholds_of_counts(
        counts, -lo, max_bins, lambda: (col, sample_weight), weighted
    )


def int_thresholds_of_counts(counts, offset, max_bins, column, weighted=None):
    """:func:`find_int_thresholds` from how often each value occurs.

    Parameters
    ----------
    counts : ndarray of int
        ``counts[v + offset]``: the rows of value ``v`` that count (those
        of the subsample, or of nonzero weight).
    offset : int
    max_bins : int
    column : callable
        Returns ``(col, sample_weight)`` for :func:`find_binning_thresholds`,
        called only when there are more than ``max_bins`` distinct values.
    weighted : bool or None

    Returns
    -------
    thresholds : ndarray of float64
    lo, hi : int
        As for :func:`find_int_thresholds`.
    """
    values = np.flatnonzero(counts) - offset
    if values.size == 0:
        return np.zeros(0, dtype=np.float64), 0, -1
    lo, hi = int(values[0]), int(values[-1])
    distinct = values.astype(np.float64)
    if distinct.size <= 1:
        return np.zeros(0, dtype=np.float64), lo, hi
    if distinct.size <= max_bins:
        return (distinct[:-1] + distinct[1:]) / 2.0, lo, hi
    col, sample_weight = column()
    thresholds = find_binning_thresholds(col, max_bins, sample_weight, weighted)
    return thresholds, lo, hi


class BinMapper:
    """Maps a feature matrix to a Fortran-ordered uint8 matrix of bins.

    Parameters
    ----------
    max_bins : int
        Maximum number of bins for non-missing values (2 to 255).
    subsample : int or None
        Rows drawn to find the quantiles when there are more: with
        replacement, in proportion to ``sample_weight``, under scikit-learn
        1.9's rules; without replacement under older ones.
    random_state : int
    n_threads : int or None
    is_categorical : ndarray of bool (n_features,) or None
        Categorical features.
    known_categories : list of (ndarray or None), or None
        For each categorical feature, its categories ``0 .. k - 1`` as
        floats (``k <= max_bins``); None for the numeric features.
    weighted : bool or None
        The binning rules: True, scikit-learn 1.9's (sample weights count);
        False, 1.8's and older (they are ignored); None, the installed release's
        (:data:`WEIGHTED_BINNING`).

    Attributes
    ----------
    bin_thresholds_ : list of ndarray
        For a categorical feature, its known categories.
    n_bins_non_missing_ : ndarray of uint32
    missing_bin_ : ndarray of uint32
        Bin of missing values for each feature (= ``n_bins_non_missing_``).
    n_bins_ : ndarray of uint32
        Bins per feature, missing-value bin included.
    is_integer_ : bool
        Fitted on integer input (:data:`INT_DTYPES`): lookup tables are used.
    """

    def __init__(
        self,
        max_bins=255,
        subsample=int(2e5),
        random_state=None,
        n_threads=None,
        is_categorical=None,
        known_categories=None,
        weighted=None,
    ):
        self.max_bins = max_bins
        self.subsample = subsample
        self.random_state = random_state
        self.n_threads = n_threads
        self.is_categorical = is_categorical
        self.known_categories = known_categories
        self.weighted = weighted

    def __getattr__(self, name):
        # a mapper read from a model file holds the ranges of integer input
        # (_lo, _hi) but not their lookup tables, built here on first use
        state = vars(self)
        if name in ("_lut", "_lut_start") and "_lo" in state and "_hi" in state:
            state["_lut"], state["_lut_start"] = build_lookup(
                self.bin_thresholds_, self._lo, self._hi
            )
            return state[name]
        raise AttributeError(
            f"{type(self).__name__!r} object has no attribute {name!r}"
        )

    def _categorical_mask(self, n_features):
        if self.is_categorical is None:
            return np.zeros(n_features, dtype=bool)
        return np.asarray(self.is_categorical, dtype=bool)

    def fit(self, X, sample_weight=None):
        """Find the thresholds of every feature.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features) or MixedMatrix
            float64, or one of :data:`INT_DTYPES` (no float copy is made),
            or a table's integer and float columns (each group binned by
            its path, with the thresholds of the table as float64).
        sample_weight : ndarray of shape (n_samples,) or None

        Returns
        -------
        self : BinMapper
        """
        if not 2 <= self.max_bins <= 255:
            raise ValueError(f"max_bins={self.max_bins} must be in [2, 255].")
        rng = check_random_state(self.random_state)
        weighted = WEIGHTED_BINNING if self.weighted is None else self.weighted
        if not weighted:
            sample_weight = None
        subset = None
        if self.subsample is not None and X.shape[0] > self.subsample:
            if weighted:
                p = None
                if sample_weight is not None:
                    p = sample_weight / np.sum(sample_weight)
                subset = rng.choice(X.shape[0], self.subsample, p=p, replace=True)
            else:
                subset = rng.choice(X.shape[0], self.subsample, replace=False)
            sample_weight = None
        self.is_integer_ = is_small_int(X)
        n_threads = self.n_threads or effective_n_threads()
        if isinstance(X, MixedMatrix):
            found = self._mixed_thresholds(
                X, subset, sample_weight, weighted, n_threads
            )
        else:
            found = self._group_thresholds(
                X, self.is_integer_, subset, sample_weight, weighted, n_threads
            )
        self.bin_thresholds_ = [
            np.ascontiguousarray(t, dtype=np.float64) for t, _, _ in found
        ]
        is_cat = self._categorical_mask(X.shape[1])
        if is_cat.any() and (self.is_integer_ or isinstance(X, MixedMatrix)):
            raise ValueError("categorical features need float64 ordinal codes")
        for f in np.flatnonzero(is_cat):
            self.bin_thresholds_[f] = check_known_categories(
                self.known_categories[f], self.max_bins, f
            )
        self.n_bins_non_missing_ = np.array(
            [t.size if c else t.size + 1 for t, c in zip(self.bin_thresholds_, is_cat)],
            dtype=np.uint32,
        )
        self.missing_bin_ = self.n_bins_non_missing_.copy()
        self.n_bins_ = self.n_bins_non_missing_ + 1
        if self.is_integer_:
            self._lo = np.array([lo for _, lo, _ in found], dtype=np.int32)
            self._hi = np.array([hi for _, _, hi in found], dtype=np.int32)
            self._lut, self._lut_start = build_lookup(
                self.bin_thresholds_, self._lo, self._hi
            )
        return self

    def _group_thresholds(self, X, integer, subset, sample_weight, weighted, n_threads):
        """Thresholds of a matrix of one type: 8-bit integers from their
        value counts, 16-bit integers and float64 column by column."""
        if integer and X.dtype.itemsize == 1:
            return self._byte_thresholds(X, subset, sample_weight, weighted, n_threads)
        return self._column_thresholds(
            X, integer, subset, sample_weight, weighted, n_threads
        )

    def _mixed_thresholds(self, X, subset, sample_weight, weighted, n_threads):
        """Thresholds of a :class:`MixedMatrix`, each group's by its path
        (the same subsample for both), in the table's column order."""
        found = [None] * X.shape[1]
        for group, integer in ((X.ints, True), (X.floats, False)):
            columns = np.flatnonzero(X.is_int == integer)
            thresholds = self._group_thresholds(
                group, integer, subset, sample_weight, weighted, n_threads
            )
            for f, t in zip(columns, thresholds):
                found[f] = t
        return found

    def _byte_thresholds(self, X, subset, sample_weight, weighted, n_threads):
        """Thresholds of 8-bit integer features from their value counts,
        counted in one pass over the rows (``int_value_counts``): no column
        is copied out of ``X``, whatever its memory layout."""
        if subset is not None:
            rows = np.sort(subset)
        elif sample_weight is not None:
            rows = np.flatnonzero(sample_weight != 0)
        else:
            rows = None
        counts = int_value_counts(X, rows, n_threads)
        offset = 128 if X.dtype == np.int8 else 0

        def column(f):
            if subset is not None:
                return X[subset, f], None
            return X[:, f], sample_weight

        return [
            int_thresholds_of_counts(
                counts[f], offset, self.max_bins, lambda f=f: column(f), weighted
            )
            for f in range(X.shape[1])
        ]

    def _column_thresholds(
        self, X, integer, subset, sample_weight, weighted, n_threads
    ):
        """Thresholds of float64 or (``integer``) 16-bit integer features,
        column by column on ``n_threads`` threads."""
        find = (
            find_int_thresholds
            if integer
            else (
                lambda col, mb, sw, w: (find_binning_thresholds(col, mb, sw, w), 0, -1)
            )
        )
        found = []
        # the caller's np.errstate set in each task: NumPy keeps it per thread
        errors = np.geterr()

        def find_column(col):
            with np.errstate(**errors):
                return find(col, self.max_bins, sample_weight, weighted)

        with ThreadPoolExecutor(max_workers=n_threads) as pool:
            for f0 in range(0, X.shape[1], _COLUMN_CHUNK):
                block = X[:, f0 : f0 + _COLUMN_CHUNK]
                if subset is not None:
                    block = block.take(subset, axis=0)
                found += pool.map(
                    lambda j, block=block: find_column(block[:, j]),
                    range(block.shape[1]),
                )
        return found

    def transform(self, X, by_rows=False):
        """Bins of ``X``, a uint8 matrix in Fortran order, or in C order
        (stored by rows) with ``by_rows``.

        Integer input fitted as integer goes through the lookup tables (no
        float copy); when it already is its own binned matrix (see
        :meth:`is_identity`) and ``by_rows`` is False, it is returned as is,
        viewed as uint8.
        """
        n_threads = self.n_threads or effective_n_threads()
        order = "C" if by_rows else "F"
        if isinstance(X, MixedMatrix):
            return self._transform_mixed(X, order, n_threads)
        if self.is_integer_ and is_small_int(X):
            if not by_rows and self.is_identity(X):
                return X.view(np.uint8)
            out = np.empty(X.shape, dtype=np.uint8, order=order)
            map_int_to_bins(
                X,
                self._lut,
                self._lut_start,
                self._lo,
                self._hi,
                self.n_bins_non_missing_ - 1,
                out,
                n_threads,
            )
            return out
        out = np.empty(X.shape, dtype=np.uint8, order=order)
        map_to_bins(
            np.asarray(X, dtype=np.float64),
            self.bin_thresholds_,
            self.missing_bin_,
            out,
            n_threads,
        )
        for f in np.flatnonzero(self._categorical_mask(X.shape[1])):
            out[:, f] = map_categories(X[:, f], self.n_bins_non_missing_[f])
        return out

    def _transform_mixed(self, X, order, n_threads):
        """Bins of a :class:`MixedMatrix`: each run of consecutive columns
        of one group binned by its path into its columns of one matrix."""
        out = np.empty(X.shape, dtype=np.uint8, order=order)
        for a, b, integer, first in X.column_runs():
            part = out[:, a:b]
            thresholds = self.bin_thresholds_[a:b]
            if not integer:
                map_to_bins(
                    X.floats[:, first : first + b - a],
                    thresholds,
                    self.missing_bin_[a:b],
                    part,
                    n_threads,
                )
                continue
            lo, hi = int_table_range(thresholds, X.ints.dtype)
            lut, start = build_lookup(thresholds, lo, hi)
            map_int_to_bins(
                X.ints[:, first : first + b - a],
                lut,
                start,
                lo,
                hi,
                self.n_bins_non_missing_[a:b] - 1,
                part,
                n_threads,
            )
        return out

    def fit_transform(self, X, sample_weight=None):
        """``fit`` then ``transform``."""
        return self.fit(X, sample_weight).transform(X)

    def rows_layout_pays(self, X):
        """Whether the fitted bins of ``X`` are better stored by rows
        (``transform(X, by_rows=True)``) for growing trees on every feature.

        The histograms of a node's gathered rows then read one or two cache
        lines a row instead of one a feature (``_histogram.pyx``). True when
        ``X`` has several features, each of at most ``ROWS_MAX_BINS`` bins
        (the missing-value bin included). ``X`` stored by columns as its own
        binned matrix (:meth:`is_identity`, what a pandas frame of int8
        columns gives) is no exception: it serves as the copy by columns the
        partition reads (:meth:`bins_by_columns`).
        """
        return bool(
            X.ndim == 2
            and X.shape[1] > 1
            and np.all(self.n_bins_non_missing_ + 1 <= ROWS_MAX_BINS)
        )

    def bins_by_columns(self, X, X_binned):
        """``X`` itself, viewed as uint8, when it holds the bins of
        ``X_binned`` (stored by rows) stored by columns; else None.

        The partition of the nodes' rows reads the bins by columns
        (``engine.columns_for_partition``): a matrix that is its own binned
        matrix in Fortran order (:meth:`is_identity`) spares that copy.
        """
        if (
            X_binned.flags.c_contiguous
            and X_binned.ndim == 2
            and X_binned.shape[1] > 1
            and X.shape == X_binned.shape
            and self.is_identity(X)
        ):
            return X.view(np.uint8)
        return None

    def is_identity(self, X):
        """Whether the integer matrix ``X`` is its own binned matrix.

        True for a Fortran-ordered uint8 or int8 array whose every value is
        its own bin: in each column, every value ``v`` between the column's
        minimum (>= 0) and maximum maps to bin ``v``.
        """
        if not (
            self.is_integer_
            and X.dtype.itemsize == 1
            and X.flags.f_contiguous
            and X.ndim == 2
        ):
            return False
        mins, maxs = int_column_range(X, self.n_threads or effective_n_threads())
        if np.any(mins < 0) or np.any(maxs >= self.n_bins_non_missing_):
            return False
        for f in range(X.shape[1]):
            values = np.arange(mins[f], maxs[f] + 1)
            if not np.array_equal(self._bins_of(f, values), values):
                return False
        return True

    def _bins_of(self, f, values):
        """Bins of integer values of feature f, through its lookup table."""
        lo, hi = int(self._lo[f]), int(self._hi[f])
        table = self._lut[self._lut_start[f] : self._lut_start[f + 1]]
        inside = np.clip(values, lo, max(hi, lo)) - lo
        bins = (
            table[inside].astype(np.int64)
            if table.size
            else np.zeros(values.shape, dtype=np.int64)
        )
        bins[values < lo] = 0
        bins[values > hi] = self.n_bins_non_missing_[f] - 1
        return bins

    def has_missing_values(self, X_binned):
        """uint8 flag per feature: does ``X_binned`` hold its missing bin."""
        return columns_with_value(
            X_binned,
            self.missing_bin_,
            self.n_threads or effective_n_threads(),
        )


def int_table_range(thresholds, dtype):
    """Smallest and largest values (int32) of each feature's lookup table
    for integers of ``dtype``: the thresholds' range, rounded outwards.

    Values below a feature's range are below its thresholds (bin 0), values
    above it above them (the last bin), so these tables bin integers as the
    thresholds do, whatever range the fit saw; an empty range (no
    thresholds) sends every value to bin 0.
    """
    info = np.iinfo(dtype)
    lo = np.zeros(len(thresholds), dtype=np.int32)
    hi = np.full(len(thresholds), -1, dtype=np.int32)
    for f, t in enumerate(thresholds):
        if t.size:
            lo[f] = max(int(np.floor(t[0])), int(info.min))
            hi[f] = min(int(np.ceil(t[-1])), int(info.max))
    return lo, hi


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
    known = (col >= 0) & (col < n_categories)  # False for NaN
    out = np.full(col.shape, n_categories, dtype=np.uint8)
    out[known] = col[known].astype(np.uint8)
    return out
