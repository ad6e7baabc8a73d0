"""The average of several models' predictions as one estimator.

:class:`EraEnsembleRegressor` and :class:`EraEnsembleClassifier` fit each
member on the same rows, eras and sample weights and average their
predictions (probabilities for the classifier: soft voting). Their default
members are the recommended model of docs/experiments.md: ``original`` and
``directional`` with ``irf_penalty=1``. Members' parameters are the
ensemble's as ``<member name>__<parameter>``, so one ``GridSearchCV`` over
whole eras can choose between the ensemble and each member alone (a grid of
``weights``).
"""

import warnings
from numbers import Real
from typing import ClassVar

import numpy as np
from sklearn.base import (
    BaseEstimator,
    ClassifierMixin,
    RegressorMixin,
    clone,
    is_classifier,
    is_regressor,
)
from sklearn.utils import Bunch, get_tags
from sklearn.utils.validation import check_is_fitted, has_fit_parameter

__all__ = ["EraEnsembleClassifier", "EraEnsembleRegressor"]


class _EraEnsemble(BaseEstimator):
    """Members fitted on the same data; their predictions averaged."""

    _kind = ""  # "regressor" or "classifier"
    # checked in full by fit (one line per problem); these are for load_model
    _parameter_constraints: ClassVar[dict] = {
        "estimators": [list, tuple, None],
        "weights": ["array-like", None],
    }

    def __init__(self, estimators=None, *, weights=None):
        self.estimators = estimators
        self.weights = weights

    # -- members -----------------------------------------------------------
    def _recommended(self):
        """The default members: ``original`` and ``directional`` with
        ``irf_penalty=1``, otherwise eraboost's defaults."""
        if self._kind == "classifier":
            from .classifier import HistGradientBoostingClassifier as cls
        else:
            from .gradient_boosting import HistGradientBoostingRegressor as cls
        return [
            ("original", cls()),
            ("directional", cls(split_type="directional", irf_penalty=1.0)),
        ]

    def _members(self):
        return self._recommended() if self.estimators is None else self.estimators

    def _check_members(self):
        """The (name, estimator) pairs, checked: one line per problem."""
        name = type(self).__name__
        members = self._members()
        if (
            not isinstance(members, (list, tuple))
            or not members
            or not all(
                isinstance(m, (list, tuple))
                and len(m) == 2
                and isinstance(m[0], str)
                and hasattr(m[1], "fit")
                for m in members
            )
        ):
            raise ValueError(
                f"{name}: estimators must be a non-empty list of (name, estimator) "
                f"pairs, or None for the recommended pair; got {members!r}."
            )
        names = [n for n, _ in members]
        reserved = set(super().get_params(deep=False))
        for n in names:
            if names.count(n) > 1 or "__" in n or n in reserved or not n:
                raise ValueError(
                    f"{name}: member names must be unique, non-empty, without "
                    f"'__' and other than {sorted(reserved)}; got {names}."
                )
        check = is_classifier if self._kind == "classifier" else is_regressor
        for n, est in members:
            if not check(est):
                raise ValueError(
                    f"{name} averages {self._kind}s; member {n!r} is a "
                    f"{type(est).__name__}."
                )
        return [(n, est) for n, est in members]

    def _check_weights(self, n_members):
        name = type(self).__name__
        if self.weights is None:
            return np.ones(n_members)
        weights = self.weights
        if (
            isinstance(weights, str)
            or not hasattr(weights, "__len__")
            or len(weights) != n_members
            or not all(isinstance(w, Real) and not isinstance(w, bool) for w in weights)
        ):
            raise ValueError(
                f"{name}: weights must be None or {n_members} numbers, one per "
                f"member; got {weights!r}."
            )
        weights = np.asarray(weights, dtype=np.float64)
        if (
            not np.all(np.isfinite(weights))
            or (weights < 0).any()
            or weights.sum() <= 0
        ):
            raise ValueError(
                f"{name}: weights must be finite, non-negative and not all zero; "
                f"got {self.weights!r}."
            )
        return weights

    # -- parameters: the members' as <name>__<parameter> ---------------------
    def get_params(self, deep=True):
        """Parameters of the ensemble and, with ``deep``, of its members.

        Parameters
        ----------
        deep : bool, default=True
            Also return each member as ``<name>`` and its parameters as
            ``<name>__<parameter>`` (the recommended pair's when
            ``estimators`` is None).

        Returns
        -------
        params : dict
        """
        out = super().get_params(deep=False)
        if not deep:
            return out
        members = self._members()
        try:
            pairs = [(n, est) for n, est in members]
        except (TypeError, ValueError):
            return out  # not pairs: fit says so
        for n, est in pairs:
            if not isinstance(n, str) or not hasattr(est, "get_params"):
                continue
            out[n] = est
            for key, value in est.get_params(deep=True).items():
                out[f"{n}__{key}"] = value
        return out

    def set_params(self, **params):
        """Set the ensemble's parameters, members' as ``<name>__<parameter>``.

        A member is replaced whole by ``<name>=estimator``. Setting a member
        or its parameters while ``estimators`` is None first makes the
        recommended pair ``estimators``.

        Parameters
        ----------
        **params : dict

        Returns
        -------
        self : estimator instance
        """
        if "estimators" in params:
            self.estimators = params.pop("estimators")
        try:
            members = {n for n, _ in self._members()}
        except (TypeError, ValueError):
            members = set()  # not pairs: fit says so
        names = {key.partition("__")[0] for key in params} & members
        if names and self.estimators is None:
            self.estimators = self._recommended()
        if names and isinstance(self.estimators, (list, tuple)):
            members = list(self.estimators)
            for i, member in enumerate(members):
                pair = isinstance(member, (list, tuple)) and len(member) == 2
                if pair and member[0] in params:
                    members[i] = (member[0], params.pop(member[0]))
            self.estimators = members
        return super().set_params(**params)

    # -- fit and predict -------------------------------------------------------
    def fit(self, X, y, sample_weight=None, *, eras=None):
        """Fit every member (of positive weight) on the same data.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data, passed to each member as it is.
        y : array-like of shape (n_samples,)
            Target values.
        sample_weight : array-like of shape (n_samples,), default=None
            Weights of the training rows, passed to every member.
        eras : array-like of shape (n_samples,), default=None
            Era of each row, passed to every member whose ``fit`` takes
            ``eras`` (eraboost's estimators); other members fit without.
            With scikit-learn's metadata routing on, request it from the
            ensemble (``set_fit_request(eras=True)``), not from its members.

        Returns
        -------
        self : object
        """
        members = self._check_members()
        weights = self._check_weights(len(members))
        fitted, kept = [], []
        # the members' warnings (fit without eras...) are the user's: shown at
        # the user's call, not inside this loop
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for (n, est), w in zip(members, weights):
                if w == 0:  # a member of weight 0 changes nothing: not fitted
                    continue
                model = clone(est)
                kwargs = {}
                if sample_weight is not None:
                    if not has_fit_parameter(model, "sample_weight"):
                        raise ValueError(
                            f"{type(self).__name__}: member {n!r} "
                            f"({type(model).__name__}) takes no sample_weight; "
                            "fit without it or give it weight 0."
                        )
                    kwargs["sample_weight"] = sample_weight
                if eras is not None and has_fit_parameter(model, "eras"):
                    kwargs["eras"] = eras
                fitted.append((n, model.fit(X, y, **kwargs)))
                kept.append(w)
        for warning in caught:
            warnings.warn(warning.message, stacklevel=2)
        self.estimators_ = [model for _, model in fitted]
        self.named_estimators_ = Bunch(**dict(fitted))
        self.weights_ = np.asarray(kept)
        first = self.estimators_[0]
        self.n_features_in_ = first.n_features_in_
        if hasattr(first, "feature_names_in_"):
            self.feature_names_in_ = first.feature_names_in_
        if self._kind == "classifier":
            self.classes_ = first.classes_
            for model in self.estimators_[1:]:
                if not np.array_equal(model.classes_, self.classes_):
                    raise ValueError(  # pragma: no cover - same y, same classes
                        f"{type(self).__name__}: the members' classes differ "
                        f"({self.classes_} and {model.classes_})."
                    )
        return self

    def _average(self, predictions):
        """The members' predictions averaged: their plain mean when the
        weights are equal (the same floats as ``np.mean`` in user code)."""
        if len(predictions) == 1:
            return predictions[0]
        if np.all(self.weights_ == self.weights_[0]):
            return np.mean(predictions, axis=0)
        return np.average(predictions, axis=0, weights=self.weights_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        try:
            members = [est for _, est in self._members()]
            tags.input_tags.allow_nan = all(
                get_tags(est).input_tags.allow_nan for est in members
            )
        except (TypeError, ValueError, AttributeError):
            pass  # not pairs of estimators: fit says so
        return tags


class EraEnsembleRegressor(RegressorMixin, _EraEnsemble):
    """The average of several regressors' predictions, eras routed to each.

    With its defaults it is the recommended model of the real-panel
    benchmark (docs/experiments.md, "Recommended workflow"): the average of
    ``original`` and ``directional`` with ``irf_penalty=1``.

    Parameters
    ----------
    estimators : list of (str, estimator), default=None
        The members, by name. ``None`` means the recommended pair:
        ``[("original", HistGradientBoostingRegressor()), ("directional",
        HistGradientBoostingRegressor(split_type="directional",
        irf_penalty=1.0))]``. Each member's parameters are the ensemble's as
        ``<name>__<parameter>`` (``directional__irf_penalty``), for
        ``GridSearchCV`` and ``set_params``.
    weights : sequence of float, default=None
        One weight per member (``None``: equal weights). A member of weight
        0 is not fitted, so ``weights=(1, 0)`` is the first member alone: a
        grid over ``weights`` chooses between the ensemble and its members.

    Attributes
    ----------
    estimators_ : list of estimators
        The fitted members of positive weight, in order.
    named_estimators_ : Bunch
        The same, by name.
    weights_ : ndarray
        Their weights.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When ``X`` has column names.

    Examples
    --------
    >>> from eraboost import EraEnsembleRegressor
    >>> from eraboost.demo import make_era_data
    >>> X, y, eras, _ = make_era_data(n_eras=10, rows_per_era=100, seed=0)
    >>> model = EraEnsembleRegressor().fit(X, y, eras=eras)
    >>> sorted(model.named_estimators_)
    ['directional', 'original']
    """

    _kind = "regressor"

    def predict(self, X):
        """The weighted mean of the members' predictions.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self._average([m.predict(X) for m in self.estimators_])


class EraEnsembleClassifier(ClassifierMixin, _EraEnsemble):
    """The average of several classifiers' probabilities (soft voting), eras
    routed to each.

    With its defaults it averages ``original`` and ``directional`` with
    ``irf_penalty=1``, as :class:`EraEnsembleRegressor` does.

    Parameters
    ----------
    estimators : list of (str, estimator), default=None
        The members, by name; ``None`` means the recommended pair of
        :class:`~eraboost.HistGradientBoostingClassifier`. Each member's
        parameters are the ensemble's as ``<name>__<parameter>``.
    weights : sequence of float, default=None
        One weight per member (``None``: equal weights); a member of weight
        0 is not fitted.

    Attributes
    ----------
    estimators_ : list of estimators
        The fitted members of positive weight, in order.
    named_estimators_ : Bunch
        The same, by name.
    weights_ : ndarray
        Their weights.
    classes_ : ndarray
        The class labels (every member's).
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        When ``X`` has column names.
    """

    _kind = "classifier"

    def predict_proba(self, X):
        """The weighted mean of the members' class probabilities.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        proba : ndarray of shape (n_samples, n_classes)
        """
        check_is_fitted(self)
        return self._average([m.predict_proba(X) for m in self.estimators_])

    def predict(self, X):
        """The class of largest mean probability.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]
