"""The schema of the boosted models: HistGradientBoostingRegressor and
HistGradientBoostingClassifier.

``model.json``'s ``fitted`` holds :data:`FIELDS` (and ``classes_`` for the
classifier); the arrays are the baseline, the scores, the trees and the
bin mapper. The loss is made from the parameters and the classes, and the
encoder of categorical features is fitted again on its recorded
categories: neither is read.
"""

import math

import numpy as np

from ._errors import refuse
from ._fields import (
    declared_fields,
    feature_names,
    load_classes,
    load_eras,
    load_features,
    read_bool,
    read_int,
    read_rng,
    rng_state,
)
from ._limits import MAX_ENCODER_CELLS, MAX_SAMPLES
from ._trees import (
    check_sums,
    expect_bin_mapper,
    expect_trees,
    load_bin_mapper,
    load_tree_stages,
    max_tree_nodes,
    store_bin_mapper,
    store_trees,
)
from ._values import decode_labels, encode_labels, same_labels

FIELDS = (
    "n_features_in_",
    "feature_names_in_",
    "n_trees_per_iteration_",
    "is_categorical_",
    "categories",
    "eras_",
    "n_eras_",
    "random_seed",
    "feature_subsample_rng",
    "tree_sample_rng",
    "do_early_stopping_",
    "use_validation_data",
    "fit_signature",
    "n_iter",
    "best_iteration_",
    "bin_mapper_is_integer",
)


def store(est, arrays):
    from .._engine.predictor import TreeStages

    pre = est._preprocessor
    categories = None
    if pre is not None:
        encoder = pre.named_transformers_["encoder"]
        categories = [
            encode_labels(c, f"the categories of feature {i}")
            for i, c in enumerate(encoder.categories_)
        ]
    signature = est._fit_signature
    fitted = {
        "n_features_in_": int(est.n_features_in_),
        "feature_names_in_": feature_names(est),
        "n_trees_per_iteration_": int(est.n_trees_per_iteration_),
        "is_categorical_": (
            None
            if est.is_categorical_ is None
            else [bool(b) for b in est.is_categorical_]
        ),
        "categories": categories,
        "eras_": None if est.eras_ is None else encode_labels(est.eras_, "eras_", True),
        "n_eras_": int(est.n_eras_),
        "random_seed": int(est._random_seed),
        "feature_subsample_rng": rng_state(est._feature_subsample_rng),
        "tree_sample_rng": rng_state(est._tree_sample_rng),
        "do_early_stopping_": bool(est.do_early_stopping_),
        "use_validation_data": bool(est._use_validation_data),
        "fit_signature": [int(signature[0]), signature[1]],
        "n_iter": len(est._predictors),
        "best_iteration_": (
            int(est.best_iteration_) if hasattr(est, "best_iteration_") else None
        ),
    }
    if hasattr(est, "classes_"):
        fitted["classes_"] = encode_labels(est.classes_, "classes_")
    arrays["baseline"] = np.ascontiguousarray(
        est._baseline_prediction, dtype=np.float64
    )
    arrays["train_score"] = np.asarray(est.train_score_, dtype=np.float64)
    arrays["validation_score"] = np.asarray(est.validation_score_, dtype=np.float64)
    stages = est._predictors
    if type(stages) is not TreeStages:
        stages = [t for stage in stages for t in stage]
    store_trees(stages, arrays, "tree")
    store_bin_mapper(est._bin_mapper, arrays, fitted)
    return fitted


def plan(est, fitted, arrays, is_classifier):
    declared = (*FIELDS, "classes_") if is_classifier else FIELDS
    declared_fields(fitted, "fitted", declared)
    n_features = load_features(est, fitted)
    signature = fitted.get("fit_signature")
    if not (
        isinstance(signature, list)
        and len(signature) == 2
        and type(signature[0]) is int
        and 1 <= signature[0] <= MAX_SAMPLES
        and (
            signature[1] is None
            or (
                isinstance(signature[1], str)
                and len(signature[1]) == 32
                and all(c in "0123456789abcdef" for c in signature[1])
            )
        )
    ):
        refuse("fit_signature must be [training rows, a 32-digit hex digest or null]")
    est._fit_signature = (signature[0], signature[1])
    n_samples = signature[0]
    if is_classifier:
        classes = load_classes(est, fitted, n_samples=n_samples)
        k_expected = 1 if classes.size == 2 else classes.size
    else:
        k_expected = 1
    k = read_int(fitted, "n_trees_per_iteration_", k_expected, k_expected)
    est.n_trees_per_iteration_ = k
    n_iter = read_int(fitted, "n_iter", 1, est.max_iter)
    max_nodes = max_tree_nodes(
        n_samples, est.min_samples_leaf, est.max_leaf_nodes, est.max_depth
    )
    arrays.expect("baseline", np.float64, (1, k))
    arrays.expect("train_score", np.float64, (("max", n_iter + 1),))
    arrays.expect("validation_score", np.float64, (("max", n_iter + 1),))
    expect_trees(arrays, "tree", n_iter * k, max_nodes)
    expect_bin_mapper(arrays, fitted, n_features, est.max_bins)
    return n_iter, k, max_nodes


def load(est, fitted, arrays, planned):
    from .._categorical import category_counts

    n_iter, k, max_nodes = planned
    n_features = est.n_features_in_
    n_eras = read_int(fitted, "n_eras_", 1, est._fit_signature[0])
    if (fitted["eras_"] is None) != (est._fit_signature[1] is None):
        refuse("eras_ and fit_signature disagree about the eras")
    load_eras(est, fitted, n_eras)
    seed = read_int(fitted, "random_seed", 0, 2**32 - 1)
    est._random_seed = np.uint64(seed)
    est._feature_subsample_rng = read_rng(fitted, "feature_subsample_rng")
    est._tree_sample_rng = read_rng(fitted, "tree_sample_rng")
    est.do_early_stopping_ = read_bool(fitted, "do_early_stopping_")
    est._use_validation_data = read_bool(fitted, "use_validation_data")
    best = fitted.get("best_iteration_")
    if best is not None:
        est.best_iteration_ = read_int(fitted, "best_iteration_", 1, n_iter)
    # the loss from the parameters and the classes, never from the file
    est._loss = est._get_loss(sample_weight=None)
    est._scorer = None

    is_categorical = fitted.get("is_categorical_")
    if is_categorical is None:
        if fitted.get("categories") is not None:
            refuse("categories are set but is_categorical_ is null")
        est.is_categorical_ = None
        est._preprocessor = None
        est._n_categories = np.zeros(0, dtype=np.int64)
        mask = np.zeros(n_features, dtype=bool)
    else:
        if not (
            isinstance(is_categorical, list)
            and len(is_categorical) == n_features
            and all(type(b) is bool for b in is_categorical)
            and any(is_categorical)
        ):
            refuse("is_categorical_ must be n_features_in_ booleans, one of them true")
        est.is_categorical_ = np.array(is_categorical, dtype=bool)
        n_cat = int(est.is_categorical_.sum())
        categories = fitted.get("categories")
        if not (isinstance(categories, list) and len(categories) == n_cat):
            refuse(
                f"categories must list the categories of the {n_cat} categorical "
                "features"
            )
        categories = [
            _decode_categories(c, f"categories[{i}]", est.max_bins)
            for i, c in enumerate(categories)
        ]
        est._preprocessor = rebuild_encoder(
            est.is_categorical_, categories, getattr(est, "feature_names_in_", None)
        )
        try:
            est._n_categories = category_counts(
                est._preprocessor, est.is_categorical_, est.max_bins
            )
        except ValueError as exc:
            refuse(str(exc))
        mask = np.arange(n_features) < n_cat

    est._baseline_prediction = arrays["baseline"]
    if not np.isfinite(est._baseline_prediction).all():
        refuse("_baseline_prediction is not finite")
    est.train_score_ = arrays["train_score"]
    est.validation_score_ = arrays["validation_score"]
    est._bin_mapper = load_bin_mapper(
        arrays, fitted["bin_mapper_is_integer"], mask, est.max_bins
    )
    for f, count in enumerate(est._n_categories):
        if not np.array_equal(est._bin_mapper.bin_thresholds_[f], np.arange(count)):
            refuse(
                f"the bin thresholds of the categorical feature {f} are not its "
                "categories"
            )
    # joined arrays: no Python object per tree until one is asked for
    est._predictors = load_tree_stages(
        arrays, "tree", max_nodes, est.max_depth, "the trees", k
    )
    return est


def finish(est):
    """After the checks: the sum of the leaf values along any path is finite
    (and its exp() under a log link)."""
    trees = est._predictors  # the TreeStages that load made
    log_link = not hasattr(est, "classes_") and est.loss in ("poisson", "gamma")
    k = est.n_trees_per_iteration_
    check_sums(trees, k, est._baseline_prediction[0], log_link)


def _decode_categories(value, where, max_bins):
    """One feature's categories: at most ``max_bins``, and the missing
    values None and NaN."""
    values = decode_labels(
        value, where, max_bins + 2, f"max_bins={max_bins} allows at most {max_bins}"
    )
    n = sum(
        1
        for v in values.tolist()
        if not (v is None or (isinstance(v, float) and math.isnan(v)))
    )
    if n > max_bins:
        refuse(
            f"{where} holds {n} categories; max_bins={max_bins} allows at most "
            f"{max_bins}"
        )
    return values


def rebuild_encoder(is_categorical, categories, feature_names):
    """The fitted encoder of categorical features, fitted again on rows made
    of the recorded categories; refused unless it finds them exactly."""
    from .._categorical import make_encoder

    n_rows = max([1, *(c.size for c in categories)])
    cells = n_rows * len(is_categorical)
    if cells > MAX_ENCODER_CELLS:
        refuse(
            f"rebuilding its encoder of categorical features takes {n_rows} rows "
            f"of its {len(is_categorical):,} features ({cells:,} values); at most "
            f"{MAX_ENCODER_CELLS:,} are made"
        )
    columns = []
    cat = iter(categories)
    for is_cat in is_categorical:
        if not is_cat:
            columns.append(np.zeros(n_rows))
            continue
        values = next(cat)
        column = np.empty(n_rows, dtype=values.dtype)
        if values.size == 0:
            if values.dtype.kind not in "fO":
                refuse("a categorical feature without categories")
            column[:] = np.nan
        else:
            column[: values.size] = values
            column[values.size :] = values[-1]
        columns.append(column)
    if feature_names is not None:
        try:
            import pandas as pd
        except ImportError:
            refuse("this model's encoder of categorical features needs pandas")
        X = pd.DataFrame(dict(zip(feature_names, columns)))
    elif all(c.dtype.kind == "f" for c in columns):
        X = np.column_stack(columns)
    else:
        X = np.empty((n_rows, len(columns)), dtype=object)
        for j, column in enumerate(columns):
            X[:, j] = column
    encoder = make_encoder(is_categorical)
    try:
        encoder.fit(X)
    except Exception as exc:
        refuse(
            "the encoder of categorical features cannot be rebuilt "
            f"({type(exc).__name__}: {exc})"
        )
    found = encoder.named_transformers_["encoder"].categories_
    if len(found) != len(categories) or not all(
        same_labels(a, b) for a, b in zip(found, categories)
    ):
        refuse("the categories of a categorical feature are not sorted and distinct")
    return encoder


def check(est, is_classifier):
    """The fitted state that predict relies on (``_model_checks``)."""
    from .._model_checks import check_booster

    check_booster(est, is_classifier)
