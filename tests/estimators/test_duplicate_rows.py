"""Copies of a sample count as one point in the kNN graphs (per view, the sparse graphs and the few-label terms'
self-tuned graph) and the induction rule: a dataset and its copy tiled with the extra copies unlabelled give the
same predictions. References: a kNN graph Laplacian of the distinct points written out in numpy, and the fit on
the distinct points."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from mvl import MVLLeastSquares, MVLSVM
from mvl.graph import kernel_copies, sparse_knn_weights, sparse_laplacian, view_laplacians
from mvl.kernel_blocks import ViewKernels
from mvl.selftuned_graph import selftuned_weights

VIEWS = [5, 4, 3]
CENTRES = np.random.default_rng(11).normal(size=(3, 12)) * 1.2


def blobs(n, seed):
    g = np.random.default_rng(seed)
    y = np.arange(n) % 3
    g.shuffle(y)
    return CENTRES[y] + g.normal(size=(n, 12)), y


def textbook_knn_laplacian(K, k):
    """I - D^-1/2 W D^-1/2 of the symmetrised kNN graph of K (edge weight K_ij), by loops."""
    n = len(K)
    W = np.zeros((n, n))
    for i in range(n):
        others = [j for j in np.argsort(-K[i], kind="stable") if j != i][:k]
        for j in others:
            W[i, j] = W[j, i] = K[i, j]
    d = W.sum(axis=1)
    return np.eye(n) - W / np.sqrt(np.outer(d, d))


def gaussian(X, sigma=2.0):
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    return np.exp(-D / (2 * sigma**2))


def test_kernel_copies_groups_equal_rows():
    X = blobs(20, 0)[0][:, :5]
    Xd = np.vstack([X, X[[3, 3, 7]]])
    keep, where = kernel_copies(gaussian(Xd))
    np.testing.assert_array_equal(keep, np.arange(20))
    np.testing.assert_array_equal(where, np.r_[np.arange(20), 3, 3, 7])
    assert kernel_copies(gaussian(X)) is None


def test_knn_laplacian_of_copies_is_that_of_the_distinct_points():
    """g^T L_d g = f^T L f for f equal on copies (f = g[where]), L_d the textbook graph of the distinct points;
    the dense (view_laplacians) and sparse (sparse_knn_weights) graphs alike."""
    X = blobs(40, 0)[0][:, :5]
    idx = np.r_[np.arange(40), np.arange(40), [5, 5, 9]]
    Xd = X[idx]
    Ld = textbook_knn_laplacian(gaussian(X), 5)
    L = view_laplacians(gaussian(Xd)[None], n_neighbors=5)[0]
    Ls = sparse_laplacian(sparse_knn_weights(ViewKernels([Xd], "rbf", [2.0], max_memory=0), 0, 5)).toarray()
    g = np.random.default_rng(1).normal(size=(40, 3))
    f = g[idx]
    want = np.einsum("ip,ij,jp->", g, Ld, g)
    assert np.einsum("ip,ij,jp->", f, L, f) == pytest.approx(want, rel=1e-10)
    assert np.einsum("ip,ij,jp->", f, Ls, f) == pytest.approx(want, rel=1e-10)
    np.testing.assert_allclose(L[np.ix_(np.arange(40), np.arange(40))], Ld, atol=1e-12)
    assert not L[40:].any() and not Ls[40:].any()


def test_selftuned_graph_of_copies_is_that_of_the_distinct_points():
    Z = blobs(50, 3)[0]
    idx = np.r_[np.arange(50), np.arange(50)]
    W = selftuned_weights(Z[idx], 10).toarray()
    Wd = selftuned_weights(Z, 10).toarray()
    np.testing.assert_allclose(W[:50, :50], Wd, atol=1e-14)
    assert not W[50:].any() and not W[:, 50:].any()


def _agreement(make, X, ys, Xt, yt, times=4):
    Xd = np.tile(X, (times, 1))
    yd = np.r_[ys, np.full((times - 1) * len(X), -1)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = make().fit(X, ys), make().fit(Xd, yd)
    return np.mean(a.predict(Xt) == b.predict(Xt)), a.score(Xt, yt), b.score(Xt, yt)


@pytest.mark.parametrize("kw", [dict(solver="structured"), dict(solver="cg"), dict(solver="graph"),
                                dict(solver="structured", loss="poisson"), dict(solver="vecchia", loss="poisson")])
def test_tiled_copies_give_the_fit_of_the_distinct_points(kw):
    X, y = blobs(150, 1)
    Xt, yt = blobs(300, 2)
    ys = np.where(np.arange(150) < (6 if kw.get("loss") == "poisson" else 30), y, -1)
    agree, acc, acc_tiled = _agreement(lambda: MVLLeastSquares(views=VIEWS, random_state=0, **kw), X, ys, Xt, yt)
    assert agree >= 0.99
    assert abs(acc - acc_tiled) <= 0.01


def test_svm_tiled_copies_give_the_fit_of_the_distinct_points():
    X, y = blobs(150, 1)
    Xt, yt = blobs(300, 2)
    ys = np.where(np.arange(150) < 30, y, -1)
    agree, acc, acc_tiled = _agreement(lambda: MVLSVM(views=VIEWS, n_neighbors=5), X, ys, Xt, yt)
    assert agree >= 0.99 and abs(acc - acc_tiled) <= 0.01


def test_vecchia_direct_refuses_copies_naming_the_fix():
    X, y = blobs(150, 1)
    ys = np.where(np.arange(150) < 30, y, -1)
    with pytest.raises(ValueError, match=r'view 0 has 150 copies.*solver="graph"'):
        MVLLeastSquares(views=VIEWS, solver="vecchia_direct").fit(np.tile(X, (2, 1)), np.r_[ys, np.full(150, -1)])


def test_auto_passes_vecchia_direct_over_for_copies_in_the_graph_regime():
    """solver="auto" where "vecchia_direct" would be the choice (the measured graph regime, the structured solve over
    the memory budget): on the points tiled twice (copies unlabelled) it takes the next ranked solver, "cg", with a
    GraphRegimeFallbackWarning naming the copies, and the fit is that of solver="cg" named; on the distinct points
    it keeps "vecchia_direct"."""
    from graph_regime_problem import graph_params, manifold_problem

    from mvl.solvers.auto import GraphRegimeFallbackWarning

    X, y, Xt = manifold_problem()
    Xd, yd = np.tile(X, (2, 1)), np.r_[y, np.full(len(y), -1)]
    kw = graph_params(1e-5, max_memory=3e6, loss="squared", max_iter=50, n_components=30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        distinct = MVLLeastSquares(**kw).fit(X, y)
    assert distinct.solver_ == "vecchia_direct" and distinct.regime_ >= 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        auto = MVLLeastSquares(**kw).fit(Xd, yd)
    fallback = [str(w.message) for w in caught if issubclass(w.category, GraphRegimeFallbackWarning)]
    assert auto.solver_ == "cg"
    assert len(fallback) == 1 and "exact copies" in fallback[0] and 'falling back to "cg"' in fallback[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        named = MVLLeastSquares(**kw, solver="cg").fit(Xd, yd)
    np.testing.assert_allclose(auto.decision_function(Xt), named.decision_function(Xt), rtol=1e-10, atol=1e-12)
