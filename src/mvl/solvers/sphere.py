"""Least squares on a sphere: ``min ||A x - b||`` subject to ``||x|| = alpha``.

This is the quadratic problem of Section 6.1 of Minh, Bazzani & Murino (JMLR
2016), eq (86)-(92), Theorems 15 and 16, solved with the SVD approach of
Gander (1981) but without any assumption on the shape or rank of ``A``.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from scipy import linalg
from scipy.linalg import blas

__all__ = ["sphere_least_squares"]

_EPS = np.finfo(np.float64).eps
_TOL_FACTOR = 10.0  # relative tolerance = _TOL_FACTOR * max(n, m) * eps
_MAX_ITER = 200


def sphere_least_squares(A, b, alpha):
    r"""Global minimiser of ``||A x - b||`` on the sphere ``||x|| = alpha``.

    Solves problem (86) of Minh, Bazzani & Murino (2016, Section 6.1) with the
    SVD ``A = U Sigma V^T`` of eq (87)-(88) and the secular equation (89)
    (Gander, 1981), for any ``A`` of shape (n, m): any n and m, any rank,
    including ``n < m`` and rank-deficient ``A``.

    Organising principle. ``x`` with ``||x|| = alpha`` is a global minimiser if
    and only if there is a ``gamma`` with ``(A^T A + gamma I) x = A^T b`` and
    ``A^T A + gamma I`` positive semidefinite, i.e. ``gamma >= -lambda_min``,
    where ``lambda_min`` is the smallest eigenvalue of ``A^T A`` (0 when
    ``rank(A) < m``, in particular when ``n < m``). In the basis of ``V``,
    with ``mu_i`` the eigenvalues of ``A^T A`` (eq 88), ``c = U^T b`` and
    ``d_i = sigma_i c_i`` (the coordinates of ``A^T b``), ``y = V^T x`` solves
    ``(mu_i + gamma) y_i = d_i``. Let ``J`` be the eigenspace of
    ``lambda_min`` and ``s0 = sum_{i not in J} d_i^2 / (mu_i - lambda_min)^2``.

    * ``A^T b = 0`` (Theorem 15): ``x`` is a unit eigenvector of ``A^T A`` for
      ``lambda_min`` (the first column of ``V`` spanning ``J``), times ``alpha``.
    * Easy case, ``d_J != 0`` or ``s0 > alpha^2``: the secular equation (89)
      ``s(gamma) = sum_i d_i^2 / (mu_i + gamma)^2 = alpha^2`` has a unique root
      ``gamma* > -lambda_min`` and ``x = (A^T A + gamma* I)^{-1} A^T b`` (eq 90)
      is the unique minimiser (Theorem 16 (I)).
    * Hard case, ``d_J = 0`` and ``s0 <= alpha^2``: ``gamma* = -lambda_min``,
      ``y_i = d_i / (mu_i - lambda_min)`` off ``J`` and the remaining mass
      ``alpha^2 - s0`` lies in ``J``. With ``rank(A) = r < m`` this is Theorem
      16 (II), eq (91)-(92): ``y_i = c_i / sigma_i`` for ``i <= r`` plus a
      null-space component. With ``rank(A) = m`` it is the case where
      ``b`` has no component along the smallest singular direction(s) and the
      root of (89) in ``(-sigma_r^2, inf)`` does not exist. The solution is then
      not unique; this function puts all the extra mass on the first basis
      vector of ``J`` (the first null-space direction ``V[:, r]`` when
      ``r < m``), with the sign of ``A^T b``'s (negligible) component there if
      it is nonzero.

    If ``A = 0`` (or ``n = 0``) every point of the sphere is optimal and
    ``alpha e_1`` is returned. The SVD is computed with ``full_matrices=True``
    when ``n < m`` so that ``V`` spans ``R^m``; for ``n >= m`` the economy SVD
    already has a square ``V`` and avoids forming an ``n x n`` ``U``.

    Numerical decisions use the relative tolerance
    ``tol = 10 * max(n, m) * eps`` (``eps`` = float64 machine epsilon), i.e. a
    few rounding errors of the SVD: singular values ``<= tol * sigma_1`` count
    as zero (numerical rank), singular values within ``tol * sigma_1`` of the
    smallest one form the cluster ``J``, ``A^T b`` counts as zero when
    ``||A^T b|| <= tol * ||A||_2 ||b||`` (Theorem 15) and ``d_J`` counts as
    zero when ``||d_J|| <= tol * ||A||_2 ||b||`` (hard case). Perturbing the
    data by such amounts changes the objective only at rounding level. The
    computation is scaled (``sigma_1 = 1``, radius 1) so that it neither
    overflows nor underflows for extreme magnitudes of ``A``, ``b`` and
    ``alpha``; when ``||b|| > 1e100 ||A||_2 alpha`` the root of (89) is so large
    that ``x`` is ``A^T b`` normalised to machine precision.

    The secular equation is solved in the shifted variable
    ``t = gamma + lambda_min > 0`` (so that the eigenvalue gaps
    ``mu_i - lambda_min = (sigma_i - sigma_min)(sigma_i + sigma_min)`` are
    formed without cancellation) by Newton's method on the nearly linear
    function ``1 / sqrt(s(t)) - 1 / alpha``, safeguarded by a bracket
    ``[lo, hi]`` with ``s(lo) >= alpha^2 >= s(hi)`` and bisection, until the
    iterate stops moving (machine precision). Finally ``x`` is rescaled to
    norm exactly ``alpha`` (a polish of the last bits only).

    Parameters
    ----------
    A : array_like of shape (n, m)
        Real, finite matrix; ``m >= 1``.
    b : array_like of shape (n,)
        Real, finite vector.
    alpha : float
        Radius of the sphere, finite and > 0.

    Returns
    -------
    x : ndarray of shape (m,), float64
        A global minimiser with ``||x|| = alpha``.

    Raises
    ------
    ValueError
        If the inputs have the wrong shape, are not finite real numbers or
        ``alpha`` is not a finite positive number.
    """
    A, b, alpha = _check_inputs(A, b, alpha)
    return _solve(A, b, alpha)[0]


def _check_inputs(A, b, alpha):
    if isinstance(alpha, np.ndarray) and alpha.ndim == 0:
        alpha = alpha.item()
    if isinstance(alpha, bool | np.bool_) or not isinstance(alpha, numbers.Real):
        raise ValueError(f"alpha must be a real number, got {alpha!r}")
    alpha = float(alpha)
    if not np.isfinite(alpha) or alpha <= 0:
        raise ValueError(f"alpha must be finite and > 0, got {alpha!r}")
    A = _as_real_array(A, "A")
    b = _as_real_array(b, "b")
    if A.ndim != 2:
        raise ValueError(f"A must be a 2-d array of shape (n, m), got shape {A.shape}")
    if b.ndim != 1:
        raise ValueError(f"b must be a 1-d array of shape (n,), got shape {b.shape}")
    if A.shape[0] != b.shape[0]:
        raise ValueError(f"A has {A.shape[0]} rows but b has {b.shape[0]} entries; they must match")
    if A.shape[1] == 0:
        raise ValueError("A must have at least one column (m >= 1): the sphere in R^0 is empty")
    if not np.all(np.isfinite(A)):
        raise ValueError("A contains NaN or infinite values")
    if not np.all(np.isfinite(b)):
        raise ValueError("b contains NaN or infinite values")
    return A, b, alpha


def _as_real_array(obj, name):
    try:
        arr = np.asarray(obj)
    except Exception as exc:  # pragma: no cover - numpy raises many types
        raise ValueError(f"{name} cannot be converted to an array: {exc}") from exc
    if not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)
            or arr.dtype == np.bool_):
        raise ValueError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    return arr.astype(np.float64, copy=False)


def _solve(A, b, alpha):
    """Return ``(x, info)``; ``info`` names the case and gives ``gamma*`` (for tests and debugging)."""
    with np.errstate(over="ignore", under="ignore"):  # extreme scales: see the comments below
        return _solve_scaled(A, b, alpha)


def _solve_scaled(A, b, alpha):
    n, m = A.shape
    tol = _TOL_FACTOR * max(n, m) * _EPS
    b_norm = _norm(b)

    a_max = float(np.max(np.abs(A))) if A.size else 0.0
    if a_max > 0:
        # full_matrices only matters for V: with n >= m the economy V is already m x m
        # (and we avoid an n x n U); with n < m we need the full V to span R^m.
        U, sv, Vt = linalg.svd(A / a_max, full_matrices=n < m, check_finite=False)
    if a_max == 0 or sv[0] == 0:
        # A = 0 (or n = 0): the objective is ||b|| everywhere on the sphere.
        x = np.zeros(m)
        x[0] = alpha
        return x, {"case": "A=0", "gamma": 0.0}
    V = Vt.T
    log_sigma1 = np.log(sv[0]) + np.log(a_max)
    sigma1_sq = np.exp(2 * log_sigma1)  # only used to report gamma

    # Scaled problem: x = alpha * V y and A = sigma1 * Ahat, so that the radius is
    # 1 and sigma_1 = 1. The V-coordinates of A^T b, divided by sigma1^2 alpha, are
    # d = dhat / eps_ with dhat = Sigma^T U^T b / (sigma1 ||b||) (so ||dhat|| <= 1)
    # and eps_ = sigma1 alpha / ||b||; then (Sigma^2 + gamma / sigma1^2) y = d.
    sig = np.zeros(m)
    sig[: sv.size] = sv / sv[0]
    dhat = np.zeros(m)
    if b_norm > 0:
        dhat[: sv.size] = sig[: sv.size] * blas.dgemv(1.0, U, b / b_norm, trans=1)[: sv.size]

    # Cluster J of the smallest eigenvalue of A^T A; null space if numerically rank-deficient.
    sig_min = sig[-1]
    if sig_min <= tol:
        sig_min = 0.0
        in_J = sig <= tol
        null_cluster = True
        dhat[in_J] = 0.0  # A^T b has no null-space component (only rounding noise)
    else:
        in_J = sig <= sig_min + tol
        null_cluster = False
    J = np.flatnonzero(in_J)
    delta = np.where(in_J, 0.0, (sig - sig_min) * (sig + sig_min))  # mu_i - lambda_min, scaled
    lam_min = sig_min**2  # scaled by sigma1^2

    dhat_norm = _norm(dhat)
    if dhat_norm <= tol:
        # Theorem 15: ||A^T b|| <= tol ||A||_2 ||b||, i.e. A^T b = 0 numerically
        # -> unit eigenvector of the smallest eigenvalue of A^T A.
        y = np.zeros(m)
        y[J[0]] = 1.0
        return _finish(V, y, alpha), {"case": "theorem15", "gamma": -lam_min * sigma1_sq}

    log_eps = log_sigma1 + np.log(alpha) - np.log(b_norm)
    if log_eps < -230.0:
        # ||b|| / (||A|| alpha) > 1e100: the root t* >= ||d|| - 1 ~ 1/eps_ dwarfs every
        # eigenvalue gap (<= 1), so y = d / (delta + t*) = d / ||d|| to machine precision.
        return _finish(V, dhat / dhat_norm, alpha), {"case": "easy", "gamma": np.inf}
    d = dhat / np.exp(log_eps)  # |d| <= 1e100; may underflow harmlessly when alpha is huge

    dJ = d[J]
    dJ_norm = _norm(dJ)
    off = ~in_J
    y_off = np.zeros(m)
    y_off[off] = d[off] / delta[off]
    s0 = _norm(y_off) ** 2
    if dJ_norm <= tol * np.exp(-log_eps) and s0 <= 1.0:  # tol * ||A||_2 ||b||, scaled
        # Hard case (Theorem 16 (II) when rank < m): gamma* = -lambda_min.
        y = y_off
        extra = np.sqrt(max(1.0 - s0, 0.0))
        if null_cluster or dJ_norm == 0.0:
            y[J[0]] = extra
        else:
            y[J] = extra * dJ / dJ_norm
        return _finish(V, y, alpha), {"case": "hard", "gamma": -lam_min * sigma1_sq}

    # Easy case: unique root t* > 0 of s(t) = sum d_i^2 / (delta_i + t)^2 = 1.
    t = _secular_root(d, delta, dJ_norm)
    y = np.zeros(m)
    nz = d != 0
    y[nz] = d[nz] / (delta[nz] + t)
    gamma = (t - lam_min) * sigma1_sq
    return _finish(V, y, alpha), {"case": "easy", "gamma": gamma}


def _norm(v):
    """Euclidean norm without overflow or underflow of the squares."""
    if v.size <= 32:  # math.hypot scales internally (no overflow/underflow) and is accurate to ~1 ulp
        return math.hypot(*v.tolist())
    scale = float(np.max(np.abs(v))) if v.size else 0.0
    if scale == 0.0 or not np.isfinite(scale):
        return scale
    return scale * float(np.linalg.norm(v / scale))


def _finish(V, y, alpha):
    x = blas.dgemv(1.0, V, alpha * y)
    return x * (alpha / _norm(x))


def _secular_root(d, delta, dJ_norm):
    """Root ``t > 0`` of ``phi(t) = 1/||w(t)|| - 1``, ``w_i = d_i / (delta_i + t)``.

    ``phi`` increases from ``phi(0+) < 0`` to 1 (caller guarantees a root).
    Bracket: ``s(t) >= d_i^2/(delta_i+t)^2`` gives ``s >= 1`` for
    ``t <= |d_i| - delta_i`` (and ``t <= ||d_J||`` on the cluster, where
    ``delta = 0``), and ``s(t) <= ||d||^2 / t^2`` gives ``s <= 1`` at ``t = ||d||``.
    """
    nz = d != 0
    d = d[nz]
    delta = delta[nz]
    lo = max(0.0, float(np.max(np.abs(d) - delta)), dJ_norm)
    hi = _norm(d)
    if lo >= hi:  # only possible by rounding: a single term with delta = 0
        return hi

    def phi_dphi(t):
        q = delta + t
        w = d / q
        nw = _norm(w)
        u = w / nw
        return 1.0 / nw - 1.0, float(np.sum(u * u / q)) / nw

    t = hi
    for _ in range(_MAX_ITER):
        phi, dphi = phi_dphi(t)
        if phi == 0.0:
            return t
        if phi < 0.0:
            lo = max(lo, t)
        else:
            hi = min(hi, t)
        t_new = t - phi / dphi if dphi > 0 else np.nan
        if not (lo < t_new < hi):
            # bisection: geometric when the bracket spans orders of magnitude
            t_new = np.sqrt(lo * hi) if lo > 0 and hi > 4 * lo else 0.5 * (lo + hi)
            if not (lo < t_new < hi):  # bracket cannot shrink any further
                return t
        if abs(t_new - t) <= 2 * _EPS * t:
            return t_new
        t = t_new
    return t  # pragma: no cover - Newton/bisection converges far earlier
