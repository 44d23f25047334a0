"""solver="graph" (:mod:`mvl.solvers.graph`) against independent references.

- the sparse operator M against M written out densely from its definition (Kronecker products);
- both preconditioners (Vecchia's, Nystrom + block-diagonal residual) against their definitions written out densely
  and inverted; the clusters of the block-diagonal residual a partition of the points (the Vecchia factor itself:
  tests/test_vecchia.py);
- the coefficients of the CG solve (on the pencil, with refinement) against the structured solver (Theorem 10 view by
  view) and the dense textbook system (eq 67-68, one LU), in the graph regime (gamma_W / gamma_A = 1e5-1e6) and the
  smooth regime, gamma_B = 0 (M singular for m > 1) and > 0, Laplacian powers 1 and 2, P = 1, 2, 4 output columns,
  with and without per-point between-view weights, with either preconditioner; tolerance ``TOL`` = 1e-16 on the
  relative objective error (the energy-norm estimate; relative energy error 1e-8), then the training values
  F = K a within 1e-6 (relative to max |F|) of both references;
- the energy-norm stopping rule: the true relative objective error (from the exact solution) at the returned iterate
  against tol, and the bound it gives on the decision values;
- the estimator: the same decision values as solver="structured" (feature views and precomputed kernels), the
  ConvergenceWarning that names the better choice, bad input, and the "auto" rule.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import linalg
from scipy.spatial.distance import cdist
from sklearn.exceptions import ConvergenceWarning

from mvl import MVLLeastSquares
from mvl.estimators.base import encode_targets
from mvl.data.synthetic import make_multiview_manifold
from mvl.graph import sparse_knn_weights, sparse_laplacian
from mvl.solvers.auto import GRAPH_REGIME, measured_regime, nystrom_missed, regime_ratio
from mvl.solvers.graph import GraphPreconditioner, point_clusters, ENERGY_DELAY, solve_graph, sparse_operator
from mvl.kernel_blocks import ViewKernels
from mvl.solvers.auto import choose_solver
from mvl.solvers.dense import solve_dense
from mvl.solvers.structured import solve_structured
from mvl.solvers.system import MVLSystem
from mvl.solvers.nystrom import NystromBasis

N = 240
TOL = 1e-16  # relative objective error ||a - a*||_A^2 / ||a*||_A^2: relative energy error 1e-8


def _gauss(X, Z, s):
    return np.exp(-cdist(X, Z, "sqeuclidean") / (2 * s * s))


@pytest.fixture(scope="module")
def data():
    """240 training points of three 5-feature views (4 classes on curves), 3 labels per class, 60 test points;
    narrow Gaussian kernels (0.3 x the median distance)."""
    d = make_multiview_manifold(N + 60, n_classes=4, n_views=3, n_features=5, random_state=5)
    views = [V[:N] for V in d.views]
    tests = [V[N:] for V in d.views]
    y = d.y[:N]
    labelled = np.concatenate([np.flatnonzero(y == k)[:3] for k in range(4)])
    scales = [0.3 * np.median(cdist(V, V)[np.triu_indices(N, 1)]) for V in views]
    K = np.stack([_gauss(V, V, s) for V, s in zip(views, scales, strict=True)])
    return dict(views=views, tests=tests, y=y, labelled=labelled, scales=scales, K=K, yt=d.y[N:])


def _problem(data, gammas, power, P=4, m=3, weights=None, c=None):
    lab = data["labelled"]
    Y_L = encode_targets(data["y"][lab], 4)[:, :P]
    kernels = ViewKernels(data["views"][:m], "rbf", data["scales"][:m], max_memory=0, block=64)
    Ls = [sparse_laplacian(sparse_knn_weights(kernels, p, 6)) for p in range(m)]
    Ld = np.stack([np.linalg.matrix_power(Lp.toarray(), power) for Lp in Ls])
    c = np.full(m, 1.0 / m) if c is None else np.asarray(c)
    named = dict(zip(("gamma_A", "gamma_B", "gamma_W"), gammas, strict=True))
    system = MVLSystem(N, lab, Y_L, c, **named, laplacians=Ls, laplacian_power=power, between_weights=weights)
    return kernels, system, Ld, Y_L, c


@pytest.mark.parametrize("power", [1, 2, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_sparse_operator_equals_dense_definition(data, power, weighted):
    """M = cc^T (x) J + beta (m I - 11^T) (x) D + omega blockdiag(L_p^k), view-major, written out densely."""
    lab = data["labelled"]
    w = np.linspace(0.5, 1.5, N) if weighted else None
    c = np.array([0.5, 0.3, 0.2])
    _, system, Ld, _, _ = _problem(data, (1e-4, 1e-3, 1e-2), power, weights=w, c=c)
    m = 3
    J = np.zeros((N, N))
    J[lab, lab] = 1.0
    D = np.diag(np.ones(N) if w is None else w)
    ref = (np.kron(np.outer(c, c), J) + system.beta * np.kron(m * np.eye(m) - np.ones((m, m)), D)
           + system.omega * linalg.block_diag(*Ld))
    M = sparse_operator(system).toarray()
    assert np.abs(M - ref).max() <= 1e-12 * np.abs(ref).max()
    # and the operator of mvl.solvers.system (what the solver iterates with) agrees with it
    F = np.random.default_rng(0).normal(size=(m, N, 2))
    MF = (M @ F.reshape(m * N, 2)).reshape(m, N, 2)
    assert np.abs(MF - system.apply(F)).max() <= 1e-10 * np.abs(MF).max()


CASES = [
    # (gamma_A, gamma_B, gamma_W), power, P, m: the graph regime (gamma_W / gamma_A = 1e5-1e6) and the smooth one
    ((1e-6, 0.0, 1.0), 2, 4, 3),       # the setting: M singular (gamma_B = 0, m > 1)
    ((1e-6, 1e-3, 1.0), 2, 2, 3),
    ((1e-6, 0.0, 1.0), 1, 1, 2),
    ((1e-5, 1e-4, 1.0), 1, 4, 1),      # one view: no between-view term
    ((1e-4, 1e-3, 1e-2), 2, 4, 3),     # smooth regime
    ((1e-4, 0.0, 1e-2), 1, 2, 3),
]


@pytest.mark.parametrize("preconditioner", ["vecchia", "nystrom"])
@pytest.mark.parametrize("gammas,power,P,m", CASES)
def test_graph_equals_structured_and_dense(data, gammas, power, P, m, preconditioner):
    K, lab = data["K"][:m], data["labelled"]
    kernels, system, Ld, Y_L, c = _problem(data, gammas, power, P=P, m=m)
    basis = NystromBasis(kernels, np.arange(0, N, 2)) if preconditioner == "nystrom" else None
    a, info = solve_graph(system, kernels, basis, tol=TOL, max_iter=2000, preconditioner=preconditioner)
    assert info["converged"] and min(info["residual"], info["energy_error"]) <= TOL
    # the residual it reports is the true one of (68)
    rho = system.rhs() - system.apply(np.einsum("pij,pjk->pik", K, a)) - system.delta * a
    r = system.rhs()
    true = np.max(np.sqrt((rho ** 2).sum(axis=(0, 1))) / np.sqrt((r ** 2).sum(axis=(0, 1))))
    assert true == pytest.approx(info["residual"], rel=1e-2, abs=5e-10)  # up to the rounding of (68)
    ref = solve_structured(K, lab, Y_L, c, *gammas, Ld)
    dense = solve_dense(K, lab, Y_L, c, *gammas, Ld)
    F, Fr, Fd = (np.einsum("pij,pjk->pik", K, A) for A in (a, ref, dense))
    scale = np.abs(Fr).max()
    assert np.abs(F - Fr).max() <= 1e-6 * scale
    assert np.abs(F - Fd).max() <= 1e-6 * scale


@pytest.mark.parametrize("size", [1, 7, 32])
def test_point_clusters_partition(size):
    """Every point in exactly one cluster, sizes in (size / 2, size], neighbours along the principal axis together."""
    Y = np.random.default_rng(3).normal(size=(203, 4)) * np.array([10.0, 1.0, 1.0, 1.0])
    groups = point_clusters(Y, size)
    allidx = np.sort(np.concatenate(groups))
    np.testing.assert_array_equal(allidx, np.arange(203))
    assert all(len(g) <= size for g in groups)
    if size > 1:
        assert all(len(g) > size // 2 - 1 for g in groups)
        # the first split is at the median of the dominant (first) coordinate
        spans = [np.ptp(Y[g, 0]) for g in groups]
        assert np.median(spans) < 0.25 * np.ptp(Y[:, 0])


@pytest.mark.parametrize("cluster_size", [1, 16])
def test_preconditioner_is_the_inverse_of_its_definition(data, cluster_size):
    """Q = (M_eps (Z Z^T + D_b) + delta I)^{-1} with D_b the Nystrom residual K - Z Z^T on the clusters (its diagonal
    for cluster_size 1), each block shifted by 1e-8: against that matrix written out densely and inverted."""
    K = data["K"]
    kernels, system, Ld, Y_L, c = _problem(data, (1e-6, 0.0, 1.0), 2, P=2)
    basis = NystromBasis(kernels, np.arange(0, N, 4))
    Q = GraphPreconditioner(system, kernels, basis, keep_bytes=1e9, cluster_size=cluster_size)
    m = 3
    Db = np.zeros((m * N, m * N))
    for p in range(m):
        Zp = basis.Z[p]
        E = K[p] - Zp @ Zp.T
        groups = [np.arange(N)] if cluster_size == 1 else point_clusters(Zp[:, -16:], cluster_size)
        for g in groups:
            blk = np.diag(np.maximum(np.diag(E)[g], 1e-8)) if cluster_size == 1 else E[np.ix_(g, g)]
            if cluster_size > 1:
                w, U = np.linalg.eigh(0.5 * (blk + blk.T))
                blk = (U * np.maximum(w, 1e-8)) @ U.T
            Db[np.ix_(p * N + g, p * N + g)] = blk
    Zfull = linalg.block_diag(*basis.Z)
    Me = sparse_operator(system).toarray() + Q.shift * np.eye(m * N)
    ref = np.linalg.inv(Me @ (Zfull @ Zfull.T + Db) + system.delta * np.eye(m * N))
    V = np.random.default_rng(1).normal(size=(m, N, 2))
    want = (ref @ V.reshape(m * N, 2)).reshape(m, N, 2)
    assert np.abs(Q(V) - want).max() <= 1e-7 * np.abs(want).max()


def test_view_kernels_square(data):
    kernels = ViewKernels(data["views"], "rbf", data["scales"], max_memory=0)
    idx = np.array([5, 0, 17, 3])
    cols = np.array([9, 2, 200, 41, 0])
    for p in range(3):
        np.testing.assert_allclose(kernels.square(p, idx), data["K"][p][np.ix_(idx, idx)], rtol=0, atol=1e-13)
        np.testing.assert_allclose(kernels.submatrix(p, idx, cols), data["K"][p][np.ix_(idx, cols)], rtol=0,
                                   atol=1e-13)
    gram = ViewKernels(gram=data["K"])
    np.testing.assert_array_equal(gram.square(1, idx), data["K"][1][np.ix_(idx, idx)])
    np.testing.assert_array_equal(gram.submatrix(1, idx, cols), data["K"][1][np.ix_(idx, cols)])


@pytest.mark.parametrize("cluster_size", [1, 16])
def test_graph_cluster_sizes_equal_structured(data, cluster_size):
    """FITC's diagonal (1) and a block-diagonal residual: the same exact answer, the blocks in fewer iterations."""
    K, lab = data["K"], data["labelled"]
    gammas = (1e-6, 0.0, 1.0)
    kernels, system, Ld, Y_L, c = _problem(data, gammas, 2, P=2)
    a, info = solve_graph(system, kernels, NystromBasis(kernels, np.arange(0, N, 2)), tol=TOL, max_iter=2000,
                          cluster_size=cluster_size, preconditioner="nystrom")
    assert info["converged"]
    ref = solve_structured(K, lab, Y_L, c, *gammas, Ld)
    F, Fr = np.einsum("pij,pjk->pik", K, a), np.einsum("pij,pjk->pik", K, ref)
    assert np.abs(F - Fr).max() <= 1e-6 * np.abs(Fr).max()


def test_graph_between_weights(data):
    """Co-regularization on the unlabelled points (between_weights = indicator) in the graph regime."""
    K, lab = data["K"], data["labelled"]
    w = np.ones(N)
    w[lab] = 0.0
    gammas = (1e-6, 1e-3, 1.0)
    kernels, system, Ld, Y_L, c = _problem(data, gammas, 2, weights=w)
    a, info = solve_graph(system, kernels, None, tol=TOL, max_iter=2000)
    assert info["converged"]
    ref = solve_structured(K, lab, Y_L, c, *gammas, Ld, between_weights=w)
    F, Fr = np.einsum("pij,pjk->pik", K, a), np.einsum("pij,pjk->pik", K, ref)
    assert np.abs(F - Fr).max() <= 1e-6 * np.abs(Fr).max()


def test_every_point_a_centre_is_one_iteration(data):
    """Z Z^T = K when the centres are all the points (D = 0 up to rounding): B = A_eps, CG stops at once."""
    kernels, system, Ld, Y_L, c = _problem(data, (1e-6, 0.0, 1.0), 2)
    a, info = solve_graph(system, kernels, NystromBasis(kernels, np.arange(N)), tol=1e-8, max_iter=50,
                          preconditioner="nystrom")
    assert info["converged"] and info["n_iter"] <= 6  # 3-4 CG steps, then one round removes the shift's bias


def test_vecchia_with_every_earlier_point_is_one_iteration(data):
    """q = n - 1: Vecchia's factor is the exact inverse Cholesky factor, K_v = K, B = A_eps: CG stops at once."""
    kernels, system, Ld, Y_L, c = _problem(data, (1e-6, 0.0, 1.0), 2)
    a, info = solve_graph(system, kernels, None, tol=1e-8, max_iter=50, neighbours=N - 1)
    assert info["converged"] and info["n_iter"] <= 8


def test_iteration_limit_and_warm_start(data):
    kernels, system, Ld, Y_L, c = _problem(data, (1e-6, 0.0, 1.0), 2)
    _, short = solve_graph(system, kernels, None, tol=1e-14, max_iter=2)
    assert not short["converged"] and short["n_iter"] == 2 and short["residual"] > 1e-14
    a, info = solve_graph(system, kernels, None, tol=1e-8, max_iter=600)
    assert info["converged"]
    # a warm start from a converged answer: at most one refinement round to certify it, the same answer to tol
    a2, info2 = solve_graph(system, kernels, None, tol=1e-8, max_iter=600, x0=a)
    assert info2["converged"] and info2["n_iter"] <= 2 * ENERGY_DELAY
    K = data["K"]
    F, F2 = np.einsum("pij,pjk->pik", K, a), np.einsum("pij,pjk->pik", K, a2)
    assert np.abs(F2 - F).max() <= 1e-3 * np.abs(F).max()
    with pytest.raises(ValueError, match="preconditioner must be"):
        solve_graph(system, kernels, None, preconditioner="ilu")


@pytest.mark.parametrize("tol", [1e-4, 1e-6, 1e-8])
def test_energy_stopping_rule_against_the_exact_solution(data, tol):
    """The stopping rule's claim, checked with the exact solution a* (dense LU of (68)): at the returned iterate the
    true relative objective error ||a - a*||_A^2 / ||a*||_A^2 (A = K + delta M^{-1}, written out densely) is at
    most a few times tol (the estimate is a lower bound of the error ENERGY_DELAY iterations earlier, hence of the
    returned one up to the estimate's slack), and every decision value, training or test, is within
    ||c|| ||a - a*||_K max sqrt(k(x, x)) of the exact one (the reproducing property)."""
    K, lab = data["K"], data["labelled"]
    gammas = (1e-6, 1e-3, 1.0)  # M nonsingular: A written out with M^{-1}
    kernels, system, Ld, Y_L, c = _problem(data, gammas, 2, P=2)
    exact = solve_dense(K, lab, Y_L, c, *gammas, Ld)
    a, info = solve_graph(system, kernels, None, tol=tol, max_iter=2000)
    assert info["converged"] and info["energy_error"] <= tol
    M = sparse_operator(system).toarray()
    A = linalg.block_diag(*K) + system.delta * np.linalg.inv(M)
    e = (a - exact).reshape(3 * N, 2)
    x = exact.reshape(3 * N, 2)
    true = np.einsum("ik,ij,jk->k", e, A, e) / np.einsum("ik,ij,jk->k", x, A, x)
    assert np.all(true <= 10 * tol)
    # the decision values at the test points: within ||c|| ||e||_K of the exact ones (k(x, x) = 1, Gaussian)
    Kt = [_gauss(T, V, s) for T, V, s in zip(data["tests"], data["views"], data["scales"], strict=True)]
    err = sum(c[p] * Kt[p] @ (a[p] - exact[p]) for p in range(3))
    eK = np.sqrt(np.einsum("ik,ij,jk->k", e, linalg.block_diag(*K), e))
    assert np.all(np.abs(err).max(axis=0) <= np.linalg.norm(c) * eK * (1 + 1e-9))


# ---------------------------------------------------------------- the estimator


def _labels(data):
    y = np.full(N, -1)
    y[data["labelled"]] = data["y"][data["labelled"]]
    return y


GRAPH_KW = dict(gamma_A=1e-6, gamma_B=0.0, gamma_W=1.0, n_neighbors=6, laplacian_power=2)


def test_estimator_graph_equals_structured(data):
    X, Xt, y = np.hstack(data["views"]), np.hstack(data["tests"]), _labels(data)
    kw = dict(kernel="rbf", views=[5, 5, 5], bandwidth=data["scales"], **GRAPH_KW)
    ref = MVLLeastSquares(solver="structured", **kw).fit(X, y)
    est = MVLLeastSquares(solver="graph", tol=TOL, random_state=0, max_iter=2000, **kw).fit(X, y)
    assert est.solver_ == "graph" and est.n_iter_ >= 1 and est.converged_ and est.centres_ is None
    Fr = ref.decision_function(Xt)
    assert np.abs(est.decision_function(Xt) - Fr).max() <= 1e-6 * np.abs(Fr).max()
    np.testing.assert_array_equal(est.predict(Xt), ref.predict(Xt))
    # precomputed kernels: the same solver on the Gram matrices
    K = np.moveaxis(data["K"], 0, -1)
    Kt = np.stack([_gauss(T, V, s) for T, V, s in zip(data["tests"], data["views"], data["scales"], strict=True)],
                  axis=-1)
    pre = MVLLeastSquares(kernel="precomputed", solver="graph", tol=TOL, random_state=0, max_iter=2000,
                          **GRAPH_KW).fit(K, y)
    assert np.abs(pre.decision_function(Kt) - Fr).max() <= 1e-6 * np.abs(Fr).max()


def test_estimator_errors_and_warnings(data):
    X, y = np.hstack(data["views"]), _labels(data)
    base = dict(kernel="rbf", views=[5, 5, 5], bandwidth=data["scales"], gamma_A=1e-6, gamma_W=1.0)
    with pytest.raises(ValueError, match="needs a sparse kNN graph"):
        MVLLeastSquares(solver="graph", n_neighbors=None, **base).fit(X, y)
    with pytest.raises(ValueError, match="laplacian must be"):
        MVLLeastSquares(solver="graph", n_neighbors=5, laplacian=np.eye(N), **base).fit(X, y)
    for bad in (dict(tol=0), dict(max_iter=0), dict(n_components=0)):
        with pytest.raises(ValueError):
            MVLLeastSquares(solver="graph", n_neighbors=5, **bad, **base).fit(X, y)
    with pytest.raises(ValueError):
        MVLLeastSquares(solver="graphs", n_neighbors=5, **base).fit(X, y)
    with pytest.warns(ConvergenceWarning, match=r'solver="graph" stopped after max_iter = 1 .*solver="structured"'):
        MVLLeastSquares(solver="graph", n_neighbors=5, max_iter=1, tol=1e-12, n_components=20, **base).fit(X, y)


def _dense_missed(K, R, seed):
    """max over views of tr(K - K_nys) / tr(K), dense (pinv of K_CC), on the documented centre draw:
    check_random_state(seed).choice(n, R) per view, every point sampled."""
    from sklearn.utils import check_random_state

    rng = check_random_state(seed)
    out = 0.0
    for Kp in K:
        C = np.sort(rng.choice(len(Kp), R, replace=False))
        K_nys = Kp[:, C] @ np.linalg.pinv(Kp[np.ix_(C, C)], rcond=1e-12, hermitian=True) @ Kp[C]
        out = max(out, np.trace(Kp - K_nys) / np.trace(Kp))
    return out


def test_nystrom_missed_against_its_dense_definition(data):
    """tr(K - K_nys) / tr(K) with every point in the sample equals the dense definition on the same centres (the
    documented draw: check_random_state(random_state).choice per view), 0 when every point is a centre, ~0 for a
    wide kernel and ~1 for a kernel narrower than the point spacing; the sampled estimate is near the exact one."""
    views, n = data["views"], N
    kernels = ViewKernels(views, "rbf", data["scales"], max_memory=0)
    R = 40
    expected = _dense_missed(data["K"], R, 3)
    assert 0.01 < expected < 0.99
    assert nystrom_missed(kernels, R, random_state=3, sample=n) == pytest.approx(expected, rel=1e-8)
    assert abs(nystrom_missed(kernels, R, random_state=3, sample=120) - expected) < 0.5 * expected
    gram = ViewKernels(gram=data["K"])  # precomputed Gram matrices: the same blocks
    assert nystrom_missed(gram, R, random_state=3, sample=n) == pytest.approx(expected, rel=1e-8)
    assert nystrom_missed(gram, R, random_state=3, sample=120) == pytest.approx(
        nystrom_missed(kernels, R, random_state=3, sample=120), rel=1e-8)
    assert nystrom_missed(kernels, n, sample=n) < 1e-8  # every point a centre: nothing missed
    wide = ViewKernels(views, "rbf", [100 * s for s in data["scales"]], max_memory=0)
    assert nystrom_missed(wide, R, sample=n) < 1e-6
    narrow = ViewKernels(views, "rbf", [1e-3 * s for s in data["scales"]], max_memory=0)
    assert nystrom_missed(narrow, R, sample=n) > 0.8
    assert measured_regime(kernels, 1e-6, 0.0, 1.0, 2, R, 3, sample=n) == pytest.approx(expected * 4e6, rel=1e-8)


def test_auto_chooses_the_sparse_solver_in_the_graph_regime(data, monkeypatch):
    # beyond the structured solver's size (up to AUTO_CG_MAX): the graph regime iff the measure >= GRAPH_REGIME
    assert regime_ratio(1e-6, 0.0, 1.0, 2, 3) == pytest.approx(4.0 / 1e-6)
    assert regime_ratio(1e-5, 1e-6, 1e-2, 1, 3) == pytest.approx((3e-6 + 2e-2) / 1e-5)  # the smooth preset: 2e3
    # graph regime beyond the structured solver's size: "vecchia_direct" (one sparse factorisation)
    assert choose_solver("auto", "rbf", 10_000, 3, 30, 1e12, regime=5e5) == "vecchia_direct"  # graph6 at 8,000
    assert choose_solver("auto", "rbf", 10_000, 3, 30, 1e9, regime=5e5) == "vecchia_direct"
    assert choose_solver("auto", "rbf", 4_000, 3, 30, 1e7, regime=5e5) == "vecchia_direct"  # structured's memory
    assert choose_solver("auto", "rbf", 20_000, 3, 30, 1e9, regime=GRAPH_REGIME) == "vecchia_direct"
    assert choose_solver("auto", "rbf", 100_000, 3, 30, 1e12, regime=5e5) == "vecchia_direct"
    assert choose_solver("auto", "rbf", 10_000, 3, 30, 1e12, regime=3e-3) == "cg"  # the smooth preset measured
    assert choose_solver("auto", "rbf", 100_000, 3, 30, 1e12, regime=None) == "nystrom"
    assert choose_solver("auto", "rbf", 2000, 3, 30, 1e12, regime=5e5) == "structured"
    assert choose_solver("auto", "precomputed", 10**5, 3, 30, 1e12, regime=5e5) == "structured"

    def never():
        raise AssertionError("measured although the choice does not depend on it")

    assert choose_solver("auto", "rbf", 2000, 3, 30, 1e12, regime=never) == "structured"
    assert choose_solver("auto", "rbf", 10_000, 3, 30, 1e12, regime=lambda: 5e5) == "vecchia_direct"
    assert choose_solver("auto", "rbf", 10_000, 3, 30, 1e12, regime=lambda: None) == "cg"
    import mvl.solvers.auto

    X, y = np.hstack(data["views"]), _labels(data)
    kw = dict(kernel="rbf", views=[5, 5, 5], bandwidth=data["scales"], n_components=120, random_state=0, max_memory=1e6,
              max_iter=600)
    small = MVLLeastSquares(**dict(kw, max_memory=None), **GRAPH_KW).fit(X, y)
    assert small.solver_ == "structured" and small.regime_ is None  # nothing measured
    monkeypatch.setattr(mvl.solvers.auto, "AUTO_STRUCTURED_MAX", 100)
    est = MVLLeastSquares(**dict(kw, max_memory=1e8), **GRAPH_KW).fit(X, y)  # the sparse solver's memory fits
    assert est.solver_ == "vecchia_direct"
    # 240 points < 500 sampled: every point, so the exact trace fraction on the estimator's draw (random_state 0)
    assert est.regime_ == pytest.approx(_dense_missed(data["K"], 120, 0) * 4e6, rel=1e-8) and est.regime_ >= 1
    smooth = dict(gamma_A=1e-4, gamma_B=0.0, gamma_W=1e-2, n_neighbors=6, laplacian_power=1)
    est = MVLLeastSquares(**dict(kw, bandwidth=[2 * s for s in data["scales"]]), **smooth).fit(X, y)
    assert est.solver_ == "cg" and est.regime_ < GRAPH_REGIME and est.residual_ <= 1e-6
    # the graph terms' bound alone (4e6) would say "graph"; a kernel that 120 centres capture says "cg", which
    # converges: the measurement decides, not the gammas
    wide = dict(kw, bandwidth=[20 * s for s in data["scales"]], tol=1e-6)
    est = MVLLeastSquares(**wide, **GRAPH_KW).fit(X, y)
    assert est.solver_ == "cg" and est.regime_ < GRAPH_REGIME and est.residual_ <= 1e-6
