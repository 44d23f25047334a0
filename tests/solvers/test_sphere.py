"""mvl.solvers.sphere.sphere_least_squares: min ||A x - b|| s.t. ||x|| = alpha (paper Section 6.1, eq 86-92).

The references are independent of the solver: dense sampling of the sphere with
local refinement (scipy), closed forms, random sampling, and the global optimality
certificate for a quadratic on a sphere -- x with ||x|| = alpha is a global
minimiser iff (A^T A + gamma I) x = A^T b for some gamma with A^T A + gamma I
positive semidefinite.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize

from mvl.solvers.sphere import sphere_least_squares


def objective(A, b, x):
    return float(np.linalg.norm(A @ x - b))


def scale_of(A, b, alpha):
    """Natural size of the objective: ||A||_2 alpha + ||b||."""
    return float(np.linalg.norm(A, 2) * alpha + np.linalg.norm(b)) if A.size else float(np.linalg.norm(b))


def random_orthogonal(k, rng):
    Q, R = np.linalg.qr(rng.normal(size=(k, k)))
    return Q * np.sign(np.diag(R))


def with_singular_values(n, m, sv, rng):
    """A = U diag(sv) V^T of shape (n, m) with random orthogonal U, V; returns (A, U, V)."""
    U, V = random_orthogonal(n, rng), random_orthogonal(m, rng)
    S = np.zeros((n, m))
    S[np.arange(len(sv)), np.arange(len(sv))] = sv
    return U @ S @ V.T, U, V


# ------------------------------------------------------------ brute force reference


def fibonacci_sphere(k):
    i = np.arange(k) + 0.5
    z = 1 - 2 * i / k
    r = np.sqrt(1 - z**2)
    phi = np.pi * (1 + 5**0.5) * i
    return np.column_stack([r * np.cos(phi), r * np.sin(phi), z])


def brute_force(A, b, alpha, n_refine=6):
    """Global minimum over the sphere in R^2 or R^3 by dense sampling + local refinement.

    m = 2: 20000 angles; m = 3: a 20000-point Fibonacci sphere. The best samples are
    refined with Nelder-Mead on a local chart u -> alpha (p + T u) / ||p + T u|| (T an
    orthonormal basis of the tangent space at p, i.e. local angle-like coordinates that
    avoid the poles of spherical coordinates).
    """
    m = A.shape[1]
    if m == 2:
        th = np.linspace(0, 2 * np.pi, 20000, endpoint=False)
        P = np.column_stack([np.cos(th), np.sin(th)])
    elif m == 3:
        P = fibonacci_sphere(20000)
    else:  # pragma: no cover - guard for misuse of the helper
        raise AssertionError("brute force only for m = 2 or 3")
    vals = np.linalg.norm(alpha * P @ A.T - b, axis=1)
    best_x, best_f = alpha * P[np.argmin(vals)], float(vals.min())
    for k in np.argsort(vals)[:n_refine]:
        p = P[k]
        T = np.linalg.svd(p[None, :])[2][1:].T  # m x (m-1), orthonormal, orthogonal to p

        def chart(u, p=p, T=T):
            v = p + T @ u
            return alpha * v / np.linalg.norm(v)

        res = minimize(lambda u, chart=chart: objective(A, b, chart(u)) ** 2, np.zeros(m - 1),
                       method="Nelder-Mead",
                       options=dict(xatol=1e-13, fatol=1e-300, maxiter=4000))
        x = chart(res.x)
        f = objective(A, b, x)
        if f < best_f:
            best_x, best_f = x, f
    return best_x, best_f


def assert_matches_brute_force(A, b, alpha):
    x = sphere_least_squares(A, b, alpha)
    assert x.shape == (A.shape[1],) and x.dtype == np.float64
    assert abs(np.linalg.norm(x) - alpha) <= 1e-12 * alpha
    _, f_bf = brute_force(A, b, alpha)
    f = objective(A, b, x)
    scale = max(1.0, scale_of(A, b, alpha))
    assert f <= f_bf + 1e-10 * scale, (f, f_bf)
    # and the brute force is accurate enough for the comparison to have teeth
    assert f_bf <= f + 1e-7 * scale, (f, f_bf)
    return x


def _case(name, seed):
    """Tiny problems for the brute-force comparison: (A, b, alpha)."""
    rng = np.random.default_rng(seed)
    if name == "full_rank_5x3":
        return rng.normal(size=(5, 3)), rng.normal(size=5), 1.0
    if name == "full_rank_4x2":
        return rng.normal(size=(4, 2)), rng.normal(size=4), 0.7
    if name in ("rankdef_inside", "rankdef_outside", "rankdef_2d_inside"):
        m = 2 if name == "rankdef_2d_inside" else 3
        A, _, _ = with_singular_values(4, m, [2.0, 0.5][: m - 1], rng)
        b = rng.normal(size=4)
        r_ls = np.linalg.norm(np.linalg.pinv(A) @ b)
        return A, b, (2.5 if "inside" in name else 0.3) * r_ls
    if name == "n_lt_m_1x2":
        return rng.normal(size=(1, 2)), rng.normal(size=1), 0.4
    if name == "n_lt_m_1x3_inside":
        A, b = rng.normal(size=(1, 3)), rng.normal(size=1)
        return A, b, 3 * np.linalg.norm(np.linalg.pinv(A) @ b)
    if name == "n_lt_m_2x3":
        return rng.normal(size=(2, 3)), rng.normal(size=2), 0.5
    if name in ("ATb0_distinct", "ATb0_repeated"):
        sv = [3.0, 2.0, 1.0] if name == "ATb0_distinct" else [3.0, 1.0, 1.0]
        A, U, _ = with_singular_values(5, 3, sv, rng)
        b = U[:, 3:] @ rng.normal(size=2)  # orthogonal to range(A): A^T b = 0
        return A, b, 1.3
    if name == "ATb0_2d_repeated":
        A, U, _ = with_singular_values(3, 2, [1.5, 1.5], rng)
        return A, 2.0 * U[:, 2], 0.8
    if name in ("hard_3d", "hard_3d_huge_alpha", "near_hard_3d"):
        A, U, _ = with_singular_values(4, 3, [3.0, 2.0, 1.0], rng)
        c = rng.normal(size=4)
        c[2] = 1e-9 if name == "near_hard_3d" else 0.0  # no component on the smallest direction
        alpha = 1e6 if name == "hard_3d_huge_alpha" else 5.0
        return A, U @ c, alpha
    if name == "hard_2d":
        A, U, _ = with_singular_values(3, 2, [2.0, 1.0], rng)
        c = rng.normal(size=3)
        c[1] = 0.0
        return A, U @ c, 4.0
    if name == "alpha_tiny":
        return rng.normal(size=(4, 3)), rng.normal(size=4), 1e-6
    if name == "alpha_huge":
        return rng.normal(size=(4, 3)), rng.normal(size=4), 1e6
    if name == "alpha_huge_2d":
        return rng.normal(size=(3, 2)), rng.normal(size=3), 1e6
    raise AssertionError(name)  # pragma: no cover


BRUTE_CASES = ["full_rank_5x3", "full_rank_4x2", "rankdef_inside", "rankdef_2d_inside", "rankdef_outside",
               "n_lt_m_1x2", "n_lt_m_1x3_inside", "n_lt_m_2x3", "ATb0_distinct", "ATb0_repeated",
               "ATb0_2d_repeated", "hard_3d", "hard_3d_huge_alpha", "near_hard_3d", "hard_2d",
               "alpha_tiny", "alpha_huge", "alpha_huge_2d"]


@pytest.mark.parametrize("name", BRUTE_CASES)
def test_brute_force(name):
    A, b, alpha = _case(name, seed=BRUTE_CASES.index(name) + 100)
    x = assert_matches_brute_force(A, b, alpha)
    if name.startswith("rankdef") and "inside" in name or name == "n_lt_m_1x3_inside":
        # Theorem 16 (II): x fits as well as the least-squares solution, A x = A A^+ b
        np.testing.assert_allclose(A @ x, A @ np.linalg.pinv(A) @ b, atol=1e-12)
    if name.startswith("ATb0"):
        # Theorem 15: x is an eigenvector of A^T A for its smallest eigenvalue
        H = A.T @ A
        lam = np.linalg.eigvalsh(H)[0]
        np.testing.assert_allclose(H @ x, lam * x, atol=1e-12 * alpha)


def test_brute_force_seeds_full_rank_and_n_lt_m():
    """A few more random draws of the generic shapes (cheap: ~20k samples each)."""
    for seed in range(3):
        for name in ("full_rank_5x3", "n_lt_m_2x3", "hard_2d"):
            assert_matches_brute_force(*_case(name, seed=seed))


# ------------------------------------------------------------ closed forms


@pytest.mark.parametrize("alpha", [1e-3, 0.5, 2.0, 1e4])
def test_identity(alpha):
    b = np.array([3.0, -4.0, 12.0])
    np.testing.assert_allclose(sphere_least_squares(np.eye(3), b, alpha), alpha * b / 13.0, rtol=1e-14)


def test_orthogonal():
    rng = np.random.default_rng(1)
    Q = random_orthogonal(4, rng)
    b = rng.normal(size=4)
    x = sphere_least_squares(Q, b, 0.3)
    # ||Q x - b|| = ||x - Q^T b||: the closest point of the sphere to Q^T b
    np.testing.assert_allclose(x, 0.3 * Q.T @ b / np.linalg.norm(b), rtol=1e-13)


@pytest.mark.parametrize("beta", [2.0, -0.5])
def test_diagonal_b_along_smallest_axis(beta):
    A = np.diag([3.0, 2.0, 1.0])
    x = sphere_least_squares(A, beta * np.array([0.0, 0.0, 1.0]), 1.7)
    np.testing.assert_allclose(x, [0.0, 0.0, 1.7 * np.sign(beta)], atol=1e-14)


def test_diagonal_b_along_largest_axis_easy_and_hard():
    # A = diag(3, 2, 1), b = beta e1: A^T b = 3 beta e1, the hard-case threshold is
    # s0 = (3 beta / (9 - 1))^2. Below it the minimiser is sign(beta) alpha e1, above it
    # gamma* = -1 and x = (3 beta / 8, 0, +-sqrt(alpha^2 - s0)).
    A = np.diag([3.0, 2.0, 1.0])
    beta = 2.0
    b = np.array([beta, 0.0, 0.0])
    y1 = 3 * beta / 8
    x = sphere_least_squares(A, b, 0.5)  # 0.5 < y1 = 0.75: easy case, gamma = 3 beta / alpha - 9 = 3
    np.testing.assert_allclose(x, [0.5, 0.0, 0.0], atol=1e-14)
    x = sphere_least_squares(A, b, 2.0)  # hard case
    np.testing.assert_allclose([x[0], x[1], abs(x[2])], [y1, 0.0, np.sqrt(4.0 - y1**2)], atol=1e-14)
    x = sphere_least_squares(A, b, y1)  # boundary between the two
    np.testing.assert_allclose(x, [y1, 0.0, 0.0], atol=1e-7)


def test_diagonal_rank_deficient_case_II():
    # A = diag(2, 1, 0), b = (2, 3, 5): least-norm LS solution (1, 3, 0) of norm sqrt(10)
    A = np.diag([2.0, 1.0, 0.0])
    b = np.array([2.0, 3.0, 5.0])
    x = sphere_least_squares(A, b, 4.0)
    np.testing.assert_allclose([x[0], x[1], abs(x[2])], [1.0, 3.0, np.sqrt(6.0)], atol=1e-14)
    # outside the ball: gamma* > 0 solves 16/(4+g)^2 + 9/(1+g)^2 = 1 -> x_i = d_i / (mu_i + g)
    x = sphere_least_squares(A, b, 1.0)
    g = (A[0, 0] * b[0]) / x[0] - A[0, 0] ** 2
    np.testing.assert_allclose(x, [4 / (4 + g), 3 / (1 + g), 0.0], atol=1e-14)
    assert g > 0 and abs(16 / (4 + g) ** 2 + 9 / (1 + g) ** 2 - 1) < 1e-13


def test_underdetermined_single_row():
    # min |x1 + x2 - 2| on ||x|| = alpha: zero residual iff alpha >= sqrt(2)
    A, b = np.array([[1.0, 1.0]]), np.array([2.0])
    x = sphere_least_squares(A, b, 0.5)
    np.testing.assert_allclose(x, [0.5 / np.sqrt(2)] * 2, rtol=1e-14)
    x = sphere_least_squares(A, b, 3.0)
    assert abs(x.sum() - 2.0) < 1e-13 and abs(np.linalg.norm(x) - 3.0) < 1e-13
    np.testing.assert_allclose(np.sort(np.abs(x - 1.0)), [np.sqrt(3.5)] * 2, rtol=1e-13)


def test_ATb_zero_gives_smallest_eigenvector():
    A = np.vstack([np.diag([3.0, 2.0, 1.0]), np.zeros((1, 3))])
    for b in (np.array([0.0, 0.0, 0.0, 5.0]), np.zeros(4)):
        x = sphere_least_squares(A, b, 2.5)
        np.testing.assert_allclose(np.abs(x), [0.0, 0.0, 2.5], atol=1e-14)
    # rank-deficient: smallest eigenvalue 0, any null vector
    A = np.array([[1.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    x = sphere_least_squares(A, np.array([1.0, -1.0]), 0.7)
    np.testing.assert_allclose(A @ x, 0.0, atol=1e-14)
    assert abs(np.linalg.norm(x) - 0.7) < 1e-15


def test_zero_matrix_and_empty_rows():
    x = sphere_least_squares(np.zeros((3, 2)), np.ones(3), 2.0)
    assert abs(np.linalg.norm(x) - 2.0) < 1e-15
    x = sphere_least_squares(np.zeros((0, 4)), np.zeros(0), 0.5)
    assert x.shape == (4,) and abs(np.linalg.norm(x) - 0.5) < 1e-15


def test_single_column():
    # m = 1: the sphere is {-alpha, alpha}
    A, b = np.array([[1.0], [2.0]]), np.array([-1.0, -1.0])
    np.testing.assert_array_equal(sphere_least_squares(A, b, 0.25), [-0.25])


@pytest.mark.parametrize("s", [1e-150, 1e150])
def test_extreme_scales(s):
    # scaling A and b together does not change the minimiser
    rng = np.random.default_rng(5)
    A, U, _ = with_singular_values(4, 3, [3.0, 2.0, 1.0], rng)
    c = rng.normal(size=4)
    c[2] = 0.0
    for b, unique in ((rng.normal(size=4), True), (U @ c, False)):
        x_ref = sphere_least_squares(A, b, 1.5)
        x = sphere_least_squares(s * A, s * b, 1.5)
        assert np.all(np.isfinite(x))
        if unique:  # easy case: one minimiser
            np.testing.assert_allclose(x, x_ref, atol=1e-12)
        else:  # hard case (b in the range of the larger singular directions): the minimisers are y_off + t v with
            # v spanning the smallest singular direction and both signs of t; rounding at scale s picks either,
            # so compare what defines them: on the sphere and the same (minimal) residual
            assert np.linalg.norm(x) == pytest.approx(1.5, rel=1e-12)
            assert np.linalg.norm(A @ x - b) == pytest.approx(np.linalg.norm(A @ x_ref - b), rel=1e-10, abs=1e-12)


# ------------------------------------------------------------ property test


def _certificate(A, b, x, alpha):
    """Residual of the stationarity equation and lambda_min(A^T A + gamma I), both scaled."""
    H, g = A.T @ A, A.T @ b
    gamma = (g @ x - x @ H @ x) / alpha**2
    nA = np.linalg.norm(A, 2)
    res = np.linalg.norm(H @ x + gamma * x - g) / (nA**2 * alpha + nA * np.linalg.norm(b) + 1e-300)
    psd = (np.linalg.eigvalsh(H)[0] + gamma) / (nA**2 + nA * np.linalg.norm(b) / alpha + 1e-300)
    return res, psd


@st.composite
def problems(draw):
    n = draw(st.integers(1, 6))
    m = draw(st.integers(1, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    kind = draw(st.sampled_from(["gauss", "integer", "lowrank", "zero_col", "dup_row", "clustered"]))
    if kind == "gauss":
        A = rng.normal(size=(n, m))
    elif kind == "integer":  # ties, exact zeros and rank deficiency happen often
        A = rng.integers(-2, 3, size=(n, m)).astype(float)
    elif kind == "lowrank":
        k = draw(st.integers(1, min(n, m)))
        A = rng.integers(-3, 4, size=(n, k)).astype(float) @ rng.integers(-3, 4, size=(k, m)).astype(float)
    elif kind == "zero_col":
        A = rng.normal(size=(n, m))
        A[:, rng.integers(m)] = 0.0 if m > 1 else 1e-3
    elif kind == "dup_row":
        A = rng.normal(size=(n, m))
        A[-1] = A[0]
    else:  # repeated singular values
        k = min(n, m)
        sv = np.sort(rng.choice([0.5, 1.0, 2.0], size=k))[::-1]
        A, _, _ = with_singular_values(n, m, sv, rng)
    bkind = draw(st.sampled_from(["free", "range", "perp", "hard", "near_hard"]))
    U, sv, _ = np.linalg.svd(A)
    r = int(np.sum(sv > 1e-10 * max(sv.max(initial=0.0), 1e-300)))
    if bkind == "free":
        b = rng.normal(size=n)
    elif bkind == "range":
        b = A @ rng.normal(size=m)
    elif bkind == "perp":  # A^T b = 0 (b = 0 if A has full row rank)
        b = U[:, r:] @ rng.normal(size=n - r)
    else:  # no (or a tiny) component along the smallest nonzero singular direction(s)
        c = rng.normal(size=n)
        if r:
            c[np.flatnonzero(np.abs(sv[:r] - sv[r - 1]) <= 1e-10 * sv[0])] *= 0.0 if bkind == "hard" else 1e-9
        b = U @ c
    alpha = 10.0 ** draw(st.floats(-3, 3))  # the hard case needs alpha large enough: about half the draws
    return A, b, alpha, rng


@settings(deadline=None, max_examples=60)
@given(problems())
def test_property_global_minimum(problem):
    A, b, alpha, rng = problem
    m = A.shape[1]
    x = sphere_least_squares(A, b, alpha)
    assert x.shape == (m,)
    assert abs(np.linalg.norm(x) - alpha) <= 1e-10 * alpha
    f = objective(A, b, x)
    scale = scale_of(A, b, alpha)
    Z = rng.normal(size=(2000, m))
    Z *= alpha / np.linalg.norm(Z, axis=1, keepdims=True)
    f_rand = float(np.min(np.linalg.norm(Z @ A.T - b, axis=1)))
    assert f <= f_rand + 1e-9 * scale
    # at least as good as two natural candidates: the normalised least-squares
    # solution and the normalised A^T b direction
    for v in (np.linalg.pinv(A) @ b, A.T @ b):
        if np.linalg.norm(v) > 0:
            assert f <= objective(A, b, alpha * v / np.linalg.norm(v)) + 1e-9 * scale
    res, psd = _certificate(A, b, x, alpha)
    assert res <= 1e-9, res
    assert psd >= -1e-9, psd


# ------------------------------------------------------------ input validation


@pytest.mark.parametrize(
    "A, b, alpha, match",
    [
        (np.eye(2), np.ones(2), 0.0, "alpha must be finite and > 0"),
        (np.eye(2), np.ones(2), -1.0, "alpha must be finite and > 0"),
        (np.eye(2), np.ones(2), np.inf, "alpha must be finite and > 0"),
        (np.eye(2), np.ones(2), np.nan, "alpha must be finite and > 0"),
        (np.eye(2), np.ones(2), "1", "alpha must be a real number"),
        (np.eye(2), np.ones(2), True, "alpha must be a real number"),
        (np.eye(2), np.ones(2), 1 + 2j, "alpha must be a real number"),
        (np.ones(2), np.ones(2), 1.0, "A must be a 2-d array"),
        (np.ones((2, 2, 1)), np.ones(2), 1.0, "A must be a 2-d array"),
        (np.eye(2), np.ones((2, 1)), 1.0, "b must be a 1-d array"),
        (np.eye(2), np.ones(3), 1.0, "A has 2 rows but b has 3 entries"),
        (np.zeros((2, 0)), np.ones(2), 1.0, "at least one column"),
        (np.array([[1.0, np.nan], [0.0, 1.0]]), np.ones(2), 1.0, "A contains NaN or infinite"),
        (np.eye(2), np.array([1.0, np.inf]), 1.0, "b contains NaN or infinite"),
        (np.eye(2) * 1j, np.ones(2), 1.0, "A must hold real numbers"),
        (np.eye(2), np.array(["a", "b"]), 1.0, "b must hold real numbers"),
    ],
)
def test_bad_input(A, b, alpha, match):
    with pytest.raises(ValueError, match=match):
        sphere_least_squares(A, b, alpha)


def test_accepts_lists_ints_and_numpy_scalars():
    x = sphere_least_squares([[1, 0], [0, 1]], [3, 4], np.float32(5.0))
    assert x.dtype == np.float64
    np.testing.assert_allclose(x, [3.0, 4.0], rtol=1e-6)
    np.testing.assert_allclose(sphere_least_squares(np.eye(2), [3.0, 4.0], np.array(10)), [6.0, 8.0], rtol=1e-15)
