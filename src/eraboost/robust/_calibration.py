"""Costs and budget of the robust tree's uncertainty set from a hypothesis
test (Justin, Aghaei, Gómez and Vayanos, sections 4 and 5.2)."""

import math

import numpy as np

__all__ = ["calibrate_costs_budget"]


def _solve_r(rho, n_up, n_down):
    """Ratio ``r`` of the truncated symmetric geometric distribution.

    Solves ``rho * (1 + sum_{k=1}^{n_up} r^k + sum_{k=1}^{n_down} r^k) = 1``
    for ``0 < r < 1`` (equations (22) and (25) of the paper, written as the
    normalisation condition of distribution (21)).

    Parameters
    ----------
    rho : float
        Probability in (0, 1) that the entry keeps its nominal value.
    n_up, n_down : float
        Number of admissible unit moves above / below the nominal value
        (``inf`` for no bound; not both).

    Returns
    -------
    r : float
        The ratio, or 1.0 when the support is too small for ``rho``
        (uniform distribution, zero cost).
    """

    def total(r):
        s = 1.0
        for n in (n_up, n_down):
            if math.isinf(n):
                s += r / (1.0 - r)
            elif n > 0:
                s += r * (1.0 - r**n) / (1.0 - r)
        return rho * s - 1.0

    if math.isinf(n_up) and math.isinf(n_down):
        raise ValueError("unbounded feature: use the closed form")
    if (
        not math.isinf(n_up)
        and not math.isinf(n_down)
        and rho * (n_up + n_down + 1) <= 1.0
    ):
        return 1.0
    lo, hi = 0.0, 1.0 - 1e-15
    if total(hi) < 0:
        return 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if total(mid) > 0:
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


def calibrate_costs_budget(
    p_unshifted,
    threshold,
    n_samples=None,
    *,
    X=None,
    lower=None,
    upper=None,
    categorical_groups=None,
):
    """Costs and budget of the uncertainty set from a hypothesis test.

    Implements section 4 (and 5.2 for one-hot categorical groups) of Justin
    et al.: with ``rho`` the probability that an entry is not shifted and
    ``lambda`` the likelihood-ratio threshold, the budget is
    ``epsilon = -n_samples * log(lambda)`` and the per-unit cost is

    * ``log(1 / (1 - rho))`` for an unbounded integer feature (eq. 20);
    * ``log(1 / r)`` for a bounded integer feature, where ``0 < r < 1``
      normalises the truncated symmetric geometric distribution on the
      admissible support of each entry (Lemmas 4.1 and 4.2, eqs. 22/25);
      this needs ``X`` and gives one cost per sample and feature; a binary
      feature with bounds 0 and 1 gives ``log(rho / (1 - rho))`` (eq. 26);
    * ``0.5 * log(rho * (m - 1) / (1 - rho))`` for each of the ``m`` columns
      of a one-hot categorical group (eq. 32).

    Parameters
    ----------
    p_unshifted : float or array-like of shape (n_features,)
        Probability ``rho`` in (0, 1] that an entry keeps its nominal value
        (per feature; for a categorical group the value of its first column
        is used). ``rho = 1`` gives an infinite cost (the feature never
        moves).
    threshold : float
        Likelihood threshold ``lambda`` in (0, 1]. Smaller is more robust;
        ``lambda = 1`` gives a zero budget (the nominal tree).
    n_samples : int, optional
        Number of training samples. Defaults to ``len(X)`` when ``X`` is
        given.
    X : array-like of shape (n_samples, n_features), optional
        Training features; required when bounds are given.
    lower, upper : float or array-like of shape (n_features,), optional
        Known bounds of the features (``None``, ``-inf`` or ``inf`` for no
        bound). Features with a bound get per-sample costs.
    categorical_groups : list of list of int, optional
        Column indices of one-hot encoded categorical features.

    Returns
    -------
    costs : float or ndarray of shape (n_features,) or (n_samples, n_features)
        Per-unit shift costs ``gamma`` (a float for a scalar ``p_unshifted``
        without ``X``; 2-d when any bound is given).
    budget : float
        Budget ``epsilon``.

    Examples
    --------
    >>> costs, budget = calibrate_costs_budget([0.8, 0.9], 0.9, n_samples=100)
    >>> np.round(costs, 4), round(budget, 4)
    (array([1.6094, 2.3026]), 10.5361)
    """
    threshold = float(threshold)
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    if X is not None:
        X = np.asarray(X, dtype=float)
        if X.ndim != 2:
            raise ValueError("X must be 2-dimensional")
        if n_samples is None:
            n_samples = X.shape[0]
        elif n_samples != X.shape[0]:
            raise ValueError("n_samples does not match X.shape[0]")
    if n_samples is None:
        raise ValueError("give n_samples or X")
    if n_samples < 1:
        raise ValueError("n_samples must be positive")
    scalar_input = np.ndim(p_unshifted) == 0
    rho = np.atleast_1d(np.asarray(p_unshifted, dtype=float))
    if rho.ndim != 1:
        raise ValueError("p_unshifted must be a scalar or a 1-d array")
    if X is not None and rho.size == 1:
        rho = np.full(X.shape[1], rho[0])
    if np.any(~(rho > 0)) or np.any(rho > 1):
        raise ValueError("p_unshifted must lie in (0, 1]")
    n_features = rho.size
    if X is not None and X.shape[1] != n_features:
        raise ValueError("p_unshifted has the wrong length for X")
    budget = -n_samples * math.log(threshold)
    if budget == 0.0:
        budget = 0.0  # avoid -0.0

    def _bound(b, default):
        if b is None:
            return np.full(n_features, default)
        arr = np.asarray(b, dtype=float)
        arr = np.where(np.isnan(arr), default, arr)
        return np.broadcast_to(arr, (n_features,)).astype(float)

    lo = _bound(lower, -np.inf)
    hi = _bound(upper, np.inf)
    groups = [list(g) for g in (categorical_groups or [])]
    in_group = np.zeros(n_features, dtype=bool)
    for g in groups:
        in_group[g] = True
    bounded = (np.isfinite(lo) | np.isfinite(hi)) & ~in_group
    with np.errstate(divide="ignore"):
        base = -np.log1p(-rho)  # log(1 / (1 - rho)), inf when rho == 1
    if np.any(bounded):
        if X is None:
            raise ValueError("X is required to calibrate bounded features")
        costs = np.tile(base, (n_samples, 1))
        for f in np.flatnonzero(bounded):
            if rho[f] == 1.0:
                costs[:, f] = np.inf
                continue
            cache = {}
            for i, x in enumerate(X[:, f]):
                n_up = hi[f] - x
                n_down = x - lo[f]
                if n_up < 0 or n_down < 0:
                    raise ValueError(f"X[:, {f}] lies outside its bounds")
                key = (n_up, n_down)
                if key not in cache:
                    r = _solve_r(rho[f], n_up, n_down)
                    cache[key] = -math.log(r) if r > 0 else np.inf
                costs[i, f] = cache[key]
    else:
        costs = base.copy()
    for g in groups:
        r = rho[g[0]]
        m = len(g)
        if r == 1.0:
            c = np.inf
        elif r <= 1.0 / m:
            c = 0.0
        else:
            c = 0.5 * math.log(r * (m - 1) / (1.0 - r))
        if costs.ndim == 1:
            costs[g] = c
        else:
            costs[:, g] = c
    if scalar_input and costs.shape == (1,):
        return float(costs[0]), budget
    return costs, budget
