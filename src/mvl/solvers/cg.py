"""solver="cg": Theorem 10's exact system by conjugate gradients in the kernel inner product, Nystrom-preconditioned
(the derivation in :mod:`mvl.solvers.system`)."""

from __future__ import annotations

import time

import numpy as np

from .nystrom import nystrom_preconditioner
from .optc import OptCNystrom
from .problem import Solver, SolverResult

__all__ = ["CGSolver", "solve_cg"]


def solve_cg(system, kernels, basis, tol=1e-6, max_iter=500, x0=None, verbose=0, precondition=None):
    """Coefficients (m, n, P) of Theorem 10 by preconditioned CG in <.,.>_K (module docstring); returns (a, info),
    info a dict: n_iter, residual (the largest relative residual of (68) over the output columns), converged.

    ``x0`` (m, n, P) warm-starts the iteration. Stops when every output column's relative residual of (68) is
    <= ``tol`` or after ``max_iter`` iterations (``info["converged"]`` False then; the caller warns).
    """
    t0 = time.perf_counter()
    delta = system.delta
    r = system.rhs()
    rnorm = np.sqrt(np.einsum("mnk,mnk->k", r, r))
    rnorm[rnorm == 0] = 1.0
    if precondition is None:
        precondition = nystrom_preconditioner(system, basis)

    if x0 is None:
        x = np.zeros_like(r)
        rho = r.copy()
    else:
        x = np.array(x0, dtype=np.float64, copy=True)
        Kx = kernels.matmul(x)
        rho = r - system.apply(Kx) - delta * x
    res = np.sqrt(np.einsum("mnk,mnk->k", rho, rho)) / rnorm
    it = 0
    if res.max() > tol:
        z = precondition(rho)
        Kz = kernels.matmul(z)
        gamma = np.einsum("mnk,mnk->k", rho, Kz)
        p_, Kp = z, Kz
        while it < max_iter:
            it += 1
            MKp = system.apply(Kp)
            pAp = np.einsum("mnk,mnk->k", Kp, MKp) + delta * np.einsum("mnk,mnk->k", p_, Kp)
            alpha = gamma / pAp
            x += alpha * p_
            rho -= alpha * (MKp + delta * p_)
            res = np.sqrt(np.einsum("mnk,mnk->k", rho, rho)) / rnorm
            if verbose:
                print(f"[mvl cg] iteration {it}: relative residual {res.max():.3e} "
                      f"({time.perf_counter() - t0:.1f} s)", flush=True)
            if res.max() <= tol:
                break
            z = precondition(rho)
            Kz = kernels.matmul(z)
            gamma_new = np.einsum("mnk,mnk->k", rho, Kz)
            bcg = gamma_new / gamma
            gamma = gamma_new
            p_ = z + bcg * p_
            Kp = Kz + bcg * Kp
    info = {"n_iter": it, "residual": float(res.max()), "converged": bool(res.max() <= tol)}
    return x, info


class CGSolver(Solver):
    """solver="cg": exact to ``tol`` by preconditioned CG on a kernel operator (module docstring); gamma_W > 0 needs
    a sparse kNN graph; the Nystrom basis is its preconditioner."""

    name = "cg"
    operator = True
    sparse_graph = True
    nystrom_basis = True
    optc = True
    advice = 'increase max_iter or n_components, or use solver="structured" (n small) or "nystrom"'

    def solve(self, problem):
        coef, info = solve_cg(problem.system, problem.kernels, problem.basis, tol=float(problem.tol),
                              max_iter=int(problem.max_iter), verbose=problem.verbose)
        return SolverResult(coef, info["n_iter"], info["residual"], info["converged"])

    def optc_step(self, problem):
        system, kernels, basis = problem.system, problem.kernels, problem.basis
        engine = OptCNystrom(system, basis)
        KL = np.stack([kernels.rows(p, problem.labelled) for p in range(system.m)])

        def step(c, state):
            sys_c = system.with_c(c)
            solve_B, _U = engine.solver(c)
            a, info = solve_cg(sys_c, kernels, basis, tol=float(problem.tol), max_iter=int(problem.max_iter),
                               x0=state, verbose=problem.verbose,
                               precondition=nystrom_preconditioner(sys_c, basis, solve_B))
            return (np.einsum("pln,pnk->plk", KL, a), a,
                    SolverResult(a, info["n_iter"], info["residual"], info["converged"]))

        return step
