"""The anchors' knobs (docs/criteria.md): ``era_groups`` and
``min_agreement``, checked against the NumPy reference."""

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
from tests.engine.reference import era_groups_of
from tests.engine.test_criteria import (
    SPLIT_TYPES,
    check_node,
    engine_tree,
    gradients,
    make_era_data,
)
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
