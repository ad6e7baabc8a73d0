"""Era-aware histogram gradient boosting classifier."""

from typing import ClassVar

import numpy as np
from sklearn._loss.loss import BaseLoss, HalfBinomialLoss, HalfMultinomialLoss
from sklearn.base import ClassifierMixin
from sklearn.preprocessing import LabelEncoder
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets

from ._engine._common import Y_DTYPE
from .gradient_boosting import BaseHistGradientBoosting


class HistGradientBoostingClassifier(ClassifierMixin, BaseHistGradientBoosting):
    """Era-aware histogram-based gradient boosting classification tree.

    A drop-in replacement for
    :class:`sklearn.ensemble.HistGradientBoostingClassifier`: same parameters,
    defaults and results when no eras are given. With ``fit(X, y, eras=...)``
    and ``split_type="era"`` or ``"directional"``, splits are chosen for how
    well they work in every era rather than on the pooled data.

    Binary problems grow one tree per iteration on the gradients of the
    binomial log loss; problems with ``K > 2`` classes grow ``K`` trees per
    iteration, and the tree of class ``k`` is grown (criteria included, era
    by era) on the gradients and hessians of class ``k`` of the multinomial
    log loss.

    Parameters
    ----------
    loss : {'log_loss'}, default='log_loss'
        The loss function: binomial log loss for two classes, multinomial
        log loss (softmax link) for more.
    learning_rate : float, default=0.1
        Shrinkage of the leaf values.
    max_iter : int, default=100
        Maximum number of boosting iterations (each grows one tree, or one
        tree per class when there are more than two classes).
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
    categorical_features : array-like of {bool, int, str}, 'from_dtype' or None, \
            default='from_dtype'
        Which features are categorical, as in scikit-learn; see
        :class:`~eraboost.HistGradientBoostingRegressor` for how categorical
        splits are scored under the era criteria.
    monotonic_cst : array-like of int or dict, default=None
        Monotonic constraint per feature on the probability of the positive
        class: 1 increasing, -1 decreasing, 0 none. Binary problems only.
    interaction_cst : {'pairwise', 'no_interactions'} or list of sets, default=None
        Groups of features allowed to interact within a branch.
    warm_start : bool, default=False
        Reuse the trees of the previous fit and add more iterations (up to
        ``max_iter``). Fit must be given the same data, and with eras the
        same eras: a different number of rows or different eras raise
        ``ValueError``. The warm-started fit grows the same trees as one
        long fit.
    early_stopping : 'auto' or bool, default='auto'
        Early stopping; 'auto' enables it when there are more than 10,000 rows.
    scoring : str, callable or None, default='loss'
        Score used for early stopping ('loss', a scorer name or callable;
        ``None`` means accuracy).
    validation_fraction : int or float or None, default=0.1
        Share (or number) of rows held out for early stopping. Without eras
        the rows are split stratified by class, as in scikit-learn. With
        eras, whole eras are held out and the class balance is kept sensible:
        among seeded random subsets of eras (50 orders of the eras, each cut
        at every point), only splits in which every class occurs both in the
        training eras and in the held-out eras are allowed, and the one whose
        held-out rows come closest to this share is kept (ties: the one whose
        held-out class proportions are closest to the overall ones). If no
        such split exists (a class occurs in a single era), fit raises
        ``ValueError``; pass ``X_val, y_val, eras_val`` instead.
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
    class_weight : dict or 'balanced', default=None
        Weights of the classes, multiplied into ``sample_weight``;
        'balanced' uses ``n_samples / (n_classes * np.bincount(y))``.
    split_type : {'original', 'era', 'directional'}, default='original'
        Split criterion, as for
        :class:`~eraboost.HistGradientBoostingRegressor`. Per-era gains and
        directions are computed from the log-loss gradients and hessians of
        the tree's class.
    boltzmann_alpha : float, default=0.0
        Temperature of the Boltzmann operator over per-era gains: 0 is their
        mean, ``np.inf`` their maximum, ``-np.inf`` their minimum.
    irf_penalty : float, default=0.0
        Invariance penalty (Liao, Wu and Yan, eq. 20-22): the score of a
        candidate split loses ``irf_penalty * H_node * Var_e(CR_e)``, with
        ``CR_e`` the change of era ``e``'s Newton value (from the log-loss
        gradients and hessians of the tree's class) going left. See
        :class:`~eraboost.HistGradientBoostingRegressor` and
        ``docs/invariance.md``. 0 turns it off.
    irf_variance : {"change", "difference"}, default="change"
        What ``irf_penalty`` takes the variance of over the eras, as for
        :class:`~eraboost.HistGradientBoostingRegressor`: the change of the
        era's value going left (as written), or the difference of its
        children's values with every era kept on both sides of a split.
    min_samples_leaf_per_era : int or None, default=None
        The Time Robust Tree's constraint: every era present in a node keeps
        at least this many rows on each side of a split. With
        ``split_type='era'`` and ``boltzmann_alpha=-np.inf``, the TRT's
        worst-period criterion; with ``boltzmann_alpha=0`` its average one.
    era_groups : int, dict or None, default=None
        Groups of eras that fit uses as its eras, as for
        :class:`~eraboost.HistGradientBoostingRegressor`: an int ``k >= 2``
        cuts the eras, in their natural order, into ``k`` contiguous groups
        of near-equal numbers of eras; a dict maps every era to its group.
        None: each era its own group.
    min_agreement : float in [0, 1] or None, default=None
        A gate on directional agreement, as for
        :class:`~eraboost.HistGradientBoostingRegressor`: a candidate split
        is considered only when at least this share of the node's eras move
        the same way as the pooled split (from the tree's class gradients).
        None (or 0) is off. Needs eras.
    pooled_weight : float in [0, 1], default=0.0
        The pooled gain's share of the era score, as for
        :class:`~eraboost.HistGradientBoostingRegressor`: ``(1 - w) *
        era_score + w * gain / M`` under ``split_type='era'`` or
        ``'directional'``. 0 is off.
    colsample_bytree : float in (0, 1], default=1.0
        Share of the features each tree may split on, drawn afresh for each
        tree (LightGBM's ``feature_fraction``).
    subsample : float in (0, 1], default=1.0
        Share of the training rows each iteration grows its trees on (the
        class trees of an iteration share them), drawn without replacement.
    era_subsample : float in (0, 1], default=1.0
        Share of the training eras each iteration grows its trees on (whole
        eras). Needs eras.
    keep_best_iteration : bool, default=False
        With early stopping, keep the model at its best score instead of the
        last iteration.

    The draws, their counts and how they combine with ``max_features`` are
    those of :class:`~eraboost.HistGradientBoostingRegressor`: seeded by
    ``random_state``, the same whatever the number of threads, and nothing
    drawn at the defaults.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    do_early_stopping_ : bool
    n_iter_ : int
    n_trees_per_iteration_ : int
        1 for binary problems, ``n_classes`` otherwise.
    train_score_ : ndarray
    validation_score_ : ndarray
    eras_ : ndarray or None
        The distinct era labels seen in fit.
    n_eras_ : int
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
    >>> from eraboost import HistGradientBoostingClassifier
    >>> rng = np.random.RandomState(0)
    >>> X = rng.normal(size=(1000, 3))
    >>> eras = np.repeat(np.arange(10), 100)
    >>> y = (X[:, 0] + rng.normal(size=1000) > 0).astype(int)
    >>> clf = HistGradientBoostingClassifier(split_type="era", max_iter=20)
    >>> clf.fit(X, y, eras=eras).predict_proba(X[:2]).shape
    (2, 2)
    """

    _parameter_constraints: ClassVar[dict] = {
        **BaseHistGradientBoosting._parameter_constraints,
        "loss": [StrOptions({"log_loss"}), BaseLoss],
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }

    def __init__(
        self,
        loss="log_loss",
        *,
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
        class_weight=None,
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
        self.class_weight = class_weight

    # -- targets -------------------------------------------------------------
    def _encode_y(self, y):
        """Encode the labels as 0 .. n_classes - 1 (sets ``classes_``)."""
        check_classification_targets(y)
        self._label_encoder = LabelEncoder()
        encoded = self._label_encoder.fit_transform(y)
        self.classes_ = self._label_encoder.classes_
        n_classes = self.classes_.shape[0]
        self.n_trees_per_iteration_ = 1 if n_classes <= 2 else n_classes
        return encoded.astype(Y_DTYPE, copy=False)

    def _encode_y_val(self, y):
        return self._label_encoder.transform(y).astype(Y_DTYPE, copy=False)

    def _decode_y(self, y):
        return self.classes_[y.astype(int)]

    def _finalize_sample_weight(self, sample_weight, y):
        """Multiply the sample weights by the class weights."""
        if self.class_weight is None:
            return sample_weight
        class_weight = compute_sample_weight(self.class_weight, y)
        if sample_weight is None:
            return class_weight
        return sample_weight * class_weight

    def _get_loss(self, sample_weight):
        if self.n_trees_per_iteration_ == 1:
            return HalfBinomialLoss(sample_weight=sample_weight)
        return HalfMultinomialLoss(
            sample_weight=sample_weight, n_classes=self.n_trees_per_iteration_
        )

    # -- prediction ----------------------------------------------------------
    def _classes_from_raw(self, raw):
        if raw.shape[1] == 1:
            # a tie (raw 0) goes to class 0, as argmax does in the multiclass case
            encoded = (raw.ravel() > 0).astype(int)
        else:
            encoded = np.argmax(raw, axis=1)
        return self.classes_.take(encoded, axis=0)

    def predict(self, X):
        """Predicted classes for X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        return self._classes_from_raw(self._raw_predict(X))

    def staged_predict(self, X):
        """Predicted classes after each iteration.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Yields
        ------
        y : ndarray of shape (n_samples,)
        """
        for raw in self._staged_raw_predict(X):
            yield self._classes_from_raw(raw)

    def predict_proba(self, X):
        """Class probabilities for X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        p : ndarray of shape (n_samples, n_classes)
            Columns follow ``classes_``.
        """
        raw = self._raw_predict(X)  # raises NotFittedError before fit
        return self._loss.predict_proba(raw)

    def staged_predict_proba(self, X):
        """Class probabilities after each iteration.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Yields
        ------
        p : ndarray of shape (n_samples, n_classes)
        """
        for raw in self._staged_raw_predict(X):
            yield self._loss.predict_proba(raw)

    def decision_function(self, X):
        """Raw scores (baseline plus the sum of the trees' leaf values).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        decision : ndarray of shape (n_samples,) or (n_samples, n_classes)
            One column per class when there are more than two classes.
        """
        raw = self._raw_predict(X)
        return raw.ravel() if raw.shape[1] == 1 else raw

    def staged_decision_function(self, X):
        """Raw scores after each iteration.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Yields
        ------
        decision : ndarray of shape (n_samples,) or (n_samples, n_classes)
        """
        for raw in self._staged_raw_predict(X):
            yield raw.ravel() if raw.shape[1] == 1 else raw
