"""MVL-SVM and MVL-binSVM (Theorems 6, 7, 13, Corollaries 8, 20, Lemma 31) against the independent references of
``svm_reference`` (the dense dual of Theorem 6, the primal in weight space, the Simplex Cone SVM, the Laplacian SVM,
the combined-kernel SVM of Theorem 7, the KKT conditions of Lemma 31), through the public estimator API."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import make_linear_problem, make_problem, paper_kwargs, random_graph_laplacians, sample_first, signal_free
from sklearn.exceptions import ConvergenceWarning
from svm_reference import (
    NAMED_PROBLEMS,
    TIGHT,
    assert_same_predictions,
    box_dual_qp,
    dense_theorem6,
    generic_qp,
    named_problem,
    objective,
    primal_weight_space,
    qg_reference,
    random_c,
    simplex_codes,
    two_class,
)

import mvl.estimators.svm as svm_module
import mvl.solvers.svm_dual as svm_dual
from mvl import MVLBinarySVM, MVLSVM
from mvl.solvers.svm_dual import build_svm_dual

SOLVERS = ["admm", "smo", "lbfgsb", "apg"]

# ---------------------------------------------------------------- references (numpy + clarabel only)

def _svm(cls, **kw):
    """An SVM on precomputed kernels; an explicit per-view laplacian (m, n, n) is passed sample-first."""
    if not isinstance(kw.get("laplacian", "normalized"), str):
        kw["laplacian"] = sample_first(kw["laplacian"])
    return cls(kernel="precomputed", **paper_kwargs(0, kw))

def _outputs(est, K_test):
    """All P outputs h(v) (t, P) of a fitted estimator on per-view test kernels (m, t, n), through the public
    API: sum_p c_p times the per-view outputs (for P > 2 this is decision_function itself)."""
    return np.einsum("tpk,p->tk", est.view_decision_function(sample_first(K_test)), est.c_)

# ---------------------------------------------------------------- 1. generic QP on the dual of Theorem 6

CASES = [(m, P, u) for m in (1, 2, 3) for P in (2, 3, 5) for u in (0.0, 0.3)]

@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("m,P,frac_unl", CASES)
@signal_free
def test_dual_matches_generic_qp(m, P, frac_unl, solver):
    seed = 1000 * m + 10 * P + int(10 * frac_unl)
    rng = np.random.default_rng(seed)
    n = 20 + 8 * P if m > 1 else 60
    K, K_test, y = make_problem(m, n, P, frac_unlabelled=frac_unl, seed=seed, t=25)
    L = random_graph_laplacians(m, n, seed=seed, normalized=bool(seed % 2))
    c = random_c(m, rng)
    gA, gB, gW = 10 ** rng.uniform(-3, -1), 10 ** rng.uniform(-3, -1), 10 ** rng.uniform(-3, -1)
    est = _svm(MVLSVM, gamma_A=gA, gamma_B=gB, gamma_W=gW, c=c, laplacian=L, solver=solver, tol=TIGHT)
    est.fit(sample_first(K), y)
    ref = dense_theorem6(K, y, K_test, c, gA, gB, gW, L, est.code_matrix_)
    ours = objective(ref["Q"], est.dual_coef_)  # our alpha, evaluated with the reference's Q
    assert abs(ours - ref["obj"]) <= 1e-6 * abs(ref["obj"])
    assert abs(est.dual_objective_ - ref["obj"]) <= 1e-6 * abs(ref["obj"])  # the package's own Q_G agrees
    h = est.decision_function(sample_first(K_test))
    assert h.shape == ((K_test.shape[1],) if P == 2 else (K_test.shape[1], P))
    np.testing.assert_allclose(h, two_class(ref["h_test"]), atol=1e-4 * np.abs(ref["h_test"]).max())
    np.testing.assert_allclose(_outputs(est, K_test), ref["h_test"], atol=1e-4 * np.abs(ref["h_test"]).max())
    assert_same_predictions(h, ref["h_test"])
    assert est.kkt_violation_ <= TIGHT

@pytest.mark.slow
@pytest.mark.parametrize("gamma_A", [1e-5, 1e-3])
def test_larger_problem_matches_generic_qp(gamma_A):
    """l = 150, P = 8 (1050 free variables; the refinement takes its CG branch): both solvers vs clarabel."""
    K, K_test, y = make_problem(3, 170, 8, frac_unlabelled=0.12, seed=77, t=40)
    L = random_graph_laplacians(3, 170, seed=77, normalized=True)
    c = np.full(3, 1 / 3)
    lab = np.flatnonzero(y >= 0)
    dual = build_svm_dual(K, lab, c, gamma_A, 1e-6, 1e-6, L)
    P, l = 8, len(lab)
    Q = np.kron(dual.Q_G, np.full((P, P), -1.0 / (P - 1)) + np.eye(P) * (1 + 1.0 / (P - 1)))
    ub = np.full((l, P), 1.0 / l)
    ub[np.arange(l), y[lab]] = 0.0
    free = ub.ravel() > 0
    x = np.zeros(l * P)
    x[free] = generic_qp(0.5 * Q[np.ix_(free, free)], -np.ones(free.sum()) / (P - 1), lb=np.zeros(free.sum()),
                  ub=ub.ravel()[free])
    obj_ref = objective(Q, x.reshape(l, P).T)
    for solver in SOLVERS:
        est = _svm(MVLSVM, gamma_A=gamma_A, gamma_B=1e-6, gamma_W=1e-6, laplacian=L, solver=solver, tol=1e-6)
        est.fit(sample_first(K), y)
        assert abs(objective(Q, est.dual_coef_) - obj_ref) <= 1e-6 * abs(obj_ref)

@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("m,P", [(1, 3), (2, 2), (2, 4), (3, 3)])
@signal_free
def test_primal_weight_space(m, P, solver):
    """Strong duality and f itself against the primal (eq 18-20) solved in weight space."""
    seed = 50 * m + P
    rng = np.random.default_rng(seed)
    prob = make_linear_problem(m, 18 + 3 * P, P, frac_unlabelled=0.3, seed=seed, t=12)
    n = prob["K"].shape[1]
    L = random_graph_laplacians(m, n, seed=seed)
    c = random_c(m, rng)
    gA, gB, gW = 0.05, 0.02, 0.01
    est = _svm(MVLSVM, gamma_A=gA, gamma_B=gB, gamma_W=gW, c=c, laplacian=L, solver=solver, tol=TIGHT)
    est.fit(sample_first(prob["K"]), prob["y"])
    val, h_ref = primal_weight_space(prob["Phi"], prob["Phi_test"], prob["y"], c, gA, gB, gW, L,
                                     est.code_matrix_)
    assert abs(-est.dual_objective_ - val) <= 1e-6 * abs(val)  # primal optimum = -min D
    h = est.decision_function(sample_first(prob["K_test"]))
    np.testing.assert_allclose(h, two_class(h_ref), atol=1e-4 * np.abs(h_ref).max())
    np.testing.assert_allclose(_outputs(est, prob["K_test"]), h_ref, atol=1e-4 * np.abs(h_ref).max())

@pytest.mark.parametrize("solver", SOLVERS)
def test_binary_one_vs_all_matches_primal_per_class(solver):
    """MVL-binSVM column k = C f_k of the binary problem 'k vs rest' (Corollary 8), via the primal QP."""
    P, m = 3, 2
    prob = make_linear_problem(m, 21, P, frac_unlabelled=0.3, seed=3, t=10)
    n = prob["K"].shape[1]
    L = random_graph_laplacians(m, n, seed=3)
    c = np.array([0.7, -1.1])
    est = _svm(MVLBinarySVM, gamma_A=0.05, gamma_B=0.02, gamma_W=0.01, c=c, laplacian=L, solver=solver,
               tol=TIGHT)
    est.fit(sample_first(prob["K"]), prob["y"])
    scores = est.decision_function(sample_first(prob["K_test"]))
    S2 = np.array([[1.0, -1.0]])
    for k in range(P):
        yk = np.where(prob["y"] < 0, -1, np.where(prob["y"] == k, 0, 1))  # code 0 (s = +1) for class k
        val, h_ref = primal_weight_space(prob["Phi"], prob["Phi_test"], yk, c, 0.05, 0.02, 0.01, L, S2)
        assert abs(-est.dual_objective_[k] - val) <= 1e-6 * abs(val)
        np.testing.assert_allclose(scores[:, k], h_ref[:, 0], atol=1e-4 * np.abs(h_ref).max())
    np.testing.assert_array_equal(est.predict(sample_first(prob["K_test"])),
                                  est.classes_[np.argmax(scores, axis=1)])

# ---------------------------------------------------------------- 2. special cases

@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("P", [3, 5])
def test_single_view_supervised_is_simplex_cone_svm(P, solver):
    """u = 0, one view, gamma_B = gamma_W = 0: the SC-SVM of eq (27)-(28) (Mroueh et al., 2012)."""
    K, K_test, y = make_problem(1, 45, P, frac_unlabelled=0.0, seed=20 + P, t=30)
    gA = 0.01
    est = _svm(MVLSVM, gamma_A=gA, solver=solver, tol=TIGHT).fit(sample_first(K), y)
    S = simplex_codes(P)  # any simplex coding: SC-SVM's decisions do not depend on its orientation
    Q = np.kron(K[0], S.T @ S) / gA  # eq (28)
    alpha = box_dual_qp(Q, y, P)
    a = -(1.0 / (2 * gA)) * (S @ alpha)  # eq (27): a_i = -1/(2 gamma_A) S alpha_i
    h_ref = (S.T @ (a @ K_test[0].T)).T  # h(v) = S^T sum_i k(v, x_i) a_i
    assert abs(est.dual_objective_ - objective(Q, alpha)) <= 1e-6 * abs(objective(Q, alpha))
    h = est.decision_function(sample_first(K_test))
    np.testing.assert_allclose(h, h_ref, atol=1e-4 * np.abs(h_ref).max())
    assert_same_predictions(h, h_ref)

@pytest.mark.parametrize("solver", SOLVERS)
@signal_free
def test_binary_single_view_laplacian_is_laplacian_svm(solver):
    """P = 2, one view, M = graph Laplacian: LapSVM (Belkin et al., 2006) without bias, in their notation.

    beta* = argmax 1^T beta - 1/2 beta^T Q beta, 0 <= beta <= 1/l, Q = Y J K (2 gA I + 2 gI L K)^{-1} J^T Y,
    alpha* = (2 gA I + 2 gI L K)^{-1} J^T Y beta*, f = sum_i alpha*_i k(x_i, .); gI/(u+l)^2 = gamma_W.
    """
    K, K_test, y = make_problem(1, 50, 2, frac_unlabelled=0.4, seed=31, t=30)
    Lap = random_graph_laplacians(1, 50, seed=31)
    gA, gW = 0.02, 0.005
    k = K[0]
    n = k.shape[0]
    lab = np.flatnonzero(y >= 0)
    l = len(lab)
    J = np.eye(n)[lab]
    Y = np.diag(np.where(y[lab] == 0, 1.0, -1.0))  # class 0 is +1 (code s_1 = +1)
    Minv_JY = np.linalg.solve(2 * gA * np.eye(n) + 2 * gW * Lap[0] @ k, J.T @ Y)
    Qb = Y @ J @ k @ Minv_JY
    Qb = 0.5 * (Qb + Qb.T)
    beta = generic_qp(Qb, -np.ones(l), lb=np.zeros(l), ub=np.full(l, 1.0 / l))
    f_ref = K_test[0] @ (Minv_JY @ beta)
    for cls in (MVLSVM, MVLBinarySVM):
        est = _svm(cls, gamma_A=gA, gamma_W=gW, laplacian=Lap, solver=solver, tol=TIGHT).fit(sample_first(K), y)
        h = est.decision_function(sample_first(K_test))  # (t,), positive for class 1: -f
        assert h.shape == (K_test.shape[1],)
        np.testing.assert_allclose(h, -f_ref, atol=1e-4 * np.abs(f_ref).max())
        H = _outputs(est, K_test)  # both outputs
        np.testing.assert_allclose(H[:, 0], f_ref, atol=1e-4 * np.abs(f_ref).max())
        np.testing.assert_allclose(H[:, 1], -f_ref, atol=1e-4 * np.abs(f_ref).max())
        np.testing.assert_array_equal(est.predict(sample_first(K_test)), np.where(f_ref > 0, 0, 1))
    # the same optimum: Belkin's maximum equals -min D of Corollary 8
    assert abs(-est.dual_objective_[0] - (beta.sum() - 0.5 * beta @ Qb @ beta)) <= 1e-6 * beta.sum()

@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("m,P", [(2, 2), (3, 4)])
def test_supervised_without_manifold_terms_is_combined_kernel_svm(m, P, solver):
    """gamma_B = gamma_W = 0, u = 0: SVM with the kernel sum_i c_i^2 k^i (Corollary 20), QP of Theorem 7.

    beta in R^{(P-1) x l} (eq 31-34): min 1/4 vec(beta)^T Q vec(beta) - 1/(P-1) 1^T vec(beta), 0 <= beta <= 1/l,
    Q = 1/gA diag(S_y^T) (k~ (x) I) diag(S_y), C f(v) = -1/(2 gA) (k~[v, x] (x) I) diag(S_y) vec(beta).
    """
    K, K_test, y = make_problem(m, 40, P, frac_unlabelled=0.0, seed=40 + m + P, t=30)
    rng = np.random.default_rng(m + P)
    c = random_c(m, rng)
    gA = 0.01
    S = simplex_codes(P)
    k_comb = np.einsum("p,pij->ij", c**2, K)
    kt_comb = np.einsum("p,pij->ij", c**2, K_test)
    l = len(y)
    Sy = np.zeros((l * (P - 1), l * (P - 1)))  # diag(S_y): block i is S without column y_i
    for i in range(l):
        Sy[i * (P - 1):(i + 1) * (P - 1), i * (P - 1):(i + 1) * (P - 1)] = np.delete(S, y[i], axis=1)
    Q = Sy.T @ np.kron(k_comb, np.eye(P - 1)) @ Sy / gA
    Q = 0.5 * (Q + Q.T)
    nb = l * (P - 1)
    beta = generic_qp(0.5 * Q, -np.ones(nb) / (P - 1), lb=np.zeros(nb), ub=np.full(nb, 1.0 / l))
    Cf = -(1.0 / (2 * gA)) * np.kron(kt_comb, np.eye(P - 1)) @ Sy @ beta
    h_ref = (S.T @ Cf.reshape(-1, P - 1).T).T
    obj_ref = 0.25 * beta @ Q @ beta - beta.sum() / (P - 1)
    est = _svm(MVLSVM, gamma_A=gA, c=c, solver=solver, tol=TIGHT).fit(sample_first(K), y)
    assert abs(est.dual_objective_ - obj_ref) <= 1e-6 * abs(obj_ref)
    h = est.decision_function(sample_first(K_test))
    np.testing.assert_allclose(h, two_class(h_ref), atol=1e-4 * np.abs(h_ref).max())
    np.testing.assert_allclose(_outputs(est, K_test), h_ref, atol=1e-4 * np.abs(h_ref).max())
    assert_same_predictions(h, h_ref)

# ---------------------------------------------------------------- 3. KKT conditions of Lemma 31

@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("gamma_A", [1e-4, 1e-2])
def test_kkt_conditions_lemma31(solver, gamma_A):
    K, _, y = make_problem(2, 60, 4, frac_unlabelled=0.3, seed=61)
    tol = 1e-3
    est = _svm(MVLSVM, gamma_A=gamma_A, gamma_B=1e-3, gamma_W=1e-3, solver=solver, tol=tol).fit(sample_first(K), y)
    lab = est.labelled_
    P, l = est.dual_coef_.shape
    h = est.decision_function(sample_first(K)[lab]).T  # (P, l): <s_k, C f(x_i)> through the public API
    a = est.dual_coef_
    ub = 1.0 / l
    margin = -1.0 / (P - 1)
    var = np.ones((P, l), dtype=bool)
    var[y[lab], np.arange(l)] = False  # alpha_{y_i, i} = 0 is not a variable
    assert np.all(a[~var] == 0) and np.all(a >= 0) and np.all(a <= ub)  # box (24)
    slack = tol + 1e-9
    at0, atub = var & (a <= 0), var & (a >= ub)
    free = var & ~at0 & ~atub
    assert np.all(h[at0] <= margin + slack)  # (182)
    assert np.all(np.abs(h[free] - margin) <= slack)  # (183)
    assert np.all(h[atub] >= margin - slack)  # (184)
    assert np.all(a[var & (h < margin - slack)] == 0)  # (185)
    assert np.all(a[var & (h > margin + slack)] == ub)  # (186)
    assert est.kkt_violation_ <= tol
    assert free.sum() + atub.sum() > 0  # not a trivial solution

@pytest.mark.parametrize("solver", SOLVERS)
def test_kkt_conditions_binary(solver):
    """Binary form (187)-(191) for every one-vs-all problem: y_i C f(x_i) against 1."""
    K, _, y = make_problem(3, 50, 3, frac_unlabelled=0.2, seed=62)
    tol = 1e-3
    est = _svm(MVLBinarySVM, gamma_A=1e-3, gamma_B=1e-3, solver=solver, tol=tol).fit(sample_first(K), y)
    lab = est.labelled_
    scores = est.decision_function(sample_first(K)[lab])
    ub = 1.0 / len(lab)
    for k in range(3):
        yk = np.where(y[lab] == k, 1.0, -1.0)
        yf = yk * scores[:, k]
        b = est.dual_coef_[k]
        assert np.all((b >= 0) & (b <= ub))
        assert np.all(yf[b <= 0] >= 1 - tol - 1e-9)  # (187)
        assert np.all(np.abs(yf[(b > 0) & (b < ub)] - 1) <= tol + 1e-9)  # (188)
        assert np.all(yf[b >= ub] <= 1 + tol + 1e-9)  # (189)
        assert np.all(b[yf > 1 + tol + 1e-9] == 0)  # (190)
        assert np.all(b[yf < 1 - tol - 1e-9] == ub)  # (191)
    assert np.all(est.kkt_violation_ <= tol)

# ---------------------------------------------------------------- solver mechanics

def test_binary_shares_factorisations(monkeypatch):
    """MVL-binSVM factorises M_reg once (m view LUs) for all P one-vs-all problems."""
    calls = {"build": 0, "factor": 0}
    real_build, real_factor = svm_module.build_svm_dual, svm_dual.factor_view

    def build(*a, **k):
        calls["build"] += 1
        return real_build(*a, **k)

    def factor(*a, **k):
        calls["factor"] += 1
        return real_factor(*a, **k)

    monkeypatch.setattr(svm_module, "build_svm_dual", build)
    monkeypatch.setattr(svm_dual, "factor_view", factor)
    K, _, y = make_problem(3, 30, 4, frac_unlabelled=0.3, seed=8)
    _svm(MVLBinarySVM, gamma_A=1e-2, gamma_B=1e-2, gamma_W=1e-2).fit(sample_first(K), y)
    assert calls == {"build": 1, "factor": 3}

@pytest.mark.parametrize("solver", SOLVERS)
@signal_free
def test_warm_start_along_gamma_grid(solver):
    K, K_test, y = make_problem(2, 50, 3, frac_unlabelled=0.3, seed=9)
    grid = [3e-2, 1e-2, 3e-3, 1e-3]
    warm = _svm(MVLSVM, gamma_B=1e-3, solver=solver, tol=1e-6, warm_start=True)
    for g in grid:
        warm.set_params(gamma_A=g).fit(sample_first(K), y)
        cold = _svm(MVLSVM, gamma_A=g, gamma_B=1e-3, solver=solver, tol=1e-6).fit(sample_first(K), y)
        assert abs(warm.dual_objective_ - cold.dual_objective_) <= 1e-6 * abs(cold.dual_objective_)
        Kt = sample_first(K_test)
        np.testing.assert_allclose(warm.decision_function(Kt), cold.decision_function(Kt),
                                   atol=1e-3 * np.abs(cold.decision_function(Kt)).max())
    # refitting at an optimum starts there: nothing left to do
    n0 = warm.fit(sample_first(K), y).n_iter_
    assert n0 <= 1
    # a changed labelled set falls back to a cold start (the old alpha would not fit the new box)
    y2 = y.copy()
    y2[np.flatnonzero(y >= 0)[0]] = -1
    warm.fit(sample_first(K), y2)
    assert warm.dual_coef_.shape[1] == np.sum(y2 >= 0)

@signal_free
def test_binary_warm_start():
    K, _, y = make_problem(2, 40, 3, frac_unlabelled=0.2, seed=10)
    est = _svm(MVLBinarySVM, gamma_A=1e-2, solver="smo", tol=1e-6, warm_start=True).fit(sample_first(K), y)
    first = est.dual_coef_.copy()
    est.fit(sample_first(K), y)
    np.testing.assert_allclose(est.dual_coef_, first, atol=1e-12)
    assert np.all(est.n_iter_ == 0)

@signal_free
def test_random_state_changes_order_not_solution():
    K, K_test, y = make_problem(2, 40, 4, frac_unlabelled=0.2, seed=11)
    a = _svm(MVLSVM, gamma_A=1e-3, solver="smo", tol=1e-7, random_state=0).fit(sample_first(K), y)
    b = _svm(MVLSVM, gamma_A=1e-3, solver="smo", tol=1e-7, random_state=1).fit(sample_first(K), y)
    c = _svm(MVLSVM, gamma_A=1e-3, solver="smo", tol=1e-7).fit(sample_first(K), y)
    for e in (b, c):
        assert abs(e.dual_objective_ - a.dual_objective_) <= 1e-7 * abs(a.dual_objective_)
        Kt = sample_first(K_test)
        np.testing.assert_allclose(e.decision_function(Kt), a.decision_function(Kt), atol=1e-4)

@pytest.mark.parametrize("solver", SOLVERS)
@signal_free
def test_max_iter_reached_warns(solver):
    K, _, y = make_problem(2, 40, 4, frac_unlabelled=0.2, seed=12)
    with pytest.warns(ConvergenceWarning, match="increase max_iter"):
        est = _svm(MVLSVM, gamma_A=1e-4, solver=solver, tol=1e-8, max_iter=2).fit(sample_first(K), y)
    assert est.kkt_violation_ > 1e-8

def test_estimator_api(two_view_problem):
    K, K_test, y = two_view_problem
    est = _svm(MVLSVM, gamma_A=1e-2, gamma_B=1e-3)
    params = est.get_params()
    assert params["solver"] == "auto" and params["tol"] == 1e-3 and params["warm_start"] is False
    assert params["kernel"] == "precomputed" and MVLSVM().get_params()["kernel"] == "rbf"
    with pytest.raises(ValueError, match="not a list"):  # precomputed kernels: one sample-first array
        est.fit(list(K), y)
    Kt = sample_first(K_test)
    est.fit(sample_first(K), y)
    P = len(np.unique(y[y >= 0]))
    assert est.coef_.shape == (2, 16, P) and est.dual_coef_.shape == (P, np.sum(y >= 0))
    assert est.view_decision_function(Kt).shape == (K_test.shape[1], 2, P)
    np.testing.assert_allclose(est.decision_function(Kt),
                               np.einsum("tpk,p->tk", est.view_decision_function(Kt), est.c_))
    # predict decodes C f(v) by eq (15): the same as argmax of h = S^T C f
    Cf = (P - 1) / P * est.decision_function(Kt) @ est.code_matrix_.T
    from mvl.simplex import simplex_decode

    np.testing.assert_array_equal(est.predict(Kt), est.classes_[simplex_decode(Cf, est.code_matrix_)])
    assert 0.0 <= est.score(Kt, est.predict(Kt)) == 1.0
    with pytest.raises(ValueError, match="Invalid parameter 'gamma_Z'"):
        est.set_params(gamma_Z=1.0)

# ---------------------------------------------------------------- ADMM, the default for P >= 3, on named problems

def _fit_named(name, solver, tol=TIGHT, **kw):
    K, K_test, y, L, c, (gA, gB, gW) = named_problem(name)
    return _svm(MVLSVM, gamma_A=gA, gamma_B=gB, gamma_W=gW, c=c, laplacian=L, solver=solver, tol=tol,
                **kw).fit(sample_first(K), y)

@pytest.mark.parametrize("name", list(NAMED_PROBLEMS))
@signal_free
def test_admm_matches_generic_qp(name):
    """ADMM against clarabel: on the dense dual of Theorem 6 (eq 22-25, the paper's operators) where it is
    small, otherwise on Q_G (x) Q_S (Q_G checked against Theorem 6 above); objective to 1e-6 relative."""
    K, K_test, y, L, c, (gA, gB, gW) = named_problem(name)
    est = _fit_named(name, "admm")
    assert est.solver_ == "admm" and est.kkt_violation_ <= TIGHT
    m, n, _ = K.shape
    P = len(est.classes_)
    if n * m * (P - 1) <= 1000:
        ref = dense_theorem6(K, y, K_test, c, gA, gB, gW, L, est.code_matrix_)
        obj_ref = ref["obj"]
        assert abs(objective(ref["Q"], est.dual_coef_) - obj_ref) <= 1e-6 * abs(obj_ref)
        h = est.decision_function(sample_first(K_test))
        np.testing.assert_allclose(h, two_class(ref["h_test"]), atol=1e-4 * np.abs(ref["h_test"]).max())
        assert_same_predictions(h, ref["h_test"])
    else:
        dual = build_svm_dual(K, est.labelled_, c, gA, gB, gW, L)
        _, obj_ref = qg_reference(dual.Q_G, y[est.labelled_], P)
    assert abs(est.dual_objective_ - obj_ref) <= 1e-6 * abs(obj_ref)

@pytest.mark.parametrize("name", list(NAMED_PROBLEMS))
@signal_free
def test_admm_matches_smo_and_lbfgsb(name):
    """The three solvers at a tight tol: the same objective (1e-6 relative), outputs and predictions."""
    K_test = named_problem(name)[1]
    Kt = sample_first(K_test)
    # SMO's default budget (1000 l block updates) is short on the singular Q_G of duplicated samples (57,368)
    fits = {s: _fit_named(name, s, max_iter=200_000 if s == "smo" else None) for s in ("admm", "smo", "lbfgsb")}
    ref = fits["smo"]
    for s, est in fits.items():
        assert est.kkt_violation_ <= TIGHT, s
        assert abs(est.dual_objective_ - ref.dual_objective_) <= 1e-6 * abs(ref.dual_objective_), s
    h_ref = _outputs(ref, K_test)
    for s in ("admm", "lbfgsb"):
        np.testing.assert_allclose(_outputs(fits[s], K_test), h_ref, atol=1e-4 * np.abs(h_ref).max())
        assert_same_predictions(fits[s].decision_function(Kt), h_ref)

@pytest.mark.parametrize("name", ["many_classes", "semi_supervised"])
def test_admm_warm_start_named(name):
    """Warm starts along a gamma_A grid reach the cold starts' objective; a refit at the optimum does no
    iteration (the fixed point's dual u = -grad D / rho is set with alpha)."""
    K, K_test, y, L, c, (gA, gB, gW) = named_problem(name)
    warm = _svm(MVLSVM, gamma_B=gB, gamma_W=gW, c=c, laplacian=L, solver="admm", tol=1e-6, warm_start=True)
    for g in (10 * gA, 3 * gA, gA):
        warm.set_params(gamma_A=g).fit(sample_first(K), y)
        cold = _svm(MVLSVM, gamma_A=g, gamma_B=gB, gamma_W=gW, c=c, laplacian=L, solver="admm", tol=1e-6)
        cold.fit(sample_first(K), y)
        assert abs(warm.dual_objective_ - cold.dual_objective_) <= 1e-6 * abs(cold.dual_objective_)
    assert warm.fit(sample_first(K), y).n_iter_ == 0

def test_memory_estimate_linear_in_classes(monkeypatch):
    """The memory checked before an SVM fit grows with l^2 + P l (Q_G, alpha), not with P l^2: at Caltech-101's
    l = 3,060, P = 102 the old P l^2 term alone claimed 23 GB and stopped the paper profile on a 23 GB machine."""
    seen = []
    monkeypatch.setattr("mvl.estimators.inputs.check_memory", lambda nbytes, *a, **k: seen.append(nbytes))
    K, _, y = make_problem(2, 60, 30, frac_unlabelled=0.0, seed=5)
    _svm(MVLSVM, gamma_A=1e-3, tol=1e-2).fit(sample_first(K), y)
    m, n, l, P = 2, 60, 60, 30
    assert seen and max(seen) == 8.0 * ((2 * m + 3) * n * n + 3 * l * l + 8 * l * P)
    # the same samples in 3 classes instead of 30: the estimate may differ by a few P x l arrays, not by l^2 P
    few = []
    monkeypatch.setattr("mvl.estimators.inputs.check_memory", lambda nbytes, *a, **k: few.append(nbytes))
    _svm(MVLSVM, gamma_A=1e-3, tol=1e-2).fit(sample_first(K), y % 3)
    assert 0 < max(seen) - max(few) <= 8.0 * 10 * l * (P - 3)  # the old l^2 P term: 8 * 3 l^2 (P - 3)

@signal_free
def test_auto_solver():
    """solver="auto" (the default): ADMM for MVL-SVM with P >= 3, SMO for two classes and for MVL-binSVM."""
    K, K_test, y = make_problem(2, 40, 3, frac_unlabelled=0.2, seed=21)
    est = _svm(MVLSVM, gamma_A=1e-2).fit(sample_first(K), y)
    assert est.get_params()["solver"] == "auto" and est.solver_ == "admm"
    two = np.where(y == 2, 1, y)
    assert _svm(MVLSVM, gamma_A=1e-2).fit(sample_first(K), two).solver_ == "smo"
    assert _svm(MVLBinarySVM, gamma_A=1e-2).fit(sample_first(K), y).solver_ == "smo"
    admm = _svm(MVLSVM, gamma_A=1e-2, solver="admm").fit(sample_first(K), y)
    np.testing.assert_array_equal(admm.dual_coef_, est.dual_coef_)

# ---------------------------------------------------------------- 4. bad input

ESTIMATORS = [MVLSVM, MVLBinarySVM]

def _fit(cls, K, y, **kw):
    """Fit on precomputed kernels K given as they are (sample-first (n, n, m), or deliberately malformed)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return cls(**paper_kwargs(0, {"gamma_A": 0.1, "kernel": "precomputed", **kw})).fit(K, y)

@pytest.mark.parametrize("cls", ESTIMATORS)
def test_bad_kernels(cls, two_view_problem):
    K, _, y = two_view_problem
    bad = K.copy()
    bad[1, 2, 3] = bad[1, 3, 2] = np.nan
    with pytest.raises(ValueError, match=r"X contains NaN or inf \(in view\(s\) \[1\]\)"):
        _fit(cls, sample_first(bad), y)
    bad[1, 2, 3] = bad[1, 3, 2] = np.inf
    with pytest.raises(ValueError, match=r"X contains NaN or inf \(in view\(s\) \[1\]\)"):
        _fit(cls, sample_first(bad), y)
    with pytest.raises(ValueError, match=r"X must have shape \(n_samples, n_samples, n_views\).*got \(16, 15, 2\)"):
        _fit(cls, sample_first(K[:, :, :-1]), y)
    asym = K.copy()
    asym[0, 0, 5] += 1e-3
    with pytest.raises(ValueError, match="X: view 0 is not symmetric"):
        _fit(cls, sample_first(asym), y)
    with pytest.raises(ValueError, match="not a list"):  # per-view lists (here of different shapes) are refused
        _fit(cls, [K[0], K[1][:-1, :-1]], y)
    with pytest.raises(ValueError, match="Complex data not supported"):
        _fit(cls, sample_first(K).astype(complex), y)

@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize(
    "make_bad,match",
    [
        (lambda y: y[:-1], "y has 15 entries but X has 16 samples"),
        (lambda y: y.astype(float) + 0.5, "Unknown label type: continuous"),
        (lambda y: -np.ones_like(y), "no labelled samples"),
        (lambda y: np.where(y >= 0, 1, -1), r"labelled samples of one class only \(\[1\]\)"),  # P = 1
        (lambda y: np.where(y >= 0, -2, y), r"labelled samples of one class only \(\[-2\]\)"),  # P = 1
        (lambda y: np.array(["a" if v == 0 else v for v in y], dtype=object), "y mixes label types"),
    ],
)
def test_bad_labels(cls, two_view_problem, make_bad, match):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match=match):
        _fit(cls, sample_first(K), make_bad(y))

@pytest.mark.parametrize("cls", ESTIMATORS)
@signal_free
def test_labels_below_minus_one_are_classes(cls, two_view_problem):
    """Any sortable labels are classes; only -1 marks an unlabelled sample (labels below -1 used to be refused)."""
    K, K_test, y = two_view_problem
    relabel = np.array([-4, -3, -2])
    y2 = np.where(y >= 0, relabel[np.clip(y, 0, None)], -1)
    a = _fit(cls, sample_first(K), y)
    b = _fit(cls, sample_first(K), y2)
    np.testing.assert_array_equal(b.classes_, relabel)
    Kt = sample_first(K_test)
    np.testing.assert_array_equal(b.decision_function(Kt), a.decision_function(Kt))
    np.testing.assert_array_equal(b.predict(Kt), relabel[a.predict(Kt)])

@pytest.mark.parametrize("cls", ESTIMATORS)
def test_one_class_declared(cls, two_view_problem):
    """P = 1: a clear error before anything else (the simplex coding needs P >= 2)."""
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match=r"one class only \(\[0\]\).*a classifier needs at least 2 classes"):
        _fit(cls, sample_first(K), np.where(y >= 0, 0, -1))
    with pytest.raises(ValueError, match=r"'n_classes' parameter of .* must be None or an int in the range \[2, inf\)"):
        _fit(cls, sample_first(K), y, n_classes=1)

@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize(
    "kw,match",
    [
        ({"gamma_A": 0.0}, "gamma_A"),
        ({"gamma_A": np.nan}, "gamma_A"),
        ({"gamma_A": "0.1"}, "'gamma_A' parameter of .* must be a finite float in the range"),
        ({"gamma_B": -1.0}, "gamma_B"),
        ({"gamma_W": np.inf}, "gamma_W"),
        ({"c": [1.0]}, r"c must have one weight per view \(m = 2\)"),
        ({"c": [1.0, np.nan]}, "c contains NaN or inf"),
        ({"c": [0.0, 0.0]}, "c is all zeros"),
        ({"solver": "clarabel"}, "'solver' parameter of .* must be a str among"),
        ({"tol": 0.0}, r"'tol' parameter of .* must be a finite float in the range \(0.0, inf\)"),
        ({"tol": "x"}, "'tol' parameter of .* must be a finite float"),
        ({"max_iter": 0}, r"'max_iter' parameter of .* must be None or an int in the range \[1, inf\)"),
        ({"max_iter": 2.5}, "'max_iter' parameter of .* must be None or an int"),
        ({"gamma_W": 0.1, "laplacian": "random-walk"}, r"'laplacian' parameter of .* must be 'normalized', "
                                                         r"'unnormalized' or an array of shape \(n_samples, n_samples, "
                                                         r"n_views\)"),
        ({"gamma_W": 0.1, "laplacian": sample_first(np.stack([np.eye(16)] * 3))}, "laplacian has shape"),
        ({"n_classes": 4}, r"class\(es\) \[3\] have no labelled sample"),
    ],
)
@signal_free
def test_bad_parameters(cls, two_view_problem, kw, match):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match=match):
        _fit(cls, sample_first(K), y, **kw)

@pytest.mark.parametrize("cls", ESTIMATORS)
@signal_free
def test_bad_test_kernels_and_unfitted(cls, two_view_problem):
    from sklearn.exceptions import NotFittedError

    K, K_test, y = two_view_problem
    Kt = sample_first(K_test)
    with pytest.raises(NotFittedError, match="not fitted"):
        cls(gamma_A=0.1, kernel="precomputed").predict(Kt)
    est = _fit(cls, sample_first(K), y)
    # a test kernel against 15 of the 16 training samples: scikit-learn's feature-count check names it
    with pytest.raises(ValueError, match=rf"X has 15 features, but {cls.__name__} is expecting 16 features"):
        est.decision_function(Kt[:, :-1])
    with pytest.raises(ValueError, match=r"X must have shape \(n_samples, n_samples_fit, n_views\) = "
                                         r"\(t, 16, 2\), got \(7, 16, 1\)"):
        est.predict(Kt[:, :, :1])
    bad = Kt.copy()
    bad[0, 0, 0] = np.inf
    with pytest.raises(ValueError, match="X contains infinity"):
        est.decision_function(bad)


@pytest.mark.parametrize("gamma_B", [0.0, 0.02])
def test_views_of_very_different_scales_match_the_rescaled_primal(gamma_B):
    """Linear kernels of features scaled 1e6 / 1 / 1e-6: H_p of the 1e6 view has rcond ~ 1e-20 (its LU gave an
    indefinite Q_G and NaN decisions), so the view is solved on the range of K^p (svm_dual.RangeView). Reference:
    the primal (eq 18-20) in weight space over the unscaled features, with gamma_A / s_p^2 per view (the same
    problem in the variables V_p = s_p W_p)."""
    m, P, seed = 3, 3, 7
    prob = make_linear_problem(m, 27, P, frac_unlabelled=0.3, seed=seed, t=12)
    scale = np.array([1e6, 1.0, 1e-6])
    K, K_test = prob["K"] * scale[:, None, None] ** 2, prob["K_test"] * scale[:, None, None] ** 2
    L = random_graph_laplacians(m, K.shape[1], seed=seed)
    c = np.array([0.8, 1.1, 0.6])
    gA, gW = 0.05, 0.01
    lab = np.flatnonzero(prob["y"] >= 0)
    dual = build_svm_dual(K, lab, c, gA, gamma_B, gW, L=L)
    assert [type(f).__name__ for f in dual._factors] == ["RangeView", "tuple", "tuple"]
    assert np.linalg.eigvalsh(dual.Q_G)[0] > -1e-9 * np.linalg.eigvalsh(dual.Q_G)[-1]  # PSD, as in exact arithmetic
    est = _svm(MVLSVM, gamma_A=gA, gamma_B=gamma_B, gamma_W=gW, c=c, laplacian=L, solver="admm", tol=TIGHT)
    est.fit(sample_first(K), prob["y"])
    val, h_ref = primal_weight_space(prob["Phi"], prob["Phi_test"], prob["y"], c, gA / scale ** 2, gamma_B, gW, L,
                                     est.code_matrix_)
    h = _outputs(est, K_test)
    assert np.all(np.isfinite(h))
    np.testing.assert_allclose(h, h_ref, atol=1e-4 * np.abs(h_ref).max())
    assert abs(-est.dual_objective_ - val) <= 1e-6 * abs(val)


def test_linear_svm_on_views_scaled_1e6_1_1e_minus6_is_finite_and_accurate():
    """Three blob views through kernel="linear", scaled 1e6 / 1 / 1e-6: finite decisions, the predictions of the
    fit on the views scaled 1 / 1 / 1e-6 (view 0 at any scale is the same linear model, its RKHS norm weighed
    1e-12 as much) and accuracy >= 0.9 on held-out points."""
    centres = np.random.default_rng(11).normal(size=(3, 12)) * 1.2

    def blobs(n, s):
        g = np.random.default_rng(s)
        y = np.arange(n) % 3
        g.shuffle(y)
        return centres[y] + g.normal(size=(n, 12)), y

    X, y = blobs(90, 1)
    Xt, yt = blobs(300, 2)
    y[15:] = -1
    scale = np.r_[np.full(5, 1e6), np.ones(4), np.full(3, 1e-6)]
    est = MVLSVM(views=[5, 4, 3], kernel="linear").fit(X * scale, y)
    assert np.all(np.isfinite(est.decision_function(Xt * scale)))
    assert est.score(Xt * scale, yt) >= 0.9
    small = np.r_[np.ones(9), np.full(3, 1e-6)]
    same = MVLSVM(views=[5, 4, 3], kernel="linear").fit(X * small, y).predict(Xt * small)
    assert np.mean(est.predict(Xt * scale) == same) >= 0.99
