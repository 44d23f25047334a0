"""The LAPACK blocks of the view-by-view solvers (mvl.solvers.lapack) against numpy: H_p and Q_p = K^p H_p^{-1} formed
and solved densely, the 1-norm condition number from the explicit inverse, linear solves by numpy.linalg.solve."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import random_graph_laplacians

from mvl.solvers.lapack import factor_spd, factor_view, rcond, solve_coupled, solve_factored, view_Q


def _spd_kernel(n, seed):
    X = np.random.default_rng(seed).normal(size=(n, 3))
    return np.exp(-0.5 * np.sum((X[:, None] - X[None]) ** 2, axis=-1))


@pytest.mark.parametrize("omega,weights", [(0.0, None), (0.0, "random"), (0.3, None), (0.3, "random")])
def test_view_Q_is_the_kernel_times_the_inverse_of_H(omega, weights):
    n, m, delta, beta = 11, 3, 0.07, 0.4
    K = _spd_kernel(n, seed=1)
    L = random_graph_laplacians(1, n, seed=2)[0]
    w = None if weights is None else np.random.default_rng(3).uniform(0.1, 2.0, n)
    D = np.eye(n) if w is None else np.diag(w)
    H = (beta * m * D + omega * L) @ K + delta * np.eye(n)
    rconds = []
    lu, piv = factor_view(K.copy(), L.copy() if omega else None, m, delta, beta, omega, rconds=rconds, w=w)
    Q = view_Q(lu, piv, K.copy())
    np.testing.assert_allclose(Q, K @ np.linalg.inv(H), rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(Q, Q.T, rtol=1e-9, atol=1e-11)  # push-through identity: Q_p is symmetric
    true = 1.0 / (np.linalg.norm(H, 1) * np.linalg.norm(np.linalg.inv(H), 1))
    assert len(rconds) == 1 and true / 3 <= rconds[0] <= 3 * true


def test_rcond_estimates_the_reciprocal_one_norm_condition_number():
    from scipy.linalg import lu_factor

    A = np.random.default_rng(4).normal(size=(9, 9)) + np.diag(np.logspace(0, 4, 9))
    lu, _ = lu_factor(A)
    true = 1.0 / np.linalg.cond(A, 1)
    assert true / 3 <= rcond(lu, np.linalg.norm(A, 1)) <= 3 * true


@pytest.mark.parametrize("trans", [0, 1])
def test_solve_coupled_solves_the_system_or_its_transpose(trans):
    rng = np.random.default_rng(5)
    A = rng.normal(size=(8, 8)) + 4 * np.eye(8)
    rhs = rng.normal(size=(8, 3))
    rconds = []
    x = solve_coupled(np.asfortranarray(A.copy()), rhs.copy(), rconds, trans=trans)
    np.testing.assert_allclose(x, np.linalg.solve(A.T if trans else A, rhs), rtol=1e-10, atol=1e-12)
    true = 1.0 / np.linalg.cond(A, 1)
    assert len(rconds) == 1 and true / 3 <= rconds[0] <= 3 * true


def test_solve_coupled_refuses_a_singular_system():
    A = np.ones((4, 4))
    A[:, 0] = 0.0
    with pytest.raises(np.linalg.LinAlgError, match="singular"):
        solve_coupled(np.asfortranarray(A), np.ones((4, 1)))


@pytest.mark.parametrize("definite", [True, False])
def test_factor_spd_solves_the_shifted_system_by_cholesky_or_lu(definite):
    rng = np.random.default_rng(6)
    X = rng.normal(size=(7, 7))
    B = X @ X.T if definite else X + X.T  # X + X^T: symmetric indefinite, Cholesky fails
    delta = 0.5 if definite else 0.1
    rhs = rng.normal(size=(7, 2))
    fac = factor_spd(B, delta)
    assert fac[1] is definite
    np.testing.assert_allclose(solve_factored(fac, rhs), np.linalg.solve(B + delta * np.eye(7), rhs), rtol=1e-9,
                               atol=1e-11)
