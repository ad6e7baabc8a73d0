"""Per-iteration callbacks of the boosters' ``fit``.

``fit(..., callbacks=[...])`` calls each callback after every boosting
iteration with an :class:`IterationInfo`. A callback that returns True
stops the fit after that iteration: the estimator keeps the iterations
done, and ``n_iter_``, the trees, ``train_score_`` and ``validation_score_``
stay consistent (as with early stopping). Progress displays, custom
stopping rules and logging are written this way; the command line's
progress bar and its Ctrl-C handling are one such callback.

Examples
--------
>>> import numpy as np
>>> from eraboost import HistGradientBoostingRegressor
>>> rng = np.random.RandomState(0)
>>> X, y = rng.normal(size=(500, 3)), rng.normal(size=500)
>>> seen = []
>>> def stop_at_five(info):
...     seen.append(info.iteration)
...     return info.iteration >= 5
>>> est = HistGradientBoostingRegressor(max_iter=100)
>>> est.fit(X, y, callbacks=[stop_at_five]).n_iter_
5
>>> seen
[1, 2, 3, 4, 5]
"""

from dataclasses import dataclass

__all__ = ["IterationInfo", "check_callbacks"]


@dataclass(frozen=True)
class IterationInfo:
    """What a callback learns after a boosting iteration.

    Attributes
    ----------
    estimator : estimator
        The estimator being fitted (its trees so far in place).
    iteration : int
        Iterations done so far (1 after the first), warm-started ones
        included.
    max_iter : int
    train_score, validation_score : float or None
        The latest early-stopping scores (None when early stopping is off,
        or without a validation set). Scores are "larger is better": with
        ``scoring="loss"`` they are the negative loss.
    score_name : str or None
        ``"loss"``, the scorer's name, or None without early stopping.
    elapsed : float
        Seconds since ``fit`` started.
    """

    estimator: object
    iteration: int
    max_iter: int
    train_score: float | None
    validation_score: float | None
    score_name: str | None
    elapsed: float


def check_callbacks(callbacks):
    """The callbacks as a list; a clear error for anything not callable.

    Parameters
    ----------
    callbacks : None, callable or iterable of callables

    Returns
    -------
    callbacks : list
    """
    if callbacks is None:
        return []
    if callable(callbacks):
        return [callbacks]
    try:
        callbacks = list(callbacks)
    except TypeError:
        raise TypeError(
            f"callbacks must be a list of callables; got {type(callbacks).__name__}."
        ) from None
    for cb in callbacks:
        if not callable(cb):
            raise TypeError(
                f"every callback must be callable; got {type(cb).__name__}."
            )
    return callbacks
