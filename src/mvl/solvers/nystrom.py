"""solver="nystrom": each view's function restricted to the span of the kernel at M centres, and the Nystrom
preconditioner of solver="cg" (:mod:`mvl.solvers.system` for the operator and the derivation)."""

from __future__ import annotations

import numpy as np
from scipy import linalg

from .lapack import factor_spd, solve_factored
from .optc import OptCNystrom
from .problem import Solver, SolverResult

__all__ = ["NystromBasis", "NystromSolver", "solve_nystrom", "nystrom_preconditioner",
           "split_blocks"]


class NystromBasis:
    """Z_p = K^p_{nC} V_p with V_p = U_p s_p^{-1/2} from K^p_CC = U_p diag(s_p) U_p^T (eigenvalues <= 1e-12 of the
    largest dropped), so that Z_p Z_p^T is the Nystrom approximation of K^p and Z_p^T Z_p-coordinates are
    orthonormal in the RKHS (module docstring)."""

    def __init__(self, kernels, centres, mask=None, view_centres=None):
        self.centres = np.asarray(centres)
        self.V, self.Z = [], []
        # incomplete views (``mask`` (n, m)): view p's centres are ``view_centres[p]`` (sorted, among ``centres`` and
        # the samples that have view p; default: the centres that have view p), ``view_pos[p]`` their positions
        # among ``centres`` (``kernels`` then zero outside S_p: MaskedViewKernels)
        if mask is None:
            self.view_pos, self.view_centres = None, [self.centres] * kernels.m
        else:
            if view_centres is None:
                view_centres = [self.centres[mask[self.centres, p]] for p in range(kernels.m)]
            self.view_centres = [np.asarray(v, dtype=np.intp) for v in view_centres]
            for p, v in enumerate(self.view_centres):
                if not (np.isin(v, self.centres).all() and mask[v, p].all()):
                    raise ValueError(f"view_centres[{p}] must be centres that have view {p}")
            self.view_pos = [np.searchsorted(self.centres, v) for v in self.view_centres]
        for p in range(kernels.m):
            cp = self.view_centres[p]
            if cp.size == 0:  # a view no centre has: no function
                self.V.append(np.zeros((0, 0)))
                self.Z.append(np.zeros((kernels.n, 0)))
                continue
            KnC = kernels.columns(p, cp)
            KCC = 0.5 * (KnC[cp] + KnC[cp].T)
            s, U = linalg.eigh(KCC, check_finite=False, driver="evd")  # divide and conquer: ~3x evr here
            keep = s > 1e-12 * max(s.max(), 0.0) if s.max() > 0 else np.zeros(len(s), bool)
            if not keep.any():
                raise ValueError(f"view {p}: the kernel is zero on the Nystrom centres")
            V = U[:, keep] / np.sqrt(s[keep])
            self.V.append(V)
            self.Z.append(KnC @ V)
            del KnC

    @property
    def sizes(self):
        return [v.shape[1] for v in self.V]


def split_blocks(vec, sizes):
    off = np.concatenate([[0], np.cumsum(sizes)])
    return [vec[off[p]:off[p + 1]] for p in range(len(sizes))]


def solve_nystrom(system, basis, info=None):
    """Coefficients on the centres, (m, M, P): the Nystrom-restricted problem (module docstring) solved directly.
    ``info`` (a dict) receives ``residual``: the largest relative residual ||g - (B + delta I) w|| / ||g|| over the
    output columns of the restricted system solved (one product with B)."""
    B = system.projected(basis.Z)
    fac = factor_spd(B, system.delta)

    def solve(g):
        w = solve_factored(fac, g)
        if info is not None:
            gnorm = np.linalg.norm(g, axis=0)
            gnorm[gnorm == 0] = 1.0
            info["residual"] = float(np.max(np.linalg.norm(g - B @ w - system.delta * w, axis=0) / gnorm))
        return w
    if system.mask is not None:  # g_p = Z_p[L]^T C~_p Y_L; view p's coefficients on its own centres
        g = np.vstack([basis.Z[p][system.labelled].T @ (system.Ct[system.labelled, p][:, None] * system.Y_L)
                       for p in range(system.m)])
        w = solve(g)
        out = np.zeros((system.m, len(basis.centres), system.P))
        for p, (V, wp) in enumerate(zip(basis.V, split_blocks(w, basis.sizes), strict=True)):
            out[p, basis.view_pos[p]] = V @ wp
        return out
    g = np.vstack([system.c[p] * (basis.Z[p][system.labelled].T @ system.Y_L) for p in range(system.m)])
    w = solve(g)
    return np.stack([V @ wp for V, wp in zip(basis.V, split_blocks(w, basis.sizes), strict=True)])


def nystrom_preconditioner(system, basis, solve_B=None):
    """z = rho / delta + E_C V [(B + delta I)^{-1} - I / delta] Z^T rho (module docstring), as a function of rho.
    ``solve_B(g)`` = (B + delta I)^{-1} g if already available (optC: :class:`OptCNystrom`)."""
    delta = system.delta
    if solve_B is None:
        fac = factor_spd(system.projected(basis.Z), delta)

        def solve_B(g):
            return solve_factored(fac, g)
    sizes, cents = basis.sizes, basis.view_centres

    def apply(rho):
        g = np.vstack([basis.Z[p].T @ rho[p] for p in range(system.m)])
        h = solve_B(g) - g / delta
        z = rho / delta
        for p, hp in enumerate(split_blocks(h, sizes)):
            z[p, cents[p]] += basis.V[p] @ hp
        return z

    return apply


class NystromSolver(Solver):
    """solver="nystrom": each view's function restricted to the span of the centres, solved directly (approximate;
    exact when the centres are all the training points); never keeps n x n Gram matrices."""

    name = "nystrom"
    losses = ("squared",)
    missing_views = True
    sparse_graph = True
    optc = True
    operator = True
    auto_rank = 3
    exact = False
    nystrom_basis = True
    keeps_kernels = False

    def memory_bytes(self, n, m, l):
        return None  # O(n n_components m): no n x n array

    def auto_accepts(self, regime):
        """Every size: the last resort of solver="auto"."""
        return True

    def solve(self, problem):
        info = {}
        coef = solve_nystrom(problem.system, problem.basis, info)
        return SolverResult(coef, residual=info["residual"], centres=problem.centres)

    def optc_step(self, problem):
        system, basis = problem.system, problem.basis
        engine = OptCNystrom(system, basis)
        m = system.m

        def step(c, state):
            solve_B, U = engine.solver(c)
            g = U @ system.Y_L
            w = solve_B(g)
            parts = split_blocks(w, basis.sizes)
            coef = np.stack([basis.V[p] @ parts[p] for p in range(m)])
            result = SolverResult(coef, residual=engine.residual(U, g, w), centres=problem.centres)
            return np.stack([engine.ZL[p] @ parts[p] for p in range(m)]), coef, result

        return step
