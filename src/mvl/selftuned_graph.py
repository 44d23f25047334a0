"""Poisson learning's graph: one self-tuned k-NN graph of all the views, and its out-of-sample (induction) rule.

**Weights.** graphlearning's ``weightmatrix.knn`` (Calder et al. 2020): for every point x_i its k nearest points
(itself included, so k - 1 others) at distances d_i1 <= ... <= d_ik; weights w_ij = exp(-4 d_ij^2 / d_ik^2) (the
scale self-tuned per point by its k-th distance); symmetrised as (W + W^T) / 2; zero diagonal. L = D - W, whose null
space on a connected graph is the constants (what the centred sources of :mod:`mvl.solvers.poisson` need).

**Space.** Feature views: the concatenated views, each column standardised over the training points (zero mean,
unit variance; a constant column stays zero) by :class:`GraphSpace`, which applies the same map to new points.
Precomputed kernels: the distance of the sum of the view kernels, d^2(x, z) = sum_p k^p(x, x) + k^p(z, z) -
2 k^p(x, z) (the concatenated feature maps).

**Induction.** Delalleau, Bengio & Le Roux (AISTATS 2005): a new point x gets the weighted mean of the training
outputs at its k nearest training points, f(x) = sum_j w(x, x_j) f_j / sum_j w(x, x_j), w(x, x_j) = exp(-4 d^2 /
d_k^2) with d_k its k-th distance; a point that coincides with a training point (distance 0) takes that point's
output, so predicting the training points returns the transductive solution.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

__all__ = ["selftuned_weights", "kernel_distances", "GraphSpace", "knn_induction", "unnormalized_laplacian"]


def _selftuned(dist, ind, n):
    """Sparse symmetrised weight matrix from each point's k nearest (self first) distances and indices."""
    k = dist.shape[1]
    eps = np.maximum(dist[:, k - 1] ** 2, 1e-300)
    w = np.exp(-4.0 * dist**2 / eps[:, None])
    rows = np.repeat(np.arange(n), k)
    W = sparse.csr_array((w.ravel(), (rows, ind.ravel())), shape=(n, n))
    W = (W + W.T) / 2.0
    W.setdiag(0.0)
    W.eliminate_zeros()
    return sparse.csr_array(W)


def selftuned_weights(Z, k=10, distances=None, return_search=False):
    """graphlearning's self-tuned k-NN weight matrix (module docstring) of the rows of ``Z`` (n, d), exact
    neighbours; or, with ``distances`` (n, n) given (``Z`` then unused), of that distance matrix.

    Parameters
    ----------
    Z : ndarray of shape (n, d) or None
        The points (the :class:`GraphSpace` coordinates).
    k : int, default 10
        Neighbours per point, the point itself included (graphlearning's convention); capped at n.
    distances : ndarray of shape (n, n) or None
        Pairwise distances (e.g. :func:`kernel_distances`) instead of ``Z``.
    return_search : bool, default False
        Also return the neighbour search (dist, ind), each (n, k): the induction rule at the training points reuses
        it (``search`` of :func:`knn_induction`).

    Copies of a point (equal rows of ``Z``, or distance ~0) count as one point: the graph of one point per group
    of copies, the other copies isolated (zero degree), so that a function's penalty f^T L f is that of the
    distinct points.

    Returns
    -------
    scipy.sparse.csr_array of shape (n, n), or (it, (dist, ind)) with ``return_search``
    """
    from .graph import embed_sparse, first_of_groups, feature_copies

    if distances is None:
        copies = feature_copies(Z)
    else:  # samples at distance ~0 of each other (exactly 0 for equal feature rows)
        D = np.asarray(distances, dtype=np.float64)
        close = D <= 1e-6 * D.max(initial=0.0)
        np.fill_diagonal(close, True)
        rep = np.argmax(close, axis=1)
        rep = rep[rep]
        first, inverse = np.unique(rep, return_inverse=True)
        copies = first_of_groups(first, inverse, len(D))
    if copies is not None:  # copies count as one point: the graph of one sample per group, the others isolated
        keep = copies[0]
        sub = selftuned_weights(None if Z is None else np.asarray(Z)[keep], k,
                                None if distances is None else D[np.ix_(keep, keep)])
        W = sparse.csr_array(embed_sparse(sub, keep, len(copies[1])))
        return (W, None) if return_search else W  # no search of every training point to reuse
    if distances is None:
        from sklearn.neighbors import NearestNeighbors

        n = len(Z)
        k = min(int(k), n)
        dist, ind = NearestNeighbors(n_neighbors=k).fit(Z).kneighbors(Z)
    else:
        D = np.asarray(distances, dtype=np.float64)
        n = len(D)
        k = min(int(k), n)
        D = D.copy()
        D[np.diag_indices(n)] = -1.0  # the point itself first
        ind = np.argsort(D, axis=1, kind="stable")[:, :k]
        dist = np.take_along_axis(np.maximum(D, 0.0), ind, axis=1)
    W = _selftuned(dist, ind, n)
    return (W, (dist, ind)) if return_search else W


def kernel_distances(K):
    """Distances (n, n) of the summed kernels K (m, n, n): d^2 = sum_p K^p_ii + K^p_jj - 2 K^p_ij (clipped at 0)."""
    S = np.asarray(K).sum(axis=0)
    d = np.diag(S)
    return np.sqrt(np.maximum(d[:, None] + d[None, :] - 2.0 * S, 0.0))


def unnormalized_laplacian(W):
    """L = D - W (sparse) and the degrees d (n,) of a weight matrix with zero diagonal."""
    d = np.asarray(W.sum(axis=1)).ravel()
    return sparse.csr_array(sparse.diags_array(d) - W), d


class GraphSpace:
    """The coordinates of the graph: the concatenated views, each column standardised over the training points.

    Parameters
    ----------
    views : list of ndarray of shape (n, d_p)
        The training points' feature views.

    Attributes
    ----------
    mean_, scale_ : ndarray of shape (sum d_p,)
        Column means and standard deviations (1 for a constant column).
    """

    def __init__(self, views):
        X = np.hstack([np.asarray(v, dtype=np.float64) for v in views])
        if np.isnan(X).any():  # incomplete views (NaN rows): each column over the samples that have it
            self.mean_, sd = np.nanmean(X, axis=0), np.nanstd(X, axis=0)
        else:
            self.mean_, sd = X.mean(axis=0), X.std(axis=0)
        self.scale_ = np.where(sd > 0, sd, 1.0)

    def transform(self, views):
        """The coordinates (t, sum d_p) of points given as feature views; a missing view's (NaN) coordinates are 0,
        the training mean."""
        X = np.hstack([np.asarray(v, dtype=np.float64) for v in views])
        Z = (X - self.mean_) / self.scale_
        return np.where(np.isnan(Z), 0.0, Z)


def knn_induction(Z_train, F, Z_new, k=10, search=None):
    """The induction rule (module docstring): outputs (t, P) at the points ``Z_new`` from the training outputs ``F``
    (n, P) at ``Z_train``, by their k nearest training points (k capped at n), copies of a training point counted
    once. ``search``: the (dist, ind) of that neighbour search if already done (e.g. the graph's,
    :func:`selftuned_weights`, when ``Z_new`` is ``Z_train``); not used when the training points have copies."""
    from sklearn.neighbors import NearestNeighbors

    from .graph import feature_copies

    F = np.asarray(F, dtype=np.float64)
    copies = feature_copies(Z_train)
    if copies is not None:  # copies of a training point count once (their outputs are equal)
        Z_train, F = np.asarray(Z_train)[copies[0]], F[copies[0]]
        search = None  # its indices are of every training point
    k = min(int(k), len(Z_train))
    if search is None:
        dist, ind = NearestNeighbors(n_neighbors=k).fit(Z_train).kneighbors(Z_new)
    else:
        dist, ind = search
    eps = np.maximum(dist[:, -1:] ** 2, 1e-300)
    w = np.exp(-4.0 * dist**2 / eps)
    out = np.einsum("tk,tkp->tp", w, F[ind]) / w.sum(axis=1, keepdims=True)
    same = dist[:, 0] == 0.0  # a training point: its own (transductive) output
    out[same] = F[ind[same, 0]]
    return out
