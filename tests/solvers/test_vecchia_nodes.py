"""solver="vecchia_direct" on a node subsample (mvl.solvers.vecchia_nodes): the nodes, the fit on them and the
other training points predicted as new points."""

import warnings

import numpy as np
import pytest

from graph_regime_problem import N, T, graph_params, manifold_problem
from mvl import MVLLeastSquares
from mvl.solvers.auto import vecchia_direct_bytes, vecchia_direct_nodes
from mvl.solvers.vecchia_nodes import draw_nodes, subsample_nodes

BUDGET = 3e5  # bytes: about 100 of the 240 points fit (8-NN graphs, L^2, three views)


@pytest.fixture(scope="module")
def data():
    return manifold_problem()


def params(**kw):
    return graph_params(1e-8, loss="squared", **kw)


def test_the_node_count_is_the_largest_that_fits_the_budget():
    count = vecchia_direct_nodes(N, 3, 8, 2, BUDGET)
    assert 20 < count < N
    assert vecchia_direct_bytes(count, 3, 8, 2) <= BUDGET < vecchia_direct_bytes(count + 1, 3, 8, 2)
    assert vecchia_direct_nodes(N, 3, 8, 2, 1e12) == N
    assert vecchia_direct_nodes(N, 3, 8, 2, 1.0) == 0


def test_the_nodes_hold_every_labelled_point_and_a_seeded_uniform_draw(data):
    _, y, _ = data
    unlabelled = y < 0
    nodes = draw_nodes(unlabelled, 100, random_state=4)
    assert len(nodes) == 100 and np.all(np.diff(nodes) > 0)
    assert set(np.flatnonzero(~unlabelled)) <= set(nodes)
    np.testing.assert_array_equal(nodes, draw_nodes(unlabelled, 100, random_state=4))
    assert not np.array_equal(nodes, draw_nodes(unlabelled, 100, random_state=5))
    assert len(draw_nodes(unlabelled, 3, random_state=0)) == np.count_nonzero(~unlabelled)  # never fewer
    assert subsample_nodes(unlabelled, 3, 8, 2, 1e12) is None  # all points fit: no subsample
    np.testing.assert_array_equal(subsample_nodes(unlabelled, 3, 8, 2, BUDGET, 4),
                                  draw_nodes(unlabelled, vecchia_direct_nodes(N, 3, 8, 2, BUDGET), 4))


def test_the_fit_on_the_nodes_is_the_plain_fit_of_the_node_subset(data):
    X, y, Xt = data
    est = MVLLeastSquares(solver="vecchia_direct", max_memory=BUDGET, **params()).fit(X, y)
    nodes = est.centres_
    assert nodes is not None and len(nodes) == vecchia_direct_nodes(N, 3, 8, 2, BUDGET)
    assert set(np.flatnonzero(y >= 0)) <= set(nodes)
    assert est.coef_.shape == (3, len(nodes), 3) and est.n_train_ == N and est.solver_ == "vecchia_direct"
    plain = MVLLeastSquares(solver="vecchia_direct", **params()).fit(X[nodes], y[nodes])
    assert plain.centres_ is None
    for Z in (X[nodes], X, Xt):  # on the nodes, the other training points and new points
        np.testing.assert_allclose(est.decision_function(Z), plain.decision_function(Z), rtol=1e-10, atol=1e-12)
    # reproducible by the seed
    again = MVLLeastSquares(solver="vecchia_direct", max_memory=BUDGET, **params()).fit(X, y)
    np.testing.assert_array_equal(again.centres_, nodes)
    np.testing.assert_array_equal(again.predict(X), est.predict(X))
    other = MVLLeastSquares(solver="vecchia_direct", max_memory=BUDGET, **params(random_state=1)).fit(X, y)
    assert not np.array_equal(other.centres_, nodes)
    views = est.view_decision_function(Xt)
    assert views.shape == (T, 3, 3) and np.all(np.isfinite(views))


def test_auto_takes_the_node_subsample_in_the_graph_regime_instead_of_nystrom(data):
    X, y, _ = data
    # n_components=20: the Nystrom basis misses the narrow kernels (the graph regime); the budget rules out
    # "structured" and the full "vecchia_direct"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = MVLLeastSquares(solver="auto", max_memory=BUDGET, n_components=20, **params()).fit(X, y)
    assert est.solver_ == "vecchia_direct" and est.regime_ >= 1
    assert est.centres_ is not None and len(est.centres_) == vecchia_direct_nodes(N, 3, 8, 2, BUDGET)
