"""The solver registry (mvl.solvers) and the interface every solver implements (mvl.solvers.problem): each solver
lives once, under its name, declares what it needs, and the estimators' ``solver`` parameters come from it."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_problem

from mvl import MVLLeastSquares, MVLLeastSquaresOptC
from mvl.labels import encode_targets
from mvl.solvers import SOLVERS, MVLProblem, Solver, SolverResult, get_solver, solver_names
from mvl.solvers.dense import solve_dense


def test_every_solver_is_registered_once_under_its_name():
    assert set(SOLVERS) == {"structured", "dense", "cg", "nystrom", "graph"}
    for name, solver in SOLVERS.items():
        assert isinstance(solver, Solver) and solver.name == name and get_solver(name) is solver


def test_unknown_names_are_refused_with_the_registered_ones():
    with pytest.raises(ValueError, match="unknown solver 'qr'.*'cg'"):
        get_solver("qr")


def test_the_declarations_state_what_each_solver_needs():
    assert solver_names(operator=True) == {"cg", "nystrom", "graph"}
    assert solver_names(exact=False) == {"nystrom"}
    assert solver_names(missing_views=False) == {"graph"}
    assert solver_names(nystrom_basis=True) == {"cg", "nystrom"}
    assert solver_names(keeps_kernels=False) == {"nystrom"}
    assert SOLVERS["dense"].memory_bytes(10, 2, 3) > SOLVERS["structured"].memory_bytes(10, 2, 3) > 0
    assert all(SOLVERS[n].memory_bytes(10, 2, 3) is None for n in solver_names(operator=True))


def test_the_estimators_solver_options_are_the_registry_names():
    ls = MVLLeastSquares._parameter_constraints["solver"][0].options
    optc = MVLLeastSquaresOptC._parameter_constraints["solver"][0].options
    assert ls == set(SOLVERS) | {"auto"}
    assert optc == solver_names(optc=True) | {"auto"} and "dense" not in optc


def test_a_direct_solver_answers_the_problem_with_a_result():
    K, _, y = make_problem(3, 20, 3, frac_unlabelled=0.5, seed=5)
    labelled = np.flatnonzero(y >= 0)
    Y_L = encode_targets(y[labelled], 3)
    c = np.full(3, 1 / 3)
    problem = MVLProblem(K, labelled, Y_L, c, gamma_A=1e-2, gamma_B=1e-3)
    result = get_solver("structured").solve(problem)
    assert isinstance(result, SolverResult) and result.converged and result.n_iter == 1 and result.residual is None
    assert np.isfinite(result.condition) and result.centres is None
    ref = solve_dense(K, labelled, Y_L, c, 1e-2, 1e-3, 0.0)
    np.testing.assert_allclose(result.coef, ref, rtol=1e-8, atol=1e-10 * np.abs(ref).max())
    assert np.isnan(get_solver("dense").solve(problem).condition)


def test_a_solver_without_optc_refuses_the_f_step():
    with pytest.raises(NotImplementedError, match='solver="dense"'):
        get_solver("dense").optc_step(None)
