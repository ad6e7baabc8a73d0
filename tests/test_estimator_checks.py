"""scikit-learn's common estimator checks."""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from eraboost import (
    EraEnsembleClassifier,
    EraEnsembleRegressor,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    InvariantForestClassifier,
    InvariantForestRegressor,
)

# No check of the boosters is expected to fail. scikit-learn itself skips its
# array-API input checks (check_array_api_input) unless SCIPY_ARRAY_API=1 is
# set; eraboost does not claim array-API support, so those skips are expected.
EXPECTED_FAILED_CHECKS = {}
# The forests draw bootstrap samples, so an integer weight is not the same
# as repeated rows; scikit-learn's own forests fail this check for the same
# reason.
FOREST_FAILED_CHECKS = {
    "check_sample_weight_equivalence_on_dense_data": (
        "bootstrap sampling: a weight of 2 is not two copies of a row"
    ),
}


def expected_failed_checks(estimator):
    if type(estimator).__name__.startswith("InvariantForest"):
        return FOREST_FAILED_CHECKS
    return EXPECTED_FAILED_CHECKS


def listed(mark):
    """The checks of ``parametrize_with_checks`` as a list: scikit-learn 1.7
    hands pytest a generator, which pytest 9 warns about."""
    names, values = mark.args
    return pytest.mark.parametrize(names, list(values), **mark.kwargs)


@listed(
    parametrize_with_checks(
        [
            HistGradientBoostingRegressor(max_iter=10),
            HistGradientBoostingRegressor(max_iter=10, split_type="era"),
            HistGradientBoostingClassifier(max_iter=10),
            HistGradientBoostingClassifier(max_iter=10, split_type="directional"),
            HistGradientBoostingRegressor(
                max_iter=30, colsample_bytree=0.5, subsample=0.8
            ),
            HistGradientBoostingClassifier(
                max_iter=30, colsample_bytree=0.5, subsample=0.8
            ),
            InvariantForestRegressor(n_estimators=5),
            InvariantForestRegressor(n_estimators=5, split_type="era", irf_penalty=1.0),
            InvariantForestClassifier(n_estimators=5),
            InvariantForestClassifier(n_estimators=5, irf_penalty=1.0),
            EraEnsembleRegressor(
                [
                    ("original", HistGradientBoostingRegressor(max_iter=10)),
                    (
                        "directional",
                        HistGradientBoostingRegressor(
                            max_iter=10, split_type="directional", irf_penalty=1.0
                        ),
                    ),
                ]
            ),
            EraEnsembleClassifier(
                [
                    ("original", HistGradientBoostingClassifier(max_iter=10)),
                    (
                        "era",
                        HistGradientBoostingClassifier(max_iter=10, split_type="era"),
                    ),
                ],
                weights=(1, 2),
            ),
        ],
        expected_failed_checks=expected_failed_checks,
    )
)
# the checks fit without eras: the era options' warning is expected there
# (tests/test_era_options.py asserts it)
@pytest.mark.filterwarnings("ignore:.*given without eras:UserWarning")
# check_classifiers_one_label fits one class on purpose; tests/test_messages.py
# asserts the constant target's warning
@pytest.mark.filterwarnings("ignore:y holds a single class:UserWarning")
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
