"""NumPy prototype of the worst-era criterion (issue 18), for the experiments.

NOT part of eraboost: evaluated in docs/experiments.md ("The worst-era
criterion: not adopted"), it beat ``original`` on the synthetic tasks but
lost beyond noise on four of five real tables, so it failed the issue's
rule. Kept as the evidence behind that verdict.

A small histogram gradient booster written with NumPy, whose split
criterion scores a candidate by what the tree will really predict. For era
``e`` the second-order improvement of its loss when the node's pooled value
``v`` is replaced by the pooled child values ``v_L, v_R``::

    r_e = -2 [G_Le v_L + H_Le v_L^2 / 2 + G_Re v_R + H_Re v_R^2 / 2
              - G_e v - H_e v^2 / 2]

(the ``r_e`` add up to the pooled gain when ``l2_regularization`` is 0;
``r_e`` is negative in an era the split hurts). Per unit hessian and
relative to the node, ``z_e = (r_e / H_e) / (gain / H)`` is scale-free, and
the criterion is::

    W_alpha(s) = gain(s) * B_alpha^H(z)

with ``B_alpha^H`` the Boltzmann operator weighted by the eras' hessians:
``alpha = 0`` gives the pooled gain (``original``), ``alpha = -inf`` gives
``H * min_e r_e / H_e`` (every row improving as little as in the worst
era), finite negative alphas a soft minimum. A candidate is eligible when
``W > 0`` and the pooled gain is positive; eras with fewer than two rows in
the node take no part (as in docs/criteria.md).

Squared error and the binary log loss; numeric features binned by
eraboost's ``BinMapper`` (no missing values); best-first trees bounded by
``max_leaf_nodes``, ``max_depth`` and a pooled ``min_samples_leaf``. Slow
(Python per node): a prototype to evaluate the idea, not a product.
"""

import numpy as np

from eraboost._engine.binning import BinMapper

__all__ = ["WorstEraBooster", "worst_era_scores"]


def _boltzmann_weighted(z, w, alpha):
    """Boltzmann operator of z (candidates x eras) with weights w (same
    shape, 0 where an era takes no part), along the eras."""
    if alpha == 0:
        return (z * w).sum(axis=1) / w.sum(axis=1)
    masked = np.where(w > 0, z, np.inf if alpha < 0 else -np.inf)
    c = masked.min(axis=1) if alpha < 0 else masked.max(axis=1)
    if np.isinf(alpha):
        return c
    e = np.where(w > 0, w * np.exp(alpha * (np.where(w > 0, z, 0.0) - c[:, None])), 0.0)
    return (z * e).sum(axis=1) / e.sum(axis=1)


def worst_era_scores(GLe, HLe, Ge, He, lam, alpha):
    """The criterion for K candidates of one node from per-era sums.

    Parameters
    ----------
    GLe, HLe : ndarray of shape (K, E)
        Left sums of gradients and hessians of each era for each candidate.
    Ge, He : ndarray of shape (E,)
        The eras' sums in the node.
    lam, alpha : float

    Returns
    -------
    gain, W : ndarray of shape (K,)
        The pooled gain (scikit-learn's convention) and ``W_alpha``.
    """
    G, H = Ge.sum(), He.sum()
    GL, HL = GLe.sum(axis=1), HLe.sum(axis=1)
    GR, HR = G - GL, H - HL
    v = -G / (H + lam)
    vL, vR = -GL / (HL + lam), -GR / (HR + lam)
    gain = GL**2 / (HL + lam) + GR**2 / (HR + lam) - G**2 / (H + lam)
    GRe, HRe = Ge - GLe, He - HLe
    r = -2.0 * (
        GLe * vL[:, None]
        + HLe * vL[:, None] ** 2 / 2
        + GRe * vR[:, None]
        + HRe * vR[:, None] ** 2 / 2
        - (Ge * v + He * v**2 / 2)[None, :]
    )
    w = np.broadcast_to(He, r.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(w > 0, (r / np.where(w > 0, w, 1.0)) / (gain / H)[:, None], 0.0)
        W = gain * _boltzmann_weighted(z, w, alpha)
    return gain, np.where(gain > 0, W, -np.inf)


class WorstEraBooster:
    """Gradient boosting with the worst-era criterion (``criterion="worst"``)
    or the pooled gain (``criterion="original"``), in NumPy.

    Parameters
    ----------
    loss : {"squared_error", "log_loss"}
    criterion : {"worst", "original"}
    alpha : float
        Boltzmann alpha of the worst-era criterion on ``z`` (0: original).
    max_iter, learning_rate, max_leaf_nodes, max_depth, min_samples_leaf,
    l2_regularization, max_bins : as eraboost's booster
    """

    def __init__(
        self,
        loss="squared_error",
        criterion="worst",
        alpha=-np.inf,
        max_iter=100,
        learning_rate=0.1,
        max_leaf_nodes=31,
        max_depth=None,
        min_samples_leaf=20,
        l2_regularization=0.0,
        max_bins=64,
    ):
        self.loss = loss
        self.criterion = criterion
        self.alpha = alpha
        self.max_iter = max_iter
        self.learning_rate = learning_rate
        self.max_leaf_nodes = max_leaf_nodes
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.l2_regularization = l2_regularization
        self.max_bins = max_bins

    # -- fitting -----------------------------------------------------------
    def fit(self, X, y, eras):
        self._bins = BinMapper(max_bins=self.max_bins, random_state=0)
        Xb = self._bins.fit_transform(np.asarray(X, dtype=np.float64))
        self._n_bins = int(self._bins.n_bins_non_missing_.max())
        _, codes = np.unique(eras, return_inverse=True)
        self._codes, self._E = codes, codes.max() + 1
        y = np.asarray(y, dtype=np.float64)
        if self.loss == "squared_error":
            self.baseline_ = y.mean()
        else:
            p = np.clip(y.mean(), 1e-12, 1 - 1e-12)
            self.baseline_ = np.log(p / (1 - p))
        raw = np.full(len(y), self.baseline_)
        self.trees_ = []
        for _ in range(self.max_iter):
            if self.loss == "squared_error":
                g, h = raw - y, np.ones_like(y)
            else:
                p = 1.0 / (1.0 + np.exp(-raw))
                g, h = p - y, p * (1.0 - p)
            tree = self._grow(Xb, g, h)
            self.trees_.append(tree)
            raw += self._apply(tree, Xb)
            if len(tree) == 1 and self.criterion == "worst":
                break  # no candidate: the fit ends, as eraboost's era criteria
        return self

    def _node_sums(self, Xb, g, h, rows):
        """Per-era sums of every (feature, bin) in the node: (F, E, B)."""
        F, E, B = Xb.shape[1], self._E, self._n_bins
        idx = (
            np.arange(F)[None, :] * (E * B)
            + self._codes[rows][:, None] * B
            + Xb[rows].astype(np.int64)
        ).ravel()
        size = F * E * B
        gs = np.bincount(idx, np.repeat(g[rows], F), size).reshape(F, E, B)
        hs = np.bincount(idx, np.repeat(h[rows], F), size).reshape(F, E, B)
        ns = np.bincount(idx, None, size).reshape(F, E, B)
        return gs, hs, ns

    def _best_split(self, Xb, g, h, rows):
        gs, hs, ns = self._node_sums(Xb, g, h, rows)
        _, E, B = gs.shape
        lam = self.l2_regularization
        Ge, He, Ne = gs[0].sum(axis=1), hs[0].sum(axis=1), ns[0].sum(axis=1)
        part = Ne >= 2  # eras with fewer rows take no part
        # left sums of every threshold b (left: bin <= b), candidates f, b
        GL = np.cumsum(gs, axis=2)[:, :, :-1].transpose(0, 2, 1).reshape(-1, E)
        HL = np.cumsum(hs, axis=2)[:, :, :-1].transpose(0, 2, 1).reshape(-1, E)
        NL = np.cumsum(ns, axis=2)[:, :, :-1].transpose(0, 2, 1).reshape(-1, E)
        nL, n = NL.sum(axis=1), len(rows)
        if self.criterion == "original":
            gain, score = worst_era_scores(GL, HL, Ge, He, lam, 0.0)
            score = gain
        else:
            gain, score = worst_era_scores(
                GL[:, part], HL[:, part], Ge[part], He[part], lam, self.alpha
            )
            if not part.any():
                score = np.full(len(gain), -np.inf)
        ok = (
            (nL >= self.min_samples_leaf)
            & (n - nL >= self.min_samples_leaf)
            & (HL.sum(axis=1) >= 1e-3)
            & (He.sum() - HL.sum(axis=1) >= 1e-3)
            & (gain > 0)
            & (score > 0)
        )
        if not ok.any():
            return None
        k = int(np.argmax(np.where(ok, score, -np.inf)))
        return score[k], k // (B - 1), k % (B - 1)

    def _grow(self, Xb, g, h):
        """Best first; a tree is a list of nodes [feature, bin, left, right,
        value] (feature -1 for a leaf)."""
        lam = self.l2_regularization
        nodes = [[-1, 0, -1, -1, 0.0]]
        rows_of = {0: np.arange(len(g))}
        depth = {0: 0}
        open_ = {}

        def consider(i):
            rows = rows_of[i]
            nodes[i][4] = -g[rows].sum() / (h[rows].sum() + lam) * self.learning_rate
            if len(rows) < 2 * self.min_samples_leaf:
                return
            if self.max_depth is not None and depth[i] >= self.max_depth:
                return
            best = self._best_split(Xb, g, h, rows)
            if best is not None:
                open_[i] = best

        consider(0)
        n_leaves = 1
        while open_ and (self.max_leaf_nodes is None or n_leaves < self.max_leaf_nodes):
            i = max(open_, key=lambda j: open_[j][0])
            _, f, b = open_.pop(i)
            rows = rows_of.pop(i)
            left = Xb[rows, f] <= b
            for side in (rows[left], rows[~left]):
                j = len(nodes)
                nodes.append([-1, 0, -1, -1, 0.0])
                rows_of[j], depth[j] = side, depth[i] + 1
            nodes[i][:4] = [f, b, len(nodes) - 2, len(nodes) - 1]
            n_leaves += 1
            consider(len(nodes) - 2)
            consider(len(nodes) - 1)
        return nodes

    # -- prediction --------------------------------------------------------
    def _apply(self, tree, Xb):
        out = np.empty(Xb.shape[0])
        stack = [(0, np.arange(Xb.shape[0]))]
        while stack:
            i, rows = stack.pop()
            f, b, left, right, value = tree[i]
            if f < 0:
                out[rows] = value
                continue
            go = Xb[rows, f] <= b
            stack.append((left, rows[go]))
            stack.append((right, rows[~go]))
        return out

    def decision_function(self, X):
        Xb = self._bins.transform(np.asarray(X, dtype=np.float64))
        raw = np.full(Xb.shape[0], self.baseline_)
        for tree in self.trees_:
            raw += self._apply(tree, Xb)
        return raw

    def predict(self, X):
        raw = self.decision_function(X)
        if self.loss == "squared_error":
            return raw
        return (raw > 0).astype(int)

    def predict_proba(self, X):
        p = 1.0 / (1.0 + np.exp(-self.decision_function(X)))
        return np.column_stack([1 - p, p])

    @property
    def n_iter_(self):
        return len(self.trees_)
