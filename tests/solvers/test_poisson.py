"""The Poisson-type data term (mvl.solvers.poisson): the structured solver against the dense textbook system, and
its limit gamma_A -> 0 on one view against graphlearning's Poisson learning on the same graph."""

from __future__ import annotations

import numpy as np
import pytest

from mvl.solvers.poisson import PoissonOperator, fit_decision, graph_degrees, solve_dense, solve_structured


def _graphlearning():
    try:
        import graphlearning
    except ImportError:
        pytest.fail("graphlearning is not installed: pip install 'mvl[test]' (or graphlearning==1.7.5)")
    return graphlearning


def _gram(X, scale):
    sq = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    return np.exp(-sq / (2 * scale**2))


def _knn_laplacian(K, k):
    """D - W of the symmetrised k-NN graph with kernel weights, plain numpy."""
    n = len(K)
    S = K - 2 * np.eye(n)  # never one's own neighbour
    nb = np.argsort(-S, axis=1)[:, :k]
    mask = np.zeros((n, n), dtype=bool)
    mask[np.repeat(np.arange(n), k), nb.ravel()] = True
    W = np.where(mask | mask.T, K, 0.0)
    return np.diag(W.sum(axis=1)) - W


def _problem(m, n=24, P=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, n, 3))
    K = np.stack([_gram(x, rng.uniform(1.0, 2.0)) for x in X])
    L = np.stack([_knn_laplacian(k, 4) for k in K])
    labelled = np.sort(rng.choice(n, 7, replace=False))
    Y = 2 * np.eye(P)[rng.integers(0, P, 7)] - 1  # the +-1 coding of Section 5.1
    c = rng.uniform(0.2, 1.0, m)
    return K, L, labelled, Y, c


@pytest.mark.parametrize("loss", ["poisson", "squared+poisson"])
@pytest.mark.parametrize("gamma_B", [0.0, 3e-2])
@pytest.mark.parametrize("m", [1, 2, 4])
def test_structured_solves_the_dense_system(m, gamma_B, loss):
    K, L, labelled, Y, c = _problem(m, seed=m)
    args = (K, labelled, Y, c, 1e-3, gamma_B, 1e-1, L)
    A = solve_structured(*args, loss=loss)
    ref = solve_dense(*args, loss=loss)
    assert A.shape == ref.shape == (m, 24, 3)
    np.testing.assert_allclose(A, ref, rtol=0, atol=1e-9 * np.abs(ref).max())


def test_one_factorisation_serves_every_labelled_set():
    K, L, _, _, c = _problem(3, seed=5)
    op = PoissonOperator(K, c, 1e-3, 1e-2, 1e-1, L)
    rng = np.random.default_rng(1)
    for l in (3, 9):
        labelled = np.sort(rng.choice(24, l, replace=False))
        Y = np.eye(3)[rng.integers(0, 3, l)]
        S = np.zeros((24, 3))
        S[labelled] = Y - Y.mean(axis=0)
        ref = solve_dense(K, labelled, Y, c, 1e-3, 1e-2, 1e-1, L)
        np.testing.assert_allclose(op.solve(S / l), ref, rtol=0, atol=1e-9 * np.abs(ref).max())


def test_sparse_laplacians_give_the_dense_solution():
    from scipy import sparse

    K, L, labelled, Y, c = _problem(3, seed=7)
    S = np.zeros((24, 3))
    S[labelled] = Y - Y.mean(axis=0)
    A = PoissonOperator(K, c, 1e-3, 1e-2, 1e-1, [sparse.csr_array(Lp) for Lp in L]).solve(S / len(labelled))
    ref = solve_dense(K, labelled, Y, c, 1e-3, 1e-2, 1e-1, L)
    np.testing.assert_allclose(A, ref, rtol=0, atol=1e-9 * np.abs(ref).max())


def test_gamma_A_must_be_positive():
    K, L, labelled, Y, c = _problem(2)
    with pytest.raises(ValueError, match="gamma_A"):
        solve_structured(K, labelled, Y, c, 0.0, 0.0, 1.0, L)
    with pytest.raises(ValueError, match="loss"):
        solve_structured(K, labelled, Y, c, 1e-3, 0.0, 1.0, L, loss="hinge")


def _blobs(seed=0, per_class=40):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [3.0, 0.5], [1.0, 3.0]])
    X = np.vstack([c + rng.normal(scale=0.9, size=(per_class, 2)) for c in centres])
    y = np.repeat(np.arange(3), per_class)
    labelled = np.array([rng.integers(0, per_class) + k * per_class for k in range(3)])
    return X, y, labelled


def _limit_outputs(X, W, labelled, y, gamma_A, gamma_W=1.0, scale=0.1):
    """l gamma_W C f(x_i) on the n points for one view, L = D - W (dense), a Gaussian kernel of bandwidth ``scale``
    times the median distance: narrow enough for a well-conditioned Gram matrix (with the median itself the Gram
    matrix of these 2-D points is numerically of low rank and F = K a reaches the spiky L^+ S only slowly)."""
    W = np.asarray(W.todense())
    np.fill_diagonal(W, 0.0)
    L = np.diag(W.sum(axis=1)) - W
    sq = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    K = np.exp(-sq / (2 * (scale * np.median(np.sqrt(sq[np.triu_indices(len(X), 1)]))) ** 2))
    A = solve_structured(K[None], labelled, np.eye(3)[y[labelled]], np.ones(1), gamma_A, 0.0, gamma_W, L[None])
    return len(labelled) * gamma_W * (K @ A[0])


def test_limit_is_poisson_learning():
    """As gamma_A -> 0 on one view with L = D - W of graphlearning's 10-NN weights, l gamma_W (C f - shift) on the
    graph's nodes tends to graphlearning's Poisson learning output u (L u = sum_j (y_j - ybar) delta_j, sum_i d_i
    u_i = 0), the shift being the degree-weighted mean of C f per class; the predictions are equal, with and
    without class priors."""
    gl = _graphlearning()
    X, y, labelled = _blobs()
    W = gl.weightmatrix.knn(X, 10)
    d = graph_degrees(W)
    model = gl.ssl.poisson(W, tol=1e-12)
    u = model.fit(labelled, y[labelled])
    errors = []
    for gamma_A in (1e-3, 1e-5, 1e-7):
        F = _limit_outputs(X, W, labelled, y, gamma_A)
        decision = fit_decision(F, weights=d)
        errors.append(np.abs(F - decision.shift - u).max() / np.abs(u).max())
    assert errors[0] > errors[1] > errors[2]  # a limit, not a coincidence at one gamma_A
    assert errors[2] < 1e-5  # the error falls like gamma_A
    # the shift is a constant per class: F - u is constant down each column
    spread = np.ptp(F - u, axis=0)
    assert spread.max() < 1e-4 * np.abs(u).max()
    np.testing.assert_array_equal(decision.predict(F), gl.ssl.poisson(W).fit_predict(labelled, y[labelled]))
    priors = np.array([0.5, 0.3, 0.2])
    with_priors = gl.ssl.poisson(W, class_priors=priors).fit_predict(labelled, y[labelled])
    ours = fit_decision(F, weights=d, class_priors=priors).predict(F)
    np.testing.assert_array_equal(ours, with_priors)
    assert not np.array_equal(ours, decision.predict(F))  # the priors (far from the true 1/3 each) act


def test_decision_rule_applies_the_training_shift_to_new_points():
    F = np.array([[1.0, 0.0], [3.0, 0.0], [2.0, 4.0]])
    decision = fit_decision(F)  # shift (2, 4/3)
    np.testing.assert_allclose(decision.shift, [2.0, 4.0 / 3.0])
    new = np.array([[2.5, 2.0], [3.0, 1.5]])
    np.testing.assert_array_equal(decision.predict(new), [1, 0])  # the raw argmax of the first row is 0


def test_balanced_sources_give_every_class_the_same_mass():
    from mvl.solvers.poisson import source_term, source_weights

    Y = 2 * np.eye(3)[[0, 0, 0, 1, 2, 2]] - 1
    w = source_weights(Y, True)
    np.testing.assert_allclose(np.bincount([0, 0, 0, 1, 2, 2], weights=w), [2.0, 2.0, 2.0])
    S = source_term(np.arange(6), Y, 8, balanced=True)
    np.testing.assert_allclose(S.sum(axis=0), 0.0, atol=1e-12)  # still centred
    equal = 2 * np.eye(3)[[0, 1, 2, 0, 1, 2]] - 1  # equally labelled classes: Poisson learning's sources
    np.testing.assert_array_equal(source_term(np.arange(6), equal, 8, True), source_term(np.arange(6), equal, 8))


@pytest.mark.parametrize("loss", ["poisson", "squared+poisson"])
def test_balanced_structured_solves_the_dense_system(loss):
    K, L, labelled, Y, c = _problem(3, seed=11)
    assert len(set(np.bincount(np.argmax(Y, 1)))) > 1  # unequal class counts
    args = (K, labelled, Y, c, 1e-3, 3e-2, 1e-1, L)
    A = solve_structured(*args, loss=loss, balanced=True)
    ref = solve_dense(*args, loss=loss, balanced=True)
    np.testing.assert_allclose(A, ref, rtol=0, atol=1e-9 * np.abs(ref).max())
    assert not np.allclose(A, solve_structured(*args, loss=loss))


@pytest.mark.parametrize("loss", ["poisson", "squared+poisson"])
def test_residual_equals_numpy_residual_of_the_textbook_system(loss):
    """residual(): the relative residual of the source-term system, against numpy's on the dense sample-major
    (nm) x (nm) matrix written out here from eq (54), (60), (94), at arbitrary coefficients and at the solution."""
    from mvl.solvers.poisson import residual, source_term

    K, L, labelled, Y_L, c = _problem(3, seed=2)
    m, n, _ = K.shape
    l, gA, gB, gW = len(labelled), 1e-3, 1e-2, 0.5
    E = np.eye(m)
    G = sum(np.kron(K[p], np.outer(E[p], E[p])) for p in range(m))
    M = l * gB * np.kron(np.eye(n), m * np.eye(m) - np.ones((m, m)))
    M += l * gW * sum(np.kron(L[p], np.outer(E[p], E[p])) for p in range(m))
    rhs = source_term(labelled, Y_L, n, balanced=True)
    if loss == "squared+poisson":
        J = np.zeros((n, n))
        J[labelled, labelled] = 1.0
        M += np.kron(J, np.outer(c, c))
        rhs[labelled] += Y_L
    B = M @ G + l * gA * np.eye(n * m)
    b = np.kron(rhs, c[:, None])
    A = np.random.default_rng(5).normal(size=(m, n, Y_L.shape[1]))
    a = A.transpose(1, 0, 2).reshape(n * m, -1)
    want = np.linalg.norm(b - B @ a) / np.linalg.norm(b)
    got = residual(K, labelled, Y_L, c, A, gA, gB, gW, L, loss=loss, balanced=True)
    assert got == pytest.approx(want, rel=1e-10)
    A = solve_dense(K, labelled, Y_L, c, gA, gB, gW, L, loss=loss, balanced=True)
    assert residual(K, labelled, Y_L, c, A, gA, gB, gW, L, loss=loss, balanced=True) < 1e-10


@pytest.mark.parametrize("block", [7, 256])
def test_blocked_sparse_product_is_the_dense_product(monkeypatch, block):
    from scipy import sparse

    import mvl.solvers.poisson as poisson

    rng = np.random.default_rng(3)
    n = 61  # not a multiple of the block
    S = sparse.random_array((n, n), density=0.1, random_state=rng, format="csr")
    B = rng.standard_normal((n, n))
    monkeypatch.setattr(poisson, "PRODUCT_BLOCK", block)
    out = poisson._sparse_dense_product(S, B, 0.3)
    np.testing.assert_allclose(out, 0.3 * (S.toarray() @ B), rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(out, np.asarray(S @ B) * 0.3)  # the same sums in the same order


def test_fitted_rbf_kernels_are_exactly_symmetric():
    from mvl import MVLLeastSquares

    rng = np.random.default_rng(4)
    X = rng.standard_normal((40, 6))
    K = MVLLeastSquares(views=[2, 4])._fit_kernels(X)
    assert np.array_equal(K, K.transpose(0, 2, 1))
    Xs = rng.standard_normal((40, 2))
    d = np.sum((Xs[:, None] - Xs[None]) ** 2, axis=-1)
    est = MVLLeastSquares(views=[2])
    np.testing.assert_allclose(est._fit_kernels(Xs)[0], np.exp(-d / (2 * est.bandwidths_[0] ** 2)), rtol=1e-10)
