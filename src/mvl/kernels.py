"""Scalar kernels per view and their stacking into multi-view Gram matrices.

The paper's matrix-valued kernel is diagonal (Section 7.1, eq 93-94):
G(x, t) = sum_i k^i(x^i, t^i) e_i e_i^T, so a multi-view Gram matrix is stored
sample-first as an array of shape (n, n, m) -- one scalar Gram matrix per view on
the last axis -- and the test-vs-train kernels as (t, n, m) (the estimators'
``kernel="precomputed"`` input, :mod:`mvl.estimators`). Every function here returns the training
Gram matrix and, when test data are given, the test-vs-train matrix computed
with parameters (bandwidth, standardisation, chi2 scale) estimated on the
training data only.
"""

from __future__ import annotations

import numpy as np


__all__ = [
    "chi2_distances",
    "chi2_kernel",
    "chi2_scale",
    "rbf_bandwidth",
    "squared_distances",
    "rbf_kernel",
    "linear_kernel",
    "multiview_kernels",
    "standardize",
]


def _check_features(X, name):
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-d array of features, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or inf")
    return X


def standardize(X, X_test=None):
    """Zero mean, unit variance per feature, with statistics from ``X`` only.

    Constant features are left centred (their scale is set to 1).
    """
    X = _check_features(X, "X")
    mean = X.mean(axis=0)
    std = X.std(axis=0)
    std[std == 0] = 1.0
    Xs = (X - mean) / std
    if X_test is None:
        return Xs, None
    X_test = _check_features(X_test, "X_test")
    if X_test.shape[1] != X.shape[1]:
        raise ValueError(f"X_test has {X_test.shape[1]} features, X has {X.shape[1]}")
    return Xs, (X_test - mean) / std


def chi2_kernel(D, D_test=None):
    """Chi2 kernel from chi2 distance matrices: ``exp(-D / mean(D))``.

    This is the form of Gehler & Nowozin (2009) used by the paper for the
    Flowers-17 distance matrices (Section 7.2). The scale ``mean(D)`` is the
    mean of the training distance matrix (all n*n entries, diagonal included,
    as in the released MATLAB code of Gehler & Nowozin); the same scale is
    applied to ``D_test`` (t x n distances from test to training samples).

    Returns ``(K, K_test)``; ``K_test`` is None when ``D_test`` is None.
    """
    D = np.asarray(D, dtype=np.float64)
    if D.ndim != 2 or D.shape[0] != D.shape[1]:
        raise ValueError(f"D must be a square distance matrix, got shape {D.shape}")
    if not np.all(np.isfinite(D)):
        raise ValueError("D contains NaN or inf")
    if np.any(D < 0):
        raise ValueError("D has negative entries; chi2 distances are >= 0")
    scale = D.mean()
    if scale <= 0:
        raise ValueError("D is identically zero; the chi2 scale mean(D) would be 0")
    K = np.exp(-D / scale)
    if D_test is None:
        return K, None
    D_test = np.asarray(D_test, dtype=np.float64)
    if D_test.ndim != 2 or D_test.shape[1] != D.shape[0]:
        raise ValueError(f"D_test must have shape (t, {D.shape[0]}), got {D_test.shape}")
    if not np.all(np.isfinite(D_test)):
        raise ValueError("D_test contains NaN or inf")
    return K, np.exp(-D_test / scale)


DISTANCE_BLOCK = 1 << 22
"""Entries of one row block of a dense distance computation (the temporaries of :func:`squared_distances`)."""


def squared_distances(Z, X=None):
    """Squared Euclidean distances between the rows of Z (t, d) and X (n, d), shape (t, n); ``X=None``: Z itself.

    From inner products, ||z||^2 + ||x||^2 - 2 z.x (one BLAS product per row block, so on every core), clipped at
    0; for ``X=None`` only the upper triangle is computed and mirrored, so the result is exactly symmetric with a
    zero diagonal. The rounding error of an entry is ~1e-16 (||z||^2 + ||x||^2), far below the distances a kernel
    bandwidth resolves. Dense arrays and scipy sparse matrices (e.g. PCMAC's bag of words) alike. The one
    distance of the estimators' feature views, the workflow's kernels and the co-regularization graphs
    (:mod:`mvl.coreg`).
    """
    from scipy import sparse

    same = X is None
    X = Z if same else X

    def sqnorms(A):
        if sparse.issparse(A):
            return np.asarray(A.multiply(A).sum(axis=1)).ravel()
        return np.einsum("ij,ij->i", A, A)

    if not (sparse.issparse(Z) or sparse.issparse(X)):
        Z = np.asarray(Z, dtype=np.float64)
        X = Z if same else np.asarray(X, dtype=np.float64)
    nz, nx = sqnorms(Z), (None if same else sqnorms(X))
    nx = nz if same else nx
    t, n = Z.shape[0], X.shape[0]
    D = np.empty((t, n))
    rows = max(1, DISTANCE_BLOCK // max(n, 1))
    for s in range(0, t, rows):
        e = min(t, s + rows)
        c0 = s if same else 0  # X=None: columns left of the block are the mirror of rows already computed
        G = Z[s:e] @ X[c0:].T
        G = G.toarray() if sparse.issparse(G) else np.asarray(G)
        blk = D[s:e, c0:]
        np.add.outer(nz[s:e], nx[c0:], out=blk)
        blk -= 2.0 * G
        _exact_small(blk, Z[s:e], X[c0:], 1e-10 * (nz[s:e].max(initial=0.0) + nx[c0:].max(initial=0.0)))
        if same:
            blk[np.arange(e - s), np.arange(e - s)] = 0.0
            D[s:e, :s] = D[:s, s:e].T
    return D


def _exact_small(blk, A, B, tol):
    """Clip ``blk`` (squared distances of A's rows to B's by inner products) at 0 and recompute the entries below
    ``tol``, where cancellation dominates, as sums of squared differences: equal rows are then exactly 0 apart."""
    np.maximum(blk, 0.0, out=blk)
    i, j = np.nonzero(blk <= tol)
    if i.size:
        from scipy import sparse

        diff = A[i] - B[j]
        blk[i, j] = np.asarray(diff.multiply(diff).sum(axis=1)).ravel() if sparse.issparse(diff) else \
            np.einsum("ij,ij->i", diff, diff)


def _condensed(D):
    """The entries above the diagonal of a square D, row by row (scipy's condensed order)."""
    n = D.shape[0]
    out = np.empty(n * (n - 1) // 2)
    pos = 0
    for i in range(n - 1):
        out[pos:pos + n - 1 - i] = D[i, i + 1:]
        pos += n - 1 - i
    return out


def pairwise_distances_condensed(X):
    """The Euclidean distances between distinct rows of X (n, d), in scipy's condensed order (pairs i < j, row by
    row, as :func:`scipy.spatial.distance.pdist`), from :func:`squared_distances`' inner products by row block."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    out = np.empty(n * (n - 1) // 2)
    rows = max(1, DISTANCE_BLOCK // max(n, 1))
    nz = np.einsum("ij,ij->i", X, X)
    pos = 0
    for s in range(0, n, rows):
        e = min(n, s + rows)
        blk = np.add.outer(nz[s:e], nz[s:])
        blk -= 2.0 * (X[s:e] @ X[s:].T)
        _exact_small(blk, X[s:e], X[s:], 1e-10 * (nz[s:e].max(initial=0.0) + nz[s:].max(initial=0.0)))
        for i in range(e - s):
            row = blk[i, i + 1:]
            out[pos:pos + row.size] = row
            pos += row.size
    np.maximum(out, 0.0, out=out)
    return np.sqrt(out, out=out)


def chi2_distances(X, Y=None, max_elements=1 << 24):
    """chi2 distances sum_k (x_k - y_k)^2 / (x_k + y_k) between rows (0/0 := 0), shape (len(X), len(Y)).

    Cost O(len(X) len(Y) d), computed in row blocks of at most ``max_elements`` temporaries; for the
    full CUB image view with long histograms, precomputing ``distances`` or ``kernel`` is faster.
    """
    X = np.asarray(X, dtype=np.float64)
    Y = X if Y is None else np.asarray(Y, dtype=np.float64)
    out = np.empty((X.shape[0], Y.shape[0]))
    block = max(1, int(max_elements // max(1, Y.shape[0] * X.shape[1])))
    for s in range(0, X.shape[0], block):
        A = X[s:s + block, None, :]
        num = (A - Y[None]) ** 2
        den = A + Y[None]
        out[s:s + block] = np.divide(num, den, out=np.zeros_like(num), where=den > 0).sum(-1)
    return out


def chi2_scale(D, rule="mean"):
    """Scale s of the chi2 kernel exp(-D / s) from the training distances D (n, n): ``"mean"`` of all n*n
    entries, diagonal included (Gehler & Nowozin 2009, as :func:`chi2_kernel`), ``"median"`` of the
    off-diagonal entries, or a positive number used as it is."""
    if not isinstance(rule, str):
        s = float(rule)
    elif rule == "mean":
        s = float(D.mean()) if D.size else 0.0
    elif rule == "median":
        off = D[~np.eye(D.shape[0], dtype=bool)]
        s = float(np.median(off)) if off.size else 0.0
    else:
        raise ValueError(f"chi2 scale must be 'median', 'mean' or a positive number, got {rule!r}")
    if not np.isfinite(s) or s <= 0:
        raise ValueError(f"the chi2 scale ({rule!r}) of the training points is {s:g}; cannot scale the kernel "
                         "(are the training distances all zero?)")
    return s


# Above this many training points the distance rules of the bandwidth use a fixed subsample of that size
# (seed 0): the median of ~3.4e7 pairwise distances, O(n) memory instead of O(n^2).
BANDWIDTH_SAMPLES = 8192


def bandwidth_sample(X, max_samples=BANDWIDTH_SAMPLES):
    """X itself, or a fixed random subset of ``max_samples`` rows (seed 0, sorted) when X has more."""
    if X.shape[0] <= max_samples:
        return X
    idx = np.sort(np.random.default_rng(0).choice(X.shape[0], max_samples, replace=False))
    return X[idx]


def median_inplace(d):
    """``np.median`` of a 1-d float array that the caller owns and no longer needs, equal to it bit for bit: one
    partition in place (the lower middle value of an even count is then the largest of the lower half).
    ``np.median`` copies its input and partitions around both middle values (8,000 points' 32 million pairwise
    distances: ~0.5 s per view against ~0.2 s here)."""
    k = d.size // 2
    d.partition(k)
    if d.size % 2:
        return float(d[k])
    return float(np.mean([d[:k].max(), d[k]]))


def rbf_bandwidth(X, rule="median", squared=None):
    """sigma of the Gaussian kernel from the training points X: ``"median"`` or ``"mean"`` of the pairwise
    Euclidean distances between distinct points (of a fixed subsample of ``BANDWIDTH_SAMPLES`` points when
    there are more), or a positive number used as it is. ``squared``: X's squared distances
    (:func:`squared_distances` of X), read instead of computed again when X needs no subsample."""
    if isinstance(rule, str):
        if rule not in ("median", "mean"):
            raise ValueError(f"bandwidth must be 'median', 'mean' or a positive number, got {rule!r}")
        if X.shape[0] < 2:
            raise ValueError("need >= 2 training samples to set the bandwidth from distances (n_samples = 1)")
        if squared is not None and X.shape[0] <= BANDWIDTH_SAMPLES:
            d = np.sqrt(_condensed(squared))
        else:
            d = pairwise_distances_condensed(bandwidth_sample(X))
        sigma = median_inplace(d) if rule == "median" else float(np.mean(d))
    else:
        sigma = float(rule)
    if not np.isfinite(sigma) or sigma <= 0:
        raise ValueError(f"Gaussian bandwidth must be > 0, got {sigma} (are all training points equal?)")
    return sigma


def _check_pair(X, X_test, standardize_features):
    """The training and test features checked (the same number of features), standardised if asked."""
    X = _check_features(X, "X")
    if X_test is not None:
        X_test = _check_features(X_test, "X_test")
        if X_test.shape[1] != X.shape[1]:
            raise ValueError(f"X_test has {X_test.shape[1]} features, X has {X.shape[1]}")
    if standardize_features:
        X, X_test = standardize(X, X_test)
    return X, X_test


def rbf_kernel(X, X_test=None, bandwidth="median", standardize_features=False):
    """Gaussian kernel ``exp(-||x - t||^2 / (2 sigma^2))``.

    ``bandwidth`` sets sigma: ``"median"`` (default) is the median of the
    pairwise Euclidean distances between distinct training points -- the
    choice of Minh et al. (2013) for the CUB attribute view; ``"mean"`` is
    their mean; a positive number is used as sigma directly. Distances of test
    points never enter the bandwidth.

    Returns ``(K, K_test)``; ``K_test`` is None when ``X_test`` is None.
    """
    X, X_test = _check_pair(X, X_test, standardize_features)
    sq = squared_distances(X, X)
    sigma = rbf_bandwidth(X, bandwidth)
    K = np.exp(-sq / (2.0 * sigma**2))
    if X_test is None:
        return K, None
    return K, np.exp(-squared_distances(X_test, X) / (2.0 * sigma**2))


def linear_kernel(X, X_test=None, standardize_features=False):
    """Linear kernel ``<x, t>``. Returns ``(K, K_test)``."""
    X, X_test = _check_pair(X, X_test, standardize_features)
    K = X @ X.T
    return K, (None if X_test is None else X_test @ X.T)


_KERNELS = {"rbf": rbf_kernel, "linear": linear_kernel}


def multiview_kernels(views, views_test=None, kernel="rbf", standardize_features=True, **kwargs):
    """Per-view kernels stacked sample-first: (n, n, m) train and (t, n, m) test arrays, the input of the
    estimators with ``kernel="precomputed"``.

    ``views`` is a list of m feature matrices with the same number of rows n
    (``views_test`` likewise with t rows). ``kernel`` is ``"rbf"`` (Gaussian) or
    ``"linear"``; extra keyword arguments go to the kernel function. Features
    are standardised with training statistics by default.
    """
    if kernel not in _KERNELS:
        raise ValueError(f"kernel must be one of {sorted(_KERNELS)}, got {kernel!r}")
    views = list(views)
    if not views:
        raise ValueError("views is empty")
    sizes = [np.shape(v)[0] for v in views]
    if len(set(sizes)) != 1:
        raise ValueError(f"views have different numbers of samples {sizes}")
    if views_test is not None:
        views_test = list(views_test)
        if len(views_test) != len(views):
            raise ValueError(f"views_test has {len(views_test)} views, views has {len(views)}")
        tsizes = [np.shape(v)[0] for v in views_test]
        if len(set(tsizes)) != 1:
            raise ValueError(f"views_test have different numbers of samples {tsizes}")
    fn = _KERNELS[kernel]
    Ks, Kts = [], []
    for i, X in enumerate(views):
        Xt = None if views_test is None else views_test[i]
        K, Kt = fn(X, Xt, standardize_features=standardize_features, **kwargs)
        Ks.append(K)
        Kts.append(Kt)
    K = np.stack(Ks, axis=-1)
    return K, (None if views_test is None else np.stack(Kts, axis=-1))
