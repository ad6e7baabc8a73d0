"""Print the path of the newest or the oldest supported CPython here.

Usage: python3 .ci/find_python.py newest|oldest

Looks at pyenv's versions and at python3.X on PATH; "supported" is
requires-python's lower bound (3.10).
"""

import glob
import os
import shutil
import subprocess
import sys

LOWEST = (3, 10)


def candidates():
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    yield from glob.glob(os.path.join(root, "versions", "3.*", "bin", "python3"))
    for minor in range(LOWEST[1], 20):
        path = shutil.which(f"python3.{minor}")
        if path:
            yield path
    yield sys.executable


def version(path):
    try:
        out = subprocess.run(
            [path, "-c", "import sys, venv; print(*sys.version_info[:3])"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    return tuple(int(v) for v in out.stdout.split())


def main():
    which = sys.argv[1]
    found = {}
    for path in candidates():
        v = version(path)
        if v is not None and v[:2] >= LOWEST:
            found.setdefault(v, path)
    if not found:
        sys.exit(f"no CPython >= {LOWEST[0]}.{LOWEST[1]} found")
    pick = max(found) if which == "newest" else min(found)
    print(found[pick])


if __name__ == "__main__":
    main()
