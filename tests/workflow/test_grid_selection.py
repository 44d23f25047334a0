"""The validation selection of the workflow (mvl.workflow.experiments) built on the grid of decision functions
(mvl.solvers.grid): against a brute-force loop over separate dense fits of eq (67)-(68) written in the test."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import gamma_kw, make_problem, sample_first

from mvl import MVLLeastSquares
from mvl.workflow.experiments import ABLATION_CELLS, run_on_draw, select_gammas_on_draw
from mvl.workflow.settings import run_settings


def _dense_outputs(X, y, X_test, gA, gB, gW, graph, c=None, weights="kernel"):
    """Combined outputs C f(v) (t, P) of a dense fit; X (n, n, m), X_test (t, n, m) sample-first."""
    nn, pw = graph
    est = MVLLeastSquares(gamma_A=gA, gamma_B=gB, gamma_W=gW, c=c, n_neighbors=nn, laplacian_power=pw,
                          graph_weights="kernel" if nn is None else weights, solver="dense", kernel="precomputed",
                          loss="squared")  # the paper's objective, as the workflow's method
    est.fit(X, y)
    out = np.einsum("tpk,p->tk", est.view_decision_function(X_test), est.c_)  # sum_i c_i f^i(v)
    dec = est.decision_function(X_test)
    np.testing.assert_allclose(dec, 0.5 * (out[:, 1] - out[:, 0]) if out.shape[1] == 2 else out,
                               rtol=1e-12, atol=1e-12 * np.max(np.abs(out)))
    return out


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
                          solver="dense", kernel="precomputed", loss="squared").fit(d["K_tr"], d["y_train"])
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
