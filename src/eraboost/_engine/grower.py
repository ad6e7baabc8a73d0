"""Best-first growth of one tree on per-era histograms.

The grower knows nothing of the criteria: it asks the splitter for each
node's best split and orders the open leaves by ``split_info.priority``
(the criterion's own score). Structure, order of operations and stopping
rules follow scikit-learn's ``TreeGrower`` so that ``split_type="original"``
grows the very same trees.
"""

from bisect import bisect_left, bisect_right, insort
from heapq import heappop, heappush
from time import perf_counter

import numpy as np

from ._common import BITSET_DTYPE, MIN_HESSIAN_TO_SPLIT, NODE_DTYPE
from ._partition import split_indices, split_indices_categorical
from ._splitting import SplitNode


class TreeNode:
    """A node during growth (not used for prediction)."""

    __slots__ = (
        "allowed_features",
        "children_lower_bound",
        "children_upper_bound",
        "depth",
        "histograms",
        "interaction_cst_indices",
        "is_leaf",
        "kept_key",
        "left_child",
        "n_samples",
        "right_child",
        "sample_indices",
        "split_info",
        "sum_gradients",
        "sum_hessians",
        "value",
    )

    def __init__(self, depth, sample_indices, sum_gradients, sum_hessians, value=None):
        self.depth = depth
        self.sample_indices = sample_indices
        self.n_samples = sample_indices.shape[0]
        self.sum_gradients = sum_gradients
        self.sum_hessians = sum_hessians
        self.value = value
        self.is_leaf = False
        self.split_info = None
        self.left_child = None
        self.right_child = None
        self.histograms = None
        self.kept_key = None
        self.allowed_features = None
        self.interaction_cst_indices = None
        self.children_lower_bound = -np.inf
        self.children_upper_bound = np.inf

    def __lt__(self, other):
        # heapq pops the smallest: the node with the best criterion score
        return self.split_info.priority > other.split_info.priority


class TreeGrower:
    """Grows one tree on the parts of a fit's engine.

    The binned rows (and their copy by columns), the histogram builder, the
    splitter, the bins, the growth limits (``max_leaf_nodes``,
    ``max_depth``, ``depth_first``), the pooled ``min_samples_leaf``,
    ``monotonic_cst`` and the thread count come from ``engine``; the other
    parameters are this tree's.

    Parameters
    ----------
    engine : Engine
        From ``engine.build_engine``.
    root_indices : ndarray of uint32
        The tree's rows, grouped by era when eras are kept apart (owned by
        the grower, which reorders them).
    root_is_identity : bool, default=False
        ``root_indices`` is ``0 .. n-1``.
    interaction_cst : list of sets or None, default=None
    feature_fraction_per_split : float, default=1.0
    rng : numpy Generator or None, default=None
        Feature subsampling.
    shrinkage : float, default=1.0
    tree_features : ndarray of uint32 or None, default=None
        The features the tree may split on (None: all).
    buffer : ndarray of uint32 or None, default=None
        Scratch of the partition, as long as ``root_indices`` (None: a new
        one). A fit's trees can share one: a tree's rows are used before
        the next tree is grown.

    Attributes
    ----------
    engine : Engine
    root : TreeNode
    finalized_leaves : list of TreeNode
    n_nodes : int

    Notes
    -----
    Depth-first growth (``depth_first``, the forests') splits the newest
    splittable node next (a stack) instead of the best one (a heap).
    Without ``max_leaf_nodes`` the tree is the same either way; depth first
    keeps only about ``depth`` histograms alive, which is what deep forest
    trees need.
    """

    def __init__(
        self,
        engine,
        root_indices,
        root_is_identity=False,
        *,
        interaction_cst=None,
        feature_fraction_per_split=1.0,
        rng=None,
        shrinkage=1.0,
        tree_features=None,
        buffer=None,
    ):
        settings = engine.settings
        self.engine = engine
        self.X_binned = engine.X_binned
        if engine.X_columns.shape != self.X_binned.shape:
            raise ValueError(
                f"X_columns: shape {engine.X_columns.shape}, X_binned's is "
                f"{self.X_binned.shape}"
            )
        self.X_columns = engine.X_columns
        self.builder = engine.builder
        self.splitter = engine.splitter
        self.partition = root_indices
        self.root_is_identity = root_is_identity
        if buffer is None:
            buffer = np.empty_like(root_indices)
        elif buffer.shape != root_indices.shape or buffer.dtype != np.uint32:
            raise ValueError(
                f"buffer: {buffer.shape[0]} uint32 rows expected as root_indices "
                f"({root_indices.shape[0]})"
            )
        self.buffer = buffer
        self.n_bins_non_missing = engine.bin_mapper.n_bins_non_missing_
        self.has_missing_values = engine.has_missing
        self.max_bins = engine.bin_mapper.max_bins
        self.max_leaf_nodes = settings.max_leaf_nodes
        self.max_depth = settings.max_depth
        self.min_samples_leaf = engine.min_samples_leaf
        self.min_hessian_to_split = MIN_HESSIAN_TO_SPLIT
        self.n_features = self.X_binned.shape[1]
        monotonic_cst = engine.monotonic_cst
        self.monotonic_cst = monotonic_cst
        self.with_monotonic_cst = monotonic_cst is not None and np.any(
            monotonic_cst != 0
        )
        self.interaction_cst = interaction_cst
        self.feature_fraction_per_split = feature_fraction_per_split
        self.rng = rng
        self.shrinkage = shrinkage
        self.n_threads = engine.n_threads
        if settings.depth_first and self.max_leaf_nodes is not None:
            raise ValueError("depth_first growth needs max_leaf_nodes=None")
        self.depth_first = settings.depth_first
        self.all_features = np.arange(self.n_features, dtype=np.uint32)
        self.tree_features = tree_features
        self._all_sampled = np.ones(self.n_features, dtype=np.uint8)
        self.splittable_nodes = []
        self.finalized_leaves = []
        # the open leaves still holding a histogram, worst first
        # (_release_hopeless); with max_leaf_nodes in best-first growth
        self._kept = []
        self._n_pushed = 0
        self._bound_kept = self.max_leaf_nodes is not None and not self.depth_first
        self.n_nodes = 1
        self.total_find_split_time = 0.0
        self.total_compute_hist_time = 0.0
        self.total_apply_split_time = 0.0
        self._initialize_root()

    # -- growth ------------------------------------------------------------
    def grow(self):
        while self.splittable_nodes:
            self.split_next()
        for leaf in self.finalized_leaves:
            leaf.value *= self.shrinkage

    def _features(self, node):
        return (
            self.all_features
            if node.allowed_features is None
            else node.allowed_features
        )

    def _build(self, node, root=False, dense=False):
        """The node's histograms from its rows (``HistogramBuilder.build``;
        ``dense``: one that can be subtracted)."""
        tic = perf_counter()
        hist = self.builder.build(
            node.sample_indices, self._features(node), root=root, dense=dense
        )
        self.total_compute_hist_time += perf_counter() - tic
        return hist

    def _initialize_root(self):
        if self.interaction_cst is not None:
            allowed = set().union(*self.interaction_cst)
            allowed = np.fromiter(allowed, dtype=np.uint32, count=len(allowed))
            some_feature = int(allowed[0])
        else:
            allowed = None
            some_feature = 0
        if self.tree_features is not None:
            allowed = (
                self.tree_features
                if allowed is None
                else np.intersect1d(allowed, self.tree_features).astype(np.uint32)
            )
            some_feature = int(allowed[0])
        n = self.partition.shape[0]
        root = TreeNode(0, self.partition, 0.0, 0.0, value=0)
        root.allowed_features = allowed
        self.root = root
        root.histograms = self._build(root, root=self.root_is_identity)
        root.sum_gradients, root.sum_hessians = self.builder.root_sums(
            root.histograms,
            some_feature,
            n,
            self.max_bins,
            bool(self.has_missing_values[some_feature]),
        )
        if (
            n < 2 * self.min_samples_leaf
            or root.sum_hessians < self.min_hessian_to_split
        ):
            self._finalize_leaf(root)
            return
        if self.interaction_cst is not None:
            root.interaction_cst_indices = range(len(self.interaction_cst))
        tic = perf_counter()
        self._compute_best_splits_and_push([root])
        self._release_hopeless()
        self.total_find_split_time += perf_counter() - tic

    def _sampled_mask(self, n_allowed):
        if self.feature_fraction_per_split < 1.0:
            n_sub = max(1, int(np.ceil(self.feature_fraction_per_split * n_allowed)))
            mask = np.full(n_allowed, False)
            mask[:n_sub] = True
            self.rng.shuffle(mask)
            return mask.view(np.uint8)
        if self._all_sampled.shape[0] != n_allowed:
            self._all_sampled = np.ones(n_allowed, dtype=np.uint8)
        return self._all_sampled

    def _compute_best_splits_and_push(self, nodes, subtract=None):
        """The best split of each node, in one parallel loop of the
        splitter (``subtract`` as in ``Splitter.find_node_splits``); then,
        in order, the nodes with a split are queued and the others become
        leaves. The nodes share their features (siblings)."""
        features = self._features(nodes[0])
        infos = self.splitter.find_node_splits(
            [
                SplitNode(
                    n_samples=node.n_samples,
                    histogram=node.histograms,
                    sum_gradients=node.sum_gradients,
                    sum_hessians=node.sum_hessians,
                    value=node.value,
                    lower_bound=node.children_lower_bound,
                    upper_bound=node.children_upper_bound,
                    sampled=self._sampled_mask(features.shape[0]),
                )
                for node in nodes
            ],
            features,
            subtract,
        )
        for node, info in zip(nodes, infos):
            if not self.builder.subtractable(node.n_samples):
                # its children are built from their rows
                self._release(node)
            node.split_info = info
            if not info.found:
                self._finalize_leaf(node)
            elif self.depth_first:
                self.splittable_nodes.append(node)
            else:
                heappush(self.splittable_nodes, node)
                if self._bound_kept:
                    self._n_pushed += 1
                    node.kept_key = (info.priority, self._n_pushed)
                    insort(self._kept, (*node.kept_key, node))

    def _release_hopeless(self):
        """Free the histograms of the open leaves that will never be split.

        A leaf's histogram serves only the subtraction when it is split,
        and the split that takes the tree to ``max_leaf_nodes`` leaves makes
        no histogram. With ``r`` splits left, only the next ``r - 1`` leaves
        popped need theirs, and the heap pops every leaf with a strictly
        better priority before a leaf: a leaf behind ``r - 1`` strictly
        better ones never uses its histogram again. Freeing it changes no
        result, and keeps about half of the open leaves' histograms alive
        at once instead of all of them."""
        if not self._bound_kept:
            return
        kept = self._kept
        leaves = len(self.finalized_leaves) + len(self.splittable_nodes)
        r = self.max_leaf_nodes - leaves
        while kept:
            # kept[0] is the worst leaf; those tied with it share its fate
            ties = bisect_right(kept, (kept[0][0], np.inf))
            if len(kept) - ties < r - 1:
                break
            for *_, node in kept[:ties]:
                self._release(node)
                node.kept_key = None
            del kept[:ties]

    def split_next(self):
        """Split the best open leaf; returns its two children."""
        children = self._split_next()
        self._release_hopeless()
        return children

    def _split_next(self):
        node = (
            self.splittable_nodes.pop()
            if self.depth_first
            else heappop(self.splittable_nodes)
        )
        if node.kept_key is not None:
            del self._kept[bisect_left(self._kept, node.kept_key)]
            node.kept_key = None
        info = node.split_info
        tic = perf_counter()
        if info.is_categorical:
            n_left = split_indices_categorical(
                self.X_columns,
                info.feature_idx,
                info.left_cat_bitset,
                node.sample_indices,
                self.buffer[: node.n_samples],
                self.n_threads,
            )
        else:
            n_left = split_indices(
                self.X_columns,
                info.feature_idx,
                info.bin_idx,
                info.missing_go_to_left,
                self.n_bins_non_missing[info.feature_idx],
                node.sample_indices,
                self.buffer[: node.n_samples],
                self.n_threads,
            )
        self.total_apply_split_time += perf_counter() - tic
        depth = node.depth + 1
        n_leaf_nodes = len(self.finalized_leaves) + len(self.splittable_nodes) + 2
        left = TreeNode(
            depth,
            node.sample_indices[:n_left],
            info.sum_gradient_left,
            info.sum_hessian_left,
            info.value_left,
        )
        right = TreeNode(
            depth,
            node.sample_indices[n_left:],
            info.sum_gradient_right,
            info.sum_hessian_right,
            info.value_right,
        )
        node.left_child, node.right_child = left, right
        if self.interaction_cst is not None:
            allowed, indices = self._compute_interactions(node)
            if self.tree_features is not None:
                allowed = np.intersect1d(allowed, self.tree_features).astype(np.uint32)
            left.allowed_features = right.allowed_features = allowed
            left.interaction_cst_indices = right.interaction_cst_indices = indices
        else:
            left.allowed_features = right.allowed_features = node.allowed_features
        if not self.has_missing_values[info.feature_idx]:
            info.missing_go_to_left = left.n_samples > right.n_samples
        self.n_nodes += 2

        if self.max_leaf_nodes is not None and n_leaf_nodes == self.max_leaf_nodes:
            self._finalize_leaf(left)
            self._finalize_leaf(right)
            self._finalize_splittable_nodes()
            self._release(node)
            return left, right
        if self.max_depth is not None and depth == self.max_depth:
            self._finalize_leaf(left)
            self._finalize_leaf(right)
            self._release(node)
            return left, right
        if left.n_samples < 2 * self.min_samples_leaf:
            self._finalize_leaf(left)
        if right.n_samples < 2 * self.min_samples_leaf:
            self._finalize_leaf(right)

        if self.with_monotonic_cst:
            cst = self.monotonic_cst[info.feature_idx]
            lo, hi = node.children_lower_bound, node.children_upper_bound
            if cst == 0:
                bounds = ((lo, hi), (lo, hi))
            else:
                mid = (left.value + right.value) / 2
                bounds = ((lo, mid), (mid, hi)) if cst == 1 else ((mid, hi), (lo, mid))
            (
                (left.children_lower_bound, left.children_upper_bound),
                (right.children_lower_bound, right.children_upper_bound),
            ) = bounds

        if not left.is_leaf or not right.is_leaf:
            small, large = (
                (left, right) if left.n_samples < right.n_samples else (right, left)
            )
            to_scan = [child for child in (left, right) if not child.is_leaf]
            subtract = None
            if large.is_leaf or not self.builder.subtractable(large.n_samples):
                # the children to split from their rows (no histogram for
                # a leaf)
                for child in to_scan:
                    child.histograms = self._build(child)
            else:
                # the larger child's histogram is its parent's minus the
                # smaller child's, subtracted feature by feature in the
                # scan's loop
                small.histograms = self._build(small, dense=True)
                large.histograms, node.histograms = node.histograms, None
                subtract = (to_scan.index(large), small.histograms)
            tic = perf_counter()
            self._compute_best_splits_and_push(to_scan, subtract)
            self.total_find_split_time += perf_counter() - tic
            for child in (left, right):
                if child.is_leaf:
                    self._release(child)
        self._release(node)
        return left, right

    def _release(self, node):
        self.builder.release(node.histograms)
        node.histograms = None

    def _compute_interactions(self, node):
        allowed, indices = set(), []
        for i in node.interaction_cst_indices:
            if node.split_info.feature_idx in self.interaction_cst[i]:
                indices.append(i)
                allowed.update(self.interaction_cst[i])
        return (np.fromiter(allowed, dtype=np.uint32, count=len(allowed)), indices)

    def _finalize_leaf(self, node):
        node.is_leaf = True
        self._release(node)
        self.finalized_leaves.append(node)

    def _finalize_splittable_nodes(self):
        while self.splittable_nodes:
            self._finalize_leaf(self.splittable_nodes.pop())

    # -- output -------------------------------------------------------------
    def make_predictor(self, bin_thresholds):
        """Flatten the tree into a :class:`~.predictor.TreePredictor`.

        The nodes are numbered depth first, each left subtree before the
        right one (scikit-learn's order), with an explicit stack: a deep
        tree needs no deep recursion.
        """
        from .predictor import TreePredictor

        # each field of NODE_DTYPE as a list, by node (a list's item is
        # set far faster than a record's field; zeros: unused)
        n_nodes = self.n_nodes
        cols = {name: [0] * n_nodes for name in NODE_DTYPE.names}
        value, count, gain, depth = (
            cols["value"],
            cols["count"],
            cols["gain"],
            cols["depth"],
        )
        bitsets, n_known = [], []  # categorical splits, in node order
        # (grower node, its parent's number or -1, its parent's field of it)
        stack = [(self.root, -1, None)]
        i = 0
        while stack:
            gnode, parent, side = stack.pop()
            if parent >= 0:
                cols[side][parent] = i
            value[i] = gnode.value
            count[i] = gnode.n_samples
            gain[i] = gnode.split_info.gain if gnode.split_info is not None else -1
            depth[i] = gnode.depth
            if gnode.is_leaf:
                cols["is_leaf"][i] = 1
                i += 1
                continue
            info = gnode.split_info
            f, b = info.feature_idx, info.bin_idx
            cols["feature"][i] = f
            cols["missing_left"][i] = info.missing_go_to_left
            cols["bin_threshold"][i] = b
            if info.is_categorical:
                # threshold: number of known categories (0 .. k - 1)
                cols["is_categorical"][i] = 1
                cols["bitset_idx"][i] = len(bitsets)
                cols["threshold"][i] = self.n_bins_non_missing[f]
                bitsets.append(info.left_cat_bitset)
                n_known.append(int(self.n_bins_non_missing[f]))
            elif b == self.n_bins_non_missing[f] - 1:
                cols["threshold"][i] = np.inf
            else:
                cols["threshold"][i] = bin_thresholds[f][b]
            # the left subtree is popped, so numbered, first
            stack.append((gnode.right_child, i, "right"))
            stack.append((gnode.left_child, i, "left"))
            i += 1
        if i != n_nodes:
            raise RuntimeError(f"{i} nodes reached, {n_nodes} grown")
        nodes = np.zeros(n_nodes, dtype=NODE_DTYPE)
        for name, col in cols.items():
            nodes[name] = col
        binned = np.array(bitsets, dtype=BITSET_DTYPE).reshape(-1, 8)
        # raw category c is bin c; the missing-value bin k is not a category
        raw = binned.copy()
        for j, k in enumerate(n_known):
            raw[j, k // 32] &= ~np.uint32(1 << (k % 32))
        return TreePredictor(nodes, binned, raw)
