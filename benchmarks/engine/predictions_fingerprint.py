"""Hashes of the predictions of a fixed set of fits: a restructuring that
changes no result prints the same JSON before and after.

Fits boosters (regressor and classifier, split_type original, era and
directional, float data with NaNs and int8 data, eras, a categorical
feature, early stopping, the invariance penalty, subsampling), the invariant
forests and the robust tree, each with a fixed random_state, and prints one
SHA-256 per model of everything it predicts on new data (``predict``,
``predict_proba``, ``decision_function``, ``staged_predict``, with dtype
and shape). Beyond those, for every split type: binary and multiclass
classifiers on float data, a categorical feature (regressor and
classifier), the Poisson loss, ``l2_regularization`` (the gains' general
form), sample weights (hessians that are not the row counts),
``min_samples_leaf_per_era``, row, column and era sampling, the invariance
penalty and monotonic constraints; and ``boltzmann_alpha`` at -inf, a
negative, 0, a positive value and +inf. Only the public API is used, so
the same script runs against any build::

    python benchmarks/engine/predictions_fingerprint.py > after.json
    diff before.json after.json   # nothing: bit-identical predictions

Set ``OMP_NUM_THREADS`` the same for both runs (the predictions do not
depend on it, but the comparison should not have to rely on that).
"""

import hashlib
import json
import sys

import numpy as np

from eraboost import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    InvariantForestClassifier,
    InvariantForestRegressor,
    RobustTreeClassifier,
)

N_ERAS, PER_ERA, N_FEATURES = 16, 150, 8


def _data(seed):
    """Float features with NaNs, their int8 binning, eras, targets; and new
    rows to predict."""
    rng = np.random.RandomState(seed)
    n = N_ERAS * PER_ERA
    eras = np.repeat(np.arange(N_ERAS), PER_ERA)
    X = rng.normal(size=(n, N_FEATURES))
    # a relationship that holds in every era, one that flips between eras
    flip = np.where(eras % 2 == 0, 1.0, -1.0)
    y = X[:, 0] + 0.6 * flip * X[:, 1] + 0.3 * X[:, 2] ** 2
    y += rng.normal(scale=0.5, size=n)
    X_nan = X.copy()
    X_nan[rng.rand(n, N_FEATURES) < 0.05] = np.nan
    X_new = rng.normal(size=(500, N_FEATURES))
    X_new[rng.rand(500, N_FEATURES) < 0.05] = np.nan
    # int8 features with five levels, as Numerai's
    edges = [-1.0, -0.3, 0.3, 1.0]
    X_int8 = np.digitize(X, edges).astype(np.int8)
    X_new_int8 = np.digitize(np.nan_to_num(X_new), edges).astype(np.int8)
    # a categorical column (codes 0..5) whose effect is era-free
    cat = rng.randint(0, 6, size=n)
    y_cat = y + np.array([0.0, 0.5, -0.5, 1.0, 0.0, -1.0])[cat]
    X_cat = np.column_stack([X_nan, cat.astype(np.float64)])
    X_new_cat = np.column_stack([X_new, rng.randint(0, 6, size=500).astype(float)])
    y_bin = (y > np.median(y)).astype(int)
    y_multi = np.digitize(y, np.quantile(y, [0.33, 0.66]))
    # drawn after the above, which they leave as they were: Poisson counts
    # and positive sample weights
    y_pois = rng.poisson(np.exp(0.4 * X[:, 0] + 0.3 * flip * X[:, 1])).astype(float)
    weights = rng.uniform(0.2, 3.0, size=n)
    return dict(
        X=X_nan,
        X_new=X_new,
        X_int8=X_int8,
        X_new_int8=X_new_int8,
        X_cat=X_cat,
        X_new_cat=X_new_cat,
        y=y,
        y_cat=y_cat,
        y_bin=y_bin,
        y_multi=y_multi,
        y_pois=y_pois,
        weights=weights,
        eras=eras,
    )


def _fits(d):
    """(name, estimator, fit arguments, X to predict)."""
    common = dict(max_iter=20, random_state=0)
    eras = d["eras"]
    out = []
    for split_type in ("original", "era", "directional"):
        out += [
            (
                f"regressor-{split_type}-float-nan",
                HistGradientBoostingRegressor(split_type=split_type, **common),
                (d["X"], d["y"]),
                d["X_new"],
            ),
            (
                f"regressor-{split_type}-int8",
                HistGradientBoostingRegressor(split_type=split_type, **common),
                (d["X_int8"], d["y"]),
                d["X_new_int8"],
            ),
            (
                f"classifier-{split_type}-binary",
                HistGradientBoostingClassifier(split_type=split_type, **common),
                (d["X"], d["y_bin"]),
                d["X_new"],
            ),
            (
                f"classifier-{split_type}-multiclass-int8",
                HistGradientBoostingClassifier(split_type=split_type, **common),
                (d["X_int8"], d["y_multi"]),
                d["X_new_int8"],
            ),
        ]
    out += [
        (
            "regressor-era-categorical",
            HistGradientBoostingRegressor(
                split_type="era", categorical_features=[N_FEATURES], **common
            ),
            (d["X_cat"], d["y_cat"]),
            d["X_new_cat"],
        ),
        (
            "regressor-era-early-stopping",
            HistGradientBoostingRegressor(
                split_type="era",
                early_stopping=True,
                n_iter_no_change=3,
                validation_fraction=0.25,
                max_iter=200,
                random_state=0,
            ),
            (d["X"], d["y"]),
            d["X_new"],
        ),
        (
            "classifier-directional-early-stopping-keep-best",
            HistGradientBoostingClassifier(
                split_type="directional",
                early_stopping=True,
                keep_best_iteration=True,
                n_iter_no_change=3,
                max_iter=200,
                random_state=0,
            ),
            (d["X"], d["y_bin"]),
            d["X_new"],
        ),
        (
            "regressor-era-penalty-boltzmann-subsample",
            HistGradientBoostingRegressor(
                split_type="era",
                irf_penalty=1.0,
                boltzmann_alpha=-2.0,
                min_samples_leaf_per_era=5,
                colsample_bytree=0.7,
                subsample=0.8,
                era_subsample=0.75,
                **common,
            ),
            (d["X"], d["y"]),
            d["X_new"],
        ),
        (
            "regressor-original-monotonic",
            HistGradientBoostingRegressor(
                monotonic_cst=[1, 0, 0, -1, 0, 0, 0, 0], max_depth=4, **common
            ),
            (d["X"], d["y"]),
            d["X_new"],
        ),
        (
            "forest-regressor-era",
            InvariantForestRegressor(
                n_estimators=10, split_type="era", irf_penalty=1.0, random_state=0
            ),
            (d["X"], d["y"]),
            d["X_new"],
        ),
        (
            "forest-classifier-int8",
            InvariantForestClassifier(
                n_estimators=10, max_depth=6, min_samples_leaf=5, random_state=0
            ),
            (d["X_int8"], d["y_bin"]),
            d["X_new_int8"],
        ),
    ]
    out += _more_fits(d, common)
    Xr = np.round(np.nan_to_num(d["X"][:120, :3]) * 2)
    out.append(
        (
            "robust-tree",
            RobustTreeClassifier(max_depth=2, budget=2.0, random_state=0),
            (Xr, d["y_bin"][:120]),
            np.round(np.nan_to_num(d["X_new"][:, :3]) * 2),
        )
    )
    # the robust tree takes no eras
    return [
        (name, est, args, X_new, None if name == "robust-tree" else eras)
        for name, est, args, X_new in out
    ]


def _more_fits(d, common):
    """The fits beyond the first set: each split type under the options
    that take another path through the split finder."""
    out = []
    for split_type in ("original", "era", "directional"):
        out += [
            (
                f"classifier-{split_type}-multiclass-float-nan",
                HistGradientBoostingClassifier(split_type=split_type, **common),
                (d["X"], d["y_multi"]),
                d["X_new"],
            ),
            (
                f"regressor-{split_type}-poisson",
                HistGradientBoostingRegressor(
                    loss="poisson", split_type=split_type, **common
                ),
                (d["X"], d["y_pois"]),
                d["X_new"],
            ),
            (
                f"regressor-{split_type}-l2-sample-weight",
                HistGradientBoostingRegressor(
                    split_type=split_type, l2_regularization=1.0, **common
                ),
                (d["X"], d["y"], d["weights"]),
                d["X_new"],
            ),
            (
                f"regressor-{split_type}-int8-l2",
                HistGradientBoostingRegressor(
                    split_type=split_type, l2_regularization=0.5, **common
                ),
                (d["X_int8"], d["y"]),
                d["X_new_int8"],
            ),
            (
                f"classifier-{split_type}-categorical",
                HistGradientBoostingClassifier(
                    split_type=split_type, categorical_features=[N_FEATURES], **common
                ),
                (d["X_cat"], d["y_bin"]),
                d["X_new_cat"],
            ),
            (
                f"regressor-{split_type}-sampling",
                HistGradientBoostingRegressor(
                    split_type=split_type,
                    colsample_bytree=0.6,
                    subsample=0.7,
                    era_subsample=0.5,
                    max_features=0.8,
                    **common,
                ),
                (d["X"], d["y"]),
                d["X_new"],
            ),
        ]
    for split_type in ("original", "directional"):
        out.append(
            (
                f"regressor-{split_type}-categorical",
                HistGradientBoostingRegressor(
                    split_type=split_type, categorical_features=[N_FEATURES], **common
                ),
                (d["X_cat"], d["y_cat"]),
                d["X_new_cat"],
            )
        )
    for split_type in ("era", "directional"):
        for alpha in (-np.inf, -1.0, 0.5, np.inf):
            for data, X, X_new in (
                ("float-nan", d["X"], d["X_new"]),
                ("int8", d["X_int8"], d["X_new_int8"]),
            ):
                out.append(
                    (
                        f"regressor-{split_type}-alpha{alpha:+g}-{data}",
                        HistGradientBoostingRegressor(
                            split_type=split_type, boltzmann_alpha=alpha, **common
                        ),
                        (X, d["y"]),
                        X_new,
                    )
                )
        out += [
            (
                f"regressor-{split_type}-monotonic",
                HistGradientBoostingRegressor(
                    split_type=split_type,
                    monotonic_cst=[1, 0, 0, -1, 0, 0, 0, 0],
                    **common,
                ),
                (d["X"], d["y"]),
                d["X_new"],
            ),
            (
                f"regressor-{split_type}-min-samples-leaf-per-era",
                HistGradientBoostingRegressor(
                    split_type=split_type, min_samples_leaf_per_era=10, **common
                ),
                (d["X"], d["y"]),
                d["X_new"],
            ),
            (
                f"classifier-{split_type}-penalty-alpha-positive",
                HistGradientBoostingClassifier(
                    split_type=split_type,
                    irf_penalty=0.5,
                    boltzmann_alpha=1.0,
                    **common,
                ),
                (d["X_int8"], d["y_bin"]),
                d["X_new_int8"],
            ),
            (
                f"forest-classifier-{split_type}-penalty",
                InvariantForestClassifier(
                    n_estimators=5,
                    split_type=split_type,
                    irf_penalty=1.0,
                    max_depth=5,
                    random_state=0,
                ),
                (d["X"], d["y_bin"]),
                d["X_new"],
            ),
        ]
    out.append(
        (
            "regressor-original-min-samples-leaf-per-era",
            HistGradientBoostingRegressor(min_samples_leaf_per_era=10, **common),
            (d["X"], d["y"]),
            d["X_new"],
        )
    )
    return out


def _digest(arrays):
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _outputs(est, X):
    out = [np.asarray(est.predict(X))]
    for method in ("predict_proba", "decision_function"):
        if hasattr(est, method):
            out.append(np.asarray(getattr(est, method)(X)))
    if hasattr(est, "staged_predict"):
        out.extend(np.asarray(p) for p in est.staged_predict(X))
    return out


def fingerprint():
    d = _data(0)
    result = {}
    fits = _fits(d)
    names = [f[0] for f in fits]
    if len(set(names)) != len(names):
        raise RuntimeError("two fits of one name")
    for name, est, args, X_new, eras in fits:
        if eras is None:
            est.fit(*args)
        else:
            est.fit(*args, eras=eras)
        extra = [np.asarray([getattr(est, "n_iter_", -1)])]
        result[name] = _digest(_outputs(est, X_new) + extra)
    return result


if __name__ == "__main__":
    json.dump(fingerprint(), sys.stdout, indent=1, sort_keys=True)
    print()
