"""Plots of fitted models with matplotlib: per-era scores and importances.

matplotlib is an optional extra (``pip install 'eraboost[plot]'``), imported
on the first call. Each function draws on the ``ax`` given, or on a new
figure's, and returns the axes; save the figure with
``ax.figure.savefig("file.png")``.

- :func:`plot_era_scores`: the per-era scores of one or more models (bars up
  to 60 eras, beyond that thin lines with a thick moving mean);
- :func:`plot_importances`: the pooled split gains per feature
  (``feature_importances_``), largest first;
- :func:`plot_era_importances`: each era's share of each feature's gains
  (:func:`eraboost.inspection.era_importances`), eras by features.
"""

import numpy as np

from .inspection import era_importances as _era_importances
from .metrics import era_scores as _era_scores

# Above this many eras the scores are lines with a moving mean, not bars
# (300 eras of bars are an unreadable thicket).
MAX_BAR_ERAS = 60


def _pyplot():
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise ImportError(
            "eraboost.plot needs matplotlib: pip install 'eraboost[plot]'"
        ) from None
    return plt


def _axes(ax, figsize):
    plt = _pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=figsize)
    return ax


def _feature_names(estimator):
    names = getattr(estimator, "feature_names_in_", None)
    if names is None:
        return [f"x{j}" for j in range(estimator.n_features_in_)]
    return [str(name) for name in names]


def _moving_mean(values, window):
    """Centred moving mean; the window shrinks at both ends."""
    csum = np.concatenate(([0.0], np.cumsum(values)))
    half = window // 2
    idx = np.arange(values.size)
    lo = np.maximum(idx - half, 0)
    hi = np.minimum(idx + window - half, values.size)
    return (csum[hi] - csum[lo]) / (hi - lo)


def _era_ticks(ax, labels):
    n = len(labels)
    ticks = np.arange(0, n, max(1, int(np.ceil(n / 20))))
    ax.set_xticks(ticks)
    ax.set_xticklabels([str(labels[i]) for i in ticks], rotation=45, ha="right")
    ax.set_xlabel("era")


def plot_era_scores(models, X, y, eras, *, metric="pearson", ax=None):
    """Per-era scores of one or more fitted models on the data given.

    Parameters
    ----------
    models : fitted estimator, or dict of str to fitted estimator
        The models, by the name the legend shows.
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)
    eras : array-like of shape (n_samples,)
        Era label of each row; the eras are drawn in their natural order
        (:func:`eraboost.metrics.era_scores`).
    metric : str or callable, default="pearson"
        A metric of :func:`eraboost.metrics.era_scores`.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure's axes when None.

    Returns
    -------
    ax : matplotlib Axes
        Up to 60 eras: one bar an era per model (the models side by side),
        in the order of ``models``. More: per model a thin line of the
        scores and a thick line of their centred moving mean over
        ``max(5, n_eras // 30)`` eras. The legend gives each model's mean.
    """
    if not isinstance(models, dict):
        models = {type(models).__name__: models}
    scores = {}
    for name, model in models.items():
        labels, s = _era_scores(
            np.asarray(y), model.predict(X), np.asarray(eras), metric, return_eras=True
        )
        scores[name] = np.asarray(s, dtype=np.float64)
    n, k = len(labels), len(scores)
    ax = _axes(ax, (min(14, 5 + 0.12 * n * k), 3.6))
    x = np.arange(n)
    if n <= MAX_BAR_ERAS:
        width = 0.8 / k
        for i, (name, s) in enumerate(scores.items()):
            ax.bar(
                x - 0.4 + width * (i + 0.5),
                s,
                width=width,
                label=f"{name} (mean {s.mean():.4g})",
            )
        ax.set_title(f"Per-era {metric}")
    else:
        window = max(5, n // 30)
        for i, (name, s) in enumerate(scores.items()):
            colour = f"C{i % 10}"
            ax.plot(x, s, color=colour, linewidth=0.6, alpha=0.35)
            ax.plot(
                x,
                _moving_mean(s, window),
                color=colour,
                linewidth=2.0,
                label=f"{name} (mean {s.mean():.4g})",
            )
        ax.set_title(f"Per-era {metric} (thick: moving mean over {window} eras)")
    ax.axhline(0, color="black", linewidth=0.6)
    _era_ticks(ax, labels)
    ax.set_ylabel(str(metric))
    ax.legend(frameon=False, fontsize=8)
    return ax


def plot_importances(estimator, *, max_features=20, ax=None):
    """The pooled split gain of each feature (``feature_importances_``).

    Parameters
    ----------
    estimator : fitted eraboost estimator with ``feature_importances_``
    max_features : int, default=20
        How many features to draw, the largest gains first.
    ax : matplotlib Axes, default=None
        Where to draw; a new figure's axes when None.

    Returns
    -------
    ax : matplotlib Axes
        One horizontal bar a feature, the largest at the top, labelled with
        the feature's name (``feature_names_in_``, else ``x0``, ``x1``...).
    """
    importances = np.asarray(estimator.feature_importances_, dtype=np.float64)
    names = _feature_names(estimator)
    # stable: ties keep the column order
    order = np.argsort(-importances, kind="stable")[:max_features]
    ax = _axes(ax, (6, 1.0 + 0.3 * len(order)))
    y = np.arange(len(order))[::-1]
    ax.barh(y, importances[order])
    ax.set_yticks(y)
    ax.set_yticklabels([names[j] for j in order])
    ax.set_xlabel("share of the split gain")
    ax.set_title("Feature importances")
    return ax


def plot_era_importances(estimator, X, y, eras, *, ax=None):
    """Each era's improvement by each feature's splits, as a colour map.

    Parameters
    ----------
    estimator : fitted eraboost gradient boosting estimator
    X, y, eras : array-like
        The data (:func:`eraboost.inspection.era_importances`).
    ax : matplotlib Axes, default=None
        Where to draw; a new figure's axes when None.

    Returns
    -------
    ax : matplotlib Axes
        An image of ``n_eras`` rows (eras in their natural order) by
        ``n_features_in_`` columns, in a diverging colour map centred on 0
        (red: the feature's splits help the era, blue: they hurt it), with a
        colour bar.
    """
    labels, values = _era_importances(estimator, X, y, eras, return_eras=True)
    n_eras, n_features = values.shape
    ax = _axes(ax, (min(14, 3 + 0.5 * n_features), min(10, 2 + 0.18 * n_eras)))
    bound = float(np.max(np.abs(values))) or 1.0
    image = ax.imshow(values, cmap="RdBu_r", vmin=-bound, vmax=bound, aspect="auto")
    ax.figure.colorbar(image, ax=ax, label="improvement")
    ax.set_xticks(np.arange(n_features))
    ax.set_xticklabels(_feature_names(estimator), rotation=45, ha="right")
    rows = np.arange(0, n_eras, max(1, int(np.ceil(n_eras / 20))))
    ax.set_yticks(rows)
    ax.set_yticklabels([str(labels[i]) for i in rows])
    ax.set_ylabel("era")
    ax.set_title("Per-era importances")
    return ax
