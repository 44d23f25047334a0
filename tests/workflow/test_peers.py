"""The peers study: its settings, its methods against independent references, its summary and figure.

graphlearning is in the test extra: a test that needs it fails (never skips) with the install command when it is
missing.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from mvl.workflow import peers as P
from mvl.workflow.figures import save_figure
from mvl.workflow.peers import PEER_METHODS, parse_settings
from mvl.workflow.settings import load_study


def _gl():
    try:
        import graphlearning
    except ImportError:
        pytest.fail("graphlearning is not installed: pip install 'mvl[test]' (or graphlearning==1.7.5); the test "
                    "extra installs it")
    return graphlearning


# ------------------------------------------------------------------ settings


def test_the_study_carries_the_section():
    import yaml

    from conftest import ROOT

    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    study = load_study(config)
    assert study.peers.datasets == ("mfeat",) and study.peers.points_per_class == 80
    assert "peers" not in study["mfeat"].run._asdict()  # not a per-dataset setting


def test_schema_rejects_a_bad_peers_section(tmp_path):
    """The workflow stops at the config check with the key named (dry run, nothing executed)."""
    from conftest import copy_workflow, run_snakemake

    copy_workflow(tmp_path)
    for bad, word in (("peers={datasets: [mnist]}", "mnist"), ("peers={methods: [gcn]}", "gcn")):
        proc = run_snakemake("-n", "--config", bad, cwd=tmp_path)
        out = proc.stdout + proc.stderr
        assert proc.returncode != 0 and word in out, out[-2000:]
    # a value the schema allows but the settings refuse: the SettingsError's text, as a WorkflowError
    proc = run_snakemake("-n", "--config", "peers={points_per_class: 5}", cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "peers.points_per_class: 5 leaves no unlabelled point" in out, out[-2000:]


# ------------------------------------------------------------------ draws


def test_draws_are_stratified_nested_and_seeded():
    y = np.repeat(np.arange(4), [7, 9, 6, 8])
    d = P.draw_labelled(y, (1, 3), seed=5)
    assert [np.bincount(y[d[lc]], minlength=4).tolist() for lc in (1, 3)] == [[1] * 4, [3] * 4]
    assert set(d[1]) <= set(d[3])
    assert all(np.array_equal(a, b) for a, b in zip(d.values(), P.draw_labelled(y, (1, 3), 5).values(), strict=True))
    assert not np.array_equal(d[3], P.draw_labelled(y, (3,), 6)[3])
    with pytest.raises(ValueError, match="without unlabelled"):
        P.draw_labelled(y, (6,), 0)
    sub = P.stratified_subset(y, 5, seed=1)
    assert np.bincount(y[sub]).tolist() == [5, 5, 5, 5] and np.all(np.diff(sub) > 0)
    assert np.array_equal(P.stratified_subset(y, None, 1), np.arange(len(y)))


# ------------------------------------------------------------------ methods against references


def _harmonic(W, labelled, y_lab, n_classes):
    """Laplace learning written out (Zhu, Ghahramani & Lafferty 2003): L = D - W, f_L = one-hot labels,
    f_U = -L_UU^{-1} L_UL f_L, by a dense solve."""
    W = np.asarray(W.todense() if sp.issparse(W) else W)
    L = np.diag(W.sum(1)) - W
    n = len(W)
    U = np.setdiff1d(np.arange(n), labelled)
    F = np.eye(n_classes)[y_lab]
    f = np.zeros((n, n_classes))
    f[labelled] = F
    f[U] = -np.linalg.solve(L[np.ix_(U, U)], L[np.ix_(U, labelled)] @ F)
    return f


def _blobs(n_per, seed=0, d=3):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0] * d, [2.5] + [0.0] * (d - 1), [0.0, 2.5] + [0.0] * (d - 2)])
    X = np.vstack([c + rng.normal(size=(n_per, d)) for c in centres])
    return X, np.repeat(np.arange(3), n_per)


def test_laplace_learning_equals_the_harmonic_solution():
    """graphlearning's Laplace learning on our k-NN graph gives the argmax of the dense harmonic solution; and the
    graph is graphlearning's Gaussian-weighted symmetrised kNN graph on exact neighbours (brute force here)."""
    gl = _gl()
    X, y = _blobs(40)
    labelled = np.array([0, 5, 40, 45, 80, 85])
    W = P.knn_graph(X, 6)
    # the graph, brute force: distances to the 6 nearest others, w = exp(-4 d^2 / d_6^2), (W + W^T) / 2
    D = np.linalg.norm(X[:, None] - X[None], axis=2)
    Wref = np.zeros_like(D)
    for i in range(len(X)):
        nb = np.argsort(D[i])[:7]
        Wref[i, nb] = np.exp(-4 * D[i, nb] ** 2 / D[i, nb[-1]] ** 2)
    Wref = (Wref + Wref.T) / 2
    np.fill_diagonal(Wref, 0)
    np.testing.assert_allclose(W.toarray(), Wref, rtol=1e-12, atol=1e-14)
    f = _harmonic(W, labelled, y[labelled], 3)
    pred = P.graph_learning(W, labelled, y[labelled], "laplace")
    assert np.array_equal(pred, f.argmax(1))
    u = gl.ssl.laplace(W, tol=1e-12).fit(labelled, y[labelled])
    np.testing.assert_allclose(u, f, atol=1e-8)
    # labels that are not 0..c-1 come back as given
    names = np.array([10, 20, 30])
    assert np.array_equal(P.graph_learning(W, labelled, names[y[labelled]], "laplace"), names[f.argmax(1)])


def test_poisson_learning_equals_its_linear_system():
    """Poisson learning (Calder et al. 2020, eq 7): L u = sum_j (e_{y_j} - ybar) delta_{x_j}, u of weighted mean
    zero (d^T u = 0); prediction argmax_k of u_k (graphlearning's default: no class-prior rescaling when
    class_priors is None). The dense solve with the mean-zero constraint as a bordered system."""
    gl = _gl()
    X, y = _blobs(30, seed=2)
    labelled = np.array([1, 7, 30, 37, 60, 67])
    W = P.knn_graph(X, 5).toarray()
    n = len(W)
    d = W.sum(1)
    L = np.diag(d) - W
    F = np.eye(3)[y[labelled]]
    B = np.zeros((n, 3))
    B[labelled] = F - F.mean(0)
    A = np.block([[L, d[:, None]], [d[None, :], np.zeros((1, 1))]])
    u = np.linalg.solve(A, np.vstack([B, np.zeros((1, 3))]))[:n]
    np.testing.assert_allclose(gl.ssl.poisson(sp.csr_matrix(W), tol=1e-12).fit(labelled, y[labelled]), u,
                               atol=1e-8 * np.abs(u).max())
    pred = P.graph_learning(sp.csr_matrix(W), labelled, y[labelled], "poisson")
    assert np.mean(pred == u.argmax(1)) >= 0.99  # the default tolerance (1e-3) may flip a near-tie
    assert np.mean(pred == y) > 0.7  # three overlapping blobs, chance 1/3


def test_mvl_ls_method_is_the_estimator_on_the_standardised_views():
    """fit_method("mvl_ls") is MVLLeastSquares(loss="squared") with the views as feature views, unlabelled points -1,
    predicting every point; mvl_ls_concat with one view of all features; mvl_ls_graph with the graph-regime setting;
    mvl_poisson with loss="poisson"."""
    from mvl import MVLLeastSquares

    X, y = _blobs(25, seed=3, d=4)
    views = [P.standardise(X[:, :2]), P.standardise(X[:, 2:])]
    labelled = np.array([0, 1, 25, 26, 50, 51])
    yy = np.full(len(y), -1)
    yy[labelled] = y[labelled]
    squared = {"loss": "squared"}
    for method, sizes, kw in (("mvl_ls", [2, 2], squared), ("mvl_ls_concat", [4], squared),
                              ("mvl_ls_graph", [2, 2], {**P.MVL_GRAPH_SETTING, **squared}),
                              ("mvl_poisson", [2, 2], {"loss": "poisson"})):
        pred, solver, _ = P.fit_method(method, views, y, labelled)
        est = MVLLeastSquares(views=sizes, **kw).fit(np.hstack(views), yy)
        assert np.array_equal(pred, est.predict(np.hstack(views))) and solver == est.solver_ == "structured"
    np.testing.assert_allclose(views[0].mean(0), 0, atol=1e-12)
    np.testing.assert_allclose(views[0].std(0), 1, rtol=1e-12)


def test_sum_graph_is_the_sum_of_the_view_graphs_and_methods_complete():
    X, y = _blobs(20, seed=4, d=4)
    views = [X[:, :2], X[:, 2:]]
    labelled = np.array([0, 20, 40])
    graphs = {}
    pred, _, cached = P.fit_method("laplace_sum", views, y, labelled, k=5, graphs=graphs)
    assert cached == 0.0
    ref = P.knn_graph(views[0], 5) + P.knn_graph(views[1], 5)
    assert abs(graphs["sum"][0] - ref).max() == 0
    assert np.array_equal(pred, P.graph_learning(ref, labelled, y[labelled], "laplace"))
    _, _, cached = P.fit_method("poisson_sum", views, y, labelled, k=5, graphs=graphs)
    assert cached == graphs["sum"][1] > 0  # the cached graph's build time is charged to every method using it
    with pytest.raises(ValueError, match="unknown peers method"):
        P.fit_method("gcn", views, y, labelled)


def test_run_peers_rows_on_a_small_subset():
    """Every configured method, setting and l_c gives one row; accuracy is on the unlabelled points only."""
    s = parse_settings({"datasets": ["mfeat"], "seeds": [0], "points_per_class": 12, "labels_per_class": [1, 3],
                "methods": list(PEER_METHODS)})
    rows = pd.DataFrame(P.run_peers("mfeat", 0, s))
    assert len(rows) == 2 * len(PEER_METHODS)
    assert set(rows["n"]) == {120} and set(rows["n_views"]) == {6} and set(rows["setting"]) == {"stratified"}
    assert rows.groupby("l_c")["n_labelled"].first().to_dict() == {1: 10, 3: 30}
    assert rows["accuracy"].between(0, 1).all() and (rows["seconds"] > 0).all()
    # one view (USPST-like): no "_sum" rows; the BNS splits only on every point
    views, y = [np.vstack([np.eye(3)[k] + 0.1 * np.random.default_rng(k).normal(size=(10, 3)) for k in range(3)])], \
        np.repeat(np.arange(3), 10)
    bns = np.array([[0, 10, 20, 1], [2, 12, 22, 3]])
    s = parse_settings({"datasets": ["uspst"], "seeds": [1], "methods": ["laplace", "laplace_sum", "mvl_ls_concat"],
                "n_neighbors": 4,
                "labels_per_class": [1]})
    rows = pd.DataFrame(P.run_peers("uspst", 1, s, (views, y, bns)))
    assert rows[["setting", "method", "n_labelled"]].values.tolist() == [["stratified", "laplace", 3],
                                                                         ["bns", "laplace", 4]]


def test_inductive_rows_score_held_out_points():
    """The inductive setting: the MVL-LS methods fit on the points outside a stratified held-out fifth (standardised
    with their own mean and scale) and scored on that fifth; the graph methods give no inductive row."""
    from mvl import MVLLeastSquares

    views, y = [np.vstack([np.eye(3)[k] + 0.3 * np.random.default_rng(k).normal(size=(20, 3)) for k in range(3)])], \
        np.repeat(np.arange(3), 20)
    s = parse_settings({"datasets": ["uspst"], "seeds": [2], "methods": ["mvl_poisson", "laplace"], "n_neighbors": 4,
                        "labels_per_class": [1], "inductive": True})
    rows = pd.DataFrame(P.run_peers("uspst", 2, s, (views, y, None)))
    ind = rows[rows["setting"] == "inductive"]
    assert ind["method"].tolist() == ["mvl_poisson"] and ind["n"].tolist() == [48]
    test = P.holdout(y, 2)
    assert test.sum() == 12 and np.bincount(y[test]).tolist() == [4, 4, 4]
    tr = views[0][~test]
    mu, sd = tr.mean(0), tr.std(0)
    train_views, test_views, mask = P.inductive_split(views, y, 2)
    assert np.array_equal(mask, test)
    np.testing.assert_allclose(train_views[0], (tr - mu) / sd, rtol=0, atol=1e-12)
    np.testing.assert_allclose(test_views[0], (views[0][test] - mu) / sd, rtol=0, atol=1e-12)
    labelled = P.draw_labelled(y[~test], [1], 2)[1]
    yy = np.full(48, -1)
    yy[labelled] = y[~test][labelled]
    est = MVLLeastSquares(loss="poisson").fit((tr - mu) / sd, yy)
    acc = np.mean(est.predict((views[0][test] - mu) / sd) == y[test])
    assert ind["accuracy"].iloc[0] == pytest.approx(acc)
    with pytest.raises(ValueError, match="no out-of-sample"):
        P.fit_method("laplace", [tr], y[~test], labelled, test_views=[views[0][test]])


def test_summary_and_figure(tmp_path):
    rows = [dict(dataset="mfeat", seed=s, n=100, n_views=6, setting="stratified", l_c=lc, n_labelled=10 * lc,
                 method=m, solver="", accuracy=a, seconds=1.0)
            for s, acc in ((0, 0.8), (1, 0.9)) for lc in (1, 5) for m, a in (("mvl_ls", acc), ("laplace", acc - 0.1))]
    rows.append(dict(dataset="uspst", seed=0, n=50, n_views=1, setting="bns", l_c=5, n_labelled=50, method="laplace",
                     solver="", accuracy=0.7, seconds=0.5))
    rows += [dict(dataset="mfeat", seed=0, n=80, n_views=6, setting="inductive", l_c=lc, n_labelled=10 * lc,
                  method="mvl_ls", solver="structured", accuracy=0.75, seconds=1.0) for lc in (1, 5)]
    files = []
    for i, chunk in enumerate((rows[:8], rows[8:])):
        f = tmp_path / f"r{i}.csv"
        pd.DataFrame(chunk).to_csv(f, index=False)
        files.append(f)
    _, summary = P.write_summary(files, tmp_path / "results.csv", tmp_path / "summary.csv")
    m = summary.set_index(["dataset", "setting", "l_c", "method"])
    assert m.loc[("mfeat", "stratified", 1, "mvl_ls"), "mean"] == pytest.approx(85.0)
    assert m.loc[("mfeat", "stratified", 1, "mvl_ls"), "std"] == pytest.approx(np.std([80, 90], ddof=1))
    assert m.loc[("mfeat", "stratified", 5, "laplace"), "seeds"] == 2
    assert (tmp_path / "results.csv.sha256").is_file() and (tmp_path / "summary.csv.sha256").is_file()
    t = P.accuracy_table(summary)
    assert t.loc[("mfeat", "stratified", 1, 100, 2), "mvl_ls"] == "85.0 ± 7.1" and list(t.columns) == ["mvl_ls",
                                                                                                      "laplace"]
    assert t.loc[("uspst", "bns", 5, 50, 1), "laplace"] == "70.0 ± 0.0"  # one seed: no std, shown as 0
    save_figure(P.accuracy_figure(summary), tmp_path / "a.png", tmp_path / "a.pdf", dpi=120, bbox_inches="tight")
    assert (tmp_path / "a.png").stat().st_size > 10_000 and (tmp_path / "a.pdf").is_file()


def test_graphlearning_missing_says_so(monkeypatch):
    """Without graphlearning the graph methods raise an error naming the extra, never a bare ImportError."""
    import builtins

    real = builtins.__import__

    def no_gl(name, *args, **kwargs):
        if name == "graphlearning" or name.startswith("graphlearning."):
            raise ImportError("No module named 'graphlearning'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_gl)
    with pytest.raises(P.GraphlearningUnavailable, match=r"unavailable.*mvl\[peers\]"):
        P.knn_graph(np.zeros((5, 2)), 2)


def test_offline_without_the_peers_files_no_job_starts(tmp_path, shared_data):
    """USPST and multi-view MNIST come through the data options: offline without them the run stops before any
    job and names the files; with the mirror the same dry run plans the peers jobs."""
    from conftest import copy_workflow, job_stats, run_snakemake

    copy_workflow(tmp_path)
    peers = "peers={datasets: [uspst, mvmnist], seeds: [0]}"
    proc = run_snakemake("-n", "--config", peers, f"data={{mirror: null, offline: true, cache_dir: {tmp_path / 'c'}}}",
                         cwd=tmp_path)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "no job was started" in out, out[-2000:]
    assert "multiview_mnist/multiview_mnist.hdf5" in out and "ssl_benchmarks/uspst.mat" in out, out[-2000:]
    proc = run_snakemake("-n", "--config", peers,
                         f"data={{mirror: {shared_data}, offline: true, cache_dir: {tmp_path / 'c'}}}", cwd=tmp_path)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-2000:]
    assert job_stats(proc.stdout)["peers_run"] == 2


def test_verdicts_follow_the_numbers_not_fixed_text():
    """The case the report once got wrong: Laplace learning above Poisson learning must never read "far below".
    8 draws; MVL-LS 5 points below the best graph method on every draw; Laplace 0.9 points above Poisson on
    average with draws on both sides."""
    lap = np.array([0.83, 0.82, 0.84, 0.81, 0.83, 0.82, 0.84, 0.83])
    poi = lap - np.array([0.02, -0.01, 0.03, -0.02, 0.01, 0.00, 0.02, 0.02])
    rows = [dict(dataset="mfeat", setting="stratified", l_c=1, seed=s, method=m, accuracy=a)
            for s in range(8) for m, a in (("laplace", lap[s]), ("poisson", poi[s]), ("mvl_ls", lap[s] - 0.05))]
    v = P.verdicts(pd.DataFrame(rows))
    assert [(x.a, x.outcome) for x in v] == [
        ("MVL-LS (squared loss, package defaults)", "worse"), ("Laplace learning", "no difference shown")]
    assert v[0].b == "Laplace learning (best graph method here)" and v[0].family == 2
    lp = v[1].sentence()
    assert lp.startswith("mfeat, l_c = 1: Laplace learning 82.75 against Poisson learning 81.88, +0.88 points over 8 "
                         "draws") and "far below" not in lp
    few = P.verdicts(pd.DataFrame([r for r in rows if r["seed"] < 3]))
    assert all(x.sentence().endswith("too few draws to tell (the rule needs at least 6).") for x in few)
