"""Binning alone: ``BinMapper`` fit and transform of an int8 matrix.

A Fortran-ordered int8 matrix whose values are their own bins (Numerai's
features, from a pandas frame) is used as the binned matrix without a copy,
after a pass over it that checks its range; a C-ordered one is mapped into
a Fortran-ordered copy. Both on one thread and on every CPU.

Run from ``asv_benchmarks/``: ``asv run --quick --bench Binning``.
"""

import numpy as np

from eraboost._engine.binning import BinMapper

N, P = 1_000_000, 100


class Binning:
    """``fit`` then ``transform`` of 1,000,000 x 100 int8 values 0..4."""

    params = (("C", "F"), (1, 0))
    param_names = ("order", "n_threads")

    def setup(self, order, n_threads):
        rng = np.random.default_rng(0)
        self.X = np.asarray(rng.integers(0, 5, size=(N, P), dtype=np.int8), order=order)

    def time_fit_transform(self, order, n_threads):
        mapper = BinMapper(max_bins=255, random_state=0, n_threads=n_threads or None)
        mapper.fit(self.X)
        mapper.transform(self.X)
