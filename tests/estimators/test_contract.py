"""The shared contract of every estimator, solver and view layout on bad and edge inputs, in the spirit of
scikit-learn's ``check_estimator``: each cell of ``contract_cases.cells()`` (estimator x solver x complete /
incomplete views x input class) gives its expected outcome -- a ValueError whose message names the cause and the
fix, a specific warning, or a correct answer. A new solver or path added to ``contract_cases.ESTIMATORS`` inherits
every check. Cells that do not meet the contract yet are strict xfails that say what happens instead, so that each
one fails, to be unmarked, when its fix lands; ``benchmarks/probe_bad_inputs.py`` prints the same cells as a table."""

from __future__ import annotations

import re

import pytest
from .contract_cases import cells, expected, run

# What happens today where a cell misses the contract: (input class, regex over "estimator-solver-views" or None for
# every cell of the class, what happens instead).
TODAY = [
    ("unseen_view_gamma_B0", None, "test points with only the view no labelled sample has get decision 0 and the "
                                   "first class, no warning"),
    ("indefinite_kernel", r"SVM-admm-", "numpy LinAlgError from ADMM's Cholesky factor ('c1/2 Q_G + rho I is not "
                                        "positive definite') after the IndefiniteKernelWarning"),
    ("indefinite_breakdown", None, "no breakdown reported: cg runs to max_iter (ConvergenceWarning without the "
                                   "cause), graph takes zero steps and reports convergence with zero coefficients"),
    ("rank_deficient_linear", r"-cg-", "predictions exact, but cg runs to max_iter on the rank-deficient linear "
                                       "kernel and warns ConvergenceWarning"),
    ("attributes", None, "converged_ missing everywhere; residual_ None for the direct solvers and the SVMs; "
                         "n_iter_ None for optC"),
]


def _today(cell):
    prefix = cell.id[: -len(cell.case) - 1]
    for case, where, what in TODAY:
        if case == cell.case and (where is None or re.search(where, prefix)):
            return what
    return None


def _param(cell):
    reason = _today(cell)
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(cell, id=cell.id, marks=marks)


@pytest.mark.parametrize("cell", [_param(c) for c in cells()])
def test_contract(cell):
    result = run(cell)
    exp = expected(cell)
    assert result.ok, (f"expected {exp.kind} {exp.category} {exp.pattern!r}; got {result.outcome}: "
                       f"{result.detail}")
