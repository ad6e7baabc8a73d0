"""scikit-learn's own OpenMP runtime on one thread, for the test modules that
fit scikit-learn's estimators as references (imported there, autouse).

scikit-learn's wheel brings its own OpenMP runtime, whose waiting threads
spin beside eraboost's: on the busy 2-core machine one reference fit of
1,500 rows took 41-75 s with two threads (4.6-6.9 s of CPU) and 0.65 s with
one. Its results do not depend on the thread count. eraboost's runtime is
left as it is, unless both share one (scikit-learn built without its own).
"""

import pytest
from threadpoolctl import ThreadpoolController

_controller = []


def _scikit_learn_runtime():
    if not _controller:
        import sklearn.ensemble  # noqa: F401  (loads scikit-learn's runtime)

        controller = ThreadpoolController()
        own = [
            lib.filepath
            for lib in controller.lib_controllers
            if lib.user_api == "openmp" and "scikit_learn" in lib.filepath
        ]
        _controller.append(controller.select(filepath=own) if own else None)
    return _controller[0]


@pytest.fixture(autouse=True)
def scikit_learn_on_one_thread():
    runtime = _scikit_learn_runtime()
    if runtime is None:
        yield
        return
    with runtime.limit(limits=1):
        yield
