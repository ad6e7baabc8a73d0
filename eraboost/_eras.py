"""Validation and encoding of era labels; the era-grouped validation split."""
import numbers
import warnings

import numpy as np


def check_eras(eras, n_samples, name="eras"):
    """Validate era labels and encode them as int32 codes 0..n_eras-1.

    Parameters
    ----------
    eras : 1-D array-like of hashable labels (ints, strings, pandas Series or
        Categorical, list), length ``n_samples``.
    n_samples : int
    name : str
        Name used in error messages.

    Returns
    -------
    codes : ndarray of int32, shape (n_samples,)
    labels : ndarray, shape (n_eras,)
        The sorted distinct labels; ``labels[codes]`` gives back the input.
    """
    arr = np.asarray(eras)
    if arr.ndim != 1:
        raise ValueError(
            f"{name} must be 1-D (one era label per row); got an array of "
            f"shape {arr.shape}."
        )
    if arr.shape[0] != n_samples:
        raise ValueError(
            f"{name} has {arr.shape[0]} labels but X has {n_samples} rows; "
            "give exactly one era label per row."
        )
    if arr.dtype.kind == "f":
        if np.isnan(arr).any():
            raise ValueError(f"{name} contains NaN; every row needs an era label.")
    elif arr.dtype.kind == "O":
        bad = [v for v in arr if v is None or (isinstance(v, numbers.Real)
                                                and v != v)]
        if bad:
            raise ValueError(
                f"{name} contains None or NaN; every row needs an era label."
            )
        try:
            labels, codes = np.unique(arr, return_inverse=True)
        except TypeError as exc:
            raise ValueError(
                f"{name} labels cannot be compared with each other ({exc}); "
                "use labels of one type."
            ) from None
        return codes.astype(np.int32).ravel(), labels
    elif arr.dtype.kind not in "iubUS":
        raise ValueError(f"{name} has unsupported dtype {arr.dtype}.")
    labels, codes = np.unique(arr, return_inverse=True)
    return codes.astype(np.int32).ravel(), labels


def era_train_val_split(codes, validation_fraction, random_state):
    """Hold out whole eras for validation.

    Eras are taken in a seeded random order until the held-out rows reach
    ``validation_fraction`` of the rows (a float in (0, 1) or a number of
    rows); the stopping point closest to the target is kept. At least one era
    stays on each side.

    Returns
    -------
    val_mask : ndarray of bool, shape (n_samples,)
    """
    n = codes.shape[0]
    counts = np.bincount(codes)
    present = np.flatnonzero(counts)
    if present.size < 2:
        raise ValueError("need at least two eras to hold out whole eras")
    target = (validation_fraction * n if isinstance(validation_fraction, float)
              else float(validation_fraction))
    rng = np.random.RandomState(random_state)
    order = rng.permutation(present)
    cum = np.cumsum(counts[order])
    # number of eras held out: 1 .. len-1, the one whose rows are closest
    k = int(np.argmin(np.abs(cum[:-1] - target))) + 1
    val_eras = np.zeros(counts.size, dtype=bool)
    val_eras[order[:k]] = True
    return val_eras[codes]


def warn_single_era(options):
    """Warn that era-aware options run on a single era.

    ``options`` names them, e.g. ``"split_type='era'"``.
    """
    warnings.warn(
        f"{options} given without eras (or with a single era): every "
        "era-aware option reduces to its pooled behaviour. "
        "Pass fit(..., eras=...) to use it.",
        UserWarning,
        stacklevel=4,  # warn_single_era < fit < scikit-learn's fit wrapper < caller
    )
