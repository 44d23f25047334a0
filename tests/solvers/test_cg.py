"""solver="cg" (mvl.solvers.cg) at a tight tol against the structured solver and the dense textbook system (eq 67-68,
one LU); its warm start and iteration limit."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import manifold_problem

from mvl.solvers.dense import solve_dense
from mvl.solvers.structured import solve_structured
from mvl.solvers.nystrom import NystromBasis
from mvl.solvers.cg import solve_cg


@pytest.mark.parametrize("between", [None, "unlabelled"])
def test_cg_equals_structured_and_dense(manifold, between):
    K, lab = manifold["K"], manifold["labelled"]
    w = None
    if between == "unlabelled":
        w = np.ones(300)
        w[lab] = 0.0  # co-regularization on the unlabelled points (Section 3.4)
    kernels, system, Ld, Y_L, c = manifold_problem(manifold, weights=w)
    basis = NystromBasis(kernels, np.arange(0, 300, 3))
    a, info = solve_cg(system, kernels, basis, tol=1e-12, max_iter=500)
    assert info["converged"] and info["residual"] <= 1e-12
    ref = solve_structured(K, lab, Y_L, c, 1e-4, 1e-3, 1e-2, Ld, between_weights=w)
    dense = solve_dense(K, lab, Y_L, c, 1e-4, 1e-3, 1e-2, Ld, between_weights=w)
    scale = np.abs(ref).max()
    assert np.abs(a - ref).max() <= 1e-8 * scale
    assert np.abs(a - dense).max() <= 1e-8 * scale


def test_cg_warm_start_and_iteration_limit(manifold):
    kernels, system, Ld, Y_L, c = manifold_problem(manifold)
    basis = NystromBasis(kernels, np.arange(0, 300, 10))
    a, info = solve_cg(system, kernels, basis, tol=1e-10, max_iter=500)
    a2, info2 = solve_cg(system, kernels, basis, tol=1e-10, max_iter=500, x0=a)
    assert info2["n_iter"] <= 1 and np.abs(a2 - a).max() <= 1e-9 * np.abs(a).max()
    _, short = solve_cg(system, kernels, basis, tol=1e-14, max_iter=2)
    assert not short["converged"] and short["n_iter"] == 2 and short["residual"] > 1e-14
