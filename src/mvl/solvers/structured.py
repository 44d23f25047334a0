"""The structured MVL-LS solver: Theorem 10's system view by view (solver="structured").

Problem (eq 10 with eq 53): over f = (f^1, ..., f^m), one RKHS function per view,

    1/l sum_{i<=l} ||y_i - C f(x_i)||^2 + gamma_A ||f||^2
        + gamma_B <f, M_B f> + gamma_W <f, M_W f>,

with C = c^T (x) I_P (eq 52), M_B from eq (54)-(57) and M_W = L (x) I_P from
eq (60)-(63). By Theorem 10 the coefficients A solve the Sylvester equation
(67) with R = I_P, i.e. the linear system

    (B + l gamma_A I) A = Y_C,
    B = (J_l^{u+l} (x) c c^T + l gamma_B I_{u+l} (x) M_m + l gamma_W L) G[x]    (68)

of size (u+l)m. With the diagonal kernel of Section 7.1 (eq 93-94), grouping
unknowns view-major turns G[x] into blockdiag(K^1, ..., K^m) and L into
blockdiag(L^1, ..., L^m). For view p, with outputs F_q = K^q A_q on the
training points, S = sum_q c_q F_q (combined output), T = sum_q F_q, and
E = J (Y - S) (residual on labelled rows, zero elsewhere), the system reads

    H_p A_p = c_p E + l gamma_B T,
    H_p = (l gamma_B m I + l gamma_W L^p) K^p + l gamma_A I.

(Superscript p indexes the view. With ``laplacian_power`` = d > 1, L^p stands for the iterated
Laplacian (L^p)^d of view p, again n x n, :func:`mvl.graph.laplacian_power`; nothing else changes.)

The views are coupled only through E (l x P) and T (n x P). With
Q_p = K^p H_p^{-1} (symmetric), eliminating A_p leaves one system of size l + n
(size l when gamma_B = 0):

    [ I + Q_cc[L, L]      l gamma_B Q_c[L, :] ] [E_L]   [Y_L]
    [ -Q_c[:, L]          I - l gamma_B Q_1   ] [ T ] = [ 0 ],

Q_cc = sum c_p^2 Q_p, Q_c = sum c_p Q_p, Q_1 = sum Q_p. Cost: m LU factorisations
and solves of n x n matrices plus one of size l + n, i.e. O(m n^3) time and
O(m n^2) memory instead of O((mn)^3) and O((mn)^2) for the dense system.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import lapack

from .incomplete import solve_structured_incomplete
from .lapack import factor_view, solve_coupled, view_Q
from .problem import Solver, SolverResult

__all__ = ["StructuredSolver", "solve_structured", "structured_bytes"]


def solve_structured(K, labelled, Y_L, c, gamma_A, gamma_B, gamma_W, L=None, info=None, between_weights=None):
    """Solve eq (67)-(68) view by view; returns coefficients A of shape (m, n, P).

    ``labelled`` indexes the l labelled rows of the n training points and
    ``Y_L`` (l x P) holds their targets. ``L`` is (m, n, n) or None if
    gamma_W = 0. ``K`` must be exactly symmetric per view (as returned by
    :func:`mvl.validation.check_multiview_kernels`). If ``info`` is a dict, ``info["rcond"]`` receives
    the smallest reciprocal condition estimate of the factored matrices (the H_p and the coupled system).

    ``between_weights`` (n,) >= 0 weighs the between-view term per point, M_B = diag(w) (x) M_m (None: w = 1,
    eq 57); e.g. the indicator of the unlabelled points gives co-regularization on them (JMLR Section 3.4,
    Sindhwani & Rosenberg 2008). Then H_p = (beta m D + omega L^p) K^p + delta I, the right-hand side is
    c_p E + beta D T, and only the rows U of D T (w > 0) are unknowns of the coupled system:
    [[I + Q_cc[L,L], beta Q_c[L,U]], [-D_U Q_c[U,L], I - beta D_U Q_1[U,U]]] [E_L; (D T)_U] = [Y_L; 0].
    """
    rconds = [] if info is not None else None
    m, n, _ = K.shape
    l = len(labelled)
    P = Y_L.shape[1]
    delta = l * gamma_A
    beta = l * gamma_B if m > 1 else 0.0  # M_1 = 0: no between-view term for one view
    omega = l * gamma_W
    w = None if between_weights is None else np.asarray(between_weights, dtype=np.float64)
    if w is not None and (w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0)):
        raise ValueError(f"between_weights must be {n} finite non-negative numbers")
    U = None if w is None else np.flatnonzero(w > 0)  # rows of D T that can be non-zero
    if U is not None and U.size == 0:
        beta = 0.0
    u = n if U is None else U.size
    factors = []
    # The coupled system's blocks are accumulated in place (no n x n copies):
    # S = [[Q_cc[L,L], Q_c[L,U]], [., Q_1[U,U]]] now, scaled and shifted by the identity below.
    S = np.zeros((l + u, l + u)) if beta > 0 else None
    Qcc_LL = S[:l, :l] if beta > 0 else np.zeros((l, l))
    Qc_L = S[:l, l:] if beta > 0 else None  # Q_c[L, U]; its transpose is Q_c[U, L] (Q_p symmetric)
    Q1 = S[l:, l:] if beta > 0 else None
    for p in range(m):
        Kp = K[p]
        lu, piv = factor_view(Kp, None if L is None else L[p], m, delta, beta, omega, p, rconds, w)
        factors.append((lu, piv))
        X = view_Q(lu, piv, Kp)
        Qp = X.T  # C-ordered view of Q_p^T = Q_p
        QL = Qp[labelled]
        Qcc_LL += (c[p] * c[p]) * QL[:, labelled]
        if Q1 is not None:
            if U is None:
                Qc_L += c[p] * QL
                Q1 += Qp
            else:
                Qc_L += c[p] * QL[:, U]
                Q1 += Qp[np.ix_(U, U)]
        del X, Qp, QL
    if beta > 0:
        # [ I + Q_cc[L,L]   beta Q_c[L,:] ] [E_L]   [Y_L]
        # [ -Q_c[:,L]       I - beta Q_1  ] [ T ] = [ 0 ]
        S[l:, :l] = Qc_L.T
        if U is None:
            S[l:, :l] *= -1.0
            Q1 *= -beta
        else:  # rows U scaled by D_U
            S[l:, :l] *= -w[U][:, None]
            Q1 *= (-beta * w[U])[:, None]
        Qc_L *= beta
        S[np.diag_indices(l + u)] += 1.0
        del Q1, Qc_L, Qcc_LL
        rhs = np.zeros((l + u, P))
        rhs[:l] = Y_L
        # S is C-ordered: solve with S^T's LU (Fortran view, no copy) and trans=1
        sol = solve_coupled(S.T, rhs, rconds, trans=1)
        E_L, T = sol[:l], sol[l:]
        if U is not None:  # D T on all n points, zero outside U
            T = np.zeros((n, P))
            T[U] = sol[l:]
    else:
        Qcc_LL[np.diag_indices(l)] += 1.0
        E_L = solve_coupled(Qcc_LL, np.asarray(Y_L, dtype=np.float64), rconds)
        T = None
    E = np.zeros((n, P))
    E[labelled] = E_L
    A = np.empty((m, n, P))
    for p, (lu, piv) in enumerate(factors):
        rhs = c[p] * E
        if T is not None:
            rhs += beta * T
        A[p], err = lapack.dgetrs(lu, piv, rhs, trans=1)  # H_p A_p = rhs, from the LU of H_p^T
    if info is not None:
        info["rcond"] = min(rconds) if rconds else 1.0
    return A


def structured_bytes(n, m, l):
    """Peak memory of the structured solve (and the kernels it needs): m kernels, m LU factors and Q_p, the
    Laplacians and the (l + n) coupled system, float64."""
    return 8 * ((3 * m + 1) * n * n + (l + n) ** 2)


class StructuredSolver(Solver):
    """solver="structured": Theorem 10 view by view (module docstring), exact, O(m n^3) time and O(m n^2) memory;
    incomplete views by :func:`mvl.solvers.incomplete.solve_structured_incomplete`; the Poisson-type losses by
    :func:`mvl.solvers.poisson.solve_structured` (complete views)."""

    name = "structured"
    losses = ("squared", "poisson", "squared+poisson")
    missing_views = ("squared",)
    sparse_graph = False
    optc = True
    inputs = "dense"
    auto_rank = 0

    def memory_bytes(self, spec):
        return structured_bytes(spec.n, spec.m, spec.l)

    def auto_accepts(self, spec):
        """Precomputed kernels at any size; feature views up to :data:`mvl.solvers.auto.AUTO_STRUCTURED_MAX` points
        if its memory fits the budget."""
        from . import auto

        return spec.precomputed or (spec.n <= auto.AUTO_STRUCTURED_MAX and self.memory_bytes(spec) <= spec.max_memory)

    def solve(self, problem):
        if problem.loss != "squared":  # the Poisson-type terms (mvl.solvers.poisson)
            from .poisson import solve_source

            return solve_source(problem)
        info = {}
        if problem.mask is not None:
            coef = solve_structured_incomplete(problem.kernels, problem.mask, problem.labelled, problem.Y_L,
                                               problem.c, **problem.gammas, L=problem.laplacians, info=info,
                                               between_weights=problem.between_weights)
        else:
            coef = solve_structured(problem.kernels, problem.labelled, problem.Y_L, problem.c, **problem.gammas,
                                    L=problem.laplacians, info=info, between_weights=problem.between_weights)
        rcond = info.get("rcond", np.nan)
        return SolverResult(coef, condition=1.0 / rcond if rcond != 0 else np.inf)
