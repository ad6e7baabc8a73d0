"""A fitted tree, flattened for fast prediction."""

from collections.abc import MutableSequence

import numpy as np

from ._common import BITSET_DTYPE
from ._openmp import effective_n_threads
from ._predictor import predict_binned, predict_raw, predict_raw_trees


class TreePredictor:
    """One tree as an array of ``NODE_DTYPE`` records (root first).

    Parameters
    ----------
    nodes : ndarray of NODE_DTYPE
    binned_left_cat_bitsets : ndarray of uint32 (n_categorical_splits, 8), \
            default=None
        Bins going left at each categorical split (row ``bitset_idx`` of the
        node), missing-value bin included when missing values go left.
    raw_left_cat_bitsets : ndarray of uint32 (n_categorical_splits, 8), \
            default=None
        The same sets as raw (ordinal-encoded) category values, without the
        missing-value bin.
    """

    def __init__(self, nodes, binned_left_cat_bitsets=None, raw_left_cat_bitsets=None):
        self.nodes = nodes
        if binned_left_cat_bitsets is None or raw_left_cat_bitsets is None:
            empty = np.zeros((0, 8), dtype=BITSET_DTYPE)
        self.binned_left_cat_bitsets = (
            empty if binned_left_cat_bitsets is None else binned_left_cat_bitsets
        )
        self.raw_left_cat_bitsets = (
            empty if raw_left_cat_bitsets is None else raw_left_cat_bitsets
        )

    def get_n_leaf_nodes(self):
        return int(self.nodes["is_leaf"].sum())

    def get_max_depth(self):
        return int(self.nodes["depth"].max())

    def predict(self, X, n_threads=None):
        """Leaf values of a raw matrix: float64 (NaN = missing) or 8/16-bit ints."""
        out = np.empty(X.shape[0], dtype=np.float64)
        predict_raw(
            self.nodes,
            X,
            self.raw_left_cat_bitsets,
            out,
            n_threads or effective_n_threads(),
        )
        return out

    def predict_binned(self, X_binned, missing_bin, n_threads=None):
        """Leaf values for a binned matrix."""
        out = np.empty(X_binned.shape[0], dtype=np.float64)
        predict_binned(
            self.nodes,
            X_binned,
            missing_bin,
            self.binned_left_cat_bitsets,
            out,
            n_threads or effective_n_threads(),
        )
        return out


def _joined(arrays, dtype):
    """``arrays`` (C-contiguous, of one dtype) joined as bytes, by blocks:
    concatenating structured arrays compares their dtypes one by one."""
    if len(arrays) == 1:
        return arrays[0]
    step = 4096
    blocks = [
        np.concatenate([a.view(np.uint8).ravel() for a in arrays[i : i + step]])
        for i in range(0, len(arrays), step)
    ]
    return np.concatenate(blocks).view(dtype)


def stacked_trees(stages):
    """The trees of ``stages`` (lists of :class:`TreePredictor`, the
    ``k``-th tree of a stage adding to output ``k``) as the arguments of
    :func:`add_raw_predictions`: their nodes and raw category bitsets
    concatenated, where each tree starts, and its output. None without
    trees."""
    if type(stages) is TreeStages:
        stacked = stages.stacked()
        if stacked is not None:
            return stacked
    trees = [tree for stage in stages for tree in stage]
    if not trees:
        return None
    columns = np.fromiter(
        (k for stage in stages for k in range(len(stage))), np.intp, len(trees)
    )
    counts = np.fromiter((t.nodes.shape[0] for t in trees), np.intp, len(trees))
    bitsets = [t.raw_left_cat_bitsets for t in trees]
    n_bitsets = np.fromiter((b.shape[0] for b in bitsets), np.intp, len(trees))
    nonempty = [b for b in bitsets if b.shape[0]]
    cat_bitsets = (
        np.concatenate(nonempty) if nonempty else np.zeros((0, 8), BITSET_DTYPE)
    )
    return (
        _joined([t.nodes for t in trees], trees[0].nodes.dtype),
        np.cumsum(counts) - counts,
        np.cumsum(n_bitsets) - n_bitsets,
        columns,
        cat_bitsets,
    )


class TreeStages(MutableSequence):
    """The trees of a boosted model as joined arrays, read as a list of
    stages (lists of ``k`` :class:`TreePredictor`).

    A model read from a file holds its trees this way: checking, predicting
    and saving use the joined arrays, so their cost does not grow with a
    Python object per tree. The :class:`TreePredictor` of a stage is made
    when the stage is first read (its arrays are views of the joined ones,
    so an edit of a node's values shows in both); a change of the sequence
    itself (append, pop, del) turns it into a plain list of stages. With
    ``flat=True`` (a forest's ``estimators_``, ``k=1``) its items are the
    trees themselves.

    Parameters
    ----------
    nodes : ndarray of NODE_DTYPE
        The trees' nodes, tree after tree (child indices relative to the
        tree).
    n_nodes : ndarray of int64
        Nodes of each tree.
    binned_bitsets, raw_bitsets : ndarray of uint32 (n_bitsets, 8)
        The trees' category bitsets, tree after tree.
    n_bitsets : ndarray of int64
        Bitsets of each tree.
    k : int
        Trees of a stage.
    flat : bool, default=False
        Items are trees, not stages (``k`` is then 1).
    """

    def __init__(
        self, nodes, n_nodes, binned_bitsets, raw_bitsets, n_bitsets, k, flat=False
    ):
        self.nodes = nodes
        self.n_nodes = n_nodes
        self.binned_bitsets = binned_bitsets
        self.raw_bitsets = raw_bitsets
        self.n_bitsets = n_bitsets
        self.k = k
        self.flat = flat
        # stage -> (the stage's list, its trees, their (nodes, binned, raw))
        self._made = {}
        self._list = None
        self._stacked = None
        self._starts = None

    # -- the joined form -------------------------------------------------------
    def joined(self):
        """(nodes, n_nodes, binned bitsets, raw bitsets, n_bitsets), or None
        where the stages no longer match them (a tree or an array of a tree
        replaced, or the sequence changed)."""
        if self._list is not None:
            return None
        for stage, trees, arrays in self._made.values():
            if len(stage) != len(trees) or any(
                a is not b
                or a.nodes is not n
                or a.binned_left_cat_bitsets is not c
                or a.raw_left_cat_bitsets is not d
                for a, b, (n, c, d) in zip(stage, trees, arrays)
            ):
                return None
        return (
            self.nodes,
            self.n_nodes,
            self.binned_bitsets,
            self.raw_bitsets,
            self.n_bitsets,
        )

    def stacked(self):
        """The arguments of :func:`add_raw_predictions` (see
        :func:`stacked_trees`), from the joined arrays; None where they no
        longer match the stages, or without trees."""
        if self.joined() is None or self.n_nodes.size == 0:
            return None
        if self._stacked is None:
            counts = self.n_nodes.astype(np.intp)
            n_bitsets = self.n_bitsets.astype(np.intp)
            columns = np.tile(np.arange(self.k, dtype=np.intp), counts.size // self.k)
            self._stacked = (
                self.nodes,
                np.cumsum(counts) - counts,
                np.cumsum(n_bitsets) - n_bitsets,
                columns,
                self.raw_bitsets,
            )
        return self._stacked

    def _stage(self, i):
        made = self._made.get(i)
        if made is not None:
            return made[0]
        if self._starts is None:
            self._starts = (
                np.cumsum(self.n_nodes) - self.n_nodes,
                np.cumsum(self.n_bitsets) - self.n_bitsets,
            )
        node_starts, bitset_starts = self._starts
        trees, arrays = [], []
        for t in range(i * self.k, (i + 1) * self.k):
            a = int(node_starts[t])
            c = int(bitset_starts[t])
            nodes = self.nodes[a : a + int(self.n_nodes[t])]
            d = c + int(self.n_bitsets[t])
            binned, raw = self.binned_bitsets[c:d], self.raw_bitsets[c:d]
            trees.append(TreePredictor(nodes, binned, raw))
            arrays.append((nodes, binned, raw))
        stage = list(trees)
        self._made[i] = (stage, trees, arrays)
        return stage

    def _item(self, i):
        stage = self._stage(i)
        return stage[0] if self.flat else stage

    def _as_list(self):
        if self._list is None:
            self._list = [self._item(i) for i in range(len(self))]
            self._made = {}
            self._stacked = None
        return self._list

    # -- the sequence of stages ------------------------------------------------
    def __len__(self):
        if self._list is not None:
            return len(self._list)
        return self.n_nodes.size // self.k

    def __getitem__(self, i):
        if self._list is not None:
            return self._list[i]
        n = len(self)
        if isinstance(i, slice):
            return [self._item(j) for j in range(*i.indices(n))]
        i = range(n)[i]  # an IndexError or TypeError as a list raises
        return self._item(i)

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __setitem__(self, i, value):
        self._as_list()[i] = value

    def __delitem__(self, i):
        del self._as_list()[i]

    def insert(self, i, value):
        self._as_list().insert(i, value)

    def __repr__(self):
        if self.flat:
            return f"TreeStages({len(self)} trees)"
        return f"TreeStages({len(self)} stages of {self.k} trees)"

    def __reduce__(self):
        # pickled as its joined arrays, or as the list it has become
        joined = self.joined()
        if joined is None:
            return list, (list(self),)
        return TreeStages, (*joined, self.k, self.flat)


def add_raw_predictions(stacked, X, raw, n_threads=None):
    """``raw[:, k] += tree.predict(X)`` for the ``k``-th tree of each stage
    of :func:`stacked_trees`, stage by stage: the same sums, bit for bit,
    in one pass over the rows instead of one call per tree (a model of many
    small trees spends its time in the calls).

    ``raw`` is float64 of shape (n_samples, K), Fortran order.
    """
    if stacked is None:
        return
    nodes, node_starts, bitset_starts, columns, cat_bitsets = stacked
    predict_raw_trees(
        nodes,
        node_starts,
        bitset_starts,
        columns,
        X,
        cat_bitsets,
        raw,
        n_threads or effective_n_threads(),
    )


def sum_tree_predictions(trees, X, n_threads=None):
    """The sum of ``tree.predict(X)`` over ``trees`` (TreePredictors, or a
    flat :class:`TreeStages`), added tree after tree as a loop of
    ``out += tree.predict(X)`` from zeros adds them: in one pass over the
    rows."""
    stacked = trees.stacked() if type(trees) is TreeStages else None
    if stacked is None:
        stacked = stacked_trees([[tree] for tree in trees])
    out = np.zeros((X.shape[0], 1), order="F")
    add_raw_predictions(stacked, X, out, n_threads)
    return out[:, 0]
