"""mvl.solvers.residual (the true relative residual of (68) that every solver reports) against numpy's residual of
the textbook system, and at the direct solvers' solutions."""

from __future__ import annotations

import numpy as np
import pytest

from mvl.solvers import MVLProblem, get_solver
from mvl.solvers.residual import direct_residual


def _problem(seed=0, n=24, m=2, P=3, l=7, gamma_B=1e-3, gamma_W=1e-2, weights=True, mask=None):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, n, 4))
    K = np.stack([np.exp(-0.5 * ((x[:, None] - x[None]) ** 2).sum(-1)) for x in X])
    W = np.stack([np.exp(-((x[:, None] - x[None]) ** 2).sum(-1)) for x in X])
    L = np.stack([np.diag(w.sum(1)) - w for w in W])
    labelled = np.sort(rng.choice(n, l, replace=False))
    Y_L = np.eye(P)[rng.integers(0, P, l)]
    c = rng.uniform(0.5, 1.5, m)
    w = rng.uniform(0.5, 2.0, n) if weights else None
    if mask is not None:
        L = [L[p][np.ix_(mask[:, p], mask[:, p])] for p in range(m)]
    return MVLProblem(K, labelled, Y_L, c, gamma_A=1e-3, gamma_B=gamma_B, gamma_W=gamma_W, laplacians=L,
                      between_weights=w, mask=mask)


def _numpy_residual(pb, coef):
    """The residual of the textbook system (67)-(68) as mvl.solvers.dense forms it, by numpy."""
    K, c = pb.kernels, pb.c
    m, n, P = coef.shape
    l = len(pb.labelled)
    E = np.eye(m)
    G = sum(np.kron(K[p], np.outer(E[p], E[p])) for p in range(m))
    J = np.zeros((n, n))
    J[pb.labelled, pb.labelled] = 1.0
    D = np.diag(pb.between_weights) if pb.between_weights is not None else np.eye(n)
    Mop = np.kron(J, np.outer(c, c)) + l * pb.gamma_B * np.kron(D, m * np.eye(m) - np.ones((m, m)))
    Mop += l * pb.gamma_W * sum(np.kron(pb.laplacians[p], np.outer(E[p], E[p])) for p in range(m))
    B = Mop @ G + l * pb.gamma_A * np.eye(n * m)
    Y = np.zeros((n, P))
    Y[pb.labelled] = pb.Y_L
    Y_C = np.kron(Y, c[:, None])
    a = coef.transpose(1, 0, 2).reshape(n * m, P)
    return float(np.max(np.linalg.norm(Y_C - B @ a, axis=0) / np.linalg.norm(Y_C, axis=0)))


@pytest.mark.parametrize("gamma_B, gamma_W, weights", [(0.0, 0.0, False), (1e-3, 1e-2, True), (1e-2, 0.0, False)])
def test_direct_residual_equals_numpy_textbook_residual(gamma_B, gamma_W, weights):
    pb = _problem(gamma_B=gamma_B, gamma_W=gamma_W, weights=weights)
    coef = np.random.default_rng(1).normal(size=(2, 24, 3))
    assert direct_residual(pb, coef) == pytest.approx(_numpy_residual(pb, coef), rel=1e-10)
    for name in ("structured", "dense"):
        sol = get_solver(name).solve(pb).coef
        assert direct_residual(pb, sol) < 1e-9
        assert _numpy_residual(pb, sol) < 1e-9


def test_direct_residual_on_incomplete_views():
    mask = np.ones((24, 2), dtype=bool)
    mask[1::5, 0] = False
    mask[3::5, 1] = False
    pb = _problem(mask=mask)
    for name in ("structured", "dense"):
        sol = get_solver(name).solve(pb).coef
        assert direct_residual(pb, sol) < 1e-9
        assert direct_residual(pb, sol * mask.T[:, :, None] + 0.01 * mask.T[:, :, None]) > 1e-3
