"""Era splitters and worst-fold selection."""

import functools

import numpy as np
import pytest
import sklearn
from sklearn.model_selection import GridSearchCV, cross_validate

from eraboost import (
    EraKFold,
    EraTimeSeriesSplit,
    HistGradientBoostingRegressor,
    worst_fold_refit,
)
from eraboost.model_selection import worst_fold_scores


def _eras(n_eras, seed=0, strings=False):
    """Eras of uneven sizes, rows shuffled, labels whose sort order is known."""
    rng = np.random.RandomState(seed)
    sizes = rng.randint(1, 9, size=n_eras)
    labels = (
        np.array([f"era{i:03d}" for i in range(n_eras)])
        if strings
        else np.arange(n_eras) * 7 - 20
    )
    eras = np.repeat(labels, sizes)
    return labels, eras[rng.permutation(eras.size)]


def _era_sets(eras, labels, train, test):
    """Positions (in sorted label order) of the train and test eras."""
    pos = {lab: i for i, lab in enumerate(labels)}
    return ({pos[e] for e in eras[train]}, {pos[e] for e in eras[test]})


@pytest.mark.parametrize("strings", [False, True])
@pytest.mark.parametrize("n_eras,n_splits", [(10, 3), (7, 7), (23, 5)])
def test_era_kfold(n_eras, n_splits, strings):
    labels, eras = _eras(n_eras, seed=n_eras, strings=strings)
    X = np.zeros((eras.size, 1))
    cv = EraKFold(n_splits)
    splits = list(cv.split(X, groups=eras))
    assert len(splits) == cv.get_n_splits() == n_splits
    tested = []
    for train, test in splits:
        tr, te = _era_sets(eras, labels, train, test)
        assert not tr & te
        assert tr | te == set(range(n_eras))
        assert len(train) + len(test) == eras.size  # no row lost
        assert sorted(te) == list(range(min(te), max(te) + 1))  # contiguous
        tested.extend(sorted(te))
    # every era tested exactly once, blocks in label order, sizes within 1
    assert tested == list(range(n_eras))
    sizes = [len(_era_sets(eras, labels, *s)[1]) for s in splits]
    assert max(sizes) - min(sizes) <= 1


@pytest.mark.parametrize("embargo", [1, 2])
def test_era_kfold_embargo(embargo):
    labels, eras = _eras(12, seed=1)
    for train, test in EraKFold(4, embargo=embargo).split(eras, groups=eras):
        tr, te = _era_sets(eras, labels, train, test)
        lo, hi = min(te), max(te)
        dropped = {e for e in range(lo - embargo, hi + embargo + 1) if 0 <= e < 12} - te
        assert tr == set(range(12)) - te - dropped
        assert len(dropped) == (min(embargo, lo) + min(embargo, 11 - hi))


def test_era_time_series_split_by_hand():
    eras = np.arange(10)
    cv = EraTimeSeriesSplit(n_splits=3, embargo=1, test_eras=2)
    got = [(list(eras[tr]), list(eras[te])) for tr, te in cv.split(eras, groups=eras)]
    assert got == [
        ([0, 1, 2], [4, 5]),
        ([0, 1, 2, 3, 4], [6, 7]),
        ([0, 1, 2, 3, 4, 5, 6], [8, 9]),
    ]
    cv = EraTimeSeriesSplit(
        n_splits=3, embargo=1, test_eras=2, train_after=True, max_train_eras=2
    )
    got = [(list(eras[tr]), list(eras[te])) for tr, te in cv.split(eras, groups=eras)]
    assert got == [([1, 2, 7, 8, 9], [4, 5]), ([3, 4, 9], [6, 7]), ([5, 6], [8, 9])]
    # default test size: n_eras // (n_splits + 1)
    got = [list(eras[te]) for _, te in EraTimeSeriesSplit(4).split(eras, groups=eras)]
    assert got == [[2, 3], [4, 5], [6, 7], [8, 9]]


@pytest.mark.parametrize("embargo", [0, 1, 3])
@pytest.mark.parametrize("train_after", [False, True])
def test_era_time_series_split_embargo(embargo, train_after):
    labels, eras = _eras(20, seed=2, strings=True)
    cv = EraTimeSeriesSplit(
        n_splits=4, embargo=embargo, test_eras=3, train_after=train_after
    )
    splits = list(cv.split(eras, groups=eras))
    assert len(splits) == 4
    for i, (train, test) in enumerate(splits):
        tr, te = _era_sets(eras, labels, train, test)
        assert not tr & te
        assert te == set(range(8 + 3 * i, 11 + 3 * i))
        before = set(range(min(te) - embargo))
        after = set(range(max(te) + 1 + embargo, 20)) if train_after else set()
        assert tr == before | after
        # exactly the promised eras are embargoed
        left_out = set(range(20)) - tr - te
        expected = set(range(max(min(te) - embargo, 0), min(te)))
        expected |= (
            set(range(max(te) + 1, min(max(te) + 1 + embargo, 20)))
            if train_after
            else set(range(max(te) + 1, 20))
        )
        assert left_out == expected


def test_splitter_errors():
    eras = np.repeat(np.arange(4), 3)
    X = np.zeros((12, 1))
    with pytest.raises(ValueError, match="needs the era of each row"):
        list(EraKFold(2).split(X))
    with pytest.raises(ValueError, match="at least 5 distinct eras; groups has 4"):
        list(EraKFold(5).split(X, groups=eras))
    with pytest.raises(ValueError, match="n_splits must be an integer >= 2"):
        list(EraKFold(1).split(X, groups=eras))
    with pytest.raises(ValueError, match="embargo must be an integer >= 0"):
        list(EraKFold(2, embargo=-1).split(X, groups=eras))
    # 4 eras, 2 folds of 2, embargo 2: nothing left to train on
    with pytest.raises(ValueError, match="embargo=2 leaves no training eras"):
        list(EraKFold(2, embargo=2).split(X, groups=eras))
    with pytest.raises(ValueError, match="embargo=1 leaves no training eras"):
        list(EraTimeSeriesSplit(3, embargo=1, test_eras=1).split(X, groups=eras))
    with pytest.raises(ValueError, match="needs more eras than its 4 test blocks"):
        list(EraTimeSeriesSplit(4).split(X, groups=eras))
    with pytest.raises(ValueError, match="groups has 3 labels but X has 12 rows"):
        list(EraKFold(2).split(X, groups=[0, 1, 2]))
    # errors come before any split is produced
    with pytest.raises(ValueError, match="leaves no training eras"):
        next(EraTimeSeriesSplit(3, embargo=1, test_eras=1).split(X, groups=eras))


def test_splitters_read_eras_when_routing():
    rng = np.random.RandomState(0)
    eras = np.repeat(np.arange(6), 20)
    X = rng.normal(size=(120, 2))
    y = X[:, 0] + rng.normal(size=120)
    est = HistGradientBoostingRegressor(max_iter=3)
    with sklearn.config_context(enable_metadata_routing=True):
        res = cross_validate(
            est.set_fit_request(eras=True),
            X,
            y,
            cv=EraKFold(3),
            params={"eras": eras},
            return_indices=True,
        )
        # groups instead, once the splitter is told to read them
        cv = EraKFold(3).set_split_request(groups=True)
        res2 = cross_validate(
            est.set_fit_request(eras=False),
            X,
            y,
            cv=cv,
            params={"groups": eras},
            return_indices=True,
        )
    for r in (res, res2):
        for k, test in enumerate(r["indices"]["test"]):
            np.testing.assert_array_equal(np.unique(eras[test]), [2 * k, 2 * k + 1])


# -- worst-fold selection ----------------------------------------------------------


def _cv_results(split_scores, name="score"):
    split_scores = np.asarray(split_scores, dtype=float)
    res = {
        f"split{k}_test_{name}": split_scores[:, k]
        for k in range(split_scores.shape[1])
    }
    res[f"mean_test_{name}"] = split_scores.mean(axis=1)
    res["params"] = [{"i": i} for i in range(len(split_scores))]
    return res


def test_worst_fold_refit_by_hand():
    scores = [
        [0.9, 0.8, -0.5],  # best mean (0.4), worst fold -0.5
        [0.3, 0.2, 0.1],  # worst fold 0.1, mean 0.2
        [0.1, 0.5, 0.1],  # worst fold 0.1 too, larger mean 0.233
        [1.0, np.nan, 1.0],
    ]  # a failed fit never wins
    res = _cv_results(scores)
    np.testing.assert_allclose(worst_fold_scores(res), [-0.5, 0.1, 0.1, -np.inf])
    assert worst_fold_refit(res) == 2
    # an exact tie in both: the first candidate
    assert worst_fold_refit(_cv_results([[0.2, 0.1], [0.1, 0.2]])) == 0
    # several scorers: name the one to use
    multi = {**_cv_results(scores, "r2"), **_cv_results(np.negative(scores), "neg")}
    with pytest.raises(ValueError, match="no per-split test scores for metric 'score'"):
        worst_fold_refit(multi)
    assert functools.partial(worst_fold_refit, metric="r2")(multi) == 2
    # negated scores: candidate 0's worst fold -0.9 vs 1's -0.3 vs 2's -0.5
    assert worst_fold_refit(multi, metric="neg") == 1
    with pytest.raises(ValueError, match="every candidate has a failed"):
        worst_fold_refit(_cv_results([[np.nan, 1.0]]))


def _spurious_task(seed):
    """A feature that tracks each era's level of the target, reversed in the
    last era group.

    ``y = x0 + level_e + noise`` with ``level_e = +2, -2, +2, ...`` by era.
    Feature 1 equals ``level_e`` in eras 0..31 and ``-level_e`` in eras
    32..35. It is constant within every era, so the era criterion gives its
    splits zero gain and never uses it; the pooled criterion uses it to
    predict each era's level. Scored by MSE, the pooled model is excellent
    wherever the relation holds (about 0.25 + fit error) and terrible on the
    reversed group (about (2 * 2)^2 = 16); the era model misses the level
    everywhere (about 2^2 = 4). So the pooled model has the better mean and
    the much worse worst fold.
    """
    rng = np.random.RandomState(seed)
    eras = np.repeat(np.arange(36), 40)
    level = np.where(np.arange(36) % 2 == 0, 2.0, -2.0)
    x0 = rng.normal(size=eras.size)
    y = x0 + level[eras] + 0.5 * rng.normal(size=eras.size)
    spurious = np.where(eras >= 32, -level[eras], level[eras])
    X = np.column_stack([x0, spurious, rng.normal(size=eras.size)])
    return X, y, eras


def _uses_feature(est, j):
    return any(
        j in tree.nodes["feature"][~tree.nodes["is_leaf"].astype(bool)]
        for stage in est._predictors
        for tree in stage
    )


@pytest.mark.parametrize(
    "cv",
    [EraKFold(9), EraTimeSeriesSplit(8, test_eras=4)],
    ids=["EraKFold", "EraTimeSeriesSplit"],
)
def test_worst_fold_refit_picks_the_invariant_model(cv):
    X, y, eras = _spurious_task(seed=0)
    grid = {"split_type": ["original", "era"]}
    est = HistGradientBoostingRegressor(
        max_iter=20, early_stopping=False, random_state=0
    )
    kw = {"cv": cv, "scoring": "neg_mean_squared_error"}
    by_mean = GridSearchCV(est, grid, **kw).fit(X, y, groups=eras, eras=eras)
    by_worst = GridSearchCV(est, grid, refit=worst_fold_refit, **kw).fit(
        X, y, groups=eras, eras=eras
    )
    assert by_mean.best_params_ == {"split_type": "original"}
    assert by_worst.best_params_ == {"split_type": "era"}

    # why: the pooled model wins on average but fails on the reversed group
    res = by_worst.cv_results_
    split = np.column_stack(
        [res[f"split{k}_test_score"] for k in range(cv.get_n_splits())]
    )
    orig, era = split[0], split[1]
    assert orig.mean() > era.mean() + 1.0
    assert np.argmin(orig) == cv.get_n_splits() - 1  # the reversed era group
    assert orig.min() < -12 and era.min() > -6
    np.testing.assert_array_equal(
        split,
        np.column_stack(
            [
                by_mean.cv_results_[f"split{k}_test_score"]
                for k in range(cv.get_n_splits())
            ]
        ),
    )
    # and the helper is the brute-force max-min over the candidates
    assert by_worst.best_index_ == int(np.argmax(split.min(axis=1)))
    # the refitted models: the era one never splits on the spurious feature
    assert not _uses_feature(by_worst.best_estimator_, 1)
    assert _uses_feature(by_mean.best_estimator_, 1)


def test_era_kfold_takes_eras_in_natural_order():
    """'era10' comes after 'era9', not after 'era1' (text order would put it
    second and make the blocks non-contiguous in time)."""
    labels = np.array([f"era{i}" for i in range(1, 13)])
    eras = np.repeat(labels, 5)
    rng = np.random.RandomState(0)
    perm = rng.permutation(eras.size)
    X = np.zeros((eras.size, 1))
    blocks = [
        sorted(set(eras[perm][test]), key=lambda s: int(s[3:]))
        for _, test in EraKFold(3).split(X, groups=eras[perm])
    ]
    assert blocks == [
        [f"era{i}" for i in range(1, 5)],
        [f"era{i}" for i in range(5, 9)],
        [f"era{i}" for i in range(9, 13)],
    ]
    # numeric strings: "9" before "10"; dates in time order
    nums = np.repeat(np.array(["10", "9", "11", "8"]), 2)
    tests = [set(nums[t]) for _, t in EraKFold(4).split(np.zeros((8, 1)), groups=nums)]
    assert tests == [{"8"}, {"9"}, {"10"}, {"11"}]
    dates = np.repeat(np.array(["2024-02-01", "2023-12-31", "2024-01-15"]), 2)
    dates = dates.astype("datetime64[D]")
    tests = [
        set(dates[t]) for _, t in EraKFold(3).split(np.zeros((6, 1)), groups=dates)
    ]
    assert [t.pop() for t in tests] == sorted(set(dates))


def test_worst_fold_refit_documents_the_chosen_worst_score():
    """scikit-learn sets no best_score_ with a callable refit; the documented
    expression gives the chosen candidate's worst fold."""
    rng = np.random.RandomState(0)
    eras = np.repeat(np.arange(12), 30)
    X = rng.normal(size=(eras.size, 3))
    y = X[:, 0] + rng.normal(size=eras.size)
    search = GridSearchCV(
        HistGradientBoostingRegressor(max_iter=5),
        {"max_depth": [1, 3]},
        cv=EraKFold(3),
        refit=worst_fold_refit,
    ).fit(X, y, groups=eras)
    assert not hasattr(search, "best_score_")
    res = search.cv_results_
    worst = worst_fold_scores(res)[search.best_index_]
    splits = [res[f"split{i}_test_score"][search.best_index_] for i in range(3)]
    assert worst == min(splits)
    assert worst == worst_fold_scores(res).max()
