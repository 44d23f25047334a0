"""The shared contract of every estimator, solver and view layout on bad and edge inputs, in the spirit of
scikit-learn's ``check_estimator``: each cell of ``contract_cases.cells()`` (estimator x solver x complete /
incomplete views x input class) gives its expected outcome -- a ValueError whose message names the cause and the
fix, a specific warning, or a correct answer. A solver registered in mvl.solvers inherits every check
(``contract_cases.estimators`` reads the registry). Cells that do not meet the contract yet are strict xfails that
say what happens instead, so that each one fails, to be unmarked, when its fix lands;
``benchmarks/probe_bad_inputs.py`` prints the same cells as a table."""

from __future__ import annotations

import re

import pytest
from .contract_cases import cells, expected, run

# What happens today where a cell misses the contract: (input class, regex over "estimator-solver-views" or None for
# every cell of the class, what happens instead).
TODAY = [
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
