"""The few-label term on the sparse route (mvl.solvers.poisson_sparse) against dense references: the objective
written out term by term (its gradient by central differences vanishes at the solution), the package's textbook
(nm) x (nm) system, the exact kernel's representer rule out of sample, and the stated Vecchia error."""

import numpy as np
import pytest
from scipy import sparse

from mvl.kernel_blocks import ViewKernels
from mvl.missing_views import combination_weights
from mvl.selftuned_graph import selftuned_weights, unnormalized_laplacian
from mvl.solvers.poisson import solve_dense, source_term
from mvl.solvers.poisson_sparse import (FACTORISATIONS, VecchiaPoissonSolver, available_factorisation,
                                        solve_poisson_sparse)

SIGMA = 1.5


def _data(n=30, m=3, P=3, seed=0, t=0):
    rng = np.random.default_rng(seed)
    views = [rng.normal(size=(n + t, 4 + p)) for p in range(m)]
    y = rng.integers(0, P, size=n)
    labelled = np.concatenate([np.flatnonzero(y == k)[:2] for k in range(P)])
    Y_L = np.eye(P)[y[labelled]]
    W = selftuned_weights(np.hstack([V[:n] for V in views]), 6)
    L, _ = unnormalized_laplacian(W)
    return views, labelled, Y_L, sparse.csr_matrix(L)


def _gram(V, sigma=SIGMA):
    d2 = ((V[:, None, :] - V[None, :, :]) ** 2).sum(-1)
    return np.exp(-d2 / (2 * sigma ** 2))


def _objective(F, views, mask, labelled, Y_L, c, gA, gB, gW, L, loss):
    """The objective of mvl.solvers.poisson, term by term: F[p] (n, P) the node values of view p (rows outside S_p
    unused); ||f^p||^2 = F_p[S_p]^T K_p[S_p, S_p]^{-1} F_p[S_p]; C f(x_i) = sum_{p in V_i} c~_ip F_p(i); between-view
    sum_i sum_{p<q in V_i} ||F_p(i) - F_q(i)||^2; within-view <F_p, L[S_p, S_p] F_p> on S_p."""
    m, n, P = F.shape
    l = len(labelled)
    Ct = combination_weights(c, mask)
    S = source_term(labelled, Y_L, n, balanced=False)
    J = 0.0
    for j, i in enumerate(labelled):
        Cf = sum(Ct[i, p] * F[p, i] for p in range(m) if mask[i, p])
        J -= 2.0 / l * S[i] @ Cf
        if loss == "squared+poisson":
            J += np.sum((Y_L[j] - Cf) ** 2) / l
    for p in range(m):
        ix = np.flatnonzero(mask[:, p])
        Kp = _gram(views[p][ix])
        Fp = F[p, ix]
        J += gA * np.sum(Fp * np.linalg.solve(Kp, Fp))
        J += gW * np.sum(Fp * (L[ix][:, ix] @ Fp))
    for i in range(n):
        for p in range(m):
            for q in range(p + 1, m):
                if mask[i, p] and mask[i, q]:
                    J += gB * np.sum((F[p, i] - F[q, i]) ** 2)
    return J


def _gradient_norm(F, mask, *args):
    """Central-difference gradient (exact for a quadratic up to rounding) over the present pairs, relative to the
    source term's."""
    m, n, P = F.shape
    g, h = [], 1e-3
    for p in range(m):
        for i in np.flatnonzero(mask[:, p]):
            for k in range(P):
                E = np.zeros_like(F)
                E[p, i, k] = h
                g.append((_objective(F + E, *args) - _objective(F - E, *args)) / (2 * h))
    return np.linalg.norm(g)


def _kernels(views, n, mask=None):
    train = [V[:n].copy() for V in views]
    if mask is not None:
        for p in range(len(train)):
            train[p][~mask[:, p]] = 0.0
    return ViewKernels(train, "rbf", [SIGMA] * len(views), max_memory=0)


@pytest.mark.parametrize("loss", ["poisson", "squared+poisson"])
@pytest.mark.parametrize("gB", [0.0, 1e-3])
@pytest.mark.parametrize("incomplete", [False, True])
def test_exact_vecchia_minimises_the_objective(loss, gB, incomplete):
    """q >= n - 1 (Vecchia exact): the node values are the stationary point of the objective written out."""
    n, m = 30, 3
    views, labelled, Y_L, L = _data(n, m)
    mask = np.ones((n, m), dtype=bool)
    if incomplete:
        rng = np.random.default_rng(5)
        mask[rng.random((n, m)) < 0.3] = False
        mask[~mask.any(axis=1), 0] = True
    c = np.full(m, 1.0 / m)
    gA, gW = 1e-2, 1.0
    fit = solve_poisson_sparse(_kernels(views, n, mask), labelled, Y_L, c, gA, gB, gW, [L] * m, loss=loss,
                               mask=None if not incomplete else mask, neighbours=n)
    assert fit.info["decoupled"] == (gB == 0 and loss == "poisson")
    assert fit.info["residual"] < 1e-8
    args = (mask, [V[:n] for V in views], mask, labelled, Y_L, c, gA, gB, gW, L, loss)
    scale = 2.0 / len(labelled) * np.linalg.norm(source_term(labelled, Y_L, n))
    assert _gradient_norm(fit.values, *args) < 1e-6 * scale
    assert np.all(fit.values[~mask.T] == 0) and np.all(fit.coef[~mask.T] == 0)


@pytest.mark.parametrize("gB", [0.0, 1e-2])
def test_exact_vecchia_matches_the_textbook_system(gB):
    """q >= n - 1: the coefficients are those of the dense (nm) x (nm) system of eq (67)-(68) with the sources."""
    n, m = 30, 3
    views, labelled, Y_L, L = _data(n, m)
    c = np.array([0.5, 0.3, 0.2])
    K = np.stack([_gram(V[:n]) for V in views])
    ref = solve_dense(K, labelled, Y_L, c, 1e-2, gB, 1.0, np.stack([L.toarray()] * m), balanced=True)
    fit = solve_poisson_sparse(_kernels(views, n), labelled, Y_L, c, 1e-2, gB, 1.0, [L] * m, balanced=True,
                               neighbours=n)
    np.testing.assert_allclose(fit.values, np.einsum("pij,pjk->pik", K, ref), rtol=0, atol=1e-7 * np.abs(
        np.einsum("pij,pjk->pik", K, ref)).max())


@pytest.mark.parametrize("gA, q, tol, agree", [(1e-5, 20, 0.1, 0.98), (1e-5, 80, 0.02, 0.99),
                                                (1e-7, 20, 5e-3, 1.0)])
def test_vecchia_error(gA, q, tol, agree):
    """The stated error on the 240 graph-regime manifold points (3 views, sigma 1.5, self-tuned 10-NN graph,
    gamma_W = 1): the decision scores (after the degree-weighted shift) against the exact ones, relative Frobenius
    error below ``tol`` and the same class at >= ``agree`` of the points. Measured: gamma_A = 1e-5 (the validated
    ratio), q = 20: 5.8 %, 98.8 %; q = 80: 0.9 %, 99.6 %; gamma_A = 1e-7, q = 20: 0.20 %, 100 % (the error falls with
    the kernel term's share, as the bound says)."""
    from graph_regime_problem import FEATURES, manifold_problem

    from mvl.solvers.poisson import fit_decision

    X, y, _ = manifold_problem()
    views = np.split(X, np.cumsum(FEATURES)[:-1], axis=1)
    labelled = np.flatnonzero(y >= 0)
    Y_L = np.eye(3)[y[labelled]]
    L, deg = unnormalized_laplacian(selftuned_weights(X, 10))
    m = 3
    c = np.full(m, 1.0 / m)
    K = np.stack([_gram(V) for V in views])
    ref = solve_dense(K, labelled, Y_L, c, gA, 0.0, 1.0, np.stack([L.toarray()] * m), balanced=True)
    exact = np.einsum("p,pij,pjk->ik", c, K, ref)
    exact = fit_decision(exact, deg).scores(exact)
    fit = solve_poisson_sparse(ViewKernels(views, "rbf", [SIGMA] * m, max_memory=0), labelled, Y_L, c, gA, 0.0, 1.0,
                               [L] * m, balanced=True, neighbours=q)
    approx = fit.decision_nodes()
    approx = fit_decision(approx, deg).scores(approx)
    err = np.linalg.norm(approx - exact) / np.linalg.norm(exact)
    same = np.mean(approx.argmax(1) == exact.argmax(1))
    assert err < tol and same >= agree, (err, same)


def test_kriging_with_all_neighbours_is_the_representer_rule():
    """q = n_p: the kriging value at a new point is k(x, X) a with the exact kernel (incomplete views: a point
    combines its present views with c~)."""
    n, m, t = 30, 3, 7
    views, labelled, Y_L, L = _data(n, m, t=t)
    mask = np.ones((n, m), dtype=bool)
    mask[::4, 1] = False
    c = np.full(m, 1.0 / m)
    fit = solve_poisson_sparse(_kernels(views, n, mask), labelled, Y_L, c, 1e-2, 1e-3, 1.0, [L] * m, mask=mask,
                               neighbours=n)
    new = [V[n:].copy() for V in views]
    new[2][0] = np.nan  # the first new point lacks view 2
    tmask = np.ones((t, m), dtype=bool)
    tmask[0, 2] = False
    Ct = combination_weights(c, tmask)
    ref = np.zeros((t, Y_L.shape[1]))
    for p in range(m):
        ix = np.flatnonzero(mask[:, p])
        Kp = _gram(views[p][ix])
        a = np.linalg.solve(Kp, fit.values[p, ix])  # exact coefficients of the node values
        d2 = ((views[p][n:, None, :] - views[p][None, ix, :]) ** 2).sum(-1)
        fx = np.exp(-d2 / (2 * SIGMA ** 2)) @ a
        ref += np.where(tmask[:, p:p + 1], Ct[:, p:p + 1] * fx, 0.0)
    np.testing.assert_allclose(fit.decision_function(new), ref, rtol=1e-6, atol=1e-8 * np.abs(ref).max())


@pytest.mark.parametrize("method", FACTORISATIONS)
def test_factorisations_agree(method):
    if available_factorisation(method) != method:
        pytest.fail(f"{method} is not importable in the test environment")
    n, m = 30, 3
    views, labelled, Y_L, L = _data(n, m)
    c = np.full(m, 1.0 / m)
    ref = solve_poisson_sparse(_kernels(views, n), labelled, Y_L, c, 1e-2, 1e-3, 1.0, [L] * m, neighbours=8,
                               factorisation="splu")
    for gB in (0.0, 1e-3):
        fit = solve_poisson_sparse(_kernels(views, n), labelled, Y_L, c, 1e-2, gB, 1.0, [L] * m, neighbours=8,
                                   factorisation=method)
        assert fit.info["factorisation"] == method and fit.info["residual"] < 1e-8
    np.testing.assert_allclose(fit.values, ref.values, atol=1e-9 * np.abs(ref.values).max())


def test_solver_on_an_mvl_problem():
    """VecchiaPoissonSolver.solve reads the MVLSystem: the same node values as the function."""
    from mvl.solvers.problem import MVLProblem
    from mvl.solvers.system import MVLSystem

    n, m = 30, 3
    views, labelled, Y_L, L = _data(n, m)
    c = np.full(m, 1.0 / m)
    kernels = _kernels(views, n)
    system = MVLSystem(n, labelled, Y_L, c, gamma_A=1e-2, gamma_B=1e-3, gamma_W=1.0, laplacians=[L] * m)
    solver = VecchiaPoissonSolver()
    res = solver.solve(MVLProblem(kernels, labelled, Y_L, c, system=system))
    fit = solve_poisson_sparse(kernels, labelled, Y_L, c, 1e-2, 1e-3, 1.0, [L] * m, balanced=True)
    np.testing.assert_allclose(res.coef, fit.coef, rtol=1e-10, atol=1e-12)
    assert res.converged and res.residual < 1e-8 and solver.name == "vecchia"
    assert solver.memory_bytes(MVLProblem(kernels, labelled, Y_L, c, system=system)) > 0
    new = [V[:5] for V in views]
    out = sum(c[p] * (res.rule.kernels.cross(p, new[p]) @ res.coef[p]) for p in range(m))
    np.testing.assert_allclose(out, fit.decision_nodes()[:5], rtol=1e-6, atol=1e-9)


def test_bad_input():
    n, m = 30, 3
    views, labelled, Y_L, L = _data(n, m)
    k = _kernels(views, n)
    with pytest.raises(ValueError, match="gamma_A must be > 0"):
        solve_poisson_sparse(k, labelled, Y_L, np.ones(m) / m, 0.0, 0.0, 1.0, [L] * m)
    with pytest.raises(ValueError, match="loss must be one of"):
        solve_poisson_sparse(k, labelled, Y_L, np.ones(m) / m, 1e-2, 0.0, 1.0, [L] * m, loss="squared")
    with pytest.raises(ValueError, match="factorisation must be one of"):
        solve_poisson_sparse(k, labelled, Y_L, np.ones(m) / m, 1e-2, 0.0, 1.0, [L] * m, factorisation="lu")
    with pytest.raises(ValueError, match="at least one view"):
        solve_poisson_sparse(k, labelled, Y_L, np.ones(m) / m, 1e-2, 0.0, 1.0, [L] * m,
                             mask=np.zeros((n, m), dtype=bool))
