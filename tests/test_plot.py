"""eraboost.plot: what each figure holds, against the numbers it draws
(eraboost.metrics.era_scores, feature_importances_, era_importances)."""

import sys

import numpy as np
import pytest

from eraboost import HistGradientBoostingRegressor
from eraboost import plot as eplot
from eraboost.inspection import era_importances
from eraboost.metrics import era_scores

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
plt = pytest.importorskip("matplotlib.pyplot")


@pytest.fixture(scope="module")
def fitted():
    rng = np.random.RandomState(0)
    n_eras, rows = 12, 100
    eras = np.repeat(np.arange(n_eras), rows)
    X = rng.normal(size=(n_eras * rows, 4))
    y = X[:, 0] + (eras % 2 * 2 - 1) * X[:, 1] + 0.3 * rng.normal(size=eras.size)
    names = ["steady", "flipping", "noise_a", "noise_b"]
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(X, columns=names)
    models = {
        split: HistGradientBoostingRegressor(
            max_iter=15, split_type=split, random_state=0
        ).fit(frame, y, eras=eras)
        for split in ("original", "era")
    }
    return frame, y, eras, models


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_era_scores_draw_one_bar_an_era_per_model(fitted):
    frame, y, eras, models = fitted
    labels = [f"era{e + 1}" for e in eras]  # natural order: era2 before era10
    ax = eplot.plot_era_scores(models, frame, y, labels, metric="spearman")
    bars = ax.containers
    assert len(bars) == 2
    order, _ = era_scores(y, y, labels, return_eras=True)
    for container, model in zip(bars, models.values()):
        expected = era_scores(y, model.predict(frame), labels, "spearman")
        heights = [patch.get_height() for patch in container]
        np.testing.assert_allclose(heights, expected)
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert ticks == list(order) and ticks[:3] == ["era1", "era2", "era3"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[0].startswith("original (mean") and legend[1].startswith("era")
    assert ax.get_ylabel() == "spearman"


def test_many_eras_are_lines_with_their_moving_mean(fitted):
    frame, y, _, models = fitted
    eras = np.arange(y.size) % 120  # 120 eras of 10 rows
    ax = eplot.plot_era_scores(models["era"], frame, y, eras)
    thin, thick = ax.get_lines()[:2]
    expected = era_scores(y, models["era"].predict(frame), eras)
    np.testing.assert_allclose(thin.get_ydata(), expected)
    window = max(5, 120 // 30)
    # the centred mean by brute force
    mean = [
        expected[max(0, i - window // 2) : i + window - window // 2].mean()
        for i in range(120)
    ]
    np.testing.assert_allclose(thick.get_ydata(), mean)
    assert thick.get_linewidth() > thin.get_linewidth()


def test_importances_are_bars_largest_first_with_the_feature_names(fitted):
    _, _, _, models = fitted
    model = models["original"]
    ax = eplot.plot_importances(model, max_features=3)
    widths = [patch.get_width() for patch in ax.patches]
    ys = [patch.get_y() + patch.get_height() / 2 for patch in ax.patches]
    importances = model.feature_importances_
    top = np.argsort(-importances)[:3]
    np.testing.assert_allclose(widths, importances[top])
    assert ys == sorted(ys, reverse=True)  # the largest at the top
    labels = {t.get_position()[1]: t.get_text() for t in ax.get_yticklabels()}
    assert [labels[v] for v in ys] == [model.feature_names_in_[j] for j in top]
    assert labels[ys[0]] == "steady"


def test_era_importances_image_holds_the_numbers_and_saves(fitted, tmp_path):
    frame, y, eras, models = fitted
    model = models["original"]
    ax = eplot.plot_era_importances(model, frame, y, eras)
    expected = era_importances(model, frame, y, eras)
    image = ax.get_images()[0]
    np.testing.assert_allclose(image.get_array(), expected)
    low, high = image.get_clim()
    assert low == -high == -np.abs(expected).max()
    assert [t.get_text() for t in ax.get_xticklabels()] == list(frame.columns)
    # the flipping feature helps half the eras and hurts the others
    column = expected[:, 1]
    assert (column > 0).any() and (column < 0).any()
    path = tmp_path / "era_importances.png"
    ax.figure.savefig(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_given_axes_is_drawn_on(fitted):
    _, _, _, models = fitted
    _, (left, right) = plt.subplots(1, 2)
    assert eplot.plot_importances(models["era"], ax=right) is right
    assert len(right.patches) == 4 and not left.patches


def test_without_matplotlib_one_line_names_the_extra(fitted, monkeypatch):
    _, _, _, models = fitted
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(ImportError, match=r"pip install 'eraboost\[plot\]'") as error:
        eplot.plot_importances(models["era"])
    assert "\n" not in str(error.value)
