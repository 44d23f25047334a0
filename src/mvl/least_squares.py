"""Vector-valued multi-view least squares, MVL-LS (Theorem 10, Algorithm 1).

Problem (eq 10 with eq 53): over f = (f^1, ..., f^m), one RKHS function per view,

    1/l sum_{i<=l} ||y_i - C f(x_i)||^2 + gamma_A ||f||^2
        + gamma_B <f, M_B f> + gamma_W <f, M_W f>,

with C = c^T (x) I_P (eq 52), M_B from eq (54)-(57) and M_W = L (x) I_P from
eq (60)-(63). By Theorem 10 the coefficients A solve the Sylvester equation
(67) with R = I_P, i.e. the linear system

    (B + l gamma_A I) A = Y_C,
    B = (J_l^{u+l} (x) c c^T + l gamma_B I_{u+l} (x) M_m + l gamma_W L) G[x]    (68)

of size (u+l)m. With the diagonal kernel of Section 7.1 (eq 93-94), grouping
unknowns view-major turns G[x] into blockdiag(K^1, ..., K^m) and L into
blockdiag(L^1, ..., L^m). For view p, with outputs F_q = K^q A_q on the
training points, S = sum_q c_q F_q (combined output), T = sum_q F_q, and
E = J (Y - S) (residual on labelled rows, zero elsewhere), the system reads

    H_p A_p = c_p E + l gamma_B T,
    H_p = (l gamma_B m I + l gamma_W L^p) K^p + l gamma_A I.

(Superscript p indexes the view. With ``laplacian_power`` = d > 1, L^p stands for the iterated
Laplacian (L^p)^d of view p, again n x n, :func:`mvl.graph.laplacian_power`; nothing else changes.)

The views are coupled only through E (l x P) and T (n x P). With
Q_p = K^p H_p^{-1} (symmetric), eliminating A_p leaves one system of size l + n
(size l when gamma_B = 0):

    [ I + Q_cc[L, L]      l gamma_B Q_c[L, :] ] [E_L]   [Y_L]
    [ -Q_c[:, L]          I - l gamma_B Q_1   ] [ T ] = [ 0 ],

Q_cc = sum c_p^2 Q_p, Q_c = sum c_p Q_p, Q_1 = sum Q_p. Cost: m LU factorisations
and solves of n x n matrices plus one of size l + n, i.e. O(m n^3) time and
O(m n^2) memory instead of O((mn)^3) and O((mn)^2) for the dense system.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from scipy import linalg
from scipy.linalg import blas, lapack

from ._validation import (
    check_combination,
    check_gamma,
    check_labels,
    check_multiview_kernels,
    check_n_classes,
    check_test_kernels,
)
from .graph import (
    GRAPH_WEIGHTS,
    check_graph_weights,
    check_n_neighbors,
    check_power,
    laplacian_power,
    view_laplacians,
)

__all__ = [
    "MVLLeastSquares",
    "MultiViewEstimatorMixin",
    "encode_targets",
    "solve_structured",
    "solve_dense",
]


def encode_targets(y_encoded, n_classes):
    """Targets y_i = (-1, ..., 1, ..., -1) in R^P with 1 at the class index (Section 5.1)."""
    Y = -np.ones((len(y_encoded), n_classes))
    Y[np.arange(len(y_encoded)), y_encoded] = 1.0
    return Y


def _laplacians(K, laplacian, n_neighbors, gamma_W, power=1, weights="kernel"):
    """The m within-view operators (L^i)^p (eq 60-63), or None when gamma_W = 0 (they do not enter).

    ``laplacian`` "normalized"/"unnormalized" builds each L^i from the view's Gram matrix (dense weights
    W = K^i, or a kNN graph with ``n_neighbors``, edge weights per ``weights``: "kernel" or "binary");
    an explicit (m, n, n) array is used as given, and ``power`` = p applies to it too: the within-view
    operator is then (laplacian[i])^p. Every argument is validated even when gamma_W = 0; the
    messages name the estimator parameters (laplacian_power, graph_weights, n_neighbors).
    """
    m, n, _ = K.shape
    power = check_power(power, name="laplacian_power")
    if laplacian is None:
        raise ValueError("laplacian must be 'normalized', 'unnormalized' or an array of shape (m, n, n), got None")
    if isinstance(laplacian, str):
        if laplacian not in ("normalized", "unnormalized"):
            raise ValueError(f"laplacian must be 'normalized', 'unnormalized' or an array of shape "
                             f"(m, n, n), got {laplacian!r}")
        k = check_n_neighbors(n_neighbors)
        check_graph_weights(weights, k, name="graph_weights")
        if gamma_W == 0:
            return None
        return view_laplacians(K, normalized=(laplacian == "normalized"), n_neighbors=k, weights=weights,
                               power=power)
    if n_neighbors is not None:
        raise ValueError("n_neighbors builds the graph from the kernels; it cannot be combined with an "
                         "explicit laplacian array")
    if not isinstance(weights, str) or weights not in GRAPH_WEIGHTS:
        raise ValueError(f"graph_weights must be 'kernel' or 'binary', got {weights!r}")
    if weights != "kernel":
        raise ValueError("graph_weights sets the edge weights of the graph built from the kernels; it cannot be "
                         "'binary' with an explicit laplacian array")
    L = check_multiview_kernels(laplacian, name="laplacian")
    if L.shape != K.shape:
        raise ValueError(f"laplacian has shape {L.shape}, kernels have {K.shape}")
    if gamma_W == 0:
        return None
    if power == 1:
        return L
    return np.stack([laplacian_power(L[i], power) for i in range(m)])


def _factor_view(Kp, Lp, m, delta, beta, omega, p=0, rconds=None, w=None):
    """LU of H_p^T, H_p = (beta m D + omega L^p) K^p + delta I; returns LAPACK (lu, piv).

    D = diag(w) weighs the between-view term per point (M_B = D (x) M_m); w = None means D = I (eq 57).

    If ``rconds`` is a list, the reciprocal condition number of H_p (LAPACK dgecon, 1-norm, O(n^2)
    from the LU) is appended to it.

    H_p^T = K^p M_p^T + delta I is formed with scipy's dgemm on Fortran-ordered views (x.T of a
    C-ordered x): nothing is copied, and numpy's separate OpenBLAS pool is never woken (alternating
    the two pools makes their busy-waiting threads fight over the cores).
    """
    n = Kp.shape[0]
    diag = np.diag_indices(n)
    if omega > 0 and Lp is not None:
        Mp = omega * Lp
        Mp[diag] += beta * m if w is None else (beta * m) * w
        HT = blas.dgemm(1.0, Kp.T, Mp.T)  # K^T M^T = K M^T (K exactly symmetric), Fortran order
        del Mp
    elif w is None:
        HT = np.asfortranarray((beta * m) * Kp)
    else:
        HT = np.asfortranarray(Kp * ((beta * m) * w)[None, :])  # (D K)^T = K D
    HT[diag] += delta
    anorm = float(np.abs(HT).sum(axis=0).max()) if rconds is not None else 0.0  # 1-norm of H_p^T
    lu, piv, info = lapack.dgetrf(HT, overwrite_a=True)
    if info != 0:
        raise np.linalg.LinAlgError(f"H_p of view {p} is singular (dgetrf info {info})")
    if rconds is not None:
        rconds.append(_rcond(lu, anorm))
    return lu, piv


def _rcond(lu, anorm):
    """Reciprocal 1-norm condition estimate from an LU factorisation (LAPACK dgecon)."""
    rcond, info = lapack.dgecon(lu, anorm, norm="1")
    return float(rcond) if info == 0 else 0.0


def _view_Q(lu, piv, Kp):
    """Q_p = K^p H_p^{-1} = H_p^{-T} K^p (push-through identity; Q_p is symmetric), Fortran order.

    K^p.T is K^p (exactly symmetric) in Fortran order: the right-hand side LAPACK wants.
    """
    X, info = lapack.dgetrs(lu, piv, Kp.T, trans=0)
    return X


def solve_structured(K, labelled, Y_L, c, gamma_A, gamma_B, gamma_W, L=None, info=None, between_weights=None):
    """Solve eq (67)-(68) view by view; returns coefficients A of shape (m, n, P).

    ``labelled`` indexes the l labelled rows of the n training points and
    ``Y_L`` (l x P) holds their targets. ``L`` is (m, n, n) or None if
    gamma_W = 0. ``K`` must be exactly symmetric per view (as returned by
    :func:`mvl._validation.check_multiview_kernels`). If ``info`` is a dict, ``info["rcond"]`` receives
    the smallest reciprocal condition estimate of the factored matrices (the H_p and the coupled system).

    ``between_weights`` (n,) >= 0 weighs the between-view term per point, M_B = diag(w) (x) M_m (None: w = 1,
    eq 57); e.g. the indicator of the unlabelled points gives co-regularization on them (JMLR Section 3.4,
    Sindhwani & Rosenberg 2008). Then H_p = (beta m D + omega L^p) K^p + delta I, the right-hand side is
    c_p E + beta D T, and only the rows U of D T (w > 0) are unknowns of the coupled system:
    [[I + Q_cc[L,L], beta Q_c[L,U]], [-D_U Q_c[U,L], I - beta D_U Q_1[U,U]]] [E_L; (D T)_U] = [Y_L; 0].
    """
    rconds = [] if info is not None else None
    m, n, _ = K.shape
    l = len(labelled)
    P = Y_L.shape[1]
    delta = l * gamma_A
    beta = l * gamma_B if m > 1 else 0.0  # M_1 = 0: no between-view term for one view
    omega = l * gamma_W
    w = None if between_weights is None else np.asarray(between_weights, dtype=np.float64)
    if w is not None and (w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0)):
        raise ValueError(f"between_weights must be {n} finite non-negative numbers")
    U = None if w is None else np.flatnonzero(w > 0)  # rows of D T that can be non-zero
    if U is not None and U.size == 0:
        beta = 0.0
    u = n if U is None else U.size
    factors = []
    # The coupled system's blocks are accumulated in place (no n x n copies):
    # S = [[Q_cc[L,L], Q_c[L,U]], [., Q_1[U,U]]] now, scaled and shifted by the identity below.
    S = np.zeros((l + u, l + u)) if beta > 0 else None
    Qcc_LL = S[:l, :l] if beta > 0 else np.zeros((l, l))
    Qc_L = S[:l, l:] if beta > 0 else None  # Q_c[L, U]; its transpose is Q_c[U, L] (Q_p symmetric)
    Q1 = S[l:, l:] if beta > 0 else None
    for p in range(m):
        Kp = K[p]
        lu, piv = _factor_view(Kp, None if L is None else L[p], m, delta, beta, omega, p, rconds, w)
        factors.append((lu, piv))
        X = _view_Q(lu, piv, Kp)
        Qp = X.T  # C-ordered view of Q_p^T = Q_p
        QL = Qp[labelled]
        Qcc_LL += (c[p] * c[p]) * QL[:, labelled]
        if Q1 is not None:
            if U is None:
                Qc_L += c[p] * QL
                Q1 += Qp
            else:
                Qc_L += c[p] * QL[:, U]
                Q1 += Qp[np.ix_(U, U)]
        del X, Qp, QL
    if beta > 0:
        # [ I + Q_cc[L,L]   beta Q_c[L,:] ] [E_L]   [Y_L]
        # [ -Q_c[:,L]       I - beta Q_1  ] [ T ] = [ 0 ]
        S[l:, :l] = Qc_L.T
        if U is None:
            S[l:, :l] *= -1.0
            Q1 *= -beta
        else:  # rows U scaled by D_U
            S[l:, :l] *= -w[U][:, None]
            Q1 *= (-beta * w[U])[:, None]
        Qc_L *= beta
        S[np.diag_indices(l + u)] += 1.0
        del Q1, Qc_L, Qcc_LL
        rhs = np.zeros((l + u, P))
        rhs[:l] = Y_L
        # S is C-ordered: solve with S^T's LU (Fortran view, no copy) and trans=1
        anorm = float(np.abs(S).sum(axis=1).max()) if rconds is not None else 0.0  # 1-norm of S^T
        lu_S, piv_S, err = lapack.dgetrf(S.T, overwrite_a=True)
        if err != 0:
            raise np.linalg.LinAlgError(f"coupled system is singular (dgetrf info {err})")
        if rconds is not None:
            rconds.append(_rcond(lu_S, anorm))
        sol, err = lapack.dgetrs(lu_S, piv_S, rhs, trans=1)
        E_L, T = sol[:l], sol[l:]
        if U is not None:  # D T on all n points, zero outside U
            T = np.zeros((n, P))
            T[U] = sol[l:]
    else:
        Qcc_LL[np.diag_indices(l)] += 1.0
        anorm = float(np.abs(Qcc_LL).sum(axis=0).max()) if rconds is not None else 0.0
        lu_S, piv_S, err = lapack.dgetrf(Qcc_LL, overwrite_a=True)
        if err != 0:
            raise np.linalg.LinAlgError(f"coupled system is singular (dgetrf info {err})")
        if rconds is not None:
            rconds.append(_rcond(lu_S, anorm))
        E_L, err = lapack.dgetrs(lu_S, piv_S, np.asarray(Y_L, dtype=np.float64))
        T = None
    E = np.zeros((n, P))
    E[labelled] = E_L
    A = np.empty((m, n, P))
    for p, (lu, piv) in enumerate(factors):
        rhs = c[p] * E
        if T is not None:
            rhs += beta * T
        A[p], err = lapack.dgetrs(lu, piv, rhs, trans=1)  # H_p A_p = rhs, from the LU of H_p^T
    if info is not None:
        info["rcond"] = min(rconds) if rconds else 1.0
    return A


def solve_dense(K, labelled, Y_L, c, gamma_A, gamma_B, gamma_W, L=None, between_weights=None):
    """Textbook reference: the full (u+l)m system of eq (67)-(68), one LU.

    Unknowns are ordered sample-major as in the paper (a = vec(A^T), A of
    size (u+l)m x P); G[x] = sum_i k^i[x] (x) e_i e_i^T (eq 94), B is formed
    as the product in eq (68) and (B + l gamma_A I) A = Y_C is solved by
    LU, as the authors' MATLAB code does. Memory O((nm)^2): for tests and
    benchmarks only. Returns coefficients in the layout (m, n, P). ``between_weights``: M_B = diag(w) (x) M_m.
    """
    m, n, _ = K.shape
    l = len(labelled)
    P = Y_L.shape[1]
    N = n * m
    E = np.eye(m)
    G = np.zeros((N, N))
    for p in range(m):
        G += np.kron(K[p], np.outer(E[p], E[p]))
    J = np.zeros((n, n))
    J[labelled, labelled] = 1.0
    Mm = m * np.eye(m) - np.ones((m, m))  # eq (54)
    D = np.eye(n) if between_weights is None else np.diag(np.asarray(between_weights, dtype=np.float64))
    Mop = np.kron(J, np.outer(c, c)) + l * gamma_B * np.kron(D, Mm)
    if gamma_W > 0 and L is not None:
        Lbig = np.zeros((N, N))
        for p in range(m):
            Lbig += np.kron(L[p], np.outer(E[p], E[p]))  # eq (60)
        Mop += l * gamma_W * Lbig
    B = Mop @ G  # eq (68)
    B[np.diag_indices(N)] += l * gamma_A
    Yfull = np.zeros((n, P))
    Yfull[labelled] = Y_L
    Y_C = np.kron(Yfull, c[:, None])  # row (i, p) = c_p y_i, zero for unlabelled i
    A = linalg.solve(B, Y_C, overwrite_a=True, check_finite=False)
    return A.reshape(n, m, P).transpose(1, 0, 2).copy()


_SOLVERS = {"structured": solve_structured, "auto": solve_structured, "dense": solve_dense}


# Above this 1-norm condition estimate (LAPACK dgecon) of a factored matrix, fit() warns: with float64
# (eps ~ 1e-16) the coefficients may then have lost more than ~4 significant digits.
ILL_CONDITIONED = 1e12


def _check_solution(coef, condition, gamma_A):
    """Never NaN silently; warn (with the estimate) when the system was numerically ill-conditioned."""
    if not np.all(np.isfinite(coef)):
        raise FloatingPointError(f"the solution has NaN or inf entries (condition estimate {condition:.1e}); "
                                 f"increase gamma_A (now {gamma_A:g}) or check the kernels")
    if condition > ILL_CONDITIONED:
        warnings.warn(f"ill-conditioned system: condition estimate {condition:.1e} > {ILL_CONDITIONED:.0e}; "
                      f"the coefficients may be inaccurate (increase gamma_A, now {gamma_A:g})",
                      IllConditionedWarning, stacklevel=3)


class IllConditionedWarning(UserWarning):
    """A solve was numerically ill-conditioned (see ``condition_estimate_``)."""


class ParamsMixin:
    """scikit-learn style get_params/set_params over the constructor arguments listed in ``_param_names``."""

    _param_names = ()

    def get_params(self, deep=True):
        return {k: getattr(self, k) for k in self._param_names}

    def set_params(self, **params):
        for k, v in params.items():
            if k not in self._param_names:
                raise ValueError(f"unknown parameter {k!r}")
            setattr(self, k, v)
        return self


class SignOrArgmaxClassifierMixin(ParamsMixin):
    """predict/score for estimators whose ``decision_function`` gives (t,) scores for two classes
    (positive = ``classes_[1]``) and (t, P) one-vs-all scores otherwise (MVML, the perceptrons)."""

    def predict(self, K_test):
        scores = self.decision_function(K_test)
        if self.classes_.size == 2:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def score(self, K_test, y_test):
        """Accuracy of :meth:`predict` on ``y_test``."""
        return float(np.mean(self.predict(K_test) == np.asarray(y_test)))


class MultiViewEstimatorMixin(ParamsMixin):
    """Parameters and prediction shared by the multi-view least-squares estimators.

    Subclasses list their constructor arguments in ``_param_names`` and, once fitted, set
    ``coef_`` (m, n, P), ``c_`` (m,), ``classes_``, ``n_views_`` and ``n_train_``.
    """

    def _fit_inputs(self, K, y):
        """Validated gammas, kernels (m, n, n), labelled indices, classes, targets Y_L and the within-view
        operators (L^i)^p (m, n, n), None when gamma_W = 0; the graph parameters are validated in any case."""
        gammas = (check_gamma(self.gamma_A, "gamma_A", positive=True), check_gamma(self.gamma_B, "gamma_B"),
                  check_gamma(self.gamma_W, "gamma_W"))
        K = check_multiview_kernels(K)
        y, labelled, classes, encoded = check_labels(y, K.shape[1])
        classes = check_n_classes(classes, self.n_classes)
        if self.n_classes is not None:
            encoded = y[labelled]
        L = _laplacians(K, self.laplacian, self.n_neighbors, gammas[2], power=self.laplacian_power,
                        weights=self.graph_weights)
        return gammas, K, labelled, classes, encode_targets(encoded, len(classes)), L

    def _check_fitted(self):
        if not hasattr(self, "coef_"):
            raise ValueError(f"this {type(self).__name__} instance is not fitted yet; call fit(K, y) first")

    def view_decision_function(self, K_test):
        """Per-view outputs f^i(v) of shape (t, m, P) (Algorithm 1 output before C)."""
        self._check_fitted()
        Kt = check_test_kernels(K_test, self.n_views_, self.n_train_)
        return np.einsum("ptn,pnk->tpk", Kt, self.coef_)

    def decision_function(self, K_test):
        """Combined outputs C f(v) = sum_i c_i f^i(v), shape (t, P), columns as ``classes_``."""
        return np.einsum("tpk,p->tk", self.view_decision_function(K_test), self.c_)

    def predict(self, K_test):
        """Class with the largest combined output (Algorithm 1, classification)."""
        scores = self.decision_function(K_test)  # checks that the model is fitted
        return self.classes_[np.argmax(scores, axis=1)]

    def score(self, K_test, y_test):
        """Accuracy of :meth:`predict` on ``y_test``."""
        return float(np.mean(self.predict(K_test) == np.asarray(y_test)))


class MVLLeastSquares(MultiViewEstimatorMixin):
    """Multi-view vector-valued least squares classifier (MVL-LS, Algorithm 1).

    Parameters
    ----------
    gamma_A : float > 0
        RKHS regularisation (gamma_A in eq 10).
    gamma_B : float >= 0
        Between-view consistency weight (eq 53-58).
    gamma_W : float >= 0
        Within-view manifold regularisation weight (eq 53, 60-64).
    c : array of shape (m,) or None
        Combination vector of C = c^T (x) I_P (eq 52); None is the average 1/m
        (eq 50-51). Any real values are allowed, negative ones too.
    laplacian : "normalized", "unnormalized" or array (m, n, n)
        Graph Laplacian per view, built from the view's own Gram matrix as the
        weights (Section 7.1), or given directly (then ``laplacian_power``
        applies to the given matrices too).
    solver : "auto", "structured" or "dense"
        "auto"/"structured" solve view by view (O(m n^3)); "dense" is the
        textbook (u+l)m system solved by one LU, for tests and benchmarks.
    n_neighbors : int >= 1 or None
        None uses dense kernel weights (the paper); an integer uses a
        symmetrised kNN graph for the Laplacians.
    n_classes : int or None
        Number of classes P. If given, labels must lie in 0..P-1 and each class
        needs a labelled sample; if None, P is the number of distinct labels.
    between_weights : array (n,) of non-negative numbers, or None
        Per-point weights w of the between-view term, M_B = diag(w) (x) M_m; None is w = 1 (eq 57). The
        indicator of the unlabelled points gives co-regularization on them (Section 3.4, eq 43-48;
        Sindhwani & Rosenberg 2008, see :mod:`mvl.coreg`).
    laplacian_power : int >= 1
        The within-view operator is M_W = blockdiag((L^1)^p, ..., (L^m)^p) (x) I_P, the iterated
        Laplacian of degree p (Belkin, Niyogi & Sindhwani 2006; Sindhwani & Rosenberg 2008, Table 4)
        in place of L of eq (60)-(63); 1 is the paper's choice. Each (L^i)^p is an n x n matrix.
    graph_weights : "kernel" or "binary"
        Edge weights of the kNN graph: the kernel value K^i_jk, or 1 (the default of the
        manifold-regularization code). "binary" needs ``n_neighbors``.

    The gammas enter multiplied by l, the number of labelled samples, exactly
    as in eq (67)-(68), so values from the paper mean the same here.

    Attributes
    ----------
    coef_ : array (m, n, P)
        Coefficients a_j per view (A of Theorem 10, view-major).
    classes_ : array (P,)
    c_ : array (m,)
    n_labelled_ : int
    fit_seconds_ : float
    """

    _param_names = ("gamma_A", "gamma_B", "gamma_W", "c", "laplacian", "solver", "n_neighbors", "n_classes",
                    "between_weights", "laplacian_power", "graph_weights")

    def __init__(self, gamma_A=1e-5, gamma_B=0.0, gamma_W=0.0, c=None, laplacian="normalized",
                 solver="auto", n_neighbors=None, n_classes=None, between_weights=None, laplacian_power=1,
                 graph_weights="kernel"):
        self.gamma_A = gamma_A
        self.gamma_B = gamma_B
        self.gamma_W = gamma_W
        self.c = c
        self.laplacian = laplacian
        self.solver = solver
        self.n_neighbors = n_neighbors
        self.n_classes = n_classes
        self.between_weights = between_weights
        self.laplacian_power = laplacian_power
        self.graph_weights = graph_weights

    def fit(self, K, y):
        """Fit on training kernels ``K`` (m, n, n) and labels ``y`` (n,), -1 = unlabelled."""
        if self.solver not in _SOLVERS:
            raise ValueError(f"solver must be one of {sorted(_SOLVERS)}, got {self.solver!r}")
        (gamma_A, gamma_B, gamma_W), K, labelled, classes, Y_L, L = self._fit_inputs(K, y)
        m, n, _ = K.shape
        c = check_combination(self.c, m)
        t0 = time.perf_counter()
        info = {}
        w = self.between_weights
        if w is not None:
            w = np.asarray(w, dtype=np.float64)
            if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0):
                raise ValueError(f"between_weights must be {n} finite non-negative numbers (one per training point)")
        if self.solver == "dense":
            self.coef_ = solve_dense(K, labelled, Y_L, c, gamma_A, gamma_B, gamma_W, L, between_weights=w)
        else:
            self.coef_ = solve_structured(K, labelled, Y_L, c, gamma_A, gamma_B, gamma_W, L, info=info,
                                          between_weights=w)
        self.fit_seconds_ = time.perf_counter() - t0
        rcond = info.get("rcond", np.nan)  # not estimated by the dense textbook solver
        self.condition_estimate_ = 1.0 / rcond if rcond != 0 else np.inf
        _check_solution(self.coef_, self.condition_estimate_, gamma_A)
        self.classes_ = classes
        self.c_ = c
        self.n_views_ = m
        self.n_train_ = n
        self.n_labelled_ = len(labelled)
        return self
