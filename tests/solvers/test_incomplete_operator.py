"""The scalable MVL-LS solvers "cg" and "nystrom" on incomplete views (:mod:`mvl.solvers.incomplete`,
:mod:`mvl.solvers.system`).

References, independent of the masked operators of :mod:`mvl.solvers.system`: the view-by-view incomplete solver
(:func:`mvl.solvers.incomplete.solve_structured_incomplete`) and the masked textbook system (the (u+l)m system of eq
67-68 restricted to the present (sample, view) pairs, one LU: :func:`mvl.solvers.incomplete.solve_dense_incomplete`),
with the graphs from the dense kNN code on each view's samples (:func:`mvl.missing_views.view_operators`); the
operator M of the incomplete objective written out densely (view-major Kronecker form) for B = Z^T M Z and for the
Nystrom-restricted minimiser. The two limits: nothing missing is the complete fit exactly; a view missing for every
sample is the fit without that view.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy import linalg
from sklearn.exceptions import ConvergenceWarning
from scipy.spatial.distance import cdist

from mvl import MVLLeastSquares
from mvl.estimators.base import encode_targets
from mvl.data.missing import apply_mask, apply_mask_kernels, mask_at_random
from mvl.data.synthetic import make_multiview_manifold
from mvl.missing_views import MaskedViewKernels, combination_weights, sparse_view_laplacians, view_operators
from mvl.solvers.incomplete import solve_dense_incomplete, solve_structured_incomplete
from mvl.kernel_blocks import ViewKernels
from mvl.solvers.system import MVLSystem
from mvl.solvers.nystrom import NystromBasis, solve_nystrom
from mvl.solvers.cg import solve_cg

N, T = 150, 50


def _gauss(X, Z, s):
    return np.exp(-cdist(X, Z, "sqeuclidean") / (2 * s * s))


@pytest.fixture(scope="module")
def data():
    """150 training points of three 5-feature views (3 classes on curves), 5 labelled per class, 50 test points;
    q = 0.3 of the (sample, view) entries missing at random, in training and test (every sample keeps a view)."""
    d = make_multiview_manifold(N + T, n_classes=3, n_views=3, n_features=5, random_state=1)
    views = [V[:N] for V in d.views]
    tests = [V[N:] for V in d.views]
    y = d.y[:N]
    labelled = np.concatenate([np.flatnonzero(y == k)[:5] for k in range(3)])
    scales = [0.8 * np.median(cdist(V, V)[np.triu_indices(N, 1)]) for V in views]
    mask = mask_at_random(N, 3, 0.3, 0)
    tmask = mask_at_random(T, 3, 0.3, 1)
    return dict(views=views, tests=tests, y=y, yt=d.y[N:], labelled=labelled, scales=scales, mask=mask,
                tmask=tmask)


def _low_level(data, m, P, power=2, gammas=(1e-4, 1e-3, 1e-2), c=None, w=None):
    """The masked kernel operator, the sparse per-view Laplacians, the system, and the references' inputs: the
    masked Gram matrices (m, n, n) and the dense graph operators of each view's samples (n_p, n_p)."""
    views, scales, mask = data["views"][:m], data["scales"][:m], data["mask"][:, :m].copy()
    mask[~mask.any(axis=1), 0] = True  # m = 2: every sample keeps a view
    lab, y = data["labelled"], data["y"]
    Y_L = encode_targets(y[lab] if P == 3 else (y[lab] == 0).astype(int), P)
    filled = [np.where(mask[:, [p]], V, 0.0) for p, V in enumerate(views)]
    kernels = MaskedViewKernels(ViewKernels(filled, "rbf", scales, max_memory=0, block=64), mask)
    Ls = sparse_view_laplacians(kernels, mask, 6)
    K = np.stack([_gauss(V, V, s) for V, s in zip(views, scales, strict=True)]) * mask.T[:, :, None] * mask.T[:, None]
    Ld = view_operators(K, mask, "normalized", 6, gamma_W=gammas[2], laplacian_power=power, graph_weights="kernel")
    c = np.full(m, 1.0 / m) if c is None else np.asarray(c, dtype=np.float64)
    gA, gB, gW = gammas
    system = MVLSystem(N, lab, Y_L, c, gamma_A=gA, gamma_B=gB, gamma_W=gW, laplacians=Ls, laplacian_power=power,
                       between_weights=w, mask=mask)
    return kernels, system, K, Ld, Y_L, c, mask


def _dense_M(system, Ld_full):
    """M of the incomplete objective (module docstring of mvl.solvers.incomplete), view-major (m n x m n), written out:
    labelled J (x) c~_i c~_i^T, between-view beta w_i (|V_i| I - 1 1^T) on the present views of sample i, within
    omega blockdiag(L^p) (on S_p, zero elsewhere)."""
    n, m, mask = system.n, system.m, system.mask
    Ct = combination_weights(system.c, mask)
    w = np.ones(n) if system.w is None else system.w
    M = np.zeros((m * n, m * n))
    idx = np.arange(n)
    cnt = mask.sum(axis=1)
    for p in range(m):
        for q in range(m):
            d = np.zeros(n)
            d[system.labelled] = Ct[system.labelled, p] * Ct[system.labelled, q]
            d += system.beta * w * ((cnt if p == q else 0) - 1.0) * mask[:, p] * mask[:, q]
            M[p * n + idx, q * n + idx] += d
        M[p * n:(p + 1) * n, p * n:(p + 1) * n] += system.omega * Ld_full[p]
    return M


def _embed(Ld, mask):
    out = []
    for p, L in enumerate(Ld):
        idx = np.flatnonzero(mask[:, p])
        E = np.zeros((mask.shape[0], mask.shape[0]))
        E[np.ix_(idx, idx)] = L
        out.append(E)
    return out


# ---------------------------------------------------------------- the solvers against the references


@pytest.mark.parametrize("m, P", [(2, 2), (3, 3)])
@pytest.mark.parametrize("gamma_B", [0.0, 1e-3])
@pytest.mark.parametrize("power", [1, 2])
def test_cg_equals_structured_and_dense_incomplete(data, m, P, gamma_B, power):
    """cg (tol 1e-12) = the view-by-view incomplete solver = the masked textbook LU, with a 6-NN graph per view
    (the references' graphs from the dense kNN code), c non-uniform, zero at the absent (sample, view) pairs."""
    c = [0.6, 0.4] if m == 2 else [0.5, 0.3, 0.2]
    w = np.linspace(0.5, 1.5, N) if gamma_B else None
    kernels, system, K, Ld, Y_L, c, mask = _low_level(data, m, P, power, (1e-4, gamma_B, 1e-2), c, w)
    a, info = solve_cg(system, kernels, NystromBasis(kernels, np.arange(0, N, 3), mask), tol=1e-12, max_iter=1000)
    assert info["converged"] and info["residual"] <= 1e-12
    ref = solve_structured_incomplete(K, mask, data["labelled"], Y_L, c, 1e-4, gamma_B, 1e-2, Ld, between_weights=w)
    dense = solve_dense_incomplete(K, mask, data["labelled"], Y_L, c, 1e-4, gamma_B, 1e-2, Ld, between_weights=w)
    scale = np.abs(ref).max()
    assert scale > 0.1 and np.all(a[~mask.T] == 0)
    assert np.abs(a - ref).max() <= 1e-8 * scale
    assert np.abs(a - dense).max() <= 1e-8 * scale


def test_sparse_view_laplacians_equal_the_dense_graphs(data):
    """The sparse kNN Laplacian of each view's samples, embedded in n x n, is the dense graph code's on S_p."""
    kernels, system, K, Ld, *_ = _low_level(data, 3, 3, power=1)
    mask = system.mask
    for p, (Ls, Lref) in enumerate(zip(system.L, _embed(Ld, mask), strict=True)):
        assert np.abs(Ls.toarray() - Lref).max() <= 1e-12
        assert Ls[~mask[:, p]].nnz == 0 and np.abs(Lref).max() > 0.1


@pytest.mark.parametrize("power", [1, 2, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_masked_projection_equals_dense_operator(data, power, weighted):
    """B = Z^T M Z on incomplete views against M written out densely (:func:`_dense_M`); M F likewise."""
    w = np.linspace(0.5, 1.5, N) if weighted else None
    kernels, system, K, Ld, Y_L, c, mask = _low_level(data, 3, 3, power, c=[0.5, 0.3, 0.2], w=w)
    basis = NystromBasis(kernels, np.arange(0, N, 4), mask)
    assert all(np.all(z[~mask[:, p]] == 0) for p, z in enumerate(basis.Z))
    M = _dense_M(system, _embed(Ld, mask))
    Zd = linalg.block_diag(*basis.Z)
    ref = Zd.T @ M @ Zd
    assert np.abs(system.projected(basis.Z) - ref).max() <= 1e-10 * np.abs(ref).max()
    F = np.random.default_rng(0).standard_normal((3, N, 2)) * mask.T[:, :, None]
    MF = (M @ F.reshape(3 * N, 2)).reshape(3, N, 2)
    assert np.abs(system.apply(F) - MF).max() <= 1e-12 * np.abs(MF).max()
    r = system.rhs()
    assert np.allclose(r[:, data["labelled"]], combination_weights(c, mask)[data["labelled"]].T[:, :, None] * Y_L)


def test_nystrom_with_every_point_is_exact(data):
    kernels, system, K, Ld, Y_L, c, mask = _low_level(data, 3, 3, c=[0.5, 0.3, 0.2])
    alpha = solve_nystrom(system, NystromBasis(kernels, np.arange(N), mask))
    ref = solve_structured_incomplete(K, mask, data["labelled"], Y_L, c, 1e-4, 1e-3, 1e-2, Ld)
    F, Fr = np.einsum("pij,pjk->pik", K, alpha), np.einsum("pij,pjk->pik", K, ref)
    assert np.abs(F - Fr).max() <= 1e-7 * np.abs(Fr).max()


def test_nystrom_minimises_the_restricted_incomplete_objective(data):
    """M < n: view p's coefficients live on the centres that have view p and solve the normal equations of the
    incomplete objective restricted to them, formed densely here (K_C^T M K_C + delta K_CC, M of _dense_M)."""
    kernels, system, K, Ld, Y_L, c, mask = _low_level(data, 3, 3, c=[0.5, 0.3, 0.2])
    rng = np.random.default_rng(1)
    cols = [np.sort(rng.choice(np.flatnonzero(mask[:, p]), 30, replace=False)) for p in range(3)]  # per view
    centres = np.unique(np.concatenate(cols))
    alpha = solve_nystrom(system, NystromBasis(kernels, centres, mask, cols))
    for p in range(3):
        assert np.all(alpha[p][~np.isin(centres, cols[p])] == 0) and np.all(alpha[p][np.isin(centres, cols[p])] != 0)
    KC = linalg.block_diag(*[K[p][:, cols[p]] for p in range(3)])
    KCC = linalg.block_diag(*[K[p][np.ix_(cols[p], cols[p])] for p in range(3)])
    M = _dense_M(system, _embed(Ld, mask))
    Yfull = np.zeros((N, 3))
    Yfull[data["labelled"]] = Y_L
    Ct = combination_weights(c, mask)
    r = np.concatenate([Ct[:, [p]] * Yfull for p in range(3)])
    H = KC.T @ M @ KC + system.delta * KCC
    sol = np.linalg.lstsq(H, KC.T @ r, rcond=1e-13)[0]
    F = np.einsum("pij,pjk->pik", K[:, :, centres], alpha).reshape(3 * N, 3)
    Fr = KC @ sol
    assert np.abs(F - Fr).max() <= 1e-6 * np.abs(Fr).max()


# ---------------------------------------------------------------- the estimator


def _labels(data):
    y = np.full(N, -1)
    y[data["labelled"]] = data["y"][data["labelled"]]
    return y


KW = dict(gamma_A=1e-4, gamma_B=1e-3, gamma_W=1e-2, n_neighbors=6, c=[0.5, 0.3, 0.2])


def test_estimator_cg_and_nystrom_equal_the_structured_incomplete_fit(data):
    """Feature views with NaN rows: cg (tol 1e-12) and nystrom (n_components >= n) give the decision values and
    predictions of solver="structured" (the view-by-view incomplete solve) on incomplete test points; the
    bandwidths come from each view's samples alike; fewer centres still classify sanely."""
    X, Xt = apply_mask(data["views"], data["mask"]), apply_mask(data["tests"], data["tmask"])
    y = _labels(data)
    ref = MVLLeastSquares(solver="structured", **KW).fit(X, y)
    cg = MVLLeastSquares(solver="cg", tol=1e-12, n_components=30, random_state=0, **KW).fit(X, y)
    ny = MVLLeastSquares(solver="nystrom", n_components=500, **KW).fit(X, y)
    Fr = ref.decision_function(Xt)
    for est in (cg, ny):
        np.testing.assert_array_equal(est.view_mask_, data["mask"])
        assert est.bandwidths_ == ref.bandwidths_
        assert np.abs(est.decision_function(Xt) - Fr).max() <= 1e-7 * np.abs(Fr).max()
        np.testing.assert_array_equal(est.predict(Xt), ref.predict(Xt))
        V, Vr = est.view_decision_function(Xt), ref.view_decision_function(Xt)
        np.testing.assert_array_equal(np.isnan(V), np.isnan(Vr))  # NaN: the view is missing
        assert np.isnan(Vr).any() and np.nanmax(np.abs(V - Vr)) <= 1e-7 * np.nanmax(np.abs(Vr))
    assert cg.solver_ == "cg" and cg.residual_ <= 1e-12 and np.all(cg.coef_[~data["mask"].T] == 0)
    acc = ref.score(Xt, data["yt"])
    assert acc >= 0.6  # chance: 1/3
    few = MVLLeastSquares(solver="nystrom", n_components=50, random_state=0, **KW).fit(X, y)
    assert few.score(Xt, data["yt"]) >= acc - 0.1
    # each view's 50 centres are drawn among its own samples; centres_ is their union
    per_view = [few.centres_[np.any(few.coef_[p] != 0, axis=1)] for p in range(3)]
    assert all(v.size == 50 and data["mask"][v, p].all() for p, v in enumerate(per_view))
    assert few.coef_.shape == (3, few.centres_.size, 3) and few.centres_.size > 50
    # a Pipeline's StandardScaler passes the NaN rows through (fitted on the present values)
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    Xa, Xta = np.hstack(X), np.hstack(Xt)
    pipe = make_pipeline(StandardScaler(), MVLLeastSquares(solver="cg", tol=1e-12, views=[5, 5, 5], **KW)).fit(Xa, y)
    direct = MVLLeastSquares(solver="structured", views=[5, 5, 5], **KW).fit(pipe[0].transform(Xa), y)
    Fd = direct.decision_function(pipe[0].transform(Xta))
    assert np.abs(pipe.decision_function(Xta) - Fd).max() <= 1e-7 * np.abs(Fd).max()


def test_estimator_precomputed_incomplete(data):
    """Precomputed Gram matrices with NaN rows and columns: cg and nystrom (n_components = n) = structured."""
    K = np.stack([_gauss(V, V, s) for V, s in zip(data["views"], data["scales"], strict=True)], axis=-1)
    Kt = np.stack([_gauss(T_, V, s) for T_, V, s in zip(data["tests"], data["views"], data["scales"], strict=True)],
                  axis=-1)
    Km = apply_mask_kernels(K, data["mask"])
    Ktm = Kt.copy()
    for p in range(3):
        Ktm[~data["tmask"][:, p], :, p] = np.nan
    y = _labels(data)
    ref = MVLLeastSquares(kernel="precomputed", solver="structured", **KW).fit(Km, y)
    Fr = ref.decision_function(Ktm)
    for solver, extra in (("cg", dict(tol=1e-12)), ("nystrom", dict(n_components=N))):
        est = MVLLeastSquares(kernel="precomputed", solver=solver, **extra, **KW).fit(Km, y)
        assert np.abs(est.decision_function(Ktm) - Fr).max() <= 1e-7 * np.abs(Fr).max()


def test_nothing_missing_is_the_complete_fit(data):
    """Complete views: the estimator's cg and nystrom take today's path (no mask) and give exactly the low-level
    complete solve; the masked system with an all-present mask solves the same problem."""
    from mvl.graph import sparse_knn_weights, sparse_laplacian

    X, y = data["views"], _labels(data)
    kw = dict(KW, bandwidth=data["scales"], laplacian_power=2)
    cg = MVLLeastSquares(solver="cg", tol=1e-10, n_components=30, random_state=0, **kw).fit(X, y)
    ny = MVLLeastSquares(solver="nystrom", n_components=40, random_state=0, **kw).fit(X, y)
    assert cg.view_mask_ is None and ny.view_mask_ is None
    kernels = ViewKernels(X, "rbf", data["scales"], max_memory=1e9)  # cg keeps the Gram matrices that fit
    on_demand = ViewKernels(X, "rbf", data["scales"], max_memory=0)  # nystrom computes its columns
    Ls = [sparse_laplacian(sparse_knn_weights(kernels, p, 6)) for p in range(3)]
    lab = np.sort(data["labelled"])  # the estimator's order of the labelled samples
    Y_L = encode_targets(data["y"][lab], 3)
    args = (N, lab, Y_L, np.array(KW["c"]))
    gam = dict(gamma_A=1e-4, gamma_B=1e-3, gamma_W=1e-2, laplacians=Ls, laplacian_power=2)
    system = MVLSystem(*args, **gam)
    rng = np.random.default_rng(0)
    cent_cg = np.sort(np.random.RandomState(0).choice(N, 30, replace=False))
    cent_ny = np.sort(np.random.RandomState(0).choice(N, 40, replace=False))
    a, _ = solve_cg(system, kernels, NystromBasis(kernels, cent_cg), tol=1e-10)
    np.testing.assert_array_equal(cg.coef_, a)
    np.testing.assert_array_equal(ny.coef_, solve_nystrom(system, NystromBasis(on_demand, cent_ny)))
    full = np.ones((N, 3), dtype=bool)
    masked = MVLSystem(*args, **gam, mask=full)
    F = rng.standard_normal((3, N, 3))
    assert np.abs(masked.apply(F) - system.apply(F)).max() <= 1e-12 * np.abs(system.apply(F)).max()
    B = system.projected(NystromBasis(kernels, cent_ny).Z)
    assert np.abs(masked.projected(NystromBasis(kernels, cent_ny, full).Z) - B).max() <= 1e-12 * np.abs(B).max()
    a2, _ = solve_cg(masked, MaskedViewKernels(kernels, full), NystromBasis(kernels, cent_cg, full), tol=1e-10)
    assert np.abs(a2 - a).max() <= 1e-8 * np.abs(a).max()


@pytest.mark.parametrize("solver, extra", [("cg", dict(tol=1e-12, n_components=30)),
                                           ("nystrom", dict(n_components=N))])
def test_view_missing_for_every_sample_is_the_fit_without_it(data, solver, extra):
    """View 2 missing for every training sample (default c): the fit of views 0 and 1 alone, on test points with
    or without view 2 (it carries no function)."""
    mask = data["mask"].copy()
    mask[:, 2] = False
    mask[~mask.any(axis=1), 0] = True
    X = apply_mask(data["views"], mask)
    kw = dict(gamma_A=1e-4, gamma_B=1e-3, gamma_W=1e-2, n_neighbors=6, random_state=0, solver=solver, **extra)
    y = _labels(data)
    est = MVLLeastSquares(**kw).fit(X, y)
    two = MVLLeastSquares(**kw).fit(X[:2], y)
    tmask = data["tmask"].copy()
    tmask[~tmask[:, :2].any(axis=1), 0] = True  # every test point keeps view 0 or 1
    assert not tmask[:, :2].all() and tmask[:, 2].any()
    for Xt in (data["tests"], apply_mask(data["tests"], tmask)):
        F, F2 = est.decision_function(Xt), two.decision_function(Xt[:2])
        assert np.abs(F - F2).max() <= 1e-7 * np.abs(F2).max()
        np.testing.assert_array_equal(est.predict(Xt), two.predict(Xt[:2]))


def test_errors_and_auto(data, monkeypatch):
    """A NaN inside a present view is still an error with cg and nystrom; solver "graph" refuses missing views;
    "auto" on incomplete views picks what choose_solver documents, with "cg" in place of the graph regime's solver
    and a GraphRegimeFallbackWarning that names the measured regime."""
    import mvl.solvers.auto as ls
    from mvl.solvers.auto import regime_ratio

    X, y = apply_mask(data["views"], data["mask"]), _labels(data)
    Xp = [V.copy() for V in X]
    i = np.flatnonzero(data["mask"][:, 1])[0]
    Xp[1][i, 0] = np.nan
    for solver in ("cg", "nystrom"):
        with pytest.raises(ValueError, match=rf"view 1 of sample\(s\) \[{i}\].*partial NaN"):
            MVLLeastSquares(solver=solver, **KW).fit(Xp, y)
    with pytest.raises(ValueError, match="'graph' .*need complete views"):
        MVLLeastSquares(solver="graph", **KW).fit(X, y)
    assert MVLLeastSquares(**KW).fit(X, y).solver_ == "structured"  # small n
    monkeypatch.setattr(ls, "AUTO_STRUCTURED_MAX", 10)
    graph_regime = dict(KW, gamma_W=0.25, tol=1e-4, max_iter=5000, max_memory=1e5, n_components=30, random_state=0)
    n, l = N, data["labelled"].size
    assert ls.choose_solver("auto", "rbf", n, 3, l, 1e5, regime_ratio(1e-4, 1e-3, 0.25, 2, 3)) == "vecchia_direct"
    with pytest.warns(ls.GraphRegimeFallbackWarning, match=r'incomplete views.*falling back to "cg".*[Ii]mpute'):
        est = MVLLeastSquares(**graph_regime).fit(X, y)
    assert est.solver_ == "cg" and est.view_mask_ is not None and est.regime_ >= ls.GRAPH_REGIME
    with warnings.catch_warnings():
        warnings.simplefilter("error", ls.GraphRegimeFallbackWarning)  # not the graph regime: nothing to say
        est = MVLLeastSquares(**dict(graph_regime, gamma_W=1e-4)).fit(X, y)
    assert est.solver_ == "cg" and est.regime_ < ls.GRAPH_REGIME
    monkeypatch.setattr(ls, "AUTO_CG_MAX", 100)
    assert MVLLeastSquares(**dict(graph_regime, gamma_W=1e-4)).fit(X, y).solver_ == "nystrom"


# ---------------------------------------------------------------- cross-validation


def test_cv_on_incomplete_views_equals_grid_search(data):
    """MVLLeastSquaresCV on incomplete feature views: every grid point's mean fold accuracy equals scikit-learn's
    GridSearchCV over MVLLeastSquares (each point and fold a separate incomplete fit) on the same folds, and the
    refit is the estimator at the best point; precomputed kernels with NaN rows and columns: the fold scores of
    separate precomputed fits."""
    from sklearn.model_selection import GridSearchCV

    from mvl import MVLLeastSquaresCV
    from mvl.estimators.model_selection import SemiSupervisedCV

    X, y = np.hstack(apply_mask(data["views"], data["mask"])), _labels(data)
    grid = dict(gammas_A=(1e-4, 1e-2), gammas_B=(0.0, 1e-3), gammas_W=(0.0, 1e-2), graphs=((5, 1), (8, 2)))
    cv = MVLLeastSquaresCV(views=[5, 5, 5], cv=3, **grid).fit(X, y)
    ref = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # swamped fits at the grid's corners warn alike in both
        for nn, power in grid["graphs"]:
            est = MVLLeastSquares(views=[5, 5, 5], solver="structured", n_neighbors=nn, laplacian_power=power)
            gs = GridSearchCV(est, dict(gamma_A=[1e-4, 1e-2], gamma_B=[0.0, 1e-3], gamma_W=[0.0, 1e-2]),
                              cv=SemiSupervisedCV(cv=3)).fit(X, y)
            ref.append(gs.cv_results_["mean_test_score"])
    ref = np.concatenate(ref)
    np.testing.assert_allclose(cv.cv_results_["mean_test_score"], ref, rtol=0, atol=1e-12)
    assert np.ptp(ref) > 0.1  # the grid points differ: a wrong fold solve would show
    best = MVLLeastSquares(views=[5, 5, 5], **cv.best_params_).fit(X, y)
    Xt = np.hstack(apply_mask(data["tests"], data["tmask"]))
    np.testing.assert_array_equal(cv.decision_function(Xt), best.decision_function(Xt))
    # precomputed
    K = np.stack([_gauss(V, V, s) for V, s in zip(data["views"], data["scales"], strict=True)], axis=-1)
    Km = apply_mask_kernels(K, data["mask"])
    small = dict(gammas_A=(1e-4,), gammas_B=(0.0, 1e-3), gammas_W=(1e-2,), graphs=((6, 2),))
    pre = MVLLeastSquaresCV(kernel="precomputed", cv=3, **small).fit(Km, y)
    folds = list(SemiSupervisedCV(cv=3).split(Km, y))
    for k, gb in enumerate((0.0, 1e-3)):
        acc = [MVLLeastSquares(kernel="precomputed", gamma_A=1e-4, gamma_B=gb, gamma_W=1e-2, n_neighbors=6,
                               laplacian_power=2).fit(Km[np.ix_(tr, tr)], y[tr]).score(Km[np.ix_(te, tr)], y[te])
               for tr, te in folds]
        assert abs(pre.cv_results_["mean_test_score"][k] - np.mean(acc)) <= 1e-12


@pytest.mark.parametrize("kernel", ["linear", "chi2"])
def test_other_kernels(data, kernel):
    """cg and nystrom (n_components = n) on incomplete views with linear and chi2 kernels (the missing rows filled
    with 0 inside the operator must stay out of every product) = the structured incomplete fit."""
    views = [np.abs(V) for V in data["views"]] if kernel == "chi2" else data["views"]
    tests = [np.abs(V) for V in data["tests"]] if kernel == "chi2" else data["tests"]
    X, Xt = apply_mask(views, data["mask"]), apply_mask(tests, data["tmask"])
    y = _labels(data)
    kw = dict(KW, kernel=kernel, gamma_A=1e-2 if kernel == "linear" else 1e-4)
    ref = MVLLeastSquares(solver="structured", **kw).fit(X, y)
    Fr = ref.decision_function(Xt)
    for solver, extra in (("cg", dict(tol=1e-12, max_iter=3000)), ("nystrom", dict(n_components=N))):
        with warnings.catch_warnings():
            # a linear kernel of 5 features has rank 5: CG in <.,.>_K leaves the residual of (68) in the null space
            # of K (which no prediction sees) where its polynomial puts it, complete views or not, and may warn
            warnings.simplefilter("ignore" if kernel == "linear" else "error", ConvergenceWarning)
            est = MVLLeastSquares(solver=solver, random_state=0, **extra, **kw).fit(X, y)
        assert np.abs(est.decision_function(Xt) - Fr).max() <= 1e-7 * np.abs(Fr).max()


def test_the_graph_regime_on_incomplete_views_is_measured_per_view_and_never_silent(data, monkeypatch):
    """The regime of incomplete views is each view's trace fraction on the samples that have it (the missing rows'
    filler never enters; on complete views it is the measurement of the complete fit); beyond AUTO_CG_MAX the
    warning names "nystrom"."""
    import mvl.solvers.auto as ls
    from mvl.kernel_blocks import ViewKernels
    from mvl.solvers.auto import measured_regime, nystrom_missed

    views, mask = data["views"], data["mask"]
    kernels = ViewKernels([np.where(mask[:, [p]], V, 0.0) for p, V in enumerate(views)], "rbf", [1.0, 1.0, 1.0])
    full = np.ones_like(mask)
    assert nystrom_missed(kernels, 30, 0, mask=full) == nystrom_missed(kernels, 30, 0)
    other = ViewKernels([np.where(mask[:, [p]], V, 50.0) for p, V in enumerate(views)], "rbf", [1.0, 1.0, 1.0])
    assert nystrom_missed(other, 30, 0, mask=mask) == pytest.approx(nystrom_missed(kernels, 30, 0, mask=mask),
                                                                    rel=1e-9)
    assert measured_regime(kernels, 1e-4, 0.0, 0.25, 2, 30, 0, mask=mask) == pytest.approx(
        nystrom_missed(kernels, 30, 0, mask=mask) * 1e4)
    monkeypatch.setattr(ls, "AUTO_STRUCTURED_MAX", 10)
    monkeypatch.setattr(ls, "AUTO_CG_MAX", 100)
    graph_regime = dict(KW, gamma_W=0.25, max_memory=1e5, n_components=30, random_state=0)
    with pytest.warns(ls.GraphRegimeFallbackWarning, match=r'measured .* falling back to "nystrom".*"structured"'):
        est = MVLLeastSquares(**graph_regime).fit(apply_mask(views, mask), _labels(data))
    assert est.solver_ == "nystrom" and est.regime_ >= ls.GRAPH_REGIME
