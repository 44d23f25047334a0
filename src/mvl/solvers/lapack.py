"""LAPACK blocks of the view-by-view solvers.

**Per-view blocks** (Theorem 10, eq 67-68, with the diagonal kernel of Section 7.1, eq 93-94): for view p,
H_p = (beta m D + omega L^p) K^p + delta I and Q_p = K^p H_p^{-1} (symmetric). :func:`factor_view` returns
the LU of H_p^T (LAPACK dgetrf), :func:`view_Q` forms Q_p from it, :func:`rcond` estimates the reciprocal
condition number of an LU. :mod:`mvl.solvers.structured` (Algorithm 1), :mod:`mvl.solvers.optc` (Section 6,
eq 84-92, the optimal combination) and :mod:`mvl.estimators.svm` (Theorems 6 and 13, Algorithms 2-3) eliminate the
coefficients view by view with them; the derivation is in the docstring of :mod:`mvl.solvers.structured`.
:func:`factor_spd` and :func:`solve_factored`: a symmetric positive definite system by Cholesky, LU if that fails.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from scipy.linalg import blas, lapack

__all__ = ["factor_view", "rcond", "solve_coupled", "view_Q", "factor_spd", "solve_factored"]


def factor_view(Kp, Lp, m, delta, beta, omega, p=0, rconds=None, w=None):
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
        rconds.append(rcond(lu, anorm))
    return lu, piv


def rcond(lu, anorm):
    """Reciprocal 1-norm condition estimate from an LU factorisation (LAPACK dgecon)."""
    r, info = lapack.dgecon(lu, anorm, norm="1")
    return float(r) if info == 0 else 0.0


def solve_coupled(A, rhs, rconds=None, trans=0):
    """x with op(A) x = rhs by one LU of A (LAPACK dgetrf, in place where A is Fortran-ordered; dgetrs), op = A or
    A^T (``trans`` 0 or 1): the coupled (E_L, T) system of Theorem 10's structured solvers. A singular system is an
    error; with a list ``rconds`` the reciprocal 1-norm condition estimate of A is appended (:func:`rcond`)."""
    anorm = float(np.abs(A).sum(axis=0).max()) if rconds is not None else 0.0  # the 1-norm of A
    lu, piv, err = lapack.dgetrf(A, overwrite_a=True)
    if err != 0:
        raise np.linalg.LinAlgError(f"coupled system is singular (dgetrf info {err})")
    if rconds is not None:
        rconds.append(rcond(lu, anorm))
    x, err = lapack.dgetrs(lu, piv, rhs, trans=trans)
    return x


def view_Q(lu, piv, Kp):
    """Q_p = K^p H_p^{-1} = H_p^{-T} K^p (push-through identity; Q_p is symmetric), Fortran order.

    K^p.T is K^p (exactly symmetric) in Fortran order: the right-hand side LAPACK wants.
    """
    X, info = lapack.dgetrs(lu, piv, Kp.T, trans=0)
    return X


def factor_spd(B, delta):
    """The factorisation of B + delta I, B symmetric: Cholesky, or LU if that fails; for :func:`solve_factored`."""
    A = B.copy()
    A[np.diag_indices_from(A)] += delta
    try:
        return linalg.cho_factor(A, lower=False, check_finite=False), True
    except linalg.LinAlgError:
        return linalg.lu_factor(A, check_finite=False), False


def solve_factored(fac, rhs):
    """(B + delta I)^{-1} rhs from :func:`factor_spd`'s factorisation."""
    f, chol = fac
    return linalg.cho_solve(f, rhs, check_finite=False) if chol else linalg.lu_solve(f, rhs, check_finite=False)
