"""``eraboost train --model recommended``: the EraEnsembleRegressor /
Classifier of the recommended pair, the same model as fitted in Python."""

import numpy as np
import pytest

from eraboost import EraEnsembleClassifier, EraEnsembleRegressor, load_model
from eraboost.demo import make_era_data
from tests.cli.helpers import FEATURES, read_csv, run, write


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli_ensemble")
    X, y, eras, _ = make_era_data(8, 150, seed=2)
    write(d / "train.parquet", X, y, eras, {"label": (y > 0).astype(np.int64)})
    return d, (X, y, eras)


COMMON = ["--era", "era", "--feature-prefix", "feature_", "--param", "max_iter=20"]


def test_train_recommended_is_the_ensemble_fitted_in_python(data):
    d, (X, y, eras) = data
    args = ["train", "train.parquet", "--target", "target", *COMMON]
    res = run([*args, "--model", "recommended", "--out", "rec.skops"], d)
    assert res.returncode == 0, res.stderr
    model, meta = load_model(d / "rec.skops", return_metadata=True)
    assert type(model) is EraEnsembleRegressor
    assert meta["model"] == "recommended" and meta["features"] == FEATURES
    ref = EraEnsembleRegressor().set_params(
        original__max_iter=20,
        original__random_state=0,
        directional__max_iter=20,
        directional__random_state=0,
    )
    ref.fit(X, y, eras=eras)
    np.testing.assert_array_equal(model.predict(X), ref.predict(X))
    assert meta["n_iter"] == 40
    # predict reads it as any model file
    res = run(["predict", "rec.skops", "train.parquet", "--out", "p.csv"], d)
    assert res.returncode == 0, res.stderr
    got = np.array([float(r["prediction"]) for r in read_csv(d / "p.csv")])
    np.testing.assert_allclose(got, ref.predict(X), rtol=1e-12)


def test_train_recommended_classifier(data):
    d, (X, y, eras) = data
    args = ["train", "train.parquet", "--target", "label", "--task", "classification"]
    args += [*COMMON, "--quiet"]
    res = run([*args, "--model", "recommended", "--out", "recc.skops"], d)
    assert res.returncode == 0, res.stderr
    model = load_model(d / "recc.skops")
    assert type(model) is EraEnsembleClassifier
    ref = EraEnsembleClassifier().set_params(
        original__max_iter=20,
        original__random_state=0,
        directional__max_iter=20,
        directional__random_state=0,
    )
    ref.fit(X, (y > 0).astype(np.int64), eras=eras)
    np.testing.assert_array_equal(model.predict_proba(X), ref.predict_proba(X))


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--split-type", "era"], "takes no --split-type"),
        (["--param", "irf_penalty=2"], "fixes its members' irf_penalty"),
        (["--param", "max_iter=-1"], "max_iter"),
    ],
)
def test_train_recommended_refuses_what_it_fixes(data, extra, message):
    d, _ = data
    args = ["train", "train.parquet", "--target", "target", *COMMON, *extra]
    res = run([*args, "--model", "recommended", "--out", "bad.skops"], d)
    assert res.returncode != 0
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert not (d / "bad.skops").exists()


def test_train_recommended_on_a_single_era_says_so_once(data, tmp_path):
    _, (X, y, _) = data
    write(tmp_path / "one.parquet", X, y, np.zeros(len(y), dtype=int))
    args = ["train", "one.parquet", "--target", "target", *COMMON]
    res = run([*args, "--model", "recommended", "--out", "one.skops"], tmp_path)
    assert res.returncode == 0, res.stderr
    assert "so --model recommended cannot compare eras" in res.stderr
    assert "given without eras" not in res.stderr  # the estimator's, replaced
