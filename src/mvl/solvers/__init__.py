"""The MVL-LS solvers, one per role, behind one interface (:class:`~mvl.solvers.problem.Solver`) and one registry.

:data:`SOLVERS` maps each solver's name to its object (:func:`~mvl.solvers.registry.register` checks its
declarations first, :func:`~mvl.solvers.registry.unregister` removes it; :mod:`mvl.solvers.registry`);
:func:`get_solver` looks one up; :func:`choose_solver` is what ``solver="auto"`` stands for, read from the
declarations (:mod:`mvl.solvers.auto`). The solvers:
"structured" (Theorem 10 view by view,
:mod:`~mvl.solvers.structured`), "dense" (the textbook system, :mod:`~mvl.solvers.dense`), "cg" (conjugate
gradients, :mod:`~mvl.solvers.cg`), "nystrom" (the Nystrom restriction, :mod:`~mvl.solvers.nystrom`), "graph"
(the graph regime, exact, :mod:`~mvl.solvers.graph`) and "vecchia_direct" (the graph regime at 10^4-10^5 points, one
sparse factorisation, :mod:`~mvl.solvers.vecchia_direct`) and "vecchia" (the few-label term at any size,
:mod:`~mvl.solvers.poisson_sparse`), each on incomplete views too where it declares so
(:mod:`~mvl.solvers.incomplete`). Beside them: the operator M (:mod:`~mvl.solvers.system`), LAPACK helpers
(:mod:`~mvl.solvers.lapack`), optC's f-step systems (:mod:`~mvl.solvers.optc`) and c-step
(:mod:`~mvl.solvers.sphere`), the decision functions of a grid of gammas (:mod:`~mvl.solvers.grid`). The other
estimators' problems: the dual of the multi-view SVMs and its box-QP solvers (:mod:`~mvl.solvers.svm_dual`),
MVML's alternating problem (:mod:`~mvl.solvers.mvml`).
"""

from .auto import choose_solver
from .cg import CGSolver
from .dense import DenseSolver
from .graph import GraphSolver
from .nystrom import NystromSolver
from .poisson_sparse import VecchiaPoissonSolver
from .problem import MVLProblem, Solver, SolverResult
from .structured import StructuredSolver
from .vecchia_direct import VecchiaDirectSolver

from .registry import LOSSES, SOLVERS, get_solver, register, solver_names, unregister

__all__ = ["SOLVERS", "LOSSES", "get_solver", "choose_solver", "solver_names", "register", "unregister", "MVLProblem",
           "SolverResult", "Solver"]

for _s in (StructuredSolver(), DenseSolver(), CGSolver(), NystromSolver(), GraphSolver(), VecchiaDirectSolver(),
           VecchiaPoissonSolver()):
    register(_s)
del _s
