"""eraboost's tests. They mirror the package: ``engine/`` (the engine's unit
tests and the NumPy brute-force reference), ``robust/``, ``cli/``, and the
estimators and user helpers here.

Each folder is a package, so that test modules import shared helpers by
their full names (``from tests.engine.reference import best_split``):
pytest puts the repository root on ``sys.path`` when it imports them. The
helpers live in modules that are not test modules (``engine/reference.py``,
``engine/helpers.py``, ``cli/helpers.py``, ``model_mutations.py``...; the
shared fixtures in ``conftest.py``): no test module imports another.
"""
