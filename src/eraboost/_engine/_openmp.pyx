"""Number of OpenMP threads to use, and whether there is OpenMP at all."""
import os
import warnings

from cython.parallel cimport prange


cdef extern from "_openmp_compat.h":
    const int EB_OPENMP_ENABLED
    int eb_omp_max_threads() noexcept nogil


# whether the warning of a build without OpenMP was given (once a process)
_serial_warned = []


def openmp_enabled():
    """Whether the engine was built with OpenMP (the ``openmp`` meson option).

    Without it every parallel loop runs on one thread: the same results,
    one core.
    """
    return bool(EB_OPENMP_ENABLED)


def _cpu_count():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def warn_if_serial(asked, source):
    """Warn once per process, in a build without OpenMP, that ``asked``
    threads (a count; negative: all CPUs but ``-asked - 1``, as ``n_jobs``)
    run on one. ``source`` names what asked for them. Nothing with OpenMP,
    or when ``asked`` is None or comes to one thread.
    """
    if EB_OPENMP_ENABLED or asked is None or _serial_warned:
        return
    if asked < 0:
        asked = max(1, _cpu_count() + 1 + asked)
    if asked <= 1:
        return
    _serial_warned.append(source)
    warnings.warn(
        f"{source} asks for {asked} threads, but eraboost was built without "
        "OpenMP and runs on one thread. Build it with a compiler that "
        "supports OpenMP (the openmp meson option) to use more.",
        UserWarning,
        stacklevel=3,
    )


def _omp_num_threads():
    """The thread count ``OMP_NUM_THREADS`` asks for (its first level), or
    None when it is unset or not a number."""
    try:
        return int(os.environ.get("OMP_NUM_THREADS", "").split(",")[0])
    except ValueError:
        return None


def effective_n_threads():
    """Threads for the engine's parallel loops.

    Follows ``OMP_NUM_THREADS`` and ``threadpoolctl.threadpool_limits`` (both
    act on ``omp_get_max_threads``), capped by the CPUs this process may use.
    One in a build without OpenMP, which warns once when ``OMP_NUM_THREADS``
    asks for more.
    """
    cdef int n
    if not EB_OPENMP_ENABLED:
        warn_if_serial(_omp_num_threads(), "OMP_NUM_THREADS")
        return 1
    n = eb_omp_max_threads()
    return max(1, min(n, _cpu_count()))


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
