"""What each worker holds during a fit: its whole eras (a Dask actor).

A :class:`EraShard` lives on one worker for the length of a fit. It holds
the rows of its eras (grouped by era, each era's rows in the order of the
user's table, as the single-machine fit groups them), their bins, the
raw predictions and the gradients, and, while a tree grows, the rows of
each open node and their per-era histograms. The driver calls it once per
tree step; each call returns only the worker's share of the reduction
(``_split.worker_partials``).

The histograms are the engine's: the single machine's
``HistogramBuilder`` (Cython, OpenMP on the worker's threads) over the
shard's rows, and the larger child of a split is its parent's histogram
minus the smaller child's where the single machine's grower subtracts
(the same children, chosen from the pooled row counts the driver sends):
each era's cells are then the single machine's.
"""

from time import perf_counter

import numpy as np

from .._engine._common import G_DTYPE
from .._engine._era_reduce import era_partials
from .._engine._histogram import (
    HistogramBuilder,
    histogram_cell_bytes,
    histogram_layout,
    histogram_rows_per_bin,
)
from .._engine._memory import HistogramPool, memory_budget
from .._engine._partition import split_indices, split_indices_categorical
from ._categorical import categorical_partials
from ._split import Candidates

#: The engine's cut-off for a node's histogram to be subtracted from
#: (``_histogram.SPARSE_ROWS_PER_CELL``): a node of fewer rows per cell of
#: a feature's block, on average, has both children built from their rows.
SPARSE_ROWS_PER_CELL = 0.25


def _concat(pieces, i):
    parts = [p[i] for p in pieces if p[i] is not None]
    return np.concatenate(parts) if parts else None


def _worker_threads():
    """The threads of the Dask worker this runs in (outside a worker: the
    engine's default)."""
    try:
        from distributed import get_worker

        return max(1, int(get_worker().state.nthreads))
    except (ImportError, ValueError, AttributeError):
        from .._engine._openmp import effective_n_threads

        return effective_n_threads()


class HistogramLayout:
    """Where the cells of the engine's histogram buffer go in the
    ``(3, n_features, n_eras, width)`` array ``_split.worker_partials``
    reads (gradient, hessian and row sums; the missing-value bin of
    feature ``f`` at ``n_bins_non_missing[f]``; zeros beyond a feature's
    bins).

    Parameters
    ----------
    offsets : ndarray of int64
        ``histogram_layout(block_bins, n_eras)``.
    block_bins : ndarray
        Cells of each feature's bin: its bins plus its missing-value bin
        when it has missing values.
    n_eras : int
        Eras of the histograms (1: pooled only).
    width : int
        ``Candidates.width``.
    constant_hessian : bool
    """

    def __init__(self, offsets, block_bins, n_eras, width, constant_hessian):
        rows = histogram_rows_per_bin(n_eras)
        cell = histogram_cell_bytes(constant_hessian)
        doubles = 1 if constant_hessian else 2
        dst, src_g, src_h, src_n = [], [], [], []
        for f, nb in enumerate(np.asarray(block_bins, dtype=np.int64)):
            e, b = np.meshgrid(np.arange(n_eras), np.arange(nb), indexing="ij")
            at = (b * rows + e).ravel()
            cells = int(offsets[f + 1] - offsets[f])
            # a block: its gradient sums (float64), its hessian sums unless
            # constant (float64), then its row counts (uint32)
            g0 = int(offsets[f]) * cell // 8
            dst.append(((f * n_eras + e) * width + b).ravel())
            src_g.append(g0 + at)
            src_h.append(g0 + cells + at)
            src_n.append(int(offsets[f]) * cell // 4 + 2 * doubles * cells + at)
        cat = lambda parts: np.concatenate(parts).astype(np.intp)  # noqa: E731
        self.dst, self.src_g, self.src_n = cat(dst), cat(src_g), cat(src_n)
        self.src_h = None if constant_hessian else cat(src_h)
        self.shape = (3, len(block_bins), n_eras, width)

    def dense(self, hist):
        """The per-era sums of the buffer ``hist`` as a float64 array of
        ``shape`` (with constant hessians, the hessian sums are the row
        counts, as ``worker_partials`` expects)."""
        out = np.zeros(self.shape)
        flat = out.reshape(3, -1)
        flat[0, self.dst] = hist.view(np.float64)[self.src_g]
        flat[2, self.dst] = hist.view(np.uint32)[self.src_n]
        if self.src_h is None:
            flat[1] = flat[2]
        else:
            flat[1, self.dst] = hist.view(np.float64)[self.src_h]
        return out


class _RawPieces:
    """The raw features of a shard's pieces, each piece's rows and their
    places in the shard's order, until they are binned.

    Parameters
    ----------
    pieces : list of tuple
        The shard's pieces (``EraShard``), in the order their rows were
        concatenated for ``order``.
    order : ndarray
        The shard's order of the concatenated rows.
    """

    def __init__(self, pieces, order):
        place = np.empty(order.shape[0], dtype=np.intp)
        place[order] = np.arange(order.shape[0], dtype=np.intp)
        self.X, self.places, start = [], [], 0
        for p in pieces:
            n = p[1].shape[0]
            self.X.append(p[1])
            self.places.append(place[start : start + n])
            start += n
        self.n_rows = start

    def bin(self, bin_mapper):
        """The bins of every row in the shard's order; the pieces are let
        go one by one as their bins are written."""
        n_features = self.X[0].shape[1] if self.X else 0
        by_rows = bin_mapper.rows_layout_pays(np.empty((0, n_features)))
        out = np.empty(
            (self.n_rows, n_features), dtype=np.uint8, order="C" if by_rows else "F"
        )
        for i in range(len(self.X)):
            X, self.X[i] = self.X[i], None
            out[self.places[i]] = bin_mapper.transform(X, by_rows=by_rows)
            del X
            self.places[i] = None
        return out


class EraShard:
    """The rows of some whole eras and their boosting state.

    Parameters
    ----------
    pieces : list of tuple
        ``(rows, X, y, sample_weight, era_codes)`` from the user's chunks:
        global row numbers, raw features, target, weights (or None) and
        the fit's era codes.
    classes : ndarray or None
        The classifier's sorted classes (the target is encoded as their
        index); None for a regressor.
    """

    def __init__(self, pieces, classes):
        pieces = [p for p in pieces if p[0].shape[0]]
        rows = _concat(pieces, 0)
        codes = _concat(pieces, 4)
        # grouped by era, each era's rows in the table's order
        order = np.lexsort((rows, codes))
        self.rows = rows[order]
        del rows
        y = _concat(pieces, 2)[order]
        if classes is not None:
            y = np.searchsorted(classes, y)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        del y
        sw = _concat(pieces, 3)
        self.sample_weight = None if sw is None else sw[order]
        del sw
        # the codes in order are sorted: each era starts where they change
        codes = codes[order]
        first = np.empty(codes.shape[0], dtype=bool)
        first[:1] = True
        np.not_equal(codes[1:], codes[:-1], out=first[1:])
        self.eras = codes[first]
        self.era_codes = np.cumsum(first, dtype=np.int32)
        self.era_codes -= 1
        del codes, first
        self.n_eras = self.eras.size
        # the features stay in their pieces, in the user's dtype, until
        # ``bin`` writes each piece's bins at its rows' places: no copy of
        # the raw features in the shard's order is ever made
        self._raw = _RawPieces(pieces, order)
        self.nodes = {}
        self.hists = {}
        self.n_threads = _worker_threads()
        self.seconds = dict.fromkeys(("histograms", "partials", "partition"), 0.0)
        self.n_nodes = 0

    def n_rows(self):
        return int(self.rows.shape[0])

    def bin(self, bin_mapper):
        """Bin the rows; returns whether each feature has missing values.

        Few-bin features are stored by rows, as the single machine stores
        them for its histograms (the same sums either way). Each piece is
        binned on its own (a row's bins depend on its values alone) and
        let go once its bins are in place."""
        self.X_binned = self._raw.bin(bin_mapper)
        self._raw = None
        return bin_mapper.has_missing_values(self.X_binned).astype(bool)

    def start(self, loss, baseline, n_bins_non_missing, has_missing, settings):
        """The boosting state: raw predictions at the baseline, the
        candidates, the criterion's settings and the histogram builder."""
        self.loss = loss
        self.K = baseline.shape[1]
        self.raw = np.tile(baseline, (self.n_rows(), 1)).astype(np.float64)
        self.n_bins_non_missing = np.asarray(n_bins_non_missing)
        is_categorical = settings.get("is_categorical")
        self.cands = Candidates.of(
            n_bins_non_missing, has_missing, settings["era_path"], is_categorical
        )
        self.settings = settings
        # under the era criteria, a scanned node's per-era sums of the
        # features up to the last categorical one (they come first) wait
        # for the driver's orders of its categories (``categorical``)
        self.n_kept = 0
        if settings["era_path"] and is_categorical is not None:
            self.n_kept = int(np.max(np.flatnonzero(is_categorical), initial=-1)) + 1
        self.kept = {}
        n = self.n_rows()
        shape = (n,) if self.K == 1 else (n, self.K)
        self.gradients = np.empty(shape, dtype=G_DTYPE, order="F")
        self.hessians = (
            None if loss.constant_hessian else np.empty(shape, G_DTYPE, order="F")
        )
        self._start_builder(np.asarray(has_missing, dtype=bool))

    def _start_builder(self, has_missing):
        """The engine's histogram builder over the shard's rows, laid out
        as the single machine lays out its (the missing-value bin kept
        where any worker's rows have missing values)."""
        s = self.settings
        block_bins = (self.n_bins_non_missing + has_missing).astype(np.uint32)
        # the pooled criterion without era options keeps no eras apart
        n_eras = self.n_eras if s["era_path"] else 1
        offsets = histogram_layout(block_bins, n_eras)
        constant = self.hessians is None
        self.builder = HistogramBuilder(
            self.X_binned,
            block_bins,
            offsets,
            n_eras,
            self.era_codes if n_eras > 1 else None,
            *self._tree_gradients(0),
            self.n_threads,
        )
        self.hists = {}
        self.builder.pool = HistogramPool(
            self.builder.nbytes, memory_budget() if n_eras > 1 else None
        )
        self.layout = HistogramLayout(
            offsets, block_bins, n_eras, self.cands.width, constant
        )
        self.offsets, self.has_missing, self.hist_eras = offsets, has_missing, n_eras
        # the features up to the last categorical one: the first blocks of
        # the buffer, read alone
        self.kept_layout = self.n_kept and HistogramLayout(
            offsets[: self.n_kept + 1],
            block_bins[: self.n_kept],
            n_eras,
            self.cands.width,
            constant,
        )
        self.features = np.arange(self.X_binned.shape[1], dtype=np.uint32)
        # the single machine's subtraction cut-off, of its histograms (all
        # the fit's eras): the same children are subtracted here
        total_eras = int(s.get("n_eras", self.n_eras)) if s["era_path"] else 1
        self.subtract_from = 0
        if total_eras > 1 and block_bins.size:
            cells = histogram_layout(block_bins, total_eras)[-1]
            self.subtract_from = int(SPARSE_ROWS_PER_CELL * (cells / block_bins.size))

    def _tree_gradients(self, k):
        g = self.gradients if self.K == 1 else self.gradients[:, k]
        if self.hessians is None:
            return g, np.ones(1, dtype=G_DTYPE)
        return g, self.hessians if self.K == 1 else self.hessians[:, k]

    def update_gradients(self):
        """The loss's gradients (and hessians) at the raw predictions, as
        the single-machine fit computes them."""
        raw = self.raw[:, 0] if self.K == 1 else self.raw
        if self.hessians is None:
            self.loss.gradient(
                y_true=self.y,
                raw_prediction=raw,
                sample_weight=self.sample_weight,
                gradient_out=self.gradients,
                n_threads=self.n_threads,
            )
        else:
            self.loss.gradient_hessian(
                y_true=self.y,
                raw_prediction=raw,
                sample_weight=self.sample_weight,
                gradient_out=self.gradients,
                hessian_out=self.hessians,
                n_threads=self.n_threads,
            )

    def _build(self, rows, root=False):
        tic = perf_counter()
        hist = self.builder.build(rows, self.features, root=root, dense=True)
        self.seconds["histograms"] += perf_counter() - tic
        return hist

    def _partials(self, hist, node):
        tic = perf_counter()
        out = era_partials(
            hist,
            self.offsets,
            self.n_bins_non_missing,
            self.has_missing,
            self.hist_eras,
            self.hessians is None,
            self.settings,
        )
        if self.n_kept:
            # the categorical features' per-era sums, for their candidates
            self.kept[node] = self.kept_layout.dense(hist)
        self.seconds["partials"] += perf_counter() - tic
        self.n_nodes += 1
        return out

    def histograms(self, node):
        """The per-era sums of an open node, as ``worker_partials`` reads
        them (for checks)."""
        return self.layout.dense(self.hists[node])

    def global_rows(self):
        """The table's row numbers of the shard's rows, in its order."""
        return self.rows

    def root(self, k, in_bag=None):
        """Open tree ``k``'s root (node 0) on the shard's rows, or on those
        marked in ``in_bag`` (a mask of them, the iteration's row draw);
        returns its partial sums."""
        self._release_all()
        self.builder.update_gradients(*self._tree_gradients(k))
        if in_bag is None:
            rows = np.arange(self.n_rows(), dtype=np.uint32)
        else:
            rows = np.flatnonzero(in_bag).astype(np.uint32)
        # the partition reorders the rows in place, node by node (stable:
        # each side keeps them grouped by era)
        self.buffer = np.empty_like(rows)
        self.nodes = {0: rows}
        self.hists = {0: self._build(rows, root=in_bag is None)}
        return self._partials(self.hists[0], 0)

    def categorical(self, requests):
        """The era sums of the categorical candidates of nodes just scanned
        (``requests``: ``(node, orders)`` pairs, the orders of
        ``_categorical.CategoricalCandidates``), one dict per node."""
        tic = perf_counter()
        out = [
            categorical_partials(self.kept.pop(node), orders, self.settings)
            for node, orders in requests
        ]
        self.kept = {}
        self.seconds["partials"] += perf_counter() - tic
        return out

    def split(
        self,
        k,
        node,
        feature,
        bin_idx,
        missing_left,
        children,
        scan,
        sizes,
        bitset=None,
    ):
        """Split ``node`` into ``children`` (two ids); returns the partial
        sums of the children marked in ``scan``. A categorical split sends
        left the bins in ``bitset`` (8 uint32; None: a numeric split).

        ``sizes`` are the children's rows over all workers: the single
        machine's grower builds the smaller child's histogram and takes the
        larger's as the parent's minus it when the larger is scanned and
        not below the subtraction cut-off; else it builds the scanned
        children from their rows. The shard does the same."""
        rows = self.nodes.pop(node)
        parent = self.hists.pop(node, None)
        self.kept = {}
        tic = perf_counter()
        if bitset is not None:
            n_left = split_indices_categorical(
                self.X_binned,
                feature,
                bitset,
                rows,
                self.buffer[: rows.shape[0]],
                self.n_threads,
            )
        else:
            n_left = split_indices(
                self.X_binned,
                feature,
                bin_idx,
                missing_left,
                self.n_bins_non_missing[feature],
                rows,
                self.buffer[: rows.shape[0]],
                self.n_threads,
            )
        self.seconds["partition"] += perf_counter() - tic
        sides = (rows[:n_left], rows[n_left:])
        small = 0 if sizes[0] < sizes[1] else 1
        large = 1 - small
        hists = [None, None]
        if scan[large] and parent is not None and sizes[large] >= self.subtract_from:
            hists[small] = self._build(sides[small])
            tic = perf_counter()
            self.builder.compute_subtraction(parent, hists[small], self.features)
            self.seconds["histograms"] += perf_counter() - tic
            hists[large], parent = parent, None
        else:
            for j in (0, 1):
                if scan[j]:
                    hists[j] = self._build(sides[j])
        self.builder.release(parent)
        out = []
        for j, child in enumerate(children):
            self.nodes[child] = sides[j]
            if not scan[j]:
                self.builder.release(hists[j])
                out.append(None)
                continue
            out.append(self._partials(hists[j], child))
            if sizes[j] >= self.subtract_from:
                # kept for its children's subtraction
                self.hists[child] = hists[j]
            else:
                self.builder.release(hists[j])
        return out

    def _release_all(self):
        for hist in self.hists.values():
            self.builder.release(hist)
        self.hists = {}
        self.kept = {}

    def add_leaves(self, k, values, predictor=None, missing_bin=None):
        """Add the grown tree's leaf values (``{node: value}``) to column
        ``k`` of the raw predictions; forget the nodes.

        When the tree grew on a draw of the rows, every row gets its value
        from the tree itself (``predictor``), as the single machine does.
        """
        if predictor is not None:
            self.raw[:, k] += predictor.predict_binned(
                self.X_binned, missing_bin, self.n_threads
            )
        else:
            for node, value in values.items():
                self.raw[self.nodes[node], k] += value
        self.nodes = {}
        self._release_all()

    def add_stages(self, stages, missing_bin):
        """Add the trees of ``stages`` (a list of iterations, each a list
        of predictors, one per column) to the raw predictions, in order, as
        the single machine adds them (a warm start's trees, a validation
        shard's new iteration)."""
        for stage in stages:
            for k, predictor in enumerate(stage):
                self.raw[:, k] += predictor.predict_binned(
                    self.X_binned, missing_bin, 1
                )

    def loss_sum(self):
        """The early-stopping loss's share of the shard: the sum of its
        rows' losses at the raw predictions (weighted) and the sum of their
        weights (the number of rows when unweighted)."""
        raw = self.raw[:, 0] if self.K == 1 else self.raw
        per_row = np.empty(self.n_rows(), dtype=self.y.dtype)
        self.loss.loss(
            y_true=self.y,
            raw_prediction=raw,
            sample_weight=None,
            loss_out=per_row,
            n_threads=1,
        )
        if self.sample_weight is None:
            return float(per_row.sum()), float(self.n_rows())
        return float(per_row @ self.sample_weight), float(self.sample_weight.sum())

    def profile(self):
        """Seconds spent so far in the histograms (built and subtracted),
        the partial sums and the partition, and the nodes scanned."""
        return {**self.seconds, "nodes": self.n_nodes}
