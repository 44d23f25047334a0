"""Sparse approximations of the inverse of a kernel matrix by Vecchia's conditioning (the graph solver's
preconditioner).

Order the n points at random (x_{pi(1)}, ..., x_{pi(n)}) and write the density of a Gaussian process f ~ N(0, K)
as a product of conditionals, each conditioned on only the ``q`` nearest earlier points c(i) (Vecchia 1988;
Katzfuss & Guinness, Statist. Sci. 2021; Schaefer, Katzfuss & Owhadi, SIAM J. Sci. Comput. 2021 show that this is
the Kullback-Leibler-optimal sparse inverse Cholesky factor with that pattern):

    f_i | f_{c(i)} ~ N(b_i^T f_{c(i)}, d_i),   b_i = K_{c(i)c(i)}^{-1} K_{c(i) i},   d_i = K_ii - K_{i c(i)} b_i,

so that the joint density is N(0, K_v) with the sparse precision

    K_v^{-1} = (I - B)^T D^{-1} (I - B),   B[i, c(i)] = b_i^T,   D = diag(d_i).

(I - B) has q + 1 entries per row; K_v = K when every point conditions on all earlier ones (q >= n - 1: the
exact Cholesky factorisation of K^{-1} in that order). Nothing n x n is formed: the neighbours come from a tree
on the view's features (Gaussian kernels) or kernel rows in blocks (other kernels), and each conditional is a
q x q solve.

Why it fits the graph regime of :mod:`mvl.solvers.graph`: the kernels there (narrow or moderate Gaussians on noisy
manifold data) are neither low-rank nor numerically sparse, but their inverse is close to sparse: a point's value
is nearly determined by its nearest neighbours (the screening effect), which a Nystrom basis on a few centres does
not capture and Vecchia's conditionals do.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

__all__ = ["VECCHIA_NEIGHBOURS", "vecchia_factor"]

VECCHIA_NEIGHBOURS = 20
"""Earlier points each point conditions on (q). Measured on the graph-regime data of ``benchmarks/bench_scale.py``
at n = 8,000 (benchmarks/README.md, the graph solver to the same accuracy): q = 10, 20, 30 took 93, 72, 55
iterations, with sparse factors of 11, 19 and 51 million entries (fit 38, 34, 40 s); 20 is the balance."""


def _earlier_neighbours(kernels, p, order, q, first=256):
    """For each position t of ``order``, the positions of (at most) its q nearest points among the earlier ones
    (rows of an (n, q) array, -1 where there are fewer). The first ``first`` positions condition on the nearest
    among all earlier ones; after that, points at positions [s, 2s) condition on their nearest among positions
    [0, s) (doubling batches: a valid Vecchia pattern, every conditioning point earlier, with neighbours searched
    by one tree or one block of kernel rows per batch)."""
    n = len(order)
    out = np.full((n, q), -1, dtype=np.intp)
    s0 = min(n, max(first, q + 1))
    # the first s0 positions: brute force among the earlier ones (kernel distance)
    d2 = _kernel_distances(kernels, p, order[:s0], order[:s0])
    d2[np.triu_indices(s0)] = np.inf  # only earlier positions
    for t in range(1, s0):
        k = min(q, t)
        out[t, :k] = np.argsort(d2[t, :t], kind="stable")[:k]
    s = s0
    while s < n:
        e = min(n, 2 * s)
        out[s:e] = _nearest(kernels, p, order[:s], order[s:e], q)  # s >= q + 1
        s = e
    return out


def _kernel_distances(kernels, p, I, J):
    """Squared distances in the kernel's feature space, k(i, i) + k(j, j) - 2 k(i, j), (len(I), len(J))."""
    if kernels.gram is not None:
        G = kernels.gram[p][np.ix_(I, J)]
    else:
        G = kernels.cross(p, kernels.views[p][I], J)
    dg = kernels.diag(p)
    return dg[I][:, None] + dg[J][None, :] - 2.0 * G


def _nearest(kernels, p, cand, query, k):
    """Positions (in ``cand``) of the k nearest candidates of each query point, nearest first."""
    if kernels.kind == "rbf" and kernels.gram is None:
        from sklearn.neighbors import NearestNeighbors

        from ..graph import exact_neighbours_method

        X = kernels.views[p]
        tree = NearestNeighbors(n_neighbors=k, algorithm=exact_neighbours_method(len(cand), X.shape[1]))
        return tree.fit(X[cand]).kneighbors(X[query], return_distance=False)
    out = np.empty((len(query), k), dtype=np.intp)
    b = max(1, int((1 << 24) // max(1, len(cand))))
    for s in range(0, len(query), b):
        D = _kernel_distances(kernels, p, query[s:s + b], cand)
        idx = np.argpartition(D, k - 1, axis=1)[:, :k] if k < len(cand) else np.tile(np.arange(len(cand)),
                                                                                         (D.shape[0], 1))
        order = np.argsort(np.take_along_axis(D, idx, axis=1), axis=1, kind="stable")
        out[s:s + b] = np.take_along_axis(idx, order, axis=1)
    return out


def _conditional_kernels(kernels, p, pts, sets):
    """K on each conditioning set (b, q, q) and between each point and its set (b, q), for points ``pts`` (b,)
    and sets (b, q) of point indices (all valid)."""
    if kernels.gram is not None:
        G = kernels.gram[p]
        return G[sets[:, :, None], sets[:, None, :]], G[pts[:, None], sets]
    X = kernels.views[p]
    Xc, Xi = X[sets], X[pts]
    if kernels.kind in ("rbf", "linear"):
        Gcc = np.einsum("bqd,brd->bqr", Xc, Xc)
        Gci = np.einsum("bqd,bd->bq", Xc, Xi)
        if kernels.kind == "linear":
            return Gcc, Gci
        sq = kernels.sq[p]
        sc, si = sq[sets], sq[pts]
        c = 1.0 / (2.0 * kernels.scales[p] ** 2)
        Kcc = np.exp(np.minimum(2 * c * Gcc - c * sc[:, :, None] - c * sc[:, None, :], 0.0))
        Kci = np.exp(np.minimum(2 * c * Gci - c * sc - c * si[:, None], 0.0))
        return Kcc, Kci
    Kcc = np.stack([kernels.square(p, s) for s in sets])
    Kci = np.stack([kernels.cross(p, X[[i]], s)[0] for i, s in zip(pts, sets, strict=True)])
    return Kcc, Kci


def vecchia_factor(kernels, p, q=VECCHIA_NEIGHBOURS, random_state=0, jitter=1e-10):
    """(I - B, d) of the module docstring for view ``p`` of a :class:`mvl.kernel_blocks.ViewKernels`: ``I - B`` a
    sparse CSR (n, n) matrix in the original point order, ``d`` (n,) the conditional variances, so that
    (I - B)^T diag(d)^{-1} (I - B) approximates (K^p)^{-1}. ``q``: earlier neighbours per point (capped at
    n - 1: then exact); ``random_state``: seed of the ordering; ``jitter``: added to the conditioning sets'
    kernels (times max diag K) and the floor of d, for kernels singular on a set (duplicate points)."""
    n = kernels.n
    q = int(min(max(int(q), 1), max(n - 1, 1)))
    rng = np.random.default_rng(random_state)
    order = rng.permutation(n)
    nbr = _earlier_neighbours(kernels, p, order, q)  # positions
    dg = kernels.diag(p)
    tau = jitter * float(max(np.max(dg), 1e-300))
    counts = (nbr >= 0).sum(axis=1)
    coef = np.zeros((n, q))
    d = np.asarray(dg, dtype=np.float64)[order].copy()
    for k in np.unique(counts):  # points with k earlier neighbours, in batches
        if k == 0:
            continue
        rows = np.flatnonzero(counts == k)
        for s in range(0, len(rows), 4096):
            r = rows[s:s + 4096]
            sets = order[nbr[r, :k]]
            Kcc, Kci = _conditional_kernels(kernels, p, order[r], sets)
            Kcc = Kcc + tau * np.eye(k)
            b = np.linalg.solve(Kcc, Kci[:, :, None])[:, :, 0]
            coef[r, :k] = b
            d[r] = dg[order[r]] - np.einsum("bq,bq->b", Kci, b)
    d = np.maximum(d, tau)
    valid = nbr >= 0
    rows = np.concatenate([order, np.repeat(order, counts)])
    cols = np.concatenate([order, order[nbr[valid]]])
    vals = np.concatenate([np.ones(n), -coef[valid]])
    IB = sparse.csr_matrix((vals, (rows, cols)), shape=(n, n))
    d_out = np.empty(n)
    d_out[order] = d
    return IB, d_out
