"""What every MVL-LS solver takes and returns: the problem of Theorem 10 (:class:`MVLProblem`), what an estimator
asks for (:class:`FitSpec`), the typed solution (:class:`SolverResult`) and the interface a solver implements
(:class:`Solver`).

A solver declares what it carries, so that one problem builder (:mod:`mvl.estimators.fit_route`) checks every
declaration on every route and ``solver="auto"`` (:mod:`mvl.solvers.auto`) can choose it. Required (refused at
registration when missing, :func:`missing_declarations`): ``name``; ``losses``, the data terms it solves (a subset of
:data:`LOSSES`); ``missing_views`` (True: it takes incomplete views with every loss it carries; a tuple of losses:
with those only); ``sparse_graph`` (gamma_W > 0 needs a sparse kNN graph); ``optc`` (it serves MVL-LS-optC's
f-step); ``inputs`` (one of :data:`INPUTS`: the dense (m, n, n) kernels and Laplacians, or a kernel operator and
the sparse operator M of :mod:`mvl.solvers.system`, never an n x n array); ``auto_rank`` (its place in
``solver="auto"``'s order, lowest first, or None: never chosen by "auto"); :meth:`Solver.memory_bytes` (its peak
memory on a :class:`FitSpec`, None when it keeps within the budget by construction) and
:meth:`Solver.auto_accepts` (whether "auto" may take it for a :class:`FitSpec`, its measured regime included).
Optional, with defaults: ``exact``, ``nystrom_basis`` (it needs Nystrom centres), ``keeps_kernels`` (the Gram
matrices may be kept within the memory budget), ``threads``, ``advice``, :meth:`Solver.subsample` and
:meth:`Solver.auto_fallback`. Adding a solver is one :class:`Solver` subclass and one call of
:func:`mvl.solvers.registry.register` (the user guide's "Adding a solver").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["LOSSES", "INPUTS", "REQUIRED", "REGISTRY", "MVLProblem", "SourceTerm", "FitSpec", "SolverResult",
           "GraphDetails", "VecchiaDetails", "Solver", "missing_declarations", "takes_missing_views",
           "breakdown_message", "BREAKDOWN_ADVICE"]

LOSSES = ("squared", "poisson", "squared+poisson")
"""The data terms of MVL-LS: the labelled least squares of eq (53), the centred source term
(:mod:`mvl.solvers.poisson`), the two joined."""

INPUTS = ("dense", "operator")
"""What a solver takes: the dense (m, n, n) kernels and Laplacians, or a kernel operator with the sparse operator M
(:class:`mvl.solvers.system.MVLSystem`)."""

REQUIRED = ("name", "losses", "missing_views", "sparse_graph", "optc", "inputs", "auto_rank", "memory_bytes",
            "auto_accepts")
"""The declarations every registered solver makes (:func:`missing_declarations`)."""


REGISTRY: dict = {}
"""Every registered MVL-LS solver by name, filled by :func:`mvl.solvers.registry.register` (``mvl.solvers.SOLVERS``
is this dict)."""


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


@dataclass
class MVLProblem:
    """Theorem 10's system (67)-(68) for one combination vector c.

    Parameters
    ----------
    kernels : array (m, n, n) or kernel operator
        The per-view Gram matrices (``inputs="dense"``) or an operator with ``matmul``, ``rows``, ``columns``,
        ``diag`` (:class:`mvl.kernel_blocks.ViewKernels`, :class:`mvl.missing_views.MaskedViewKernels`).
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
        by it (``SolverResult.gamma_A`` the value solved at); the others solve at ``gamma_A``.
    loss : str
        The data term, one of :data:`LOSSES`.
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
class FitSpec:
    """What an estimator asks of the solvers before any kernel is computed: the sizes, the loss and solver asked
    ("auto" or a name), the gammas, the layout and the measured regime.

    Parameters
    ----------
    n, m, l : int
        Training points, views, labelled points.
    loss, solver : str
        As the estimator's parameters ("auto" or one of :data:`LOSSES`; "auto" or a registered name).
    max_memory : float
        The memory budget in bytes.
    precomputed : bool
        The kernels are given (no feature views).
    missing : bool
        Some view of some sample is missing (NaN rows).
    gammas : dict
        gamma_A, gamma_B, gamma_W (resolved).
    knn : (int, int), callable or None
        (n_neighbors, laplacian_power) of the kNN graphs built from the data, or a function of no arguments giving
        it (resolved once, :meth:`knn_graph`); None without them.
    regime : float, callable or None
        :func:`mvl.solvers.auto.measured_regime`, or a function of no arguments computing it, called once, only when
        a choice depends on it (:meth:`measured`); None without a sparse graph term.
    source_allowed : bool
        ``loss="auto"`` may take the Poisson-type term: few labels, some unlabelled points and the estimator's
        other settings allow it (:mod:`mvl.estimators.poisson_fit`).
    unlabelled : bool array (n,) or None
        True at the unlabelled training points.
    random_state : int, RandomState or None
        The estimator's seed.
    needs : dict
        Declarations the estimator requires of any solver (e.g. ``{"optc": True}``).
    """

    n: int
    m: int
    l: int
    loss: str = "squared"
    solver: str = "auto"
    max_memory: float = float("inf")
    precomputed: bool = False
    missing: bool = False
    gammas: dict = field(default_factory=dict)
    knn: Any = None
    regime: Any = None
    source_allowed: bool = False
    unlabelled: Any = None
    random_state: Any = None
    needs: dict = field(default_factory=dict)

    def knn_graph(self):
        """(n_neighbors, laplacian_power) of the kNN graphs, or None (resolved once, on first use)."""
        if callable(self.knn):
            self.knn = self.knn()
        return self.knn

    def measured(self):
        """The graph-regime measure (computed once, on first use; None without a sparse graph term)."""
        if callable(self.regime):
            self.regime = self.regime()
        return self.regime


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
    """The interface of an MVL-LS solver (module docstring): the declarations and :meth:`Solver.solve`. The
    required declarations are not given here, so that a subclass that forgets one is refused at registration."""

    exact = True
    nystrom_basis = False
    keeps_kernels = True
    threads = None
    """BLAS and OpenMP threads of the estimator's set-up and solve with this solver (threadpoolctl): None as the
    environment allows; 1 where the products and neighbour searches are small (extra threads only contend for the
    cores)."""
    advice = ""
    """What to do when an iterative solve stops at max_iter (the warning's last words)."""

    @property
    def operator(self):
        """Whether it works on a kernel operator (``inputs == "operator"``)."""
        return getattr(self, "inputs", None) == "operator"

    def memory_bytes(self, spec):  # a required declaration: overridden by every solver
        """Peak memory in bytes of the solve on ``spec`` (:class:`FitSpec`: n, m, l), None when it keeps within the
        budget by construction (no n x n array)."""
        raise NotImplementedError(f"{type(self).__name__} does not declare memory_bytes")

    def auto_accepts(self, spec):  # a required declaration: overridden by every solver
        """Whether ``solver="auto"`` may take this solver for ``spec`` (:class:`FitSpec`; ``spec.measured()`` the
        graph-regime measure)."""
        raise NotImplementedError(f"{type(self).__name__} does not declare auto_accepts")

    def auto_fallback(self, spec, chosen):
        """A warning to issue when "auto" passed this solver over for ``chosen`` (a name) although the measured
        regime called for it, or None."""
        return None

    def subsample(self, spec):
        """The training points the solve is on, when not all (indices, increasing), or None: all."""
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


def missing_declarations(solver):
    """The required declarations (:data:`REQUIRED`) that ``solver`` does not make, or makes with a wrong type."""
    cls = type(solver)
    out = []
    for name in REQUIRED:
        if name in ("memory_bytes", "auto_accepts"):
            if getattr(cls, name, None) is getattr(Solver, name):
                out.append(name)
            continue
        if not hasattr(solver, name):
            out.append(name)
            continue
        value = getattr(solver, name)
        ok = {
            "name": isinstance(value, str) and value not in ("", "auto"),
            "losses": isinstance(value, tuple) and len(value) > 0 and set(value) <= set(LOSSES),
            "missing_views": isinstance(value, bool) or (isinstance(value, tuple) and set(value) <= set(LOSSES)),
            "sparse_graph": isinstance(value, bool),
            "optc": isinstance(value, bool),
            "inputs": value in INPUTS,
            "auto_rank": value is None or (isinstance(value, int) and not isinstance(value, bool)),
        }[name]
        if not ok:
            out.append(name)
    return out


def takes_missing_views(solver, loss="squared"):
    """Whether ``solver`` takes incomplete views with ``loss`` (its ``missing_views`` declaration)."""
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
