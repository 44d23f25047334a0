"""The dual of MVL-SVM and its box-QP solvers (:mod:`mvl.solvers.svm_dual`): SMO (Algorithm 3, with and without
the Newton refinement), its exact block step, the structured ADMM against ADMM written densely, and the
convergence warning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import make_problem, random_graph_laplacians
from sklearn.exceptions import ConvergenceWarning
from svm_reference import TIGHT, dense_theorem6, generic_qp, named_problem, objective

import mvl.solvers.svm_dual as svm_module
from mvl.simplex import simplex_coding
from mvl.solvers.svm_dual import build_svm_dual, solve_dual

@pytest.mark.parametrize("refine,newton_max", [(False, 0), (True, 500), (True, 0)])
def test_smo_variants_match_generic_qp(refine, newton_max):
    """SMO reaches the QP optimum: plain Algorithm 3, with the Newton refinement by Cholesky, and by CG."""
    K, K_test, y = make_problem(2, 40, 4, frac_unlabelled=0.25, seed=7)
    L = random_graph_laplacians(2, 40, seed=7)
    c = np.array([0.8, -0.6])
    lab = np.flatnonzero(y >= 0)
    dual = build_svm_dual(K, lab, c, 1e-2, 1e-2, 1e-2, L)
    U = svm_module.dual_upper_bounds(y[lab], 4)
    alpha, n_iter, viol = svm_module._smo(dual.Q_G, U, np.zeros_like(U), TIGHT, 10**6, refine=refine,
                                          newton_max=newton_max)
    ref = dense_theorem6(K, y, K_test, c, 1e-2, 1e-2, 1e-2, L, simplex_coding(4))
    assert viol <= TIGHT
    assert abs(objective(ref["Q"], alpha) - ref["obj"]) <= 1e-6 * abs(ref["obj"])
    if not refine:  # solve_dual's switch gives the same plain Algorithm 3
        alpha2, _, _ = solve_dual(dual.Q_G, y[lab], 4, "smo", tol=TIGHT, refine=False)
        np.testing.assert_array_equal(alpha2, alpha)

def test_block_step_is_exact_minimiser():
    """The SMO block update solves its P-dimensional box QP exactly (checked by clarabel)."""
    rng = np.random.default_rng(5)
    for _ in range(30):
        P = int(rng.integers(2, 9))
        u = np.full(P, 0.05)
        u[rng.integers(P)] = 0.0
        x = np.where(rng.uniform(size=P) < 0.5, 0.0, rng.uniform(0, 0.05, size=P)) * (u > 0)
        g = rng.normal(size=P) * 10 ** rng.uniform(-2, 0)
        hh = 10 ** rng.uniform(-1, 2)
        QS = np.full((P, P), -1.0 / (P - 1)) + np.eye(P) * (1 + 1.0 / (P - 1))
        xn = svm_module._block_step(x, u, g, hh, P)
        ref = generic_qp(hh * QS + 1e-14 * np.eye(P), g - hh * QS @ x, lb=np.zeros(P), ub=u)

        def val(z, g=g, x=x, hh=hh, QS=QS):
            return g @ (z - x) + 0.5 * hh * (z - x) @ QS @ (z - x)

        assert np.all(xn >= 0) and np.all(xn <= u)
        assert val(xn) <= val(ref) + 1e-10 * max(1.0, abs(val(ref)))

def _dense_admm(Q_G, U, A0, rho, n_iter, relax=1.6):
    """Textbook ADMM (Boyd et al. 2011, Sec. 5.2) on the box QP with the dense Hessian H = 1/2 Q_G (x) Q_S
    (sample-major vec of alpha) and a dense solve per iteration; z = alpha0, u = -grad D(alpha0) / rho."""
    P, l = U.shape
    QS = np.full((P, P), -1.0 / (P - 1)) + np.eye(P) * (1 + 1.0 / (P - 1))
    H = 0.5 * np.kron(Q_G, QS)
    q = -np.ones(P * l) / (P - 1)
    ub = U.T.ravel()
    z = A0.T.ravel().copy()
    u = -(H @ z + q) / rho
    for _ in range(n_iter):
        x = np.linalg.solve(H + rho * np.eye(P * l), rho * (z - u) - q)
        xh = relax * x + (1 - relax) * z
        z = np.clip(xh + u, 0.0, ub)
        u = u + xh - z
    return z.reshape(l, P).T

@pytest.mark.parametrize("name", ["binary", "semi_supervised", "duplicated_samples"])
def test_admm_iterates_match_dense_admm(name):
    """The structured x-step (column means and one Cholesky of c1/2 Q_G + rho I, module docstring) gives the
    iterates of ADMM with the dense (lP x lP) Hessian solved directly."""
    K, _, y, L, c, (gA, gB, gW) = named_problem(name)
    lab = np.flatnonzero(y >= 0)
    dual = build_svm_dual(K, lab, c, gA, gB, gW, L)
    P = int(y.max()) + 1
    U = svm_module.dual_upper_bounds(y[lab], P)
    A0 = np.random.default_rng(1).uniform(size=U.shape) * U  # a feasible, not optimal, start
    rho = 3.7 * svm_module._admm_penalty(dual.Q_G, P)
    for k in (1, 7):
        ours, n_iter, _ = svm_module._admm(dual.Q_G, U, A0, 0.0, k, rho=rho)
        assert n_iter == k
        np.testing.assert_allclose(ours, _dense_admm(dual.Q_G, U, A0, rho, k), rtol=0, atol=1e-10 * U.max())


@pytest.mark.parametrize("solver", ["admm", "smo", "lbfgsb", "apg"])
def test_max_iter_reached_warns_with_sklearns_convergence_warning(solver):
    """Stopping at max_iter before the KKT conditions hold gives scikit-learn's ConvergenceWarning."""
    K, _, y = make_problem(2, 40, 4, frac_unlabelled=0.2, seed=12)
    lab = np.flatnonzero(y >= 0)
    dual = build_svm_dual(K, lab, np.array([0.5, 0.5]), 1e-4, 0.0, 0.0)
    with pytest.warns(ConvergenceWarning, match="increase max_iter"):
        _, n_iter, viol = solve_dual(dual.Q_G, y[lab], 4, solver, tol=1e-8, max_iter=2)
    assert viol > 1e-8 and n_iter <= 2


def test_admm_on_an_indefinite_q_g_raises_its_penalty_instead_of_failing():
    """An indefinite kernel makes Q_G indefinite: ADMM's factor c1/2 Q_G + rho I then fails at the default rho; the
    penalty is raised by twice the gradient's Lipschitz constant (eigenvalues by numpy) and the iteration runs to a
    KKT point of the box QP."""
    K, _, y = make_problem(2, 40, 4, frac_unlabelled=0.2, seed=12)
    K[0] -= 3.0 * np.eye(K.shape[1])
    lab = np.flatnonzero(y >= 0)
    dual = build_svm_dual(K, lab, np.array([0.5, 0.5]), 1e-4, 0.0, 0.0)
    c1 = 4 / 3
    lam = np.linalg.eigvalsh(dual.Q_G)[0]
    rho = svm_module._admm_penalty(dual.Q_G, 4)
    assert lam < 0 and np.linalg.eigvalsh(0.5 * c1 * dual.Q_G + rho * np.eye(len(lab)))[0] < 0
    shifted = svm_module._indefinite_penalty(dual.Q_G, c1, rho)
    eig = np.linalg.eigvalsh(dual.Q_G)
    assert shifted == pytest.approx(rho + c1 * np.abs(eig).max(), rel=1e-9)
    assert np.linalg.eigvalsh(0.5 * c1 * dual.Q_G + shifted * np.eye(len(lab)))[0] > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        alpha, n_iter, viol = solve_dual(dual.Q_G, y[lab], 4, "admm", tol=1e-6)
    assert np.all(np.isfinite(alpha)) and n_iter >= 1 and viol <= 1e-6
