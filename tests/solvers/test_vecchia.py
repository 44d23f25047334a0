"""Vecchia's sparse inverse-Cholesky factor of a kernel matrix (:mod:`mvl.solvers.vecchia`) and the graph solver's
preconditioner built on it (:class:`mvl.solvers.graph.VecchiaPreconditioner`), against definitions written out densely:

- with every earlier point conditioned on (q = n - 1) the factor is the exact inverse:
  (I - B)^T D^{-1} (I - B) = K^{-1};
- for q < n: every conditioning set holds earlier points only, it is the set the documented rule picks (the q nearest
  among all earlier points for the first positions, among the positions before the point's doubling batch after
  that; brute force on the dense distances), and b_i = K_SS^{-1} K_Si, d_i = K_ii - K_iS b_i from the dense kernel;
- Gaussian views from features and the same kernels precomputed give the same factor; linear and chi2 kernels too;
- the preconditioner applies (M_eps K_v + delta I)^{-1}, K_v = ((I - B)^T D^{-1} (I - B))^{-1}, inverted densely.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from mvl.graph import sparse_knn_weights, sparse_laplacian
from mvl.solvers.graph import VecchiaPreconditioner, sparse_operator, vecchia_factors
from mvl.kernel_blocks import ViewKernels
from mvl.kernels import chi2_distances
from mvl.solvers.system import MVLSystem
from mvl.solvers.vecchia import vecchia_factor


def _views(n, d=4, seed=0):
    rng = np.random.default_rng(seed)
    t = rng.uniform(0, 3, n)
    return [np.column_stack([np.cos(t + p), np.sin(t + p)] + [0.1 * rng.normal(size=n) for _ in range(d - 2)])
            for p in range(2)]


def _dense(kind, V, scale):
    if kind == "rbf":
        return np.exp(-cdist(V, V, "sqeuclidean") / (2 * scale**2))
    if kind == "linear":
        return V @ V.T
    return np.exp(-chi2_distances(V, V) / scale)


def _kernels(kind, n, precomputed=False):
    views = _views(n, d=6 if kind == "linear" else 4)
    if kind == "chi2":
        views = [np.abs(V) for V in views]
    scales = [0.5, 0.7] if kind == "rbf" else ([None, None] if kind == "linear" else [1.0, 1.0])
    K = np.stack([_dense(kind, V, s) for V, s in zip(views, scales, strict=True)])
    if precomputed:
        return ViewKernels(gram=K), K, views
    return ViewKernels(views, kind, scales, max_memory=0), K, views


@pytest.mark.parametrize("kind,precomputed", [("rbf", False), ("rbf", True), ("chi2", False)])
def test_every_earlier_point_gives_the_exact_inverse(kind, precomputed):
    n = 40
    kernels, K, _ = _kernels(kind, n, precomputed)
    for p in range(2):
        IB, d = vecchia_factor(kernels, p, q=n - 1, random_state=3, jitter=0.0)
        Q = IB.T.toarray() @ np.diag(1 / d) @ IB.toarray()
        assert np.abs(Q @ K[p] - np.eye(n)).max() <= 1e-13 * np.linalg.cond(K[p])


def _rule_sets(D, order, q, first):
    """The documented conditioning sets (point indices) by brute force on the dense distances D."""
    n = len(order)
    pos = np.empty(n, dtype=int)
    pos[order] = np.arange(n)
    s0 = min(n, max(first, q + 1))
    sets = {}
    for t, i in enumerate(order):
        if t < s0:
            cand = order[:t]
        else:
            s = s0
            while 2 * s <= t:
                s *= 2
            cand = order[:s]
        if len(cand):
            sets[i] = set(cand[np.argsort(D[i, cand], kind="stable")[:q]])
        else:
            sets[i] = set()
    return sets


@pytest.mark.parametrize("kind,precomputed", [("rbf", False), ("rbf", True), ("linear", False), ("chi2", False)])
def test_conditionals_against_their_definition(kind, precomputed):
    n, q, seed = 600, 5, 11  # n > 256: the first positions and two doubling batches
    kernels, K, _ = _kernels(kind, n, precomputed)
    for p in range(2):
        IB, d = vecchia_factor(kernels, p, q=q, random_state=seed + p, jitter=0.0)
        order = np.random.default_rng(seed + p).permutation(n)
        pos = np.empty(n, dtype=int)
        pos[order] = np.arange(n)
        Kp = K[p]
        dg = np.diag(Kp)
        D = dg[:, None] + dg[None, :] - 2 * Kp  # squared distances in the kernel's feature space
        want = _rule_sets(D, order, q, 256)
        IB = IB.tocsr()
        for i in range(n):
            row = IB.getrow(i)
            cols = row.indices[row.indices != i]
            assert row[0, i] == 1.0
            assert np.all(pos[cols] < pos[i])  # earlier points only
            S = np.array(sorted(cols))
            assert set(S) == want[i]
            if len(S) == 0:
                assert d[i] == pytest.approx(Kp[i, i])
                continue
            b = np.linalg.solve(Kp[np.ix_(S, S)], Kp[S, i])
            np.testing.assert_allclose(-row[0, S].toarray().ravel(), b, rtol=1e-6, atol=1e-8 * np.abs(b).max())
            assert d[i] == pytest.approx(Kp[i, i] - Kp[i, S] @ b, rel=1e-6, abs=1e-12)


def test_features_and_precomputed_give_the_same_factor():
    n = 300
    feat, _, _ = _kernels("rbf", n)
    pre, _, _ = _kernels("rbf", n, precomputed=True)
    for p in range(2):
        IB1, d1 = vecchia_factor(feat, p, q=8, random_state=p)
        IB2, d2 = vecchia_factor(pre, p, q=8, random_state=p)
        # the same conditioning sets; the coefficients up to the rounding of K_SS^{-1} (sets of nearby points)
        assert (IB1 != 0).sum() == (IB2 != 0).sum() == (abs(IB1) + abs(IB2) != 0).sum()
        assert abs(IB1 - IB2).max() <= 1e-7 * abs(IB1).max() and np.abs(d1 - d2).max() <= 1e-10


def test_preconditioner_is_the_inverse_of_its_definition():
    n, m = 150, 2
    kernels, K, _ = _kernels("rbf", n)
    rng = np.random.default_rng(0)
    lab = rng.choice(n, 8, replace=False)
    Y_L = np.where(rng.random((8, 2)) < 0.5, -1.0, 1.0)
    Ls = [sparse_laplacian(sparse_knn_weights(kernels, p, 6)) for p in range(m)]
    system = MVLSystem(n, lab, Y_L, np.full(m, 0.5), gamma_A=1e-6, gamma_B=0.0, gamma_W=1.0, laplacians=Ls,
                       laplacian_power=2)
    factors = vecchia_factors(kernels, neighbours=6, random_state=4)
    Q = VecchiaPreconditioner(system, kernels, factors=factors)
    Qv = np.zeros((m * n, m * n))
    for p, (IB, d) in enumerate(factors):
        Qv[p * n:(p + 1) * n, p * n:(p + 1) * n] = IB.T.toarray() @ np.diag(1 / d) @ IB.toarray()
    Me = sparse_operator(system).toarray() + Q.shift * np.eye(m * n)
    ref = np.linalg.inv(Me @ np.linalg.inv(Qv) + system.delta * np.eye(m * n))
    V = rng.normal(size=(m, n, 2))
    want = (ref @ V.reshape(m * n, 2)).reshape(m, n, 2)
    assert np.abs(Q(V) - want).max() <= 1e-6 * np.abs(want).max()
    # the same factors whether passed in or computed from (neighbours, random_state)
    Q2 = VecchiaPreconditioner(system, kernels, neighbours=6, random_state=4)
    np.testing.assert_allclose(Q2(V), Q(V), rtol=1e-12, atol=0)
