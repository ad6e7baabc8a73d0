"""scikit-learn's common estimator checks."""
from sklearn.utils.estimator_checks import parametrize_with_checks

from eraboost import HistGradientBoostingClassifier, HistGradientBoostingRegressor

# No check is expected to fail. scikit-learn itself skips its array-API input
# checks (check_array_api_input) unless SCIPY_ARRAY_API=1 is set; eraboost
# does not claim array-API support, so those two skips are expected.
EXPECTED_FAILED_CHECKS = {}


@parametrize_with_checks(
    [HistGradientBoostingRegressor(max_iter=10),
     HistGradientBoostingRegressor(max_iter=10, split_type="era"),
     HistGradientBoostingClassifier(max_iter=10),
     HistGradientBoostingClassifier(max_iter=10, split_type="directional")],
    expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS,
)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
