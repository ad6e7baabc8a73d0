"""The schema of RobustTreeClassifier: one complete tree of ``max_depth``
levels, as four arrays."""

import numpy as np

from ._errors import refuse
from ._fields import (
    declared_fields,
    feature_names,
    load_classes,
    load_features,
    read_float,
    read_int,
    read_text,
)
from ._values import encode_labels

FIELDS = (
    "n_features_in_",
    "feature_names_in_",
    "classes_",
    "formulation_",
    "worst_case_accuracy_",
    "nominal_accuracy_",
    "solver_status_",
    "gap_",
    "n_cuts_",
    "n_iterations_",
    "solve_time_",
)


def store(est, arrays):
    fitted = {
        "n_features_in_": int(est.n_features_in_),
        "feature_names_in_": feature_names(est),
        "classes_": encode_labels(est.classes_, "classes_"),
        "formulation_": getattr(est, "formulation_", None),
        "worst_case_accuracy_": float(est.worst_case_accuracy_),
        "nominal_accuracy_": float(est.nominal_accuracy_),
        "solver_status_": str(est.solver_status_),
        "gap_": float(est.gap_),
        "n_cuts_": int(est.n_cuts_),
        "n_iterations_": int(est.n_iterations_),
        "solve_time_": float(est.solve_time_),
    }
    arrays["tree_features"] = np.asarray(est.tree_features_, dtype=np.int64)
    arrays["tree_thresholds"] = np.asarray(est.tree_thresholds_, dtype=np.float64)
    arrays["leaf_values"] = np.asarray(est.leaf_values_, dtype=np.int64)
    arrays["leaf_proba"] = np.ascontiguousarray(est.leaf_proba_, dtype=np.float64)
    return fitted


def plan(est, fitted, arrays, is_classifier):
    declared_fields(fitted, "fitted", FIELDS)
    load_features(est, fitted)
    n_classes = load_classes(est, fitted).size
    depth = est.max_depth
    arrays.expect("tree_features", np.int64, (2**depth - 1,))
    arrays.expect("tree_thresholds", np.float64, (2**depth - 1,))
    arrays.expect("leaf_values", np.int64, (2**depth,))
    arrays.expect("leaf_proba", np.float64, (2**depth, n_classes))
    return None


def load(est, fitted, arrays, planned):
    formulation = fitted.get("formulation_")
    if formulation is not None:
        est.formulation_ = read_text(fitted, "formulation_", ("subtree", "flow"))
    est.worst_case_accuracy_ = read_float(fitted, "worst_case_accuracy_", 0.0, 1.0)
    est.nominal_accuracy_ = read_float(fitted, "nominal_accuracy_", 0.0, 1.0)
    est.solver_status_ = read_text(fitted, "solver_status_")
    gap = fitted.get("gap_")
    if type(gap) not in (int, float) or gap != gap:
        refuse("gap_ must be a number")
    est.gap_ = float(gap)
    est.n_cuts_ = read_int(fitted, "n_cuts_", 0, 2**62)
    est.n_iterations_ = read_int(fitted, "n_iterations_", 0, 2**62)
    est.solve_time_ = read_float(fitted, "solve_time_", 0.0)
    est.tree_features_ = arrays["tree_features"]
    est.tree_thresholds_ = arrays["tree_thresholds"]
    est.leaf_values_ = arrays["leaf_values"]
    proba = arrays["leaf_proba"]
    if not (
        np.all(proba >= 0)
        and np.all(proba <= 1)
        and np.allclose(proba.sum(axis=1), 1.0)
    ):
        refuse(
            "leaf_proba_ must hold class shares: values in [0, 1], each row summing "
            "to 1"
        )
    est.leaf_proba_ = proba
    return est


def check(est, is_classifier):
    """The fitted state that predict relies on (``_model_checks``)."""
    from .._model_checks import check_robust_tree

    check_robust_tree(est)


def finish(est):
    """Nothing is derived after loading."""
