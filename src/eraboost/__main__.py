"""Entry point of ``eraboost`` and ``python -m eraboost`` (see ``cli.py``)."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
