"""Tests of eraboost.robust (robust optimal classification trees)."""

import itertools
import math

import numpy as np
import pytest

from eraboost.robust import RobustTreeClassifier, calibrate_costs_budget

# ---------------------------------------------------------------------------
# Brute force: every full tree of a given depth against its exact worst shift
# ---------------------------------------------------------------------------


def _grid(X):
    """All integer points of the bounding box of the training data.

    Thresholds lie inside [min, max) of each feature, so any shift leaving
    the box is dominated by one that stops on its border.
    """
    ranges = [
        range(int(X[:, f].min()), int(X[:, f].max()) + 1) for f in range(X.shape[1])
    ]
    return np.array(list(itertools.product(*ranges)), dtype=float)


def _shift_costs(X, G, costs, shift):
    """cost[i, g] of moving sample i to grid point g (inf if not allowed)."""
    diff = G[None, :, :] - X[:, None, :]  # (n, G, p)
    out = np.zeros(diff.shape[:2])
    for f in range(X.shape[1]):
        d = diff[:, :, f]
        c = costs[:, f][:, None] * np.abs(d)
        c = np.where(d == 0, 0.0, c)
        if shift[f] == "increase":
            c = np.where(d < 0, np.inf, c)
        elif shift[f] == "decrease":
            c = np.where(d > 0, np.inf, c)
        out += c
    return out


def _leaf_of(P, depth, splits):
    node = np.ones(len(P), dtype=int)
    for _ in range(depth):
        f = np.array([splits[k - 1][0] for k in node])
        t = np.array([splits[k - 1][1] for k in node])
        node = 2 * node + (P[np.arange(len(P)), f] > t)
    return node - 2**depth


def _worst_count_from_psi(psi, correct, budget):
    """Adversary with unit rewards: misclassify the cheapest samples first."""
    c = np.sort(psi[correct & np.isfinite(psi)])
    k = int(np.searchsorted(np.cumsum(c), budget + 1e-9, side="right"))
    return int(correct.sum()) - k


def brute_force(X, y, depth, budget, costs, shift):
    """Best worst-case count over all full trees of ``depth``.

    Returns the best count and a function giving the exact worst-case count
    of an arbitrary tree (splits, leaf labels).
    """
    X = np.asarray(X, dtype=float)
    n, p = X.shape
    G = _grid(X)
    C = _shift_costs(X, G, costs, shift)  # (n, G)
    splits = [
        (f, t) for f in range(p) for t in range(int(X[:, f].min()), int(X[:, f].max()))
    ]
    classes = np.unique(y)
    n_leaves = 2**depth
    labelings = np.array(list(itertools.product(range(len(classes)), repeat=n_leaves)))
    y_idx = np.searchsorted(classes, y)
    best = -1
    own = np.array([np.flatnonzero(np.all(x == G, axis=1))[0] for x in X])
    for structure in itertools.product(splits, repeat=2**depth - 1):
        gl = _leaf_of(G, depth, structure)  # leaf of each grid point
        # cheapest cost for each sample to land in each leaf
        reach = np.full((n, n_leaves), np.inf)
        for leaf in range(n_leaves):
            m = gl == leaf
            if m.any():
                reach[:, leaf] = C[:, m].min(axis=1)
        for lab in labelings:
            wrong = lab[None, :] != y_idx[:, None]
            psi = np.where(wrong, reach, np.inf).min(axis=1)
            correct = lab[gl[own]] == y_idx
            best = max(best, _worst_count_from_psi(psi, correct, budget))

    def evaluate(features, thresholds, leaf_values):
        structure = list(zip(features, thresholds))
        gl = _leaf_of(G, depth, structure)
        wrong_leaf = leaf_values[gl][None, :] != y_idx[:, None]  # (n, G)
        psi = np.where(wrong_leaf, C, np.inf).min(axis=1)
        correct = leaf_values[gl[own]] == y_idx
        return _worst_count_from_psi(psi, correct, budget)

    return best, evaluate


def _tiny_instance(seed, n=30, p=3, levels=4):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, levels, size=(n, p))
    X[0], X[1] = 0, levels - 1  # full range on every feature
    score = X[:, 0] - X[:, 1] + 0.5 * X[:, 2] + rng.normal(0, 1.0, n)
    y = (score > np.median(score)).astype(int)
    return X, y


CASES = [
    # (seed, depth, budget, costs, shift)
    (0, 1, 0.0, 1.0, "both"),
    (1, 1, 3.0, 1.0, "both"),
    (2, 1, 4.5, [1.0, 2.0, 0.5], "both"),
    (3, 1, 3.0, "per-sample", ["increase", "both", "decrease"]),
    (4, 2, 0.0, 1.0, "both"),
    (5, 2, 2.0, 1.0, "both"),
    (6, 2, 5.0, [1.0, 2.0, 0.7], "both"),
    (7, 2, 4.0, "per-sample", "increase"),
    (8, 2, 3.0, [1.5, 1.0, 1.0], ["decrease", "both", "increase"]),
    # larger budgets: the robust optimum differs from the nominal tree
    (20, 1, 6.0, 1.0, "increase"),
    (23, 1, 8.0, [0.5, 1.0, 2.0], "both"),
    (20, 2, 8.0, [0.5, 1.0, 2.0], "both"),
    (24, 2, 8.0, [0.5, 1.0, 2.0], "both"),
    (29, 2, 8.0, [0.5, 1.0, 2.0], "both"),
    (28, 2, 6.0, 1.0, "increase"),
    (27, 2, 10.0, "per-sample", "both"),
]


def _fit_and_brute_force(seed, depth, budget, costs, shift):
    """The fitted classifier and the brute-force optimum on a tiny instance."""
    X, y = _tiny_instance(seed)
    n, p = X.shape
    if isinstance(costs, str):
        costs = np.random.default_rng(100 + seed).uniform(0.5, 2.0, size=(n, p))
    costs_full = np.broadcast_to(np.asarray(costs, dtype=float), (n, p))
    shift_list = [shift] * p if isinstance(shift, str) else shift
    best, evaluate = brute_force(X, y, depth, budget, costs_full, shift_list)
    clf = RobustTreeClassifier(
        max_depth=depth, budget=budget, costs=costs, shift=shift, time_limit=60
    ).fit(X, y)
    return X, y, n, clf, best, evaluate


@pytest.mark.parametrize("seed, depth, budget, costs, shift", CASES)
def test_matches_brute_force(seed, depth, budget, costs, shift):
    X, y, n, clf, best, evaluate = _fit_and_brute_force(
        seed, depth, budget, costs, shift
    )
    assert clf.solver_status_ == "optimal"
    assert clf.gap_ == 0.0
    assert round(clf.worst_case_accuracy_ * n) == best
    # the returned tree really attains it (checked independently)
    got = evaluate(clf.tree_features_, clf.tree_thresholds_, clf.leaf_values_)
    assert got == best
    assert clf.nominal_accuracy_ == pytest.approx(clf.score(X, y))
    assert clf.worst_case_score(X, y) == pytest.approx(best / n)
    if budget == 0.0:
        assert clf.nominal_accuracy_ == clf.worst_case_accuracy_


@pytest.mark.parametrize("seed, depth, budget, costs, shift", [CASES[3], CASES[5]])
def test_flow_formulation_matches_brute_force(
    monkeypatch, seed, depth, budget, costs, shift
):
    # force the fallback main problem used for deep trees
    import eraboost.robust._tree as robust

    monkeypatch.setattr(robust, "_MAX_EXTENDED_VARS", 0)
    _X, _y, n, clf, best, evaluate = _fit_and_brute_force(
        seed, depth, budget, costs, shift
    )
    assert clf.formulation_ == "flow"
    assert clf.solver_status_ == "optimal"
    assert round(clf.worst_case_accuracy_ * n) == best
    assert evaluate(clf.tree_features_, clf.tree_thresholds_, clf.leaf_values_) == best


def test_depth_four_runs():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 3, size=(16, 2))
    y = (X[:, 0] + X[:, 1] + rng.integers(0, 2, 16) >= 3).astype(int)
    clf = RobustTreeClassifier(max_depth=4, budget=1.0, time_limit=60).fit(X, y)
    shallow = RobustTreeClassifier(max_depth=2, budget=1.0).fit(X, y)
    assert clf.solver_status_ == "optimal"
    assert clf.worst_case_accuracy_ <= clf.nominal_accuracy_
    # a deeper tree can only do better (depth-2 trees are depth-4 trees)
    assert clf.worst_case_accuracy_ >= shallow.worst_case_accuracy_
    assert clf.predict(X).shape == (16,)


def test_budget_zero_is_nominal_optimum():
    X, y = _tiny_instance(11)
    n, p = X.shape
    best, _ = brute_force(X, y, 2, 0.0, np.ones((n, p)), ["both"] * p)
    clf = RobustTreeClassifier(max_depth=2, budget=0.0).fit(X, y)
    assert round(clf.score(X, y) * n) == best
    assert clf.n_cuts_ == 0


def test_robustness_costs_nominal_accuracy_monotone_worst_case():
    X, y = _tiny_instance(12, n=30)
    worst = []
    for budget in [0.0, 2.0, 6.0]:
        clf = RobustTreeClassifier(max_depth=2, budget=budget).fit(X, y)
        worst.append(clf.worst_case_accuracy_)
        assert clf.worst_case_accuracy_ <= clf.nominal_accuracy_
    assert worst[0] >= worst[1] >= worst[2]


def test_categorical_group_matches_brute_force():
    # one integer feature and one 3-category feature (one-hot, 3 columns)
    rng = np.random.default_rng(3)
    n = 24
    x0 = rng.integers(0, 4, n)
    cat = rng.integers(0, 3, n)
    x0[:2] = [0, 3]
    cat[:3] = [0, 1, 2]
    y = ((x0 >= 2) ^ (cat == 1) ^ (rng.random(n) < 0.1)).astype(int)
    X = np.column_stack([x0, np.eye(3, dtype=int)[cat]])
    costs = np.array([1.0, 0.6, 0.9, 1.2])
    budget = 3.0
    clf = RobustTreeClassifier(
        max_depth=2, budget=budget, costs=costs, categorical_groups=[[1, 2, 3]]
    ).fit(X, y)
    # brute force: shift x0 by an integer, or move the category (cost old + new)
    G = [(v, k) for v in range(4) for k in range(3)]

    def worst(features, thresholds, leaf_values):
        pts = np.array([[v, *np.eye(3)[k]] for v, k in G])
        gl = _leaf_of(pts, 2, list(zip(features, thresholds)))
        psi = np.full(n, np.inf)
        correct = np.zeros(n, dtype=bool)
        for i in range(n):
            for g, (v, k) in enumerate(G):
                c = costs[0] * abs(v - x0[i])
                if k != cat[i]:
                    c += costs[1 + cat[i]] + costs[1 + k]
                ok = leaf_values[gl[g]] == y[i]
                if c == 0:
                    correct[i] = ok
                if not ok:
                    psi[i] = min(psi[i], c)
        return _worst_count_from_psi(psi, correct, budget)

    splits = [(0, 0), (0, 1), (0, 2), (1, 0), (2, 0), (3, 0)]
    best = -1
    for structure in itertools.product(splits, repeat=3):
        f, t = zip(*structure)
        for lab in itertools.product([0, 1], repeat=4):
            best = max(best, worst(np.array(f), np.array(t, float), np.array(lab)))
    assert round(clf.worst_case_accuracy_ * n) == best
    assert worst(clf.tree_features_, clf.tree_thresholds_, clf.leaf_values_) == best


# ---------------------------------------------------------------------------
# Calibration (section 4)
# ---------------------------------------------------------------------------


def test_calibration_unbounded_closed_form():
    costs, budget = calibrate_costs_budget([0.8, 0.9, 0.5], 0.9, n_samples=200)
    # gamma = log(1 / (1 - rho)), epsilon = -|I| log(lambda)
    np.testing.assert_allclose(costs, [math.log(5.0), math.log(10.0), math.log(2.0)])
    assert budget == pytest.approx(21.072103131565)  # 200 * log(1 / 0.9)
    c, b = calibrate_costs_budget(0.8, 1.0, n_samples=50)
    assert c == pytest.approx(1.6094379124341)
    assert b == 0.0


def test_calibration_binary_and_bounded():
    # binary feature with bounds 0 and 1: gamma = log(rho / (1 - rho)) (eq. 26)
    X = np.array([[0, 2, 0], [1, 4, 0], [1, 0, 5]])
    costs, budget = calibrate_costs_budget(
        [0.8, 0.6, 0.7], 0.5, X=X, lower=[0, 0, 0], upper=[1, 4, np.inf]
    )
    assert budget == pytest.approx(3 * math.log(2.0))
    assert costs.shape == (3, 3)
    np.testing.assert_allclose(costs[:, 0], math.log(4.0))
    # x = 2 in [0, 4] with rho = 0.6: rho * (1 + 2 r + 2 r^2) = 1
    #   => 1.2 r^2 + 1.2 r - 0.4 = 0 => r = (-1.2 + sqrt(1.44 + 1.92)) / 2.4
    r = (-1.2 + math.sqrt(3.36)) / 2.4
    assert costs[0, 1] == pytest.approx(-math.log(r))
    # x = 4 (or 0) in [0, 4], rho = 0.6: rho * (1 + r + r^2 + r^3 + r^4) = 1
    r4 = np.roots([0.6, 0.6, 0.6, 0.6, -0.4])
    r4 = float(np.real(r4[(np.abs(np.imag(r4)) < 1e-12) & (np.real(r4) > 0)][0]))
    assert costs[1, 1] == pytest.approx(-math.log(r4))
    assert costs[2, 1] == pytest.approx(-math.log(r4))
    # one-sided bound (lower 0): at the bound r = 1 - rho (same as unbounded);
    # at x = 5: rho * (1 + r / (1 - r) + r + ... + r^5) = 1, eq. (22) with
    # x - L + 1 = 6: rho r^6 - (rho + 1) r + 1 - rho = 0
    assert costs[0, 2] == pytest.approx(math.log(1 / 0.3))
    r = costs[2, 2]
    r = math.exp(-r)
    assert 0.7 * r**6 - 1.7 * r + 0.3 == pytest.approx(0.0, abs=1e-10)
    assert 0 < r < 1


def test_calibration_categorical():
    # 0.5 * log(rho (|F_c| - 1) / (1 - rho)) on each column of the group
    costs, budget = calibrate_costs_budget(
        [0.9, 0.7, 0.7, 0.7], 0.95, n_samples=10, categorical_groups=[[1, 2, 3]]
    )
    assert costs[0] == pytest.approx(math.log(10.0))
    np.testing.assert_allclose(costs[1:], 0.5 * math.log(0.7 * 2 / 0.3))
    assert budget == pytest.approx(-10 * math.log(0.95))


def test_calibration_errors():
    with pytest.raises(ValueError, match="threshold"):
        calibrate_costs_budget(0.8, 0.0, n_samples=10)
    with pytest.raises(ValueError, match="p_unshifted"):
        calibrate_costs_budget(1.5, 0.9, n_samples=10)
    with pytest.raises(ValueError, match="X is required"):
        calibrate_costs_budget(0.8, 0.9, n_samples=10, lower=0)


# ---------------------------------------------------------------------------
# Simulated shifts of the test set (section 7.1.2)
# ---------------------------------------------------------------------------


def _shifted_sets(X, rho, n_sets, rng):
    """Perturb every entry with the symmetric geometric distribution (17)."""
    for _ in range(n_sets):
        mag = rng.geometric(np.broadcast_to(rho, X.shape)) - 1
        sign = rng.choice([-1, 1], size=X.shape)
        yield X + sign * mag


def _dataset_fragile_stump(rng, n):
    """y is almost x0 >= 2, but x0 shifts often; x1 is noisier but stable."""
    y = rng.integers(0, 2, n)
    x0 = np.where(y == 1, rng.integers(2, 4, n), rng.integers(0, 2, n))
    flip = rng.random(n) < 0.04
    x0 = np.where(flip, 3 - x0, x0)
    x1 = np.where(y == 1, rng.integers(2, 4, n), rng.integers(0, 2, n))
    noisy = rng.random(n) < 0.14
    x1 = np.where(noisy, rng.integers(0, 4, n), x1)
    x2 = rng.integers(0, 4, n)
    return np.column_stack([x0, x1, x2]), y, np.array([0.55, 0.95, 0.8])


def _dataset_survey(rng, n):
    """Three classes; a 5-level answer shifts often, two others rarely."""
    z = rng.integers(0, 3, n)
    x0 = np.choose(z, [rng.integers(0, 2, n), np.full(n, 2), rng.integers(3, 5, n)])
    x1 = np.where(rng.random(n) < 0.85, z + 1, rng.integers(0, 5, n))
    x2 = np.where(rng.random(n) < 0.75, 2 * z, rng.integers(0, 5, n))
    x3 = rng.integers(0, 5, n)
    return np.column_stack([x0, x1, x2, x3]), z, np.array([0.5, 0.95, 0.9, 0.8])


@pytest.mark.parametrize(
    "make, depth, seed",
    [
        (_dataset_fragile_stump, 1, 0),
        (_dataset_survey, 2, 1),
    ],
)
def test_robust_tree_loses_less_under_shift(make, depth, seed):
    rng = np.random.default_rng(seed)
    X_train, y_train, rho = make(rng, 120)
    X_test, y_test, _ = make(rng, 400)
    costs, budget = calibrate_costs_budget(rho, 0.8, X=X_train)
    nominal = RobustTreeClassifier(max_depth=depth, budget=0.0).fit(X_train, y_train)
    robust = RobustTreeClassifier(max_depth=depth, budget=budget, costs=costs).fit(
        X_train, y_train
    )
    assert nominal.solver_status_ == robust.solver_status_ == "optimal"
    acc_nom, acc_rob = [], []
    for Xs in _shifted_sets(X_test, rho, 300, np.random.default_rng(seed + 10)):
        acc_nom.append(nominal.score(Xs, y_test))
        acc_rob.append(robust.score(Xs, y_test))
    acc_nom, acc_rob = np.array(acc_nom), np.array(acc_rob)
    drop_nom_worst = nominal.score(X_test, y_test) - acc_nom.min()
    drop_rob_worst = robust.score(X_test, y_test) - acc_rob.min()
    # robust tree: higher worst-case and average accuracy under the shift,
    # and a smaller drop from its unshifted accuracy
    assert acc_rob.min() > acc_nom.min()
    assert acc_rob.mean() > acc_nom.mean()
    assert drop_rob_worst < drop_nom_worst
    # the training-set guarantee is consistent
    assert robust.worst_case_accuracy_ > nominal.worst_case_score(
        X_train, y_train, budget=budget, costs=costs
    )


# ---------------------------------------------------------------------------
# Estimator API and bad inputs
# ---------------------------------------------------------------------------


def test_predict_proba_export_text_and_labels():
    X, y = _tiny_instance(5)
    labels = np.array(["no", "yes"])[y]
    clf = RobustTreeClassifier(max_depth=2, budget=2.0).fit(X, labels)
    assert set(clf.predict(X)) <= {"no", "yes"}
    proba = clf.predict_proba(X)
    assert proba.shape == (len(X), 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    # class shares of each leaf among the training samples
    leaves = clf.apply(X)
    for leaf in np.unique(leaves):
        m = leaves == leaf
        np.testing.assert_allclose(proba[m][0, 1], np.mean(labels[m] == "yes"))
    text = clf.export_text(feature_names=["a", "b", "c"])
    assert "predict" in text
    assert clf.n_cuts_ >= 0 and clf.solve_time_ >= 0
    assert 0.0 <= clf.score(X, labels) <= 1.0


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"max_depth": 0}, "max_depth"),
        ({"max_depth": 5}, "max_depth"),
        ({"max_depth": 2.5}, "max_depth"),
        ({"budget": -1.0}, "budget"),
        ({"costs": [1.0, 2.0]}, "costs has shape"),
        ({"costs": np.ones((5, 3))}, "costs has shape"),
        ({"costs": -1.0}, "non-negative"),
        ({"shift": "sideways"}, "shift"),
        ({"shift": ["both", "both"]}, "shift"),
        ({"categorical_groups": [[0, 1]]}, "one-hot"),
    ],
)
def test_bad_parameters(kwargs, match):
    X, y = _tiny_instance(0, n=10)
    with pytest.raises(ValueError, match=match):
        RobustTreeClassifier(**kwargs).fit(X, y)


def test_non_integer_features():
    X, y = _tiny_instance(0, n=10)
    X = X.astype(float)
    X[3, 1] = 0.5
    with pytest.raises(ValueError, match="integer"):
        RobustTreeClassifier().fit(X, y)


# ---------------------------------------------------------------------------
# Thresholds from the distinct values (issue 16, item 6)
# ---------------------------------------------------------------------------


def _spread(X, feature, gap):
    """``X`` with the values of ``feature`` from 2 upwards moved up by
    ``gap - 1``: the gap between 1 and 2 becomes ``gap`` wide."""
    X = np.asarray(X, dtype=float).copy()
    X[:, feature] += (gap - 1) * (X[:, feature] >= 2)
    return X


@pytest.mark.parametrize(
    "seed, budget, costs",
    [(1, 0.0, 1.0), (2, 3.0, 1.0), (3, 4.5, [1.0, 2.0, 0.5]), (4, 6.0, [0.5, 1, 2])],
)
def test_wide_gaps_match_brute_force(seed, budget, costs):
    """A gap wider than the shifts can cross keeps a few thresholds: still
    the brute-force optimum, and the same one for any wider gap."""
    X, y = _tiny_instance(seed)
    n, p = X.shape
    costs_full = np.broadcast_to(np.asarray(costs, dtype=float), (n, p))
    # values 0..31: wider than the shifts can cross (at most 12 units here),
    # still brute-forceable
    Xw = _spread(X, 0, 30)
    best, evaluate = brute_force(Xw, y, 1, budget, costs_full, ["both"] * p)
    clf = RobustTreeClassifier(max_depth=1, budget=budget, costs=costs).fit(Xw, y)
    assert clf.solver_status_ == "optimal"
    assert round(clf.worst_case_accuracy_ * n) == best
    assert evaluate(clf.tree_features_, clf.tree_thresholds_, clf.leaf_values_) == best
    assert clf.worst_case_score(Xw, y) == pytest.approx(best / n)
    for gap in (10**9, 2**60):
        Xg = _spread(X, 0, gap)
        wide = RobustTreeClassifier(max_depth=1, budget=budget, costs=costs).fit(Xg, y)
        assert round(wide.worst_case_accuracy_ * n) == best
        assert wide.worst_case_score(Xg, y) == pytest.approx(best / n)


def test_wide_gaps_depth_two_same_optimum():
    X, y = _tiny_instance(6)
    kw = dict(max_depth=2, budget=3.0, costs=[1.0, 0.7, 2.0])
    ref = RobustTreeClassifier(**kw).fit(_spread(X, 1, 9), y)
    for gap in (100, 10**12):
        Xg = _spread(X, 1, gap)
        clf = RobustTreeClassifier(**kw).fit(Xg, y)
        assert clf.solver_status_ == "optimal"
        assert clf.worst_case_accuracy_ == ref.worst_case_accuracy_
        assert clf.worst_case_score(Xg, y) == pytest.approx(clf.worst_case_accuracy_)


def _nominal_on_ranks(X, y, depth):
    """The nominal optimum only depends on the order of the values."""
    ranks = np.column_stack(
        [np.unique(col, return_inverse=True)[1] for col in np.asarray(X).T]
    )
    return RobustTreeClassifier(max_depth=depth).fit(ranks, y).nominal_accuracy_


def test_large_ranges_and_values():
    """A 0..5000 range, one value of 1e9, integer values of 1e300: the same
    nominal optimum as on the ranks, and midpoint thresholds."""
    rng = np.random.default_rng(1)
    X = rng.integers(0, 5001, size=(60, 2)).astype(float)
    y = (X[:, 0] > 2500).astype(int)
    y[:5] ^= 1
    clf = RobustTreeClassifier(max_depth=1).fit(X, y)
    assert clf.nominal_accuracy_ == _nominal_on_ranks(X, y, 1) == 55 / 60
    below = X[:, 0][X[:, 0] <= clf.tree_thresholds_[0]].max()
    above = X[:, 0][X[:, 0] > clf.tree_thresholds_[0]].min()
    assert clf.tree_thresholds_[0] == (below + above) // 2
    X[0, 1] = 1e9
    assert RobustTreeClassifier(max_depth=1, budget=2.0).fit(X, y).solver_status_ == (
        "optimal"
    )
    Xs, ys = _tiny_instance(8, n=60)
    X100, Xs = Xs * 100.0, Xs * np.array([1e300, 1.0, 1.0])
    X100[:, 1:] = Xs[:, 1:]
    for budget in (0.0, 2.0):
        clf = RobustTreeClassifier(max_depth=2, budget=budget).fit(Xs, ys)
        assert clf.nominal_accuracy_ == _nominal_on_ranks(Xs, ys, 2)
        assert clf.score(Xs, ys) == clf.nominal_accuracy_
        # no shift crosses gaps of 100 units (or 1e300) on feature 0
        ref = RobustTreeClassifier(max_depth=2, budget=budget).fit(X100, ys)
        assert clf.worst_case_accuracy_ == ref.worst_case_accuracy_
    assert 0 in clf.tree_features_[clf.tree_thresholds_ > 1e299]


def test_too_many_candidate_splits_is_a_clear_error():
    X, y = _tiny_instance(0, n=40)
    X = X * 100_000
    with pytest.raises(ValueError, match="candidate splits"):
        RobustTreeClassifier(max_depth=1, budget=1.0, costs=1e-6).fit(X, y)


def test_not_fitted_and_feature_names():
    from sklearn.exceptions import NotFittedError

    X, y = _tiny_instance(0, n=12)
    clf = RobustTreeClassifier(max_depth=1)
    for method in (clf.predict, clf.predict_proba, clf.apply):
        with pytest.raises(NotFittedError):
            method(X)
    with pytest.raises(NotFittedError):
        clf.worst_case_score(X, y)
    with pytest.raises(NotFittedError):
        clf.export_text()
    clf.fit(X, y)
    with pytest.raises(ValueError, match="feature_names has 2 names"):
        clf.export_text(feature_names=["a", "b"])
    text = clf.export_text(feature_names=["a", "b", "c"])
    assert any(f"if {name} <=" in text for name in "abc")


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"time_limit": 0}, "time_limit"),
        ({"budget": np.inf}, "budget"),
        ({"budget": "a lot"}, "budget"),
        ({"categorical_groups": "abc"}, "categorical_groups"),
    ],
)
def test_parameter_constraints(kwargs, match):
    X, y = _tiny_instance(0, n=10)
    with pytest.raises(ValueError, match=match):
        RobustTreeClassifier(**kwargs).fit(X, y)
