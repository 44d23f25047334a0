"""What every MVL-LS solver takes and returns: the problem of Theorem 10 (:class:`MVLProblem`), the solution
(:class:`SolverResult`) and the interface a solver implements (:class:`Solver`).

A solver declares what it needs and handles, so that an estimator's checks read from it: ``operator`` (it works on
a kernel operator and the sparse operator M of :mod:`mvl.solvers.system`, never an n x n array; False: the dense
(m, n, n) kernels and Laplacians), ``exact`` (Theorem 10's solution to ``tol``, or an approximation),
``missing_views`` (it takes incomplete views), ``sparse_graph`` (gamma_W > 0 needs a sparse kNN graph),
``nystrom_basis`` (it needs Nystrom centres), ``keeps_kernels`` (the Gram matrices may be kept within the memory
budget) and ``optc`` (it serves MVL-LS-optC's f-step). Each solver also declares ``losses``, ``auto_rank`` and
``auto_accepts`` (:func:`mvl.solvers.registry.register`, which refuses a solver missing any of them). Adding a
solver is one module defining a :class:`Solver` subclass and one call of :func:`mvl.solvers.registry.register`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["MVLProblem", "SolverResult", "Solver", "breakdown_message", "BREAKDOWN_ADVICE"]


@dataclass
class MVLProblem:
    """Theorem 10's system (67)-(68) for one combination vector c.

    Parameters
    ----------
    kernels : array (m, n, n) or kernel operator
        The per-view Gram matrices (direct solvers) or an operator with ``matmul``, ``rows``, ``columns``, ``diag``
        (:class:`mvl.kernel_blocks.ViewKernels`, :class:`mvl.missing_views.MaskedViewKernels`).
    labelled : array (l,)
        Indices of the labelled training points.
    Y_L : array (l, P)
        Their targets (Section 5.1).
    c : array (m,)
        The combination vector of C = c^T (x) I_P.
    gamma_A, gamma_B, gamma_W : float
        The regularisation weights of eq (10)/(53).
    laplacians : array (m, n, n) or None
        The dense graph Laplacians (direct solvers; None when gamma_W = 0).
    between_weights : array (n,) or None
        The per-point weights w of M_B = diag(w) (x) M_m (None: w = 1).
    mask : bool array (n, m) or None
        Which samples have which view (None: every view is present).
    system : MVLSystem or None
        The operator M with the right-hand side (operator solvers, :mod:`mvl.solvers.system`).
    basis : NystromBasis or None
        The Nystrom basis on ``centres`` (solvers with ``nystrom_basis``).
    centres : array or None
        Indices of the Nystrom centres.
    tol, max_iter, verbose : float, int, int
        The iterative solvers' stopping rule and printing.
    seed : int
        The seed of a solver's own random choices (the graph solver's Vecchia orderings).
    gamma_A_rule : bool
        gamma_A is the estimator's ``"auto"``: a solver with a rule of its own for gamma_A replaces ``gamma_A``
        by it ("vecchia_direct": :func:`mvl.solvers.vecchia_direct.share_gamma_A`, the value in
        ``SolverResult.info["gamma_A"]``); the others solve at ``gamma_A``.
    """

    kernels: Any
    labelled: np.ndarray
    Y_L: np.ndarray
    c: np.ndarray
    gamma_A: float = 0.0
    gamma_B: float = 0.0
    gamma_W: float = 0.0
    laplacians: Any = None
    between_weights: Any = None
    mask: Any = None
    system: Any = None
    basis: Any = None
    centres: Any = None
    tol: float = 1e-6
    max_iter: int = 500
    verbose: int = 0
    seed: int = 0
    gamma_A_rule: bool = False

    @property
    def gammas(self):
        """The three gammas as keywords."""
        return {"gamma_A": self.gamma_A, "gamma_B": self.gamma_B, "gamma_W": self.gamma_W}


@dataclass
class SolverResult:
    """A solver's answer: ``coef`` (m, n, P), or (m, M, P) on ``centres``; ``n_iter`` (1 for a direct solve),
    ``residual`` (the true relative residual of the system solved at ``coef``, the largest over the output columns:
    (68) for "cg" and "graph", the Nystrom-restricted system for "nystrom"; None where the solver leaves it to the
    caller, :func:`mvl.solvers.residual.direct_residual` for the direct solvers), ``converged`` (False: stopped at
    max_iter, or broke down, ``info["breakdown"]``),
    ``condition`` (the 1-norm condition estimate of the factored systems, NaN where not estimated) and ``centres``
    (the Nystrom centres that carry ``coef``, None otherwise)."""

    coef: np.ndarray
    n_iter: int = 1
    residual: float | None = None
    converged: bool = True
    condition: float = float("nan")
    centres: Any = None
    info: dict | None = None
    """What else the solver measured (e.g. the graph solver's ``energy_error``)."""


class Solver:
    """The interface of an MVL-LS solver (module docstring): the declarations below and :meth:`Solver.solve`."""

    name = ""
    exact = True
    operator = False
    missing_views = True
    sparse_graph = False
    nystrom_basis = False
    keeps_kernels = True
    optc = False
    threads = None
    """BLAS and OpenMP threads of the estimator's set-up and solve with this solver (threadpoolctl): None as the
    environment allows; 1 where the products and neighbour searches are small (extra threads only contend for the
    cores)."""
    advice = ""
    """What to do when an iterative solve stops at max_iter (the warning's last words)."""

    def memory_bytes(self, n, m, l):
        """Peak memory in bytes of a direct solve on n points, m views, l labels (None: no n x n array)."""
        return None

    def solve(self, problem):
        """The :class:`SolverResult` of ``problem`` (:class:`MVLProblem`)."""
        raise NotImplementedError

    def unconverged_message(self, result, tol):
        """The warning of an iterative solve that stopped at max_iter, or broke down, with ``result``."""
        if (result.info or {}).get("breakdown") is not None:
            return breakdown_message(self.name, result)
        return (f'solver="{self.name}" stopped after max_iter = {result.n_iter} iterations at relative residual '
                f'{result.residual:.2e} > tol = {tol:g}; {self.advice}')

    def optc_step(self, problem):
        """MVL-LS-optC's f-step on ``problem`` for any c: a function (c, state) -> (F_L (m, l, P), state, result),
        state the coefficients (warm start of the next call, None at first); solvers with ``optc`` only."""
        raise NotImplementedError(f'solver="{self.name}" does not serve MVL-LS-optC')

    def __repr__(self):
        return f"{type(self).__name__}()"


BREAKDOWN_ADVICE = ("check the kernels (a precomputed Gram matrix must be symmetric positive semi-definite; "
                    "mvl.estimators.inputs.lowest_eigenvalue_bound bounds a view's lowest eigenvalue: clip the "
                    "negative eigenvalues or add a multiple of the identity) or use solver=\"structured\", which "
                    "factors the system directly")
"""What to do when a conjugate-gradient solver breaks down (the warning's last words)."""


def breakdown_message(name, result):
    """The warning of a CG solve that broke down (``result.info["breakdown"]`` the iteration)."""
    return (f'solver="{name}": conjugate-gradient breakdown at iteration {result.info["breakdown"]} (a curvature '
            f"p'Ap or r'z <= 0): the operator is not positive definite, so a view's kernel is indefinite (an "
            f"indefinite precomputed kernel?); the coefficients are not the solution (relative residual "
            f"{result.residual:.2e}); {BREAKDOWN_ADVICE}")
