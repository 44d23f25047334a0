"""MVLLeastSquares with the operator solvers ("cg", "nystrom") on feature views: the solvers agree, errors and warnings;
MVLLeastSquaresOptC on them against the structured optC."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import gauss_gram, manifold_labels

from sklearn.exceptions import ConvergenceWarning
from mvl import MVLLeastSquares
from mvl.memory import InsufficientMemoryError


def test_estimator_solvers_agree(manifold):
    X = np.hstack(manifold["views"])
    Xt = np.hstack(manifold["tests"])
    y = manifold_labels(manifold)
    kw = dict(kernel="rbf", views=[6, 6, 6], bandwidth=manifold["scales"], gamma_A=1e-4, gamma_B=1e-3,
              gamma_W=1e-2, n_neighbors=8, laplacian_power=2, c=[0.5, 0.3, 0.2])
    ref = MVLLeastSquares(solver="structured", **kw).fit(X, y)
    cg = MVLLeastSquares(solver="cg", tol=1e-12, n_components=50, random_state=0, **kw).fit(X, y)
    ny = MVLLeastSquares(solver="nystrom", n_components=300, **kw).fit(X, y)
    Fr = ref.decision_function(Xt)
    for est in (cg, ny):
        assert np.abs(est.decision_function(Xt) - Fr).max() <= 1e-7 * np.abs(Fr).max()
        np.testing.assert_array_equal(est.predict(Xt), ref.predict(Xt))
    assert cg.solver_ == "cg" and cg.n_iter_ >= 1 and cg.residual_ <= 1e-12
    np.testing.assert_allclose(cg.view_decision_function(Xt), ref.view_decision_function(Xt), rtol=0,
                               atol=1e-7 * np.abs(Fr).max())
    # precomputed kernels: the same solvers on the Gram matrices
    K = np.moveaxis(manifold["K"], 0, -1)
    Kt = np.stack([gauss_gram(T, V, s) for T, V, s in zip(manifold["tests"], manifold["views"], manifold["scales"],
                                                      strict=True)],
                  axis=-1)
    kwp = {k: v for k, v in kw.items() if k not in ("views", "bandwidth", "kernel")}
    for solver, extra in (("cg", dict(tol=1e-12)), ("nystrom", dict(n_components=300))):
        est = MVLLeastSquares(kernel="precomputed", solver=solver, **extra, **kwp).fit(K, y)
        assert np.abs(est.decision_function(Kt) - Fr).max() <= 1e-7 * np.abs(Fr).max()


def test_estimator_errors_and_warnings(manifold, monkeypatch):
    X = np.hstack(manifold["views"])
    y = manifold_labels(manifold)
    base = dict(kernel="rbf", views=[6, 6, 6], gamma_W=1e-2)
    with pytest.raises(ValueError, match="needs a sparse kNN graph"):  # the paper's dense graph W = K
        MVLLeastSquares(solver="cg", n_neighbors=None, **base).fit(X, y)
    with pytest.raises(ValueError, match="laplacian must be"):
        MVLLeastSquares(solver="nystrom", n_neighbors=5, laplacian=np.eye(300), **base).fit(X, y)
    for bad in (dict(tol=0), dict(max_iter=0), dict(n_components=2.5), dict(max_memory=-1)):
        with pytest.raises(ValueError):
            MVLLeastSquares(solver="cg", n_neighbors=5, **bad, **base).fit(X, y)
    with pytest.warns(ConvergenceWarning, match="max_iter = 1 iterations at relative residual"):
        MVLLeastSquares(solver="cg", n_neighbors=5, max_iter=1, tol=1e-12, **base).fit(X, y)
    # the structured solve that would not fit stops before allocating and names the way out
    import mvl.memory

    monkeypatch.setattr(mvl.memory, "available_memory", lambda: 1_000_000)
    with pytest.raises(InsufficientMemoryError, match=r'needs about .* solver="cg" .* solver="nystrom"'):
        MVLLeastSquares(solver="structured", n_neighbors=5, **base).fit(X, y)


def test_optc_on_the_scalable_solvers_equals_the_structured_optc(manifold):
    """Section 6's alternation with the f-step by "nystrom" (every point a centre), by "cg" and by "graph" (tight
    tol): the same objective (84) after every iteration, the same c and outputs as the structured optC."""
    from mvl import MVLLeastSquaresOptC

    X = np.hstack(manifold["views"])
    Xt = np.hstack(manifold["tests"])
    y = manifold_labels(manifold)
    kw = dict(kernel="rbf", views=[6, 6, 6], bandwidth=manifold["scales"], gamma_A=1e-4, gamma_B=1e-3,
              gamma_W=1e-2, n_neighbors=8, n_restarts=3, n_iter=6, random_state=2)
    ref = MVLLeastSquaresOptC(solver="structured", **kw).fit(X, y)
    Fr = ref.decision_function(Xt)
    for solver, extra in (("nystrom", dict(n_components=300)), ("cg", dict(cg_tol=1e-11, n_components=60)),
                          ("graph", dict(cg_tol=1e-11, n_components=60))):
        est = MVLLeastSquaresOptC(solver=solver, **extra, **kw).fit(X, y)
        assert est.solver_ == solver
        np.testing.assert_allclose(est.objective_history_, ref.objective_history_, rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(est.c_, ref.c_, atol=1e-8)
        assert np.abs(est.decision_function(Xt) - Fr).max() <= 1e-7 * np.abs(Fr).max()
        assert est.best_restart_ == ref.best_restart_


def test_optc_graph_solver_in_the_graph_regime(manifold):
    """The graph regime (gamma_W / gamma_A = 1e6, gamma_B = 0: M singular): optC with the f-step by solver="graph"
    against the structured optC (objective history, c, decision values)."""
    from mvl import MVLLeastSquaresOptC

    X = np.hstack(manifold["views"])
    Xt = np.hstack(manifold["tests"])
    y = manifold_labels(manifold)
    kw = dict(kernel="rbf", views=[6, 6, 6], bandwidth=manifold["scales"], gamma_A=1e-6, gamma_B=0.0, gamma_W=1.0,
              n_neighbors=8, laplacian_power=2, n_restarts=2, n_iter=4, random_state=2)
    ref = MVLLeastSquaresOptC(solver="structured", **kw).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # every f-step converges
        est = MVLLeastSquaresOptC(solver="graph", cg_tol=1e-16, cg_max_iter=2000, n_components=100, **kw).fit(X, y)
    assert est.solver_ == "graph"
    np.testing.assert_allclose(est.objective_history_, ref.objective_history_, rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(est.c_, ref.c_, atol=1e-6)
    Fr = ref.decision_function(Xt)
    assert np.abs(est.decision_function(Xt) - Fr).max() <= 1e-5 * np.abs(Fr).max()
    np.testing.assert_array_equal(est.predict(Xt), ref.predict(Xt))
