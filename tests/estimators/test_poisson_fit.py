"""MVL-LS with the Poisson-type data terms (``loss=``, mvl.estimators.poisson_fit): the estimator against the dense
textbook system on the self-tuned graph built by brute force, its graph limit against graphlearning's Poisson
learning, the induction rule against a brute-force implementation, and the choice of ``loss="auto"``."""

from __future__ import annotations

import numpy as np
import pytest

from mvl import MVLLeastSquares
from mvl.estimators.base import AUTO_GAMMA_A
from mvl.estimators.poisson_fit import (AUTO_LABELS_PER_CLASS, KERNEL_SHARE_MAX, POISSON_NEIGHBORS, poisson_gammas,
                                        resolve_loss)
from mvl.solvers.poisson import fit_decision, solve_dense


def _data(n=60, P=3, seed=0, labels_per_class=2, spread=3.0):
    """Two feature views of P Gaussian clusters; ``labels_per_class`` labelled points per class, the rest -1."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % P
    centres = rng.normal(scale=spread, size=(P, 5))
    X = centres[y] + rng.normal(size=(n, 5))
    yy = np.full(n, -1)
    for c in range(P):
        yy[np.flatnonzero(y == c)[:labels_per_class]] = c
    return X, y, yy


def _brute_graph(X, k):
    """The standardised concatenated columns and D - W of graphlearning's self-tuned k-NN weights, plain numpy."""
    sd = X.std(axis=0)
    Z = (X - X.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    D = np.sqrt(((Z[:, None] - Z[None]) ** 2).sum(-1))
    n = len(Z)
    W = np.zeros((n, n))
    for i in range(n):
        nb = np.argsort(D[i], kind="stable")[:k]  # itself first
        W[i, nb] = np.exp(-4 * D[i, nb] ** 2 / D[i, nb[-1]] ** 2)
    W = (W + W.T) / 2
    np.fill_diagonal(W, 0.0)
    return Z, np.diag(W.sum(1)) - W, W.sum(1)


@pytest.mark.parametrize("loss", ["poisson", "squared+poisson"])
def test_estimator_solves_the_dense_textbook_system(loss):
    X, _, yy = _data()
    gammas = dict(gamma_A=1e-5, gamma_B=1e-2, gamma_W=1.0)  # gamma_A / gamma_W = POISSON_RATIO: used as given
    est = MVLLeastSquares(views=[3, 2], loss=loss, solver="structured", **gammas).fit(X, yy)
    dense = MVLLeastSquares(views=[3, 2], loss=loss, solver="dense", **gammas)
    dense.fit(X, yy)
    K = np.stack([np.exp(-((v[:, None] - v[None]) ** 2).sum(-1) / (2 * s**2))
                  for v, s in zip((X[:, :3], X[:, 3:]), est.bandwidths_, strict=True)])
    _, L, _ = _brute_graph(X, POISSON_NEIGHBORS)
    labelled = np.flatnonzero(yy >= 0)
    Y = 2 * np.eye(3)[yy[labelled]] - 1
    ref = solve_dense(K, labelled, Y, np.full(2, 0.5), 1e-5, 1e-2, 1.0, np.stack([L, L]), loss=loss)
    scale = np.abs(ref).max()
    np.testing.assert_allclose(est.coef_, ref, rtol=0, atol=1e-8 * scale)
    np.testing.assert_allclose(dense.coef_, ref, rtol=0, atol=1e-8 * scale)
    assert est.loss_ == loss and est.solver_ == "structured" and dense.solver_ == "dense"


def test_unequally_labelled_classes_get_balanced_sources():
    X, _, yy = _data(seed=8)
    yy[[3, 6, 9]] = [0, 0, 0]  # class 0: 5 labelled points, classes 1 and 2: 2 each
    gammas = dict(gamma_A=1e-5, gamma_B=0.0, gamma_W=1.0)
    est = MVLLeastSquares(views=[3, 2], loss="poisson", **gammas).fit(X, yy)
    K = np.stack([np.exp(-((v[:, None] - v[None]) ** 2).sum(-1) / (2 * s**2))
                  for v, s in zip((X[:, :3], X[:, 3:]), est.bandwidths_, strict=True)])
    _, L, _ = _brute_graph(X, POISSON_NEIGHBORS)
    labelled = np.flatnonzero(yy >= 0)
    Y = 2 * np.eye(3)[yy[labelled]] - 1
    ref = solve_dense(K, labelled, Y, np.full(2, 0.5), 1e-5, 0.0, 1.0, np.stack([L, L]), balanced=True)
    np.testing.assert_allclose(est.coef_, ref, rtol=0, atol=1e-8 * np.abs(ref).max())


def test_graph_limit_is_poisson_learning():
    """One view, gamma_A -> 0: the estimator's transductive predictions are graphlearning's Poisson learning on the
    same graph (the self-tuned 10-NN graph of the standardised features)."""
    gl = pytest.importorskip("graphlearning")
    from sklearn.neighbors import NearestNeighbors

    X, _, yy = _data(n=90, seed=3, labels_per_class=1, spread=1.0)  # overlapping clusters: a connected graph
    est = MVLLeastSquares(loss="poisson", gamma_A=1e-8, gamma_W=1.0).fit(X, yy)
    Z, _, _ = _brute_graph(X, POISSON_NEIGHBORS)
    dist, ind = NearestNeighbors(n_neighbors=POISSON_NEIGHBORS).fit(Z).kneighbors(Z)
    W = gl.weightmatrix.knn(None, POISSON_NEIGHBORS, knn_data=(ind, dist))
    labelled = np.flatnonzero(yy >= 0)
    ref = gl.ssl.poisson(W, tol=1e-12).fit_predict(labelled, yy[labelled])
    np.testing.assert_array_equal(est.predict(X), ref)


def test_poisson_gammas_hold_the_validated_ratio():
    est = MVLLeastSquares(gamma_A=1e-5, gamma_B=1e-4, gamma_W=1e-2)  # the package defaults' ratio, 1e-3
    assert poisson_gammas(est, "poisson") == pytest.approx((1e-5, 1e-2, 1.0))
    assert poisson_gammas(est, "squared+poisson") == (1e-5, 1e-4, 1e-2)
    est.set_params(gamma_W=10.0)  # a smaller ratio than the validated one is kept
    assert poisson_gammas(est, "poisson") == (1e-5, 1e-4, 10.0)


def test_induction_rule_against_brute_force():
    X, y, yy = _data(seed=1)
    train, test = np.arange(60) % 5 != 0, np.arange(60) % 5 == 0
    est = MVLLeastSquares(views=[3, 2], loss="poisson", gamma_A=AUTO_GAMMA_A).fit(X[train], yy[train])  # the
    # validated ratio as given (gamma_A="auto" may solve this draw again at a far smaller gamma_A)
    Z, _, degrees = _brute_graph(X[train], POISSON_NEIGHBORS)
    K = np.stack([np.exp(-((v[:, None] - v[None]) ** 2).sum(-1) / (2 * s**2))
                  for v, s in zip((X[train][:, :3], X[train][:, 3:]), est.bandwidths_, strict=True)])
    F = np.einsum("pnm,pmk,p->nk", K, est.coef_, est.c_)
    rule = fit_decision(F, weights=degrees)
    sd = X[train].std(axis=0)
    Zt = (X[test] - X[train].mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    expected = []
    for z in Zt:  # the weighted mean of the outputs at the 10 nearest training points
        d = np.sqrt(((Z - z) ** 2).sum(1))
        nb = np.argsort(d, kind="stable")[:POISSON_NEIGHBORS]
        w = np.exp(-4 * d[nb] ** 2 / d[nb[-1]] ** 2)
        expected.append(w @ F[nb] / w.sum())
    np.testing.assert_allclose(est.decision_function(X[test]), rule.scores(np.array(expected)), rtol=1e-9,
                               atol=1e-12)
    # a training point gets its own (transductive) output
    np.testing.assert_allclose(est.decision_function(X[train]), rule.scores(F), rtol=1e-9, atol=1e-12)
    assert est.score(X[test], y[test]) > 0.9


@pytest.mark.parametrize(("labels_per_class", "n_unlabelled", "expected"), [
    (1, 50, "poisson"), (AUTO_LABELS_PER_CLASS, 50, "poisson"), (AUTO_LABELS_PER_CLASS + 1, 50, "squared"),
    (1, 0, "squared")])
def test_auto_loss(labels_per_class, n_unlabelled, expected):
    P = 4
    l = labels_per_class * P
    assert resolve_loss("auto", l, P, l + n_unlabelled) == expected
    assert resolve_loss("squared", l, P, l + n_unlabelled) == "squared"


def test_default_first_fit_with_one_label_per_class_is_poisson_type():
    X, y, yy = _data(n=90, seed=2, labels_per_class=1)
    est = MVLLeastSquares(views=[3, 2]).fit(X, yy)
    assert est.loss_ == "poisson"
    unl = yy < 0
    assert np.mean(est.predict(X)[unl] == y[unl]) > 0.9


def test_two_classes_decision_is_one_column():
    X, y, yy = _data(n=40, P=2, seed=4, labels_per_class=1)
    est = MVLLeastSquares(loss="poisson").fit(X, yy)
    scores = est.decision_function(X)
    assert scores.shape == (40,)
    np.testing.assert_array_equal(est.predict(X), est.classes_[(scores > 0).astype(int)])


def test_precomputed_kernels_predict_by_the_representer_rule():
    X, y, yy = _data(seed=5)
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 50.0)
    est = MVLLeastSquares(kernel="precomputed", loss="poisson").fit(K, yy)
    np.testing.assert_allclose(est.decision_function(K),
                               est._rule.decision_rule.scores(np.einsum("tn,nk->tk", K, est.coef_[0])), atol=1e-12)
    assert est.score(K, y) > 0.8


@pytest.mark.parametrize("solver", ["cg", "graph", "nystrom"])
def test_unsupported_solvers_say_what_is_supported(solver):
    X, _, yy = _data()
    with pytest.raises(ValueError, match=rf'solver="{solver}" carries loss .squared., not .poisson.: loss="poisson" is '
                                         r'solved by solver "dense" or "structured" or "vecchia"'):
        MVLLeastSquares(loss="poisson", solver=solver, n_neighbors=5).fit(X, yy)


@pytest.mark.parametrize("solver", ["structured", "dense"])
def test_missing_views_are_refused_by_the_dense_solvers(solver):
    X, _, yy = _data()
    X[3, :3] = np.nan
    with pytest.raises(ValueError, match=rf"\('auto', 'vecchia'\); solver '{solver}' needs complete views"):
        MVLLeastSquares(views=[3, 2], loss="poisson", solver=solver).fit(X, yy)


@pytest.mark.parametrize("loss", ["poisson", "squared+poisson"])
def test_sparse_route_with_exact_vecchia_is_the_structured_fit(loss, monkeypatch):
    """solver="vecchia" with Vecchia's neighbours q >= n - 1 (exact precision) gives the structured solver's node
    values on the same graph and gammas (mvl.solvers.poisson_sparse's (P_v) is then (P) itself, its exactness
    tested in tests/solvers/test_poisson_sparse.py). Here the Gram matrices are near-singular (rbf on 3 and 2
    features), so the conditioning sets' jitter (1e-10 of the diagonal, mvl.solvers.vecchia.vecchia_factor) moves
    the node values by ~3e-5 of their scale at gamma_B = 0 and ~2e-3 with the between-view term: the test holds
    5e-3 and equal classes."""
    import mvl.solvers.vecchia as vecchia

    X, _, yy = _data(n=40)
    monkeypatch.setattr(vecchia, "VECCHIA_NEIGHBOURS", 60)
    gammas = dict(gamma_A=1e-2, gamma_B=10.0, gamma_W=1e3)  # the validated ratio, kernels well conditioned
    ref = MVLLeastSquares(views=[3, 2], loss=loss, solver="structured", **gammas).fit(X, yy)
    est = MVLLeastSquares(views=[3, 2], loss=loss, solver="vecchia", **gammas).fit(X, yy)
    assert est.solver_ == "vecchia" and est.loss_ == loss and est.converged_
    F_ref, F = ref._rule.outputs, est._rule.outputs
    np.testing.assert_allclose(F, F_ref, rtol=0, atol=5e-3 * np.abs(F_ref).max())
    Xt, _, _ = _data(n=30, seed=5)
    np.testing.assert_allclose(est.decision_function(Xt), ref.decision_function(Xt), rtol=0,
                               atol=5e-3 * np.abs(F_ref).max())
    np.testing.assert_array_equal(est.predict(Xt), ref.predict(Xt))


def test_auto_takes_the_sparse_route_beyond_the_structured_solvers_range(monkeypatch):
    """loss="auto" keeps the source term at any size: beyond AUTO_STRUCTURED_MAX samples solver="auto" solves it by
    "vecchia" (no n x n array), and agrees with the structured fit's predictions."""
    import mvl.solvers.auto as auto

    X, y, yy = _data(n=90, labels_per_class=1)
    kw = dict(views=[3, 2], gamma_A=AUTO_GAMMA_A)  # the validated ratio (this draw triggers the scale rule's re-solve)
    ref = MVLLeastSquares(**kw).fit(X, yy)
    monkeypatch.setattr(auto, "AUTO_STRUCTURED_MAX", 50)
    est = MVLLeastSquares(**kw).fit(X, yy)
    assert (ref.loss_, ref.solver_) == ("poisson", "structured")
    assert (est.loss_, est.solver_) == ("poisson", "vecchia")
    assert np.mean(est.predict(X) == ref.predict(X)) >= 0.97


def test_incomplete_views_take_the_sparse_route():
    X, y, yy = _data(n=60, labels_per_class=2)
    X[3:40:3, :3] = np.nan
    X[40:60:2, 3:] = np.nan  # disjoint from the first view's missing rows
    est = MVLLeastSquares(views=[3, 2], loss="poisson").fit(X, yy)
    assert est.solver_ == "vecchia" and est.view_mask_ is not None
    assert est.score(X, y) > 0.9


def test_squared_loss_refuses_a_few_label_only_solver():
    X, _, yy = _data()
    with pytest.raises(ValueError, match='solver="vecchia" carries loss .*not the squared loss'):
        MVLLeastSquares(views=[3, 2], loss="squared", solver="vecchia").fit(X, yy)


@pytest.mark.filterwarnings("ignore:y.*read as unlabelled")  # gamma_W = 0: said by UnlabelledMarkerWarning
@pytest.mark.parametrize("params", [dict(solver="cg", n_neighbors=5), dict(gamma_W=0.0),
                                    dict(laplacian=np.zeros((45, 45, 2))), dict(n_neighbors=7),
                                    dict(laplacian_power=1), dict(between_weights=np.ones(45))])
def test_auto_keeps_the_squared_loss_where_the_user_chose_its_settings(params):
    X, _, yy = _data(n=45, seed=6, labels_per_class=1)
    assert MVLLeastSquares(views=[3, 2], **params).fit(X, yy).loss_ == "squared"


def test_auto_keeps_the_squared_loss_with_missing_views():
    X, _, yy = _data(n=45, seed=7, labels_per_class=1)
    X[5, :3] = np.nan
    assert MVLLeastSquares(views=[3, 2]).fit(X, yy).loss_ == "squared"


def test_auto_keeps_the_squared_loss_with_precomputed_kernels():
    X, _, yy = _data(n=45, seed=9, labels_per_class=1)
    K = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 50.0)
    assert MVLLeastSquares(kernel="precomputed").fit(K, yy).loss_ == "squared"


def test_auto_has_no_size_cap():
    """loss="auto" keeps the few-label term at any size: auto.plan takes "structured" up to AUTO_STRUCTURED_MAX
    samples within the memory budget, "vecchia" beyond (and where the structured solve would not fit); a named
    solver keeps the first loss it carries."""
    from mvl.estimators.poisson_fit import source_allowed
    from mvl.solvers import Plan, plan
    from mvl.solvers.auto import AUTO_STRUCTURED_MAX, Regime

    assert source_allowed(MVLLeastSquares(views=[2, 3]), False, 4, 2, 100 * AUTO_STRUCTURED_MAX)
    assert not source_allowed(MVLLeastSquares(views=[2, 3]), True, 4, 2, 100)  # incomplete views: squared

    def chosen(n, solver="auto", max_memory=1e15, kernel="rbf"):
        return plan(solver, Regime(kernel, n, 2, 4, max_memory), "auto", source_allowed=True)

    assert chosen(AUTO_STRUCTURED_MAX) == Plan("poisson", "structured")
    assert chosen(AUTO_STRUCTURED_MAX + 1) == Plan("poisson", "vecchia")
    assert chosen(100 * AUTO_STRUCTURED_MAX) == Plan("poisson", "vecchia")
    assert chosen(AUTO_STRUCTURED_MAX, max_memory=1e6) == Plan("poisson", "vecchia")  # structured would not fit
    assert chosen(AUTO_STRUCTURED_MAX + 1, kernel="precomputed") == Plan("poisson", "structured")
    assert chosen(AUTO_STRUCTURED_MAX + 1, solver="structured") == Plan("poisson", "structured")
    assert chosen(AUTO_STRUCTURED_MAX + 1, solver="cg") == Plan("squared", "cg")
    # a class with few labels among many: the class-balanced "squared+poisson", by the same route
    est = MVLLeastSquares(views=[2, 3])
    assert source_allowed(est, False, 41, 3, 100 * AUTO_STRUCTURED_MAX, counts=[20, 20, 1]) == "squared+poisson"
    assert source_allowed(est, False, 60, 3, 100, counts=[20, 20, 20]) is None
    assert source_allowed(est, True, 41, 3, 100, counts=[20, 20, 1]) is None  # incomplete views: squared
    for n, solver in ((AUTO_STRUCTURED_MAX, "structured"), (AUTO_STRUCTURED_MAX + 1, "vecchia")):
        got = plan("auto", Regime("rbf", n, 2, 41, 1e15), "auto", source_allowed="squared+poisson")
        assert got == Plan("squared+poisson", solver)


def _dense_limit_energies(K, L, S, c):
    """The graph limit's energies by the textbook: f0 = pinv(L) S, the components' indicators Z (L's null space),
    E_W = sum_p c_p^2 tr(f0^T L f0), E_K = sum_p c_p^2 min_a tr((f0 + Z a)^T K_p^{-1} (f0 + Z a))."""
    from scipy.sparse.csgraph import connected_components

    f0 = np.linalg.pinv(L) @ S
    n_c, comp = connected_components(L != 0, directed=False)
    Z = np.eye(n_c)[comp]
    E_W = float(np.sum(c ** 2) * np.trace(f0.T @ L @ f0))
    E_K = 0.0
    for p in range(len(c)):
        Ki = np.linalg.inv(K[p])
        a = -np.linalg.solve(Z.T @ Ki @ Z, Z.T @ Ki @ f0)
        g = f0 + Z @ a
        E_K += c[p] ** 2 * float(np.trace(g.T @ Ki @ g))
    return E_W, E_K


@pytest.mark.parametrize("components", [1, 2])
def test_graph_limit_energies_against_the_dense_textbook(components):
    """source_energies with exact Vecchia (q = n - 1) is the pseudo-inverse's graph limit and the dense inverse
    kernels' energy, on a connected graph and on one of two components (sources not centred per component)."""
    from scipy import sparse

    from mvl.estimators.poisson_fit import graph_limit, source_energies
    from mvl.solvers.poisson import source_term

    rng = np.random.default_rng(4)
    n = 36
    X = rng.normal(size=(n, 2)) + (np.arange(n) >= n // 2)[:, None] * 40.0 * (components == 2)
    D2 = ((X[:, None] - X[None]) ** 2).sum(-1)
    W = np.exp(-D2 / 2.0) * (D2 < 4.0)
    np.fill_diagonal(W, 0.0)
    L = np.diag(W.sum(1)) - W
    K = np.stack([np.exp(-D2 / (2 * 0.7**2)) + 1e-3 * np.eye(n), np.exp(-D2 / (2 * 1.5**2)) + 1e-2 * np.eye(n)])
    Y = np.eye(3)[[0, 1, 2, 0, 1]]
    S = source_term([0, 5, 20, 30, 33], Y, n, balanced=True)
    c = np.array([0.3, 0.7])
    E_W, E_K, _ = source_energies(K, sparse.csr_matrix(L), S, c, neighbours=n - 1, variance_floor=0.0)
    ref_W, ref_K = _dense_limit_energies(K, L, S, c)
    assert E_W == pytest.approx(ref_W, rel=1e-6) and E_K == pytest.approx(ref_K, rel=1e-6)
    f0, Z = graph_limit(sparse.csr_matrix(L), S)
    assert Z.shape[1] == components
    np.testing.assert_allclose(f0, np.linalg.pinv(L) @ S, rtol=0, atol=1e-7 * np.abs(f0).max())


def _manifold(n=120, seed=0):
    from mvl.data.synthetic import make_multiview_manifold

    d = make_multiview_manifold(n, n_classes=6, n_views=3, n_features=12, random_state=seed)
    X = np.hstack(d.views)
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    yy = np.full(n, -1)
    for k in range(6):
        yy[np.flatnonzero(d.y == k)[:1]] = k
    return X, d.y, yy


def test_auto_gamma_A_follows_the_graph_limit_rule_when_the_kernel_dominates(monkeypatch):
    """gamma_A="auto", loss="poisson": the kernel share at the validated ratio's solution computed by the textbook
    (solve_dense; theta = gamma_A a^T K a / (gamma_A a^T K a + gamma_W F^T L F)) is above KERNEL_SHARE_MAX (lowered
    here for a small problem), so the fit is solved again at gamma_A = gamma_W min(POISSON_RATIO, SOURCE_SHARE E_W /
    E_K), E_W and E_K the dense textbook energies of the graph limit (Vecchia made exact); its coefficients are the
    dense textbook solution at that gamma_A."""
    import mvl.estimators.poisson_fit as pf
    import mvl.solvers.vecchia as vecchia
    from mvl.solvers.poisson import source_term

    X, _, yy = _manifold(seed=2)  # a draw whose graph solution passes the class-balance guard
    n = len(yy)
    seen = {}
    energies = pf.source_energies

    def spy(kernels, laplacian, S, c, mask=None, **kw):
        seen.update(K=np.array(kernels), L=laplacian.toarray(), S=S, c=c)
        return energies(kernels, laplacian, S, c, mask, **kw)

    monkeypatch.setattr(pf, "source_energies", spy)
    monkeypatch.setattr(vecchia, "VECCHIA_NEIGHBOURS", n)
    monkeypatch.setattr(pf, "KERNEL_SHARE_MAX", 1e-4)
    monkeypatch.setattr(pf, "VARIANCE_FLOOR", 0.0)  # the precision itself, as the textbook's inverse
    est = MVLLeastSquares(views=[12, 12, 12], loss="poisson", solver="structured").fit(X, yy)
    K, L, c = seen["K"], seen["L"], seen["c"]
    labelled = np.flatnonzero(yy >= 0)
    Y = 2 * np.eye(6)[yy[labelled]] - 1
    gW = AUTO_GAMMA_A / pf.POISSON_RATIO  # poisson_gammas' gamma_W at the defaults
    first = solve_dense(K, labelled, Y, c, AUTO_GAMMA_A, 0.0, gW, np.stack([L] * 3), balanced=True)
    F = np.stack([K[p] @ first[p] for p in range(3)])
    kern = AUTO_GAMMA_A * sum(float(np.sum(first[p] * F[p])) for p in range(3))
    graph = gW * sum(float(np.sum(F[p] * (L @ F[p]))) for p in range(3))
    assert kern / (kern + graph) > 1e-4
    np.testing.assert_allclose(seen["S"], source_term(labelled, Y, n, balanced=True))
    E_W, E_K = _dense_limit_energies(K, L, seen["S"], c)
    ratio = min(pf.POISSON_RATIO, pf.SOURCE_SHARE * E_W / E_K)
    assert ratio < pf.POISSON_RATIO
    assert est.gamma_A_ == pytest.approx(gW * ratio, rel=1e-4)  # Vecchia's jitter on near-singular Gram matrices
    ref = solve_dense(K, labelled, Y, c, est.gamma_A_, 0.0, gW, np.stack([L] * 3), balanced=True)
    np.testing.assert_allclose(est.coef_, ref, rtol=0, atol=1e-6 * np.abs(ref).max())


@pytest.mark.parametrize("params", [dict(gamma_A=1e-5), dict(gamma_A=3e-4, gamma_W=2.0), dict(loss="squared")])
def test_explicit_gamma_A_and_the_squared_loss_keep_the_given_scale(params, monkeypatch):
    """An explicit gamma_A is solved at as given (and poisson_gammas' gamma_W), and the squared loss never reads the
    graph-limit rule, however small the kernel share's threshold."""
    import mvl.estimators.poisson_fit as pf

    X, _, yy = _manifold()
    monkeypatch.setattr(pf, "KERNEL_SHARE_MAX", 0.0)
    kw = dict(loss="poisson", solver="structured") | params
    est = MVLLeastSquares(views=[12, 12, 12], **kw).fit(X, yy)
    assert est.gamma_A_ == params.get("gamma_A", 1e-5)
    assert not hasattr(est, "_source_scale")


@pytest.mark.parametrize("case", ["small share", "class absorbed"])
def test_auto_gamma_A_keeps_the_validated_ratio(case):
    """gamma_A="auto" keeps POISSON_RATIO where the kernel share at its solution is at most KERNEL_SHARE_MAX, and
    where it is above but the graph's solution gives a class no point (the three clusters of _data: Poisson
    learning's limit absorbs a class, and the fit of POISSON_RATIO, 100 % here, is kept)."""
    from mvl.solvers.vecchia_direct import limit_class_balance

    if case == "small share":
        X, _, yy = _manifold()
        est = MVLLeastSquares(views=[12, 12, 12], loss="poisson").fit(X, yy)
        assert est._source_scale[0] <= KERNEL_SHARE_MAX
    else:
        X, y, yy = _data(n=90, labels_per_class=1)
        est = MVLLeastSquares(views=[3, 2], loss="poisson").fit(X, yy)
        assert est._source_scale[0] > KERNEL_SHARE_MAX and est.score(X, y) == 1.0
        ratio = MVLLeastSquares(views=[3, 2], loss="poisson", gamma_A=1e-10, gamma_W=1.0, solver="vecchia").fit(X, yy)
        labelled = np.flatnonzero(yy >= 0)
        balance = limit_class_balance(ratio._rule.decision_rule.scores(ratio._rule.outputs), labelled,
                                      np.eye(3)[yy[labelled]])
        assert balance < 0.5
    assert est._source_scale[1] is None and est.gamma_A_ == AUTO_GAMMA_A


def test_a_second_dense_solve_that_misses_tol_is_solved_in_node_values(monkeypatch):
    """When the dense second solve of the scale rule misses tol (forced here), solver="auto" takes the node-value
    system of mvl.solvers.poisson_sparse on the same Gram matrices (Vecchia made exact, q = n - 1): its training
    outputs are the dense textbook solution's C K a at the rule's gamma_A, its residual within tol, no warning;
    solver_ names it."""
    import warnings
    from dataclasses import replace

    import mvl.estimators.poisson_fit as pf
    import mvl.solvers.vecchia as vecchia
    from mvl.solvers.registry import SOLVERS

    X, _, yy = _manifold(seed=2)
    n = len(yy)
    seen = {}
    energies = pf.source_energies

    def spy(kernels, laplacian, S, c, mask=None, **kw):
        seen.update(K=np.array(kernels), L=laplacian.toarray(), c=c)
        return energies(kernels, laplacian, S, c, mask, **kw)

    structured = type(SOLVERS["structured"])
    solve = structured.solve

    def missing_tol(self, problem):
        result = solve(self, problem)
        return replace(result, residual=1.0) if problem.gamma_A < AUTO_GAMMA_A else result

    monkeypatch.setattr(pf, "source_energies", spy)
    monkeypatch.setattr(vecchia, "VECCHIA_NEIGHBOURS", n)
    monkeypatch.setattr(pf, "KERNEL_SHARE_MAX", 1e-4)
    monkeypatch.setattr(structured, "solve", missing_tol)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = MVLLeastSquares(views=[12, 12, 12], loss="poisson").fit(X, yy)  # solver "auto"
    assert est.gamma_A_ < AUTO_GAMMA_A and est.residual_ <= est.tol and est._source_scale[1] is not None
    assert est.solver_ == "vecchia"  # what solved it, named
    K, L, c = seen["K"], seen["L"], seen["c"]
    labelled = np.flatnonzero(yy >= 0)
    Y = 2 * np.eye(6)[yy[labelled]] - 1
    ref = solve_dense(K, labelled, Y, c, est.gamma_A_, 0.0, AUTO_GAMMA_A / pf.POISSON_RATIO, np.stack([L] * 3),
                      balanced=True)
    F_ref = np.einsum("p,pnk->nk", c, np.stack([K[p] @ ref[p] for p in range(3)]))
    np.testing.assert_allclose(est._rule.outputs, F_ref, rtol=0, atol=1e-4 * np.abs(F_ref).max())


def test_a_named_dense_solver_keeps_the_first_fit_when_the_second_solve_misses_tol(monkeypatch):
    """solver="structured" named: a second solve of the scale rule that misses tol (forced here) is not replaced by
    another solver; the fit of the validated ratio is kept and solver_ stays the one named."""
    from dataclasses import replace

    import mvl.estimators.poisson_fit as pf
    from mvl.solvers.registry import SOLVERS

    X, _, yy = _manifold(seed=2)
    structured = type(SOLVERS["structured"])
    solve = structured.solve

    def missing_tol(self, problem):
        result = solve(self, problem)
        return replace(result, residual=1.0) if problem.gamma_A < AUTO_GAMMA_A else result

    monkeypatch.setattr(pf, "KERNEL_SHARE_MAX", 1e-4)
    monkeypatch.setattr(structured, "solve", missing_tol)
    est = MVLLeastSquares(views=[12, 12, 12], loss="poisson", solver="structured").fit(X, yy)
    ref = MVLLeastSquares(views=[12, 12, 12], loss="poisson", solver="structured", gamma_A=AUTO_GAMMA_A).fit(X, yy)
    assert est.solver_ == "structured" and est.gamma_A_ == AUTO_GAMMA_A and est._source_scale[1] is None
    np.testing.assert_array_equal(est.coef_, ref.coef_)
