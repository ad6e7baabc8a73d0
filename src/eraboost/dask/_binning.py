"""The bin thresholds of the single-machine fit on the same rows.

The single-machine fit finds each feature's thresholds on all the rows, or,
above ``BinMapper``'s subsample, on a subsample drawn from its seed. The
driver draws the same subsample's row numbers from the number of rows (and
the weights, where the binning is weighted), fetches only those rows from
the cluster, and fits the same ``BinMapper`` on them.

Categorical features are encoded first, as the single machine encodes them
(``eraboost._categorical``: an ``OrdinalEncoder`` of the categories of all
the rows, the categorical columns placed first): the driver gathers each
categorical column's distinct values from the chunks, fits the single
machine's encoder on a table of them, and the chunks are encoded where they
are (:func:`encode_categories`).
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


def _block_categories(block, columns):
    """The distinct values of a chunk's ``columns`` (a pandas frame's or
    an array's), NaN among them where a value is missing."""
    if hasattr(block, "iloc"):
        import pandas as pd

        return [pd.unique(block.iloc[:, j].to_numpy(dtype=object)) for j in columns]
    return [np.unique(np.asarray(block)[:, j]) for j in columns]


def _distinct(parts):
    values = np.concatenate(parts)
    if values.dtype == object:
        import pandas as pd

        return pd.unique(values)
    return np.unique(values)


def _category_table(meta, is_categorical, categories):
    """A table of X's columns (``meta``: a frame's empty partition, or an
    empty array) whose categorical columns hold every category found:
    the single machine's encoder fitted on it is the one fitted on all the
    rows (the other columns are zeros; the encoder passes them through)."""
    n_rows = max([1, *(len(c) for c in categories)])
    found = iter(categories)

    def column(values):
        if len(values):
            return np.resize(values, n_rows)  # every category, repeated
        return np.full(n_rows, np.nan)

    if not hasattr(meta, "iloc"):
        table = np.zeros((n_rows, meta.shape[1]), dtype=meta.dtype)
        for j in np.flatnonzero(is_categorical):
            table[:, j] = column(next(found))
        return table
    import pandas as pd

    columns = {}
    for j, dtype in enumerate(meta.dtypes):
        values = column(next(found)) if is_categorical[j] else np.zeros(n_rows)
        columns[j] = pd.Series(values).astype(dtype)
    table = pd.DataFrame(columns)
    table.columns = meta.columns
    return table


def _encode_frame(part, encoder, columns):
    import pandas as pd

    return pd.DataFrame(encoder.transform(part), index=part.index, columns=columns)


def encode_categories(client, local, X):
    """X (a dask array or DataFrame) with its categorical features encoded
    as the single machine encodes them, and whether it has any.

    With categorical features, fits ``local``'s input checks as its own
    fit does (``is_categorical_``, the encoder ``_preprocessor``,
    ``_n_categories``, ``n_features_in_``, ``feature_names_in_``) and
    returns X as float64 columns, the categorical ones first, in the same
    chunks (a frame stays a frame). Without, returns X as it is.
    """
    import dask.array as da
    from dask import delayed

    from .._categorical import check_categorical_features
    from ._placement import _is_dask_frame, _numeric_names

    frame = _is_dask_frame(X)
    if local.categorical_features is None:
        return X, False
    if frame:
        meta = X._meta
    elif isinstance(X, da.Array) and X.ndim == 2:
        meta = np.empty((0, X.shape[1]), dtype=X.dtype)
    else:
        return X, False  # refused by the input checks
    is_categorical = check_categorical_features(meta, local.categorical_features)
    if is_categorical is None or not np.any(is_categorical):
        return X, False
    if frame:
        # the other columns are numeric, as without categories
        _numeric_names(meta.loc[:, ~is_categorical], "X")
    elif X.dtype.kind not in "biuf":
        return X, False  # refused by the input checks
    else:
        X = X.rechunk({1: -1})
    columns = np.flatnonzero(is_categorical)
    blocks = X.to_delayed()
    if hasattr(blocks, "ravel"):  # an array's (a frame's is a list)
        blocks = blocks.ravel()
    found = client.compute(
        [delayed(_block_categories)(b, columns) for b in blocks],
        sync=True,
    )
    categories = [_distinct([f[i] for f in found]) for i in range(columns.size)]
    local._check_X(_category_table(meta, is_categorical, categories), reset=True)
    encoder = local._preprocessor
    if frame:
        import pandas as pd

        names = [f"x{j}" for j in range(is_categorical.size)]
        out_meta = pd.DataFrame({n: pd.Series(dtype=np.float64) for n in names})
        return X.map_partitions(_encode_frame, encoder, names, meta=out_meta), True
    return X.map_blocks(encoder.transform, dtype=np.float64), True


def fit_bin_mapper(local, X, sample_weight, names, categorical=False):
    """Fit ``local``'s input checks and its ``BinMapper`` on the binning
    rows of the dask array ``X``; returns the fitted mapper.

    Sets the fitted input attributes of ``local`` (``n_features_in_``,
    ``feature_names_in_``) as its own fit does. With ``categorical``, X
    is encoded already (:func:`encode_categories`, which set them).
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
    n_cat = 0
    if categorical:
        # the single machine's known categories: 0 .. k - 1
        n_cat = local._n_categories.size
    else:
        if names is not None:
            import pandas as pd

            X_fit = pd.DataFrame(X_fit, columns=names)
        X_fit = local._check_X(X_fit, reset=True)
    known = [np.arange(k, dtype=np.float64) for k in local._n_categories[:n_cat]]
    mapper = BinMapper(
        max_bins=local.max_bins,
        random_state=seed,
        subsample=None if subset is not None else SUBSAMPLE,
        n_threads=1,
        is_categorical=np.arange(n_features) < n_cat,
        known_categories=known + [None] * (n_features - n_cat),
    )
    return mapper.fit(X_fit, sw_fit)
