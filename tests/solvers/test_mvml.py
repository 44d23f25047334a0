"""MVML's problem and metric classes (mvl.solvers.mvml) called directly, against dense numpy: Nystrom factors by
the pseudo-inverse of the landmark Gram matrix, A^+ by numpy.linalg.pinv, block norms by explicit loops, each
metric's Gram matrix B A B^T with A formed here, and the g- and w-steps of the alternating algorithm by dense solves.
The estimator (mvl.estimators.mvml) is tested in tests/estimators/test_mvml.py."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import linalg

from mvl.solvers.mvml import (
    CovMetric,
    DenseMetric,
    IdentityMetric,
    LowRankMetric,
    MetricFactor,
    MVMLProblem,
    group_norms,
    nystrom_features,
)


def _kernels(v, n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(v):
        X = rng.normal(size=(n, 3))
        out.append(np.exp(-0.3 * np.sum((X[:, None] - X[None]) ** 2, axis=-1)))
    return out


def _stacked(F, w):
    return np.hstack([w[k] * F[k] for k in range(len(F))])


def test_nystrom_features_reproduce_the_nystrom_approximation():
    K = np.stack(_kernels(2, 15, seed=1))
    S = np.array([0, 3, 7, 11, 14])
    U, T = nystrom_features(K, S)
    for Kl, Ul, Tl in zip(K, U, T, strict=True):
        ref = Kl[:, S] @ np.linalg.pinv(Kl[np.ix_(S, S)]) @ Kl[S, :]
        np.testing.assert_allclose(Ul @ Ul.T, ref, rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(Ul, Kl[:, S] @ Tl, rtol=1e-12, atol=1e-14)


def test_nystrom_features_refuse_a_zero_landmark_block():
    with pytest.raises(ValueError, match="zero"):
        nystrom_features(np.zeros((1, 4, 4)), [0, 1])


def test_metric_factor_applies_the_pseudo_inverse_on_the_range():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(6, 6))
    pd = MetricFactor(X @ X.T + np.eye(6))
    g = rng.normal(size=6)
    assert pd.pd and pd.psd
    np.testing.assert_allclose(pd.pinv_apply(g), np.linalg.solve(X @ X.T + np.eye(6), g), rtol=1e-10)
    R = rng.normal(size=(6, 3))
    psd = MetricFactor(R @ R.T)  # rank 3: semidefinite, not definite
    assert not psd.pd and psd.psd
    in_range = R @ rng.normal(size=3)
    np.testing.assert_allclose(psd.pinv_apply(in_range), np.linalg.pinv(R @ R.T) @ in_range, rtol=1e-8, atol=1e-10)
    outside = np.linalg.svd(R, full_matrices=True)[0][:, -1]  # orthogonal to the range
    assert psd.pinv_apply(outside) is None
    indefinite = MetricFactor(np.diag([2.0, 1.0, -0.5]))
    assert not indefinite.psd and indefinite.min_eig == pytest.approx(-0.5)


def test_group_norms_are_the_frobenius_norms_of_the_view_pair_blocks():
    A = np.random.default_rng(3).normal(size=(9, 9))
    offsets = [0, 2, 6, 9]
    ref = np.array([[np.linalg.norm(A[offsets[i]:offsets[i + 1], offsets[j]:offsets[j + 1]]) for j in range(3)]
                    for i in range(3)])
    np.testing.assert_allclose(group_norms(A, offsets), ref, rtol=1e-13)


def test_every_metric_gram_is_B_A_B_transpose():
    """gram(F, w) = B A B^T, B = [w_1 F_1, ..., w_v F_v], with A formed here for each metric."""
    rng = np.random.default_rng(4)
    n, v = 10, 3
    K = _kernels(v, n, seed=5)
    w = np.array([0.7, -1.2, 0.4])
    B = _stacked(K, w)
    N = n * v
    X = rng.normal(size=(N, N))
    A_dense = X @ X.T
    cases = {
        "dense": (DenseMetric(A_dense), A_dense),
        "cov": (CovMetric(None, [n] * v), np.kron(np.ones((v, v)), np.eye(n))),
        "identity": (IdentityMetric(True, K), linalg.block_diag(*[np.linalg.pinv(Kl, rcond=1e-10) for Kl in K])),
        "low rank": (LowRankMetric(None, K, sizes=[n] * v), np.eye(N)),
    }
    for name, (metric, A) in cases.items():
        ref = B @ A @ B.T
        np.testing.assert_allclose(metric.gram(K, w), ref, rtol=1e-7, atol=1e-8 * np.abs(ref).max(), err_msg=name)
        np.testing.assert_allclose(metric.dense(), A, rtol=1e-7, atol=1e-8 * np.abs(A).max(), err_msg=name)
    E = [rng.normal(size=(4, n)) for _ in range(v)]  # Nystrom: A_lm = E_l^T E_m
    E_all = np.hstack(E)
    ref = B @ (E_all.T @ E_all) @ B.T
    np.testing.assert_allclose(CovMetric(E, [n] * v).gram(K, w), ref, rtol=1e-9, atol=1e-10 * np.abs(ref).max())


def test_low_rank_metric_applies_and_inverts_its_block_diagonal_base():
    rng = np.random.default_rng(6)
    blocks = []
    for size in (3, 4):
        X = rng.normal(size=(size, size))
        blocks.append(X @ X.T + np.eye(size))
    metric = LowRankMetric(blocks, None)
    A = linalg.block_diag(*blocks)
    x = rng.normal(size=7)
    np.testing.assert_allclose(metric.apply(x), A @ x, rtol=1e-12)
    np.testing.assert_allclose(metric.solve(x), np.linalg.solve(A, x), rtol=1e-10)
    assert metric.R == pytest.approx(np.sum(A * A))


def test_g_step_and_w_step_are_the_dense_closed_forms():
    """g-step: alpha = (B A B^T + lambda I)^{-1} y, g = A B^T alpha; w-step: least-squares weights of y on
    Z = [F_1 g_1, ..., F_v g_v] (numpy.linalg.lstsq)."""
    rng = np.random.default_rng(7)
    n, v, lam = 12, 2, 0.3
    F = _kernels(v, n, seed=8)
    offsets = np.array([0, n, 2 * n])
    y = np.sign(rng.normal(size=n))
    X = rng.normal(size=(2 * n, 2 * n))
    A = X @ X.T / n
    w = np.array([0.6, 0.9])
    problem = MVMLProblem(F, offsets, y, DenseMetric(A), lam, 1.0, "full", False, 5, 3, 1e-6, None)
    g, alpha, resid = problem.g_step(w)
    B = _stacked(F, w)
    alpha_ref = np.linalg.solve(B @ A @ B.T + lam * np.eye(n), y)
    np.testing.assert_allclose(alpha, alpha_ref, rtol=1e-8)
    np.testing.assert_allclose(g, A @ B.T @ alpha_ref, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(resid, y - lam * alpha_ref, rtol=1e-8, atol=1e-10)
    w_new, fit = problem.w_step(g)
    Z = np.column_stack([F[k] @ g[offsets[k]:offsets[k + 1]] for k in range(v)])
    w_ref = np.linalg.lstsq(Z, y, rcond=None)[0]
    np.testing.assert_allclose(w_new, w_ref, rtol=1e-8)
    np.testing.assert_allclose(fit, Z @ w_ref, rtol=1e-8, atol=1e-10)
