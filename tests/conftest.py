"""The tests mirror the package: ``engine/`` (the engine's unit tests and the
NumPy brute-force reference), ``robust/``, ``cli/``, and the estimators and
user helpers here.

Test modules share helpers by their plain names (``from reference import
best_split``, ``from test_criteria import check_tree``) whatever folder a
test runs from: these folders are on ``sys.path``. Test file names are
unique across the folders (pytest's default import mode needs that).
"""

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent
for _folder in (_HERE / "engine", _HERE):
    if str(_folder) not in sys.path:
        sys.path.insert(0, str(_folder))
