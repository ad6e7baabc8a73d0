"""Numerai scoring and post-processing, era by era, with numerai-tools.

Numerai scores a model era by era: the predictions of each era are ranked,
gaussianised and correlated with the era's target (``numerai_corr``), their
largest correlation with any feature is their *feature exposure*, and
predictions are often *neutralised* (their linear part in the features
removed) era by era. Every computation on one era here is numerai-tools'
own function (``numerai_tools.scoring``); this module only splits the rows
by era, checks the inputs and puts the results back in row order. Install
it with ``pip install "eraboost[numerai]"``.
"""

import numpy as np

from ._eras import check_eras
from .metrics import era_scores, era_summary

__all__ = [
    "era_rank",
    "feature_exposure",
    "neutralize",
    "numerai_corr",
    "numerai_summary",
]


def _scoring():
    """``numerai_tools.scoring`` and pandas, with a clear error if absent."""
    try:
        import pandas as pd
        from numerai_tools import scoring
    except ImportError as exc:
        raise ImportError(
            "eraboost.numerai uses numerai-tools and pandas; install them "
            'with pip install "eraboost[numerai]".'
        ) from exc
    return scoring, pd


def _check_predictions(y_pred, n=None, name="y_pred"):
    y_pred = np.asarray(y_pred, dtype=np.float64)
    if y_pred.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {y_pred.shape}.")
    if n is not None and y_pred.shape[0] != n:
        raise ValueError(f"{name} has {y_pred.shape[0]} rows, expected {n}.")
    if not np.isfinite(y_pred).all():
        raise ValueError(
            f"{name} contains NaN or infinite values; drop those rows first "
            "(numerai-tools needs complete values)."
        )
    return y_pred


def _check_features(X, features):
    """Feature columns as a float64 DataFrame (names kept), without NaN."""
    _, pd = _scoring()
    frame = X if isinstance(X, pd.DataFrame) else pd.DataFrame(np.asarray(X))
    if frame.ndim != 2:
        raise ValueError(f"X must be 2-D; got shape {np.shape(X)}.")
    if features is not None:
        frame = (
            frame[features] if isinstance(X, pd.DataFrame) else frame[list(features)]
        )
    frame = frame.astype(np.float64)
    if frame.shape[1] == 0:
        raise ValueError("X has no feature column.")
    if not np.isfinite(frame.to_numpy()).all():
        raise ValueError(
            "X contains NaN or infinite values; numerai-tools needs complete "
            "features (fill them first, e.g. with each era's median)."
        )
    return frame.reset_index(drop=True)


def _era_rows(eras, n):
    """Era labels (natural order) and the row indices of each era."""
    codes, labels = check_eras(eras, n)
    order = np.argsort(codes, kind="stable")
    ends = np.cumsum(np.bincount(codes, minlength=labels.size))
    return labels, np.split(order, ends[:-1])


def _label(label):
    return label.item() if hasattr(label, "item") else label


def numerai_corr(y_true, y_pred, eras, *, return_eras=False):
    """Numerai's correlation in each era (``numerai_tools.scoring.numerai_corr``).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Targets.
    y_pred : array-like of shape (n_samples,)
        Predictions.
    eras : array-like of shape (n_samples,)
        Era label of each row.
    return_eras : bool, default=False
        Also return the era labels (natural order, as ``era_scores``).

    Returns
    -------
    eras : ndarray of shape (n_eras,)
        Only with ``return_eras=True``.
    scores : ndarray of shape (n_eras,)
        One score per era, in the era labels' natural order.
    """
    scoring, pd = _scoring()
    y_pred = _check_predictions(y_pred)
    y_true = _check_predictions(y_true, y_pred.shape[0], name="y_true")
    if isinstance(eras, (pd.Series, pd.Index)):
        eras = eras.to_numpy()  # an array of scores, as the other helpers

    def one_era(target, pred):
        frame = pd.DataFrame({"prediction": pred})
        target = pd.Series(target, name="target")
        return float(scoring.numerai_corr(frame, target)["prediction"])

    return era_scores(y_true, y_pred, eras, one_era, return_eras=return_eras)


def feature_exposure(y_pred, X, eras, *, features=None, return_eras=False):
    """Largest absolute correlation of the predictions with any feature, per era.

    Each era's value is ``numerai_tools.scoring.max_feature_correlation``
    of that era's predictions and feature columns (Pearson correlations).

    Parameters
    ----------
    y_pred : array-like of shape (n_samples,)
    X : array-like or DataFrame of shape (n_samples, n_features)
        The features, numeric and complete.
    eras : array-like of shape (n_samples,)
    features : list of column names (DataFrame) or indices, default=None
        The columns to measure against; all by default.
    return_eras : bool, default=False
        Also return the era labels (natural order, as ``era_scores``).

    Returns
    -------
    eras : ndarray of shape (n_eras,)
        Only with ``return_eras=True``.
    exposure : ndarray of shape (n_eras,)
        In ``[0, 1]``, one per era in the era labels' natural order. An
        era in which the predictions or every feature are constant has no
        correlation to measure: ValueError.
    """
    scoring, pd = _scoring()
    frame = _check_features(X, features)
    y_pred = _check_predictions(y_pred, frame.shape[0])
    labels, groups = _era_rows(eras, frame.shape[0])
    out = np.empty(labels.size)
    for e, rows in enumerate(groups):
        era_x = frame.iloc[rows].reset_index(drop=True)
        if np.ptp(y_pred[rows]) == 0 or not (era_x.std() > 0).any():
            raise ValueError(
                f"era {_label(labels[e])!r}: the predictions or all the features "
                "are constant, so no feature correlation is defined."
            )
        _, corr = scoring.max_feature_correlation(pd.Series(y_pred[rows]), era_x)
        out[e] = corr
    return (labels, out) if return_eras else out


def neutralize(
    y_pred, X, eras, *, proportion=1.0, features=None, rank_gaussianize=False
):
    """Neutralise predictions to the features, era by era.

    In each era, ``numerai_tools.scoring.neutralize`` removes ``proportion``
    of the least-squares projection of the predictions on the features (and
    a constant). With ``rank_gaussianize=True`` each era's predictions go
    through ``numerai_tools.scoring.tie_kept_rank__gaussianize__neutralize__
    variance_normalize`` instead: ranked (ties kept), gaussianised,
    neutralised, then scaled to unit standard deviation, as Numerai's
    feature-neutral correlation prepares them.

    Parameters
    ----------
    y_pred : array-like of shape (n_samples,)
    X : array-like or DataFrame of shape (n_samples, n_features)
        The neutralisers, numeric and complete.
    eras : array-like of shape (n_samples,)
    proportion : float, default=1.0
        Share of the projection removed (1: fully neutral). Not used with
        ``rank_gaussianize=True`` (numerai-tools' composite neutralises
        fully).
    features : list of column names (DataFrame) or indices, default=None
        The columns to neutralise to; all by default.
    rank_gaussianize : bool, default=False
        Rank and gaussianise each era's predictions first, and scale the
        result, as described above.

    Returns
    -------
    neutral : ndarray of shape (n_samples,)
        In the row order of the input.
    """
    scoring, pd = _scoring()
    frame = _check_features(X, features)
    y_pred = _check_predictions(y_pred, frame.shape[0])
    proportion = float(proportion)
    if not 0.0 <= proportion <= 1.0:
        raise ValueError(f"proportion must be in [0, 1]; got {proportion}.")
    labels, groups = _era_rows(eras, frame.shape[0])
    out = np.empty_like(y_pred)
    for e, rows in enumerate(groups):
        pred = pd.DataFrame({"prediction": y_pred[rows]})
        if np.ptp(y_pred[rows]) == 0:
            raise ValueError(
                f"era {_label(labels[e])!r}: the predictions are constant, "
                "which numerai-tools cannot neutralise (it returns NaN)."
            )
        era_x = frame.iloc[rows].reset_index(drop=True)
        if rank_gaussianize:
            neutral = (
                scoring.tie_kept_rank__gaussianize__neutralize__variance_normalize(
                    pred, era_x
                )
            )
        else:
            neutral = scoring.neutralize(pred, era_x, proportion=proportion)
        out[rows] = neutral["prediction"].to_numpy()
    return out


def era_rank(y_pred, eras, *, gaussianize=False):
    """Percentile ranks of the predictions within each era.

    ``numerai_tools.scoring.tie_kept_rank`` in each era: ``(rank - 0.5) / n``
    with ties sharing their mean rank; with ``gaussianize=True`` then
    ``numerai_tools.scoring.gaussian`` (the normal quantile function).

    Parameters
    ----------
    y_pred : array-like of shape (n_samples,)
    eras : array-like of shape (n_samples,)
    gaussianize : bool, default=False

    Returns
    -------
    ranks : ndarray of shape (n_samples,)
        In ``(0, 1)`` (standard normal scores with ``gaussianize=True``), in
        the row order of the input.
    """
    scoring, pd = _scoring()
    y_pred = _check_predictions(y_pred)
    _, groups = _era_rows(eras, y_pred.shape[0])
    out = np.empty_like(y_pred)
    for rows in groups:
        ranked = scoring.tie_kept_rank(pd.DataFrame({"prediction": y_pred[rows]}))
        if gaussianize:
            ranked = scoring.gaussian(ranked)
        out[rows] = ranked["prediction"].to_numpy()
    return out


def numerai_summary(y_true, y_pred, eras, X=None, *, features=None):
    """Per-era Numerai correlation summarised, with the feature exposure.

    Parameters
    ----------
    y_true, y_pred, eras : array-like of shape (n_samples,)
    X : array-like or DataFrame of shape (n_samples, n_features), default=None
        The features; with them the summary also reports the exposure.
    features : list of column names or indices, default=None
        The columns of ``X`` to measure the exposure against.

    Returns
    -------
    summary : dict
        :func:`eraboost.metrics.era_summary` of the per-era
        :func:`numerai_corr` (``"mean"``, ``"std"``, ``"sharpe"``,
        ``"worst"``, ``"positive_share"``, ``"max_drawdown"``,
        ``"n_eras"``) and, with ``X``, ``"feature_exposure_mean"`` and
        ``"feature_exposure_max"``: the mean and the largest of the per-era
        :func:`feature_exposure`.

    Examples
    --------
    >>> import numpy as np
    >>> from eraboost.numerai import numerai_summary
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randint(0, 5, size=(2000, 4)).astype(np.int8)
    >>> eras = np.repeat(np.arange(10), 200)
    >>> y = (X[:, 0] + rng.normal(size=2000)) / 10
    >>> s = numerai_summary(y, X[:, 0] + X[:, 1], eras, X)
    >>> sorted(k for k in s if k.startswith("feature_exposure"))
    ['feature_exposure_max', 'feature_exposure_mean']
    """
    summary = era_summary(numerai_corr(y_true, y_pred, eras))
    if X is not None:
        exposure = feature_exposure(y_pred, X, eras, features=features)
        summary["feature_exposure_mean"] = float(exposure.mean())
        summary["feature_exposure_max"] = float(exposure.max())
    return summary
