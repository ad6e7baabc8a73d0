"""A node's split from sums reduced across workers (docs/distributed.md).

Each worker holds whole eras. For a node it builds the per-era histograms
of its rows (the engine's ``HistogramBuilder``, in ``_worker.EraShard``;
:func:`era_histograms` is their NumPy reference) and turns them into its
share of the reduction with the engine's kernel
(``_engine._era_reduce.era_partials``; :func:`worker_partials` is its NumPy
reference, written from docs/criteria.md): the pooled histogram, and,
under the era criteria, one vector per candidate of era sums (the sum of
the per-era gains, of the eras' directions and of their children's
scores, or the Boltzmann sums with the worker's own shift, or the
per-candidate maximum or minimum). :func:`combine` adds the workers'
shares (the Boltzmann sums rescaled exactly to the common shift) and
:func:`best_split` chooses the split with the rules of docs/criteria.md:
the engine's eligibility (``min_samples_leaf``, the minimum hessian, a
positive gain, pooled progress under the era criteria) and its
tie-breaking (the largest score, then, under ``directional``, the integer
``|sum_e d_e|``, ``S_era`` and the pooled gain; a complete tie goes to the
first candidate in scan order).

The driver's choice is NumPy: the trees are the engine's up to the
rounding of sums taken in another order (a near tie may turn; the tests
compare the trees).
"""

from dataclasses import dataclass

import numpy as np

#: The engine's constants (``_common.MIN_HESSIAN_TO_SPLIT``, ``_tuning.h``).
MIN_HESSIAN_TO_SPLIT = 1e-3
POOLED_PROGRESS_RTOL = 1e-9


@dataclass(frozen=True)
class Candidates:
    """Every candidate split of every feature, in the engine's scan order.

    For each feature: the missing values right at bins ``0 .. nb - 2``
    (and ``nb - 1``, every value left, when the feature has missing
    values), then the missing values left: on the pooled path at bins
    ``nb - 2`` down to ``0`` (scikit-learn's right-to-left scan), on the
    era-aware path at bins ``0 .. nb - 2`` (the per-era scan's order).
    Of equal candidates, the first in this order wins. A categorical
    feature has its cells but no candidates here: its candidates are a
    node's order of its categories (``_categorical``).
    """

    feature: np.ndarray
    bin: np.ndarray
    missing_left: np.ndarray
    # where each candidate's left sum is read: a cumulative bin, plus the
    # missing bin or not
    width: int
    # the histogram cells that exist (n_features, width): each feature's
    # bins, and its missing-value bin only when it has missing values (the
    # engine's layout); the pooled histogram is sent as these cells only
    cells: np.ndarray

    @classmethod
    def of(cls, n_bins_non_missing, has_missing, era_path, is_categorical=None):
        feats, bins, miss = [], [], []
        for f, nb in enumerate(np.asarray(n_bins_non_missing, dtype=np.int64)):
            if is_categorical is not None and is_categorical[f]:
                continue
            right = np.arange(nb - 1 + int(has_missing[f]))
            feats += [np.full(right.size, f)]
            bins += [right]
            miss += [np.zeros(right.size, dtype=bool)]
            if has_missing[f]:
                left = np.arange(nb - 1)
                if not era_path:
                    left = left[::-1]
                feats += [np.full(left.size, f)]
                bins += [left]
                miss += [np.ones(left.size, dtype=bool)]
        width = int(np.max(n_bins_non_missing)) + 1
        nb = np.asarray(n_bins_non_missing, dtype=np.int64)
        last = nb + np.asarray(has_missing, dtype=np.int64)
        cells = np.arange(width)[None, :] < last[:, None]
        return cls(
            np.concatenate(feats or [[]]).astype(np.int64),
            np.concatenate(bins or [[]]).astype(np.int64),
            np.concatenate(miss or [[]]).astype(bool),
            width,
            cells,
        )

    def unpack(self, packed):
        """A pooled histogram sent as its cells, back to (n_features,
        width)."""
        out = np.zeros(self.cells.shape, dtype=packed.dtype)
        out[self.cells] = packed
        return out

    def left_sums(self, hist, n_bins_non_missing):
        """The left side's sums of every candidate.

        ``hist`` has shape ``(n_features, ..., width)``, the missing-value
        bin of feature ``f`` at index ``n_bins_non_missing[f]``; returns
        shape ``(..., n_candidates)``."""
        nb = np.asarray(n_bins_non_missing, dtype=np.int64)
        cum = np.cumsum(hist, axis=-1)
        miss = np.take_along_axis(
            hist, nb.reshape((-1,) + (1,) * (hist.ndim - 1)), axis=-1
        )[..., 0]
        f, b = self.feature, self.bin
        out = np.moveaxis(cum[f, ..., b], 0, -1) if hist.ndim > 2 else cum[f, b]
        if hist.ndim > 2:
            out = out + np.where(self.missing_left, np.moveaxis(miss[f], 0, -1), 0.0)
        else:
            out = out + np.where(self.missing_left, miss[f], 0.0)
        return out


def era_histograms(X_binned, rows, era_codes, n_eras, gradients, hessians, width):
    """The per-era histograms of a node's rows: gradient, hessian and row
    sums of shape ``(3, n_features, n_eras, width)``, float64, the layout
    :func:`worker_partials` reads.

    A NumPy reference (``np.bincount`` per feature): the workers build the
    same sums with the engine's ``HistogramBuilder``
    (``_worker.EraShard``)."""
    codes = era_codes[rows].astype(np.int64) * width
    g = gradients[rows].astype(np.float64)
    h = None if hessians is None else hessians[rows].astype(np.float64)
    size = n_eras * width
    n_features = X_binned.shape[1]
    out = np.zeros((3, n_features, n_eras, width))
    for f in range(n_features):
        key = codes + X_binned[rows, f]
        out[0, f] = np.bincount(key, weights=g, minlength=size).reshape(n_eras, width)
        out[2, f] = np.bincount(key, minlength=size).reshape(n_eras, width)
        if h is not None:
            out[1, f] = np.bincount(key, weights=h, minlength=size).reshape(
                n_eras, width
            )
    if h is None:
        # constant hessians (of 1): the hessian sums are the row counts
        out[1] = out[2]
    return out


def _score(G, H, lam):
    d = H + lam
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(d == 0, 0.0, G * G / np.where(d == 0, 1.0, d))


def _directions(GL, HL, GR, HR, lam):
    """sign(v_L - v_R) without dividing (docs/criteria.md, directional)."""
    aL, aR = HL + lam, HR + lam
    both = np.sign(GR * aL - GL * aR) * np.sign(aL * aR)
    d = np.where(aL == 0, np.sign(GR) * np.sign(aR), both)
    d = np.where(aR == 0, -np.sign(GL) * np.sign(aL), d)
    return np.where((aL == 0) & (aR == 0), 0.0, d)


def _newton(G, H, lam):
    d = H + lam
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(d == 0, 0.0, -G / np.where(d == 0, 1.0, d))


def _value_variance_parts(GL, HL, nL, G_e, H_e, lam):
    """A worker's part of the invariance penalty's variance of
    ``CR_e = v(G_Le, H_Le) - v(G_e, H_e)`` over its eras with rows on the
    left: their count, mean and sum of squared deviations from that mean
    (combined exactly across workers by :func:`combine`)."""
    has_left = nL > 0
    cr = np.where(has_left, _newton(GL, HL, lam) - _newton(G_e, H_e, lam)[:, None], 0)
    count = has_left.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, cr.sum(axis=0) / np.maximum(count, 1), 0.0)
    m2 = np.where(has_left, (cr - mean) ** 2, 0.0).sum(axis=0)
    return {"cr_count": count.astype(np.int32), "cr_mean": mean, "cr_m2": m2}


def worker_partials(hist, cands, n_bins_non_missing, settings):
    """One worker's share of a node's reduction.

    Parameters
    ----------
    hist : ndarray of shape (3, n_features, n_eras, width)
        :func:`era_histograms` of the worker's eras.
    cands : Candidates
    settings : dict
        ``split_type``, ``alpha``, ``lam``, ``min_rows_per_era_split``,
        ``constant_hessian``, ``era_path`` (the era-aware machinery: an
        era criterion or an era option), ``min_samples_leaf_per_era``,
        ``irf_penalty`` and ``min_agreement`` (0: off).

    Returns
    -------
    partials : dict of ndarray
        the pooled histogram ``pooled_g``, ``pooled_n`` (int32) and,
        unless the hessians are constant, ``pooled_h``, each feature's
        cells one after the other (``Candidates.cells``), always; with
        the per-era minimum, the fewest rows any of the worker's
        splittable eras keeps on a side (``min_side``); under the era
        criteria one vector of the candidates per sum the criterion needs,
        and the worker's number of splittable eras ``M``.
    """
    pooled = hist.sum(axis=2)[:, cands.cells]
    out = {"pooled_g": pooled[0], "pooled_n": pooled[2].astype(np.int32)}
    if not settings["constant_hessian"]:
        out["pooled_h"] = pooled[1]
    if not settings["era_path"]:
        return out
    out.update(
        era_sums(hist, lambda h: cands.left_sums(h, n_bins_non_missing), settings)
    )
    return out


def era_sums(hist, left_sums, settings):
    """The era sums of one worker's candidates (:func:`worker_partials`
    past the pooled histogram): ``left_sums(h)`` gives the left side's
    sums of every candidate from the per-era sums ``h`` of shape
    ``(n_features, n_eras, width)``, as shape ``(n_eras, n_candidates)``
    (the numeric candidates', or a node's categorical ones',
    ``_categorical``)."""
    out = {}
    lam, alpha = settings["lam"], settings["alpha"]
    # counts of at most E eras go in the narrowest integers that hold them
    era_count = np.min_scalar_type(-hist.shape[2] - 1)
    n_e = hist[2, 0].sum(axis=-1)
    keep = n_e >= settings["min_rows_per_era_split"]
    hist = hist[:, :, keep]
    nL = left_sums(hist[2])
    nR = n_e[keep][:, None] - nL
    if settings["min_samples_leaf_per_era"]:
        fewest = np.minimum(nL, nR).min(axis=0, initial=np.iinfo(np.int32).max)
        out["min_side"] = fewest.astype(np.int32)
    irf = settings["irf_penalty"] > 0
    agree = settings["min_agreement"] > 0
    original = settings["split_type"] == "original"
    if original and not irf and not agree:
        return out
    out["M"] = np.array([keep.sum()], dtype=np.int32)
    G_e, H_e = hist[0, 0].sum(axis=-1), hist[1, 0].sum(axis=-1)
    GL, HL = left_sums(hist[0]), left_sums(hist[1])
    if irf:
        out.update(_value_variance_parts(GL, HL, nL, G_e, H_e, lam))
        out["cr_count"] = out["cr_count"].astype(era_count)
    GR, HR = G_e[:, None] - GL, H_e[:, None] - HL
    split = (nL > 0) & (nR > 0)
    if agree or settings["split_type"] == "directional":
        d = np.where(split, _directions(GL, HL, GR, HR, lam), 0.0)
    if agree:
        # the eras going each way: the driver counts those that agree with
        # the pooled direction, known only from the reduced sums
        out["d_up"] = (d > 0).sum(axis=0).astype(era_count)
        out["d_down"] = (d < 0).sum(axis=0).astype(era_count)
    if original:
        return out
    children = _score(GL, HL, lam) + _score(GR, HR, lam)
    era_score = _score(G_e, H_e, lam)
    gains = np.where(split, children - era_score[:, None], 0.0)
    out["era_score"] = np.array([era_score.sum()])
    if settings["split_type"] == "directional":
        out["dsum"] = d.sum(axis=0).astype(era_count)
    if alpha == 0:
        # the sum of the per-era gains (an era with an empty side gains 0
        # exactly, as in the engine); with the eras' own scores it also
        # gives C(s) of pooled progress (such an era's children score is
        # its score)
        out["gain_sum"] = gains.sum(axis=0)
        return out
    # C(s) only scales pooled progress's tolerance (1e-9 of it): float32
    # moves that tolerance by under 1e-16 of C(s), below the sums' rounding
    out["children"] = children.sum(axis=0).astype(np.float32)
    n_cand = nL.shape[-1]
    if np.isinf(alpha):
        if gains.shape[0] == 0:
            out["extreme"] = np.full(n_cand, -alpha)
        else:
            out["extreme"] = gains.max(axis=0) if alpha > 0 else gains.min(axis=0)
    elif gains.shape[0] == 0:
        out["shift"] = np.full(n_cand, -np.sign(alpha) * np.inf, dtype=np.float32)
        out["num"] = out["den"] = np.zeros(n_cand)
    else:
        c = gains.max(axis=0) if alpha > 0 else gains.min(axis=0)
        # the shift sent as float32, rounded away from the gains so that
        # every exponent stays <= 0: the shift cancels in S whatever it is
        c32 = c.astype(np.float32)
        toward = np.float32(np.inf if alpha > 0 else -np.inf)
        c32 = np.where(
            (c32.astype(np.float64) - c) * np.sign(alpha) < 0,
            np.nextafter(c32, toward),
            c32,
        )
        w = np.exp(alpha * (gains - c32.astype(np.float64)))
        out["shift"], out["num"], out["den"] = c32, (gains * w).sum(0), w.sum(0)
    return out


def combine(parts, alpha):
    """The workers' shares added: sums, extremes, and the Boltzmann sums
    rescaled to the common shift (each worker's ``exp(alpha (c_w - c))``)."""
    out = {}
    for name in parts[0]:
        values = [p[name] for p in parts]
        if name == "extreme":
            out[name] = np.max(values, 0) if alpha > 0 else np.min(values, 0)
        elif name == "min_side":
            out[name] = np.min(values, 0)
        elif name in ("shift", "num", "den", "cr_mean", "cr_m2"):
            continue
        else:
            out[name] = np.sum(values, axis=0)
    if "cr_mean" in parts[0]:
        # the variance's parts, combined exactly (Chan et al.'s update)
        counts = np.array([p["cr_count"] for p in parts], dtype=np.float64)
        means = np.array([p["cr_mean"] for p in parts])
        total = counts.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = np.where(total > 0, (counts * means).sum(0) / total, 0.0)
        spread = (counts * (means - mean) ** 2).sum(axis=0)
        out["cr_mean"] = mean
        out["cr_m2"] = sum(p["cr_m2"] for p in parts) + spread
    if "shift" in parts[0]:
        shifts = np.array([p["shift"] for p in parts], dtype=np.float64)
        c = shifts.max(0) if alpha > 0 else shifts.min(0)
        with np.errstate(invalid="ignore"):
            scale = np.where(np.isinf(shifts), 0.0, np.exp(alpha * (shifts - c)))
        out["num"] = sum(s * p["num"] for s, p in zip(scale, parts))
        out["den"] = sum(s * p["den"] for s, p in zip(scale, parts))
    return out


@dataclass
class Split:
    """The chosen split of a node, with its pooled sums."""

    found: bool
    feature_idx: int = 0
    bin_idx: int = 0
    missing_go_to_left: bool = False
    gain: float = -1.0
    priority: tuple = (-1.0, 0.0)
    sum_gradient_left: float = 0.0
    sum_hessian_left: float = 0.0
    sum_gradient_right: float = 0.0
    sum_hessian_right: float = 0.0
    n_samples_left: int = 0
    n_samples_right: int = 0
    value_left: float = 0.0
    value_right: float = 0.0
    is_categorical: bool = False
    left_cat_bitset: object = None


def pooled_histograms(reduced, cands):
    """The reduced pooled histogram as ``(n_features, width)`` arrays:
    gradient (``g``), hessian (``h``: the row counts where the hessians
    are constant) and row (``n``, float64) sums."""
    n_hist = cands.unpack(reduced["pooled_n"]).astype(np.float64)
    return {
        "g": cands.unpack(reduced["pooled_g"]),
        "h": n_hist if "pooled_h" not in reduced else cands.unpack(reduced["pooled_h"]),
        "n": n_hist,
    }


def node_value(G, H, lam):
    """A node's value from pooled sums, as the engine's ``node_value``."""
    return -G / (H + lam + 1e-15)


def bounded_value(G, H, lam, lower=-np.inf, upper=np.inf):
    """:func:`node_value` clipped to the bounds of a monotonic constraint
    (the engine's ``node_value`` with bounds)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.clip(node_value(G, H, lam), lower, upper)


def best_split(
    reduced,
    cands,
    n_bins_non_missing,
    node,
    settings,
    features=None,
    *,
    value=None,
    bounds=(-np.inf, np.inf),
    monotonic_cst=None,
    categorical=None,
):
    """The split docs/criteria.md chooses from the reduced sums.

    ``node`` is ``(n_samples, sum_gradients, sum_hessians)``, ``settings``
    as in :func:`worker_partials` plus ``min_samples_leaf``; ``features``
    a mask of the features the node may split on (None: all).

    ``value`` is the node's value, as the grower holds it (its parent's
    bounded value of it, 0 at the root; None: from its sums): the pooled
    path's gain is ``G v - G_L v_L - G_R v_R``. ``bounds`` are the
    children's value bounds and ``monotonic_cst`` the features'
    constraints (int8, 1 increasing, -1 decreasing; None: none): the
    children's values are clipped to the bounds, and a candidate whose
    clipped values go against its feature's constraint is not eligible
    (the engine's ``node_value`` and ``monotonic_ok``).

    ``categorical`` (``_categorical.NodeCategories``, or None) holds the
    node's categorical candidates and their reduced era sums: they join
    the numeric ones in the engine's scan order.
    """
    n, G, H = node
    lam, alpha = settings["lam"], settings["alpha"]
    lower, upper = bounds
    pooled = pooled_histograms(reduced, cands)
    GL, HL, nL = (
        cands.left_sums(pooled[key], n_bins_non_missing) for key in ("g", "h", "n")
    )
    feature = cands.feature
    if categorical is not None:
        GL, HL, nL, feature, reduced = categorical.joined(
            pooled, GL, HL, nL, feature, reduced
        )
    GR, HR, nR = G - GL, H - HL, n - nL
    msl = settings["min_samples_leaf"]
    ok = (nL >= msl) & (nR >= msl)
    ok &= (HL >= MIN_HESSIAN_TO_SPLIT) & (HR >= MIN_HESSIAN_TO_SPLIT)
    vL = bounded_value(GL, HL, lam, lower, upper)
    vR = bounded_value(GR, HR, lam, lower, upper)
    if monotonic_cst is not None:
        mono = np.asarray(monotonic_cst)[feature]
        ok &= ~(((mono == 1) & (vL > vR)) | ((mono == -1) & (vL < vR)))
    if features is not None:
        ok &= features[feature]
    if "min_side" in reduced:
        ok &= reduced["min_side"] >= settings["min_samples_leaf_per_era"]
    penalty = 0.0
    if "cr_m2" in reduced:
        k = reduced["cr_count"]
        variance = np.where(k >= 2, reduced["cr_m2"] / np.maximum(k, 1), 0.0)
        penalty = settings["irf_penalty"] * H * variance
    if "d_up" in reduced:
        # A(s) of docs/criteria.md: the share of the node's eras whose
        # direction is the pooled one
        pooled = _directions(GL, HL, GR, HR, lam)
        agreeing = np.where(
            pooled > 0, reduced["d_up"], np.where(pooled < 0, reduced["d_down"], 0)
        )
        M = int(reduced["M"][0])
        share = agreeing / M if M else np.zeros_like(GL)
        ok &= share >= settings["min_agreement"]
    split_type = settings["split_type"]
    if split_type == "original" and settings["era_path"]:
        # the per-era path's pooled gain, the score difference
        gain = _score(GL, HL, lam) + _score(GR, HR, lam) - _score(G, H, lam)
        crit = gain - penalty
        ok &= crit > 0
        keys = [crit]
        priority_of = lambda i: (float(crit[i]), 0.0)  # noqa: E731
    elif split_type == "original":
        # scikit-learn's form: G v - G_L v_L - G_R v_R, from the node's
        # value as the grower holds it and the children's bounded values
        v = node_value(G, H, lam) if value is None else value
        gain = G * v - GL * vL - GR * vR
        ok &= gain > 0
        keys = [gain]
        priority_of = lambda i: (float(gain[i]), 0.0)  # noqa: E731
    else:
        gain = _score(GL, HL, lam) + _score(GR, HR, lam) - _score(G, H, lam)
        children = (
            reduced["gain_sum"] + reduced["era_score"][0]
            if "gain_sum" in reduced
            else reduced["children"].astype(np.float64)
        )
        ok &= (gain > 0) & (gain > POOLED_PROGRESS_RTOL * children)
        M = int(reduced["M"][0])
        if M == 0:
            S = np.zeros_like(gain)
        elif alpha == 0:
            S = reduced["gain_sum"] / M
        elif np.isinf(alpha):
            S = reduced["extreme"]
        else:
            S = reduced["num"] / reduced["den"]
        w = settings["pooled_weight"]
        if w > 0 and M > 0:
            # the era score blended with the pooled gain per era
            S = (1 - w) * S + w * (gain / M)
        S = S - penalty
        if split_type == "era":
            ok &= S > 0
            keys = [S]
            priority_of = lambda i: (float(S[i]), 0.0)  # noqa: E731
        else:
            D = np.abs(np.rint(reduced["dsum"]))
            ok &= D > 0
            keys = [D, S, gain]
            priority_of = lambda i: (float(D[i]) / M, float(S[i]))  # noqa: E731
    candidates = np.flatnonzero(ok)
    if candidates.size == 0:
        return Split(found=False)
    for key in keys:
        values = key[candidates]
        candidates = candidates[values == values.max()]
    i = int(candidates[0])  # the first in scan order
    j = i if categorical is None else categorical.numeric(i)
    if j is not None:
        where = dict(
            bin_idx=int(cands.bin[j]), missing_go_to_left=bool(cands.missing_left[j])
        )
    else:
        where = categorical.split_of(i)
    return Split(
        found=True,
        feature_idx=int(feature[i]),
        **where,
        gain=float(gain[i]),
        priority=priority_of(i),
        sum_gradient_left=float(GL[i]),
        sum_hessian_left=float(HL[i]),
        sum_gradient_right=float(GR[i]),
        sum_hessian_right=float(HR[i]),
        n_samples_left=round(float(nL[i])),
        n_samples_right=round(float(nR[i])),
        value_left=float(vL[i]),
        value_right=float(vR[i]),
    )
