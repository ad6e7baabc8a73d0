"""The demo runs and shows era splitting avoiding the spurious feature."""

import io
import subprocess
import sys

from eraboost.demo import run_demo


def test_demo_era_splitting_beats_pooled_out_of_era():
    out = io.StringIO()
    rows = run_demo(n_eras=20, rows_per_era=500, seed=0, file=out)
    by = {(r[0], r[1]): r for r in rows}
    orig, worst = by[("original", 0.0)], by[("era", float("-inf"))]
    # fewer splits on the spurious feature, lower out-of-era error
    assert worst[6] < orig[6]
    assert worst[5] < orig[5]
    assert "out-of-era MSE" in out.getvalue()


def test_demo_command_line(tmp_path):
    # from another folder: the installed package, not the source tree
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "eraboost",
            "demo",
            "--n-eras",
            "6",
            "--rows-per-era",
            "200",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    assert "directional" in res.stdout
