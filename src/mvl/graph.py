"""Graph Laplacians per view and the multi-view regularisation operators.

Section 4.2 of the paper. The within-view operator M_W = L (x) I_Y (eq 60-63)
is block diagonal across views once samples are grouped view-major, so it is
stored as m Laplacians of size n x n. The between-view operator
M_B = I_{u+l} (x) (M_m (x) I_Y) with M_m = m I_m - 1 1^T (eq 54-57) needs no
storage at all: applied to per-view outputs F (m, n, P) it is
m F_p - sum_q F_q. Neither is ever formed as an (n m) x (n m) matrix here.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "laplacian",
    "knn_weights",
    "view_laplacians",
    "apply_between_view",
    "apply_within_view",
    "between_view_penalty",
    "within_view_penalty",
]


def laplacian(W, normalized=True):
    """Graph Laplacian of a symmetric non-negative weight matrix ``W``.

    ``normalized=True``: ``I - D^-1/2 W D^-1/2`` (what the authors' released
    code uses); ``False``: ``D - W``. ``D`` is the diagonal degree matrix. ``W``
    is used as given, diagonal included (the paper uses the kernel matrix
    itself as the weights, Section 7.1). Isolated vertices (degree 0) get a
    zero row and column in the normalized Laplacian.
    """
    W = np.asarray(W, dtype=np.float64)
    if W.ndim != 2 or W.shape[0] != W.shape[1]:
        raise ValueError(f"W must be square, got shape {W.shape}")
    if not np.all(np.isfinite(W)):
        raise ValueError("W contains NaN or inf")
    if np.any(W < 0):
        raise ValueError("graph weights must be non-negative; W has negative entries "
                         "(a linear kernel cannot serve as graph weights)")
    d = W.sum(axis=1)
    if not normalized:
        L = -W.copy()
        L[np.diag_indices_from(L)] += d
        return L
    with np.errstate(divide="ignore"):
        s = np.where(d > 0, 1.0 / np.sqrt(d), 0.0)
    L = -(s[:, None] * W * s[None, :])
    L[np.diag_indices_from(L)] += (d > 0).astype(np.float64)
    return L


def knn_weights(K, n_neighbors):
    """Symmetrised k-nearest-neighbour weights from a kernel (similarity) matrix.

    Neighbours of i are the ``n_neighbors`` samples j != i with the largest
    K[i, j]; W[i, j] = K[i, j] if j is a neighbour of i or i of j, else 0, and
    the diagonal is 0.
    """
    K = np.asarray(K, dtype=np.float64)
    n = K.shape[0]
    k = int(n_neighbors)
    if k < 1:
        raise ValueError(f"n_neighbors must be >= 1, got {n_neighbors}")
    k = min(k, n - 1)
    S = K.copy()
    S[np.diag_indices(n)] = -np.inf
    idx = np.argpartition(-S, kth=k - 1, axis=1)[:, :k] if k > 0 else np.empty((n, 0), int)
    mask = np.zeros((n, n), dtype=bool)
    mask[np.repeat(np.arange(n), k), idx.ravel()] = True
    mask |= mask.T
    return np.where(mask, 0.5 * (K + K.T), 0.0)  # symmetric even if K is so only to rounding


def view_laplacians(K, normalized=True, n_neighbors=None):
    """One Laplacian per view with the view's own Gram matrix as weights.

    ``K`` has shape (m, n, n). ``n_neighbors=None`` uses the dense kernel
    weights of the paper (Section 7.1); an integer uses a symmetrised kNN graph
    (:func:`knn_weights`). Returns an array of shape (m, n, n).
    """
    K = np.asarray(K, dtype=np.float64)
    out = np.empty_like(K)
    for p in range(K.shape[0]):
        W = K[p] if n_neighbors is None else knn_weights(K[p], n_neighbors)
        out[p] = laplacian(W, normalized=normalized)
    return out


def apply_between_view(F):
    """(I (x) M_m (x) I_Y) applied to per-view outputs F of shape (m, n, P) (eq 57)."""
    F = np.asarray(F)
    return F.shape[0] * F - F.sum(axis=0, keepdims=True)


def apply_within_view(L, F):
    """(L (x) I_Y) applied to per-view outputs F of shape (m, n, P) (eq 63)."""
    return np.einsum("pij,pjk->pik", L, F)


def between_view_penalty(F):
    """<f, M_B f> = sum_i sum_{j<k} ||f^j(x_i) - f^k(x_i)||^2 (eq 58)."""
    return float(np.sum(F * apply_between_view(F)))


def within_view_penalty(L, F):
    """<f, M_W f> = sum_i sum_{j<k} W^i_jk ||f^i(x_j) - f^i(x_k)||^2 (eq 64, unnormalized L)."""
    return float(np.sum(F * apply_within_view(L, F)))
