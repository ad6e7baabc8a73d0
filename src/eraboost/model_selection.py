"""Era-aware cross-validation and worst-fold model selection.

The splitters keep whole eras together (``groups=eras``) and take eras in the
natural order of their labels (``"era2"`` before ``"era10"``, dates in time),
which they treat as time. With metadata routing on, they read the groups
from the ``eras`` metadata by default, so ``params={"eras": eras}`` feeds
the splitter, the estimator and an era scorer at once.
"""

from numbers import Integral
from typing import ClassVar

import numpy as np
from sklearn.model_selection import BaseCrossValidator

from ._eras import check_eras

__all__ = ["EraKFold", "EraTimeSeriesSplit", "worst_fold_refit", "worst_fold_scores"]


def _check_int(value, name, low):
    if not isinstance(value, Integral) or isinstance(value, bool) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}; got {value!r}.")
    return int(value)


class _EraSplitter(BaseCrossValidator):
    """Splits whole eras; subclasses plan (train eras, test eras) per split."""

    # routed from the ``eras`` metadata (override with set_split_request)
    __metadata_request__split: ClassVar[dict] = {"groups": "eras"}

    def split(self, X, y=None, groups=None):
        """Generate train and test row indices, whole eras on each side.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), default=None
            Ignored.
        groups : array-like of shape (n_samples,)
            The era of each row. Required.

        Yields
        ------
        train : ndarray of int
        test : ndarray of int
        """
        name = type(self).__name__
        if groups is None:
            raise ValueError(
                f"{name} needs the era of each row: pass groups=eras (with "
                "metadata routing on, params={'eras': eras})."
            )
        n_samples = len(X) if not hasattr(X, "shape") else X.shape[0]
        codes, labels = check_eras(groups, n_samples, name="groups")
        plan = self._plan(labels.size)  # validates everything before yielding
        for train_eras, test_eras in plan:
            yield (
                np.flatnonzero(np.isin(codes, train_eras)),
                np.flatnonzero(np.isin(codes, test_eras)),
            )

    def _iter_test_indices(self, X=None, y=None, groups=None):  # pragma: no cover
        raise NotImplementedError  # split() is overridden

    def get_n_splits(self, X=None, y=None, groups=None):
        """Number of splits.

        Parameters
        ----------
        X, y, groups : ignored

        Returns
        -------
        n_splits : int
        """
        return self.n_splits

    def _check_train(self, train, test, n_eras):
        if train.size == 0:
            raise ValueError(
                f"{type(self).__name__}: embargo={self.embargo} leaves no "
                f"training eras for the test eras {test[0]}..{test[-1]} (era "
                f"positions in era order, of {n_eras}); lower embargo or "
                "n_splits, or give more eras."
            )
        return train, test


class EraKFold(_EraSplitter):
    """K-fold over contiguous blocks of whole eras.

    The distinct eras, in the natural order of their labels, are cut into
    ``n_splits`` contiguous blocks of consecutive eras (their numbers of
    eras differ by at most one). Each block is the test set once; the other
    eras, less ``embargo`` eras on each side of the block, are the training
    set. No era is on both sides and every era is tested exactly once.

    Parameters
    ----------
    n_splits : int, default=5
        Number of folds, at least 2 and at most the number of eras.
    embargo : int, default=0
        Eras dropped from training on each side of the test block (for
        targets that overlap in time).

    Examples
    --------
    >>> import numpy as np
    >>> from eraboost import EraKFold
    >>> eras = np.repeat([1, 2, 3, 4], 2)
    >>> for train, test in EraKFold(n_splits=2).split(eras, groups=eras):
    ...     print(eras[train], eras[test])
    [3 3 4 4] [1 1 2 2]
    [1 1 2 2] [3 3 4 4]
    """

    def __init__(self, n_splits=5, *, embargo=0):
        self.n_splits = n_splits
        self.embargo = embargo

    def _plan(self, n_eras):
        n_splits = _check_int(self.n_splits, "n_splits", 2)
        embargo = _check_int(self.embargo, "embargo", 0)
        if n_eras < n_splits:
            raise ValueError(
                f"EraKFold(n_splits={n_splits}) needs at least {n_splits} distinct "
                f"eras; groups has {n_eras}."
            )
        eras = np.arange(n_eras)
        plan = []
        for test in np.array_split(eras, n_splits):
            keep = (eras < test[0] - embargo) | (eras > test[-1] + embargo)
            plan.append(self._check_train(eras[keep], test, n_eras))
        return plan


class EraTimeSeriesSplit(_EraSplitter):
    """Walk-forward splits of whole eras, with an embargo.

    Eras are taken as time in the natural order of their labels. The last
    ``n_splits * test_eras`` eras form ``n_splits`` consecutive test blocks.
    Each block is trained on the eras before it, less the ``embargo`` eras
    right before it (and, with ``train_after=True``, also on the eras after
    it, less the ``embargo`` eras right after it).

    Parameters
    ----------
    n_splits : int, default=5
        Number of splits, at least 1.
    embargo : int, default=0
        Eras left out between the training eras and the test block.
    test_eras : int, default=None
        Eras per test block; ``None`` means ``n_eras // (n_splits + 1)``.
    max_train_eras : int, default=None
        Keep at most this many of the latest training eras before the block
        (a rolling window); ``None`` keeps them all.
    train_after : bool, default=False
        Also train on the eras after the test block (past the embargo).

    Examples
    --------
    >>> import numpy as np
    >>> from eraboost import EraTimeSeriesSplit
    >>> eras = np.arange(6)
    >>> cv = EraTimeSeriesSplit(n_splits=2, embargo=1, test_eras=2)
    >>> for train, test in cv.split(eras, groups=eras):
    ...     print(eras[train], eras[test])
    [0] [2 3]
    [0 1 2] [4 5]
    """

    def __init__(
        self,
        n_splits=5,
        *,
        embargo=0,
        test_eras=None,
        max_train_eras=None,
        train_after=False,
    ):
        self.n_splits = n_splits
        self.embargo = embargo
        self.test_eras = test_eras
        self.max_train_eras = max_train_eras
        self.train_after = train_after

    def _plan(self, n_eras):
        n_splits = _check_int(self.n_splits, "n_splits", 1)
        embargo = _check_int(self.embargo, "embargo", 0)
        size = (
            n_eras // (n_splits + 1)
            if self.test_eras is None
            else _check_int(self.test_eras, "test_eras", 1)
        )
        if size < 1 or n_splits * size >= n_eras:
            raise ValueError(
                f"EraTimeSeriesSplit(n_splits={n_splits}) needs more eras than "
                f"its {n_splits} test blocks of {max(size, 1)} era(s) (at least one "
                f"era to train on before them); groups has {n_eras}."
            )
        window = (
            None
            if self.max_train_eras is None
            else _check_int(self.max_train_eras, "max_train_eras", 1)
        )
        eras = np.arange(n_eras)
        plan = []
        for i in range(n_splits):
            start = n_eras - (n_splits - i) * size
            test = eras[start : start + size]
            before = eras[: max(start - embargo, 0)]
            if window is not None:
                before = before[-window:]
            train = before
            if self.train_after:
                train = np.concatenate((before, eras[start + size + embargo :]))
            plan.append(self._check_train(train, test, n_eras))
        return plan


def worst_fold_scores(cv_results, metric="score"):
    """Each candidate's worst test score over the CV splits.

    Parameters
    ----------
    cv_results : dict
        A search's ``cv_results_`` (with its ``split<i>_test_<metric>``
        entries).
    metric : str, default="score"
        The scorer's name: ``"score"`` for a single scorer, else a key of the
        ``scoring`` dict.

    Returns
    -------
    worst : ndarray of shape (n_candidates,)
        NaN scores (failed fits) count as ``-inf``.
    """
    keys = [
        k
        for k in cv_results
        if k.startswith("split")
        and k.endswith(f"_test_{metric}")
        and k[len("split") : -len(f"_test_{metric}")].isdigit()
    ]
    if not keys:
        raise ValueError(
            f"cv_results has no per-split test scores for metric {metric!r} "
            f"(keys 'split<i>_test_{metric}'); with several scorers pass "
            "metric=<scorer name>, e.g. functools.partial(worst_fold_refit, "
            "metric='r2')."
        )
    scores = np.column_stack(
        [np.asarray(cv_results[k], dtype=np.float64) for k in keys]
    )
    return np.where(np.isnan(scores), -np.inf, scores).min(axis=1)


def worst_fold_refit(cv_results, metric="score"):
    """Index of the candidate whose worst fold is best ("Env K-folds Min-Max").

    Use it as ``GridSearchCV(..., cv=EraKFold(...), refit=worst_fold_refit)``:
    with folds made of whole era groups, it picks the parameters with the
    best worst era-group score instead of the best mean, as in the Time
    Robust Forest thesis. Each split is taken as one era group. Ties are
    broken by the larger mean test score, then by the first candidate.
    Combined with an era scorer using ``aggregate="min"``, it selects on the
    single worst era.

    With a callable ``refit`` scikit-learn does not set ``best_score_``; the
    chosen candidate's worst-fold score is
    ``worst_fold_scores(search.cv_results_)[search.best_index_]`` and its
    mean score ``search.cv_results_["mean_test_score"][search.best_index_]``.

    Parameters
    ----------
    cv_results : dict
        The search's ``cv_results_``.
    metric : str, default="score"
        The scorer's name with several scorers (bind it with
        ``functools.partial(worst_fold_refit, metric=name)``).

    Returns
    -------
    best_index : int
    """
    worst = worst_fold_scores(cv_results, metric)
    if np.all(np.isneginf(worst)):
        raise ValueError("every candidate has a failed (NaN) fold; nothing to pick.")
    mean = np.asarray(cv_results[f"mean_test_{metric}"], dtype=np.float64)
    mean = np.where(np.isnan(mean), -np.inf, mean)
    # lexsort: last key is primary; negate to take the largest first
    order = np.lexsort((np.arange(worst.size), -mean, -worst))
    return int(order[0])
