"""Number of OpenMP threads to use."""
import os
cimport openmp
from cython.parallel cimport prange


def effective_n_threads():
    """Threads for the engine's parallel loops.

    Follows ``OMP_NUM_THREADS`` and ``threadpoolctl.threadpool_limits`` (both
    act on ``omp_get_max_threads``), capped by the CPUs this process may use.
    """
    cdef int n = openmp.omp_get_max_threads()
    try:
        n_cpus = len(os.sched_getaffinity(0))
    except AttributeError:
        n_cpus = os.cpu_count() or 1
    return max(1, min(n, n_cpus))


def run_in_chunks(fn, Py_ssize_t n, int n_threads):
    """Call ``fn(start, stop)`` on ``n_threads`` contiguous chunks of
    ``range(n)``, each in one of eraboost's own OpenMP threads.

    ``fn`` is a Python callable that releases the GIL for its work (a
    scikit-learn loss called with ``n_threads=1`` does): this runs another
    library's serial kernels in parallel on eraboost's OpenMP runtime, so that
    no second runtime's threads wake and spin beside ours. The chunks cover
    ``range(n)`` exactly once; an exception in any chunk is raised here.
    """
    cdef Py_ssize_t c, n_chunks, step
    if n_threads <= 1 or n < 2 * n_threads:
        fn(0, n)
        return
    n_chunks = n_threads
    step = (n + n_chunks - 1) // n_chunks
    for c in prange(n_chunks, nogil=True, num_threads=n_threads,
                    schedule='static', chunksize=1):
        if c * step < n:
            with gil:
                fn(c * step, min(n, (c + 1) * step))
