"""The anchors' knobs (docs/criteria.md): ``era_groups``, ``min_agreement``
and ``pooled_weight``, checked against the NumPy reference."""

import numpy as np
import pytest

from eraboost import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    InvariantForestRegressor,
    ModelFileError,
    load_model,
    save_model,
)
from eraboost._eras import EncodedEras, group_eras
from eraboost.metrics import EraScorer
from tests.engine.helpers import (
    CATEGORICAL,
    SPLIT_TYPES,
    Case,
    check_node,
    engine_tree,
    gradients,
    make_era_data,
    same_splits_either_way,
)
from tests.engine.reference import agreement, best_split, era_groups_of
from tests.model_mutations import read_model_file, write_model_file


def _booster(**params):
    return HistGradientBoostingRegressor(
        max_iter=5, max_leaf_nodes=7, early_stopping=False, random_state=0, **params
    )


# -- era_groups ---------------------------------------------------------------
@pytest.mark.parametrize("n_eras,k", [(8, 3), (7, 7), (9, 2), (10, 4)])
def test_int_groups_are_the_reference_cut(n_eras, k):
    _, _, eras = make_era_data(0, n_eras)
    eras = eras * 3 + 5  # labels that are not their codes
    grouped = group_eras(EncodedEras.from_labels(eras, eras.size), k)
    want = era_groups_of(eras, k)
    assert np.array_equal(np.asarray(grouped), want)
    assert grouped.n_eras == k
    sizes = np.bincount(era_groups_of(np.unique(eras), k))
    assert sizes.max() - sizes.min() <= 1


@pytest.mark.parametrize("split_type", ["era", "directional"])
@pytest.mark.parametrize("alpha", [-np.inf, 0.0])
def test_grouped_tree_matches_reference(split_type, alpha):
    X, y, eras = make_era_data(3, 9, nan=True)
    est = engine_tree(X, y, eras, split_type, alpha, depth=2, era_groups=4)
    groups = era_groups_of(eras, 4)
    assert np.array_equal(est.eras_, np.arange(4))
    assert est.n_eras_ == 4
    Xb = est._bin_mapper.transform(X)
    g, h = gradients(y)
    n_checked = check_node(
        est, Xb, g, h, groups, np.arange(len(y)), 0, split_type, alpha, 0.0, 1, 0, 2
    )
    assert n_checked >= 1
    # the groups differ from the eras: the split is not the ungrouped one's
    # on every seed, but the model is the one fitted on the groups themselves
    plain = engine_tree(X, y, groups, split_type, alpha, depth=2)
    assert np.array_equal(est.predict(X), plain.predict(X))


@pytest.mark.parametrize(
    "make",
    [
        _booster,
        lambda **p: InvariantForestRegressor(
            n_estimators=3, max_depth=3, random_state=0, **p
        ),
    ],
)
def test_mapping_groups_are_the_mapped_eras(make):
    X, y, eras = make_era_data(5, 6)
    mapping = {0: "a", 1: "b", 2: "a", 3: "c", 4: "b", 5: "c"}
    groups = era_groups_of(eras, mapping)
    params = {"split_type": "directional"}
    grouped = make(era_groups=mapping, **params).fit(X, y, eras=eras)
    plain = make(**params).fit(X, y, eras=groups)
    assert np.array_equal(grouped.predict(X), plain.predict(X))
    assert list(grouped.eras_) == ["a", "b", "c"]


def test_int_groups_in_the_classifier_and_early_stopping():
    X, y, eras = make_era_data(2, 12)
    y = (y > np.median(y)).astype(int)
    params = dict(
        split_type="era",
        max_iter=8,
        random_state=0,
        early_stopping=True,
        n_iter_no_change=2,
        validation_fraction=0.25,
    )
    grouped = HistGradientBoostingClassifier(era_groups=6, **params).fit(
        X, y, eras=eras
    )
    plain = HistGradientBoostingClassifier(**params).fit(
        X, y, eras=era_groups_of(eras, 6)
    )
    assert np.array_equal(grouped.predict_proba(X), plain.predict_proba(X))
    assert grouped.n_iter_ == plain.n_iter_


def test_validation_eras_follow_the_training_cut():
    train = EncodedEras.from_labels(np.array([1, 2, 3, 4, 5, 6]), 6)
    val_labels = np.array([0, 2, 3, 6, 9, 4])
    val = group_eras(
        EncodedEras.from_labels(val_labels, 6), 3, fit_eras=train, name="eras_val"
    )
    # training cut: {1, 2} -> 0, {3, 4} -> 1, {5, 6} -> 2; an era joins the
    # group of the last training era at or before it (0 comes first: group 0)
    want = {0: 0, 2: 0, 3: 1, 4: 1, 6: 2, 9: 2}
    assert list(np.asarray(val)) == [want[v] for v in val_labels]


def test_validation_eras_are_grouped_in_fit():
    X, y, eras = make_era_data(4, 8)
    Xv, yv, ev = make_era_data(6, 8)
    ev = ev + 4  # later eras: 4 .. 11, the last ones past the training eras
    params = dict(
        split_type="era",
        max_iter=6,
        random_state=0,
        early_stopping=True,
        n_iter_no_change=2,
        scoring=EraScorer("pearson", "sharpe"),
    )

    def fit(era_groups, eras, eras_val):
        return HistGradientBoostingRegressor(era_groups=era_groups, **params).fit(
            X, y, eras=eras, X_val=Xv, y_val=yv, eras_val=eras_val
        )

    grouped = fit(4, eras, ev)
    # the training cut: {0, 1} {2, 3} {4, 5} {6, 7}; eras 8 .. 11 join the last
    plain = fit(None, era_groups_of(eras, 4), np.minimum(ev // 2, 3))
    assert np.array_equal(
        grouped.validation_score_, plain.validation_score_, equal_nan=True
    )
    assert np.array_equal(grouped.predict(X), plain.predict(X))
    # the validation eras' groups change the scores (the check can fail)
    ungrouped = fit(None, era_groups_of(eras, 4), ev)
    assert not np.array_equal(
        grouped.validation_score_, ungrouped.validation_score_, equal_nan=True
    )


def test_mapping_without_some_eras_names_them():
    X, y, eras = make_era_data(1, 5)
    with pytest.raises(ValueError, match=r"without a group for 2 .*\[3, 4\]"):
        _booster(era_groups={0: 0, 1: 0, 2: 1}).fit(X, y, eras=eras)


@pytest.mark.parametrize(
    "era_groups,match",
    [
        (1, "era_groups"),
        (0, "era_groups"),
        ("3", "era_groups"),
        (2.5, "era_groups"),
        ([0, 1], "era_groups"),
        (9, "more groups than the 6 eras"),
    ],
)
def test_bad_era_groups_raise(era_groups, match):
    X, y, eras = make_era_data(1, 6)
    with pytest.raises(ValueError, match=match):
        _booster(era_groups=era_groups).fit(X, y, eras=eras)


def test_era_groups_need_eras():
    X, y, _ = make_era_data(1, 6)
    for est in (_booster(era_groups=2), InvariantForestRegressor(era_groups=2)):
        with pytest.raises(ValueError, match="no eras were given"):
            est.fit(X, y)


@pytest.mark.parametrize("split_type", SPLIT_TYPES)
def test_no_groups_is_each_era_its_own(split_type):
    X, y, eras = make_era_data(7, 5)
    a = _booster(split_type=split_type).fit(X, y, eras=eras)
    b = _booster(split_type=split_type, era_groups=5).fit(X, y, eras=eras)
    assert np.array_equal(a.predict(X), b.predict(X))


@pytest.mark.parametrize("era_groups", [3, {0: "x", 1: "x", 2: "y", 3: "y", 4: "z"}])
def test_era_groups_round_trip_a_model_file(era_groups, tmp_path):
    X, y, eras = make_era_data(8, 5)
    est = _booster(split_type="era", era_groups=era_groups).fit(X, y, eras=eras)
    save_model(est, tmp_path / "m.eraboost")
    loaded = load_model(tmp_path / "m.eraboost")
    assert loaded.get_params()["era_groups"] == era_groups
    assert np.array_equal(loaded.predict(X), est.predict(X))


def test_a_model_file_without_the_new_params_loads_with_their_defaults(tmp_path):
    X, y, eras = make_era_data(8, 5)
    est = _booster(split_type="era").fit(X, y, eras=eras)
    path = tmp_path / "m.eraboost"
    save_model(est, path)
    doc, members, _ = read_model_file(path)
    # the file as a version without the parameter wrote it
    assert doc["params"].pop("era_groups") is None
    write_model_file(tmp_path / "old.eraboost", doc, members)
    old = load_model(tmp_path / "old.eraboost")
    assert old.get_params()["era_groups"] is None
    assert np.array_equal(old.predict(X), est.predict(X))
    # the parameter's value rules apply to a file that sets it
    doc["params"]["era_groups"] = 1
    write_model_file(tmp_path / "bad.eraboost", doc, members)
    with pytest.raises(ModelFileError, match="era_groups"):
        load_model(tmp_path / "bad.eraboost")


# -- min_agreement --------------------------------------------------------------
GATES = [0.3, 0.6, 0.85]


def _head(split):
    """The (feature, bin, missing_left) of a reference split, or None."""
    return None if split is None else split[:3]


@pytest.mark.parametrize("split_type", SPLIT_TYPES)
@pytest.mark.parametrize("alpha", [-np.inf, 0.0, 2.0])
@pytest.mark.parametrize("gate", GATES)
@pytest.mark.parametrize("sparse", [False, True])
def test_gated_nodes_match_reference(split_type, alpha, gate, sparse):
    """Node by node, three levels: dense and sparse scans, missing values,
    eras absent from deeper nodes."""
    case = Case(1, 9, split_type, alpha, sparse=sparse, min_agreement=gate)
    assert case.check(3) >= 2


@pytest.mark.parametrize("split_type", SPLIT_TYPES)
@pytest.mark.parametrize("gate", GATES)
@pytest.mark.parametrize("categorical", [False, True])
def test_gated_nodes_with_hessians_l2_and_categories(split_type, gate, categorical):
    data = dict(
        CATEGORICAL if categorical else {}, const_h=False, rows_per_era=(20, 60)
    )
    case = Case(
        2,
        6,
        split_type,
        -1.0,
        lam=1.5,
        min_samples_leaf=3,
        data=data,
        min_agreement=gate,
    )
    assert case.check(3) >= 2


@pytest.mark.parametrize("split_type", ["era", "directional"])
def test_gate_with_penalty_and_per_era_minimum(split_type):
    data = dict(rows_per_era=(15, 50))
    case = Case(
        4,
        5,
        split_type,
        0.0,
        data=data,
        irf_penalty=0.3,
        min_samples_leaf_per_era=2,
        min_agreement=0.6,
    )
    assert case.check(3) >= 2


def test_the_gate_binds_on_these_nodes():
    """The reference's split with the gate differs from the one without on
    these nodes (the comparisons above can fail), and the chosen split's
    agreement is at least the gate."""
    changed = 0
    for seed in range(4):
        case = Case(seed, 9, "era", 0.0)
        args = (
            case.Xb,
            case.g,
            case.h,
            case.eras,
            case.rows,
            case.n_bins - 1,
            case.has_missing,
            "era",
            0.0,
        )
        free = best_split(*args)
        gated = best_split(*args, min_agreement=0.85)
        changed += _head(free) != _head(gated)
    assert changed >= 1


@pytest.mark.parametrize(
    "split_type, alpha",
    [("era", 0.0), ("era", -np.inf), ("directional", 0.0), ("directional", -np.inf)],
)
@pytest.mark.parametrize("const_h", [True, False])
@pytest.mark.parametrize("sparse", [False, True])
def test_bounds_change_no_gated_split(split_type, alpha, const_h, sparse):
    """docs/criteria.md: with the gate, the bounds and screens still skip
    only candidates that cannot win; the splits are the same without them."""
    data = {"n_bins": (6, 4, 9, 64, 200), "missing": (False, True, False, True, True)}
    data.update(const_h=const_h, rows_per_era=(30, 120))
    case = Case(
        4,
        12,
        split_type,
        alpha,
        lam=0.0 if const_h else 0.8,
        data=data,
        sparse=sparse,
        min_agreement=0.6,
    )
    assert same_splits_either_way(case, "bound_blocks") >= 3


def test_gain_sums_are_off_under_the_gate():
    """A few-bin feature under ``era`` at alpha 0 is not scored by its gain
    sums alone (they have no per-era sums for the gate)."""
    data = {"n_bins": (6, 4, 9, 5), "missing": (False, True, False, False)}
    data.update(rows_per_era=(30, 120))
    case = Case(4, 12, "era", 0.0, data=data, min_agreement=0.6)
    assert case.check(3) >= 2
    assert case.splitter.scans_by_gain_sums == 0


@pytest.mark.parametrize("split_type", SPLIT_TYPES)
def test_gated_trees_match_reference(split_type):
    X, y, eras = make_era_data(3, 8, nan=True)
    est = engine_tree(X, y, eras, split_type, 0.0, depth=3, min_agreement=0.7)
    Xb = est._bin_mapper.transform(X)
    g, h = gradients(y)
    n = check_node(
        est,
        Xb,
        g,
        h,
        eras,
        np.arange(len(y)),
        0,
        split_type,
        0.0,
        0.0,
        1,
        0,
        3,
        min_agreement=0.7,
    )
    assert n >= 1


def test_chosen_splits_agree_enough():
    X, y, eras = make_era_data(5, 10)
    est = engine_tree(X, y, eras, "directional", 0.0, depth=3, min_agreement=0.75)
    Xb = est._bin_mapper.transform(X)
    g, h = gradients(y)
    nodes = est._predictors[0][0].nodes
    stack = [(0, np.arange(len(y)))]
    seen = 0
    while stack:
        i, rows = stack.pop()
        node = nodes[i]
        if node["is_leaf"]:
            continue
        f, b = node["feature"], node["bin_threshold"]
        col = Xb[rows, f]
        left = (col <= b) & (col != est._bin_mapper.missing_bin_[f])
        if node["missing_left"]:
            left |= col == est._bin_mapper.missing_bin_[f]
        sub = eras[rows]
        counts = np.unique(sub, return_counts=True)
        era_set = counts[0][counts[1] >= 2]
        assert agreement(left, g[rows], h[rows], sub, 0.0, era_set) >= 0.75
        seen += 1
        stack += [(node["left"], rows[left]), (node["right"], rows[~left])]
    assert seen >= 1


@pytest.mark.parametrize("split_type", SPLIT_TYPES)
def test_off_gate_is_bit_identical(split_type):
    X, y, eras = make_era_data(7, 6)
    base = _booster(split_type=split_type).fit(X, y, eras=eras)
    for gate in (None, 0.0):
        est = _booster(split_type=split_type, min_agreement=gate).fit(X, y, eras=eras)
        assert np.array_equal(est.predict(X), base.predict(X))
    gated = _booster(split_type=split_type, min_agreement=0.9).fit(X, y, eras=eras)
    assert not np.array_equal(gated.predict(X), base.predict(X))


def test_gate_needs_eras_under_original():
    X, y, _ = make_era_data(1, 4)
    for est in (
        _booster(min_agreement=0.5),
        InvariantForestRegressor(min_agreement=0.5),
    ):
        with pytest.raises(ValueError, match=r"min_agreement=0\.5 gates splits"):
            est.fit(X, y)


@pytest.mark.parametrize("gate", [-0.1, 1.5, "0.5", np.nan])
def test_bad_gate_values_raise(gate):
    X, y, eras = make_era_data(1, 4)
    with pytest.raises(ValueError, match="min_agreement"):
        _booster(split_type="era", min_agreement=gate).fit(X, y, eras=eras)


def test_gate_in_the_classifier_and_forest_binds():
    X, y, eras = make_era_data(6, 8)
    yc = (y > np.median(y)).astype(int)
    clf = dict(
        split_type="directional", max_iter=3, early_stopping=False, random_state=0
    )
    a = HistGradientBoostingClassifier(**clf).fit(X, yc, eras=eras)
    b = HistGradientBoostingClassifier(min_agreement=0.9, **clf).fit(X, yc, eras=eras)
    assert not np.array_equal(a.predict_proba(X), b.predict_proba(X))
    forest = dict(n_estimators=2, max_depth=4, random_state=0, split_type="era")
    c = InvariantForestRegressor(**forest).fit(X, y, eras=eras)
    d = InvariantForestRegressor(min_agreement=0.9, **forest).fit(X, y, eras=eras)
    assert not np.array_equal(c.predict(X), d.predict(X))


def test_gate_round_trips_a_model_file(tmp_path):
    X, y, eras = make_era_data(8, 5)
    est = _booster(split_type="era", min_agreement=0.6).fit(X, y, eras=eras)
    save_model(est, tmp_path / "m.eraboost")
    loaded = load_model(tmp_path / "m.eraboost")
    assert loaded.min_agreement == 0.6
    assert np.array_equal(loaded.predict(X), est.predict(X))
    doc, members, _ = read_model_file(tmp_path / "m.eraboost")
    doc["params"]["min_agreement"] = 1.5
    write_model_file(tmp_path / "bad.eraboost", doc, members)
    with pytest.raises(ModelFileError, match="min_agreement"):
        load_model(tmp_path / "bad.eraboost")


# -- pooled_weight ----------------------------------------------------------------
WEIGHTS = [0.3, 0.5, 1.0]


@pytest.mark.parametrize("split_type", ["era", "directional"])
@pytest.mark.parametrize("alpha", [-np.inf, 0.0, 2.0])
@pytest.mark.parametrize("weight", WEIGHTS)
@pytest.mark.parametrize("sparse", [False, True])
def test_blended_nodes_match_reference(split_type, alpha, weight, sparse):
    case = Case(1, 9, split_type, alpha, sparse=sparse, pooled_weight=weight)
    assert case.check(3) >= 2


@pytest.mark.parametrize("split_type", ["era", "directional"])
@pytest.mark.parametrize("categorical", [False, True])
def test_blend_with_hessians_l2_penalty_and_gate(split_type, categorical):
    data = dict(
        CATEGORICAL if categorical else {}, const_h=False, rows_per_era=(20, 60)
    )
    case = Case(
        2,
        6,
        split_type,
        -1.0,
        lam=1.5,
        min_samples_leaf=3,
        data=data,
        irf_penalty=0.3,
        min_agreement=0.5,
        pooled_weight=0.5,
    )
    assert case.check(3) >= 2


def test_the_blend_binds_on_these_nodes():
    changed = 0
    for seed in range(4):
        case = Case(seed, 9, "era", -np.inf)
        args = (
            case.Xb,
            case.g,
            case.h,
            case.eras,
            case.rows,
            case.n_bins - 1,
            case.has_missing,
            "era",
            -np.inf,
        )
        changed += _head(best_split(*args)) != _head(
            best_split(*args, pooled_weight=0.5)
        )
    assert changed >= 1


@pytest.mark.parametrize(
    "split_type, alpha",
    [("era", 0.0), ("era", -np.inf), ("directional", 0.0), ("directional", -np.inf)],
)
@pytest.mark.parametrize("sparse", [False, True])
def test_bounds_change_no_blended_split(split_type, alpha, sparse):
    data = {"n_bins": (6, 4, 9, 64, 200), "missing": (False, True, False, True, True)}
    data.update(rows_per_era=(30, 120))
    case = Case(4, 12, split_type, alpha, data=data, sparse=sparse, pooled_weight=0.5)
    assert same_splits_either_way(case, "bound_blocks") >= 3
    assert case.check(3) >= 3


@pytest.mark.parametrize("split_type", ["era", "directional"])
def test_zero_weight_is_bit_identical(split_type):
    X, y, eras = make_era_data(7, 6)
    base = _booster(split_type=split_type).fit(X, y, eras=eras)
    zero = _booster(split_type=split_type, pooled_weight=0.0).fit(X, y, eras=eras)
    assert np.array_equal(zero.predict(X), base.predict(X))
    half = _booster(split_type=split_type, pooled_weight=0.5).fit(X, y, eras=eras)
    assert not np.array_equal(half.predict(X), base.predict(X))


def test_weight_under_original_raises():
    X, y, eras = make_era_data(1, 4)
    with pytest.raises(ValueError, match=r"pooled_weight=0\.5 blends"):
        _booster(pooled_weight=0.5).fit(X, y, eras=eras)


@pytest.mark.parametrize("weight", [-0.1, 1.5, None, np.nan])
def test_bad_weights_raise(weight):
    X, y, eras = make_era_data(1, 4)
    with pytest.raises(ValueError, match="pooled_weight"):
        _booster(split_type="era", pooled_weight=weight).fit(X, y, eras=eras)


def test_weight_round_trips_a_model_file(tmp_path):
    X, y, eras = make_era_data(8, 5)
    est = _booster(split_type="directional", pooled_weight=0.5).fit(X, y, eras=eras)
    save_model(est, tmp_path / "m.eraboost")
    loaded = load_model(tmp_path / "m.eraboost")
    assert loaded.pooled_weight == 0.5
    assert np.array_equal(loaded.predict(X), est.predict(X))
