"""Soundness checks of a fitted estimator read from a model file.

The checks of everything ``predict`` (and a warm start) relies on, one per
kind of estimator a model file may hold (:func:`check_booster`,
:func:`check_forest`, :func:`check_robust_tree`, after :func:`check_params`;
each schema of :mod:`eraboost.persistence` calls its own): the attributes are
present, arrays have the right types, dtypes and shapes, trees are trees
(child indices in range, every node reached exactly once from the root, no
cycle), leaves are marked consistently, feature indices, thresholds and
category bitsets are within the sizes the prediction code indexes, and leaf
values are finite. A file that passes cannot make prediction read out of
bounds, loop forever or crash; what the model then predicts is its author's
choice.

A check that fails raises :class:`UnsoundModel` with a message naming the
attribute and what is wrong; :mod:`eraboost.persistence` turns it into a
``ModelFileError``.
"""

import numbers

import numpy as np

from ._engine._common import BITSET_DTYPE, NODE_DTYPE
from ._engine.predictor import TreeStages

# bits of a categorical bitset (8 x 32): categories 0 .. 255
_BITSET_BITS = 256
_FLAGS = ("is_leaf", "missing_left", "is_categorical")


class UnsoundModel(Exception):
    """A fitted estimator whose state ``predict`` cannot safely use."""


def _fail(message):
    raise UnsoundModel(message)


def _attr(est, name):
    try:
        return vars(est)[name]
    except KeyError:
        _fail(f"the fitted attribute {name} is missing")


def _int(value, name, low, high=None):
    """``value`` as a Python int in ``[low, high]``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        _fail(f"{name} must be an integer, not {type(value).__name__}")
    value = int(value)
    if value < low or (high is not None and value > high):
        bound = f"at least {low}" if high is None else f"in [{low}, {high}]"
        _fail(f"{name} is {value}; it must be {bound}")
    return value


def _array(value, name, dtype=None, ndim=None, shape=None, contiguous=False):
    """Check that ``value`` is a NumPy array of the given dtype and shape.

    ``dtype`` may be a dtype or a NumPy type (an abstract one such as
    ``np.integer`` checks the kind); a None in ``shape`` is any length.
    """
    if type(value) is not np.ndarray:
        _fail(f"{name} must be a NumPy array, not {type(value).__name__}")
    if dtype is not None:
        if isinstance(dtype, type) and dtype in (np.integer, np.floating):
            ok = np.issubdtype(value.dtype, dtype)
        else:
            ok = value.dtype == np.dtype(dtype)
        if not ok:
            _fail(f"{name} has dtype {value.dtype}; expected {np.dtype(dtype)}")
    if ndim is not None and value.ndim != ndim:
        _fail(f"{name} has {value.ndim} dimensions; expected {ndim}")
    if shape is not None and (
        value.ndim != len(shape)
        or any(s is not None and s != v for s, v in zip(shape, value.shape))
    ):
        want = "(" + ", ".join("any" if s is None else str(s) for s in shape)
        _fail(f"{name} has shape {value.shape}; expected {want})")
    if contiguous and not value.flags.c_contiguous:
        _fail(f"{name} is not C-contiguous")
    return value


def _fitted_array(est, name, dtype=None, ndim=None, shape=None, finite=False):
    """The fitted attribute ``name`` of ``est``, checked by :func:`_array`.

    With ``finite=True`` its values must also be finite.
    """
    value = _array(_attr(est, name), name, dtype, ndim, shape)
    if finite and not np.all(np.isfinite(value)):
        _fail(f"{name} is not finite")
    return value


def _fitted_indices(est, name, shape, n_values, what):
    """The fitted int64 array ``name`` of ``est``, its values in
    ``[0, n_values)`` (indices of a feature or a class: ``what``)."""
    values = _fitted_array(est, name, np.int64, shape=shape)
    if np.any((values < 0) | (values >= n_values)):
        _fail(f"{name} holds a {what} outside 0 .. {n_values - 1}")
    return values


def _list(value, name, length=None):
    if type(value) is not list:
        _fail(f"{name} must be a list, not {type(value).__name__}")
    if length is not None and len(value) != length:
        _fail(f"{name} has {len(value)} items; expected {length}")
    return value


# -- trees ----------------------------------------------------------------------
def check_tree(tree, name, n_features, n_categorical=None, n_bins_non_missing=None):
    """Check one :class:`~eraboost._engine.predictor.TreePredictor`
    (:func:`check_trees` of one tree named ``name``)."""
    check_trees([tree], lambda i: name, n_features, n_categorical, n_bins_non_missing)


def concatenated_nodes(arrays):
    """One array of the node arrays ``arrays`` (all of NODE_DTYPE), joined
    as bytes: concatenating structured arrays compares their dtypes, one
    by one, which costs more than the copy."""
    if len(arrays) == 1:
        return arrays[0]
    dtype = arrays[0].dtype
    # by blocks: the views of a block are the only per-tree objects made
    step = 4096
    blocks = [
        np.concatenate([a.view(np.uint8) for a in arrays[i : i + step]])
        for i in range(0, len(arrays), step)
    ]
    return np.concatenate(blocks).view(dtype)


def _check_tree_object(tree, i, names, seen):
    """The nodes and the number of category bitsets of tree ``i``.

    ``seen`` holds what is already checked: dtype objects found equal to
    NODE_DTYPE (comparing structured dtypes is slow) and the ids of bitset
    arrays (trees read from a file share one empty array).
    """
    from ._engine.predictor import TreePredictor

    if type(tree) is not TreePredictor:
        _fail(f"{names(i)} must be a TreePredictor, not {type(tree).__name__}")
    state = vars(tree)
    for attr in ("nodes", "binned_left_cat_bitsets", "raw_left_cat_bitsets"):
        if attr not in state:
            _fail(f"{names(i)} lacks its {attr}")
    nodes = state["nodes"]
    if not (
        type(nodes) is np.ndarray
        and nodes.ndim == 1
        and nodes.flags.c_contiguous
        and (nodes.dtype in seen or nodes.dtype == NODE_DTYPE)
    ):
        _array(nodes, f"{names(i)}.nodes", NODE_DTYPE, 1, contiguous=True)
    seen.add(nodes.dtype)
    if nodes.shape[0] == 0:
        _fail(f"{names(i)}.nodes is empty (a tree has at least a root)")
    n_bitsets = None
    for attr in ("binned_left_cat_bitsets", "raw_left_cat_bitsets"):
        bitsets = state[attr]
        if id(bitsets) not in seen:
            _array(bitsets, f"{names(i)}.{attr}", BITSET_DTYPE, 2, (None, 8), True)
            if bitsets.shape[0] == 0:
                seen.add(id(bitsets))
        if n_bitsets is not None and bitsets.shape[0] != n_bitsets:
            _fail(f"{names(i)}'s binned and raw category bitsets differ in number")
        n_bitsets = bitsets.shape[0]
    return nodes, n_bitsets


def check_trees(trees, names, n_features, n_categorical=None, n_bins_non_missing=None):
    """Check :class:`~eraboost._engine.predictor.TreePredictor` objects, all
    at once: one pass over their nodes, concatenated, whatever their number.

    Parameters
    ----------
    trees : list
        What the file holds where trees are expected.
    names : callable
        The name of tree ``i`` for messages (``"_predictors[3][0]"``).
    n_features : int
        Columns of the matrix the trees are applied to.
    n_categorical : int or None
        Number of categorical features (the first ones, in the engine's
        order); None when categorical splits are not possible (forests).
    n_bins_non_missing : ndarray or None
        Bins of each feature, when known: a numeric split's binned threshold
        must be one of them.

    Every node but a tree's root is the child of exactly one split of its
    tree, and one level below it: so from the root every node is reached
    once, and predict's walk down a tree ends within its depth.
    """
    if not trees:
        return
    seen = set()
    arrays, n_bitsets = [], []
    for i, tree in enumerate(trees):
        nodes, n = _check_tree_object(tree, i, names, seen)
        arrays.append(nodes)
        n_bitsets.append(n)
    counts = np.array([a.shape[0] for a in arrays], dtype=np.int64)
    n_bitsets = np.array(n_bitsets, dtype=np.int64)
    nodes = concatenated_nodes(arrays)
    del arrays
    _check_nodes(
        nodes, counts, n_bitsets, names, n_features, n_categorical, n_bins_non_missing
    )


def check_joined_trees(
    joined, names, n_features, n_categorical=None, n_bins_non_missing=None
):
    """:func:`check_trees` of trees held as joined arrays: ``joined`` is
    (nodes, nodes of each tree, binned and raw category bitsets, bitsets of
    each tree), as :meth:`~eraboost._engine.predictor.TreeStages.joined`
    gives them."""
    nodes, counts, binned, raw, n_bitsets = joined
    _array(nodes, "the trees' nodes", NODE_DTYPE, 1, contiguous=True)
    for what, values in (("nodes", counts), ("bitsets", n_bitsets)):
        _array(values, f"the trees' numbers of {what}", np.int64, 1)
    if n_bitsets.shape != counts.shape:
        _fail("the trees' numbers of nodes and of bitsets differ in length")
    for what, bitsets in (("binned", binned), ("raw", raw)):
        _array(bitsets, f"the trees' {what} bitsets", BITSET_DTYPE, 2, (None, 8), True)
    if binned.shape != raw.shape:
        _fail("the trees' binned and raw category bitsets differ in number")
    if np.any(counts < 1):
        i = int(np.flatnonzero(counts < 1)[0])
        _fail(f"{names(i)}.nodes is empty (a tree has at least a root)")
    if np.any(n_bitsets < 0):
        _fail("the trees' numbers of bitsets are negative")
    if counts.sum() != nodes.shape[0] or n_bitsets.sum() != binned.shape[0]:
        _fail("the trees' node or bitset counts do not add up to their arrays")
    if counts.size:
        _check_nodes(
            nodes,
            counts,
            n_bitsets,
            names,
            n_features,
            n_categorical,
            n_bins_non_missing,
        )


def _check_nodes(
    nodes, counts, n_bitsets, names, n_features, n_categorical, n_bins_non_missing
):
    """The checks of :func:`check_trees` on the trees' nodes, joined
    (``counts`` nodes and ``n_bitsets`` category bitsets a tree)."""
    starts = np.cumsum(counts) - counts
    tree_of = np.repeat(np.arange(counts.size), counts)

    def where(g):
        """(name of the tree, index in it) of node ``g`` of the concatenation."""
        i = int(tree_of[g])
        return names(i), int(g - starts[i])

    def fail_at(g, message):
        name, j = where(g)
        _fail(f"{name}: " + message.format(j=j))

    for flag in _FLAGS:
        bad = np.flatnonzero(nodes[flag] > 1)
        if bad.size:
            fail_at(bad[0], f"node {{j}} has {flag}={nodes[flag][bad[0]]} (0 or 1)")
    is_leaf = nodes["is_leaf"] == 1
    split = np.flatnonzero(~is_leaf)
    leaf = np.flatnonzero(is_leaf)

    # leaves: no children, not categorical, a finite value
    bad = leaf[(nodes["left"][leaf] != 0) | (nodes["right"][leaf] != 0)]
    if bad.size:
        fail_at(bad[0], "node {j} is marked a leaf but has children")
    bad = leaf[nodes["is_categorical"][leaf] != 0]
    if bad.size:
        fail_at(bad[0], "leaf {j} is marked categorical")
    bad = leaf[~np.isfinite(nodes["value"][leaf])]
    if bad.size:
        fail_at(bad[0], f"leaf {{j}} has the value {nodes['value'][bad[0]]}")

    # split nodes: children in range, features and thresholds within bounds
    size = counts[tree_of[split]]
    left = nodes["left"][split].astype(np.int64)
    right = nodes["right"][split].astype(np.int64)
    bad = np.flatnonzero((left >= size) | (right >= size))
    if bad.size:
        i = bad[0]
        fail_at(
            split[i],
            f"node {{j}} has the child index {max(left[i], right[i])}; the tree "
            f"has {size[i]} nodes",
        )
    feature = nodes["feature"][split]
    bad = split[(feature < 0) | (feature >= n_features)]
    if bad.size:
        fail_at(
            bad[0],
            f"node {{j}} splits on feature {nodes['feature'][bad[0]]}; the model "
            f"has {n_features} features",
        )
    cat = nodes["is_categorical"][split] == 1
    threshold = nodes["threshold"][split]
    bad = split[~cat & np.isnan(threshold)]
    if bad.size:
        fail_at(bad[0], "node {j} has a NaN threshold")
    if n_bins_non_missing is not None:
        bins = n_bins_non_missing[feature]
        bad = split[~cat & (nodes["bin_threshold"][split] >= bins)]
        if bad.size:
            fail_at(bad[0], "node {j}'s binned threshold is beyond its bins")
    if cat.any():
        cat_nodes = split[cat]
        if n_categorical is None:
            fail_at(
                cat_nodes[0],
                "node {j} is a categorical split in a model without categorical "
                "features",
            )
        bad = cat_nodes[nodes["feature"][cat_nodes] >= n_categorical]
        if bad.size:
            fail_at(
                bad[0],
                "node {j} is a categorical split on the numeric feature "
                f"{nodes['feature'][bad[0]]}",
            )
        known = nodes["threshold"][cat_nodes]
        bad = cat_nodes[~((known >= 0) & (known <= _BITSET_BITS))]
        if bad.size:
            fail_at(
                bad[0],
                f"categorical node {{j}} has {nodes['threshold'][bad[0]]} known "
                f"categories (at most {_BITSET_BITS})",
            )
        owned = n_bitsets[tree_of[cat_nodes]]
        bad = np.flatnonzero(nodes["bitset_idx"][cat_nodes] >= owned)
        if bad.size:
            g = cat_nodes[bad[0]]
            fail_at(
                g,
                f"categorical node {{j}} uses bitset {nodes['bitset_idx'][g]}; the "
                f"tree has {owned[bad[0]]}",
            )

    # each tree: every node but the root is the child of exactly one split,
    # one level below it
    base = starts[tree_of[split]]
    children = np.concatenate([left + base, right + base])
    parents = np.bincount(children, minlength=nodes.shape[0])
    bad = starts[parents[starts] != 0]
    if bad.size:
        fail_at(bad[0], "the root is the child of another node (a cycle)")
    not_root = np.ones(nodes.shape[0], dtype=bool)
    not_root[starts] = False
    bad = np.flatnonzero(not_root & (parents != 1))
    if bad.size:
        fail_at(
            bad[0],
            f"node {{j}} is the child of {parents[bad[0]]} nodes (every node but "
            "the root has exactly one parent)",
        )
    depth = nodes["depth"].astype(np.int64)
    bad = starts[depth[starts] != 0]
    if bad.size:
        fail_at(bad[0], f"the root has depth {depth[bad[0]]}")
    below = depth[split] + 1
    bad = split[(depth[left + base] != below) | (depth[right + base] != below)]
    if bad.size:
        fail_at(
            bad[0],
            "the children of node {j} are not one level below it (a cycle, or "
            "nodes not reached from the root)",
        )


def check_bin_mapper(mapper, n_features, name="_bin_mapper"):
    """Check the fitted :class:`~eraboost._engine.binning.BinMapper` (used by a warm
    start); returns its ``n_bins_non_missing_``."""
    from ._engine._binning import build_lookup
    from ._engine.binning import BinMapper

    if type(mapper) is not BinMapper:
        _fail(f"{name} must be a BinMapper, not {type(mapper).__name__}")
    shape = (n_features,)
    n_bins = _array(
        _attr(mapper, "n_bins_non_missing_"),
        f"{name}.n_bins_non_missing_",
        np.uint32,
        shape=shape,
    )
    if np.any(n_bins > 255):
        _fail(f"{name}.n_bins_non_missing_ holds more than 255 bins")
    missing = _array(
        _attr(mapper, "missing_bin_"), f"{name}.missing_bin_", np.uint32, shape=shape
    )
    total = _array(_attr(mapper, "n_bins_"), f"{name}.n_bins_", np.uint32, shape=shape)
    if not (np.array_equal(missing, n_bins) and np.array_equal(total, n_bins + 1)):
        _fail(f"{name}'s numbers of bins disagree")
    thresholds = _list(
        _attr(mapper, "bin_thresholds_"), f"{name}.bin_thresholds_", n_features
    )
    for f, t in enumerate(thresholds):
        if not (
            type(t) is np.ndarray
            and t.dtype == np.float64
            and t.ndim == 1
            and t.flags.c_contiguous
        ):
            _array(t, f"{name}.bin_thresholds_[{f}]", np.float64, 1, contiguous=True)
        if t.size > 255:
            _fail(f"{name}.bin_thresholds_[{f}] has {t.size} thresholds")
    is_integer = _attr(mapper, "is_integer_")
    if not isinstance(is_integer, (bool, np.bool_)):
        _fail(f"{name}.is_integer_ must be a boolean")
    if is_integer:
        lo = _array(_attr(mapper, "_lo"), f"{name}._lo", np.int32, shape=shape)
        hi = _array(_attr(mapper, "_hi"), f"{name}._hi", np.int32, shape=shape)
        # 8- and 16-bit input: a table has at most 65,536 entries
        if np.any(hi.astype(np.int64) - lo > 65535) or np.any(lo > hi):
            _fail(f"{name}'s lookup tables are too large")
        if "_lut" in vars(mapper):  # else built from the ranges on first use
            expected_lut, expected_start = build_lookup(
                thresholds, np.ascontiguousarray(lo), np.ascontiguousarray(hi)
            )
            for what, expected in (
                ("_lut", expected_lut),
                ("_lut_start", expected_start),
            ):
                value = _array(_attr(mapper, what), f"{name}.{what}", expected.dtype, 1)
                if not np.array_equal(value, expected):
                    _fail(f"{name}.{what} does not match its thresholds")
    return n_bins


# -- estimators -----------------------------------------------------------------
def check_params(est):
    from sklearn.utils._param_validation import InvalidParameterError

    from .metrics import _AGGREGATES, _METRICS, EraScorer

    try:
        est._validate_params()
    except InvalidParameterError as exc:
        _fail(f"invalid parameter: {exc}")
    except Exception as exc:
        _fail(f"invalid parameters ({type(exc).__name__}: {exc})")
    scoring = vars(est).get("scoring")
    if isinstance(scoring, EraScorer):
        if type(scoring) is not EraScorer or set(vars(scoring)) != {
            "metric",
            "aggregate",
        }:
            _fail("scoring is not an era scorer made by make_era_scorer")
        if not (isinstance(scoring.metric, str) and scoring.metric in _METRICS):
            _fail(f"scoring has an unknown metric {scoring.metric!r}")
        if not (
            isinstance(scoring.aggregate, str) and scoring.aggregate in _AGGREGATES
        ):
            _fail(f"scoring has an unknown aggregate {scoring.aggregate!r}")


def _check_features(est):
    n_features = _int(_attr(est, "n_features_in_"), "n_features_in_", 1)
    names = vars(est).get("feature_names_in_")
    if names is not None or "feature_names_in_" in vars(est):
        _array(names, "feature_names_in_", object, 1, (n_features,))
        if not all(isinstance(s, str) for s in names):
            _fail("feature_names_in_ must hold strings")
    return n_features


def _check_classes(est, n_classes=None):
    classes = _fitted_array(est, "classes_", ndim=1)
    if classes.dtype.hasobject and not all(
        isinstance(c, (str, numbers.Number)) for c in classes
    ):
        _fail("classes_ must hold strings or numbers")
    if classes.size == 0:
        _fail("classes_ is empty")
    if n_classes is not None and classes.size not in n_classes:
        _fail(
            f"classes_ has {classes.size} classes; the trees predict "
            f"{' or '.join(map(str, n_classes))}"
        )
    return classes


def check_booster(est, is_classifier):
    from sklearn._loss.loss import (
        BaseLoss,
        HalfBinomialLoss,
        HalfMultinomialLoss,
    )

    n_features = _check_features(est)
    k = _int(_attr(est, "n_trees_per_iteration_"), "n_trees_per_iteration_", 1)
    loss = _attr(est, "_loss")
    if not isinstance(loss, BaseLoss):
        _fail(f"_loss must be a scikit-learn loss, not {type(loss).__name__}")
    if is_classifier:
        expected = HalfBinomialLoss if k == 1 else HalfMultinomialLoss
        if type(loss) is not expected:
            _fail(f"_loss is {type(loss).__name__}; expected {expected.__name__}")
        _check_classes(est, (2,) if k == 1 else (k,))
    elif k != 1:
        _fail(f"a regressor grows one tree per iteration, not {k}")
    _fitted_array(est, "_baseline_prediction", np.float64, shape=(1, k), finite=True)

    is_categorical = _attr(est, "is_categorical_")
    preprocessor = _attr(est, "_preprocessor")
    n_categorical = 0
    if is_categorical is None:
        if preprocessor is not None:
            _fail("_preprocessor is set but is_categorical_ is None")
    else:
        from sklearn.compose import ColumnTransformer

        _array(is_categorical, "is_categorical_", np.bool_, shape=(n_features,))
        if type(preprocessor) is not ColumnTransformer:
            _fail(
                "a model with categorical features needs its _preprocessor "
                f"(a ColumnTransformer), not {type(preprocessor).__name__}"
            )
        n_categorical = int(is_categorical.sum())
        counts = _fitted_array(est, "_n_categories", shape=(n_categorical,))
        if not np.issubdtype(counts.dtype, np.integer):
            _fail("_n_categories must hold integers")

    n_bins = check_bin_mapper(_attr(est, "_bin_mapper"), n_features)
    stages = _attr(est, "_predictors")
    names = lambda i: f"_predictors[{i // k}][{i % k}]"  # noqa: E731
    joined = stages.joined() if type(stages) is TreeStages else None
    if joined is not None:
        # trees read from a file: checked on their arrays, no object per tree
        if stages.flat:
            _fail("_predictors must be a list of stages, not of trees")
        if stages.k != k:
            _fail(f"_predictors holds {stages.k} trees a stage; expected {k}")
        if joined[1].size % k:
            _fail(f"_predictors holds {joined[1].size} trees, not stages of {k}")
        check_joined_trees(joined, names, n_features, n_categorical, n_bins)
        return
    if type(stages) is TreeStages:
        stages = list(stages)
    stages = _list(stages, "_predictors")
    for i, stage in enumerate(stages):
        _list(stage, f"_predictors[{i}]", k)
    trees = [tree for stage in stages for tree in stage]
    check_trees(trees, names, n_features, n_categorical, n_bins)


def check_forest(est, is_classifier):
    n_features = _check_features(est)
    if is_classifier:
        _check_classes(est, (2,))
    trees = _attr(est, "estimators_")
    joined = trees.joined() if type(trees) is TreeStages else None
    if joined is None and type(trees) is TreeStages:
        trees = list(trees)
    if joined is None:
        trees = _list(trees, "estimators_")
    if not len(trees):
        _fail("estimators_ is empty")
    n_bins = None
    if "_bin_mapper" in vars(est):
        n_bins = check_bin_mapper(est._bin_mapper, n_features)

    def names(i):
        return f"estimators_[{i}]"

    if joined is None:
        check_trees(trees, names, n_features, None, n_bins)
    elif not (trees.flat and trees.k == 1):
        _fail("estimators_ must be a list of trees, not of stages")
    else:
        # trees read from a file: checked on their arrays, no object per tree
        check_joined_trees(joined, names, n_features, None, n_bins)


def check_robust_tree(est):
    n_features = _check_features(est)
    depth = _int(est.max_depth, "max_depth", 1, 4)
    n_classes = _check_classes(est).size
    n_splits, n_leaves = 2**depth - 1, 2**depth
    _fitted_indices(est, "tree_features_", (n_splits,), n_features, "feature")
    thresholds = _fitted_array(est, "tree_thresholds_", np.float64, shape=(n_splits,))
    if np.any(np.isnan(thresholds)):
        _fail("tree_thresholds_ holds NaN")
    _fitted_indices(est, "leaf_values_", (n_leaves,), n_classes, "class")
    _fitted_array(
        est, "leaf_proba_", np.float64, shape=(n_leaves, n_classes), finite=True
    )
