"""Sparse kNN graphs (mvl.graph) against the dense graph code; approximate (HNSW) neighbours against exact ones."""

from __future__ import annotations

import numpy as np
import pytest

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
