"""The incomplete-views study: settings and schema, the split and the masks, each method of one seed
against a direct fit written out here, the summary, and the workflow's plan (dry runs) and run (slow)."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import ROOT, copy_workflow, job_stats, run_snakemake
from mvl import MVLLeastSquares
from mvl.workflow import incomplete as inc
from mvl.workflow.incomplete import IncompleteSettings
from mvl.workflow.settings import load_study

# ---------------------------------------------------------------- settings and schema


def _config(profile_overlay=None):
    cfg = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    if profile_overlay:
        from mvl.workflow.settings import _merge

        _merge(cfg, yaml.safe_load((ROOT / "config" / profile_overlay).read_text()))
    return cfg


def test_profiles_parse_to_the_study_sizes():
    """default: mfeat, 3 seeds, random and class; ci: 2 seeds; paper: mfeat and mvmnist, 10 seeds, every
    pattern; the scale profile runs none of it."""
    default = load_study(_config()).incomplete
    assert default.datasets == ("mfeat",) and default.seeds == (0, 1, 2) and default.q == (0.0, 0.2, 0.4, 0.6)
    assert default.patterns == ("random", "class") and (default.labels_per_class, default.unlabelled_per_class) == (
        5, 50)
    assert default.gamma_B == 1e-4
    assert load_study(_config("ci.yaml")).incomplete.seeds == (0, 1)
    paper = _config("mfeat_full.yaml")
    from mvl.workflow.settings import _merge

    _merge(paper, yaml.safe_load((ROOT / "config" / "paper.yaml").read_text()))
    p = load_study(paper).incomplete
    assert p.datasets == ("mfeat", "mvmnist") and len(p.seeds) >= 5 and set(p.patterns) == {"random", "class", "block"}
    assert load_study(_config("scale.yaml")).incomplete is None


@pytest.mark.parametrize("bad", [{"q": [1.2]}, {"patterns": ["diagonal"]}, {"labels_per_class": 0}, {"gamma_B": -1},
                                 {"unknown_key": 1}, {"seeds": []}])
def test_schema_rejects_bad_incomplete_sections(bad):
    import jsonschema

    schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
    cfg = _config()
    jsonschema.validate(cfg, schema)  # the default config is valid
    cfg = copy.deepcopy(cfg)
    cfg["incomplete"].update(bad)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(cfg, schema)


# ---------------------------------------------------------------- split and masks


def test_draw_split_sizes_disjoint_seeded():
    y = np.repeat([4, 7, 9], 30)
    train, ytr, test = inc.draw_split(y, 5, 3, 10, 6)
    assert train.size == 3 * 13 and test.size == 3 * 6 and not set(train) & set(test)
    for k in (4, 7, 9):
        assert np.sum(ytr == k) == 3 and np.all(y[train][ytr == k] == k)  # labels are the true ones
        assert np.sum(y[train] == k) == 13 and np.sum(y[test] == k) == 6
    assert np.sum(ytr == -1) == 30
    again = inc.draw_split(y, 5, 3, 10, 6)
    assert all(np.array_equal(a, b) for a, b in zip((train, ytr, test), again, strict=True))
    assert not np.array_equal(inc.draw_split(y, 6, 3, 10, 6)[0], train)
    with pytest.raises(ValueError, match="class 4 has 30 samples, the split needs 31"):
        inc.draw_split(y, 0, 5, 20, 6)


@pytest.mark.parametrize("q", [0.0, 0.2, 0.4, 0.6])
def test_masks_fraction_and_one_view_rule(q):
    y = np.repeat(np.arange(10), 24)  # 240 samples, 10 classes of 24
    m, n = 6, 240
    rnd = inc.presence_mask("random", y, m, q, inc.mask_rng(0, "random", q))
    assert rnd.shape == (n, m) and rnd.sum(1).min() >= 1
    assert (~rnd).sum() == round(q * n * m)
    cls = inc.presence_mask("class", y, m, q, inc.mask_rng(0, "class", q))
    assert cls.sum(1).min() >= 1 and (~cls).sum() == 24 * round(q * 10 * m)  # whole classes: exact
    for k in range(10):  # every sample of a class has the same views
        assert (cls[y == k] == cls[y == k][0]).all()
    blk = inc.presence_mask("block", y, m, q, inc.mask_rng(0, "block", q), n_blocks=8)
    assert blk.sum(1).min() >= 1 and (~blk).sum() == 30 * round(q * 8 * m)  # 8 blocks of 30
    assert len({row.tobytes() for row in blk}) <= 8
    # the same (seed, pattern, q) gives the same mask; another seed another one
    assert np.array_equal(rnd, inc.presence_mask("random", y, m, q, inc.mask_rng(0, "random", q)))
    if q:
        assert not np.array_equal(rnd, inc.presence_mask("random", y, m, q, inc.mask_rng(1, "random", q)))
    with pytest.raises(ValueError, match="pattern"):
        inc.presence_mask("diagonal", y, m, q, inc.mask_rng(0, "random", q))


# ---------------------------------------------------------------- the methods against direct fits


def _toy(seed=0, n_per_class=24, sizes=(3, 4, 2)):
    """Three classes, three noisy views of different sizes: each view a class mean plus noise."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], n_per_class)
    views = [rng.normal(size=(3, d))[y] * 1.5 + rng.normal(size=(y.size, d)) for d in sizes]
    return views, y


SETTINGS = IncompleteSettings(datasets=("toy",), q=(0.0, 0.5), patterns=("random", "class"), seeds=(0,),
                              labels_per_class=3, unlabelled_per_class=9, test_per_class=12, gamma_B=1e-3)


def _standardize(Xtr, Xte):
    """z-scores with the training samples' means and (population) standard deviations, NaN ignored and kept."""
    mu, sd = np.nanmean(Xtr, axis=0), np.nanstd(Xtr, axis=0)
    sd = np.where(sd > 0, sd, 1.0)
    return (Xtr - mu) / sd, (Xte - mu) / sd


def _nan_views(views, mask):
    X = np.hstack(views).astype(float)
    col = np.repeat(np.arange(len(views)), [V.shape[1] for V in views])
    X[~mask[:, col]] = np.nan
    return X


def test_mean_imputation_equals_direct_imputer_and_fit():
    views, y = _toy()
    sizes = [V.shape[1] for V in views]
    train, ytr, test = inc.draw_split(y, 0, 3, 9, 12)
    mask = inc.presence_mask("random", y, 3, 0.5, inc.mask_rng(0, "random", 0.5))
    pred, note = inc.fit_predict("mean_imputation", views, mask, train, ytr, test, gamma_B=1e-3)
    X = _nan_views(views, mask)
    Xtr, Xte = X[train], X[test]
    mu = np.nanmean(Xtr, axis=0)  # the training samples' feature means fill every missing entry
    Xtr, Xte = np.where(np.isnan(Xtr), mu, Xtr), np.where(np.isnan(Xte), mu, Xte)
    Ztr, Zte = _standardize(Xtr, Xte)
    ref = MVLLeastSquares(views=sizes, gamma_B=1e-3, loss="squared").fit(Ztr, ytr).predict(Zte)
    assert note == "" and np.array_equal(pred, ref)


def test_single_view_fits_on_its_samples_and_falls_back():
    views, y = _toy()
    train, ytr, test = inc.draw_split(y, 1, 3, 9, 12)
    mask = np.ones((y.size, 3), dtype=bool)
    mask[test[::3], 1] = False  # some test points lack view 1
    mask[train[1::4], 1] = False  # some training points too (labelled ones among them)
    pred, _ = inc.fit_predict("view_1", views, mask, train, ytr, test)
    has_tr, has_te = mask[train, 1], mask[test, 1]
    Ztr, Zte = _standardize(views[1][train[has_tr]], views[1][test[has_te]])
    ref = MVLLeastSquares(loss="squared").fit(Ztr, ytr[has_tr]).predict(Zte)
    assert np.array_equal(pred[has_te], ref)
    assert (pred[~has_te] == 0).all()  # the most frequent labelled class; all tie at 3 labels: the smallest
    # a view that only one class's labelled samples have: the constant classifier on the points that have it
    mask = np.ones((y.size, 3), dtype=bool)
    mask[(y != 2), 0] = False
    pred, _ = inc.fit_predict("view_0", views, mask, train, ytr, test)
    assert (pred[y[test] == 2] == 2).all() and (pred[y[test] != 2] == 0).all()


def test_incomplete_method_equals_direct_fit_on_nan_views():
    """MVL-LS on incomplete views is the estimator on NaN rows standardised per view on the training samples
    that have it (the solver itself is tested against its dense reference in the solver's tests)."""
    views, y = _toy(seed=2)
    sizes = [V.shape[1] for V in views]
    train, ytr, test = inc.draw_split(y, 0, 3, 9, 12)
    mask = inc.presence_mask("random", y, 3, 0.4, inc.mask_rng(0, "random", 0.4))
    assert (~mask[test]).any() and (~mask[train]).any()
    pred, note = inc.fit_predict("mvl_ls_incomplete", views, mask, train, ytr, test, gamma_B=1e-3)
    X = _nan_views(views, mask)
    Ztr, Zte = _standardize(X[train], X[test])
    ref = MVLLeastSquares(views=sizes, gamma_B=1e-3, loss="squared").fit(Ztr, ytr).predict(Zte)
    assert note == "" and np.array_equal(pred, ref)
    # gamma_B reaches the fit: without it the same data give other decisions
    other, _ = inc.fit_predict("mvl_ls_incomplete", views, mask, train, ytr, test, gamma_B=0.0)
    assert np.array_equal(other, MVLLeastSquares(views=sizes, gamma_B=0.0, loss="squared").fit(Ztr, ytr).predict(Zte))
    assert not np.array_equal(other, pred)


def test_run_seed_rows_and_q0_equals_the_complete_fit():
    views, y = _toy(seed=3)
    sizes = [V.shape[1] for V in views]
    df = inc.run_seed("toy", views, ["a", "b", "c"], y, 0, SETTINGS)
    methods = {"mvl_ls_incomplete", "mean_imputation", "view_a", "view_b", "view_c"}
    assert len(df) == 1 + 2 * 2 * len(methods)
    assert set(df.loc[df.pattern != "none", "method"]) == methods
    # the complete row is a direct fit on the complete, standardised data
    train, ytr, test = inc.draw_split(y, 0, 3, 9, 12)
    Ztr, Zte = _standardize(np.hstack(views)[train], np.hstack(views)[test])
    acc = np.mean(MVLLeastSquares(views=sizes, gamma_B=1e-3, loss="squared").fit(Ztr, ytr).predict(Zte) == y[test])
    complete = df[df.method == "complete"]
    assert len(complete) == 1 and complete["accuracy"].iloc[0] == acc and complete["q"].iloc[0] == 0
    # with nothing missing, both multi-view methods are the complete fit, in every pattern
    q0 = df[(df.q == 0) & df.method.isin(["mvl_ls_incomplete", "mean_imputation"])]
    assert len(q0) == 4 and (q0["accuracy"] == acc).all() and (q0["missing_train"] == 0).all()
    # realised fractions: class pattern exact (equal classes), random close; every accuracy in [0, 1]
    half = df[(df.q == 0.5) & (df.method == "mvl_ls_incomplete")].set_index("pattern")
    assert half.loc["class", "missing_train"] + half.loc["class", "missing_test"] == pytest.approx(2 * 4 / 9)
    assert df["accuracy"].between(0, 1).all() and (df["n_labelled"] == 9).all() and (df["n_test"] == 36).all()
    assert set(df.loc[df.view == "", "gamma_B"]) == {1e-3} and set(df.loc[df.view != "", "gamma_B"]) == {0.0}


def test_summarize_picks_the_best_view_on_mean_test_accuracy():
    rows = []
    for seed, (a, b) in enumerate([(0.5, 0.7), (0.9, 0.6)]):  # view a: mean 0.7, view b: mean 0.65
        rows += [dict(dataset="d", seed=seed, pattern="random", q=0.2, method="view_a", view="a", accuracy=a),
                 dict(dataset="d", seed=seed, pattern="random", q=0.2, method="view_b", view="b", accuracy=b),
                 dict(dataset="d", seed=seed, pattern="random", q=0.2, method="mvl_ls_incomplete", view="",
                      accuracy=0.8 + 0.1 * seed)]
    s = inc.summarize(pd.DataFrame(rows))
    best = s[s.method == "best_single_view"].iloc[0]
    assert best.view == "a" and best["mean"] == pytest.approx(0.7) and best["std"] == pytest.approx(np.std([0.5, 0.9],
                                                                                                          ddof=1))
    mv = s[s.method == "mvl_ls_incomplete"].iloc[0]
    assert mv["mean"] == pytest.approx(0.85) and mv["n_seeds"] == 2
    assert inc.best_views(s) == {("d", "random", 0.2): "a"}


# ---------------------------------------------------------------- the report's sentences


def _fitted_gamma_B(missing):
    """gamma_B_ of a default MVLLeastSquares fitted on a small two-view problem, complete or with view 1 missing
    on a few samples: what the estimator itself uses."""
    rng = np.random.default_rng(0)
    y = np.repeat([1, 2], 15)  # labels 1, 2: -1 is then only the unlabelled marker
    X = rng.normal(size=(30, 4)) + y[:, None]
    if missing:
        X[[3, 8, 20], 2:] = np.nan
    labels = np.full(30, -1)
    labels[[0, 1, 15, 16]] = y[[0, 1, 15, 16]]
    return MVLLeastSquares(views=[2, 2]).fit(X, labels).gamma_B_


def test_settings_text_states_the_package_default_as_the_estimator_has_it():
    d = inc.package_defaults()
    assert d["gamma_B"] == MVLLeastSquares().get_params()["gamma_B"]
    assert d["gamma_B_complete"] == _fitted_gamma_B(False) and d["gamma_B_incomplete"] == _fitted_gamma_B(True)
    text = inc.settings_text(1e-4)
    assert text.startswith(f'gamma_B = 0.0001 (configured; the package default is gamma_B = "{d["gamma_B"]}" '
                           f'({_fitted_gamma_B(False):g} on complete views, {_fitted_gamma_B(True):g} with views '
                           "missing))")
    assert f"gamma_W = {MVLLeastSquares().get_params()['gamma_W']:g}" in text and "5-NN graph" in text
    # 0 is not the package default (it is "auto"), and is not called so
    assert "(configured; the package default is" in inc.settings_text(0.0)
    # a numeric package default equal to the configured value is called the default
    numeric = dict(d, gamma_B=0.001)
    assert inc.settings_text(1e-3, numeric).startswith("gamma_B = 0.001 (the package default),")


def _verdict_rows(spec, seeds):
    """Per-seed results: spec (pattern, q) -> {method: accuracies per seed}."""
    rows = []
    for (pattern, q), methods in spec.items():
        for method, acc in methods.items():
            view = method[5:] if method.startswith("view_") else ""
            rows += [dict(dataset="d", seed=s, pattern=pattern, q=q, method=method, view=view, accuracy=float(a))
                     for s, a in zip(seeds, acc, strict=True)]
    return pd.DataFrame(rows)


def test_verdicts_win_tie_loss_and_too_few():
    base = np.array([0.80, 0.82, 0.78, 0.85, 0.81, 0.79, 0.83, 0.80])
    jit = np.array([0.004, -0.003, 0.002, -0.001, 0.003, -0.002, 0.001, -0.004])
    spec = {("random", 0.2): {"mvl_ls_incomplete": base + 0.05 + jit, "mean_imputation": base,  # clear win
                              "view_a": base - 0.1, "view_b": base + 0.05 - jit},  # b best on mean: a tie
            ("random", 0.4): {"mvl_ls_incomplete": base - 0.04 + jit, "mean_imputation": base,  # loss
                              "view_a": base + 0.01, "view_b": base - 0.2},
            ("none", 0.0): {"complete": base}}
    found = inc.verdicts(_verdict_rows(spec, range(8)))
    assert [(v.context, v.b, v.outcome) for v in found] == [
        ("d, random pattern, q = 0.2", "mean imputation + MVL-LS", "better"),
        ("d, random pattern, q = 0.2", "the best single view (b)", "no difference shown"),
        ("d, random pattern, q = 0.4", "mean imputation + MVL-LS", "worse"),
        ("d, random pattern, q = 0.4", "the best single view (a)", "worse")]
    assert all(v.family == 4 and v.n == 8 for v in found)
    assert found[0].difference == pytest.approx(100 * np.mean(0.05 + jit))
    assert "MVL-LS, incomplete views is better than mean imputation + MVL-LS" in found[0].sentence()
    few = inc.verdicts(_verdict_rows({k: {m: a[:3] for m, a in v.items()} for k, v in spec.items()}, range(3)))
    assert {v.outcome for v in few} == {"too few splits to tell"}
    assert "too few splits to tell (the rule needs at least 6)" in few[0].sentence()


# ---------------------------------------------------------------- the workflow


@pytest.mark.parametrize("profile, seeds", [("default", 3), ("ci", 2)])
def test_dry_run_plans_the_study(profile, seeds, tmp_path):
    copy_workflow(tmp_path)
    proc = run_snakemake("-n", "--profile", f"profiles/{profile}", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:] + proc.stdout[-3000:]
    counts = job_stats(proc.stdout)
    assert counts["incomplete_run"] == seeds
    assert counts["incomplete_summary"] == 1 and counts["incomplete_report"] == 1
    assert counts["notebook_html"] == 4  # main, co-regularization, peers, incomplete views
    assert "results/incomplete/report.html" in proc.stdout


def test_bad_incomplete_config_stops_the_workflow(tmp_path):
    copy_workflow(tmp_path)
    proc = run_snakemake("-n", "--config", "incomplete={datasets: [flowers17]}", cwd=tmp_path)
    assert proc.returncode != 0 and "incomplete.datasets" in proc.stdout + proc.stderr


@pytest.mark.slow
def test_incomplete_study_end_to_end_ci(tmp_path):
    wf = copy_workflow(tmp_path / "wf")
    proc = run_snakemake("--profile", "profiles/ci", "results/incomplete/report.html", cwd=wf, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    res = pd.read_csv(wf / "results/incomplete/results.csv")
    assert set(res["seed"]) == {0, 1} and set(res["pattern"]) == {"none", "random", "class"}
    assert res["accuracy"].between(0, 1).all()
    summary = pd.read_csv(wf / "results/incomplete/summary.csv")
    assert (summary.loc[summary.method != "best_single_view", "n_seeds"] == 2).all()
    html = (wf / "results/incomplete/report.html").read_text()
    assert "Against the complete data" in html and "earlier measurement" not in html
    assert "import json" not in html  # plumbing cells left out of the page
    assert (wf / "results/incomplete/figures/accuracy_vs_q.png").stat().st_size > 10_000
