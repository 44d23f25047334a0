"""The fitted attributes every solver of every estimator shares (``solver_``, ``n_iter_``, ``residual_``,
``converged_``, mvl.estimators.base): ``residual_`` is the true relative residual of the system solved, checked here
against numpy's residual of the textbook system (67)-(68); conjugate-gradient breakdown on an indefinite kernel and
the rank-deficient linear kernel under "cg"."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from mvl import MVLBinarySVM, MVLLeastSquares, MVLLeastSquaresOptC, MVLSVM
from mvl.labels import encode_targets

from .contract_cases import VIEWS, problem, rbf_grams


def _textbook_residual(K, labelled, Y_L, c, coef, gamma_A, gamma_B):
    """max_k ||Y_C - B a||_k / ||Y_C||_k of the system of eq (67)-(68) without a graph (gamma_W = 0), by numpy."""
    m, n, P = coef.shape
    l = len(labelled)
    E = np.eye(m)
    G = sum(np.kron(K[p], np.outer(E[p], E[p])) for p in range(m))
    J = np.zeros((n, n))
    J[labelled, labelled] = 1.0
    Mop = np.kron(J, np.outer(c, c)) + l * gamma_B * np.kron(np.eye(n), m * np.eye(m) - np.ones((m, m)))
    B = Mop @ G + l * gamma_A * np.eye(n * m)
    Y = np.zeros((n, P))
    Y[labelled] = Y_L
    Y_C = np.kron(Y, c[:, None])
    a = coef.transpose(1, 0, 2).reshape(n * m, P)
    return float(np.max(np.linalg.norm(Y_C - B @ a, axis=0) / np.linalg.norm(Y_C, axis=0)))


@pytest.mark.parametrize("solver", ["structured", "dense", "cg", "graph"])
def test_residual_is_the_true_residual_of_68(solver):
    X, y, _, _, _ = problem()
    K = rbf_grams(X, X)
    kw = dict(kernel="precomputed", gamma_A=1e-3, gamma_B=1e-3, gamma_W=0.0, solver=solver, random_state=0,
              n_components=10, tol=1e-8, max_iter=400)
    est = MVLLeastSquares(**kw).fit(K, y)
    labelled = np.flatnonzero(y != -1)
    Y_L = encode_targets(y[labelled], 3)
    ref = _textbook_residual(np.moveaxis(K, -1, 0), labelled, Y_L, est.c_, est.coef_, 1e-3, 1e-3)
    assert est.solver_ == solver and est.converged_ is True and isinstance(est.n_iter_, int)
    assert est.residual_ == pytest.approx(ref, rel=1e-6, abs=1e-14)
    assert est.residual_ <= (1e-8 if solver in ("cg", "graph") else 1e-10)


def test_svm_and_optc_attributes():
    X, y, _, _, _ = problem()
    for est in (MVLSVM(views=VIEWS, solver="admm"), MVLBinarySVM(views=VIEWS, solver="smo"),
                MVLLeastSquaresOptC(views=VIEWS, n_restarts=2, n_iter=3, random_state=0)):
        est.fit(X, y)
        assert np.all(est.converged_) and np.all(est.n_iter_ >= 1)
        if hasattr(est, "kkt_violation_"):  # the SVMs: the KKT violation of the dual at the returned alpha
            np.testing.assert_array_equal(est.residual_, est.kkt_violation_)
    # optC: the outer iterations of the kept restart, the residual of its f-step's system (small: a direct solve)
    assert est.n_iter_ == np.count_nonzero(~np.isnan(est.objective_history_[est.best_restart_]))
    assert est.residual_ <= 1e-10


@pytest.mark.parametrize("solver", ["cg", "graph"])
def test_breakdown_on_an_indefinite_kernel_is_reported(solver):
    X, y, _, _, _ = problem()
    K = rbf_grams(X, X)
    K[..., 0] -= 2.0 * np.eye(K.shape[0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = MVLLeastSquares(kernel="precomputed", solver=solver, n_components=20, random_state=0).fit(K, y)
    msgs = [str(w.message) for w in caught if w.category is ConvergenceWarning]
    assert msgs and "breakdown" in msgs[0] and "indefinite" in msgs[0]
    assert est.converged_ is False and est.residual_ > 1e-3  # never a zero step reported as convergence


def test_cg_on_a_rank_deficient_linear_kernel_stops_without_warning():
    X, y, _, Xt, _ = problem()
    kw = dict(views=VIEWS, kernel="linear", gamma_W=0.0, n_components=20, random_state=0)
    ref = MVLLeastSquares(solver="structured", **kw).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = MVLLeastSquares(solver="cg", max_iter=60, **kw).fit(X, y)
    assert est.converged_ and est.residual_ <= 1e-6 and est.n_iter_ < 60
    F = ref.decision_function(Xt)
    assert np.abs(est.decision_function(Xt) - F).max() <= 1e-5 * np.abs(F).max()
    # a real non-convergence is still warned: the same system with too few iterations on the rbf kernel
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        short = MVLLeastSquares(solver="cg", max_iter=2, views=VIEWS, n_components=5, random_state=0).fit(X, y)
    assert short.converged_ is False and short.residual_ > 1e-6
