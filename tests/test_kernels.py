"""Kernels (mvl.kernels) against independent references: scikit-learn pairwise kernels, scipy distances and
numpy statistics."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.distance import cdist, pdist
from sklearn.metrics.pairwise import additive_chi2_kernel, rbf_kernel
from sklearn.metrics.pairwise import chi2_kernel as sk_chi2_kernel
from sklearn.preprocessing import StandardScaler

from mvl import kernels


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
    # the distances from inner products: equal to pdist's to rounding
    assert kernels.rbf_bandwidth(X) == pytest.approx(np.median(pdist(X)), rel=1e-13)


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


@pytest.mark.parametrize("shape", [(1, 3), (7, 2), (300, 40), (1100, 5)])
def test_squared_distances_match_direct_sums(shape, monkeypatch):
    """Inner-product distances against scipy's directly summed ones, with row blocks smaller than the matrix;
    exact symmetry, a zero diagonal and exact zeros between equal rows."""
    monkeypatch.setattr(kernels, "DISTANCE_BLOCK", 4096)
    rng = np.random.default_rng(shape[0])
    X = rng.normal(size=shape) * 3 + 5
    X = np.vstack([X, X[: max(1, shape[0] // 3)]])  # duplicated rows
    Y = rng.normal(size=(13, shape[1]))
    D = kernels.squared_distances(X)
    np.testing.assert_allclose(D, cdist(X, X, "sqeuclidean"), rtol=1e-12, atol=1e-12 * np.abs(X).max() ** 2)
    assert np.array_equal(D, D.T) and not np.diag(D).any()
    n0 = shape[0]
    assert not D[np.arange(X.shape[0] - n0), np.arange(n0, X.shape[0])].any()
    np.testing.assert_allclose(kernels.squared_distances(Y, X), cdist(Y, X, "sqeuclidean"), rtol=1e-12,
                               atol=1e-12 * np.abs(X).max() ** 2)
    d = kernels.pairwise_distances_condensed(X)
    np.testing.assert_allclose(d, pdist(X), rtol=1e-12, atol=1e-9)
    for rule in ("median", "mean") if shape[0] > 1 else ():  # one point and its copy: no distance to scale by
        assert kernels.rbf_bandwidth(X, rule, squared=D) == pytest.approx(
            np.median(pdist(X)) if rule == "median" else np.mean(pdist(X)), rel=1e-12)
