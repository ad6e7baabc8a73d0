"""The one loss gradient eraboost computes itself, on its own threads.

The half squared error's gradient is a subtraction a row. Called through
scikit-learn's loss in chunks (:mod:`eraboost._engine._loss_calls`), each
chunk takes the GIL to enter Python and again to leave it, and on 16
threads those hand-overs cost more than the arithmetic (2 ms a call on
1M rows on the 16-core Xeon, twice the one-thread call). This loop needs
no GIL. Its values are those of scikit-learn's
``HalfSquaredError.gradient``: ``raw_prediction - y_true`` in double,
rounded once to the output's float32.
"""
from cython.parallel cimport prange

from ._common cimport G_t, ELEMENTWISE_ONE_THREAD_BELOW


def half_squared_error_gradient(const double[::1] y_true not None,
                                const double[::1] raw_prediction not None,
                                G_t[::1] gradient_out not None,
                                int n_threads):
    """``gradient_out[i] = raw_prediction[i] - y_true[i]`` (no sample
    weights), as scikit-learn's ``HalfSquaredError.gradient``.

    Parameters
    ----------
    y_true, raw_prediction : ndarray of float64, contiguous
    gradient_out : ndarray of float32, contiguous
    n_threads : int
    """
    cdef Py_ssize_t i, n = y_true.shape[0]
    if raw_prediction.shape[0] != n or gradient_out.shape[0] != n:
        raise ValueError(
            f"{n} targets, {raw_prediction.shape[0]} raw predictions and "
            f"{gradient_out.shape[0]} gradients: one each per row expected")
    cdef int nt = max(1, n_threads) if n >= ELEMENTWISE_ONE_THREAD_BELOW else 1
    with nogil:
        for i in prange(n, schedule='static', num_threads=nt):
            gradient_out[i] = <G_t> (raw_prediction[i] - y_true[i])
