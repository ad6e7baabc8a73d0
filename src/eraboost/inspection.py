"""Looking inside fitted era-aware boosters and invariant forests: which
features their splits use.

- :func:`feature_importances`: the pooled split gain per feature, summed
  over all trees and normalised to sum 1 (the boosters'
  ``feature_importances_``; with ``per_tree=True``, the forests').
- :func:`split_counts`, :func:`split_feature_shares`: how many splits use
  each feature.
- :func:`split_frequency_importances`: the Invariant Random Forest paper's
  split frequency (the forests' ``split_frequency_importances_``).
- :func:`era_importances`: how much each feature's splits improve each era
  (each era's share of the pooled gain), recomputed on the data given
  (boosters only).

Every function reports features in the columns of ``X`` as passed to
``fit`` (categorical columns, which the engine moves first, are mapped back).
"""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._categorical import internal_order
from ._engine._common import NODE_DTYPE
from ._engine.predictor import TreePredictor, TreeStages
from ._eras import check_eras
from ._model_checks import concatenated_nodes

__all__ = [
    "era_importances",
    "feature_importances",
    "split_counts",
    "split_feature_shares",
    "split_frequency_importances",
]


def _user_columns(estimator):
    """User column index of each engine feature."""
    is_cat = getattr(estimator, "is_categorical_", None)
    if is_cat is None:
        return np.arange(estimator.n_features_in_)
    return internal_order(is_cat)


def _trees(estimator):
    """The predictor of every tree: a booster's iteration by iteration
    (class by class within one), a forest's in ``estimators_`` order."""
    if hasattr(estimator, "n_estimators"):  # an invariant forest
        check_is_fitted(estimator, "estimators_")
        yield from estimator.estimators_
        return
    check_is_fitted(estimator, "_predictors")
    for iteration in estimator._predictors:
        yield from iteration


def _joined_trees(estimator):
    """The nodes of all trees, joined, the nodes of each tree and the tree
    of each node (from the joined arrays of a model read from a file: no
    Python object per tree)."""
    forest = hasattr(estimator, "n_estimators")
    trees = getattr(estimator, "estimators_" if forest else "_predictors", None)
    joined = trees.joined() if type(trees) is TreeStages else None
    if joined is not None:
        nodes, counts = joined[:2]
    else:
        arrays = [tree.nodes for tree in _trees(estimator)]
        if not arrays:
            return np.zeros(0, NODE_DTYPE), np.zeros(0, np.intp), np.zeros(0, np.intp)
        nodes = concatenated_nodes(arrays)
        counts = np.fromiter((a.shape[0] for a in arrays), np.intp, len(arrays))
    return nodes, counts, np.repeat(np.arange(counts.size), counts)


def _split_table(estimator):
    """Engine features and pooled gains of all split nodes."""
    nodes = _joined_trees(estimator)[0]
    split = nodes[nodes["is_leaf"] == 0]
    return split["feature"], split["gain"]


def _per_user_column(estimator, features, weights):
    """Sum ``weights`` by user column of the engine ``features``."""
    totals = np.zeros(estimator.n_features_in_)
    np.add.at(totals, _user_columns(estimator)[features], weights)
    return totals


def _normalise(totals):
    total = totals.sum()
    return totals / total if total > 0 else totals


def feature_importances(estimator, per_tree=False):
    """Pooled split gain per feature, summed over all trees, summing to 1.

    The gain of a split is the pooled gain the splitter computed for it
    (scikit-learn's formula, stored in each split node), whatever the
    ``split_type`` that chose it; a split's negative pooled gain (possible
    under the era criteria with ``l2_regularization > 0``) counts as 0.
    With several trees per iteration (multiclass), every class's trees
    count. The importances sum to 1, so ``SelectFromModel`` works on the
    boosters.

    Parameters
    ----------
    estimator : fitted eraboost gradient boosting estimator or invariant forest
    per_tree : bool, default=False
        False: the gains of all trees are summed together (the boosters'
        ``feature_importances_``). True: each tree's gains are first
        normalised to sum 1 (a tree without splits adds nothing), so that
        every tree weighs the same (scikit-learn's random forests'
        convention, the invariant forests' ``feature_importances_``).

    Returns
    -------
    importances : ndarray of shape (n_features_in_,)
        Non-negative, summing to 1; all zeros when no tree has a split
        (scikit-learn's forests' rule).
    """
    if not per_tree:
        features, gains = _split_table(estimator)
        return _normalise(_per_user_column(estimator, features, np.maximum(gains, 0.0)))
    # each tree's gains divided by their sum, for all trees at once
    nodes, _, tree_of = _joined_trees(estimator)
    split = nodes["is_leaf"] == 0
    gains = np.maximum(nodes["gain"][split], 0.0)
    tree_of = tree_of[split]
    sums = np.bincount(tree_of, weights=gains)
    shares = gains / np.where(sums > 0, sums, 1.0)[tree_of]
    return _normalise(_per_user_column(estimator, nodes["feature"][split], shares))


def split_counts(estimator):
    """Number of split nodes on each feature, over all trees.

    Parameters
    ----------
    estimator : fitted eraboost gradient boosting estimator or invariant forest

    Returns
    -------
    counts : ndarray of int64, shape (n_features_in_,)
    """
    features, _ = _split_table(estimator)
    return _per_user_column(estimator, features, 1.0).astype(np.int64)


def _frequency_totals(estimator):
    """Split frequencies summed over the trees, and the number of trees."""
    nodes, counts, tree_of = _joined_trees(estimator)
    roots = np.cumsum(counts) - counts
    split = nodes["is_leaf"] == 0
    shares = nodes["count"][split] / nodes["count"][roots][tree_of[split]]
    return _per_user_column(estimator, nodes["feature"][split], shares), counts.size


def split_feature_shares(estimator, weighted=False):
    """Share of the splits of a fitted booster made on each feature.

    Parameters
    ----------
    estimator : fitted eraboost gradient boosting estimator or invariant forest
    weighted : bool, default=False
        False: each split node counts once. True: each split node counts
        its share of the training rows, ``n_m / n`` (the split-frequency
        importance of the Invariant Random Forest paper, section 5.2).

    Returns
    -------
    shares : ndarray of shape (n_features_in_,)
        Non-negative, summing to 1 (all zeros when no tree has a split).
    """
    if not weighted:
        return _normalise(split_counts(estimator).astype(np.float64))
    return _normalise(_frequency_totals(estimator)[0])


def split_frequency_importances(estimator):
    """The Invariant Random Forest paper's split frequency (section 5.2).

    Per tree, the sum of ``n_m / n`` over the split nodes on each feature
    (``n_m`` the node's distinct rows, ``n`` the root's), averaged over the
    trees: the invariant forests' ``split_frequency_importances_``. Not
    normalised (:func:`split_feature_shares` with ``weighted=True`` is):
    a feature split on at every level of a tree of depth ``D`` scores about
    ``D``.

    Parameters
    ----------
    estimator : fitted eraboost gradient boosting estimator or invariant forest

    Returns
    -------
    frequencies : ndarray of shape (n_features_in_,)
    """
    totals, n_trees = _frequency_totals(estimator)
    return totals / n_trees


def _newton(G, H, lam):
    """``-G / (H + lam)``, 0 where ``H + lam == 0``."""
    d = H + lam
    return np.where(d == 0, 0.0, -G / np.where(d == 0, 1.0, d))


def _node_sums(nodes, leaf, codes, n_eras, g, h):
    """Per-era sums of g and h in every node: (n_nodes, n_eras) each."""
    n_nodes = nodes.shape[0]
    cell = leaf * n_eras + codes
    size = n_nodes * n_eras
    sums = [
        np.bincount(cell, weights=w, minlength=size).reshape(n_nodes, n_eras)
        for w in (g, h)
    ]
    internal = np.flatnonzero(nodes["is_leaf"] == 0)
    depth = nodes["depth"][internal]
    # children first: a node's sums are its children's
    for d in np.unique(depth)[::-1]:
        at = internal[depth == d]
        left, right = nodes["left"][at], nodes["right"][at]
        for s in sums:
            s[at] = s[left] + s[right]
    return sums


def era_importances(estimator, X, y, eras, *, sample_weight=None, return_eras=False):
    """How much each feature's splits improve each era, on the data given.

    Every split gives its two sides their own value instead of the node's.
    For every split node of every tree and every era ``e``, the improvement
    of era ``e``'s second-order loss by that change::

        I_e = -sum over the sides s = L, R of
              (2 G_se (v_s - v_node) + H_se (v_s - v_node)^2)

    where ``G_se`` and ``H_se`` are the sums of the loss gradients and
    hessians of era ``e``'s rows reaching side ``s`` (per-era sums, as the
    fit's histograms hold them), taken at the raw predictions of the trees
    before this one, and ``v = -G / (H + lam)`` are the Newton values of the
    pooled sums of the data given (``lam`` is ``l2_regularization``). With
    ``lam = 0`` the improvements of all eras add up to the split's pooled
    gain ``G_L^2/H_L + G_R^2/H_R - G^2/H``: each era's share of the gain.
    An era in which the split moves values against its own gradients gets a
    negative share. The shares of the splits on each feature are summed over
    all trees. On the training rows the values are the fit's (without
    monotonic bounds); on held-out eras they show which features the new
    eras agree with.

    Parameters
    ----------
    estimator : fitted eraboost gradient boosting estimator
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
        Targets (class labels for a classifier; they must be among
        ``classes_``).
    eras : array-like of shape (n_samples,)
        Era label of each row.
    sample_weight : array-like of shape (n_samples,), default=None
        Row weights, which scale the gradients and hessians as in ``fit``
        (a classifier's ``class_weight`` applies too, computed on ``y``).
    return_eras : bool, default=False
        Also return the era labels.

    Returns
    -------
    eras : ndarray of shape (n_eras,)
        The distinct era labels in their natural order, as
        :func:`eraboost.era_scores` gives them (only with ``return_eras=True``).
    importances : ndarray of shape (n_eras, n_features_in_)
        Row ``i`` holds era ``eras[i]``'s improvements, in the units of the
        gains; summed over eras (``lam = 0``), the pooled gains of each
        feature's splits on these data.

    Examples
    --------
    >>> import numpy as np
    >>> from eraboost import HistGradientBoostingRegressor
    >>> from eraboost.inspection import era_importances
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(2000, 3))
    >>> eras = np.repeat(np.arange(4), 500)
    >>> y = X[:, 0] * (eras < 2) + X[:, 1] + 0.1 * rng.normal(size=2000)
    >>> est = HistGradientBoostingRegressor(max_iter=20).fit(X, y)
    >>> imp = era_importances(est, X, y, eras)
    >>> imp.shape
    (4, 3)
    >>> bool(imp[0, 0] > 0 > imp[3, 0])  # feature 0 works in eras 0 and 1 only
    True
    """
    check_is_fitted(estimator, "_predictors")
    X = estimator._check_X(X, reset=False)
    n = X.shape[0]
    y = estimator._encode_y_val(estimator._check_y(y))
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} rows but X has {n}.")
    codes, labels = check_eras(eras, n)
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight, dtype=np.float64)
        if sample_weight.shape != (n,):
            raise ValueError(
                f"sample_weight must have shape ({n},); got {sample_weight.shape}."
            )
    sample_weight = estimator._finalize_sample_weight(sample_weight, y)
    loss = estimator._loss
    lam = float(estimator.l2_regularization)
    K = estimator.n_trees_per_iteration_
    n_eras = labels.size
    importances = np.zeros((estimator.n_features_in_, n_eras))
    columns = _user_columns(estimator)
    raw = estimator._baseline_raw(n)
    # full-size hessians even for losses whose hessians are constant
    gradient = np.empty((n, K) if K > 1 else n, dtype=np.float64, order="F")
    hessian = np.empty_like(gradient)
    g_view = gradient.reshape((n, -1))
    h_view = hessian.reshape((n, -1))
    for iteration in estimator._predictors:
        loss.gradient_hessian(
            y_true=y,
            raw_prediction=raw,
            sample_weight=sample_weight,
            gradient_out=gradient,
            hessian_out=hessian,
        )
        for k, predictor in enumerate(iteration):
            nodes = predictor.nodes
            # a copy whose leaves predict their own index: the leaf of each row
            numbered = nodes.copy()
            numbered["value"] = np.arange(nodes.shape[0])
            leaf = TreePredictor(
                numbered,
                predictor.binned_left_cat_bitsets,
                predictor.raw_left_cat_bitsets,
            ).predict(X)
            leaf = leaf.astype(np.intp)
            raw[:, k] += nodes["value"][leaf]
            split = np.flatnonzero(nodes["is_leaf"] == 0)
            if split.size == 0:
                continue
            G, H = _node_sums(nodes, leaf, codes, n_eras, g_view[:, k], h_view[:, k])
            # the values the pooled sums give each node (Newton steps)
            value = _newton(G.sum(axis=1), H.sum(axis=1), lam)[:, None]
            gains = np.zeros((split.size, n_eras))
            for child in (nodes["left"][split], nodes["right"][split]):
                step = value[child] - value[split]
                gains -= 2 * G[child] * step + H[child] * step * step
            np.add.at(importances, columns[nodes["feature"][split]], gains)
    importances = np.ascontiguousarray(importances.T)
    return (labels, importances) if return_eras else importances
