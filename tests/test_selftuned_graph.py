"""Poisson learning's graph (mvl.selftuned_graph): graphlearning's self-tuned weights, the distance form, the
summed kernels' distance and the induction rule at training points."""

from __future__ import annotations

import numpy as np
import pytest

from mvl.selftuned_graph import GraphSpace, kernel_distances, knn_induction, selftuned_weights, unnormalized_laplacian


def _points(n=40, seed=0):
    return np.random.default_rng(seed).normal(size=(n, 4))


def test_weights_are_graphlearnings():
    gl = pytest.importorskip("graphlearning")
    from sklearn.neighbors import NearestNeighbors

    Z = _points()
    dist, ind = NearestNeighbors(n_neighbors=10).fit(Z).kneighbors(Z)
    ref = gl.weightmatrix.knn(None, 10, knn_data=(ind, dist))
    np.testing.assert_allclose(selftuned_weights(Z, 10).toarray(), ref.toarray(), rtol=1e-12, atol=1e-15)


def test_distance_form_equals_the_point_form():
    Z = _points(seed=1)
    D = np.sqrt(((Z[:, None] - Z[None]) ** 2).sum(-1))
    np.testing.assert_allclose(selftuned_weights(None, 7, distances=D).toarray(), selftuned_weights(Z, 7).toarray(),
                               rtol=1e-10, atol=1e-14)


def test_kernel_distances_of_linear_kernels_are_the_concatenation():
    Z = _points(seed=2)
    K = np.stack([Z[:, :2] @ Z[:, :2].T, Z[:, 2:] @ Z[:, 2:].T])
    D = np.sqrt(((Z[:, None] - Z[None]) ** 2).sum(-1))
    np.testing.assert_allclose(kernel_distances(K), D, atol=1e-7)


def test_laplacian_has_the_constants_in_its_null_space():
    L, d = unnormalized_laplacian(selftuned_weights(_points(seed=3), 10))
    np.testing.assert_allclose(L @ np.ones(L.shape[0]), 0.0, atol=1e-12)
    assert np.all(d > 0)


def test_space_standardises_with_the_training_columns():
    views = [_points(seed=4)[:, :3] * 5 + 2, np.ones((40, 1))]
    space = GraphSpace(views)
    Z = space.transform(views)
    np.testing.assert_allclose(Z[:, :3].mean(0), 0.0, atol=1e-12)
    np.testing.assert_allclose(Z[:, :3].std(0), 1.0)
    np.testing.assert_array_equal(Z[:, 3], 0.0)  # a constant column stays zero


def test_induction_at_a_training_point_returns_its_output():
    Z = _points(seed=5)
    F = np.random.default_rng(6).normal(size=(40, 3))
    np.testing.assert_allclose(knn_induction(Z, F, Z[:7]), F[:7])
    out = knn_induction(Z, F, Z[:3] + 0.01)
    assert out.shape == (3, 3) and np.all(np.isfinite(out))


def _brute_induction(Z_train, F, Z_new, k):
    """The induction rule by sorted brute-force distances (numpy only)."""
    d = np.sqrt(np.sum((Z_new[:, None, :] - Z_train[None, :, :]) ** 2, axis=-1))
    ind = np.argsort(d, axis=1, kind="stable")[:, :k]
    dist = np.take_along_axis(d, ind, axis=1)
    w = np.exp(-4.0 * dist**2 / dist[:, -1:] ** 2)
    return np.einsum("tk,tkp->tp", w, F[ind]) / w.sum(axis=1, keepdims=True)


def test_induction_from_the_graphs_search_is_the_brute_force_rule():
    rng = np.random.default_rng(5)
    Z = rng.standard_normal((50, 3))
    F = rng.standard_normal((50, 4))
    Z_new = rng.standard_normal((7, 3))
    _, search = selftuned_weights(Z_new, 5, return_search=True)
    # the search of Z_new among themselves stands for a search of Z_new in the training set Z_new
    np.testing.assert_allclose(knn_induction(Z_new, F[:7], Z_new, 5, search=search), F[:7], rtol=0, atol=0)
    np.testing.assert_allclose(knn_induction(Z, F, Z_new, 5), _brute_induction(Z, F, Z_new, 5), rtol=1e-12)


def test_predicting_the_training_points_reuses_the_graph_search():
    from mvl import MVLLeastSquares

    rng = np.random.default_rng(6)
    X = rng.standard_normal((60, 4)) + np.repeat(np.eye(3, 4) * 3, 20, axis=0)
    y = np.full(60, -1)
    y[[0, 20, 40]] = [0, 1, 2]
    est = MVLLeastSquares(views=[2, 2], loss="poisson").fit(X, y)
    rule = est._rule
    assert rule is not None and rule.search is not None
    F = rule.outputs
    Z = rule.points
    d = np.sqrt(np.sum((Z[:, None] - Z[None]) ** 2, axis=-1))
    assert np.all(np.sort(d, axis=1)[:, 1] > 0)  # distinct points: each is its own nearest at distance 0
    np.testing.assert_allclose(est.decision_function(X), rule.decision_rule.scores(F), rtol=1e-12, atol=1e-14)
    X_new = X[:5] + 0.1
    ref = rule.decision_rule.scores(_brute_induction(Z, F, rule.space.transform([X_new[:, :2], X_new[:, 2:]]), 10))
    np.testing.assert_allclose(est.decision_function(X_new), ref, rtol=1e-10, atol=1e-12)
