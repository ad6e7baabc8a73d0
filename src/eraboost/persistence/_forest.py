"""The schema of the invariant forests: InvariantForestRegressor and
InvariantForestClassifier.

``model.json``'s ``fitted`` holds :data:`FIELDS` (and ``classes_`` for the
classifier); the arrays are the trees' seeds, the rows' era codes as runs,
the out-of-bag predictions, the trees and the bin mapper. The importances
are derived from the trees, never read.
"""

import numpy as np

from ._errors import refuse
from ._fields import (
    declared_fields,
    feature_names,
    load_classes,
    load_eras,
    load_features,
    read_float,
    read_int,
)
from ._limits import MAX_SAMPLES
from ._trees import (
    check_sums,
    expect_bin_mapper,
    expect_trees,
    leaf_ranges,
    load_bin_mapper,
    load_tree_stages,
    max_tree_nodes,
    store_bin_mapper,
    store_trees,
)
from ._values import encode_labels

FIELDS = (
    "n_features_in_",
    "feature_names_in_",
    "eras_",
    "n_eras_",
    "n_samples",
    "oob_score_",
    "bin_mapper_is_integer",
)


def store(est, arrays):
    fitted = {
        "n_features_in_": int(est.n_features_in_),
        "feature_names_in_": feature_names(est),
        "eras_": None if est.eras_ is None else encode_labels(est.eras_, "eras_", True),
        "n_eras_": int(est.n_eras_),
        "n_samples": int(est._era_codes.shape[0]),
        "oob_score_": float(est.oob_score_) if hasattr(est, "oob_score_") else None,
    }
    if hasattr(est, "classes_"):
        fitted["classes_"] = encode_labels(est.classes_, "classes_")
    arrays["tree_seeds"] = np.asarray(est._tree_seeds, dtype=np.int64)
    # the rows' era codes as runs: rows usually come era by era
    codes = np.asarray(est._era_codes, dtype=np.int32)
    starts = np.concatenate([[0], np.flatnonzero(np.diff(codes)) + 1])
    arrays["era_run_codes"] = codes[starts]
    arrays["era_run_lengths"] = np.diff(np.append(starts, codes.size)).astype(np.int64)
    for name in ("oob_prediction_", "oob_decision_function_"):
        if hasattr(est, name):
            arrays[name.rstrip("_")] = np.ascontiguousarray(
                getattr(est, name), dtype=np.float64
            )
    store_trees(est.estimators_, arrays, "tree")
    store_bin_mapper(est._bin_mapper, arrays, fitted)
    return fitted


def plan(est, fitted, arrays, is_classifier):
    declared = (*FIELDS, "classes_") if is_classifier else FIELDS
    declared_fields(fitted, "fitted", declared)
    n_features = load_features(est, fitted)
    n_samples = read_int(fitted, "n_samples", 1, MAX_SAMPLES)
    if is_classifier:
        load_classes(est, fitted, (2,), n_samples)
    max_nodes = max_tree_nodes(n_samples, est.min_samples_leaf, None, est.max_depth)
    has_oob = fitted.get("oob_score_") is not None
    if has_oob and not est.oob_score:
        refuse("oob_score_ is set but the parameter oob_score is False")
    arrays.expect("tree_seeds", np.int64, (est.n_estimators,))
    arrays.expect("era_run_codes", np.int32, (("max", n_samples),))
    arrays.expect("era_run_lengths", np.int64, (("max", n_samples),))
    if has_oob:
        if is_classifier:
            arrays.expect("oob_decision_function", np.float64, (n_samples, 2))
        else:
            arrays.expect("oob_prediction", np.float64, (n_samples,))
    expect_trees(arrays, "tree", est.n_estimators, max_nodes)
    expect_bin_mapper(arrays, fitted, n_features, est.max_bins)
    return n_samples, max_nodes, has_oob


def load(est, fitted, arrays, planned):
    n_samples, max_nodes, has_oob = planned
    n_eras = read_int(fitted, "n_eras_", 1, n_samples)
    load_eras(est, fitted, n_eras)
    est._tree_seeds = arrays["tree_seeds"]
    if np.any(est._tree_seeds < 0) or np.any(est._tree_seeds >= 2**31):
        refuse("the trees' seeds are out of range")
    codes, lengths = arrays["era_run_codes"], arrays["era_run_lengths"]
    if codes.shape != lengths.shape or np.any(lengths < 1):
        refuse("the runs of the rows' era codes are malformed")
    if lengths.sum() != n_samples:
        refuse(
            f"the runs of the rows' era codes cover {lengths.sum()} rows, "
            f"not {n_samples}"
        )
    if np.any(codes < 0) or np.any(codes >= n_eras):
        refuse(f"the rows' era codes are outside 0 .. {n_eras - 1}")
    est._era_codes = np.repeat(codes, lengths).astype(np.int32)
    if has_oob:
        est.oob_score_ = read_float(fitted, "oob_score_")
        if hasattr(est, "classes_"):
            est.oob_decision_function_ = arrays["oob_decision_function"]
        else:
            est.oob_prediction_ = arrays["oob_prediction"]
    est._bin_mapper = load_bin_mapper(
        arrays,
        fitted["bin_mapper_is_integer"],
        np.zeros(est.n_features_in_, dtype=bool),
        est.max_bins,
    )
    # joined arrays: no Python object per tree until one is asked for
    est.estimators_ = load_tree_stages(
        arrays, "tree", max_nodes, est.max_depth, "estimators_", 1, flat=True
    )
    if hasattr(est, "classes_"):
        low, high = leaf_ranges(est.estimators_)
        bad = np.flatnonzero((low < 0) | (high > 1))
        if bad.size:
            refuse(
                f"estimators_[{bad[0]}] has leaf values outside [0, 1] (class shares)"
            )
    return est


def finish(est):
    """After the checks: any path's sum is finite; the importances are
    derived from the trees."""
    from ..inspection import feature_importances, split_frequency_importances

    check_sums(est.estimators_, 1, [0.0])
    # derived from the trees, never read
    est.feature_importances_ = feature_importances(est, per_tree=True)
    est.split_frequency_importances_ = split_frequency_importances(est)


def check(est, is_classifier):
    """The fitted state that predict relies on (``_model_checks``)."""
    from .._model_checks import check_forest

    check_forest(est, is_classifier)
