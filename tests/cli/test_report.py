"""The report of ``eraboost report`` (``eraboost.cli.report``); the command
itself is tested in test_cli.py."""

import numpy as np
import pytest


def test_the_public_name_is_the_command_lines_report():
    """``eraboost.report`` (a public submodule name since the first release)
    is the module that moved to ``eraboost/cli/report.py``."""
    import eraboost
    import eraboost.cli.report
    from eraboost import report

    assert report is eraboost.cli.report is eraboost.report
    assert "report" in dir(eraboost)


@pytest.mark.parametrize("n_eras, bars", [(20, True), (300, False)])
def test_report_plot_readable_with_many_eras(n_eras, bars):
    pytest.importorskip("matplotlib")
    from eraboost.cli.report import era_scores_figure

    rng = np.random.RandomState(0)
    labels = np.arange(n_eras)
    scores = {"a": rng.normal(size=n_eras), "b": rng.normal(size=n_eras)}
    fig = era_scores_figure(labels, scores, "pearson")
    ax = fig.axes[0]
    assert (len(ax.patches) == 2 * n_eras) is bars
    if not bars:
        # per model: a thin per-era line and its moving mean; plus y = 0
        assert len(ax.lines) == 2 * 2 + 1
        smooth = ax.lines[1].get_ydata()
        window = n_eras // 30
        assert smooth[150] == pytest.approx(scores["a"][145:155].mean())
        assert window == 10
    import matplotlib.pyplot as plt

    plt.close(fig)
