"""The validation grid over graphs and gammas (mvl.grid) and the selection built on it (mvl.workflow.experiments).

References: every grid point against a separate fit of the dense textbook system of eq (67)-(68)
(``solver="dense"``, which shares no code with the eigendecomposition path), with the graph built by the
estimator itself from (n_neighbors, laplacian_power, graph_weights); the selections against a brute-force
loop over such fits written in the test.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import gamma_kw, make_problem, sample_first

from mvl import MVLLeastSquares, grid_decision_functions
from mvl.workflow.experiments import ABLATION_CELLS, run_on_draw, select_gammas_on_draw
from mvl.workflow.settings import run_settings

GRAPHS = [(None, 1), (4, 1), (4, 2), (6, 3)]


def _dense_outputs(X, y, X_test, gA, gB, gW, graph, c=None, weights="kernel"):
    """Combined outputs C f(v) (t, P) of a dense fit; X (n, n, m), X_test (t, n, m) sample-first."""
    nn, pw = graph
    est = MVLLeastSquares(gamma_A=gA, gamma_B=gB, gamma_W=gW, c=c, n_neighbors=nn, laplacian_power=pw,
                          graph_weights="kernel" if nn is None else weights, solver="dense", kernel="precomputed")
    est.fit(X, y)
    out = np.einsum("tpk,p->tk", est.view_decision_function(X_test), est.c_)  # sum_i c_i f^i(v)
    dec = est.decision_function(X_test)
    np.testing.assert_allclose(dec, 0.5 * (out[:, 1] - out[:, 0]) if out.shape[1] == 2 else out,
                               rtol=1e-12, atol=1e-12 * np.max(np.abs(out)))
    return out


@pytest.mark.parametrize("weights", ["kernel", "binary"])
@pytest.mark.parametrize("m,P", [(1, 3), (3, 2), (3, 4)])
def test_graph_grid_matches_pointwise_dense_fits(m, P, weights):
    n = 18
    K, K_test, y = make_problem(m, n, P, frac_unlabelled=0.4, seed=90 + m + P)
    X, X_test = sample_first(K), sample_first(K_test)
    rng = np.random.default_rng(91)
    c = rng.uniform(0.3, 1.2, size=m) * rng.choice([-1.0, 1.0], size=m)
    gAs, gBs, gWs = [0.02, 0.5], [0.0, 0.05], [0.0, 0.03, 0.4]
    out, classes = grid_decision_functions(X, y, X_test, gAs, gBs, gWs, c=c, graph_weights=weights, graphs=GRAPHS)
    assert out.shape == (len(GRAPHS), 2, 2, 3, K_test.shape[1], P)
    np.testing.assert_array_equal(classes, np.arange(P))
    for ig, graph in enumerate(GRAPHS):
        for ia, gA in enumerate(gAs):
            for ib, gB in enumerate(gBs):
                for iw, gW in enumerate(gWs):
                    ref = _dense_outputs(X, y, X_test, gA, gB, gW, graph, c=c, weights=weights)
                    np.testing.assert_allclose(out[ig, ia, ib, iw], ref, rtol=1e-7,
                                               atol=1e-9 * np.max(np.abs(ref)))
    # the graph matters where gamma_W > 0 (a grid that ignored it would pass the loop above only by accident)
    assert np.max(np.abs(out[1, 0, 1, 2] - out[2, 0, 1, 2])) > 1e-4


def test_single_graph_call_equals_graph_list_entry():
    K, K_test, y = make_problem(2, 16, 3, frac_unlabelled=0.3, seed=95)
    X, X_test = sample_first(K), sample_first(K_test)
    many, _ = grid_decision_functions(X, y, X_test, [0.1], [0.05], [0.2], graphs=GRAPHS)
    one, _ = grid_decision_functions(X, y, X_test, [0.1], [0.05], [0.2], n_neighbors=4, laplacian_power=2)
    ref = _dense_outputs(X, y, X_test, 0.1, 0.05, 0.2, (4, 2))
    np.testing.assert_allclose(one[0, 0, 0], ref, rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(many[2], one, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("bad", [[(0, 1)], [(3, 0)], [(2.5, 1)], [(3, 1.5)], []])
def test_bad_graphs_raise(bad):
    K, K_test, y = make_problem(2, 12, 2, seed=96)
    with pytest.raises(ValueError):
        grid_decision_functions(sample_first(K), y, sample_first(K_test), [0.1], [0.0], [0.1], graphs=bad)


# ------------------------------------------------------------ selection on validation


def _draw(seed=97, m=3, n=24, P=3, v=12):
    K, K_all, y = make_problem(m, n + v, P, frac_unlabelled=0.0, seed=seed, t=10)
    K, K_all = sample_first(K), sample_first(K_all)  # the draw dicts of mvl.workflow.experiments are sample-first
    rng = np.random.default_rng(seed)
    tr, va = np.arange(n), np.arange(n, n + v)
    y_train = y[tr].copy()
    y_train[rng.permutation(n)[: n // 2]] = -1
    y_train[:P] = np.arange(P)  # every class labelled
    return dict(K_tr=K[np.ix_(tr, tr)], K_va=K[np.ix_(va, tr)], K_te=K_all[:, tr], y_train=y_train,
                y_val=y[va], y_test=np.arange(10) % P, n_labelled=int(np.sum(y_train >= 0)))


CONFIG = dict(grid={"A": [0.01, 0.2], "B": [0.0, 0.05], "W": [0.0, 0.02, 0.3]},
              graph={"laplacian": "normalized", "n_neighbors": None, "laplacian_power": 1, "weights": "kernel",
                     "select": {"n_neighbors": [4], "laplacian_power": [1, 2]}},
              gammas={"A": 0.01, "B": 0.0, "W": 0.0})
RUN = run_settings(CONFIG)


def _brute_force(d, graphs, cell=None):
    """Validation accuracy and squared loss of every point by separate dense fits; the best by (accuracy,
    -loss), first in grid order on ties, restricted to ``cell`` = (gamma_B on, gamma_W on)."""
    g = CONFIG["grid"]
    best = None
    for graph in graphs:
        for gA in g["A"]:
            for gB in g["B"]:
                for gW in g["W"]:
                    if cell is not None and ((gB > 0) != cell[0] or (gW > 0) != cell[1]):
                        continue
                    out = _dense_outputs(d["K_tr"], d["y_train"], d["K_va"], gA, gB, gW, graph)
                    acc = np.mean(np.argmax(out, axis=1) == d["y_val"])
                    target = -np.ones_like(out)
                    target[np.arange(len(out)), d["y_val"]] = 1.0
                    loss = np.mean((out - target) ** 2)
                    if best is None or acc > best[0][0] or (acc == best[0][0] and loss < best[0][1]):
                        best = ((acc, loss), dict(gamma_A=gA, gamma_B=gB, gamma_W=gW, n_neighbors=graph[0],
                                                  laplacian_power=graph[1], val_accuracy=acc))
    return best[1]


def test_selection_equals_brute_force_over_graphs_and_cells():
    d = _draw()
    sel = select_gammas_on_draw(d, 2, 3, RUN)
    graphs = [(None, 1), (4, 1), (4, 2)]
    assert [(g.n_neighbors, g.laplacian_power) for g in RUN.grid.graphs] == graphs
    assert sel.grid_size == 3 * 2 * 2 * 3

    def as_dict(choice):
        return dict(zip(("gamma_A", "gamma_B", "gamma_W"), choice.gammas, strict=True),
                    n_neighbors=choice.graph.n_neighbors, laplacian_power=choice.graph.laplacian_power,
                    val_accuracy=choice.val_accuracy)

    paper = _brute_force(d, graphs[:1])
    assert as_dict(sel.paper) == pytest.approx(paper)
    over = _brute_force(d, graphs)
    assert as_dict(sel.graph_selected) == pytest.approx(over)
    for cell, on in ABLATION_CELLS.items():
        for scope, gs in (("paper", graphs[:1]), ("graph_selected", graphs)):
            ref = _brute_force(d, gs, cell=on)
            got = as_dict(sel.ablation[scope][cell])
            assert (got["gamma_B"] > 0, got["gamma_W"] > 0) == on
            assert got["val_accuracy"] == pytest.approx(ref["val_accuracy"])
            assert (got["gamma_A"], got["gamma_B"], got["gamma_W"]) == (ref["gamma_A"], ref["gamma_B"], ref["gamma_W"])


def test_runs_use_the_selection():
    d = _draw()
    sel = select_gammas_on_draw(d, 2, 3, RUN)
    rows = run_on_draw("mvl_ls_cvgraph", d, 2, 3, RUN, ["a", "b", "c"], selected=sel)
    g = sel.graph_selected
    ref = MVLLeastSquares(**gamma_kw(g.gammas), n_neighbors=g.graph.n_neighbors,
                          laplacian_power=g.graph.laplacian_power,
                          solver="dense", kernel="precomputed").fit(d["K_tr"], d["y_train"])
    assert rows[0]["accuracy"] == pytest.approx(ref.score(d["K_te"], d["y_test"]))
    assert rows[0]["graph"] == "validation-selected"
    rows = run_on_draw("mvl_ls_ablation_cvgraph", d, 2, 3, RUN, ["a", "b", "c"], selected=sel)
    cells = [r["ablation_cell"] for r in rows]
    assert [c for c in cells if c != "any"] == list(ABLATION_CELLS) and cells.count("any") == 1
    anyrow = next(r for r in rows if r["ablation_cell"] == "any")  # the unrestricted selection's cell
    assert (anyrow["gamma_A"], anyrow["gamma_B"], anyrow["gamma_W"]) == g.gammas
    none = next(r for r in rows if r["ablation_cell"] == "none")
    lab = np.flatnonzero(d["y_train"] >= 0)
    sup = MVLLeastSquares(gamma_A=none["gamma_A"],
                          kernel="precomputed").fit(d["K_tr"][np.ix_(lab, lab)], d["y_train"][lab])
    # cell "none": unlabelled points get zero coefficients (Corollary 19), i.e. supervised MVL-LS
    assert none["accuracy"] == pytest.approx(sup.score(d["K_te"][:, lab], d["y_test"]))


def test_points_sharing_a_gamma_ratio_match_dense_fits():
    """gamma_W / gamma_B repeats on log grids (0.1 / 0.001 = 10 / 0.1): one eigendecomposition serves both points."""
    K, K_test, y = make_problem(3, 16, 3, frac_unlabelled=0.4, seed=99)
    X, X_test = sample_first(K), sample_first(K_test)
    gBs, gWs = [1e-3, 0.1], [0.1, 10.0]
    out, _ = grid_decision_functions(X, y, X_test, [0.05], gBs, gWs, n_neighbors=4, laplacian_power=2)
    for ib, gB in enumerate(gBs):
        for iw, gW in enumerate(gWs):
            ref = _dense_outputs(X, y, X_test, 0.05, gB, gW, (4, 2))
            np.testing.assert_allclose(out[0, ib, iw], ref, rtol=1e-7, atol=1e-9 * np.max(np.abs(ref)))
