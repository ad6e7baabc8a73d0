"""scikit-learn's common estimator checks."""
from sklearn.utils.estimator_checks import parametrize_with_checks

from eraboost import HistGradientBoostingRegressor

# Every check runs; none is skipped.
EXPECTED_FAILED_CHECKS = {}


@parametrize_with_checks(
    [HistGradientBoostingRegressor(max_iter=10),
     HistGradientBoostingRegressor(max_iter=10, split_type="era")],
    expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS,
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
