"""The trees and the bin mapper: stored as arrays, read back within bounds.

Every kind of boosted or forest model stores its trees as one array of
nodes and two of category bitsets (concatenated, with each tree's counts),
and its bin mapper as thresholds (the lookup tables of integer input are
rebuilt, never read).
"""

import math
import numbers

import numpy as np

from .._model_checks import concatenated_nodes
from ._errors import refuse
from ._fields import read_bool
from ._limits import MAX_LOG_RAW, MAX_RAW


# -- trees ------------------------------------------------------------------------
def store_trees(trees, arrays, prefix):
    """The trees' nodes and bitsets, concatenated, with each tree's counts
    (``trees`` a list of TreePredictor, or a TreeStages: its joined arrays
    as they are, where they match its stages)."""
    from .._engine._common import BITSET_DTYPE, NODE_DTYPE
    from .._engine.predictor import TreeStages

    if type(trees) is TreeStages:
        joined = trees.joined()
        if joined is None:
            trees = [tree for stage in trees for tree in stage]
        else:
            nodes, n_nodes, binned, raw, n_bitsets = joined
            arrays[f"{prefix}_nodes"] = nodes
            arrays[f"{prefix}_n_nodes"] = n_nodes.astype(np.uint32)
            arrays[f"{prefix}_binned_bitsets"] = binned.astype(BITSET_DTYPE, copy=False)
            arrays[f"{prefix}_raw_bitsets"] = raw.astype(BITSET_DTYPE, copy=False)
            arrays[f"{prefix}_n_bitsets"] = n_bitsets.astype(np.uint32)
            return
    arrays[f"{prefix}_nodes"] = (
        np.concatenate([t.nodes for t in trees]) if trees else np.zeros(0, NODE_DTYPE)
    )
    arrays[f"{prefix}_n_nodes"] = np.array(
        [t.nodes.shape[0] for t in trees], dtype=np.uint32
    )
    for which in ("binned", "raw"):
        bitsets = [getattr(t, f"{which}_left_cat_bitsets") for t in trees]
        arrays[f"{prefix}_{which}_bitsets"] = (
            np.concatenate(bitsets).astype(BITSET_DTYPE, copy=False)
            if trees
            else np.zeros((0, 8), BITSET_DTYPE)
        )
    arrays[f"{prefix}_n_bitsets"] = np.array(
        [t.binned_left_cat_bitsets.shape[0] for t in trees], dtype=np.uint32
    )


def expect_trees(arrays, prefix, n_trees, max_nodes):
    from .._engine._common import BITSET_DTYPE, NODE_DTYPE

    total = n_trees * max_nodes
    arrays.expect(f"{prefix}_nodes", NODE_DTYPE, (("max", total),))
    arrays.expect(f"{prefix}_n_nodes", np.uint32, (n_trees,))
    arrays.expect(f"{prefix}_binned_bitsets", BITSET_DTYPE, (("max", total), 8))
    arrays.expect(f"{prefix}_raw_bitsets", BITSET_DTYPE, (("max", total), 8))
    arrays.expect(f"{prefix}_n_bitsets", np.uint32, (n_trees,))


def read_trees(arrays, prefix, max_nodes, max_depth, where):
    """The stored trees' arrays (nodes, nodes of each tree, binned and raw
    category bitsets, bitsets of each tree), each tree within ``max_nodes``
    and ``max_depth`` (None: no bound); ``where`` names them in messages."""
    nodes = arrays[f"{prefix}_nodes"]
    counts = arrays[f"{prefix}_n_nodes"].astype(np.int64)
    binned = arrays[f"{prefix}_binned_bitsets"]
    raw = arrays[f"{prefix}_raw_bitsets"]
    n_bitsets = arrays[f"{prefix}_n_bitsets"].astype(np.int64)
    if binned.shape != raw.shape:
        refuse("the trees' binned and raw category bitsets differ in number")
    if np.any(counts < 1) or np.any(counts > max_nodes):
        i = int(np.flatnonzero((counts < 1) | (counts > max_nodes))[0])
        refuse(
            f"tree {i} has {counts[i]} nodes; the model's parameters let fit grow "
            f"between 1 and {max_nodes}"
        )
    if counts.sum() != nodes.shape[0] or n_bitsets.sum() != binned.shape[0]:
        refuse("the trees' node or bitset counts do not add up to the stored arrays")
    if max_depth is not None and counts.size:
        deepest = np.maximum.reduceat(nodes["depth"], _starts(counts))
        if deepest.max() > max_depth:
            i = int(np.flatnonzero(deepest > max_depth)[0])
            refuse(f"{where}[{i}] is deeper than max_depth={max_depth}")
    return nodes, counts, binned, raw, n_bitsets


def load_tree_stages(arrays, prefix, max_nodes, max_depth, where, k, flat=False):
    """The stored trees as a :class:`~eraboost._engine.predictor.TreeStages`
    of ``k`` trees a stage, or of trees (``flat``; see :func:`read_trees`):
    no Python object per tree."""
    from .._engine.predictor import TreeStages

    joined = read_trees(arrays, prefix, max_nodes, max_depth, where)
    return TreeStages(*joined, k, flat)


def max_tree_nodes(n_samples, min_samples_leaf, max_leaf_nodes=None, max_depth=None):
    """Most nodes a tree can have under these parameters: every leaf holds
    at least min_samples_leaf rows, at most max_leaf_nodes leaves, depth at
    most max_depth."""
    leaves = (
        n_samples // max(1, min_samples_leaf)
        if isinstance(min_samples_leaf, numbers.Integral)
        else n_samples
    )
    if max_leaf_nodes is not None:
        leaves = min(leaves, max_leaf_nodes)
    if max_depth is not None:
        leaves = min(leaves, 2 ** min(max_depth, 62))
    return 2 * max(1, leaves) - 1


def _starts(counts):
    return (np.cumsum(counts) - counts).astype(np.int64)


def leaf_ranges(trees):
    """The least and the greatest leaf value of each of ``trees`` (a list
    of TreePredictor, or a TreeStages that matches its joined arrays)."""
    from .._engine.predictor import TreeStages

    if type(trees) is TreeStages:
        nodes, counts = trees.nodes, trees.n_nodes
    else:
        nodes = concatenated_nodes([tree.nodes for tree in trees])
        counts = np.array([tree.nodes.shape[0] for tree in trees], dtype=np.int64)
    if not counts.size:
        return np.zeros(0), np.zeros(0)
    starts = _starts(counts)
    is_leaf = nodes["is_leaf"] == 1
    low = np.minimum.reduceat(np.where(is_leaf, nodes["value"], np.inf), starts)
    high = np.maximum.reduceat(np.where(is_leaf, nodes["value"], -np.inf), starts)
    return low, high


def check_sums(trees, n_outputs, baselines, log_link=False):
    """The raw prediction of any row is finite, and exp() of it too under a
    log link, with a margin (:data:`MAX_LOG_RAW`): for each output, the
    baseline plus one leaf of each of its trees (``trees`` stage by stage,
    ``n_outputs`` a stage, or a TreeStages), summed in predict's order."""
    low, high = leaf_ranges(trees)
    for k in range(n_outputs):
        # add.accumulate adds one term after the other, as predict does
        with np.errstate(over="ignore", invalid="ignore"):
            lo = float(np.add.accumulate(np.r_[baselines[k], low[k::n_outputs]])[-1])
            hi = float(np.add.accumulate(np.r_[baselines[k], high[k::n_outputs]])[-1])
        if not (math.isfinite(lo) and math.isfinite(hi)) or max(-lo, hi) > MAX_RAW:
            refuse(
                "the trees' leaf values can sum to a non-finite prediction "
                f"(from {lo:.3g} to {hi:.3g})"
            )
        if log_link and hi > MAX_LOG_RAW:
            refuse(
                f"the trees' leaf values can sum to {hi:.6g}, whose exp() (the "
                "loss's log link) is infinite or within a factor e of it "
                f"(at most {MAX_LOG_RAW:.6g})"
            )


# -- bin mappers ------------------------------------------------------------------
def store_bin_mapper(mapper, arrays, fitted):
    fitted["bin_mapper_is_integer"] = bool(mapper.is_integer_)
    thresholds = mapper.bin_thresholds_
    arrays["bin_thresholds"] = (
        np.concatenate(thresholds).astype(np.float64) if thresholds else np.zeros(0)
    )
    arrays["bin_n_thresholds"] = np.array([t.size for t in thresholds], dtype=np.uint32)
    if mapper.is_integer_:
        arrays["bin_lo"] = np.asarray(mapper._lo, dtype=np.int32)
        arrays["bin_hi"] = np.asarray(mapper._hi, dtype=np.int32)


def expect_bin_mapper(arrays, fitted, n_features, max_bins):
    is_integer = read_bool(fitted, "bin_mapper_is_integer")
    arrays.expect("bin_thresholds", np.float64, (("max", n_features * max_bins),))
    arrays.expect("bin_n_thresholds", np.uint32, (n_features,))
    if is_integer:
        arrays.expect("bin_lo", np.int32, (n_features,))
        arrays.expect("bin_hi", np.int32, (n_features,))
    return is_integer


def load_bin_mapper(arrays, is_integer, is_categorical, max_bins):
    """The BinMapper of the stored thresholds; its lookup tables, numbers
    of bins and missing-value bins are rebuilt, never read."""
    from .._engine.binning import BinMapper

    values = arrays["bin_thresholds"]
    counts = arrays["bin_n_thresholds"].astype(np.int64)
    if counts.sum() != values.size:
        refuse("the bin thresholds do not add up to the stored array")
    ends = np.cumsum(counts)
    thresholds = [values[e - c : e] for e, c in zip(ends, counts)]
    n_bins = counts + ~is_categorical
    if np.any(n_bins > max_bins):
        refuse(f"a feature has more than max_bins={max_bins} bins")
    # NaN, or a decrease within a feature's thresholds (one pass over all)
    falls = np.flatnonzero(np.diff(values) < 0) + 1
    bad = np.isnan(values)
    bad[falls[~np.isin(falls, ends)]] = True
    if bad.any():
        f = int(np.searchsorted(ends, np.flatnonzero(bad)[0], side="right"))
        refuse(f"the bin thresholds of feature {f} are NaN or not increasing")
    mapper = BinMapper(max_bins=max_bins)
    mapper.is_integer_ = is_integer
    mapper.bin_thresholds_ = thresholds
    mapper.n_bins_non_missing_ = n_bins.astype(np.uint32)
    mapper.missing_bin_ = mapper.n_bins_non_missing_.copy()
    mapper.n_bins_ = mapper.n_bins_non_missing_ + 1
    if is_integer:
        lo, hi = arrays["bin_lo"], arrays["bin_hi"]
        # 8- and 16-bit input: values in [-32768, 65535]
        if np.any(lo < -32768) or np.any(hi > 65535) or np.any(lo > hi):
            refuse("the integer bin mapper's value ranges are out of bounds")
        # the lookup tables (up to 64 KiB a feature) are built on first use,
        # never at load: predict reads the thresholds
        mapper._lo, mapper._hi = lo, hi
    return mapper
