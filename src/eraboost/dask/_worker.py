"""What each worker holds during a fit: its whole eras (a Dask actor).

A :class:`EraShard` lives on one worker for the length of a fit. It holds
the rows of its eras (grouped by era, each era's rows in the order of the
user's table, as the single-machine fit groups them), their bins, the
raw predictions and the gradients, and, while a tree grows, the rows of
each open node. The driver calls it once per tree step; each call returns
only the worker's share of the reduction (``_split.worker_partials``).
"""

import numpy as np

from .._engine._common import G_DTYPE
from ._split import Candidates, era_histograms, worker_partials


def _concat(pieces, i):
    parts = [p[i] for p in pieces if p[i] is not None]
    return np.concatenate(parts) if parts else None


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
        self.X = _concat(pieces, 1)[order]
        y = _concat(pieces, 2)[order]
        if classes is not None:
            y = np.searchsorted(classes, y)
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        sw = _concat(pieces, 3)
        self.sample_weight = None if sw is None else sw[order]
        self.eras, local = np.unique(codes[order], return_inverse=True)
        self.era_codes = local.astype(np.int64)
        self.n_eras = self.eras.size
        self.nodes = {}

    def n_rows(self):
        return int(self.rows.shape[0])

    def bin(self, bin_mapper):
        """Bin the rows; returns whether each feature has missing values."""
        self.X_binned = np.ascontiguousarray(bin_mapper.transform(self.X))
        self.X = None
        return bin_mapper.has_missing_values(self.X_binned).astype(bool)

    def start(self, loss, baseline, n_bins_non_missing, has_missing, settings):
        """The boosting state: raw predictions at the baseline, the
        candidates and the criterion's settings."""
        self.loss = loss
        self.K = baseline.shape[1]
        self.raw = np.tile(baseline, (self.n_rows(), 1)).astype(np.float64)
        self.n_bins_non_missing = np.asarray(n_bins_non_missing)
        self.cands = Candidates.of(
            n_bins_non_missing, has_missing, settings["era_path"]
        )
        self.settings = settings
        n = self.n_rows()
        shape = (n,) if self.K == 1 else (n, self.K)
        self.gradients = np.empty(shape, dtype=G_DTYPE, order="F")
        self.hessians = (
            None if loss.constant_hessian else np.empty(shape, G_DTYPE, order="F")
        )

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
                n_threads=1,
            )
        else:
            self.loss.gradient_hessian(
                y_true=self.y,
                raw_prediction=raw,
                sample_weight=self.sample_weight,
                gradient_out=self.gradients,
                hessian_out=self.hessians,
                n_threads=1,
            )

    def _partials(self, k, rows):
        g = self.gradients if self.K == 1 else self.gradients[:, k]
        h = self.hessians
        if h is not None and self.K > 1:
            h = h[:, k]
        hist = era_histograms(
            self.X_binned,
            rows,
            self.era_codes,
            self.n_eras,
            g,
            h,
            self.cands.width,
        )
        return worker_partials(hist, self.cands, self.n_bins_non_missing, self.settings)

    def global_rows(self):
        """The table's row numbers of the shard's rows, in its order."""
        return self.rows

    def root(self, k, in_bag=None):
        """Open tree ``k``'s root (node 0) on the shard's rows, or on those
        marked in ``in_bag`` (a mask of them, the iteration's row draw);
        returns its partial sums."""
        rows = np.arange(self.n_rows()) if in_bag is None else np.flatnonzero(in_bag)
        self.nodes = {0: rows}
        return self._partials(k, rows)

    def split(self, k, node, feature, bin_idx, missing_left, children, scan):
        """Split ``node`` into ``children`` (two ids); returns the partial
        sums of the children marked in ``scan``."""
        rows = self.nodes.pop(node)
        col = self.X_binned[rows, feature]
        missing = col == self.n_bins_non_missing[feature]
        left = np.where(missing, missing_left, col <= bin_idx)
        out = []
        for child, side, wanted in zip(children, (left, ~left), scan):
            self.nodes[child] = rows[side]
            out.append(self._partials(k, rows[side]) if wanted else None)
        return out

    def add_leaves(self, k, values, predictor=None, missing_bin=None):
        """Add the grown tree's leaf values (``{node: value}``) to column
        ``k`` of the raw predictions; forget the nodes.

        When the tree grew on a draw of the rows, every row gets its value
        from the tree itself (``predictor``), as the single machine does.
        """
        if predictor is not None:
            self.raw[:, k] += predictor.predict_binned(self.X_binned, missing_bin, 1)
        else:
            for node, value in values.items():
                self.raw[self.nodes[node], k] += value
        self.nodes = {}

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
