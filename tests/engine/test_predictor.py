"""The raw-prediction update of ``_engine/_predictor.pyx``."""

import numpy as np
import pytest

from eraboost._engine._predictor import add_leaf_values


@pytest.mark.parametrize("n_threads", [1, 2, 7])
def test_add_leaf_values_adds_each_leaf_to_its_rows(n_threads):
    """A tree's leaves hold disjoint rows: each row gets its leaf's value
    once, for any thread count, the rows of empty leaves and rows in no
    leaf untouched."""
    rng = np.random.default_rng(0)
    n = 50_000
    raw = rng.normal(size=n)
    perm = rng.permutation(n - 100).astype(np.uint32)  # the last 100 in no leaf
    cuts = np.sort(rng.choice(np.arange(1, n - 100), 30, replace=False))
    leaves = [*np.split(perm, cuts), np.zeros(0, dtype=np.uint32)]
    values = rng.normal(size=len(leaves))
    expected = raw.copy()
    for idx, v in zip(leaves, values):
        expected[idx] += v
    got = raw.copy()
    add_leaf_values(got, leaves, values, n_threads)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("n_threads", [1, 2, 3, 16])
@pytest.mark.parametrize("n", [5, 4_099, 50_000])
def test_add_leaf_values_by_ranges_of_rows(n_threads, n):
    """With each leaf's rows ascending, the threads own ranges of rows and
    find each leaf's rows in theirs by bisection: the same sums as the
    leaves added one by one, every row in one leaf (a range's first and
    last rows included), a leaf holding most rows, empty leaves."""
    rng = np.random.default_rng(n)
    raw = rng.normal(size=n)
    leaf_of_row = rng.integers(0, 31, size=n)
    leaf_of_row[rng.random(n) < 0.6] = 7  # one leaf with most rows
    leaves = [np.flatnonzero(leaf_of_row == j).astype(np.uint32) for j in range(33)]
    values = rng.normal(size=len(leaves))
    expected = raw.copy()
    for idx, v in zip(leaves, values):
        expected[idx] += v
    got = raw.copy()
    add_leaf_values(got, leaves, values, n_threads, ascending=True)
    np.testing.assert_array_equal(got, expected)
    # rows out of order (grouped by era) still get their values once
    leaves = [rng.permutation(idx) for idx in leaves]
    got = raw.copy()
    add_leaf_values(got, leaves, values, n_threads, ascending=True)
    np.testing.assert_array_equal(got, expected)


def test_add_leaf_values_needs_a_value_per_leaf():
    raw = np.zeros(4)
    with pytest.raises(ValueError, match="2 leaves and 1 values"):
        add_leaf_values(raw, [np.array([0], np.uint32)] * 2, np.ones(1))
