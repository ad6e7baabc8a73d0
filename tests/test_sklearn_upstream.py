"""scikit-learn's own histogram gradient boosting tests, run on eraboost.

At test time the test files are read from the installed scikit-learn
(``sklearn/ensemble/_hist_gradient_boosting/tests/``), the imports of
``HistGradientBoostingClassifier`` / ``HistGradientBoostingRegressor`` are
rewritten to import eraboost's classes, and the result is written to a
temporary directory and run with pytest in a subprocess. Nothing of
scikit-learn's test code is stored in this repository. scikit-learn's other
imports (datasets, metrics, helpers) are kept, with one more rewrite: the
module alias ``hgb_module`` (the estimators' module, which one test
monkeypatches) points at ``eraboost.gradient_boosting``.

Selection policy. Tests that exercise scikit-learn's internal objects
(``TreeGrower``, ``Splitter``, ``HistogramBuilder``, ``TreePredictor``
pickling) instead of the estimators test nothing of eraboost: they are
deselected in ``DESELECTED_INTERNALS``, each with its reason. Tests that read
private names eraboost shares with scikit-learn with the same meaning
(``_predictors[i][k].nodes`` and ``get_max_depth()``, ``_raw_predict``,
``_get_small_trainset``, ``_should_stop``, ``_check_interaction_cst``,
``_random_seed``, ``_bin_mapper.n_bins_non_missing_``) do exercise eraboost
and stay selected; so do all the tests of categorical features, except
the polars cases that the installed scikit-learn's own estimators fail
(``DESELECTED_WHERE_SKLEARN_FAILS``: 1.7 or 1.8 with polars 2), deselected
only where they fail.

Cost: about 15-45 s on two cores (the upstream tests fit some 200 models).
"""

import ast
import importlib
import json
import os
import pathlib
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import sklearn

UPSTREAM_DIR = (
    pathlib.Path(sklearn.__file__).parent
    / "ensemble"
    / "_hist_gradient_boosting"
    / "tests"
)
UPSTREAM_FILES = (
    "test_gradient_boosting.py",
    "test_warm_start.py",
    "test_monotonic_constraints.py",
)
ESTIMATORS = {"HistGradientBoostingClassifier", "HistGradientBoostingRegressor"}
HGB_MODULE_IMPORT = (
    "import sklearn.ensemble._hist_gradient_boosting.gradient_boosting as hgb_module"
)

# The one place that names deselected tests ("file::function", every
# parametrization), with the reason.
DESELECTED_INTERNALS = {
    "test_gradient_boosting.py::test_sum_hessians_are_sample_weight": (
        "grows scikit-learn's TreeGrower on scikit-learn's _BinMapper output; "
        "no estimator is involved"
    ),
    "test_gradient_boosting.py::test_different_bitness_pickle": (
        "rewrites the node dtype of scikit-learn's TreePredictor through a "
        "copyreg dispatch table; eraboost's predictor is another class, so "
        "the test would pass without testing anything"
    ),
    "test_gradient_boosting.py::test_different_bitness_joblib_pickle": (
        "same as test_different_bitness_pickle, through joblib's NumpyPickler"
    ),
    "test_monotonic_constraints.py::test_nodes_values": (
        "grows scikit-learn's TreeGrower with MonotonicConstraint directly; "
        "no estimator is involved"
    ),
    "test_monotonic_constraints.py::test_bounded_value_min_gain_to_split": (
        "calls scikit-learn's Splitter, HistogramBuilder and "
        "compute_node_value directly; no estimator is involved"
    ),
}


def sklearn_misses_polars_categoricals():
    """Whether the installed scikit-learn's own estimators fail to find the
    Categorical columns of a polars DataFrame: 1.7 and 1.8 look for them
    through the dataframe interchange protocol, which polars 2 dropped."""
    try:
        import polars as pl
    except ImportError:
        return False
    from sklearn.ensemble import HistGradientBoostingRegressor as SkHGBR

    df = pl.DataFrame({"c": ["a", "b"] * 10})
    df = df.with_columns(pl.col("c").cast(pl.Categorical))
    try:
        SkHGBR(max_iter=1, categorical_features="from_dtype").fit(df, range(20))
    except ValueError:
        return True
    return False


# Test cases ("file::function[parameters]") that the installed
# scikit-learn's own estimators fail, deselected only where they do: the
# condition, and the reason.
DESELECTED_WHERE_SKLEARN_FAILS = {
    f"test_gradient_boosting.py::test_dataframe_categorical_errors[{cls}-polars]": (
        sklearn_misses_polars_categoricals,
        "scikit-learn's own estimators cannot read polars' categorical "
        "columns here (1.7 or 1.8 with polars 2)",
    )
    for cls in ("HistGradientBoostingClassifier", "HistGradientBoostingRegressor")
}


def deselected():
    """Every deselected test or test case here, with its reason."""
    out = dict(DESELECTED_INTERNALS)
    for case, (condition, reason) in DESELECTED_WHERE_SKLEARN_FAILS.items():
        if condition():
            out[case] = reason
    return out


# conftest.py of the generated directory: the global_random_seed fixture
# (scikit-learn's default seed, 42), exact-name deselection, and a check that
# the collected modules really use eraboost's estimators.
CONFTEST = """
import json
import pathlib

import pytest

_SPEC = json.loads((pathlib.Path(__file__).parent / "selection.json").read_text())


def pytest_generate_tests(metafunc):
    if "global_random_seed" in metafunc.fixturenames:
        metafunc.parametrize("global_random_seed", [42])


def pytest_collection_modifyitems(config, items):
    deselect = set(_SPEC["deselect"])
    seen, keep, dropped = set(), [], []
    for item in items:
        for name in ("HistGradientBoostingClassifier",
                     "HistGradientBoostingRegressor"):
            cls = getattr(item.module, name, None)
            if cls is None or not cls.__module__.startswith("eraboost."):
                raise pytest.UsageError(f"{item.nodeid}: {name} is {cls!r}")
        key = item.nodeid.split("::")[0] + "::" + item.originalname
        hit = key if key in deselect else item.nodeid
        if hit in deselect:
            seen.add(hit)
            dropped.append(item)
        else:
            keep.append(item)
    missing = deselect - seen
    if missing:
        raise pytest.UsageError(f"deselected tests not found: {sorted(missing)}")
    items[:] = keep
    config.hook.pytest_deselected(items=dropped)
"""


def rewrite_imports(source):
    """Import the estimators from eraboost instead of sklearn.ensemble."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    edits = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.module == "sklearn.ensemble"):
            continue
        ours = [a for a in node.names if a.name in ESTIMATORS]
        if not ours:
            continue
        rest = [a for a in node.names if a.name not in ESTIMATORS]
        indent = " " * node.col_offset

        def names(aliases):
            return ", ".join(
                a.name + (f" as {a.asname}" if a.asname else "") for a in aliases
            )

        new = f"{indent}from eraboost import {names(ours)}\n"
        if rest:
            new += f"{indent}from sklearn.ensemble import {names(rest)}\n"
        edits.append((node.lineno, node.end_lineno, new))
    for start, end, new in sorted(edits, reverse=True):
        lines[start - 1 : end] = [new]
    out = "".join(lines)
    out = out.replace(
        HGB_MODULE_IMPORT, "import eraboost.gradient_boosting as hgb_module"
    )
    # scikit-learn 1.7 names the module in full where it monkeypatches it
    full = re.compile(
        r"(?<![\w.])sklearn\.ensemble\._hist_gradient_boosting\.gradient_boosting(?=\s*,)"
    )
    if full.search(out):
        out = "import eraboost.gradient_boosting as hgb_module\n" + full.sub(
            "hgb_module", out
        )
    return out


def write_upstream_tests(directory):
    """Write the rewritten upstream test files, conftest and selection."""
    directory = pathlib.Path(directory)
    for name in UPSTREAM_FILES:
        text = rewrite_imports((UPSTREAM_DIR / name).read_text())
        (directory / name).write_text(text)
    deselect = list(deselected())
    (directory / "selection.json").write_text(json.dumps({"deselect": deselect}))
    (directory / "conftest.py").write_text(CONFTEST)
    (directory / "pytest.ini").write_text("[pytest]\n")
    return deselect


def test_rewrite_imports_targets_eraboost(tmp_path, monkeypatch):
    src = (
        "from sklearn.ensemble import (\n    HistGradientBoostingClassifier,\n"
        "    RandomForestClassifier,\n)\n"
        "def f():\n    from sklearn.ensemble import HistGradientBoostingRegressor"
        " as R\n    return R\n"
    )
    (tmp_path / "rewritten_example.py").write_text(rewrite_imports(src))
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module("rewritten_example")
    assert mod.HistGradientBoostingClassifier.__module__.startswith("eraboost.")
    assert mod.RandomForestClassifier.__module__.startswith("sklearn.")
    assert mod.f().__module__.startswith("eraboost.")


def test_upstream_files_exist_and_name_the_deselected_tests():
    for name in UPSTREAM_FILES:
        assert (UPSTREAM_DIR / name).is_file(), name
    for key in [*DESELECTED_INTERNALS, *DESELECTED_WHERE_SKLEARN_FAILS]:
        file, func = key.split("[")[0].split("::")
        tree = ast.parse((UPSTREAM_DIR / file).read_text())
        assert func in {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}, (
            key
        )


def test_sklearn_upstream_hgb_tests_pass_on_eraboost(tmp_path):
    write_upstream_tests(tmp_path)
    report = tmp_path / "report.xml"
    env = dict(os.environ)
    env.pop("PYTEST_ADDOPTS", None)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-q",
            "-rfEs",
            f"--junitxml={report}",
            *UPSTREAM_FILES,
        ],
        check=False,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    tail = proc.stdout[-6000:] + proc.stderr[-2000:]
    assert report.is_file(), tail
    suite = ET.parse(report).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    counts = {k: int(suite.get(k)) for k in ("tests", "failures", "errors", "skipped")}
    assert proc.returncode == 0, tail
    assert counts["failures"] == counts["errors"] == 0, tail
    assert counts["skipped"] == 0, tail
    # the selection is substantial (182 test cases with scikit-learn 1.9.1)
    assert counts["tests"] >= 170, counts
