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


def test_add_leaf_values_needs_a_value_per_leaf():
    raw = np.zeros(4)
    with pytest.raises(ValueError, match="2 leaves and 1 values"):
        add_leaf_values(raw, [np.array([0], np.uint32)] * 2, np.ones(1))
