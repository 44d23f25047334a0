"""solver="cg": Theorem 10's exact system by conjugate gradients in the kernel inner product, Nystrom-preconditioned
(the derivation in :mod:`mvl.solvers.system`)."""

from __future__ import annotations

import time

import numpy as np

from .nystrom import nystrom_preconditioner
from .optc import OptCNystrom
from .problem import Solver, SolverResult

__all__ = ["CGSolver", "solve_cg", "RANGE_SOLVED"]


RANGE_SOLVED = 1e-3
"""The preconditioned kernel-norm residual sqrt(rho^T K z / rho_0^T K z_0), relative to ``tol``, below which CG has
nothing left to do in the kernels' range (:func:`solve_cg`): the coefficients are then repaired and checked."""


def solve_cg(system, kernels, basis, tol=1e-6, max_iter=500, x0=None, verbose=0, precondition=None):
    """Coefficients (m, n, P) of Theorem 10 by preconditioned CG in <.,.>_K (module docstring); returns (a, info),
    info a dict: n_iter, residual (the largest true relative residual ||r - (M K + delta I) a|| / ||r|| of (68) over
    the output columns), converged, breakdown (None, or the iteration at which CG broke down).

    ``x0`` (m, n, P) warm-starts the iteration. Stops when every output column's relative residual of (68) is
    <= ``tol``, or after ``max_iter`` iterations (``info["converged"]`` False then; the caller warns).

    **Rank-deficient kernels.** CG works in the kernel inner product, which does not see a residual in the null
    space of K (a linear kernel on few features): there the recurrence's residual stalls while K a, all that the
    predictions use, is exact. Since (68) reads delta a = r - M (K a), the repaired coefficients
    a' = a + rho / delta = (r - M K a) / delta have the same K a up to K rho and the residual -M K rho / delta of
    (68). When the preconditioned kernel-norm residual sqrt(rho^T K z) of every unfinished column has fallen
    below ``RANGE_SOLVED * tol`` of its start (and once more at ``max_iter``), a' is formed and its true residual
    computed with one kernel pass; a column takes a' where that residual is smaller, and the solve stops if
    every column is then within ``tol``; otherwise CG restarts from the repaired coefficients. The verdict is
    always the true residual of (68).

    **Breakdown.** CG needs p^T A p > 0 and rho^T K z > 0 (A = K (M K + delta I), positive definite when every
    view's kernel is positive semi-definite and the preconditioner positive definite). When either is <= 0 or not
    finite (an indefinite precomputed kernel), the iteration stops at the last iterate, ``info["breakdown"]`` is
    its iteration and ``info["converged"]`` False (the caller warns, :func:`mvl.solvers.problem.breakdown_message`).
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
    it, breakdown, checked = 0, None, np.inf

    def repair(x, res):
        """a' = a + rho / delta per column where its true residual of (68) is smaller (docstring)."""
        xr = x + rho / delta
        rr = r - system.apply(kernels.matmul(xr)) - delta * xr
        res_r = np.sqrt(np.einsum("mnk,mnk->k", rr, rr)) / rnorm
        take = res_r < res
        x[..., take] = xr[..., take]
        return np.where(take, res_r, res)

    if res.max() > tol:
        z = precondition(rho)
        Kz = kernels.matmul(z)
        gamma = np.einsum("mnk,mnk->k", rho, Kz)
        gamma0 = np.abs(gamma)
        gamma0[gamma0 == 0] = 1.0
        p_, Kp = z, Kz
        while it < max_iter:
            open_ = res > tol
            ratio = float(np.max(np.sqrt(np.abs(gamma[open_]) / gamma0[open_])))
            if ratio <= RANGE_SOLVED * tol and ratio < 0.01 * checked:  # the range is solved: repair, check
                checked = ratio
                res = repair(x, res)
                if res.max() <= tol:
                    break
                # restart from the repaired coefficients: their residual has a range part again
                rho = r - system.apply(kernels.matmul(x)) - delta * x
                z = precondition(rho)
                Kz = kernels.matmul(z)
                gamma = np.einsum("mnk,mnk->k", rho, Kz)
                p_, Kp = z, Kz
                open_ = res > tol
            if not np.all(np.isfinite(gamma)) or np.any(gamma[open_] <= 0):
                breakdown = it
                break
            it += 1
            MKp = system.apply(Kp)
            pAp = np.einsum("mnk,mnk->k", Kp, MKp) + delta * np.einsum("mnk,mnk->k", p_, Kp)
            if not np.all(np.isfinite(pAp)) or np.any(pAp[open_] <= 0):
                breakdown = it
                break
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
        if res.max() > tol and breakdown is None and checked == np.inf:  # max_iter: is the range solved?
            res = repair(x, res)
    info = {"n_iter": it, "residual": float(res.max()), "converged": bool(res.max() <= tol), "breakdown": breakdown}
    return x, info


class CGSolver(Solver):
    """solver="cg": exact to ``tol`` by preconditioned CG on a kernel operator (module docstring); gamma_W > 0 needs
    a sparse kNN graph; the Nystrom basis is its preconditioner."""

    name = "cg"
    losses = ("squared",)
    missing_views = True
    sparse_graph = True
    optc = True
    operator = True
    auto_rank = 2
    nystrom_basis = True
    advice = 'increase max_iter or n_components, or use solver="structured" (n small) or "nystrom"'

    def memory_bytes(self, n, m, l):
        return None  # the kernels kept within max_memory, recomputed per product beyond

    def auto_accepts(self, regime):
        """Up to :data:`mvl.solvers.auto.AUTO_CG_MAX` points."""
        from .auto import AUTO_CG_MAX

        return regime.n <= AUTO_CG_MAX

    def solve(self, problem):
        coef, info = solve_cg(problem.system, problem.kernels, problem.basis, tol=float(problem.tol),
                              max_iter=int(problem.max_iter), verbose=problem.verbose)
        return _result(coef, info)

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
            return np.einsum("pln,pnk->plk", KL, a), a, _result(a, info)

        return step


def _result(coef, info):
    """The typed result of a :func:`solve_cg` run."""
    return SolverResult(coef, info["n_iter"], info["residual"], info["converged"], breakdown=info["breakdown"])
