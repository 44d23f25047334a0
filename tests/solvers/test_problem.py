"""The problem, result and solver interface (mvl.solvers.problem): a problem answered with a result, against the
dense textbook solve; the interface's defaults."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_problem

from mvl.labels import encode_targets
from mvl.solvers import MVLProblem, Solver, SolverResult, get_solver
from mvl.solvers.dense import solve_dense


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


def test_a_problem_passes_its_three_gammas_as_keywords():
    problem = MVLProblem(np.zeros((1, 2, 2)), np.arange(1), np.ones((1, 2)), np.ones(1), 0.1, 0.2, 0.3)
    assert problem.gammas == {"gamma_A": 0.1, "gamma_B": 0.2, "gamma_W": 0.3}
    assert MVLProblem(None, None, None, None).gammas == {"gamma_A": 0.0, "gamma_B": 0.0, "gamma_W": 0.0}


def test_a_result_defaults_to_one_converged_direct_solve():
    result = SolverResult(np.zeros((1, 2, 2)))
    assert result.n_iter == 1 and result.converged and result.residual is None
    assert np.isnan(result.condition) and result.centres is None and result.gamma_A is None and result.rule is None
    assert result.breakdown is None and result.details is None


def test_the_bare_interface_has_no_memory_bound_no_solve_and_is_refused_at_registration():
    from mvl.solvers.registry import register

    class Bare(Solver):
        name = "bare"
        advice = "raise max_iter."

    bare = Bare()
    assert bare.memory_bytes(10, 2, 3) is None and bare.subsample(None) is None and repr(bare) == "Bare()"
    assert bare.auto_fallback(None, "cg") is None
    with pytest.raises(NotImplementedError):
        bare.solve(None)
    with pytest.raises(TypeError, match=r"losses \(missing\), auto_rank \(missing\), auto_accepts \(missing\)"):
        register(bare)
    message = bare.unconverged_message(SolverResult(None, n_iter=7, residual=3.2e-4, converged=False), 1e-6)
    assert message == ('solver="bare" stopped after max_iter = 7 iterations at relative residual 3.20e-04 '
                       "> tol = 1e-06; raise max_iter.")
