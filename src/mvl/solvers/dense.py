"""The textbook MVL-LS solver: the full (u+l)m system of eq (67)-(68) formed and solved by one LU
(solver="dense"), as the authors' MATLAB code does; O((nm)^2) memory, for tests and benchmarks."""

from __future__ import annotations

import numpy as np
from scipy import linalg

from .incomplete import solve_dense_incomplete
from .problem import Solver, SolverResult

__all__ = ["DenseSolver", "solve_dense", "dense_bytes"]


def solve_dense(K, labelled, Y_L, c, gamma_A, gamma_B, gamma_W, L=None, between_weights=None):
    """Textbook reference: the full (u+l)m system of eq (67)-(68), one LU.

    Unknowns are ordered sample-major as in the paper (a = vec(A^T), A of
    size (u+l)m x P); G[x] = sum_i k^i[x] (x) e_i e_i^T (eq 94), B is formed
    as the product in eq (68) and (B + l gamma_A I) A = Y_C is solved by
    LU, as the authors' MATLAB code does. Memory O((nm)^2): for tests and
    benchmarks only. Returns coefficients in the layout (m, n, P). ``between_weights``: M_B = diag(w) (x) M_m.
    """
    m, n, _ = K.shape
    l = len(labelled)
    P = Y_L.shape[1]
    N = n * m
    E = np.eye(m)
    G = np.zeros((N, N))
    for p in range(m):
        G += np.kron(K[p], np.outer(E[p], E[p]))
    J = np.zeros((n, n))
    J[labelled, labelled] = 1.0
    Mm = m * np.eye(m) - np.ones((m, m))  # eq (54)
    D = np.eye(n) if between_weights is None else np.diag(np.asarray(between_weights, dtype=np.float64))
    Mop = np.kron(J, np.outer(c, c)) + l * gamma_B * np.kron(D, Mm)
    if gamma_W > 0 and L is not None:
        Lbig = np.zeros((N, N))
        for p in range(m):
            Lbig += np.kron(L[p], np.outer(E[p], E[p]))  # eq (60)
        Mop += l * gamma_W * Lbig
    B = Mop @ G  # eq (68)
    B[np.diag_indices(N)] += l * gamma_A
    Yfull = np.zeros((n, P))
    Yfull[labelled] = Y_L
    Y_C = np.kron(Yfull, c[:, None])  # row (i, p) = c_p y_i, zero for unlabelled i
    A = linalg.solve(B, Y_C, overwrite_a=True, check_finite=False)
    return A.reshape(n, m, P).transpose(1, 0, 2).copy()


def dense_bytes(n, m):
    """Peak memory of the textbook dense solve: the (nm)^2 system four times (G[x], the operator, B, its LU)."""
    return 8 * 4 * (n * m) ** 2


class DenseSolver(Solver):
    """solver="dense": the textbook system (module docstring), for tests and benchmarks; every loss, the
    Poisson-type ones by :func:`mvl.solvers.poisson.solve_dense`."""

    name = "dense"
    losses = ("squared", "poisson", "squared+poisson")
    missing_views = ("squared",)
    sparse_graph = False
    optc = False
    direct = True
    auto_rank = None  # the reference, never chosen by "auto"

    def memory_bytes(self, n, m, l):
        return dense_bytes(n, m)

    def auto_accepts(self, regime):
        return False

    def solve(self, problem):
        if problem.loss != "squared":  # the Poisson-type terms' textbook system (mvl.solvers.poisson)
            from .poisson import solve_source

            return solve_source(problem, dense=True)
        if problem.mask is not None:
            coef = solve_dense_incomplete(problem.kernels, problem.mask, problem.labelled, problem.Y_L, problem.c,
                                          **problem.gammas, L=problem.laplacians,
                                          between_weights=problem.between_weights)
        else:
            coef = solve_dense(problem.kernels, problem.labelled, problem.Y_L, problem.c, **problem.gammas,
                               L=problem.laplacians, between_weights=problem.between_weights)
        return SolverResult(coef)
