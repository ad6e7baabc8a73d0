"""Optimal classification trees robust to distribution shifts.

This module implements the method of Justin, Aghaei, Gómez and Vayanos,
"Learning Optimal Classification Trees Robust to Distribution Shifts":
a classification tree of bounded depth is chosen to maximise the number of
training samples that stay correctly classified under the *worst* admissible
integer shift of the features,

.. math::

    \\max_{\\pi} \\min_{\\xi \\in \\Xi} \\sum_i \\mathbb{1}[\\pi(x^i + \\xi^i) = y^i],
    \\qquad
    \\Xi = \\{\\xi \\in \\mathbb{Z}^{n \\times p} :
             \\sum_{i,f} \\gamma^i_f |\\xi^i_f| \\le \\epsilon\\}.

The problem is solved exactly by delayed constraint generation with the free
MILP solver HiGHS (through :func:`scipy.optimize.milp`): a main problem over
the tree variables is solved, the candidate tree is *pessimised* (for every
sample the cheapest perturbation that sends it to a wrongly labelled leaf is
found by inspecting the root-to-leaf paths, and the adversary spends the
budget on the cheapest samples first), and a cut describing that worst-case
shift is added until no violated cut remains.

The main problem is written in a lifted space (section 3.3 of the paper: a
cut in an extended space is a stronger cut in the original one): over
subtree choices for shallow trees, else with one "is correctly classified"
indicator per distinct (point, label) pair bounded by a max-flow (strong)
formulation of the tree.

The solver lives in :mod:`eraboost.robust._solver`, the calibration in
:mod:`eraboost.robust._calibration`. :func:`calibrate_costs_budget` turns a
probability that an entry is unshifted and a likelihood-ratio threshold into
costs and a budget (section 4).
"""

import time
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context, clone
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .._feature_names import validate_data
from ._calibration import calibrate_costs_budget
from ._solver import (
    FlowMainProblem,
    SubtreeMainProblem,
    apply_tree,
    candidate_splits,
    constraint_generation,
    pessimise,
)

__all__ = ["RobustTreeClassifier", "calibrate_costs_budget"]

SHIFTS = ("both", "increase", "decrease")
# largest number of subtree variables for which the extended main problem is
# used; beyond it (deep trees, many thresholds) the flow formulation is used
_MAX_EXTENDED_VARS = 400_000


class RobustTreeClassifier(ClassifierMixin, BaseEstimator):
    """Optimal classification tree robust to integer distribution shifts.

    Learns the tree of depth at most ``max_depth`` that maximises the number
    of training samples correctly classified under the worst shift
    ``x^i_f -> x^i_f + xi^i_f`` (integer ``xi``) with total cost
    ``sum_{i,f} costs[i, f] * |xi^i_f| <= budget`` (Justin, Aghaei, Gómez
    and Vayanos). Solved to proven optimality by constraint generation with
    HiGHS (:func:`scipy.optimize.milp`). With ``budget=0`` this is the
    nominal optimal tree (maximum training accuracy).

    Parameters
    ----------
    max_depth : int, default=2
        Maximum depth of the tree, between 1 and 4.
    budget : float, default=0.0
        Budget ``epsilon`` of the uncertainty set (non-negative).
    costs : float or array-like of shape (n_features,) or \
            (n_samples, n_features), default=1.0
        Cost ``gamma`` of shifting an entry by one unit (non-negative; ``inf``
        means the entry cannot shift). See :func:`calibrate_costs_budget`.
    shift : {"both", "increase", "decrease"} or list of those, default="both"
        Admissible direction of the shift, for all features or per feature
        (section 5.1). Ignored for columns of categorical groups.
    categorical_groups : list of list of int, default=None
        Column indices of one-hot encoded categorical features. A shift of a
        group moves its single 1 to another column of the group at cost
        ``costs[old] + costs[new]`` (section 5.2).
    time_limit : float, default=600.0
        Wall-clock limit in seconds for the whole constraint generation.
        When reached, the best tree found so far is kept and ``gap_`` reports
        the remaining optimality gap.
    random_state : int, RandomState instance or None, default=None
        Accepted for API compatibility and currently unused: the solve is
        deterministic (:func:`scipy.optimize.milp` does not expose the random
        seed of HiGHS).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    n_features_in_ : int
        Number of features seen during fit.
    tree_features_ : ndarray of shape (2**max_depth - 1,)
        Feature tested at each internal node of the full tree (BFS order).
    tree_thresholds_ : ndarray of shape (2**max_depth - 1,)
        Threshold: a sample goes right when ``x[feature] > threshold``.
    leaf_values_ : ndarray of shape (2**max_depth,)
        Index into ``classes_`` predicted at each leaf.
    leaf_proba_ : ndarray of shape (2**max_depth, n_classes)
        Class shares of the (unshifted) training samples reaching each leaf
        (the leaf's predicted class when no sample reaches it).
    solver_status_ : str
        ``"optimal"`` or ``"time_limit"``.
    gap_ : float
        Relative optimality gap ``(upper - lower) / upper`` on the worst-case
        count (0 when proven optimal).
    worst_case_accuracy_ : float
        Training accuracy under the worst admissible shift.
    nominal_accuracy_ : float
        Training accuracy without shift.
    n_cuts_ : int
        Number of cuts added by the constraint generation.
    n_iterations_ : int
        Number of main problems solved.
    solve_time_ : float
        Wall-clock time of the solve in seconds.
    formulation_ : str
        Main problem used: ``"subtree"`` (extended formulation over subtree
        choices, used while it has at most 400,000 variables) or ``"flow"``
        (max-flow formulation, e.g. for depth 4).

    Notes
    -----
    Features must be integer valued. Candidate thresholds come from the
    distinct training values of each feature: between two consecutive
    values, the integers within reach of a shift of either value (the
    budget over the smallest positive cost) and a few around the midpoint,
    so the problem grows with the number of distinct values and the reach,
    not with the range of the values. Trees are represented as full binary
    trees of depth ``max_depth``; subtrees whose leaves all predict the same
    class are collapsed in :meth:`export_text` (this does not change
    predictions, hence neither the nominal nor the worst-case count).

    ``predict`` returns the label chosen by the optimisation, which can
    differ from the argmax of ``predict_proba`` (the empirical class shares
    of the leaf) when robustness favours another label.

    Examples
    --------
    >>> import numpy as np
    >>> from eraboost.robust import RobustTreeClassifier
    >>> X = np.array([[0, 1], [1, 1], [2, 0], [3, 0], [4, 1], [5, 0]])
    >>> y = np.array([0, 0, 0, 1, 1, 1])
    >>> clf = RobustTreeClassifier(max_depth=1, budget=1.0, costs=1.0).fit(X, y)
    >>> clf.nominal_accuracy_, clf.worst_case_accuracy_
    (1.0, 0.8333333333333334)
    """

    _parameter_constraints: dict = {
        "max_depth": [Interval(Integral, 1, 4, closed="both")],
        "budget": [Interval(Real, 0, None, closed="left")],
        "costs": ["array-like", Real],
        "shift": [StrOptions(set(SHIFTS)), list, tuple],
        "categorical_groups": [list, tuple, None],
        "time_limit": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        max_depth=2,
        budget=0.0,
        costs=1.0,
        shift="both",
        categorical_groups=None,
        time_limit=600.0,
        random_state=None,
    ):
        self.max_depth = max_depth
        self.budget = budget
        self.costs = costs
        self.shift = shift
        self.categorical_groups = categorical_groups
        self.time_limit = time_limit
        self.random_state = random_state

    def _shift_set(self, n_samples, n_features):
        """The uncertainty set of the parameters, checked against the data.

        Parameters
        ----------
        n_samples, n_features : int
            Shape of ``X``.

        Returns
        -------
        budget : float
        costs : ndarray of shape (n_samples, n_features)
        allow_up, allow_down : ndarray of bool, shape (n_features,)
            Directions each feature may move in.
        groups : list of list of int
            One-hot categorical groups.
        """
        budget = float(self.budget)
        costs = np.asarray(self.costs, dtype=float)
        expected = (
            f"costs has shape {costs.shape}; expected a scalar, "
            f"({n_features},) or ({n_samples}, {n_features})"
        )
        if costs.ndim == 0:
            costs = np.full((n_samples, n_features), float(costs))
        elif costs.ndim == 1 and costs.shape[0] == n_features:
            costs = np.tile(costs, (n_samples, 1))
        elif costs.ndim == 2 and costs.shape == (n_samples, n_features):
            costs = costs.copy()
        else:
            raise ValueError(expected)
        if np.any(np.isnan(costs)) or np.any(costs < 0):
            raise ValueError("costs must be non-negative (inf allowed)")
        shift = self.shift
        if isinstance(shift, str):
            shift = [shift] * n_features
        shift = list(shift)
        if len(shift) != n_features:
            raise ValueError(
                f"shift must be a string or a list of {n_features} strings"
            )
        for s in shift:
            if s not in SHIFTS:
                raise ValueError(f"shift entries must be one of {SHIFTS}, got {s!r}")
        allow_up = np.array([s in ("both", "increase") for s in shift])
        allow_down = np.array([s in ("both", "decrease") for s in shift])
        groups = []
        seen = set()
        for g in self.categorical_groups or []:
            g = [int(c) for c in g]
            if len(g) < 2:
                raise ValueError("each categorical group needs at least 2 columns")
            for c in g:
                if not 0 <= c < n_features:
                    raise ValueError(f"categorical column {c} out of range")
                if c in seen:
                    raise ValueError(
                        f"column {c} is in more than one categorical group"
                    )
                seen.add(c)
            groups.append(g)
        return budget, costs, allow_up, allow_down, groups

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the robust optimal tree.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Integer-valued features (categorical features one-hot encoded and
            declared in ``categorical_groups``).
        y : array-like of shape (n_samples,)
            Class labels.

        Returns
        -------
        self : RobustTreeClassifier
            Fitted estimator.
        """
        t0 = time.perf_counter()
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        if not np.all(np.isfinite(X)) or np.any(np.round(X) != X):
            raise ValueError(
                "RobustTreeClassifier requires integer-valued features "
                "(X contains non-integer values)"
            )
        n, p = X.shape
        budget, costs, allow_up, allow_down, groups = self._shift_set(n, p)
        for g in groups:
            Xg = X[:, g]
            if not (np.all((Xg == 0) | (Xg == 1)) and np.all(Xg.sum(axis=1) == 1)):
                raise ValueError(
                    f"categorical group {g} is not one-hot encoded "
                    "(each row needs exactly one 1)"
                )
        self.classes_, y_enc = np.unique(y, return_inverse=True)
        K = len(self.classes_)
        depth = self.max_depth
        Xz, sf, st, st_x = candidate_splits(X, costs, budget, depth)
        if sf.size == 0 or K == 1:
            # nothing to split on: a constant tree
            cls = np.bincount(y_enc, minlength=K).argmax()
            self._set_tree(
                np.zeros(2**depth - 1, dtype=np.int64),
                np.full(2**depth - 1, np.inf),
                np.full(2**depth, cls),
                X,
                y_enc,
            )
            n_worst = int(np.sum(y_enc == cls))
            self._finish(n_worst, n_worst, n, "optimal", 0.0, 0, 0, t0)
            return self

        n_ext = (2 * len(sf)) ** (depth - 1) * len(sf) * K * K
        if n_ext <= _MAX_EXTENDED_VARS:
            main = SubtreeMainProblem(depth, sf, st, K)
            self.formulation_ = "subtree"
        else:
            main = FlowMainProblem(depth, sf, st, K)
            self.formulation_ = "flow"
        remaining = float(self.time_limit) - (time.perf_counter() - t0)
        best, status, gap, n_cuts, n_iter = constraint_generation(
            main,
            Xz,
            y_enc,
            depth,
            costs,
            budget,
            allow_up,
            allow_down,
            groups,
            remaining,
        )
        n_worst, n_nom, feat, thr, leaf_cls = best
        # the thresholds on the compressed features, back on X
        on_x = {(f, t): tx for f, t, tx in zip(sf.tolist(), st.tolist(), st_x)}
        thr_x = [on_x[(f, t)] for f, t in zip(feat.tolist(), thr.tolist())]
        self._set_tree(feat, thr_x, leaf_cls, X, y_enc)
        self._finish(n_worst, n_nom, n, status, gap, n_cuts, n_iter, t0)
        return self

    def _set_tree(self, feat, thr, leaf_cls, X, y_enc):
        """Store the tree and the class shares of its leaves on ``X``."""
        depth = self.max_depth
        self.tree_features_ = np.asarray(feat, dtype=np.int64)
        self.tree_thresholds_ = np.asarray(thr, dtype=np.float64)
        self.leaf_values_ = np.asarray(leaf_cls, dtype=np.int64)
        K = len(self.classes_)
        leaves = apply_tree(X, depth, self.tree_features_, self.tree_thresholds_)
        counts = np.zeros((2**depth, K))
        np.add.at(counts, (leaves, y_enc), 1.0)
        proba = np.zeros_like(counts)
        tot = counts.sum(axis=1)
        has = tot > 0
        proba[has] = counts[has] / tot[has, None]
        proba[~has, self.leaf_values_[~has]] = 1.0
        self.leaf_proba_ = proba

    def _finish(self, n_worst, n_nom, n, status, gap, n_cuts, n_iter, t0):
        """Store the solve's outcome."""
        self.worst_case_accuracy_ = n_worst / n
        self.nominal_accuracy_ = n_nom / n
        self.solver_status_ = status
        self.gap_ = float(gap)
        self.n_cuts_ = int(n_cuts)
        self.n_iterations_ = int(n_iter)
        self.solve_time_ = time.perf_counter() - t0

    def apply(self, X):
        """Index of the leaf (0-based, left to right) reached by each sample.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.

        Returns
        -------
        leaves : ndarray of shape (n_samples,)
            Leaf index of each sample.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return apply_tree(X, self.max_depth, self.tree_features_, self.tree_thresholds_)

    def predict(self, X):
        """Predict class labels.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Predicted labels.
        """
        check_is_fitted(self)
        return self.classes_[self.leaf_values_[self.apply(X)]]

    def predict_proba(self, X):
        """Class shares of the training samples in the leaf of each sample.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Features.

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
            Class shares, in the order of ``classes_``.
        """
        check_is_fitted(self)
        return self.leaf_proba_[self.apply(X)]

    def worst_case_score(self, X, y, budget=None, costs=None):
        """Accuracy of the fitted tree under the worst admissible shift.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Integer features.
        y : array-like of shape (n_samples,)
            True labels.
        budget : float, default=None
            Budget of the shift (defaults to the fitted ``budget``).
        costs : float or array-like, default=None
            Costs (defaults to the fitted ``costs`` when their shape allows).

        Returns
        -------
        score : float
            Share of the samples correctly classified after the shift.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        y = np.asarray(y)
        n, p = X.shape
        est = self
        if budget is not None or costs is not None:
            est = clone(self)
            if budget is not None:
                est.budget = budget
            if costs is not None:
                est.costs = costs
            est._validate_params()
        b, c, up, down, groups = est._shift_set(n, p)
        known = np.isin(y, self.classes_)
        y_enc = np.where(known, np.searchsorted(self.classes_, y), -1)
        n_worst, *_ = pessimise(
            X,
            y_enc,
            self.max_depth,
            self.tree_features_,
            self.tree_thresholds_,
            self.leaf_values_,
            c,
            b,
            up,
            down,
            groups,
        )
        return n_worst / n

    def export_text(self, feature_names=None, decimals=2):
        """Text rendering of the tree (uniform subtrees collapsed).

        Parameters
        ----------
        feature_names : list of str, default=None
            Names of the features, one per feature (``feature_names_in_``
            or ``x[j]`` otherwise).
        decimals : int, default=2
            Decimals of the leaf class shares.

        Returns
        -------
        text : str
            One line per test or leaf, indented by depth.
        """
        check_is_fitted(self)
        if feature_names is None:
            names = getattr(self, "feature_names_in_", None)
            feature_names = (
                [str(s) for s in names]
                if names is not None
                else [f"x[{j}]" for j in range(self.n_features_in_)]
            )
        elif len(feature_names) != self.n_features_in_:
            raise ValueError(
                f"feature_names has {len(feature_names)} names; the tree was "
                f"fitted on {self.n_features_in_} features"
            )
        depth = self.max_depth
        n_leaves = 2**depth
        lines = []

        def leaf_range(node):
            lo_, hi_ = node, node
            while lo_ < n_leaves:
                lo_, hi_ = 2 * lo_, 2 * hi_ + 1
            return lo_ - n_leaves, hi_ - n_leaves

        def rec(node, indent):
            a, b = leaf_range(node)
            vals = self.leaf_values_[a : b + 1]
            if node >= n_leaves or np.all(vals == vals[0]):
                if node >= n_leaves:
                    shares = self.leaf_proba_[node - n_leaves]
                    share_txt = ", ".join(
                        f"{c}: {s:.{decimals}f}" for c, s in zip(self.classes_, shares)
                    )
                    lines.append(
                        f"{indent}predict {self.classes_[vals[0]]}"
                        f"  (training shares {share_txt})"
                    )
                else:
                    lines.append(f"{indent}predict {self.classes_[vals[0]]}")
                return
            f = self.tree_features_[node - 1]
            th = self.tree_thresholds_[node - 1]
            th_txt = f"{th:g}"
            lines.append(f"{indent}if {feature_names[f]} <= {th_txt}:")
            rec(2 * node, indent + "    ")
            lines.append(f"{indent}else:  # {feature_names[f]} > {th_txt}")
            rec(2 * node + 1, indent + "    ")

        rec(1, "")
        return "\n".join(lines)
