"""The splitter on hand-made nodes, node by node against the NumPy reference
of the criteria (tests/engine/reference.py).

Each test builds histograms with the engine's ``HistogramBuilder`` (the
larger child by subtraction, as the grower does; or, with ``sparse``, both
children as sparse histograms, their rows sorted by bin), asks ``Splitter``
for the best split, and compares it with ``reference.best_split`` on the
same rows: the feature, the bin (the set of left categories for a categorical feature),
the missing-value direction and the criterion's value; then it splits the
rows and checks the children the same way.
"""

import numpy as np
import pytest

from eraboost._engine._common import SPLIT_TYPES
from eraboost._engine._histogram import HistogramBuilder, histogram_layout
from eraboost._engine._partition import (
    copy_rows,
    split_indices,
    split_indices_categorical,
)
from eraboost._engine._splitting import PENALTY_KINDS, SplitNode, Splitter
from tests.engine import reference
from tests.engine.helpers import CATEGORICAL, Case, same_splits_either_way

ALPHAS = [-np.inf, -1.0, 0.0, 2.0, np.inf]


def test_codes():
    """The split types' codes are ``_common.SPLIT_TYPES`` (``_splitting``
    checks the C enum against it on import); the penalties' are 0, 1 and 2."""
    assert SPLIT_TYPES == {"original": 0, "era": 1, "directional": 2}
    assert sorted(PENALTY_KINDS.values()) == [0, 1, 2]


@pytest.mark.parametrize("split_type", ["original", "era", "directional"])
@pytest.mark.parametrize("alpha", ALPHAS)
@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("sparse", [False, True])
def test_numeric_nodes_match_reference(split_type, alpha, seed, sparse):
    """Missing values (both scans), 30 bins (several chunks of candidates),
    eras of 3 to 40 rows, some absent from deeper nodes."""
    assert Case(seed, 5 + 4 * seed, split_type, alpha, sparse=sparse).check(3) >= 3


@pytest.mark.parametrize("split_type", ["original", "era", "directional"])
@pytest.mark.parametrize("alpha", [-np.inf, 0.0, 2.0])
@pytest.mark.parametrize("sparse", [False, True])
def test_non_constant_hessians_and_l2(split_type, alpha, sparse):
    case = Case(
        7,
        6,
        split_type,
        alpha,
        lam=1.5,
        min_samples_leaf=3,
        data={"const_h": False},
        sparse=sparse,
    )
    assert case.check(3) >= 3


@pytest.mark.parametrize("split_type", ["original", "era", "directional"])
@pytest.mark.parametrize("alpha", [-np.inf, 0.0, np.inf])
@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("sparse", [False, True])
def test_categorical_nodes_match_reference(split_type, alpha, seed, sparse):
    data = dict(CATEGORICAL, rows_per_era=(20, 60))
    assert Case(seed, 5, split_type, alpha, data=data, sparse=sparse).check(3) >= 3


@pytest.mark.parametrize("split_type", ["original", "era", "directional"])
@pytest.mark.parametrize("categorical", [False, True])
@pytest.mark.parametrize("penalty", [0.3, 3.0])
@pytest.mark.parametrize("sparse", [False, True])
def test_invariance_penalty_matches_reference(split_type, categorical, penalty, sparse):
    data = dict(CATEGORICAL if categorical else {}, rows_per_era=(20, 60))
    case = Case(3, 5, split_type, data=data, irf_penalty=penalty, sparse=sparse)
    assert case.check(3) >= 3


@pytest.mark.parametrize("split_type", ["original", "era", "directional"])
@pytest.mark.parametrize("categorical", [False, True])
@pytest.mark.parametrize("sparse", [False, True])
def test_min_rows_per_era_matches_reference(split_type, categorical, sparse):
    data = dict(CATEGORICAL if categorical else {}, rows_per_era=(15, 50))
    case = Case(
        4,
        4,
        split_type,
        -1.0,
        data=data,
        min_samples_leaf_per_era=3,
        sparse=sparse,
    )
    assert case.check(3) >= 2


def rate_spread_penalty(left, g, h, eras, lam, era_set=None):
    """Half the IRF classification penalty max_e I_e / min_e I_e - 1 from
    gradients -w y and hessians w (Liao et al. eq. 16-19), over the eras of
    ``era_set`` (default: the node's): the reference's penalty term is
    ``irf_penalty * H * this``."""
    ratios = []
    for e in np.unique(eras) if era_set is None else era_set:
        m = eras == e
        pos, n = -g[m].sum(), h[m].sum()
        pos_l, n_l = -g[m & left].sum(), h[m & left].sum()
        ratios.append(
            ((pos_l + 0.5) / (pos + 1)) / ((n_l - pos_l + 0.5) / (n - pos + 1))
        )
    return 0.5 * (max(ratios) / min(ratios) - 1) if len(ratios) > 1 else 0.0


@pytest.mark.parametrize("split_type", ["original", "era", "directional"])
@pytest.mark.parametrize("categorical", [False, True])
@pytest.mark.parametrize("penalty", [0.002, 0.01])
@pytest.mark.parametrize("sparse", [False, True])
def test_rate_spread_penalty_matches_reference(
    monkeypatch, split_type, categorical, penalty, sparse
):
    """The forests' classification penalty (``penalty_kind=1``) on numeric and
    categorical features: the reference with its penalty term replaced by
    the IRF classification penalty."""
    monkeypatch.setattr(reference, "invariance_penalty", rate_spread_penalty)
    data = dict(
        CATEGORICAL if categorical else {}, classification=True, rows_per_era=(20, 60)
    )
    case = Case(
        5,
        4,
        split_type,
        data=data,
        irf_penalty=penalty,
        penalty_kind=1,
        sparse=sparse,
    )
    assert case.check(3) >= 3


def test_same_split_whatever_the_thread_count():
    """A node big enough to scan on two threads: the same split, bit for bit."""
    data = {
        "n_bins": (6, 4, 9, 30) * 10,
        "missing": (False, True, False, True) * 10,
        "rows_per_era": (5, 20),
    }
    infos = []
    for n_threads in (1, 2):
        case = Case(8, 64, "era", -1.0, n_threads=n_threads, data=data)
        assert case.offsets[-1] >= 16384  # scanned on several threads
        info = case.split(case.rows, case.hist(case.rows))
        infos.append({k: getattr(info, k) for k in info.__slots__})
    assert infos[0]["found"]
    assert infos[0] == infos[1]


def test_bad_codes_are_refused():
    with pytest.raises(ValueError, match="split_type must be"):
        Case(0, 3, "era").splitter.__init__(
            np.array([4], dtype=np.uint32),
            np.array([0, 32]),
            3,
            np.zeros(1, dtype=np.uint8),
            np.zeros(1, dtype=np.int8),
            3,
            0.0,
            0.0,
            1e-3,
            1,
            True,
            1,
        )
    with pytest.raises(ValueError, match="penalty_kind must be"):
        Case(0, 3, "era", penalty_kind=max(PENALTY_KINDS.values()) + 1)


def test_missing_or_short_buffers_are_refused():
    """A missing or too small histogram is a clear error, never a crash in C."""
    case = Case(0, 3, "era")
    rows = case.rows
    hist = case.hist(rows)
    short = hist[: len(hist) // 2]
    with pytest.raises(ValueError, match="bytes,"):
        case.split(rows, short)
    with pytest.raises(TypeError):
        case.split(rows, None)
    with pytest.raises(ValueError, match="bytes,"):
        case.builder.compute_subtraction(hist, short, case.features)
    with pytest.raises(TypeError):
        case.builder.compute_subtraction(None, hist, case.features)
    with pytest.raises(TypeError):
        case.builder.compute_brute(rows, None, case.features)
    with pytest.raises(ValueError, match="sampled flags"):
        case.splitter.find_node_split(
            len(rows),
            hist,
            0.0,
            1.0,
            0.0,
            -np.inf,
            np.inf,
            case.features,
            np.ones(len(case.features) + 1, dtype=np.uint8),
        )


def test_bad_sparse_histograms_are_refused():
    """A sparse histogram of another layout, without a scanned feature, on
    the pooled path or given for the subtraction is a clear error."""
    case = Case(0, 3, "era", sparse=True)
    rows = case.rows
    sparse = case.hist(rows)
    assert case.split(rows, sparse).found
    dense = case.builder.empty()
    case.builder.compute_brute(rows, dense, case.features)
    node = SplitNode(
        len(rows), dense, 0.0, 1.0, 0.0, -np.inf, np.inf, np.ones(4, np.uint8)
    )
    other = SplitNode(
        len(rows), sparse, 0.0, 1.0, 0.0, -np.inf, np.inf, np.ones(4, np.uint8)
    )
    with pytest.raises(ValueError, match="sparse histogram cannot be subtracted"):
        case.splitter.find_node_splits([node, other], case.features, (1, dense))
    partial = case.builder.compute_sparse(rows, case.features[:2])
    with pytest.raises(ValueError, match="without feature 2"):
        case.split(rows, partial)
    sparse.bin_offsets = sparse.bin_offsets + 1
    with pytest.raises(ValueError, match="another layout"):
        case.split(rows, sparse)
    sparse.bin_offsets = sparse.bin_offsets - 1
    sparse.era[len(rows) + 1] = 3  # of 3 eras
    with pytest.raises(ValueError, match="with era 3"):
        case.split(rows, sparse)
    sparse.start = sparse.start[:3]
    with pytest.raises(ValueError, match="too short"):
        case.split(rows, sparse)
    pooled = Case(0, 3, "original")
    with pytest.raises(ValueError, match="per-era path only"):
        pooled.split(rows, case.builder.compute_sparse(rows, case.features))


def _info_fields(info):
    return tuple(
        getattr(info, k) if k != "left_cat_bitset" else repr(info.left_cat_bitset)
        for k in info.__slots__
    )


@pytest.mark.parametrize("split_type", ["original", "era", "directional"])
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("categorical", [False, True])
def test_two_children_in_one_loop_with_the_subtraction(
    split_type, n_threads, categorical
):
    """find_node_splits scores both children in one parallel loop and
    subtracts the smaller child's histogram from the parent's feature by
    feature on the way: the same splits and the same histogram bytes as
    compute_subtraction followed by find_node_split for each child."""
    data = CATEGORICAL if categorical else {}
    case = Case(1, 6, split_type, min_samples_leaf=3, n_threads=n_threads, data=data)
    rows = case.rows
    parent = case.hist(rows)
    info = case.split(rows, parent)
    left = case.left_mask(rows, info)
    small, large = sorted((rows[left], rows[~left]), key=len)
    small_hist = case.hist(small)

    expected_hist = parent.copy()
    case.builder.compute_subtraction(expected_hist, small_hist, case.features)
    expected = [case.split(small, small_hist), case.split(large, expected_hist)]

    def args(sub, hist):
        G, H = case.g[sub].sum(), case.h[sub].sum()
        flags = np.ones(len(case.features), dtype=np.uint8)
        return SplitNode(
            n_samples=len(sub),
            histogram=hist,
            sum_gradients=G,
            sum_hessians=H,
            value=-G / (H + case.lam),
            lower_bound=-np.inf,
            upper_bound=np.inf,
            sampled=flags,
        )

    fused = parent.copy()
    got = case.splitter.find_node_splits(
        [args(small, small_hist), args(large, fused)],
        case.features,
        (1, small_hist),
    )
    assert fused.tobytes() == expected_hist.tobytes()
    assert [_info_fields(i) for i in got] == [_info_fields(i) for i in expected]
    # the larger child first: a task is a feature of both nodes either way
    fused = parent.copy()
    got = case.splitter.find_node_splits(
        [args(large, fused), args(small, small_hist)],
        case.features,
        (0, small_hist),
    )
    assert fused.tobytes() == expected_hist.tobytes()
    assert [_info_fields(i) for i in got] == [_info_fields(i) for i in expected[::-1]]
    # the larger child alone (the smaller one a leaf): a task per feature
    fused = parent.copy()
    (got,) = case.splitter.find_node_splits(
        [args(large, fused)], case.features, (0, small_hist)
    )
    assert fused.tobytes() == expected_hist.tobytes()
    assert _info_fields(got) == _info_fields(expected[1])
    with pytest.raises(ValueError, match="no node"):
        case.splitter.find_node_splits(
            [args(small, small_hist)], case.features, (1, small_hist)
        )


def test_nodes_are_split_nodes():
    """find_node_splits takes SplitNode objects, not positional tuples; the
    same splitter serves call after call (its work arrays are its own)."""
    case = Case(0, 3, "era")
    rows = case.rows
    hist = case.hist(rows)
    flags = np.ones(len(case.features), dtype=np.uint8)
    with pytest.raises(TypeError):
        case.splitter.find_node_splits(
            [(len(rows), hist, 0.0, 1.0, 0.0, -np.inf, np.inf, flags)], case.features
        )
    first = _info_fields(case.split(rows, hist))
    for _ in range(3):
        assert _info_fields(case.split(rows, hist)) == first


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("n", [0, 1, 4095, 2 * 4096 + 3, 50_001])
def test_copy_rows_copies_every_row_on_any_thread_count(n, n_threads):
    """``copy_rows``: ``dst[:] = src`` in chunks on the threads, every row once
    whatever the chunks' edges; a destination of another length is refused."""
    src = np.random.default_rng(n).integers(0, 2**32 - 1, n, dtype=np.uint32)
    dst = np.full(n, 7, dtype=np.uint32)
    copy_rows(dst, src, n_threads)
    np.testing.assert_array_equal(dst, src)
    with pytest.raises(ValueError, match="rows"):
        copy_rows(np.empty(n + 1, dtype=np.uint32), src, n_threads)


@pytest.mark.parametrize("n", [0, 1, 2, 4095, 8192, 8193, 20011])
@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("order", ["C", "F"])
def test_split_indices_is_a_stable_partition(n, n_threads, order):
    """``split_indices`` and ``split_indices_categorical`` reorder a node's
    rows in place, the left ones first, each side in its rows' order (the
    rows stay grouped by era), on any thread count and either storage of
    the binned matrix; they return the rows that go left. Thresholds that
    send every row one way, or rows left at random, and the missing-value
    bin on either side, against NumPy's stable partition."""
    rng = np.random.default_rng(n + 10 * n_threads)
    X = np.asarray(rng.integers(0, 256, size=(max(n, 1) + 50, 4)), dtype=np.uint8)
    X = np.asarray(X, order=order)
    # a node's rows: a subset, in increasing order, as the grower keeps them
    rows = np.sort(rng.choice(X.shape[0], size=n, replace=False)).astype(np.uint32)
    col = X[rows, 2]
    for threshold, missing_left in [(0, False), (127, True), (254, False), (255, True)]:
        work = rows.copy()
        buffer = np.empty_like(rows)
        n_left = split_indices(
            X, 2, threshold, missing_left, 255, work, buffer, n_threads
        )
        left = (col <= threshold) | (missing_left & (col == 255))
        assert n_left == left.sum()
        np.testing.assert_array_equal(work, np.concatenate([rows[left], rows[~left]]))
    categories = rng.choice(256, size=100, replace=False)
    bitset = np.zeros(8, dtype=np.uint32)
    for c in categories:
        bitset[c // 32] |= np.uint32(1 << (c % 32))
    work = rows.copy()
    n_left = split_indices_categorical(
        X, 2, bitset, work, np.empty_like(rows), n_threads
    )
    left = np.isin(col, categories)
    assert n_left == left.sum()
    np.testing.assert_array_equal(work, np.concatenate([rows[left], rows[~left]]))


@pytest.mark.parametrize("sparse", [False, True])
def test_an_exact_tie_in_the_right_to_left_scan_goes_to_the_lower_bin(sparse):
    """docs/criteria.md's order: of two candidates with the same ``S_era``,
    the lower bin wins, also in the right-to-left scan (missing values
    left), where the lower bin comes later. Hand-made sums with dyadic
    values, so that the tie is exact: with missing values left, bins
    ``<= 0`` and bins ``<= 2`` both score (18.75 + 0.75) / 2 and
    (7.5 + 12) / 2 = 9.75, above every left-to-right candidate (at most
    6.15). A later candidate tying the best must still be scored, not
    passed over as no better."""
    # (bin, era, gradient) of each row; bin 4 is the missing-value bin
    rows = [
        (0, 0, 3.0), (1, 0, -2.0), (2, 0, 0.5), (2, 0, 0.5), (3, 0, -2.0), (4, 0, 3.0),
        (0, 1, 0.0), (1, 1, -3.0), (2, 1, -2.0), (3, 1, 1.0), (3, 1, 1.0), (4, 1, -3.0),
    ]  # fmt: skip
    Xb = np.asfortranarray(np.array([[b] for b, _, _ in rows], dtype=np.uint8))
    eras = np.array([e for _, e, _ in rows], dtype=np.int32)
    g = np.array([v for _, _, v in rows], dtype=np.float32)
    h = np.ones(1, dtype=np.float32)
    n_bins = np.array([5], dtype=np.uint32)
    has_missing = np.array([1], dtype=np.uint8)
    offsets = histogram_layout(n_bins, 2)
    builder = HistogramBuilder(Xb, n_bins, offsets, 2, eras, g, h, 1)
    splitter = Splitter(
        n_bins, offsets, 2, has_missing, np.zeros(1, dtype=np.int8),
        SPLIT_TYPES["era"], 0.0, 0.0, reference.MIN_HESSIAN, 1, True, 1,
    )  # fmt: skip
    order = np.argsort(eras, kind="stable").astype(np.uint32)
    features = np.zeros(1, dtype=np.uint32)
    if sparse:
        hist = builder.compute_sparse(order, features)
    else:
        hist = builder.empty()
        builder.compute_brute(order, hist, features)
    G = float(g.sum())
    info = splitter.find_node_split(
        len(rows), hist, G, float(len(rows)), -G / len(rows), -np.inf, np.inf,
        features, np.ones(1, dtype=np.uint8),
    )  # fmt: skip
    assert info.found
    assert (info.bin_idx, info.missing_go_to_left) == (0, True)
    assert info.criterion == 9.75


@pytest.mark.parametrize(
    "split_type, alpha",
    [
        ("era", 0.0),
        ("era", -1.0),
        ("era", -np.inf),
        ("directional", 0.0),
        ("directional", 2.0),
        ("directional", -np.inf),
    ],
)
@pytest.mark.parametrize("const_h", [True, False])
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize(
    "options",
    [{}, {"irf_penalty": 0.3}, {"min_samples_leaf_per_era": 2}, {"categorical": True}],
)
def test_blocks_skipped_by_their_bound_change_no_split(
    split_type, alpha, const_h, n_threads, options
):
    """docs/criteria.md, "A bound over a block of candidates": under ``era``
    with alpha <= 0, and ``directional``, the scans skip the blocks of
    candidates whose bound is below the best so far; node by node, down
    three levels, the split is the same, field for field, as when every
    candidate is scored, and some blocks were skipped."""
    options = dict(options)
    data = {"n_bins": (6, 4, 9, 64, 200), "missing": (False, True, False, True, True)}
    data.update(const_h=const_h, rows_per_era=(30, 120))
    if options.pop("categorical", False):
        data["categorical"] = np.array([False, True, False, True, False])
    case = Case(
        4,
        12,
        split_type,
        alpha,
        lam=0.0 if const_h else 0.8,
        n_threads=n_threads,
        data=data,
        **options,
    )
    # the features of few bins are bounded too (not scored by their gain
    # sums alone, test_gain_sums_change_no_split)
    case.splitter.gain_sums = False
    assert same_splits_either_way(case, "bound_blocks") >= 3
    assert case.splitter.blocks_skipped > 0


@pytest.mark.parametrize(
    "split_type, alpha, options",
    [
        ("era", 0.0, {}),
        ("era", -1.0, {}),
        ("era", -np.inf, {}),
        ("directional", 0.0, {}),
        ("directional", -np.inf, {}),
        ("era", 0.0, {"irf_penalty": 0.3}),
        ("era", -np.inf, {"irf_penalty": 0.3}),
        ("directional", 0.0, {"irf_penalty": 0.3}),
    ],
)
@pytest.mark.parametrize("const_h", [True, False])
def test_sparse_candidates_screened_by_their_gain_sum_change_no_split(
    split_type, alpha, const_h, options
):
    """The sparse scans screen their candidates by a running sum of the
    eras' gains (``Splitter._sum_below``: the criterion cannot reach the
    best so far, or, under ``directional``, this scan's best at as many
    agreeing eras); node by node, down three levels, the split is the same,
    field for field, as when every candidate is scored, and some were
    screened out."""
    data = {"n_bins": (6, 4, 9, 64, 200), "missing": (False, True, False, True, True)}
    data.update(const_h=const_h, rows_per_era=(30, 120))
    case = Case(
        4,
        12,
        split_type,
        alpha,
        lam=0.0 if const_h else 0.8,
        data=data,
        sparse=True,
        **options,
    )
    assert case.sparse
    assert same_splits_either_way(case, "bound_blocks") >= 3
    assert case.splitter.candidates_screened > 0


@pytest.mark.parametrize("alpha", [2.0, np.inf])
def test_no_screening_above_alpha_zero(alpha):
    """Above ``boltzmann_alpha = 0`` the criterion may exceed the mean of
    the gains: no sparse candidate is screened by it."""
    data = {"n_bins": (6, 4, 9, 64, 200), "missing": (False, True, False, True, True)}
    data.update(rows_per_era=(30, 120))
    case = Case(4, 12, "era", alpha, data=data, sparse=True)
    assert same_splits_either_way(case, "bound_blocks") >= 3
    assert case.splitter.candidates_screened == 0


@pytest.mark.parametrize("n_eras", [3, 8, 13, 29, 64])
@pytest.mark.parametrize("const_h", [True, False])
@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("bounded", [True, False])
def test_gain_sums_change_no_split(n_eras, const_h, n_threads, bounded):
    """Under ``era`` with alpha = 0 (the mean of the eras' gains) a scan of
    at most 8 steps is scored by its candidates' gain sums alone, all at
    once (``score_gain_sums``, _scan_eras.pyx): node by node, down three levels,
    the split is the same, field for field and bit for bit (the criterion
    is the same sum in the same order), as when every candidate's per-era
    gains are computed one candidate at a time. Era counts that are not
    multiples of 8 (or 4) leave eras to the scalar lanes; features of 9
    bins and fewer, with and without missing values (the right-to-left
    scan), take the path; those of 10 and 64 bins do not."""
    data = {
        "n_bins": (6, 4, 9, 10, 3, 64),
        "missing": (False, True, True, False, True, True),
        "const_h": const_h,
        "rows_per_era": (5, 90),
    }
    case = Case(
        7,
        n_eras,
        "era",
        0.0,
        lam=0.0 if const_h else 0.8,
        n_threads=n_threads,
        data=data,
    )
    case.splitter.bound_blocks = bounded
    assert same_splits_either_way(case, "gain_sums") >= 3
    assert case.splitter.scans_by_gain_sums > 0


@pytest.mark.parametrize(
    "split_type, alpha, options",
    [
        ("era", -1.0, {}),
        ("directional", 0.0, {}),
        ("era", 0.0, {"irf_penalty": 0.3}),
        ("era", 0.0, {"min_samples_leaf_per_era": 2}),
    ],
)
def test_gain_sums_only_where_the_criterion_needs_nothing_else(
    split_type, alpha, options
):
    """A criterion that needs more of a candidate than its eras' gain sum
    (another alpha, the directions, a penalty, a per-era minimum) never
    takes the path of the gain sums alone."""
    data = {"n_bins": (6, 4, 9, 5), "missing": (False, True, False, True)}
    case = Case(3, 12, split_type, alpha, data=data, **options)
    info = case.split(case.rows, case.hist(case.rows))
    assert info.found
    assert case.splitter.scans_by_gain_sums == 0
