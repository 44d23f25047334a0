"""Co-regularization (Sindhwani & Rosenberg 2008, "SR") and its equivalence with two-view MVL-LS (JMLR 2016,
Section 3.4, eq 43-48): src/mvl/coreg.py.

:func:`test_coregularization_equals_two_view_mvl` is the central check: the kernel route (SR eq 6-10) and the
vector-valued route (JMLR eq 44, 67-68) give the same predictions to 1e-8.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_linear_problem, make_problem, paper_model, pm_one_targets, rel_diff, sample_first
from coreg_reference import solve_mvl_by_objective

import mvl
from mvl.coreg import (
    ambient_spectrum,
    comr_grid,
    coregularization_as_mvl,
    coregularization_kernel,
    coregularization_rls,
    intrinsic_graph_kernel,
    kernel_rls,
    knn_graph_laplacian,
    laplacian_rls,
    manifold_regularization_as_mvl,
    manifold_regularization_kernel,
    mr_grid,
    select_on_validation,
)
from mvl.kernels import squared_distances

TOL = 1e-8

# (gamma_1, gamma_2, mu): well-conditioned and lopsided settings
SETTINGS = [(1.0, 1.0, 1.0), (0.3, 2.0, 0.7), (1e-2, 10.0, 5.0), (5.0, 0.05, 0.2)]

MVLLeastSquares = paper_model(mvl.MVLLeastSquares)  # the paper's model unless a test says otherwise


def _indicator(idx, n):
    w = np.zeros(n)
    w[idx] = 1.0
    return w


# ----------------------------------------------------------------------------- the two formulations


@pytest.mark.parametrize("g1,g2,mu", SETTINGS)
@pytest.mark.parametrize("P,seed", [(2, 1), (3, 2)])
def test_coregularization_equals_two_view_mvl(g1, g2, mu, P, seed):
    """Kernel route (k~ of SR eq 7, RLS, components eq 9-10) == MVL-LS with K = diag(k1/g1, k2/g2), c = (1/2, 1/2),
    gamma_A = 1/l, gamma_B = mu/l, M_B on the unlabelled points (JMLR eq 44, 57, 67-68): max rel diff <= 1e-8."""
    K, K_test, y = make_problem(m=2, n=24, P=P, frac_unlabelled=0.5, seed=seed, t=9)
    lab, Y = pm_one_targets(y, P)
    unl = np.flatnonzero(y < 0)
    n = y.size
    # kernel route: the Gram matrices of k~ and plain RLS with ridge 4 (mean prediction f = g/2)
    Kt, Kt_test = coregularization_kernel(K[0], K[1], g1, g2, mu, unl, K_test[0], K_test[1])
    alpha = kernel_rls(Kt[np.ix_(lab, lab)], Y, ridge=4.0)
    f_kernel_test, f_kernel_train = Kt_test[:, lab] @ alpha, Kt[:, lab] @ alpha
    fit = coregularization_rls(K[0], K[1], lab, Y, g1, g2, mu, K1_test=K_test[0], K2_test=K_test[1])
    # vector-valued route
    inp = coregularization_as_mvl(K[0], K[1], g1, g2, mu, lab.size, K_test[0], K_test[1])
    A = solve_mvl_by_objective(inp["K"], lab, Y, inp["c"], inp["gamma_A"], inp["gamma_B"],
                               between_weights=_indicator(unl, n))
    views_test = np.einsum("ptn,pnk->ptk", inp["K_test"], A)
    views_train = np.einsum("pij,pjk->pik", inp["K"], A)
    f_mvl_test = np.einsum("ptk,p->tk", views_test, inp["c"])
    f_mvl_train = np.einsum("ptk,p->tk", views_train, inp["c"])
    diffs = [rel_diff(f_kernel_test, f_mvl_test), rel_diff(f_kernel_train, f_mvl_train),
             rel_diff(fit.test, f_mvl_test), rel_diff(fit.test_views, views_test),
             rel_diff(fit.train_views, views_train)]
    assert max(diffs) <= TOL, diffs


@pytest.mark.parametrize("g1,g2,mu", SETTINGS)
@pytest.mark.parametrize("solver", ["structured", "dense"])
def test_coregularization_on_unlabelled_points_through_the_shared_solver(g1, g2, mu, solver):
    """SR's co-regularization (on the unlabelled points) == MVLLeastSquares with between_weights = indicator of
    the unlabelled points (M_B = diag(w) (x) M_m), with the package's structured and dense solvers."""
    K, K_test, y = make_problem(m=2, n=22, P=3, frac_unlabelled=0.4, seed=5, t=8)
    lab, Y = pm_one_targets(y, 3)
    unl = np.flatnonzero(y < 0)
    inp = coregularization_as_mvl(K[0], K[1], g1, g2, mu, lab.size, K_test[0], K_test[1])
    est = MVLLeastSquares(gamma_A=inp["gamma_A"], gamma_B=inp["gamma_B"], gamma_W=inp["gamma_W"], c=inp["c"],
                          solver=solver,
                          between_weights=_indicator(unl, y.size), kernel="precomputed").fit(sample_first(inp["K"]), y)
    fit = coregularization_rls(K[0], K[1], lab, Y, g1, g2, mu, K1_test=K_test[0], K2_test=K_test[1])
    X_test = sample_first(inp["K_test"])
    assert rel_diff(est.decision_function(X_test), fit.test) <= TOL
    assert rel_diff(est.view_decision_function(X_test).transpose(1, 0, 2), fit.test_views) <= TOL


@pytest.mark.parametrize("g1,g2,mu", SETTINGS)
@pytest.mark.parametrize("solver", ["structured", "dense"])
def test_coregularization_on_all_points_equals_mvl_least_squares(g1, g2, mu, solver):
    """MVLLeastSquares's M_B acts on all u + l points: it is co-regularization with U = every training point."""
    K, K_test, y = make_problem(m=2, n=22, P=3, frac_unlabelled=0.4, seed=5, t=8)
    lab, Y = pm_one_targets(y, 3)
    inp = coregularization_as_mvl(K[0], K[1], g1, g2, mu, lab.size, K_test[0], K_test[1])
    est = MVLLeastSquares(gamma_A=inp["gamma_A"], gamma_B=inp["gamma_B"], gamma_W=inp["gamma_W"], c=inp["c"],
                          solver=solver,
                          kernel="precomputed").fit(sample_first(inp["K"]), y)
    fit = coregularization_rls(K[0], K[1], lab, Y, g1, g2, mu, coreg_points=np.arange(y.size),
                               K1_test=K_test[0], K2_test=K_test[1])
    X_test = sample_first(inp["K_test"])
    assert rel_diff(est.decision_function(X_test), fit.test) <= TOL
    assert rel_diff(est.view_decision_function(X_test).transpose(1, 0, 2), fit.test_views) <= TOL


def test_unlabelled_and_all_point_coregularization_differ():
    """The check above is sensitive to the set U: M_B on all points is a different problem."""
    K, K_test, y = make_problem(m=2, n=20, P=2, frac_unlabelled=0.5, seed=8, t=6)
    lab, Y = pm_one_targets(y, 2)
    a = coregularization_rls(K[0], K[1], lab, Y, 0.5, 0.5, 3.0, K1_test=K_test[0], K2_test=K_test[1])
    b = coregularization_rls(K[0], K[1], lab, Y, 0.5, 0.5, 3.0, np.arange(y.size), K_test[0], K_test[1])
    assert rel_diff(a.test, b.test) > 1e-3


@pytest.mark.parametrize("g1,g2,mu", SETTINGS)
def test_coregularization_solves_the_primal_problem(g1, g2, mu):
    """Explicit finite feature maps: minimise SR eq 2 over (w1, w2) by its normal equations; the view components
    of the kernel solution (SR eq 9-10) are f^i = Phi_i w_i."""
    pb = make_linear_problem(m=2, n=18, P=2, frac_unlabelled=0.5, seed=4, t=7)
    y = pb["y"]
    lab, Y = pm_one_targets(y, 2)
    unl = np.flatnonzero(y < 0)
    F1, F2 = pb["Phi"]
    d1, d2 = F1.shape[1], F2.shape[1]
    B = np.hstack([F1[unl], -F2[unl]])  # f1(U) - f2(U)
    C = 0.5 * np.hstack([F1[lab], F2[lab]])  # mean prediction on L
    Q = np.diag(np.r_[np.full(d1, g1), np.full(d2, g2)]) + mu * B.T @ B + C.T @ C
    W = np.linalg.solve(Q, C.T @ Y)
    fit = coregularization_rls(pb["K"][0], pb["K"][1], lab, Y, g1, g2, mu,
                               K1_test=pb["K_test"][0], K2_test=pb["K_test"][1])
    T1, T2 = pb["Phi_test"]
    assert rel_diff(fit.test_views[0], T1 @ W[:d1]) <= TOL
    assert rel_diff(fit.test_views[1], T2 @ W[d1:]) <= TOL


# ----------------------------------------------------------------------------- the kernels themselves


def test_coregularization_kernel_matches_eq7_entrywise():
    """SR eq 7 evaluated entry by entry with explicit s(x, z), d_x and H = (I + mu S)^-1."""
    K, K_test, y = make_problem(m=2, n=15, P=2, frac_unlabelled=0.6, seed=9, t=5)
    U = np.flatnonzero(y < 0)
    g1, g2, mu = 0.4, 1.7, 0.9
    Kt, Kt_test = coregularization_kernel(K[0], K[1], g1, g2, mu, U, K_test[0], K_test[1])
    S = K[0][np.ix_(U, U)] / g1 + K[1][np.ix_(U, U)] / g2
    H = np.linalg.inv(np.eye(U.size) + mu * S)

    def entry(k1xz, k2xz, k1x, k2x, k1z, k2z):
        s = k1xz / g1 + k2xz / g2
        dx = k1x[U] / g1 - k2x[U] / g2
        dz = k1z[U] / g1 - k2z[U] / g2
        return s - mu * dx @ H @ dz

    for i in range(15):
        for j in range(15):
            e = entry(K[0][i, j], K[1][i, j], K[0][i], K[1][i], K[0][j], K[1][j])
            assert abs(Kt[i, j] - e) <= 1e-10 * max(1.0, abs(e))
    for a in range(5):
        for j in range(15):
            e = entry(K_test[0][a, j], K_test[1][a, j], K_test[0][a], K_test[1][a], K[0][j], K[1][j])
            assert abs(Kt_test[a, j] - e) <= 1e-10 * max(1.0, abs(e))


def test_coregularization_kernel_is_the_sum_space_kernel():
    """Brute force in feature space: H~ = {w1.phi1 + w2.phi2} with norm min gamma_1|w1|^2 + gamma_2|w2|^2 +
    mu sum_U (w1.phi1 - w2.phi2)^2 (SR eq 4-5) has kernel psi(x)^T A^-1 psi(z), psi = (phi1, phi2), A the norm's
    matrix."""
    pb = make_linear_problem(m=2, n=16, P=2, frac_unlabelled=0.5, seed=6, t=6)
    U = np.flatnonzero(pb["y"] < 0)
    F1, F2 = pb["Phi"]
    T1, T2 = pb["Phi_test"]
    d1, d2 = F1.shape[1], F2.shape[1]
    g1, g2, mu = 0.8, 0.3, 2.5
    B = np.hstack([F1[U], -F2[U]])
    A = np.diag(np.r_[np.full(d1, g1), np.full(d2, g2)]) + mu * B.T @ B
    Psi, Psi_t = np.hstack([F1, F2]), np.hstack([T1, T2])
    Ainv = np.linalg.inv(A)
    Kt, Kt_test = coregularization_kernel(pb["K"][0], pb["K"][1], g1, g2, mu, U, pb["K_test"][0], pb["K_test"][1])
    assert rel_diff(Kt, Psi @ Ainv @ Psi.T) <= 1e-10
    assert rel_diff(Kt_test, Psi_t @ Ainv @ Psi.T) <= 1e-10
    assert np.linalg.eigvalsh(Kt).min() > -1e-10 * np.abs(Kt).max()


def test_coregularization_kernel_limits():
    """mu = 0: k~ = k1/gamma_1 + k2/gamma_2 (the plain sum space)."""
    K, _, y = make_problem(m=2, n=12, P=2, frac_unlabelled=0.5, seed=3)
    Kt, _ = coregularization_kernel(K[0], K[1], 2.0, 0.5, 0.0, np.flatnonzero(y < 0))
    assert rel_diff(Kt, K[0] / 2.0 + K[1] / 0.5) <= 1e-14


def test_manifold_regularization_kernel_is_the_rkhs_kernel():
    """Feature space: norm gamma_1 |w|^2 + gamma_2 (Phi_V w)^T R (Phi_V w) -> kernel phi^T A^-1 phi (SR eq 14)."""
    pb = make_linear_problem(m=1, n=14, P=2, seed=2, t=5)
    F, T = pb["Phi"][0], pb["Phi_test"][0]
    rng = np.random.default_rng(0)
    G = rng.normal(size=(14, 14))
    R = G @ G.T / 14 + 0.1 * np.eye(14)
    g1, g2 = 0.7, 1.3
    A = g1 * np.eye(F.shape[1]) + g2 * F.T @ R @ F
    Kmr, Kmr_t = manifold_regularization_kernel(pb["K"][0], np.linalg.inv(R), g1, g2, pb["K_test"][0])
    assert rel_diff(Kmr, F @ np.linalg.solve(A, F.T)) <= 1e-9
    assert rel_diff(Kmr_t, T @ np.linalg.solve(A, F.T)) <= 1e-9


@pytest.mark.parametrize("g1,g2", [(1.0, 1.0), (0.05, 3.0), (10.0, 0.01)])
def test_rls_with_mr_kernel_equals_laplacian_rls(g1, g2):
    """RLS (ridge 1) with k_mr == Laplacian RLS solved directly == one-view MVL-LS with gamma_A = g1/l,
    gamma_W = g2/l, Laplacian R."""
    K, K_test, y = make_problem(m=1, n=26, P=3, frac_unlabelled=0.5, seed=12, t=8)
    lab, Y = pm_one_targets(y, 3)
    M = knn_graph_laplacian(squared_distances(np.random.default_rng(1).normal(size=(26, 3))), 5)
    K2, R = intrinsic_graph_kernel(M, 2)
    _, f_train, f_test = laplacian_rls(K[0], lab, Y, g1, g2, R, K_test[0])
    Kmr, Kmr_t = manifold_regularization_kernel(K[0], K2, g1, g2, K_test[0])
    alpha = kernel_rls(Kmr[np.ix_(lab, lab)], Y, ridge=1.0)
    assert rel_diff(Kmr_t[:, lab] @ alpha, f_test) <= TOL
    assert rel_diff(Kmr[:, lab] @ alpha, f_train) <= TOL
    inp = manifold_regularization_as_mvl(K[0], R, g1, g2, lab.size)
    est = MVLLeastSquares(gamma_A=inp["gamma_A"], gamma_B=inp["gamma_B"], gamma_W=inp["gamma_W"], c=inp["c"],
                          laplacian=sample_first(inp["laplacian"]), kernel="precomputed").fit(sample_first(inp["K"]), y)
    assert rel_diff(est.decision_function(sample_first(K_test[0][None])), f_test) <= TOL


def test_laplacian_rls_stationarity():
    """The direct solution zeroes the gradient of gamma_1 a'Ka + gamma_2 a'KRKa + |J(Y - Ka)|^2."""
    K, _, y = make_problem(m=1, n=20, P=2, frac_unlabelled=0.5, seed=4)
    lab, Y = pm_one_targets(y, 2)
    rng = np.random.default_rng(3)
    G = rng.normal(size=(20, 20))
    R = G @ G.T
    a, f, _ = laplacian_rls(K[0], lab, Y, 0.3, 0.2, R)
    J = np.zeros((20, 20))
    J[lab, lab] = 1
    Yf = np.zeros((20, 2))
    Yf[lab] = Y
    grad = 0.3 * K[0] @ a + 0.2 * K[0] @ R @ K[0] @ a - K[0] @ J @ (Yf - K[0] @ a)
    assert np.abs(grad).max() <= 1e-10 * np.abs(K[0] @ Yf).max()


def test_graph_and_intrinsic_kernel():
    X = np.random.default_rng(0).normal(size=(40, 3))
    D = squared_distances(X)
    assert np.allclose(D, ((X[:, None] - X[None]) ** 2).sum(-1), atol=1e-12)
    M = knn_graph_laplacian(D, 4)
    assert np.array_equal(M, M.T)
    assert np.allclose(np.diag(M), 1.0)  # every vertex has a neighbour
    off = -M[~np.eye(40, dtype=bool)]
    assert off.min() >= 0 and (off > 0).sum() >= 40 * 4  # symmetrised kNN: >= k edges per vertex
    assert np.linalg.eigvalsh(M).min() > -1e-12 and np.linalg.eigvalsh(M).max() <= 2 + 1e-12
    K2, R = intrinsic_graph_kernel(M, 2)
    assert np.allclose(R, M @ M + 1e-6 * np.eye(40), atol=1e-12)
    assert np.allclose(K2 @ R, np.eye(40), atol=1e-6)
    Mh = knn_graph_laplacian(D, 4, weights="heat", sigma=1.0)
    assert np.array_equal(Mh != 0, M != 0)
    K2k, Rk = intrinsic_graph_kernel(M, laplacian_power=3)
    assert np.allclose(Rk, M @ M @ M + 1e-6 * np.eye(40), atol=1e-12)


def test_knn_graph_weights_against_a_plain_construction():
    """Binary and kernel weights (alias heat) against a loop-built symmetrised kNN graph and I - D^-1/2 W D^-1/2."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 4))
    D = ((X[:, None] - X[None]) ** 2).sum(-1)
    k, sigma = 3, 1.7
    edges = np.zeros((30, 30), dtype=bool)
    for i in range(30):
        order = [j for j in np.argsort(D[i], kind="stable") if j != i]
        edges[i, order[:k]] = True
    edges |= edges.T
    for weights, W in (("binary", edges * 1.0), ("kernel", edges * np.exp(-D / (2 * sigma**2)))):
        deg = W.sum(1)
        ref = np.eye(30) - W / np.sqrt(np.outer(deg, deg))
        M = knn_graph_laplacian(squared_distances(X), k, weights=weights, sigma=sigma)
        assert np.abs(M - ref).max() <= 1e-12, weights
    assert np.array_equal(knn_graph_laplacian(D, k, weights="heat", sigma=sigma),
                          knn_graph_laplacian(D, k, weights="kernel", sigma=sigma))
    with pytest.raises(ValueError, match="'weights' parameter .* must be a str among"):
        knn_graph_laplacian(D, k, weights="gaussian", sigma=sigma)
    with pytest.raises(ValueError, match="sigma"):
        knn_graph_laplacian(D, k, weights="kernel")


GRID = (1e-6, 1e-2, 1.0, 100.0)


def test_mr_grid_matches_the_direct_solver():
    """The grid solver (one eigendecomposition for all pairs) == Laplacian RLS solved directly per pair."""
    K, K_test, y = make_problem(m=1, n=40, P=3, frac_unlabelled=0.6, seed=21, t=9)
    lab, Y = pm_one_targets(y, 3)
    M = knn_graph_laplacian(squared_distances(np.random.default_rng(2).normal(size=(40, 3))), 5)
    _, R = intrinsic_graph_kernel(M, 2)
    out = mr_grid(K[0], R, lab, Y, K_test[0], grid=GRID)
    assert sorted(out) == sorted((a, b) for a in GRID for b in GRID)
    for (g1, g2), (f_train, f_eval) in out.items():
        _, ref_train, ref_eval = laplacian_rls(K[0], lab, Y, g1, g2, R, K_test[0])
        tol = TOL if g1 >= 1e-2 else 1e-6  # the direct n x n solve loses digits at gamma_1 = 1e-6
        assert rel_diff(f_train, ref_train) <= tol and rel_diff(f_eval, ref_eval) <= tol, (g1, g2)


def test_mr_grid_with_a_rank_deficient_kernel_solves_the_primal_problem():
    """Linear kernel of rank 3 on 30 points: the grid solver == the normal equations over w in R^3,
    (gamma_1 I + gamma_2 Phi^T R Phi + Phi_L^T Phi_L) w = Phi_L^T Y, to 1e-10 at every pair."""
    rng = np.random.default_rng(5)
    Phi, Phi_t = rng.normal(size=(30, 3)), rng.normal(size=(6, 3))
    K1 = Phi @ Phi.T
    lab = np.arange(0, 30, 3)
    Y = np.where(rng.uniform(size=(lab.size, 2)) > 0.5, 1.0, -1.0)
    G = rng.normal(size=(30, 30))
    R = G @ G.T / 30 + 1e-3 * np.eye(30)
    lam, _ = ambient_spectrum(K1)
    assert lam.size == 3
    for (g1, g2), (f_train, f_eval) in mr_grid(K1, R, lab, Y, Phi_t @ Phi.T, grid=GRID).items():
        w = np.linalg.solve(g1 * np.eye(3) + g2 * Phi.T @ R @ Phi + Phi[lab].T @ Phi[lab], Phi[lab].T @ Y)
        assert rel_diff(f_train, Phi @ w) <= 1e-10 and rel_diff(f_eval, Phi_t @ w) <= 1e-10, (g1, g2)


@pytest.mark.parametrize("coreg_all", [False, True])
def test_comr_grid_matches_coregularization_rls(coreg_all):
    """The grid solver == co-regularized RLS (itself checked against MVL-LS above) at every pair."""
    K, K_test, y = make_problem(m=2, n=36, P=2, frac_unlabelled=0.6, seed=22, t=7)
    lab, Y = pm_one_targets(y, 2)
    U = np.arange(36) if coreg_all else None
    out = comr_grid(K[0], K[1], lab, Y, K_test[0], mu=0.7, grid=GRID, coreg_points=U)
    for (g1, g2), (f_train, f1_train, f1_eval) in out.items():
        fit = coregularization_rls(K[0], K[1], lab, Y, g1, g2, 0.7, coreg_points=U, K1_test=K_test[0])
        assert rel_diff(f_train, fit.train) <= TOL and rel_diff(f1_train, fit.train_views[0]) <= TOL
        assert rel_diff(f1_eval, fit.test_ambient) <= TOL, (g1, g2)


def test_select_on_validation_ties():
    err = {(1, 1): 5.0, (1, 2): 3.0, (2, 1): 3.0}
    assert select_on_validation(err) == (1, 2)
    assert select_on_validation(err, {(1, 1): 0.0, (1, 2): 0.9, (2, 1): 0.5}) == (2, 1)


def test_input_errors():
    K, _, y = make_problem(m=2, n=10, P=2, frac_unlabelled=0.5, seed=1)
    lab, Y = pm_one_targets(y, 2)
    with pytest.raises(ValueError, match="gamma1"):
        coregularization_rls(K[0], K[1], lab, Y, 0.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="same shape"):
        coregularization_kernel(K[0], K[1][:5, :5], 1.0, 1.0, 1.0, [0])
    with pytest.raises(ValueError, match="both K1_test and K2_test"):
        coregularization_kernel(K[0], K[1], 1.0, 1.0, 1.0, [0], K1_test=K[0][:2])
    with pytest.raises(ValueError, match="Y_L"):
        coregularization_rls(K[0], K[1], lab, Y[:-1], 1.0, 1.0, 1.0)
    # every entry point taking two (n, n) matrices rejects a size mismatch
    small = K[1][:5, :5]
    for call in (lambda: coregularization_rls(K[0], small, lab, Y, 1.0, 1.0, 1.0),
                 lambda: manifold_regularization_kernel(K[0], small, 1.0, 1.0),
                 lambda: coregularization_as_mvl(K[0], small, 1.0, 1.0, 1.0, lab.size)):
        with pytest.raises(ValueError, match="K1 and K2 must have the same shape"):
            call()
    for call in (lambda: laplacian_rls(K[0], lab, Y, 1.0, 1.0, small),
                 lambda: manifold_regularization_as_mvl(K[0], small, 1.0, 1.0, lab.size)):
        with pytest.raises(ValueError, match="K1 and R must have the same shape"):
            call()


def test_sr_graph_is_the_estimators_knn_graph():
    """One kNN graph: SR's graph on squared distances (kernel weights of width sigma) equals the normalized
    Laplacian of mvl.graph.knn_weights on the Gaussian kernel of the same width, which the estimators use."""
    from mvl.graph import knn_weights, laplacian

    X = np.random.default_rng(7).normal(size=(35, 4))
    D = squared_distances(X)
    sigma = 1.3
    K = np.exp(-D / (2 * sigma**2))
    for k in (1, 4, 12):
        for weights in ("binary", "kernel"):
            expected = laplacian(knn_weights(K, k, weights=weights), normalized=True)
            assert np.array_equal(knn_graph_laplacian(D, k, weights=weights, sigma=sigma), expected), (k, weights)
