"""The operator M of the MVL-LS objective (mvl.solvers.system): its projection B = Z^T M Z against the dense operator,
the sparse-times-dense product by row blocks."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import manifold_problem

from scipy import linalg
from mvl.solvers.nystrom import NystromBasis


def test_sparse_times_dense_by_row_blocks():
    """The threaded product (rows split over the threads: n >= 2,048) against the dense matrix product."""
    from scipy import sparse

    from mvl.solvers.system import sparse_times_dense

    rng = np.random.default_rng(0)
    S = sparse.random(3001, 3001, density=0.004, format="csr", random_state=1)
    X = rng.normal(size=(3001, 40))
    for threads in (2, 3):
        np.testing.assert_allclose(sparse_times_dense(S, X, threads), S.toarray() @ X, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(sparse_times_dense(S, X[:, :5]), S.toarray() @ X[:, :5], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("power", [1, 2, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_projected_equals_dense_operator(manifold, power, weighted):
    """B = Z^T M Z against M written out densely from its definition (module docstring of mvl.solvers.system):
    cc^T (x) J + beta (m I - 11^T) (x) D + omega blockdiag(L_p^k); power 1 takes the fused one-GEMM path."""
    lab = manifold["labelled"]
    w = np.linspace(0.5, 1.5, 300) if weighted else None
    kernels, system, Ld, Y_L, c = manifold_problem(manifold, power=power, weights=w)
    Z = NystromBasis(kernels, np.arange(0, 300, 7)).Z
    n, m = 300, 3
    J = np.zeros((n, n))
    J[lab, lab] = 1.0
    D = np.diag(np.ones(n) if w is None else w)
    M = (np.kron(np.outer(c, c), J) + system.beta * np.kron(m * np.eye(m) - np.ones((m, m)), D)
         + system.omega * linalg.block_diag(*Ld))
    Zd = linalg.block_diag(*Z)
    ref = Zd.T @ M @ Zd
    assert np.abs(system.projected(Z) - ref).max() <= 1e-10 * np.abs(ref).max()
