"""The true relative residual of Theorem 10's system (68) at computed coefficients: what every MVL-LS solver reports
as ``residual`` (:class:`mvl.solvers.problem.SolverResult`) and the estimators as ``residual_``.

In the notation of :mod:`mvl.solvers.system` the system is (M K + delta I) a = r, and the residual of a solution a
is, per output column k, ||r_k - (M K a)_k - delta a_k|| / ||r_k||; the solvers report its largest value over the
columns. The iterative solvers ("cg", "graph") compute it as they go; for the direct solvers ("structured",
"dense") :func:`direct_residual` computes it after the solve with one product by the kernels (m n^2 P flops, against
the solve's O(m n^3)) and one by the dense within-view operators, from the dense problem the direct solvers take.
"""

from __future__ import annotations

import numpy as np

from .system import MVLSystem

__all__ = ["direct_residual", "column_residuals"]


def column_residuals(rho, r):
    """||rho_k|| / ||r_k|| per output column k of (m, n, P) arrays (a zero column of r counts as norm 1)."""
    rnorm = np.sqrt(np.einsum("mnk,mnk->k", r, r))
    rnorm[rnorm == 0] = 1.0
    return np.sqrt(np.einsum("mnk,mnk->k", rho, rho)) / rnorm


def direct_residual(problem, coef):
    """The largest relative residual of (68) over the output columns at ``coef`` (m, n, P) for a dense
    :class:`mvl.solvers.problem.MVLProblem` (``kernels`` (m, n, n); ``laplacians`` the within-view operators
    (L^i)^p, (m, n, n), or with a presence ``mask`` a list of per-view (n_p, n_p) arrays on each view's samples,
    None when gamma_W = 0). With missing views the coefficients vanish outside each view's samples and the system
    is the one of :mod:`mvl.solvers.incomplete` (eq 67-68 on the present (sample, view) pairs)."""
    K, mask = problem.kernels, problem.mask
    m, n, P = coef.shape
    system = MVLSystem(n, problem.labelled, problem.Y_L, problem.c, gamma_A=problem.gamma_A,
                       gamma_B=problem.gamma_B, gamma_W=0.0, between_weights=problem.between_weights, mask=mask)
    F = np.zeros_like(coef)
    views = [None] * m
    for p in range(m):
        if mask is None:
            F[p] = K[p] @ coef[p]
            continue
        views[p] = idx = np.flatnonzero(mask[:, p])
        F[p, idx] = K[p][np.ix_(idx, idx)] @ coef[p, idx]
    rho = system.rhs()
    rho -= system.apply(F)
    rho -= system.delta * coef
    omega = system.l * float(problem.gamma_W)
    L = problem.laplacians
    if omega > 0 and L is not None:
        for p in range(m):
            if mask is None:
                rho[p] -= omega * (L[p] @ F[p])
            elif L[p] is not None:
                rho[p, views[p]] -= omega * (L[p] @ F[p, views[p]])
    return float(column_residuals(rho, system.rhs()).max())
