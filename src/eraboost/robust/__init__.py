"""Optimal classification trees robust to distribution shifts.

- ``_tree.py``: the estimator, :class:`RobustTreeClassifier`;
- ``_solver.py``: its candidate thresholds, the adversary (pessimisation)
  and the MILP main problems of the constraint generation;
- ``_calibration.py``: :func:`calibrate_costs_budget`, costs and a budget
  from a probability that an entry is unshifted.

See ``docs/robust.md``.
"""

from ._calibration import calibrate_costs_budget
from ._tree import RobustTreeClassifier

__all__ = ["RobustTreeClassifier", "calibrate_costs_budget"]
