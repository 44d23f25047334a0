"""The function of the structured MVL-LS solve: Theorem 10's system (67)-(68) view by view, derived in
:mod:`mvl.solvers.structured` (which holds the solver, ``solver="structured"``). A module of its own so that the
Poisson-type terms (:mod:`mvl.solvers.poisson`, whose joined loss is MVL-LS with shifted targets) use it without
importing the solver that dispatches to them."""

from __future__ import annotations

import numpy as np
from scipy.linalg import lapack

from .lapack import factor_view, solve_coupled, view_Q

__all__ = ["solve_structured"]


def solve_structured(K, labelled, Y_L, c, gamma_A, gamma_B, gamma_W, L=None, info=None, between_weights=None):
    """Solve eq (67)-(68) view by view; returns coefficients A of shape (m, n, P).

    ``labelled`` indexes the l labelled rows of the n training points and
    ``Y_L`` (l x P) holds their targets. ``L`` is (m, n, n) or None if
    gamma_W = 0. ``K`` must be exactly symmetric per view (as returned by
    :func:`mvl.validation.check_multiview_kernels`). If ``info`` is a dict, ``info["rcond"]`` receives
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
        lu, piv = factor_view(Kp, None if L is None else L[p], m, delta, beta, omega, p, rconds, w)
        factors.append((lu, piv))
        X = view_Q(lu, piv, Kp)
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
        sol = solve_coupled(S.T, rhs, rconds, trans=1)
        E_L, T = sol[:l], sol[l:]
        if U is not None:  # D T on all n points, zero outside U
            T = np.zeros((n, P))
            T[U] = sol[l:]
    else:
        Qcc_LL[np.diag_indices(l)] += 1.0
        E_L = solve_coupled(Qcc_LL, np.asarray(Y_L, dtype=np.float64), rconds)
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
