"""The histogram builder on hand-made nodes, against NumPy sums."""

import numpy as np
import pytest

from eraboost._engine._histogram import (
    HistogramBuilder,
    era_runs,
    histogram_cell_bytes,
    histogram_layout,
    histogram_rows_per_bin,
)


def make_data(seed, n=400, n_eras=5, n_bins=(6, 3, 17, 256), const_h=False):
    """Binned columns (the last bin of each is the missing-value bin), float32
    gradients and hessians, era codes in random row order."""
    rng = np.random.default_rng(seed)
    n_bins = np.asarray(n_bins, dtype=np.uint32)
    Xb = np.asfortranarray(
        np.column_stack([rng.integers(0, nb, size=n) for nb in n_bins]).astype(np.uint8)
    )
    g = rng.normal(size=n).astype(np.float32)
    h = (
        np.ones(1, dtype=np.float32)
        if const_h
        else rng.uniform(0.1, 2.0, size=n).astype(np.float32)
    )
    eras = rng.integers(0, n_eras, size=n).astype(np.int32)
    return Xb, n_bins, g, h, eras


def numpy_hist(Xb, n_bins, g, h, eras, rows, n_eras, f):
    """(n_eras, n_bins[f]) sums of g, h and rows of the rows ``rows``."""
    nb = int(n_bins[f])
    out = {k: np.zeros((n_eras, nb)) for k in "ghn"}
    hh = np.broadcast_to(h, g.shape) if h.shape[0] == 1 else h
    for key, w in (("g", g), ("h", hh), ("n", np.ones_like(g))):
        np.add.at(out[key], (eras[rows], Xb[rows, f]), w[rows].astype(np.float64))
    return out


def grouped_rows(eras, rows):
    """``rows`` grouped by era (stable), as the grower keeps them."""
    return rows[np.argsort(eras[rows], kind="stable")].astype(np.uint32)


@pytest.mark.parametrize("n_eras", [1, 2, 7])
def test_layout_blocks_are_padded_whole_cache_lines(n_eras):
    n_bins = np.array([6, 3, 17, 256, 1], dtype=np.uint32)
    offsets = histogram_layout(n_bins, n_eras)
    rows = n_eras + 1 if n_eras > 1 else 1  # the era rows and the pooled row
    sizes = np.diff(offsets)
    assert offsets[0] == 0
    # 32 cells of 12 or 20 bytes: 3 or 5 pairs of cache lines
    assert np.all(sizes % 32 == 0)
    assert np.all(sizes * 12 % 128 == 0) and np.all(sizes * 20 % 128 == 0)
    assert np.all(sizes - rows * n_bins >= 4)
    assert np.all(sizes - rows * n_bins < 36)


def test_era_runs():
    eras = np.array([3, 3, 1, 1, 1, 0, 3], dtype=np.int32)
    rows = np.array([0, 1, 6, 2, 3, 4, 5], dtype=np.uint32)  # eras 3 3 3 1 1 1 0
    era, start, stop = era_runs(rows, eras)
    np.testing.assert_array_equal(era, [3, 1, 0])
    np.testing.assert_array_equal(start, [0, 3, 6])
    np.testing.assert_array_equal(stop, [3, 6, 7])
    era, start, stop = era_runs(np.zeros(0, dtype=np.uint32), eras)
    assert era.size == start.size == stop.size == 0


@pytest.mark.parametrize("const_h", [False, True])
@pytest.mark.parametrize("n_eras", [1, 5])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_brute_matches_numpy(const_h, n_eras, n_threads):
    Xb, n_bins, g, h, eras = make_data(0, n_eras=n_eras, const_h=const_h)
    codes = eras if n_eras > 1 else None
    if n_eras == 1:
        eras = np.zeros_like(eras)
    offsets = histogram_layout(n_bins, n_eras)
    b = HistogramBuilder(Xb, n_bins, offsets, n_eras, codes, g, h, n_threads)
    assert b.hessians_are_constant == const_h
    rng = np.random.default_rng(1)
    rows = grouped_rows(eras, np.sort(rng.choice(len(g), size=250, replace=False)))
    hist = b.empty()
    hist[:] = 7  # garbage: must be cleared
    assert hist.nbytes == offsets[-1] * (12 if const_h else 20)
    features = np.arange(len(n_bins), dtype=np.uint32)
    b.compute_brute(rows, hist, features)
    for f in range(len(n_bins)):
        ref = numpy_hist(Xb, n_bins, g, h, eras, rows, n_eras, f)
        got = b.block(hist, f)  # (rows, bins) arrays: the eras, the pooled row
        np.testing.assert_array_equal(got["n"][:n_eras], ref["n"])
        np.testing.assert_allclose(got["g"][:n_eras], ref["g"], rtol=1e-12, atol=1e-12)
        if not const_h:
            np.testing.assert_allclose(
                got["h"][:n_eras], ref["h"], rtol=1e-12, atol=1e-12
            )
        if n_eras > 1:  # the pooled row
            np.testing.assert_array_equal(got["n"][n_eras], ref["n"].sum(axis=0))
            np.testing.assert_allclose(
                got["g"][n_eras], ref["g"].sum(axis=0), rtol=1e-12, atol=1e-12
            )


def test_root_without_gather_and_feature_subset():
    """``root=True`` takes the rows 0..n-1 in place; only the listed
    features' blocks are written."""
    Xb, n_bins, g, h, eras = make_data(2, n_eras=1)
    offsets = histogram_layout(n_bins, 1)
    b = HistogramBuilder(Xb, n_bins, offsets, 1, None, g, h, 1)
    rows = np.arange(len(g), dtype=np.uint32)
    hist = b.empty()
    for f in range(len(n_bins)):
        b.block(hist, f)["n"][:] = 99
    b.compute_brute(rows, hist, np.array([1, 3], dtype=np.uint32), True)
    zeros = np.zeros_like(eras)
    for f in range(len(n_bins)):
        got = b.block(hist, f)
        if f in (1, 3):
            ref = numpy_hist(Xb, n_bins, g, h, zeros, rows, 1, f)
            np.testing.assert_array_equal(got["n"], ref["n"])
            np.testing.assert_allclose(got["g"], ref["g"], rtol=1e-12, atol=1e-12)
        else:
            assert np.all(got["n"] == 99)


@pytest.mark.parametrize("const_h", [False, True])
def test_subtraction_gives_the_other_child(const_h):
    """parent - small child = the large child's histogram, rows exactly and
    sums to rounding, the pooled row included; the same with two threads."""
    Xb, n_bins, g, h, eras = make_data(3, n=600, n_eras=4, const_h=const_h)
    offsets = histogram_layout(n_bins, 4)
    features = np.arange(len(n_bins), dtype=np.uint32)
    rows = grouped_rows(eras, np.arange(len(g)))
    left = Xb[rows, 0] <= 2
    results = []
    for n_threads in (1, 2):
        b = HistogramBuilder(Xb, n_bins, offsets, 4, eras, g, h, n_threads)
        parent, small, large = b.empty(), b.empty(), b.empty()
        b.compute_brute(rows, parent, features)
        b.compute_brute(rows[left], small, features)
        b.compute_brute(rows[~left], large, features)
        b.compute_subtraction(parent, small, features)
        for f in range(len(n_bins)):
            got = b.block(parent, f)
            ref = b.block(large, f)
            np.testing.assert_array_equal(got["n"], ref["n"])
            np.testing.assert_allclose(got["g"], ref["g"], rtol=1e-9, atol=1e-9)
            if not const_h:
                np.testing.assert_allclose(got["h"], ref["h"], rtol=1e-9, atol=1e-9)
        results.append(parent)
    assert results[0].tobytes() == results[1].tobytes()


@pytest.mark.parametrize("const_h", [False, True])
@pytest.mark.parametrize("order", ["shuffled", "two_runs_per_era"])
def test_any_row_order(const_h, order):
    """Rows not grouped by era (an era in several runs, runs of one row or
    of many rows, over few and many bins): the same sums."""
    Xb, n_bins, g, h, eras = make_data(4, n=3000, n_eras=6, const_h=const_h)
    rng = np.random.default_rng(5)
    if order == "shuffled":
        rows = rng.permutation(len(g)).astype(np.uint32)
    else:  # era 0's first half, era 1's first half, ..., then the second halves
        by_era = [np.flatnonzero(eras == e) for e in range(6)]
        halves = [r[: len(r) // 2] for r in by_era] + [r[len(r) // 2 :] for r in by_era]
        rows = np.concatenate(halves).astype(np.uint32)
    offsets = histogram_layout(n_bins, 6)
    b = HistogramBuilder(Xb, n_bins, offsets, 6, eras, g, h, 1)
    hist = b.empty()
    b.compute_brute(rows, hist, np.arange(len(n_bins), dtype=np.uint32))
    for f in range(len(n_bins)):
        ref = numpy_hist(Xb, n_bins, g, h, eras, rows, 6, f)
        got = b.block(hist, f)
        np.testing.assert_array_equal(got["n"][:6], ref["n"])
        np.testing.assert_allclose(got["g"][:6], ref["g"], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got["g"][6], ref["g"].sum(axis=0), atol=1e-12)
        np.testing.assert_array_equal(got["n"][6], ref["n"].sum(axis=0))
        if not const_h:
            np.testing.assert_allclose(got["h"][:6], ref["h"], rtol=1e-12, atol=1e-12)


def test_size_is_the_last_offset_and_offsets_are_checked():
    """The size is read through the typed view, not a negative index (the
    module is compiled without wraparound: NumPy 2.5 answered ``offsets[-1]``
    with an IndexError there, and every fit failed)."""
    Xb, n_bins, g, h, eras = make_data(2, n_eras=3)
    offsets = histogram_layout(n_bins, 3)
    b = HistogramBuilder(Xb, n_bins, offsets, 3, eras, g, h, 1)
    assert b.size == offsets[len(offsets) - 1]
    with pytest.raises(ValueError, match="offsets has"):
        HistogramBuilder(Xb, n_bins, offsets[:-1], 3, eras, g, h, 1)


@pytest.mark.parametrize("n_eras", [1, 2, 7])
@pytest.mark.parametrize("const_h", [False, True])
def test_rows_per_bin_and_cell_bytes_describe_the_buffer(n_eras, const_h):
    Xb, n_bins, g, h, eras = make_data(0, n_eras=n_eras, const_h=const_h)
    offsets = histogram_layout(n_bins, n_eras)
    builder = HistogramBuilder(
        Xb, n_bins, offsets, n_eras, eras if n_eras > 1 else None, g, h, 1
    )
    rows = histogram_rows_per_bin(n_eras)
    assert rows == (n_eras + 1 if n_eras > 1 else 1)
    assert builder.nbytes == offsets[-1] * histogram_cell_bytes(const_h)
    buf = builder.empty()
    for f in range(len(n_bins)):
        assert builder.block(buf, f)["g"].shape == (rows, n_bins[f])


@pytest.mark.parametrize("const_h", [False, True])
@pytest.mark.parametrize("root", [False, True])
def test_sparse_histograms_hold_the_rows_of_each_bin(const_h, root):
    """``compute_sparse``: for each listed feature, its bins' rows (era,
    gradient, hessian) in the node's order, and the bins' pooled sums; the
    same sums per era and bin as the dense histograms and NumPy."""
    n_eras = 7
    Xb, n_bins, g, h, eras = make_data(3, n_eras=n_eras, const_h=const_h)
    offsets = histogram_layout(n_bins, n_eras)
    builder = HistogramBuilder(Xb, n_bins, offsets, n_eras, eras, g, h, 2)
    rows = (
        np.arange(len(g), dtype=np.uint32)
        if root
        else grouped_rows(eras, np.flatnonzero(np.arange(len(g)) % 3 != 1))
    )
    features = np.array([3, 0, 2], dtype=np.uint32)
    sparse = builder.compute_sparse(rows, features, root)
    assert sparse.n_rows == len(rows)
    assert sparse.entry_base[1] == -1  # not listed
    for f in features:
        ref = numpy_hist(Xb, n_bins, g, h, eras, rows, n_eras, f)
        nb = int(n_bins[f])
        i0, base = sparse.bin_offsets[f], sparse.entry_base[f]
        start = sparse.start[i0 : i0 + nb + 1].astype(np.int64) + base
        got = {k: np.zeros((n_eras, nb)) for k in "ghn"}
        col = Xb[rows, f]
        for b in range(nb):
            entries = slice(start[b], start[b + 1])
            era = sparse.era[entries]
            # the bin's rows, in the node's order
            np.testing.assert_array_equal(era, eras[rows][col == b])
            np.testing.assert_array_equal(sparse.g[entries], g[rows][col == b])
            np.add.at(got["g"], (era, b), sparse.g[entries].astype(np.float64))
            np.add.at(got["n"], (era, b), 1.0)
            if not const_h:
                np.add.at(got["h"], (era, b), sparse.h[entries].astype(np.float64))
            assert sparse.pooled_n[i0 + b] == (col == b).sum()
            assert sparse.pooled_g[i0 + b] == pytest.approx(ref["g"][:, b].sum())
            if not const_h:
                assert sparse.pooled_h[i0 + b] == pytest.approx(ref["h"][:, b].sum())
        np.testing.assert_allclose(got["g"], ref["g"], atol=1e-9)
        np.testing.assert_array_equal(got["n"], ref["n"])
        if not const_h:
            np.testing.assert_allclose(got["h"], ref["h"], atol=1e-9)
    # its arrays serve the next one once given back
    builder.recycle_sparse(sparse)
    again = builder.compute_sparse(rows[: len(rows) // 2], features)
    assert again is sparse and again.n_rows == len(rows) // 2


def test_sparse_histograms_need_eras():
    Xb, n_bins, g, h, _ = make_data(4)
    builder = HistogramBuilder(
        Xb, n_bins, histogram_layout(n_bins, 1), 1, None, g, h, 1
    )
    with pytest.raises(ValueError, match="n_eras"):
        builder.compute_sparse(
            np.arange(10, dtype=np.uint32), np.arange(4, dtype=np.uint32)
        )


def wide_data(seed, n, n_eras, const_h, max_bins=256):
    """150 features (three chunks of features filled row by row) of 2 to
    ``max_bins`` bins, in neighbouring runs of equal bin counts and single
    odd ones."""
    n_bins = np.array(
        [5] * 70 + [3, max_bins, 17] + [6] * 60 + [2, 32] + [5] * 15, dtype=np.uint32
    )
    return make_data(seed, n=n, n_eras=n_eras, n_bins=n_bins, const_h=const_h)


def test_node_block_rows_are_the_nodes_alone():
    """Without eras a node is summed in blocks whose size depends on its
    rows and the data, never on the threads: 16 blocks of at least 2048
    rows for a node of a few training blocks, the builder's ``block_rows``
    for a large one, and no more blocks than the block sums' bytes allow."""
    Xb, n_bins, g, h, _ = make_data(3, n=1_000_000, n_eras=1, n_bins=(5,) * 3)
    offsets = histogram_layout(n_bins, 1)
    b = HistogramBuilder(Xb, n_bins, offsets, 1, None, g, h, 2)
    assert b.block_rows == 16384  # 1,000,000 rows in at most 64 blocks
    assert b.node_block_rows(1000) == 2048  # one block
    assert b.node_block_rows(2048) == 2048
    assert b.node_block_rows(20_000) == 2048  # ten blocks
    assert b.node_block_rows(40_000) == 2500  # 16 blocks
    assert b.node_block_rows(1_000_000) == 16384
    for threads in (1, 16):
        other = HistogramBuilder(Xb, n_bins, offsets, 1, None, g, h, threads)
        assert other.node_block_rows(40_000) == 2500
    # a histogram of 12 MB: the block sums within 64 MB, 5 blocks at most
    wide = np.full(2048, 256, dtype=np.uint32)
    Xw = np.zeros((10, 2048), dtype=np.uint8, order="F")
    bw = HistogramBuilder(
        Xw, wide, histogram_layout(wide, 1), 1, None, g[:10], h[:10], 1
    )
    k = (64 << 20) // bw.nbytes
    assert k == 5
    assert bw.node_block_rows(40_000) == 8000
    # an explicit block_rows bounds every node's blocks
    b7 = HistogramBuilder(Xb, n_bins, offsets, 1, None, g, h, 1, 700)
    assert b7.node_block_rows(40_000) == 700


@pytest.mark.parametrize("const_h", [False, True])
def test_a_node_of_a_few_blocks_sums_alike_by_rows_and_columns(const_h):
    """A node of 40,000 rows without eras, 16 blocks of 2,500 rows: the same
    bytes from both layouts at any thread count, and NumPy's sums."""
    Xb, n_bins, g, h, _ = make_data(
        4, n=60_000, n_eras=1, n_bins=(5, 3, 17, 256, 6) * 4, const_h=const_h
    )
    rows = np.sort(
        np.random.default_rng(5).choice(60_000, 40_000, replace=False)
    ).astype(np.uint32)
    offsets = histogram_layout(n_bins, 1)
    Xc = np.ascontiguousarray(Xb)
    features = np.arange(Xb.shape[1], dtype=np.uint32)
    results = []
    for X, n_threads in ((Xb, 1), (Xb, 3), (Xc, 1), (Xc, 2), (Xc, 16)):
        b = HistogramBuilder(X, n_bins, offsets, 1, None, g, h, n_threads)
        assert b.node_block_rows(rows.shape[0]) == 2500
        hist = b.empty()
        b.compute_brute(rows, hist, features)
        results.append(hist.tobytes())
    assert all(r == results[0] for r in results[1:])
    zeros = np.zeros(Xb.shape[0], dtype=np.int32)
    for f in (0, 2, 3, 19):
        ref = numpy_hist(Xb, n_bins, g, h, zeros, rows, 1, f)
        got = b.block(hist, f)
        np.testing.assert_array_equal(got["n"][:1], ref["n"])
        np.testing.assert_allclose(got["g"][:1], ref["g"], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("const_h", [False, True])
@pytest.mark.parametrize("n_eras", [1, 3, 40, 200])
@pytest.mark.parametrize("order", ["grouped", "shuffled", "root"])
@pytest.mark.parametrize("block_rows", [0, 700])
@pytest.mark.parametrize("max_bins", [256, 32])
def test_matrix_stored_by_rows_gives_the_same_bytes(
    const_h, n_eras, order, block_rows, max_bins
):
    """A C-ordered matrix is filled row by row, in chunks of features and
    groups of eras (without eras, blocks of rows summed apart, then added in
    order); every cell is the same sum, in the same order, as from the
    Fortran-ordered matrix: the buffers are equal byte for byte, for any
    thread count, with long and short era runs, runs shorter than a
    feature's bins, eras in several runs (shuffled rows), short runs each of
    its own era (200 eras: summed a few eras at a time in slots, or straight
    into the cells where a chunk's slots would not fit), a feature subset
    that is not contiguous, and the listed features only written. Long era
    runs go to four lanes only when no feature has more than 32 bins
    (``max_bins=32``, 3 eras); with a feature of 256 bins every run goes
    straight to its cells."""
    Xb, n_bins, g, h, eras = wide_data(6, 5000, n_eras, const_h, max_bins)
    codes = eras if n_eras > 1 else None
    eras_used = eras if n_eras > 1 else np.zeros_like(eras)
    rng = np.random.default_rng(7)
    if order == "grouped":
        rows = grouped_rows(eras_used, np.sort(rng.choice(5000, 3000, replace=False)))
    elif order == "shuffled":
        rows = rng.permutation(5000)[:2000].astype(np.uint32)
    else:
        rows = np.arange(5000, dtype=np.uint32)
    offsets = histogram_layout(n_bins, n_eras)
    Xc = np.ascontiguousarray(Xb)
    subset = np.setdiff1d(np.arange(150), [3, 71, 100, 101, 149]).astype(np.uint32)
    for features in (np.arange(150, dtype=np.uint32), subset):
        results = []
        for X, n_threads in ((Xb, 1), (Xc, 1), (Xc, 2), (Xc, 5)):
            b = HistogramBuilder(
                X, n_bins, offsets, n_eras, codes, g, h, n_threads, block_rows
            )
            assert b.by_rows == (X is Xc)
            hist = b.empty()
            hist[:] = 7  # the unlisted features' blocks keep it
            b.compute_brute(rows, hist, features, order == "root")
            results.append(hist.tobytes())
        assert results[1] == results[0]
        assert results[2] == results[0]
        assert results[3] == results[0]
    # and the sums are right (the Fortran path is checked against NumPy
    # above; this checks one feature of each kind here too)
    b = HistogramBuilder(Xc, n_bins, offsets, n_eras, codes, g, h, 2, block_rows)
    hist = b.empty()
    b.compute_brute(rows, hist, subset, order == "root")
    for f in (0, 70, 72, 133, 134, 148):
        ref = numpy_hist(Xb, n_bins, g, h, eras_used, rows, n_eras, f)
        got = b.block(hist, f)
        np.testing.assert_array_equal(got["n"][:n_eras], ref["n"])
        np.testing.assert_allclose(got["g"][:n_eras], ref["g"], rtol=1e-12, atol=1e-12)
        if not const_h:
            np.testing.assert_allclose(
                got["h"][:n_eras], ref["h"], rtol=1e-12, atol=1e-12
            )


def test_matrix_of_any_strides():
    """A matrix neither C- nor Fortran-ordered (a strided view) is read
    column by column, with the same sums."""
    Xb, n_bins, g, h, eras = make_data(8, n=600, n_eras=4)
    wide = np.zeros((600, 2 * len(n_bins)), dtype=np.uint8)
    wide[:, ::2] = Xb
    view = wide[:, ::2]
    assert not view.flags.c_contiguous and not view.flags.f_contiguous
    offsets = histogram_layout(n_bins, 4)
    rows = grouped_rows(eras, np.arange(600, dtype=np.uint32)[::3])
    features = np.arange(len(n_bins), dtype=np.uint32)
    results = []
    for X in (Xb, view):
        b = HistogramBuilder(X, n_bins, offsets, 4, eras, g, h, 2)
        assert not b.by_rows
        hist = b.empty()
        b.compute_brute(rows, hist, features)
        results.append(hist.tobytes())
    assert results[0] == results[1]


@pytest.mark.parametrize("order", ["grouped", "shuffled", "root"])
def test_era_runs_counted_in_parallel_give_the_same_histograms(order):
    """A node of more than 65,536 rows a thread has its era runs counted in
    slices, one a thread (runs crossing the slices' edges included): the
    histograms are those of one thread, byte for byte, and the NumPy
    reference's."""
    n, n_eras = 140_000, 50
    Xb, n_bins, g, h, eras = make_data(3, n=n, n_eras=n_eras, n_bins=(5, 7))
    rng = np.random.default_rng(1)
    if order == "grouped":
        # runs of unequal lengths, one crossing the middle of the rows
        rows = grouped_rows(eras, np.sort(rng.choice(n, 135_000, replace=False)))
    elif order == "shuffled":
        rows = rng.permutation(n).astype(np.uint32)
    else:
        eras = np.sort(eras).astype(np.int32)
        rows = np.arange(n, dtype=np.uint32)
    offsets = histogram_layout(n_bins, n_eras)
    features = np.arange(2, dtype=np.uint32)
    results = []
    for n_threads in (1, 2):
        b = HistogramBuilder(Xb, n_bins, offsets, n_eras, eras, g, h, n_threads)
        hist = b.empty()
        b.compute_brute(rows, hist, features, order == "root")
        results.append(hist.tobytes())
    assert results[1] == results[0]
    for f in (0, 1):
        ref = numpy_hist(Xb, n_bins, g, h, eras, rows, n_eras, f)
        np.testing.assert_array_equal(b.block(hist, f)["n"][:n_eras], ref["n"])


@pytest.mark.parametrize("const_h", [False, True])
# sparse histograms keep eras apart: none with one era
@pytest.mark.parametrize("n_eras, sparse", [(1, False), (5, False), (5, True)])
def test_build_root_sums_and_release(const_h, n_eras, sparse):
    """``build`` makes a sparse histogram below ``sparse_below`` rows (a
    dense one from the pool otherwise, or when asked); ``root_sums`` gives
    the node's gradient and hessian sums from any feature's histogram,
    the missing-value bin included or absent; ``release`` gives a dense
    buffer back to the pool, and a sparse one's arrays to the next."""
    from eraboost._engine._histogram import SparseHistogram
    from eraboost._engine._memory import HistogramPool

    Xb, n_bins, g, h, eras = make_data(3, n_eras=n_eras, const_h=const_h)
    codes = eras if n_eras > 1 else None
    offsets = histogram_layout(n_bins, n_eras)
    b = HistogramBuilder(Xb, n_bins, offsets, n_eras, codes, g, h, 2)
    b.pool = HistogramPool(b.nbytes)
    rows = grouped_rows(eras, np.arange(len(g)))
    b.sparse_below = len(rows) + 1 if sparse else 0
    features = np.arange(len(n_bins), dtype=np.uint32)
    hist = b.build(rows, features)
    assert isinstance(hist, SparseHistogram) == sparse
    assert b.subtractable(len(rows)) != sparse
    hh = np.broadcast_to(h, g.shape)
    for f in range(len(n_bins)):
        # feature f's last bin is the missing-value bin, or an ordinary one
        for has_missing in (True, False):
            sg, sh = b.root_sums(hist, f, len(rows), 255, has_missing)
            assert sg == pytest.approx(g.astype(np.float64).sum(), abs=1e-9)
            assert sh == pytest.approx(hh.astype(np.float64).sum(), rel=1e-12)
    b.release(hist)
    b.release(None)
    again = b.build(rows, features)
    if sparse:
        assert again.era is hist.era  # the arrays reused
    else:
        assert again is hist and b.pool.n_allocated == 1
    dense = b.build(rows, features, dense=True)
    assert not isinstance(dense, SparseHistogram)
