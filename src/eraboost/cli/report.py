"""Per-era report of one or more models: scores, summary, plots.

:func:`write_report` writes, into a folder:

- ``era_scores.csv``: one row per era (in the natural order of the era
  labels, the time order of :func:`eraboost.metrics.era_summary`), one
  column per model;
- ``summary.csv``: one row per model, :func:`eraboost.metrics.era_summary`
  of its per-era scores (mean, std, Sharpe, worst era and its label, share
  of positive eras, maximum drawdown, number of eras);
- ``era_scores.png``: the per-era scores, the models side by side (bars up
  to 60 eras, lines with a moving mean beyond);
- ``cumulative.png``: the cumulative score over eras, one line per model.

The plots need matplotlib (``pip install eraboost[cli]``); it is imported
lazily, with the non-interactive Agg backend.
"""

import csv
from pathlib import Path

import numpy as np

from .._atomic import atomic_write
from ..metrics import era_scores, era_summary, greater_is_better

#: The files of a report, in the order :func:`write_report` returns them.
REPORT_FILES = ("era_scores.csv", "summary.csv", "era_scores.png", "cumulative.png")

SUMMARY_FIELDS = (
    "model",
    "metric",
    "mean",
    "std",
    "sharpe",
    "worst",
    "worst_era",
    "positive_share",
    "max_drawdown",
    "n_eras",
)


def _r2(y_true, y_pred):
    """Coefficient of determination; NaN for a constant target (undefined)."""
    total = np.sum((y_true - y_true.mean()) ** 2)
    if total == 0:
        return float("nan")
    return float(1.0 - np.sum((y_true - y_pred) ** 2) / total)


def _mae(y_true, y_pred):
    return float(np.mean(np.abs(y_true - y_pred)))


#: Metrics of the report beyond :data:`eraboost.metrics.METRIC_NAMES`: name
#: -> (function of one era, whether larger is better).
REPORT_METRICS = {"r2": (_r2, True), "mae": (_mae, False)}
#: The correlations, undefined (NaN in the report) in an era where the
#: predictions or the target do not vary (era_scores gives 0 there).
CORRELATIONS = ("pearson", "spearman", "numerai_corr")


def constant_eras(values, eras):
    """Whether ``values`` take one value within each era (eras in the
    natural order of their labels, as :func:`eraboost.metrics.era_scores`)."""
    from .._eras import check_eras

    codes, labels = check_eras(eras, values.shape[0])
    order = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[order], np.arange(labels.shape[0]))
    v = np.asarray(values)[order]
    return np.minimum.reduceat(v, starts) == np.maximum.reduceat(v, starts)


def compare_models(predictions, y_true, eras, metric="pearson"):
    """Per-era scores and summaries of several models' predictions.

    Parameters
    ----------
    predictions : dict of str to ndarray of shape (n_samples,)
        Predictions of each model, by model name.
    y_true : ndarray of shape (n_samples,)
    eras : ndarray of shape (n_samples,)
    metric : str, default="pearson"
        A metric of :func:`eraboost.metrics.era_scores`.

    Returns
    -------
    labels : ndarray of shape (n_eras,)
        The era labels in their natural order.
    scores : dict of str to ndarray of shape (n_eras,)
    summaries : dict of str to dict
        :func:`~eraboost.metrics.era_summary` of each model's scores, plus
        ``"worst_era"``, the label of the worst era.
    """
    score, greater = REPORT_METRICS.get(metric, (metric, None))
    if greater is None:
        greater = greater_is_better(metric)
    if metric in CORRELATIONS:
        flat_target = constant_eras(y_true, eras)
    labels, scores, summaries = None, {}, {}
    for name, pred in predictions.items():
        labels, s = era_scores(y_true, pred, eras, score, return_eras=True)
        if metric in CORRELATIONS:
            s = np.where(flat_target | constant_eras(pred, eras), np.nan, s)
        scores[name] = s
        summaries[name] = _summary(s, labels, greater)
    return labels, scores, summaries


def _summary(scores, labels, greater):
    """:func:`~eraboost.metrics.era_summary` of the eras whose score is
    defined (all NaN when none is; ``n_eras`` counts them), with
    ``"worst_era"``."""
    defined = np.isfinite(scores)
    if not defined.any():
        nan = float("nan")
        summary = dict.fromkeys(
            ("mean", "std", "sharpe", "worst", "positive_share", "max_drawdown"), nan
        )
        return {**summary, "n_eras": 0, "worst_era": None}
    summary = era_summary(scores[defined], greater_is_better=greater)
    masked = np.where(defined, scores, -np.inf if not greater else np.inf)
    worst = int(np.argmin(masked) if greater else np.argmax(masked))
    summary["worst_era"] = _plain(labels[worst])
    return summary


def _plain(value):
    return value.item() if hasattr(value, "item") else value


def write_report(out_dir, labels, scores, summaries, metric):
    """Write the CSV files and the PNG plots of a report.

    Parameters
    ----------
    out_dir : str or Path
        Created if needed.
    labels, scores, summaries :
        As returned by :func:`compare_models`.
    metric : str
        Name of the metric (for headers and axis labels).

    Returns
    -------
    paths : list of Path
        The files written.
    """
    names = list(scores)
    if "era" in names:
        raise ValueError(
            "a model cannot be named 'era', the first column of "
            "era_scores.csv: rename it (the command line names it "
            "'era (model)')"
        )
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / name for name in REPORT_FILES]
    # each file appears whole or not at all (a failure keeps the old one)
    with atomic_write(paths[0], "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["era", *names])
        for i, label in enumerate(labels):
            writer.writerow(
                [_plain(label)] + [repr(float(scores[n][i])) for n in names]
            )
    with atomic_write(paths[1], "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(SUMMARY_FIELDS)
        for n in names:
            s = summaries[n]
            writer.writerow(
                [n, metric]
                + [
                    repr(s[k]) if isinstance(s[k], float) else s[k]
                    for k in SUMMARY_FIELDS[2:]
                ]
            )
    for path, plot in ((paths[2], plot_era_scores), (paths[3], plot_cumulative)):
        with atomic_write(path, "wb") as f:
            plot(f, labels, scores, metric)
    return paths


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise ValueError(
            "the report's plots need matplotlib: pip install 'eraboost[cli]'"
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _era_axis(ax, labels):
    n = len(labels)
    step = max(1, int(np.ceil(n / 20)))
    ticks = np.arange(0, n, step)
    ax.set_xticks(ticks)
    ax.set_xticklabels(
        [str(_plain(labels[i])) for i in ticks], rotation=45, ha="right", fontsize=7
    )
    ax.set_xlabel("era")
    ax.set_xlim(-0.7, n - 0.3)


# Above this many eras the per-era scores are drawn as lines with a moving
# mean instead of bars (300 eras of bars are an unreadable thicket).
MAX_BAR_ERAS = 60


def era_scores_figure(labels, scores, metric):
    """The figure of the per-era scores, eras in their natural order.

    Up to ``MAX_BAR_ERAS`` eras: bars, the models side by side. More: each
    model's per-era scores as a thin line and their centred moving mean over
    ``max(5, n_eras // 30)`` eras as a thick one.

    Returns
    -------
    fig : matplotlib Figure
    """
    plt = _pyplot()
    n, k = len(labels), len(scores)
    x = np.arange(n)
    if n <= MAX_BAR_ERAS:
        fig, ax = plt.subplots(figsize=(min(14, 5 + 0.12 * n * k), 3.6), dpi=90)
        width = 0.8 / k
        for i, (name, s) in enumerate(scores.items()):
            ax.bar(
                x - 0.4 + width * (i + 0.5),
                s,
                width=width,
                label=f"{name} (mean {np.mean(s):.4g})",
            )
        title = f"Per-era {metric}"
    else:
        window = max(5, n // 30)
        fig, ax = plt.subplots(figsize=(12, 3.6), dpi=90)
        for i, (name, s) in enumerate(scores.items()):
            colour = f"C{i % 10}"
            s = np.asarray(s, dtype=np.float64)
            ax.plot(x, s, color=colour, linewidth=0.6, alpha=0.35)
            ax.plot(
                x,
                _moving_mean(s, window),
                color=colour,
                linewidth=2.0,
                label=f"{name} (mean {s.mean():.4g})",
            )
        title = f"Per-era {metric} (thick: moving mean over {window} eras)"
    ax.axhline(0, color="black", linewidth=0.6)
    _era_axis(ax, labels)
    ax.set_ylabel(metric)
    ax.set_title(title)
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    return fig


def _moving_mean(values, window):
    """Centred moving mean; the window shrinks at both ends."""
    csum = np.concatenate(([0.0], np.cumsum(values)))
    half = window // 2
    idx = np.arange(values.size)
    lo = np.maximum(idx - half, 0)
    hi = np.minimum(idx + window - half, values.size)
    return (csum[hi] - csum[lo]) / (hi - lo)


def plot_era_scores(path, labels, scores, metric):
    """The per-era scores (:func:`era_scores_figure`) to a PNG file."""
    plt = _pyplot()
    fig = era_scores_figure(labels, scores, metric)
    fig.savefig(path, format="png")
    plt.close(fig)


def plot_cumulative(path, labels, scores, metric):
    """The cumulative per-era score of each model over eras, to a PNG file."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 3.6), dpi=90)
    x = np.arange(len(labels))
    for name, s in scores.items():
        ax.plot(x, np.cumsum(s), marker="." if len(labels) <= 60 else None, label=name)
    ax.axhline(0, color="black", linewidth=0.6)
    _era_axis(ax, labels)
    ax.set_ylabel(f"cumulative {metric}")
    ax.set_title(f"Cumulative {metric} over eras")
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)
