"""The dense textbook solver (mvl.solvers.dense): the (u+l)m system of eq (67)-(68) built element by element, and
the minimiser of the objective (eq 10/53) by a stacked least-squares solve."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import (
    make_problem,
    objective_minimiser_values,
    paper_model,
    pm_one_targets,
    random_graph_laplacians,
    sample_first,
    solver_values,
)

import mvl
from mvl.solvers.dense import solve_dense

MVLLeastSquares = paper_model(mvl.MVLLeastSquares)


def _fit(K, y, solver, **kw):
    """Fit on the per-view kernels K (m, n, n), passed to the estimator sample-first with kernel="precomputed"."""
    return MVLLeastSquares(solver=solver, kernel="precomputed", **kw).fit(sample_first(K), y)


def _numpy_normalized_laplacian(W):
    d = W.sum(axis=1)
    s = 1.0 / np.sqrt(d)
    return np.eye(W.shape[0]) - s[:, None] * W * s[None, :]


def test_dense_solver_satisfies_eq_67_68():
    """The dense coefficients satisfy (B + l gamma_A I) A = Y_C with B of eq (68) built here."""
    m, n, P = 2, 10, 3
    K, _, y = make_problem(m, n, P, frac_unlabelled=0.3, seed=21)
    c = np.array([0.7, -0.4])
    gA, gB, gW = 0.03, 0.2, 0.1
    L = np.stack([_numpy_normalized_laplacian(K[p]) for p in range(m)])
    lab, Y = pm_one_targets(y, P)
    l = lab.size
    # sample-major (row i*m + p) matrices of eq (68), element by element
    N = n * m
    G = np.zeros((N, N))
    Lbig = np.zeros((N, N))
    Mop = np.zeros((N, N))
    for i in range(n):
        for j in range(n):
            for p in range(m):
                G[i * m + p, j * m + p] = K[p, i, j]
                Lbig[i * m + p, j * m + p] = L[p, i, j]
        for p in range(m):
            for q in range(m):
                Mop[i * m + p, i * m + q] = l * gB * ((m if p == q else 0) - 1)
                if y[i] >= 0:
                    Mop[i * m + p, i * m + q] += c[p] * c[q]
    B = (Mop + l * gW * Lbig) @ G
    Y_C = np.zeros((N, P))
    for r, i in enumerate(lab):
        Y_C[i * m: (i + 1) * m] = c[:, None] * Y[r][None, :]
    model = _fit(K, y, "dense", gamma_A=gA, gamma_B=gB, gamma_W=gW, c=c)
    A = model.coef_.transpose(1, 0, 2).reshape(N, P)  # A[i*m + p] = coef_[p, i]
    resid = (B + l * gA * np.eye(N)) @ A - Y_C
    assert np.max(np.abs(resid)) <= 1e-10 * max(1.0, np.max(np.abs(Y_C)))


@pytest.mark.parametrize("gamma_B,gamma_W,weights", [(0.0, 0.0, None), (0.2, 0.0, None), (0.1, 0.05, None),
                                                     (0.1, 0.05, "random")])
def test_dense_solve_minimises_the_regularised_least_squares_objective(gamma_B, gamma_W, weights):
    """solve_dense's function values equal those of the objective's minimiser by a stacked least-squares solve."""
    m, n, P = 3, 12, 3
    K, _, y = make_problem(m, n, P, frac_unlabelled=0.4, seed=31)
    L = random_graph_laplacians(m, n, seed=32)
    lab, Y = pm_one_targets(y, P)
    c = np.array([0.6, -0.3, 0.9])
    w = None if weights is None else np.random.default_rng(33).uniform(0, 2, n)
    coef = solve_dense(K, lab, Y, c, 0.05, gamma_B, gamma_W, L, between_weights=w)
    ref = objective_minimiser_values(K, lab, Y, c, 0.05, gamma_B, gamma_W, L, between_weights=w)
    np.testing.assert_allclose(solver_values(K, coef), ref, rtol=1e-7, atol=1e-8 * np.abs(ref).max())
