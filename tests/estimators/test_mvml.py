"""MVML (Huusari, Kadri & Capponi 2017) against independent references.

References, none of which calls the package's solver code:

* "identity" (MVML_I, K = blockdiag(K_l)) with fixed w is kernel ridge regression with the scalar kernel
  sum_l w_l^2 K_l, written here with numpy, one-vs-all for several classes;
* "cov" (A_lm = I) is kernel ridge regression with (sum_l w_l K_l)^2 (K_lm = K_l K_m, eq 5);
* Nystrom (Section 3.5): the same ridge regressions on Q W^+ Q^T built here from the model's landmarks,
  with the test kernels approximated the same way;
* the first iteration of Algorithm 1 written literally: eq (8) with an explicit inverse of A and eq (9) /
  eq (12) (block soft-thresholding by view-pair groups) on dense (nv x nv) matrices.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import make_problem, rel_diff, sample_first
from sklearn.exceptions import NotFittedError

from mvl import MVML, MetricNotPSDWarning

# ---------------------------------------------------------------- helpers (numpy only)


def _pm(y, classes):
    """One-vs-all +-1 targets (one column for two classes, positive = classes[1])."""
    if len(classes) == 2:
        return np.where(y == classes[1], 1.0, -1.0)[:, None]
    return np.where(y[:, None] == np.asarray(classes)[None, :], 1.0, -1.0)


def _krr(M, Mt, Y, lam):
    return Mt @ np.linalg.solve(M + lam * np.eye(M.shape[0]), Y)


def _nystrom_approx(K, Kt, S):
    """Q W^+ Q^T per view and K_test(., S) W^+ Q^T (Section 3.5)."""
    out, out_t = [], []
    for Kl, Ktl in zip(K, Kt, strict=True):
        Wp = np.linalg.pinv(Kl[np.ix_(S, S)], rcond=1e-10)
        out.append(Kl[:, S] @ Wp @ Kl[S, :])
        out_t.append(Ktl[:, S] @ Wp @ Kl[S, :])
    return np.stack(out), np.stack(out_t)


def _dense_objective(y, H, Wm, A, g, lam, eta, reg):
    f = Wm @ H @ g
    return float(np.sum((y - f) ** 2) + lam * g @ np.linalg.solve(A, g) + eta * reg(A))


def _blocks(v, n):
    return [slice(l * n, (l + 1) * n) for l in range(v)]


# ---------------------------------------------------------------- fixed metrics


@pytest.mark.parametrize("P", [2, 4])
def test_identity_is_krr_on_block_diagonal_kernel(P):
    K, Kt, y = make_problem(m=3, n=26, P=P, frac_unlabelled=0.0, seed=40 + P, t=9)
    lam = 0.37
    model = MVML(kernel="precomputed", lmbda=lam, learn_A="identity").fit(sample_first(K), y)
    L = np.flatnonzero(y >= 0)
    classes = np.unique(y[L])
    w2 = (1.0 / 3) ** 2
    ref = _krr(w2 * K[:, L][:, :, L].sum(0), w2 * Kt[:, :, L].sum(0), _pm(y[L], classes), lam)
    dec = model.decision_function(sample_first(Kt))
    assert rel_diff(dec, ref[:, 0] if P == 2 else ref) < 1e-10
    expect = classes[(ref[:, 0] > 0).astype(int)] if P == 2 else classes[np.argmax(ref, 1)]
    np.testing.assert_array_equal(model.predict(sample_first(Kt)), expect)
    assert model.A_.shape == (1 if P == 2 else P, 3 * L.size, 3 * L.size)
    # the stored metric is blockdiag(K_l^+): H A H = H on the training points
    H = np.zeros((3 * L.size,) * 2)
    for l, s in enumerate(_blocks(3, L.size)):
        H[s, s] = K[l][np.ix_(L, L)]
    assert rel_diff(H @ model.A_[0] @ H, H) < 1e-6


def test_cov_is_krr_on_squared_combined_kernel():
    K, Kt, y = make_problem(m=3, n=24, P=3, frac_unlabelled=0.0, seed=7, t=8)
    lam = 0.2
    model = MVML(kernel="precomputed", lmbda=lam, learn_A="cov").fit(sample_first(K), y)
    S, St = K.sum(0) / 3, Kt.sum(0) / 3  # sum_l w_l K_l with w = 1/3
    ref = _krr(S @ S, St @ S, _pm(y, [0, 1, 2]), lam)  # W H A H W^T = (sum w_l K_l)^2 for A_lm = I
    assert rel_diff(model.decision_function(sample_first(Kt)), ref) < 1e-9


@pytest.mark.parametrize("learn_A", ["identity", "cov"])
def test_nystrom_matches_reference_nystrom_krr(learn_A):
    K, Kt, y = make_problem(m=3, n=40, P=2, frac_unlabelled=0.0, seed=21, t=10)
    lam = 0.15
    model = MVML(kernel="precomputed", lmbda=lam, learn_A=learn_A, nystrom=0.3, random_state=5).fit(sample_first(K), y)
    S = model.landmarks_
    assert S.size == 12
    Ka, Kta = _nystrom_approx(K, Kt, S)
    Y = _pm(y, [0, 1])
    if learn_A == "identity":
        ref = _krr(Ka.sum(0) / 9, Kta.sum(0) / 9, Y, lam)
    else:
        C, Ct = Ka.sum(0) / 3, Kta.sum(0) / 3
        ref = _krr(C @ C, Ct @ C, Y, lam)
    assert rel_diff(model.decision_function(sample_first(Kt)), ref[:, 0]) < 1e-7


def test_nystrom_landmarks_are_seeded_random_and_shared():
    K, Kt, y = make_problem(m=2, n=50, P=2, frac_unlabelled=0.0, seed=3, t=4)
    a = MVML(kernel="precomputed", learn_A="identity", nystrom=0.2, random_state=1).fit(sample_first(K), y).landmarks_
    b = MVML(kernel="precomputed", learn_A="identity", nystrom=0.2, random_state=1).fit(sample_first(K), y).landmarks_
    c = MVML(kernel="precomputed", learn_A="identity", nystrom=0.2, random_state=2).fit(sample_first(K), y).landmarks_
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    assert not np.array_equal(a, np.arange(10))  # not the first rows
    assert np.unique(a).size == 10


@pytest.mark.parametrize("learn_A", ["identity", "cov"])
def test_nystrom_at_full_level_equals_exact(learn_A):
    K, Kt, y = make_problem(m=3, n=20, P=3, frac_unlabelled=0.0, seed=9, t=7)
    K = K + 0.05 * np.eye(20)  # well conditioned, so the full-level Nystrom factor keeps every direction
    exact = MVML(kernel="precomputed", lmbda=0.3, learn_A=learn_A).fit(sample_first(K), y)
    ny = MVML(kernel="precomputed", lmbda=0.3, learn_A=learn_A, nystrom=1 - 1 / 80,
              random_state=4).fit(sample_first(K), y)
    assert ny.landmarks_.size == 20
    assert rel_diff(ny.decision_function(sample_first(Kt)), exact.decision_function(sample_first(Kt))) < 1e-8


@pytest.mark.parametrize("learn_A", ["full", "sparse"])
def test_nystrom_at_full_level_does_not_depend_on_the_ordering(learn_A):
    # at 100 % U U^T = H whatever the ordering: the factors differ by a rotation the algorithm is blind to
    K, Kt, y = make_problem(m=2, n=18, P=2, frac_unlabelled=0.0, seed=10, t=6)
    K = K + 0.05 * np.eye(18)
    f = [MVML(kernel="precomputed", lmbda=0.2, eta=0.5, learn_A=learn_A, nystrom=1 - 1 / 80, n_iter=4, random_state=s)
         .fit(sample_first(K), y).decision_function(sample_first(Kt)) for s in (0, 1)]
    assert rel_diff(f[0], f[1]) < 1e-6


# ---------------------------------------------------------------- Algorithm 1, first iteration


def _literal_setup(seed=2, m=2, n=12):
    K, Kt, y = make_problem(m=m, n=n, P=2, frac_unlabelled=0.0, seed=seed, t=5)
    yv = np.where(y == 1, 1.0, -1.0)
    H = np.zeros((m * n, m * n))
    for l, s in enumerate(_blocks(m, n)):
        H[s, s] = K[l]
    Wm = np.kron(np.full((1, m), 1.0 / m), np.eye(n))  # w^T (x) I_n
    return K, Kt, y, yv, H, Wm


def _eq8(H, Wm, A, yv, lam):
    return np.linalg.solve(H @ Wm.T @ Wm @ H + lam * np.linalg.inv(A), H @ Wm.T @ yv)


def test_full_first_iteration_is_eq8_then_eq9():
    K, Kt, y, yv, H, Wm = _literal_setup()
    m, n = K.shape[:2]
    lam, eta, mu = 0.4, 0.7, 0.2
    A0 = np.eye(m * n)
    g0 = _eq8(H, Wm, A0, yv, lam)
    b = np.linalg.solve(A0, g0)
    A1 = (1 - 2 * mu * eta) * A0 + mu * lam * np.outer(b, b)  # eq (9)
    fro = lambda A: float(np.sum(A * A))  # noqa: E731
    J0 = _dense_objective(yv, H, Wm, A0, g0, lam, eta, fro)
    J1 = _dense_objective(yv, H, Wm, A1, g0, lam, eta, fro)
    assert J1 <= J0 - 1e-4 * fro(A1 - A0) / mu  # the first step is accepted without backtracking
    g1 = _eq8(H, Wm, A1, yv, lam)
    model = MVML(kernel="precomputed", lmbda=lam, eta=eta, learn_A="full", n_iter=2, n_iter_A=1, step=mu,
                 tol=0).fit(sample_first(K), y)
    assert rel_diff(model.A_[0], A1) < 1e-9
    assert rel_diff(model.g_[0], g1) < 1e-7
    ref = sum(Kt[l] @ g1[s] / m for l, s in enumerate(_blocks(m, n)))
    assert rel_diff(model.decision_function(sample_first(Kt)), ref) < 1e-7
    hist = model.objective_history_[0]
    assert hist[0] == pytest.approx(J0, rel=1e-9)
    assert hist[1] == pytest.approx(_dense_objective(yv, H, Wm, A1, g1, lam, eta, fro), rel=1e-7)


def test_sparse_first_iteration_is_eq8_then_eq12():
    K, Kt, y, yv, H, Wm = _literal_setup(seed=4, m=3, n=10)
    m, n = K.shape[:2]
    lam, eta, mu = 0.5, 0.8, 0.3
    blk = _blocks(m, n)

    def omega(A):
        tot = 0.0
        for l in range(m):
            for k in range(l + 1):
                sq = np.sum(A[blk[l], blk[k]] ** 2) + (np.sum(A[blk[k], blk[l]] ** 2) if k != l else 0.0)
                tot += np.sqrt(sq)
        return tot

    A0 = np.eye(m * n)
    g0 = _eq8(H, Wm, A0, yv, lam)
    b = np.linalg.solve(A0, g0)
    Z = A0 + mu * lam * np.outer(b, b)  # A - mu grad h, grad h = -lambda A^-1 g g^T A^-1
    A1 = np.zeros_like(Z)
    for l in range(m):
        for k in range(m):
            grp = np.sqrt(np.sum(Z[blk[l], blk[k]] ** 2) + (np.sum(Z[blk[k], blk[l]] ** 2) if k != l else 0.0))
            A1[blk[l], blk[k]] = max(0.0, 1 - mu * eta / grp) * Z[blk[l], blk[k]]  # eq (12), prox of mu Omega
    J0 = _dense_objective(yv, H, Wm, A0, g0, lam, eta, omega)
    J1 = _dense_objective(yv, H, Wm, A1, g0, lam, eta, omega)
    assert J1 <= J0 - 1e-4 * np.sum((A1 - A0) ** 2) / mu
    assert np.min(np.linalg.eigvalsh(A1)) > 0  # so eq (8) applies with A^-1
    g1 = _eq8(H, Wm, A1, yv, lam)
    model = MVML(kernel="precomputed", lmbda=lam, eta=eta, learn_A="sparse", n_iter=2, n_iter_A=1, step=mu,
                 tol=0).fit(sample_first(K), y)
    assert rel_diff(model.A_[0], A1) < 1e-9
    assert rel_diff(model.g_[0], g1) < 1e-7


# ---------------------------------------------------------------- objective, PSD, warning


@pytest.mark.parametrize("learn_A,nystrom,learn_w", [
    ("full", 1.0, False), ("full", 1.0, True), ("full", 0.5, False), ("full", 0.5, True),
    ("sparse", 0.5, False), ("sparse", 0.5, True), ("cov", 1.0, True), ("identity", 0.5, True),
])
def test_objective_decreases(learn_A, nystrom, learn_w):
    K, Kt, y = make_problem(m=3, n=30, P=2, frac_unlabelled=0.0, seed=3, t=4)
    model = MVML(kernel="precomputed", lmbda=0.3, eta=1.0, learn_A=learn_A, nystrom=nystrom, learn_w=learn_w,
                 n_iter=15, n_iter_A=3, tol=1e-9, random_state=1).fit(sample_first(K), y)
    h = model.objective_history_[0]
    assert h.size >= 5
    assert np.all(np.diff(h) <= 1e-10 * np.abs(h[:-1]))
    assert h[-1] < h[0]


@pytest.mark.parametrize("nystrom", [1.0, 0.4])
def test_full_metric_stays_positive_definite(nystrom):
    K, Kt, y = make_problem(m=3, n=24, P=3, frac_unlabelled=0.0, seed=8, t=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", MetricNotPSDWarning)
        model = MVML(kernel="precomputed", lmbda=0.2, eta=2.0, learn_A="full", nystrom=nystrom, n_iter=12, n_iter_A=4,
                     random_state=0).fit(sample_first(K), y)
    assert model.A_is_psd_.all()
    for A in model.A_:
        np.testing.assert_allclose(A, A.T, atol=1e-12 * np.abs(A).max())
        eig = np.linalg.eigvalsh(A)
        assert eig[0] > 0


def test_sparse_warns_when_metric_not_psd():
    K, Kt, y = make_problem(m=3, n=30, P=2, frac_unlabelled=0.0, seed=3, t=4)
    with pytest.warns(MetricNotPSDWarning, match="not positive semidefinite"):
        model = MVML(kernel="precomputed", lmbda=0.3, eta=10.0, learn_A="sparse", n_iter=20,
                     n_iter_A=3).fit(sample_first(K), y)
    assert not model.A_is_psd_[0]
    assert np.min(np.linalg.eigvalsh(model.A_[0])) < -1e-8


def test_sparse_zeroes_whole_view_pair_blocks():
    K, Kt, y = make_problem(m=3, n=30, P=2, frac_unlabelled=0.0, seed=3, t=4)
    model = MVML(kernel="precomputed", lmbda=0.3, eta=1.0, learn_A="sparse", nystrom=0.5, n_iter=20, n_iter_A=3,
                 random_state=0).fit(sample_first(K), y)
    A = model.A_[0]
    o = np.concatenate([[0], np.cumsum(model.block_sizes_)])
    norms = np.array([[np.linalg.norm(A[o[i]:o[i + 1], o[j]:o[j + 1]]) for j in range(3)] for i in range(3)])
    np.testing.assert_allclose(model.block_norms_[0], norms, rtol=1e-12)
    assert np.all(np.diag(norms) > 0)
    off = norms[~np.eye(3, dtype=bool)]
    assert np.any(off == 0.0)  # block soft-thresholding gives exact zeros


def test_learned_weights_solve_eq10():
    K, Kt, y = make_problem(m=3, n=25, P=2, frac_unlabelled=0.0, seed=12, t=4)
    model = MVML(kernel="precomputed", lmbda=0.3, learn_A="identity", learn_w=True, n_iter=1).fit(sample_first(K), y)
    # one outer iteration: g from w = 1/3, then w = argmin ||y - Z w|| with Z = [K_l g_l] (eq 10)
    yv = np.where(y == 1, 1.0, -1.0)
    alpha = np.linalg.solve(K.sum(0) / 9 + 0.3 * np.eye(25), yv)
    Z = np.column_stack([K[l] @ alpha / 3 for l in range(3)])
    w = np.linalg.lstsq(Z, yv, rcond=None)[0]
    assert rel_diff(model.w_[0], w) < 1e-8


# ---------------------------------------------------------------- bad input


def test_bad_input_raises_clear_errors():
    K, Kt, y = make_problem(m=2, n=12, P=2, frac_unlabelled=0.0, seed=1, t=3)
    bad_params = [
        (dict(lmbda=0.0), "lmbda"), (dict(lmbda=-1), "lmbda"), (dict(eta=0.0), "eta"),
        (dict(learn_A="diag"), "learn_A"), (dict(nystrom=0.0), "nystrom"), (dict(nystrom=1.5), "nystrom"),
        (dict(n_iter=0), "n_iter"), (dict(n_iter_A=1.5), "n_iter_A"), (dict(step=1.0, eta=1.0), "step"),
        (dict(learn_w="yes"), "learn_w"), (dict(tol=-1), "tol"), (dict(lmbda="a"), "lmbda"),
    ]
    for params, word in bad_params:
        with pytest.raises(ValueError, match=word):
            MVML(kernel="precomputed", **params).fit(sample_first(K), y)
    with pytest.raises(ValueError, match="entries"):
        MVML(kernel="precomputed").fit(sample_first(K), y[:-1])
    with pytest.raises(ValueError, match="one class only"):
        MVML(kernel="precomputed").fit(sample_first(K), np.zeros(12, dtype=int))
    Kn = K.copy()
    Kn[1, 0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        MVML(kernel="precomputed").fit(sample_first(Kn), y)
    with pytest.raises(ValueError, match=r"X must have shape \(n_samples, n_samples, n_views\)"):
        MVML(kernel="precomputed").fit(sample_first(K[:, :, :-1]), y)
    with pytest.raises(NotFittedError, match="not fitted"):
        MVML(kernel="precomputed").predict(sample_first(Kt))
    model = MVML(kernel="precomputed").fit(sample_first(K), y)
    with pytest.raises(ValueError, match=r"\(t, 12, 2\), got \(3, 12, 1\)"):  # too few views
        model.predict(sample_first(Kt[:1]))
    with pytest.raises(ValueError, match="X has 11 features, but MVML is expecting 12"):  # too few training columns
        model.predict(sample_first(Kt[:, :, :-1]))
    with pytest.raises(ValueError, match="Invalid parameter 'gamma'"):
        model.set_params(gamma=1)
