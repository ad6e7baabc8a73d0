"""The benchmark scripts that report more than timings still compute what
they print (``benchmarks/peers/`` and ``benchmarks/engine/``)."""

import contextlib
import importlib
import io
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def import_benchmark(monkeypatch, path):
    """The script ``benchmarks/<path>.py`` (``"engine/era_phases"``) as a
    module, imported afresh from its folder, as ``python`` runs it."""
    folder, name = path.split("/")
    monkeypatch.syspath_prepend(str(BENCHMARKS / folder))
    sys.modules.pop(name, None)
    return importlib.import_module(name)


@pytest.fixture
def era_phases(monkeypatch):
    return import_benchmark(monkeypatch, "engine/era_phases")


def test_era_phases_rows_and_ratios(era_phases):
    n, trees = 2_000, 3
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        era_phases.main(
            [
                "--rows",
                str(n),
                "--features",
                "4",
                "--trees",
                str(trees),
                "--leaves",
                "5",
                "--eras",
                "4",
            ]
        )
    rows = [
        line.split("|")[1:-1]
        for line in out.getvalue().splitlines()
        if line.startswith("| 4 |")
    ]
    assert [r[1].strip() for r in rows] == ["original", "era", "directional"]
    for r in rows:
        per_tree = float(r[6].replace(",", ""))
        # every tree histograms its root's n rows, then each split's
        # smaller child: at most n / 2 rows for each of the 4 splits
        assert n <= per_tree <= n + 4 * n / 2
        fit, rows_ratio = (float(c.strip().rstrip("x")) for c in r[8:10])
        assert fit > 0 and rows_ratio > 0
        # the histograms of so small a fit may take under a millisecond
        assert r[10].strip() == "n/a" or float(r[10].strip().rstrip("x")) >= 0
    # the reference's own ratios
    assert [c.strip() for c in rows[0][8:10]] == ["1.00x"] * 2
    assert rows[0][10].strip() in ("1.00x", "n/a")
    # rows / original is the ratio of the printed rows per tree
    per_tree = [float(r[6].replace(",", "")) for r in rows]
    for r, p in zip(rows[1:], per_tree[1:]):
        assert float(r[9].strip().rstrip("x")) == pytest.approx(
            p / per_tree[0], abs=0.006
        )


@pytest.fixture
def compare(monkeypatch):
    return import_benchmark(monkeypatch, "peers/compare")


def test_compare_selects_runs_by_label_and_eras(compare):
    runs = compare.runs_of_case("int8", False, None, None)
    assert {s["n_eras"] for _, s in runs} == {1, 16, 256, 1024}
    picked = compare.select_runs(runs, "^eraboost", "256")
    assert sorted(lab for lab, _ in picked) == [
        "eraboost directional",
        "eraboost era",
        "eraboost original",
    ]
    assert all(s["n_eras"] == 256 for _, s in picked)
    # the fits without eras are era count 1
    plain = compare.select_runs(runs, None, "1")
    assert {lab for lab, _ in plain} == {
        "sklearn",
        "lightgbm",
        "xgboost",
        "eraboost original",
    }
    assert compare.select_runs(runs) == runs


def test_make_data_by_columns_and_from_its_cache(monkeypatch, tmp_path):
    """The data of ``compare.py``: stored by columns on request, and the same
    values read back from the cache as drawn without it."""
    data = import_benchmark(monkeypatch, "engine/_data")
    for kind in ("int5", "float"):
        X, y, eras = data.make_data(kind, 300, 5, 3)
        assert X.flags.c_contiguous and np.bincount(eras).tolist() == [100] * 3
        for _ in range(2):  # drawn and saved, then read back
            Xc, yc, ec = data.make_data(kind, 300, 5, 3, cache=tmp_path)
            assert np.array_equal(Xc, X) and np.array_equal(yc, y)
            assert np.array_equal(ec, eras)
        XF, yF, _ = data.make_data(kind, 300, 5, 3, order="F")
        assert XF.flags.f_contiguous and XF.dtype == X.dtype
        assert not np.array_equal(XF, X)
        # another era count: the same matrix, another target
        X2, y2, e2 = data.make_data(kind, 300, 5, 2, order="F", cache=tmp_path)
        assert X2.flags.f_contiguous and np.array_equal(X2, XF)
        assert e2.max() == 1 and not np.array_equal(y2, yF)
        X2, y2, _ = data.make_data(kind, 300, 5, 3, order="F", cache=tmp_path)
        assert np.array_equal(X2, XF) and np.array_equal(y2, yF)
    assert not list(tmp_path.glob("*.tmp"))


def test_compare_numerai_full_case_and_its_targets(compare):
    """Numerai at full scale: stored by columns, against LightGBM, with the
    targets of issue 30 and the phases recorded with ``--phases``."""
    runs = dict(compare.runs_of_case("numerai-full", False, None, None))
    assert sorted(runs) == [
        "eraboost directional",
        "eraboost era",
        "eraboost original",
        "lightgbm",
    ]
    era = runs["eraboost era"]
    assert (era["n"], era["p"], era["n_eras"]) == (2_700_000, 2376, 570)
    assert era["order"] == "F" and era["colsample"] == 0.1
    assert runs["lightgbm"]["n_eras"] == 1

    def rec(label, rep, fit, peak, n_eras=570, phases=None):
        r = dict(
            runs[label],
            case="numerai-full",
            label=label,
            repeat=rep,
            fit_s=fit,
            peak_rss_mb=peak,
            data_rss_mb=6000.0,
            n_eras=n_eras,
        )
        if phases:
            r["phases"] = phases
        return r

    ph = {
        "binning": 1.0,
        "histograms": 20.0,
        "scan": 1.0,
        "partition": 0.5,
        "prediction update": 0.1,
    }
    records = [
        rec("lightgbm", 0, 100.0, 40000.0, n_eras=1),
        rec("eraboost era", 0, 29.0, 7000.0, phases=ph),
        rec("eraboost era", 1, 25.0, 8000.0, phases=dict(ph, histograms=18.0)),
        rec("eraboost era", 2, 27.0, 7600.0, phases=dict(ph, histograms=22.0)),
    ]
    text = compare.table(records, False)
    # only the first repeat has a LightGBM fit to compare with
    assert "| numerai-full: era time / lightgbm <= 0.3 | 0.290 | yes |" in text
    memory = "numerai-full: era peak RSS above the data (MB) <= 1536"
    assert f"| {memory} | 1600.000 | NO |" in text
    row = next(
        line
        for line in text.splitlines()
        if "| eraboost era |" in line and "numerai-full" in line
    )
    cells = [c.strip() for c in row.split("|")[1:-1]]
    # fit and histograms: their medians; other: the median of each fit's
    # rest (6.4, 4.4 and 2.4 s)
    assert cells[4:7] == ["27.00", "1.00", "20.00"] and cells[-1] == "4.40"


@pytest.fixture
def phases(monkeypatch):
    return import_benchmark(monkeypatch, "engine/phases")


def test_phases_table_of_eraboost_and_sklearn(phases, tmp_path):
    """Each library's phases come from its own verbose output, in a fresh
    process per fit; they and "other" add up to the fit time."""
    out = io.StringIO()
    records = tmp_path / "phases.jsonl"
    with contextlib.redirect_stdout(out):
        phases.main(
            [
                "--case",
                "int8",
                "--rows",
                "3000",
                "--trees",
                "3",
                "--threads",
                "1",
                "--libs",
                "eraboost,sklearn",
                "--order",
                "C,F",
                "--out",
                str(records),
            ]
        )
    rows = [line for line in out.getvalue().splitlines() if line.startswith("| ")]
    labels = [tuple(c.strip() for c in r.split("|")[1:4]) for r in rows[1:]]
    assert labels == [
        ("eraboost", "C", "1"),
        ("eraboost", "F", "1"),
        ("sklearn", "C", "1"),
    ]
    for line in records.read_text().splitlines():
        rec = json.loads(line)
        parts = [rec[p] for p in phases.PHASES]
        assert all(p >= 0 for p in parts)
        assert rec["other"] == pytest.approx(rec["fit_s"] - sum(parts))
        assert sum(parts) <= rec["fit_s"] + 0.01  # printed to the millisecond


def test_phases_split_types_and_speedups(phases, tmp_path):
    """--split-types fits eraboost with each criterion (the era criteria on
    --eras eras); the speedup table divides each phase's median at the
    fewest threads by its median at each count."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        phases.main(
            [
                *("--case", "int8", "--rows", "3000", "--trees", "3"),
                *("--threads", "1,2", "--libs", "eraboost"),
                *("--split-types", "original,era", "--eras", "4"),
            ]
        )
    rows = [line for line in out.getvalue().splitlines() if line.startswith("| ")]
    labels = [tuple(c.strip() for c in r.split("|")[1:4]) for r in rows]
    assert ("eraboost era (4 eras)", "C", "2") in labels
    assert ("eraboost", "C", "1") in labels
    speedup = [r for r in labels if r[1] == "C" and r[0].startswith("eraboost")]
    assert len(speedup) == 6  # four phase rows, two speedup rows

    def rec(threads, fit, hist):
        phase = dict.fromkeys(phases.PHASES, 0.5)
        phase["histograms"] = hist
        return dict(
            lib="eraboost", order="C", threads=threads, split_type="original",
            eras=1, fit_s=fit, other=0.5, **phase,
        )  # fmt: skip

    records = [
        rec(1, 10.0, 8.0),
        rec(1, 12.0, 9.0),
        rec(1, 11.0, 8.5),
        rec(4, 2.75, 2.0),
    ]
    table = phases.speedups(records)
    row = [r for r in table.splitlines() if r.startswith("| eraboost |")]
    cells = [c.strip() for c in row[0].split("|")[1:-1]]
    # fit 11.0 / 2.75, histograms 8.5 / 2.0, the others 0.5 / 0.5
    assert cells[:5] == ["eraboost", "C", "4", "4.0x", "1.0x"]
    assert cells[5] == "4.2x" and cells[-1] == "1.0x"
    assert phases.speedups(records[:3]) is None


def test_core_speed_table(monkeypatch):
    core_speed = import_benchmark(monkeypatch, "engine/core_speed")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        core_speed.main(["--processes", "1,2", "--loop", "1000", "--megabytes", "8"])
    rows = [line for line in out.getvalue().splitlines() if line.startswith("| ")]
    cells = [[c.strip() for c in r.split("|")[1:-1]] for r in rows[1:]]
    assert [c[0] for c in cells] == ["1", "2"]
    assert cells[0][3] == "1.00x"
    assert all(float(c[4]) > 0 and float(c[5]) >= float(c[4]) for c in cells)


def test_phases_reads_xgboost_monitor(phases):
    """XGBoost's monitor (verbosity=3) as its 3.x releases print it."""
    text = """[09:48:41] ======== Monitor (0): GBTree ========
[09:48:41] BoostNewTrees: 0.438641s, 20 calls @ 438641us
[09:48:41] ======== Monitor (0): HistUpdater ========
[09:48:41] BuildHistogram: 0.238428s, 580 calls @ 238428us
[09:48:41] EvaluateSplits: 0.007692s, 600 calls @ 7692us
[09:48:41] LeafPartition: 0.021379s, 20 calls @ 21379us
[09:48:41] UpdatePosition: 0.067201s, 600 calls @ 67201us
[09:48:41] ======== Monitor (0):  ========
[09:48:41] BuildHist: 0.324911s, 600 calls @ 324911us
"""
    got = phases.parse_monitor(text)
    assert got["histograms"] == pytest.approx(0.324911)
    assert got["scan"] == pytest.approx(0.007692)
    assert got["partition"] == pytest.approx(0.067201 + 0.021379)
    assert got["trees"] == pytest.approx(0.438641)
    with pytest.raises(ValueError, match="BuildHist"):
        phases.parse_monitor(text.replace("BuildHist:", "Other:"))
    with pytest.raises(ValueError, match="histograms"):
        phases.parse_verbose("Binning 0.010 GB of training data: 0.060 s\n")


def test_scan_bounds_finds_the_same_splits(monkeypatch):
    """benchmarks/engine/scan_bounds.py times the scan with and without the bounds
    of docs/criteria.md and checks the splits are the same."""
    scan_bounds = import_benchmark(monkeypatch, "engine/scan_bounds")
    for split_type in ("era", "directional"):
        with contextlib.redirect_stdout(io.StringIO()):
            args = "--rows 6000 --features 6 --eras 8 --trees 3 --repeats 1"
            out = scan_bounds.main(
                [*args.split(), "--sparse", "--split-type", split_type]
            )
        assert out["same"] and out["nodes"] > 0
        assert out["skipped"] > 0


def test_scan_bounds_compares_the_scans_by_gain_sums(monkeypatch):
    """``--compare gain-sums`` times the scans with and without the gain
    sums alone (features of few bins under ``era``), each histogram read
    just before its scan, and checks the splits are the same."""
    scan_bounds = import_benchmark(monkeypatch, "engine/scan_bounds")
    with contextlib.redirect_stdout(io.StringIO()) as text:
        args = "--kind int5 --rows 6000 --features 6 --eras 12 --trees 3 --repeats 1"
        out = scan_bounds.main([*args.split(), "--compare", "gain-sums", "--in-cache"])
    assert out["same"] and out["nodes"] > 0
    assert out["summed"] > 0
    assert "by gain sums:" in text.getvalue()


def test_scan_bounds_times_the_sparse_nodes(monkeypatch):
    """``--sparse`` times the scans of the tree's sparse nodes with and
    without the screening of their candidates, checks the splits are the
    same, and counts the candidates screened out."""
    scan_bounds = import_benchmark(monkeypatch, "engine/scan_bounds")
    for split_type in ("era", "directional"):
        with contextlib.redirect_stdout(io.StringIO()) as text:
            args = (
                "--kind float --rows 6000 --features 6 --eras 20 --trees 3 --repeats 1"
            )
            out = scan_bounds.main(
                [*args.split(), "--sparse", "--split-type", split_type]
            )
        assert out["same"] and out["nodes"] > 0
        assert "sparse nodes" in text.getvalue()
        if split_type == "era":
            assert out["skipped"] > 0


def test_era_phases_per_call(era_phases):
    """``--per-call`` adds a table of the builds and split-finding calls by
    kind: the dense builds of every criterion, the sparse ones of the era
    criteria only, and as many builds as rows histogrammed say."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        args = "--kind float --rows 3000 --features 4 --trees 3 --leaves 8 --eras 20"
        era_phases.main([*args.split(), "--per-call"])
    rows = [
        [c.strip() for c in line.split("|")[1:-1]]
        for line in out.getvalue().splitlines()
        if line.startswith("| 20 |") and len(line.split("|")) == 9
    ]
    kinds = {(r[1], r[2]) for r in rows}
    assert {(t, "build dense") for t in ("original", "era", "directional")} <= kinds
    assert ("original", "build sparse") not in kinds
    assert ("era", "build sparse") in kinds
    for r in rows:
        calls, seconds, per_call = int(r[3].replace(",", "")), float(r[4]), float(r[5])
        assert calls > 0 and per_call > 0
        assert per_call * calls == pytest.approx(seconds * 1e6, rel=0.02, abs=6e3)


def test_era_phases_size_classes(era_phases):
    """``--sizes`` labels each build by its node's rows: the root, or the
    power of ten at or below them."""
    assert era_phases.size_class(200_000, 200_000) == "root"
    assert era_phases.size_class(27_837, 200_000) == "10,000+ rows"
    assert era_phases.size_class(10_000, 200_000) == "10,000+ rows"
    assert era_phases.size_class(9_999, 200_000) == "1,000+ rows"
    assert era_phases.size_class(1, 200_000) == "1+ rows"


def test_era_fill_times_both_layouts(monkeypatch):
    """benchmarks/engine/era_fill.py times the per-era histograms of a tree's
    nodes from both layouts and checks they give the same bytes."""
    era_fill = import_benchmark(monkeypatch, "engine/era_fill")
    with contextlib.redirect_stdout(io.StringIO()) as out:
        args = "--rows 6000 --features 6 --eras 300 --trees 2 --repeats 1"
        got = era_fill.main(args.split())
    assert got["same"] and got["nodes"] > 0
    assert set(got["times"]) == {"rows", "columns"}
    assert "same bytes: True" in out.getvalue()


def test_era_fill_times_another_build_in_turn(monkeypatch):
    """``--against DIR`` loads the histogram module of the eraboost
    installed in DIR beside the imported one and times both in turn: here
    the imported build itself, which gives the same bytes."""
    era_fill = import_benchmark(monkeypatch, "engine/era_fill")
    import eraboost

    install = os.path.dirname(os.path.dirname(eraboost.__file__))
    with contextlib.redirect_stdout(io.StringIO()) as out:
        args = "--rows 6000 --features 6 --eras 300 --trees 2 --repeats 2"
        got = era_fill.main([*args.split(), "--layouts", "rows", "--against", install])
    assert got["same"]
    assert set(got["ratios"]) == {("rows", "this build"), ("rows", install)}
    assert got["ratios"]["rows", "this build"] == 1.0
    assert got["ratios"]["rows", install] > 0
    assert f"{install} gave the same bytes as this build: True" in out.getvalue()


def test_era_fill_times_each_node_against_a_pooled_build(monkeypatch):
    """``--pooled`` times each dense node's per-era build against a pooled
    build of the same rows, prints them by node size, and checks that the
    per-era builds' pooled cells hold the pooled builds' sums."""
    era_fill = import_benchmark(monkeypatch, "engine/era_fill")
    with contextlib.redirect_stdout(io.StringIO()) as out:
        args = "--rows 6000 --features 6 --eras 300 --trees 2 --repeats 1"
        got = era_fill.main([*args.split(), "--layouts", "rows", "--pooled"])
    assert got["nodes"] > 0
    assert set(got["pooled"]) == {"rows"} and got["pooled"]["rows"] > 0
    text = out.getvalue()
    assert "| rows per per-era cell | nodes |" in text
    assert "pooled sums match the pooled builds: True" in text


def test_era_fill_pooled_check_sees_other_rows(monkeypatch):
    """The check of ``--pooled`` fails where the two builds did not
    histogram the same rows."""
    era_fill = import_benchmark(monkeypatch, "engine/era_fill")
    from eraboost._engine import _histogram

    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(50, 2)).astype(np.uint8)
    n_bins = np.full(2, 4, dtype=np.uint32)
    eras = np.repeat(np.arange(5, dtype=np.int32), 10)
    g = rng.normal(size=50).astype(np.float32)
    h = np.ones(1, dtype=np.float32)
    features = np.arange(2, dtype=np.uint32)
    built = []
    for n_eras in (5, 1):
        offsets = _histogram.histogram_layout(n_bins, n_eras)
        b = _histogram.HistogramBuilder(
            X, n_bins, offsets, n_eras, eras if n_eras > 1 else None, g, h, 1
        )
        built.append((b, [b.empty()]))
    rows = np.arange(50, dtype=np.uint32)
    built[0][0].compute_brute(rows, built[0][1][0], features)
    built[1][0].compute_brute(rows, built[1][1][0], features)
    assert era_fill.same_pooled(built[0], built[1], 0, 2)
    built[1][0].compute_brute(rows[:49], built[1][1][0], features)
    assert not era_fill.same_pooled(built[0], built[1], 0, 2)


def test_era_fill_refuses_a_folder_without_eraboost(monkeypatch, tmp_path):
    era_fill = import_benchmark(monkeypatch, "engine/era_fill")
    with pytest.raises(SystemExit, match="no eraboost _histogram module"):
        era_fill.main(["--rows", "6000", "--against", str(tmp_path)])


def test_scan_bounds_times_another_build_in_turn(monkeypatch, tmp_path):
    """``scan_bounds.py --against DIR`` loads the splitting module of the
    eraboost installed in DIR beside the imported one and times both scans
    in turn: here the imported build itself, which finds the same splits;
    a folder without eraboost is refused."""
    scan_bounds = import_benchmark(monkeypatch, "engine/scan_bounds")
    import eraboost

    install = os.path.dirname(os.path.dirname(eraboost.__file__))
    with contextlib.redirect_stdout(io.StringIO()) as out:
        args = "--kind int5 --rows 6000 --features 6 --eras 12 --trees 2 --repeats 2"
        got = scan_bounds.main([*args.split(), "--in-cache", "--against", install])
    assert got["nodes"] > 0
    assert got["same"] == {"this build": True, install: True}
    assert got["ratios"]["this build"] == 1.0 and got["ratios"][install] > 0
    assert f"{install}: " in out.getvalue()
    with pytest.raises(SystemExit, match="no eraboost _splitting module"):
        scan_bounds.main(["--rows", "6000", "--against", str(tmp_path)])


def test_leaf_values_times_both_ways(monkeypatch):
    """benchmarks/engine/leaf_values.py times the raw-prediction update by leaves
    and by ranges of rows, and checks the sums are the same."""
    leaf_values = import_benchmark(monkeypatch, "engine/leaf_values")
    with contextlib.redirect_stdout(io.StringIO()) as out:
        got = leaf_values.main(
            ["--rows", "20000", "--threads", "1,2", "--repeats", "2"]
        )
    assert [(t, a) for t, a, _ in got] == [
        (1, False),
        (1, True),
        (2, False),
        (2, True),
    ]
    assert "ascending True" in out.getvalue()


def test_partition_times_another_build_in_turn(monkeypatch, tmp_path):
    """``partition.py --against DIR`` partitions every split's rows of a fit
    with this build and with the build installed in DIR, in turn: here the
    imported build itself, which gives the same rows; a folder without
    eraboost is refused."""
    partition = import_benchmark(monkeypatch, "engine/partition")
    import eraboost

    install = os.path.dirname(os.path.dirname(eraboost.__file__))
    for split_type, kind in [("era", "int5"), ("original", "float")]:
        with contextlib.redirect_stdout(io.StringIO()) as out:
            args = f"--kind {kind} --rows 20000 --features 4 --eras 8 --trees 2"
            got = partition.main(
                [*args.split(), "--split-type", split_type, "--against", install]
            )
        # 2 trees of 32 leaves: 31 splits each
        assert got["splits"] == 62
        assert got["same"] == {"this build": True, install: True}
        assert got["ratios"]["this build"] == 1.0 and got["ratios"][install] > 0
        assert f"{install}: " in out.getvalue()
    with pytest.raises(SystemExit, match="no eraboost _splitting module"):
        partition.main(["--rows", "6000", "--against", str(tmp_path)])


@pytest.mark.slow  # 16 s on 2 cores: fits in processes of two builds
def test_ab_fits_pairs_two_builds_in_turn(monkeypatch, tmp_path):
    """``ab_fits.py`` fits each case with builds A and B in turn, a fresh
    process each, and prints the median ratio: here the same build on both
    sides. Unknown cases, and an era criterion on a case without eras, are
    refused before anything runs."""
    ab_fits = import_benchmark(monkeypatch, "engine/ab_fits")
    cases = "small-float:era,float-eras:original"
    args = ["--against", sys.executable, "--quick", "--pairs", "2"]
    with contextlib.redirect_stdout(io.StringIO()) as out:
        got = ab_fits.main([*args, "--cases", cases, "--cache", str(tmp_path)])
    assert list(got) == cases.split(",")
    for a_s, b_s in got.values():
        assert len(a_s) == len(b_s) == 2 and min(a_s + b_s) > 0
    rows = [r for r in out.getvalue().splitlines() if r.startswith("| small")]
    assert len(rows) == 1 and rows[0].endswith("| 2 |")
    assert ab_fits.case_spec("int8:era", True, tmp_path)["n_eras"] == 256
    assert ab_fits.case_spec("small-float:era", False, tmp_path)["threads"] == 1
    for bad, message in [("float:era", "has no eras"), ("knn:era", "unknown case")]:
        with pytest.raises(SystemExit, match=message):
            ab_fits.main([*args, "--cases", bad])


def test_ab_fits_prices_a_parameter_on_one_build(monkeypatch, tmp_path):
    """With ``--params-a`` and no ``--against``, A and B are this build,
    A's estimator with the parameter: its fits are those of that model."""
    ab_fits = import_benchmark(monkeypatch, "engine/ab_fits")
    seen = []
    real = ab_fits.fit_time

    def spy(python, spec):
        seen.append((python, spec["params"]))
        return real(python, spec)

    monkeypatch.setattr(ab_fits, "fit_time", spy)
    args = ["--quick", "--pairs", "2", "--cases", "small-float:directional"]
    args += ["--params-a", '{"irf_penalty": 1.0}', "--cache", str(tmp_path)]
    with contextlib.redirect_stdout(io.StringIO()):
        got = ab_fits.main(args)
    a_s, b_s = got["small-float:directional"]
    assert len(a_s) == len(b_s) == 2
    # a warm-up, then A B, B A; one Python, the parameter on A's side only
    assert {p for p, _ in seen} == {sys.executable}
    assert [params for _, params in seen] == [
        {"irf_penalty": 1.0},
        {"irf_penalty": 1.0},
        {},
        {},
        {"irf_penalty": 1.0},
    ]


DASK_FIT_ARGS = "--rows 3000 --features 5 --eras 8 --trees 5 --workers 2"
DASK_FIT_ARGS += " --threads-per-worker 1 --repeats 1"


@pytest.mark.slow
def test_dask_fit_prints_time_traffic_and_memory(monkeypatch):
    """benchmarks/peers/dask_fit.py fits eraboost's three criteria and the
    LightGBM and XGBoost Dask estimators on a LocalCluster of worker
    processes, and the single-process fits, and prints each fit's time,
    loopback traffic and worker memory with the ratios of issue 61."""
    for module in ("distributed", "lightgbm", "xgboost"):
        # the peers are in the ``bench`` extra, not ``test``
        pytest.importorskip(module, reason=f"{module} is not installed")
    dask_fit = import_benchmark(monkeypatch, "peers/dask_fit")
    with contextlib.redirect_stdout(io.StringIO()) as out:
        records = dask_fit.main(DASK_FIT_ARGS.split())
    assert [r.get("error") for r in records if "fit_s" not in r] == []
    criteria = ("original", "era", "directional")
    assert sorted(r["label"] for r in records) == sorted(
        [f"eraboost {c}" for c in criteria]
        + [f"eraboost {c}, one process" for c in criteria]
        + ["lightgbm", "xgboost"]
    )
    # the rows of X (int8), y (float64) and eras (int32), each on one worker
    data_mb = 3000 * (5 + 8 + 4) / 2**20
    for r in records:
        if r["label"].endswith("one process"):
            assert r["fit_s"] > 0
            continue
        assert 0 < r["trees"] <= 5
        memory = r["workers_memory"]
        assert len(memory) == 2
        assert sum(m["data_mb"] for m in memory) == pytest.approx(data_mb)
        assert all(m["peak_mb"] > m["data_mb"] > 0 for m in memory)
        assert r["lo_sent_per_tree"] > 0
        if r["label"].startswith("eraboost"):
            # the reductions travel on the loopback the counter reads
            assert r["lo_sent_per_tree"] >= r["reduced_per_tree"] > 0
    text = out.getvalue()
    rows = {
        line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
        for line in text.splitlines()
        if line.startswith("| eraboost") or line.startswith("| lightgbm")
    }
    # fit time, then vs one process, vs the faster peer and vs lightgbm
    assert all(rows[f"eraboost {c}"][2:5] for c in criteria)
    assert rows["eraboost era"][6].endswith("x")  # traffic vs original
    assert "| 2 x 1: era time / lightgbm <= 1.25 |" in text


def test_dask_fit_says_why_eraboost_dask_is_missing(monkeypatch):
    """Where eraboost.dask does not import, its fits are left out and the
    table says why in one row; the other fits still run."""
    dask_fit = import_benchmark(monkeypatch, "peers/dask_fit")
    monkeypatch.setattr(
        dask_fit,
        "unavailable",
        lambda module: "ImportError: no dask" if module == "eraboost.dask" else None,
    )
    with contextlib.redirect_stdout(io.StringIO()) as out:
        records = dask_fit.main([*DASK_FIT_ARGS.split(), "--only", "eraboost,single"])
    assert {r["label"] for r in records} == {
        f"eraboost {c}, one process" for c in ("original", "era", "directional")
    }
    assert "| eraboost.dask unavailable: ImportError: no dask |" in out.getvalue()


def test_dask_fit_chunks_cut_through_eras(monkeypatch):
    dask_fit = import_benchmark(monkeypatch, "peers/dask_fit")
    for n, n_eras, n_chunks in [(3000, 8, 8), (1_000_000, 256, 8), (6400, 64, 4)]:
        rows = dask_fit.chunk_rows(n, n_eras, n_chunks)
        assert rows * n_chunks >= n / 2 and rows % (n // n_eras) != 0


def test_dask_fit_runs_the_criteria_asked(monkeypatch):
    """``--criteria`` picks the eraboost split types that run."""
    dask_fit = import_benchmark(monkeypatch, "peers/dask_fit")
    monkeypatch.setattr(dask_fit, "unavailable", lambda module: None)
    args = [*DASK_FIT_ARGS.split(), "--only", "single", "--criteria", "era"]
    with contextlib.redirect_stdout(io.StringIO()):
        records = dask_fit.main(args)
    assert [r["label"] for r in records] == ["eraboost era, one process"]


@pytest.mark.slow
def test_dask_profile_times_each_part(monkeypatch):
    """benchmarks/peers/dask_profile.py times a Dask fit's calls on the
    driver and each worker's histograms, partial sums and partition."""
    pytest.importorskip("distributed")
    profile = import_benchmark(monkeypatch, "peers/dask_profile")
    args = "--rows 3000 --features 5 --eras 8 --trees 2 --leaves 4 --workers 2"
    with contextlib.redirect_stdout(io.StringIO()) as out:
        profile.main(args.split())
    text = out.getvalue()
    rows = [line.split("|")[1:3] for line in text.splitlines() if line.count("|") == 5]
    calls = {name.strip(): int(n) for name, n in rows if n.strip().isdigit()}
    # 2 trees of 4 leaves: a root and 3 splits each, every node scanned
    # unless a leaf; one best_split per node scanned
    assert calls["root"] == 2 and calls["split"] == 6
    assert 2 <= calls["best_split"] <= 2 + 2 * 6
    for part in ("histograms", "partials", "partition"):
        assert sum(f" {part} |" in line for line in text.splitlines()) == 2
    assert "the round trip beyond it" in text and "echoes" in text


def test_dask_ties_counts_differing_nodes(monkeypatch):
    """benchmarks/experiments/dask_ties.py's comparison: two fits of the
    same rows and seed are identical; a fit of other rows differs, and the
    count stops at the first tree that differs."""
    from eraboost import HistGradientBoostingRegressor

    ties = import_benchmark(monkeypatch, "experiments/dask_ties")
    params = dict(max_iter=3, max_leaf_nodes=8, early_stopping=False)
    fits = []
    for seed in (0, 0, 1):
        X, y, eras = ties.table_of(seed, 600, 4, 10, 0)
        fits.append(HistGradientBoostingRegressor(**params).fit(X, y, eras=eras))
    nodes = sum(t.nodes.shape[0] for stage in fits[0]._predictors for t in stage)
    assert ties.compare(fits[0], fits[1]) == (True, nodes, 0)
    same, compared, differing = ties.compare(fits[0], fits[2])
    first = fits[0]._predictors[0][0].nodes.shape[0]
    assert not same and 0 < differing <= compared
    assert compared <= max(first, fits[2]._predictors[0][0].nodes.shape[0])
