"""solver="nystrom" (mvl.solvers.nystrom): with every training point as a centre against the structured solver, with
M < n against a dense solve of the M-space problem written here from the objective (10)/(53) (normal equations in
the coefficients on the centres, operators formed as dense Kronecker products): the same minimiser and objective."""

from __future__ import annotations

import numpy as np
from conftest import manifold_problem

from mvl.solvers.structured import solve_structured
from mvl.solvers.nystrom import NystromBasis, solve_nystrom


def _objective(K, Ld, lab, Y_L, c, gammas, A):
    """The objective (10)/(53) times l, from the coefficients A (m, n, P) on all points, written out."""
    gA, gB, gW = gammas
    l, m = len(lab), len(c)
    F = np.einsum("pij,pjk->pik", K, A)
    S = np.tensordot(c, F, axes=(0, 0))
    fit = np.sum((Y_L - S[lab]) ** 2)
    rkhs = sum(np.sum(A[p] * F[p]) for p in range(m))
    between = sum(np.sum((F[p] - F[q]) ** 2) for p in range(m) for q in range(p + 1, m))
    within = sum(np.sum(F[p] * (Ld[p] @ F[p])) for p in range(m))
    return fit + l * gA * rkhs + l * gB * between + l * gW * within


def test_nystrom_with_every_point_is_exact(manifold):
    K, lab = manifold["K"], manifold["labelled"]
    kernels, system, Ld, Y_L, c = manifold_problem(manifold)
    alpha = solve_nystrom(system, NystromBasis(kernels, np.arange(300)))
    ref = solve_structured(K, lab, Y_L, c, 1e-4, 1e-3, 1e-2, Ld)
    F, Fr = np.einsum("pij,pjk->pik", K, alpha), np.einsum("pij,pjk->pik", K, ref)
    assert np.abs(F - Fr).max() <= 1e-7 * np.abs(Fr).max()


def test_nystrom_minimises_the_restricted_objective(manifold):
    """M < n: the coefficients on the centres solve the normal equations of the restricted objective, formed here
    densely with Kronecker products (Hessian K_C^T Mop K_C + delta blockdiag(K_CC))."""
    K, lab = manifold["K"], manifold["labelled"]
    gammas = (1e-4, 1e-3, 1e-2)
    kernels, system, Ld, Y_L, c = manifold_problem(manifold, gammas=gammas)
    centres = np.sort(np.random.default_rng(1).choice(300, 60, replace=False))
    alpha = solve_nystrom(system, NystromBasis(kernels, centres))
    n, m, M, l = 300, 3, 60, len(lab)
    J = np.zeros((n, n))
    J[lab, lab] = 1.0
    Mm = m * np.eye(m) - np.ones((m, m))
    Mop = np.kron(np.outer(c, c), J) + l * gammas[1] * np.kron(Mm, np.eye(n))
    Mop += l * gammas[2] * np.block([[Ld[p] if p == q else np.zeros((n, n)) for q in range(m)] for p in range(m)])
    KC = np.block([[K[p][:, centres] if p == q else np.zeros((n, M)) for q in range(m)] for p in range(m)])
    KCC = np.block([[K[p][np.ix_(centres, centres)] if p == q else np.zeros((M, M)) for q in range(m)]
                    for p in range(m)])
    Yfull = np.zeros((n, 4))
    Yfull[lab] = Y_L
    r = np.concatenate([c[p] * Yfull for p in range(m)])  # r_p = c_p J Y, view-major
    H = KC.T @ Mop @ KC + l * gammas[0] * KCC
    ref = np.linalg.lstsq(H, KC.T @ r, rcond=1e-13)[0].reshape(m, M, 4)
    full = np.zeros((m, n, 4))
    full[:, centres] = alpha
    ref_full = np.zeros((m, n, 4))
    ref_full[:, centres] = ref
    F, Fr = np.einsum("pij,pjk->pik", K, full), np.einsum("pij,pjk->pik", K, ref_full)
    assert np.abs(F - Fr).max() <= 1e-6 * np.abs(Fr).max()
    J_ny = _objective(K, Ld, lab, Y_L, c, gammas, full)
    J_ref = _objective(K, Ld, lab, Y_L, c, gammas, ref_full)
    assert abs(J_ny - J_ref) <= 1e-8 * abs(J_ref)
    # and it is an approximation: the exact (structured) solution has a lower objective
    exact = solve_structured(K, lab, Y_L, c, *gammas, Ld)
    assert _objective(K, Ld, lab, Y_L, c, gammas, exact) < J_ref
