"""Monotonic constraints with eras and ``min_samples_leaf_per_era``: the
splitter against a NumPy brute force (issue 29).

Every candidate of every feature is enumerated from scratch
(``reference.candidates``); a monotonic constraint compares the children's
values bounded by the node's bounds, as scikit-learn does, and only rules
candidates out. The gain is then computed two ways (``pooled_gain`` in
``_splitting.pyx``):

* docs/criteria.md's ``score(G_L, H_L) + score(G_R, H_R) - score(G, H)``,
  from the sums: what the per-era path (eras, the era criteria or the
  options) computes, and what the era criteria's pooled progress uses;
* scikit-learn's ``G v - G_L v_L - G_R v_R``, from the node's value and the
  children's bounded values: what the pooled path computes (scikit-learn's
  trees bit for bit).

They agree, up to rounding, while no bound binds, and differ when one does:
the tests below show both.
"""

import numpy as np
import pytest

from tests.engine import reference
from tests.engine.helpers import Case

MONOTONIC = [1, -1, 1, -1]


def bounded_value(G, H, lam, lower, upper):
    """The engine's (scikit-learn's) child value, clipped by the bounds."""
    return min(max(-G / (H + lam + 1e-15), lower), upper)


def brute_force(case, rows, lower, upper, monotonic, min_per_era=None, value=None):
    """The best split of ``rows`` by enumeration, or None: (feature, bin,
    missing_left, key, spec_gain, sklearn_gain).

    ``key`` is what the criterion maximises, from the spec's gain; with
    ``value`` (the node's value) the candidates are ranked by scikit-learn's
    gain instead (the pooled path, one era and no option)."""
    g, h, eras = case.g[rows], case.h[rows], case.eras[rows]
    lam = case.lam
    era_set = reference.splittable_eras(eras, min_per_era)
    G = g.sum()
    best, best_key = None, None
    for f, miss_left, b, left in reference.candidates(
        case.Xb, case.n_bins - 1, case.has_missing, rows
    ):
        nL = int(left.sum())
        if nL < case.min_samples_leaf or len(rows) - nL < case.min_samples_leaf:
            continue
        GL, HL = g[left].sum(), h[left].sum()
        GR, HR = g[~left].sum(), h[~left].sum()
        if HL < reference.MIN_HESSIAN or HR < reference.MIN_HESSIAN:
            continue
        if min_per_era is not None:
            fewest = reference.min_rows_per_era(left, eras, era_set)
            if fewest is not None and fewest < min_per_era:
                continue
        vL = bounded_value(GL, HL, lam, lower, upper)
        vR = bounded_value(GR, HR, lam, lower, upper)
        if (monotonic[f] == 1 and vL > vR) or (monotonic[f] == -1 and vL < vR):
            continue
        gain, S, D, _M, children = reference.evaluate(
            left, g, h, eras, lam, case.alpha, era_set
        )
        sklearn_gain = G * value - GL * vL - GR * vR if value is not None else None
        progress = gain > reference.POOLED_PROGRESS_RTOL * children
        if value is not None:
            ok, key = sklearn_gain > 0, (sklearn_gain,)
        elif case.split_type == "original":
            ok, key = gain > 0, (gain,)
        elif case.split_type == "era":
            ok, key = S > 0 and progress, (S,)
        else:
            ok, key = D > 0 and progress, (D, S, gain)
        if ok and (best_key is None or key > best_key):
            best, best_key = (f, b, miss_left, key, gain, sklearn_gain), key
    return best


def node_bounds(case, rows, width):
    """Bounds ``width`` around the node's value (None: unbounded)."""
    if width is None:
        return -np.inf, np.inf
    G, H = case.g[rows].sum(), case.h[rows].sum()
    v = -G / (H + case.lam)
    return v - width, v + width


def check(case, rows, hist, lower, upper, min_per_era=None, pooled=False):
    info = case.split(rows, hist, lower, upper)
    value = None
    if pooled:
        G, H = case.g[rows].sum(), case.h[rows].sum()
        value = -G / (H + case.lam)  # what Case.split passes
    ref = brute_force(case, rows, lower, upper, MONOTONIC, min_per_era, value)
    if ref is None:
        assert not info.found, info
        return None
    f, b, miss_left, key, spec_gain, sklearn_gain = ref
    assert info.found, ref
    assert (info.feature_idx, info.bin_idx) == (f, b), (info, ref)
    if (case.Xb[rows, f] == case.n_bins[f] - 1).any():
        assert info.missing_go_to_left == miss_left, (info, ref)
    left = case.left_mask(rows, info)
    vL = bounded_value(case.g[rows][left].sum(), case.h[rows][left].sum(), case.lam,
                       lower, upper)  # fmt: skip
    vR = bounded_value(case.g[rows][~left].sum(), case.h[rows][~left].sum(),
                       case.lam, lower, upper)  # fmt: skip
    assert info.value_left == pytest.approx(vL, rel=1e-12, abs=1e-12)
    assert info.value_right == pytest.approx(vR, rel=1e-12, abs=1e-12)
    expected_gain = sklearn_gain if pooled else spec_gain
    assert info.gain == pytest.approx(expected_gain, rel=1e-9, abs=1e-9)
    if case.split_type == "directional":
        assert info.direction_count == key[0]
        assert info.criterion == pytest.approx(key[1], rel=1e-9, abs=1e-9)
    else:
        assert info.criterion == pytest.approx(key[0], rel=1e-9, abs=1e-9)
    return spec_gain, sklearn_gain, info


@pytest.mark.parametrize("split_type", ["original", "era", "directional"])
@pytest.mark.parametrize("alpha", [-np.inf, -1.0, 0.0])
@pytest.mark.parametrize("width", [None, 0.3, 0.05])
@pytest.mark.parametrize("seed", range(2))
def test_monotonic_with_eras_and_min_rows_per_era(split_type, alpha, width, seed):
    """The per-era path: the chosen split, its values and its gain (the
    spec's, from the sums) match the brute force, with the node's bounds
    absent, loose or binding, at the root and in both children."""
    case = Case(
        seed,
        4,
        split_type,
        alpha,
        data={"rows_per_era": (15, 50)},
        monotonic_cst=MONOTONIC,
        min_samples_leaf_per_era=3,
    )
    rows = case.rows
    hist = case.hist(rows)
    lower, upper = node_bounds(case, rows, width)
    got = check(case, rows, hist, lower, upper, min_per_era=3)
    if got is None:  # no candidate: the brute force found none either
        return
    info = got[2]
    left = case.left_mask(rows, info)
    for sub in (rows[left], rows[~left]):
        if len(sub) >= 2:
            lo, hi = node_bounds(case, sub, width)
            check(case, sub, case.hist(sub), lo, hi, min_per_era=3)


@pytest.mark.parametrize("seed", range(4))
def test_pooled_path_gain_is_scikit_learns_under_bounds(seed):
    """The pooled path (one era, no option) ranks the candidates by
    scikit-learn's gain from the bounded values: the brute force's choice
    and gain. Without bounds that gain is the spec's up to rounding; with a
    binding bound it is not."""
    case = Case(seed, 1, "original", data={"rows_per_era": (150, 151)},
                monotonic_cst=MONOTONIC)  # fmt: skip
    rows = case.rows
    hist = case.hist(rows)
    spec, sklearn, _ = check(case, rows, hist, -np.inf, np.inf, pooled=True)
    assert sklearn == pytest.approx(spec, rel=1e-9)
    lower, upper = node_bounds(case, rows, 0.01)
    got = check(case, rows, hist, lower, upper, pooled=True)
    if got is not None:
        spec, sklearn, info = got
        if info.value_left in (lower, upper) or info.value_right in (lower, upper):
            assert sklearn != pytest.approx(spec, rel=1e-6)
