"""Helpers shared by the Dask tests (not a test module: pytest collects
only ``test_*.py``): the comparison of a Dask fit's trees with the single
machine's."""

import numpy as np

SPLIT_FIELDS = [
    "feature",
    "bin_threshold",
    "missing_left",
    "is_leaf",
    "left",
    "right",
    "is_categorical",
    "bitset_idx",
]


def assert_same_trees(dask_est, local_est, scale):
    """Identical splits (the categories sent left included) and
    iterations; leaf values within 1e-9 of ``scale`` (the target's)."""
    fitted = dask_est.to_local()
    assert fitted.n_iter_ == local_est.n_iter_
    for stage_d, stage_l in zip(fitted._predictors, local_est._predictors, strict=True):
        for tree_d, tree_l in zip(stage_d, stage_l, strict=True):
            a, b = tree_d.nodes, tree_l.nodes
            assert a.shape == b.shape
            for field in SPLIT_FIELDS:
                np.testing.assert_array_equal(a[field], b[field], err_msg=field)
            # the categories sent left at each categorical split
            for bitsets in ("binned_left_cat_bitsets", "raw_left_cat_bitsets"):
                np.testing.assert_array_equal(
                    getattr(tree_d, bitsets), getattr(tree_l, bitsets), err_msg=bitsets
                )
            leaves = b["is_leaf"] == 1
            np.testing.assert_allclose(
                a["value"][leaves], b["value"][leaves], rtol=0, atol=1e-9 * scale
            )
