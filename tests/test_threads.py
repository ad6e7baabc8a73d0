"""The number of threads a fit runs on (docs/usage.md, "Threads"):
``threadpoolctl.threadpool_limits`` and ``OMP_NUM_THREADS`` set it, and the
model does not depend on it.

Each case runs in a fresh process, which counts its operating-system
threads (``/proc/self/task``) before and after a fit: OpenMP starts its
worker threads at the first parallel region that asks for more than one and
keeps them, so a fit on one thread adds none.
"""

import os
import subprocess
import sys
import textwrap

import pytest

from eraboost._engine._openmp import openmp_enabled

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="counts threads in /proc"
)

SCRIPT = textwrap.dedent(
    """
    import hashlib, os, sys, time
    import numpy as np
    from threadpoolctl import threadpool_limits
    from eraboost import HistGradientBoostingRegressor
    from eraboost._engine._openmp import effective_n_threads

    def threads():
        n = len(os.listdir("/proc/self/task"))
        for _ in range(50):  # until the count holds still
            time.sleep(0.02)
            m = len(os.listdir("/proc/self/task"))
            if m == n:
                return n
            n = m
        return n

    rng = np.random.RandomState(0)
    X = rng.normal(size=(20000, 5))
    y = X[:, 0] - X[:, 1] + rng.normal(size=20000)
    eras = np.repeat(np.arange(20), 1000)
    model = HistGradientBoostingRegressor(max_iter=5, split_type="era", random_state=0)
    with threadpool_limits(limits=1, user_api="openmp"):
        # loads every library a fit loads (scipy's BLAS starts its threads
        # then), on one OpenMP thread
        model.fit(X[::40], y[::40], eras=eras[::40])
    before = threads()
    if sys.argv[1] == "limits":
        with threadpool_limits(limits=1, user_api="openmp"):
            used = effective_n_threads()
            model.fit(X, y, eras=eras)
    else:
        used = effective_n_threads()
        model.fit(X, y, eras=eras)
    started = threads() - before
    # (predict, outside the limits, may start the workers)
    digest = hashlib.sha256(model.predict(X).tobytes()).hexdigest()
    print(used, started, digest)
    """
)


def run(tmp_path, how, omp_num_threads):
    path = tmp_path / "count.py"
    path.write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OMP_")}
    if omp_num_threads is not None:
        env["OMP_NUM_THREADS"] = str(omp_num_threads)
    res = subprocess.run(
        [sys.executable, str(path), how],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stderr
    used, started, digest = res.stdout.split()
    return int(used), int(started), digest


def test_threadpool_limits_and_omp_num_threads_set_the_threads_of_a_fit(tmp_path):
    many = run(tmp_path, "plain", 2)
    limited = run(tmp_path, "limits", 2)
    one = run(tmp_path, "plain", 1)
    # the same model on any number of threads
    assert many[2] == limited[2] == one[2]
    # one thread under threadpool_limits(1) or OMP_NUM_THREADS=1: no worker
    assert limited[:2] == (1, 0)
    assert one[:2] == (1, 0)
    if not openmp_enabled():
        assert many[:2] == (1, 0)  # the build without OpenMP: always one
    elif len(os.sched_getaffinity(0)) >= 2:
        # OMP_NUM_THREADS=2 on 2 CPUs or more: one worker beside the main thread
        assert many[0] == 2
        assert many[1] >= 1
