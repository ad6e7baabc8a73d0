"""Histograms of one tree's nodes, without the rest of a fit.

``HistogramBuilder.compute_brute`` over the nodes a 31-leaf tree histograms
(the root, then each split's smaller child, as fractions of the rows),
their rows grouped by era as the grower keeps them, on one thread: the
cost of a histogrammed row with and without eras, from a matrix stored by
rows (``C``) or by columns (``F``).

Run from ``asv_benchmarks/``: ``asv run --quick --bench HistogramTree``.
"""

import numpy as np

from eraboost._engine._histogram import HistogramBuilder, histogram_layout

N, P, BINS = 200_000, 50, 5
# the rows of one tree's histogrammed nodes, as fractions of all rows
NODE_FRACTIONS = (
    1.0, 0.4, 0.24, 0.096, 0.16, 0.096, 0.143, 0.048, 0.048, 0.032,
    0.064, 0.072, 0.057, 0.048, 0.048, 0.048, 0.038, 0.032, 0.032, 0.026,
    0.024, 0.029, 0.029, 0.024, 0.019, 0.019, 0.019, 0.019, 0.019, 0.016,
)  # fmt: skip


class HistogramTree:
    """One tree's histograms, 200,000 x 50 bins of 5 values, one thread."""

    params = (("C", "F"), (1, 16, 256, 1024))
    param_names = ("order", "n_eras")

    def setup(self, order, n_eras):
        rng = np.random.default_rng(0)
        X = np.asarray(rng.integers(0, BINS, size=(N, P), dtype=np.uint8), order=order)
        gradients = rng.standard_normal(N).astype(np.float32)
        hessians = np.ones(1, dtype=np.float32)
        n_bins = np.full(P, BINS, dtype=np.uint32)
        # eras of consecutive rows: sorted rows are grouped by era
        codes = (np.arange(N) * n_eras // N).astype(np.int32)
        self.builder = HistogramBuilder(
            X,
            n_bins,
            histogram_layout(n_bins, n_eras),
            n_eras,
            codes if n_eras > 1 else None,
            gradients,
            hessians,
            1,
        )
        self.hist = self.builder.empty()
        self.features = np.arange(P, dtype=np.uint32)
        self.nodes = [
            np.sort(rng.choice(N, int(f * N), replace=False)).astype(np.uint32)
            for f in NODE_FRACTIONS
        ]

    def time_tree(self, order, n_eras):
        for k, rows in enumerate(self.nodes):
            self.builder.compute_brute(rows, self.hist, self.features, k == 0)
