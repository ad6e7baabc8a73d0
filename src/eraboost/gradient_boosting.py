"""Era-aware histogram gradient boosting estimators (the fit loop)."""

import hashlib
import math
import warnings
from abc import ABC, abstractmethod
from collections.abc import Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from numbers import Integral, Real
from time import perf_counter

import numpy as np
from sklearn._loss.loss import (
    AbsoluteError,
    BaseLoss,
    HalfGammaLoss,
    HalfPoissonLoss,
    HalfSquaredError,
    PinballLoss,
)
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context, is_classifier
from sklearn.metrics import check_scoring
from sklearn.metrics._scorer import _SCORERS
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state, resample
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions
from sklearn.utils.validation import (
    _check_monotonic_cst as _sk_check_monotonic_cst,
)
from sklearn.utils.validation import (
    _check_sample_weight,
    check_array,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
)

from ._categorical import (
    category_counts,
    check_categorical_features,
    make_encoder,
    remap_interaction_cst,
    remap_monotonic_cst,
)
from ._engine._common import G_DTYPE, SPLIT_TYPES, Y_DTYPE
from ._engine._loss_calls import loss_gradient, loss_gradient_hessian, mean_loss
from ._engine._openmp import effective_n_threads
from ._engine._partition import copy_rows
from ._engine._predictor import add_leaf_values
from ._engine.binning import (
    INT_DTYPES,
    BinMapper,
    MixedMatrix,
    mixed_table_matrix,
    small_int_table_matrix,
)
from ._engine.engine import IRF_VARIANCES, EngineSettings, build_engine
from ._engine.grower import TreeGrower
from ._engine.predictor import add_raw_predictions, stacked_trees
from ._eras import (
    EncodedEras,
    check_boltzmann_alpha,
    check_validation_size,
    era_options_text,
    era_train_val_split,
    group_eras,
    user_stacklevel,
    warn_single_era,
    warn_unsplittable_eras,
)
from ._feature_names import (
    check_feature_names,
    table_feature_names,
    validate_data,
)
from .callbacks import IterationInfo, check_callbacks
from .inspection import feature_importances
from .metrics import EraScorer
from .sampling import TreeSampler

_LOSSES = {
    "squared_error": HalfSquaredError,
    "absolute_error": AbsoluteError,
    "poisson": HalfPoissonLoss,
    "gamma": HalfGammaLoss,
    "quantile": PinballLoss,
}


def check_params(estimator):
    """Check an estimator's parameters as ``fit`` does first, without data.

    For front ends (the command line) that want a bad parameter reported
    before reading a large table. The checks are scikit-learn's parameter
    constraints (``_parameter_constraints``); the error is the same
    ``InvalidParameterError`` that ``fit`` raises.

    Parameters
    ----------
    estimator : HistGradientBoostingRegressor or HistGradientBoostingClassifier

    Returns
    -------
    estimator : the same estimator, unchanged.
    """
    estimator._validate_params()
    return estimator


@contextmanager
def _patch_raw_predict(estimator, raw_predictions):
    """Make ``estimator._raw_predict`` return precomputed raw predictions."""
    estimator._raw_predict = lambda X, n_threads=None: raw_predictions
    try:
        yield estimator
    finally:
        del estimator._raw_predict


def _fit_data_signature(n_samples, eras):
    """Number of rows and a digest of the eras (``EncodedEras`` or None), to
    check warm starts."""
    if eras is None:
        return n_samples, None
    digest = hashlib.blake2b(np.ascontiguousarray(eras.codes).tobytes(), digest_size=16)
    digest.update(repr(np.asarray(eras.labels).tolist()).encode())
    return n_samples, digest.hexdigest()


#: The largest gradient or hessian a fit can hold (they are float32).
_GRADIENT_MAX = float(np.finfo(G_DTYPE).max)
#: Losses whose gradient grows with the target (``raw - y``, ``exp(raw) - y``).
_TARGET_SCALED_LOSSES = ("squared_error", "poisson")


def _check_weight_scale(sample_weight, name):
    """Refuse weights whose sum overflows, or beyond the float32 hessians.

    Parameters
    ----------
    sample_weight : ndarray of shape (n_samples,) or None
    name : str
        ``"sample_weight"`` or ``"sample_weight_val"``, for the message.
    """
    if sample_weight is None or sample_weight.size == 0:
        return
    largest = float(np.max(sample_weight))
    with np.errstate(over="ignore"):
        total = float(np.sum(sample_weight))
    limit = _GRADIENT_MAX if name == "sample_weight" else np.inf
    if np.isfinite(total) and largest <= limit:
        return
    raise ValueError(
        f"{name} has values up to {largest:.3g} (sum {total:.3g}): too large "
        "for the fit, which holds weighted gradients and hessians as float32 "
        f"(at most {_GRADIENT_MAX:.3g}) and sums weights in float64. Divide "
        "the weights by their maximum (or another constant) first."
    )


def _warn_constant_target(estimator, y):
    """Warn, at the user's line, when ``y`` (encoded) has one value or class:
    the trees then have nothing to fit."""
    if y.shape[0] < 2 or np.any(y != y[0]):
        return
    what = (
        f"a single class ({estimator.classes_[:1].tolist()[0]!r})"
        if is_classifier(estimator)
        else f"one value ({float(y[0]):g})"
    )
    warnings.warn(
        f"y holds {what} in every row: the model predicts it everywhere and "
        "learns nothing from X; check the target (its column, or a filter "
        "that kept one value).",
        UserWarning,
        stacklevel=user_stacklevel(),
    )


def _check_target_scale(y, sample_weight, loss):
    """Refuse a target whose gradients (``weight * (raw - y)``) overflow.

    Only for the losses whose gradient grows with the target (squared
    error, Poisson); the others' gradients are bounded.
    """
    if not (isinstance(loss, str) and loss in _TARGET_SCALED_LOSSES) or not y.size:
        return
    largest = float(np.max(np.abs(y)))
    weight = 1.0 if sample_weight is None else float(np.max(sample_weight))
    if largest * weight <= _GRADIENT_MAX / 2:
        return
    weighted = (
        "" if sample_weight is None else f" times sample_weight up to {weight:.3g}"
    )
    raise ValueError(
        f"y has values up to {largest:.3g}{weighted}: loss={loss!r} would "
        "overflow the fit's float32 gradients (at most "
        f"{_GRADIENT_MAX:.3g}) and learn nothing. Divide y by a constant "
        "(e.g. its standard deviation) and multiply the predictions back."
    )


def _check_monotonic_cst(estimator, monotonic_cst):
    """Monotonic constraints as int8 per feature (scikit-learn's checks and
    error messages)."""
    return np.asarray(_sk_check_monotonic_cst(estimator, monotonic_cst), dtype=np.int8)


@dataclass
class _FitData:
    """The rows of a fit: training rows and, for early stopping, validation
    rows, with their eras (``EncodedEras`` or None)."""

    X: object
    y: np.ndarray
    sample_weight: np.ndarray | None
    eras: EncodedEras | None
    X_val: object
    y_val: np.ndarray | None
    sample_weight_val: np.ndarray | None
    eras_val: EncodedEras | None
    validation_provided: bool
    signature: tuple


@dataclass
class _BoostingState:
    """What the boosting loop updates: raw predictions and the early-stopping
    scorer's rows."""

    data: _FitData
    X_binned_val: np.ndarray | None
    scorer_uses_raw: bool
    begin_at_stage: int = 0
    raw_predictions: np.ndarray | None = None
    raw_predictions_val: np.ndarray | None = None
    X_small: object = None
    y_small: np.ndarray | None = None
    sw_small: np.ndarray | None = None
    idx_small: object = None
    eras_small: EncodedEras | None = None


@dataclass
class _FitTimer:
    """Seconds spent in each part of the fit (``verbose``)."""

    histograms: float = 0.0
    splits: float = 0.0
    apply: float = 0.0
    predict: float = 0.0

    def add(self, grower):
        self.histograms += grower.total_compute_hist_time
        self.splits += grower.total_find_split_time
        self.apply += grower.total_apply_split_time


# values of a table of integer and float columns converted to float64 at a
# time for prediction (a block of rows: 32 MB)
_MIXED_BLOCK_VALUES = 1 << 22


class BaseHistGradientBoosting(BaseEstimator, ABC):
    """Shared fit loop of the era-aware gradient boosting estimators."""

    _parameter_constraints: dict = {
        "loss": [BaseLoss],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "max_leaf_nodes": [Interval(Integral, 2, None, closed="left"), None],
        "max_depth": [Interval(Integral, 1, None, closed="left"), None],
        "min_samples_leaf": [Interval(Integral, 1, None, closed="left")],
        "l2_regularization": [Interval(Real, 0, None, closed="left")],
        "max_features": [Interval(RealNotInt, 0, 1, closed="right")],
        "monotonic_cst": ["array-like", dict, None],
        "interaction_cst": [
            list,
            tuple,
            StrOptions({"pairwise", "no_interactions"}),
            None,
        ],
        "n_iter_no_change": [Interval(Integral, 1, None, closed="left")],
        "validation_fraction": [
            Interval(RealNotInt, 0, 1, closed="neither"),
            Interval(Integral, 1, None, closed="left"),
            None,
        ],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_bins": [Interval(Integral, 2, 255, closed="both")],
        "categorical_features": ["array-like", StrOptions({"from_dtype"}), None],
        "warm_start": ["boolean"],
        "early_stopping": [StrOptions({"auto"}), "boolean"],
        "scoring": [str, callable, None],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
        "split_type": [StrOptions(set(SPLIT_TYPES))],
        "boltzmann_alpha": [Real],
        "irf_penalty": [Interval(Real, 0, None, closed="left")],
        "irf_variance": [StrOptions(set(IRF_VARIANCES))],
        "min_samples_leaf_per_era": [Interval(Integral, 1, None, closed="left"), None],
        "era_groups": [Interval(Integral, 2, None, closed="left"), Mapping, None],
        "min_agreement": [Interval(Real, 0, 1, closed="both"), None],
        "pooled_weight": [Interval(Real, 0, 1, closed="both")],
        "colsample_bytree": [Interval(RealNotInt, 0, 1, closed="right")],
        "subsample": [Interval(RealNotInt, 0, 1, closed="right")],
        "era_subsample": [Interval(RealNotInt, 0, 1, closed="right")],
        "keep_best_iteration": ["boolean"],
    }

    @abstractmethod
    def __init__(
        self,
        loss,
        *,
        learning_rate,
        max_iter,
        max_leaf_nodes,
        max_depth,
        min_samples_leaf,
        l2_regularization,
        max_features,
        max_bins,
        categorical_features,
        monotonic_cst,
        interaction_cst,
        warm_start,
        early_stopping,
        scoring,
        validation_fraction,
        n_iter_no_change,
        tol,
        verbose,
        random_state,
        split_type,
        boltzmann_alpha,
        irf_penalty,
        irf_variance,
        min_samples_leaf_per_era,
        era_groups,
        min_agreement,
        pooled_weight,
        colsample_bytree,
        subsample,
        era_subsample,
        keep_best_iteration,
    ):
        self.loss = loss
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.max_leaf_nodes = max_leaf_nodes
        self.max_depth = max_depth
        self.min_samples_leaf = min_samples_leaf
        self.l2_regularization = l2_regularization
        self.max_features = max_features
        self.max_bins = max_bins
        self.monotonic_cst = monotonic_cst
        self.interaction_cst = interaction_cst
        self.categorical_features = categorical_features
        self.warm_start = warm_start
        self.early_stopping = early_stopping
        self.scoring = scoring
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state
        self.split_type = split_type
        self.boltzmann_alpha = boltzmann_alpha
        self.irf_penalty = irf_penalty
        self.irf_variance = irf_variance
        self.min_samples_leaf_per_era = min_samples_leaf_per_era
        self.era_groups = era_groups
        self.min_agreement = min_agreement
        self.pooled_weight = pooled_weight
        self.colsample_bytree = colsample_bytree
        self.subsample = subsample
        self.era_subsample = era_subsample
        self.keep_best_iteration = keep_best_iteration

    # -- input checks ---------------------------------------------------------
    def _check_X(self, X, reset, mixed=False):
        """X as a matrix in the engine's column order.

        float64, or 8- and 16-bit integers kept as they are (they are binned
        and predicted without a float copy). A table of small integer and
        float columns is a ``MixedMatrix`` at fit (``reset``) and where
        ``mixed`` asks for one, float64 elsewhere.

        With categorical features (``_categorical.py``), the fit (``reset``)
        sets ``is_categorical_`` and fits ``_preprocessor``, which encodes
        them and places them first; ``_n_categories`` holds their numbers of
        known categories.
        """
        if not reset:
            if getattr(self, "_preprocessor", None) is None:
                return self._check_matrix(X, reset=False, mixed=mixed)
            names = table_feature_names(X)
            if names is not None:
                # the encoder sees no names in this table (_feature_names.py)
                check_feature_names(self, names, reset=False)
            if isinstance(X, MixedMatrix):
                # the encoder of categorical features takes arrays
                X = X.to_float64()
            X = self._preprocessor.transform(X)
            if X.ndim != 2 or X.shape[1] != self.n_features_in_:
                # the trees index n_features_in_ columns
                raise ValueError(
                    f"the encoder of categorical features gave {X.shape[-1]} "
                    f"columns; the model expects {self.n_features_in_}"
                )
            return X
        self.is_categorical_ = check_categorical_features(X, self.categorical_features)
        if self.is_categorical_ is not None and isinstance(X, MixedMatrix):
            # the encoder of categorical features takes arrays
            X = X.to_float64()
        self._preprocessor = None
        self._n_categories = np.zeros(0, dtype=np.int64)
        if self.is_categorical_ is None:
            return self._check_matrix(X, reset=True, mixed=True)
        self._preprocessor = make_encoder(self.is_categorical_)
        names = table_feature_names(X)
        X = self._preprocessor.fit_transform(X)
        self._n_categories = category_counts(
            self._preprocessor, self.is_categorical_, self.max_bins
        )
        self.n_features_in_ = self._preprocessor.n_features_in_
        if hasattr(self._preprocessor, "feature_names_in_"):
            self.feature_names_in_ = self._preprocessor.feature_names_in_
        elif names is not None:
            check_feature_names(self, names, reset=True)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return X

    def _check_matrix(self, X, reset, mixed=False):
        """X without categorical features as a float64 or small integer
        matrix; a polars or pyarrow table of small integers keeps its type
        (``small_int_table_matrix``), its column names checked as given.

        With ``mixed``, a table of small integer and float columns becomes
        a ``MixedMatrix`` (``mixed_table_matrix``): only its float columns
        are converted to float64. Without, it is converted to float64 as a
        whole, as scikit-learn's checks do; so is a ``MixedMatrix`` given as
        X.
        """
        if isinstance(X, MixedMatrix) and not mixed:
            X = X.to_float64()
        matrix = small_int_table_matrix(X)
        if matrix is None and mixed:
            matrix = mixed_table_matrix(X)
            if matrix is not None:
                validate_data(self, X, skip_check_array=True, reset=reset)
                return matrix
        if matrix is None:
            return validate_data(
                self,
                X,
                dtype=[np.float64, *INT_DTYPES],
                ensure_all_finite=False,
                reset=reset,
            )
        validate_data(self, X, skip_check_array=True, reset=reset)
        return check_array(matrix, dtype=None, ensure_all_finite=False)

    def _check_y(self, y, name="y"):
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target "
                f"{name} is None."
            )
        y = check_array(y, ensure_2d=False, dtype=None, input_name=name)
        return column_or_1d(y, warn=True)

    def _check_interaction_cst(self, n_features):
        if self.interaction_cst is None:
            return None
        if self.interaction_cst == "no_interactions":
            groups = [[i] for i in range(n_features)]
        elif self.interaction_cst == "pairwise":
            groups = [
                [i, j] for i in range(n_features) for j in range(i + 1, n_features)
            ]
        else:
            groups = self.interaction_cst
        try:
            sets = [set(g) for g in groups]
        except TypeError:
            raise ValueError(
                "Interaction constraints must be a sequence of tuples or lists, "
                f"got: {self.interaction_cst!r}."
            ) from None
        for s in sets:
            for i in s:
                if not (isinstance(i, Integral) and 0 <= i < n_features):
                    raise ValueError(
                        "Interaction constraints must consist of integer indices "
                        f"in [0, n_features - 1] = [0, {n_features - 1}], "
                        "specifying the position of features, got invalid "
                        f"indices: {s!r}"
                    )
        rest = set(range(n_features)) - set().union(*sets)
        if rest:
            sets.append(rest)
        return sets

    # -- fit ---------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(
        self,
        X,
        y,
        sample_weight=None,
        *,
        eras=None,
        X_val=None,
        y_val=None,
        sample_weight_val=None,
        eras_val=None,
        callbacks=None,
    ):
        """Fit the gradient boosting model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data. NaN marks missing values. int8, uint8, int16 and
            uint16 arrays are binned as they are, without a float64 copy
            (same bins as scikit-learn's); a Fortran-ordered uint8 array
            whose values already are their bins is used without any copy.
            A pandas, polars or pyarrow table of such integer columns and
            float columns is fitted with only its float columns converted
            to float64 (the same model as from all of them as float64).
        y : array-like of shape (n_samples,)
            Target values.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the training rows.
        eras : array-like of shape (n_samples,), default=None
            Era (environment) label of each row: integers, strings, dates, a
            pandas Series or Categorical. ``None`` means a single era, with
            which every ``split_type`` grows the same trees as scikit-learn.
        X_val, y_val, sample_weight_val : array-like, default=None
            Validation data for early stopping, instead of an internal split.
        eras_val : array-like of shape (n_val,), default=None
            Eras of ``X_val``.
        callbacks : list of callable, default=None
            Called after every boosting iteration with an
            :class:`~eraboost.IterationInfo`; a callback that returns True
            stops the fit there (see :class:`~eraboost.IterationInfo`).

        Returns
        -------
        self : object
        """
        fit_start = perf_counter()
        alpha = check_boltzmann_alpha(self.boltzmann_alpha)
        warm = self.warm_start and self._is_fitted()
        callbacks = check_callbacks(callbacks)
        data = self._check_fit_data(
            X, y, sample_weight, eras, X_val, y_val, sample_weight_val, eras_val, warm
        )
        if not warm:
            self._init_random_streams()
        monotonic_cst, interaction_cst = self._check_constraints(data.X.shape[1])
        n_threads = effective_n_threads()
        self._loss = (
            self.loss
            if isinstance(self.loss, BaseLoss)
            else self._get_loss(sample_weight=data.sample_weight)
        )
        if self.early_stopping == "auto":
            self.do_early_stopping_ = data.X.shape[0] > 10_000
        else:
            self.do_early_stopping_ = self.early_stopping
        self._use_validation_data = (
            self.validation_fraction is not None or data.validation_provided
        )
        if (
            self.do_early_stopping_
            and self._use_validation_data
            and not data.validation_provided
        ):
            data = self._split_validation(data)
        elif not data.validation_provided:
            data.X_val = data.y_val = data.sample_weight_val = None
        X_binned, X_binned_val = self._bin(data, n_threads)

        K = self.n_trees_per_iteration_
        gradient, hessian = self._loss.init_gradient_and_hessian(
            n_samples=X_binned.shape[0], dtype=G_DTYPE, order="F"
        )
        g_view = gradient.reshape((-1, 1)) if gradient.ndim == 1 else gradient
        h_view = hessian.reshape((-1, 1)) if hessian.ndim == 1 else hessian
        engine = build_engine(
            self._engine_settings(alpha),
            X_binned,
            self._bin_mapper,
            None if data.eras is None else data.eras.codes,
            g_view[:, 0],
            h_view[:, 0],
            monotonic_cst=monotonic_cst,
            is_categorical=(
                np.arange(X_binned.shape[1]) < self._n_categories.size
            ).astype(np.uint8),
            n_threads=n_threads,
            by_columns=self._bin_mapper.bins_by_columns(data.X, X_binned),
        )
        state = self._init_boosting_state(warm, data, X_binned, X_binned_val, n_threads)
        sampler = TreeSampler(
            self._tree_sample_rng,
            X_binned.shape[1],
            X_binned.shape[0],
            self.colsample_bytree,
            self.subsample,
            self.era_subsample,
            None if data.eras is None else data.eras.codes,
        )
        timer = _FitTimer()
        # the trees' rows and the partition's scratch, shared by the trees
        # (a tree's rows are used before the next tree is grown)
        row_buffers = (
            np.empty(X_binned.shape[0], dtype=np.uint32),
            np.empty(X_binned.shape[0], dtype=np.uint32),
        )
        # under the era criteria a round in which no tree can split ends the
        # fit (docs/criteria.md, pooled progress); original keeps adding
        # single-leaf trees, as scikit-learn
        stop_when_stalled = engine.splitter.split_type != SPLIT_TYPES["original"]
        if self.verbose:
            print("Fitting gradient boosted rounds:")
        for iteration in range(state.begin_at_stage, self.max_iter):
            if self.verbose >= 2:
                it_start = perf_counter()
                print(f"[{iteration + 1}/{self.max_iter}] ", end="", flush=True)
            self._update_gradients(data, state, gradient, hessian, n_threads)
            rows = sampler.iteration_rows()
            self._predictors.append([])
            n_split = 0
            for k in range(K):
                engine.builder.update_gradients(g_view[:, k], h_view[:, k])
                grower = self._grow_tree(
                    engine, rows, sampler.tree_features(), interaction_cst, row_buffers
                )
                timer.add(grower)
                n_split += grower.n_nodes > 1
                if not self._loss.differentiable:
                    self._fit_leaves_to_loss(grower, data, state.raw_predictions[:, k])
                predictor = grower.make_predictor(self._bin_mapper.bin_thresholds_)
                self._check_finite_tree(grower, predictor, data, iteration)
                self._predictors[-1].append(predictor)
                tic = perf_counter()
                self._add_tree_values(
                    state.raw_predictions,
                    k,
                    grower,
                    predictor,
                    X_binned,
                    rows,
                    n_threads,
                )
                timer.predict += perf_counter() - tic
            should_stop = self._early_stopping_step(state, n_threads)
            if self.verbose >= 2:
                self._print_iteration_stats(it_start)
            if self._run_callbacks(callbacks, iteration, fit_start) or should_stop:
                break
            if stop_when_stalled and n_split == 0:
                if self.verbose:
                    print(
                        f"Round {iteration + 1}: no tree could split under "
                        f"split_type={self.split_type!r} (no candidate improves "
                        f"the pooled loss): the fit stops at n_iter_="
                        f"{iteration + 1} of max_iter={self.max_iter}."
                    )
                break

        if self.keep_best_iteration:
            self._keep_best_iteration()
        if self.verbose:
            self._print_fit_stats(fit_start, timer)
        self.train_score_ = np.asarray(self.train_score_)
        self.validation_score_ = np.asarray(self.validation_score_)
        self._fit_signature = data.signature
        return self

    def _check_finite_tree(self, grower, predictor, data, iteration):
        """The backstop of the scale checks: a tree grown from non-finite
        gradients or hessians, or with a non-finite leaf value, ends the fit
        with a ValueError (the iteration's trees are dropped)."""
        root = grower.root
        leaves = predictor.nodes["value"][predictor.nodes["is_leaf"] == 1]
        if (
            math.isfinite(root.sum_gradients)
            and math.isfinite(root.sum_hessians)
            and np.isfinite(leaves).all()
        ):
            return
        self._predictors.pop()
        sw = data.sample_weight
        scales = (
            [] if is_classifier(self) else [f"|y| up to {np.abs(data.y).max():.3g}"]
        )
        if sw is not None:
            scales.append(f"sample weights up to {sw.max():.3g}")
        raise ValueError(
            f"the gradients, hessians or leaf values of iteration "
            f"{iteration + 1} are not finite (inf or NaN)"
            + (f" ({', '.join(scales)})" if scales else "")
            + ": the values are too large for the fit's float32 gradients. "
            "Scale the target or the weights down (e.g. divide y by its "
            "standard deviation, the weights by their maximum)."
        )

    # -- the steps of fit ------------------------------------------------------
    def _check_fit_data(
        self, X, y, sample_weight, eras, X_val, y_val, sample_weight_val, eras_val, warm
    ):
        """Input checks: the training rows, their eras, the validation data.

        Sets ``eras_`` and ``n_eras_`` and checks a warm start's data.

        Returns
        -------
        data : _FitData
        """
        if warm:
            # the trees of the first fit read its columns: a warm start on
            # other columns would read outside X (scikit-learn's message)
            validate_data(self, X, skip_check_array=True, reset=False)
        X = self._check_X(X, reset=True)
        y = self._encode_y(self._check_y(y))
        check_consistent_length(X, y)
        _warn_constant_target(self, y)
        n_samples = X.shape[0]
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        sample_weight = self._finalize_sample_weight(sample_weight, y)
        _check_weight_scale(sample_weight, "sample_weight")
        if not is_classifier(self):
            _check_target_scale(y, sample_weight, self.loss)

        encoded = None if eras is None else EncodedEras.from_labels(eras, n_samples)
        signature = _fit_data_signature(n_samples, encoded)
        if warm:
            self._check_warm_start_data(signature)
        if self.era_groups is not None and encoded is None:
            raise ValueError(
                f"era_groups={self.era_groups!r} groups the eras, but no eras "
                "were given: pass fit(..., eras=...) or leave era_groups=None."
            )
        if (
            self.min_agreement is not None
            and self.split_type == "original"
            and encoded is None
        ):
            raise ValueError(
                f"min_agreement={self.min_agreement!r} gates splits by the "
                "eras' agreement, but no eras were given: pass fit(..., "
                "eras=...) or leave min_agreement=None."
            )
        if self.pooled_weight > 0 and self.split_type == "original":
            raise ValueError(
                f"pooled_weight={self.pooled_weight!r} blends the pooled gain "
                "into an era criterion, but split_type='original' scores by "
                "the pooled gain already: use split_type='era' or "
                "'directional', or leave pooled_weight=0."
            )
        fit_eras = encoded
        encoded = group_eras(encoded, self.era_groups)
        self.eras_ = None if encoded is None else encoded.labels
        self.n_eras_ = 1 if encoded is None else encoded.n_eras
        if self.era_subsample < 1.0 and encoded is None:
            raise ValueError(
                f"era_subsample={self.era_subsample} draws whole eras, but no "
                "eras were given: pass fit(..., eras=...) or leave "
                "era_subsample=1.0."
            )
        options = era_options_text(self)
        if options and self.n_eras_ < 2:
            warn_single_era(", ".join(options))
        if encoded is not None:
            counts = np.bincount(encoded.codes, minlength=encoded.n_eras)
            warn_unsplittable_eras(options, counts, self.min_samples_leaf_per_era)

        validation_provided = X_val is not None or y_val is not None
        encoded_val = None
        if validation_provided:
            if y_val is None:
                raise ValueError("X_val is provided, but y_val was not provided.")
            if X_val is None:
                raise ValueError("y_val is provided, but X_val was not provided.")
            X_val = self._check_X(X_val, reset=False, mixed=True)
            y_val = self._encode_y_val(self._check_y(y_val, "y_val"))
            check_consistent_length(X_val, y_val)
            if sample_weight_val is not None:
                sample_weight_val = _check_sample_weight(
                    sample_weight_val, X_val, dtype=np.float64
                )
                _check_weight_scale(sample_weight_val, "sample_weight_val")
            if eras_val is not None:
                encoded_val = group_eras(
                    EncodedEras.from_labels(eras_val, X_val.shape[0], name="eras_val"),
                    self.era_groups,
                    fit_eras=fit_eras,
                    name="eras_val",
                )
            if self.early_stopping is False:
                raise ValueError(
                    "X_val and y_val are passed to fit while at the same time "
                    "early_stopping is False. When passing X_val and y_val to "
                    "fit, early_stopping should be set to either 'auto' or True."
                )
        elif eras_val is not None:
            raise ValueError("eras_val is provided, but X_val was not provided.")
        return _FitData(
            X=X,
            y=y,
            sample_weight=sample_weight,
            eras=encoded,
            X_val=X_val,
            y_val=y_val,
            sample_weight_val=sample_weight_val,
            eras_val=encoded_val,
            validation_provided=validation_provided,
            signature=signature,
        )

    def _init_random_streams(self):
        """Seeds of a new fit: binning and the validation split, the
        per-split feature draws, and the per-tree draws. A warm start keeps
        the first fit's seed and continues its streams."""
        rng = check_random_state(self.random_state)
        self._random_seed = rng.randint(np.iinfo(np.uint32).max, dtype="u8")
        self._feature_subsample_rng = np.random.default_rng(
            rng.randint(np.iinfo(np.uint32).max, dtype="u8")
        )
        # the per-tree draws (colsample_bytree, subsample, era_subsample)
        self._tree_sample_rng = np.random.default_rng(
            rng.randint(np.iinfo(np.uint32).max, dtype="u8")
        )

    def _check_constraints(self, n_features):
        """Monotonic and interaction constraints, in the internal feature
        order (categorical features first)."""
        monotonic_cst = _check_monotonic_cst(self, self.monotonic_cst)
        if self.is_categorical_ is not None:
            monotonic_cst = remap_monotonic_cst(monotonic_cst, self.is_categorical_)
        if self.n_trees_per_iteration_ != 1 and np.any(monotonic_cst != 0):
            raise ValueError(
                "monotonic constraints are not supported for multiclass classification."
            )
        interaction_cst = self._check_interaction_cst(n_features)
        if interaction_cst is not None and self.is_categorical_ is not None:
            interaction_cst = remap_interaction_cst(
                interaction_cst, self.is_categorical_
            )
        return monotonic_cst, interaction_cst

    def _split_validation(self, data):
        """Hold out a validation set for early stopping.

        With at least two eras, whole eras are held out (early stopping
        then measures out-of-era skill; classifiers keep every class on both
        sides); otherwise scikit-learn's row split.
        """
        X, y, sw, eras = data.X, data.y, data.sample_weight, data.eras
        if eras is not None and eras.n_eras >= 2:
            val = era_train_val_split(
                eras.codes,
                self.validation_fraction,
                int(self._random_seed % (2**32)),
                y=y if is_classifier(self) else None,
                classes=getattr(self, "classes_", None),
            )
            train = ~val
            check_validation_size(
                self.validation_fraction,
                X.shape[0],
                np.unique(eras.codes[val]).size,
                eras.n_eras,
            )
            return replace(
                data,
                X=X[train],
                y=y[train],
                sample_weight=None if sw is None else sw[train],
                eras=eras.subset(train),
                X_val=X[val],
                y_val=y[val],
                sample_weight_val=None if sw is None else sw[val],
                eras_val=eras.subset(val),
            )
        stratify = y if hasattr(self._loss, "predict_proba") else None
        # a table's two matrices are split by the rows of the same draw
        mixed = isinstance(X, MixedMatrix)
        arrays = [np.arange(X.shape[0]) if mixed else X, y]
        arrays += [] if sw is None else [sw]
        parts = train_test_split(
            *arrays,
            test_size=self.validation_fraction,
            stratify=stratify,
            random_state=self._random_seed,
        )
        if mixed:
            parts[0], parts[1] = X[parts[0]], X[parts[1]]
        return replace(
            data,
            X=parts[0],
            y=parts[2],
            sample_weight=None if sw is None else parts[4],
            eras=None,
            X_val=parts[1],
            y_val=parts[3],
            sample_weight_val=None if sw is None else parts[5],
        )

    def _bin(self, data, n_threads):
        """Fit the bin mapper on the training rows; bin both sets.

        Categorical features come first in the internal order
        (``_check_X``); their known categories are ``0 .. k - 1``.
        """
        tic = perf_counter()
        n_features = data.X.shape[1]
        n_cat = self._n_categories.size
        known_categories = [np.arange(k, dtype=np.float64) for k in self._n_categories]
        known_categories += [None] * (n_features - n_cat)
        self._bin_mapper = BinMapper(
            max_bins=self.max_bins,
            random_state=self._random_seed,
            n_threads=n_threads,
            is_categorical=np.arange(n_features) < n_cat,
            known_categories=known_categories,
        )
        self._bin_mapper.fit(data.X, data.sample_weight)
        # stored by rows when each tree grows on every feature and the
        # features have few bins: a node's gathered rows then cost one or
        # two cache lines each in the histograms, not one per feature (an
        # int8 matrix by columns that is its own bins, as a pandas frame
        # gives it, then serves the partition as is: build_engine)
        by_rows = self.colsample_bytree == 1 and self._bin_mapper.rows_layout_pays(
            data.X
        )
        X_binned = self._bin_mapper.transform(data.X, by_rows=by_rows)
        X_binned_val = (
            None
            if data.X_val is None
            else np.ascontiguousarray(self._bin_mapper.transform(data.X_val))
        )
        if self.verbose:
            print(
                f"Binning {data.X.nbytes / 1e9:.3f} GB of training data: "
                f"{perf_counter() - tic:.3f} s"
            )
        return X_binned, X_binned_val

    def _engine_settings(self, alpha):
        """The engine's criterion and limits, from the parameters."""
        return EngineSettings(
            split_type=self.split_type,
            boltzmann_alpha=alpha,
            l2_regularization=float(self.l2_regularization),
            min_samples_leaf=int(self.min_samples_leaf),
            irf_penalty=float(self.irf_penalty),
            penalty_kind=IRF_VARIANCES[self.irf_variance],
            min_samples_leaf_per_era=self.min_samples_leaf_per_era,
            min_agreement=self.min_agreement,
            pooled_weight=float(self.pooled_weight),
            max_leaf_nodes=self.max_leaf_nodes,
            max_depth=self.max_depth,
        )

    def _init_boosting_state(self, warm, data, X_binned, X_binned_val, n_threads):
        """Raw predictions (a warm start's, or the baseline), the scores so
        far, and the early-stopping scorer's data with its first score.

        Returns
        -------
        state : _BoostingState
        """
        # scorers known to score through _raw_predict get the raw
        # predictions kept up to date, instead of predicting every tree again
        scorer_uses_raw = self.scoring in _SCORERS or isinstance(
            self.scoring, EraScorer
        )
        keep_raw_val = X_binned_val is not None and (
            scorer_uses_raw or self.scoring == "loss"
        )
        state = _BoostingState(
            data=data,
            X_binned_val=X_binned_val,
            scorer_uses_raw=scorer_uses_raw,
        )
        if warm:
            if self.max_iter < self.n_iter_:
                raise ValueError(
                    f"max_iter={self.max_iter} must be larger than or equal to "
                    f"n_iter_={self.n_iter_} when warm_start==True"
                )
            state.begin_at_stage = len(self._predictors)
            self.train_score_ = list(self.train_score_)
            self.validation_score_ = list(self.validation_score_)
            state.raw_predictions = self._raw_predict_binned(X_binned, n_threads)
            if self.do_early_stopping_ and keep_raw_val:
                state.raw_predictions_val = self._raw_predict_binned(
                    X_binned_val, n_threads
                )
        else:
            self._baseline_prediction = self._loss.fit_intercept_only(
                y_true=data.y, sample_weight=data.sample_weight
            ).reshape((1, -1))
            if not np.isfinite(self._baseline_prediction).all():
                raise ValueError(
                    "the baseline prediction (the loss's best constant) is "
                    "not finite: the target or the sample weights are too "
                    "large; scale them down (e.g. divide y by its standard "
                    "deviation, the weights by their maximum)."
                )
            state.raw_predictions = self._baseline_raw(X_binned.shape[0])
            self._predictors = []
            self._scorer = None
            self.train_score_ = []
            self.validation_score_ = []
            if self.do_early_stopping_ and keep_raw_val:
                state.raw_predictions_val = self._baseline_raw(X_binned_val.shape[0])
        if self.do_early_stopping_ and self.scoring != "loss":
            self._scorer = check_scoring(self, self.scoring)
            small = self._get_small_trainset(
                X_binned, data.y, data.sample_weight, self._random_seed
            )
            state.X_small, state.y_small, state.sw_small, state.idx_small = small
            if data.eras is not None:
                state.eras_small = data.eras.subset(state.idx_small)
        if self.do_early_stopping_ and not warm:
            self._early_stopping_score(state, n_threads)
        return state

    def _update_gradients(self, data, state, gradient, hessian, n_threads):
        """Gradients (and hessians, unless constant) at the raw predictions,
        on eraboost's own threads (:mod:`eraboost._engine._loss_calls`)."""
        if self._loss.constant_hessian:
            loss_gradient(
                self._loss,
                data.y,
                state.raw_predictions,
                data.sample_weight,
                gradient,
                n_threads,
            )
        else:
            loss_gradient_hessian(
                self._loss,
                data.y,
                state.raw_predictions,
                data.sample_weight,
                gradient,
                hessian,
                n_threads,
            )

    def _grow_tree(self, engine, rows, tree_features, interaction_cst, row_buffers):
        """Grow one tree on the iteration's rows and the tree's features.

        ``rows`` is the iteration's in-bag mask (None: every row);
        ``tree_features`` the tree's drawn features (None: all);
        ``row_buffers`` two uint32 arrays of a row each, the tree's rows
        (which its grower reorders) and the partition's scratch.
        """
        if rows is None:
            # the root's rows copied on the engine's threads
            root, buffer = row_buffers
            copy_rows(root, engine.root_rows, engine.n_threads)
            root_is_identity = engine.root_rows_are_identity
        else:
            # still grouped by era (a new array)
            root, root_is_identity = engine.root_rows[rows[engine.root_rows]], False
            buffer = row_buffers[1][: root.shape[0]]
        grower = TreeGrower(
            engine,
            root,
            root_is_identity,
            interaction_cst=interaction_cst,
            feature_fraction_per_split=self.max_features,
            rng=self._feature_subsample_rng,
            shrinkage=self.learning_rate,
            tree_features=tree_features,
            buffer=buffer,
        )
        grower.grow()
        return grower

    def _fit_leaves_to_loss(self, grower, data, raw_k):
        """Leaf values that minimise a non-differentiable loss itself
        (absolute error, quantile), as scikit-learn computes them."""
        for leaf in grower.finalized_leaves:
            idx = leaf.sample_indices
            sw = None if data.sample_weight is None else data.sample_weight[idx]
            update = self._loss.fit_intercept_only(
                y_true=data.y[idx] - raw_k[idx], sample_weight=sw
            )
            leaf.value = grower.shrinkage * update

    def _add_tree_values(self, raw, k, grower, predictor, X_binned, rows, n_threads):
        """Add a new tree's values to column ``k`` of the raw predictions."""
        if rows is None:
            leaves = grower.finalized_leaves
            values = np.array([leaf.value for leaf in leaves], dtype=np.float64)
            indices = [leaf.sample_indices for leaf in leaves]
            col = raw[:, k]
            # one output: the column is raw's own memory, updated in place
            in_place = col.flags.c_contiguous
            if not in_place:
                col = np.ascontiguousarray(col)
            # a tree grown from rows 0, 1, ... keeps each leaf's rows in
            # ascending order (the partition is stable)
            add_leaf_values(
                col, indices, values, n_threads, ascending=grower.root_is_identity
            )
            if not in_place:
                raw[:, k] = col
        else:
            # the rows left out of the tree get its values too
            raw[:, k] += predictor.predict_binned(
                X_binned, self._bin_mapper.missing_bin_, n_threads
            )

    def _early_stopping_step(self, state, n_threads):
        """After an iteration: update the validation raw predictions, score,
        and tell whether early stopping ends the fit."""
        if not self.do_early_stopping_:
            return False
        if state.raw_predictions_val is not None:
            for k, pred in enumerate(self._predictors[-1]):
                state.raw_predictions_val[:, k] += pred.predict_binned(
                    state.X_binned_val, self._bin_mapper.missing_bin_, n_threads
                )
        return self._early_stopping_score(state, n_threads)

    def _early_stopping_score(self, state, n_threads):
        """Append the current train (and validation) score; True to stop."""
        data = state.data
        if self.scoring == "loss":
            return self._check_early_stopping_loss(
                state.raw_predictions,
                data.y,
                data.sample_weight,
                state.raw_predictions_val,
                data.y_val,
                data.sample_weight_val,
                n_threads,
            )
        return self._check_early_stopping_scorer(
            state.X_small,
            state.y_small,
            state.sw_small,
            state.X_binned_val,
            data.y_val,
            data.sample_weight_val,
            state.raw_predictions[state.idx_small] if state.scorer_uses_raw else None,
            state.raw_predictions_val,
            state.eras_small,
            data.eras_val,
        )

    def _run_callbacks(self, callbacks, iteration, fit_start):
        """Call every callback with this iteration's info; True to stop."""
        if not callbacks:
            return False
        info = IterationInfo(
            estimator=self,
            iteration=iteration + 1,
            max_iter=self.max_iter,
            train_score=self.train_score_[-1] if self.train_score_ else None,
            validation_score=(
                self.validation_score_[-1] if self.validation_score_ else None
            ),
            score_name=self._score_name(),
            elapsed=perf_counter() - fit_start,
        )
        stop = False
        for callback in callbacks:
            stop = bool(callback(info)) or stop
        return stop

    def _score_name(self):
        """Name of the early-stopping score (None without early stopping)."""
        if not self.do_early_stopping_:
            return None
        if self.scoring == "loss":
            return "loss"
        if isinstance(self.scoring, str):
            return self.scoring
        if isinstance(self.scoring, EraScorer) and isinstance(self.scoring.metric, str):
            return self.scoring.metric
        return "score"

    def _print_fit_stats(self, fit_start, timer):
        n_leaves = sum(p.get_n_leaf_nodes() for it in self._predictors for p in it)
        n_trees = sum(len(it) for it in self._predictors)
        print(
            f"Fit {n_trees} trees in {perf_counter() - fit_start:.3f} s, "
            f"({n_leaves} total leaves)"
        )
        print(f"{'Time spent computing histograms:':<32} {timer.histograms:.3f}s")
        print(f"{'Time spent finding best splits:':<32} {timer.splits:.3f}s")
        print(f"{'Time spent applying splits:':<32} {timer.apply:.3f}s")
        print(f"{'Time spent predicting:':<32} {timer.predict:.3f}s")

    def _keep_best_iteration(self):
        """Drop the iterations after the best early-stopping score.

        The best is the first iteration with the highest validation score
        (the training score without validation data); at least one
        iteration is kept. Without early stopping every iteration is kept.
        """
        if not self.do_early_stopping_:
            self.best_iteration_ = len(self._predictors)
            return
        scores = (
            self.validation_score_ if self._use_validation_data else (self.train_score_)
        )
        # scores[i]: after i iterations (scores[0] before the first tree)
        best = max(1, int(np.argmax(scores)))
        del self._predictors[best:]
        self.train_score_ = self.train_score_[: best + 1]
        self.validation_score_ = self.validation_score_[: best + 1]
        self.best_iteration_ = best

    # -- warm start ----------------------------------------------------------
    def _is_fitted(self):
        return len(getattr(self, "_predictors", [])) > 0

    def _check_warm_start_data(self, signature):
        """With warm start, the rows and eras must be those of the first fit."""
        n_prev, eras_prev = self._fit_signature
        n_now, eras_now = signature
        if n_now != n_prev:
            raise ValueError(
                f"warm_start=True continues the previous fit, which had "
                f"{n_prev} training rows, but X has {n_now} rows. Pass the "
                "same data again, or set warm_start=False to start afresh."
            )
        if (eras_prev is None) != (eras_now is None):
            now, prev = ("without", "with") if eras_now is None else ("with", "without")
            raise ValueError(
                f"warm_start=True: fit was called {now} eras but the "
                f"previous fit was {prev} eras; pass the same eras again, or "
                "set warm_start=False to start afresh."
            )
        if eras_now != eras_prev:
            raise ValueError(
                "warm_start=True: the eras differ from those of the previous "
                "fit; pass the same eras again (same label for each row), or "
                "set warm_start=False to start afresh."
            )

    def _raw_predict_binned(self, X_binned, n_threads):
        """Raw predictions of the current trees for binned rows."""
        *_, raw = self._raw_stages(X_binned, True, n_threads)
        return raw

    # -- early stopping ----------------------------------------------------------
    def _get_small_trainset(self, X_binned_train, y_train, sample_weight_train, seed):
        """At most 10,000 training rows for scoring with a scorer."""
        if X_binned_train.shape[0] <= 10_000:
            return X_binned_train, y_train, sample_weight_train, slice(None)
        stratify = y_train if is_classifier(self) else None
        idx = resample(
            np.arange(X_binned_train.shape[0]),
            n_samples=10_000,
            replace=False,
            random_state=seed,
            stratify=stratify,
        )
        sw = None if sample_weight_train is None else sample_weight_train[idx]
        return (np.ascontiguousarray(X_binned_train[idx]), y_train[idx], sw, idx)

    def _score_with_raw_predictions(
        self, X, y, sample_weight, raw_predictions=None, eras=None
    ):
        ctx = (
            nullcontext()
            if raw_predictions is None
            else _patch_raw_predict(self, raw_predictions)
        )
        with ctx:
            if isinstance(self._scorer, EraScorer):
                # per-era scores are unweighted: every era counts once
                return self._scorer(self, X, y, eras=eras)
            if sample_weight is None:
                return self._scorer(self, X, y)
            return self._scorer(self, X, y, sample_weight=sample_weight)

    def _check_early_stopping_scorer(
        self,
        X_small,
        y_small,
        sw_small,
        X_val,
        y_val,
        sw_val,
        raw_small=None,
        raw_val=None,
        eras_small=None,
        eras_val=None,
    ):
        if isinstance(self._scorer, EraScorer):
            missing = [
                name
                for name, e, used in [
                    ("training", eras_small, True),
                    ("validation", eras_val, self._use_validation_data),
                ]
                if used and e is None
            ]
            if missing:
                raise ValueError(
                    f"scoring={self._scorer!r} scores era by era, but the eras "
                    f"of the {missing[0]} rows of early stopping are unknown: "
                    "pass fit(..., eras=...) with at least two eras (and "
                    "eras_val with X_val)."
                )
        self._in_fit = True
        try:
            y_small_dec = self._decode_y(y_small)
            self.train_score_.append(
                self._score_with_raw_predictions(
                    X_small, y_small_dec, sw_small, raw_small, eras_small
                )
            )
            if self._use_validation_data:
                self.validation_score_.append(
                    self._score_with_raw_predictions(
                        X_val, self._decode_y(y_val), sw_val, raw_val, eras_val
                    )
                )
                return self._should_stop(self.validation_score_)
            return self._should_stop(self.train_score_)
        finally:
            del self._in_fit

    def _check_early_stopping_loss(
        self,
        raw_predictions,
        y_train,
        sw_train,
        raw_predictions_val,
        y_val,
        sw_val,
        n_threads=1,
    ):
        self.train_score_.append(
            -mean_loss(self._loss, y_train, raw_predictions, sw_train, n_threads)
        )
        if self._use_validation_data:
            self.validation_score_.append(
                -mean_loss(self._loss, y_val, raw_predictions_val, sw_val, n_threads)
            )
            return self._should_stop(self.validation_score_)
        return self._should_stop(self.train_score_)

    def _should_stop(self, scores):
        """True when none of the last n_iter_no_change scores beats the one
        before them by more than tol."""
        ref = self.n_iter_no_change + 1
        if len(scores) < ref:
            return False
        reference = scores[-ref] + self.tol
        return not any(s > reference for s in scores[-ref + 1 :])

    def _print_iteration_stats(self, start):
        msg = ""
        trees = self._predictors[-1]
        n_leaves = sum(p.get_n_leaf_nodes() for p in trees)
        max_depth = max(p.get_max_depth() for p in trees)
        msg += f"{len(trees)} tree{'s' if len(trees) > 1 else ''}, {n_leaves} leaves, "
        msg += f"max depth = {max_depth}, "
        if self.do_early_stopping_:
            # the scores are negated losses; a loss is printed positive, as
            # scikit-learn prints it
            name = "loss" if self.scoring == "loss" else "score"
            sign = -1 if name == "loss" else 1
            msg += f"train {name}: {sign * self.train_score_[-1]:.5f}, "
            if self._use_validation_data:
                msg += f"val {name}: {sign * self.validation_score_[-1]:.5f}, "
        msg += f"in {perf_counter() - start:0.3f}s"
        print(msg)

    # -- prediction --------------------------------------------------------------
    def _raw_predict(self, X, n_threads=None):
        """Baseline plus the sum of the trees' values, shape (n, K)."""
        check_is_fitted(self, "_predictors")
        is_binned = getattr(self, "_in_fit", False)
        if not is_binned:
            X = self._check_X(X, reset=False, mixed=True)
        if isinstance(X, MixedMatrix):
            return self._raw_predict_mixed(X, n_threads)
        if is_binned:
            *_, raw = self._raw_stages(X, is_binned, n_threads)
            return raw
        raw = self._baseline_raw(X.shape[0])
        add_raw_predictions(stacked_trees(self._predictors), X, raw, n_threads)
        return raw

    def _raw_predict_mixed(self, X, n_threads=None):
        """:meth:`_raw_predict` of a ``MixedMatrix``, by blocks of rows
        converted to float64, at most ``_MIXED_BLOCK_VALUES`` values at a
        time (the same sums, row by row, as for the whole table)."""
        raw = self._baseline_raw(X.shape[0])
        step = max(1, _MIXED_BLOCK_VALUES // max(X.shape[1], 1))
        stacked = stacked_trees(self._predictors)
        for start in range(0, X.shape[0], step):
            rows = slice(start, start + step)
            block = X.to_float64(rows)
            raw_block = self._baseline_raw(block.shape[0])
            add_raw_predictions(stacked, block, raw_block, n_threads)
            raw[rows] = raw_block
        return raw

    def _baseline_raw(self, n_samples):
        """Raw predictions before any tree: the baseline, shape
        (n_samples, K), Fortran order."""
        raw = np.zeros(
            (n_samples, self.n_trees_per_iteration_), dtype=Y_DTYPE, order="F"
        )
        raw += self._baseline_prediction
        return raw

    def _raw_stages(self, X, is_binned, n_threads=None):
        """The raw predictions of ``X``, stage by stage: the baseline, then
        after each stage with its trees' values added. One array (see
        :meth:`_baseline_raw`), updated in place and yielded each time."""
        raw = self._baseline_raw(X.shape[0])
        yield raw
        for stage in self._predictors:
            self._add_stage(X, stage, raw, is_binned, n_threads)
            yield raw

    def _add_stage(self, X, stage, raw, is_binned, n_threads=None):
        n_threads = n_threads or effective_n_threads()
        for k, pred in enumerate(stage):
            if is_binned:
                raw[:, k] += pred.predict_binned(
                    X, self._bin_mapper.missing_bin_, n_threads
                )
            else:
                raw[:, k] += pred.predict(X, n_threads)

    def _staged_raw_predict(self, X):
        check_is_fitted(self, "_predictors")
        X = self._check_X(X, reset=False)
        stages = self._raw_stages(X, False)
        next(stages)  # the baseline
        for raw in stages:
            yield raw.copy()

    @property
    def feature_importances_(self):
        """Pooled split gain per feature over all trees, summing to 1.

        See :func:`eraboost.inspection.feature_importances` (all zeros when
        no tree has a split); split counts and per-era importances are in
        :mod:`eraboost.inspection`.
        """
        return feature_importances(self)

    @property
    def n_iter_(self):
        """Number of boosting iterations done (with early stopping, fewer
        than ``max_iter``)."""
        check_is_fitted(self, "_predictors")
        return len(self._predictors)

    def _finalize_sample_weight(self, sample_weight, y):
        return sample_weight

    def _decode_y(self, y):
        return y

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    @abstractmethod
    def _get_loss(self, sample_weight):
        pass

    @abstractmethod
    def _encode_y(self, y):
        pass

    def _encode_y_val(self, y):
        return self._encode_y(y)


class HistGradientBoostingRegressor(RegressorMixin, BaseHistGradientBoosting):
    """Era-aware histogram-based gradient boosting regression tree.

    A drop-in replacement for
    :class:`sklearn.ensemble.HistGradientBoostingRegressor`: same parameters,
    defaults and results when no eras are given. With ``fit(X, y, eras=...)``
    and ``split_type="era"`` or ``"directional"``, splits are chosen for
    how well they work in every era rather than on the pooled data.

    Parameters
    ----------
    loss : {'squared_error', 'absolute_error', 'gamma', 'poisson', 'quantile'}, \
            default='squared_error'
        The loss function.
    quantile : float, default=None
        The quantile to predict with ``loss="quantile"``, in [0, 1].
    learning_rate : float, default=0.1
        Shrinkage of the leaf values.
    max_iter : int, default=100
        Maximum number of boosting iterations (trees).
    max_leaf_nodes : int or None, default=31
        Maximum number of leaves per tree.
    max_depth : int or None, default=None
        Maximum depth of each tree (edges from the root to the deepest leaf).
    min_samples_leaf : int, default=20
        Minimum number of rows per leaf (pooled over eras).
    l2_regularization : float, default=0
        L2 regularisation of the leaf values (``lam`` in the criteria).
    max_features : float, default=1.0
        Share of features drawn at random at each node split.
    max_bins : int, default=255
        Maximum number of bins for non-missing values (at most 255).
    categorical_features : array-like of {bool, int, str} or 'from_dtype' \
            or None, default='from_dtype'
        The categorical features: a boolean mask, integer indices, feature
        names (for a DataFrame), ``'from_dtype'`` (the Categorical and Enum
        columns of a pandas or polars DataFrame; nothing for an array) or
        None. As in scikit-learn, their values are ordinal-encoded
        internally (categories sorted; numbers, strings or pandas
        categories alike); each feature may have at most ``max_bins``
        categories, missing values not counted (any values are categories,
        negative ones included). Missing values are a category of their own;
        categories unseen in fit follow the missing values at prediction.
        Categorical features cannot have monotonic constraints.

        A categorical split sends a set of categories left. As in
        scikit-learn, the categories are ordered by their pooled
        ``sum(gradient) / (sum(hessian) + 10)`` (those with a hessian sum
        under 10 rows always go right) and the candidates are the prefixes of
        that order, from either end. Under ``split_type='era'`` or
        ``'directional'`` the order stays the pooled one, and each prefix is
        scored with the era criterion from its per-era sums accumulated along
        the same order (per-era gains, then ``S_era``, or ``D`` then
        ``S_era``), like any numeric candidate.
    monotonic_cst : array-like of int or dict, default=None
        Monotonic constraint per feature: 1 increasing, -1 decreasing, 0 none.
        It applies to the pooled leaf values under every ``split_type``.
    interaction_cst : {'pairwise', 'no_interactions'} or list of sets, default=None
        Groups of features allowed to interact within a branch. Indices
        refer to the columns of X as given, categorical or not (scikit-learn
        1.9 applies them after moving the categorical columns first, which
        gives the same trees only when those columns already come first).
    warm_start : bool, default=False
        Reuse the trees of the previous fit and add more iterations (up to
        ``max_iter``). Fit must be given the same data, and with eras the
        same eras: a different number of rows or different eras raise
        ``ValueError``. The warm-started fit grows the same trees as one
        long fit.
    early_stopping : 'auto' or bool, default='auto'
        Early stopping; 'auto' enables it when there are more than 10,000 rows.
    scoring : str, callable or None, default='loss'
        Score used for early stopping.
    validation_fraction : int or float or None, default=0.1
        Share (or number) of rows held out for early stopping. When eras are
        given, whole eras are held out: a seeded random subset of eras whose
        rows come closest to this share, so that early stopping measures
        out-of-era performance.
    n_iter_no_change : int, default=10
        Stop when none of the last ``n_iter_no_change`` scores improved by
        more than ``tol``.
    tol : float, default=1e-7
        Tolerance of early stopping.
    verbose : int, default=0
        Verbosity.
    random_state : int, RandomState instance or None, default=None
        Seeds the binning subsample, the validation split and feature
        subsampling.
    split_type : {'original', 'era', 'directional'}, default='original'
        Split criterion. 'original' is scikit-learn's pooled gain. 'era'
        maximises the Boltzmann operator of the per-era gains (DeLise's era
        splitting). 'directional' maximises the share of eras that agree on
        the direction of the split (the sign of the left minus the right
        Newton value), breaking ties by the era score, then the pooled gain.
        Leaf values always come from the pooled sums. Without eras every
        criterion reduces to 'original'.
    boltzmann_alpha : float, default=0.0
        Temperature of the Boltzmann operator over per-era gains: 0 is their
        mean, ``np.inf`` their maximum, ``-np.inf`` their minimum (the
        worst era), exactly. It acts on the gains in their own units: a gain
        grows with the size of its era, so the same alpha is sharper on large
        eras than on small ones. Also the tie-break score of 'directional'.
    irf_penalty : float, default=0.0
        Invariance penalty of the Invariant Decision Tree (Liao, Wu and Yan,
        "Invariant Random Forest", eq. 15 and 20-22). For a candidate split,
        each era with rows going left changes its Newton value by
        ``CR_e = -G_Le / (H_Le + lam) + G_e / (H_e + lam)``; the criterion's
        score becomes ``score - irf_penalty * H_node * Var_e(CR_e)``
        (population variance over those eras, ``H_node`` the node's hessian
        sum). ``score`` is the pooled gain ('original'), the era score
        ('era') or the tie-break score ('directional'). For squared error
        with unit weights this is exactly the paper's lambda: the gain is
        ``n`` times the impurity decrease. Expect fewer splits on features
        whose effect differs between eras and, with a large penalty, smaller
        trees: on the paper's synthetic regression (eq. 24, two training
        eras) penalties of 1 to 10 cut the booster's splits on the unstable
        feature by a fifth to two fifths and its test MSE by 1 to 5.5%
        (``docs/invariance.md``). The penalty looks at the left side only: a
        threshold where every era's left value moves by the same amount is
        not penalised, whatever happens on the right. 0 turns it off (the
        model is then bit-identical to one fitted without it). Needs eras;
        it also applies with 'original'.
    irf_variance : {"change", "difference"}, default="change"
        What ``irf_penalty`` takes the variance of over the eras
        (docs/criteria.md, "Invariance penalty"). "change": ``CR_e`` above,
        the paper's formula as written. "difference": the difference of the
        era's children's values, ``-G_Le / (H_Le + lam) + G_Re / (H_Re +
        lam)``, and a split must keep rows of every era of the node (of two
        rows or more) on both sides. As written, ``CR_e`` is the right
        share of the era's rows times that difference, so a threshold where
        the eras' shares and differences offset each other goes unpenalised;
        "difference" is the form that reproduces the paper's Table 2 in its
        forest. Used only with ``irf_penalty > 0``.
    min_samples_leaf_per_era : int or None, default=None
        The Time Robust Tree's constraint (Moneda and Mauá, eq. 5.1-5.2): a
        split is allowed only when every era present in the node keeps at
        least this many rows on each side. With ``split_type='era'``,
        ``boltzmann_alpha=-np.inf`` this is the TRT's worst-period criterion,
        with ``boltzmann_alpha=0`` its average criterion. Expect shallower
        trees whose splits exist in every era; too large a value stops
        growth early. Without eras it acts as a pooled minimum on
        ``min_samples_leaf``.
    era_groups : int, dict or None, default=None
        Groups of eras that fit uses in place of the eras (docs/criteria.md,
        "Era groups"), as the era-splitting paper grouped Numerai's eras: an
        int ``k >= 2`` cuts the distinct eras, in their natural order, into
        ``k`` contiguous groups of near-equal numbers of eras (labelled 0 ..
        k - 1); a dict maps each era to its group label, and every era given
        to fit must be a key. Every use of the eras in fit sees the groups:
        the criteria, the per-era minimum and penalty, the whole-era
        validation split, ``era_subsample`` and the early-stopping scorer;
        ``eras_val`` is grouped by the same dict, or with an int by the
        training eras' cut (an era joins the group of the last training era
        at or before it). ``eras_`` and ``n_eras_`` describe the groups.
        Fewer, larger groups give each per-era gain more rows and make the
        era criteria less noisy. None: each era its own group. Needs eras.
    min_agreement : float in [0, 1] or None, default=None
        A gate on directional agreement (docs/criteria.md, "Directional
        agreement"): a candidate split is considered only when at least
        this share of the node's eras move the same way as the pooled
        split (each era's left-minus-right value difference has the sign
        of the pooled one; an era with an empty side or equal values does
        not agree). Among the candidates that pass, the ``split_type``'s
        own score chooses. Expect fewer splits on features whose effect
        flips between eras, and smaller trees as it nears 1. None (or 0) is
        off. Needs eras; with ``split_type='original'`` and no eras, fit
        raises a ``ValueError``.
    pooled_weight : float in [0, 1], default=0.0
        With ``split_type='era'`` or ``'directional'``, the era score of a
        candidate becomes ``(1 - w) * era_score + w * gain / M``: a blend with
        the pooled gain per era taking part, in the same units as the
        per-era gains (docs/criteria.md, "Pooled weight"). Under
        ``'directional'`` it ranks the candidates of equal directional
        agreement. 0 is off (the model is bit-identical to one fitted
        without it); 1 is the pooled gain per era. Not with
        ``split_type='original'`` (a ``ValueError``: its score is the pooled
        gain already).
    colsample_bytree : float in (0, 1], default=1.0
        Share of the features each tree may split on: ``round(colsample_bytree
        * n_features)`` of them (at least one), drawn afresh for each tree
        (LightGBM's ``feature_fraction``). Histograms, pooled and per era,
        are built for those features only, so a tree costs about that share
        of a full one. ``max_features`` then draws, at each split, its share
        of the tree's features (LightGBM's ``feature_fraction_bynode``);
        interaction constraints apply within the tree's features.
    subsample : float in (0, 1], default=1.0
        Share of the training rows each iteration grows its trees on,
        ``round(subsample * n)`` rows drawn without replacement (stochastic
        gradient boosting); the trees' values are then added to the
        predictions of every training row. With several trees per iteration
        (multiclass) they share the rows.
    era_subsample : float in (0, 1], default=1.0
        Share of the training eras each iteration grows its trees on:
        ``round(era_subsample * n_eras)`` whole eras drawn without
        replacement (bagging whole eras), with all their rows; with
        ``subsample`` too, rows are then drawn among those eras'. Needs eras.
    keep_best_iteration : bool, default=False
        With early stopping, keep the model at its best score (the first
        iteration with the highest validation score, or training score
        without validation data) instead of the last one, as LightGBM's and
        XGBoost's best iteration; ``n_iter_``, ``train_score_`` and
        ``validation_score_`` then end there and ``best_iteration_`` is set.
        False keeps scikit-learn's behaviour (all iterations done).

    Each of the draws above comes from one generator seeded by
    ``random_state`` in the main thread: the model is the same whatever the
    number of threads. At their defaults nothing is drawn and the model is
    the same as without these parameters.

    Attributes
    ----------
    do_early_stopping_ : bool
    n_iter_ : int
    n_trees_per_iteration_ : int
    train_score_ : ndarray
    validation_score_ : ndarray
    eras_ : ndarray or None
        The distinct era labels seen in fit (the group labels with
        ``era_groups``).
    n_eras_ : int
    is_categorical_ : ndarray of bool (n_features,) or None
        The categorical features; None when there are none.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
    best_iteration_ : int
        The iterations kept, with ``keep_best_iteration=True``.
    feature_importances_ : ndarray of shape (n_features_in_,)
        Pooled split gain per feature over all trees, normalised to sum 1
        (all zeros when no tree has a split); see :mod:`eraboost.inspection`
        for split counts and per-era importances.

    Examples
    --------
    >>> import numpy as np
    >>> from eraboost import HistGradientBoostingRegressor
    >>> rng = np.random.RandomState(0)
    >>> X = rng.randint(0, 5, size=(1000, 4)).astype(np.int8)
    >>> eras = np.repeat(np.arange(10), 100)
    >>> y = X[:, 0] + rng.normal(size=1000)
    >>> est = HistGradientBoostingRegressor(split_type="era", max_iter=20)
    >>> est.fit(X, y, eras=eras).predict(X[:2]).shape
    (2,)
    """

    _parameter_constraints: dict = {
        **BaseHistGradientBoosting._parameter_constraints,
        "loss": [StrOptions(set(_LOSSES)), BaseLoss],
        "quantile": [Interval(Real, 0, 1, closed="both"), None],
    }

    def __init__(
        self,
        loss="squared_error",
        *,
        quantile=None,
        learning_rate=0.1,
        max_iter=100,
        max_leaf_nodes=31,
        max_depth=None,
        min_samples_leaf=20,
        l2_regularization=0.0,
        max_features=1.0,
        max_bins=255,
        categorical_features="from_dtype",
        monotonic_cst=None,
        interaction_cst=None,
        warm_start=False,
        early_stopping="auto",
        scoring="loss",
        validation_fraction=0.1,
        n_iter_no_change=10,
        tol=1e-7,
        verbose=0,
        random_state=None,
        split_type="original",
        boltzmann_alpha=0.0,
        irf_penalty=0.0,
        irf_variance="change",
        min_samples_leaf_per_era=None,
        era_groups=None,
        min_agreement=None,
        pooled_weight=0.0,
        colsample_bytree=1.0,
        subsample=1.0,
        era_subsample=1.0,
        keep_best_iteration=False,
    ):
        super().__init__(
            loss=loss,
            learning_rate=learning_rate,
            max_iter=max_iter,
            max_leaf_nodes=max_leaf_nodes,
            max_depth=max_depth,
            min_samples_leaf=min_samples_leaf,
            l2_regularization=l2_regularization,
            max_features=max_features,
            max_bins=max_bins,
            categorical_features=categorical_features,
            monotonic_cst=monotonic_cst,
            interaction_cst=interaction_cst,
            warm_start=warm_start,
            early_stopping=early_stopping,
            scoring=scoring,
            validation_fraction=validation_fraction,
            n_iter_no_change=n_iter_no_change,
            tol=tol,
            verbose=verbose,
            random_state=random_state,
            split_type=split_type,
            boltzmann_alpha=boltzmann_alpha,
            irf_penalty=irf_penalty,
            irf_variance=irf_variance,
            min_samples_leaf_per_era=min_samples_leaf_per_era,
            era_groups=era_groups,
            min_agreement=min_agreement,
            pooled_weight=pooled_weight,
            colsample_bytree=colsample_bytree,
            subsample=subsample,
            era_subsample=era_subsample,
            keep_best_iteration=keep_best_iteration,
        )
        self.quantile = quantile

    def predict(self, X):
        """Predicted values for X, shape (n_samples,)."""
        check_is_fitted(self, "_predictors")
        return self._loss.link.inverse(self._raw_predict(X).ravel())

    def staged_predict(self, X):
        """Predictions after each iteration (a generator)."""
        for raw in self._staged_raw_predict(X):
            yield self._loss.link.inverse(raw.ravel())

    def _encode_y(self, y):
        self.n_trees_per_iteration_ = 1
        y = y.astype(Y_DTYPE, copy=False)
        if self.loss == "gamma" and not np.all(y > 0):
            raise ValueError("loss='gamma' requires strictly positive y.")
        if self.loss == "poisson" and not (np.all(y >= 0) and np.sum(y) > 0):
            raise ValueError("loss='poisson' requires non-negative y and sum(y) > 0.")
        return y

    def _get_loss(self, sample_weight):
        if self.loss == "quantile":
            return _LOSSES["quantile"](
                sample_weight=sample_weight, quantile=self.quantile
            )
        return _LOSSES[self.loss](sample_weight=sample_weight)
