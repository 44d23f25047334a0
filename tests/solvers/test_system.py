"""The scalable MVL-LS solvers against independent references.

- the tiled kernel products and the sparse kNN Laplacians vs dense matrices from scipy's cdist and the dense graph
  code;
- solver="cg" at a tight tol vs the structured solver and the dense textbook system (eq 67-68, one LU);
- solver="nystrom" with every training point as a centre vs the structured solver, and with M < n vs a dense solve
  of the M-space problem written here from the objective (10)/(53) (normal equations in the coefficients on the
  centres, operators formed as dense Kronecker products): the same minimiser and objective value.
"""

from __future__ import annotations


import warnings

import numpy as np
import pytest
from scipy import linalg
from scipy.spatial.distance import cdist
from sklearn.exceptions import ConvergenceWarning

from mvl import MVLLeastSquares
from mvl.estimators.base import encode_targets
from mvl.data.synthetic import make_multiview_manifold
from mvl.graph import knn_weights, laplacian, sparse_knn_weights, sparse_laplacian
from mvl.kernel_blocks import ViewKernels
from mvl.kernels import chi2_distances
from mvl.solvers.dense import solve_dense
from mvl.solvers.structured import solve_structured
from mvl.memory import InsufficientMemoryError
from mvl.solvers.system import MVLSystem
from mvl.solvers.nystrom import NystromBasis, solve_nystrom
from mvl.solvers.cg import solve_cg


def _gauss(X, Z, s):
    return np.exp(-cdist(X, Z, "sqeuclidean") / (2 * s * s))


@pytest.fixture(scope="module")
def manifold():
    """300 training points of three 6-feature views (4 classes on curves), 24 labelled, 80 test points."""
    d = make_multiview_manifold(380, n_classes=4, n_views=3, n_features=6, random_state=3)
    views = [V[:300] for V in d.views]
    tests = [V[300:] for V in d.views]
    y = d.y[:300]
    labelled = np.concatenate([np.flatnonzero(y == k)[:6] for k in range(4)])
    scales = [0.7 * np.median(cdist(V, V)[np.triu_indices(300, 1)]) for V in views]
    K = np.stack([_gauss(V, V, s) for V, s in zip(views, scales, strict=False)])
    return dict(views=views, tests=tests, y=y, labelled=labelled, scales=scales, K=K, d=d)


# ---------------------------------------------------------------- kernel products and graphs


@pytest.mark.parametrize("kind", ["rbf", "chi2", "linear"])
def test_tiled_kernel_products_equal_dense_kernels(kind):
    rng = np.random.default_rng(0)
    views = [rng.random((157, 5)), rng.random((157, 3))]  # 157: tiles of 64 leave a ragged last tile
    scales = [0.8, 1.3] if kind != "linear" else None
    if kind == "rbf":
        K = [_gauss(V, V, s) for V, s in zip(views, scales, strict=False)]
    elif kind == "chi2":
        K = [np.exp(-chi2_distances(V) / s) for V, s in zip(views, scales, strict=False)]
    else:
        K = [V @ V.T for V in views]
    Z = rng.standard_normal((2, 157, 4))
    expect = np.stack([k @ z for k, z in zip(K, Z, strict=False)])
    tiled = ViewKernels(views, kind, scales, max_memory=0, block=64, threads=2)
    stored = ViewKernels(views, kind, scales, max_memory=1e9)
    assert kind == "linear" or (tiled.gram is None and stored.gram is not None)
    np.testing.assert_allclose(tiled.matmul(Z), expect, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(stored.matmul(Z), expect, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tiled.columns(1, [3, 7]), K[1][:, [3, 7]], rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("weights", ["kernel", "binary"])
@pytest.mark.parametrize("normalized", [True, False])
def test_sparse_knn_laplacian_equals_dense_graph(manifold, weights, normalized):
    views, scales, K = manifold["views"], manifold["scales"], manifold["K"]
    for kernels in (ViewKernels(views, "rbf", scales, max_memory=0), ViewKernels(gram=K)):
        for p in range(3):
            W = sparse_knn_weights(kernels, p, 7, weights)
            Wd = knn_weights(K[p], 7, weights=weights)
            np.testing.assert_allclose(W.toarray(), Wd, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(sparse_laplacian(W, normalized).toarray(), laplacian(Wd, normalized),
                                       rtol=1e-10, atol=1e-12)


def test_hnsw_graph_equals_exact_graph(manifold):
    """The approximate (HNSW) kNN graph of a Gaussian view = the dense graph of knn_weights on this problem (300
    points: every neighbour found), edge weights from float64 distances; the same graph on a rebuild (seeded,
    single-threaded construction); the algorithm switch is checked."""
    views, scales, K = manifold["views"], manifold["scales"], manifold["K"]
    kernels = ViewKernels(views, "rbf", scales, max_memory=0)
    for p in range(3):
        W = sparse_knn_weights(kernels, p, 7, algorithm="hnsw")
        np.testing.assert_allclose(W.toarray(), knn_weights(K[p], 7), rtol=1e-12, atol=1e-14)
        again = sparse_knn_weights(kernels, p, 7, algorithm="hnsw")
        assert (W != again).nnz == 0
    with pytest.raises(ValueError, match="algorithm"):
        sparse_knn_weights(kernels, 0, 7, algorithm="annoy")


def test_auto_neighbours_above_threshold(manifold, monkeypatch):
    """Above APPROXIMATE_NEIGHBORS_MIN points "auto" uses HNSW; without hnswlib it falls back to the exact graph
    with a warning that names the extra to install."""
    import mvl.graph as graph

    views, scales, K = manifold["views"], manifold["scales"], manifold["K"]
    kernels = ViewKernels(views, "rbf", scales, max_memory=0)
    monkeypatch.setattr(graph, "APPROXIMATE_NEIGHBORS_MIN", 100)
    calls = []
    real = graph.hnsw_neighbors
    monkeypatch.setattr(graph, "hnsw_neighbors", lambda X, k: calls.append(k) or real(X, k))
    W = sparse_knn_weights(kernels, 0, 7)
    assert calls == [7]
    np.testing.assert_allclose(W.toarray(), knn_weights(K[0], 7), rtol=1e-12, atol=1e-14)
    monkeypatch.setattr(graph, "_have_hnswlib", lambda: False)
    with pytest.warns(UserWarning, match=r"mvl\[scale\]"):
        W = sparse_knn_weights(kernels, 0, 7)
    assert calls == [7]
    np.testing.assert_allclose(W.toarray(), knn_weights(K[0], 7), rtol=1e-12, atol=1e-14)


def test_hnsw_neighbours_recall_on_manifold_data():
    """Recall of the HNSW neighbours against scikit-learn's exact ones on 20,000 points of the scale benchmark's
    kind (20 noisy features of a 1-d manifold): >= 0.999 of the 10 nearest, distances exact where found."""
    from sklearn.neighbors import NearestNeighbors

    from mvl.graph import hnsw_neighbors

    X = make_multiview_manifold(20_000, n_classes=4, n_views=1, n_features=20, random_state=5).views[0]
    idx, dist = hnsw_neighbors(X, 10)
    d_ex, i_ex = NearestNeighbors(n_neighbors=11).fit(X).kneighbors(X)
    recall = np.mean([len(set(a) & set(b)) / 11 for a, b in zip(idx, i_ex, strict=True)])
    assert recall >= 0.999
    np.testing.assert_allclose(dist, np.linalg.norm(X[idx] - X[:, None, :], axis=2), rtol=1e-12, atol=1e-12)
    assert np.all(np.diff(dist, axis=1) >= 0)


# ---------------------------------------------------------------- solvers


def _problem(manifold, power=2, gammas=(1e-4, 1e-3, 1e-2), c=(0.5, 0.3, 0.2), weights=None):
    views, _K, y, lab = manifold["views"], manifold["K"], manifold["y"], manifold["labelled"]
    Y_L = encode_targets(y[lab], 4)
    kernels = ViewKernels(views, "rbf", manifold["scales"], max_memory=0, block=128)
    Ls = [sparse_laplacian(sparse_knn_weights(kernels, p, 8)) for p in range(3)]
    Ld = np.stack([np.linalg.matrix_power(Lp.toarray(), power) for Lp in Ls])
    c = np.asarray(c)
    gamma_A, gamma_B, gamma_W = gammas
    system = MVLSystem(300, lab, Y_L, c, gamma_A=gamma_A, gamma_B=gamma_B, gamma_W=gamma_W, laplacians=Ls,
                       laplacian_power=power, between_weights=weights)
    return kernels, system, Ld, Y_L, c


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
    kernels, system, Ld, Y_L, c = _problem(manifold, power=power, weights=w)
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


@pytest.mark.parametrize("between", [None, "unlabelled"])
def test_cg_equals_structured_and_dense(manifold, between):
    K, lab = manifold["K"], manifold["labelled"]
    w = None
    if between == "unlabelled":
        w = np.ones(300)
        w[lab] = 0.0  # co-regularization on the unlabelled points (Section 3.4)
    kernels, system, Ld, Y_L, c = _problem(manifold, weights=w)
    basis = NystromBasis(kernels, np.arange(0, 300, 3))
    a, info = solve_cg(system, kernels, basis, tol=1e-12, max_iter=500)
    assert info["converged"] and info["residual"] <= 1e-12
    ref = solve_structured(K, lab, Y_L, c, 1e-4, 1e-3, 1e-2, Ld, between_weights=w)
    dense = solve_dense(K, lab, Y_L, c, 1e-4, 1e-3, 1e-2, Ld, between_weights=w)
    scale = np.abs(ref).max()
    assert np.abs(a - ref).max() <= 1e-8 * scale
    assert np.abs(a - dense).max() <= 1e-8 * scale


def test_cg_warm_start_and_iteration_limit(manifold):
    kernels, system, Ld, Y_L, c = _problem(manifold)
    basis = NystromBasis(kernels, np.arange(0, 300, 10))
    a, info = solve_cg(system, kernels, basis, tol=1e-10, max_iter=500)
    a2, info2 = solve_cg(system, kernels, basis, tol=1e-10, max_iter=500, x0=a)
    assert info2["n_iter"] <= 1 and np.abs(a2 - a).max() <= 1e-9 * np.abs(a).max()
    _, short = solve_cg(system, kernels, basis, tol=1e-14, max_iter=2)
    assert not short["converged"] and short["n_iter"] == 2 and short["residual"] > 1e-14


def test_nystrom_with_every_point_is_exact(manifold):
    K, lab = manifold["K"], manifold["labelled"]
    kernels, system, Ld, Y_L, c = _problem(manifold)
    alpha = solve_nystrom(system, NystromBasis(kernels, np.arange(300)))
    ref = solve_structured(K, lab, Y_L, c, 1e-4, 1e-3, 1e-2, Ld)
    F, Fr = np.einsum("pij,pjk->pik", K, alpha), np.einsum("pij,pjk->pik", K, ref)
    assert np.abs(F - Fr).max() <= 1e-7 * np.abs(Fr).max()


def _objective(K, Ld, lab, Y_L, c, gammas, A):
    """The objective (10)/(53) times l, from the coefficients A (m, n, P) on all points, written out."""
    gA, gB, gW = gammas
    l, m = len(lab), len(c)
    F = np.einsum("pij,pjk->pik", K, A)
    S = np.tensordot(c, F, axes=(0, 0))
    fit = np.sum((Y_L - S[lab]) ** 2)
    rkhs = sum(np.sum(A[p] * F[p]) for p in range(m))
    between = sum(np.sum((F[p] - F[q]) ** 2) for p in range(m) for q in range(p + 1, m))
    within = sum(np.sum(F[p] * (Ld[p] @ F[p])) for p in range(m))
    return fit + l * gA * rkhs + l * gB * between + l * gW * within


def test_nystrom_minimises_the_restricted_objective(manifold):
    """M < n: the coefficients on the centres solve the normal equations of the restricted objective, formed here
    densely with Kronecker products (Hessian K_C^T Mop K_C + delta blockdiag(K_CC))."""
    K, lab = manifold["K"], manifold["labelled"]
    gammas = (1e-4, 1e-3, 1e-2)
    kernels, system, Ld, Y_L, c = _problem(manifold, gammas=gammas)
    centres = np.sort(np.random.default_rng(1).choice(300, 60, replace=False))
    alpha = solve_nystrom(system, NystromBasis(kernels, centres))
    n, m, M, l = 300, 3, 60, len(lab)
    J = np.zeros((n, n))
    J[lab, lab] = 1.0
    Mm = m * np.eye(m) - np.ones((m, m))
    Mop = np.kron(np.outer(c, c), J) + l * gammas[1] * np.kron(Mm, np.eye(n))
    Mop += l * gammas[2] * np.block([[Ld[p] if p == q else np.zeros((n, n)) for q in range(m)] for p in range(m)])
    KC = np.block([[K[p][:, centres] if p == q else np.zeros((n, M)) for q in range(m)] for p in range(m)])
    KCC = np.block([[K[p][np.ix_(centres, centres)] if p == q else np.zeros((M, M)) for q in range(m)]
                    for p in range(m)])
    Yfull = np.zeros((n, 4))
    Yfull[lab] = Y_L
    r = np.concatenate([c[p] * Yfull for p in range(m)])  # r_p = c_p J Y, view-major
    H = KC.T @ Mop @ KC + l * gammas[0] * KCC
    ref = np.linalg.lstsq(H, KC.T @ r, rcond=1e-13)[0].reshape(m, M, 4)
    full = np.zeros((m, n, 4))
    full[:, centres] = alpha
    ref_full = np.zeros((m, n, 4))
    ref_full[:, centres] = ref
    F, Fr = np.einsum("pij,pjk->pik", K, full), np.einsum("pij,pjk->pik", K, ref_full)
    assert np.abs(F - Fr).max() <= 1e-6 * np.abs(Fr).max()
    J_ny = _objective(K, Ld, lab, Y_L, c, gammas, full)
    J_ref = _objective(K, Ld, lab, Y_L, c, gammas, ref_full)
    assert abs(J_ny - J_ref) <= 1e-8 * abs(J_ref)
    # and it is an approximation: the exact (structured) solution has a lower objective
    exact = solve_structured(K, lab, Y_L, c, *gammas, Ld)
    assert _objective(K, Ld, lab, Y_L, c, gammas, exact) < J_ref


# ---------------------------------------------------------------- the estimator


def _labels(manifold):
    y = np.full(300, -1)
    y[manifold["labelled"]] = manifold["y"][manifold["labelled"]]
    return y


def test_estimator_solvers_agree(manifold):
    X = np.hstack(manifold["views"])
    Xt = np.hstack(manifold["tests"])
    y = _labels(manifold)
    kw = dict(kernel="rbf", views=[6, 6, 6], bandwidth=manifold["scales"], gamma_A=1e-4, gamma_B=1e-3,
              gamma_W=1e-2, n_neighbors=8, laplacian_power=2, c=[0.5, 0.3, 0.2])
    ref = MVLLeastSquares(solver="structured", **kw).fit(X, y)
    cg = MVLLeastSquares(solver="cg", tol=1e-12, n_components=50, random_state=0, **kw).fit(X, y)
    ny = MVLLeastSquares(solver="nystrom", n_components=300, **kw).fit(X, y)
    Fr = ref.decision_function(Xt)
    for est in (cg, ny):
        assert np.abs(est.decision_function(Xt) - Fr).max() <= 1e-7 * np.abs(Fr).max()
        np.testing.assert_array_equal(est.predict(Xt), ref.predict(Xt))
    assert cg.solver_ == "cg" and cg.n_iter_ >= 1 and cg.residual_ <= 1e-12
    np.testing.assert_allclose(cg.view_decision_function(Xt), ref.view_decision_function(Xt), rtol=0,
                               atol=1e-7 * np.abs(Fr).max())
    # precomputed kernels: the same solvers on the Gram matrices
    K = np.moveaxis(manifold["K"], 0, -1)
    Kt = np.stack([_gauss(T, V, s) for T, V, s in zip(manifold["tests"], manifold["views"], manifold["scales"],
                                                      strict=True)],
                  axis=-1)
    kwp = {k: v for k, v in kw.items() if k not in ("views", "bandwidth", "kernel")}
    for solver, extra in (("cg", dict(tol=1e-12)), ("nystrom", dict(n_components=300))):
        est = MVLLeastSquares(kernel="precomputed", solver=solver, **extra, **kwp).fit(K, y)
        assert np.abs(est.decision_function(Kt) - Fr).max() <= 1e-7 * np.abs(Fr).max()


def test_estimator_errors_and_warnings(manifold, monkeypatch):
    X = np.hstack(manifold["views"])
    y = _labels(manifold)
    base = dict(kernel="rbf", views=[6, 6, 6], gamma_W=1e-2)
    with pytest.raises(ValueError, match="needs a sparse kNN graph"):  # the paper's dense graph W = K
        MVLLeastSquares(solver="cg", n_neighbors=None, **base).fit(X, y)
    with pytest.raises(ValueError, match="laplacian must be"):
        MVLLeastSquares(solver="nystrom", n_neighbors=5, laplacian=np.eye(300), **base).fit(X, y)
    for bad in (dict(tol=0), dict(max_iter=0), dict(n_components=2.5), dict(max_memory=-1)):
        with pytest.raises(ValueError):
            MVLLeastSquares(solver="cg", n_neighbors=5, **bad, **base).fit(X, y)
    with pytest.warns(ConvergenceWarning, match="max_iter = 1 iterations at relative residual"):
        MVLLeastSquares(solver="cg", n_neighbors=5, max_iter=1, tol=1e-12, **base).fit(X, y)
    # the structured solve that would not fit stops before allocating and names the way out
    import mvl.memory

    monkeypatch.setattr(mvl.memory, "available_memory", lambda: 1_000_000)
    with pytest.raises(InsufficientMemoryError, match=r'needs about .* solver="cg" .* solver="nystrom"'):
        MVLLeastSquares(solver="structured", n_neighbors=5, **base).fit(X, y)


def test_generator_is_seeded_balanced_and_its_maps_do_not_depend_on_n():
    a = make_multiview_manifold(101, n_classes=4, n_views=2, n_features=5, random_state=7)
    b = make_multiview_manifold(101, n_classes=4, n_views=2, n_features=5, random_state=7)
    assert a.X.shape == (101, 10) and a.view_sizes == [5, 5] and a.latent.shape == (101, 3)
    np.testing.assert_array_equal(a.X, b.X)
    assert np.bincount(a.y).tolist() == [26, 25, 25, 25]
    # the same latent point maps to the same noiseless features at any n (the view maps are drawn first)
    c = make_multiview_manifold(50, n_classes=4, n_views=2, n_features=5, noise=0.0, random_state=7)
    a0 = make_multiview_manifold(101, n_classes=4, n_views=2, n_features=5, noise=0.0, random_state=7)
    rng = np.random.default_rng(7)
    W1, b1, W2 = rng.standard_normal((3, 10)), rng.standard_normal(10), rng.standard_normal((10, 5)) / np.sqrt(10)
    for data in (c, a0):
        np.testing.assert_allclose(data.views[0], np.tanh(np.tanh(data.latent @ W1 + b1) @ W2), atol=1e-12)
    with pytest.raises(ValueError):
        make_multiview_manifold(1, n_classes=2)


def test_optc_on_the_scalable_solvers_equals_the_structured_optc(manifold):
    """Section 6's alternation with the f-step by "nystrom" (every point a centre), by "cg" and by "graph" (tight
    tol): the same objective (84) after every iteration, the same c and outputs as the structured optC."""
    from mvl import MVLLeastSquaresOptC

    X = np.hstack(manifold["views"])
    Xt = np.hstack(manifold["tests"])
    y = _labels(manifold)
    kw = dict(kernel="rbf", views=[6, 6, 6], bandwidth=manifold["scales"], gamma_A=1e-4, gamma_B=1e-3,
              gamma_W=1e-2, n_neighbors=8, n_restarts=3, n_iter=6, random_state=2)
    ref = MVLLeastSquaresOptC(solver="structured", **kw).fit(X, y)
    Fr = ref.decision_function(Xt)
    for solver, extra in (("nystrom", dict(n_components=300)), ("cg", dict(cg_tol=1e-11, n_components=60)),
                          ("graph", dict(cg_tol=1e-11, n_components=60))):
        est = MVLLeastSquaresOptC(solver=solver, **extra, **kw).fit(X, y)
        assert est.solver_ == solver
        np.testing.assert_allclose(est.objective_history_, ref.objective_history_, rtol=1e-8, atol=1e-12)
        np.testing.assert_allclose(est.c_, ref.c_, atol=1e-8)
        assert np.abs(est.decision_function(Xt) - Fr).max() <= 1e-7 * np.abs(Fr).max()
        assert est.best_restart_ == ref.best_restart_


def test_optc_graph_solver_in_the_graph_regime(manifold):
    """The graph regime (gamma_W / gamma_A = 1e6, gamma_B = 0: M singular): optC with the f-step by solver="graph"
    against the structured optC (objective history, c, decision values)."""
    from mvl import MVLLeastSquaresOptC

    X = np.hstack(manifold["views"])
    Xt = np.hstack(manifold["tests"])
    y = _labels(manifold)
    kw = dict(kernel="rbf", views=[6, 6, 6], bandwidth=manifold["scales"], gamma_A=1e-6, gamma_B=0.0, gamma_W=1.0,
              n_neighbors=8, laplacian_power=2, n_restarts=2, n_iter=4, random_state=2)
    ref = MVLLeastSquaresOptC(solver="structured", **kw).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # every f-step converges
        est = MVLLeastSquaresOptC(solver="graph", cg_tol=1e-16, cg_max_iter=2000, n_components=100, **kw).fit(X, y)
    assert est.solver_ == "graph"
    np.testing.assert_allclose(est.objective_history_, ref.objective_history_, rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(est.c_, ref.c_, atol=1e-6)
    Fr = ref.decision_function(Xt)
    assert np.abs(est.decision_function(Xt) - Fr).max() <= 1e-5 * np.abs(Fr).max()
    np.testing.assert_array_equal(est.predict(Xt), ref.predict(Xt))
