"""Write one small model file of every kind, with its predictions.

``python make_files.py OUTDIR`` fits each model with the installed eraboost,
saves it as ``OUTDIR/NAME.eraboost`` with ``save_model``, and saves its
predictions on a fixed X as ``OUTDIR/NAME.predict.npy`` (and, for a
classifier, ``OUTDIR/NAME.proba.npy``). Runnable against any build that has
``save_model``; see README.md for the build that made the stored files.
"""

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from eraboost import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    InvariantForestClassifier,
    InvariantForestRegressor,
    RobustTreeClassifier,
    save_model,
)


def frame(X, seed):
    """X as a DataFrame with a categorical column ``sector``."""
    rng = np.random.RandomState(seed)
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])
    df["sector"] = pd.Categorical(rng.choice(["a", "b", "c", "d"], size=len(df)))
    return df


def rows_to_predict():
    """name -> rows each stored model predicts (also used by the test)."""
    X_new = np.random.RandomState(1).normal(size=(20, 3))
    return {
        "regressor": X_new,
        "binary": X_new,
        "multiclass": X_new,
        "categorical": frame(X_new, 2),
        "forest-regressor": X_new,
        "forest-classifier": X_new,
        "robust-tree": np.round(X_new * 2),
    }


def models():
    """name -> estimator fitted on tiny data with few trees."""
    rng = np.random.RandomState(0)
    n = 120
    X = rng.normal(size=(n, 3))
    eras = np.repeat(np.arange(6), n // 6)
    y_reg = X[:, 0] + 0.5 * X[:, 1] * (eras % 2) + rng.normal(scale=0.5, size=n)
    y_bin = (y_reg > 0).astype(int)
    y_multi = np.digitize(y_reg, [-0.7, 0.0, 0.7])
    df = frame(X, 0)
    y_cat = y_reg + (df["sector"] == "a").to_numpy()
    common = dict(max_iter=4, max_leaf_nodes=4, max_bins=16, random_state=0)
    era = dict(split_type="era", boltzmann_alpha=-np.inf)
    return {
        "regressor": HistGradientBoostingRegressor(**common, **era).fit(
            X, y_reg, eras=eras
        ),
        "binary": HistGradientBoostingClassifier(
            **common, split_type="directional"
        ).fit(X, y_bin, eras=eras),
        "multiclass": HistGradientBoostingClassifier(**common, **era).fit(
            X, y_multi, eras=eras
        ),
        "categorical": HistGradientBoostingRegressor(
            max_iter=6,
            max_leaf_nodes=4,
            random_state=0,
            scoring="r2",
            early_stopping=True,
            validation_fraction=0.2,
            n_iter_no_change=2,
        ).fit(df, y_cat, eras=eras),
        "forest-regressor": InvariantForestRegressor(
            n_estimators=3, max_depth=3, irf_penalty=1.0, random_state=0
        ).fit(X, y_reg, eras=eras),
        "forest-classifier": InvariantForestClassifier(
            n_estimators=3, max_depth=3, random_state=0
        ).fit(X, y_bin, eras=eras),
        "robust-tree": RobustTreeClassifier(max_depth=1, budget=2.0).fit(
            np.round(X[:40] * 2), y_bin[:40]
        ),
    }


def main(out):
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    rows = rows_to_predict()
    for name, est in models().items():
        save_model(est, out / f"{name}.eraboost")
        np.save(out / f"{name}.predict.npy", est.predict(rows[name]))
        if hasattr(est, "predict_proba"):
            np.save(out / f"{name}.proba.npy", est.predict_proba(rows[name]))


if __name__ == "__main__":
    main(sys.argv[1])
