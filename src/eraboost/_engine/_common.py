"""The engine's shared Python facts: the NumPy dtypes matching the C types
and structs of ``_common.pxd``, the split-type codes, the smallest hessian
sum a node needs to be split, and the one test of which era options are
set (``era_options_set``)."""

import numpy as np

G_DTYPE = np.float32
Y_DTYPE = np.float64
BIN_DTYPE = np.uint8

NODE_DTYPE = np.dtype(
    [
        ("value", np.float64),
        ("count", np.uint32),
        ("feature", np.int32),
        ("threshold", np.float64),
        ("missing_left", np.uint8),
        ("left", np.uint32),
        ("right", np.uint32),
        ("gain", np.float64),
        ("depth", np.uint32),
        ("is_leaf", np.uint8),
        ("bin_threshold", np.uint8),
        ("is_categorical", np.uint8),
        ("bitset_idx", np.uint32),
    ]
)

# A set of bins (categories) as 8 x 32 bits: bin b is in it iff
# bitset[b // 32] >> (b % 32) & 1.
BITSET_DTYPE = np.uint32

SPLIT_TYPES = {"original": 0, "era": 1, "directional": 2}

# A node whose hessian sum is below this is not split (scikit-learn's value).
MIN_HESSIAN_TO_SPLIT = 1e-3


def era_options_set(
    split_type, irf_penalty, min_samples_leaf_per_era, min_agreement=None
):
    """The era-aware options that are set, by name, in parameter order:
    ``"split_type"`` (any criterion but "original"), ``"irf_penalty"``
    (above 0), ``"min_samples_leaf_per_era"`` (neither None nor 0),
    ``"min_agreement"`` (neither None nor 0). Empty: the criterion is
    pooled and needs no per-era sums.

    The one test of whether an option needs the eras, for the estimators'
    warnings, ``engine.EngineSettings`` and ``_splitting.Splitter``.

    Parameters
    ----------
    split_type : str or int
        A name of ``SPLIT_TYPES`` or its code.
    irf_penalty : float
    min_samples_leaf_per_era : int or None
    min_agreement : float or None, default=None

    Returns
    -------
    names : list of str
    """
    if isinstance(split_type, str):
        split_type = SPLIT_TYPES[split_type]
    names = []
    if split_type != SPLIT_TYPES["original"]:
        names.append("split_type")
    if irf_penalty > 0:
        names.append("irf_penalty")
    if min_samples_leaf_per_era is not None and min_samples_leaf_per_era > 0:
        names.append("min_samples_leaf_per_era")
    if min_agreement is not None and min_agreement > 0:
        names.append("min_agreement")
    return names
