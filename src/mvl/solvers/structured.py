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

from .incomplete import solve_structured_incomplete
from .problem import Solver, SolverResult
from .structured_system import solve_structured

__all__ = ["StructuredSolver", "solve_structured", "structured_bytes"]


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
    direct = True
    auto_rank = 0

    def memory_bytes(self, n, m, l):
        return structured_bytes(n, m, l)

    def auto_accepts(self, regime):
        """Precomputed kernels at any size; feature views up to :data:`mvl.solvers.auto.AUTO_STRUCTURED_MAX` points
        if its memory fits the budget."""
        from .auto import AUTO_STRUCTURED_MAX

        return regime.kernel == "precomputed" or (regime.n <= AUTO_STRUCTURED_MAX
                                                  and structured_bytes(regime.n, regime.m, regime.l)
                                                  <= regime.max_memory)

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
