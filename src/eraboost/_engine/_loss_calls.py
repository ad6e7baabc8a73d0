"""The loss's gradients, hessians and value on eraboost's own threads.

scikit-learn's losses (``sklearn._loss``) run their loops on the OpenMP
runtime that scikit-learn's wheel brings; eraboost's engine runs on the one it
was built with. Called with ``n_threads > 1`` inside the boosting loop, the two
runtimes take turns, and with the default wait policy each one's idle threads
spin while the other works (a fit several times slower on 2 cores). So the
boosting loop calls every loss with ``n_threads=1``, on contiguous chunks of
rows, each chunk in one of eraboost's own OpenMP threads
(:func:`eraboost._engine._openmp.run_in_chunks`). The values are those of a single
call: every element is computed by the same scalar code.

The half squared error's gradient without sample weights (the regressor's
default) is computed by eraboost's own loop instead
(:func:`eraboost._engine._gradients.half_squared_error_gradient`, the same
values): a chunk's work is too small for its two GIL hand-overs.
"""

import numpy as np
from sklearn._loss._loss import CyHalfSquaredError

from ._gradients import half_squared_error_gradient
from ._openmp import run_in_chunks

__all__ = ["loss_gradient", "loss_gradient_hessian", "mean_loss"]


def _rows(a, start, stop):
    return None if a is None else a[start:stop]


def _chunked(method, y_true, raw_prediction, sample_weight, n_threads, **outputs):
    """``method`` (a loss's ``gradient`` or ``gradient_hessian``) into
    ``outputs``, one chunk of rows per call with ``n_threads=1``, the chunks
    run on eraboost's threads."""

    def chunk(start, stop):
        method(
            y_true=y_true[start:stop],
            raw_prediction=raw_prediction[start:stop],
            sample_weight=_rows(sample_weight, start, stop),
            n_threads=1,
            **{name: out[start:stop] for name, out in outputs.items()},
        )

    run_in_chunks(chunk, y_true.shape[0], n_threads)


def _column(a, dtype):
    """``a`` as one contiguous column of ``dtype`` without a copy (a 2-D
    array of one column is read as its column), or None."""
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    if a.ndim != 1 or a.dtype != dtype or not a.flags.c_contiguous:
        return None
    return a


def loss_gradient(loss, y_true, raw_prediction, sample_weight, gradient_out, n_threads):
    """``loss.gradient`` into ``gradient_out``, chunked on eraboost's threads
    (the half squared error without sample weights: by
    :func:`~eraboost._engine._gradients.half_squared_error_gradient`)."""
    if sample_weight is None and isinstance(loss.closs, CyHalfSquaredError):
        y = _column(y_true, np.float64)
        raw = _column(raw_prediction, np.float64)
        out = _column(gradient_out, np.float32)
        if y is not None and raw is not None and out is not None:
            half_squared_error_gradient(y, raw, out, n_threads)
            return
    _chunked(
        loss.gradient,
        y_true,
        raw_prediction,
        sample_weight,
        n_threads,
        gradient_out=gradient_out,
    )


def loss_gradient_hessian(
    loss, y_true, raw_prediction, sample_weight, gradient_out, hessian_out, n_threads
):
    """``loss.gradient_hessian`` into the two outputs, chunked on eraboost's
    threads."""
    _chunked(
        loss.gradient_hessian,
        y_true,
        raw_prediction,
        sample_weight,
        n_threads,
        gradient_out=gradient_out,
        hessian_out=hessian_out,
    )


def mean_loss(loss, y_true, raw_prediction, sample_weight, n_threads):
    """The (weighted) mean loss, as ``loss(...)`` computes it: the per-row
    losses chunked on eraboost's threads, then their weighted average."""
    n = y_true.shape[0]
    per_row = np.empty(n, dtype=y_true.dtype)

    def chunk(start, stop):
        loss.loss(
            y_true=y_true[start:stop],
            raw_prediction=raw_prediction[start:stop],
            sample_weight=None,
            loss_out=per_row[start:stop],
            n_threads=1,
        )

    run_in_chunks(chunk, n, n_threads)
    return np.average(per_row, weights=sample_weight)
