"""The dense textbook solver (mvl.solvers.dense): the (u+l)m system of eq (67)-(68) built element by element."""

from __future__ import annotations

import numpy as np
from conftest import make_problem, paper_model, pm_one_targets, sample_first

import mvl

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

