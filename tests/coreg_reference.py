"""Shared by the co-regularization tests: the real SSL benchmark files (:func:`benchmark_dir`) and an independent
reference for MVL-LS with a weighted between-view term (:func:`solve_mvl_by_objective`)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "ssl_benchmarks"


def benchmark_dir():
    """The real benchmark files; a missing directory is a failure, never a skip."""
    if not DATA_DIR.is_dir():
        pytest.fail(f"benchmark directory {DATA_DIR} is missing: the SSL benchmark files (g50c.mat, uspst.mat, "
                    f"text1.mat, COIL20_cai.mat) must be present in ../shared/data/ssl_benchmarks")
    return DATA_DIR


def solve_mvl_by_objective(K, labelled, Y_L, c, gamma_A, gamma_B, between_weights=None, rtol=1e-13):
    """Independent reference for MVL-LS with a weighted between-view term (JMLR eq 10 with eq 57-58; the
    package's solvers are not used): the objective written in weight space with explicit feature maps and
    minimised by its normal equations.

    Each view kernel (per-view layout, K[p] (n, n)) is factored K^p = Phi_p Phi_p^T (eigenvectors scaled by the
    square roots of the eigenvalues above ``rtol`` * the largest), f^p = Phi_p W_p, ||f||^2 = sum_p ||W_p||^2, and
        (1/l) ||Y_L - sum_p c_p Phi_p[L] W_p||^2 + gamma_A sum_p ||W_p||^2
        + gamma_B sum_i w_i sum_{j<k} ||Phi_j[i] W_j - Phi_k[i] W_k||^2
    is a least-squares problem in the stacked W. Returns per-view coefficients A (m, n, P) with K^p A^p = f^p on
    the training points (A^p = Q_p diag(lam^-1/2) W_p), so that test outputs are K_test^p A^p as for the package.
    """
    K = np.asarray(K, dtype=float)
    m, n, _ = K.shape
    lab = np.asarray(labelled)
    l = lab.size
    w = np.ones(n) if between_weights is None else np.asarray(between_weights, dtype=float)
    feats, backs = [], []
    for p in range(m):
        lam, Q = np.linalg.eigh(0.5 * (K[p] + K[p].T))
        keep = lam > rtol * lam.max()
        feats.append(Q[:, keep] * np.sqrt(lam[keep]))  # Phi_p (n, r_p)
        backs.append(Q[:, keep] / np.sqrt(lam[keep]))  # A^p = backs_p @ W_p
    sizes = [F.shape[1] for F in feats]
    offsets = np.r_[0, np.cumsum(sizes)]
    R = offsets[-1]
    loss = np.hstack([c[p] * feats[p][lab] for p in range(m)])  # (l, R)
    H = loss.T @ loss / l + gamma_A * np.eye(R)
    for j in range(m):
        for k in range(j + 1, m):
            E = np.zeros((n, R))
            E[:, offsets[j]:offsets[j + 1]] = feats[j]
            E[:, offsets[k]:offsets[k + 1]] = -feats[k]
            H += gamma_B * E.T @ (w[:, None] * E)
    Wt = np.linalg.solve(H, loss.T @ np.asarray(Y_L, dtype=float) / l)
    return np.stack([backs[p] @ Wt[offsets[p]:offsets[p + 1]] for p in range(m)])
