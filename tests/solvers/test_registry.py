"""The solver registry (mvl.solvers): each solver lives once, under its name, declares what it needs, and the
estimators' ``solver`` parameters come from it."""

from __future__ import annotations

import pytest

from mvl import MVLLeastSquares, MVLLeastSquaresOptC
from mvl.solvers import SOLVERS, Solver, get_solver, solver_names


def test_every_solver_is_registered_once_under_its_name():
    assert set(SOLVERS) == {"structured", "dense", "cg", "nystrom", "graph", "vecchia_direct"}
    for name, solver in SOLVERS.items():
        assert isinstance(solver, Solver) and solver.name == name and get_solver(name) is solver


def test_unknown_names_are_refused_with_the_registered_ones():
    with pytest.raises(ValueError, match="unknown solver 'qr'.*'cg'"):
        get_solver("qr")


def test_the_declarations_state_what_each_solver_needs():
    assert solver_names(operator=True) == {"cg", "nystrom", "graph", "vecchia_direct"}
    assert solver_names(exact=False) == {"nystrom", "vecchia_direct"}
    assert solver_names(missing_views=False) == {"graph", "vecchia_direct"}
    assert solver_names(nystrom_basis=True) == {"cg", "nystrom"}
    assert solver_names(keeps_kernels=False) == {"nystrom", "vecchia_direct"}
    assert SOLVERS["dense"].memory_bytes(10, 2, 3) > SOLVERS["structured"].memory_bytes(10, 2, 3) > 0
    assert all(SOLVERS[n].memory_bytes(10, 2, 3) is None for n in solver_names(operator=True))


def test_the_estimators_solver_options_are_the_registry_names():
    ls = MVLLeastSquares._parameter_constraints["solver"][0].options
    optc = MVLLeastSquaresOptC._parameter_constraints["solver"][0].options
    assert ls == set(SOLVERS) | {"auto"}
    assert optc == solver_names(optc=True) | {"auto"} and "dense" not in optc


