"""The MVL-LS solvers, one per role, behind one interface (:class:`~mvl.solvers.problem.Solver`) and one registry.

:data:`SOLVERS` maps each registered solver's name to its object (:mod:`mvl.solvers.registry`: :func:`register`
checks a solver's declarations, :func:`get_solver` looks one up); :func:`choose` is what ``solver="auto"`` and
``loss="auto"`` stand for (:mod:`mvl.solvers.auto`), :func:`choose_solver` its squared-loss form on sizes alone.
The solvers: "structured" (Theorem 10 view by view,
:mod:`~mvl.solvers.structured`), "dense" (the textbook system, :mod:`~mvl.solvers.dense`), "cg" (conjugate
gradients, :mod:`~mvl.solvers.cg`), "nystrom" (the Nystrom restriction, :mod:`~mvl.solvers.nystrom`), "graph"
(the graph regime, exact, :mod:`~mvl.solvers.graph`) and "vecchia_direct" (the graph regime at 10^4-10^5 points, one
sparse factorisation, :mod:`~mvl.solvers.vecchia_direct`), each on incomplete views too where it declares so
(:mod:`~mvl.solvers.incomplete`). Beside them: the operator M (:mod:`~mvl.solvers.system`), LAPACK helpers
(:mod:`~mvl.solvers.lapack`), optC's f-step systems (:mod:`~mvl.solvers.optc`) and c-step
(:mod:`~mvl.solvers.sphere`), the decision functions of a grid of gammas (:mod:`~mvl.solvers.grid`). The other
estimators' problems: the dual of the multi-view SVMs and its box-QP solvers (:mod:`~mvl.solvers.svm_dual`),
MVML's alternating problem (:mod:`~mvl.solvers.mvml`).
"""

from .auto import Plan, choose_solver
from .cg import CGSolver
from .dense import DenseSolver
from .graph import GraphSolver
from .nystrom import NystromSolver
from .problem import LOSSES, FitSpec, MVLProblem, Solver, SolverResult, missing_declarations
from .registry import REGISTRY, choose, get_solver, register, solver_names, unregister
from .structured import StructuredSolver
from .vecchia_direct import VecchiaDirectSolver

__all__ = ["SOLVERS", "LOSSES", "get_solver", "choose_solver", "choose", "solver_names", "register", "unregister",
           "missing_declarations", "MVLProblem", "FitSpec", "Plan", "SolverResult", "Solver"]

for _solver in (StructuredSolver(), DenseSolver(), CGSolver(), NystromSolver(), GraphSolver(), VecchiaDirectSolver()):
    register(_solver)
del _solver

SOLVERS = REGISTRY
"""Every registered MVL-LS solver by name (the registry itself: :func:`register` adds to it)."""
