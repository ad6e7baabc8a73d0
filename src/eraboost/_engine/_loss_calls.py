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
"""

import numpy as np

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


def loss_gradient(loss, y_true, raw_prediction, sample_weight, gradient_out, n_threads):
    """``loss.gradient`` into ``gradient_out``, chunked on eraboost's threads."""
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
