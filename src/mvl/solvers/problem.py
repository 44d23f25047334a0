"""What every MVL-LS solver takes and returns: the problem of Theorem 10 (:class:`MVLProblem`), the solution
(:class:`SolverResult`) and the interface a solver implements (:class:`Solver`).

A solver declares what it needs and handles, so that an estimator's checks read from it: ``operator`` (it works on
a kernel operator and the sparse operator M of :mod:`mvl.solvers.system`, never an n x n array; False: the dense
(m, n, n) kernels and Laplacians), ``exact`` (Theorem 10's solution to ``tol``, or an approximation),
``missing_views`` (it takes incomplete views), ``sparse_graph`` (gamma_W > 0 needs a sparse kNN graph),
``nystrom_basis`` (it needs Nystrom centres), ``copies`` (it takes exact copies of a training point),
``keeps_kernels`` (the Gram matrices may be kept within the memory
budget), ``optc`` (it serves MVL-LS-optC's f-step) and ``direct`` (one factorisation: its residual is checked
against ``tol``). Each solver also declares ``losses``, ``auto_rank`` and
``auto_accepts`` (:func:`mvl.solvers.registry.register`, which refuses a solver missing any of them);
``missing_views`` is a bool (every loss it carries) or the tuple of the losses it takes incomplete views with
(:func:`takes_missing_views`). One problem builder (:mod:`mvl.estimators.fit_route`) checks every declaration on
every route. The answer is typed (:class:`SolverResult`: coefficients, centres, the gamma_A solved at, the
prediction rule of :mod:`mvl.solvers.rules`, convergence, residual, a solver's own measurements). Adding a solver
is one module defining a :class:`Solver` subclass and one call of :func:`mvl.solvers.registry.register`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["MVLProblem", "SourceTerm", "SolverResult", "GraphDetails", "VecchiaDetails", "Solver",
           "takes_missing_views", "breakdown_message", "BREAKDOWN_ADVICE"]


@dataclass
class SourceTerm:
    """The graph of the Poisson-type data terms (:mod:`mvl.estimators.poisson_fit`): the sparse Laplacian L = D - W
    shared by every view, the degrees d (the decision rule's shift), the graph's coordinates of the training points
    (None for precomputed kernels: new points by the representer rule) and the map of new points into them."""

    laplacian: Any
    degrees: np.ndarray
    points: Any = None
    space: Any = None
    neighbours: int = 10
    balanced: bool = True
    search: Any = None
    """The neighbour search (dist, ind) of the training points that built the graph (feature views), or None."""
    factors: Any = None
    """Vecchia's factors of the views (:func:`mvl.solvers.poisson_sparse.view_vecchia_factors`) when the fit
    already built them (``gamma_A="auto"``, :func:`mvl.estimators.poisson_fit.source_energies`), or None."""


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
        ``SolverResult.gamma_A``); the others solve at ``gamma_A``.
    loss : str
        The data term: "squared", "poisson" or "squared+poisson" (:data:`mvl.solvers.registry.LOSSES`).
    source : SourceTerm or None
        The Poisson-type terms' graph (``loss`` other than "squared"; ``laplacians`` is then unused).
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
    loss: str = "squared"
    source: Any = None

    @property
    def gammas(self):
        """The three gammas as keywords."""
        return {"gamma_A": self.gamma_A, "gamma_B": self.gamma_B, "gamma_W": self.gamma_W}


@dataclass
class GraphDetails:
    """What solver "graph" measured besides the residual: the estimated relative error of its quadratic objective,
    and the run's own measurements (``run``: refinements, fill, seconds, ...; :func:`mvl.solvers.graph.solve_graph`)."""

    energy_error: float
    run: dict = field(default_factory=dict)


@dataclass
class VecchiaDetails:
    """What solver "vecchia_direct" measured (:mod:`mvl.solvers.vecchia_direct`): the kernel term's share theta
    at the fit's gamma_A, the gamma_A of the graph-regime rule, the graph term's limit's margin ratio and class
    balance, and the factorisation's own measurements (``factor``: fill, seconds, ...)."""

    kernel_share: float
    share_gamma_A: float
    limit_margin_ratio: float
    limit_class_balance: float
    factor: dict = field(default_factory=dict)


@dataclass
class SolverResult:
    """A solver's answer.

    ``coef`` (m, n, P), or (m, M, P) on ``centres`` (the Nystrom centres or nodes that carry it, None otherwise);
    ``n_iter`` (1 for a direct solve); ``residual`` (the true relative residual of the system solved at ``coef``, the
    largest over the output columns; None where the solver leaves it to the caller,
    :func:`mvl.solvers.residual.direct_residual`); ``converged`` (False: stopped at max_iter, or broke down);
    ``condition`` (the 1-norm condition estimate of the factored systems, NaN where not estimated); ``gamma_A``
    (the gamma_A solved at when the solver's own rule set it, None: the problem's); ``rule`` (the prediction rule,
    :mod:`mvl.solvers.rules`; None: the representer rule on the training kernels); ``breakdown`` (the iteration at
    which conjugate gradients broke down, None otherwise); ``details`` (a solver's own measurements, typed:
    :class:`GraphDetails`, :class:`VecchiaDetails`)."""

    coef: np.ndarray
    n_iter: int = 1
    residual: float | None = None
    converged: bool = True
    condition: float = float("nan")
    centres: Any = None
    gamma_A: float | None = None
    rule: Any = None
    breakdown: int | None = None
    details: Any = None


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
    copies = True
    """Whether it takes exact copies of a training point (equal rows in a view); False: solver="auto" passes it
    over when the training views hold copies (:attr:`mvl.solvers.auto.Regime.copies`), as for the view layout."""
    threads = None
    """BLAS and OpenMP threads of the estimator's set-up and solve with this solver (threadpoolctl): None as the
    environment allows; 1 where the products and neighbour searches are small (extra threads only contend for the
    cores)."""
    advice = ""
    """What to do when an iterative solve stops at max_iter (the warning's last words)."""

    @property
    def direct(self):
        """One factorisation and solve, no stopping rule of its own: the fit route checks its true residual
        against ``tol`` (:func:`mvl.estimators.fit_route.apply_result`). Default: the solvers of the dense kernels
        (not ``operator``); a sparse direct solver sets it True, the iterative ones judge their own
        convergence."""
        return not self.operator

    def memory_bytes(self, n, m, l):
        """Peak memory in bytes of a direct solve on n points, m views, l labels (None: no n x n array)."""
        return None

    def auto_fallback(self, regime, chosen):
        """A warning for solver="auto" to issue when it passed this solver over for the view layout (incomplete
        views, ``missing_views``; copies of training points, ``copies``) and took ``chosen`` (a name), or None."""
        return None

    def subsample(self, regime):
        """The training points the solve is on, when not all (indices, increasing), or None: all
        (``regime`` the :class:`mvl.solvers.auto.Regime` of the fit)."""
        return None

    def solve(self, problem):
        """The :class:`SolverResult` of ``problem`` (:class:`MVLProblem`)."""
        raise NotImplementedError

    def unconverged_message(self, result, tol):
        """The warning of an iterative solve that stopped at max_iter, or broke down, with ``result``."""
        if result.breakdown is not None:
            return breakdown_message(self.name, result)
        return (f'solver="{self.name}" stopped after max_iter = {result.n_iter} iterations at relative residual '
                f'{result.residual:.2e} > tol = {tol:g}; {self.advice}')

    def optc_step(self, problem):
        """MVL-LS-optC's f-step on ``problem`` for any c: a function (c, state) -> (F_L (m, l, P), state, result),
        state the coefficients (warm start of the next call, None at first); solvers with ``optc`` only."""
        raise NotImplementedError(f'solver="{self.name}" does not serve MVL-LS-optC')

    def __repr__(self):
        return f"{type(self).__name__}()"


def takes_missing_views(solver, loss="squared"):
    """Whether ``solver`` takes incomplete views with ``loss`` (its ``missing_views`` declaration: a bool, or the
    tuple of the losses it takes them with)."""
    mv = solver.missing_views
    return loss in mv if isinstance(mv, tuple) else bool(mv)


BREAKDOWN_ADVICE = ("check the kernels (a precomputed Gram matrix must be symmetric positive semi-definite; "
                    "mvl.estimators.inputs.lowest_eigenvalue_bound bounds a view's lowest eigenvalue: clip the "
                    "negative eigenvalues or add a multiple of the identity) or use solver=\"structured\", which "
                    "factors the system directly")
"""What to do when a conjugate-gradient solver breaks down (the warning's last words)."""


def breakdown_message(name, result):
    """The warning of a CG solve that broke down (``result.breakdown`` the iteration)."""
    return (f'solver="{name}": conjugate-gradient breakdown at iteration {result.breakdown} (a curvature '
            f"p'Ap or r'z <= 0): the operator is not positive definite, so a view's kernel is indefinite (an "
            f"indefinite precomputed kernel?); the coefficients are not the solution (relative residual "
            f"{result.residual:.2e}); {BREAKDOWN_ADVICE}")
