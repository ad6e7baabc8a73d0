"""benchmarks/experiments/irf_regression.py: its NumPy criterion is the
engine's penalty as written, its minimal case shows what its docstring says,
and ``--quick`` prints a row for every model."""

import contextlib
import importlib
import io
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.engine.reference import invariance_penalty

SCRIPTS = Path(__file__).resolve().parents[1] / "benchmarks" / "experiments"


@pytest.fixture
def irf(monkeypatch):
    monkeypatch.syspath_prepend(str(SCRIPTS))
    sys.modules.pop("irf_regression", None)
    return importlib.import_module("irf_regression")


def _node(seed, n=40, n_eras=3):
    rng = np.random.RandomState(seed)
    X = rng.randint(0, 6, size=(n, 2)).astype(float)
    y = rng.normal(size=n) + X[:, 0]
    w = rng.randint(1, 3, size=n).astype(float)
    eras = rng.randint(0, n_eras, size=n)
    return X, y, w, eras


@pytest.mark.parametrize("seed", range(3))
def test_written_penalty_is_the_reference(irf, seed):
    # the script's "as written" is the engine's penalty (the NumPy reference,
    # squared error: g = -w y, h = w, lam = 0)
    X, y, w, eras = _node(seed)
    score, xs, gain = irf.split_scores(X, y, w, eras, 3, 1.0, "written")
    order = np.argsort(X, axis=0, kind="stable")
    for j in range(X.shape[1]):
        for i in range(len(y) - 1):
            if xs[i, j] == xs[i + 1, j]:
                assert score[i, j] == -np.inf
                continue
            left = X[:, j] <= xs[i, j]
            assert left.sum() == i + 1 and set(order[: i + 1, j]) == set(
                np.flatnonzero(left)
            )
            ref = invariance_penalty(left, -w * y, w, eras, 0.0)
            assert score[i, j] == pytest.approx(gain[i, j] - w.sum() * ref)


def test_difference_penalty_is_its_definition(irf):
    X, y, w, eras = _node(5)
    score, xs, gain = irf.split_scores(X, y, w, eras, 3, 2.0, "difference")
    for i in np.flatnonzero(xs[1:, 0] > xs[:-1, 0]):
        left = X[:, 0] <= xs[i, 0]
        diffs = [
            np.average(y[(eras == e) & left], weights=w[(eras == e) & left])
            - np.average(y[(eras == e) & ~left], weights=w[(eras == e) & ~left])
            for e in range(3)
            if ((eras == e) & left).any() and ((eras == e) & ~left).any()
        ]
        p = np.var(diffs) if len(diffs) >= 2 else 0.0
        assert score[i, 0] == pytest.approx(gain[i, 0] - 2.0 * w.sum() * p)


def test_both_sides_rules_out_one_sided_eras(irf):
    X, y, w, eras = _node(7, n=60, n_eras=2)
    X[:, 0] += 4 * eras  # low thresholds of feature 0 hold era 0 only
    both, xs, _ = irf.split_scores(X, y, w, eras, 2, 3.0, "both sides")
    diff, _, _ = irf.split_scores(X, y, w, eras, 2, 3.0, "difference")
    for j in range(X.shape[1]):
        for i in np.flatnonzero(np.isfinite(diff[:, j])):
            left = X[:, j] <= xs[i, j]
            one_sided = any(
                (left & (eras == e)).sum() in (0, (eras == e).sum()) for e in (0, 1)
            )
            assert both[i, j] == (-np.inf if one_sided else diff[i, j])
    assert np.isinf(both).sum() > np.isinf(diff).sum()


def test_minimal_case_eight_rows(irf):
    split, swapped = irf.tiny_case()
    (share_a, diff_a, cr_a), (share_b, diff_b, cr_b) = split["eras"]
    # the eras' children differ by unequal amounts, in unequal shares, and
    # CR_e = share x difference is the same in both
    assert diff_a != pytest.approx(diff_b)
    assert cr_a == pytest.approx(share_a * diff_a)
    assert cr_b == pytest.approx(share_b * diff_b)
    assert cr_a == pytest.approx(cr_b)
    assert split["written"] == pytest.approx(0.0)
    assert split["difference"] == pytest.approx(np.var([diff_a, diff_b]))
    assert split["difference"] > 0
    # the same partition with its sides swapped: penalised as written, the
    # difference of the children's means unchanged
    assert swapped["written"] > 0
    assert swapped["difference"] == pytest.approx(split["difference"])


@pytest.mark.parametrize("d", [2, 5, 10, 20])
def test_minimal_case_population(irf, d):
    p = irf.population_case(d)
    cr, diff, shares = p["CR_e"], p["mean_L - mean_R"], p["right shares"]
    assert cr[0] == pytest.approx(cr[1], rel=1e-3)
    assert p["written"] < 1e-6 * p["difference"]
    # the narrow era sends fewer rows right, with a larger difference
    assert shares[0] < shares[1] and abs(diff[0]) > 1.5 * abs(diff[1])
    # unpenalised as written, this X2 split beats every split on a stable
    # feature at any lambda; the difference of means penalises it at 10
    assert p["X2 gain per row"] > p["best X1 gain per row"]
    assert p["X2 gain per row"] < irf.LAMBDA * p["difference"]


def test_minimal_case_one_draw(irf):
    roots = irf.root_splits(d=2)
    j, terms = roots["written"]
    (share_1, diff_1, cr_1), (share_2, diff_2, cr_2) = terms
    assert j == 2  # X2
    assert share_1 < share_2 and abs(diff_1) > abs(diff_2)
    # the CR_e are closer than the mean differences they are made of
    assert abs(cr_1 - cr_2) < abs(diff_1 - diff_2) / 4
    assert roots["difference"][0] < 2 and roots["both sides"][0] < 2
    # at d=20 the difference alone takes X2 with an era on one side only
    roots = irf.root_splits(d=20)
    j, terms = roots["difference"]
    assert j == 20 and min(share for share, _, _ in terms) == 0
    assert roots["both sides"][0] < 20


def test_quick_run_prints_every_model(irf):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        _, results = irf.main(["--quick"])
    text = out.getvalue()
    assert "Minimal case 1" in text and "Minimal case 2" in text
    (d,) = results
    models = results[d]
    assert set(models) >= {
        "NumPy, as written",
        "NumPy, difference",
        "NumPy, difference, both sides",
        "engine, as written",
        "engine, difference",
    }
    table = text[text.index("Test MSE") :].splitlines()
    rows = [line.split("|")[2].strip() for line in table if line.startswith(f"| {d} |")]
    assert rows == list(models)
    for ratios, imps in models.values():
        assert len(ratios) == len(imps) == 2
        assert all(r > 0 for r in ratios)
        # the summed split frequency is the mean depth of a training row's
        # leaf: at least one, at most the depth limit
        assert all(1 <= st + en <= 20 for st, en in imps)


def test_models_option_runs_only_those(irf):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        _, results = irf.main(["--quick", "--models", "engine, difference"])
    (d,) = results
    assert list(results[d]) == ["engine, lambda 0", "engine, difference"]
    with pytest.raises(SystemExit), contextlib.redirect_stderr(io.StringIO()):
        irf.main(["--quick", "--models", "engine, nothing"])
