"""One engine setup for every estimator: histograms, splitter, row order.

The boosters and the forests grow their trees on the same parts: a
histogram builder over the binned matrix (one row per era when the
criterion needs eras), a histogram pool, and a splitter holding the
criterion's settings. :func:`build_engine` assembles them from an
:class:`EngineSettings` and decides, in one place, when the era-aware
machinery is used: only when an era-aware option is set and the training
rows hold at least two eras. Otherwise every option reduces to its pooled
behaviour (the per-era minimum becomes a pooled minimum).
"""

from dataclasses import dataclass

import numpy as np

from ._binning import binned_by_columns
from ._common import MIN_HESSIAN_TO_SPLIT, SPLIT_TYPES, era_options_set
from ._histogram import HistogramBuilder, histogram_cell_bytes, histogram_layout
from ._memory import (
    HistogramPool,
    check_histogram_memory,
    column_copy_fits,
    memory_budget,
)
from ._splitting import PENALTY_KINDS, Splitter

# The estimators' ``irf_variance`` options (docs/criteria.md, "Invariance
# penalty") and the engine's penalty of each.
IRF_VARIANCES = {"change": "value_variance", "difference": "value_difference"}

__all__ = [
    "IRF_VARIANCES",
    "MIN_HESSIAN_TO_SPLIT",
    "Engine",
    "EngineSettings",
    "build_engine",
]


@dataclass(frozen=True)
class EngineSettings:
    """The criterion and growth limits the engine is built for.

    Attributes
    ----------
    split_type : {"original", "era", "directional"}
    boltzmann_alpha : float
    l2_regularization : float
    min_samples_leaf : int
    irf_penalty : float
        0 is off.
    min_samples_leaf_per_era : int or None
        None is off.
    min_agreement : float or None
        The directional agreement gate; None (or 0) is off.
    pooled_weight : float
        The pooled gain's share of the era score; 0 is off.
    penalty_kind : {"value_variance", "rate_spread", "value_difference"}
        The invariance penalty as written (the boosters' and the regression
        forest's), the classification forest's changing-rate one, or the
        children's difference (``irf_variance="difference"``).
    max_leaf_nodes, max_depth : int or None
        Bound the histograms alive at once (the memory check).
    depth_first : bool
        Trees grown depth first (forests), for the memory check.
    """

    split_type: str = "original"
    boltzmann_alpha: float = 0.0
    l2_regularization: float = 0.0
    min_samples_leaf: int = 20
    irf_penalty: float = 0.0
    min_samples_leaf_per_era: int | None = None
    min_agreement: float | None = None
    pooled_weight: float = 0.0
    penalty_kind: str = "value_variance"
    max_leaf_nodes: int | None = None
    max_depth: int | None = None
    depth_first: bool = False

    @property
    def era_aware(self):
        """Whether any option needs per-era sums."""
        return bool(
            era_options_set(
                self.split_type,
                self.irf_penalty,
                self.min_samples_leaf_per_era,
                self.min_agreement,
            )
        )


@dataclass
class Engine:
    """The assembled parts.

    Attributes
    ----------
    builder : HistogramBuilder
        Its ``pool`` holds the fit's dense histograms.
    splitter : Splitter
    offsets : ndarray of uint32
        Where each feature's histogram block starts (``histogram_layout``).
    n_eras : int
        Eras in the histograms: 1 when the criterion is pooled.
    min_samples_leaf : int
        The pooled minimum the grower must use (raised to the per-era
        minimum when the criterion is pooled).
    root_rows : ndarray of uint32
        The training rows grouped by era (stable), the root's sample
        indices.
    root_rows_are_identity : bool
        Whether ``root_rows`` is ``0 .. n - 1``.
    has_missing : ndarray of uint8
        Whether each feature has missing values in the training rows.
    X_binned : ndarray of uint8, shape (n_samples, n_features)
        The binned training rows.
    X_columns : ndarray of uint8, shape (n_samples, n_features)
        The same bins stored by columns, for the partition of the nodes'
        rows (:func:`columns_for_partition`): ``X_binned`` itself unless it
        is stored by rows.
    bin_mapper : BinMapper
        The fitted mapper that binned them.
    settings : EngineSettings
        The criterion and growth limits the engine was built for.
    monotonic_cst : ndarray of int8 or None
        As given to :func:`build_engine`.
    n_threads : int
    """

    builder: HistogramBuilder
    splitter: Splitter
    offsets: np.ndarray
    n_eras: int
    min_samples_leaf: int
    root_rows: np.ndarray
    root_rows_are_identity: bool
    has_missing: np.ndarray
    X_binned: np.ndarray
    X_columns: np.ndarray
    bin_mapper: object
    settings: EngineSettings
    monotonic_cst: np.ndarray | None
    n_threads: int


def columns_for_partition(X_binned, n_threads, budget=None, by_columns=None):
    """The binned rows as the partition of a node's rows reads them: by
    columns.

    The partition reads the split feature's bin of each of the node's
    rows: a byte of one column from a matrix stored by columns, a cache
    line of every row from one stored by rows (few-bin features, for the
    histograms: ``BinMapper.rows_layout_pays``). So a matrix stored by rows
    of several features gets a copy stored by columns, when the copy takes
    at most an eighth of the memory budget (``_memory.column_copy_fits``);
    otherwise, or when ``X_binned`` is not stored by rows, ``X_binned``
    itself. The partition is the same from either. ``by_columns``, the
    same bins already stored by columns (the user's matrix, when it is its
    own binned matrix: ``BinMapper.bins_by_columns``), spares the copy.

    Parameters
    ----------
    X_binned : ndarray of uint8, shape (n_samples, n_features)
    n_threads : int
    budget : float or None, default=None
        Bytes of memory to take a share of (``_memory.memory_budget``).
    by_columns : ndarray of uint8 or None, default=None
        ``X_binned`` stored by columns (Fortran order), when at hand.

    Returns
    -------
    X_columns : ndarray of uint8, shape (n_samples, n_features)
    """
    if by_columns is not None and by_columns.shape == X_binned.shape:
        return by_columns
    if (
        X_binned.ndim == 2
        and X_binned.shape[1] > 1
        and X_binned.flags.c_contiguous
        and column_copy_fits(X_binned.nbytes, budget)
    ):
        return binned_by_columns(X_binned, n_threads)
    return X_binned


def build_engine(
    settings,
    X_binned,
    bin_mapper,
    era_codes,
    gradients,
    hessians,
    *,
    monotonic_cst=None,
    is_categorical=None,
    n_threads=1,
    by_columns=None,
):
    """Assemble the histogram builder (and its pool) and the splitter of a
    fit.

    Parameters
    ----------
    settings : EngineSettings
    X_binned : ndarray of uint8, shape (n_samples, n_features)
    bin_mapper : BinMapper
        Fitted; gives each feature's number of bins.
    era_codes : ndarray of int32 of shape (n_samples,) or None
        Codes ``0 .. n_eras - 1`` of the training rows, each used
        (``EncodedEras.codes``); None without eras.
    gradients, hessians : ndarray of float32, shape (n_samples,)
        The arrays the builder reads (updated in place between trees, or
        replaced through ``builder.update_gradients``); hessians of shape
        (1,) mean a constant hessian.
    monotonic_cst : ndarray of int8 or None
    is_categorical : ndarray of uint8 or None
    n_threads : int
    by_columns : ndarray of uint8 or None, default=None
        ``X_binned`` stored by columns, when at hand
        (:func:`columns_for_partition`).

    Returns
    -------
    engine : Engine
    """
    n_features = X_binned.shape[1]
    n_eras = 1 if era_codes is None else int(era_codes.max(initial=-1)) + 1
    use_eras = settings.era_aware and n_eras >= 2
    min_samples_leaf = int(settings.min_samples_leaf)
    if use_eras:
        codes, split_type = era_codes, SPLIT_TYPES[settings.split_type]
    else:
        codes, split_type, n_eras = None, SPLIT_TYPES["original"], 1
        # one era: the per-era minimum is a pooled minimum
        min_samples_leaf = max(min_samples_leaf, settings.min_samples_leaf_per_era or 0)

    # Each feature's histogram block holds its bins, and its missing-value
    # bin only when its rows have missing values: the scans never read that
    # bin otherwise (a five-valued feature without missing values costs 5
    # cells per era, not 6).
    has_missing = bin_mapper.has_missing_values(X_binned)
    block_bins = (bin_mapper.n_bins_ - 1 + has_missing).astype(np.uint32)
    offsets = histogram_layout(block_bins, n_eras)
    budget = None
    if n_eras > 1:
        budget = memory_budget()
        check_histogram_memory(
            int(offsets[-1]),
            n_eras,
            settings.max_leaf_nodes,
            settings.max_depth,
            X_binned.shape[0],
            min_samples_leaf,
            depth_first=settings.depth_first,
            cell_bytes=histogram_cell_bytes(hessians.shape[0] == 1),
            budget=budget,
        )
    builder = HistogramBuilder(
        X_binned,
        block_bins,
        offsets,
        n_eras,
        codes,
        gradients,
        hessians,
        n_threads,
    )
    builder.pool = HistogramPool(builder.nbytes, budget)
    splitter = Splitter(
        bin_mapper.n_bins_,
        offsets,
        n_eras,
        has_missing,
        np.zeros(n_features, dtype=np.int8) if monotonic_cst is None else monotonic_cst,
        split_type,
        float(settings.boltzmann_alpha),
        float(settings.l2_regularization),
        MIN_HESSIAN_TO_SPLIT,
        min_samples_leaf,
        bool(builder.hessians_are_constant),
        n_threads,
        is_categorical=is_categorical,
        irf_penalty=float(settings.irf_penalty),
        min_samples_leaf_per_era=int(settings.min_samples_leaf_per_era or 0),
        penalty_kind=PENALTY_KINDS[settings.penalty_kind],
        min_agreement=float(settings.min_agreement or 0.0),
        pooled_weight=float(settings.pooled_weight),
    )
    if codes is None:
        root_rows = np.arange(X_binned.shape[0], dtype=np.uint32)
        identity = True
    else:
        root_rows = np.argsort(codes, kind="stable").astype(np.uint32)
        identity = bool(np.all(np.diff(codes) >= 0))
    return Engine(
        builder=builder,
        splitter=splitter,
        offsets=offsets,
        n_eras=n_eras,
        min_samples_leaf=min_samples_leaf,
        root_rows=root_rows,
        root_rows_are_identity=identity,
        has_missing=has_missing,
        X_binned=X_binned,
        X_columns=columns_for_partition(X_binned, n_threads, budget, by_columns),
        bin_mapper=bin_mapper,
        settings=settings,
        monotonic_cst=monotonic_cst,
        n_threads=n_threads,
    )
