"""Era-wise evaluation: per-era scores, their summary, era-aware scorers.

A model meant to work in every era is judged era by era: the score of each
era (its correlation with the target, its error, ...), then the mean, the
spread and the worst of those scores. Every era counts once, whatever its
number of rows, and rows are unweighted within an era.
"""

import numpy as np
from scipy.special import ndtri
from scipy.stats import rankdata
from sklearn.utils.metadata_routing import MetadataRequest
from sklearn.utils.multiclass import type_of_target

from ._eras import check_eras

__all__ = ["EraScorer", "era_scores", "era_summary", "make_era_scorer"]


def _correlation(a, b):
    """Pearson correlation, 0 when either side is constant (no ranking)."""
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return 0.0
    a = a - a.mean()
    b = b - b.mean()
    return float(np.dot(a, b) / np.sqrt(np.dot(a, a) * np.dot(b, b)))


def _signed_pow_15(x):
    return np.sign(x) * np.abs(x) ** 1.5


def _pearson(y_true, y_pred):
    return _correlation(y_true, y_pred)


def _spearman(y_true, y_pred):
    return _correlation(rankdata(y_true), rankdata(y_pred))


def _numerai_corr(y_true, y_pred):
    n = y_pred.shape[0]
    gauss = ndtri((rankdata(y_pred, method="average") - 0.5) / n)
    target = y_true - y_true.mean()
    return _correlation(_signed_pow_15(target), _signed_pow_15(gauss))


def _mse(y_true, y_pred):
    return float(np.mean((y_true - y_pred) ** 2))


def _accuracy(y_true, y_pred):
    return float(np.mean(y_true == y_pred))


def _roc_auc(y_true, y_pred, positive):
    pos = y_true == positive
    n_pos = int(pos.sum())
    n_neg = pos.size - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError("ROC AUC is undefined when an era holds a single class")
    ranks = rankdata(y_pred)  # ties share their mean rank: they count 1/2
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


# name -> (function of one era, sign: +1 when larger is better)
_METRICS = {
    "pearson": (_pearson, 1),
    "spearman": (_spearman, 1),
    "numerai_corr": (_numerai_corr, 1),
    "mse": (_mse, -1),
    "accuracy": (_accuracy, 1),
    "roc_auc": (_roc_auc, 1),
}
_CONTINUOUS = ("pearson", "spearman", "numerai_corr", "mse", "roc_auc")

#: The names of :func:`era_scores`' built-in metrics.
METRIC_NAMES = tuple(_METRICS)


def greater_is_better(metric):
    """Whether a larger value of ``metric`` is better (False for ``"mse"``;
    True for a callable, which must score larger-is-better)."""
    return callable(metric) or _METRICS[_check_metric(metric)][1] > 0


# -- the correlations of all eras at once --------------------------------------
# The same values as the per-era functions above, computed with a few sorts
# and bincounts over all rows instead of a Python loop over eras (early
# stopping scores hundreds of eras every iteration).
def _grouped_ranks(values, codes, starts):
    """Average ranks (1-based, ties share their mean) within each era."""
    order = np.lexsort((values, codes))
    v, c = values[order], codes[order]
    new = np.ones(v.size, dtype=bool)
    new[1:] = (c[1:] != c[:-1]) | (v[1:] != v[:-1])
    first = np.flatnonzero(new)
    stop = np.append(first[1:], v.size)
    run = np.cumsum(new) - 1
    ranks = np.empty(v.size)
    # positions first .. stop - 1 hold ranks first + 1 .. stop (0-based first)
    ranks[order] = (first[run] + stop[run] + 1) / 2 - starts[c]
    return ranks


def _grouped_pearson(a, b, codes, counts, varies):
    """Pearson correlation per era; 0 where ``varies`` is False."""
    n_eras = counts.size
    safe = np.maximum(counts, 1)
    da = a - (np.bincount(codes, a, n_eras) / safe)[codes]
    db = b - (np.bincount(codes, b, n_eras) / safe)[codes]
    cov = np.bincount(codes, da * db, n_eras)
    var = np.bincount(codes, da * da, n_eras) * np.bincount(codes, db * db, n_eras)
    out = np.zeros(n_eras)
    ok = varies & (var > 0)
    out[ok] = cov[ok] / np.sqrt(var[ok])
    return out


def _grouped_scores(metric, y_true, y_pred, codes, n_eras):
    """``"pearson"``, ``"spearman"`` or ``"numerai_corr"`` of every era."""
    counts = np.bincount(codes, minlength=n_eras)
    starts = np.cumsum(counts) - counts

    def varies(x):
        lo = np.full(n_eras, np.inf)
        hi = np.full(n_eras, -np.inf)
        np.minimum.at(lo, codes, x)
        np.maximum.at(hi, codes, x)
        return hi > lo

    moving = varies(y_true) & varies(y_pred)
    if metric == "pearson":
        return _grouped_pearson(y_true, y_pred, codes, counts, moving)
    pred_ranks = _grouped_ranks(y_pred, codes, starts)
    if metric == "spearman":
        true_ranks = _grouped_ranks(y_true, codes, starts)
        return _grouped_pearson(true_ranks, pred_ranks, codes, counts, moving)
    gauss = ndtri((pred_ranks - 0.5) / counts[codes])
    mean = np.bincount(codes, y_true, n_eras) / np.maximum(counts, 1)
    target = y_true - mean[codes]
    return _grouped_pearson(
        _signed_pow_15(target), _signed_pow_15(gauss), codes, counts, moving
    )


def _check_metric(metric):
    if callable(metric):
        return metric
    if metric not in _METRICS:
        raise ValueError(
            f"metric must be one of {sorted(_METRICS)} or a callable "
            f"f(y_true, y_pred) -> float; got {metric!r}."
        )
    return metric


def era_scores(y_true, y_pred, eras, metric="pearson", *, return_eras=False):
    """Score predictions era by era.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Targets. For ``"roc_auc"``, two classes; the larger label is the
        positive class.
    y_pred : array-like of shape (n_samples,)
        Predictions: values, class labels for ``"accuracy"``, scores of the
        positive class for ``"roc_auc"``.
    eras : array-like of shape (n_samples,)
        Era label of each row (integers, strings, a pandas Series...).
    metric : str or callable, default="pearson"
        - ``"pearson"``: Pearson correlation.
        - ``"spearman"``: Spearman rank correlation (ties get mean ranks).
        - ``"numerai_corr"``: Numerai's correlation, as numerai-tools defines
          it: the predictions are ranked (ties get mean ranks), mapped to
          ``(rank - 0.5) / n``, gaussianised with the normal quantile
          function and raised to the power 1.5 keeping their sign; the
          target is centred on the era's mean and raised to the power 1.5
          keeping its sign; the score is the Pearson correlation of the two.
        - ``"mse"``: mean squared error.
        - ``"accuracy"``: share of exact matches.
        - ``"roc_auc"``: area under the ROC curve (binary targets; ties in
          ``y_pred`` count one half).
        - a callable ``f(y_true_era, y_pred_era) -> float``.

        A correlation is 0 in an era where the predictions (or the target)
        are constant: they rank nothing.
    return_eras : bool, default=False
        Also return the era labels.

    Returns
    -------
    eras : ndarray of shape (n_eras,)
        The distinct era labels in their natural order (only with
        ``return_eras=True``): numbers and dates in their own order, strings
        that read as numbers by value, other strings with runs of digits
        compared as numbers (``"era2"`` before ``"era10"``).
    scores : ndarray or pandas Series of shape (n_eras,)
        One score per era, in the natural order of the era labels (the order
        that :func:`era_summary` takes as time). When any input is a pandas
        object, a Series indexed by era label (the index named after the
        eras Series, else ``"era"``).
    """
    metric = _check_metric(metric)
    as_series = any(_is_pandas(a) for a in (y_true, y_pred, eras))
    era_name = getattr(eras, "name", None) if _is_pandas(eras) else None
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    if y_true.ndim != 1 or y_pred.ndim != 1:
        raise ValueError(
            f"y_true and y_pred must be 1-D; got shapes {y_true.shape} and "
            f"{y_pred.shape}."
        )
    if y_true.shape != y_pred.shape:
        raise ValueError(
            f"y_true has {y_true.shape[0]} rows but y_pred has {y_pred.shape[0]}."
        )
    if y_true.shape[0] == 0:
        raise ValueError("era_scores needs at least one row; got none.")
    codes, labels = check_eras(eras, y_true.shape[0])
    extra = ()
    if metric in _CONTINUOUS:
        y_pred = y_pred.astype(np.float64)
        if metric != "roc_auc":
            y_true = y_true.astype(np.float64)
        if not (
            np.isfinite(y_pred).all()
            and (metric == "roc_auc" or np.isfinite(y_true).all())
        ):
            raise ValueError(f"metric={metric!r} needs finite y_true and y_pred.")
    if metric == "accuracy" and type_of_target(y_true) == "continuous":
        raise ValueError(
            "metric='accuracy' compares class labels, but y_true holds "
            "continuous values; use a regression metric such as 'pearson' "
            "or 'mse'."
        )
    if metric == "roc_auc":
        classes = np.unique(y_true)
        if classes.size != 2:
            raise ValueError(
                "metric='roc_auc' needs a binary target with two classes; y_true "
                f"has {classes.size}."
            )
        extra = (classes[1],)
    if metric in ("pearson", "spearman", "numerai_corr"):
        scores = _grouped_scores(metric, y_true, y_pred, codes, labels.size)
    else:
        scores = _scores_era_by_era(metric, y_true, y_pred, codes, labels, extra)
    if as_series:
        import pandas as pd

        scores = pd.Series(
            scores,
            index=pd.Index(labels, name=era_name if era_name is not None else "era"),
            name=metric if isinstance(metric, str) else "score",
        )
    return (labels, scores) if return_eras else scores


def _scores_era_by_era(metric, y_true, y_pred, codes, labels, extra):
    """One call of the metric's function per era."""
    func = metric if callable(metric) else _METRICS[metric][0]
    order = np.argsort(codes, kind="stable")
    ends = np.cumsum(np.bincount(codes, minlength=labels.size))
    scores = np.empty(labels.size)
    start = 0
    for e, end in enumerate(ends):
        rows = order[start:end]
        start = end
        try:
            scores[e] = func(y_true[rows], y_pred[rows], *extra)
        except ValueError as exc:
            label = labels[e].item() if hasattr(labels[e], "item") else labels[e]
            raise ValueError(f"era {label!r}: {exc}") from None
    return scores


def _is_pandas(obj):
    """Whether ``obj`` is a pandas object (without importing pandas)."""
    return type(obj).__module__.partition(".")[0] == "pandas"


def era_summary(scores, *, greater_is_better=True):
    """Summarise per-era scores taken in era order.

    Parameters
    ----------
    scores : array-like of shape (n_eras,)
        Per-era scores in time order, e.g. from :func:`era_scores`.
    greater_is_better : bool, default=True
        Whether a larger score is better (False for an error such as MSE);
        it only decides which era is the worst.

    Returns
    -------
    summary : dict
        - ``"mean"``: mean over eras.
        - ``"std"``: standard deviation over eras (``ddof=1``, as pandas and
          Numerai compute it; NaN with a single era).
        - ``"sharpe"``: ``mean / std``; NaN when the scores do not vary
          (identical scores have ``std`` exactly 0) or with a single era.
        - ``"worst"``: the smallest score (the largest one when
          ``greater_is_better=False``).
        - ``"positive_share"``: share of eras with a score above 0.
        - ``"max_drawdown"``: the largest fall of the cumulative score
          ``c_t = s_1 + ... + s_t`` from its running peak, the peak including
          the start ``c_0 = 0``; a non-negative number, 0 when the
          cumulative score never falls.
        - ``"n_eras"``: the number of eras.
    """
    s = np.asarray(scores, dtype=np.float64)
    if s.ndim != 1 or s.size == 0:
        raise ValueError(
            f"scores must be a non-empty 1-D array of per-era scores; got shape "
            f"{s.shape}."
        )
    if not np.isfinite(s).all():
        raise ValueError("scores contains NaN or infinite values.")
    mean = float(s.mean())
    if s.size < 2:
        std = float("nan")
    elif np.ptp(s) == 0:
        std = 0.0  # identical scores: exactly no spread, whatever the rounding
    else:
        std = float(s.std(ddof=1))
    sharpe = mean / std if std > 0 else float("nan")
    cum = np.concatenate(([0.0], np.cumsum(s)))
    return {
        "mean": mean,
        "std": std,
        "sharpe": sharpe,
        "worst": float(s.min() if greater_is_better else s.max()),
        "positive_share": float(np.mean(s > 0)),
        "max_drawdown": float(np.max(np.maximum.accumulate(cum) - cum)),
        "n_eras": int(s.size),
    }


_AGGREGATES = ("mean", "sharpe", "min")


class EraScorer:
    """Scorer of a fitted estimator by an aggregate of its per-era scores.

    Build it with :func:`make_era_scorer`. It is called like any scikit-learn
    scorer, ``scorer(estimator, X, y, eras=eras)``, and always requests
    ``eras`` through metadata routing: with
    ``sklearn.set_config(enable_metadata_routing=True)``, ``cross_validate``
    and the search estimators hand it the eras of each test fold from
    ``params={"eras": eras}``.

    Parameters
    ----------
    metric : str or callable
        See :func:`era_scores`.
    aggregate : {"mean", "sharpe", "min"}
        How the per-era scores become one number.

    Notes
    -----
    Errors (``"mse"``) are negated, as scikit-learn's ``neg_*`` scorers do,
    so that larger is always better: ``aggregate="min"`` is then the worst
    era. ``"sharpe"`` is the mean over the standard deviation (``ddof=1``)
    and needs at least two eras in the scored rows.
    """

    def __init__(self, metric, aggregate):
        self.metric = metric
        self.aggregate = aggregate

    def _sign(self):
        return 1 if callable(self.metric) else _METRICS[self.metric][1]

    def response(self, estimator, X):
        """What this scorer scores: ``decision_function`` (or the positive
        class's ``predict_proba``) for ``"roc_auc"``, ``predict`` otherwise.

        Returns
        -------
        response : ndarray of shape (n_samples,)
        """
        if self.metric == "roc_auc":
            if hasattr(estimator, "decision_function"):
                return np.asarray(estimator.decision_function(X))
            if hasattr(estimator, "predict_proba"):
                proba = np.asarray(estimator.predict_proba(X))
                if proba.ndim != 2 or proba.shape[1] != 2:
                    raise ValueError(
                        "metric='roc_auc' scores binary classifiers only; "
                        f"predict_proba returned shape {proba.shape}."
                    )
                return proba[:, 1]
        return np.asarray(estimator.predict(X))

    def __call__(self, estimator, X, y_true, *, eras=None):
        """Score ``estimator`` on ``X, y_true`` era by era and aggregate.

        Parameters
        ----------
        estimator : fitted estimator
        X : array-like of shape (n_samples, n_features)
        y_true : array-like of shape (n_samples,)
        eras : array-like of shape (n_samples,)
            Era of each row. Required.

        Returns
        -------
        score : float
            Larger is better.
        """
        if eras is None:
            raise ValueError(
                f"{self!r} needs the era of each scored row, but no eras were "
                "passed. Call it as scorer(estimator, X, y, eras=eras); in "
                "cross_validate or a search, turn on metadata routing with "
                "sklearn.set_config(enable_metadata_routing=True) and pass "
                "params={'eras': eras} (the estimator's own eras with "
                "estimator.set_fit_request(eras=True))."
            )
        scores = self._sign() * era_scores(
            y_true, self.response(estimator, X), eras, self.metric
        )
        if self.aggregate == "mean":
            return float(scores.mean())
        if self.aggregate == "min":
            return float(scores.min())
        if scores.size < 2:
            raise ValueError(
                "aggregate='sharpe' needs at least two eras in the scored rows; "
                f"got {scores.size}."
            )
        return era_summary(scores)["sharpe"]

    def get_metadata_routing(self):
        """Metadata request: ``eras`` for scoring.

        Returns
        -------
        request : MetadataRequest
        """
        request = MetadataRequest(owner=type(self).__name__)
        request.score.add_request(param="eras", alias=True)
        return request

    def __repr__(self):
        metric = getattr(self.metric, "__name__", self.metric)
        return f"make_era_scorer({metric!r}, aggregate={self.aggregate!r})"


def make_era_scorer(metric="pearson", aggregate="mean"):
    """Make a scikit-learn scorer from per-era scores.

    Parameters
    ----------
    metric : str or callable, default="pearson"
        ``"pearson"``, ``"spearman"``, ``"numerai_corr"``, ``"mse"``,
        ``"accuracy"``, ``"roc_auc"`` or a callable
        ``f(y_true_era, y_pred_era) -> float`` (larger is better); see
        :func:`era_scores`. ``"roc_auc"`` scores ``decision_function`` or the
        positive class's ``predict_proba``; the others score ``predict``.
    aggregate : {"mean", "sharpe", "min"}, default="mean"
        The mean over eras, their Sharpe ratio (mean / std), or the worst
        era. Errors are negated (larger is better), so ``"min"`` is always
        the worst era. ``"sharpe"`` is not offered for ``"mse"``.

    Returns
    -------
    scorer : EraScorer
        Usable as ``scoring=`` in ``cross_validate``, ``GridSearchCV``,
        ``RandomizedSearchCV`` (with metadata routing on; see
        :class:`EraScorer`) and as the ``scoring`` of eraboost's early
        stopping, which passes the eras of its validation rows itself.

    Examples
    --------
    >>> import numpy as np, sklearn
    >>> from sklearn.model_selection import cross_validate
    >>> from eraboost import (EraKFold, HistGradientBoostingRegressor,
    ...                       make_era_scorer)
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(600, 3))
    >>> y = X[:, 0] + rng.normal(size=600)
    >>> eras = np.repeat(np.arange(12), 50)
    >>> with sklearn.config_context(enable_metadata_routing=True):
    ...     est = HistGradientBoostingRegressor(max_iter=10)
    ...     est = est.set_fit_request(eras=True)
    ...     res = cross_validate(est, X, y, cv=EraKFold(3),
    ...                          scoring=make_era_scorer("pearson", "min"),
    ...                          params={"eras": eras})
    >>> res["test_score"].shape
    (3,)
    """
    _check_metric(metric)
    if aggregate not in _AGGREGATES:
        raise ValueError(
            f"aggregate must be one of {list(_AGGREGATES)}; got {aggregate!r}."
        )
    if aggregate == "sharpe" and metric == "mse":
        raise ValueError(
            "aggregate='sharpe' is for scores such as correlations; the Sharpe "
            "ratio of (negated) squared errors has no meaning. Use 'mean' or "
            "'min'."
        )
    return EraScorer(metric, aggregate)
