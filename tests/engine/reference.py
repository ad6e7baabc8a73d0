"""NumPy brute-force reference of the split criteria of docs/criteria.md.

Deliberately direct: every candidate split of every feature is evaluated
from scratch with the formulas of the specification.
"""

import numpy as np

MIN_HESSIAN = 1e-3
MIN_CAT_SUPPORT = 10.0
# Pooled progress (docs/criteria.md): under the era criteria a candidate's
# pooled gain must exceed this share of its per-era children's score.
POOLED_PROGRESS_RTOL = 1e-9


def score(G, H, lam):
    d = H + lam
    return 0.0 if d == 0 else G * G / d


def boltzmann(g, alpha):
    g = np.asarray(g, dtype=np.float64)
    if alpha == 0:
        return g.mean()
    if alpha == np.inf:
        return g.max()
    if alpha == -np.inf:
        return g.min()
    c = g.max() if alpha > 0 else g.min()
    w = np.exp(alpha * (g - c))
    return float((g * w).sum() / w.sum())


def newton(G, H, lam):
    d = H + lam
    return 0.0 if d == 0 else -G / d


def category_order(col, g, h, n_value_bins, has_missing):
    """Bins of a categorical column in scikit-learn's order: those with a
    hessian sum of at least MIN_CAT_SUPPORT rows (the missing-value bin
    ``n_value_bins`` included when the feature has missing values), by increasing
    ``sum g / (sum h + MIN_CAT_SUPPORT)``."""
    support = len(col) / h.sum()
    bins, values = [], []
    for b in range(n_value_bins + int(has_missing)):
        m = col == b
        if h[m].sum() * support >= MIN_CAT_SUPPORT:
            bins.append(b)
            values.append(g[m].sum() / (h[m].sum() + MIN_CAT_SUPPORT))
    return [bins[i] for i in np.argsort(values, kind="stable")]


def categorical_candidates(col, g, h, n_value_bins, has_missing):
    """(missing_left, set of left bins, left_mask): the prefixes of the
    category order of up to ceil(n/2) categories from the start, then of up
    to ceil(n/2) - 1 from the end."""
    order = category_order(col, g, h, n_value_bins, has_missing)
    n = len(order)
    if n <= 1:
        return
    for seq, stop in ((order, (n + 1) // 2), (order[::-1], (n + 1) // 2 - 1)):
        for i in range(stop):
            left_bins = frozenset(seq[: i + 1])
            yield n_value_bins in left_bins, left_bins, np.isin(col, list(left_bins))


def candidates(
    Xb, n_bins_non_missing, has_missing, rows, is_categorical=None, g=None, h=None
):
    """(feature, missing_left, bin, left_mask) in the engine's order.

    For a categorical feature (``is_categorical[f]``, which needs the
    node's ``g`` and ``h``), ``bin`` is the frozenset of the bins going left.
    """
    for f in range(Xb.shape[1]):
        col = Xb[rows, f]
        n_value_bins = int(n_bins_non_missing[f])
        if is_categorical is not None and is_categorical[f]:
            for miss_left, left_bins, left in categorical_candidates(
                col, g, h, n_value_bins, has_missing[f]
            ):
                yield f, miss_left, left_bins, left
            continue
        miss = col == n_value_bins
        for b in range(n_value_bins - 1 + int(has_missing[f])):
            yield f, False, b, (col <= b) & ~miss
        if has_missing[f]:
            for b in range(n_value_bins - 1):
                yield f, True, b, (col <= b) | miss


def splittable_eras(eras, min_samples_leaf_per_era=None):
    """E_node: the eras with at least ``2 * max(1, min_samples_leaf_per_era)``
    rows in the node (docs/criteria.md, splittable eras)."""
    labels, counts = np.unique(eras, return_counts=True)
    return labels[counts >= 2 * max(1, min_samples_leaf_per_era or 0)]


def invariance_penalty(left, g, h, eras, lam, era_set=None):
    """P(s) = Var_e CR_e over the eras of ``era_set`` (default: all of the
    node's) with rows on the left (docs/criteria.md)."""
    cr = []
    for e in np.unique(eras) if era_set is None else era_set:
        m = eras == e
        L = m & left
        if L.sum() > 0:
            cr.append(
                newton(g[L].sum(), h[L].sum(), lam)
                - newton(g[m].sum(), h[m].sum(), lam)
            )
    return float(np.var(cr)) if len(cr) >= 2 else 0.0


def difference_penalty(left, g, h, eras, lam, era_set=None):
    """P(s) of ``irf_variance="difference"`` (docs/criteria.md, "The
    children's difference"): the population variance of ``v_Le - v_Re``
    over the eras of ``era_set`` (default: all of the node's) with rows on
    both sides; 0 with fewer than two."""
    diff = []
    for e in np.unique(eras) if era_set is None else era_set:
        m = eras == e
        L, R = m & left, m & ~left
        if L.sum() > 0 and R.sum() > 0:
            diff.append(
                newton(g[L].sum(), h[L].sum(), lam)
                - newton(g[R].sum(), h[R].sum(), lam)
            )
    return float(np.var(diff)) if len(diff) >= 2 else 0.0


def every_era_on_both_sides(left, eras, era_set):
    """The rule of ``irf_variance="difference"``: every era of ``era_set``
    keeps rows on both sides; True with fewer than two eras in it."""
    if len(era_set) < 2:
        return True
    return all(
        (left & (eras == e)).any() and (~left & (eras == e)).any() for e in era_set
    )


def min_rows_per_era(left, eras, era_set=None):
    """The fewest rows any era of ``era_set`` (default: all of the node's)
    keeps on either side; None for no era."""
    era_set = np.unique(eras) if era_set is None else era_set
    if len(era_set) == 0:
        return None
    return min(
        min(int((left & (eras == e)).sum()), int((~left & (eras == e)).sum()))
        for e in era_set
    )


def agreement(left, g, h, eras, lam, era_set=None):
    """A(s) of docs/criteria.md ("Directional agreement"): the share of the
    eras of ``era_set`` (default: all of the node's) whose left-minus-right
    value difference has the sign of the pooled one; an era with an empty
    side does not agree, nor any when the pooled values are equal; 0 for
    no era."""
    era_set = np.unique(eras) if era_set is None else era_set
    right = ~left
    pooled = np.sign(
        newton(g[left].sum(), h[left].sum(), lam)
        - newton(g[right].sum(), h[right].sum(), lam)
    )
    if pooled == 0 or len(era_set) == 0:
        return 0.0
    agree = 0
    for e in era_set:
        m = eras == e
        L, R = m & left, m & right
        if L.sum() == 0 or R.sum() == 0:
            continue
        d = np.sign(
            newton(g[L].sum(), h[L].sum(), lam) - newton(g[R].sum(), h[R].sum(), lam)
        )
        agree += int(d == pooled)
    return agree / len(era_set)


def evaluate(left, g, h, eras, lam, alpha, era_set=None):
    """Pooled gain, S_era, |sum d_e|, M and the per-era children's score
    ``sum_e score(G_Le, H_Le) + score(G_Re, H_Re)`` for one candidate, over
    the eras of ``era_set`` (default: all of the node's)."""
    right = ~left
    gain = (
        score(g[left].sum(), h[left].sum(), lam)
        + score(g[right].sum(), h[right].sum(), lam)
        - score(g.sum(), h.sum(), lam)
    )
    gains, dsum, children = [], 0, 0.0
    era_set = np.unique(eras) if era_set is None else era_set
    for e in era_set:
        m = eras == e
        L, R = m & left, m & right
        children += score(g[L].sum(), h[L].sum(), lam) + score(
            g[R].sum(), h[R].sum(), lam
        )
        if L.sum() == 0 or R.sum() == 0:
            gains.append(0.0)
            continue
        gains.append(
            score(g[L].sum(), h[L].sum(), lam)
            + score(g[R].sum(), h[R].sum(), lam)
            - score(g[m].sum(), h[m].sum(), lam)
        )
        diff = newton(g[L].sum(), h[L].sum(), lam) - newton(g[R].sum(), h[R].sum(), lam)
        dsum += int(np.sign(diff))
    S = boltzmann(gains, alpha) if gains else 0.0
    return gain, S, abs(dsum), len(era_set), children


def best_split(
    Xb,
    g,
    h,
    eras,
    rows,
    n_bins_non_missing,
    has_missing,
    split_type,
    alpha=0.0,
    lam=0.0,
    min_samples_leaf=1,
    irf_penalty=0.0,
    min_samples_leaf_per_era=None,
    is_categorical=None,
    min_agreement=None,
    pooled_weight=0.0,
    irf_variance="change",
):
    """The split docs/criteria.md chooses among the rows ``rows``, or None.

    Returns (feature, bin, missing_left, key) where key is what was maximised
    (``bin``: the set of left bins for a categorical feature).
    """
    g, h, eras = g[rows], h[rows], eras[rows]
    era_set = splittable_eras(eras, min_samples_leaf_per_era)
    best, best_key = None, None
    for f, miss_left, b, left in candidates(
        Xb, n_bins_non_missing, has_missing, rows, is_categorical, g, h
    ):
        nL = int(left.sum())
        nR = len(rows) - nL
        if nL < min_samples_leaf or nR < min_samples_leaf:
            continue
        if h[left].sum() < MIN_HESSIAN or h[~left].sum() < MIN_HESSIAN:
            continue
        if min_samples_leaf_per_era is not None:
            fewest = min_rows_per_era(left, eras, era_set)
            if fewest is not None and fewest < min_samples_leaf_per_era:
                continue
        if (
            min_agreement is not None
            and agreement(left, g, h, eras, lam, era_set) < min_agreement
        ):
            continue
        gain, S, D, _M, children = evaluate(left, g, h, eras, lam, alpha, era_set)
        penalty = 0.0
        if irf_penalty > 0 and irf_variance == "difference":
            if not every_era_on_both_sides(left, eras, era_set):
                continue
            penalty = (
                irf_penalty
                * h.sum()
                * difference_penalty(left, g, h, eras, lam, era_set)
            )
        elif irf_penalty > 0:
            penalty = (
                irf_penalty
                * h.sum()
                * invariance_penalty(left, g, h, eras, lam, era_set)
            )
        if pooled_weight > 0 and split_type != "original" and len(era_set) > 0:
            # the era score blended with the pooled gain per era
            S = (1 - pooled_weight) * S + pooled_weight * (gain / len(era_set))
        # pooled progress under the era criteria
        progress = gain > POOLED_PROGRESS_RTOL * children
        if split_type == "original":
            ok, key = gain - penalty > 0, (gain - penalty,)
        elif split_type == "era":
            ok, key = S - penalty > 0 and progress, (S - penalty,)
        else:
            ok, key = D > 0 and progress, (D, S - penalty, gain)
        if ok and (best_key is None or key > best_key):
            best, best_key = (f, b, miss_left), key
    return None if best is None else (*best, best_key)


def era_groups_of(eras, era_groups):
    """The group of each row's era (docs/criteria.md, "Era groups"): an int
    k cuts the sorted distinct eras into k contiguous groups of near-equal
    numbers of eras (``np.array_split``'s sizes), labelled 0 .. k-1; a dict
    maps each era to its group."""
    eras = np.asarray(eras)
    if isinstance(era_groups, dict):
        return np.array([era_groups[e.item()] for e in eras])
    labels = np.unique(eras)
    group = {}
    for j, part in enumerate(np.array_split(labels, era_groups)):
        for label in part:
            group[label] = j
    return np.array([group[e] for e in eras])
