"""The validation grid over graphs and gammas (mvl.solvers.grid).

References: every grid point against a separate fit of the dense textbook system of eq (67)-(68)
(``solver="dense"``, which shares no code with the eigendecomposition path), with the graph built by the
estimator itself from (n_neighbors, laplacian_power, graph_weights); the selections against a brute-force
loop over such fits written in the test (the selection built on it: tests/workflow/test_grid_selection.py).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import make_problem, sample_first

from mvl import MVLLeastSquares, grid_decision_functions
from mvl.exceptions import RegularizationWarning, UnlabelledMarkerWarning

GRAPHS = [(None, 1), (4, 1), (4, 2), (6, 3)]


def _dense_outputs(X, y, X_test, gA, gB, gW, graph, c=None, weights="kernel"):
    """Combined outputs C f(v) (t, P) of a dense fit; X (n, n, m), X_test (t, n, m) sample-first."""
    nn, pw = graph
    est = MVLLeastSquares(gamma_A=gA, gamma_B=gB, gamma_W=gW, c=c, n_neighbors=nn, laplacian_power=pw,
                          graph_weights="kernel" if nn is None else weights, solver="dense", kernel="precomputed",
                          loss="squared")  # the paper's objective, as the workflow's method
    with warnings.catch_warnings():
        # the grid spans points where the unlabelled samples do not enter (gamma_W = 0) and points where the
        # regularisation swamps the labels: the reference is compared there as everywhere, its warnings are not
        # what is tested
        warnings.simplefilter("ignore", (RegularizationWarning, UnlabelledMarkerWarning))
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
