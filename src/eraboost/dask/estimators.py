"""The Dask estimators: one model fitted across a Dask cluster.

``DaskHistGradientBoostingRegressor`` and
``DaskHistGradientBoostingClassifier`` take the parameters of
:class:`eraboost.HistGradientBoostingRegressor` and
:class:`eraboost.HistGradientBoostingClassifier`, plus ``client``. ``fit``
places whole eras on each worker (``_placement``), bins them with the
single machine's thresholds (``_binning``) and grows each tree from the
workers' reduced sums (``_train``); with early stopping, the single
machine's validation eras are held out on the workers (``_validation``).
The fitted single-machine estimator is kept and given by :meth:`to_local`.
"""

import hashlib
import inspect

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin

from ..classifier import HistGradientBoostingClassifier
from ..gradient_boosting import HistGradientBoostingRegressor
from ..sampling import TreeSampler
from ._binning import encode_categories, fit_bin_mapper
from ._placement import (
    _is_dask_frame,
    await_shards,
    cancels_on_error,
    check_partitions,
    era_inventory,
    group_inventory,
    place_eras,
    row_blocks,
    shuffle_to_workers,
    worker_addresses,
)
from ._split import Candidates
from ._train import Cluster, TreeBuilder, boost
from ._validation import (
    EarlyStopping,
    ValidationShard,
    block_codes,
    select_eras,
    validation_eras,
)
from ._worker import EraShard

__all__ = ["DaskHistGradientBoostingClassifier", "DaskHistGradientBoostingRegressor"]

#: Options the Dask fit does not do yet, and the values that leave them off.
_OFF = {}


def _signature(local_cls):
    """The single-machine estimator's parameters, keyword-only, plus
    ``client``."""
    params = [
        p.replace(kind=p.KEYWORD_ONLY)
        for name, p in inspect.signature(local_cls.__init__).parameters.items()
        if name != "self"
    ]
    client = inspect.Parameter("client", inspect.Parameter.KEYWORD_ONLY, default=None)
    self_ = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return inspect.Signature([self_, *params, client])


def _signature_of(codes, labels):
    """The single machine's fit signature (``_fit_data_signature``): the
    number of rows and a digest of the eras, from each chunk's codes."""
    digest = hashlib.blake2b(digest_size=16)
    for block in codes:
        digest.update(np.ascontiguousarray(block).tobytes())
    digest.update(repr(np.asarray(labels).tolist()).encode())
    return int(sum(c.shape[0] for c in codes)), digest.hexdigest()


class _DaskBoosting(BaseEstimator):
    """The fit shared by the two Dask estimators."""

    _local_class = None

    def __init__(self, **params):
        names = list(inspect.signature(type(self).__init__).parameters)[1:]
        unknown = set(params) - set(names)
        if unknown:
            raise TypeError(f"unexpected parameters {sorted(unknown)}")
        sig = inspect.signature(type(self).__init__).parameters
        for name in names:
            setattr(self, name, params.get(name, sig[name].default))

    # -- checks before any work --------------------------------------------
    def _local_params(self):
        return {k: v for k, v in self.get_params().items() if k != "client"}

    def _refuse_unsupported(self, n_samples=None):
        local_name = f"eraboost.{self._local_class.__name__}"
        params = self._local_params()
        for name, off in _OFF.items():
            if name in params and params[name] != off:
                raise ValueError(
                    f"{name}={params[name]!r} is not supported by the Dask "
                    f"estimators yet; fit {local_name} on one machine."
                )
        if self.loss not in ("squared_error", "log_loss"):
            raise ValueError(
                f"loss={self.loss!r} is not supported by the Dask estimators "
                f"yet; fit {local_name} on one machine."
            )
        if self._early_stopping(n_samples) and self.scoring != "loss":
            raise ValueError(
                f"scoring={self.scoring!r} is not supported by the Dask "
                "estimators yet with early stopping (a scorer does not reduce "
                "exactly across workers, the loss does): pass scoring='loss' "
                f"or early_stopping=False, or fit {local_name} on one machine."
            )

    def _early_stopping(self, n_samples):
        """Whether the fit stops early: ``early_stopping``, or with "auto"
        above 10,000 rows, as the single machine decides (False while the
        number of rows is unknown)."""
        if self.early_stopping == "auto":
            return n_samples is not None and n_samples > 10_000
        return bool(self.early_stopping)

    # -- fit ---------------------------------------------------------------
    @cancels_on_error
    def fit(self, X, y, sample_weight=None, *, eras=None):
        """Fit one model across the cluster.

        Parameters
        ----------
        X : dask array or dask DataFrame of shape (n_samples, n_features)
            Numeric features; NaN marks missing values.
        y : dask array or dask Series of shape (n_samples,)
        sample_weight : dask array or dask Series, default=None
        eras : dask array or dask Series of shape (n_samples,)
            The era of each row (required: whole eras are placed on the
            workers). Every input is cut into the same row chunks as X.

        Returns
        -------
        self : object
        """
        from dask import delayed
        from distributed import default_client

        # a warm start continues the fitted single-machine estimator, with
        # this estimator's current parameters
        warm = self.warm_start and getattr(self, "_local", None) is not None
        if warm:
            local = self._local
            local.set_params(**self._local_params())
        else:
            local = self._local_class(**self._local_params())
        local._validate_params()
        self._refuse_unsupported()
        if self.pooled_weight > 0 and self.split_type == "original":
            raise ValueError(
                f"pooled_weight={self.pooled_weight!r} blends the pooled gain "
                "into an era criterion, but split_type='original' scores by "
                "the pooled gain already: use split_type='era' or "
                "'directional', or leave pooled_weight=0."
            )
        if eras is None:
            raise ValueError(
                "eras is required: the Dask estimators place whole eras on "
                "each worker; pass fit(X, y, eras=...)."
            )
        client = self.client if self.client is not None else default_client()
        # categorical features: encoded in the chunks, as the single machine
        # encodes them (the categories of all the rows)
        X, categorical = encode_categories(client, local, X)
        X, y, eras, sw, names = row_blocks(client, X, y, eras, sample_weight)
        check_partitions(X, {"y": y, "eras": eras, "sample_weight": sw})
        n_samples = int(X.shape[0])
        self._refuse_unsupported(n_samples)
        if warm:
            self._check_warm_start(local, X)
        inventory = era_inventory(client, eras, y, sw)
        # the fit signature's eras: the user's, before any grouping
        user_eras, user_labels = eras, inventory.labels
        group_of = None
        if self.era_groups is not None:
            # every use of the eras sees their groups, as in the single
            # machine's fit: whole groups are placed on the workers (and
            # held out for validation)
            eras, inventory, group_of = group_inventory(
                eras, inventory, self.era_groups
            )
        if inventory.labels.shape[0] < 2:
            raise ValueError(
                "eras holds a single era (or era_groups a single group); the "
                "Dask estimators place whole eras on the workers and need at "
                "least two."
            )
        codes = client.compute(
            [
                delayed(block_codes)(b, user_labels)
                for b in user_eras.to_delayed().ravel()
            ],
            sync=True,
        )
        signature = _signature_of(codes, user_labels)
        if warm:
            local._check_warm_start_data(signature)
        if group_of is not None:
            # each row's group code, as the single machine's grouped eras
            codes = [group_of[c].astype(np.int32) for c in codes]
        self._encode_target(local, y)
        if not warm:
            local._init_random_streams()
        sw = self._class_weighted(local, y, sw, n_samples)
        local.do_early_stopping_ = self._early_stopping(n_samples)
        local._use_validation_data = self.validation_fraction is not None
        held = None
        if local.do_early_stopping_:
            held = validation_eras(local, client, inventory, eras, y, n_samples)
        train, val = (X, y, sw, eras), None
        train_inventory = val_inventory = inventory
        if held is not None:
            train, train_inventory = select_eras(train, eras, inventory, ~held)
            val, val_inventory = select_eras((X, y, sw, eras), eras, inventory, held)
            codes = [c[~held[c]] for c in codes]
        local._bin_mapper = fit_bin_mapper(
            local, train[0], train[2], names, categorical
        )
        constraints = local._check_constraints(int(X.shape[1]))
        local._loss = local._get_loss(sample_weight=None if sw is None else np.ones(1))
        if not warm:
            local._baseline_prediction = self._baseline(local, train[1], train[2])

        # a worker that misses its heartbeats on a busy machine is out of
        # the list for a while: wait for one rather than place on none
        client.wait_for_workers(1, timeout=60)
        workers = worker_addresses(client)
        futures = self._place(client, workers, local, train, train_inventory, EraShard)
        val_futures = []
        if val is not None:
            val_futures = self._place(
                client, workers, local, val, val_inventory, ValidationShard
            )
        shards = await_shards(client, futures, workers)
        val_shards = await_shards(client, val_futures, workers)
        try:
            self._train(
                local,
                Cluster(shards),
                Cluster(val_shards) if val_shards else None,
                np.concatenate(codes),
                warm,
                constraints,
            )
        finally:
            del shards, futures, val_shards, val_futures
        local.eras_ = inventory.labels
        local.n_eras_ = int(inventory.labels.shape[0])
        local._fit_signature = signature
        self._local = local
        for name in (
            "n_features_in_",
            "feature_names_in_",
            "classes_",
            "eras_",
            "n_eras_",
            "n_trees_per_iteration_",
            "do_early_stopping_",
            "train_score_",
            "validation_score_",
            "best_iteration_",
        ):
            if hasattr(local, name):
                setattr(self, name, getattr(local, name))
            elif hasattr(self, name):
                # an earlier fit's attribute that this fit does not set
                delattr(self, name)
        self.n_iter_ = local.n_iter_
        return self

    def _check_warm_start(self, local, X):
        """A warm start's checks before any work: the first fit's columns,
        and ``max_iter`` not below the iterations already fitted (the
        single machine's messages)."""
        if X.shape[1] != local.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but "
                f"{type(self).__name__} is expecting {local.n_features_in_} "
                "features as input."
            )
        if self.max_iter < local.n_iter_:
            raise ValueError(
                f"max_iter={self.max_iter} must be larger than or equal to "
                f"n_iter_={local.n_iter_} when warm_start==True"
            )

    def _class_weighted(self, local, y, sw, n_samples):
        """The sample weights the fit uses (the classifier multiplies in
        its class weights)."""
        return sw

    def _place(self, client, workers, local, arrays, inventory, shard_class):
        """Place the eras of ``inventory`` (those with rows) on the workers,
        balanced by rows; futures of one ``shard_class`` actor per worker
        used."""
        X, y, sw, eras = arrays
        n_used = min(len(workers), int(np.count_nonzero(inventory.counts)))
        owner = place_eras(inventory.counts, n_used)
        pieces = shuffle_to_workers(client, X, y, sw, eras, inventory, owner, workers)
        return [
            client.submit(
                shard_class,
                pieces[w],
                self._target_encoding(local),
                actor=True,
                workers=[workers[w]],
                allow_other_workers=False,
            )
            for w in range(n_used)
        ]

    def _train(self, local, cluster, validation, codes, warm, constraints):
        """Grow the trees from the training shards (``cluster``); score
        and stop early on ``validation`` (the validation shards, or None)
        as the single machine does. ``codes``: the era code (its group's
        under ``era_groups``) of each training row, in the table's order;
        ``constraints``: the monotonic and interaction constraints
        (``_check_constraints``)."""
        monotonic_cst, interaction_cst = constraints
        mapper = local._bin_mapper
        has_missing = np.any(cluster.call("bin", mapper), axis=0)
        if validation is not None:
            validation.call("bin", mapper)
        alpha = float(self.boltzmann_alpha)
        per_era = int(self.min_samples_leaf_per_era or 0)
        settings = {
            "split_type": self.split_type,
            "alpha": alpha,
            "lam": float(self.l2_regularization),
            # the era-aware machinery (docs/criteria.md): an era criterion,
            # the per-era minimum, the invariance penalty or the agreement
            # gate; eras of fewer rows than this are not split
            "era_path": self.split_type != "original"
            or bool(per_era)
            or self.irf_penalty > 0
            or bool(self.min_agreement),
            "min_agreement": float(self.min_agreement or 0.0),
            "pooled_weight": float(self.pooled_weight),
            "irf_penalty": float(self.irf_penalty),
            "min_samples_leaf_per_era": per_era,
            "min_rows_per_era_split": 2 * max(1, per_era),
            "constant_hessian": bool(local._loss.constant_hessian),
            # the training eras (validation eras held out): the shards'
            # histograms are subtracted where the single machine's are
            "n_eras": int(np.unique(codes).size),
            "min_samples_leaf": int(self.min_samples_leaf),
            "max_leaf_nodes": self.max_leaf_nodes,
            "max_depth": self.max_depth,
            "shrinkage": float(self.learning_rate),
            "max_features": float(self.max_features),
            # the categorical features (the first ones): their candidates
            # are each node's order of its categories (_categorical)
            "is_categorical": np.asarray(mapper.is_categorical, dtype=bool),
        }
        n_bins = mapper.n_bins_non_missing_
        cluster.call(
            "start",
            local._loss,
            local._baseline_prediction,
            n_bins,
            has_missing,
            settings,
        )
        if validation is not None:
            validation.call("start", local._loss, local._baseline_prediction)
        if warm:
            # the raw predictions of the fitted trees, as the single
            # machine's warm start recomputes them
            local.train_score_ = list(local.train_score_)
            local.validation_score_ = list(local.validation_score_)
            for shards in (cluster, validation):
                if shards is not None:
                    shards.call("add_stages", local._predictors, mapper.missing_bin_)
        else:
            local._predictors = []
            local._scorer = None
            local.train_score_ = []
            local.validation_score_ = []
        stopper = None
        if local.do_early_stopping_:
            stopper = EarlyStopping(local, cluster, validation)
            if not warm:
                stopper.score()
        builder = TreeBuilder(
            cluster,
            settings,
            Candidates.of(
                n_bins, has_missing, settings["era_path"], settings["is_categorical"]
            ),
            n_bins,
            has_missing,
            feature_rng=local._feature_subsample_rng,
            monotonic_cst=monotonic_cst,
            interaction_cst=interaction_cst,
            is_categorical=settings["is_categorical"],
        )
        # the single machine's per-tree draws, from its stream; a row draw
        # is handed to each shard as the part of the mask over its rows
        sampler = TreeSampler(
            local._tree_sample_rng,
            len(n_bins),
            int(codes.shape[0]),
            self.colsample_bytree,
            self.subsample,
            self.era_subsample,
            codes if self.era_subsample < 1.0 else None,
        )
        shard_rows = cluster.call("global_rows") if sampler.samples_rows else None
        self.reduced_bytes_per_tree_ = boost(
            cluster,
            local,
            builder,
            self.max_iter,
            self.split_type != "original",
            sampler,
            shard_rows,
            early_stopping=stopper,
        )
        if self.keep_best_iteration:
            local._keep_best_iteration()
        local.train_score_ = np.asarray(local.train_score_)
        local.validation_score_ = np.asarray(local.validation_score_)

    # -- fitted model --------------------------------------------------------
    def to_local(self):
        """The fitted single-machine estimator (which
        :func:`eraboost.save_model` saves)."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "_local")
        return self._local

    def _map_blocks(self, X, method, n_columns=None):
        import dask.array as da

        local = self.to_local()
        if _is_dask_frame(X):
            return X.map_partitions(
                lambda part: _as_series(getattr(local, method)(part), part, n_columns),
                meta=_meta(X, n_columns),
            )
        if not isinstance(X, da.Array):
            raise TypeError("X must be a dask array or DataFrame")
        X = X.rechunk({1: -1})
        if n_columns is None:
            return X.map_blocks(
                lambda b: getattr(local, method)(b), drop_axis=1, dtype=np.float64
            )
        return X.map_blocks(
            lambda b: getattr(local, method)(b),
            chunks=(X.chunks[0], (n_columns,)),
            dtype=np.float64,
        )

    def predict(self, X):
        """Predictions of a dask array or DataFrame, as a dask collection
        (an array, or a Series for a DataFrame)."""
        return self._map_blocks(X, "predict")


def _as_series(values, part, n_columns):
    import pandas as pd

    if n_columns is None:
        return pd.Series(values, index=part.index)
    return pd.DataFrame(values, index=part.index)


def _meta(X, n_columns):
    import pandas as pd

    if n_columns is None:
        return pd.Series(dtype=np.float64)
    return pd.DataFrame({i: pd.Series(dtype=np.float64) for i in range(n_columns)})


class DaskHistGradientBoostingRegressor(RegressorMixin, _DaskBoosting):
    """:class:`eraboost.HistGradientBoostingRegressor` fitted across a Dask
    cluster, whole eras on each worker (docs/distributed.md).

    Takes the single-machine estimator's parameters, plus ``client`` (a
    ``distributed.Client``; None: the default client).
    """

    _local_class = HistGradientBoostingRegressor

    def _encode_target(self, local, y):
        local.n_trees_per_iteration_ = 1

    def _target_encoding(self, local):
        return None

    def _baseline(self, local, y, sw):
        import dask

        if sw is None:
            total, count = dask.compute(y.astype(np.float64).sum(), y.shape[0])
            mean = float(total) / count
        else:
            swy, sws = dask.compute((sw * y).sum(), sw.sum())
            mean = float(swy) / float(sws)
        return local._loss.fit_intercept_only(y_true=np.array([mean])).reshape((1, -1))


class DaskHistGradientBoostingClassifier(ClassifierMixin, _DaskBoosting):
    """:class:`eraboost.HistGradientBoostingClassifier` fitted across a
    Dask cluster, whole eras on each worker (docs/distributed.md).

    Takes the single-machine estimator's parameters, plus ``client`` (a
    ``distributed.Client``; None: the default client).
    """

    _local_class = HistGradientBoostingClassifier

    def _encode_target(self, local, y):
        import dask.array as da

        classes = da.unique(y).compute()
        local._encode_y(classes)
        if classes.shape[0] < 2:
            raise ValueError("y holds a single class; a classifier needs at least two.")

    def _target_encoding(self, local):
        return local.classes_

    def _class_weighted(self, local, y, sw, n_samples):
        """The sample weights times the class weights, as the single
        machine's ``compute_sample_weight(class_weight, y)`` gives them:
        'balanced' is ``n_samples / (n_classes * count)`` of each class."""
        if self.class_weight is None:
            return sw
        import dask.array as da
        from sklearn.utils.class_weight import compute_sample_weight

        classes = local.classes_
        n_classes = classes.shape[0]
        codes = y.map_blocks(lambda b: np.searchsorted(classes, b), dtype=np.int64)
        if isinstance(self.class_weight, str):
            counts = da.bincount(codes, minlength=n_classes).compute()
            per_class = n_samples / (n_classes * counts.astype(np.float64))
        else:
            # a dict's weights do not depend on the counts: those of the
            # encoded classes, each once
            per_class = compute_sample_weight(
                self.class_weight, np.arange(n_classes, dtype=np.float64)
            )
        weights = codes.map_blocks(lambda c: per_class[c], dtype=np.float64)
        return weights if sw is None else sw.astype(np.float64) * weights

    def _baseline(self, local, y, sw):
        import dask

        classes = local.classes_
        codes = y.map_blocks(lambda b: np.searchsorted(classes, b), dtype=np.int64)
        weights = np.ones(1) if sw is None else sw
        totals = dask.compute(
            [((codes == c) * weights).sum() for c in range(classes.shape[0])]
        )[0]
        return local._loss.fit_intercept_only(
            y_true=np.arange(classes.shape[0], dtype=np.float64),
            sample_weight=np.asarray(totals, dtype=np.float64),
        ).reshape((1, -1))

    def predict_proba(self, X):
        """Class probabilities of a dask array or DataFrame, as a dask
        collection."""
        return self._map_blocks(X, "predict_proba", n_columns=len(self.classes_))


def _make_init(local_cls):
    def __init__(self, **params):
        _DaskBoosting.__init__(self, **params)

    __init__.__signature__ = _signature(local_cls)
    return __init__


DaskHistGradientBoostingRegressor.__init__ = _make_init(HistGradientBoostingRegressor)
DaskHistGradientBoostingClassifier.__init__ = _make_init(HistGradientBoostingClassifier)
