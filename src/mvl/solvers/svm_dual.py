"""The dual of MVL-SVM and its box-QP solvers (Theorems 6 and 13, Proposition 14, Algorithm 3).

Problem (eq 14 with the simplex coding S = [s_1, ..., s_P] of eq 15, Y = R^(P-1), R = I):

    1/l sum_{i<=l} sum_{k != y_i} max(0, 1/(P-1) + <s_k, C f(x_i)>)
        + gamma_A ||f||^2 + gamma_B <f, M_B f> + gamma_W <f, M_W f>,

with C = c^T (x) I_{P-1} (eq 52), M_B from eq (54)-(57), M_W from eq (60)-(63).
By Theorem 6 (eq 26) and Theorem 13 the dual is the box-constrained QP

    min_alpha D(alpha) = 1/4 vec(alpha)^T Q vec(alpha) - 1/(P-1) 1^T vec(alpha),
    0 <= alpha_ki <= (1 - delta_{k, y_i}) / l,                                  (24)

alpha of size P x l, Q = Q_G (x) Q_S (eq 193-195), Q_S = S^T S and

    Q_G = (I_{(u+l) x l}^T (x) c^T) G[x] M_reg (I_{(u+l) x l} (x) c),
    M_reg = [(gamma_B I_{u+l} (x) M_m + gamma_W L) G[x] + gamma_A I]^{-1}.     (79)

Block structure (as in ``least_squares.solve_structured``). Grouping unknowns
view-major, G[x] = blockdiag(K^1, ..., K^m) and (M_reg^{-1} A)_p = H_p A_p - gamma_B T,
with H_p = (gamma_B m I + gamma_W L^p) K^p + gamma_A I and T = sum_q K^q A_q. For
right-hand sides c_p E (E = the l labelled columns of I_n), A_p = H_p^{-1}(c_p E + gamma_B T),
and with Q_p = K^p H_p^{-1} (symmetric), Q_c = sum c_p Q_p, Q_1 = sum Q_p, Q_cc = sum c_p^2 Q_p,

    T = (I - gamma_B Q_1)^{-1} Q_c[:, L],     Q_G = Q_cc[L, L] + gamma_B Q_c[L, :] T.

Cost: m LU factorisations of n x n matrices and one of I - gamma_B Q_1 (none if
gamma_B = 0 or m = 1); no (nm) x (nm) matrix is formed. Q = Q_G (x) Q_S (Pl x Pl)
is never formed either: both solvers use Q vec(alpha) = vec(Q_S alpha Q_G) (eq 197).

Decision values (Proposition 14, eq 80-83): the coefficients of f are
a = -1/2 [M_reg (I (x) c) (x) S] vec(alpha) (eq 77), so the SVM outputs
h(v) = S^T C f(v) = (<s_k, C f(v)>)_k in R^P are returned by ``decision_function``
and ``predict`` decodes them by eq (15)/(17), argmax_k <s_k, C f(v)>. On the
labelled training points h = -1/2 Q_S alpha Q_G (eq 192), so the gradient of D
is grad D = 1/2 Q_S alpha Q_G - 1/(P-1) = -(h + 1/(P-1)): the KKT conditions of
Lemma 31 (eq 182-186) are the box-QP optimality conditions in the units of h.

Solvers
-------
The dual has (P-1) l free variables (P l with the zeros of (24)): 154,530 for Caltech-101's l = 1,530,
P = 102. Two designs that use the Kronecker structure Q = Q_G (x) Q_S in every step are compared with the SMO
of Algorithm 3 and L-BFGS-B by benchmarks/bench_svm.py (timings in benchmarks/README.md):

``solver="admm"`` (default for P >= 3 through ``"auto"``): ADMM on the splitting x = z, z in the box
(Boyd et al. 2011, Sec. 5.2; OSQP's form with A = I, over-relaxation 1.6). Its x-step solves
(1/2 Q_G (x) Q_S + rho I) x = r exactly: Q_S = P/(P-1) (I - 1 1^T/P) (eq 195) only scales the centred part
of each sample's alpha_i, so in the (P, l) layout the column means are divided by rho and the centred rows
solve X_c (P/(2(P-1)) Q_G + rho I) = R_c with ONE Cholesky factorisation of an l x l matrix computed before
the loop. Cost: l^3/3 once, then per iteration one triangular solve pair with P right-hand sides (2 P l^2
flops, BLAS-3, threaded when P l^2 >= 2e7) and O(P l) elementwise work; a KKT check (one l x l by l x P
product) every 10 iterations. The iteration count depends on the conditioning only through rho
(``_admm_penalty``).

``solver="apg"``: accelerated projected gradient (FISTA with gradient restarts), the same 2 P l^2 flops per
iteration without the factorisation, but its iterations grow with the square root of the condition number
of the free part (large with the paper's gammas), which makes it slower than ADMM there. Kept for comparison.

``solver="smo"``: Algorithm 3 (Appendix A.4), with the P coordinates of one
sample updated as a block (the exact minimiser of D over alpha_i within its
box: one scalar root of a piecewise-linear equation), the sample chosen as the
largest KKT violator (Lemma 31), the gradient 1/2 Q_S alpha Q_G kept up to date
by a rank-one update per step (one row of Q_G and one of Q_S, eq 196-198), and
shrinking (samples whose coordinates sit at a bound with the gradient pointing
out of the box are left out until the next full check). Added to the paper's
algorithm: a Newton refinement once SMO is within half the margin of the KKT
conditions (a projected Newton step on the free coordinates, by Cholesky or
conjugate gradients, then SMO again; see ``_smo``): coordinate descent finds
which variables sit at a bound quickly but converges slowly on the free ones.
The inner loop is numpy and plain Python (numba is not a dependency), and its block updates grow with
l P; it stays the solver for two classes (the binary problems of MVL-binSVM), where few variables are free
and its few cheap updates beat a factorisation.

``solver="lbfgsb"``: scipy's L-BFGS-B on the same box QP, gradient through the
Kronecker structure (one l x l by l x P product per evaluation); its iterations grow with the conditioning.

SMO and L-BFGS-B run with BLAS limited to one thread (threadpoolctl): their products are
small, and extra threads only contend for the cores.

Stopping rule: Algorithm 3 stops when there is no KKT violator (Lemma 31) or a
ratio falls below epsilon; in our copy of the paper the ratio is illegible, so
both solvers use the KKT form: stop when the largest violation of (182)-(186),
in the units of h = <s_k, C f(x_i)> (the margin is -1/(P-1)), is <= tol. This
is the same measure as LIBSVM's eps (1e-3 by default).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy import linalg, optimize
from scipy.linalg import blas, lapack
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from ..missing_views import combination_weights
from .incomplete import add_view_blocks, system_rows
from .lapack import factor_spd, factor_view, solve_factored, view_Q
from ..simplex import simplex_gram

__all__ = [
    "SOLVER_NAMES",
    "SVMDual",
    "SVMDualIncomplete",
    "RANGE_RCOND",
    "RangeView",
    "apply_qs",
    "build_svm_dual",
    "build_svm_dual_incomplete",
    "dual_objective",
    "dual_upper_bounds",
    "kkt_violation",
    "resolve_solver",
    "solve_dual",
]

SOLVER_NAMES = ("auto", "admm", "smo", "lbfgsb", "apg")
# ADMM and APG run their l x l by l x P products with the BLAS threads the environment gives when a product
# has at least this many multiply-adds (P l^2); SMO, L-BFGS-B and smaller products with one thread
_THREADED_MIN_WORK = 2e7


# ------------------------------------------------------------------ M_reg, view by view

RANGE_RCOND = 1e-14
"""Below this reciprocal condition number of H_p (LAPACK dgecon) :func:`build_svm_dual` forms view p's blocks on
the range of K^p (:class:`RangeView`) instead of from the LU of H_p, whose forward error eps / rcond then reaches
the percent. H_p = M_p K^p + delta I is that ill-conditioned when K^p's scale dwarfs delta, e.g. a linear kernel
of features of scale 1e6: K^p ~ 1e13, rcond ~ 1e-20, Q_G indefinite and the dual diverges to NaN."""


class RangeView:
    """View p's blocks on the range of K^p, where an LU of H_p = M_p K^p + delta I is inaccurate
    (:data:`RANGE_RCOND`). With K^p = Phi Phi^T (eigenvalues above n eps lambda_max; those below are K^p's own
    rounding) and the push-through identity Phi^T (M_p Phi Phi^T + delta I)^{-1} = S^{-1} Phi^T,
    S = Phi^T M_p Phi + delta I (r x r, positive definite for M_p symmetric PSD):

        Q_p = K^p H_p^{-1} = Phi S^{-1} Phi^T,    a = H_p^{-1} R = Phi Lambda^{-1} S^{-1} Phi^T R + a_0,

    a_0 in the null space of K^p: the zero function (a_0^T K^p a_0 = 0), dropped. It can be of order 1 / delta;
    kept, it would swamp K^p(x, X) a with the rounding of K^p(x, X) (at scale 1e13: an error of order 1e2 in
    every prediction). S's condition is that of Phi^T M_p Phi (K^p's scale cancels), so both are accurate at any
    scale of K^p. M_p = beta m I + omega L^p (eq 79, as :func:`mvl.solvers.lapack.factor_view`)."""

    def __init__(self, Kp, Lp, m, delta, beta, omega):
        n = Kp.shape[0]
        lam, U = linalg.eigh(Kp, check_finite=False)
        keep = lam > n * np.finfo(np.float64).eps * max(float(lam[-1]), 0.0)
        self.Phi = U[:, keep] * np.sqrt(lam[keep])
        self._back = U[:, keep] / np.sqrt(lam[keep])  # Phi Lambda^{-1}
        Mp = omega * Lp if omega > 0 and Lp is not None else np.zeros((n, n))
        Mp[np.diag_indices(n)] += beta * m
        S = self.Phi.T @ (Mp @ self.Phi)
        self._fac = factor_spd(0.5 * (S + S.T), float(delta)) if self.Phi.shape[1] else None

    def _inner(self, R):
        """S^{-1} Phi^T R."""
        return solve_factored(self._fac, self.Phi.T @ R) if self._fac is not None else np.zeros((0, R.shape[1]))

    def Q(self):
        """Q_p = Phi S^{-1} Phi^T (n x n, exactly symmetric)."""
        if self._fac is None:
            return np.zeros((self.Phi.shape[0],) * 2)
        Q = self.Phi @ solve_factored(self._fac, self.Phi.T)
        return 0.5 * (Q + Q.T)

    def solve(self, R):
        """H_p^{-1} R without its component in the null space of K^p (the same function)."""
        return self._back @ self._inner(R)


class SVMDual:
    """Q_G of eq (194) and the map from dual variables to coefficients, view by view.

    Built by :func:`build_svm_dual`. ``Q_G`` (l x l) is shared by every dual
    problem on the same kernels, labelled set and gammas (the P binary problems
    of :class:`mvl.MVLBinarySVM` included); :meth:`coefficients` applies
    M_reg (I (x) c) to any number of right-hand sides with the stored factors.
    """

    def __init__(self, Q_G, factors, c, labelled, n, gamma_B_eff, Qc_L=None, lu_T=None):
        self.Q_G = Q_G
        self._factors = factors
        self._c = c
        self._labelled = labelled
        self._n = n
        self._beta = gamma_B_eff
        self._Qc_L = Qc_L  # Q_c[:, L] (n x l), only when gamma_B > 0
        self._lu_T = lu_T  # LU of (I - gamma_B Q_1)^T, only when gamma_B > 0

    def coefficients(self, W):
        """A_p W for every view, shape (m, n, r): A = M_reg (I_{(u+l) x l} (x) c), W of shape (l, r).

        A_p = H_p^{-1} (c_p E + gamma_B T) with T = (I - gamma_B Q_1)^{-1} Q_c[:, L] (module doc).
        """
        W = np.asarray(W, dtype=np.float64)
        r = W.shape[1]
        EW = np.zeros((self._n, r))
        EW[self._labelled] = W
        TW = None
        if self._lu_T is not None:
            lu, piv = self._lu_T
            TW, info = lapack.dgetrs(lu, piv, self._Qc_L @ W, trans=1)
            TW *= self._beta
        out = np.empty((len(self._factors), self._n, r))
        for p, f in enumerate(self._factors):
            rhs = self._c[p] * EW
            if TW is not None:
                rhs += TW
            if isinstance(f, RangeView):
                out[p] = f.solve(rhs)
            else:
                out[p], info = lapack.dgetrs(*f, rhs, trans=1)  # H_p x = rhs from the LU of H_p^T
        return out


def build_svm_dual(K, labelled, c, gamma_A, gamma_B, gamma_W, L=None):
    """Q_G (eq 194, with M_reg of eq 79) and the coefficient map, in O(m n^3) time, O(m n^2) memory.

    ``K`` (m, n, n) exactly symmetric per view, ``labelled`` the l labelled
    indices, ``c`` (m,), ``L`` (m, n, n) or None when gamma_W = 0. Reuses the
    per-view factorisation of ``least_squares`` (``factor_view``: LU of H_p^T).
    """
    m, n, _ = K.shape
    labelled = np.asarray(labelled)
    beta = gamma_B if m > 1 else 0.0  # M_1 = 0: no between-view term for one view
    factors = []
    Q_G = np.zeros((len(labelled), len(labelled)))
    Qc = np.zeros((n, n)) if beta > 0 else None
    Q1 = np.zeros((n, n)) if beta > 0 else None
    for p in range(m):
        rconds = []
        Lp = None if L is None else L[p]
        lu, piv = factor_view(K[p], Lp, m, gamma_A, beta, gamma_W, p, rconds)
        if rconds[0] < RANGE_RCOND:  # the LU is inaccurate: view p on the range of K^p
            del lu, piv
            factors.append(RangeView(K[p], Lp, m, gamma_A, beta, gamma_W))
            Qp = factors[-1].Q()
        else:
            factors.append((lu, piv))
            Qp = view_Q(lu, piv, K[p]).T  # C-ordered view of Q_p^T = Q_p
        Q_G += (c[p] * c[p]) * Qp[np.ix_(labelled, labelled)]
        if beta > 0:
            Qc += c[p] * Qp
            Q1 += Qp
        del Qp
    Qc_L = lu_T = None
    if beta > 0:
        Q1 *= -beta
        Q1[np.diag_indices(n)] += 1.0  # I - gamma_B Q_1
        Qc_L = np.ascontiguousarray(Qc[:, labelled])
        lu, piv, info = lapack.dgetrf(Q1.T, overwrite_a=True)
        if info != 0:
            raise np.linalg.LinAlgError(f"I - gamma_B Q_1 is singular (dgetrf info {info})")
        lu_T = (lu, piv)
        T, info = lapack.dgetrs(lu, piv, Qc_L, trans=1)
        Q_G += beta * (Qc[labelled] @ T)
        del Qc, Q1, T
    Q_G = 0.5 * (Q_G + Q_G.T)  # symmetric up to rounding: make it exact
    return SVMDual(Q_G, factors, c, labelled, n, beta, Qc_L, lu_T)


class SVMDualIncomplete:
    """Q_G of eq (194) and the coefficient map of MVL-SVM / MVL-binSVM on incomplete views (the interface of
    :class:`SVMDual`). Built by :func:`build_svm_dual_incomplete`."""

    def __init__(self, Q_G, factors, Ct, labelled, n, beta, U, wU, Qc_LU, lu_Z):
        self.Q_G = Q_G
        self._factors = factors
        self._Ct = Ct
        self._labelled = labelled
        self._n = n
        self._beta = beta
        self._U, self._wU, self._Qc_LU, self._lu_Z = U, wU, Qc_LU, lu_Z

    def coefficients(self, W):
        """A_p W for every view, (m, n, r), zero at absent (sample, view): A = M_reg (I_{(u+l) x l} (x) c~), i.e.
        A_p = H_p^{-1} (C~_p E W + beta W_p T), Z_U = W~_U T_U = (I - beta W_U Q_1[U, U])^{-1} W_U Q_c[L, U]^T W."""
        W = np.asarray(W, dtype=np.float64)
        r = W.shape[1]
        EW = np.zeros((self._n, r))
        EW[self._labelled] = W
        Z = np.zeros((self._n, r))
        if self._lu_Z is not None:
            lu, piv = self._lu_Z
            Z[self._U], _ = lapack.dgetrs(lu, piv, self._wU[:, None] * (self._Qc_LU.T @ W))
        out = np.zeros((len(self._factors), self._n, r))
        for p, fac in enumerate(self._factors):
            if fac is None:
                continue
            idx, lu, piv = fac
            rhs = self._Ct[idx, p][:, None] * EW[idx]
            if self._lu_Z is not None:
                rhs += self._beta * Z[idx]
            out[p, idx], _ = lapack.dgetrs(lu, piv, rhs, trans=1)
        return out


def build_svm_dual_incomplete(K, mask, labelled, c, gamma_A, gamma_B, gamma_W, L=None):
    """Q_G (eq 194 with M_reg of eq 79) of MVL-SVM on incomplete views, view by view, O(sum_p n_p^3).

    As :func:`build_svm_dual` (the gammas enter unscaled, as in eq 79) with the restrictions of the module
    docstring of :mod:`mvl.solvers.incomplete`:
    H_p = (gamma_B D_p + gamma_W L^p) K^p + gamma_A I on S_p, C~ per sample, M_{V_i} per sample. With
    Q_p embedded through S_p: Q_G = Q_cc[L, L] + gamma_B Q_c[L, U] (I - gamma_B W_U Q_1[U, U])^{-1} W_U Q_c[L, U]^T.
    ``L``: list of per-view operators (n_p, n_p) or None."""
    m, n, _ = K.shape
    mask = np.asarray(mask, dtype=bool)
    labelled = np.asarray(labelled)
    l = len(labelled)
    counts = mask.sum(axis=1)
    Ct = combination_weights(c, mask)
    beta = float(gamma_B)
    wt = np.where(counts >= 2, 1.0, 0.0)
    U, beta, posL, posU = system_rows(n, labelled, wt, beta)
    Q_G = np.zeros((l, l))
    Qc_LU = np.zeros((l, U.size))
    Q1 = np.zeros((U.size, U.size))
    factors = []
    for p in range(m):
        idx = np.flatnonzero(mask[:, p])
        if idx.size == 0:
            factors.append(None)
            continue
        Kp = np.ascontiguousarray(K[p][np.ix_(idx, idx)])
        lu, piv = factor_view(Kp, None if L is None else L[p], 1, gamma_A, beta, gamma_W, p, None,
                              (wt * counts)[idx] if beta > 0 else None)
        factors.append((idx, lu, piv))
        Qp = view_Q(lu, piv, Kp).T
        add_view_blocks(Qp, idx, Ct[:, p], posL, posU if beta > 0 else None, Q_G, Qc_LU, Q1)
        del Qp
    lu_Z = None
    if beta > 0:
        Q1 *= -beta * wt[U][:, None]
        Q1[np.diag_indices(U.size)] += 1.0  # I - beta W_U Q_1[U, U]
        lu, piv, info = lapack.dgetrf(Q1, overwrite_a=True)
        if info != 0:
            raise np.linalg.LinAlgError(f"I - gamma_B W Q_1 is singular (dgetrf info {info})")
        lu_Z = (lu, piv)
        Z, _ = lapack.dgetrs(lu, piv, wt[U][:, None] * Qc_LU.T)
        Q_G += beta * (Qc_LU @ Z)
    Q_G = 0.5 * (Q_G + Q_G.T)
    return SVMDualIncomplete(Q_G, factors, Ct, labelled, n, beta, U, wt[U], Qc_LU, lu_Z)


# ------------------------------------------------------------------ the dual QP


def apply_qs(A, P):
    """Q_S A for A of shape (P, l): Q_S = P/(P-1) I - 1/(P-1) 1 1^T (eq 195)."""
    return (P / (P - 1.0)) * A - (1.0 / (P - 1.0)) * A.sum(axis=0)


def _gradient(Q_G, A):
    """grad D = 1/2 Q_S alpha Q_G - 1/(P-1), shape (P, l) (eq 175 with eq 197); equals -(h + 1/(P-1))."""
    P = A.shape[0]
    G = apply_qs(A @ Q_G, P)
    G *= 0.5
    G -= 1.0 / (P - 1.0)
    return G


def dual_objective(Q_G, alpha):
    """D(alpha) = 1/4 vec(alpha)^T (Q_G (x) Q_S) vec(alpha) - 1/(P-1) 1^T vec(alpha) (eq 26); alpha (P, l)."""
    A = np.asarray(alpha, dtype=np.float64)
    P = A.shape[0]
    return float(0.25 * np.sum(A * apply_qs(A @ Q_G, P)) - A.sum() / (P - 1.0))


def dual_upper_bounds(y_enc, P):
    """Box of eq (24): (1 - delta_{k, y_i}) / l, shape (P, l); ``y_enc`` = class indices of the l labelled samples."""
    y_enc = np.asarray(y_enc)
    l = len(y_enc)
    U = np.full((P, l), 1.0 / l)
    U[y_enc, np.arange(l)] = 0.0
    return U


def _violation(G, A, U):
    """Signed KKT violation per coordinate (Lemma 31, eq 182-186), (P, l): > 0 violates.

    At alpha = 0: -g (must be <= 0, eq 182); at alpha = ub: g (must be <= 0, eq 184); free: |g|
    (must be 0, eq 183), with g = grad D = -(h + 1/(P-1)). The fixed alpha_{y_i, i} = 0 get -inf.
    """
    V = np.where(A <= 0.0, -G, np.where(A >= U, G, np.abs(G)))
    V[U <= 0.0] = -np.inf
    return V


def kkt_violation(Q_G, alpha, y_enc):
    """Largest violation of Lemma 31 in the units of h = <s_k, C f(x_i)>; 0 at the optimum."""
    A = np.asarray(alpha, dtype=np.float64)
    U = dual_upper_bounds(y_enc, A.shape[0])
    return max(0.0, float(np.max(_violation(_gradient(Q_G, A), A, U))))


def _block_step(x, u, g, h, P):
    """Exact minimiser of D over one sample's P coordinates within their box.

    Minimises g.d + h/2 d^T Q_S d (h = Q_G(i,i)/2: the block Hessian is h Q_S, eq 198)
    subject to 0 <= x + d <= u. With Q_S = P/(P-1) I - 1/(P-1) 1 1^T the optimum is
    x_new = clip(z + t, 0, u), z = x - (P-1)/(h P) g, where t solves the strictly decreasing
    piecewise-linear equation phi(t) = sum clip(z + t, 0, u) - sum x - P t = 0. Its
    breakpoints t = -z_k (coordinate k leaves 0) and u_k - z_k (k reaches u_k) are sorted
    and phi followed along them. Plain Python on P numbers: faster than numpy at this size.
    """
    kappa = (P - 1.0) / (h * P)
    xs = x.tolist()
    z = [a - kappa * b for a, b in zip(xs, g.tolist(), strict=True)]
    events = []
    for zk, uk in zip(z, u.tolist(), strict=True):
        if uk > 0.0:
            events.append((-zk, 1))
            events.append((uk - zk, -1))
    events.sort()
    t = events[0][0]
    phi = -sum(xs) - P * t  # left of every breakpoint all coordinates are at 0: slope -P
    slope = -P
    if phi <= 0.0:
        t += phi / P
    else:
        for tb, step in events:
            nphi = phi + slope * (tb - t)
            if nphi <= 0.0:
                break
            phi, t = nphi, tb
            slope += step
        t -= phi / slope  # slope < 0 everywhere (at most P-1 coordinates are free)
    return np.clip(np.asarray(z) + t, 0.0, u)


def _newton_refine(Q_G, Q_S, A, U, newton_max, cg_maxiter=100, cg_rtol=1e-3):
    """Projected Newton step on the free coordinates (0 < alpha < ub); returns (alpha, accepted).

    Minimises the quadratic D over the free set F with the coordinates at a bound held: the
    Newton direction d solves H_FF d = -g_F, H = 1/2 Q_G (x) Q_S, by a dense Cholesky when
    |F| <= ``newton_max``, else by conjugate gradients with the Kronecker product
    H v = 1/2 vec(Q_S V Q_G) (eq 197) on the samples that have a free coordinate, stopped when the
    residual has dropped by ``cg_rtol`` (or after ``cg_maxiter`` steps): an inexact step is enough,
    since SMO resumes afterwards and decides convergence (benchmark easy regime, l = 340: 1e-3 took
    about 210 CG steps over 4 refinements instead of about 360 with 1e-6, for 1% more SMO updates).
    Then alpha_F + tau d, clipped to the box, is taken for the first tau in 1, 1/2, 1/4, 1/8
    that lowers D, else the longest step that clips nothing (D decreases along it: d is a
    descent direction, CG iterates included, and D is quadratic). Once SMO
    has found which coordinates sit at a bound, this removes most of the remaining gap.
    """
    P = A.shape[0]
    free = (A > 0) & (A < U)
    kk, ii = np.nonzero(free)
    if len(kk) == 0:  # nothing to refine yet
        return A, True
    G = _gradient(Q_G, A)
    if len(kk) <= newton_max:
        H = Q_G[np.ix_(ii, ii)]
        H *= Q_S[np.ix_(kk, kk)]
        H *= 0.5
        try:
            dF = linalg.cho_solve(linalg.cho_factor(H, overwrite_a=True, check_finite=False), -G[kk, ii],
                                  check_finite=False)
        except linalg.LinAlgError:
            return A, False
        del H
    else:
        cols = np.flatnonzero(free.any(axis=0))
        Qc = Q_G[np.ix_(cols, cols)]
        mask = free[:, cols]
        r = -G[:, cols] * mask
        x = np.zeros_like(r)
        p = r.copy()
        rr = rr0 = float(np.sum(r * r))
        for _ in range(cg_maxiter):
            Hp = apply_qs(p @ Qc, P)
            Hp *= 0.5 * mask
            pHp = float(np.sum(p * Hp))
            if not pHp > 0.0:  # CG breakdown: Q_G indefinite on the free set (an indefinite kernel); keep x so far
                break
            step = rr / pHp
            x += step * p
            r -= step * Hp
            rr_new = float(np.sum(r * r))
            if rr_new <= cg_rtol**2 * rr0:  # residual down by cg_rtol: SMO takes care of the rest
                break
            p *= rr_new / rr
            p += r
            rr = rr_new
        dF = x[kk, np.searchsorted(cols, ii)]
    a, u = A[kk, ii], U[kk, ii]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(dF < 0, -a / dF, np.where(dF > 0, (u - a) / dF, np.inf))
    tau_max = float(np.min(ratio))  # longest step that clips nothing
    for tau in (1.0, 0.5, 0.25, 0.125, tau_max):
        if tau > 1.0:
            break
        delta = np.zeros_like(A)
        delta[kk, ii] = np.clip(a + tau * dF, 0.0, u) - a
        # D(A + delta) - D(A) from delta itself: exact where D's own values differ by < eps |D|
        change = float(np.sum(G * delta) + 0.25 * np.sum(delta * apply_qs(delta @ Q_G, P)))
        if change < 0.0:
            return A + delta, True
    return A, False


def _smo(Q_G, U, A0, tol, max_iter, refine=True, newton_max=500, first_target=None, factor=0.3):
    """Block SMO (Algorithm 3): returns (alpha, n_updates, violation).

    Each step picks the sample with the largest KKT violation (Lemma 31), minimises D
    exactly over its P coordinates (:func:`_block_step`) and updates the gradient by the
    rank-one term 1/2 (Q_S d) Q_G[i, :] (eq 196-198). Arrays are (P, l): the per-sample
    maximum over P coordinates is an elementwise maximum of P contiguous rows.

    Shrinking (as in LIBSVM): every ``min(l, 1000)`` updates, samples whose coordinates
    all sit at a bound with the gradient pointing out of the box by more than the current
    largest violation are set aside; before stopping, the gradient is rebuilt exactly (one
    GEMM) and every sample is checked again.

    Newton refinement (not in the paper; ``refine=False`` gives plain Algorithm 3): SMO first
    runs to a violation of 1/(2(P-1)) (half the margin), then a projected Newton step on the
    free coordinates (:func:`_newton_refine`) is taken and SMO resumes to a target ``factor``
    times smaller, and so on down to tol; a rejected step ends the refinement. SMO identifies
    which coordinates sit at a bound, which is what Newton cannot do; Newton then removes the
    slow linear tail of coordinate descent on the free ones. SMO always has the last word: the
    returned alpha passed its own KKT check.
    """
    P, l = U.shape
    Q_S = simplex_gram(P)
    A = A0.copy()
    hdiag = 0.5 * np.maximum(np.diag(Q_G), 1e-12)
    n_iter = 0
    c1 = P / (P - 1.0)
    c2 = 1.0 / (P - 1.0)
    shrink_every = min(l, 1000)
    target = max(tol, 0.5 / (P - 1) if first_target is None else first_target)
    polish = refine
    while True:
        G = _gradient(Q_G, A)
        colmax = _violation(G, A, U).max(axis=0)
        viol = float(colmax.max())
        if viol <= tol or n_iter >= max_iter:
            return A, n_iter, max(viol, 0.0)
        if viol <= target and polish:
            A, polish = _newton_refine(Q_G, Q_S, A, U, newton_max)  # after a failed step, plain SMO
            target = max(tol, factor * target)
            continue
        target = max(target, tol) if polish else tol
        active = np.flatnonzero(colmax > -viol)
        Qa = np.ascontiguousarray(Q_G[np.ix_(active, active)])
        Ga, Aa, Ua = (np.ascontiguousarray(Z[:, active]) for Z in (G, A, U))
        ha = hdiag[active]
        # -1/0 and 1/0 masks: max(G * nup, G * down) is the non-negative part of the violation
        nup = -1.0 * (Aa < Ua)
        down = 1.0 * ((Aa > 0) & (Ua > 0))
        buf1 = np.empty_like(Ga)
        buf2 = np.empty_like(Ga)
        since_shrink = 0
        while n_iter < max_iter:
            np.multiply(Ga, nup, out=buf1)
            np.multiply(Ga, down, out=buf2)
            np.maximum(buf1, buf2, out=buf1)
            cols = buf1.max(axis=0)
            i = int(cols.argmax())
            vi = cols[i]
            if vi <= target:
                break
            if since_shrink >= shrink_every:
                since_shrink = 0
                keep = np.flatnonzero(_violation(Ga, Aa, Ua).max(axis=0) > -vi)
                if len(keep) < 0.9 * len(active):
                    A[:, active] = Aa
                    active = active[keep]
                    Qa = np.ascontiguousarray(Qa[np.ix_(keep, keep)])
                    Ga, Aa, Ua, nup, down = (np.ascontiguousarray(Z[:, keep]) for Z in (Ga, Aa, Ua, nup, down))
                    ha = ha[keep]
                    buf1 = np.empty_like(Ga)
                    buf2 = np.empty_like(Ga)
                    continue
            x = Aa[:, i]
            u = Ua[:, i]
            xn = _block_step(x, u, Ga[:, i], ha[i], P)
            d = xn - x
            Aa[:, i] = xn
            nup[:, i] = -1.0 * (xn < u)
            down[:, i] = 1.0 * ((xn > 0) & (u > 0))
            qd = c1 * d - c2 * d.sum()  # Q_S d
            # G += 1/2 (Q_S d) Q_G[i, :]: one row of Q_G and one of Q_S (eq 196-197); Ga.T is Fortran
            blas.dger(0.5, Qa[i], qd, a=Ga.T, overwrite_a=True)
            n_iter += 1
            since_shrink += 1
        A[:, active] = Aa


def _lbfgsb(Q_G, U, A0, tol, max_iter, max_restarts=20):
    """L-BFGS-B on the box QP: returns (alpha, n_iter, violation); stops at the KKT tolerance.

    A callback checks Lemma 31 at every iterate with the gradient just computed (no extra
    product). The objective is passed relative to the starting point x0,
    D(x0 + d) - D(x0) = g0.d + 1/2 d.(g(x0 + d) - g0), which keeps its precision near the
    optimum, where D itself is O(1) but its changes are far below eps |D|. If L-BFGS-B stops on
    its own before tol (a stalled line search), it is restarted from there with a fresh memory
    while that lowers D.
    """
    P, l = U.shape
    ub = U.ravel()
    bounds = optimize.Bounds(np.zeros_like(ub), ub)
    last = {"x": None}
    origin = {}

    def fun(xv):
        QA = apply_qs(xv.reshape(P, l) @ Q_G, P)  # Q vec(alpha) = vec(Q_S alpha Q_G) (eq 197)
        QA *= 0.5
        QA -= 1.0 / (P - 1.0)
        g = QA.ravel()
        d = xv - origin["x"]
        f = float(np.dot(origin["g"], d) + 0.5 * np.dot(d, g - origin["g"]))
        last["x"], last["g"] = xv.copy(), QA
        return f, g

    n_iter = 0

    def callback(intermediate_result):
        nonlocal n_iter
        n_iter += 1
        xv = intermediate_result.x
        G = last["g"] if np.array_equal(xv, last["x"]) else _gradient(Q_G, xv.reshape(P, l))
        if np.max(_violation(G, xv.reshape(P, l), U)) <= tol:
            raise StopIteration

    x = A0.ravel().copy()
    for _ in range(max_restarts + 1):
        G = _gradient(Q_G, x.reshape(P, l))
        origin["x"], origin["g"] = x.copy(), G.ravel()
        if np.max(_violation(G, x.reshape(P, l), U)) <= tol or n_iter >= max_iter:
            break
        res = optimize.minimize(fun, x, jac=True, method="L-BFGS-B", bounds=bounds, callback=callback,
                                options={"maxiter": max(max_iter - n_iter, 1), "maxfun": 2 * max_iter + 100,
                                         "ftol": 0.0, "gtol": 0.0, "maxcor": 10})
        x = np.clip(res.x, 0.0, ub)
        if not res.fun < 0.0:  # no decrease since the restart: give up
            break
    A = x.reshape(P, l)
    return A, n_iter, max(float(np.max(_violation(_gradient(Q_G, A), A, U))), 0.0)


def _gradient_blas(Q_G, A):
    """grad D = 1/2 Q_S alpha Q_G - 1/(P-1) (eq 175, 197) through scipy's dgemm, (P, l).

    (alpha Q_G)^T = Q_G^T alpha^T: one dgemm on the Fortran views Q_G.T and alpha.T (no copies), in the
    same OpenBLAS as the factorisations (numpy's and scipy's pools are not alternated).
    """
    P = A.shape[0]
    AQ = blas.dgemm(1.0, Q_G.T, A.T).T  # (P, l), a C-ordered view of the Fortran (l, P) result
    G = apply_qs(AQ, P)
    G *= 0.5
    G -= 1.0 / (P - 1.0)
    return G


def _max_violation(G, A, U):
    v = float(np.max(_violation(G, A, U)))
    return max(0.0, v) if np.isfinite(v) else np.inf  # NaN (a diverged iterate) never passes the stopping rule


def _admm_penalty(Q_G, P):
    """The ADMM penalty rho of :func:`_admm`: sqrt(d l / (P-1)) min(1, 4 / sqrt(P-1)), d = mean diag of the
    Hessian 1/2 Q_G (x) Q_S.

    d is the curvature scale of D, l/(P-1) the ratio of the gradient's scale (the margin 1/(P-1)) to the
    box's (1/l): their geometric mean balances the primal and dual residuals. The factor for P > 17 and
    the formula itself are empirical: on the benchmark's problems (P = 17, l = 340-2000, both regimes) and
    on Caltech-101-shaped ones (P = 102, l = 204-2040) it is within a factor of 2 of the best fixed rho
    (iterations to a KKT violation of 1e-6), where a factor of 4 either way costs up to 2-3x the iterations.
    """
    l = Q_G.shape[0]
    d = 0.5 * P / (P - 1.0) * float(np.mean(np.diag(Q_G)))
    return float(np.sqrt(max(d, 1e-300) * l / (P - 1.0)) * min(1.0, 4.0 / np.sqrt(P - 1.0)))


def _factor_admm(Q_G, c1, rho):
    """Cholesky factor (upper) of c1/2 Q_G + rho I: the x-step of :func:`_admm` on the centred part."""
    M = (0.5 * c1) * Q_G.T  # Fortran order (Q_G symmetric): dpotrf works in place
    M[np.diag_indices_from(M)] += rho
    cf, info = lapack.dpotrf(M, lower=0, clean=0, overwrite_a=1)
    if info != 0:
        raise np.linalg.LinAlgError(f"c1/2 Q_G + rho I is not positive definite (dpotrf info {info})")
    return cf


def _indefinite_penalty(Q_G, c1, rho):
    """The ADMM penalty for an indefinite Q_G (an indefinite kernel, which the estimators warn about): rho plus
    twice the Lipschitz constant L = c1/2 max |eigenvalue of Q_G| of the dual's gradient. Then the x-step's
    c1/2 Q_G + rho I is positive definite, and rho >= 2 L is the penalty under which ADMM on a non-convex quadratic
    with a convex constraint converges to a stationary point (Hong, Luo & Razaviyayn 2016): a point of the box
    satisfying the KKT conditions of Lemma 31, the same stopping rule as on a positive semi-definite Q_G."""
    l = Q_G.shape[0]
    ends = linalg.eigvalsh(Q_G, subset_by_index=[0, 0], check_finite=False)[0], \
        linalg.eigvalsh(Q_G, subset_by_index=[l - 1, l - 1], check_finite=False)[0]
    return rho + c1 * float(max(abs(ends[0]), abs(ends[1])))


def _admm(Q_G, U, A0, tol, max_iter, rho=None, relax=1.6, check_every=10):
    """ADMM on the box QP (24)-(26) with the Kronecker structure in its linear solve: (alpha, n_iter, violation).

    Splitting (Boyd et al. 2011, Sec. 5.2; the form of OSQP, Stellato et al. 2020, with A = I): minimise
    D(x) + indicator of the box (24) over (x, z) subject to x = z. One iteration, with the scaled dual u,

        x = (H + rho I)^{-1} (rho (z - u) + 1/(P-1)),     H = 1/2 Q_G (x) Q_S (the Hessian of D),
        x^ = r x + (1 - r) z                             (over-relaxation, r = 1.6),
        z = clip(x^ + u, 0, ub),   u = u + x^ - z.

    The x-step is exact and cheap: Q_S = P/(P-1) (I - 1 1^T / P) (eq 195) acts on a sample's alpha_i
    only through its centred part, so in the (P, l) layout (H + rho I) X = R splits into the column means
    m (rho m = mean of R) and the centred rows, X_c (c1/2 Q_G + rho I) = R_c with c1 = P/(P-1): one
    Cholesky factorisation of an l x l matrix before the loop, then one triangular solve pair with P
    right-hand sides per iteration (2 P l^2 flops) and O(P l) elementwise work. Every ``check_every``
    iterations the gradient at z (one l x l by l x P product) gives the KKT violation of Lemma 31; z is
    always in the box, so the returned alpha is feasible and passed the same stopping rule as SMO's.

    ``rho``: :func:`_admm_penalty` by default. A warm start sets z = alpha0 and u = -grad D(alpha0) / rho,
    the fixed point's dual (x-step optimality at x = z), so a solution is a fixed point from the start.
    """
    P, l = U.shape
    c1 = P / (P - 1.0)
    q = -1.0 / (P - 1.0)  # the linear term of D
    Z = np.array(A0, dtype=np.float64, order="C")
    G = _gradient_blas(Q_G, Z)
    viol = _max_violation(G, Z, U)
    if viol <= tol:
        return Z, 0, viol
    rho = _admm_penalty(Q_G, P) if rho is None else float(rho)
    try:
        cf = _factor_admm(Q_G, c1, rho)
    except np.linalg.LinAlgError:  # Q_G indefinite (an indefinite kernel): raise rho (_indefinite_penalty)
        rho = _indefinite_penalty(Q_G, c1, rho)
        cf = _factor_admm(Q_G, c1, rho)
    Uu = G
    Uu /= -rho  # u = -grad D(z) / rho
    W = np.empty_like(Z)
    T = np.empty_like(Z)
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        np.subtract(Z, Uu, out=W)
        W *= rho
        W -= q  # R = rho (z - u) - q
        mean = W.mean(axis=0)
        W -= mean
        x, info = lapack.dpotrs(cf, W.T, lower=0, overwrite_b=1)  # X_c (c1/2 Q_G + rho I) = R_c, in place
        if info != 0:
            raise np.linalg.LinAlgError(f"dpotrs info {info}")
        if not np.shares_memory(x, W):
            W[...] = x.T
        mean /= rho
        W += mean  # x
        W *= relax
        W += (1.0 - relax) * Z  # x^
        np.add(W, Uu, out=T)
        np.maximum(T, 0.0, out=T)
        np.minimum(T, U, out=T)  # z = clip(x^ + u, 0, ub)
        Uu += W
        Uu -= T
        Z, T = T, Z
        if n_iter % check_every == 0 or n_iter == max_iter:
            viol = _max_violation(_gradient_blas(Q_G, Z), Z, U)
            if viol <= tol:
                break
    return Z, n_iter, viol


def _apg(Q_G, U, A0, tol, max_iter, check_every=10):
    """Accelerated projected gradient (FISTA, Beck & Teboulle 2009, with the gradient restart of O'Donoghue &
    Candes 2015) on the box QP (24)-(26): (alpha, n_iter, violation). The design compared with ADMM in
    benchmarks/bench_svm.py (module docstring); not the default.

    Step 1/L with L = c1/2 lambda_max(Q_G) (the largest eigenvalue of the Hessian 1/2 Q_G (x) Q_S; ARPACK,
    5 % margin). One iteration: one gradient through the Kronecker structure (an l x l by l x P product,
    2 P l^2 flops, as ADMM's solve) and a projection onto the box; the iterations needed grow with the
    square root of the condition number of the free part, which is what makes it slow here.
    """
    from scipy.sparse.linalg import ArpackError, eigsh

    P, l = U.shape
    A = np.array(A0, dtype=np.float64, order="C")
    viol = _max_violation(_gradient_blas(Q_G, A), A, U)
    if viol <= tol:
        return A, 0, viol
    try:
        lmax = float(eigsh(Q_G, k=1, which="LA", tol=1e-6, return_eigenvectors=False)[0])
    except (ArpackError, ValueError):  # tiny l or no convergence: the Gershgorin bound
        lmax = float(np.max(np.sum(np.abs(Q_G), axis=1)))
    step = 1.0 / (1.05 * 0.5 * P / (P - 1.0) * max(lmax, 1e-300))
    Y = A.copy()
    t = 1.0
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        An = np.clip(Y - step * _gradient_blas(Q_G, Y), 0.0, U)
        if np.sum((Y - An) * (An - A)) > 0.0:  # momentum against the gradient: restart from A
            t = 1.0
            An = np.clip(A - step * _gradient_blas(Q_G, A), 0.0, U)
        tn = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        Y = An + ((t - 1.0) / tn) * (An - A)
        A, t = An, tn
        if n_iter % check_every == 0 or n_iter == max_iter:
            viol = _max_violation(_gradient_blas(Q_G, A), A, U)
            if viol <= tol:
                break
    return A, n_iter, viol


def resolve_solver(solver, P):
    """The dual solver that ``solver`` names for P classes: "auto" is "smo" for P = 2 (one variable per
    sample, few support vectors: SMO's few cheap updates win) and "admm" for P >= 3 (module docstring)."""
    if not isinstance(solver, str) or solver not in SOLVER_NAMES:
        raise ValueError(f"solver must be one of {list(SOLVER_NAMES)}, got {solver!r}")
    if solver == "auto":
        return "smo" if P == 2 else "admm"
    return solver


def solve_dual(Q_G, y_enc, P, solver="auto", tol=1e-3, max_iter=None, alpha0=None, random_state=None,
               refine=True):
    """Solve the dual QP (26) with the box (24); returns (alpha (P, l), n_iter, kkt_violation).

    ``solver``: "auto" (:func:`resolve_solver`), "admm", "smo", "lbfgsb" or "apg" (module docstring).
    ``y_enc`` holds the class indices 0..P-1 of the l labelled samples, ``alpha0`` (P, l)
    an optional warm start (clipped into the box). ``max_iter``: SMO block updates (default 1000 l),
    ADMM / APG / L-BFGS-B iterations (default 20,000 / 100,000 / 100,000). ``random_state`` (SMO only): None
    keeps the samples' order, otherwise they are visited in a random order, so ties between
    equally violating samples are broken at random as in Algorithm 3. BLAS is limited to
    one thread meanwhile (small products: extra threads only contend for the cores), except for ADMM and
    APG on large problems (P l^2 >= 2e7), whose products use the threads the environment allows.
    ``refine`` (SMO only): Newton refinement of :func:`_smo`; False runs plain Algorithm 3.
    """
    solver = resolve_solver(solver, P)
    U = dual_upper_bounds(y_enc, P)
    l = U.shape[1]
    A0 = np.zeros((P, l)) if alpha0 is None else np.clip(np.asarray(alpha0, dtype=np.float64), 0.0, U)
    if max_iter is None:
        max_iter = {"smo": 1000 * l, "admm": 20_000}.get(solver, 100_000)
    perm = None
    if solver == "smo" and random_state is not None:
        perm = np.random.default_rng(random_state).permutation(l)
        Q_G, U, A0 = Q_G[np.ix_(perm, perm)], U[:, perm], A0[:, perm]
    threads = None if solver in ("admm", "apg") and P * l * l >= _THREADED_MIN_WORK else 1
    with threadpool_limits(limits=threads, user_api="blas"):
        if solver == "smo":
            A, n_iter, viol = _smo(Q_G, U, A0, tol, max_iter, refine=refine)
        elif solver == "admm":
            A, n_iter, viol = _admm(Q_G, U, A0, tol, max_iter)
        elif solver == "apg":
            A, n_iter, viol = _apg(Q_G, U, A0, tol, max_iter)
        else:
            A, n_iter, viol = _lbfgsb(Q_G, U, A0, tol, max_iter)
    if perm is not None:
        A = A[:, np.argsort(perm)]
    if viol > tol:
        warnings.warn(f"{solver} stopped after {n_iter} iterations with KKT violation {viol:.3g} > tol = {tol:g}; "
                      "increase max_iter", ConvergenceWarning, stacklevel=2)
    return np.ascontiguousarray(A), n_iter, viol
