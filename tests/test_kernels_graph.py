"""Kernels (mvl.kernels) and graph operators (mvl.graph) against independent references:
scikit-learn pairwise kernels, scipy distances and csgraph, and the quadratic-form identities
of Section 4.2 (eq 55-58, 61-64) written out as explicit sums."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse import csgraph
from scipy.spatial.distance import pdist
from sklearn.metrics.pairwise import additive_chi2_kernel, rbf_kernel
from sklearn.metrics.pairwise import chi2_kernel as sk_chi2_kernel
from sklearn.preprocessing import StandardScaler

from mvl import graph, kernels

# ---------------------------------------------------------------- kernels


@pytest.fixture
def features():
    rng = np.random.default_rng(3)
    return rng.normal(size=(25, 4)) * [1.0, 3.0, 0.5, 2.0], rng.normal(size=(9, 4))


@pytest.mark.parametrize("bandwidth", ["median", "mean"])
def test_gaussian_kernel_matches_sklearn_rbf_with_training_bandwidth(features, bandwidth):
    X, X_test = features
    d = pdist(X)
    sigma = np.median(d) if bandwidth == "median" else np.mean(d)
    K, K_test = kernels.rbf_kernel(X, X_test, bandwidth=bandwidth)
    np.testing.assert_allclose(K, rbf_kernel(X, gamma=1 / (2 * sigma**2)), rtol=1e-12, atol=1e-14)
    g = 1 / (2 * sigma**2)
    np.testing.assert_allclose(K_test, rbf_kernel(X_test, X, gamma=g), rtol=1e-12, atol=1e-14)
    assert K_test.shape == (X_test.shape[0], X.shape[0])


@pytest.mark.parametrize("size", [1, 2, 3, 4, 101, 1000])
def test_median_inplace_is_numpy_median_bit_for_bit(size):
    rng = np.random.default_rng(size)
    d = np.round(rng.exponential(size=size), 1)  # ties
    assert kernels.median_inplace(d.copy()) == np.median(d)
    X = rng.normal(size=(size + 1, 3))
    assert kernels.rbf_bandwidth(X) == np.median(pdist(X))


def test_gaussian_bandwidth_ignores_test_points(features):
    X, X_test = features
    K_alone, none = kernels.rbf_kernel(X)
    assert none is None
    K1, Kt1 = kernels.rbf_kernel(X, X_test)
    # test points 50x further away: would change any bandwidth that looked at them
    K2, Kt2 = kernels.rbf_kernel(X, 50 * X_test + 10)
    np.testing.assert_array_equal(K1, K_alone)
    np.testing.assert_array_equal(K1, K2)
    sigma = np.median(pdist(X))
    np.testing.assert_allclose(Kt2, rbf_kernel(50 * X_test + 10, X, gamma=1 / (2 * sigma**2)), rtol=1e-12,
                               atol=1e-300)
    assert not np.allclose(Kt1, Kt2)


def test_gaussian_fixed_bandwidth_and_standardisation(features):
    X, X_test = features
    K, K_test = kernels.rbf_kernel(X, X_test, bandwidth=1.7)
    np.testing.assert_allclose(K_test, rbf_kernel(X_test, X, gamma=1 / (2 * 1.7**2)), rtol=1e-12)
    sc = StandardScaler().fit(X)
    Xs, Xts = sc.transform(X), sc.transform(X_test)
    sigma = np.median(pdist(Xs))
    K, K_test = kernels.rbf_kernel(X, X_test, standardize_features=True)
    np.testing.assert_allclose(K, rbf_kernel(Xs, gamma=1 / (2 * sigma**2)), rtol=1e-10)
    np.testing.assert_allclose(K_test, rbf_kernel(Xts, Xs, gamma=1 / (2 * sigma**2)), rtol=1e-10)


def test_standardize_uses_training_statistics_and_keeps_constant_features():
    rng = np.random.default_rng(11)
    X = np.column_stack([rng.normal(3.0, 2.0, size=20), np.full(20, 7.0)])
    X_test = rng.normal(size=(5, 2))
    Xs, Xts = kernels.standardize(X, X_test)
    np.testing.assert_allclose(Xs[:, 0], (X[:, 0] - X[:, 0].mean()) / X[:, 0].std(), rtol=1e-12)
    np.testing.assert_array_equal(Xs[:, 1], 0.0)  # constant feature: centred, scale 1
    np.testing.assert_allclose(Xts[:, 0], (X_test[:, 0] - X[:, 0].mean()) / X[:, 0].std(), rtol=1e-12)
    np.testing.assert_allclose(Xts[:, 1], X_test[:, 1] - 7.0, rtol=1e-12)


def test_chi2_kernel_matches_sklearn_on_histograms():
    rng = np.random.default_rng(4)
    H = rng.dirichlet(np.ones(6), size=12)
    H_test = rng.dirichlet(np.ones(6), size=5)
    # chi2 distance sum (x-y)^2/(x+y) = -additive_chi2_kernel
    D = -additive_chi2_kernel(H)
    D = 0.5 * (D + D.T)
    D[np.diag_indices_from(D)] = 0.0
    D_test = -additive_chi2_kernel(H_test, H)
    K, K_test = kernels.chi2_kernel(D, D_test)
    scale = D.mean()  # all n*n entries, diagonal included
    np.testing.assert_allclose(K, sk_chi2_kernel(H, gamma=1 / scale), rtol=1e-10)
    np.testing.assert_allclose(K_test, sk_chi2_kernel(H_test, H, gamma=1 / scale), rtol=1e-10)
    np.testing.assert_allclose(np.diag(K), 1.0)
    K_only, none = kernels.chi2_kernel(D)
    assert none is None
    np.testing.assert_array_equal(K_only, K)


def test_chi2_kernel_rejects_bad_distances():
    with pytest.raises(ValueError, match="negative"):
        kernels.chi2_kernel(-np.ones((3, 3)))
    with pytest.raises(ValueError, match="square"):
        kernels.chi2_kernel(np.ones((3, 4)))
    with pytest.raises(ValueError, match="identically zero"):
        kernels.chi2_kernel(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="D_test"):
        kernels.chi2_kernel(np.ones((3, 3)), np.ones((2, 4)))


def test_linear_kernel(features):
    X, X_test = features
    K, K_test = kernels.linear_kernel(X, X_test)
    np.testing.assert_allclose(K, np.einsum("id,jd->ij", X, X), rtol=1e-12)
    np.testing.assert_allclose(K_test, np.einsum("id,jd->ij", X_test, X), rtol=1e-12)


def test_multiview_kernels_stack_standardised_gaussians():
    rng = np.random.default_rng(5)
    views = [rng.normal(size=(15, d)) * rng.uniform(0.1, 10, size=d) for d in (2, 5, 3)]
    views_test = [rng.normal(size=(4, v.shape[1])) for v in views]
    K, K_test = kernels.multiview_kernels(views, views_test)
    # sample-first, as the estimators' kernel="precomputed" input: (n, n, m) and (t, n, m)
    assert K.shape == (15, 15, 3) and K_test.shape == (4, 15, 3)
    for p, (X, Xt) in enumerate(zip(views, views_test, strict=True)):
        sc = StandardScaler().fit(X)
        Xs, Xts = sc.transform(X), sc.transform(Xt)
        g = 1 / (2 * np.median(pdist(Xs)) ** 2)
        np.testing.assert_allclose(K[:, :, p], rbf_kernel(Xs, gamma=g), rtol=1e-10)
        np.testing.assert_allclose(K_test[:, :, p], rbf_kernel(Xts, Xs, gamma=g), rtol=1e-10)
    K_only, none = kernels.multiview_kernels(views)
    assert none is None
    np.testing.assert_array_equal(K_only, K)
    # the output goes straight into an estimator
    from mvl import MVLLeastSquares

    y = np.where(np.arange(15) % 3 == 2, -1, np.arange(15) % 3)  # two classes, every third sample unlabelled
    model = MVLLeastSquares(gamma_A=0.1, kernel="precomputed").fit(K, y)
    assert model.n_views_ == 3 and model.decision_function(K_test).shape == (4,)
    with pytest.raises(ValueError, match="different numbers of samples"):
        kernels.multiview_kernels([views[0], views[1][:-1]])
    with pytest.raises(ValueError, match="kernel must be one of"):
        kernels.multiview_kernels(views, kernel="poly")


def test_gaussian_kernel_rejects_bad_input(features):
    X, X_test = features
    with pytest.raises(ValueError, match="features"):
        kernels.rbf_kernel(X, X_test[:, :2])
    with pytest.raises(ValueError, match="NaN or inf"):
        kernels.rbf_kernel(np.array([[0.0, np.nan], [1.0, 2.0]]))
    with pytest.raises(ValueError, match="bandwidth"):
        kernels.rbf_kernel(np.ones((4, 2)))  # all points equal: median distance 0
    with pytest.raises(ValueError, match="bandwidth"):
        kernels.rbf_kernel(X, bandwidth="silverman")


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
