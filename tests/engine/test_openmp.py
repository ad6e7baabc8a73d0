"""Nothing in the boosting loop runs parallel code of another OpenMP runtime.

scikit-learn's wheel brings its own OpenMP runtime; eraboost's engine runs on
the one it was built with. Inside the boosting loop the losses are called with
``n_threads=1`` on chunks of rows in eraboost's own threads
(``eraboost._engine._loss_calls``), with the same values as one call; the
half squared error's gradient is eraboost's own loop, with scikit-learn's
values.

In a build without OpenMP (the ``openmp`` meson option) the engine runs on
one thread and warns once when more are asked for; the tests of threads
skip there, the tests of that warning run only there.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from sklearn._loss.loss import (
    AbsoluteError,
    BaseLoss,
    HalfBinomialLoss,
    HalfGammaLoss,
    HalfMultinomialLoss,
    HalfPoissonLoss,
    HalfSquaredError,
    PinballLoss,
)

from eraboost import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from eraboost._engine._gradients import half_squared_error_gradient
from eraboost._engine._loss_calls import loss_gradient, loss_gradient_hessian, mean_loss
from eraboost._engine._openmp import openmp_enabled, run_in_chunks

openmp_only = pytest.mark.skipif(
    not openmp_enabled(), reason="built without OpenMP: eraboost runs on one thread"
)
serial_only = pytest.mark.skipif(
    openmp_enabled(), reason="built with OpenMP: no serial-build warning"
)


@pytest.mark.parametrize("n", [0, 1, 3, 7, 40, 41, 1000])
@pytest.mark.parametrize("n_threads", [1, 2, 3, 16])
def test_chunks_cover_every_row_once(n, n_threads):
    seen = np.zeros(n, dtype=np.int64)

    def fn(start, stop):
        assert 0 <= start < stop <= n or n == 0
        seen[start:stop] += 1

    run_in_chunks(fn, n, n_threads)
    np.testing.assert_array_equal(seen, 1)


def test_an_error_in_a_chunk_is_raised():
    def fn(start, stop):
        if start > 0:
            raise KeyError("chunk")

    with pytest.raises(KeyError, match="chunk"):
        run_in_chunks(fn, 1000, 2)


def _targets(loss, rng, n):
    if isinstance(loss, HalfMultinomialLoss):
        return rng.randint(0, 3, n).astype(np.float64)
    if isinstance(loss, HalfBinomialLoss):
        return rng.randint(0, 2, n).astype(np.float64)
    if isinstance(loss, (HalfPoissonLoss, HalfGammaLoss)):
        return rng.gamma(2.0, size=n) + 0.1
    return rng.normal(size=n)


LOSSES = [
    HalfSquaredError,
    AbsoluteError,
    lambda sample_weight: PinballLoss(sample_weight=sample_weight, quantile=0.3),
    HalfPoissonLoss,
    HalfGammaLoss,
    HalfBinomialLoss,
    lambda sample_weight: HalfMultinomialLoss(sample_weight=sample_weight, n_classes=3),
]


@pytest.mark.parametrize("make_loss", LOSSES)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n_threads", [1, 2, 5])
def test_chunked_losses_equal_one_call(make_loss, weighted, n_threads):
    rng = np.random.RandomState(0)
    n = 1001
    sw = rng.uniform(0.5, 2.0, n) if weighted else None
    loss = make_loss(sample_weight=sw)
    y = _targets(loss, rng, n)
    k = getattr(loss, "n_classes", 1) if loss.is_multiclass else 1
    gradient, hessian = loss.init_gradient_and_hessian(n, np.float32, "F")
    raw = np.asfortranarray(rng.normal(scale=0.5, size=(n, k)))

    g_ref, h_ref = gradient.copy(), hessian.copy()
    if loss.constant_hessian:
        loss.gradient(y, raw, sw, gradient_out=g_ref, n_threads=1)
        loss_gradient(loss, y, raw, sw, gradient, n_threads)
    else:
        loss.gradient_hessian(
            y, raw, sw, gradient_out=g_ref, hessian_out=h_ref, n_threads=1
        )
        loss_gradient_hessian(loss, y, raw, sw, gradient, hessian, n_threads)
    np.testing.assert_array_equal(gradient, g_ref)
    np.testing.assert_array_equal(hessian, h_ref)
    assert mean_loss(loss, y, raw, sw, n_threads) == loss(y, raw, sw, n_threads=1)


@pytest.fixture
def loss_threads(monkeypatch):
    """Record the ``n_threads`` of every call into a scikit-learn loss."""
    calls = []
    for name in ("loss", "gradient", "gradient_hessian", "loss_gradient", "__call__"):
        original = getattr(BaseLoss, name)

        def spy(self, *args, _original=original, _name=name, **kwargs):
            calls.append((_name, kwargs.get("n_threads", 1)))
            return _original(self, *args, **kwargs)

        monkeypatch.setattr(BaseLoss, name, spy)

    return calls


@pytest.mark.parametrize(
    "make",
    [
        lambda: HistGradientBoostingRegressor(
            max_iter=4, early_stopping=True, n_iter_no_change=100
        ),
        lambda: HistGradientBoostingRegressor(
            loss="poisson", max_iter=4, early_stopping=True, n_iter_no_change=100
        ),
        lambda: HistGradientBoostingClassifier(
            max_iter=4, early_stopping=True, n_iter_no_change=100
        ),
    ],
)
@pytest.mark.parametrize("classes", [2, 3])
def test_the_loop_calls_losses_on_one_thread(loss_threads, make, classes):
    rng = np.random.RandomState(0)
    X = rng.normal(size=(3000, 4))
    model = make()
    if isinstance(model, HistGradientBoostingClassifier):
        y = rng.randint(0, classes, 3000)
    else:
        y = np.exp(X[:, 0]) + rng.uniform(size=3000)
    model.fit(X, y, sample_weight=rng.uniform(0.5, 1.5, 3000))
    names = {name for name, _ in loss_threads}
    assert "loss" in names and names & {"gradient", "gradient_hessian"}
    assert {n for _, n in loss_threads} == {1}


@openmp_only
def test_no_thread_of_another_runtime_is_started(tmp_path):
    """In a fresh process with two OpenMP threads: a parallel call into
    scikit-learn's runtime starts a worker thread of its own; a fit starts
    none (eraboost's workers are started before the count)."""
    script = textwrap.dedent(
        """
        import os, sys, time
        import numpy as np
        import scipy.special, sklearn.metrics
        from sklearn._loss.loss import HalfSquaredError
        from eraboost import HistGradientBoostingRegressor
        from eraboost._engine.binning import BinMapper
        from eraboost._engine._openmp import effective_n_threads, run_in_chunks

        def threads():
            # a joined Python thread may still be exiting for a moment:
            # read until the count holds still
            n = len(os.listdir("/proc/self/task"))
            for _ in range(100):
                time.sleep(0.02)
                m = len(os.listdir("/proc/self/task"))
                if m == n:
                    return n
                n = m
            return n

        rng = np.random.RandomState(0)
        X = rng.normal(size=(20000, 5))
        y = X[:, 0] + rng.normal(size=20000)
        BinMapper().fit_transform(X)
        run_in_chunks(lambda a, b: None, 100, 2)
        before = threads()
        if sys.argv[1] == "fit":
            HistGradientBoostingRegressor(
                max_iter=3, early_stopping=True, n_iter_no_change=100
            ).fit(X, y)
        else:
            HalfSquaredError().gradient(
                y, np.zeros_like(y), gradient_out=np.empty_like(y), n_threads=2
            )
        print(effective_n_threads(), threads() - before)
        """
    )
    path = tmp_path / "count.py"
    path.write_text(script)
    env = dict(os.environ, OMP_NUM_THREADS="2")
    out = {}
    for what in ("fit", "sklearn"):
        res = subprocess.run(
            [sys.executable, str(path), what],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert res.returncode == 0, res.stderr
        out[what] = [int(v) for v in res.stdout.split()]
    if out["fit"][0] < 2:
        pytest.skip("one CPU: no parallel region to count")
    # the counter sees another runtime's worker...
    assert out["sklearn"][1] >= 1
    # ...and a fit starts none
    assert out["fit"][1] == 0


@pytest.mark.parametrize("n_threads", [1, 2, 5])
@pytest.mark.parametrize("two_d", [False, True])
def test_own_squared_error_gradient_is_scikit_learns(loss_threads, n_threads, two_d):
    # above the one-thread threshold, with values of every magnitude: the
    # difference is rounded once to float32, as scikit-learn rounds it
    rng = np.random.RandomState(1)
    n = 200_003
    y = rng.normal(size=n) * 10.0 ** rng.randint(-8, 9, n)
    raw = y + rng.normal(size=n) * 10.0 ** rng.randint(-8, 9, n)
    if two_d:
        raw = np.asfortranarray(raw[:, None])
    loss = HalfSquaredError()
    gradient, _ = loss.init_gradient_and_hessian(n, np.float32, "F")
    expected = gradient.copy()
    loss.gradient(y, raw, None, gradient_out=expected, n_threads=1)
    loss_threads.clear()
    loss_gradient(loss, y, raw, None, gradient, n_threads)
    # eraboost's loop, not scikit-learn's loss, gave these values
    assert loss_threads == []
    np.testing.assert_array_equal(gradient, expected)


def test_squared_error_gradient_of_other_dtypes_goes_through_the_loss(loss_threads):
    rng = np.random.RandomState(2)
    y = rng.normal(size=1000)
    raw = rng.normal(size=1000)
    loss = HalfSquaredError()
    # float64 gradients: not eraboost's loop (float32 only), the loss's
    gradient, _ = loss.init_gradient_and_hessian(1000, np.float64, "F")
    loss_gradient(loss, y, raw, None, gradient, 2)
    assert {name for name, _ in loss_threads} == {"gradient"}
    np.testing.assert_array_equal(gradient, raw - y)


def test_own_squared_error_gradient_checks_its_lengths():
    y = np.zeros(10)
    with pytest.raises(ValueError, match="one each per row"):
        half_squared_error_gradient(y, np.zeros(9), np.zeros(10, np.float32), 1)
    with pytest.raises(ValueError, match="one each per row"):
        half_squared_error_gradient(y, np.zeros(10), np.zeros(11, np.float32), 1)


THREAD_SCRIPT = """
import json, sys, warnings
import numpy as np
from eraboost import HistGradientBoostingRegressor, InvariantForestRegressor
from eraboost._engine._openmp import effective_n_threads

rng = np.random.RandomState(0)
X = rng.normal(size=(3000, 4))
y = X[:, 0] + rng.normal(size=3000)
n_jobs = None if sys.argv[1] == "None" else int(sys.argv[1])
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    predictions = []
    for _ in range(2):
        model = HistGradientBoostingRegressor(max_iter=5).fit(X, y)
        predictions.append(model.predict(X))
        forest = InvariantForestRegressor(n_estimators=2, n_jobs=n_jobs, max_depth=3)
        predictions.append(forest.fit(X, y).predict(X))
json.dump(
    {
        "threads": effective_n_threads(),
        "warnings": [str(w.message) for w in caught],
        "predictions": [p.tolist() for p in predictions],
    },
    sys.stdout,
)
"""


def run_thread_script(tmp_path, omp_num_threads, n_jobs):
    """Two regressor and two forest fits in a fresh process (the warning is
    given once a process): the thread count, the warnings, the predictions."""
    path = tmp_path / "threads.py"
    path.write_text(THREAD_SCRIPT)
    env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    if omp_num_threads is not None:
        env["OMP_NUM_THREADS"] = omp_num_threads
    res = subprocess.run(
        [sys.executable, str(path), str(n_jobs)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


@serial_only
@pytest.mark.parametrize(
    "omp_num_threads,n_jobs,asked",
    [
        ("4", None, "OMP_NUM_THREADS asks for 4 threads"),
        ("3,2", 1, "OMP_NUM_THREADS asks for 3 threads"),
        (None, 2, "n_jobs=2 asks for 2 threads"),
        ("1", 2, "n_jobs=2 asks for 2 threads"),
    ],
)
def test_serial_build_warns_once_when_threads_are_asked_for(
    tmp_path, omp_num_threads, n_jobs, asked
):
    out = run_thread_script(tmp_path, omp_num_threads, n_jobs)
    assert out["threads"] == 1
    assert len(out["warnings"]) == 1, out["warnings"]
    message = out["warnings"][0]
    assert message.startswith(asked)
    assert "built without OpenMP and runs on one thread" in message
    # the fits still run, the same each time
    assert out["predictions"][0] == out["predictions"][2]


@serial_only
@pytest.mark.parametrize("omp_num_threads,n_jobs", [(None, None), ("1", 1), ("x", 1)])
def test_serial_build_is_silent_when_one_thread_is_asked_for(
    tmp_path, omp_num_threads, n_jobs
):
    out = run_thread_script(tmp_path, omp_num_threads, n_jobs)
    assert out["threads"] == 1
    assert out["warnings"] == []


@openmp_only
def test_openmp_build_uses_the_threads_asked_for_without_warning(tmp_path):
    out = run_thread_script(tmp_path, "2", 2)
    assert out["threads"] == min(2, len(os.sched_getaffinity(0)))
    assert out["warnings"] == []
