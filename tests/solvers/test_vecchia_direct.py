"""solver="vecchia_direct" (mvl.solvers.vecchia_direct) against the exact MVL-LS solution (the structured solver on
dense kernels) and against the graph term's limit (a sparse solve of M written here)."""

import copy

import numpy as np
import pytest
from scipy import linalg, sparse
from scipy.sparse import linalg as sla

from graph_regime_problem import FEATURES, N, graph_params, manifold_problem
from mvl import MVLLeastSquares
from mvl.solvers.graph import sparse_operator, vecchia_factors
from mvl.kernels import rbf_kernel
from mvl.exceptions import RegularizationWarning
from mvl.solvers import get_solver
from mvl.solvers.vecchia_direct import (QuasiDefiniteFactor, VecchiaSystem, error_bound, fit_estimator, kernel_share,
                                        problem, share_gamma_A, solve_vecchia, transfer_gamma_A)



@pytest.fixture(scope="module")
def data():
    return manifold_problem()


def params(gamma_A):
    return graph_params(gamma_A)


def dense_kernels(X):
    off = np.cumsum([0, *FEATURES])
    return [rbf_kernel(X[:, off[p]:off[p + 1]], bandwidth=1.5)[0] for p in range(3)]


def exact(X, y, gamma_A):
    """The structured solver's coefficients, node values F_p = K^p a_p (m, n, P) and the fitted estimator."""
    est = MVLLeastSquares(solver="structured", **params(gamma_A)).fit(X, y)
    K = dense_kernels(X)
    F = np.stack([K[p] @ est.coef_[p] for p in range(3)])
    return est, F, K


def test_energy_error_within_the_stated_bound(data):
    X, y, _ = data
    gamma_A = 1e-7  # the graph regime: the kernel term a small share of the objective
    est_ex, Fx, K = exact(X, y, gamma_A)
    kernels, system = problem(MVLLeastSquares(**params(gamma_A)), X, y)
    q = 40
    fit = solve_vecchia(system, kernels, neighbours=q)
    # Q_v dense from the same factors (seed 0), kappa_v from the spectrum of K_v^{-1} K
    fac = vecchia_factors(kernels, q, 0)
    Qv = sparse.block_diag([f[0].T @ sparse.diags(1 / f[1]) @ f[0] for f in fac]).toarray()
    Kb = linalg.block_diag(*K)
    lam = np.linalg.eigvals(Qv @ Kb).real
    kappa = np.max((lam - 1) ** 2 / lam)
    delta = system.delta
    Av = sparse_operator(system).toarray() + delta * Qv
    Ff, Fv = Fx.reshape(3 * N, -1), fit.values.reshape(3 * N, -1)
    e = Fv - Ff
    err2 = np.einsum("ik,ik->k", e, Av @ e)
    kernel_term = delta * np.einsum("ik,ik->k", Ff, np.linalg.solve(Kb, Ff))
    bound = error_bound(kernel_term, kappa)
    assert np.all(err2 > 0)  # an approximation, not the exact solution
    assert np.all(err2 <= bound)
    assert np.all(bound < np.einsum("ik,ik->k", Ff, Av @ Ff))  # the bound says something
    # the reported residual is the true one of the system solved, (M + delta Q_v) F_v = r, as numpy computes it
    r = system.rhs().reshape(3 * N, -1)
    want = np.linalg.norm(r - Av @ Fv) / np.linalg.norm(r)
    assert fit.info["residual"] == pytest.approx(want, rel=1e-3, abs=1e-13) and want < 1e-9
    # the decision values on the graph nodes follow the exact solution's
    S = fit.decision_nodes()
    Sx = est_ex.decision_function(X)
    assert np.linalg.norm(S - Sx) / np.linalg.norm(Sx) < 0.1
    assert np.mean(S.argmax(1) == Sx.argmax(1)) >= 0.95


def test_every_earlier_point_is_the_exact_solution_in_and_out_of_sample(data):
    X, y, Xt = data
    gamma_A = 1e-4
    est_ex, Fx, _ = exact(X, y, gamma_A)
    est = MVLLeastSquares(**params(gamma_A))
    fit = fit_estimator(est, X, y, neighbours=N - 1)  # q = n - 1: Vecchia is the Cholesky factor of K^{-1}
    assert np.allclose(fit.values, Fx, rtol=0, atol=1e-6 * np.abs(Fx).max())
    views = est._feature_views(Xt, reset=False)
    want = est_ex.decision_function(Xt)
    for rule in ("representer", "kriging"):  # kriging on every training point = the representer theorem
        got = fit.decision_function(views, rule, neighbours=N)
        assert np.allclose(got, want, rtol=0, atol=1e-4 * np.abs(want).max()), rule


def test_kriging_at_a_training_point_returns_its_node_value(data):
    X, y, _ = data
    est = MVLLeastSquares(**params(1e-4))
    fit = fit_estimator(est, X, y)
    views = est._feature_views(X[:20], reset=False)
    assert np.allclose(fit.decision_function(views), fit.decision_nodes()[:20], atol=1e-6)


def test_tends_to_the_graph_term_limit(data):
    X, y, _ = data
    kernels, system = problem(MVLLeastSquares(**params(1e-4)), X, y)
    # the limit gamma_A -> 0: M_eps^{-1} r, M built here from the Laplacians and the labelled rows
    n, m = system.n, system.m
    lab = system.labelled
    J = sparse.diags(np.isin(np.arange(n), lab).astype(float))
    blocks = [[system.c[p] * system.c[q] * J + (system.omega * system.L[p] @ system.L[p] if p == q else 0 * J)
               for q in range(m)] for p in range(m)]
    M = sparse.bmat(blocks, format="csc")
    M = M + 1e-10 * abs(M.diagonal()).max() * sparse.identity(m * n, format="csc")
    F0 = sla.splu(M).solve(system.rhs().reshape(m * n, -1)).reshape(m, n, -1)
    S0 = np.einsum("p,pnk->nk", system.c, F0)
    dist = {}
    for gamma_A in (1e-2, 1e-10, 1e-12):
        s = copy.copy(system)
        s.delta = system.l * gamma_A
        S = solve_vecchia(s, kernels).decision_nodes()
        dist[gamma_A] = np.linalg.norm(S - S0) / np.linalg.norm(S0)
    assert dist[1e-2] > 0.1
    assert dist[1e-10] < 1e-2
    assert dist[1e-12] < min(1e-3, dist[1e-10])


def test_share_gamma_A_sets_the_kernel_share_of_the_exact_objective(data):
    X, y, _ = data
    kernels, system = problem(MVLLeastSquares(**params(1e-4)), X, y)
    share = 1e-2
    gamma_A = share_gamma_A(system, kernels, share, neighbours=N - 1)
    _, Fx, K = exact(X, y, gamma_A)
    Ff = Fx.reshape(3 * N, -1)
    kern = system.l * gamma_A * sum(np.sum(Fx[p] * np.linalg.solve(K[p], Fx[p])) for p in range(3))
    graph = np.sum(Ff * (sparse_operator(system) @ Ff))
    theta = kern / (kern + graph)
    assert share / 2 < theta < 2 * share
    with pytest.raises(ValueError, match="share"):
        share_gamma_A(system, kernels, 1.5)


def test_kernel_share_at_the_rule_gamma_is_the_target(data):
    X, y, _ = data
    kernels, system = problem(MVLLeastSquares(**params(1e-4)), X, y)
    gamma_A = share_gamma_A(system, kernels, 1e-3)
    at = copy.copy(system)
    at.delta = system.l * gamma_A
    assert kernel_share(at, kernels) == pytest.approx(1e-3, rel=1e-6)
    at.delta = system.l * 10 * gamma_A  # the share grows with gamma_A
    assert kernel_share(at, kernels) > 5e-3


def test_transfer_keeps_gamma_A_on_the_same_problem_and_lowers_it_on_more_points(data):
    X, y, _ = data
    full = problem(MVLLeastSquares(**params(1e-4)), X, y)
    half = problem(MVLLeastSquares(**params(1e-4)), X[:N // 2], y[:N // 2])
    assert transfer_gamma_A(1e-4, full, full) == pytest.approx(1e-4, rel=1e-6)
    assert transfer_gamma_A(1e-4, half, full) < 1e-4  # ||f0||^2 grows with n at a narrow kernel


def test_the_registered_solver_is_the_vecchia_fit_with_kriging_predictions(data):
    X, y, Xt = data
    gamma_A = 1e-7
    est = MVLLeastSquares(solver="vecchia_direct", **params(gamma_A)).fit(X, y)
    assert est.solver_ == "vecchia_direct" and est.n_iter_ == 1 and est.residual_ < 1e-9 and est.converged_
    ref = MVLLeastSquares(**params(gamma_A))
    fit = fit_estimator(ref, X, y)
    assert np.allclose(est.coef_, fit.coef)
    views = ref._feature_views(Xt, reset=False)
    assert np.allclose(est.decision_function(Xt), fit.decision_function(views, "kriging"), atol=1e-8)
    exact_est = MVLLeastSquares(solver="structured", **params(gamma_A)).fit(X, y)
    assert np.mean(est.predict(X) == exact_est.predict(X)) >= 0.95  # on the graph nodes
    assert np.mean(est.predict(Xt) == exact_est.predict(Xt)) >= 0.85  # held out: 20 neighbours of 240 points
    solver = get_solver("vecchia_direct")
    assert not solver.exact and not solver.missing_views and solver.sparse_graph and not solver.optc


def test_the_registered_solver_warns_when_the_kernel_term_carries_the_fit(data):
    X, y, _ = data
    with pytest.warns(RegularizationWarning, match="share_gamma_A"):
        MVLLeastSquares(solver="vecchia_direct", **params(1e-1)).fit(X, y)


def test_refactoring_at_another_delta_and_the_superlu_fallback(data):
    X, y, _ = data
    kernels, system = problem(MVLLeastSquares(**params(1e-4)), X, y)
    vs = VecchiaSystem(system, kernels)
    vs.fit(1e-9)  # the factorisation at the limit, refactored at the system's delta
    again = vs.fit().values
    fresh = solve_vecchia(system, kernels).values
    assert np.allclose(again, fresh, rtol=0, atol=1e-8 * np.abs(fresh).max())
    superlu = QuasiDefiniteFactor(vs.M, vs.IB, vs.d, system.delta)
    superlu.method, superlu._qd = "superlu", None
    superlu._factor()
    r = system.rhs().reshape(vs.M.shape[0], -1)
    F = superlu.solve_values(r)
    assert np.allclose(F, fresh.reshape(F.shape), rtol=0, atol=1e-8 * np.abs(fresh).max())
    assert vs.factor.method == "qdldl" and vs.factor.fill > vs.M.shape[0]


def test_auto_gamma_A_is_the_rule_on_the_same_factors(data, monkeypatch):
    """gamma_A="auto" with "vecchia_direct": the fit at share_gamma_A's value (gamma_A_), the same coefficients as a
    fit at that number, and one Vecchia set-up (graphs and factors built once for the rule and the fit)."""
    import mvl.solvers.vecchia_direct as vd

    X, y, Xt = data
    kernels, system = problem(MVLLeastSquares(**params(1e-4)), X, y)
    rule = share_gamma_A(system, kernels)
    built = []
    real = vd.VecchiaSystem.__init__

    def count(self, *args, **kwargs):
        built.append(1)
        real(self, *args, **kwargs)

    monkeypatch.setattr(vd.VecchiaSystem, "__init__", count)
    est = MVLLeastSquares(solver="vecchia_direct", **params("auto")).fit(X, y)
    assert len(built) == 1
    assert est.gamma_A_ == pytest.approx(rule, rel=1e-6)
    at = MVLLeastSquares(solver="vecchia_direct", **params(est.gamma_A_)).fit(X, y)
    assert at.gamma_A_ == est.gamma_A_
    assert np.allclose(est.coef_, at.coef_, rtol=0, atol=1e-8 * np.abs(at.coef_).max())
    assert np.array_equal(est.predict(Xt), at.predict(Xt))


def test_auto_gamma_A_keeps_1e5_where_the_graph_limit_is_degenerate(data, monkeypatch):
    """The limit's margin ratio: ~1 when the limit carries the labels along the graph, small for the few-label
    degenerate limit (constant with spikes at the labels); below LIMIT_MARGIN gamma_A="auto" keeps 1e-5."""
    import mvl.solvers.vecchia_direct as vd

    rng = np.random.default_rng(0)
    labelled = np.arange(6)
    spread = np.eye(3)[rng.integers(0, 3, 200)] + 0.01 * rng.normal(size=(200, 3))
    assert vd.limit_margin_ratio(spread, labelled) > 0.9
    flat = 0.01 * rng.normal(size=(200, 3))
    flat[labelled] = np.eye(3)[labelled % 3]
    assert vd.limit_margin_ratio(flat, labelled) < 0.1
    assert vd.limit_margin_ratio(np.column_stack([np.r_[np.ones(6), 0.2 * np.ones(194)]]), labelled) == 0.2
    X, y, _ = data
    est = MVLLeastSquares(solver="vecchia_direct", **params("auto")).fit(X, y)
    assert est.gamma_A_ < 1e-5  # 0.5 on these data: the rule
    monkeypatch.setattr(vd, "LIMIT_MARGIN", 0.9)
    est = MVLLeastSquares(solver="vecchia_direct", **params("auto")).fit(X, y)
    assert est.gamma_A_ == 1e-5
    assert np.allclose(est.coef_, MVLLeastSquares(solver="vecchia_direct", **params(1e-5)).fit(X, y).coef_)
    # where the kernel term then carries the fit, the user is told why the rule was not taken, and not given it
    monkeypatch.setattr(vd, "SHARE_WARNING", 0.0)
    with pytest.warns(RegularizationWarning, match="limit is degenerate here") as caught:
        MVLLeastSquares(solver="vecchia_direct", **params("auto")).fit(X, y)
    assert not any("holds it at" in str(w.message) for w in caught)
    with pytest.warns(RegularizationWarning, match="holds it at"):
        MVLLeastSquares(solver="vecchia_direct", **params(1e-5)).fit(X, y)


def test_auto_gamma_A_keeps_1e5_where_the_graph_limit_collapses_onto_few_classes(data, monkeypatch):
    """The limit's class balance: the smallest ratio of a class's share of the unlabelled points to its labelled
    share; 0 when the limit gives a class no point; below LIMIT_BALANCE gamma_A="auto" keeps 1e-5."""
    import mvl.solvers.vecchia_direct as vd

    Y_L = np.eye(3)[np.arange(6) % 3]
    spread = np.eye(3)[np.arange(200) % 3]
    assert vd.limit_class_balance(spread, np.arange(6), Y_L) == pytest.approx(1.0, abs=0.02)
    collapsed = np.eye(3)[np.r_[np.arange(6) % 3, np.zeros(194, dtype=int)]]
    assert vd.limit_class_balance(collapsed, np.arange(6), Y_L) == 0.0
    X, y, _ = data
    monkeypatch.setattr(vd, "LIMIT_BALANCE", 1.1)  # 0.75 on these data: the rule at the threshold 0.5
    assert MVLLeastSquares(solver="vecchia_direct", **params("auto")).fit(X, y).gamma_A_ == 1e-5


def test_a_bandwidth_far_below_the_distances_is_a_clear_error_naming_bandwidth():
    """Three blob views with bandwidth 1e-12: the kernel is numerically the identity (Vecchia's B = 0) and the kernel
    graph weights underflow to 0, so the unlabelled nodes' rows of M are zero and the quasi-definite system has zero
    pivots. The factorisation's failure is a ValueError naming the cause and ``bandwidth``, at gamma_B = 0 (zero rows)
    and gamma_B = 1 (no zero row: M_B couples the views, M is still singular)."""
    from mvl.exceptions import DegenerateKernelWarning

    centres = np.random.default_rng(11).normal(size=(3, 12)) * 1.2
    g = np.random.default_rng(1)
    y = np.arange(90) % 3
    g.shuffle(y)
    X = centres[y] + g.normal(size=(90, 12))
    y[15:] = -1
    for gamma_B, rows in ((0.0, "225 of 270 node values have no graph edge"), (1.0, "")):
        est = MVLLeastSquares(views=[5, 4, 3], solver="vecchia_direct", bandwidth=1e-12, gamma_B=gamma_B)
        with pytest.warns(DegenerateKernelWarning, match="is diagonal"):
            with pytest.raises(ValueError, match=rows + ".*numerically the identity.*`bandwidth` is too small"):
                est.fit(X, y)
