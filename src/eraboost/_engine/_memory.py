"""Memory of the per-era histograms: the buffer pool and the budget.

:class:`HistogramPool` hands out and takes back the histogram buffers of a
fit and enforces the budget at each allocation; :func:`check_histogram_memory`
refuses, before fitting, a fit whose histograms would not fit in
:func:`memory_budget` (80% of the memory available, and of the address space
left under ``ulimit -v``, at least ``MIN_MEMORY_BUDGET``).
"""

import os

from ._histogram import aligned_bytes, histogram_rows_per_bin


class HistogramPool:
    """Reusable histogram buffers of ``nbytes`` bytes (aligned as
    ``HistogramBuilder.empty`` aligns them), for a builder's ``pool``.

    Buffers released by finished nodes serve later nodes and later trees, so
    a fit allocates at most as many buffers as a tree has open nodes. With a
    ``budget`` (bytes), a buffer that would take the pool's memory past it
    raises ``MemoryError`` instead of being allocated: the estimate checked
    before fitting (:func:`check_histogram_memory`) is the expected peak,
    and this is the bound.

    Parameters
    ----------
    nbytes : int
        Bytes of a histogram (``HistogramBuilder.nbytes``).
    budget : float or None, default=None
        Bytes the buffers may take together (None: no bound).
    """

    def __init__(self, nbytes, budget=None):
        self.size = int(nbytes)
        self.budget = budget
        self._free = []
        self.n_allocated = 0

    def get(self):
        if self._free:
            return self._free.pop()
        if self.budget is not None and (self.n_allocated + 1) * self.size > self.budget:
            raise MemoryError(
                f"the per-era histograms of this tree need more than the "
                f"{self.budget / 2**30:.2f} GiB available: {self.n_allocated} "
                f"node histograms of {self.size / 2**20:.1f} MiB are in use and "
                "the tree has more open leaves. Limit the tree (max_leaf_nodes "
                "or max_depth), or use fewer eras per histogram (group eras "
                "together), fewer bins (max_bins) or fewer features."
            )
        self.n_allocated += 1
        return aligned_bytes(self.size)

    def release(self, buf):
        if buf is not None:
            self._free.append(buf)

    @property
    def nbytes(self):
        return self.n_allocated * self.size


def available_memory():
    """Bytes of memory available to this process (MemAvailable on Linux)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def address_space_left():
    """Bytes the process may still map under its address-space limit
    (``ulimit -v``, ``RLIMIT_AS``), or None when there is no limit."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    except (ImportError, OSError, ValueError):
        return None
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    used = None
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmSize:"):
                    used = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    return max(0, soft - (used or 0))


# the guard never refuses histograms smaller than this: a momentary low
# reading of the available memory (another process filling the machine) must
# not fail a small fit with "0.0 GiB needed, 0.0 GiB available"
MIN_MEMORY_BUDGET = 64 * 2**20


def memory_budget():
    """Bytes the histograms may take: 80% of the memory available now, and
    of what is left under the address-space limit, but at least
    ``MIN_MEMORY_BUDGET`` (64 MiB); None when neither is known."""
    limits = [m for m in (available_memory(), address_space_left()) if m is not None]
    return max(0.8 * min(limits), MIN_MEMORY_BUDGET) if limits else None


# the copy of the binned rows stored by columns (for the partition,
# ``engine.build_engine``) takes at most this share of memory_budget()
COLUMN_COPY_SHARE = 0.125


def column_copy_fits(nbytes, budget=None):
    """Whether a copy of ``nbytes`` of binned rows stored by columns may be
    made for the partition of the nodes' rows (``engine.build_engine``): at
    most COLUMN_COPY_SHARE (an eighth) of ``budget``, which defaults to
    :func:`memory_budget`; always when the memory available is unknown.
    Only speed depends on it: the partition is the same from either copy."""
    if budget is None:
        budget = memory_budget()
    return budget is None or nbytes <= COLUMN_COPY_SHARE * budget


def check_histogram_memory(
    n_cells,
    n_eras,
    max_leaf_nodes,
    max_depth,
    n_samples,
    min_samples_leaf,
    budget=None,
    depth_first=False,
    cell_bytes=20,
):
    """Raise MemoryError before fitting if the histograms would not fit.

    Estimate, in bytes::

        n_cells x cell_bytes x live

    ``n_cells`` is one node's histogram: ``(n_eras + 1) x sum of each
    feature's bins`` with eras (one row per era and the pooled row;
    ``_histogram.histogram_layout``), plus at most 19 cells of padding per
    feature, each cell ``cell_bytes``: 12 with constant hessians, 20 (the
    default, an upper bound) otherwise. ``live`` is the most histograms
    alive at once: with ``max_leaf_nodes`` about half the open leaves hold
    one (the others will never be split and give theirs back,
    ``TreeGrower._release_hopeless``), ``max_leaf_nodes // 2 + 1`` with the
    one being built (more only when leaves tie in priority); without
    ``max_leaf_nodes``, one per open leaf: the smallest of ``2 **
    max_depth``, ``n_samples / min_samples_leaf`` and 1024, plus one (trees
    with neither limit may need more than this estimate). Grown
    ``depth_first`` (forests), a histogram per level and two more:
    ``max_depth + 2``, taking 64 levels without ``max_depth``. The histogram
    pool reuses these buffers across nodes and trees, so this is the
    histograms' expected peak for the whole fit; the pool enforces the
    budget at each allocation (a tree without ``max_leaf_nodes`` may keep
    more leaves open). ``budget`` defaults to :func:`memory_budget` (80% of
    the memory available now, and of the address space left under ``ulimit
    -v``).

    Returns
    -------
    need : int
        The estimate, in bytes.
    """
    if depth_first:
        live = (
            min(
                64 if max_depth is None else max_depth,
                n_samples // max(min_samples_leaf, 1),
            )
            + 2
        )
    elif max_leaf_nodes is not None:
        live = max_leaf_nodes // 2 + 1
    else:
        live = min(n_samples // max(min_samples_leaf, 1), 1024) + 1
        if max_depth is not None:
            live = min(live, 2**max_depth + 1)
    need = n_cells * cell_bytes * live
    if budget is None:
        budget = memory_budget()
        if budget is None:
            return need
    if need > budget:
        rows = histogram_rows_per_bin(n_eras)
        raise MemoryError(
            f"the per-era histograms would need about {need / 2**30:.1f} GiB "
            f"({n_eras} eras x {n_cells // rows} bins over all features x "
            f"{cell_bytes} bytes x {live} histograms alive at once), more than the "
            f"{budget / 2**30:.1f} GiB available. Use fewer eras per histogram "
            "(group eras together), fewer leaves (max_leaf_nodes), fewer bins "
            "(max_bins) or fewer features."
        )
    return need
