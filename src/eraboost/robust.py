"""Optimal classification trees robust to distribution shifts.

This module implements the method of Justin, Aghaei, Gómez and Vayanos,
"Learning Optimal Classification Trees Robust to Distribution Shifts":
a classification tree of bounded depth is chosen to maximise the number of
training samples that stay correctly classified under the *worst* admissible
integer shift of the features,

.. math::

    \\max_{\\pi} \\min_{\\xi \\in \\Xi} \\sum_i \\mathbb{1}[\\pi(x^i + \\xi^i) = y^i],
    \\qquad
    \\Xi = \\{\\xi \\in \\mathbb{Z}^{n \\times p} :
             \\sum_{i,f} \\gamma^i_f |\\xi^i_f| \\le \\epsilon\\}.

The problem is solved exactly by delayed constraint generation with the free
MILP solver HiGHS (through :func:`scipy.optimize.milp`): a main problem over
the tree variables is solved, the candidate tree is *pessimised* (for every
sample the cheapest perturbation that sends it to a wrongly labelled leaf is
found by inspecting the root-to-leaf paths, and the adversary spends the
budget on the cheapest samples first), and a cut describing that worst-case
shift is added until no violated cut remains.

The main problem uses one "is correctly classified" indicator per distinct
(point, label) pair, bounded by a max-flow (strong) formulation of the tree,
so that every cut is written in this lifted space (section 3.3 of the paper:
a cut in an extended space is a stronger cut in the original one).

:func:`calibrate_costs_budget` turns a probability that an entry is unshifted
and a likelihood-ratio threshold into costs and a budget (section 4).
"""

import math
import numbers
import time

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = ["RobustTreeClassifier", "calibrate_costs_budget"]

_SHIFTS = ("both", "increase", "decrease")
# largest number of subtree variables for which the extended main problem is
# used; beyond it (deep trees, many thresholds) the flow formulation is used
_MAX_EXTENDED_VARS = 400_000


# ---------------------------------------------------------------------------
# Calibration (section 4 and 5.2 of the paper)
# ---------------------------------------------------------------------------


def _solve_r(rho, n_up, n_down):
    """Ratio ``r`` of the truncated symmetric geometric distribution.

    Solves ``rho * (1 + sum_{k=1}^{n_up} r^k + sum_{k=1}^{n_down} r^k) = 1``
    for ``0 < r < 1`` (equations (22) and (25) of the paper, written as the
    normalisation condition of distribution (21)). ``n_up`` / ``n_down`` are
    the number of admissible unit moves above / below the nominal value and
    may be ``inf``. Returns 1.0 when the support is too small for ``rho``
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


# ---------------------------------------------------------------------------
# Tree helpers (full binary trees of depth d, nodes numbered 1.. in BFS order)
# ---------------------------------------------------------------------------


def _leaf_paths(depth):
    """For each leaf, the list of (internal node, went_right) on its path."""
    paths = []
    for leaf in range(2**depth, 2 ** (depth + 1)):
        path = []
        node = leaf
        while node > 1:
            parent = node // 2
            path.append((parent, node % 2 == 1))
            node = parent
        paths.append(path[::-1])
    return paths


def _leaf_boxes(depth, features, thresholds, n_features):
    """Integer box ``[lo, hi]`` of feature values reaching each leaf."""
    n_leaves = 2**depth
    lo = np.full((n_leaves, n_features), -np.inf)
    hi = np.full((n_leaves, n_features), np.inf)
    for li, path in enumerate(_leaf_paths(depth)):
        for node, right in path:
            f, th = features[node - 1], thresholds[node - 1]
            if right:
                lo[li, f] = max(lo[li, f], th + 1)
            else:
                hi[li, f] = min(hi[li, f], th)
    return lo, hi


def _apply_tree(X, depth, features, thresholds):
    """Leaf index (0-based among leaves) reached by each row of ``X``."""
    node = np.ones(X.shape[0], dtype=np.int64)
    for _ in range(depth):
        f = features[node - 1]
        th = thresholds[node - 1]
        go_right = X[np.arange(X.shape[0]), f] > th
        node = 2 * node + go_right
    return node - 2**depth


def _pessimise(
    X,
    y,
    depth,
    features,
    thresholds,
    leaf_class,
    costs,
    budget,
    allow_up,
    allow_down,
    groups,
):
    """Worst admissible shift of the training set for one fixed tree.

    For every sample, the cheapest perturbation sending it to a leaf whose
    label differs from its own is found leaf by leaf (problem (13) of the
    paper decomposes per feature and is solved by inspection); the adversary
    then misclassifies correctly classified samples in non-decreasing order
    of that cost while the budget allows (algorithm 1).

    Returns
    -------
    n_correct_worst : int
    nominal_correct : ndarray of bool, shape (n_samples,)
    attacked : ndarray of int
        Indices of the samples the adversary misclassifies.
    X_shifted : ndarray of shape (len(attacked), n_features)
        Their perturbed feature vectors.
    psi : ndarray of shape (n_samples,)
        Cheapest cost to misclassify each sample (0 if already wrong).
    """
    n, p = X.shape
    lo, hi = _leaf_boxes(depth, features, thresholds, p)
    feasible_leaf = np.all(lo <= hi, axis=1)
    # distance needed upwards / downwards, per sample, leaf, feature
    up = np.maximum(lo[None, :, :] - X[:, None, :], 0.0)
    down = np.maximum(X[:, None, :] - hi[None, :, :], 0.0)
    c = costs[:, None, :]
    with np.errstate(invalid="ignore"):
        cost_up = np.where(
            up > 0, np.where(allow_up[None, None, :], c * up, np.inf), 0.0
        )
        cost_down = np.where(
            down > 0, np.where(allow_down[None, None, :], c * down, np.inf), 0.0
        )
    per_feat = cost_up + cost_down
    # one-hot categorical groups: either unchanged or switched to another
    # category (cost gamma_old + gamma_new), see section 5.2
    target_cat = {}
    for gi, g in enumerate(groups):
        g = np.asarray(g)
        Xg = X[:, g]  # (n, m) one-hot
        cur = np.argmax(Xg, axis=1)
        lo_g, hi_g = lo[:, g], hi[:, g]  # (L, m)
        # is one-hot vector e_k inside the leaf's box on this group?
        m = len(g)
        eye = np.eye(m)
        inside = np.all(
            (eye[None, :, :] >= lo_g[:, None, :])
            & (eye[None, :, :] <= hi_g[:, None, :]),
            axis=2,
        )  # (L, m)
        cg = costs[:, g]  # (n, m)
        cost_old = cg[np.arange(n), cur]  # (n,)
        # switch cost from cur to k
        sw = cost_old[:, None] + cg  # (n, m)
        sw[np.arange(n), cur] = 0.0
        cand = np.where(inside[None, :, :], sw[:, None, :], np.inf)  # (n, L, m)
        best_k = np.argmin(cand, axis=2)
        best_cost = np.take_along_axis(cand, best_k[:, :, None], axis=2)[:, :, 0]
        per_feat[:, :, g] = 0.0
        per_feat[:, :, g[0]] = best_cost
        target_cat[gi] = best_k
    leaf_cost = per_feat.sum(axis=2)  # (n, L)
    leaf_cost[:, ~feasible_leaf] = np.inf
    wrong = leaf_class[None, :] != y[:, None]  # (n, L)
    cand = np.where(wrong, leaf_cost, np.inf)
    best_leaf = np.argmin(cand, axis=1)
    psi = cand[np.arange(n), best_leaf]
    nominal_leaf = _apply_tree(X, depth, features, thresholds)
    nominal_correct = leaf_class[nominal_leaf] == y
    psi[~nominal_correct] = 0.0
    idx = np.flatnonzero(nominal_correct & np.isfinite(psi))
    order = idx[np.argsort(psi[idx], kind="stable")]
    csum = np.cumsum(psi[order])
    tol = 1e-9 * max(1.0, budget)
    k = int(np.searchsorted(csum, budget + tol, side="right"))
    attacked = order[:k]
    # perturbed points: project onto the box of the chosen leaf
    Xs = X[attacked].astype(float).copy()
    bl = best_leaf[attacked]
    Xs = np.minimum(np.maximum(Xs, lo[bl]), hi[bl])
    for gi, g in enumerate(groups):
        g = np.asarray(g)
        kk = target_cat[gi][attacked, bl]
        Xs[:, g] = np.eye(len(g))[kk]
    n_worst = int(nominal_correct.sum()) - k
    return n_worst, nominal_correct, attacked, Xs, psi


# ---------------------------------------------------------------------------
# Main problem
# ---------------------------------------------------------------------------


class _MainProblem:
    """Main problem of the constraint generation, in the lifted space.

    Variables: ``T`` (worst-case count), ``b[n, j]`` (split ``j`` at internal
    node ``n``), ``w[l, k]`` (class ``k`` at leaf ``l``) and, for every
    distinct (point, label) pair ``q`` met so far, leaf flows ``u[q, l]``
    whose sum is the "q is correctly classified" indicator (max-flow bound
    as in the strong formulation of Aghaei et al.).
    """

    def __init__(self, depth, split_feat, split_thr, n_classes):
        self.depth = depth
        self.n_int = 2**depth - 1
        self.n_leaves = 2**depth
        self.split_feat = split_feat
        self.split_thr = split_thr
        self.J = len(split_feat)
        self.K = n_classes
        self.n_tree = 1 + self.n_int * self.J + self.n_leaves * self.K
        self.points = {}  # (tuple(x), y) -> index
        self.cuts = []  # list of dict point_index -> coefficient
        # leaves below the left / right child of each internal node
        self.leaves_below = []
        for node in range(1, self.n_int + 1):
            sides = []
            for child in (2 * node, 2 * node + 1):
                lo_, hi_ = child, child
                while lo_ < 2**depth:
                    lo_, hi_ = 2 * lo_, 2 * hi_ + 1
                sides.append(np.arange(lo_, hi_ + 1) - 2**depth)
            self.leaves_below.append(sides)

    def b_index(self, node, j):
        return 1 + (node - 1) * self.J + j

    def w_index(self, leaf, k):
        return 1 + self.n_int * self.J + leaf * self.K + k

    def u_index(self, q, leaf):
        return self.n_tree + q * self.n_leaves + leaf

    def point(self, x, yk):
        key = (tuple(np.asarray(x, dtype=np.int64).tolist()), int(yk))
        q = self.points.get(key)
        if q is None:
            q = len(self.points)
            self.points[key] = q
        return q

    def n_vars(self):
        return self.n_tree + len(self.points) * self.n_leaves

    def add_cut(self, Xc, yc, coef):
        """Add ``T <= sum_q coef_q * [tree classifies (Xc[q], yc[q]) right]``."""
        cut = {}
        for x, yk, c in zip(Xc, yc, coef):
            if c != 0:
                q = self.point(x, yk)
                cut[q] = cut.get(q, 0.0) + float(c)
        self.cuts.append({q: v for q, v in cut.items() if v != 0})

    def build(self):
        """Assemble the constraint matrix (rebuilt at each iteration)."""
        rows, cols, vals, lbs, ubs = [], [], [], [], []
        r = 0
        J, K = self.J, self.K
        for node in range(1, self.n_int + 1):  # one split per internal node
            for j in range(J):
                rows.append(r)
                cols.append(self.b_index(node, j))
                vals.append(1.0)
            lbs.append(1.0)
            ubs.append(1.0)
            r += 1
        for leaf in range(self.n_leaves):  # one class per leaf
            for k in range(K):
                rows.append(r)
                cols.append(self.w_index(leaf, k))
                vals.append(1.0)
            lbs.append(1.0)
            ubs.append(1.0)
            r += 1
        keys = list(self.points.keys())
        sf, st = self.split_feat, self.split_thr
        for q, (x, yk) in enumerate(keys):
            xa = np.asarray(x)
            goes_left = xa[sf] <= st  # per split candidate
            for leaf in range(self.n_leaves):  # u[q, l] <= w[l, y]
                rows += [r, r]
                cols += [self.u_index(q, leaf), self.w_index(leaf, yk)]
                vals += [1.0, -1.0]
                lbs.append(-np.inf)
                ubs.append(0.0)
                r += 1
            for node in range(1, self.n_int + 1):
                for side, mask in ((0, goes_left), (1, ~goes_left)):
                    for leaf in self.leaves_below[node - 1][side]:
                        rows.append(r)
                        cols.append(self.u_index(q, leaf))
                        vals.append(1.0)
                    for j in np.flatnonzero(mask):
                        rows.append(r)
                        cols.append(self.b_index(node, j))
                        vals.append(-1.0)
                    lbs.append(-np.inf)
                    ubs.append(0.0)
                    r += 1
        for cut in self.cuts:  # T - sum_q coef_q * sum_l u[q, l] <= 0
            rows.append(r)
            cols.append(0)
            vals.append(1.0)
            for q, coef in cut.items():
                for leaf in range(self.n_leaves):
                    rows.append(r)
                    cols.append(self.u_index(q, leaf))
                    vals.append(-coef)
            lbs.append(-np.inf)
            ubs.append(0.0)
            r += 1
        A = sparse.csr_matrix((vals, (rows, cols)), shape=(r, self.n_vars()))
        return A, np.asarray(lbs), np.asarray(ubs)

    def solve(self, n_max, time_limit):
        nv = self.n_vars()
        A, lb, ub = self.build()
        c = np.zeros(nv)
        c[0] = -1.0
        integrality = np.zeros(nv)
        integrality[1 : self.n_tree] = 1
        lower = np.zeros(nv)
        upper = np.ones(nv)
        upper[0] = n_max
        options = {
            "time_limit": max(time_limit, 1e-3),
            "mip_rel_gap": 1e-9,
            "presolve": True,
        }
        res = milp(
            c,
            constraints=LinearConstraint(A, lb, ub),
            integrality=integrality,
            bounds=Bounds(lower, upper),
            options=options,
        )
        return res

    def decode(self, xsol):
        b = np.asarray(xsol[1 : 1 + self.n_int * self.J]).reshape(self.n_int, self.J)
        w = np.asarray(xsol[1 + self.n_int * self.J : self.n_tree]).reshape(
            self.n_leaves, self.K
        )
        js = np.argmax(b, axis=1)
        return self.split_feat[js], self.split_thr[js], np.argmax(w, axis=1)


class _SubtreeMainProblem:
    """Main problem in an extended space of subtree choices.

    The splits of the internal nodes above the last internal level are
    binary variables indexed by their *context* (the splits and directions
    on the path from the root); at the last internal level, a variable picks
    a whole bottom stump (split and the labels of its two leaves). Whether a
    point is correctly classified is then linear in these variables with
    exact 0/1 coefficients, so every cut of the constraint generation,
    ``T <= sum_q coef_q * correct_q``, is a single dense row without any
    per-point variable, and its linear relaxation is much tighter than the
    flow formulation. The number of variables is
    ``(2 J)^(depth - 1) * J * K^2`` (``J`` candidate splits, ``K`` classes).
    """

    def __init__(self, depth, split_feat, split_thr, n_classes):
        self.depth = depth
        self.split_feat = split_feat
        self.split_thr = split_thr
        J = self.J = len(split_feat)
        K = self.K = n_classes
        self.n_stump = J * K * K
        # level l (0-based) has (2J)^l contexts; split variables for levels
        # 0..depth-2, stump variables for level depth-1
        self.level_offset = []
        off = 1  # variable 0 is T
        for level in range(depth - 1):
            self.level_offset.append(off)
            off += (2 * J) ** level * J
        self.stump_offset = off
        self.n_ctx = (2 * J) ** (depth - 1)
        self.n_vars = off + self.n_ctx * self.n_stump
        self.cut_rows = []
        self._build_structure()

    def _build_structure(self):
        J, depth = self.J, self.depth
        rows, cols, vals, lbs, ubs = [], [], [], [], []
        r = 0
        # parent expression of a context at level l: 1 for the root,
        # otherwise the split variable of the parent context
        for level in range(depth):
            n_ctx = (2 * J) ** level
            for c in range(n_ctx):
                if level < depth - 1:
                    first = self.level_offset[level] + c * J
                    cols.extend(range(first, first + J))
                    vals.extend([1.0] * J)
                    rows.extend([r] * J)
                else:
                    first = self.stump_offset + c * self.n_stump
                    cols.extend(range(first, first + self.n_stump))
                    vals.extend([1.0] * self.n_stump)
                    rows.extend([r] * self.n_stump)
                if level == 0:
                    lbs.append(1.0)
                    ubs.append(1.0)
                else:
                    parent, rem = divmod(c, 2 * J)
                    j = rem // 2
                    rows.append(r)
                    cols.append(self.level_offset[level - 1] + parent * J + j)
                    vals.append(-1.0)
                    lbs.append(0.0)
                    ubs.append(0.0)
                r += 1
        self.A0 = sparse.csr_matrix((vals, (rows, cols)), shape=(r, self.n_vars))
        self.lb0 = np.asarray(lbs)
        self.ub0 = np.asarray(ubs)

    def _context_masks(self, Xc):
        """Boolean (n_ctx, m): which points reach each last-level context."""
        J = self.J
        left = Xc[:, self.split_feat] <= self.split_thr  # (m, J)
        side = np.stack([left, ~left], axis=1)  # (m, 2, J) dir 0 = left
        side = side.transpose(0, 2, 1).reshape(Xc.shape[0], 2 * J)  # idx j*2+dir
        masks = np.ones((1, Xc.shape[0]), dtype=bool)
        for _ in range(self.depth - 1):
            masks = (masks[:, None, :] & side.T[None, :, :]).reshape(-1, Xc.shape[0])
        return masks, left

    def add_cut(self, Xc, yc, coef):
        """Add ``T <= sum_q coef_q * [tree classifies (Xc[q], yc[q]) right]``."""
        K = self.K
        masks, left = self._context_masks(Xc)
        W = np.zeros((Xc.shape[0], K))
        W[np.arange(Xc.shape[0]), yc] = coef
        MW = masks[:, :, None] * W[None, :, :]  # (C, m, K)
        lf = left.astype(float)
        SL = np.einsum("cmk,mj->cjk", MW, lf)
        SR = np.einsum("cmk,mj->cjk", MW, 1.0 - lf)
        stump = SL[:, :, :, None] + SR[:, :, None, :]  # (C, J, K, K)
        row = np.zeros(self.n_vars)
        row[0] = 1.0
        row[self.stump_offset :] = -stump.reshape(-1)
        self.cut_rows.append(row)

    def solve(self, n_max, time_limit):
        A = sparse.vstack([self.A0, sparse.csr_matrix(np.vstack(self.cut_rows))])
        lb = np.concatenate([self.lb0, np.full(len(self.cut_rows), -np.inf)])
        ub = np.concatenate([self.ub0, np.zeros(len(self.cut_rows))])
        c = np.zeros(self.n_vars)
        c[0] = -1.0
        integrality = np.ones(self.n_vars)
        integrality[0] = 0
        upper = np.ones(self.n_vars)
        upper[0] = n_max
        options = {"time_limit": max(time_limit, 1e-3), "mip_rel_gap": 1e-9}
        return milp(
            c,
            constraints=LinearConstraint(A, lb, ub),
            integrality=integrality,
            bounds=Bounds(np.zeros(self.n_vars), upper),
            options=options,
        )

    def decode(self, xsol):
        J, K, depth = self.J, self.K, self.depth
        n_int = 2**depth - 1
        feat = np.zeros(n_int, dtype=np.int64)
        thr = np.zeros(n_int)
        leaf_cls = np.zeros(2**depth, dtype=np.int64)
        # walk the tree breadth first, tracking each node's context index
        ctx = {1: 0}
        for node in range(1, n_int + 1):
            level = math.floor(math.log2(node))
            c = ctx[node]
            if level < depth - 1:
                first = self.level_offset[level] + c * J
                j = int(np.argmax(xsol[first : first + J]))
                feat[node - 1], thr[node - 1] = self.split_feat[j], self.split_thr[j]
                ctx[2 * node] = c * 2 * J + 2 * j
                ctx[2 * node + 1] = c * 2 * J + 2 * j + 1
            else:
                first = self.stump_offset + c * self.n_stump
                s = int(np.argmax(xsol[first : first + self.n_stump]))
                j, rem = divmod(s, K * K)
                kl, kr = divmod(rem, K)
                feat[node - 1], thr[node - 1] = self.split_feat[j], self.split_thr[j]
                leaf_cls[2 * node - 2**depth] = kl
                leaf_cls[2 * node + 1 - 2**depth] = kr
        return feat, thr, leaf_cls


# ---------------------------------------------------------------------------
# Estimator
# ---------------------------------------------------------------------------


class RobustTreeClassifier(ClassifierMixin, BaseEstimator):
    """Optimal classification tree robust to integer distribution shifts.

    Learns the tree of depth at most ``max_depth`` that maximises the number
    of training samples correctly classified under the worst shift
    ``x^i_f -> x^i_f + xi^i_f`` (integer ``xi``) with total cost
    ``sum_{i,f} costs[i, f] * |xi^i_f| <= budget`` (Justin, Aghaei, Gómez
    and Vayanos). Solved to proven optimality by constraint generation with
    HiGHS (:func:`scipy.optimize.milp`). With ``budget=0`` this is the
    nominal optimal tree (maximum training accuracy).

    Parameters
    ----------
    max_depth : int, default=2
        Maximum depth of the tree, between 1 and 4.
    budget : float, default=0.0
        Budget ``epsilon`` of the uncertainty set (non-negative).
    costs : float or array-like of shape (n_features,) or \
            (n_samples, n_features), default=1.0
        Cost ``gamma`` of shifting an entry by one unit (non-negative; ``inf``
        means the entry cannot shift). See :func:`calibrate_costs_budget`.
    shift : {"both", "increase", "decrease"} or list of those, default="both"
        Admissible direction of the shift, for all features or per feature
        (section 5.1). Ignored for columns of categorical groups.
    categorical_groups : list of list of int, default=None
        Column indices of one-hot encoded categorical features. A shift of a
        group moves its single 1 to another column of the group at cost
        ``costs[old] + costs[new]`` (section 5.2).
    time_limit : float, default=600.0
        Wall-clock limit in seconds for the whole constraint generation.
        When reached, the best tree found so far is kept and ``gap_`` reports
        the remaining optimality gap.
    random_state : int, default=None
        Accepted for API compatibility and currently unused: the solve is
        deterministic (:func:`scipy.optimize.milp` does not expose the random
        seed of HiGHS).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    n_features_in_ : int
        Number of features seen during fit.
    tree_features_ : ndarray of shape (2**max_depth - 1,)
        Feature tested at each internal node of the full tree (BFS order).
    tree_thresholds_ : ndarray of shape (2**max_depth - 1,)
        Threshold: a sample goes right when ``x[feature] > threshold``.
    leaf_values_ : ndarray of shape (2**max_depth,)
        Index into ``classes_`` predicted at each leaf.
    leaf_proba_ : ndarray of shape (2**max_depth, n_classes)
        Class shares of the (unshifted) training samples reaching each leaf
        (the leaf's predicted class when no sample reaches it).
    solver_status_ : str
        ``"optimal"`` or ``"time_limit"``.
    gap_ : float
        Relative optimality gap ``(upper - lower) / upper`` on the worst-case
        count (0 when proven optimal).
    worst_case_accuracy_ : float
        Training accuracy under the worst admissible shift.
    nominal_accuracy_ : float
        Training accuracy without shift.
    n_cuts_ : int
        Number of cuts added by the constraint generation.
    n_iterations_ : int
        Number of main problems solved.
    solve_time_ : float
        Wall-clock time of the solve in seconds.
    formulation_ : str
        Main problem used: ``"subtree"`` (extended formulation over subtree
        choices, used while it has at most 400,000 variables) or ``"flow"``
        (max-flow formulation, e.g. for depth 4).

    Notes
    -----
    Features must be integer valued. Candidate thresholds are all integers
    between the smallest (inclusive) and largest (exclusive) training value
    of each feature, so the main problem grows with the range of the
    features. Trees are represented as full binary trees of depth
    ``max_depth``; subtrees whose leaves all predict the same class are
    collapsed in :meth:`export_text` (this does not change predictions, hence
    neither the nominal nor the worst-case count).

    ``predict`` returns the label chosen by the optimisation, which can
    differ from the argmax of ``predict_proba`` (the empirical class shares
    of the leaf) when robustness favours another label.

    Examples
    --------
    >>> import numpy as np
    >>> from eraboost.robust import RobustTreeClassifier
    >>> X = np.array([[0, 1], [1, 1], [2, 0], [3, 0], [4, 1], [5, 0]])
    >>> y = np.array([0, 0, 0, 1, 1, 1])
    >>> clf = RobustTreeClassifier(max_depth=1, budget=1.0, costs=1.0).fit(X, y)
    >>> clf.nominal_accuracy_, clf.worst_case_accuracy_
    (1.0, 0.8333333333333334)
    """

    def __init__(
        self,
        max_depth=2,
        budget=0.0,
        costs=1.0,
        shift="both",
        categorical_groups=None,
        time_limit=600.0,
        random_state=None,
    ):
        self.max_depth = max_depth
        self.budget = budget
        self.costs = costs
        self.shift = shift
        self.categorical_groups = categorical_groups
        self.time_limit = time_limit
        self.random_state = random_state

    # -- validation ---------------------------------------------------------

    def _validate_params_(self, n_samples, n_features):
        d = self.max_depth
        if (
            not isinstance(d, numbers.Integral)
            or isinstance(d, bool)
            or not 1 <= d <= 4
        ):
            raise ValueError(f"max_depth must be an integer between 1 and 4, got {d!r}")
        try:
            budget = float(self.budget)
        except (TypeError, ValueError):
            raise ValueError(
                f"budget must be a non-negative number, got {self.budget!r}"
            ) from None
        if not budget >= 0 or math.isinf(budget):
            raise ValueError(
                f"budget must be a finite non-negative number, got {self.budget!r}"
            )
        costs = np.asarray(self.costs, dtype=float)
        if costs.ndim == 0:
            costs = np.full((n_samples, n_features), float(costs))
        elif costs.ndim == 1:
            if costs.shape[0] != n_features:
                raise ValueError(
                    f"costs has shape {costs.shape}; expected a scalar, "
                    f"({n_features},) or ({n_samples}, {n_features})"
                )
            costs = np.tile(costs, (n_samples, 1))
        elif costs.ndim == 2:
            if costs.shape != (n_samples, n_features):
                raise ValueError(
                    f"costs has shape {costs.shape}; expected a scalar, "
                    f"({n_features},) or ({n_samples}, {n_features})"
                )
            costs = costs.copy()
        else:
            raise ValueError(
                f"costs has shape {costs.shape}; expected a scalar, "
                f"({n_features},) or ({n_samples}, {n_features})"
            )
        if np.any(np.isnan(costs)) or np.any(costs < 0):
            raise ValueError("costs must be non-negative (inf allowed)")
        shift = self.shift
        if isinstance(shift, str):
            shift = [shift] * n_features
        shift = list(shift)
        if len(shift) != n_features:
            raise ValueError(
                f"shift must be a string or a list of {n_features} strings"
            )
        for s in shift:
            if s not in _SHIFTS:
                raise ValueError(f"shift entries must be one of {_SHIFTS}, got {s!r}")
        allow_up = np.array([s in ("both", "increase") for s in shift])
        allow_down = np.array([s in ("both", "decrease") for s in shift])
        groups = []
        seen = set()
        for g in self.categorical_groups or []:
            g = [int(c) for c in g]
            if len(g) < 2:
                raise ValueError("each categorical group needs at least 2 columns")
            for c in g:
                if not 0 <= c < n_features:
                    raise ValueError(f"categorical column {c} out of range")
                if c in seen:
                    raise ValueError(
                        f"column {c} is in more than one categorical group"
                    )
                seen.add(c)
            groups.append(g)
        tl = float(self.time_limit)
        if not tl > 0:
            raise ValueError("time_limit must be positive")
        return budget, costs, allow_up, allow_down, groups, tl

    # -- fit ----------------------------------------------------------------

    def fit(self, X, y):
        """Fit the robust optimal tree.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Integer-valued features (categorical features one-hot encoded and
            declared in ``categorical_groups``).
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : RobustTreeClassifier
            Fitted estimator.
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        if not np.all(np.isfinite(X)) or np.any(np.round(X) != X):
            raise ValueError(
                "RobustTreeClassifier requires integer-valued features "
                "(X contains non-integer values)"
            )
        n, p = X.shape
        budget, costs, allow_up, allow_down, groups, time_limit = (
            self._validate_params_(n, p)
        )
        for g in groups:
            Xg = X[:, g]
            if not (np.all((Xg == 0) | (Xg == 1)) and np.all(Xg.sum(axis=1) == 1)):
                raise ValueError(
                    f"categorical group {g} is not one-hot encoded "
                    "(each row needs exactly one 1)"
                )
        self.classes_, y_enc = np.unique(y, return_inverse=True)
        K = len(self.classes_)
        depth = self.max_depth
        t0 = time.perf_counter()

        # candidate splits (f, theta), theta in [min_f, max_f)
        xmin, xmax = X.min(axis=0).astype(np.int64), X.max(axis=0).astype(np.int64)
        sf, st = [], []
        for f in range(p):
            for th in range(xmin[f], xmax[f]):
                sf.append(f)
                st.append(th)
        Xi = X.astype(np.int64)
        if not sf or K == 1:
            # nothing to split on: a constant tree
            cls = np.bincount(y_enc, minlength=K).argmax()
            self._set_tree(
                np.zeros(2**depth - 1, dtype=np.int64),
                np.full(2**depth - 1, np.inf),
                np.full(2**depth, cls),
                Xi,
                y_enc,
            )
            n_worst = int(np.sum(y_enc == cls))
            self._finish(n_worst, n_worst, n, "optimal", 0.0, 0, 0, t0)
            return self
        sf = np.asarray(sf, dtype=np.int64)
        st = np.asarray(st, dtype=np.float64)

        n_ext = (2 * len(sf)) ** (depth - 1) * len(sf) * K * K
        if n_ext <= _MAX_EXTENDED_VARS:
            main = _SubtreeMainProblem(depth, sf, st, K)
        else:
            main = _MainProblem(depth, sf, st, K)
        self.formulation_ = (
            "subtree" if isinstance(main, _SubtreeMainProblem) else "flow"
        )
        Xf = Xi.astype(float)
        ones = np.ones(n)
        main.add_cut(Xi, y_enc, ones)  # T <= nominal count

        best = None  # (worst count, nominal count, feat, thr, leaf_cls)
        upper = float(n)
        status = "optimal"
        n_iter = 0
        n_cuts = 0
        while True:
            remaining = time_limit - (time.perf_counter() - t0)
            if remaining <= 0:
                status = "time_limit"
                break
            res = main.solve(n, remaining)
            n_iter += 1
            if res.x is None:
                status = "time_limit"
                break
            if res.status == 0:
                upper = min(upper, -res.fun)
            else:
                bound = getattr(res, "mip_dual_bound", None)
                if bound is not None and np.isfinite(bound):
                    upper = min(upper, -bound)
            feat, thr, leaf_cls = main.decode(res.x)
            n_worst, nom_correct, attacked, Xs, _ = _pessimise(
                Xf,
                y_enc,
                depth,
                feat,
                thr,
                leaf_cls,
                costs,
                budget,
                allow_up,
                allow_down,
                groups,
            )
            if best is None or n_worst > best[0]:
                best = (n_worst, int(nom_correct.sum()), feat, thr, leaf_cls)
            if res.status != 0:
                status = "time_limit"
                break
            if upper < best[0] + 1 - 1e-6:  # counts are integers
                break
            # cut (14) for the worst-case shift of this tree, in the lifted
            # space: T <= #correct(unattacked) + #correct(attacked, shifted)
            coef = ones.copy()
            coef[attacked] = 0.0
            Xc = np.vstack([Xi, np.round(Xs).astype(np.int64)])
            yc = np.concatenate([y_enc, y_enc[attacked]])
            cc = np.concatenate([coef, np.ones(len(attacked))])
            main.add_cut(Xc, yc, cc)
            n_cuts += 1

        if best is None:
            raise RuntimeError("the solver found no tree within time_limit")
        n_worst, n_nom, feat, thr, leaf_cls = best
        gap = (
            0.0 if upper < n_worst + 1 - 1e-6 else (upper - n_worst) / max(upper, 1e-12)
        )
        if status == "optimal" and gap > 0:
            status = "time_limit"
        self._set_tree(feat, thr, leaf_cls, Xi, y_enc)
        self._finish(n_worst, n_nom, n, status, gap, n_cuts, n_iter, t0)
        return self

    def _set_tree(self, feat, thr, leaf_cls, X, y_enc):
        depth = self.max_depth
        self.tree_features_ = np.asarray(feat, dtype=np.int64)
        self.tree_thresholds_ = np.asarray(thr, dtype=np.float64)
        self.leaf_values_ = np.asarray(leaf_cls, dtype=np.int64)
        K = len(self.classes_)
        leaves = _apply_tree(
            X.astype(float), depth, self.tree_features_, self.tree_thresholds_
        )
        counts = np.zeros((2**depth, K))
        np.add.at(counts, (leaves, y_enc), 1.0)
        proba = np.zeros_like(counts)
        tot = counts.sum(axis=1)
        has = tot > 0
        proba[has] = counts[has] / tot[has, None]
        proba[~has, self.leaf_values_[~has]] = 1.0
        self.leaf_proba_ = proba

    def _finish(self, n_worst, n_nom, n, status, gap, n_cuts, n_iter, t0):
        self.worst_case_accuracy_ = n_worst / n
        self.nominal_accuracy_ = n_nom / n
        self.solver_status_ = status
        self.gap_ = float(gap)
        self.n_cuts_ = int(n_cuts)
        self.n_iterations_ = int(n_iter)
        self.solve_time_ = time.perf_counter() - t0

    # -- prediction ---------------------------------------------------------

    def apply(self, X):
        """Index of the leaf (0-based, left to right) reached by each sample.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.

        Returns
        -------
        leaves : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if np.any(np.isnan(X)):
            raise ValueError("X contains NaN")
        return _apply_tree(
            X, self.max_depth, self.tree_features_, self.tree_thresholds_
        )

    def predict(self, X):
        """Predict class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        return self.classes_[self.leaf_values_[self.apply(X)]]

    def predict_proba(self, X):
        """Class shares of the training samples in the leaf of each sample.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        return self.leaf_proba_[self.apply(X)]

    def worst_case_score(self, X, y, budget=None, costs=None):
        """Accuracy of the fitted tree under the worst admissible shift.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Integer features.
        y : array-like of shape (n_samples,)
            True labels.
        budget : float, default=None
            Budget of the shift (defaults to the fitted ``budget``).
        costs : float or array-like, default=None
            Costs (defaults to the fitted ``costs`` when their shape allows).

        Returns
        -------
        score : float
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        y = np.asarray(y)
        n, p = X.shape
        est = self
        if budget is not None or costs is not None:
            est = self.__class__(**self.get_params())
            if budget is not None:
                est.budget = budget
            if costs is not None:
                est.costs = costs
        b, c, up, down, groups, _ = est._validate_params_(n, p)
        known = np.isin(y, self.classes_)
        y_enc = np.where(known, np.searchsorted(self.classes_, y), -1)
        n_worst, *_ = _pessimise(
            X,
            y_enc,
            self.max_depth,
            self.tree_features_,
            self.tree_thresholds_,
            self.leaf_values_,
            c,
            b,
            up,
            down,
            groups,
        )
        return n_worst / n

    # -- rendering ----------------------------------------------------------

    def export_text(self, feature_names=None, decimals=2):
        """Text rendering of the tree (uniform subtrees collapsed).

        Parameters
        ----------
        feature_names : list of str, default=None
            Names of the features (``x[j]`` otherwise).
        decimals : int, default=2
            Decimals of the leaf class shares.

        Returns
        -------
        text : str
        """
        check_is_fitted(self)
        if feature_names is None:
            names = getattr(self, "feature_names_in_", None)
            feature_names = (
                [str(s) for s in names]
                if names is not None
                else [f"x[{j}]" for j in range(self.n_features_in_)]
            )
        depth = self.max_depth
        n_leaves = 2**depth
        lines = []

        def leaf_range(node):
            lo_, hi_ = node, node
            while lo_ < n_leaves:
                lo_, hi_ = 2 * lo_, 2 * hi_ + 1
            return lo_ - n_leaves, hi_ - n_leaves

        def rec(node, indent):
            a, b = leaf_range(node)
            vals = self.leaf_values_[a : b + 1]
            if node >= n_leaves or np.all(vals == vals[0]):
                if node >= n_leaves:
                    shares = self.leaf_proba_[node - n_leaves]
                    share_txt = ", ".join(
                        f"{c}: {s:.{decimals}f}" for c, s in zip(self.classes_, shares)
                    )
                    lines.append(
                        f"{indent}predict {self.classes_[vals[0]]}"
                        f"  (training shares {share_txt})"
                    )
                else:
                    lines.append(f"{indent}predict {self.classes_[vals[0]]}")
                return
            f = self.tree_features_[node - 1]
            th = self.tree_thresholds_[node - 1]
            th_txt = f"{th:g}"
            lines.append(f"{indent}if {feature_names[f]} <= {th_txt}:")
            rec(2 * node, indent + "    ")
            lines.append(f"{indent}else:  # {feature_names[f]} > {th_txt}")
            rec(2 * node + 1, indent + "    ")

        rec(1, "")
        return "\n".join(lines)
