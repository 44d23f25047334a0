"""Graph Laplacians per view and the multi-view regularisation operators.

Section 4.2 of the paper. The within-view operator M_W = L (x) I_Y (eq 60-63)
is block diagonal across views once samples are grouped view-major, so it is
stored as m Laplacians of size n x n. The between-view operator
M_B = I_{u+l} (x) (M_m (x) I_Y) with M_m = m I_m - 1 1^T (eq 54-57) needs no
storage at all: applied to per-view outputs F (m, n, P) it is
m F_p - sum_q F_q. Neither is ever formed as an (n m) x (n m) matrix here.

The graph model (:func:`view_laplacians`): weights W^i are the view's Gram matrix K^i itself (dense,
Section 7.1) or a symmetrised kNN graph of K^i with edge weights K^i_jk ("kernel") or 1 ("binary", the
default of the manifold-regularization code of Belkin, Niyogi & Sindhwani 2006); the Laplacian is
normalized or not, and may be raised to an integer power (the estimators' ``laplacian_power``, written p in
formulas: the iterated Laplacian L^p, the "degree" p of Belkin et al. 2006, Section 4.3; Sindhwani & Rosenberg
2008, Table 4). L^p is symmetric positive semi-definite like L, so M_W = L^p (x) I_Y is still an admissible
within-view operator (eq 63, M_W any symmetric positive operator); the edge-sum form of eq (64) holds for p = 1
with the unnormalized L.

Names: as in the paper, i indexes the views (K^i, L^i, W^i) and n the samples; ``n_neighbors`` is the kNN size
and ``laplacian_power`` the power p, under the estimators' names from the estimator down to the product loop.
The public functions (:func:`knn_weights`, :func:`laplacian_power`, :func:`view_laplacians`) check their
arguments; the estimators' path (:func:`within_view_operators`) does not re-check what the estimator's
parameter constraints checked.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.linalg import blas

from .validation import check_multiview_kernels

__all__ = [
    "auto_neighbors",
    "exact_neighbours_method",
    "warn_complete_graph",
    "GRAPH_WEIGHTS",
    "laplacian",
    "knn_mask",
    "knn_weights",
    "laplacian_power",
    "view_laplacians",
    "apply_between_view",
    "apply_within_view",
    "between_view_penalty",
    "within_view_penalty",
]


AUTO_FRACTION, AUTO_MIN, AUTO_MAX = 0.005, 10, 500


def auto_neighbors(n):
    """``n_neighbors="auto"``: k = 0.5 % of the n training samples within [10, 500] (10 up to 2,000 samples, 40 at
    8,000, 160 at 32,000, 500 from 100,000 on). Why it grows with n: with k fixed the kNN neighbourhoods shrink as n
    grows and the graph term stops informing the fit (Nadler, Srebro & Zhou, NIPS 2009; measured in
    benchmarks/README.md, bench_scale.py: 32,000 manifold points, 20 labels, Nystrom 0.575 at k = 10 whatever gamma_W
    or the Laplacian power, 0.942 at k = 160). The cap keeps the graphs' memory (n k nonzeros per view) bounded."""
    return int(min(max(round(AUTO_FRACTION * int(n)), AUTO_MIN), AUTO_MAX))


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


GRAPH_WEIGHTS = ("kernel", "binary")
"""kNN edge-weight conventions, the one list of the estimators, the validation grid and :mod:`mvl.coreg`: the
kernel value on each edge, or 1 on each edge."""


def _is_integer(value):
    """True for Python and numpy integers; False for bool, floats (even 2.0) and everything else."""
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def check_n_neighbors(n_neighbors, name="n_neighbors"):
    """``n_neighbors`` as an int >= 1 (None passes through: the dense graph W = K); else ``ValueError``."""
    if n_neighbors is None:
        return None
    if not _is_integer(n_neighbors) or n_neighbors < 1:
        raise ValueError(f"{name} must be a positive integer (or None for the dense graph W = K), "
                         f"got {n_neighbors!r}")
    return int(n_neighbors)


def check_power(power, name="p"):
    """The exponent of the iterated Laplacian L^p as an int >= 1; bool and floats (2.5, also 2.0) are rejected."""
    if not _is_integer(power) or power < 1:
        raise ValueError(f"{name} must be an integer >= 1 (the power p of the iterated Laplacian L^p), "
                         f"got {power!r}")
    return int(power)


def check_graph_weights(weights, n_neighbors, name="weights", knn_name="n_neighbors"):
    """``weights`` in ("kernel", "binary"); "binary" needs a kNN graph (``n_neighbors`` not None)."""
    if not isinstance(weights, str) or weights not in GRAPH_WEIGHTS:
        raise ValueError(f"{name} must be 'kernel' or 'binary', got {weights!r}")
    if weights == "binary" and n_neighbors is None:
        raise ValueError(f"{name}='binary' needs a kNN graph: set {knn_name} to a positive integer "
                         f"(with {knn_name}=None the graph is complete and binary weights make every "
                         f"edge equal)")
    return weights


def warn_complete_graph(n_neighbors, n):
    """:class:`mvl.exceptions.RegularizationWarning` when a kNN graph of n >= 2 samples is asked for
    ``n_neighbors`` >= n neighbours: a sample has n - 1 others, so the graph connects every pair (the complete
    graph, built as n_neighbors = n - 1), which is seldom what was meant."""
    if n < 2 or int(n_neighbors) < n:
        return
    import warnings

    from .exceptions import RegularizationWarning

    warnings.warn(f"n_neighbors = {int(n_neighbors)} >= n = {n} samples of the graph: a sample has {n - 1} others, so "
                  f"the kNN graph connects every pair (the complete graph, as n_neighbors = {n - 1}); use a smaller "
                  "n_neighbors for a local graph, or n_neighbors=None for the dense graph W = K",
                  RegularizationWarning, stacklevel=3)


def knn_mask(S, n_neighbors):
    """Edges of the symmetrised k-nearest-neighbour graph of a similarity matrix ``S`` (n, n), as a boolean
    (n, n) array: i ~ j if j is among the ``n_neighbors`` samples j != i with the largest S[i, j], or i among
    those of j. ``n_neighbors`` >= n - 1 connects every pair. Similarities only need their order: a kernel
    matrix, or minus the squared distances (the kNN graphs of :mod:`mvl.coreg`); ``n_neighbors`` >= n warns
    (:func:`warn_complete_graph`)."""
    S = np.array(S, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] != S.shape[1]:
        raise ValueError(f"K must be square, got shape {S.shape}")
    n = S.shape[0]
    warn_complete_graph(n_neighbors, n)
    k = min(int(n_neighbors), n - 1)
    S[np.diag_indices(n)] = -np.inf
    idx = np.argpartition(-S, kth=k - 1, axis=1)[:, :k] if k > 0 else np.empty((n, 0), int)
    mask = np.zeros((n, n), dtype=bool)
    mask[np.repeat(np.arange(n), k), idx.ravel()] = True
    mask |= mask.T
    return mask


def knn_weights(K, n_neighbors, weights="kernel"):
    """Symmetrised k-nearest-neighbour weights from a kernel (similarity) matrix.

    Neighbours of i are the ``n_neighbors`` samples j != i with the largest
    K[i, j]; i ~ j if j is a neighbour of i or i of j. On an edge,
    ``weights="kernel"`` gives W[i, j] = max(K[i, j], 0) (graph weights must be non-negative; only a kernel
    with negative values, such as a linear one, is affected) and ``weights="binary"``
    gives W[i, j] = 1 (the default of the manifold-regularization code,
    Belkin, Niyogi & Sindhwani 2006); W is 0 elsewhere and on the diagonal.
    ``n_neighbors`` >= n - 1 connects every pair.
    """
    n_neighbors = check_n_neighbors(n_neighbors)
    if n_neighbors is None:
        raise ValueError("n_neighbors must be a positive integer, got None")
    check_graph_weights(weights, n_neighbors)
    return _knn_weights(np.asarray(K, dtype=np.float64), n_neighbors, weights)


def _knn_weights(K, n_neighbors, weights):
    """:func:`knn_weights` without the argument checks."""
    mask = knn_mask(K, n_neighbors)
    if weights == "binary":
        return mask.astype(np.float64)
    # symmetric even if K is so only to rounding; a negative kernel value on an edge (a linear kernel) weighs 0
    return np.where(mask, np.maximum(0.5 * (K + K.T), 0.0), 0.0)


def _square_symmetric(A):
    """A A^T = A^2 for a symmetric A by one BLAS dsyrk (upper triangle), mirrored: exactly symmetric.

    A is C-ordered, so A.T is a Fortran view of it (no copy): dsyrk with trans=1 gives (A.T)^T A.T = A A^T.
    """
    A = np.ascontiguousarray(A)
    C = blas.dsyrk(1.0, A.T, trans=1)  # upper triangle, Fortran order
    return np.triu(C) + np.triu(C, 1).T


def _symmetric_product(A, B):
    """A B for commuting symmetric A and B (powers of one matrix), symmetrised exactly.

    dgemm on the Fortran views B.T, A.T of the C-ordered inputs (no copies) gives B^T A^T = (A B)^T,
    whose symmetric part is that of A B.
    """
    A, B = np.ascontiguousarray(A), np.ascontiguousarray(B)
    C = blas.dgemm(1.0, B.T, A.T)
    return 0.5 * (C + C.T)


def laplacian_power(L, power):
    """The iterated Laplacian L^p of a symmetric (n, n) matrix ``L`` (p = ``power``, an integer >= 1).

    Belkin, Niyogi & Sindhwani (2006, Section 4.3) regularise with L^p, the "degree" p of their
    manifold-regularization code; used per view, M_W = L^p (x) I_Y replaces L (x) I_Y of eq (60)-(63).
    Computed by repeated squaring: floor(log2 p) squarings plus one product per further set bit of p,
    at most p - 1 n x n products in all. Every intermediate power is symmetrised exactly, so the result
    is exactly symmetric. ``p = 1`` returns ``L`` itself, unchanged (not a copy).
    """
    power = check_power(power, name="power")
    L = np.asarray(L, dtype=np.float64)
    if L.ndim != 2 or L.shape[0] != L.shape[1]:
        raise ValueError(f"L must be square, got shape {L.shape}")
    if power > 1 and not np.all(np.isfinite(L)):
        raise ValueError("L contains NaN or inf")
    return _iterated_laplacian(L, power)


def _iterated_laplacian(L, laplacian_power):
    """:func:`laplacian_power` without the argument checks (``L`` float64, square, finite)."""
    if int(laplacian_power) == 1:
        return L
    result = None
    base = L
    bits = int(laplacian_power)  # consumed bit by bit: one squaring per bit, one product per set bit
    while True:
        if bits & 1:
            result = base if result is None else _symmetric_product(result, base)
        bits >>= 1
        if bits == 0:
            break
        base = _square_symmetric(base)
    return np.ascontiguousarray(result)


def view_laplacians(K, normalized=True, n_neighbors=None, weights="kernel", laplacian_power=1):
    """One Laplacian per view, the graph built from the view's own Gram matrix, raised to ``laplacian_power``.

    ``K`` has shape (m, n, n). ``n_neighbors=None`` uses the dense kernel
    weights W^i = K^i of the paper (Section 7.1); an integer uses a symmetrised
    kNN graph (:func:`knn_weights`) whose edges weigh K^i_jk (``weights="kernel"``)
    or 1 (``weights="binary"``, which needs ``n_neighbors``). ``normalized``
    selects I - D^-1/2 W D^-1/2 or D - W (:func:`laplacian`), and ``laplacian_power`` = p
    returns the iterated Laplacians (L^i)^p (:func:`laplacian_power`; Belkin et
    al. 2006), so that M_W = blockdiag((L^1)^p, ..., (L^m)^p) (x) I_Y (eq 60-63).
    Copies of a sample in a view (kernel distance ~0, :func:`kernel_copies`) count as one point in a kNN graph:
    the graph of one sample per group of copies, zero rows and columns at the other copies (the kNN graph of
    copies would be a set of cliques); the dense graph W^i = K^i of the paper is kept as it is.
    Returns an array of shape (m, n, n).
    """
    n_neighbors = check_n_neighbors(n_neighbors)
    check_graph_weights(weights, n_neighbors)
    laplacian_power = check_power(laplacian_power, name="laplacian_power")
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 3 or K.shape[1] != K.shape[2]:
        raise ValueError(f"K must have shape (m, n, n), got {K.shape}")
    return _view_laplacians(K, normalized, n_neighbors, weights, laplacian_power)


def _view_laplacians(K, normalized, n_neighbors, weights, laplacian_power):
    """:func:`view_laplacians` without the argument checks."""
    out = np.empty_like(K)
    for i in range(K.shape[0]):
        copies = None if n_neighbors is None else kernel_copies(K[i])
        if copies is not None:  # a kNN graph of copies is a set of cliques: the graph of one sample per group
            keep = copies[0]
            W = _knn_weights(K[i][np.ix_(keep, keep)], n_neighbors, weights)
            out[i] = _embed_dense(_iterated_laplacian(laplacian(W, normalized=normalized), laplacian_power), keep,
                                  K.shape[1])
            continue
        W = K[i] if n_neighbors is None else _knn_weights(K[i], n_neighbors, weights)
        out[i] = _iterated_laplacian(laplacian(W, normalized=normalized), laplacian_power)
    return out


# ---------------------------------------------------------------- duplicate points (copies as one point)


DUPLICATE_TOL = 1e-12
"""Two samples of a view are copies when their kernel distance K_ii + K_jj - 2 K_ij is at most this times
K_ii + K_jj (exact copies of feature rows: 0, as :func:`mvl.kernels.squared_distances` makes equal rows exactly 0
apart)."""


def first_of_groups(first, inverse, n):
    """(keep, where): the sorted indices of the first sample of each group, and each sample's group as a position in
    ``keep``; None when all n samples are distinct."""
    if len(first) == n:
        return None
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return first[order], rank[np.asarray(inverse).ravel()]


def feature_copies(X):
    """Exact copies among the rows of a feature array X (n, d), by ``np.unique(axis=0)`` (O(n d log n)): (keep,
    where) as :func:`kernel_copies`, or None when the rows are distinct."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    if X.shape[0] < 2:
        return None
    _, first, inverse = np.unique(X, axis=0, return_index=True, return_inverse=True)
    return first_of_groups(first, inverse, X.shape[0])


def kernel_copies(K):
    """Copies among the samples of a Gram matrix K (n, n): samples at kernel distance ~0
    (:data:`DUPLICATE_TOL`), each grouped with the first such sample. Returns (keep, where): the sorted indices of
    one sample per group (its first) and, for each sample, the position of its group in ``keep``; None when all
    samples are distinct. By row blocks: O(n^2) time, O(block n) memory beyond K."""
    K = np.asarray(K, dtype=np.float64)
    n = K.shape[0]
    if n < 2:
        return None
    d = np.diag(K).copy()
    rep = np.empty(n, dtype=np.intp)
    b = max(1, int((1 << 22) // n))
    for s in range(0, n, b):
        e = min(n, s + b)
        scale = d[s:e, None] + d[None, :]
        close = scale - 2.0 * K[s:e] <= DUPLICATE_TOL * np.abs(scale)
        close[np.arange(e - s), np.arange(s, e)] = True  # a sample is its own copy
        rep[s:e] = np.argmax(close, axis=1)  # the first copy
    rep = rep[rep]  # a chain of near copies ends at the first sample of its group
    if np.all(rep == np.arange(n)):
        return None
    first, inverse = np.unique(rep, return_inverse=True)
    return first, inverse


def _embed_dense(Ld, keep, n):
    """An operator (n_d, n_d) on one sample per group of copies, as (n, n) with zero rows and columns at the other
    copies: f^T L f = f_keep^T L_d f_keep for outputs f equal on copies (a function's values at equal points)."""
    L = np.zeros((n, n))
    L[np.ix_(keep, keep)] = Ld
    return L


def embed_sparse(Wd, keep, n):
    """Sparse weights (n_d, n_d) on one sample per group of copies, as CSR (n, n) (the other copies isolated)."""
    from scipy import sparse

    Wd = sparse.coo_matrix(Wd)
    return sparse.csr_matrix((Wd.data, (keep[Wd.row], keep[Wd.col])), shape=(n, n))


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


def within_view_operators(K, laplacian, n_neighbors, *, gamma_W, laplacian_power, graph_weights):
    """The m within-view operators (L^i)^p of an estimator's fit (eq 60-63, p = ``laplacian_power``), or None when
    gamma_W = 0 (they do not enter).

    ``laplacian`` "normalized"/"unnormalized" builds each L^i from the view's Gram matrix K^i (dense weights
    W^i = K^i with ``n_neighbors`` None, or a kNN graph of ``n_neighbors``, edge weights per ``graph_weights``:
    "kernel" or "binary"); an explicit array (m, n, n), in the solvers' per-view layout, is used as given (its
    values are checked here: they are data), and p applies to it too. The parameters themselves were checked
    by the estimator (its constraints and :meth:`mvl.estimators.base.MVLClassifier._graph`): nothing is re-checked.
    """
    if isinstance(laplacian, str):
        if gamma_W == 0:
            return None
        return _view_laplacians(K, laplacian == "normalized", n_neighbors, graph_weights, laplacian_power)
    L = check_multiview_kernels(laplacian, name="laplacian")
    if L.shape != K.shape:
        raise ValueError(f"laplacian has shape {L.shape}, kernels have {K.shape}")
    if gamma_W == 0:
        return None
    if laplacian_power == 1:
        return L
    return np.stack([_iterated_laplacian(L[i], laplacian_power) for i in range(L.shape[0])])


# ---------------------------------------------------------------- sparse kNN graphs (the scalable solvers)


APPROXIMATE_NEIGHBORS_MIN = 200_000
"""Gaussian views with more points than this get their kNN graph from an HNSW index (:func:`hnsw_neighbors`)."""


def hnsw_neighbors(X, k, ef=None):
    """The k + 1 approximate nearest neighbours (the point itself included) of every row of X among the rows of X,
    (indices (n, k + 1), float64 Euclidean distances (n, k + 1)), by a hierarchical navigable small world graph
    (hnswlib; M = 16, ef_construction = 200, query ef = max(64, 2 (k + 1))).

    The index is built on one thread with a fixed seed, so the graph is the same on every run; the queries
    use the threads the machine allows. hnswlib works in float32: the distances of the pairs it finds are
    recomputed in float64 from X. Measured on the manifold data of the scale benchmark (20 features, k = 10):
    recall@10 = 1.000 against the exact neighbours at 100,000 points; 400,000 points in 23 s where scikit-learn's
    kd-tree takes 91 s (its time grows as n^2.3 there: at small distances the noise makes the data 20-dimensional).
    """
    import hnswlib

    from .parallel import default_threads

    X = np.ascontiguousarray(X, dtype=np.float64)
    n, d = X.shape
    index = hnswlib.Index(space="l2", dim=d)
    index.init_index(max_elements=n, ef_construction=200, M=16, random_seed=0)
    X32 = X.astype(np.float32)
    index.set_num_threads(1)  # a deterministic graph
    index.add_items(X32, np.arange(n))
    index.set_ef(max(64, 2 * (k + 1)) if ef is None else int(ef))
    index.set_num_threads(default_threads())
    idx, _ = index.knn_query(X32, k=k + 1)
    del X32
    idx = idx.astype(np.intp)
    dist = np.empty(idx.shape)
    for s in range(0, n, 1 << 15):  # float64 distances of the pairs found, by row blocks (O(block k d) memory)
        D = X[idx[s:s + (1 << 15)]] - X[s:s + (1 << 15), None, :]
        dist[s:s + (1 << 15)] = np.sqrt(np.einsum("nkd,nkd->nk", D, D))
    order = np.argsort(dist, axis=1, kind="stable")
    return np.take_along_axis(idx, order, axis=1), np.take_along_axis(dist, order, axis=1)


def _have_hnswlib():
    try:
        import hnswlib  # noqa: F401
    except ImportError:
        return False
    return True


def exact_neighbours_method(n, d):
    """scikit-learn's ``NearestNeighbors`` algorithm for n points of d features: brute force up to 5,000 points,
    then a kd-tree up to 40 features, a ball tree above. Measured on 100,000 points of 20 features (a 1-d manifold
    plus noise): kd-tree 5.7 s, ball tree 11.7 s, while the brute force that scikit-learn's "auto" picks above 15
    features is O(n^2 d)."""
    return "brute" if n <= 5000 else ("kd_tree" if d <= 40 else "ball_tree")


def sparse_knn_weights(kernels, i, n_neighbors, weights="kernel", algorithm="auto"):
    """The symmetrised kNN weights of view ``i`` of a :class:`mvl.kernel_blocks.ViewKernels`, as a sparse CSR
    matrix: the same graph as :func:`knn_weights` on the view's Gram matrix (neighbours = largest kernel values,
    i ~ j if either is among the other's ``n_neighbors``; edge weight K_ij or 1), without an n x n array.

    Gaussian and chi2 kernels decrease with the distance, so their neighbours are the nearest points:
    Gaussian views use scikit-learn's exact Euclidean :class:`~sklearn.neighbors.NearestNeighbors` (brute force
    up to 5,000 points, then a kd-tree up to 40 features, a ball tree above) and, above
    :data:`APPROXIMATE_NEIGHBORS_MIN` points, approximate neighbours from an HNSW index (:func:`hnsw_neighbors`,
    the optional dependency hnswlib: ``pip install 'mvl[scale]'``; without it exact ones, with a warning;
    ``algorithm`` "exact" or "hnsw" forces one); chi2, linear and precomputed views rank kernel rows in row blocks
    (O(n^2 d)). Copies of a sample in the view (:func:`feature_copies`, :func:`kernel_copies` for a Gram matrix)
    count as one point: the graph is that of one sample per group of copies, the other copies isolated, so that a
    function's graph penalty is that of the distinct points (equal points have equal values).
    """
    from scipy import sparse

    if algorithm not in ("auto", "exact", "hnsw"):
        raise ValueError(f'algorithm must be "auto", "exact" or "hnsw", got {algorithm!r}')
    n = kernels.n
    copies = kernel_copies(kernels.gram[i]) if kernels.views is None else feature_copies(kernels.views[i])
    if copies is not None:  # copies of a sample: the graph of one sample per group, the others isolated
        from .kernel_blocks import ViewKernels

        keep = copies[0]
        if kernels.views is None:
            sub = ViewKernels(gram=kernels.gram[i][np.ix_(keep, keep)][None])
        else:
            sub = ViewKernels([kernels.views[i][keep]], kernels.kind, [kernels.scales[i]], max_memory=0,
                              block=kernels.block, threads=kernels.threads)
        return embed_sparse(sparse_knn_weights(sub, 0, n_neighbors, weights, algorithm), keep, n)
    warn_complete_graph(n_neighbors, n)
    k = min(int(n_neighbors), n - 1)  # the number of neighbours of each point (all others when n_neighbors >= n)
    if k < 1:
        return sparse.csr_matrix((n, n))
    if kernels.kind == "rbf":
        from sklearn.neighbors import NearestNeighbors

        X = kernels.views[i]
        if algorithm == "auto" and n > APPROXIMATE_NEIGHBORS_MIN:
            algorithm = "hnsw" if _have_hnswlib() else "exact"
            if algorithm == "exact":
                import warnings

                warnings.warn(f"view {i}: exact kNN graph of {n} points (hnswlib is not installed; the kd-tree's time "
                              "grows faster than n^2 on noisy data, ~15 min per view at 10^6 points): "
                              "pip install 'mvl[scale]' for approximate neighbours", stacklevel=2)
        if algorithm == "hnsw":
            idx, dist = hnsw_neighbors(X, k)
        else:
            method = exact_neighbours_method(n, X.shape[1])
            dist, idx = NearestNeighbors(n_neighbors=k + 1, algorithm=method).fit(X).kneighbors(X)
        nbr, d = _drop_self(idx, dist, k)
        vals = np.exp(-(d * d) / (2.0 * kernels.scales[i] ** 2))
    else:
        nbr = np.empty((n, k), dtype=np.intp)
        vals = np.empty((n, k))
        b = max(1, int((1 << 24) // max(1, n)))
        for s in range(0, n, b):
            rows = np.arange(s, min(s + b, n))
            S = np.array(kernels.rows(i, rows), dtype=np.float64, copy=True)
            S[np.arange(len(rows)), rows] = -np.inf
            part = np.argpartition(-S, kth=k - 1, axis=1)[:, :k]
            nbr[rows] = part
            vals[rows] = np.take_along_axis(S, part, axis=1)
    rows = np.repeat(np.arange(n), k)
    A = sparse.csr_matrix((vals.ravel() if weights == "kernel" else np.ones(n * k), (rows, nbr.ravel())),
                          shape=(n, n))
    W = A.maximum(A.T).tocsr()  # symmetric kernel: both directions of an edge carry the same value
    W.setdiag(0.0)
    W.eliminate_zeros()
    return W


def _drop_self(idx, dist, k):
    """kNN results of k + 1 neighbours of each point among the points themselves -> the k others."""
    n = idx.shape[0]
    is_self = idx == np.arange(n)[:, None]
    # keep the first k entries that are not the point itself (a duplicate point may come before it)
    keep = ~is_self
    keep[keep.cumsum(axis=1) > k] = False
    return idx[keep].reshape(n, k), dist[keep].reshape(n, k)


def sparse_laplacian(W, normalized=True):
    """The Laplacian of sparse symmetric weights W, as :func:`laplacian` (I - D^-1/2 W D^-1/2 or D - W, isolated
    vertices a zero row), CSR."""
    from scipy import sparse

    d = np.asarray(W.sum(axis=1)).ravel()
    if not normalized:
        return (sparse.diags(d) - W).tocsr()
    with np.errstate(divide="ignore"):
        s = np.where(d > 0, 1.0 / np.sqrt(d), 0.0)
    S = sparse.diags(s)
    return (sparse.diags((d > 0).astype(np.float64)) - S @ W @ S).tocsr()
