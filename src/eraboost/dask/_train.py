"""The driver's boosting loop: one tree at a time across the workers.

Best-first growth as the engine's ``TreeGrower`` grows (the same order of
operations and stopping rules, the open leaves ordered by the criterion's
score in the same heap), with each node's split chosen from the workers'
reduced sums (``_split``). The trees are flattened by the engine's own
``TreeGrower.make_predictor``.
"""

from heapq import heappop, heappush

import numpy as np

from .._engine.grower import TreeGrower
from ._categorical import CategoricalCandidates, NodeCategories
from ._split import (
    MIN_HESSIAN_TO_SPLIT,
    Split,
    best_split,
    combine,
    pooled_histograms,
)


class _Node:
    """A node during growth, with the fields ``make_predictor`` reads."""

    __slots__ = (
        "allowed",
        "cst_indices",
        "depth",
        "id",
        "is_leaf",
        "left_child",
        "lower",
        "n_samples",
        "reduced",
        "right_child",
        "split_info",
        "sum_gradients",
        "sum_hessians",
        "upper",
        "value",
    )

    def __init__(self, node_id, depth, n_samples, G, H, value):
        self.id = node_id
        self.depth = depth
        self.n_samples = n_samples
        self.sum_gradients = G
        self.sum_hessians = H
        self.value = value
        self.is_leaf = False
        self.split_info = None
        self.left_child = self.right_child = None
        self.reduced = None
        # the features the node may split on (None: the tree's), the
        # interaction groups its ancestors' features leave it, and its
        # children's value bounds (monotonic constraints): the grower's
        self.allowed = None
        self.cst_indices = None
        self.lower, self.upper = -np.inf, np.inf

    def __lt__(self, other):
        # the engine's order: the best criterion score pops first
        return self.split_info.priority > other.split_info.priority


class _Tree:
    """What ``TreeGrower.make_predictor`` reads of a grown tree."""

    def __init__(self, root, n_nodes, n_bins_non_missing):
        self.root = root
        self.n_nodes = n_nodes
        self.n_bins_non_missing = n_bins_non_missing


class WorkerLostError(RuntimeError):
    """A worker holding some of the fit's eras was lost during the fit."""


class Cluster:
    """The workers' shards (actors) and the bytes they sent."""

    def __init__(self, shards):
        self.shards = shards
        self.received = 0

    def call(self, method, *args):
        """``method`` on every shard at once; their results in order.

        A shard's worker lost (its actor unreachable) ends the fit with one
        line: the other workers and the client's data are left as they
        are, and the fit's actors are released by the caller.
        """
        return self.call_each(method, [args] * len(self.shards))

    def call_each(self, method, args):
        """``method`` on every shard at once, each with its own arguments."""
        try:
            futures = [getattr(s, method)(*a) for s, a in zip(self.shards, args)]
            return [f.result() for f in futures]
        except (OSError, RuntimeError, ValueError) as exc:
            # distributed says so with an OSError (the actor's worker cannot
            # be reached) or "Worker holding Actor was lost" (a RuntimeError;
            # a ValueError in older releases, 2024.1 among them)
            if not isinstance(exc, OSError) and "was lost" not in str(exc):
                raise
            raise WorkerLostError(
                f"a worker holding eras of this fit was lost ({exc}); the fit "
                "stopped. The client, its data and the other workers are "
                "unaffected: fit again."
            ) from None

    def reduce(self, parts, alpha):
        self.received += sum(a.nbytes for p in parts for a in p.values())
        return combine(parts, alpha)


class TreeBuilder:
    """Grows tree ``k`` of an iteration across the cluster.

    Parameters
    ----------
    cluster : Cluster
    settings : dict
        ``_split`` settings plus ``max_leaf_nodes``, ``max_depth``,
        ``min_samples_leaf`` and ``shrinkage``.
    cands : Candidates
    n_bins_non_missing, has_missing : ndarray
    feature_rng : numpy Generator or None, default=None
        ``max_features``'s stream (the single machine's).
    monotonic_cst : ndarray of int8 or None, default=None
        The features' monotonic constraints (the estimator's
        ``_check_constraints``).
    interaction_cst : list of sets or None, default=None
        The interaction groups (the estimator's ``_check_constraints``).
    is_categorical : ndarray of bool or None, default=None
        The categorical features (the first ones, as the estimator orders
        them).

    The constraints act as the grower's do: a node's children get value
    bounds from the mid-point of their values when the split's feature is
    constrained, the candidates whose bounded values go against their
    feature's constraint are not eligible, and a node may split only on
    the features of the interaction groups holding every feature its
    ancestors split on.
    """

    def __init__(
        self,
        cluster,
        settings,
        cands,
        n_bins_non_missing,
        has_missing,
        feature_rng=None,
        monotonic_cst=None,
        interaction_cst=None,
        is_categorical=None,
    ):
        self.cluster = cluster
        self.feature_rng = feature_rng
        self.settings = settings
        self.cands = cands
        self.n_bins_non_missing = n_bins_non_missing
        self.has_missing = has_missing
        self.monotonic_cst = (
            monotonic_cst
            if monotonic_cst is not None and np.any(monotonic_cst != 0)
            else None
        )
        self.interaction_cst = interaction_cst
        self.is_categorical = (
            is_categorical
            if is_categorical is not None and np.any(is_categorical)
            else None
        )

    def _sampled(self, node):
        """The features a node may split on: the tree's, then, with
        ``max_features``, a draw of them for the node (the grower's
        ``_sampled_mask``, from the same stream in the same order)."""
        allowed = self.tree_features if node.allowed is None else node.allowed
        fraction = self.settings["max_features"]
        if fraction >= 1.0:
            return allowed
        n_allowed = allowed.shape[0]
        mask = np.full(n_allowed, False)
        mask[: max(1, int(np.ceil(fraction * n_allowed)))] = True
        self.feature_rng.shuffle(mask)
        return allowed[mask]

    def _find_all(self, nodes):
        """Choose the splits of ``nodes`` (their sums reduced), in order:
        the features each may split on, drawn in the grower's order, then
        their categorical candidates (under the era criteria, one more
        call to the workers for all of them), then each choice."""
        masks = []
        for node in nodes:
            features = np.zeros(self.n_bins_non_missing.shape[0], dtype=bool)
            features[self._sampled(node)] = True
            masks.append(features)
        categories = [None] * len(nodes)
        if self.is_categorical is not None:
            categories = self._categories(nodes, masks)
        for node, features, cats in zip(nodes, masks, categories):
            self._find(node, features, cats)

    def _categories(self, nodes, masks):
        """Each node's ``NodeCategories`` (None where no categorical
        feature has two categories that take part): the orders of its
        categorical features from its pooled sums and, under the era
        criteria, the workers' era sums of those candidates."""
        found = []
        for node, features in zip(nodes, masks):
            cands = CategoricalCandidates.of(
                pooled_histograms(node.reduced, self.cands),
                np.flatnonzero(self.is_categorical & features),
                self.n_bins_non_missing,
                self.has_missing,
                (node.n_samples, node.sum_gradients, node.sum_hessians),
            )
            found.append(cands if cands.size else None)
        asked = [(node.id, c.orders) for node, c in zip(nodes, found) if c]
        reduced = {}
        if asked and self.settings["era_path"]:
            parts = self.cluster.call("categorical", asked)
            for j, (node_id, _) in enumerate(asked):
                reduced[node_id] = self.cluster.reduce(
                    [p[j] for p in parts], self.settings["alpha"]
                )
        return [
            None
            if c is None
            else NodeCategories(c, reduced.get(node.id), self.n_bins_non_missing)
            for node, c in zip(nodes, found)
        ]

    def _find(self, node, features, categories=None):
        node.split_info = best_split(
            node.reduced,
            self.cands,
            self.n_bins_non_missing,
            (node.n_samples, node.sum_gradients, node.sum_hessians),
            self.settings,
            features,
            value=node.value,
            bounds=(node.lower, node.upper),
            monotonic_cst=self.monotonic_cst,
            categorical=categories,
        )
        node.reduced = None
        if not node.split_info.found:
            self._leaf(node)
        else:
            heappush(self.open, node)

    def _interactions(self, node):
        """The features the children of ``node`` may split on, within the
        tree's, and the groups left to them: those holding the split's
        feature (the grower's ``_compute_interactions``, in its order)."""
        allowed, indices = set(), []
        for i in node.cst_indices:
            if node.split_info.feature_idx in self.interaction_cst[i]:
                indices.append(i)
                allowed.update(self.interaction_cst[i])
        allowed = np.fromiter(allowed, dtype=np.uint32, count=len(allowed))
        if self.drawn is not None:
            allowed = np.intersect1d(allowed, self.drawn).astype(np.uint32)
        return allowed, indices

    def _bound_children(self, node, left, right):
        """The children's value bounds: the node's, cut at the mid-point
        of their values when the split's feature is constrained (the
        grower's rule)."""
        cst = self.monotonic_cst[node.split_info.feature_idx]
        lo, hi = node.lower, node.upper
        if cst == 0:
            bounds = ((lo, hi), (lo, hi))
        else:
            mid = (left.value + right.value) / 2
            bounds = ((lo, mid), (mid, hi)) if cst == 1 else ((mid, hi), (lo, mid))
        (left.lower, left.upper), (right.lower, right.upper) = bounds

    def _leaf(self, node):
        node.is_leaf = True
        self.leaves.append(node)

    def grow(self, k, tree_features=None, in_bag=None):
        """Grow the tree on the features ``tree_features`` (None: all) and
        the rows of ``in_bag`` (one mask per shard, or None: all); returns
        ``(tree, leaves)``."""
        s = self.settings
        self.open, self.leaves, self.n_nodes = [], [], 1
        n_features = self.n_bins_non_missing.shape[0]
        self.tree_features = (
            np.arange(n_features) if tree_features is None else tree_features
        )
        self.drawn = tree_features
        if in_bag is None:
            parts = self.cluster.call("root", k)
        else:
            parts = self.cluster.call_each("root", [(k, m) for m in in_bag])
        reduced = self.cluster.reduce(parts, s["alpha"])
        # the root's sums: feature 0's cells
        first = self.cands.cells[0].sum()
        n = int(reduced["pooled_n"][:first].sum())
        G = float(reduced["pooled_g"][:first].sum())
        H = float(n if "pooled_h" not in reduced else reduced["pooled_h"][:first].sum())
        root = _Node(0, 0, n, G, H, 0)
        root.reduced = reduced
        if self.interaction_cst is not None:
            # the grower's root: the union of the groups (in its order),
            # within the tree's features
            allowed = set().union(*self.interaction_cst)
            root.allowed = np.fromiter(allowed, dtype=np.uint32, count=len(allowed))
            if tree_features is not None:
                root.allowed = np.intersect1d(root.allowed, tree_features).astype(
                    np.uint32
                )
            root.cst_indices = range(len(self.interaction_cst))
        msl = s["min_samples_leaf"]
        if n < 2 * msl or H < MIN_HESSIAN_TO_SPLIT:
            self._leaf(root)
        else:
            self._find_all([root])
        while self.open:
            self._split_next(k)
        for leaf in self.leaves:
            leaf.value *= s["shrinkage"]
        return _Tree(root, self.n_nodes, self.n_bins_non_missing), self.leaves

    def _split_next(self, k):
        s = self.settings
        node = heappop(self.open)
        info = node.split_info
        depth = node.depth + 1
        n_leaf_nodes = len(self.leaves) + len(self.open) + 2
        left = _Node(
            self.n_nodes,
            depth,
            info.n_samples_left,
            info.sum_gradient_left,
            info.sum_hessian_left,
            info.value_left,
        )
        right = _Node(
            self.n_nodes + 1,
            depth,
            info.n_samples_right,
            info.sum_gradient_right,
            info.sum_hessian_right,
            info.value_right,
        )
        self.n_nodes += 2
        node.left_child, node.right_child = left, right
        if self.interaction_cst is not None:
            left.allowed, left.cst_indices = self._interactions(node)
            right.allowed, right.cst_indices = left.allowed, left.cst_indices
        else:
            left.allowed = right.allowed = node.allowed
        if self.monotonic_cst is not None:
            self._bound_children(node, left, right)
        if not self.has_missing[info.feature_idx]:
            info.missing_go_to_left = left.n_samples > right.n_samples
        last = s["max_leaf_nodes"] is not None and n_leaf_nodes == s["max_leaf_nodes"]
        deepest = s["max_depth"] is not None and depth == s["max_depth"]
        scan = [False, False]
        if not (last or deepest):
            msl = s["min_samples_leaf"]
            scan = [left.n_samples >= 2 * msl, right.n_samples >= 2 * msl]
        parts = self.cluster.call(
            "split",
            k,
            node.id,
            info.feature_idx,
            info.bin_idx,
            info.missing_go_to_left,
            (left.id, right.id),
            scan,
            # the pooled row counts: each shard subtracts the child the
            # single machine subtracts
            (left.n_samples, right.n_samples),
            info.left_cat_bitset if info.is_categorical else None,
        )
        for j, child in enumerate((left, right)):
            if scan[j]:
                child.reduced = self.cluster.reduce([p[j] for p in parts], s["alpha"])
            else:
                self._leaf(child)
        if last:
            while self.open:
                self._leaf(self.open.pop())
            return
        self._find_all([c for c, go in zip((left, right), scan) if go])


def boost(
    cluster,
    local,
    builder,
    max_iter,
    stop_when_stalled,
    sampler,
    shard_rows,
    early_stopping=None,
):
    """The boosting rounds; extends ``local._predictors`` (a warm start's
    iterations first) up to ``max_iter`` iterations.

    ``sampler`` is the single machine's ``TreeSampler`` (its stream, drawn
    here in its order); ``shard_rows`` each shard's row numbers in the
    training rows, to hand each shard its part of a row draw (None when no
    rows are drawn); ``early_stopping`` an ``_validation.EarlyStopping``
    (None: off), scored after each iteration as the single machine scores.
    Returns the bytes the driver received for each tree.
    """
    K = local.n_trees_per_iteration_
    mapper = local._bin_mapper
    received = []
    for _ in range(len(local._predictors), max_iter):
        cluster.call("update_gradients")
        mask = sampler.iteration_rows()
        in_bag = None if mask is None else [mask[rows] for rows in shard_rows]
        local._predictors.append([])
        n_split = 0
        for k in range(K):
            before = cluster.received
            tree, leaves = builder.grow(k, sampler.tree_features(), in_bag)
            received.append(cluster.received - before)
            n_split += tree.n_nodes > 1
            predictor = TreeGrower.make_predictor(tree, mapper.bin_thresholds_)
            local._predictors[-1].append(predictor)
            values = {leaf.id: leaf.value for leaf in leaves}
            if in_bag is None:
                cluster.call("add_leaves", k, values)
            else:
                cluster.call("add_leaves", k, values, predictor, mapper.missing_bin_)
        if early_stopping is not None and early_stopping.step(local._predictors[-1]):
            break
        if stop_when_stalled and n_split == 0:
            break
    return np.asarray(received, dtype=np.int64)


__all__ = ["Cluster", "Split", "TreeBuilder", "WorkerLostError", "boost"]
