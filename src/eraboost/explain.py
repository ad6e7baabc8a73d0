"""SHAP for eraboost models, through shap's own description of tree models.

:func:`to_shap` writes a fitted booster as the dictionary that
``shap.TreeExplainer`` reads for custom tree ensembles (``{"trees": [...],
"base_offset": ...}``, each tree as arrays ``children_left``,
``children_right``, ``children_default``, ``features``, ``thresholds``,
``values``, ``node_sample_weight``). TreeSHAP itself is shap's: nothing of
it is reimplemented here, and this module does not import shap.
"""

import numpy as np
from sklearn.utils.validation import check_is_fitted

__all__ = ["to_shap"]


def _tree_dict(nodes, k, n_outputs):
    """One tree in shap's format; its values in output column ``k``."""
    n = nodes.shape[0]
    is_leaf = nodes["is_leaf"].astype(bool)
    left = np.where(is_leaf, -1, nodes["left"].astype(np.int64))
    right = np.where(is_leaf, -1, nodes["right"].astype(np.int64))
    default = np.where(nodes["missing_left"].astype(bool), left, right)
    count = nodes["count"].astype(np.float64)
    # leaves hold the (shrunk) leaf values; an internal node the mean of its
    # leaves weighted by training rows, which shap reads at the root as the
    # tree's expected value
    value = np.where(is_leaf, nodes["value"], 0.0)
    internal = np.flatnonzero(~is_leaf)
    depth = nodes["depth"][internal]
    for d in np.unique(depth)[::-1]:
        at = internal[depth == d]
        lo, ro = nodes["left"][at], nodes["right"][at]
        value[at] = (value[lo] * count[lo] + value[ro] * count[ro]) / count[at]
    values = np.zeros((n, n_outputs))
    values[:, k] = value
    return {
        "children_left": left.astype(np.int32),
        "children_right": right.astype(np.int32),
        "children_default": default.astype(np.int32),
        "features": np.where(is_leaf, -2, nodes["feature"]).astype(np.int32),
        "thresholds": np.where(is_leaf, 0.0, nodes["threshold"]).astype(np.float64),
        "values": values,
        "node_sample_weight": count,
    }


def to_shap(estimator):
    """A fitted booster in shap's input format for tree models.

    ``shap.TreeExplainer(to_shap(est))`` explains the model's raw output:
    for every row, the SHAP values plus the explainer's ``expected_value``
    add up to ``est``'s raw prediction: ``predict`` of a regressor with the
    identity link (squared, absolute error, quantile), the log of
    ``predict`` with ``loss="poisson"`` or ``"gamma"``, and
    ``decision_function`` of a classifier (one output per class with more
    than two classes). Pass the rows to explain as a float array or
    DataFrame with the columns of ``fit``; NaN marks a missing value and
    follows each split's missing-value side, as in ``predict``.

    The path-dependent TreeSHAP (the default without background data)
    weighs the branches by the training rows that reached each node
    (``node_sample_weight``) and works in float64: SHAP values plus
    ``expected_value`` match the raw prediction to rounding. With
    background data (``feature_perturbation="interventional"``) shap uses
    those rows instead, and its interventional algorithm holds thresholds
    and sums in float32: on integer features (thresholds such as 1.5) the
    sums still match to about 1e-6, but a float feature's value lying
    within float32 rounding of a threshold can be sent to the other side
    than ``predict`` sends it (shap's additivity check then fails for
    that row).

    Parameters
    ----------
    estimator : fitted eraboost HistGradientBoostingRegressor or \
            HistGradientBoostingClassifier
        A model fitted without categorical features: a categorical split
        sends a set of categories left, which shap's threshold trees cannot
        express. Fit with ``categorical_features=None`` (the ordinal codes
        then split as numbers) to explain such a model.

    Returns
    -------
    model : dict
        ``{"trees": [...], "base_offset": ..., "tree_output": ...,
        "input_dtype": np.float64, "internal_dtype": np.float64}``, one
        entry per tree in boosting order. Its values are copies: the
        estimator is not changed.

    Examples
    --------
    >>> import numpy as np
    >>> import shap
    >>> from eraboost import HistGradientBoostingRegressor, to_shap
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(500, 3))
    >>> y = X[:, 0] - 2 * X[:, 1] + rng.normal(size=500)
    >>> est = HistGradientBoostingRegressor(max_iter=20).fit(X, y)
    >>> explainer = shap.TreeExplainer(to_shap(est))
    >>> sv = explainer.shap_values(X[:5])
    >>> bool(np.allclose(sv.sum(1) + explainer.expected_value, est.predict(X[:5])))
    True
    """
    check_is_fitted(estimator, "_predictors")
    if getattr(estimator, "is_categorical_", None) is not None:
        raise ValueError(
            "to_shap cannot describe a model with categorical features: a "
            "categorical split sends a set of categories left, and shap's "
            "tree format has threshold splits only. Fit with "
            "categorical_features=None to explain the model with SHAP."
        )
    K = estimator.n_trees_per_iteration_
    trees = [
        _tree_dict(predictor.nodes, k, K)
        for iteration in estimator._predictors
        for k, predictor in enumerate(iteration)
    ]
    baseline = np.asarray(estimator._baseline_prediction, dtype=np.float64).ravel()
    if not hasattr(estimator, "classes_"):
        tree_output = "raw_value"
    else:
        # binary: log-odds; multiclass: softmax scores, which shap has no
        # name for (it then explains model_output="raw" only)
        tree_output = "log_odds" if K == 1 else None
    return {
        "trees": trees,
        "base_offset": float(baseline[0]) if K == 1 else baseline.copy(),
        "tree_output": tree_output,
        "input_dtype": np.float64,
        "internal_dtype": np.float64,
    }
