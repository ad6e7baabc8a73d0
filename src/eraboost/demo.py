"""``python -m eraboost demo``: the three split types side by side.

A built-in synthetic era dataset. Each era has its own level of the target
(an era-wide shift). The target depends on three *invariant* features in the
same way in every era; a *spurious* feature tracks the era's level: it
predicts the target across the pooled training eras but carries no
information within any era, and in the new eras its relation to the level is
reversed. A pooled model leans on it; era-aware criteria do not.
"""

from time import perf_counter

import numpy as np

from .gradient_boosting import HistGradientBoostingRegressor


def make_era_data(
    n_eras=40, rows_per_era=1000, n_noise=6, spurious_sign=1.0, seed=0, edges=None
):
    """Synthetic era data with invariant and spurious int8 features.

    Parameters
    ----------
    n_eras, rows_per_era : int
    n_noise : int
        Features unrelated to the target.
    spurious_sign : float
        The spurious feature is ``spurious_sign * era_level + noise``.
    seed : int
    edges : list of ndarray or None
        Quintile edges of each raw feature (computed here when None; pass the
        training ones for test data).

    Returns
    -------
    X : ndarray of int8, shape (n_eras * rows_per_era, 4 + n_noise)
        Values 0..4 (quintiles). Columns 0-2 invariant, 3 spurious.
    y : ndarray of float64
    eras : ndarray of int
    edges : list of ndarray
    """
    rng = np.random.RandomState(seed)
    n = n_eras * rows_per_era
    eras = np.repeat(np.arange(n_eras), rows_per_era)
    z = rng.normal(size=(n, 3))
    level = rng.normal(size=n_eras)[eras]
    y = np.sin(1.5 * z[:, 0]) + 0.5 * z[:, 1] - 0.4 * z[:, 1] * z[:, 2] + level
    y += rng.normal(scale=0.8, size=n)
    spurious = spurious_sign * level + rng.normal(scale=0.5, size=n)
    raw = np.column_stack([z, spurious, rng.normal(size=(n, n_noise))])
    if edges is None:
        edges = [np.quantile(col, [0.2, 0.4, 0.6, 0.8]) for col in raw.T]
    X = np.column_stack([np.searchsorted(e, col) for e, col in zip(edges, raw.T)])
    return X.astype(np.int8), y, eras, edges


def make_era_classification_data(
    n_eras=40, rows_per_era=150, n_classes=2, separation=2.0, n_noise=4, seed=0
):
    """Synthetic era classification data with an era-specific shortcut.

    Modelled on the synthetic memorization task of the era-splitting paper
    (DeLise, section 5.2). Column 0 is a *stable* feature, weaker but the
    same in every era: its mean is ``separation * class``. Column 1 is a
    *shortcut*: within each era it separates the classes perfectly (each
    class occupies its own narrow band), but each era has its own centre for
    the bands (uniform in [-10, 10]) and its own order of the classes along
    them (a random permutation; for two classes, the direction flips). A
    pooled model can memorize the training eras through it; in new eras it
    is worthless. The other columns are noise.

    Parameters
    ----------
    n_eras, rows_per_era, n_classes : int
    separation : float
        Class separation of the stable feature (in its noise's units).
    n_noise : int
    seed : int

    Returns
    -------
    X : ndarray of float64, shape (n_eras * rows_per_era, 2 + n_noise)
    y : ndarray of int, classes 0 .. n_classes - 1
    eras : ndarray of int
    """
    rng = np.random.RandomState(seed)
    eras = np.repeat(np.arange(n_eras), rows_per_era)
    n = eras.size
    y = rng.randint(0, n_classes, size=n)
    stable = separation * y + rng.normal(size=n)
    centre = rng.uniform(-10.0, 10.0, size=n_eras)[eras]
    order = np.array([rng.permutation(n_classes) for _ in range(n_eras)])
    band = 0.3
    shortcut = centre + band * order[eras, y] + rng.uniform(0, band / 2, size=n)
    X = np.column_stack([stable, shortcut, rng.normal(size=(n, n_noise))])
    return X, y, eras


def _era_corr(y, pred, eras):
    out = []
    for e in np.unique(eras):
        m = eras == e
        out.append(np.corrcoef(y[m], pred[m])[0, 1])
    return np.asarray(out)


def run_demo(n_eras=40, rows_per_era=1000, seed=0, file=None):
    """Train original, era and directional models and print their scores.

    In-era scores are on held-out rows (20%) of the training eras; out-of-era
    scores on new eras, where the spurious feature's relation is reversed.
    Correlations are per-era Pearson correlations, averaged over eras.
    """
    X_tr, y_tr, e_tr, edges = make_era_data(n_eras, rows_per_era, seed=seed)
    X_te, y_te, e_te, _ = make_era_data(
        n_eras // 2, rows_per_era, spurious_sign=-1.0, seed=seed + 1, edges=edges
    )
    rng = np.random.RandomState(seed)
    hold = rng.rand(len(y_tr)) < 0.2
    print(
        f"eraboost demo: {n_eras} training eras x {rows_per_era} rows, "
        f"{X_tr.shape[1]} int8 features (3 invariant, 1 spurious, "
        f"{X_tr.shape[1] - 4} noise); {n_eras // 2} new eras to test.",
        file=file,
    )
    header = (
        f"{'split_type':<12} {'alpha':>6} {'fit s':>7} {'in-era corr':>12} "
        f"{'out-of-era corr':>16} {'out-of-era MSE':>15} {'spurious splits':>16}"
    )
    print(header, file=file)
    print("-" * len(header), file=file)
    rows = []
    for split_type, alpha in [
        ("original", 0.0),
        ("era", 0.0),
        ("era", -np.inf),
        ("directional", 0.0),
    ]:
        est = HistGradientBoostingRegressor(
            split_type=split_type,
            boltzmann_alpha=alpha,
            max_iter=200,
            learning_rate=0.05,
            max_leaf_nodes=16,
            early_stopping=False,
            random_state=seed,
        )
        tic = perf_counter()
        est.fit(X_tr[~hold], y_tr[~hold], eras=e_tr[~hold])
        fit_time = perf_counter() - tic
        in_corr = _era_corr(y_tr[hold], est.predict(X_tr[hold]), e_tr[hold]).mean()
        pred_te = est.predict(X_te)
        out_corr = _era_corr(y_te, pred_te, e_te).mean()
        mse = float(np.mean((y_te - pred_te) ** 2))
        feats = np.concatenate(
            [t[0].nodes["feature"][t[0].nodes["is_leaf"] == 0] for t in est._predictors]
        )
        share = float(np.mean(feats == 3)) if feats.size else 0.0
        rows.append((split_type, alpha, fit_time, in_corr, out_corr, mse, share))
        print(
            f"{split_type:<12} {alpha:>6} {fit_time:>7.2f} {in_corr:>12.3f} "
            f"{out_corr:>16.3f} {mse:>15.3f} {share:>16.1%}",
            file=file,
        )
    return rows
