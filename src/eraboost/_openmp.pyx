"""Number of OpenMP threads to use."""
import os
cimport openmp


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
