"""The robust tree's solver: candidate thresholds, the adversary and the
main problems of the constraint generation (see :mod:`eraboost.robust`).

Trees are full binary trees of depth ``d`` whose nodes are numbered from 1
in breadth-first order; a sample goes right at a node when
``x[feature] > threshold``.
"""

import itertools
import math
import time

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp

# at most this many candidate splits (feature, threshold) are enumerated
MAX_CANDIDATE_SPLITS = 100_000


def shift_reach(costs, budget):
    """Most units an entry with a positive cost can move on each feature.

    Uses the budget tolerance of :func:`pessimise`. Entries with a zero cost
    move for free and entries with an infinite cost never move: neither
    bounds the reach.

    Parameters
    ----------
    costs : ndarray of shape (n_samples, n_features)
    budget : float

    Returns
    -------
    reach : list of int
        One per feature.
    """
    positive = np.where((costs > 0) & np.isfinite(costs), costs, np.inf)
    cheapest = positive.min(axis=0) if positive.size else np.full(costs.shape[1], 1.0)
    allowed = budget + 1e-9 * max(1.0, budget)
    reach = []
    for c in cheapest:
        if not np.isfinite(c):
            reach.append(0)
            continue
        d = math.floor(allowed / c)
        if (d + 1) * c <= allowed:  # rounding of the division
            d += 1
        reach.append(d)
    return reach


def candidate_splits(X, costs, budget, depth):
    """The splits worth trying and a compressed copy of the features.

    Between two consecutive distinct values ``a < b`` of a feature, a
    threshold ``t`` (``a <= t < b``) sends ``a`` left and ``b`` right. For
    the nominal tree every such ``t`` is the same; under a shift, ``t``
    matters only through the distances ``t + 1 - a`` and ``b - t`` while
    they are within the ``reach`` of :func:`shift_reach`: beyond it no entry
    with a positive cost can cross, and entries with a zero cost only see
    the order of the thresholds. So a gap wider than
    ``2 * reach + depth`` keeps ``reach`` thresholds next to each of its
    ends and ``depth`` around its midpoint, and the features are re-spaced
    accordingly (the gap shrinks to that width): the problem on the
    compressed features has the same optimum, whatever the range of the
    values (1e9, 1e300).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Integer-valued float64 features.
    costs : ndarray of shape (n_samples, n_features)
    budget : float
    depth : int

    Returns
    -------
    X_compressed : ndarray of int64, shape (n_samples, n_features)
        The features re-spaced; unchanged where no gap was compressed and
        the values are below ``2**52``.
    features : ndarray of int64, shape (n_splits,)
    thresholds : ndarray of float64, shape (n_splits,)
        Thresholds on ``X_compressed``.
    thresholds_x : ndarray of float64, shape (n_splits,)
        The same thresholds on ``X``.
    """
    n, p = X.shape
    reach = shift_reach(costs, budget)
    X_compressed = np.zeros((n, p), dtype=np.int64)
    features, thresholds, thresholds_x = [], [], []
    n_splits = 0
    for f in range(p):
        values = np.unique(X[:, f])
        ints = [int(v) for v in values]
        width = 2 * reach[f] + depth
        gaps = [min(b - a, width) for a, b in itertools.pairwise(ints)]
        n_splits += sum(gaps)
        if n_splits > MAX_CANDIDATE_SPLITS:
            raise ValueError(
                f"RobustTreeClassifier: more than {MAX_CANDIDATE_SPLITS} "
                f"candidate splits (feature {f} has {len(ints)} distinct "
                f"values and entries can move up to {reach[f]} units within "
                "the budget): lower the budget, raise the costs or use fewer "
                "distinct values."
            )
        start = ints[0] if abs(ints[0]) <= 2**52 else 0
        positions = np.concatenate([[0], np.cumsum(gaps, dtype=np.int64)]) + start
        X_compressed[:, f] = positions[np.searchsorted(values, X[:, f])]
        for i, (a, b) in enumerate(itertools.pairwise(ints)):
            if b - a <= width:
                originals = [a + k for k in range(b - a)]
            else:
                d = reach[f]
                middle = (a + b) // 2 - depth // 2
                originals = (
                    [a + k for k in range(d)]
                    + [middle + k for k in range(depth)]
                    + [b - d + k for k in range(d)]
                )
            below_b = np.nextafter(values[i + 1], -np.inf)
            features.extend([f] * len(originals))
            thresholds.extend(range(positions[i], positions[i] + len(originals)))
            thresholds_x.extend(
                min(max(float(t), values[i]), below_b) for t in originals
            )
    return (
        X_compressed,
        np.asarray(features, dtype=np.int64),
        np.asarray(thresholds, dtype=np.float64),
        np.asarray(thresholds_x, dtype=np.float64),
    )


def leaf_paths(depth):
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


def leaf_boxes(depth, features, thresholds, n_features):
    """Integer box ``[lo, hi]`` of feature values reaching each leaf."""
    n_leaves = 2**depth
    lo = np.full((n_leaves, n_features), -np.inf)
    hi = np.full((n_leaves, n_features), np.inf)
    for li, path in enumerate(leaf_paths(depth)):
        for node, right in path:
            f, th = features[node - 1], thresholds[node - 1]
            if right:
                lo[li, f] = max(lo[li, f], th + 1)
            else:
                hi[li, f] = min(hi[li, f], th)
    return lo, hi


def apply_tree(X, depth, features, thresholds):
    """Leaf index (0-based among leaves) reached by each row of ``X``."""
    node = np.ones(X.shape[0], dtype=np.int64)
    for _ in range(depth):
        f = features[node - 1]
        th = thresholds[node - 1]
        go_right = X[np.arange(X.shape[0]), f] > th
        node = 2 * node + go_right
    return node - 2**depth


def pessimise(
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
    lo, hi = leaf_boxes(depth, features, thresholds, p)
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
    nominal_leaf = apply_tree(X, depth, features, thresholds)
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


class FlowMainProblem:
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
        """Column of ``b[node, j]``: split ``j`` at internal ``node``."""
        return 1 + (node - 1) * self.J + j

    def w_index(self, leaf, k):
        """Column of ``w[leaf, k]``: class ``k`` at ``leaf``."""
        return 1 + self.n_int * self.J + leaf * self.K + k

    def u_index(self, q, leaf):
        """Column of ``u[q, leaf]``: flow of point ``q`` into ``leaf``."""
        return self.n_tree + q * self.n_leaves + leaf

    def point(self, x, yk):
        """Index of the (point, label) pair, registered on first sight."""
        key = (tuple(np.asarray(x, dtype=np.int64).tolist()), int(yk))
        q = self.points.get(key)
        if q is None:
            q = len(self.points)
            self.points[key] = q
        return q

    def n_vars(self):
        """Number of variables of the current problem."""
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
        # exactly one split per internal node, one class per leaf
        one_of = [
            [self.b_index(node, j) for j in range(self.J)]
            for node in range(1, self.n_int + 1)
        ] + [
            [self.w_index(leaf, k) for k in range(self.K)]
            for leaf in range(self.n_leaves)
        ]
        for group in one_of:
            rows.extend([r] * len(group))
            cols.extend(group)
            vals.extend([1.0] * len(group))
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
        """Solve the main problem with HiGHS.

        Parameters
        ----------
        n_max : int
            Upper bound of ``T`` (the number of samples).
        time_limit : float
            Seconds left.

        Returns
        -------
        res : scipy.optimize.OptimizeResult
            The result of :func:`scipy.optimize.milp`.
        """
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
        """The tree of a solution.

        Parameters
        ----------
        xsol : ndarray
            Values of the variables.

        Returns
        -------
        features, thresholds : ndarray of shape (2**depth - 1,)
            Split of each internal node.
        leaf_classes : ndarray of shape (2**depth,)
            Class index of each leaf.
        """
        b = np.asarray(xsol[1 : 1 + self.n_int * self.J]).reshape(self.n_int, self.J)
        w = np.asarray(xsol[1 + self.n_int * self.J : self.n_tree]).reshape(
            self.n_leaves, self.K
        )
        js = np.argmax(b, axis=1)
        return self.split_feat[js], self.split_thr[js], np.argmax(w, axis=1)


class SubtreeMainProblem:
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
        """Rows tying each context's choice to its parent's split."""
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
        """Solve the main problem with HiGHS.

        Parameters
        ----------
        n_max : int
            Upper bound of ``T`` (the number of samples).
        time_limit : float
            Seconds left.

        Returns
        -------
        res : scipy.optimize.OptimizeResult
            The result of :func:`scipy.optimize.milp`.
        """
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
        """The tree of a solution.

        Parameters
        ----------
        xsol : ndarray
            Values of the variables.

        Returns
        -------
        features, thresholds : ndarray of shape (2**depth - 1,)
            Split of each internal node.
        leaf_classes : ndarray of shape (2**depth,)
            Class index of each leaf.
        """
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


def constraint_generation(
    main, X, y, depth, costs, budget, allow_up, allow_down, groups, time_limit
):
    """Solve the robust problem by delayed constraint generation.

    Alternates the main problem (a tree and an upper bound on the worst-case
    count) and the adversary (:func:`pessimise`), adding the cut of each
    worst-case shift, until the bounds meet or ``time_limit`` runs out.

    Parameters
    ----------
    main : FlowMainProblem or SubtreeMainProblem
        The main problem over the candidate splits.
    X : ndarray of int64, shape (n_samples, n_features)
        Features (compressed, see :func:`candidate_splits`).
    y : ndarray of int, shape (n_samples,)
        Class indices.
    depth : int
    costs : ndarray of shape (n_samples, n_features)
    budget : float
    allow_up, allow_down : ndarray of bool, shape (n_features,)
    groups : list of list of int
        One-hot categorical groups.
    time_limit : float
        Seconds.

    Returns
    -------
    best : tuple
        ``(n_worst, n_nominal, features, thresholds, leaf_classes)`` of the
        best tree found (thresholds on ``X``).
    status : {"optimal", "time_limit"}
    gap : float
        Relative optimality gap on the worst-case count.
    n_cuts, n_iterations : int
    """
    t0 = time.perf_counter()
    n = X.shape[0]
    Xf = X.astype(float)
    ones = np.ones(n)
    main.add_cut(X, y, ones)  # T <= nominal count
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
        n_worst, nom_correct, attacked, Xs, _ = pessimise(
            Xf,
            y,
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
        Xc = np.vstack([X, np.round(Xs).astype(np.int64)])
        yc = np.concatenate([y, y[attacked]])
        cc = np.concatenate([coef, np.ones(len(attacked))])
        main.add_cut(Xc, yc, cc)
        n_cuts += 1
    if best is None:
        raise RuntimeError("the solver found no tree within time_limit")
    n_worst = best[0]
    gap = 0.0 if upper < n_worst + 1 - 1e-6 else (upper - n_worst) / max(upper, 1e-12)
    if status == "optimal" and gap > 0:
        status = "time_limit"
    return best, status, float(gap), n_cuts, n_iter
