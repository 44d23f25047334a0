"""Independent references for the tests of MVL-SVM, MVL-binSVM and their dual solvers (Theorems 6, 7, 13,
Corollaries 8, 20, Lemma 31); none of them calls the package's M_reg or dual solvers:

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

import numpy as np
import qpsolvers
import scipy.sparse as sp
from conftest import make_problem, random_graph_laplacians

TIGHT = 1e-7  # solver tolerance for the comparisons with the references

def generic_qp(Pm, q, G=None, h=None, lb=None, ub=None):
    """min 1/2 x^T Pm x + q^T x by clarabel (through qpsolvers), tight tolerances (1e-12; 1e-10 if clarabel
    stops short of 1e-12, as on the paper's gammas where Q_G has a condition number ~1e3-1e4 and entries ~1e5)."""
    for tol in (1e-12, 1e-10):
        x = qpsolvers.solve_qp(sp.csc_matrix(Pm), q, G=None if G is None else sp.csc_matrix(G), h=h, lb=lb,
                               ub=ub, solver="clarabel", tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol,
                               max_iter=500)
        if x is not None:
            return x
    raise AssertionError("clarabel failed at tolerance 1e-10")

def box_dual_qp(Q, y, P, clip=False):
    """alpha (P, l) minimising 1/4 vec(alpha)^T Q vec(alpha) - 1/(P-1) 1^T vec(alpha) (sample-major vec) over the box
    (24), 0 <= alpha_ki <= (1 - delta_{k, y_i}) / l, by clarabel on the free variables (alpha_{y_i, i} = 0);
    ``clip``: into the box (clarabel's interior point may leave it by ~1e-12)."""
    l = len(y)
    ub = np.full((l, P), 1.0 / l)
    ub[np.arange(l), y] = 0.0
    free = ub.ravel() > 0
    x = np.zeros(l * P)
    x[free] = generic_qp(0.5 * Q[np.ix_(free, free)], -np.ones(free.sum()) / (P - 1), lb=np.zeros(free.sum()),
                  ub=ub.ravel()[free])
    if clip:
        x = np.clip(x, 0.0, ub.ravel())
    return x.reshape(l, P).T

def simplex_codes(P):
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
    x[free] = generic_qp(0.5 * Qf, -np.ones(free.sum()) / (P - 1), lb=np.zeros(free.sum()), ub=ub.ravel()[free])
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

    ||f||^2 = sum_p ||W_p||_F^2 (linear kernels; ``gamma_A`` a scalar or one weight per view),
    <f, M_B f> = sum_j sum_{p<q} ||f^p(x_j) - f^q(x_j)||^2,
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

    # gamma_A per view (an array) penalises ||W_p||^2 by gamma_A[p]: the primal of features rescaled by s_p,
    # W_p = V_p / s_p, is this one over V_p with gamma_A / s_p^2
    H = np.diag(np.repeat(np.broadcast_to(np.asarray(gamma_A, dtype=float), (m,)), [d * dp for dp in dims]))
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
    z = generic_qp(Pm + 1e-12 * np.eye(nv), q, G=Gc, h=hc)
    w = z[:D]
    val = float(w @ H @ w + q @ z)
    t = Phi_test[0].shape[0]
    h_test = np.empty((t, P))
    for s in range(t):
        Cf = sum(c[p] * fmap(p, Phi_test[p][s]) for p in range(m)) @ w
        h_test[s] = S.T @ Cf
    return val, h_test

def random_c(m, rng):
    c = rng.uniform(0.3, 1.5, size=m) * rng.choice([-1.0, 1.0], size=m)
    return c

def two_class(h):
    """decision_function from the (t, P) outputs of a reference: (h_2 - h_1) / 2 for two classes."""
    return 0.5 * (h[:, 1] - h[:, 0]) if h.shape[1] == 2 else h

def assert_same_predictions(h_ours, h_ref):
    """Same argmax wherever the reference's top two scores are not tied (gap > 1e-6); a two-class
    decision_function (t,) predicts the second class where it is positive."""
    if h_ours.ndim == 1:
        h_ours = np.stack([-h_ours, h_ours], axis=1)
    top2 = np.sort(h_ref, axis=1)[:, -2:]
    clear = (top2[:, 1] - top2[:, 0]) > 1e-6
    assert clear.sum() >= 0.5 * len(clear)
    np.testing.assert_array_equal(np.argmax(h_ours, axis=1)[clear], np.argmax(h_ref, axis=1)[clear])

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
    c = random_c(m, np.random.default_rng(seed))
    return K, K_test, y, L, c, gammas

def qg_reference(Q_G, y_lab, P):
    """min D over the box (24) with the dense Q = Q_G (x) Q_S by clarabel: (alpha (P, l), D)."""
    Q = np.kron(Q_G, np.full((P, P), -1.0 / (P - 1)) + np.eye(P) * (1 + 1.0 / (P - 1)))
    alpha = box_dual_qp(Q, y_lab, P, clip=True)
    return alpha, objective(Q, alpha)
