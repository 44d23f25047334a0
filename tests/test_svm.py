"""MVL-SVM and MVL-binSVM (Theorems 6, 7, 13, Corollaries 8, 20, Lemma 31) against independent references.

References used here, none of which calls the package's M_reg or dual solvers:

* the dual QP of Theorem 6 (eq 22-26) built densely from the paper's operators
  (K[x] = G[x] (x) I_{P-1}, M_B = I (x) M_m (x) I, M_W = L (x) I, C = c^T (x) I), one
  (u+l)m(P-1) linear solve, and solved by a generic QP solver (qpsolvers + clarabel);
* the primal problem (eq 18-20) in weight space with explicit finite feature maps, as a QP;
* the Simplex Cone SVM QP of eq (27)-(28) (single view, supervised);
* the Laplacian SVM of Belkin et al. (2006) without bias, written in their notation;
* the QP of Theorem 7 (eq 31-34) with the combined kernel sum_i c_i^2 k^i (Corollary 20);
* the KKT conditions of Lemma 31 (eq 182-191), checked on decision values obtained
  through the public ``decision_function``.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import qpsolvers
import scipy.sparse as sp
from conftest import make_linear_problem, make_problem, paper_kwargs, random_graph_laplacians, sample_first

import mvl.svm as svm_module
from mvl.simplex import simplex_coding
from mvl.svm import ConvergenceWarning, MVLBinarySVM, MVLSVM, build_svm_dual, solve_dual

SOLVERS = ["admm", "smo", "lbfgsb", "apg"]
TIGHT = 1e-7  # solver tolerance for the comparisons with the references

# ---------------------------------------------------------------- references (numpy + clarabel only)


def _qp(Pm, q, G=None, h=None, lb=None, ub=None):
    """min 1/2 x^T Pm x + q^T x by clarabel (through qpsolvers), tight tolerances (1e-12; 1e-10 if clarabel
    stops short of 1e-12, as on the paper's gammas where Q_G has a condition number ~1e3-1e4 and entries ~1e5)."""
    for tol in (1e-12, 1e-10):
        x = qpsolvers.solve_qp(sp.csc_matrix(Pm), q, G=None if G is None else sp.csc_matrix(G), h=h, lb=lb,
                               ub=ub, solver="clarabel", tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol,
                               max_iter=500)
        if x is not None:
            return x
    raise AssertionError("clarabel failed at tolerance 1e-10")


def _box_dual_qp(Q, y, P, clip=False):
    """alpha (P, l) minimising 1/4 vec(alpha)^T Q vec(alpha) - 1/(P-1) 1^T vec(alpha) (sample-major vec) over the box
    (24), 0 <= alpha_ki <= (1 - delta_{k, y_i}) / l, by clarabel on the free variables (alpha_{y_i, i} = 0);
    ``clip``: into the box (clarabel's interior point may leave it by ~1e-12)."""
    l = len(y)
    ub = np.full((l, P), 1.0 / l)
    ub[np.arange(l), y] = 0.0
    free = ub.ravel() > 0
    x = np.zeros(l * P)
    x[free] = _qp(0.5 * Q[np.ix_(free, free)], -np.ones(free.sum()) / (P - 1), lb=np.zeros(free.sum()),
                  ub=ub.ravel()[free])
    if clip:
        x = np.clip(x, 0.0, ub.ravel())
    return x.reshape(l, P).T


def _codes(P):
    """The simplex code matrix, rebuilt from its definition (Gram matrix -1/(P-1) off-diagonal) by eigh."""
    gram = np.full((P, P), -1.0 / (P - 1)) + np.eye(P) * (1 + 1.0 / (P - 1))
    w, V = np.linalg.eigh(gram)
    return (V[:, 1:] * np.sqrt(w[1:])).T  # (P-1, P), S^T S = gram


def dense_theorem6(K, y, K_test, c, gamma_A, gamma_B, gamma_W, L, S):
    """Dual QP of Theorem 6 built densely (eq 22-25) and solved by clarabel.

    Returns dict(alpha (P, l), obj, h_test (t, P), Q (lP x lP, sample-major = vec of alpha)).
    """
    m, n, _ = K.shape
    P = S.shape[1]
    d = P - 1
    lab = np.flatnonzero(y >= 0)
    l = len(lab)
    E = np.eye(m)
    G = sum(np.kron(K[p], np.outer(E[p], E[p])) for p in range(m))  # eq (94), sample-major
    Gt = sum(np.kron(K_test[p], np.outer(E[p], E[p])) for p in range(m))
    Kx = np.kron(G, np.eye(d))
    Mm = m * np.eye(m) - np.ones((m, m))  # eq (54)
    M = gamma_B * np.kron(np.eye(n), np.kron(Mm, np.eye(d)))
    if gamma_W > 0:
        Lbig = sum(np.kron(L[p], np.outer(E[p], E[p])) for p in range(m))  # eq (60)
        M = M + gamma_W * np.kron(Lbig, np.eye(d))
    Isel = np.eye(n)[:, lab]  # I_{(u+l) x l}
    CstarS = np.kron(c[:, None], S)  # C* S = (c (x) I) S, (m d) x P
    T = np.kron(Isel, CstarS)  # I_{(u+l) x l} (x) C* S
    R = np.linalg.solve(M @ Kx + gamma_A * np.eye(Kx.shape[0]), T)
    Q = T.T @ Kx @ R  # eq (25)
    Q = 0.5 * (Q + Q.T)
    ub = np.full((l, P), 1.0 / l)
    ub[np.arange(l), y[lab]] = 0.0  # eq (24)
    free = ub.ravel() > 0  # alpha_{y_i, i} = 0: leave it out of the QP
    Qf = Q[np.ix_(free, free)]
    x = np.zeros(l * P)
    x[free] = _qp(0.5 * Qf, -np.ones(free.sum()) / (P - 1), lb=np.zeros(free.sum()), ub=ub.ravel()[free])
    x = np.clip(x, 0.0, ub.ravel())
    a = -0.5 * R @ x  # eq (22)
    f_test = np.kron(Gt, np.eye(d)) @ a  # f(v) = sum_j K(v, x_j) a_j
    Cf = np.kron(c[None, :], np.eye(d)) @ f_test.reshape(-1, m * d).T  # (d, t)
    return dict(alpha=x.reshape(l, P).T, obj=objective(Q, x.reshape(l, P).T), h_test=(S.T @ Cf).T, Q=Q)


def objective(Q, alpha):
    """D(alpha) of eq (26) with a dense Q in the sample-major order of vec(alpha)."""
    v = np.asarray(alpha).T.ravel()
    P = alpha.shape[0]
    return float(0.25 * v @ Q @ v - v.sum() / (P - 1))


def primal_weight_space(Phi, Phi_test, y, c, gamma_A, gamma_B, gamma_W, L, S):
    """The primal (eq 18-20) over explicit weights W_p ((P-1) x d_p), f^p(x) = W_p phi_p(x).

    ||f||^2 = sum_p ||W_p||_F^2 (linear kernels), <f, M_B f> = sum_j sum_{p<q} ||f^p(x_j) - f^q(x_j)||^2,
    <f, M_W f> = sum_p tr(F_p^T L^p F_p). Returns (primal optimum, h on the test points (t, P)).
    """
    m = len(Phi)
    P = S.shape[1]
    d = P - 1
    n = Phi[0].shape[0]
    lab = np.flatnonzero(y >= 0)
    l = len(lab)
    dims = [F.shape[1] for F in Phi]
    off = np.concatenate([[0], np.cumsum([d * dp for dp in dims])])
    D = int(off[-1])
    # maps from w = (vec W_1, ..., vec W_m) (column-major vec) to f^p(x_j) in R^d
    def fmap(p, phi):
        A = np.zeros((d, D))
        A[:, off[p]:off[p + 1]] = np.kron(phi[None, :], np.eye(d))
        return A

    H = gamma_A * np.eye(D)
    for j in range(n):
        Fj = [fmap(p, Phi[p][j]) for p in range(m)]
        for p in range(m):
            for q in range(p + 1, m):
                diff = Fj[p] - Fj[q]
                H += gamma_B * diff.T @ diff
    if gamma_W > 0:
        for p in range(m):
            sl = slice(off[p], off[p + 1])
            H[sl, sl] += gamma_W * np.kron(Phi[p].T @ L[p] @ Phi[p], np.eye(d))
    pairs = [(i, k) for i in lab for k in range(P) if k != y[i]]
    nv = D + len(pairs)
    Pm = np.zeros((nv, nv))
    Pm[:D, :D] = 2.0 * H
    q = np.zeros(nv)
    q[D:] = 1.0 / l
    Gc = np.zeros((2 * len(pairs), nv))
    hc = np.zeros(2 * len(pairs))
    for r, (i, k) in enumerate(pairs):
        Cf_i = sum(c[p] * fmap(p, Phi[p][i]) for p in range(m))  # C f(x_i) = sum_p c_p f^p(x_i)
        Gc[r, :D] = S[:, k] @ Cf_i  # <s_k, C f(x_i)> - xi_ki <= -1/(P-1)   (eq 19)
        Gc[r, D + r] = -1.0
        hc[r] = -1.0 / (P - 1)
        Gc[len(pairs) + r, D + r] = -1.0  # xi_ki >= 0   (eq 20)
    z = _qp(Pm + 1e-12 * np.eye(nv), q, G=Gc, h=hc)
    w = z[:D]
    val = float(w @ H @ w + q @ z)
    t = Phi_test[0].shape[0]
    h_test = np.empty((t, P))
    for s in range(t):
        Cf = sum(c[p] * fmap(p, Phi_test[p][s]) for p in range(m)) @ w
        h_test[s] = S.T @ Cf
    return val, h_test


def _random_c(m, rng):
    c = rng.uniform(0.3, 1.5, size=m) * rng.choice([-1.0, 1.0], size=m)
    return c


def _svm(cls, **kw):
    """An SVM on precomputed kernels; an explicit per-view laplacian (m, n, n) is passed sample-first."""
    if not isinstance(kw.get("laplacian", "normalized"), str):
        kw["laplacian"] = sample_first(kw["laplacian"])
    return cls(kernel="precomputed", **paper_kwargs(0, kw))


def _outputs(est, K_test):
    """All P outputs h(v) (t, P) of a fitted estimator on per-view test kernels (m, t, n), through the public
    API: sum_p c_p times the per-view outputs (for P > 2 this is decision_function itself)."""
    return np.einsum("tpk,p->tk", est.view_decision_function(sample_first(K_test)), est.c_)


def _two_class(h):
    """decision_function from the (t, P) outputs of a reference: (h_2 - h_1) / 2 for two classes."""
    return 0.5 * (h[:, 1] - h[:, 0]) if h.shape[1] == 2 else h


def _assert_same_predictions(h_ours, h_ref):
    """Same argmax wherever the reference's top two scores are not tied (gap > 1e-6); a two-class
    decision_function (t,) predicts the second class where it is positive."""
    if h_ours.ndim == 1:
        h_ours = np.stack([-h_ours, h_ours], axis=1)
    top2 = np.sort(h_ref, axis=1)[:, -2:]
    clear = (top2[:, 1] - top2[:, 0]) > 1e-6
    assert clear.sum() >= 0.5 * len(clear)
    np.testing.assert_array_equal(np.argmax(h_ours, axis=1)[clear], np.argmax(h_ref, axis=1)[clear])


# ---------------------------------------------------------------- 1. generic QP on the dual of Theorem 6

CASES = [(m, P, u) for m in (1, 2, 3) for P in (2, 3, 5) for u in (0.0, 0.3)]


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("m,P,frac_unl", CASES)
def test_dual_matches_generic_qp(m, P, frac_unl, solver):
    seed = 1000 * m + 10 * P + int(10 * frac_unl)
    rng = np.random.default_rng(seed)
    n = 20 + 8 * P if m > 1 else 60
    K, K_test, y = make_problem(m, n, P, frac_unlabelled=frac_unl, seed=seed, t=25)
    L = random_graph_laplacians(m, n, seed=seed, normalized=bool(seed % 2))
    c = _random_c(m, rng)
    gA, gB, gW = 10 ** rng.uniform(-3, -1), 10 ** rng.uniform(-3, -1), 10 ** rng.uniform(-3, -1)
    est = _svm(MVLSVM, gamma_A=gA, gamma_B=gB, gamma_W=gW, c=c, laplacian=L, solver=solver, tol=TIGHT)
    est.fit(sample_first(K), y)
    ref = dense_theorem6(K, y, K_test, c, gA, gB, gW, L, est.code_matrix_)
    ours = objective(ref["Q"], est.dual_coef_)  # our alpha, evaluated with the reference's Q
    assert abs(ours - ref["obj"]) <= 1e-6 * abs(ref["obj"])
    assert abs(est.dual_objective_ - ref["obj"]) <= 1e-6 * abs(ref["obj"])  # the package's own Q_G agrees
    h = est.decision_function(sample_first(K_test))
    assert h.shape == ((K_test.shape[1],) if P == 2 else (K_test.shape[1], P))
    np.testing.assert_allclose(h, _two_class(ref["h_test"]), atol=1e-4 * np.abs(ref["h_test"]).max())
    np.testing.assert_allclose(_outputs(est, K_test), ref["h_test"], atol=1e-4 * np.abs(ref["h_test"]).max())
    _assert_same_predictions(h, ref["h_test"])
    assert est.kkt_violation_ <= TIGHT


@pytest.mark.parametrize("refine,newton_max", [(False, 0), (True, 500), (True, 0)])
def test_smo_variants_match_generic_qp(refine, newton_max):
    """SMO reaches the QP optimum: plain Algorithm 3, with the Newton refinement by Cholesky, and by CG."""
    K, K_test, y = make_problem(2, 40, 4, frac_unlabelled=0.25, seed=7)
    L = random_graph_laplacians(2, 40, seed=7)
    c = np.array([0.8, -0.6])
    lab = np.flatnonzero(y >= 0)
    dual = build_svm_dual(K, lab, c, 1e-2, 1e-2, 1e-2, L)
    U = svm_module.dual_upper_bounds(y[lab], 4)
    alpha, n_iter, viol = svm_module._smo(dual.Q_G, U, np.zeros_like(U), TIGHT, 10**6, refine=refine,
                                          newton_max=newton_max)
    ref = dense_theorem6(K, y, K_test, c, 1e-2, 1e-2, 1e-2, L, simplex_coding(4))
    assert viol <= TIGHT
    assert abs(objective(ref["Q"], alpha) - ref["obj"]) <= 1e-6 * abs(ref["obj"])
    if not refine:  # solve_dual's switch gives the same plain Algorithm 3
        alpha2, _, _ = solve_dual(dual.Q_G, y[lab], 4, "smo", tol=TIGHT, refine=False)
        np.testing.assert_array_equal(alpha2, alpha)


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
    x[free] = _qp(0.5 * Q[np.ix_(free, free)], -np.ones(free.sum()) / (P - 1), lb=np.zeros(free.sum()),
                  ub=ub.ravel()[free])
    obj_ref = objective(Q, x.reshape(l, P).T)
    for solver in SOLVERS:
        est = _svm(MVLSVM, gamma_A=gamma_A, gamma_B=1e-6, gamma_W=1e-6, laplacian=L, solver=solver, tol=1e-6)
        est.fit(sample_first(K), y)
        assert abs(objective(Q, est.dual_coef_) - obj_ref) <= 1e-6 * abs(obj_ref)


@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("m,P", [(1, 3), (2, 2), (2, 4), (3, 3)])
def test_primal_weight_space(m, P, solver):
    """Strong duality and f itself against the primal (eq 18-20) solved in weight space."""
    seed = 50 * m + P
    rng = np.random.default_rng(seed)
    prob = make_linear_problem(m, 18 + 3 * P, P, frac_unlabelled=0.3, seed=seed, t=12)
    n = prob["K"].shape[1]
    L = random_graph_laplacians(m, n, seed=seed)
    c = _random_c(m, rng)
    gA, gB, gW = 0.05, 0.02, 0.01
    est = _svm(MVLSVM, gamma_A=gA, gamma_B=gB, gamma_W=gW, c=c, laplacian=L, solver=solver, tol=TIGHT)
    est.fit(sample_first(prob["K"]), prob["y"])
    val, h_ref = primal_weight_space(prob["Phi"], prob["Phi_test"], prob["y"], c, gA, gB, gW, L,
                                     est.code_matrix_)
    assert abs(-est.dual_objective_ - val) <= 1e-6 * abs(val)  # primal optimum = -min D
    h = est.decision_function(sample_first(prob["K_test"]))
    np.testing.assert_allclose(h, _two_class(h_ref), atol=1e-4 * np.abs(h_ref).max())
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
    S = _codes(P)  # any simplex coding: SC-SVM's decisions do not depend on its orientation
    Q = np.kron(K[0], S.T @ S) / gA  # eq (28)
    alpha = _box_dual_qp(Q, y, P)
    a = -(1.0 / (2 * gA)) * (S @ alpha)  # eq (27): a_i = -1/(2 gamma_A) S alpha_i
    h_ref = (S.T @ (a @ K_test[0].T)).T  # h(v) = S^T sum_i k(v, x_i) a_i
    assert abs(est.dual_objective_ - objective(Q, alpha)) <= 1e-6 * abs(objective(Q, alpha))
    h = est.decision_function(sample_first(K_test))
    np.testing.assert_allclose(h, h_ref, atol=1e-4 * np.abs(h_ref).max())
    _assert_same_predictions(h, h_ref)


@pytest.mark.parametrize("solver", SOLVERS)
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
    beta = _qp(Qb, -np.ones(l), lb=np.zeros(l), ub=np.full(l, 1.0 / l))
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
    c = _random_c(m, rng)
    gA = 0.01
    S = _codes(P)
    k_comb = np.einsum("p,pij->ij", c**2, K)
    kt_comb = np.einsum("p,pij->ij", c**2, K_test)
    l = len(y)
    Sy = np.zeros((l * (P - 1), l * (P - 1)))  # diag(S_y): block i is S without column y_i
    for i in range(l):
        Sy[i * (P - 1):(i + 1) * (P - 1), i * (P - 1):(i + 1) * (P - 1)] = np.delete(S, y[i], axis=1)
    Q = Sy.T @ np.kron(k_comb, np.eye(P - 1)) @ Sy / gA
    Q = 0.5 * (Q + Q.T)
    nb = l * (P - 1)
    beta = _qp(0.5 * Q, -np.ones(nb) / (P - 1), lb=np.zeros(nb), ub=np.full(nb, 1.0 / l))
    Cf = -(1.0 / (2 * gA)) * np.kron(kt_comb, np.eye(P - 1)) @ Sy @ beta
    h_ref = (S.T @ Cf.reshape(-1, P - 1).T).T
    obj_ref = 0.25 * beta @ Q @ beta - beta.sum() / (P - 1)
    est = _svm(MVLSVM, gamma_A=gA, c=c, solver=solver, tol=TIGHT).fit(sample_first(K), y)
    assert abs(est.dual_objective_ - obj_ref) <= 1e-6 * abs(obj_ref)
    h = est.decision_function(sample_first(K_test))
    np.testing.assert_allclose(h, _two_class(h_ref), atol=1e-4 * np.abs(h_ref).max())
    np.testing.assert_allclose(_outputs(est, K_test), h_ref, atol=1e-4 * np.abs(h_ref).max())
    _assert_same_predictions(h, h_ref)


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


def test_block_step_is_exact_minimiser():
    """The SMO block update solves its P-dimensional box QP exactly (checked by clarabel)."""
    rng = np.random.default_rng(5)
    for _ in range(30):
        P = int(rng.integers(2, 9))
        u = np.full(P, 0.05)
        u[rng.integers(P)] = 0.0
        x = np.where(rng.uniform(size=P) < 0.5, 0.0, rng.uniform(0, 0.05, size=P)) * (u > 0)
        g = rng.normal(size=P) * 10 ** rng.uniform(-2, 0)
        hh = 10 ** rng.uniform(-1, 2)
        QS = np.full((P, P), -1.0 / (P - 1)) + np.eye(P) * (1 + 1.0 / (P - 1))
        xn = svm_module._block_step(x, u, g, hh, P)
        ref = _qp(hh * QS + 1e-14 * np.eye(P), g - hh * QS @ x, lb=np.zeros(P), ub=u)

        def val(z, g=g, x=x, hh=hh, QS=QS):
            return g @ (z - x) + 0.5 * hh * (z - x) @ QS @ (z - x)

        assert np.all(xn >= 0) and np.all(xn <= u)
        assert val(xn) <= val(ref) + 1e-10 * max(1.0, abs(val(ref)))


def test_binary_shares_factorisations(monkeypatch):
    """MVL-binSVM factorises M_reg once (m view LUs) for all P one-vs-all problems."""
    calls = {"build": 0, "factor": 0}
    real_build, real_factor = svm_module.build_svm_dual, svm_module.factor_view

    def build(*a, **k):
        calls["build"] += 1
        return real_build(*a, **k)

    def factor(*a, **k):
        calls["factor"] += 1
        return real_factor(*a, **k)

    monkeypatch.setattr(svm_module, "build_svm_dual", build)
    monkeypatch.setattr(svm_module, "factor_view", factor)
    K, _, y = make_problem(3, 30, 4, frac_unlabelled=0.3, seed=8)
    _svm(MVLBinarySVM, gamma_A=1e-2, gamma_B=1e-2, gamma_W=1e-2).fit(sample_first(K), y)
    assert calls == {"build": 1, "factor": 3}


@pytest.mark.parametrize("solver", SOLVERS)
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


def test_binary_warm_start():
    K, _, y = make_problem(2, 40, 3, frac_unlabelled=0.2, seed=10)
    est = _svm(MVLBinarySVM, gamma_A=1e-2, solver="smo", tol=1e-6, warm_start=True).fit(sample_first(K), y)
    first = est.dual_coef_.copy()
    est.fit(sample_first(K), y)
    np.testing.assert_allclose(est.dual_coef_, first, atol=1e-12)
    assert np.all(est.n_iter_ == 0)


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

# name: (m, n, P, fraction unlabelled, (gamma_A, gamma_B, gamma_W), seed, samples duplicated)
NAMED_PROBLEMS = {
    "binary": (2, 40, 2, 0.3, (1e-3, 1e-3, 1e-3), 301, 0),  # P = 2: one free variable per sample
    "many_classes": (2, 100, 34, 0.2, (1e-3, 1e-3, 1e-3), 302, 0),  # P = 34, 2-3 labelled per class
    "semi_supervised": (3, 70, 5, 0.5, (1e-3, 1e-2, 1e-2), 303, 0),  # half unlabelled, large gamma_B, gamma_W
    "paper_gammas": (3, 90, 8, 0.2, (1e-5, 1e-6, 1e-6), 304, 0),  # the paper's gammas: most variables free
    "duplicated_samples": (2, 50, 4, 0.2, (1e-3, 1e-4, 0.0), 305, 8),  # 8 exact copies: Q_G singular
}


def named_problem(name):
    """Kernels (m, n, n), test kernels, labels (-1 unlabelled), Laplacians, c and gammas of a named problem.
    ``duplicated_samples`` appends exact copies of some samples (same kernel rows, same labels)."""
    m, n, P, frac, gammas, seed, dup = NAMED_PROBLEMS[name]
    K, K_test, y = make_problem(m, n, P, frac_unlabelled=frac, seed=seed, t=20)
    if dup:
        rng = np.random.default_rng(seed)
        idx = np.concatenate([np.arange(n), rng.choice(np.flatnonzero(y >= 0), size=dup, replace=False)])
        K, K_test, y = K[:, idx][:, :, idx], K_test[:, :, idx], y[idx]
        n = len(idx)
    L = random_graph_laplacians(m, n, seed=seed, normalized=True)
    c = _random_c(m, np.random.default_rng(seed))
    return K, K_test, y, L, c, gammas


def _qg_reference(Q_G, y_lab, P):
    """min D over the box (24) with the dense Q = Q_G (x) Q_S by clarabel: (alpha (P, l), D)."""
    Q = np.kron(Q_G, np.full((P, P), -1.0 / (P - 1)) + np.eye(P) * (1 + 1.0 / (P - 1)))
    alpha = _box_dual_qp(Q, y_lab, P, clip=True)
    return alpha, objective(Q, alpha)


def _fit_named(name, solver, tol=TIGHT, **kw):
    K, K_test, y, L, c, (gA, gB, gW) = named_problem(name)
    return _svm(MVLSVM, gamma_A=gA, gamma_B=gB, gamma_W=gW, c=c, laplacian=L, solver=solver, tol=tol,
                **kw).fit(sample_first(K), y)


@pytest.mark.parametrize("name", list(NAMED_PROBLEMS))
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
        np.testing.assert_allclose(h, _two_class(ref["h_test"]), atol=1e-4 * np.abs(ref["h_test"]).max())
        _assert_same_predictions(h, ref["h_test"])
    else:
        dual = build_svm_dual(K, est.labelled_, c, gA, gB, gW, L)
        _, obj_ref = _qg_reference(dual.Q_G, y[est.labelled_], P)
    assert abs(est.dual_objective_ - obj_ref) <= 1e-6 * abs(obj_ref)


@pytest.mark.parametrize("name", list(NAMED_PROBLEMS))
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
        _assert_same_predictions(fits[s].decision_function(Kt), h_ref)


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


def _dense_admm(Q_G, U, A0, rho, n_iter, relax=1.6):
    """Textbook ADMM (Boyd et al. 2011, Sec. 5.2) on the box QP with the dense Hessian H = 1/2 Q_G (x) Q_S
    (sample-major vec of alpha) and a dense solve per iteration; z = alpha0, u = -grad D(alpha0) / rho."""
    P, l = U.shape
    QS = np.full((P, P), -1.0 / (P - 1)) + np.eye(P) * (1 + 1.0 / (P - 1))
    H = 0.5 * np.kron(Q_G, QS)
    q = -np.ones(P * l) / (P - 1)
    ub = U.T.ravel()
    z = A0.T.ravel().copy()
    u = -(H @ z + q) / rho
    for _ in range(n_iter):
        x = np.linalg.solve(H + rho * np.eye(P * l), rho * (z - u) - q)
        xh = relax * x + (1 - relax) * z
        z = np.clip(xh + u, 0.0, ub)
        u = u + xh - z
    return z.reshape(l, P).T


@pytest.mark.parametrize("name", ["binary", "semi_supervised", "duplicated_samples"])
def test_admm_iterates_match_dense_admm(name):
    """The structured x-step (column means and one Cholesky of c1/2 Q_G + rho I, module docstring) gives the
    iterates of ADMM with the dense (lP x lP) Hessian solved directly."""
    K, _, y, L, c, (gA, gB, gW) = named_problem(name)
    lab = np.flatnonzero(y >= 0)
    dual = build_svm_dual(K, lab, c, gA, gB, gW, L)
    P = int(y.max()) + 1
    U = svm_module.dual_upper_bounds(y[lab], P)
    A0 = np.random.default_rng(1).uniform(size=U.shape) * U  # a feasible, not optimal, start
    rho = 3.7 * svm_module._admm_penalty(dual.Q_G, P)
    for k in (1, 7):
        ours, n_iter, _ = svm_module._admm(dual.Q_G, U, A0, 0.0, k, rho=rho)
        assert n_iter == k
        np.testing.assert_allclose(ours, _dense_admm(dual.Q_G, U, A0, rho, k), rtol=0, atol=1e-10 * U.max())


def test_memory_estimate_linear_in_classes(monkeypatch):
    """The memory checked before an SVM fit grows with l^2 + P l (Q_G, alpha), not with P l^2: at Caltech-101's
    l = 3,060, P = 102 the old P l^2 term alone claimed 23 GB and stopped the paper profile on a 23 GB machine."""
    seen = []
    monkeypatch.setattr("mvl.base.check_memory", lambda nbytes, *a, **k: seen.append(nbytes))
    K, _, y = make_problem(2, 60, 30, frac_unlabelled=0.0, seed=5)
    _svm(MVLSVM, gamma_A=1e-3, tol=1e-2).fit(sample_first(K), y)
    m, n, l, P = 2, 60, 60, 30
    assert seen and max(seen) == 8.0 * ((2 * m + 3) * n * n + 3 * l * l + 8 * l * P)
    # the same samples in 3 classes instead of 30: the estimate may differ by a few P x l arrays, not by l^2 P
    few = []
    monkeypatch.setattr("mvl.base.check_memory", lambda nbytes, *a, **k: few.append(nbytes))
    _svm(MVLSVM, gamma_A=1e-3, tol=1e-2).fit(sample_first(K), y % 3)
    assert 0 < max(seen) - max(few) <= 8.0 * 10 * l * (P - 3)  # the old l^2 P term: 8 * 3 l^2 (P - 3)


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
def test_bad_parameters(cls, two_view_problem, kw, match):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match=match):
        _fit(cls, sample_first(K), y, **kw)


@pytest.mark.parametrize("cls", ESTIMATORS)
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
