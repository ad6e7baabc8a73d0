"""Categorical features in the Dask fit: the single machine's trees.

On clusters of 2 and 3 worker processes, with chunks that cut through eras:
identical splits (the categories sent left included) and leaf values and
predictions within 1e-9 of the target's scale, against
``eraboost.HistGradientBoostingRegressor`` / ``Classifier`` fitted on the
same rows, for every split type; categories given by index (dask arrays)
or by the dtype of a dask DataFrame's columns.
"""

import numpy as np
import pytest

from eraboost import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from eraboost.dask import (
    DaskHistGradientBoostingClassifier,
    DaskHistGradientBoostingRegressor,
)
from eraboost.dask._categorical import CategoricalCandidates, category_order
from eraboost.dask._split import Candidates, era_sums, pooled_histograms

from .conftest import chunked, slow_but
from .helpers import assert_same_trees
from .test_worker import KERNEL_SETTINGS, make_shard

#: The categorical columns of :func:`cat_data` and their numbers of
#: categories.
CATEGORICAL = {0: 12, 3: 5}


def cat_data(n=3000, n_eras=20, seed=0):
    """Eras drawn per row, two categorical columns (one with missing
    values) beside numeric ones; the categories' effect flips sign in a
    third of the eras."""
    rng = np.random.RandomState(seed)
    eras = rng.randint(0, n_eras, n)
    X = rng.normal(size=(n, 6))
    X[rng.rand(n, 6) < 0.03] = np.nan
    for j, k in CATEGORICAL.items():
        X[:, j] = rng.randint(0, k, n)
    X[rng.rand(n) < 0.05, 0] = np.nan
    effect = rng.normal(size=CATEGORICAL[0] + 1)
    codes = np.where(np.isnan(X[:, 0]), CATEGORICAL[0], X[:, 0]).astype(int)
    sign = np.where(eras % 3 == 0, -1.0, 1.0)
    y = (
        sign * effect[codes]
        + 0.3 * X[:, 3]
        + 0.5 * np.nan_to_num(X[:, 1])
        + rng.normal(size=n)
    )
    w = rng.uniform(0.5, 2.0, n)
    return X, y, eras, w


def n_categorical_splits(est):
    return sum(
        int(tree.nodes["is_categorical"].sum())
        for stage in est._predictors
        for tree in stage
    )


REGRESSOR_CASES = [
    (dict(split_type="original"), False),
    (dict(split_type="original"), True),
    (dict(split_type="era"), False),
    (dict(split_type="era"), True),
    (dict(split_type="era", boltzmann_alpha=0.05), False),
    (dict(split_type="era", boltzmann_alpha=-0.05), True),
    (dict(split_type="era", boltzmann_alpha=np.inf), False),
    (dict(split_type="era", boltzmann_alpha=-np.inf), True),
    (dict(split_type="directional"), False),
    (dict(split_type="directional", l2_regularization=1.0), True),
    (dict(split_type="original", min_samples_leaf_per_era=3), True),
    (dict(split_type="era", irf_penalty=0.2), False),
    (dict(split_type="directional", irf_penalty=0.5, pooled_weight=0.3), True),
    (dict(split_type="original", min_agreement=0.6), False),
    (dict(split_type="era", colsample_bytree=0.7, max_features=0.6), True),
    (dict(split_type="directional", subsample=0.7, era_subsample=0.8), False),
    (dict(split_type="original", interaction_cst=[[0, 1], [2, 3, 4, 5]]), True),
]


# the README's pytest: the pooled path, the era criteria's call for the
# categories' era sums, directional and the invariance penalty
@pytest.mark.parametrize(
    "params, weighted", slow_but(REGRESSOR_CASES, 1, 2, 8, 11), ids=str
)
def test_regressor_same_trees(client, params, weighted):
    X, y, eras, w = cat_data()
    w = w if weighted else None
    common = dict(
        max_iter=3,
        max_leaf_nodes=15,
        min_samples_leaf=10,
        random_state=0,
        early_stopping=False,
        categorical_features=list(CATEGORICAL),
        **params,
    )
    dX, dy, dw, de = chunked(X, y, w, eras)
    est = DaskHistGradientBoostingRegressor(client=client, **common)
    est.fit(dX, dy, dw, eras=de)
    ref = HistGradientBoostingRegressor(**common).fit(X, y, w, eras=eras)
    # the test means something: the trees split on categories
    assert n_categorical_splits(ref) > 0
    scale = np.std(y)
    assert_same_trees(est, ref, scale)
    np.testing.assert_array_equal(est.to_local().is_categorical_, ref.is_categorical_)
    np.testing.assert_allclose(
        est.predict(dX).compute(), ref.predict(X), rtol=0, atol=1e-9 * scale
    )


@pytest.mark.parametrize("n_classes", slow_but([2, 3], 0))
@pytest.mark.parametrize(
    "params",
    [
        dict(split_type="original"),
        dict(split_type="era"),
        dict(split_type="directional"),
    ],
    ids=str,
)
def test_classifier_same_trees(client, params, n_classes):
    X, y, eras, w = cat_data(seed=1)
    cuts = np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1])
    yc = np.array(["low", "mid", "high"])[:n_classes][np.digitize(y, cuts)]
    # trees of a few leaves keep the eras' rows many (test_parity.py)
    common = dict(
        max_iter=2,
        random_state=0,
        early_stopping=False,
        max_leaf_nodes=8,
        min_samples_leaf=60,
        categorical_features=list(CATEGORICAL),
        **params,
    )
    dX, dy, dw, de = chunked(X, yc, w, eras)
    est = DaskHistGradientBoostingClassifier(client=client, **common)
    est.fit(dX, dy, dw, eras=de)
    ref = HistGradientBoostingClassifier(**common).fit(X, yc, w, eras=eras)
    assert n_categorical_splits(ref) > 0
    assert_same_trees(est, ref, 1.0)
    proba = est.predict_proba(dX).compute()
    np.testing.assert_allclose(proba, ref.predict_proba(X), rtol=0, atol=1e-9)


@pytest.mark.parametrize("split_type", slow_but(["era", "original"], 0))
def test_early_stopping_and_warm_start(client2, split_type):
    """Whole validation eras held out (the categories of all the rows
    encoded, as on one machine), then a warm start: the same scores,
    iterations and trees."""
    X, y, eras, w = cat_data(seed=4)
    common = dict(
        split_type=split_type,
        early_stopping=True,
        learning_rate=0.6,
        n_iter_no_change=20,
        max_iter=2,
        max_leaf_nodes=7,
        min_samples_leaf=10,
        random_state=0,
        warm_start=True,
        categorical_features=list(CATEGORICAL),
    )
    dX, dy, dw, de = chunked(X, y, w, eras)
    est = DaskHistGradientBoostingRegressor(client=client2, **common)
    ref = HistGradientBoostingRegressor(**common)
    for max_iter in (2, 4):
        est.set_params(max_iter=max_iter).fit(dX, dy, dw, eras=de)
        ref.set_params(max_iter=max_iter).fit(X, y, w, eras=eras)
    assert est.n_iter_ == 4
    assert n_categorical_splits(ref) > 0
    assert_same_trees(est, ref, np.std(y))
    for name in ("train_score_", "validation_score_"):
        np.testing.assert_allclose(
            getattr(est, name), getattr(ref, name), rtol=1e-9, atol=0, err_msg=name
        )


def _frame(X, eras, y, npartitions=4):
    """X as a pandas frame: column 0 as text categories (a pandas
    category column, missing values kept), column 3 as an int8 column,
    the others floats; with the eras and the target beside."""
    import pandas as pd

    names = np.array([f"c{i:02d}" for i in range(CATEGORICAL[0])], dtype=object)
    codes = np.nan_to_num(X[:, 0], nan=0).astype(int)
    text = np.where(np.isnan(X[:, 0]), None, names[codes])
    frame = pd.DataFrame({f"f{j}": X[:, j] for j in range(X.shape[1])})
    frame["f0"] = pd.Categorical(text)
    frame["f3"] = X[:, 3].astype(np.int8)
    frame["era"] = eras
    frame["target"] = y
    return frame


@pytest.mark.parametrize(
    "split_type, categorical_features",
    slow_but(
        [("era", "from_dtype"), ("original", ["f0", "f3"]), ("directional", None)],
        0,
    ),
)
def test_frame_columns(client2, split_type, categorical_features):
    """A dask DataFrame's category columns (``"from_dtype"``), or columns
    named, encoded as on one machine (the categories of all the rows,
    those absent from the binning rows too); predictions of a frame."""
    dd = pytest.importorskip("dask.dataframe")
    X, y, eras, _ = cat_data(seed=2)
    frame = _frame(X, eras, y)
    features = [f"f{j}" for j in range(X.shape[1])]
    ddf = dd.from_pandas(frame, npartitions=4)
    common = dict(
        split_type=split_type,
        max_iter=3,
        max_leaf_nodes=15,
        min_samples_leaf=10,
        random_state=0,
        early_stopping=False,
        categorical_features=categorical_features,
    )
    if categorical_features is None:
        # a category column that is not declared categorical is refused
        est = DaskHistGradientBoostingRegressor(client=client2, **common)
        with pytest.raises(ValueError, match="non-numeric columns"):
            est.fit(ddf[features], ddf["target"], eras=ddf["era"])
        return
    est = DaskHistGradientBoostingRegressor(client=client2, **common)
    est.fit(ddf[features], ddf["target"], eras=ddf["era"])
    ref = HistGradientBoostingRegressor(**common).fit(frame[features], y, eras=eras)
    assert n_categorical_splits(ref) > 0
    assert_same_trees(est, ref, np.std(y))
    np.testing.assert_array_equal(est.feature_names_in_, ref.feature_names_in_)
    encoder = est.to_local()._preprocessor.named_transformers_["encoder"]
    expected = ref._preprocessor.named_transformers_["encoder"]
    for got, want in zip(encoder.categories_, expected.categories_, strict=True):
        np.testing.assert_array_equal(got.astype(str), want.astype(str))
    pred = est.predict(ddf[features]).compute()
    np.testing.assert_allclose(
        pred.to_numpy(), ref.predict(frame[features]), rtol=0, atol=1e-9 * np.std(y)
    )


@pytest.mark.parametrize("split_type", slow_but(["era", "directional"], 0))
def test_tied_categories(client2, split_type):
    """Categories whose pooled ``g / (h + 10)`` are equal take the
    engine's order (its ``qsort``: equal values in the reverse of their
    bins' order): categories 0 .. 5 hold the same targets, each spread
    over the eras in another way, so the era criteria tell apart the
    prefixes that the order allows."""
    rng = np.random.RandomState(3)
    n_eras, per = 8, 30
    values = rng.normal(size=(n_eras, per)) + 0.5 * np.arange(n_eras)[:, None]
    rows = []
    for c in range(6):
        perm = np.arange(n_eras) if c == 0 else rng.permutation(n_eras)
        rows += [(e, c, t) for e in range(n_eras) for t in values[perm[e]]]
    for c in (6, 7):
        rows += [(e, c, t) for e in range(n_eras) for t in rng.normal(size=per) + c - 5]
    eras, cat, y = (np.array(col) for col in zip(*rows))
    X = np.column_stack([cat.astype(np.float64), rng.normal(size=y.size)])
    common = dict(
        split_type=split_type,
        max_iter=2,
        max_leaf_nodes=6,
        min_samples_leaf=5,
        random_state=0,
        early_stopping=False,
        categorical_features=[0],
    )
    dX, dy, de = chunked(X, y, eras, rows=333)
    est = DaskHistGradientBoostingRegressor(client=client2, **common)
    est.fit(dX, dy, eras=de)
    ref = HistGradientBoostingRegressor(**common).fit(X, y, eras=eras)
    assert n_categorical_splits(ref) > 0
    assert_same_trees(est, ref, np.std(y))


def test_category_order_by_hand():
    """The order of a hand-worked node: categories below the support take
    no part, the rest by ``g / (h + 10)``, equal values in the reverse of
    their bins' order; the prefixes from the start, then the end."""
    g = np.array([5.0, -3.0, 2.0, 0.0, 2.0, -1.0])
    h = np.array([10.0, 20.0, 10.0, 9.0, 10.0, 40.0])
    # bin 3 is below MIN_CAT_SUPPORT; bins 2 and 4 tie at 0.1
    order = category_order(g, h, n=99, H=99.0)
    np.testing.assert_array_equal(order, [1, 5, 4, 2, 0])
    pooled = {"g": g[None], "h": h[None], "n": h[None]}
    cands = CategoricalCandidates.of(pooled, [0], [5], [True], (99, 0.0, 99.0))
    # 5 categories: 3 prefixes from the start, 2 from the end
    left = cands.left_sums(np.arange(6.0)[None] ** 2)
    np.testing.assert_array_equal(left, [1, 26, 42, 0, 4])
    split = cands.split_of(4, [5])
    assert split["bin_idx"] == 1
    np.testing.assert_array_equal(split["left_cat_bitset"][0], (1 << 0) | (1 << 2))
    # bin 5, the missing values' (5 categories), goes left in the second
    assert not split["missing_go_to_left"]
    assert cands.split_of(1, [5])["missing_go_to_left"]


@pytest.mark.parametrize(
    "case", ["era", "directional", "era_alpha_1", "irf", "agreement", "min_side"]
)
def test_worker_sums_of_the_categories(case):
    """In one process: a worker's numeric candidates leave the categorical
    features out (the engine's kernel), its era sums of the categories'
    prefixes are those of the prefixes' own cells (each prefix's bins
    summed at once), and a categorical split sends left the rows whose
    bin is in the bitset."""
    shard, mapper, has_missing, settings = make_shard(True, era_path=True)
    # features 3 and 4 hold five values (and missing ones): as categories
    is_categorical = np.arange(6) >= 3
    is_categorical[5] = False
    settings = {**settings, **KERNEL_SETTINGS[case], "is_categorical": is_categorical}
    loss = HistGradientBoostingRegressor()._get_loss(sample_weight=np.ones(1))
    nb = mapper.n_bins_non_missing_
    shard.start(loss, np.full((1, 1), shard.y.mean()), nb, has_missing, settings)
    shard.update_gradients()
    numeric = Candidates.of(nb, has_missing, True, is_categorical)
    assert not np.any(is_categorical[numeric.feature])
    part = shard.root(0)
    hist = shard.histograms(0)
    for name, values in part.items():
        if name not in ("pooled_g", "pooled_h", "pooled_n", "M", "era_score"):
            assert values.shape == numeric.feature.shape, name
    n = int(hist[2, 0].sum())
    G, H = hist[0, 0].sum(), hist[1, 0].sum()
    cands = CategoricalCandidates.of(
        pooled_histograms(part, numeric), [3, 4], nb, has_missing, (n, G, H)
    )
    assert cands.size > 0
    got = shard.categorical([(0, cands.orders)])[0]
    left_sets = []
    for i in range(cands.size):
        bitset = cands.split_of(i, nb)["left_cat_bitset"]
        bins = np.arange(256)
        left_sets.append(
            bins[(bitset[bins // 32] >> (bins % 32).astype(np.uint32)) & 1 == 1]
        )

    def brute(h):
        return np.stack(
            [
                h[f][..., bins[bins < h.shape[-1]]].sum(axis=-1)
                for f, bins in zip(cands.feature, left_sets)
            ],
            axis=-1,
        )

    expected = era_sums(hist, brute, settings)
    for name in ("M", "era_score"):
        expected.pop(name, None)
    assert got.keys() == expected.keys()
    for name in expected:
        if expected[name].dtype.kind in "iu":
            np.testing.assert_array_equal(got[name], expected[name], err_msg=name)
        else:
            np.testing.assert_allclose(
                got[name], expected[name], rtol=1e-9, atol=1e-9, err_msg=name
            )
    # the split of the last candidate: its bins go left
    i = cands.size - 1
    where = cands.split_of(i, nb)
    f = int(cands.feature[i])
    col = np.asarray(shard.X_binned)[:, f]
    goes_left = np.isin(col, left_sets[i])
    sizes = (int(goes_left.sum()), int((~goes_left).sum()))
    shard.split(
        0,
        0,
        f,
        where["bin_idx"],
        where["missing_go_to_left"],
        (1, 2),
        [False, False],
        sizes,
        where["left_cat_bitset"],
    )
    np.testing.assert_array_equal(np.sort(shard.nodes[1]), np.flatnonzero(goes_left))
    np.testing.assert_array_equal(np.sort(shard.nodes[2]), np.flatnonzero(~goes_left))
