"""Categorical features: parity with scikit-learn without eras, the NumPy
reference of the era criteria with categorical splits, and input errors."""

import re

import numpy as np
import pytest
import sklearn.utils.validation
from sklearn.ensemble import HistGradientBoostingRegressor as SkHGBR

from eraboost import HistGradientBoostingRegressor
from tests._sklearn_threads import scikit_learn_on_one_thread  # noqa: F401
from tests.engine.reference import best_split

ALPHAS = [-np.inf, -2.0, 0.0, 2.0, np.inf]
SPLIT_TYPES = ["original", "era", "directional"]


def make_data(seed, n=1500, n_cats=(12, 5), nan=0.0, int_codes=False):
    """Two numeric columns around categorical ones: x0, c0, x1, c1, ..."""
    rng = np.random.RandomState(seed)
    cols, y = [], rng.normal(size=n)
    for _j, k in enumerate(n_cats):
        x = rng.normal(size=n)
        c = rng.randint(0, k, size=n).astype(np.float64)
        effect = rng.normal(scale=2.0, size=k)
        y += 0.5 * x + effect[c.astype(int)]
        if not int_codes:
            c = c * 3 + 7  # any numbers are categories, not only 0 .. k - 1
        if nan:
            c[rng.rand(n) < nan] = np.nan
        cols += [x, c]
    X = np.column_stack(cols)
    is_cat = np.arange(X.shape[1]) % 2 == 1
    return X, y, is_cat


def assert_same_predictions(ours, theirs, X, y):
    scale = np.std(y)
    np.testing.assert_allclose(
        ours.predict(X) / scale, theirs.predict(X) / scale, rtol=0, atol=1e-6
    )
    assert ours.n_iter_ == theirs.n_iter_


def fit_both(X, y, sample_weight=None, **params):
    p = {"max_iter": 25, "early_stopping": False, "random_state": 0, **params}
    ours = HistGradientBoostingRegressor(**p).fit(X, y, sample_weight=sample_weight)
    theirs = SkHGBR(**p).fit(X, y, sample_weight=sample_weight)
    return ours, theirs


# -- parity with scikit-learn (no eras) ---------------------------------------


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("nan", [0.0, 0.1])
def test_parity_mixed_numeric_and_categorical(seed, nan):
    X, y, is_cat = make_data(seed, nan=nan)
    ours, theirs = fit_both(X, y, categorical_features=is_cat)
    assert_same_predictions(ours, theirs, X, y)
    np.testing.assert_array_equal(ours.is_categorical_, is_cat)
    # the categorical splits really are used
    assert (
        sum(p.nodes["is_categorical"].sum() for it in ours._predictors for p in it) > 0
    )


@pytest.mark.parametrize("loss", ["absolute_error", "poisson", "gamma", "quantile"])
def test_parity_losses(loss):
    # non-constant hessians (poisson, gamma) change the category order
    X, y, is_cat = make_data(5, nan=0.05)
    y = np.exp(0.2 * (y - y.mean()) / y.std())
    if loss == "poisson":
        y = np.random.RandomState(0).poisson(y).astype(np.float64)
    params = {"quantile": 0.7} if loss == "quantile" else {}
    ours, theirs = fit_both(X, y, loss=loss, categorical_features=is_cat, **params)
    assert_same_predictions(ours, theirs, X, y)


def test_parity_weights_and_parameters():
    X, y, _ = make_data(6, nan=0.05)
    sw = np.random.RandomState(2).uniform(0.2, 3.0, size=y.shape[0])
    for params in [
        {"max_bins": 16},
        {"l2_regularization": 1.5, "min_samples_leaf": 5},
        {"max_features": 0.5},
        {"max_depth": 3, "max_leaf_nodes": None},
    ]:
        ours, theirs = fit_both(
            X, y, sample_weight=sw, categorical_features=[1, 3], **params
        )
        assert_same_predictions(ours, theirs, X, y)


def test_parity_max_bins_smaller_than_default():
    # 40 categories with max_bins=40: every bin is a category
    X, y, is_cat = make_data(7, n_cats=(40, 3), nan=0.05)
    ours, theirs = fit_both(X, y, categorical_features=is_cat, max_bins=40)
    assert_same_predictions(ours, theirs, X, y)
    assert ours._bin_mapper.n_bins_non_missing_[0] == 40


def test_parity_unknown_and_negative_categories_at_predict():
    X, y, is_cat = make_data(8, nan=0.05)
    ours, theirs = fit_both(X, y, categorical_features=is_cat)
    X_new = X[:300].copy()
    X_new[:100, 1] = 1000.0  # never seen
    X_new[100:200, 1] = -5.0  # negative: unknown too
    X_new[200:, 3] = np.nan
    assert_same_predictions(ours, theirs, X_new, y)
    # unknown categories go where the missing values go
    X_nan = X_new.copy()
    X_nan[:200, 1] = np.nan
    np.testing.assert_array_equal(ours.predict(X_new), ours.predict(X_nan))


def test_parity_negative_and_fractional_category_values():
    # values are labels: -1 and 2.5 are categories like any other
    X, y, is_cat = make_data(17)
    X[:, 1] = np.array([-1.0, 0.0, 2.5, 9.0])[X[:, 1].astype(int) % 4]
    y = y + 3.0 * (X[:, 1] == -1.0)
    ours, theirs = fit_both(X, y, categorical_features=is_cat)
    assert_same_predictions(ours, theirs, X, y)
    assert ours._n_categories[0] == 4


def test_parity_early_stopping_binned_validation():
    # validation rows are predicted from their bins during fit
    X, y, is_cat = make_data(9, n=4000, nan=0.05)
    p = {
        "max_iter": 200,
        "early_stopping": True,
        "n_iter_no_change": 3,
        "validation_fraction": 0.25,
        "categorical_features": is_cat,
    }
    for scoring in ["loss", "r2"]:
        ours, theirs = fit_both(X, y, scoring=scoring, **p)
        assert_same_predictions(ours, theirs, X, y)
        np.testing.assert_allclose(ours.validation_score_, theirs.validation_score_)


def test_parity_interaction_cst_with_categorical_first():
    X, y, is_cat = make_data(10, nan=0.05)
    order = np.r_[np.flatnonzero(is_cat), np.flatnonzero(~is_cat)]
    X = X[:, order]  # categorical columns already first: same indices
    ours, theirs = fit_both(
        X, y, categorical_features=[0, 1], interaction_cst=[[0, 2], [1, 3]]
    )
    assert_same_predictions(ours, theirs, X, y)


def test_interaction_cst_indices_refer_to_user_columns():
    # eraboost's groups name the columns of X as given: same model as
    # scikit-learn on the columns reordered categorical-first
    X, y, _ = make_data(11, nan=0.05)
    groups = [[0, 1], [2, 3]]  # x0 with c0, x1 with c1
    ours = HistGradientBoostingRegressor(
        max_iter=20,
        early_stopping=False,
        categorical_features=[1, 3],
        interaction_cst=groups,
    ).fit(X, y)
    order = [1, 3, 0, 2]  # c0, c1, x0, x1
    theirs = SkHGBR(
        max_iter=20,
        early_stopping=False,
        categorical_features=[0, 1],
        interaction_cst=[[2, 0], [3, 1]],
    ).fit(X[:, order], y)
    np.testing.assert_allclose(
        ours.predict(X), theirs.predict(X[:, order]), rtol=0, atol=1e-6 * np.std(y)
    )

    def check(nodes, i, seen):
        if nodes[i]["is_leaf"]:
            return
        seen = seen | {int(nodes[i]["feature"])}
        assert seen <= {0, 2} or seen <= {1, 3}  # internal indices
        check(nodes, nodes[i]["left"], seen)
        check(nodes, nodes[i]["right"], seen)

    for it in ours._predictors:  # no branch mixes the two groups
        check(it[0].nodes, 0, set())


def test_parity_pandas_from_dtype():
    pd = pytest.importorskip("pandas")
    X, y, is_cat = make_data(12, nan=0.05)
    df = pd.DataFrame(
        {
            "x0": X[:, 0],
            "colour": pd.Categorical(
                np.where(np.isnan(X[:, 1]), None, np.char.add("c", X[:, 1].astype(str)))
            ),
            "x1": X[:, 2],
            "size": pd.Categorical(X[:, 3]),
        }
    )
    ours, theirs = fit_both(df, y)  # categorical_features="from_dtype"
    np.testing.assert_array_equal(ours.is_categorical_, is_cat)
    assert_same_predictions(ours, theirs, df, y)
    # an unseen category and the names of the columns survive predict
    new = df.iloc[:50].copy()
    new["colour"] = pd.Categorical(["never-seen"] * 50)
    np.testing.assert_allclose(ours.predict(new), theirs.predict(new), atol=1e-9)
    assert list(ours.feature_names_in_) == list(df.columns)
    # the same model as integer codes with a boolean mask
    codes = np.column_stack(
        [
            X[:, 0],
            df["colour"].cat.codes.replace(-1, np.nan),
            X[:, 2],
            df["size"].cat.codes,
        ]
    )
    by_mask = HistGradientBoostingRegressor(
        max_iter=25, early_stopping=False, random_state=0, categorical_features=is_cat
    ).fit(codes, y)
    np.testing.assert_allclose(by_mask.predict(codes), ours.predict(df), atol=1e-9)


def test_parity_pandas_names_and_strings():
    pd = pytest.importorskip("pandas")
    X, y, _ = make_data(13)
    df = pd.DataFrame(
        {
            "x0": X[:, 0],
            "c0": [f"s{v:g}" for v in X[:, 1]],
            "x1": X[:, 2],
            "c1": X[:, 3],
        }
    )
    ours, theirs = fit_both(df, y, categorical_features=["c0", "c1"])
    assert_same_predictions(ours, theirs, df, y)


def test_parity_polars_from_dtype():
    pl = pytest.importorskip("polars")
    X, y, is_cat = make_data(14, nan=0.05)
    df = pl.DataFrame(
        {
            "x0": X[:, 0],
            "c0": [None if np.isnan(v) else f"c{v:g}" for v in X[:, 1]],
            "x1": X[:, 2],
            "c1": [None if np.isnan(v) else f"k{v:g}" for v in X[:, 3]],
        }
    ).with_columns(pl.col("c0").cast(pl.Categorical), pl.col("c1").cast(pl.Categorical))
    p = {"max_iter": 25, "early_stopping": False, "random_state": 0}
    ours = HistGradientBoostingRegressor(**p).fit(df, y)
    np.testing.assert_array_equal(ours.is_categorical_, is_cat)
    # scikit-learn 1.7 and 1.8 find polars' categorical columns through the
    # dataframe interchange protocol, which polars 2 dropped: eraboost still
    # finds them there, and the reference fits the same frame in pandas
    sklearn_reads_it = hasattr(df, "__dataframe__") or hasattr(
        sklearn.utils.validation, "_check_categorical_features"
    )
    ref = df if sklearn_reads_it else df.to_pandas()
    theirs = SkHGBR(**p).fit(ref, y)
    np.testing.assert_allclose(
        ours.predict(df), theirs.predict(ref), rtol=0, atol=1e-6 * np.std(y)
    )


def test_no_categorical_features():
    X, y, _ = make_data(15)
    for spec in [None, [False] * 4, [], "from_dtype"]:
        est = HistGradientBoostingRegressor(max_iter=3, categorical_features=spec)
        assert est.fit(X, y).is_categorical_ is None


def test_with_eras_original_equals_sklearn():
    X, y, is_cat = make_data(16, nan=0.05)
    eras = np.arange(len(y)) % 7
    p = {
        "max_iter": 20,
        "early_stopping": False,
        "random_state": 0,
        "categorical_features": is_cat,
    }
    ours = HistGradientBoostingRegressor(split_type="original", **p)
    ours.fit(X, y, eras=eras)
    assert_same_predictions(ours, SkHGBR(**p).fit(X, y), X, y)


# -- era criteria: the engine's categorical split is the reference's ----------


def make_era_data(seed, n_eras=6, nan=False):
    rng = np.random.RandomState(seed)
    sizes = rng.randint(30, 120, size=n_eras)
    eras = np.repeat(np.arange(n_eras), sizes)
    n = eras.size
    c0 = rng.randint(0, 8, size=n)
    c1 = rng.randint(0, 4, size=n)
    x = rng.randint(0, 6, size=n).astype(np.float64)
    stable = rng.normal(size=8)
    shifting = rng.normal(size=(n_eras, 4)) * 2
    y = stable[c0] + shifting[eras, c1] + 0.3 * x + rng.normal(size=n)
    X = np.column_stack([x, c0, c1]).astype(np.float64)
    if nan:
        X[rng.rand(n) < 0.1, 1] = np.nan
    perm = rng.permutation(n)
    return X[perm], y[perm], eras[perm]


def check_categorical_node(
    est,
    X,
    y,
    eras,
    rows,
    node_idx,
    split_type,
    alpha,
    lam,
    min_leaf,
    depth,
    max_depth,
    **options,
):
    """Compare node ``node_idx`` (and its children) with the reference."""
    pred = est._predictors[0][0]
    node = pred.nodes[node_idx]
    bm = est._bin_mapper
    Xb = bm.transform(est._preprocessor.transform(X))  # internal order
    has_missing = (Xb == bm.missing_bin_[None, :]).any(axis=0)
    is_cat = np.arange(Xb.shape[1]) < est._n_categories.size
    g = (np.float64(np.mean(y)) - y).astype(np.float32).astype(np.float64)
    h = np.ones_like(g)
    ref = None
    if len(rows) >= 2 * min_leaf:
        ref = best_split(
            Xb,
            g,
            h,
            eras,
            rows,
            bm.n_bins_non_missing_,
            has_missing,
            split_type,
            alpha,
            lam,
            min_leaf,
            is_categorical=is_cat,
            **options,
        )
    if ref is None:
        assert node["is_leaf"], "engine split a node the reference leaves whole"
        return 0
    assert not node["is_leaf"], f"engine left a node whole; reference: {ref}"
    f, b, miss_left, _ = ref
    assert int(node["feature"]) == f
    col = Xb[rows, f]
    if is_cat[f]:
        assert node["is_categorical"]
        bits = pred.binned_left_cat_bitsets[node["bitset_idx"]]
        got = frozenset(v for v in range(256) if bits[v // 32] >> (v % 32) & 1)
        assert got == b, f"engine {sorted(got)}, reference {sorted(b)}"
        left = np.isin(col, list(b))
    else:
        assert not node["is_categorical"] and int(node["bin_threshold"]) == b
        left = (col <= b) & (col != bm.missing_bin_[f])
    if has_missing[f]:
        assert bool(node["missing_left"]) == miss_left
    if node["missing_left"] and not is_cat[f]:
        left |= col == bm.missing_bin_[f]
    n_checked = 1
    if depth + 1 < max_depth:
        for child, sub in ((node["left"], rows[left]), (node["right"], rows[~left])):
            n_checked += check_categorical_node(
                est,
                X,
                y,
                eras,
                sub,
                child,
                split_type,
                alpha,
                lam,
                min_leaf,
                depth + 1,
                max_depth,
                **options,
            )
    return n_checked


@pytest.mark.parametrize("split_type", SPLIT_TYPES)
@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("seed", range(3))
def test_categorical_stump_matches_reference(split_type, alpha, seed):
    X, y, eras = make_era_data(seed, nan=seed == 1)
    for cats in ([1, 2], [0, 1, 2]):  # numeric x0 competes, or not
        est = HistGradientBoostingRegressor(
            split_type=split_type,
            boltzmann_alpha=alpha,
            max_iter=1,
            max_depth=1,
            max_leaf_nodes=None,
            min_samples_leaf=1,
            learning_rate=1.0,
            early_stopping=False,
            categorical_features=cats,
        )
        est.fit(X, y, eras=eras)
        rows = np.arange(len(y))
        assert (
            check_categorical_node(
                est, X, y, eras, rows, 0, split_type, alpha, 0.0, 1, 0, 1
            )
            == 1
        )
        assert est._predictors[0][0].nodes[0]["is_categorical"] or cats == [1, 2]


@pytest.mark.parametrize("split_type", SPLIT_TYPES)
@pytest.mark.parametrize(
    "options",
    [
        {"irf_penalty": 2.0},
        {"min_samples_leaf_per_era": 3},
        {"irf_penalty": 0.5, "min_samples_leaf_per_era": 1},
    ],
    ids=str,
)
def test_categorical_with_era_options_matches_reference(split_type, options):
    X, y, eras = make_era_data(4, n_eras=5, nan=True)
    est = HistGradientBoostingRegressor(
        split_type=split_type,
        max_iter=1,
        max_depth=2,
        max_leaf_nodes=None,
        min_samples_leaf=5,
        learning_rate=1.0,
        early_stopping=False,
        categorical_features=[1, 2],
        **options,
    )
    est.fit(X, y, eras=eras)
    check_categorical_node(
        est, X, y, eras, np.arange(len(y)), 0, split_type, 0.0, 0.0, 5, 0, 2, **options
    )


@pytest.mark.parametrize("split_type", ["era", "directional"])
@pytest.mark.parametrize("alpha", [-np.inf, 0.0, 1.0])
def test_categorical_depth_two_matches_reference(split_type, alpha):
    X, y, eras = make_era_data(3, n_eras=8, nan=True)
    est = HistGradientBoostingRegressor(
        split_type=split_type,
        boltzmann_alpha=alpha,
        max_iter=1,
        max_depth=2,
        max_leaf_nodes=None,
        min_samples_leaf=15,
        l2_regularization=0.5,
        learning_rate=1.0,
        early_stopping=False,
        categorical_features=[1, 2],
    )
    est.fit(X, y, eras=eras)
    n = check_categorical_node(
        est, X, y, eras, np.arange(len(y)), 0, split_type, alpha, 0.5, 15, 0, 2
    )
    assert n >= 2


@pytest.mark.parametrize(
    "split_type, c1_effect",
    [
        # c1 matters in half of the eras only: its worst-era gain is noise
        ("era", lambda e: np.where(e < 4, 2.0, 0.0)),
        # c1's effect flips sign in two eras out of eight: D = 0.5 < 1
        ("directional", lambda e: np.where(e < 6, 2.0, -2.0)),
    ],
)
def test_era_criteria_prefer_the_stable_category_effect(split_type, c1_effect):
    # c0's effect holds in every era; c1's is larger when pooled
    rng = np.random.RandomState(0)
    eras = np.repeat(np.arange(8), 200)
    c0 = rng.randint(0, 6, size=eras.size)
    c1 = rng.randint(0, 6, size=eras.size)
    y = 0.6 * (c0 % 2) + c1_effect(eras) * (c1 % 2) + rng.normal(size=eras.size)
    X = np.column_stack([c0, c1]).astype(np.float64)
    root = {}
    for st in ["original", split_type]:
        est = HistGradientBoostingRegressor(
            split_type=st,
            boltzmann_alpha=-np.inf,
            max_iter=1,
            max_depth=1,
            early_stopping=False,
            categorical_features=[0, 1],
        )
        nodes = est.fit(X, y, eras=eras)._predictors[0][0].nodes
        assert nodes[0]["is_categorical"]
        root[st] = int(nodes[0]["feature"])
    assert root == {"original": 1, split_type: 0}


# -- errors -------------------------------------------------------------------


@pytest.mark.parametrize("use_pandas, name", [(False, "at index 1"), (True, "'f1'")])
def test_too_many_categories(use_pandas, name):
    X = np.column_stack([np.arange(40.0), np.arange(40.0) % 20])
    X[0, 1] = np.nan  # not counted
    if use_pandas:
        pd = pytest.importorskip("pandas")
        X = pd.DataFrame(X, columns=["f0", "f1"])
    est = HistGradientBoostingRegressor(categorical_features=[1], max_bins=19)
    msg = (
        f"Categorical feature {name} is expected to have a cardinality <= 19 "
        "but actually has a cardinality of 20."
    )
    with pytest.raises(ValueError, match=re.escape(msg)):
        est.fit(X, np.arange(40.0))
    est.set_params(max_bins=20).fit(X, np.arange(40.0))


@pytest.mark.parametrize(
    "spec, monotonic_cst, msg",
    [
        (
            [b"hello", b"world"],
            None,
            (
                "categorical_features must be an array-like of bool, int or str, "
                "got: bytes40."
            ),
        ),
        (
            np.array([b"hello", 1.3], dtype=object),
            None,
            (
                "categorical_features must be an array-like of bool, int or str, "
                "got: bytes, float."
            ),
        ),
        (
            [0, -1],
            None,
            (
                "categorical_features set as integer indices must be in "
                "[0, n_features - 1]"
            ),
        ),
        (
            [0, 4],
            None,
            (
                "categorical_features set as integer indices must be in "
                "[0, n_features - 1]"
            ),
        ),
        (
            [True, True, False, False, True],
            None,
            (
                "categorical_features set as a boolean mask must have shape "
                "(n_features,)"
            ),
        ),
        (
            [True, True, False, False],
            [0, -1, 0, 1],
            "Categorical features cannot have monotonic constraints",
        ),
        (
            ["f0"],
            None,
            (
                "categorical_features should be passed as an array of integers or "
                "as a boolean mask when the model is fitted on data without feature "
                "names."
            ),
        ),
    ],
)
def test_categorical_spec_errors(spec, monotonic_cst, msg):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(100, 4))
    X[:, :2] = rng.randint(0, 10, size=(100, 2))
    est = HistGradientBoostingRegressor(
        categorical_features=spec, monotonic_cst=monotonic_cst
    )
    with pytest.raises(ValueError, match=re.escape(msg)):
        est.fit(X, rng.normal(size=100))


def test_unknown_feature_name():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"f0": np.arange(10.0), "f1": np.arange(10.0) % 3})
    est = HistGradientBoostingRegressor(categorical_features=["f1", "f3"])
    with pytest.raises(
        ValueError,
        # "has a item" in scikit-learn 1.7, "has an item" from 1.8 on
        match=(
            r"categorical_features has an? item value 'f3' which is not a "
            r"valid feature name of the training data\."
        ),
    ):
        est.fit(df, np.arange(10.0))


def test_monotonic_dict_on_categorical_feature():
    pd = pytest.importorskip("pandas")
    df = pd.DataFrame({"a": np.arange(60.0), "b": pd.Categorical(np.arange(60) % 3)})
    est = HistGradientBoostingRegressor(monotonic_cst={"b": 1})
    with pytest.raises(ValueError, match="cannot have monotonic constraints"):
        est.fit(df, np.arange(60.0))
    # a constraint on the numeric feature is fine, and is kept on it
    est.set_params(monotonic_cst={"a": 1}, max_iter=5).fit(df, np.arange(60.0))
    grid = df.iloc[:20].copy()
    assert np.all(np.diff(est.predict(grid)) >= 0)
