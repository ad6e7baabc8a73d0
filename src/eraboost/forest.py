"""Forests of invariant trees: the Invariant Random Forest and the Time Robust
Forest on the histogram engine.

Each tree is grown by the booster's own engine (``grower.TreeGrower`` with
the ``_splitting.Splitter`` criteria), fully and depth first, on one
bootstrap sample drawn separately within each era (Liao et al., section 4.3):

- regression: gradients ``-w (y - m)`` and hessians ``w`` (``w`` the
  bootstrap count times the sample weight, ``m`` the sample's weighted mean),
  so that a split's gain is the decrease of the weighted squared error and a
  leaf's value ``m - G/H`` is the mean target of its rows: a CART regression
  tree, and the invariance penalty of docs/criteria.md is the IRF paper's eq. 20-22
  (``irf_penalty`` is its lambda);
- binary classification: gradients ``-w y`` (``y`` in {0, 1}) and hessians
  ``w``: the gain is ``H / 2`` times the decrease of weighted Gini impurity,
  a leaf's value is the share of the positive class, and the penalty is the
  paper's changing-rate ratio ``max_e I_e / min_e I_e - 1`` (eq. 16-19),
  scaled by ``H / 2`` so that ``irf_penalty`` is its lambda on the Gini
  scale (eq. 15).

``split_type``, ``boltzmann_alpha`` and ``min_samples_leaf_per_era`` act as
in the booster; ``split_type="era", boltzmann_alpha=-np.inf`` with
``min_samples_leaf_per_era`` is the Time Robust Forest (Moneda and Mauá).
"""

import math
import warnings
from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.metrics import accuracy_score, r2_score
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import (
    _check_sample_weight,
    check_is_fitted,
)

from ._engine._common import G_DTYPE, SPLIT_TYPES
from ._engine._openmp import effective_n_threads, warn_if_serial
from ._engine.binning import INT_DTYPES, BinMapper
from ._engine.engine import IRF_VARIANCES, EngineSettings, build_engine
from ._engine.grower import TreeGrower
from ._engine.predictor import sum_tree_predictions
from ._eras import (
    EncodedEras,
    check_boltzmann_alpha,
    era_options_text,
    group_eras,
    label_list,
    warn_single_era,
    warn_unsplittable_eras,
)
from ._feature_names import validate_data
from .inspection import feature_importances, split_frequency_importances

MAX_INT = np.iinfo(np.int32).max
# gradients and hessians are float32 (G_DTYPE): targets and weights above
# 2**SCALE_EXP are scaled down by a power of two, exactly, so that every
# w * (y - m) stays finite; leaf values are scaled back.
SCALE_EXP = 56


def power_of_two_exponent(values):
    """Exponent ``k`` with ``max |values| / 2**k <= 2**SCALE_EXP``; 0 when
    ``values`` already lie within ``2**SCALE_EXP``.

    Parameters
    ----------
    values : ndarray of float64

    Returns
    -------
    k : int
    """
    top = float(np.max(np.abs(values))) if values.size else 0.0
    if top <= 2.0**SCALE_EXP:
        return 0
    return int(np.frexp(top)[1]) - SCALE_EXP


class _ScaledProblem:
    """A forest's target and sample weights, scaled by powers of two, and
    the gradient and hessian arrays the engine reads.

    Parameters
    ----------
    target : ndarray of float64 (n_samples,)
        Scaled by ``2**-target_exp``.
    target_exp : int
    weights : ndarray of float64 (n_samples,)
        The sample weights, scaled by a power of two.
    centred : bool
        Gradients around the tree's weighted mean target (regression) or
        around 0 (classification).
    """

    def __init__(self, target, target_exp, weights, centred):
        self.target = target
        self.target_exp = target_exp
        self.weights = weights
        self.centred = centred
        n_samples = target.shape[0]
        self.gradients = np.zeros(n_samples, dtype=G_DTYPE)
        self.hessians = np.ones(n_samples, dtype=G_DTYPE)

    @classmethod
    def scale(cls, target, sample_weight, penalty_kind):
        """Scale ``target`` and ``sample_weight`` (None: all ones) within
        ``2**SCALE_EXP``; scaling by powers of two changes no split and no
        leaf value."""
        n_samples = target.shape[0]
        sw = np.ones(n_samples) if sample_weight is None else sample_weight
        weights = np.ldexp(sw, -power_of_two_exponent(sw))
        target_exp = power_of_two_exponent(target)
        target = np.ldexp(target, -target_exp)
        return cls(target, target_exp, weights, penalty_kind != "rate_spread")

    def set_tree_gradients(self, counts, rows):
        """Gradients ``-w (y - m)`` and hessians ``w`` of one tree, in
        place (``w`` the bootstrap ``counts`` times the weights, ``m`` the
        weighted mean target of the drawn ``rows``, or 0 when not
        ``centred``); returns ``m``."""
        w = counts * self.weights
        if self.centred:
            # a plain sum, not a BLAS dot: the same bits whatever the BLAS
            # thread count
            offset = float(np.sum(w[rows] * self.target[rows]) / w[rows].sum())
            self.gradients[:] = -w * (self.target - offset)
        else:
            offset = 0.0
            self.gradients[:] = -w * self.target
        self.hessians[:] = w
        return offset

    def set_leaf_values(self, grower, offset):
        """Each leaf's value: the weighted mean target of its rows, scaled
        back."""
        for leaf in grower.finalized_leaves:
            value = (
                offset - leaf.sum_gradients / leaf.sum_hessians
                if leaf.sum_hessians > 0
                else offset
            )
            leaf.value = math.ldexp(value, self.target_exp)


class _OutOfBag:
    """Sums of the out-of-bag predictions of each row, and their number."""

    def __init__(self, n_samples):
        self.sum = np.zeros(n_samples)
        self.n = np.zeros(n_samples, dtype=np.int64)

    def add(self, predictor, engine, counts):
        """Add a tree's predictions for the rows it did not draw."""
        oob = counts == 0
        if oob.any():
            Xo = np.asfortranarray(engine.X_binned[oob])
            self.sum[oob] += predictor.predict_binned(
                Xo, engine.bin_mapper.missing_bin_, engine.n_threads
            )
            self.n[oob] += 1

    def mean(self):
        """The mean out-of-bag prediction of each row (NaN where none) and
        which rows have one; warns when some have none."""
        has = self.n > 0
        if not has.all():
            warnings.warn(
                f"{int((~has).sum())} rows were drawn by every tree and "
                "have no out-of-bag prediction; oob_score_ is computed "
                "without them. Use more trees.",
                UserWarning,
                stacklevel=4,  # mean < _fit < fit < scikit-learn's fit wrapper
            )
        mean = np.full(has.shape[0], np.nan)
        mean[has] = self.sum[has] / self.n[has]
        return mean, has


def era_groups(codes, n_eras):
    """Rows of each era, ``0 .. n_eras - 1``, in increasing row order."""
    order = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[order], np.arange(n_eras + 1))
    return [order[starts[e] : starts[e + 1]] for e in range(n_eras)]


def era_bootstrap(groups, n_samples, rng):
    """Bootstrap counts drawn separately within each era.

    Every era keeps its size: era ``e`` with ``n_e`` rows gets ``n_e`` draws
    with replacement among its own rows (IRF, section 4.3).

    Parameters
    ----------
    groups : list of ndarray
        Rows of each era (:func:`era_groups`).
    n_samples : int
    rng : numpy RandomState

    Returns
    -------
    counts : ndarray of int64 (n_samples,)
        Times each row was drawn.
    """
    draws = [
        rows[rng.randint(0, rows.size, size=rows.size)] for rows in groups if rows.size
    ]
    if not draws:
        return np.zeros(n_samples, dtype=np.int64)
    return np.bincount(np.concatenate(draws), minlength=n_samples)


class _BaseInvariantForest(BaseEstimator):
    """Shared fit loop of the invariant forests."""

    _parameter_constraints: dict = {
        "n_estimators": [Interval(Integral, 1, None, closed="left")],
        "split_type": [StrOptions(set(SPLIT_TYPES))],
        "boltzmann_alpha": [Real],
        "irf_penalty": [Interval(Real, 0, None, closed="left")],
        "irf_variance": [StrOptions(set(IRF_VARIANCES))],
        "min_samples_leaf_per_era": [Interval(Integral, 1, None, closed="left"), None],
        "era_groups": [Interval(Integral, 2, None, closed="left"), Mapping, None],
        "min_agreement": [Interval(Real, 0, 1, closed="both"), None],
        "bootstrap": ["boolean"],
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "max_features": [
            Interval(Integral, 1, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="right"),
            StrOptions({"sqrt", "log2"}),
            None,
        ],
        "max_bins": [Interval(Integral, 2, 255, closed="both")],
        "oob_score": ["boolean"],
        "n_jobs": [Integral, None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_estimators=100,
        *,
        split_type="original",
        boltzmann_alpha=0.0,
        irf_penalty=0.0,
        irf_variance="change",
        min_samples_leaf_per_era=None,
        era_groups=None,
        min_agreement=None,
        bootstrap=True,
        max_depth=None,
        min_samples_leaf=1,
        max_features=1.0,
        max_bins=255,
        oob_score=False,
        n_jobs=None,
        random_state=None,
        verbose=0,
    ):
        self.n_estimators = n_estimators
        self.split_type = split_type
        self.boltzmann_alpha = boltzmann_alpha
        self.irf_penalty = irf_penalty
        self.irf_variance = irf_variance
        self.min_samples_leaf_per_era = min_samples_leaf_per_era
        self.era_groups = era_groups
        self.min_agreement = min_agreement
        self.bootstrap = bootstrap
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.max_features = max_features
        self.max_bins = max_bins
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose

    # -- helpers ------------------------------------------------------------
    def _n_threads(self):
        warn_if_serial(self.n_jobs, f"n_jobs={self.n_jobs}")
        n = effective_n_threads()
        if self.n_jobs is None or self.n_jobs == 0:
            return n
        if self.n_jobs < 0:
            return max(1, n + 1 + self.n_jobs)
        return min(self.n_jobs, n)

    def _features_per_split(self, n_features):
        """Features drawn at each split, as scikit-learn's forests count them."""
        m = self.max_features
        if m is None:
            return n_features
        if m == "sqrt":
            return max(1, int(np.sqrt(n_features)))
        if m == "log2":
            return max(1, int(np.log2(n_features)))
        if isinstance(m, Integral):
            if m > n_features:
                raise ValueError(
                    f"max_features={m} is larger than the number of features "
                    f"({n_features})."
                )
            return int(m)
        return max(1, int(m * n_features))

    def _check_X(self, X, reset, **y_args):
        """``X`` (and ``y`` with ``y_args``) validated: float64 with NaNs or
        8/16-bit integers."""
        return validate_data(
            self,
            X,
            dtype=[np.float64, *INT_DTYPES],
            ensure_all_finite="allow-nan",
            reset=reset,
            **y_args,
        )

    # -- fit ----------------------------------------------------------------
    def _fit(self, X, target, sample_weight, eras, penalty_kind):
        """Grow the trees on ``target`` (float64 targets, or 0/1 classes).

        Sets ``estimators_`` (one ``TreePredictor`` per tree) and the
        importances.

        Returns
        -------
        oob_mean, has_oob : ndarray of shape (n_samples,) or None
            With ``oob_score``, the out-of-bag predictions (NaN where a row
            has none) and which rows have one; else None, None.
        """
        boltzmann_alpha = self._check_fit_params()
        n_threads = self._n_threads()
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X)
        problem = _ScaledProblem.scale(target, sample_weight, penalty_kind)
        rng = check_random_state(self.random_state)
        codes = self._encode_eras(eras, X.shape[0])
        options = era_options_text(self)
        if options and self.n_eras_ < 2:
            warn_single_era(", ".join(options))
        counts = np.bincount(codes, minlength=self.n_eras_)
        warn_unsplittable_eras(options, counts, self.min_samples_leaf_per_era)
        X_binned = self._bin(X, sample_weight, rng, n_threads)
        engine = self._build_engine(
            X_binned,
            codes if eras is not None else None,
            problem,
            boltzmann_alpha,
            penalty_kind,
            n_threads,
        )
        oob = _OutOfBag(X.shape[0]) if self.oob_score else None
        self._grow_trees(engine, problem, codes, rng, oob)
        self.feature_importances_ = feature_importances(self, per_tree=True)
        self.split_frequency_importances_ = split_frequency_importances(self)
        return (None, None) if oob is None else oob.mean()

    def _check_fit_params(self):
        """Refuse ``oob_score`` without ``bootstrap``; ``boltzmann_alpha``
        as a float."""
        if self.oob_score and not self.bootstrap:
            raise ValueError(
                "oob_score=True needs bootstrap=True: without "
                "bootstrap no row is out of bag."
            )
        return check_boltzmann_alpha(self.boltzmann_alpha)

    def _encode_eras(self, eras, n_samples):
        """Era codes of the rows (all 0 without eras); sets ``eras_`` and
        ``n_eras_``."""
        if eras is None and self.era_groups is not None:
            raise ValueError(
                f"era_groups={self.era_groups!r} groups the eras, but no eras "
                "were given: pass fit(..., eras=...) or leave era_groups=None."
            )
        if (
            eras is None
            and self.min_agreement is not None
            and self.split_type == "original"
        ):
            raise ValueError(
                f"min_agreement={self.min_agreement!r} gates splits by the "
                "eras' agreement, but no eras were given: pass fit(..., "
                "eras=...) or leave min_agreement=None."
            )
        if eras is not None:
            grouped = group_eras(
                EncodedEras.from_labels(eras, n_samples), self.era_groups
            )
            codes, labels = grouped.codes, grouped.labels
        else:
            codes, labels = np.zeros(n_samples, dtype=np.int32), np.array([0])
        self.eras_ = labels if eras is not None else None
        self.n_eras_ = labels.size
        return codes

    def _bin(self, X, sample_weight, rng, n_threads):
        """Fit the bin mapper (seeded from ``rng``) and bin ``X``."""
        self._bin_mapper = BinMapper(
            max_bins=self.max_bins,
            random_state=rng.randint(MAX_INT),
            n_threads=n_threads,
        )
        return self._bin_mapper.fit_transform(X, sample_weight)

    def _build_engine(
        self, X_binned, era_codes, problem, boltzmann_alpha, penalty_kind, n_threads
    ):
        """The engine of the fit: trees grown fully and depth first, on the
        gradient and hessian arrays of ``problem``."""
        return build_engine(
            EngineSettings(
                split_type=self.split_type,
                boltzmann_alpha=boltzmann_alpha,
                min_samples_leaf=int(self.min_samples_leaf),
                irf_penalty=float(self.irf_penalty),
                min_samples_leaf_per_era=self.min_samples_leaf_per_era,
                min_agreement=self.min_agreement,
                penalty_kind=penalty_kind,
                max_depth=self.max_depth,
                depth_first=True,
            ),
            X_binned,
            self._bin_mapper,
            era_codes,
            problem.gradients,
            problem.hessians,
            n_threads=n_threads,
        )

    def _grow_trees(self, engine, problem, codes, rng, oob):
        """Grow ``n_estimators`` trees, each on its own bootstrap sample
        (seeded from ``rng``); sets ``estimators_`` and the trees' seeds."""
        n_samples, n_features = engine.X_binned.shape
        n_sub = self._features_per_split(n_features)
        # the grower draws ceil(fraction * n) features: exactly n_sub
        fraction = 1.0 if n_sub == n_features else (n_sub - 0.5) / n_features
        era_order = np.argsort(codes, kind="stable")
        seeds = rng.randint(MAX_INT, size=self.n_estimators)
        self._tree_seeds = seeds
        self._era_codes = codes
        groups = era_groups(codes, self.n_eras_) if self.bootstrap else None
        self.estimators_ = []
        for t, seed in enumerate(seeds):
            tree_rng = np.random.RandomState(seed)
            if self.bootstrap:
                counts = era_bootstrap(groups, n_samples, tree_rng)
            else:
                counts = np.ones(n_samples, dtype=np.int64)
            # the drawn rows, grouped by era
            rows = era_order[counts[era_order] > 0].astype(np.uint32)
            offset = problem.set_tree_gradients(counts, rows)
            engine.builder.update_gradients(problem.gradients, problem.hessians)
            predictor = self._grow_tree(
                engine, problem, rows, offset, fraction, tree_rng
            )
            self.estimators_.append(predictor)
            if oob is not None:
                oob.add(predictor, engine, counts)
            if self.verbose:
                print(
                    f"tree {t + 1}/{self.n_estimators}: "
                    f"{predictor.get_n_leaf_nodes()} leaves, depth "
                    f"{predictor.get_max_depth()}"
                )

    def _grow_tree(self, engine, problem, rows, offset, fraction, tree_rng):
        """One tree on ``rows``, its leaves holding the weighted mean target;
        returns its predictor."""
        grower = TreeGrower(
            engine,
            rows,
            feature_fraction_per_split=fraction,
            rng=np.random.default_rng(tree_rng.randint(MAX_INT)),
        )
        grower.grow()
        problem.set_leaf_values(grower, offset)
        return grower.make_predictor(engine.bin_mapper.bin_thresholds_)

    @property
    def estimators_samples_(self):
        """In-bag rows of each tree (each drawn row once), as in scikit-learn.

        Regenerated from the trees' seeds, so no memory is kept for them.
        """
        check_is_fitted(self, "estimators_")
        n = self._era_codes.shape[0]
        if not self.bootstrap:
            return [np.arange(n) for _ in self._tree_seeds]
        groups = era_groups(self._era_codes, self.n_eras_)
        return [
            np.flatnonzero(era_bootstrap(groups, n, np.random.RandomState(seed)))
            for seed in self._tree_seeds
        ]

    def _mean_tree_output(self, X):
        check_is_fitted(self, "estimators_")
        X = self._check_X(X, reset=False)
        n_threads = self._n_threads()
        # all trees in one pass over the rows, added as tree after tree
        out = sum_tree_predictions(self.estimators_, X, n_threads)
        return out / len(self.estimators_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


_DOC_PARAMS = """
    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees.
    split_type : {"original", "era", "directional"}, default="original"
        Split criterion, as in the booster: the pooled gain, the Boltzmann
        mean of the per-era gains, or the directional agreement of the eras
        (docs/criteria.md).
    boltzmann_alpha : float, default=0.0
        Alpha of the Boltzmann operator over per-era gains (``-np.inf``: the
        worst era, 0: the mean, ``np.inf``: the best era). Acts on gains in
        their own units, which grow with era size.
    irf_penalty : float, default=0.0
        The Invariant Random Forest's lambda (eq. 15). See the class notes
        for the penalty of each task. 0 is off.
    irf_variance : {"change", "difference"}, default="change"
        What the regression penalty takes the variance of, over the eras
        (docs/criteria.md, "Invariance penalty"): "change", the paper's
        formula as written, the change of each era's mean target going
        left; "difference", the difference of each era's children's means,
        with every era of a node kept on both sides of a split (the form
        that reproduces the paper's Table 2). The classifier has only
        "change" (its penalty is the changing-rate ratio).
    min_samples_leaf_per_era : int or None, default=None
        Every era in a node keeps at least this many (distinct) rows on each
        side of a split (the Time Robust Tree's constraint).
    era_groups : int, dict or None, default=None
        Groups of eras that fit uses in place of the eras (docs/criteria.md,
        "Era groups"): an int ``k >= 2`` cuts the distinct eras, in their
        natural order, into ``k`` contiguous groups of near-equal numbers of
        eras; a dict maps each era to its group label (every era a key). The
        criteria, the penalty, the per-era minimum and the bootstrap within
        eras then see the groups; ``eras_`` holds the group labels. None:
        each era its own group. Needs eras.
    min_agreement : float in [0, 1] or None, default=None
        A gate on directional agreement (docs/criteria.md, "Directional
        agreement"): a candidate split is considered only when at least this
        share of the node's eras move the same way as the pooled split.
        Among those that pass, ``split_type`` chooses. None (or 0) is off.
        Needs eras.
    bootstrap : bool, default=True
        Grow each tree on a bootstrap sample drawn separately within each
        era (every era keeps its size); without eras, one bootstrap over all
        rows. False: every tree sees every row once.
    max_depth : int or None, default=None
        Depth limit; None grows until leaves are pure or too small.
    min_samples_leaf : int, default=1
        Minimum number of distinct rows in a leaf.
    max_features : int, float, {"sqrt", "log2"} or None, default=1.0
        Features drawn at random at each split, counted as in scikit-learn's
        forests. The IRF paper draws none (all features at every split):
        the penalty does the feature selection.
    max_bins : int, default=255
        Bins per feature. Integer features with at most ``max_bins``
        distinct values keep every value apart (exact CART thresholds).
    oob_score : bool, default=False
        Score every row with the trees whose bootstrap sample left it out.
        Rows drawn by every tree are left out of the score (with a warning).
    n_jobs : int or None, default=None
        OpenMP threads for histograms, splits and prediction; None uses all
        allowed (``OMP_NUM_THREADS``), negative counts back from them. The
        fitted forest does not depend on it.
    random_state : int, RandomState instance or None, default=None
        Seeds the binning subsample, the bootstrap and the feature draws.
    verbose : int, default=0
        Print one line per tree.
"""

_DOC_ATTRS = """
    Attributes
    ----------
    estimators_ : list of TreePredictor
        The trees; leaf values are already {leaf}.
    feature_importances_ : ndarray of shape (n_features,)
        Impurity importance: each tree's pooled impurity decrease per
        feature, normalised to sum 1, averaged over trees and renormalised.
    split_frequency_importances_ : ndarray of shape (n_features,)
        The IRF paper's split frequency (section 5.2): per tree, the sum of
        ``n_m / n`` over the nodes splitting on the feature (``n_m`` the
        node's distinct rows, ``n`` the root's), averaged over trees. Not
        normalised: a feature used at every level of a tree of depth ``D``
        scores about ``D``.
    eras_ : ndarray or None
        The distinct era labels of the training data.
    n_eras_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Only when X has feature names.
"""


class InvariantForestRegressor(RegressorMixin, _BaseInvariantForest):
    __doc__ = (
        """Invariant Random Forest / Time Robust Forest for regression.

    Fully grown CART trees on per-era bootstrap samples, with the era-aware
    split criteria of the booster and the Invariant Random Forest's penalty
    on the variance across eras of the change in mean target going left
    (Liao et al. eq. 20-22; docs/criteria.md's ``irf_penalty``, exactly the paper's
    lambda for this squared-error tree).

    With no eras, no penalty and ``bootstrap=False``, one tree is a
    scikit-learn ``DecisionTreeRegressor`` on integer data with fewer than
    ``max_bins`` distinct values per feature (same partition).
"""
        + _DOC_PARAMS
        + _DOC_ATTRS.format(leaf="mean targets")
        + """
    oob_prediction_ : ndarray of shape (n_samples,)
        Out-of-bag prediction of every row (NaN for rows without one); only
        with ``oob_score=True``.
    oob_score_ : float
        R^2 of the out-of-bag predictions.

    Examples
    --------
    >>> import numpy as np
    >>> from eraboost import InvariantForestRegressor
    >>> from eraboost.datasets import make_irf_regression
    >>> X, y, eras, X_test, y_test = make_irf_regression(d=2, random_state=0)
    >>> forest = InvariantForestRegressor(n_estimators=10, irf_penalty=10,
    ...                                   max_depth=8, random_state=0)
    >>> forest.fit(X, y, eras=eras).predict(X_test[:2]).shape
    (2,)
    """
    )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, eras=None):
        """Grow the forest.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            float64 (NaN = missing) or 8/16-bit integers (binned without a
            float copy).
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,) or None
        eras : array-like of shape (n_samples,) or None
            Era label of each row; None is one era.

        Returns
        -------
        self
        """
        X, y = self._check_X(X, reset=True, y=y, y_numeric=True)
        y = np.asarray(y, dtype=np.float64)
        if not np.all(np.isfinite(y)):
            raise ValueError("y contains NaN or infinity.")
        penalty_kind = IRF_VARIANCES[self.irf_variance]
        oob, has = self._fit(X, y, sample_weight, eras, penalty_kind=penalty_kind)
        if oob is not None:
            self.oob_prediction_ = oob
            self.oob_score_ = r2_score(y[has], oob[has])
        return self

    def predict(self, X):
        """Mean of the trees' predictions.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        return self._mean_tree_output(X)


class InvariantForestClassifier(ClassifierMixin, _BaseInvariantForest):
    __doc__ = (
        """Invariant Random Forest / Time Robust Forest for binary
    classification.

    Fully grown Gini trees on per-era bootstrap samples, with the era-aware
    split criteria of the booster and the Invariant Random Forest's
    classification penalty (Liao et al. eq. 15-19): for each era the
    changing rates of the positive and negative class going left, smoothed
    by half a dummy row, ``I_e = ((n1_Le + .5) / (n1_e + 1)) / ((n0_Le + .5) /
    (n0_e + 1))``, and the penalty ``max_e I_e / min_e I_e - 1`` added with
    weight ``irf_penalty`` to the weighted Gini impurity of the children.
    Counts are bootstrap-weighted (rows drawn twice count twice).

    Two classes only: the paper's invariant is defined for a positive and a
    negative class. For more classes wrap it in scikit-learn's
    ``OneVsRestClassifier``.
"""
        + _DOC_PARAMS
        + _DOC_ATTRS.format(leaf="positive-class shares")
        + """
    classes_ : ndarray of shape (2,)
    oob_decision_function_ : ndarray of shape (n_samples, 2)
        Out-of-bag class probabilities (NaN for rows without one); only with
        ``oob_score=True``.
    oob_score_ : float
        Accuracy of the out-of-bag predictions.

    Examples
    --------
    >>> import numpy as np
    >>> from eraboost import InvariantForestClassifier
    >>> from eraboost.datasets import make_trt_example
    >>> X, y, eras, X_test, y_test = make_trt_example(random_state=0)
    >>> forest = InvariantForestClassifier(
    ...     n_estimators=10, split_type="era", boltzmann_alpha=-np.inf,
    ...     min_samples_leaf_per_era=10, random_state=0).fit(X, y, eras=eras)
    >>> forest.predict_proba(X_test[:2]).shape
    (2, 2)
    """
    )

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, eras=None):
        """Grow the forest.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            float64 (NaN = missing) or 8/16-bit integers.
        y : array-like of shape (n_samples,)
            Two classes.
        sample_weight : array-like of shape (n_samples,) or None
        eras : array-like of shape (n_samples,) or None
            Era label of each row; None is one era.

        Returns
        -------
        self
        """
        X, y = self._check_X(X, reset=True, y=y)
        check_classification_targets(y)
        self.classes_, y01 = np.unique(y, return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError(
                f"{type(self).__name__} needs two classes; y has only 1 class: "
                f"{label_list(self.classes_)}."
            )
        if self.classes_.size > 2:
            raise ValueError(
                "Only binary classification is supported. The type of the "
                f"target is {type_of_target(y)} ({self.classes_.size} classes): "
                "the IRF invariant compares a positive and a negative class. "
                "Wrap the forest in sklearn.multiclass.OneVsRestClassifier "
                "for more classes."
            )
        y01 = y01.astype(np.float64).ravel()
        if self.irf_variance != "change":
            raise ValueError(
                f"irf_variance={self.irf_variance!r} is a regression penalty; "
                "the classifier's is the changing-rate ratio: leave "
                "irf_variance='change'."
            )
        oob, has = self._fit(X, y01, sample_weight, eras, penalty_kind="rate_spread")
        if oob is not None:
            proba = np.column_stack([1.0 - oob, oob])
            self.oob_decision_function_ = proba
            self.oob_score_ = accuracy_score(
                y01[has], (proba[has, 1] > proba[has, 0]).astype(np.float64)
            )
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def predict_proba(self, X):
        """Mean of the trees' class shares.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, 2)
        """
        p = np.clip(self._mean_tree_output(X), 0.0, 1.0)
        return np.column_stack([1.0 - p, p])

    def predict(self, X):
        """Most probable class (the first class on ties).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]
