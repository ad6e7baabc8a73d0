"""Looking inside fitted era-aware models."""

import numpy as np
from sklearn.utils.validation import check_is_fitted


def split_feature_shares(estimator, weighted=False):
    """Share of the splits of a fitted booster made on each feature.

    Parameters
    ----------
    estimator : fitted eraboost gradient boosting estimator
    weighted : bool, default=False
        False: each split node counts once. True: each split node counts
        its share of the training rows, ``n_m / n`` (the split-frequency
        importance of the Invariant Random Forest paper, section 5.2).

    Returns
    -------
    shares : ndarray of shape (n_features_in_,)
        Non-negative, summing to 1 (all zeros when no tree has a split).
    """
    check_is_fitted(estimator, "_predictors")
    totals = np.zeros(estimator.n_features_in_)
    for iteration in estimator._predictors:
        for predictor in iteration:
            nodes = predictor.nodes
            split = nodes[nodes["is_leaf"] == 0]
            if split.size == 0:
                continue
            weight = (
                split["count"] / nodes[0]["count"] if weighted else np.ones(split.size)
            )
            np.add.at(totals, split["feature"], weight)
    total = totals.sum()
    return totals / total if total > 0 else totals
