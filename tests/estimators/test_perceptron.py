"""Multi-view perceptrons (Fornoni 2009; Cavallanti, Cesa-Bianchi & Gentile 2008) against references.

* primal forms written here in weight space with explicit view vectors: the matrix Perceptron of thesis
  Figure 3.1 with W = grad Phi(V) = ||V||_{S_2p}^{2(1-p)} V (V^T V)^{p-1} (eq 3.1.4), and the orthogonal one
  as the same matrix algorithm on block-embedded instances (eq 4.1.1); the average hypothesis
  1/T sum_t W_{t-1} (eq 3.1.21) accumulated directly -- the package runs the dual (kernel) form only;
* the mistake bound of Theorem 3.1.3 (eq 3.1.6) on linearly separable multi-view data, with the margin
  normalisation, the radius max_t ||X_t||_{S_2p} and ||U||_{S_2q} computed here from singular values.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import rel_diff, sample_first
from sklearn.exceptions import NotFittedError

from mvl.estimators.perceptron import (
    KernelMultiViewPerceptron,
    OrthogonalMultiViewPerceptron,
    cross_view_kernels,
)

# ---------------------------------------------------------------- primal references (numpy only)


def _grad_potential(V, p):
    """grad 1/2 ||V||_{S_2p}^2 = ||V||_{S_2p}^{2(1-p)} V (V^T V)^{p-1}, from the SVD of V."""
    U, s, Vt = np.linalg.svd(V, full_matrices=False)
    if s.max() == 0:
        return np.zeros_like(V)
    norm2 = np.sum(s ** (2 * p)) ** (1 / p)
    return norm2 ** (1 - p) * (U * s ** (2 * p - 1)) @ Vt


def _primal_matrix_perceptron(Xs, y, order, p, averaging):
    """Xs: (n, d, K) instance matrices; y in +-1. Returns mistakes and the final (average) weight."""
    V = np.zeros(Xs.shape[1:])
    W = np.zeros_like(V)
    W_sum = np.zeros_like(V)
    mistakes = 0
    for i in order:
        W_sum += W  # W_{t-1}
        if y[i] * np.sum(W * Xs[i]) <= 0:
            mistakes += 1
            V = V + y[i] * Xs[i]
            W = _grad_potential(V, p)
    return mistakes, (W_sum / len(order) if averaging else W)


def _embed(views_i):
    """Orthogonal instance matrix (4.1.1): view k in rows D_k of column k."""
    dims = [v.shape[0] for v in views_i]
    X = np.zeros((sum(dims), len(dims)))
    o = np.concatenate([[0], np.cumsum(dims)])
    for k, v in enumerate(views_i):
        X[o[k]:o[k + 1], k] = v
    return X


def _same_space_views(n, d, m, t, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, n, d))
    Xt = rng.normal(size=(m, t, d))
    U = rng.normal(size=(m, d))
    score = np.einsum("knd,kd->n", X, U) + 0.3 * np.einsum("knd,kd->n", X, U[::-1])
    return X, Xt, score


def _linear_matrix_kernel(X, Xt):
    """G[k, j] = X_k X_j^T (m, m, n, n) and G_test[k, j] = Xt_k X_j^T, by hand."""
    G = np.einsum("kad,jbd->kjab", X, X)
    Gt = np.einsum("ksd,jbd->kjsb", Xt, X)
    return G, Gt


def _cross_first(G):
    """Per-view-pair matrix kernels (m, m, n, n) / (m, m, t, n) -> the estimators' sample-first (n, n, m, m) /
    (t, n, m, m), X[a, b, k, j] = G[k, j][a, b]."""
    return np.ascontiguousarray(np.asarray(G).transpose(2, 3, 0, 1))


# ---------------------------------------------------------------- dual = primal


@pytest.mark.parametrize("p", [1.0, 2.0, 3.5])
@pytest.mark.parametrize("averaging", [True, False])
def test_matrix_perceptron_dual_equals_primal(p, averaging):
    X, Xt, score = _same_space_views(n=40, d=5, m=3, t=9, seed=int(10 * p))
    y = (score > 0).astype(int)
    G, Gt = _linear_matrix_kernel(X, Xt)
    model = KernelMultiViewPerceptron(kernel="precomputed", p=p, n_epochs=3, averaging=averaging,
                                      random_state=7).fit(_cross_first(G), y)
    Xs = X.transpose(1, 2, 0)  # (n, d, m): X_t = [x_{t,1}, ..., x_{t,m}]
    ypm = np.where(y == 1, 1.0, -1.0)
    mistakes, W = _primal_matrix_perceptron(Xs, ypm, model.order_, p, averaging)
    assert model.mistakes_.tolist() == [mistakes]
    ref = np.einsum("dk,ktd->t", W, Xt)
    assert rel_diff(model.decision_function(_cross_first(Gt)), ref) < 1e-10
    np.testing.assert_array_equal(model.predict(_cross_first(Gt)), (ref > 0).astype(int))


def test_matrix_perceptron_one_vs_all_equals_primal():
    X, Xt, score = _same_space_views(n=45, d=4, m=2, t=8, seed=3)
    y = np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))  # 3 classes
    G, Gt = _linear_matrix_kernel(X, Xt)
    model = KernelMultiViewPerceptron(kernel="precomputed", p=2.0, n_epochs=2, random_state=1).fit(_cross_first(G), y)
    Xs = X.transpose(1, 2, 0)
    ref, mist = [], []
    for c in range(3):
        mc, W = _primal_matrix_perceptron(Xs, np.where(y == c, 1.0, -1.0), model.order_, 2.0, True)
        mist.append(mc)
        ref.append(np.einsum("dk,ktd->t", W, Xt))
    ref = np.stack(ref, axis=1)
    assert model.mistakes_.tolist() == mist
    assert rel_diff(model.decision_function(_cross_first(Gt)), ref) < 1e-10
    np.testing.assert_array_equal(model.predict(_cross_first(Gt)), np.argmax(ref, axis=1))


@pytest.mark.parametrize("p", [1.0, 2.5])
def test_orthogonal_perceptron_dual_equals_primal(p):
    rng = np.random.default_rng(5)
    dims = [3, 6, 2]  # views of different spaces
    n, t = 36, 7
    views = [rng.normal(size=(n, d)) for d in dims]
    views_t = [rng.normal(size=(t, d)) for d in dims]
    score = sum(v @ rng.normal(size=v.shape[1]) for v in views)
    y = (score > 0).astype(int)
    K = np.stack([v @ v.T for v in views])
    Kt = np.stack([vt @ v.T for v, vt in zip(views, views_t, strict=True)])
    model = OrthogonalMultiViewPerceptron(kernel="precomputed", p=p, n_epochs=4, random_state=2).fit(sample_first(K), y)
    Xs = np.stack([_embed([v[i] for v in views]) for i in range(n)])
    Xts = np.stack([_embed([v[s] for v in views_t]) for s in range(t)])
    mistakes, W = _primal_matrix_perceptron(Xs, np.where(y == 1, 1.0, -1.0), model.order_, p, True)
    assert model.mistakes_.tolist() == [mistakes]
    ref = np.einsum("Dk,tDk->t", W, Xts)
    assert rel_diff(model.decision_function(sample_first(Kt)), ref) < 1e-10
    # the matrix Perceptron given per-view kernels (zero cross-view kernels) is the same algorithm (4.1.7)
    mmp = KernelMultiViewPerceptron(kernel="precomputed", p=p, n_epochs=4, random_state=2).fit(sample_first(K), y)
    assert mmp.mistakes_.tolist() == [mistakes]
    assert rel_diff(mmp.decision_function(sample_first(Kt)), ref) < 1e-10


def test_orthogonal_prediction_rule_4_1_6():
    # the online predictions of Figure 4.1: sign sum_k ||v_k||^{2(p-1)} <v_k, x_k> (no normalisation)
    rng = np.random.default_rng(11)
    dims, n, p = [4, 2, 5], 30, 3.0
    views = [rng.normal(size=(n, d)) for d in dims]
    y = (sum(v @ rng.normal(size=v.shape[1]) for v in views) > 0).astype(int)
    K = np.stack([v @ v.T for v in views])
    model = OrthogonalMultiViewPerceptron(kernel="precomputed", p=p, n_epochs=2, random_state=0).fit(sample_first(K), y)
    vs = [np.zeros(d) for d in dims]
    mistakes = 0
    for i in model.order_:
        yi = 1.0 if y[i] == 1 else -1.0
        s = sum(np.dot(v, v) ** (p - 1) * np.dot(v, x[i]) for v, x in zip(vs, views, strict=True))
        if yi * s <= 0:
            mistakes += 1
            vs = [v + yi * x[i] for v, x in zip(vs, views, strict=True)]
    assert model.mistakes_.tolist() == [mistakes]


def test_matrix_perceptron_with_zero_cross_view_kernels_is_orthogonal():
    # eq (4.1.7): with block-embedded instances the matrix Perceptron is the orthogonal one
    X, Xt, score = _same_space_views(n=30, d=4, m=3, t=6, seed=8)
    y = (score > 0).astype(int)
    G, Gt = _linear_matrix_kernel(X, Xt)
    mask = np.eye(3)[:, :, None, None]
    a = KernelMultiViewPerceptron(kernel="precomputed", p=2.0, n_epochs=3,
                                  random_state=4).fit(_cross_first(G * mask), y)
    b = OrthogonalMultiViewPerceptron(kernel="precomputed", p=2.0, n_epochs=3,
                                      random_state=4).fit(sample_first(np.stack([G[k, k] for k in range(3)])), y)
    Kt = np.stack([Gt[k, k] for k in range(3)])
    assert a.mistakes_.tolist() == b.mistakes_.tolist()
    assert rel_diff(a.decision_function(_cross_first(Gt * mask)), b.decision_function(sample_first(Kt))) < 1e-12
    assert a.coef_.shape == (30, 1, 3, 3) and b.coef_.shape == (30, 1, 3)


# ---------------------------------------------------------------- mistake bound (Theorem 3.1.3)


def _separable_views(n, dims, seed, gamma=0.3):
    """Each view separable on its own: y <u_k, x_k> >= gamma ||u_k|| for every k."""
    rng = np.random.default_rng(seed)
    y = rng.choice([-1.0, 1.0], size=n)
    views, us = [], []
    for d in dims:
        u = rng.normal(size=d)
        u /= np.linalg.norm(u)
        x = rng.normal(size=(n, d))
        x -= np.outer(x @ u, u)
        x += np.outer(y * (gamma + rng.exponential(0.5, size=n)), u)
        views.append(x)
        us.append(u)
    return views, us, y


def _schatten(M, r):
    return float(np.sum(np.linalg.svd(M, compute_uv=False) ** r) ** (1 / r))


@pytest.mark.parametrize("p", [1.0, 2.0, 3.0])
def test_matrix_perceptron_mistakes_respect_bound(p):
    views, us, ypm = _separable_views(n=60, dims=[5, 5, 5], seed=int(p), gamma=0.3)
    m = len(views)
    X = np.stack(views)  # (m, n, d)
    # comparison matrix U = [u_1, ..., u_K], scaled so that min_{t,k} y_t <u_k, x_{t,k}> = 1 (hinge loss 0)
    margins = np.stack([ypm * (views[k] @ us[k]) for k in range(m)])
    Umat = np.column_stack(us) / margins.min()
    q2 = 2 * p / (2 * p - 1)  # 1/(2p) + 1/(2q) = 1
    radius = max(_schatten(X[:, i, :].T, 2 * p) for i in range(X.shape[1]))
    bound = (2 * p - 1) * (radius * _schatten(Umat, q2) / m) ** 2  # eq (3.1.6) with L_n(U) = 0
    G, _ = _linear_matrix_kernel(X, X[:, :1])
    y = (ypm > 0).astype(int)
    model = KernelMultiViewPerceptron(kernel="precomputed", p=p, n_epochs=8, random_state=0).fit(_cross_first(G), y)
    assert 0 < model.mistakes_[0] <= bound


@pytest.mark.parametrize("p", [1.0, 2.0])
def test_orthogonal_perceptron_mistakes_respect_bound(p):
    # the orthogonal Perceptron is the matrix one on embedded instances, whose singular values are ||x_{t,k}||
    views, us, ypm = _separable_views(n=60, dims=[3, 7, 4], seed=10 + int(p), gamma=0.4)
    m = len(views)
    margins = np.stack([ypm * (views[k] @ us[k]) for k in range(m)])
    scale = 1.0 / margins.min()
    q2 = 2 * p / (2 * p - 1)
    radius = max(_schatten(_embed([v[i] for v in views]), 2 * p) for i in range(60))
    u_norm = _schatten(_embed([scale * u for u in us]), q2)
    bound = (2 * p - 1) * (radius * u_norm / m) ** 2
    K = np.stack([v @ v.T for v in views])
    model = OrthogonalMultiViewPerceptron(kernel="precomputed", p=p, n_epochs=8,
                                          random_state=3).fit(sample_first(K), (ypm > 0).astype(int))
    assert 0 < model.mistakes_[0] <= bound


def test_separable_training_set_is_learned():
    views, us, ypm = _separable_views(n=50, dims=[4, 4], seed=21, gamma=0.5)
    K = np.stack([v @ v.T for v in views])
    y = (ypm > 0).astype(int)
    model = OrthogonalMultiViewPerceptron(kernel="precomputed", p=1.0, n_epochs=30, averaging=False,
                                          random_state=0).fit(sample_first(K), y)
    assert model.score(sample_first(K), y) == 1.0  # perceptron convergence: the last hypothesis separates


# ---------------------------------------------------------------- order, labels, kernels


def test_sample_order_is_seeded_per_epoch():
    X, Xt, score = _same_space_views(n=20, d=3, m=2, t=3, seed=1)
    y = (score > 0).astype(int)
    K = np.stack([X[k] @ X[k].T for k in range(2)])
    X = sample_first(K)
    a = OrthogonalMultiViewPerceptron(kernel="precomputed", n_epochs=3, random_state=5).fit(X, y)
    b = OrthogonalMultiViewPerceptron(kernel="precomputed", n_epochs=3, random_state=5).fit(X, y)
    c = OrthogonalMultiViewPerceptron(kernel="precomputed", n_epochs=3, random_state=6).fit(X, y)
    d = OrthogonalMultiViewPerceptron(kernel="precomputed", n_epochs=2, shuffle=False).fit(X, y)
    np.testing.assert_array_equal(a.order_, b.order_)
    assert not np.array_equal(a.order_, c.order_)
    for e in range(3):
        assert sorted(a.order_[20 * e:20 * (e + 1)].tolist()) == list(range(20))
    assert not np.array_equal(a.order_[:20], a.order_[20:40])
    np.testing.assert_array_equal(d.order_, np.tile(np.arange(20), 2))
    assert a.n_steps_ == 60


def test_minus_one_is_an_ordinary_class():
    """The perceptrons are supervised: -1 is a class like any other (as in scikit-learn's supervised
    classifiers), so labels {-1, 1} are the same problem as {0, 1}."""
    X, Xt, score = _same_space_views(n=24, d=3, m=2, t=5, seed=2)
    y = (score > 0).astype(int)
    K = sample_first(np.stack([X[k] @ X[k].T for k in range(2)]))
    Kt = sample_first(np.stack([Xt[k] @ X[k].T for k in range(2)]))
    for cls in (OrthogonalMultiViewPerceptron, KernelMultiViewPerceptron):
        a = cls(kernel="precomputed", p=2.0, n_epochs=2, shuffle=False).fit(K, y)
        b = cls(kernel="precomputed", p=2.0, n_epochs=2, shuffle=False).fit(K, 2 * y - 1)
        np.testing.assert_array_equal(b.classes_, [-1, 1])
        np.testing.assert_array_equal(b.order_, np.tile(np.arange(24), 2))  # every sample used
        np.testing.assert_array_equal(b.decision_function(Kt), a.decision_function(Kt))
        np.testing.assert_array_equal(b.predict(Kt), 2 * a.predict(Kt) - 1)
        assert b.score(Kt, 2 * (b.decision_function(Kt) > 0) - 1) == 1.0  # -1 scored, not skipped


def test_cross_view_kernels_match_definition():
    rng = np.random.default_rng(0)
    views = [rng.normal(size=(6, 3)) for _ in range(3)]
    views_t = [rng.normal(size=(4, 3)) for _ in range(3)]
    G, Gt = cross_view_kernels(views, views_t, kernel="linear")  # sample-first (n, n, m, m), (t, n, m, m)
    assert G.shape == (6, 6, 3, 3) and Gt.shape == (4, 6, 3, 3)
    for k in range(3):
        for j in range(3):
            np.testing.assert_allclose(G[:, :, k, j], views[k] @ views[j].T, rtol=1e-12)
            np.testing.assert_allclose(Gt[:, :, k, j], views_t[k] @ views[j].T, rtol=1e-12)
    G, Gt = cross_view_kernels(views, views_t, kernel="gaussian", bandwidth=1.3)
    d2 = np.sum((views[0][2] - views[2][4]) ** 2)
    assert G[2, 4, 0, 2] == pytest.approx(np.exp(-d2 / (2 * 1.3**2)))
    assert np.linalg.eigvalsh(G.transpose(2, 0, 3, 1).reshape(18, 18)).min() > -1e-10  # one PSD kernel


def test_bad_input_raises_clear_errors():
    X, Xt, score = _same_space_views(n=10, d=3, m=2, t=3, seed=4)
    y = (score > 0).astype(int)
    G, Gt = _linear_matrix_kernel(X, Xt)
    K = np.stack([G[k, k] for k in range(2)])
    for params, word in [(dict(p=0.5), "'p' parameter of"), (dict(p="x"), "'p' parameter of"),
                         (dict(n_epochs=0), "n_epochs"), (dict(averaging=1), "averaging"),
                         (dict(shuffle="no"), "shuffle")]:
        with pytest.raises(ValueError, match=word):
            KernelMultiViewPerceptron(kernel="precomputed", **params).fit(_cross_first(G), y)
    with pytest.raises(ValueError, match="not symmetric"):
        Gb = G.copy()
        Gb[0, 1] += 1.0
        KernelMultiViewPerceptron(kernel="precomputed").fit(_cross_first(Gb), y)
    with pytest.raises(ValueError, match=r"must have shape \(n, n, m, m\)"):
        KernelMultiViewPerceptron(kernel="precomputed").fit(_cross_first(G[:, :1]), y)
    with pytest.raises(ValueError, match="entries"):
        OrthogonalMultiViewPerceptron(kernel="precomputed").fit(sample_first(K), y[:-1])
    with pytest.raises(ValueError, match="one class only"):
        OrthogonalMultiViewPerceptron(kernel="precomputed").fit(sample_first(K), np.ones(10, dtype=int))
    with pytest.raises(NotFittedError, match="not fitted"):
        OrthogonalMultiViewPerceptron(kernel="precomputed").decision_function(sample_first(K))
    model = KernelMultiViewPerceptron(kernel="precomputed").fit(_cross_first(G), y)
    with pytest.raises(ValueError, match="X has 9 features, but KernelMultiViewPerceptron is expecting 10"):
        model.decision_function(_cross_first(Gt[:, :, :, :-1]))  # too few training columns
    with pytest.raises(ValueError, match=r"\(t, 10, 2, 2\), got \(3, 10, 1\)"):  # per-view kernels of one view
        model.decision_function(sample_first(Gt[0, :1]))
    with pytest.raises(ValueError, match="one shape"):
        cross_view_kernels([np.ones((4, 2)), np.ones((4, 3))])
    with pytest.raises(ValueError, match="kernel"):
        cross_view_kernels([np.ones((4, 2))], kernel="rbf")
