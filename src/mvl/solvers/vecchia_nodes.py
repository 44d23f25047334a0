"""solver="vecchia_direct" beyond its memory: the fit on a node subsample, the other training points predicted as
new points (a two-level scheme in its simplest form).

**When.** The sparse factorisation of :mod:`mvl.solvers.vecchia_direct` fills faster than n (its estimate,
:func:`mvl.solvers.auto.vecchia_direct_bytes`, grows like n^1.41: ~160 GB at 10^6 points of graph6). When the
estimate for all n training points exceeds the memory budget, the fit takes N < n nodes, N the largest count whose
estimate fits (:func:`mvl.solvers.auto.vecchia_direct_nodes`): every labelled point and N - l unlabelled points
drawn uniformly without replacement (:func:`draw_nodes`, seeded by the estimator's ``random_state``).

**What the subsample changes.** Everything of the fit is built on the nodes only: the kNN graphs (the neighbours
searched among the nodes), Vecchia's factors, the system (M + delta Q_v) F = r; no array over the n points beyond
the data. The labelled term is unchanged (every labelled point is a node). A uniform subsample has the density of
the full sample, so its kNN graph samples the same manifold at a coarser resolution: kNN distances grow like
(n / N)^(1/d), d the manifold's dimension, and the normalized graph Laplacian of either sample estimates the same
weighted Laplace-Beltrami operator (Hein, Audibert & von Luxburg 2007), so the graph term's limit M^{-1} r on the
nodes is the same function sampled at the nodes, up to the estimate's error at N points in place of n. What is
lost is the unlabelled points' resolution of the manifold beyond N: where classes come closer than the nodes'
kNN distance the coarser graph may join them. The fit on the nodes is the plain "vecchia_direct" fit of
(X[nodes], y[nodes]) (the same seed): its error bound of :mod:`mvl.solvers.vecchia_direct` holds on the nodes.

**The other points.** A training point that is not a node is predicted like a new point, by the kriging rule of
:mod:`mvl.solvers.vecchia_kriging` from its q nearest nodes: f_p(x) = w(x)^T F_v[N(x)], the nearest-neighbour
Gaussian-process prediction, whose error is Vecchia's screening error at the nodes' spacing (the same
approximation as the fit's on the nodes). The estimator keeps ``centres_`` = the nodes (indices into the training
points) and ``coef_`` of shape (m, N, P), as after "nystrom".
"""

from __future__ import annotations

import numpy as np

__all__ = ["draw_nodes", "subsample_nodes"]


def draw_nodes(unlabelled, count, random_state=None):
    """Every labelled point and ``count`` - l unlabelled points drawn uniformly without replacement.

    Parameters
    ----------
    unlabelled : ndarray of bool, shape (n,)
        True at the unlabelled training points.
    count : int
        The number of nodes N (at least the l labelled points, at most n).
    random_state : int, RandomState or None
        Seed of the draw.

    Returns
    -------
    ndarray of int, shape (N,)
        The nodes' indices, increasing.
    """
    from sklearn.utils import check_random_state

    unlabelled = np.asarray(unlabelled, dtype=bool)
    free = np.flatnonzero(unlabelled)
    labelled = np.flatnonzero(~unlabelled)
    take = int(np.clip(int(count) - labelled.size, 0, free.size))
    drawn = check_random_state(random_state).choice(free, take, replace=False)
    return np.sort(np.concatenate([labelled, drawn]))


def subsample_nodes(unlabelled, m, n_neighbors, laplacian_power, max_memory, random_state=None):
    """The nodes of a "vecchia_direct" fit within ``max_memory`` (module docstring), or None when all the training
    points fit.

    Parameters
    ----------
    unlabelled : ndarray of bool, shape (n,)
        True at the unlabelled training points.
    m : int
        The number of views.
    n_neighbors, laplacian_power : int
        The kNN graphs' size and the Laplacian's power (for the memory estimate).
    max_memory : float
        The budget in bytes.
    random_state : int, RandomState or None
        Seed of the draw.

    Returns
    -------
    ndarray of int or None
        The nodes' indices, increasing (:func:`draw_nodes`).
    """
    from .auto import vecchia_direct_nodes

    n = len(unlabelled)
    count = vecchia_direct_nodes(n, m, n_neighbors, laplacian_power, max_memory)
    if count >= n:
        return None
    return draw_nodes(unlabelled, count, random_state)
