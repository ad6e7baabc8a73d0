"""A node's categorical candidates across workers (docs/distributed.md).

The engine's categorical scan (``_splitting.pyx``, ``_scan_categorical``;
docs/criteria.md "Categorical features"): the categories of a node, the
missing-value bin counting as one, with a pooled hessian sum of at least
``MIN_CAT_SUPPORT`` rows (``h * n / H``) are ordered by their pooled
``g / (h + MIN_CAT_SUPPORT)``; the prefixes of that order from the start
(up to ``ceil(n / 2)`` categories) and then from the end (up to
``ceil(n / 2) - 1``) are the candidates, each prefix going left, in that
scan order. Their per-era sums are taken along the order, bin after bin.

The order needs the node's pooled sums, known only once the workers'
histograms are reduced. So the driver orders each categorical feature from
the reduced pooled histogram (:meth:`CategoricalCandidates.of`); on the
pooled path that is all it needs. Under the era criteria it sends the
orders to the workers, which return their era sums of those candidates
(:func:`categorical_partials`, with ``_split.era_sums``, the NumPy
reference of the numeric candidates' sums);
``NodeCategories`` then joins them to the numeric candidates for
``_split.best_split``.
"""

from dataclasses import dataclass

import numpy as np

from ._split import era_sums

#: The engine's ``EB_MIN_CAT_SUPPORT`` (``_tuning.h``).
MIN_CAT_SUPPORT = 10.0

#: The sums sent once per node with the numeric candidates, not again
#: with the categorical ones.
_PER_NODE = ("M", "era_score")


def category_order(g, h, n, H):
    """The bins of one feature's categories that take part at a node, in
    the engine's order.

    ``g`` and ``h`` are the node's pooled gradient and hessian (row
    counts where the hessians are constant) sums of the feature's bins,
    its missing-value bin included where it has missing values; ``n`` and
    ``H`` the node's rows and hessian sum. The engine sorts with the C
    library's ``qsort`` and a comparator that never says equal (as
    scikit-learn): glibc's merge sort then puts equal values in the
    reverse of their bin order, as the stable sort of the reversed bins
    does.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        # as in C: a node of no hessian has an infinite support
        support = np.float64(n) / np.float64(H)
        used = np.flatnonzero(h * support >= MIN_CAT_SUPPORT)
    value = g[used] / (h[used] + MIN_CAT_SUPPORT)
    return used[::-1][np.argsort(value[::-1], kind="stable")]


@dataclass(frozen=True)
class CategoricalCandidates:
    """A node's categorical candidates, in the engine's scan order.

    ``orders`` holds, for each categorical feature scanned, ``(feature,
    order, n_start, n_end)``: its categories' bins in order (uint8), and
    how many prefixes are taken from the start and from the end. This is
    what the driver sends to the workers.
    """

    orders: tuple

    @classmethod
    def of(cls, pooled, features, n_bins_non_missing, has_missing, node):
        """The candidates of the categorical ``features`` (indices, in
        order) from the node's pooled histogram (``_split.
        pooled_histograms``) and its sums ``(n, G, H)``."""
        n, _, H = node
        orders = []
        for f in features:
            f = int(f)
            # the categories' bins, then the missing-value bin where the
            # feature has missing values
            end = int(n_bins_non_missing[f]) + int(has_missing[f])
            g, h = pooled["g"][f, :end], pooled["h"][f, :end]
            order = category_order(g, h, n, H)
            if order.size <= 1:
                continue
            n_start = (order.size + 1) // 2
            orders.append((f, order.astype(np.uint8), n_start, n_start - 1))
        return cls(tuple(orders))

    @property
    def feature(self):
        """The feature of each candidate."""
        return np.concatenate(
            [np.full(a + b, f, dtype=np.int64) for f, _, a, b in self.orders]
            or [np.zeros(0, dtype=np.int64)]
        )

    @property
    def size(self):
        return sum(a + b for _, _, a, b in self.orders)

    def _prefixes(self):
        for f, order, n_start, n_end in self.orders:
            yield f, order[:n_start]
            yield f, order[::-1][:n_end]

    def left_sums(self, hist):
        """The left side's sums of every candidate: ``hist`` has shape
        ``(n_features, ..., width)`` (a categorical feature ``f`` at
        ``hist[f]``), the result ``(..., n_candidates)``. Added bin after
        bin along the order, as the engine's scan adds them."""
        parts = [
            np.cumsum(hist[f][..., prefix.astype(np.intp)], axis=-1)
            for f, prefix in self._prefixes()
            if prefix.size
        ]
        if not parts:
            return np.zeros((*hist.shape[1:-1], 0))
        return np.concatenate(parts, axis=-1)

    def split_of(self, i, n_bins_non_missing):
        """The engine's split fields of candidate ``i``: the prefix's last
        step (``bin_idx``), the bins going left (a bitset of 8 uint32) and
        whether the missing values go left (their bin is in it)."""
        for f, prefix in self._prefixes():
            if i < prefix.size:
                left = prefix[: i + 1].astype(np.int64)
                bitset = np.zeros(8, dtype=np.uint32)
                np.bitwise_or.at(
                    bitset, left // 32, (np.uint32(1) << (left % 32)).astype(np.uint32)
                )
                return dict(
                    bin_idx=i,
                    missing_go_to_left=bool(np.any(left == n_bins_non_missing[f])),
                    is_categorical=True,
                    left_cat_bitset=bitset,
                )
            i -= prefix.size
        raise IndexError("no such categorical candidate")


class NodeCategories:
    """A node's categorical candidates and their reduced era sums (None on
    the pooled path), joined to its numeric candidates in the engine's
    scan order by ``_split.best_split``: features in order, a feature's
    candidates in its own order."""

    def __init__(self, cands, reduced, n_bins_non_missing):
        self.cands = cands
        self.reduced = reduced
        self.n_bins_non_missing = n_bins_non_missing

    def joined(self, pooled, GL, HL, nL, feature, reduced):
        """The numeric candidates' pooled left sums, features and reduced
        sums with the categorical candidates' joined in."""
        cat = [self.cands.left_sums(pooled[key]) for key in ("g", "h", "n")]
        cat_feature = self.cands.feature
        order = np.argsort(np.concatenate([cat_feature, feature]), kind="stable")
        # where each joined candidate comes from: a categorical one (its
        # index) or a numeric one (-1 - its index)
        self.source = np.concatenate(
            [np.arange(cat_feature.size), -1 - np.arange(feature.size)]
        )[order]
        out = [np.concatenate([c, x])[order] for c, x in zip(cat, (GL, HL, nL))]
        joined = dict(reduced)
        for name, values in (self.reduced or {}).items():
            joined[name] = np.concatenate([values, reduced[name]])[order]
        return (*out, np.concatenate([cat_feature, feature])[order], joined)

    def numeric(self, i):
        """The numeric candidate at joined index ``i``, or None for a
        categorical one."""
        s = int(self.source[i])
        return -1 - s if s < 0 else None

    def split_of(self, i):
        return self.cands.split_of(int(self.source[i]), self.n_bins_non_missing)


def categorical_partials(hist, orders, settings):
    """One worker's era sums of a node's categorical candidates
    (``CategoricalCandidates.orders``, as the driver sent them) from the
    node's per-era sums ``hist`` (``(3, n, n_eras, width)``, the first
    ``n`` features, the categorical ones among them): the vectors of
    ``_split.era_sums``, without the node's own sums (sent with the
    numeric candidates)."""
    cands = CategoricalCandidates(tuple(orders))
    out = era_sums(hist, cands.left_sums, settings)
    for name in _PER_NODE:
        out.pop(name, None)
    return out


__all__ = [
    "CategoricalCandidates",
    "NodeCategories",
    "categorical_partials",
    "category_order",
]
