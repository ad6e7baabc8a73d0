"""Validation and encoding of era labels; the era-grouped validation split."""

import numbers
import os
import re
import sys
import warnings
from collections.abc import Mapping

import numpy as np

from ._engine._common import era_options_set


def _package_folders():
    """The folders of eraboost and of the libraries that call its fit."""
    import joblib
    import sklearn

    return tuple(
        os.path.dirname(os.path.abspath(m.__file__)) + os.sep
        for m in (sys.modules[__package__], sklearn, joblib)
    )


def user_stacklevel():
    """The ``stacklevel`` that makes a warning point at the user's line.

    For ``warnings.warn`` called in the function that calls this one: the
    first frame up the stack outside eraboost, scikit-learn and joblib (a
    fit's steps, scikit-learn's ``fit`` wrapper, ``cross_validate`` and its
    ``Parallel``), whatever the depth of the call.
    """
    inside = _package_folders()
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and os.path.abspath(
        frame.f_code.co_filename
    ).startswith(inside):
        frame, level = frame.f_back, level + 1
    return level


class EncodedEras:
    """The eras of some rows, checked and encoded once.

    A fit encodes the user's eras once (:meth:`from_labels`) and carries
    this object through the whole-era validation split (:meth:`subset`) to
    the histograms and the early-stopping scorers. Passing it where eras are
    expected skips the checks and the encoding; ``np.asarray`` of it gives
    the labels of the rows.

    Parameters
    ----------
    codes : ndarray of int32, shape (n_samples,)
        Codes ``0 .. n_eras - 1``, each of them used.
    labels : ndarray, shape (n_eras,)
        The labels of the codes, in their natural order (:func:`check_eras`).
    """

    def __init__(self, codes, labels):
        self.codes = codes
        self.labels = labels

    @classmethod
    def from_labels(cls, eras, n_samples, name="eras"):
        """Check and encode the era label of each of ``n_samples`` rows."""
        return cls(*check_eras(eras, n_samples, name=name))

    @classmethod
    def from_codes(cls, codes, labels):
        """From codes into ``labels`` of which only some may be used."""
        used, codes = np.unique(codes, return_inverse=True)
        return cls(codes.astype(np.int32).ravel(), np.asarray(labels)[used])

    def subset(self, rows):
        """The eras of some of the rows (a mask or indices), codes compacted
        to the eras they hold."""
        return EncodedEras.from_codes(self.codes[rows], self.labels)

    @property
    def n_eras(self):
        """Number of distinct eras."""
        return self.labels.shape[0]

    def __len__(self):
        return self.codes.shape[0]

    def __array__(self, dtype=None, copy=None):
        """The labels of the rows, for code that reads eras as an array."""
        labels = self.labels[self.codes]
        return labels if dtype is None else labels.astype(dtype)


def check_eras(eras, n_samples, name="eras"):
    """Validate era labels and encode them as int32 codes 0..n_eras-1.

    Parameters
    ----------
    eras : 1-D array-like of hashable labels (ints, strings, dates
        (``datetime64``, pandas Timestamps or Periods), pandas Series or
        Categorical, list), length ``n_samples``.
    n_samples : int
    name : str
        Name used in error messages.

    Returns
    -------
    codes : ndarray of int32, shape (n_samples,)
    labels : ndarray, shape (n_eras,)
        The distinct labels in their natural order (:func:`natural_order`:
        ``"era2"`` before ``"era10"``, numeric strings by value, dates in
        time); ``labels[codes]`` gives back the input.
    """
    if isinstance(eras, str):
        raise ValueError(
            f"{name}={eras!r} is a string, not one era label per row: a "
            f"column name is not accepted; pass the column's values, e.g. "
            f"{name}=df[{eras!r}]."
        )
    if isinstance(eras, EncodedEras):
        if len(eras) != n_samples:
            raise ValueError(
                f"{name} has {len(eras)} labels but X has {n_samples} rows; "
                "give exactly one era label per row."
            )
        return eras.codes, eras.labels
    arr = _as_label_array(eras)
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
        bad = [v for v in arr if v is None or (isinstance(v, numbers.Real) and v != v)]
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
        return _in_natural_order(codes.astype(np.int32).ravel(), labels)
    elif arr.dtype.kind == "M":
        if np.isnat(arr).any():
            raise ValueError(f"{name} contains NaT; every row needs an era label.")
    elif arr.dtype.kind not in "iubUS":
        raise ValueError(f"{name} has unsupported dtype {arr.dtype}.")
    labels, codes = np.unique(arr, return_inverse=True)
    return _in_natural_order(codes.astype(np.int32).ravel(), labels)


def _as_label_array(eras):
    """``eras`` as an array, mixed Python labels kept as objects.

    ``np.asarray([1, "1"])`` makes strings of every label, one era of two
    labels: a sequence that mixes text with other labels becomes an object
    array instead, refused as labels of more than one type (as the same
    labels given as an object array are).
    """
    arr = np.asarray(eras)
    if arr.ndim == 1 and arr.dtype.kind in "US" and not isinstance(eras, np.ndarray):
        kind = str if arr.dtype.kind == "U" else bytes
        values = list(eras)
        if not all(isinstance(v, kind) for v in values):
            arr = np.empty(len(values), dtype=object)
            arr[:] = values
    return arr


_DIGITS = re.compile(r"(\d+)")


def _natural_key(text):
    """Sort key of a string: runs of digits compare as numbers.

    ``"era2" < "era10"``; each part is tagged so that numbers and text never
    compare with each other.
    """
    return tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part)
        for part in _DIGITS.split(text)
    )


def natural_order(labels):
    """The permutation that puts distinct era labels in their natural order.

    Numbers and dates keep their own order. Strings that all read as numbers
    (``"9"``, ``"10"``, ``"1e3"``) are ordered by value; other strings
    naturally, runs of digits compared as numbers (``"era2"`` before
    ``"era10"``; ISO dates such as ``"2024-01-31"`` stay in time order).
    Other objects (pandas Periods, Timestamps...) keep their sorted order.

    Parameters
    ----------
    labels : ndarray of shape (n_eras,)
        Distinct labels, sorted (``np.unique``).

    Returns
    -------
    order : ndarray of intp, shape (n_eras,)
    """
    identity = np.arange(labels.size)
    if labels.dtype.kind not in "USO":
        return identity
    if labels.dtype.kind == "S":
        texts = [v.decode("utf-8", "replace") for v in labels]
    elif all(isinstance(v, str) for v in labels):
        texts = list(labels)
    else:
        return identity
    try:
        values = np.array([float(t) for t in texts])
    except ValueError:
        values = None
    if values is not None and not np.isnan(values).any():
        return np.argsort(values, kind="stable")
    return np.array(
        sorted(identity, key=lambda i: (_natural_key(texts[i]), texts[i])),
        dtype=np.intp,
    )


def _in_natural_order(codes, labels):
    """Renumber codes so that code order is the labels' natural order."""
    order = natural_order(labels)
    if np.array_equal(order, np.arange(labels.size)):
        return codes, labels
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return rank[codes].astype(np.int32), labels[order]


def era_train_val_split(
    codes, validation_fraction, random_state, y=None, n_trials=50, classes=None
):
    """Hold out whole eras for validation.

    Eras are taken in a seeded random order until the held-out rows reach
    ``validation_fraction`` of the rows (a float in (0, 1) or a number of
    rows); the stopping point closest to the target is kept. At least one era
    stays on each side.

    With class labels ``y`` (classification), the split must also keep every
    class on both sides: ``n_trials`` seeded era orders are tried (the first
    is the order used without ``y``) and, among the stopping points of all
    orders in which every class occurs both in the training eras and in the
    held-out eras, the one whose held-out rows are closest to the target is
    kept; ties go to the split whose held-out class proportions are closest
    to those of all rows, then to the earliest order.

    Parameters
    ----------
    codes : ndarray of int32, shape (n_samples,)
        Era codes from :func:`check_eras`.
    validation_fraction : float or int
    random_state : int
    y : ndarray of shape (n_samples,), default=None
        Encoded class labels ``0 .. n_classes - 1``.
    n_trials : int, default=50
        Era orders tried when ``y`` is given.
    classes : ndarray of shape (n_classes,), default=None
        The class label of each code of ``y``, for error messages (the
        codes themselves when None).

    Returns
    -------
    val_mask : ndarray of bool, shape (n_samples,)

    Raises
    ------
    ValueError
        If there are fewer than two eras, or (with ``y``) if no split of
        the eras keeps every class on both sides.
    """
    per_era = None
    if y is not None:
        y = np.asarray(y).astype(np.intp)
        # rows of each class in each era, shape (n_era_codes, n_classes)
        per_era = np.zeros((np.max(codes) + 1, int(y.max()) + 1), dtype=np.int64)
        np.add.at(per_era, (codes, y), 1)
    val_eras = held_out_eras(
        np.bincount(codes),
        validation_fraction,
        random_state,
        per_era,
        n_trials,
        classes,
    )
    return val_eras[codes]


def held_out_eras(
    counts, validation_fraction, random_state, per_era=None, n_trials=50, classes=None
):
    """The eras :func:`era_train_val_split` holds out, from the rows of each
    era (``counts``) and, for a classifier, of each class in each era
    (``per_era``, shape (n_era_codes, n_classes)); a mask of the era codes.

    The draw needs only these counts: a fit whose rows are spread over
    several machines (``eraboost.dask``) holds out the same eras.
    """
    n = int(counts.sum())
    present = np.flatnonzero(counts)
    if present.size < 2:
        raise ValueError("need at least two eras to hold out whole eras")
    target = (
        validation_fraction * n
        if isinstance(validation_fraction, float)
        else float(validation_fraction)
    )
    rng = np.random.RandomState(random_state)
    val_eras = np.zeros(counts.size, dtype=bool)
    if per_era is None:
        order = rng.permutation(present)
        cum = np.cumsum(counts[order])
        # number of eras held out: 1 .. len-1, the one whose rows are closest
        k = int(np.argmin(np.abs(cum[:-1] - target))) + 1
        val_eras[order[:k]] = True
        return val_eras

    n_classes = per_era.shape[1]
    total = per_era.sum(axis=0)
    share = total / n
    best = None  # (row distance, class distance, trial, order, k)
    for trial in range(n_trials):
        order = rng.permutation(present)
        cum_cls = np.cumsum(per_era[order], axis=0)[:-1]  # held-out prefixes
        ok = (cum_cls > 0).all(axis=1) & (cum_cls < total).all(axis=1)
        if not ok.any():
            continue
        rows = cum_cls.sum(axis=1)
        row_dist = np.abs(rows - target)
        cls_dist = np.abs(cum_cls / rows[:, None] - share).sum(axis=1)
        cand = np.flatnonzero(ok)
        k = cand[np.lexsort((cls_dist[cand], row_dist[cand]))[0]]
        key = (row_dist[k], cls_dist[k], trial)
        if best is None or key < best[0]:
            best = (key, order, k + 1)
    if best is None:
        single = [c for c in range(n_classes) if np.count_nonzero(per_era[:, c]) < 2]
        if classes is not None:
            single = np.asarray(classes)[single]
        why = (
            f"{len(single)} class(es) occur in a single era: {label_list(single)}"
            if len(single)
            else f"no split found in {n_trials} random orders of the eras"
        )
        raise ValueError(
            "Cannot hold out whole eras for early stopping with every class "
            f"in both the training and the validation eras: {why}. Pass "
            "X_val, y_val and eras_val to fit, set validation_fraction=None, "
            "or set early_stopping=False."
        )
    _, order, k = best
    val_eras[order[:k]] = True
    return val_eras


def group_eras(encoded, era_groups, fit_eras=None, name="eras"):
    """The eras of some rows replaced by their groups (``era_groups``,
    docs/criteria.md, "Era groups").

    Parameters
    ----------
    encoded : EncodedEras or None
        The eras of the rows; None is returned as is.
    era_groups : int, mapping or None
        None: each era its own group (``encoded`` is returned). An int k:
        the eras, in their natural order, cut into k contiguous groups of
        near-equal numbers of eras, labelled 0 .. k - 1 (the first
        ``n_eras % k`` groups hold one era more). A mapping: the group of
        each era, every era of the rows a key.
    fit_eras : EncodedEras or None, default=None
        With an int, the eras of the training rows, whose cut also groups
        these rows (validation eras): an era joins the group of the last
        training era at or before it in natural order (the first group
        when it comes before them all). None: these rows are the training
        rows.
    name : str, default="eras"
        Name of the eras in error messages.

    Returns
    -------
    grouped : EncodedEras or None
    """
    if encoded is None or era_groups is None:
        return encoded
    labels = encoded.labels
    if isinstance(era_groups, Mapping):
        missing, values = [], []
        for label in labels:
            key = _mapping_key(era_groups, label)
            if key is _MISSING:
                missing.append(label)
            else:
                values.append(era_groups[key])
        if missing:
            raise ValueError(
                f"era_groups is a mapping without a group for {len(missing)} "
                f"of the {labels.size} eras in {name}: {label_list(missing)}; "
                "give every era a group."
            )
        codes, group_labels = check_eras(
            _as_label_array(values), labels.size, name="era_groups' groups"
        )
        return EncodedEras(codes[encoded.codes], group_labels)
    k = int(era_groups)
    if fit_eras is None:
        if k > labels.size:
            raise ValueError(
                f"era_groups={k} asks for more groups than the {labels.size} "
                f"eras in {name}; give at most {labels.size} groups."
            )
        group_of = _cut(labels.size, k)
    else:
        group_of = _groups_by_cut(labels, fit_eras.labels, _cut(fit_eras.n_eras, k))
    used, codes = np.unique(group_of[encoded.codes], return_inverse=True)
    return EncodedEras(codes.astype(np.int32).ravel(), used)


_MISSING = object()


def _mapping_key(mapping, label):
    """The key of ``mapping`` for an era label (a NumPy scalar, or its
    Python value), or ``_MISSING``."""
    for key in (label, label.item() if isinstance(label, np.generic) else label):
        try:
            if key in mapping:
                return key
        except TypeError:
            continue
    return _MISSING


def _cut(n_eras, k):
    """The group (0 .. k - 1) of each of ``n_eras`` eras in order: k
    contiguous groups, the first ``n_eras % k`` one era longer."""
    sizes = np.full(k, n_eras // k)
    sizes[: n_eras % k] += 1
    return np.repeat(np.arange(k), sizes)


def _groups_by_cut(labels, fit_labels, fit_group):
    """The group of each of ``labels``: that of the last of ``fit_labels``
    at or before it in natural order (the first group before them all)."""
    try:
        union = np.concatenate([np.asarray(fit_labels), np.asarray(labels)])
    except (TypeError, ValueError):
        union = np.empty(len(fit_labels) + len(labels), dtype=object)
        union[:] = list(fit_labels) + list(labels)
    rank, _ = check_eras(union, union.size, name="the eras of fit and of eras_val")
    fit_rank = rank[: len(fit_labels)]
    order = np.argsort(fit_rank, kind="stable")
    at = np.searchsorted(fit_rank[order], rank[len(fit_labels) :], side="right") - 1
    return np.asarray(fit_group)[order][np.maximum(at, 0)]


def label_list(values, limit=10):
    """Labels as a Python list for messages, cut after ``limit`` of them.

    ``['apple', 'banana']``; numpy scalars are shown as the Python values
    they hold (``3``, not ``np.int64(3)``); a longer list ends with
    ``... and N more``.

    Parameters
    ----------
    values : iterable
        The labels.
    limit : int, default=10
        The most labels shown.

    Returns
    -------
    text : str
    """
    values = [v.item() if isinstance(v, np.generic) else v for v in values]
    shown = ", ".join(repr(v) for v in values[:limit])
    if len(values) > limit:
        shown += f", ... and {len(values) - limit} more"
    return f"[{shown}]"


def check_validation_size(validation_fraction, n_samples, n_eras_held_out, n_eras):
    """scikit-learn's checks of the validation size, for the whole-era split.

    An integer must be below the number of rows, a fraction must leave
    training rows (as ``train_test_split`` requires); a split that trains on
    a single era warns.
    """
    from numbers import Integral

    if isinstance(validation_fraction, Integral):
        if validation_fraction >= n_samples:
            raise ValueError(
                f"validation_fraction={validation_fraction} should be either "
                f"positive and smaller than the number of samples {n_samples} "
                "or a float in the (0, 1) range."
            )
    elif n_samples - np.ceil(validation_fraction * n_samples) < 1:
        raise ValueError(
            f"With n_samples={n_samples} and validation_fraction="
            f"{validation_fraction}, the training set would be empty: lower "
            "validation_fraction."
        )
    if n_eras - n_eras_held_out < 2 < n_eras:
        warnings.warn(
            f"validation_fraction={validation_fraction} holds out "
            f"{n_eras_held_out} of the {n_eras} eras for early stopping: the "
            "trees are trained on a single era. Lower validation_fraction, "
            "or pass X_val, y_val and eras_val.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )


def check_boltzmann_alpha(alpha):
    """``boltzmann_alpha`` as a float; NaN is refused.

    Parameters
    ----------
    alpha : float
        The estimator's ``boltzmann_alpha`` (``-np.inf`` and ``np.inf`` are
        allowed: the worst and the best era).

    Returns
    -------
    alpha : float
    """
    alpha = float(alpha)
    if np.isnan(alpha):
        raise ValueError(
            "boltzmann_alpha=nan is not allowed; use a float, -np.inf "
            "(minimum over eras), 0 (mean) or np.inf (maximum)."
        )
    return alpha


def era_options_text(estimator):
    """The era-aware options an estimator has set, as text (empty when none).

    Reads ``split_type``, ``irf_penalty``, ``min_samples_leaf_per_era`` and
    ``min_agreement`` (``_engine._common.era_options_set`` decides which are
    set).
    """
    names = era_options_set(
        estimator.split_type,
        estimator.irf_penalty,
        estimator.min_samples_leaf_per_era,
        getattr(estimator, "min_agreement", None),
    )
    return [f"{name}={getattr(estimator, name)!r}" for name in names]


def warn_single_era(options):
    """Warn that era-aware options run on a single era.

    ``options`` names them, e.g. ``"split_type='era'"``.
    """
    warnings.warn(
        f"{options} given without eras (or with a single era): every "
        "era-aware option reduces to its pooled behaviour. "
        "Pass fit(..., eras=...) to use it.",
        UserWarning,
        stacklevel=user_stacklevel(),
    )


def warn_unsplittable_eras(options, era_counts, min_samples_leaf_per_era):
    """Warn when no era has enough rows to be split (docs/criteria.md,
    "Splittable eras"): the era-aware options then take no part.

    Parameters
    ----------
    options : list of str
        The era-aware options set (:func:`era_options_text`); none: no
        warning.
    era_counts : ndarray of shape (n_eras,)
        Rows of each era.
    min_samples_leaf_per_era : int or None
    """
    if not options or era_counts.size < 2:
        return
    need = 2 * max(1, min_samples_leaf_per_era or 0)
    most = int(era_counts.max())
    if most >= need:
        return
    warnings.warn(
        f"every era has fewer than {need} rows (at most {most}; e.g. one row "
        "per era): no era can be split in any node (docs/criteria.md, "
        f"'Splittable eras'), so {', '.join(options)} have no era to work "
        "with: split_type='era' and 'directional' grow no split (a constant "
        "model). Give eras of several rows each (e.g. group dates into "
        "weeks), or fit without eras.",
        UserWarning,
        stacklevel=user_stacklevel(),
    )
