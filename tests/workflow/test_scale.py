"""The scale profile: its settings, its pieces against references, and the profile end to end at tiny n."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from conftest import copy_workflow, run_snakemake
from mvl.workflow import io, scale


def test_graph_neighbors_rule_and_the_setting_reaches_the_fit(monkeypatch):
    """k = 0.5 % of n within [10, 500] ("scaled") or 10 ("fixed"); the config's value reaches fit_one's graphs."""
    assert [scale.graph_neighbors(n) for n in (300, 2000, 2399, 8000, 32000, 100000, 10**6)] == [
        10, 10, 12, 40, 160, 500, 500]
    assert {scale.graph_neighbors(n, "fixed") for n in (300, 8000, 10**6)} == {10}
    with pytest.raises(ValueError, match="neighbors"):
        scale.graph_neighbors(1000, "adaptive")
    s = scale.parse_settings({"sizes": [2400], "methods": ["nystrom_50"], "neighbors": "fixed"})
    assert s.fit_settings("nystrom_50")["neighbors"] == "fixed"
    assert scale.parse_settings({"sizes": [2400], "methods": ["cg"]}).fit_settings("cg")["neighbors"] == "scaled"
    # the k the graph builder receives, not only the one the record states
    import mvl.graph

    built = []
    real = mvl.graph.sparse_knn_weights

    def spy(kernels, p, k, *args, **kwargs):
        built.append(k)
        return real(kernels, p, k, *args, **kwargs)

    monkeypatch.setattr(mvl.graph, "sparse_knn_weights", spy)
    row, _ = scale.fit_one("nystrom", 2400, preset="smooth", n_components=50)
    assert row["n_neighbors"] == 12 and built == [12, 12, 12]
    built.clear()
    row, _ = scale.fit_one("nystrom", 2400, **s.fit_settings("nystrom_50"))
    assert row["n_neighbors"] == 10 and built == [10, 10, 10]


def test_growth_exponents_recover_known_powers():
    n = np.array([1000, 2000, 4000, 8000])
    df = pd.DataFrame({"method": "cg", "n_components": 100, "n": n, "seconds": 3e-6 * n**2.0, "rss": 5e4 * n**1.0})
    e = scale.growth_exponents(df).iloc[0]
    assert e.time_exponent == pytest.approx(2.0, abs=1e-12) and e.rss_exponent == pytest.approx(1.0, abs=1e-12)


def test_fit_one_structured_equals_cg_and_records(tmp_path):
    """At a tight tol the cg job predicts exactly what the structured job predicts (the same data, the same
    hyperparameters); write_fit records time, accuracy and the process's peak RSS."""
    a, pred_a = scale.fit_one("structured", 400, preset="smooth", seed=3)
    b, pred_b = scale.fit_one("cg", 400, preset="smooth", seed=3, tol=1e-10, max_iter=500, n_components=100)
    assert b["converged"] and b["residual"] <= 1e-10
    np.testing.assert_array_equal(pred_a, pred_b)
    assert a["accuracy"] == b["accuracy"]
    row = scale.write_fit("nystrom_50", 300, tmp_path / "r.json", preset="smooth", n_components=50)
    rec = json.loads((tmp_path / "r.json").read_text())
    assert rec["method"] == "nystrom" and rec["n_components"] == 50 and rec["rss"] > 1e7 and rec == row
    assert io.verify_file(tmp_path / "r.json") is True  # its checksum sidecar, as every output of the workflow


def test_scale_records_and_table_carry_sidecars_and_a_changed_record_is_found(tmp_path):
    """The fits' JSON records and their table have checksum sidecars (the table's records its inputs): a record
    changed after the fact is deleted at start with the table computed from it, so both are recomputed."""
    records = []
    for k, (method, n) in enumerate([("structured", 300), ("cg", 300)]):
        path = tmp_path / "runs" / f"{method}_n{n}.json"
        with io.atomic_path(path, checksum=True) as tmp:
            tmp.write_text(json.dumps({"method": method, "n_components": None, "n": n, "seconds": 1.0 + k}) + "\n")
        records.append(path)
    out = tmp_path / "results.csv"
    df = scale.write_summary(records, out)
    assert list(df["method"]) == ["cg", "structured"] and io.verify_file(out) is True
    assert io.sidecar_path(out).read_text().splitlines()[1:] == [
        f"{io.file_sha256(p)}  runs/{p.name}" for p in records]
    records[0].write_text(records[0].read_text().replace("1.0", "9.0"))
    assert io.verify_outputs(tmp_path) == sorted([records[0], out])


@pytest.mark.slow
def test_scale_profile_end_to_end(tmp_path):
    wf = copy_workflow(tmp_path / "wf")
    res = run_snakemake("--profile", "profiles/scale", "--configfile", "config/scale.yaml", "config/scale_ci.yaml",
                        cwd=wf, timeout=900)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    df = pd.read_csv(wf / "results/scale/results.csv")
    expected = {("structured", 300), ("cg", 300), ("nystrom", 300), ("labelonly", 300), ("labelspreading", 300),
                ("ridge", 300)}
    assert {(m, n) for m, n in zip(df["method"], df["n"], strict=True) if n == 300} == expected
    assert set(df["n"]) == {300, 600} and df["accuracy"].between(0, 1).all() and (df["rss"] > 0).all()
    for f in ("report.ipynb", "report.html", "figures/scale.png", "figures/scale.pdf"):
        assert (wf / "results/scale" / f).stat().st_size > 0
    html = (wf / "results/scale/report.html").read_text()
    assert "Growth exponents" in html and "import json" not in html  # plumbing cells left out of the page
    assert "scale/report.html" in (wf / "results/index.html").read_text()


def test_registry_dispatch_graph_solver_and_missing_peer(monkeypatch):
    """One registry: settings and fit_one read mvl.workflow.scale.REGISTRY; the graph solver
    predicts what the structured solver predicts on the graph6 preset; a peer whose package is missing is
    reported as unavailable, not as an error."""
    import builtins

    from mvl.workflow import methods

    assert tuple(m.name for m in methods.methods_for("scale")) == scale.METHODS == tuple(scale.REGISTRY)
    assert {"graph", "laplace", "poisson"} <= set(scale.METHODS)
    with pytest.raises(ValueError, match="unknown method"):
        scale.fit_one("nope", 300)
    a, pred_a = scale.fit_one("structured", 300, preset="graph6", seed=3)
    b, pred_b = scale.fit_one("graph", 300, preset="graph6", seed=3, tol=1e-8, max_iter=800, n_components=150)
    # converged on its energy criterion (module docstring of mvl.solvers.graph); residual is the true one of (68)
    assert b["converged"] and np.isfinite(b["residual"]) and b["n_neighbors"] == 10
    np.testing.assert_array_equal(pred_a, pred_b)
    real_import = builtins.__import__

    def no_graphlearning(name, *args, **kwargs):
        if name == "graphlearning":
            raise ImportError("no graphlearning")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_graphlearning)
    row, pred = scale.fit_one("laplace", 300, preset="graph6")
    assert row["unavailable"] and pred is None and np.isnan(row["accuracy"]) and "peers" in row["note"]


def test_graphlimit_is_the_exact_fit_as_gamma_A_vanishes():
    """graph_limit_scores (one sparse solve of M F = r) against the structured solver (dense kernels, eq 67-68) on the
    same data and graph: the decision values on every graph node approach it as gamma_A falls (relative distance
    4e-4 at 1e-8, 5e-5 at 1e-10, where the structured system's condition estimate reaches 5e11), and are far at
    gamma_A = 1e-2 (the kernel term weighs). The registry's graphlimit predicts on the test nodes what the
    transductive structured fit at gamma_A = 1e-10 predicts there."""
    from mvl import MVLLeastSquares

    X, y, _, _, sizes = scale._data(300, 3, 5, 6, (20, 30, 40), True)
    kw = dict(kernel="rbf", views=sizes, bandwidth=[1.0] * 3, gamma_B=0.0, gamma_W=1.0, n_neighbors=10,
              laplacian_power=2, random_state=0)
    S, classes = scale.graph_limit_scores(X, y, dict(kw, gamma_A=1e-6))
    assert S.shape == (300, 6) and list(classes) == list(range(6))
    scale_S = np.abs(S).max()
    dist = [np.abs(MVLLeastSquares(solver="structured", gamma_A=g, **kw).fit(X, y).decision_function(X) - S).max()
            / scale_S for g in (1e-8, 1e-10)]
    assert dist[1] < dist[0] <= 1e-3 and dist[1] <= 1e-4
    far = MVLLeastSquares(solver="structured", gamma_A=1e-2, **kw).fit(X, y).decision_function(X)
    assert np.abs(far - S).max() > 1e-2 * scale_S
    row, pred = scale.fit_one("graphlimit", 300, preset="graph6", seed=3)
    assert row["n_neighbors"] == 10 and 0 < row["accuracy"] <= 1
    ref, pred_ref = scale.fit_one("transductive", 300, preset="graph6", seed=3, gamma_A=1e-10)
    np.testing.assert_array_equal(pred, pred_ref)


def test_config_schema_lists_the_registry_and_presets():
    """The config schema's method pattern and preset enum name exactly the registry's methods and the presets."""
    import re
    from pathlib import Path

    import yaml

    schema = yaml.safe_load((Path(__file__).parents[2] / "workflow/schemas/config.schema.yaml").read_text())
    sc = schema["properties"]["scale"]["properties"]
    pattern = sc["methods"]["items"]["pattern"]
    names = set(re.match(r"\^\((.*)\)\$", pattern).group(1).split("|")) - {"nystrom_[0-9]+"}
    assert names == set(scale.METHODS) - {"nystrom"}
    assert set(sc["preset"]["enum"]) == set(scale.PRESETS)


def test_the_vecchia_direct_method_predicts_what_the_structured_solver_predicts():
    """The registry's vecchia_direct (one sparse factorisation, kriging predictions) beside the exact solver on the
    graph6 preset at 300 points: the same class on nearly every test point (measured 0.982)."""
    a, pred_a = scale.fit_one("structured", 300, preset="graph6", seed=3)
    b, pred_b = scale.fit_one("vecchia_direct", 300, preset="graph6", seed=3)
    assert b["converged"] and b["n_neighbors"] == 10
    assert np.mean(pred_a == pred_b) >= 0.95


def test_method_names_with_an_underscore_and_the_output_folder():
    """ "vecchia_direct" is one method, "nystrom_<M>" nystrom with M centres; ``folder`` keeps a study's results
    apart (results/scale by default)."""
    from mvl.workflow.scale_settings import split_name

    assert split_name("vecchia_direct") == ("vecchia_direct", "")
    assert split_name("nystrom_400") == ("nystrom", "400") and split_name("auto") == ("auto", "")
    s = scale.parse_settings({"sizes": [300], "methods": ["auto", "vecchia_direct", "nystrom_50"],
                              "folder": "scale_graph"})
    assert s.folder == "scale_graph" and s.runs() == [("auto", 300), ("vecchia_direct", 300), ("nystrom_50", 300)]
    assert s.fit_settings("vecchia_direct")["n_components"] == s.centres
    assert scale.parse_settings({"sizes": [300]}).folder == "scale"
    with pytest.raises(Exception, match="unknown method 'vecchia'"):
        scale.parse_settings({"sizes": [300], "methods": ["vecchia"]})


def test_auto_is_a_first_fit_and_records_its_choice(tmp_path, monkeypatch):
    """The "auto" method drops the preset's gamma_A, gamma_B and loss (package defaults) and records the solver,
    the regime and the gamma_A used; at 300 points "auto" is the structured solver at gamma_A = 1e-5, so its
    predictions are MVLLeastSquares' with the preset's kernel and graph and the package's other defaults."""
    from mvl import MVLLeastSquares

    row = scale.write_fit("auto", 300, tmp_path / "a.json", preset="graph6")
    assert row["solver"] == "structured" and row["gamma_A"] == 1e-5
    assert row["regime"] is None and row["converged"] and 0 <= row["accuracy"] <= 1
    _, pred = scale.fit_one("auto", 300, preset="graph6")
    seen = []
    monkeypatch.setitem(scale.REGISTRY, "labelonly", (lambda c: (seen.append(c), (None, {}))[1], "spy"))
    scale.fit_one("labelonly", 300, preset="graph6")
    c = seen[0]
    kw = {k: v for k, v in c.kw.items() if k not in ("gamma_A", "gamma_B", "loss")}
    np.testing.assert_array_equal(pred, MVLLeastSquares(**kw).fit(c.X, c.ytr).predict(c.Xt))


def test_settings_table_spells_out_the_preset():
    t = scale.settings_table({"preset": "graph6", "sizes": [8000, 32000], "labels": 5})
    assert "6 classes, views of 20, 30, 40 features" in t.loc["data", "value"]
    assert "k = 10 at every n" in t.loc["graph", "value"] and "power 2" in t.loc["graph", "value"]
    assert "absolute" in t.loc["hyperparameter preset", "value"] and t.loc["sizes n", "value"] == "8,000, 32,000"
    t = scale.settings_table({"preset": "graph", "sizes": [2000, 8000], "neighbors": "scaled"})
    assert "x median" in t.loc["hyperparameter preset", "value"] and "scaled k = 10, 40" in t.loc["graph", "value"]


@pytest.mark.slow
def test_scale_graph_profile_end_to_end(tmp_path):
    """The graph-regime study at tiny n writes its own folder (results/scale_graph) with auto's choices."""
    wf = copy_workflow(tmp_path / "wf")
    res = run_snakemake("--profile", "profiles/scale_graph", "--configfile", "config/scale.yaml",
                        "config/scale_graph.yaml", "config/scale_graph_ci.yaml", cwd=wf, timeout=900)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    out = wf / "results/scale_graph"
    df = pd.read_csv(out / "results.csv")
    assert set(zip(df["method"], df["n"], strict=True)) == {
        (m, n) for m in ("auto", "structured", "vecchia_direct", "labelonly", "laplace") for n in (300, 600)}
    assert set(df.loc[df["method"] == "auto", "solver"]) == {"structured"}
    assert not (wf / "results/scale").exists()
    html = (out / "report.html").read_text()
    assert "What auto chose" in html and "6 classes" in html and "scale_graph/report.html" in (
        wf / "results/index.html").read_text()


def test_data_gives_the_training_classes_on_request():
    X, y, Xt, yt, sizes, truth = scale._data(120, 3, 5, 6, (20, 30, 40), True, truth=True)
    plain = scale._data(120, 3, 5, 6, (20, 30, 40), True)
    np.testing.assert_array_equal(X, plain[0])
    assert truth.shape == (120,) and np.all(truth[y >= 0] == y[y >= 0])
