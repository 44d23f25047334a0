"""Volume-constrained threshold against brute force and scipy's assignment solver; PoissonMBO against
graphlearning's poisson_mbo on the same sparse graph and priors."""

import itertools

import numpy as np
import pytest
from scipy import sparse
from scipy.optimize import linear_sum_assignment

from mvl.solvers.volume import class_sizes, duality_gap, poisson_mbo, poisson_scores, volume_threshold


def _brute_force(a, sizes):
    n, k = a.shape
    best = -np.inf
    for lab in itertools.product(range(k), repeat=n):
        if np.array_equal(np.bincount(lab, minlength=k), sizes):
            best = max(best, a[np.arange(n), lab].sum())
    return best


@pytest.mark.parametrize("seed", range(8))
def test_volume_threshold_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n, k = 7, 3
    a = rng.normal(size=(n, k))
    sizes = class_sizes(n, rng.dirichlet(np.ones(k)))
    lab, prices = volume_threshold(a, sizes)
    assert np.array_equal(np.bincount(lab, minlength=k), sizes)
    assert a[np.arange(n), lab].sum() == pytest.approx(_brute_force(a, sizes), abs=1e-8)
    assert duality_gap(a, sizes, lab, prices) <= 1e-8 * np.ptp(a) + 1e-12


@pytest.mark.parametrize("seed", range(5))
def test_volume_threshold_matches_linear_sum_assignment(seed):
    rng = np.random.default_rng(100 + seed)
    n, k = 60, 4
    a = rng.normal(size=(n, k))
    sizes = class_sizes(n, [0.1, 0.2, 0.3, 0.4])
    slots = np.repeat(np.arange(k), sizes)                      # class k expanded into sizes[k] slots
    rows, cols = linear_sum_assignment(a[:, slots], maximize=True)
    optimum = a[rows, slots[cols]].sum()
    lab, _ = volume_threshold(a, sizes)
    assert np.array_equal(np.bincount(lab, minlength=k), sizes)
    assert a[np.arange(n), lab].sum() == pytest.approx(optimum, abs=1e-8)


def test_class_sizes_largest_remainder():
    assert class_sizes(10, [0.25, 0.25, 0.5]).tolist() == [3, 2, 5]     # 2.5, 2.5, 5: tie to the lower index
    assert class_sizes(7, [1 / 3, 1 / 3, 1 / 3]).tolist() == [3, 2, 2]
    rng = np.random.default_rng(0)
    for _ in range(20):
        p = rng.dirichlet(np.ones(5))
        s = class_sizes(101, p)
        assert s.sum() == 101 and np.all(np.abs(s - 101 * p) < 1)


def test_bad_input():
    with pytest.raises(ValueError, match="sum to 1"):
        class_sizes(10, [0.5, 0.6])
    with pytest.raises(ValueError, match="not to the number of points"):
        volume_threshold(np.zeros((4, 2)), [1, 2])
    W = sparse.csr_matrix(np.array([[0, 1.0], [1.0, 0]]))
    with pytest.raises(TypeError, match="sparse"):
        poisson_mbo(W.toarray(), [0, 1], [0, 1])
    with pytest.raises(ValueError, match="symmetric"):
        poisson_mbo(sparse.csr_matrix(np.array([[0, 1.0], [0, 0]])), [0, 1], [0, 1])
    with pytest.raises(ValueError, match="threshold must be"):
        poisson_mbo(W, [0, 1], [0, 1], threshold="greedy")


def test_disconnected_graph_warns():
    block = np.ones((3, 3)) - np.eye(3)
    W = sparse.block_diag([block, block]).tocsr()
    with pytest.warns(RuntimeWarning, match="connected components"):
        poisson_scores(W, [0, 3], [0, 1])


@pytest.fixture(scope="module")
def mfeat_graph():
    import graphlearning as gl

    from mvl.data.embedded import load_mfeat
    ds = load_mfeat(views=("fou", "kar"))
    X = np.hstack(ds.views)
    X = (X - X.mean(0)) / X.std(0)
    W = gl.weightmatrix.knn(X, 10, knn_data=gl.weightmatrix.knnsearch(X, 10, method="brute"))
    y = np.asarray(ds.y).astype(int)
    rng = np.random.default_rng(0)
    idx = np.concatenate([rng.choice(np.flatnonzero(y == c), 3, replace=False) for c in np.unique(y)])
    return gl, sparse.csr_matrix(W), y, idx


def test_poisson_mbo_matches_graphlearning(mfeat_graph):
    gl, W, y, idx = mfeat_graph
    priors = np.bincount(y) / y.size
    ref = gl.ssl.poisson_mbo(W, class_priors=priors).fit_predict(idx, y[idx])
    ours_mult = poisson_mbo(W, idx, y[idx], class_priors=priors, threshold="multiplicative")
    assert np.array_equal(ours_mult, ref)
    ours = poisson_mbo(W, idx, y[idx], class_priors=priors)
    assert np.mean(ours == ref) >= 0.99
    assert np.array_equal(np.bincount(ours, minlength=10), class_sizes(y.size, priors))


def test_default_priors_are_labelled_proportions(mfeat_graph):
    _, W, y, idx = mfeat_graph
    idx = np.concatenate([idx, np.flatnonzero(y == 0)[50:53]])      # class 0 gets 6 labels of 33
    counts = np.bincount(y[idx], minlength=10)
    default = poisson_mbo(W, idx, y[idx], T=3)
    assert np.array_equal(default, poisson_mbo(W, idx, y[idx], class_priors=counts / counts.sum(), T=3))
    assert np.array_equal(np.bincount(default, minlength=10), class_sizes(y.size, counts / counts.sum()))
