"""Graph operators (mvl.graph) against independent references: scipy csgraph, the quadratic-form identities of
Section 4.2 (eq 55-58, 61-64) written out as explicit sums, brute-force neighbour loops; sparse kNN graphs against the
dense graph code; approximate (HNSW) neighbours against exact ones."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse import csgraph
from sklearn.metrics.pairwise import rbf_kernel

from mvl import graph
from mvl.data.synthetic import make_multiview_manifold
from mvl.graph import knn_weights, laplacian, sparse_knn_weights, sparse_laplacian
from mvl.kernel_blocks import ViewKernels


@pytest.mark.parametrize("weights", ["kernel", "binary"])
@pytest.mark.parametrize("normalized", [True, False])
def test_sparse_knn_laplacian_equals_dense_graph(manifold, weights, normalized):
    views, scales, K = manifold["views"], manifold["scales"], manifold["K"]
    for kernels in (ViewKernels(views, "rbf", scales, max_memory=0), ViewKernels(gram=K)):
        for p in range(3):
            W = sparse_knn_weights(kernels, p, 7, weights)
            Wd = knn_weights(K[p], 7, weights=weights)
            np.testing.assert_allclose(W.toarray(), Wd, rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(sparse_laplacian(W, normalized).toarray(), laplacian(Wd, normalized),
                                       rtol=1e-10, atol=1e-12)


def test_hnsw_graph_equals_exact_graph(manifold):
    """The approximate (HNSW) kNN graph of a Gaussian view = the dense graph of knn_weights on this problem (300
    points: every neighbour found), edge weights from float64 distances; the same graph on a rebuild (seeded,
    single-threaded construction); the algorithm switch is checked."""
    views, scales, K = manifold["views"], manifold["scales"], manifold["K"]
    kernels = ViewKernels(views, "rbf", scales, max_memory=0)
    for p in range(3):
        W = sparse_knn_weights(kernels, p, 7, algorithm="hnsw")
        np.testing.assert_allclose(W.toarray(), knn_weights(K[p], 7), rtol=1e-12, atol=1e-14)
        again = sparse_knn_weights(kernels, p, 7, algorithm="hnsw")
        assert (W != again).nnz == 0
    with pytest.raises(ValueError, match="algorithm"):
        sparse_knn_weights(kernels, 0, 7, algorithm="annoy")


def test_auto_neighbours_above_threshold(manifold, monkeypatch):
    """Above APPROXIMATE_NEIGHBORS_MIN points "auto" uses HNSW; without hnswlib it falls back to the exact graph
    with a warning that names the extra to install."""
    import mvl.graph as graph

    views, scales, K = manifold["views"], manifold["scales"], manifold["K"]
    kernels = ViewKernels(views, "rbf", scales, max_memory=0)
    monkeypatch.setattr(graph, "APPROXIMATE_NEIGHBORS_MIN", 100)
    calls = []
    real = graph.hnsw_neighbors
    monkeypatch.setattr(graph, "hnsw_neighbors", lambda X, k: calls.append(k) or real(X, k))
    W = sparse_knn_weights(kernels, 0, 7)
    assert calls == [7]
    np.testing.assert_allclose(W.toarray(), knn_weights(K[0], 7), rtol=1e-12, atol=1e-14)
    monkeypatch.setattr(graph, "_have_hnswlib", lambda: False)
    with pytest.warns(UserWarning, match=r"mvl\[scale\]"):
        W = sparse_knn_weights(kernels, 0, 7)
    assert calls == [7]
    np.testing.assert_allclose(W.toarray(), knn_weights(K[0], 7), rtol=1e-12, atol=1e-14)


def test_hnsw_neighbours_recall_on_manifold_data():
    """Recall of the HNSW neighbours against scikit-learn's exact ones on 20,000 points of the scale benchmark's
    kind (20 noisy features of a 1-d manifold): >= 0.999 of the 10 nearest, distances exact where found."""
    from sklearn.neighbors import NearestNeighbors

    from mvl.graph import hnsw_neighbors

    X = make_multiview_manifold(20_000, n_classes=4, n_views=1, n_features=20, random_state=5).views[0]
    idx, dist = hnsw_neighbors(X, 10)
    d_ex, i_ex = NearestNeighbors(n_neighbors=11).fit(X).kneighbors(X)
    recall = np.mean([len(set(a) & set(b)) / 11 for a, b in zip(idx, i_ex, strict=True)])
    assert recall >= 0.999
    np.testing.assert_allclose(dist, np.linalg.norm(X[idx] - X[:, None, :], axis=2), rtol=1e-12, atol=1e-12)
    assert np.all(np.diff(dist, axis=1) >= 0)


# ---------------------------------------------------------------- Laplacians


def _random_weights(n, seed, zero_diag=True):
    rng = np.random.default_rng(seed)
    W = rng.uniform(0, 1, size=(n, n)) * (rng.uniform(size=(n, n)) < 0.7)
    W = np.triu(W, 0 if not zero_diag else 1)
    W = W + np.triu(W, 1).T
    return W


@pytest.mark.parametrize("zero_diag", [True, False])
def test_unnormalized_laplacian_quadratic_form(zero_diag):
    W = _random_weights(12, seed=1, zero_diag=zero_diag)
    L = graph.laplacian(W, normalized=False)
    rng = np.random.default_rng(2)
    for _ in range(5):
        a = rng.normal(size=12)
        explicit = sum(W[j, k] * (a[j] - a[k]) ** 2 for j in range(12) for k in range(j + 1, 12))
        np.testing.assert_allclose(a @ L @ a, explicit, rtol=1e-12)
    np.testing.assert_allclose(L.sum(axis=1), 0.0, atol=1e-12)
    if zero_diag:
        np.testing.assert_allclose(L, csgraph.laplacian(W, normed=False), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("zero_diag", [True, False])
def test_normalized_laplacian(zero_diag):
    W = _random_weights(12, seed=3, zero_diag=zero_diag)
    L = graph.laplacian(W, normalized=True)
    d = W.sum(axis=1)  # diagonal of W included in the degree
    rng = np.random.default_rng(4)
    for _ in range(5):
        a = rng.normal(size=12)
        b = a / np.sqrt(d)
        explicit = sum(W[j, k] * (b[j] - b[k]) ** 2 for j in range(12) for k in range(j + 1, 12))
        np.testing.assert_allclose(a @ L @ a, explicit, rtol=1e-12)
    np.testing.assert_allclose(L @ np.sqrt(d), 0.0, atol=1e-12)
    if zero_diag:
        # csgraph ignores the diagonal of W; only comparable when it is zero
        np.testing.assert_allclose(L, csgraph.laplacian(W, normed=True), rtol=1e-12, atol=1e-14)
    else:
        np.testing.assert_allclose(np.diag(L), 1.0 - np.diag(W) / d, rtol=1e-12)


def test_normalized_laplacian_isolated_vertex():
    W = _random_weights(6, seed=5)
    W[2, :] = 0.0
    W[:, 2] = 0.0
    L = graph.laplacian(W, normalized=True)
    assert np.all(np.isfinite(L))
    np.testing.assert_array_equal(L[2], 0.0)
    np.testing.assert_array_equal(L[:, 2], 0.0)
    keep = [0, 1, 3, 4, 5]
    np.testing.assert_allclose(L[np.ix_(keep, keep)], csgraph.laplacian(W[np.ix_(keep, keep)], normed=True),
                               rtol=1e-12, atol=1e-14)


def test_laplacian_rejects_bad_weights():
    with pytest.raises(ValueError, match="non-negative"):
        graph.laplacian(np.array([[1.0, -0.5], [-0.5, 1.0]]))
    with pytest.raises(ValueError, match="square"):
        graph.laplacian(np.ones((2, 3)))
    with pytest.raises(ValueError, match="NaN or inf"):
        graph.laplacian(np.array([[1.0, np.inf], [np.inf, 1.0]]))


# ---------------------------------------------------------------- kNN graph


@pytest.mark.parametrize("k", [1, 3, 6])
def test_knn_weights(k):
    rng = np.random.default_rng(6)
    X = rng.normal(size=(14, 3))
    K = rbf_kernel(X, gamma=0.3)  # positive entries, no ties almost surely
    K = 0.5 * (K + K.T)  # sklearn's rbf_kernel is symmetric only to rounding; W copies K's values
    W = graph.knn_weights(K, k)
    n = K.shape[0]
    np.testing.assert_array_equal(W, W.T)
    np.testing.assert_array_equal(np.diag(W), 0.0)
    assert np.all(np.count_nonzero(W, axis=1) >= k)
    # brute-force reference: neighbours of i are the k largest K[i, j], j != i, symmetrised
    ref_mask = np.zeros((n, n), dtype=bool)
    for i in range(n):
        order = [j for j in np.argsort(-K[i], kind="stable") if j != i][:k]
        ref_mask[i, order] = True
    ref_mask |= ref_mask.T
    np.testing.assert_array_equal(W != 0, ref_mask)
    np.testing.assert_array_equal(W[ref_mask], K[ref_mask])


def test_knn_weights_k_larger_than_n_and_invalid_k():
    K = rbf_kernel(np.random.default_rng(7).normal(size=(5, 2)))
    W = graph.knn_weights(K, 50)
    expected = K.copy()
    np.fill_diagonal(expected, 0.0)
    np.testing.assert_array_equal(W, expected)
    with pytest.raises(ValueError, match="n_neighbors"):
        graph.knn_weights(K, 0)


def test_view_laplacians():
    rng = np.random.default_rng(8)
    K = np.stack([rbf_kernel(rng.normal(size=(10, 2)), gamma=g) for g in (0.2, 1.0)])
    Ls = graph.view_laplacians(K, normalized=True)
    Lu = graph.view_laplacians(K, normalized=False, n_neighbors=3)
    for p in range(2):
        d = K[p].sum(axis=1)
        np.testing.assert_allclose(Ls[p], np.eye(10) - K[p] / np.sqrt(np.outer(d, d)), rtol=1e-12, atol=1e-14)
        W = graph.knn_weights(K[p], 3)
        np.testing.assert_allclose(Lu[p], csgraph.laplacian(W, normed=False), rtol=1e-12, atol=1e-14)


def _brute_force_knn_mask(K, k):
    """i ~ j iff j is among the k largest K[i, :] (j != i) or i among those of j, by explicit loops."""
    n = K.shape[0]
    mask = np.zeros((n, n), dtype=bool)
    for i in range(n):
        order = [j for j in np.argsort(-K[i], kind="stable") if j != i][:k]
        for j in order:
            mask[i, j] = mask[j, i] = True
    return mask


@pytest.mark.parametrize("k", [1, 3, 6, 40])
def test_knn_weights_binary(k):
    """weights="binary": W = 1 on the edges of the symmetrised kNN graph, 0 elsewhere (brute-force loop)."""
    rng = np.random.default_rng(16)
    K = rbf_kernel(rng.normal(size=(13, 3)), gamma=0.4)
    K = 0.5 * (K + K.T)
    W = graph.knn_weights(K, k, weights="binary")
    ref = _brute_force_knn_mask(K, min(k, 12)).astype(np.float64)
    np.testing.assert_array_equal(W, ref)
    assert set(np.unique(W)) <= {0.0, 1.0}
    # the same graph as the kernel weights, only the edge values differ
    np.testing.assert_array_equal(W != 0, graph.knn_weights(K, k) != 0)


@pytest.mark.parametrize("normalized", [True, False])
def test_laplacian_power_matches_matrix_power(normalized):
    W = _random_weights(15, seed=17)
    L = graph.laplacian(W, normalized=normalized)
    assert graph.laplacian_power(L, 1) is L  # p = 1: L itself, unchanged
    for p in range(2, 10):
        Lp = graph.laplacian_power(L, p)
        ref = np.linalg.matrix_power(L, p)
        assert np.max(np.abs(Lp - ref)) <= 1e-12 * np.max(np.abs(ref)), p
        np.testing.assert_array_equal(Lp, Lp.T)  # exactly symmetric
    np.testing.assert_allclose(graph.laplacian_power(L, np.int64(3)), np.linalg.matrix_power(L, 3),
                               rtol=1e-12, atol=1e-12 * np.max(np.abs(L)) ** 3)


def test_laplacian_power_uses_repeated_squaring(monkeypatch):
    """At most p - 1 n x n products: floor(log2 p) squarings plus one product per further set bit of p."""
    calls = []
    square, product = graph._square_symmetric, graph._symmetric_product
    monkeypatch.setattr(graph, "_square_symmetric", lambda A: calls.append("sq") or square(A))
    monkeypatch.setattr(graph, "_symmetric_product", lambda A, B: calls.append("mul") or product(A, B))
    L = graph.laplacian(_random_weights(8, seed=18))
    for p in range(1, 40):
        calls.clear()
        graph.laplacian_power(L, p)
        expected = (p.bit_length() - 1) + (bin(p).count("1") - 1)
        assert len(calls) == expected <= p - 1, p
    calls.clear()
    graph.laplacian_power(L, 32)
    assert calls == ["sq"] * 5


@pytest.mark.parametrize("bad", [0, -2, 1.5, 2.0, True, np.int64(0), "2", None])
def test_laplacian_power_rejects_non_integer_powers(bad):
    L = graph.laplacian(_random_weights(5, seed=19))
    with pytest.raises(ValueError, match="power must be an integer >= 1"):
        graph.laplacian_power(L, bad)
    with pytest.raises(ValueError, match="laplacian_power must be an integer >= 1"):
        graph.view_laplacians(np.stack([np.eye(5) + 0.1]), laplacian_power=bad)


def test_graph_parameters_are_validated():
    K = rbf_kernel(np.random.default_rng(20).normal(size=(6, 2)))
    with pytest.raises(ValueError, match="n_neighbors must be a positive integer"):
        graph.knn_weights(K, 2.5)
    with pytest.raises(ValueError, match="n_neighbors must be a positive integer"):
        graph.knn_weights(K, True)
    with pytest.raises(ValueError, match="n_neighbors must be a positive integer"):
        graph.view_laplacians(K[None], n_neighbors=2.5)
    with pytest.raises(ValueError, match="weights must be 'kernel' or 'binary'"):
        graph.knn_weights(K, 2, weights="heat")
    with pytest.raises(ValueError, match="weights must be 'kernel' or 'binary'"):
        graph.view_laplacians(K[None], n_neighbors=2, weights="foo")
    with pytest.raises(ValueError, match="needs a kNN graph: set n_neighbors"):
        graph.view_laplacians(K[None], weights="binary")
    with pytest.raises(ValueError, match="L must be square"):
        graph.laplacian_power(np.ones((3, 4)), 2)
    np.testing.assert_array_equal(graph.knn_weights(K, np.int32(2)), graph.knn_weights(K, 2))


@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("n_neighbors,weights", [(None, "kernel"), (3, "kernel"), (3, "binary")])
@pytest.mark.parametrize("power", [1, 2, 3])
def test_view_laplacians_graph_model(normalized, n_neighbors, weights, power):
    """(L^i)^p per view against brute-force kNN weights, scipy's csgraph Laplacian and matrix_power."""
    rng = np.random.default_rng(21)
    K = np.stack([rbf_kernel(rng.normal(size=(11, 2)), gamma=g) for g in (0.3, 1.2)])
    K = 0.5 * (K + K.transpose(0, 2, 1))
    out = graph.view_laplacians(K, normalized=normalized, n_neighbors=n_neighbors, weights=weights,
                                laplacian_power=power)
    for p in range(2):
        if n_neighbors is None:
            W = K[p].copy()
        else:
            mask = _brute_force_knn_mask(K[p], n_neighbors)
            W = mask.astype(np.float64) if weights == "binary" else np.where(mask, K[p], 0.0)
        if n_neighbors is None:  # csgraph ignores the diagonal of W: dense W = K has a unit diagonal
            d = W.sum(axis=1)
            L = (np.eye(11) - W / np.sqrt(np.outer(d, d))) if normalized else np.diag(d) - W
        else:
            L = csgraph.laplacian(W, normed=normalized)
        ref = np.linalg.matrix_power(L, power)
        np.testing.assert_allclose(out[p], ref, rtol=1e-11, atol=1e-12 * np.max(np.abs(ref)))


# ---------------------------------------------------------------- M_B, M_W


def test_between_view_operator_and_penalty_eq_54_58():
    rng = np.random.default_rng(9)
    m, n, P = 4, 7, 3
    F = rng.normal(size=(m, n, P))
    explicit = sum(np.sum((F[j, i] - F[k, i]) ** 2)
                   for i in range(n) for j in range(m) for k in range(j + 1, m))
    assert graph.between_view_penalty(F) == pytest.approx(explicit, rel=1e-12)
    # the operator is I_n (x) M_m (x) I_P on the sample-major vector f = (f(x_1), ..., f(x_n))
    Mm = m * np.eye(m) - np.ones((m, m))
    MB = np.kron(np.eye(n), np.kron(Mm, np.eye(P)))
    f = F.transpose(1, 0, 2).ravel()  # index (i, p, k)
    got = graph.apply_between_view(F).transpose(1, 0, 2).ravel()
    np.testing.assert_allclose(got, MB @ f, rtol=1e-12, atol=1e-12)
    assert graph.between_view_penalty(F[:1]) == 0.0  # one view: M_1 = 0


def test_within_view_operator_and_penalty_eq_60_64():
    rng = np.random.default_rng(10)
    m, n, P = 3, 8, 2
    Ws = [_random_weights(n, seed=20 + p) for p in range(m)]
    L = np.stack([np.diag(W.sum(axis=1)) - W for W in Ws])
    F = rng.normal(size=(m, n, P))
    explicit = sum(Ws[p][j, k] * np.sum((F[p, j] - F[p, k]) ** 2)
                   for p in range(m) for j in range(n) for k in range(j + 1, n))
    assert graph.within_view_penalty(L, F) == pytest.approx(explicit, rel=1e-12)
    # the operator is L (x) I_P with L of eq (60), on the sample-major vector
    Lbig = np.zeros((n * m, n * m))
    for p in range(m):
        E = np.zeros((m, m))
        E[p, p] = 1.0
        Lbig += np.kron(L[p], E)
    got = graph.apply_within_view(L, F).transpose(1, 0, 2).ravel()
    np.testing.assert_allclose(got, np.kron(Lbig, np.eye(P)) @ F.transpose(1, 0, 2).ravel(), rtol=1e-12,
                               atol=1e-12)


def test_more_neighbours_than_other_samples_warns_and_builds_the_complete_graph():
    import warnings

    from mvl.exceptions import RegularizationWarning

    X = np.arange(6.0)[:, None]
    K = np.exp(-np.subtract.outer(X[:, 0], X[:, 0]) ** 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RegularizationWarning)
        complete = knn_weights(K, 5)  # n - 1 = 5 others: complete, as asked
        sparse_complete = sparse_knn_weights(ViewKernels([X], "rbf", [1.0]), 0, 5)
    with pytest.warns(RegularizationWarning, match=r"n_neighbors = 9 >= n = 6 samples of the graph"):
        np.testing.assert_array_equal(knn_weights(K, 9), complete)
    with pytest.warns(RegularizationWarning, match=r"n_neighbors = 6 >= n = 6"):
        assert (sparse_knn_weights(ViewKernels([X], "rbf", [1.0]), 0, 6) != sparse_complete).nnz == 0
