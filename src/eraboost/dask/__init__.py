"""One model across a Dask cluster, whole eras on each worker.

:class:`DaskHistGradientBoostingRegressor` and
:class:`DaskHistGradientBoostingClassifier` (docs/distributed.md). Needs
``dask[distributed]``: ``pip install "eraboost[dask]"``.
"""

try:
    import dask  # noqa: F401
    import distributed  # noqa: F401
except ImportError:  # pragma: no cover - the message is the point
    raise ImportError(
        'eraboost.dask needs dask and distributed: pip install "eraboost[dask]"'
    ) from None

from .estimators import (
    DaskHistGradientBoostingClassifier,
    DaskHistGradientBoostingRegressor,
)

__all__ = ["DaskHistGradientBoostingClassifier", "DaskHistGradientBoostingRegressor"]
