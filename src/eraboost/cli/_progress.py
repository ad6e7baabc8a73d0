"""Progress display and Ctrl-C handling of a training run on the command line.

:class:`TrainingProgress` is a per-iteration callback of ``fit``
(:mod:`eraboost.callbacks`):
it draws a progress bar (iterations, elapsed time, ETA, latest train and
validation scores) and, while :meth:`TrainingProgress.catch_interrupt` is
active, turns the first Ctrl-C (SIGINT) into a request to stop after the
current iteration, so that the trees fitted so far are kept. A second Ctrl-C
aborts at once (``KeyboardInterrupt``).
"""

import signal
import sys
from contextlib import contextmanager
from time import perf_counter


def format_seconds(seconds):
    """``h:mm:ss`` (or ``m:ss`` under an hour) of a duration in seconds."""
    seconds = round(seconds)
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class TrainingProgress:
    """Per-iteration callback: progress display and stop requests.

    Parameters
    ----------
    quiet : bool, default=False
        Draw nothing (Ctrl-C still keeps the trees).
    stream : file-like, default=None
        Where to draw; ``sys.stderr`` when None.
    interval : float, default=None
        Seconds between two redraws: 0.1 on a terminal (the bar is redrawn
        in place), 5 otherwise (one line each time, plus the first and the
        last iteration).

    Attributes
    ----------
    stop_requested : bool
        Whether a stop was asked for (Ctrl-C); the callback then returns
        True, which ends the fit after the current iteration.
    iterations : int
        Iterations reported so far.
    """

    def __init__(self, quiet=False, stream=None, interval=None):
        self.quiet = quiet
        self.stream = sys.stderr if stream is None else stream
        isatty = getattr(self.stream, "isatty", lambda: False)
        self.in_place = bool(isatty())
        self.interval = (
            (0.1 if self.in_place else 5.0) if interval is None else interval
        )
        self.stop_requested = False
        self.iterations = 0
        self._start = perf_counter()
        self._last_draw = None
        self._drawn_in_place = False
        self._state = self._drawn_state = None

    def start(self):
        """Reset the clock (call right before ``fit``)."""
        self._start = perf_counter()
        self._last_draw = None

    def line(self, iteration, n_iter, train_score, val_score, score_name=None):
        """The text of the progress bar.

        Scores are named (``train loss 0.0621, valid pearson 0.031``); a
        loss is shown positive, as scikit-learn prints it, although the
        estimator keeps it negated (larger is better).
        """
        elapsed = perf_counter() - self._start
        eta = elapsed / iteration * (n_iter - iteration) if iteration else 0.0
        width = 20
        filled = int(width * iteration / n_iter)
        text = (
            f"[{'#' * filled}{'.' * (width - filled)}] "
            f"{iteration}/{n_iter} iterations, "
            f"{format_seconds(elapsed)} elapsed, "
            f"ETA {format_seconds(eta)}"
        )
        name = score_name or "score"
        sign = -1.0 if name == "loss" else 1.0
        if train_score is not None:
            text += f", train {name} {sign * train_score:.6g}"
        if val_score is not None:
            text += f", valid {name} {sign * val_score:.6g}"
        return text

    def __call__(self, info):
        """Record one iteration (an ``IterationInfo``); return True to ask
        the fit to stop."""
        iteration, n_iter = info.iteration, info.max_iter
        train_score, val_score = info.train_score, info.validation_score
        self.iterations = iteration
        self._state = (iteration, n_iter, train_score, val_score, info.score_name)
        now = perf_counter()
        if (
            self._last_draw is None
            or iteration == n_iter
            or now - self._last_draw >= self.interval
        ):
            self._draw(now)
        return self.stop_requested

    def _draw(self, now=None):
        if self.quiet or self._state is None:
            return
        self._last_draw = perf_counter() if now is None else now
        self._drawn_state = self._state
        text = self.line(*self._state)
        if self.in_place:
            self.stream.write("\r" + text.ljust(100))
            self._drawn_in_place = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def done(self):
        """Draw the last iteration if it was not drawn, end the bar."""
        if self._state is not None and self._drawn_state is not self._state:
            self._draw()
        self.finish()

    def finish(self):
        """End the in-place bar with a new line."""
        if self._drawn_in_place:
            self.stream.write("\n")
            self.stream.flush()
            self._drawn_in_place = False

    def message(self, text):
        """Print a line of status (nothing when quiet)."""
        if not self.quiet:
            self.finish()
            self.stream.write(text + "\n")
            self.stream.flush()

    def _on_sigint(self, signum, frame):
        if self.stop_requested:
            raise KeyboardInterrupt
        self.stop_requested = True
        self.finish()
        self.stream.write(
            "Ctrl-C: stopping after the current iteration and "
            "saving the trees fitted so far (Ctrl-C again to "
            "abort without saving)\n"
        )
        self.stream.flush()

    @contextmanager
    def catch_interrupt(self):
        """Within this block, the first SIGINT requests a stop."""
        try:
            previous = signal.signal(signal.SIGINT, self._on_sigint)
        except ValueError:  # not the main thread: leave Ctrl-C alone
            yield self
            return
        try:
            yield self
        finally:
            signal.signal(signal.SIGINT, previous)
            self.finish()
