"""Every Python block of the README and of docs/*.md runs as pasted.

Each ```python block is written to a file in a fresh temporary directory and
run in its own interpreter, so that a block only passes when it defines its
own data and imports. Blocks that are not meant to run are not ```python
blocks.
"""

import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```$", re.DOTALL | re.MULTILINE)


def python_blocks():
    """(page name, block number, source) of every ```python block."""
    out = []
    for page in PAGES:
        for k, match in enumerate(BLOCK.finditer(page.read_text()), start=1):
            out.append((page.relative_to(ROOT).as_posix(), k, match.group(1)))
    return out


BLOCKS = python_blocks()


def test_blocks_found():
    """The extraction sees the pages' blocks (README, usage, evaluation...)."""
    pages = {page for page, _, _ in BLOCKS}
    assert {"README.md", "docs/usage.md", "docs/evaluation.md"} <= pages
    assert len(BLOCKS) >= 10


@pytest.mark.parametrize(
    "page, number, source", BLOCKS, ids=[f"{p}-{k}" for p, k, _ in BLOCKS]
)
def test_block_runs(page, number, source, tmp_path):
    script = tmp_path / "block.py"
    script.write_text(source)
    env = dict(os.environ, MPLBACKEND="Agg")
    proc = subprocess.run(
        [sys.executable, str(script)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, (
        f"{page}, Python block {number} failed:\n{proc.stderr[-3000:]}"
    )


def test_supported_pythons_agree():
    """requires-python, the classifiers, the README and the oldest Python CI
    tests name one range of versions."""
    project = (ROOT / "pyproject.toml").read_text()
    lowest = re.search(r'requires-python = ">=3\.(\d+)"', project).group(1)
    minors = sorted(
        int(m)
        for m in re.findall(r'"Programming Language :: Python :: 3\.(\d+)"', project)
    )
    assert minors == list(range(int(lowest), minors[-1] + 1))
    readme = (ROOT / "README.md").read_text()
    assert f"Python 3.{lowest} to 3.{minors[-1]} on Linux" in readme
    ci = (ROOT / ".ci" / "find_python.py").read_text()
    assert f"LOWEST = (3, {lowest})" in ci
