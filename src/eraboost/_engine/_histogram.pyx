"""Per-era gradient histograms.

A node's histograms live in one flat byte buffer, laid out feature by
feature; feature ``f`` owns the cells ``offsets[f] .. offsets[f + 1] - 1``,
bin by bin, then era by era::

    cell(f, b, e) = offsets[f] + b * rows + e

``rows`` is ``n_eras + 1`` with several eras: after the eras, ``e = n_eras``
holds the pooled histogram (the sum over eras), filled while the era cells
are still in cache and carried by the subtraction like any other cell, so
the split scan reads each block only once. Without eras ``rows`` is 1.
``n_bins[f]`` is the feature's real number of bins: its non-missing bins,
plus the missing-value bin when its rows have missing values
(``engine.build_engine``), so a 5-valued feature costs 5 cells per era, not
256. Every row's bin must be below ``n_bins[f]``.
The eras of a bin are contiguous: the split scan adds a bin to the sums of
all eras in one vectorised pass.

A block stores its cells as arrays (``block_t`` and ``hist_block`` in
``_common.pxd``): the gradient sums (8 bytes a cell), the hessian sums (8
bytes, only when the hessians are not constant: constant hessians are the
row counts times the constant), then the row counts (4 bytes). A cell costs
12 bytes with constant hessians (squared error without weights), else 20.

Each thread fills whole features (its own region): one at a time from a
matrix stored by columns, a chunk of neighbouring features row by row from
one stored by rows (the bins of a gathered row are one or two cache lines,
not one per feature). The rows of a node are kept grouped by era, so a run
of rows of one era writes to the ``n_bins[f]`` cells of that era only, and
the next era's run to their neighbours.

Fill paths
----------
Every way a node's histograms are filled, the simplest of each layout
first. Each path gives every cell the sum its layout's simpler path gives,
in the same order (the lanes' order is shared by 3 and 7), so the choice
never changes a model. "Gain" is the paired A/B (the two builds in turn)
over the next simpler path, from docs/performance-history.md (its section
and the row's date named) unless said.

1. *Columns, no eras* (``_one_feature``): a feature's rows straight into
   its cells, in blocks of :meth:`~HistogramBuilder.node_block_rows` rows
   (the blocks of 4, so that both layouts sum alike). Chosen: a matrix
   stored by columns (many-bin features, column sampling, a Fortran int8
   input), no eras. Serves ``original`` on float data. The baseline.
2. *Columns, eras, straight* (``fill_rows`` with each row's era): one loop
   over the rows. Chosen: runs averaging fewer than SHORT_RUNS rows, or a
   feature of more than LANES_MAX_BINS bins. Serves the era criteria on
   float data. The baseline with eras.
3. *Columns, eras, four lanes* (``column_run``): an era's run summed in
   four per-bin buffers in L1 cache, then added to the era's cells; a run
   shorter than the feature's bins goes straight. Chosen: runs of
   SHORT_RUNS rows on average, every feature within LANES_MAX_BINS bins.
   Serves the era criteria on few-bin features stored by columns (column
   sampling, a Fortran int8 frame), few eras. Gain: 2 took 1.2x the fill
   on 16 eras of 5 bins ("Histograms: layout and fill",
   2026-11-27).
4. *Rows, no eras* (``_rows_by_blocks``): chunks of ROW_CHUNK features,
   row by row, the rows ahead prefetched, into one per-bin buffer a chunk
   (a loop without lookups when its features share a bin count); a task
   a chunk and a block of rows; the blocks' sums added in order. Chosen:
   a matrix stored by rows (every feature within 32 bins:
   ``BinMapper.rows_layout_pays``), no eras. Serves ``original`` on int8
   data. Gain over 1: a tree's histograms 0.25-0.27 s against 0.49-0.60 s
   (1M x 100 int8, one thread; "few-bin features stored by rows"); the
   blocks shared out: 0.84x the fit at 16 threads ("Threads and OpenMP", 2026-11-26, the
   16-core Xeon), within noise on 2 cores. The chunk's
   buffer against rows straight into the cells (``rows_direct``): 0.79x
   the wall time of an ``original`` fit (200,000 x 50 int8, 50 trees of
   32 leaves, 2 threads; 5 fresh-process pairs, 0.46-1.28, a contended
   machine; "the chunk's buffer, no eras").
5. *Rows, eras, straight* (``rows_direct``): each row's bins straight
   into its era's cells. Chosen: stored by rows, runs as in 2. Serves the
   era criteria on int8 data, many eras. The baseline by rows with eras.
6. *Rows, eras, slots* (``rows_era_slots``): a few eras' runs summed in
   slots of per-bin buffers (SLOT_BYTES), then added to their cells.
   Chosen: as 5, each run an era of its own (rows grouped by era, as the
   grower keeps them), the runs holding as many rows as the chunk's
   features have bins on average. Serves the era criteria on int8 data,
   256 to 1,024 eras. Gain over 5: not settled (contended machine).
   Whole fits at 1,024 eras 0.94x (``era``) and 0.93x (``directional``),
   at 256 0.99x and 1.03x, builds run one after the other ("Histograms:
   layout and fill", 2026-11-26); fresh-process pairs of ``era`` fits (200,000 x
   50 int8, 1,024 eras, 2 threads): medians 0.74x the wall time (25
   trees, 0.33-1.56) and 1.34x (10 trees, 0.96-2.77), 5 pairs each ("the
   era slots, paired").
7. *Rows, eras, four lanes* (``rows_lanes``): as 3, the chunk's features
   in four lanes, the flush's cache lines asked for first. Chosen: as 3,
   stored by rows. Serves the era criteria on int8 data, few eras. Not
   measured apart from 5: it gives 3's sums, and 5's would differ.
8. *Sparse* (:meth:`~HistogramBuilder.compute_sparse`): a feature's rows
   sorted by bin, for a scan that follows the rows, not the cells.
   Chosen: several eras and fewer rows than ``sparse_below``
   (SPARSE_ROWS_PER_CELL of a feature's cells, on average), unless the
   node's histogram is to be subtracted from. Serves the era criteria with
   many eras or bins, deep trees (the forests). Gain over dense: 0.84x the
   fit (``era``, 200,000 x 50 float64, 256 eras), 0.67x and 0.84x (forests
   of 30,000 x 10 float64 and 100,000 x 20 int8) ("Sparse histograms for
   small nodes"); the cut-off swept from 0.25 to 2, 0.25 the fastest
   ("Sparse histograms for small nodes", 2026-11-25 and 2026-11-26).

The larger child of a split is its parent's histogram minus the smaller
child's (:meth:`~HistogramBuilder.compute_subtraction`), never filled.
"""
from cython.parallel import prange
from libc.stdlib cimport calloc, free
from libc.string cimport memset
import numpy as np

from ._common cimport (block_t, hist_block, block_subtract, cell_bytes,
                       rows_per_bin, G_t, BIN_t, uint8_t, uint32_t, int32_t,
                       int64_t, ONE_THREAD_BELOW, CELLS_ONE_THREAD_BELOW)
from ._histogram_fill cimport (count_runs, fill_rows, column_run, pool_eras,
                               chunk_start, add_blocks, row_chunk_t,
                               rows_direct, rows_lanes, rows_era_slots,
                               LANE_BINS)

# The tuned constants: every number that picks a fill path or sizes its
# work, with its reason (the figures: docs/performance-history.md). The
# thread thresholds (ONE_THREAD_BELOW, CELLS_ONE_THREAD_BELOW) and the
# prefetch distance (PREFETCH_ROWS) are _common.pxd's, shared.
cdef enum:
    # era runs averaging fewer rows go straight to their cells (or slots):
    # a run's flush of bins x features cells costs more than lanes save
    SHORT_RUNS = 128
    # a builder with a feature of more bins never sends era runs to lanes:
    # a many-bin feature's rows rarely wait on one cell
    LANES_MAX_BINS = 32
    # features of a chunk filled row by row: a row's 64 bytes, a cache line
    ROW_CHUNK = 64
    # bytes of the slots of a group of short runs' eras: within L1 cache
    SLOT_BYTES = 16384
    # without eras a node's rows are summed in blocks of at least this many
    # rows, at most MAX_BLOCKS, their sums within BLOCK_SUMS_BYTES: numbers
    # of the data, never of the threads, so that the sums never depend on
    # them, and enough blocks for 16 threads to share a root's rows
    MIN_BLOCK_ROWS = 16384
    MAX_BLOCKS = 64
    BLOCK_SUMS_BYTES = 64 << 20
    # a node of fewer training blocks is cut into NODE_BLOCKS blocks of at
    # least MIN_NODE_BLOCK_ROWS rows: 16 threads get tasks of equal size
    NODE_BLOCKS = 16
    MIN_NODE_BLOCK_ROWS = 2048
    # rows of a thread's slice when a node's era runs are counted in
    # parallel, at least: fewer cost more to wake the threads than to count
    RUNS_SLICE_ROWS = 65536
    # era groups a thread, with eras by rows: tasks of about equal rows
    GROUPS_PER_THREAD = 4

# On the per-era path a node with fewer rows than this many per cell of a
# feature's histogram (on average) gets a sparse histogram: sorting a row
# by bin costs several cells' work, and a dense one costs all its cells
SPARSE_ROWS_PER_CELL = 0.25


def histogram_rows_per_bin(int n_eras):
    """Cells of one bin in a histogram block: ``n_eras + 1`` with several
    eras (the eras, then the pooled cell), else 1 (``rows_per_bin`` of
    ``_common.pxd``)."""
    return rows_per_bin(n_eras)


def histogram_cell_bytes(bint hessians_are_constant):
    """Bytes of one histogram cell: 12 with constant hessians, else 20
    (``cell_bytes`` of ``_common.pxd``)."""
    return cell_bytes(hessians_are_constant)


def histogram_layout(const uint32_t[::1] n_bins, int n_eras):
    """Offsets of each feature's block, in cells; the last entry is the
    number of cells of a histogram.

    A block has ``n_bins[f]`` bins of ``n_eras`` cells, plus the pooled cell
    when ``n_eras > 1``, then padding up to a multiple of 32 cells with at
    least 4 unused cells: every block starts on a pair of cache lines (32
    cells are 384 or 640 bytes, multiples of 128), so two threads filling
    neighbouring features never write to the same line, nor to the two
    lines that Intel processors fetch together.
    """
    cdef Py_ssize_t f, p = n_bins.shape[0]
    cdef int64_t rows = rows_per_bin(n_eras)
    offsets = np.zeros(p + 1, dtype=np.int64)
    cdef int64_t[::1] off = offsets
    for f in range(p):
        off[f + 1] = off[f] + (rows * n_bins[f] + 4 + 31) // 32 * 32
    return offsets


def aligned_bytes(Py_ssize_t nbytes):
    """An uninitialised uint8 array of ``nbytes`` starting on a 128-byte
    boundary (a pair of cache lines)."""
    raw = np.empty(nbytes + 128, dtype=np.uint8)
    start = (-raw.ctypes.data) % 128
    return raw[start:start + nbytes]


def era_runs(const uint32_t[::1] sample_indices, const int32_t[::1] era_codes):
    """Maximal runs of consecutive rows of the same era in ``sample_indices``.

    Returns three int64 arrays: era, start, stop (positions in sample_indices).
    """
    cdef Py_ssize_t i, n = sample_indices.shape[0], k
    ordered = np.empty(n, dtype=np.int32)
    cdef int32_t[::1] o = ordered
    for i in range(n):
        o[i] = era_codes[sample_indices[i]]
    k = count_runs(&o[0] if n else NULL, n, NULL, NULL, NULL)
    runs = np.empty((3, k), dtype=np.int64)
    cdef int64_t[:, ::1] r = runs
    if k:
        count_runs(&o[0], n, &r[0, 0], &r[1, 0], &r[2, 0])
    return runs[0], runs[1], runs[2]


class SparseHistogram:
    """A node's per-era histograms as the lists of the rows of each bin
    (``HistogramBuilder.compute_sparse``): for nodes with fewer rows than a
    feature has per-era cells, the work follows the rows.

    For feature ``f`` (built when ``entry_base[f] >= 0``) and its bin ``b``,
    with ``i = bin_offsets[f] + b``: the rows of the bin are the entries
    ``entry_base[f] + start[i] .. entry_base[f] + start[i + 1] - 1`` of
    ``era``, ``g`` and ``h`` (each row's era, gradient and hessian as
    float32, grouped by era as the node's rows), and ``pooled_g[i]``,
    ``pooled_h[i]``, ``pooled_n[i]`` are the bin's sums over its rows (in
    double). ``h`` and ``pooled_h`` have one unused entry when the
    hessians are constant (the row counts serve). ``bins`` is scratch.
    """
    __slots__ = ("n_rows", "bin_offsets", "start", "pooled_g", "pooled_h",
                 "pooled_n", "entry_base", "era", "g", "h", "bins")


cdef class HistogramBuilder:
    """Builds per-era histograms of the gradients for the nodes of one tree.

    Parameters
    ----------
    X_binned : ndarray of uint8, shape (n_samples, n_features)
        Stored by columns (Fortran order: each feature's block is filled
        from its column) or by rows (C order: chunks of up to 64 features
        are filled row by row, see ``by_rows``). Both give the same sums.
    n_bins : ndarray of uint32, shape (n_features,)
        Bins of each feature's block: every bin of the rows, the
        missing-value bin included when they hold it.
    offsets : ndarray of int64, shape (n_features + 1,)
        From :func:`histogram_layout`.
    n_eras : int
        Number of eras kept apart in the histograms (1 = pooled).
    era_codes : ndarray of int32, shape (n_samples,) or None
        Era of each row, in ``0 .. n_eras - 1``.
    gradients, hessians : ndarray of float32
        ``hessians`` may have shape (1,) when they are constant.
    n_threads : int
    block_rows : int, default=0
        Rows of a block when a node without eras is summed by blocks (each
        block's sums from zero, added in order: the sums depend on this
        number and the node's rows, never on the threads). 0: at least
        16384, at most 64 blocks of the training rows, their histograms
        within 64 MB. A node of fewer rows is summed in smaller blocks, 16
        of them, of at least 2048 rows (:meth:`node_block_rows`).

    Attributes
    ----------
    nbytes : int
        Bytes of one histogram (:meth:`empty` allocates one).
    pool : HistogramPool or None
        Where :meth:`build` takes dense histograms and :meth:`release` gives
        them back (``engine.build_engine`` sets it); None: new buffers, left
        to the garbage collector.
    sparse_below : int
        Rows: :meth:`build` makes a sparse histogram for a node of fewer
        rows (0: never; set with several eras from SPARSE_ROWS_PER_CELL).
    """
    cdef const BIN_t[:, :] X_binned
    # element (i, f) of X_binned at x0 + i * rs + f * cs
    cdef const BIN_t *x0
    cdef Py_ssize_t rs, cs
    # X_binned is stored by rows: dense histograms are filled row by row
    cdef public bint by_rows
    cdef const uint32_t[::1] n_bins
    cdef const int64_t[::1] offsets
    cdef public int n_eras
    cdef const int32_t[::1] era_codes
    cdef const G_t[::1] gradients
    cdef const G_t[::1] hessians
    cdef G_t[::1] ordered_gradients
    cdef G_t[::1] ordered_hessians
    cdef int32_t[::1] ordered_eras
    cdef public bint hessians_are_constant
    cdef public int n_threads
    cdef public Py_ssize_t size      # cells of a histogram
    cdef public Py_ssize_t nbytes    # bytes of a histogram
    cdef object _runs          # (3, capacity) int64: era, start, stop of the runs
    cdef int n_features
    # sparse histograms: feature f's bins at sparse_offsets[f] .. (n_bins + 1)
    cdef const int64_t[::1] sparse_offsets
    cdef object sparse_offsets_array
    cdef list _sparse_free     # SparseHistograms given back, for reuse
    # rows of a block of a node without eras (``_rows_by_blocks``), at most
    cdef readonly Py_ssize_t block_rows
    cdef Py_ssize_t max_blocks     # blocks of a node, at most
    cdef object _block_sums    # the blocks' histograms (uint8)
    cdef object _groups        # the era groups' first runs (int64)
    cdef object _seen          # eras seen among a node's runs (uint8)
    cdef object _slice_runs    # runs counted in slices of rows (int64)
    cdef bint lanes            # era runs may go to lanes (LANES_MAX_BINS)
    # where dense histograms come from and go back (``_memory.HistogramPool``)
    cdef public object pool
    # nodes of fewer rows get sparse histograms (:meth:`build`)
    cdef public Py_ssize_t sparse_below

    def __init__(self, X_binned, n_bins, offsets, int n_eras, era_codes,
                 gradients, hessians, int n_threads, Py_ssize_t block_rows=0):
        self.X_binned = X_binned
        self.rs = self.X_binned.strides[0]
        self.cs = self.X_binned.strides[1]
        self.x0 = NULL
        if self.X_binned.shape[0] > 0 and self.X_binned.shape[1] > 0:
            self.x0 = &self.X_binned[0, 0]
        self.by_rows = self.cs == 1 and self.X_binned.shape[1] > 1
        self.n_bins = n_bins
        self.offsets = offsets
        self.n_eras = n_eras
        self.n_features = X_binned.shape[1]
        if era_codes is None:
            era_codes = np.zeros(1, dtype=np.int32)
        self.era_codes = era_codes
        self.gradients = gradients
        self.hessians = hessians
        self.hessians_are_constant = hessians.shape[0] == 1
        self.ordered_gradients = np.empty_like(gradients)
        self.ordered_hessians = np.empty_like(hessians)
        self.ordered_eras = np.empty(X_binned.shape[0] if n_eras > 1 else 1,
                                     dtype=np.int32)
        self.n_threads = n_threads
        if self.offsets.shape[0] != self.n_features + 1:
            raise ValueError(
                f"offsets has {self.offsets.shape[0]} entries, expected "
                f"n_features + 1 = {self.n_features + 1}")
        # read through the typed view: the module is compiled without
        # wraparound, so a negative index would not count from the end
        self.size = self.offsets[self.n_features]
        self.nbytes = self.size * cell_bytes(self.hessians_are_constant)
        self._runs = np.zeros((3, n_eras + 1), dtype=np.int64)
        sparse_offsets = np.zeros(self.n_features + 1, dtype=np.int64)
        np.cumsum(np.asarray(n_bins, dtype=np.int64) + 1, out=sparse_offsets[1:])
        self.sparse_offsets_array = sparse_offsets
        self._sparse_free = []
        self.sparse_offsets = sparse_offsets
        self.max_blocks = max(1, min(MAX_BLOCKS,
                                     BLOCK_SUMS_BYTES // max(self.nbytes, 1)))
        if block_rows <= 0:
            block_rows = max(MIN_BLOCK_ROWS,
                             -(-self.X_binned.shape[0] // self.max_blocks))
        self.block_rows = block_rows
        self._block_sums = np.zeros(0, dtype=np.uint8)
        self._groups = None
        self._seen = np.zeros(max(n_eras, 1), dtype=np.uint8)
        self._slice_runs = np.zeros(2, dtype=np.int64)
        self.lanes = (self.n_features == 0
                      or int(np.max(np.asarray(n_bins))) <= LANES_MAX_BINS)
        self.pool = None
        self.sparse_below = 0
        if n_eras > 1 and self.n_features:
            self.sparse_below = int(
                SPARSE_ROWS_PER_CELL * (self.size / self.n_features))

    @property
    def constant_hessian(self):
        """The hessian of every row when they are constant."""
        return float(self.hessians[0])

    def empty(self):
        """A new, uninitialised histogram buffer (bytes, 128-byte aligned)."""
        return aligned_bytes(self.nbytes)

    def block(self, const uint8_t[::1] hist, int f):
        """Views of feature f's block: arrays ``g``, ``h`` (None when the
        hessians are constant) and ``n`` of shape (rows, n_bins[f]): the
        eras, then the pooled sums when there are several eras."""
        cdef int64_t rows = rows_per_bin(self.n_eras)
        cdef int64_t nb = self.n_bins[f], cells = self.offsets[f + 1] - self.offsets[f]
        cdef int64_t start = self.offsets[f] * cell_bytes(self.hessians_are_constant)
        cdef int64_t n_dbl = 1 if self.hessians_are_constant else 2
        arr = np.asarray(hist)
        g = arr[start:start + 8 * cells].view(np.float64)
        n = arr[start + 8 * n_dbl * cells:start + (8 * n_dbl + 4) * cells]
        h = None
        if not self.hessians_are_constant:
            h = arr[start + 8 * cells:start + 16 * cells].view(np.float64)
            h = h[:rows * nb].reshape(nb, rows).T
        return {"g": g[:rows * nb].reshape(nb, rows).T, "h": h,
                "n": n.view(np.uint32)[:rows * nb].reshape(nb, rows).T}

    def build(self, const uint32_t[::1] sample_indices not None,
              const uint32_t[::1] features not None, bint root=False,
              bint dense=False):
        """A node's histograms for the features listed: sparse
        (:meth:`compute_sparse`) for fewer rows than ``sparse_below`` unless
        ``dense``, else a buffer of the pool filled by :meth:`compute_brute`.

        Parameters
        ----------
        sample_indices : ndarray of uint32
            The node's rows (``0 .. n-1`` in order with ``root``).
        features : ndarray of uint32
        root : bool, default=False
        dense : bool, default=False
            A dense histogram whatever the rows (one to subtract).

        Returns
        -------
        hist : ndarray of uint8 or SparseHistogram
            To give back with :meth:`release`.
        """
        if not dense and sample_indices.shape[0] < self.sparse_below:
            return self.compute_sparse(sample_indices, features, root)
        hist = self.empty() if self.pool is None else self.pool.get()
        self.compute_brute(sample_indices, hist, features, root)
        return hist

    def subtractable(self, Py_ssize_t n_rows):
        """Whether a node of ``n_rows`` rows may have a child's histogram
        made by subtraction from its own: not below ``sparse_below`` rows,
        where both children are built from their rows.

        Parameters
        ----------
        n_rows : int

        Returns
        -------
        bool
        """
        return n_rows >= self.sparse_below

    def release(self, hist):
        """Give back a histogram of :meth:`build` that is no longer used
        (None: nothing): a dense one to the pool, a sparse one's arrays to
        the next sparse histograms."""
        if hist is None:
            return
        if isinstance(hist, SparseHistogram):
            self.recycle_sparse(hist)
        elif self.pool is not None:
            self.pool.release(hist)

    def root_sums(self, hist, int f, Py_ssize_t n_rows, int max_bins,
                  bint has_missing):
        """The sums of the gradients and hessians of a root's ``n_rows``
        rows from feature f's histogram (of :meth:`build`), added as
        scikit-learn adds them: over the feature's bins laid out on
        ``max_bins + 1`` cells, the missing-value bin last, so that the
        pooled criterion grows scikit-learn's very trees.

        Parameters
        ----------
        hist : ndarray of uint8 or SparseHistogram
        f : int
            A feature built in ``hist``.
        n_rows : int
        max_bins : int
            The binning's ``max_bins``.
        has_missing : bool
            Whether feature f's block holds the missing-value bin (its
            last).

        Returns
        -------
        sum_gradients, sum_hessians : float
        """
        cdef Py_ssize_t nb = self.n_bins[f]
        cdef Py_ssize_t n_known = nb - has_missing
        cdef bint const_h = self.hessians_are_constant
        if isinstance(hist, SparseHistogram):
            start = hist.bin_offsets[f]
            g = hist.pooled_g[start:start + nb]
            h = None if const_h else hist.pooled_h[start:start + nb]
        else:
            # the eras' rows of the block, summed over the eras
            block = self.block(hist, f)
            g = block["g"][:self.n_eras].sum(axis=0)
            h = None if const_h else block["h"][:self.n_eras].sum(axis=0)
        full = np.zeros(max_bins + 1)
        full[:n_known] = g[:n_known]
        if has_missing:
            full[max_bins] = g[n_known]
        sum_gradients = full.sum()
        if const_h:
            return sum_gradients, self.constant_hessian * n_rows
        full[:n_known] = h[:n_known]
        if has_missing:
            full[max_bins] = h[n_known]
        return sum_gradients, full.sum()

    def update_gradients(self, gradients, hessians):
        """Point the builder at new gradient arrays (same shapes)."""
        self.gradients = gradients
        self.hessians = hessians

    cdef void _order_rows(self, const uint32_t[::1] sample_indices, bint root,
                          int nt):
        """The node's gradients, hessians and eras in row order, in one
        parallel loop (each parallel region wakes the threads); nothing to
        order for the root's rows without eras."""
        cdef Py_ssize_t i, n = sample_indices.shape[0]
        cdef bint use_eras = self.n_eras > 1
        cdef bint const_h = self.hessians_are_constant
        if root and not use_eras:
            return
        with nogil:
            for i in prange(n, schedule='static', num_threads=nt):
                if not root:
                    self.ordered_gradients[i] = self.gradients[sample_indices[i]]
                    if not const_h:
                        self.ordered_hessians[i] = self.hessians[sample_indices[i]]
                if use_eras:
                    self.ordered_eras[i] = self.era_codes[
                        i if root else sample_indices[i]]

    cdef int _count_runs(self, Py_ssize_t n, int nt):
        """The runs of ``ordered_eras[0 .. n-1]`` into ``_runs`` (era,
        start, stop), their number returned; counted in ``nt`` slices of
        the rows in parallel (a slice's runs are those starting in it),
        then written, each slice from its offset: the same runs as one
        pass."""
        cdef int c, n_slices = nt if n >= RUNS_SLICE_ROWS * nt else 1
        cdef Py_ssize_t lo, hi, i, k
        cdef int64_t[::1] first
        cdef int64_t[:, ::1] runs
        cdef const int32_t *eras = &self.ordered_eras[0]
        if n == 0:
            return 0
        if self._slice_runs.shape[0] < n_slices + 1:
            self._slice_runs = np.zeros(n_slices + 1, dtype=np.int64)
        first = self._slice_runs
        if n_slices == 1:
            k = count_runs(eras, n, NULL, NULL, NULL)
        else:
            with nogil:
                for c in prange(n_slices, schedule='static', num_threads=nt):
                    lo = c * n // n_slices
                    hi = (c + 1) * n // n_slices
                    first[c + 1] = count_runs(eras + lo, hi - lo, NULL, NULL,
                                              NULL)
                    if lo > 0 and eras[lo] == eras[lo - 1]:
                        # the slice's first row continues the run before
                        first[c + 1] -= 1
            first[0] = 0
            for c in range(n_slices):
                first[c + 1] += first[c]
            k = first[n_slices]
        if self._runs.shape[1] < k:
            self._runs = np.empty((3, k), dtype=np.int64)
        runs = self._runs
        if n_slices == 1:
            count_runs(eras, n, &runs[0, 0], &runs[1, 0], &runs[2, 0])
            return <int> k
        with nogil:
            for c in prange(n_slices, schedule='static', num_threads=nt):
                lo = c * n // n_slices
                hi = (c + 1) * n // n_slices
                k = first[c]
                for i in range(lo, hi):
                    if i == 0 or eras[i] != eras[i - 1]:
                        runs[0, k] = eras[i]
                        runs[1, k] = i
                        if k > 0:
                            runs[2, k - 1] = i
                        k = k + 1
        runs[2, first[n_slices] - 1] = n
        return <int> first[n_slices]

    def compute_brute(self, const uint32_t[::1] sample_indices not None,
                      uint8_t[::1] out not None,
                      const uint32_t[::1] features,
                      bint root=False):
        """Fill ``out`` with the histograms of the rows ``sample_indices``.

        Only the features listed in ``features`` are computed. With ``root``
        the rows are taken as ``0 .. n-1`` in order (no gather).
        """
        cdef Py_ssize_t n = sample_indices.shape[0]
        cdef int k, n_feat = features.shape[0], f
        cdef bint use_eras = self.n_eras > 1
        cdef const int64_t[::1] run_era, run_start, run_stop
        if out.shape[0] < self.nbytes:
            raise ValueError(f"histogram buffer of {out.shape[0]} bytes, "
                             f"{self.nbytes} needed")
        cdef int n_runs = 1
        cdef int64_t[:, ::1] runs
        cdef const G_t[::1] grad = self.gradients
        cdef const G_t[::1] hess = self.hessians
        cdef bint const_h = self.hessians_are_constant
        # small nodes (deep trees) on one thread: waking the other threads
        # costs more than the work (tens of microseconds with the passive
        # wait policy); the result does not depend on the thread count
        cdef int nt = self.n_threads if n * n_feat >= ONE_THREAD_BELOW else 1
        self._order_rows(sample_indices, root, nt)
        if not root:
            grad = self.ordered_gradients
            if not const_h:
                hess = self.ordered_hessians
        if use_eras:
            # the eras' runs of rows (one per era when the rows are grouped
            # by era, as the grower keeps them)
            n_runs = self._count_runs(n, nt)
            runs = self._runs
        else:
            runs = self._runs
            runs[0, 0] = 0
            runs[1, 0] = 0
            runs[2, 0] = n
        run_era = runs[0]
        run_start = runs[1]
        run_stop = runs[2]
        if self.by_rows and n_feat > 0:
            if use_eras:
                self._rows_by_era_groups(sample_indices, features, grad, hess,
                                         const_h, root, runs, n_runs, nt, out)
            else:
                self._rows_by_blocks(sample_indices, features, grad, hess,
                                     const_h, root, nt, out)
            return
        with nogil:
            for k in prange(n_feat, schedule='dynamic', num_threads=nt):
                f = features[k]
                self._one_feature(f, sample_indices, grad, hess, const_h, root,
                                  run_era, run_start, run_stop, n_runs, &out[0])

    cdef inline Py_ssize_t _block_rows_of(self, Py_ssize_t n) noexcept nogil:
        """Rows of a block of a node of ``n`` rows without eras: the
        builder's ``block_rows``, or fewer so that a node of a few blocks
        has NODE_BLOCKS of them (at least MIN_NODE_BLOCK_ROWS rows each, at
        most ``max_blocks``). A number of ``n`` alone, never of the
        threads: the sums depend on it."""
        cdef Py_ssize_t k = min(<Py_ssize_t> NODE_BLOCKS, self.max_blocks)
        return min(self.block_rows, max(<Py_ssize_t> MIN_NODE_BLOCK_ROWS,
                                        (n + k - 1) // k))

    def node_block_rows(self, Py_ssize_t n):
        """Rows of a block of a node of ``n`` rows without eras (the
        blocks' sums are added in order; ``n`` rows or fewer: one block).

        Parameters
        ----------
        n : int

        Returns
        -------
        int
        """
        return self._block_rows_of(n)

    cdef int _chunks(self, int n_feat, int units, int nt) noexcept nogil:
        """Chunks of consecutive listed features for ``units`` row ranges:
        at most ROW_CHUNK features each, and enough for a task per thread.
        How the features are chunked never changes a sum."""
        cdef int n_chunks = (n_feat + ROW_CHUNK - 1) // ROW_CHUNK
        n_chunks = max(n_chunks, (nt + units - 1) // units)
        return min(n_chunks, n_feat)

    cdef void _rows_by_blocks(self, const uint32_t[::1] rows,
                              const uint32_t[::1] features,
                              const G_t[::1] grad, const G_t[::1] hess,
                              bint const_h, bint root, int nt,
                              uint8_t[::1] out):
        """Without eras, from a matrix stored by rows: the node's rows in
        blocks of :meth:`node_block_rows` rows (a number of the data and
        the node's rows, never of the threads), one task per block and
        chunk of features,
        each block summed apart in row order, then the blocks' sums added
        in block order. Each row is read once per chunk, not once per
        thread; :meth:`_one_feature` makes the same sums column by column."""
        cdef Py_ssize_t n = rows.shape[0], BR = self._block_rows_of(n)
        cdef Py_ssize_t lo, hi, nbytes = self.nbytes
        cdef int n_feat = features.shape[0]
        cdef int n_blocks = <int> max(1, (n + BR - 1) // BR)
        cdef int n_chunks = self._chunks(n_feat, n_blocks, nt)
        cdef int t, u, k0, k1, k, f
        cdef uint8_t *sums = &out[0]
        cdef uint8_t *target
        cdef uint8_t[::1] scratch
        if n_blocks > 1:
            if self._block_sums.shape[0] < n_blocks * nbytes:
                self._block_sums = aligned_bytes(n_blocks * nbytes)
            scratch = self._block_sums
            sums = &scratch[0]
        # (Cython's loops in one parallel region do not wait for each
        # other: one region a loop)
        with nogil:
            for t in prange(n_blocks * n_chunks, schedule='dynamic',
                            num_threads=nt):
                u = t // n_chunks
                k0 = chunk_start(t % n_chunks, n_chunks, n_feat)
                k1 = chunk_start(t % n_chunks + 1, n_chunks, n_feat)
                lo = u * BR
                hi = min(n, lo + BR)
                target = &out[0] if n_blocks == 1 else sums + u * nbytes
                self._feature_rows(&features[k0], k1 - k0, rows, grad, hess,
                                   const_h, root, NULL, NULL, NULL, lo, hi,
                                   False, target, True)
            if n_blocks > 1:
                for k in prange(n_feat, schedule='static', num_threads=nt):
                    f = features[k]
                    add_blocks(&out[0], sums, nbytes, n_blocks,
                               &self.offsets[0], f, const_h)

    cdef void _rows_by_era_groups(self, const uint32_t[::1] rows,
                                  const uint32_t[::1] features,
                                  const G_t[::1] grad, const G_t[::1] hess,
                                  bint const_h, bint root,
                                  const int64_t[:, ::1] runs, int n_runs,
                                  int nt, uint8_t[::1] out):
        """With eras, from a matrix stored by rows: the eras' runs in groups
        of about equal rows, one task per group and chunk of features. An
        era's cells are written by the one task that holds its run, so the
        sums do not depend on the groups (nor on the threads); the blocks
        are cleared before and pooled after. When an era has several runs
        (rows not grouped by era), a single group holds them all."""
        cdef int n_feat = features.shape[0]
        cdef Py_ssize_t n = rows.shape[0]
        cdef bint unique = self._runs_unique(runs, n_runs)
        cdef int n_groups = self._era_groups(runs, n_runs, n, nt, unique)
        cdef int n_chunks = self._chunks(n_feat, n_groups, nt)
        cdef int t, u, k0, k1, k, f
        cdef int64_t R = rows_per_bin(self.n_eras)
        # short runs: 1, or 2 when each run is an era of its own
        cdef int short_runs = self._runs_are_short(n, n_runs)
        if short_runs and unique:
            short_runs = 2
        cdef const int64_t[::1] group = self._groups
        cdef block_t blk
        with nogil:
            for k in prange(n_feat, schedule='static', num_threads=nt):
                f = features[k]
                blk = hist_block(&out[0], &self.offsets[0], f, const_h)
                memset(blk.g, 0, (self.offsets[f + 1] - self.offsets[f])
                       * cell_bytes(const_h))
            for t in prange(n_groups * n_chunks, schedule='dynamic',
                            num_threads=nt):
                u = t // n_chunks
                k0 = chunk_start(t % n_chunks, n_chunks, n_feat)
                k1 = chunk_start(t % n_chunks + 1, n_chunks, n_feat)
                self._feature_rows(&features[k0], k1 - k0, rows, grad, hess,
                                   const_h, root, &runs[0, 0], &runs[1, 0],
                                   &runs[2, 0], group[u], group[u + 1],
                                   short_runs, &out[0], False)
            for k in prange(n_feat, schedule='static', num_threads=nt):
                f = features[k]
                pool_eras(hist_block(&out[0], &self.offsets[0], f, const_h),
                          self.n_bins[f], R, const_h)

    cdef inline bint _runs_are_short(self, Py_ssize_t n,
                                     int n_runs) noexcept nogil:
        """Whether a node's ``n`` rows in ``n_runs`` era runs go straight
        to their cells (or slots) rather than to the lanes: one rule for
        both layouts, so that their sums are the same."""
        return n < SHORT_RUNS * n_runs or not self.lanes

    cdef bint _runs_unique(self, const int64_t[:, ::1] runs, int n_runs):
        """Whether no two of the runs are of the same era."""
        cdef int r
        cdef int64_t e, m = self.n_eras
        cdef uint8_t[::1] seen = self._seen
        if n_runs > m:
            return False
        memset(&seen[0], 0, m)
        for r in range(n_runs):
            e = runs[0, r]
            if e < 0 or e >= m or seen[e]:
                return False
            seen[e] = 1
        return True

    cdef int _era_groups(self, const int64_t[:, ::1] runs, int n_runs,
                         Py_ssize_t n, int nt, bint unique):
        """Split the runs into groups of consecutive runs of about equal
        rows (up to four a thread), into ``_groups`` (group u: runs
        ``_groups[u] .. _groups[u + 1] - 1``); one group unless each run
        is an era of its own (``unique``, :meth:`_runs_unique`). Returns
        the number of groups (at least 1)."""
        cdef int n_groups = 1, r, u
        cdef Py_ssize_t m = self.n_eras
        if self._groups is None or self._groups.shape[0] < n_runs + 2:
            self._groups = np.zeros(max(n_runs, m) + 2, dtype=np.int64)
        cdef int64_t[::1] group = self._groups
        if nt > 1 and n_runs > 1 and unique:
            n_groups = min(n_runs, GROUPS_PER_THREAD * nt)
        group[0] = 0
        u = 1
        if n_groups > 1:
            # group u starts at the first run starting at or after u n / G
            # (a later one when a long run spans several of these marks)
            for r in range(1, n_runs):
                if u < n_groups and runs[1, r] * n_groups >= u * n:
                    group[u] = r
                    u += 1
        group[u] = n_runs
        return u

    cdef void _one_feature(self, int f, const uint32_t[::1] rows,
                           const G_t[::1] grad, const G_t[::1] hess,
                           bint const_h, bint root,
                           const int64_t[::1] run_era,
                           const int64_t[::1] run_start,
                           const int64_t[::1] run_stop, int n_runs,
                           uint8_t *out) noexcept nogil:
        """Feature f's block, column by column: the rows into their eras'
        cells (one per bin, ``R`` apart), then the pooled cells.

        An era's long run of rows (SHORT_RUNS rows or more on average,
        every feature of the builder of at most LANES_MAX_BINS bins) is
        first summed in small per-bin buffers (in L1 cache, four of them:
        consecutive rows do not wait for each other's additions), then
        written to the era's cells. Otherwise the rows go straight to their
        cells, in one loop (one feature's block stays in cache: the slots
        of :func:`rows_era_slots` did not pay here). Without eras, the rows
        are summed in blocks of :meth:`node_block_rows` rows as
        :meth:`_rows_by_blocks` sums them."""
        cdef const BIN_t *col = self.x0 + f * self.cs
        cdef block_t blk = hist_block(out, &self.offsets[0], f, const_h)
        cdef int64_t cells = self.offsets[f + 1] - self.offsets[f]
        cdef int64_t R = rows_per_bin(self.n_eras)
        cdef Py_ssize_t r, lo, n = rows.shape[0]
        cdef Py_ssize_t BR = self._block_rows_of(n)
        cdef unsigned int b, nb = self.n_bins[f]
        # one era's sums, by bin, in four buffers
        cdef double sg[4 * LANE_BINS]
        cdef double sh[4 * LANE_BINS]
        cdef uint32_t sn[4 * LANE_BINS]
        cdef unsigned int cleared = 0   # bins of the lanes cleared
        memset(blk.g, 0, cells * cell_bytes(const_h))
        if R == 1 and n > BR:
            # blocks of rows, each summed from zero, added in order
            memset(sg, 0, nb * sizeof(double))
            memset(sh, 0, nb * sizeof(double))
            memset(sn, 0, nb * sizeof(uint32_t))
            lo = 0
            while lo < n:
                fill_rows(sg, sh, sn, 1, col, self.rs, rows, NULL, grad, hess,
                          lo, min(n, lo + BR), const_h, root)
                for b in range(nb):
                    blk.g[b] += sg[b]
                    blk.n[b] += sn[b]
                    sg[b] = 0.0
                    sn[b] = 0
                    if not const_h:
                        blk.h[b] += sh[b]
                        sh[b] = 0.0
                lo += BR
            return
        if R > 1 and self._runs_are_short(rows.shape[0], n_runs):
            # short runs: one loop over the rows, each with its era
            fill_rows(blk.g, blk.h, blk.n, R, col, self.rs, rows,
                      &self.ordered_eras[0], grad, hess, 0, rows.shape[0],
                      const_h, root)
            n_runs = 0
        for r in range(n_runs):
            column_run(blk, nb, R, col, self.rs, rows, grad, hess,
                       run_start[r], run_stop[r], run_era[r], const_h, root,
                       sg, sh, sn, &cleared)
        if R > 1:
            pool_eras(blk, nb, R, const_h)

    cdef void _feature_rows(self, const uint32_t *feats, int nf,
                            const uint32_t[::1] rows,
                            const G_t[::1] grad, const G_t[::1] hess,
                            bint const_h, bint root, const int64_t *run_era,
                            const int64_t *run_start, const int64_t *run_stop,
                            Py_ssize_t r0, Py_ssize_t r1, int short_runs,
                            uint8_t *out, bint clear) noexcept nogil:
        """The sums of the features ``feats[0 .. nf-1]`` (at most
        ROW_CHUNK), row by row, from a matrix stored by rows: each row's bins
        of these features are read together (one or two cache lines)
        instead of a cache line per feature, and the next rows are
        prefetched. ``clear``: the blocks are cleared first.

        Without eras (``run_era`` NULL): the rows ``r0 .. r1 - 1``, in
        order, added to the cells. With eras: the runs ``r0 .. r1 - 1``
        (``run_era``, ``run_start``, ``run_stop``), each into its era's
        cells, not pooled; with ``short_runs`` (1), their rows straight
        into their cells, or (2: each run an era of its own) summed in
        slots a few eras at a time (:func:`rows_era_slots`) where the runs
        hold as many rows as the features have bins, on average.

        Every cell is the sum of the same values in the same order as
        :meth:`_one_feature` makes it, so both layouts give the same
        histograms bit for bit: rows straight into their cells with short
        runs (or into slots, then added to the cells: the same sums); an
        era's long run into four lanes of per-bin buffers (row
        ``i`` in lane ``(i - lo) % 4``, the last ``(hi - lo) % 4`` rows in
        lane 0), added to the era's cells as ``(l0 + l1) + (l2 + l3)``, the
        sums of :func:`fill_rows4`; a run shorter than a feature's bins
        column by column."""
        cdef int64_t R = rows_per_bin(self.n_eras)
        cdef Py_ssize_t r, lo, hi, end = 0
        cdef int k
        cdef int64_t e, cells
        cdef unsigned int nbmax = 0
        cdef row_chunk_t ch
        cdef block_t blk[ROW_CHUNK]
        cdef uint32_t nbs[ROW_CHUNK]
        cdef int64_t lane[ROW_CHUNK + 1]
        cdef double sg[4 * LANE_BINS]
        cdef double sh[4 * LANE_BINS]
        cdef uint32_t sn[4 * LANE_BINS]
        cdef unsigned int cleared = 0   # bins of the lanes cleared
        cdef int64_t S
        cdef double *bg
        cdef double *bh
        cdef uint32_t *bn
        if nf <= 0 or nf > ROW_CHUNK:
            return
        ch.nf = nf
        ch.R = R
        ch.rs = self.rs
        ch.x0 = self.x0
        ch.feats = feats
        ch.blk = blk
        ch.nb = nbs
        ch.lane = lane
        ch.lg = ch.lh = NULL
        ch.ln = NULL
        ch.lane[0] = 0
        ch.uniform = True
        for k in range(nf):
            ch.uniform = ch.uniform and (feats[k] == feats[0] + k and
                                         self.n_bins[feats[k]] ==
                                         self.n_bins[feats[0]])
            ch.blk[k] = hist_block(out, &self.offsets[0], feats[k], const_h)
            ch.nb[k] = self.n_bins[feats[k]]
            nbmax = max(nbmax, ch.nb[k])
            ch.lane[k + 1] = ch.lane[k] + 4 * ch.nb[k]
            if clear:
                cells = self.offsets[feats[k] + 1] - self.offsets[feats[k]]
                memset(ch.blk[k].g, 0, cells * cell_bytes(const_h))
        if run_era != NULL and r1 > r0:
            end = run_stop[r1 - 1]
        if run_era == NULL:
            lo, hi, e = r0, r1, 0
            end = r1
            r0, r1 = 0, 1
        elif short_runs:
            S = SLOT_BYTES // (max(ch.lane[nf] >> 2, 1) * cell_bytes(const_h))
            if (short_runs == 2 and S >= 2 and r1 > r0 and (ch.lane[nf] >> 2)
                    * (r1 - r0) <= nf * (run_stop[r1 - 1] - run_start[r0])):
                # (a slot's flush costs its bins: worth it from as many rows
                # a run as a feature's bins, on average)
                bg = <double *> calloc(S * (ch.lane[nf] >> 2), sizeof(double))
                bn = <uint32_t *> calloc(S * (ch.lane[nf] >> 2),
                                         sizeof(uint32_t))
                bh = NULL
                if not const_h:
                    bh = <double *> calloc(S * (ch.lane[nf] >> 2),
                                           sizeof(double))
                if bg != NULL and bn != NULL and (const_h or bh != NULL):
                    rows_era_slots(&ch, rows, run_era, run_start, run_stop,
                                   r0, r1, grad, hess, bg, bh, bn, S, const_h,
                                   root)
                    r0 = r1
                free(bg)
                free(bn)
                free(bh)
            if r1 > r0:
                rows_direct(&ch, rows, &self.ordered_eras[0], 0, grad, hess,
                            run_start[r0], run_stop[r1 - 1], const_h, root)
            r1 = r0
        for r in range(r0, r1):
            if run_era != NULL:
                lo = run_start[r]
                hi = run_stop[r]
                e = run_era[r]
            if R > 1 and hi - lo < nbmax:
                # a short run: column by column, as _one_feature
                for k in range(nf):
                    column_run(ch.blk[k], ch.nb[k], R,
                               self.x0 + feats[k] * self.cs, self.rs, rows,
                               grad, hess, lo, hi, e, const_h, root, sg, sh,
                               sn, &cleared)
            else:
                if ch.lg == NULL and ch.ln == NULL:
                    # the buffers, cleared (each flush clears them again)
                    ch.lg = <double *> calloc(ch.lane[nf], sizeof(double))
                    ch.ln = <uint32_t *> calloc(ch.lane[nf], sizeof(uint32_t))
                    if not const_h:
                        ch.lh = <double *> calloc(ch.lane[nf], sizeof(double))
                if (ch.lg == NULL or ch.ln == NULL
                        or (not const_h and ch.lh == NULL)):
                    # no memory for the buffers: column by column, which
                    # needs none and gives the same sums
                    for k in range(nf):
                        column_run(ch.blk[k], ch.nb[k], R,
                                   self.x0 + feats[k] * self.cs, self.rs,
                                   rows, grad, hess, lo, hi, e, const_h, root,
                                   sg, sh, sn, &cleared)
                else:
                    # four lanes for an era's run, one (rows in order)
                    # without eras
                    rows_lanes(&ch, rows, grad, hess, lo, hi, end, e,
                               R > 1, const_h, root)
        free(ch.lg)
        free(ch.lh)
        free(ch.ln)

    def compute_sparse(self, const uint32_t[::1] sample_indices not None,
                       const uint32_t[::1] features not None, bint root=False):
        """The per-era histograms of the rows ``sample_indices`` as each
        bin's rows (:class:`SparseHistogram`), for the features listed: the
        cost follows the rows, not the cells, for nodes with fewer rows than
        a feature has per-era cells. With ``root`` the rows are ``0 .. n-1``
        in order."""
        cdef Py_ssize_t n = sample_indices.shape[0]
        cdef int k, n_feat = features.shape[0], f
        cdef int p = self.n_features
        cdef bint const_h = self.hessians_are_constant
        cdef const G_t[::1] grad = self.gradients
        cdef const G_t[::1] hess = self.hessians
        cdef int nt = self.n_threads if n * n_feat >= ONE_THREAD_BELOW else 1
        if self.n_eras < 2:
            raise ValueError("sparse histograms keep eras apart: n_eras >= 2")
        self._order_rows(sample_indices, root, nt)
        if not root:
            grad = self.ordered_gradients
            if not const_h:
                hess = self.ordered_hessians
        cdef int64_t m = max(n * n_feat, 1)
        hist = self._sparse_buffers(m)
        hist.n_rows = n
        hist.entry_base[:] = -1
        cdef int64_t[::1] base = hist.entry_base
        cdef uint32_t[::1] start = hist.start
        cdef double[::1] pg = hist.pooled_g
        cdef double[::1] ph = hist.pooled_h
        cdef uint32_t[::1] pn = hist.pooled_n
        cdef int32_t[::1] era = hist.era
        cdef G_t[::1] eg = hist.g
        cdef G_t[::1] eh = hist.h
        cdef BIN_t[::1] bins = hist.bins
        for k in range(n_feat):
            f = features[k]
            if not 0 <= f < p:
                raise ValueError(f"no feature {f}")
            base[f] = k * n
        with nogil:
            for k in prange(n_feat, schedule='dynamic', num_threads=nt):
                f = features[k]
                self._one_feature_sparse(
                    f, sample_indices, grad, hess, const_h, root,
                    &start[self.sparse_offsets[f]], &pg[self.sparse_offsets[f]],
                    &ph[self.sparse_offsets[f]] if not const_h else NULL,
                    &pn[self.sparse_offsets[f]], &era[k * n], &eg[k * n],
                    &eh[k * n] if not const_h else NULL, &bins[k * n])
        return hist

    cdef void _one_feature_sparse(self, int f, const uint32_t[::1] rows,
                                  const G_t[::1] grad, const G_t[::1] hess,
                                  bint const_h, bint root, uint32_t *start,
                                  double *pg, double *ph, uint32_t *pn,
                                  int32_t *era, G_t *eg, G_t *eh,
                                  BIN_t *bins) noexcept nogil:
        """Feature f's rows sorted by bin (a counting sort: their order, by
        era, kept within a bin), then the pooled sums of each bin from its
        rows, in order. ``bins`` (n) holds the rows' bins, ``pn`` the write
        position of each bin, then its count."""
        cdef const BIN_t *col = self.x0 + f * self.cs
        cdef Py_ssize_t rs = self.rs
        cdef unsigned int b, nb = self.n_bins[f]
        cdef Py_ssize_t i, n = rows.shape[0]
        cdef uint32_t acc = 0, j
        cdef double sg, sh
        for b in range(nb):
            pn[b] = 0
        for i in range(n):
            b = col[i * rs] if root else col[rows[i] * rs]
            bins[i] = <BIN_t>b
            pn[b] += 1
        for b in range(nb):
            start[b] = acc
            acc = acc + pn[b]
            pn[b] = start[b]
        start[nb] = acc
        for i in range(n):
            b = bins[i]
            j = pn[b]
            pn[b] = j + 1
            era[j] = self.ordered_eras[i]
            eg[j] = grad[i]
            if not const_h:
                eh[j] = hess[i]
        for b in range(nb):
            pn[b] = pn[b] - start[b]
            sg = 0.0
            sh = 0.0
            for j in range(start[b], start[b + 1]):
                sg += eg[j]
                if not const_h:
                    sh += eh[j]
            pg[b] = sg
            if not const_h:
                ph[b] = sh

    def _sparse_buffers(self, int64_t m):
        """A :class:`SparseHistogram` whose arrays hold ``m`` rows at least:
        one given back (:meth:`recycle_sparse`), else new. Reusing them
        spares fresh pages (zeroed by the system) at every node."""
        cdef int64_t cells = self.sparse_offsets[self.n_features]
        cdef bint const_h = self.hessians_are_constant
        for i, hist in enumerate(self._sparse_free):
            if hist.era.shape[0] >= m:
                del self._sparse_free[i]
                return hist
        hist = SparseHistogram()
        hist.bin_offsets = self.sparse_offsets_array
        hist.start = np.empty(cells, dtype=np.uint32)
        hist.pooled_g = np.empty(cells, dtype=np.float64)
        hist.pooled_h = np.empty(cells if not const_h else 1, dtype=np.float64)
        hist.pooled_n = np.empty(cells, dtype=np.uint32)
        hist.entry_base = np.empty(self.n_features, dtype=np.int64)
        hist.era = np.empty(m, dtype=np.int32)
        hist.g = np.empty(m, dtype=np.float32)
        hist.h = np.empty(m if not const_h else 1, dtype=np.float32)
        hist.bins = np.empty(m, dtype=np.uint8)
        return hist

    def recycle_sparse(self, hist):
        """Give back a :class:`SparseHistogram` of this builder that is no
        longer used: its arrays serve the next ones (at most 4 kept, the
        largest)."""
        if (isinstance(hist, SparseHistogram)
                and hist.bin_offsets is self.sparse_offsets_array):
            self._sparse_free.append(hist)
            if len(self._sparse_free) > 4:
                self._sparse_free.sort(key=lambda h: h.era.shape[0])
                del self._sparse_free[0]

    def compute_subtraction(self, uint8_t[::1] parent not None,
                            const uint8_t[::1] sibling not None,
                            const uint32_t[::1] features not None):
        """parent -= sibling, in place, for the listed features."""
        cdef int k, n_feat = features.shape[0], f
        if parent.shape[0] < self.nbytes or sibling.shape[0] < self.nbytes:
            raise ValueError(f"histogram buffers of {parent.shape[0]} and "
                             f"{sibling.shape[0]} bytes, {self.nbytes} needed")
        cdef bint const_h = self.hessians_are_constant
        cdef int nt = self.n_threads if self.size >= CELLS_ONE_THREAD_BELOW else 1
        with nogil:
            for k in prange(n_feat, schedule='static', num_threads=nt):
                f = features[k]
                block_subtract(&parent[0], &sibling[0], &self.offsets[0], f,
                               const_h)
