"""The histograms' memory (_engine/_memory.py): the estimate before
fitting, the budget and its floor, the pool's bound, ``ulimit -v``."""

import os
import subprocess
import sys

import numpy as np
import pytest

from eraboost import HistGradientBoostingRegressor


def test_histogram_memory_estimate_and_error():
    from eraboost._engine._memory import check_histogram_memory

    # 1000 eras (+ the pooled row) x 100 features x 6 bins, 31 leaves of
    # which at most 15 hold a histogram, plus the one being built:
    # 20 B x 600,600 x 16
    need = check_histogram_memory(1001 * 600, 1000, 31, None, 10**6, 20, budget=10**12)
    assert need == 20 * 600_600 * 16
    with pytest.raises(MemoryError, match=r"1000 eras x 600 bins.*fewer eras"):
        check_histogram_memory(1001 * 600, 1000, 31, None, 10**6, 20, budget=10**8)


def test_too_many_eras_fail_before_fitting(monkeypatch):
    import eraboost._engine._memory as memory

    monkeypatch.setattr(memory, "available_memory", lambda: 10**6)
    rng = np.random.RandomState(0)
    X = rng.normal(size=(2000, 5))
    y = X[:, 0] + rng.normal(size=2000)
    with pytest.raises(MemoryError, match="per-era histograms would need"):
        HistGradientBoostingRegressor(split_type="era", max_iter=2).fit(
            X, y, eras=np.arange(2000) % 500
        )


def test_small_fits_pass_the_guard_when_memory_reads_zero(monkeypatch):
    """A momentary reading of no memory available (another process filling
    the machine) does not refuse a fit whose histograms take a few MB: the
    budget has a floor of 64 MiB (docs/performance.md)."""
    import eraboost._engine._memory as memory

    monkeypatch.setattr(memory, "available_memory", lambda: 0)
    assert memory.memory_budget() == memory.MIN_MEMORY_BUDGET
    rng = np.random.RandomState(0)
    X = rng.randint(0, 5, size=(2000, 5)).astype(np.int8)
    y = X[:, 0] + rng.normal(size=2000)
    model = HistGradientBoostingRegressor(split_type="era", max_iter=3)
    model.fit(X, y, eras=np.arange(2000) % 10)
    assert model.n_iter_ == 3


def test_histogram_pool_enforces_the_budget():
    """The estimate before fitting is the expected peak; the pool is the
    bound: a buffer past the budget is a clear MemoryError, not allocated."""
    from eraboost._engine._memory import HistogramPool

    pool = HistogramPool(1000, budget=2500)
    a, b = pool.get(), pool.get()
    assert a.shape == (1000,) and a.ctypes.data % 128 == 0
    with pytest.raises(
        MemoryError, match=r"more than the .* available.*max_leaf_nodes"
    ):
        pool.get()
    pool.release(a)
    assert pool.get() is a  # reused buffers do not count again
    assert pool.nbytes == 2000 and b is not None


def test_memory_guard_reads_the_address_space_limit(tmp_path):
    """Under ``ulimit -v`` the guard raises its own MemoryError before
    allocating, instead of numpy failing part-way."""
    script = tmp_path / "limited.py"
    script.write_text(
        """
import resource
import numpy as np
from eraboost import HistGradientBoostingRegressor
from eraboost._engine._memory import address_space_left

with open("/proc/self/status") as f:
    vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (vm + 600 * 2**20, resource.RLIM_INFINITY))
assert address_space_left() < 700 * 2**20
rng = np.random.RandomState(0)
X = rng.normal(size=(20_000, 40))
y = rng.normal(size=20_000)
try:
    HistGradientBoostingRegressor(split_type="era", max_iter=2).fit(
        X, y, eras=np.arange(20_000) % 1000
    )
except MemoryError as exc:
    print("MemoryError:", exc)
"""
    )
    proc = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, OMP_NUM_THREADS="1"),
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "per-era histograms would need" in proc.stdout


def test_column_copy_takes_at_most_an_eighth_of_the_budget(monkeypatch):
    """The copy of the binned rows stored by columns (for the partition) is
    made when it takes at most an eighth of the memory budget; always when
    the memory available is unknown."""
    from eraboost._engine import _memory

    assert _memory.column_copy_fits(1000, budget=8000)
    assert not _memory.column_copy_fits(1001, budget=8000)
    monkeypatch.setattr(_memory, "memory_budget", lambda: None)
    assert _memory.column_copy_fits(10**15)
    monkeypatch.setattr(_memory, "memory_budget", lambda: 8e6)
    assert _memory.column_copy_fits(10**6)
    assert not _memory.column_copy_fits(10**6 + 1)
