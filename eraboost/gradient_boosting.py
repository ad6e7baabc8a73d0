"""Era-aware histogram gradient boosting estimators (the fit loop)."""
from abc import ABC, abstractmethod
from contextlib import contextmanager, nullcontext
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
from sklearn.base import BaseEstimator, RegressorMixin, _fit_context
from sklearn.metrics import check_scoring
from sklearn.metrics._scorer import _SCORERS
from sklearn.model_selection import train_test_split
from sklearn.utils import check_random_state, resample
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions
from sklearn.utils.validation import (
    _check_sample_weight,
    check_array,
    check_consistent_length,
    check_is_fitted,
    column_or_1d,
    validate_data,
)

from ._common import G_DTYPE, SPLIT_TYPES, Y_DTYPE
from ._eras import check_eras, era_train_val_split, warn_single_era
from ._histogram import HistogramBuilder, histogram_layout
from ._openmp import effective_n_threads
from ._predictor import add_leaf_values
from ._splitting import Splitter
from .binning import INT_DTYPES, BinMapper
from .grower import HistogramPool, TreeGrower, check_histogram_memory

_LOSSES = {
    "squared_error": HalfSquaredError,
    "absolute_error": AbsoluteError,
    "poisson": HalfPoissonLoss,
    "gamma": HalfGammaLoss,
    "quantile": PinballLoss,
}


@contextmanager
def _patch_raw_predict(estimator, raw_predictions):
    """Make ``estimator._raw_predict`` return precomputed raw predictions."""
    estimator._raw_predict = lambda X, n_threads=None: raw_predictions
    try:
        yield estimator
    finally:
        del estimator._raw_predict


def _check_monotonic_cst(estimator, monotonic_cst, n_features):
    if monotonic_cst is None:
        return np.zeros(n_features, dtype=np.int8)
    if isinstance(monotonic_cst, dict):
        names = getattr(estimator, "feature_names_in_", None)
        if names is None:
            raise ValueError(
                "monotonic_cst given as a dict needs X with feature names "
                "(a pandas DataFrame)."
            )
        unknown = set(monotonic_cst) - set(names)
        if unknown:
            raise ValueError(
                f"monotonic_cst names unknown features: {sorted(unknown)}."
            )
        cst = np.zeros(n_features, dtype=np.int8)
        for i, name in enumerate(names):
            cst[i] = monotonic_cst.get(name, 0)
    else:
        cst = np.asarray(monotonic_cst)
        if cst.shape != (n_features,):
            raise ValueError(
                f"monotonic_cst has shape {cst.shape} but the input data X "
                f"has {n_features} features."
            )
    if not np.isin(cst, (-1, 0, 1)).all():
        raise ValueError("monotonic_cst must be an array-like of -1, 0 or 1.")
    return cst.astype(np.int8)


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
            list, tuple, StrOptions({"pairwise", "no_interactions"}), None
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
    }

    @abstractmethod
    def __init__(self, loss, *, learning_rate, max_iter, max_leaf_nodes,
                 max_depth, min_samples_leaf, l2_regularization, max_features,
                 max_bins, categorical_features, monotonic_cst, interaction_cst,
                 warm_start, early_stopping, scoring, validation_fraction,
                 n_iter_no_change, tol, verbose, random_state, split_type,
                 boltzmann_alpha):
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

    # -- input checks ---------------------------------------------------------
    def _check_X(self, X, reset):
        if reset:
            dtypes = getattr(X, "dtypes", None)
            from_dtype = (self.categorical_features == "from_dtype"
                          and dtypes is not None
                          and any(str(d) in ("category", "Categorical")
                                  for d in dtypes))
            if from_dtype or not (self.categorical_features is None
                                  or self.categorical_features == "from_dtype"):
                raise NotImplementedError(
                    "categorical features are not supported in this version of "
                    "eraboost; encode them as numbers or pass "
                    "categorical_features=None."
                )
        # 8- and 16-bit integers are binned and predicted without a float copy
        return validate_data(self, X, dtype=[np.float64, *INT_DTYPES],
                             ensure_all_finite=False, reset=reset)

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
            groups = [[i, j] for i in range(n_features)
                      for j in range(i + 1, n_features)]
        else:
            groups = self.interaction_cst
        try:
            sets = [set(g) for g in groups]
        except TypeError:
            raise ValueError(
                "interaction_cst must be a list of lists (or tuples/sets) of "
                f"feature indices; got {self.interaction_cst!r}."
            ) from None
        for s in sets:
            for i in s:
                if not (isinstance(i, Integral) and 0 <= i < n_features):
                    raise ValueError(
                        "interaction_cst must name feature indices in "
                        f"[0, {n_features - 1}]; got {i!r}."
                    )
        rest = set(range(n_features)) - set().union(*sets)
        if rest:
            sets.append(rest)
        return sets

    def _check_alpha(self):
        alpha = float(self.boltzmann_alpha)
        if np.isnan(alpha):
            raise ValueError(
                "boltzmann_alpha=nan is not allowed; use a float, -np.inf "
                "(minimum over eras), 0 (mean) or np.inf (maximum)."
            )
        return alpha

    # -- fit ---------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, *, eras=None, X_val=None, y_val=None,
            sample_weight_val=None, eras_val=None):
        """Fit the gradient boosting model.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data. NaN marks missing values. int8, uint8, int16 and
            uint16 arrays are binned as they are, without a float64 copy
            (same bins as scikit-learn's); a Fortran-ordered uint8 array
            whose values already are their bins is used without any copy.
        y : array-like of shape (n_samples,)
            Target values.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the training rows.
        eras : array-like of shape (n_samples,), default=None
            Era (environment) label of each row: integers, strings, a pandas
            Series or Categorical. ``None`` means a single era, with which
            every ``split_type`` grows the same trees as scikit-learn.
        X_val, y_val, sample_weight_val : array-like, default=None
            Validation data for early stopping, instead of an internal split.
        eras_val : array-like of shape (n_val,), default=None
            Eras of ``X_val``.

        Returns
        -------
        self : object
        """
        fit_start = perf_counter()
        alpha = self._check_alpha()
        if self.warm_start:
            raise NotImplementedError(
                "warm_start=True is not supported in this version of eraboost."
            )
        X = self._check_X(X, reset=True)
        y = self._encode_y(self._check_y(y))
        check_consistent_length(X, y)
        n_samples, n_features = X.shape
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        sample_weight = self._finalize_sample_weight(sample_weight, y)

        if eras is not None:
            era_codes, self.eras_ = check_eras(eras, n_samples)
        else:
            era_codes, self.eras_ = None, None
        self.n_eras_ = 1 if era_codes is None else len(self.eras_)
        if self.split_type != "original" and self.n_eras_ < 2:
            warn_single_era(self.split_type)

        validation_data_provided = X_val is not None or y_val is not None
        if validation_data_provided:
            if y_val is None:
                raise ValueError("X_val is provided, but y_val was not provided.")
            if X_val is None:
                raise ValueError("y_val is provided, but X_val was not provided.")
            X_val = self._check_X(X_val, reset=False)
            y_val = self._encode_y_val(self._check_y(y_val, "y_val"))
            check_consistent_length(X_val, y_val)
            if sample_weight_val is not None:
                sample_weight_val = _check_sample_weight(sample_weight_val, X_val,
                                                         dtype=np.float64)
            if eras_val is not None:
                check_eras(eras_val, X_val.shape[0], name="eras_val")
            if self.early_stopping is False:
                raise ValueError(
                    "X_val and y_val are passed to fit while early_stopping is "
                    "False; set early_stopping to 'auto' or True."
                )
        elif eras_val is not None:
            raise ValueError("eras_val is provided, but X_val was not provided.")

        rng = check_random_state(self.random_state)
        self._random_seed = rng.randint(np.iinfo(np.uint32).max, dtype="u8")
        self._feature_subsample_rng = np.random.default_rng(
            rng.randint(np.iinfo(np.uint32).max, dtype="u8")
        )
        monotonic_cst = _check_monotonic_cst(self, self.monotonic_cst, n_features)
        if self.n_trees_per_iteration_ != 1 and np.any(monotonic_cst != 0):
            raise ValueError(
                "monotonic constraints are not supported for multiclass "
                "classification."
            )
        interaction_cst = self._check_interaction_cst(n_features)
        n_threads = effective_n_threads()
        self._loss = (self.loss if isinstance(self.loss, BaseLoss)
                      else self._get_loss(sample_weight=sample_weight))

        if self.early_stopping == "auto":
            self.do_early_stopping_ = n_samples > 10_000
        else:
            self.do_early_stopping_ = self.early_stopping
        self._use_validation_data = (self.validation_fraction is not None
                                     or validation_data_provided)
        codes_train = era_codes
        if (self.do_early_stopping_ and self._use_validation_data
                and not validation_data_provided):
            if era_codes is not None and self.n_eras_ >= 2:
                # hold out whole eras: early stopping measures out-of-era skill
                val_mask = era_train_val_split(era_codes, self.validation_fraction,
                                               int(self._random_seed % (2**32)))
                tr = ~val_mask
                X_train, X_val = X[tr], X[val_mask]
                y_train, y_val = y[tr], y[val_mask]
                codes_train = era_codes[tr]
                if sample_weight is None:
                    sample_weight_train = sample_weight_val = None
                else:
                    sample_weight_train = sample_weight[tr]
                    sample_weight_val = sample_weight[val_mask]
            else:
                stratify = y if hasattr(self._loss, "predict_proba") else None
                arrays = [X, y] if sample_weight is None else [X, y, sample_weight]
                parts = train_test_split(*arrays, test_size=self.validation_fraction,
                                         stratify=stratify,
                                         random_state=self._random_seed)
                X_train, X_val, y_train, y_val = parts[:4]
                sample_weight_train, sample_weight_val = (
                    (None, None) if sample_weight is None else parts[4:6])
                codes_train = None
        else:
            X_train, y_train, sample_weight_train = X, y, sample_weight
            if not validation_data_provided:
                X_val = y_val = sample_weight_val = None

        # -- binning --------------------------------------------------------------
        tic = perf_counter()
        self._bin_mapper = BinMapper(max_bins=self.max_bins,
                                     random_state=self._random_seed,
                                     n_threads=n_threads)
        X_binned_train = self._bin_mapper.fit_transform(X_train, sample_weight_train)
        X_binned_val = (None if X_val is None
                        else np.ascontiguousarray(self._bin_mapper.transform(X_val)))
        if self.verbose:
            print(f"Binning {X_train.nbytes / 1e9:.3f} GB of training data: "
                  f"{perf_counter() - tic:.3f} s")
        bm = self._bin_mapper
        has_missing = bm.has_missing_values(X_binned_train)
        n_samples = X_binned_train.shape[0]

        # -- eras for the criterion ---------------------------------------------
        split_code = SPLIT_TYPES[self.split_type]
        n_eras_hist = 1
        if split_code != 0 and codes_train is not None:
            labels, codes_train = np.unique(codes_train, return_inverse=True)
            codes_train = codes_train.astype(np.int32).ravel()
            n_eras_hist = labels.size
        if n_eras_hist < 2:
            split_code, n_eras_hist, codes_train = 0, 1, None
        if codes_train is None:
            root_indices = np.arange(n_samples, dtype=np.uint32)
            root_is_identity = True
        else:
            root_indices = np.argsort(codes_train, kind="stable").astype(np.uint32)
            root_is_identity = bool(np.all(np.diff(codes_train) >= 0))
        self._n_eras_hist = n_eras_hist

        # -- boosting state --------------------------------------------------------
        self._baseline_prediction = self._loss.fit_intercept_only(
            y_true=y_train, sample_weight=sample_weight_train).reshape((1, -1))
        K = self.n_trees_per_iteration_
        raw_predictions = np.zeros((n_samples, K), dtype=Y_DTYPE, order="F")
        raw_predictions += self._baseline_prediction
        self._predictors = predictors = []
        self._scorer = None
        raw_predictions_val = None
        self.train_score_ = []
        self.validation_score_ = []
        scoring_is_predefined_string = self.scoring in _SCORERS
        need_raw_predictions_val = X_binned_val is not None and (
            scoring_is_predefined_string or self.scoring == "loss")
        if self.do_early_stopping_:
            if need_raw_predictions_val:
                raw_predictions_val = np.zeros((X_binned_val.shape[0], K),
                                               dtype=Y_DTYPE, order="F")
                raw_predictions_val += self._baseline_prediction
            if self.scoring == "loss":
                self._check_early_stopping_loss(
                    raw_predictions, y_train, sample_weight_train,
                    raw_predictions_val, y_val, sample_weight_val, n_threads)
            else:
                self._scorer = check_scoring(self, self.scoring)
                small = self._get_small_trainset(X_binned_train, y_train,
                                                 sample_weight_train,
                                                 self._random_seed)
                X_small, y_small, sw_small, idx_small = small
                self._check_early_stopping_scorer(
                    X_small, y_small, sw_small, X_binned_val, y_val,
                    sample_weight_val,
                    raw_predictions[idx_small] if scoring_is_predefined_string else None,
                    raw_predictions_val)

        gradient, hessian = self._loss.init_gradient_and_hessian(
            n_samples=n_samples, dtype=G_DTYPE, order="F")
        g_view = gradient.reshape((-1, 1)) if gradient.ndim == 1 else gradient
        h_view = hessian.reshape((-1, 1)) if hessian.ndim == 1 else hessian

        offsets = histogram_layout(bm.n_bins_, n_eras_hist)
        if n_eras_hist > 1:
            check_histogram_memory(int(offsets[-1]), n_eras_hist,
                                   self.max_leaf_nodes, self.max_depth, n_samples,
                                   self.min_samples_leaf)
        pool = HistogramPool(offsets[-1])
        builder = HistogramBuilder(X_binned_train, bm.n_bins_, offsets, n_eras_hist,
                                   codes_train, g_view[:, 0], h_view[:, 0], n_threads)
        splitter = Splitter(bm.n_bins_, offsets, n_eras_hist, has_missing,
                            monotonic_cst, split_code, alpha,
                            float(self.l2_regularization), 1e-3,
                            int(self.min_samples_leaf),
                            bool(builder.hessians_are_constant), n_threads)
        t_hist = t_split = t_apply = t_pred = 0.0
        if self.verbose:
            print("Fitting gradient boosted rounds:")

        for iteration in range(self.max_iter):
            if self.verbose >= 2:
                it_start = perf_counter()
                print(f"[{iteration + 1}/{self.max_iter}] ", end="", flush=True)
            if self._loss.constant_hessian:
                self._loss.gradient(y_true=y_train, raw_prediction=raw_predictions,
                                    sample_weight=sample_weight_train,
                                    gradient_out=gradient, n_threads=n_threads)
            else:
                self._loss.gradient_hessian(
                    y_true=y_train, raw_prediction=raw_predictions,
                    sample_weight=sample_weight_train, gradient_out=gradient,
                    hessian_out=hessian, n_threads=n_threads)
            predictors.append([])
            for k in range(K):
                builder.update_gradients(g_view[:, k], h_view[:, k])
                grower = TreeGrower(
                    X_binned_train, builder, splitter, pool, root_indices.copy(),
                    root_is_identity, bm.n_bins_non_missing_, has_missing,
                    offsets, self.max_bins,
                    max_leaf_nodes=self.max_leaf_nodes, max_depth=self.max_depth,
                    min_samples_leaf=self.min_samples_leaf,
                    monotonic_cst=monotonic_cst, interaction_cst=interaction_cst,
                    feature_fraction_per_split=self.max_features,
                    rng=self._feature_subsample_rng, shrinkage=self.learning_rate,
                    n_threads=n_threads)
                grower.grow()
                t_hist += grower.total_compute_hist_time
                t_split += grower.total_find_split_time
                t_apply += grower.total_apply_split_time
                if not self._loss.differentiable:
                    for leaf in grower.finalized_leaves:
                        idx = leaf.sample_indices
                        sw = None if sample_weight_train is None else sample_weight_train[idx]
                        update = self._loss.fit_intercept_only(
                            y_true=y_train[idx] - raw_predictions[idx, k],
                            sample_weight=sw)
                        leaf.value = grower.shrinkage * update
                predictors[-1].append(grower.make_predictor(bm.bin_thresholds_))
                tic = perf_counter()
                col = np.ascontiguousarray(raw_predictions[:, k])
                for leaf in grower.finalized_leaves:
                    add_leaf_values(col, leaf.sample_indices, float(leaf.value))
                raw_predictions[:, k] = col
                t_pred += perf_counter() - tic

            should_stop = False
            if self.do_early_stopping_:
                if need_raw_predictions_val:
                    for k, pred in enumerate(predictors[-1]):
                        raw_predictions_val[:, k] += pred.predict_binned(
                            X_binned_val, bm.missing_bin_, n_threads)
                if self.scoring == "loss":
                    should_stop = self._check_early_stopping_loss(
                        raw_predictions, y_train, sample_weight_train,
                        raw_predictions_val, y_val, sample_weight_val, n_threads)
                else:
                    should_stop = self._check_early_stopping_scorer(
                        X_small, y_small, sw_small, X_binned_val, y_val,
                        sample_weight_val,
                        raw_predictions[idx_small] if scoring_is_predefined_string else None,
                        raw_predictions_val)
            if self.verbose >= 2:
                self._print_iteration_stats(it_start)
            if should_stop:
                break

        self._histogram_bytes = pool.nbytes
        if self.verbose:
            n_leaves = sum(p.get_n_leaf_nodes() for it in predictors for p in it)
            n_trees = sum(len(it) for it in predictors)
            print(f"Fit {n_trees} trees in {perf_counter() - fit_start:.3f} s, "
                  f"({n_leaves} total leaves)")
            print(f"{'Time spent computing histograms:':<32} {t_hist:.3f}s")
            print(f"{'Time spent finding best splits:':<32} {t_split:.3f}s")
            print(f"{'Time spent applying splits:':<32} {t_apply:.3f}s")
            print(f"{'Time spent predicting:':<32} {t_pred:.3f}s")
        self.train_score_ = np.asarray(self.train_score_)
        self.validation_score_ = np.asarray(self.validation_score_)
        return self

    # -- early stopping ----------------------------------------------------------
    def _get_small_trainset(self, X_binned_train, y_train, sample_weight_train, seed):
        """At most 10,000 training rows for scoring with a scorer."""
        if X_binned_train.shape[0] <= 10_000:
            return X_binned_train, y_train, sample_weight_train, slice(None)
        stratify = y_train if hasattr(self._loss, "predict_proba") else None
        idx = resample(np.arange(X_binned_train.shape[0]), n_samples=10_000,
                       replace=False, random_state=seed, stratify=stratify)
        sw = None if sample_weight_train is None else sample_weight_train[idx]
        return (np.ascontiguousarray(X_binned_train[idx]), y_train[idx], sw, idx)

    def _score_with_raw_predictions(self, X, y, sample_weight, raw_predictions=None):
        ctx = (nullcontext() if raw_predictions is None
               else _patch_raw_predict(self, raw_predictions))
        with ctx:
            if sample_weight is None:
                return self._scorer(self, X, y)
            return self._scorer(self, X, y, sample_weight=sample_weight)

    def _check_early_stopping_scorer(self, X_small, y_small, sw_small, X_val,
                                     y_val, sw_val, raw_small=None, raw_val=None):
        self._in_fit = True
        try:
            y_small_dec = self._decode_y(y_small)
            self.train_score_.append(
                self._score_with_raw_predictions(X_small, y_small_dec, sw_small,
                                                 raw_small))
            if self._use_validation_data:
                self.validation_score_.append(
                    self._score_with_raw_predictions(X_val, self._decode_y(y_val),
                                                     sw_val, raw_val))
                return self._should_stop(self.validation_score_)
            return self._should_stop(self.train_score_)
        finally:
            del self._in_fit

    def _check_early_stopping_loss(self, raw_predictions, y_train, sw_train,
                                   raw_predictions_val, y_val, sw_val, n_threads=1):
        self.train_score_.append(-self._loss(y_true=y_train,
                                             raw_prediction=raw_predictions,
                                             sample_weight=sw_train,
                                             n_threads=n_threads))
        if self._use_validation_data:
            self.validation_score_.append(-self._loss(
                y_true=y_val, raw_prediction=raw_predictions_val,
                sample_weight=sw_val, n_threads=n_threads))
            return self._should_stop(self.validation_score_)
        return self._should_stop(self.train_score_)

    def _should_stop(self, scores):
        """True when none of the last n_iter_no_change scores beats the one
        before them by more than tol."""
        ref = self.n_iter_no_change + 1
        if len(scores) < ref:
            return False
        reference = scores[-ref] + self.tol
        return not any(s > reference for s in scores[-ref + 1:])

    def _print_iteration_stats(self, start):
        msg = ""
        trees = self._predictors[-1]
        n_leaves = sum(p.get_n_leaf_nodes() for p in trees)
        max_depth = max(p.get_max_depth() for p in trees)
        msg += f"{len(trees)} tree{'s' if len(trees) > 1 else ''}, {n_leaves} leaves, "
        msg += f"max depth = {max_depth}, "
        if self.do_early_stopping_:
            name = "loss" if self.scoring == "loss" else "score"
            msg += f"train {name}: {self.train_score_[-1]:.5f}, "
            if self._use_validation_data:
                msg += f"val {name}: {self.validation_score_[-1]:.5f}, "
        msg += f"in {perf_counter() - start:0.3f}s"
        print(msg)

    # -- prediction --------------------------------------------------------------
    def _raw_predict(self, X, n_threads=None):
        """Baseline plus the sum of the trees' values, shape (n, K)."""
        check_is_fitted(self, "_predictors")
        is_binned = getattr(self, "_in_fit", False)
        if not is_binned:
            X = self._check_X(X, reset=False)
        raw = np.zeros((X.shape[0], self.n_trees_per_iteration_), dtype=Y_DTYPE,
                       order="F")
        raw += self._baseline_prediction
        for stage in self._predictors:
            self._add_stage(X, stage, raw, is_binned, n_threads)
        return raw

    def _add_stage(self, X, stage, raw, is_binned, n_threads=None):
        n_threads = n_threads or effective_n_threads()
        for k, pred in enumerate(stage):
            if is_binned:
                raw[:, k] += pred.predict_binned(X, self._bin_mapper.missing_bin_,
                                                 n_threads)
            else:
                raw[:, k] += pred.predict(X, n_threads)

    def _staged_raw_predict(self, X):
        check_is_fitted(self, "_predictors")
        X = self._check_X(X, reset=False)
        raw = np.zeros((X.shape[0], self.n_trees_per_iteration_), dtype=Y_DTYPE,
                       order="F")
        raw += self._baseline_prediction
        for stage in self._predictors:
            self._add_stage(X, stage, raw, False)
            yield raw.copy()

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
    categorical_features : None or 'from_dtype', default='from_dtype'
        Categorical features are not supported yet; pandas categorical
        columns raise ``NotImplementedError``.
    monotonic_cst : array-like of int or dict, default=None
        Monotonic constraint per feature: 1 increasing, -1 decreasing, 0 none.
        It applies to the pooled leaf values under every ``split_type``.
    interaction_cst : {'pairwise', 'no_interactions'} or list of sets, default=None
        Groups of features allowed to interact within a branch.
    warm_start : bool, default=False
        Not supported yet (``True`` raises ``NotImplementedError``).
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

    Attributes
    ----------
    do_early_stopping_ : bool
    n_iter_ : int
    n_trees_per_iteration_ : int
    train_score_ : ndarray
    validation_score_ : ndarray
    eras_ : ndarray or None
        The distinct era labels seen in fit.
    n_eras_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of str

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

    def __init__(self, loss="squared_error", *, quantile=None, learning_rate=0.1,
                 max_iter=100, max_leaf_nodes=31, max_depth=None,
                 min_samples_leaf=20, l2_regularization=0.0, max_features=1.0,
                 max_bins=255, categorical_features="from_dtype",
                 monotonic_cst=None, interaction_cst=None, warm_start=False,
                 early_stopping="auto", scoring="loss", validation_fraction=0.1,
                 n_iter_no_change=10, tol=1e-7, verbose=0, random_state=None,
                 split_type="original", boltzmann_alpha=0.0):
        super().__init__(
            loss=loss, learning_rate=learning_rate, max_iter=max_iter,
            max_leaf_nodes=max_leaf_nodes, max_depth=max_depth,
            min_samples_leaf=min_samples_leaf,
            l2_regularization=l2_regularization, max_features=max_features,
            max_bins=max_bins, categorical_features=categorical_features,
            monotonic_cst=monotonic_cst, interaction_cst=interaction_cst,
            warm_start=warm_start, early_stopping=early_stopping,
            scoring=scoring, validation_fraction=validation_fraction,
            n_iter_no_change=n_iter_no_change, tol=tol, verbose=verbose,
            random_state=random_state, split_type=split_type,
            boltzmann_alpha=boltzmann_alpha)
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
            return _LOSSES["quantile"](sample_weight=sample_weight,
                                       quantile=self.quantile)
        return _LOSSES[self.loss](sample_weight=sample_weight)
