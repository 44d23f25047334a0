"""Incomplete multi-view data (:mod:`mvl.solvers.incomplete`): MVL-LS on the views each sample has.

References: the masked textbook system (the (u+l)m system of eq 67-68 restricted to the present (sample, view)
pairs, one LU: :func:`mvl.solvers.incomplete.solve_dense_incomplete`), and, independent of any kernel algebra, the
minimiser of the incomplete-view objective written out in weight space for linear kernels (normal equations of
the quadratic, built here row by row). The two limits: nothing missing is today's fit exactly; a view missing for
every sample is the fit without that view.
"""

import warnings

import numpy as np
import pytest
from conftest import signal_free
from sklearn.impute import SimpleImputer  # noqa: F401  (the convention's baseline, used in the benchmark)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from mvl import MVLLeastSquares
from mvl.data.missing import apply_mask, apply_mask_kernels, mask_at_random, mask_class_views, mask_sample_blocks
from mvl.graph import laplacian
from mvl.missing_views import combination_weights, view_operators
from mvl.exceptions import MissingViewWarning
from mvl.solvers.incomplete import solve_dense_incomplete, solve_structured_incomplete
from mvl.solvers.structured import solve_structured


def _problem(n=14, m=3, P=3, d=2, seed=0, q=0.35):
    rng = np.random.default_rng(seed)
    X = [rng.standard_normal((n, d)) for _ in range(m)]
    K = np.stack([np.exp(-((x[:, None] - x[None]) ** 2).sum(-1) / 2) for x in X])
    mask = mask_at_random(n, m, q, rng)
    labelled = np.sort(rng.choice(n, 7, replace=False))
    Y = -np.ones((labelled.size, P))
    Y[np.arange(labelled.size), rng.integers(0, P, labelled.size)] = 1.0
    return X, K, mask, labelled, Y, rng


@pytest.mark.parametrize("gamma_B", [0.0, 1e-2])
@pytest.mark.parametrize("gamma_W", [0.0, 1e-1])
@pytest.mark.parametrize("c", [None, (0.5, 0.3, 0.2), (1.0, -0.5, 0.2)])
def test_structured_matches_masked_dense_system(gamma_B, gamma_W, c):
    """The view-by-view solver equals one LU of the masked (u+l)m system of eq (67)-(68)."""
    _, K, mask, labelled, Y, rng = _problem()
    c = np.full(3, 1 / 3) if c is None else np.asarray(c)
    Ls = [laplacian(K[p][np.ix_(idx, idx)]) for p in range(3) for idx in [np.flatnonzero(mask[:, p])]]
    L = Ls if gamma_W else None
    w = rng.random(mask.shape[0])
    info = {}
    A = solve_structured_incomplete(K, mask, labelled, Y, c, 1e-2, gamma_B, gamma_W, L, info=info, between_weights=w)
    R = solve_dense_incomplete(K, mask, labelled, Y, c, 1e-2, gamma_B, gamma_W, L, between_weights=w)
    assert np.abs(R).max() > 0.1
    np.testing.assert_allclose(A, R, rtol=0, atol=1e-10 * np.abs(R).max())
    assert np.all(A[~mask.T] == 0) and 0 < info["rcond"] <= 1


def test_all_present_mask_equals_complete_solver():
    """With every view present the incomplete solver solves today's system (solve_structured)."""
    _, K, _, labelled, Y, _ = _problem()
    full = np.ones((K.shape[1], 3), dtype=bool)
    L = np.stack([laplacian(K[p]) for p in range(3)])
    c = np.array([0.2, 0.5, 0.3])
    A = solve_structured_incomplete(K, full, labelled, Y, c, 1e-2, 1e-2, 1e-1, list(L))
    R = solve_structured(K, labelled, Y, c, 1e-2, 1e-2, 1e-1, L)
    np.testing.assert_allclose(A, R, rtol=0, atol=1e-10 * np.abs(R).max())


def _weight_space_reference(X, mask, labelled, Y, c, gA, gB, gW, Ls, w):
    """Minimiser of the incomplete-view objective for linear kernels, f^p(x) = W_p^T x, by its normal equations:
    1/l sum_L ||y_i - sum_{p in V_i} c~_ip W_p^T x_i^p||^2 + gA sum ||W_p||^2
    + gB sum_i w_i sum_{p<q in V_i} ||W_p^T x_i^p - W_q^T x_i^q||^2 + gW sum_p tr(F_p^T L_p F_p), F_p = X_p[S_p] W_p.
    c~ is written out here: c_p sum(c) / sum_{V_i} c (c >= 0 here)."""
    n, m = mask.shape
    d = [x.shape[1] for x in X]
    off = np.concatenate([[0], np.cumsum(d)])
    D = off[-1]
    l = len(labelled)
    H = gA * np.eye(D)
    rhs = np.zeros((D, Y.shape[1]))
    for r, i in enumerate(labelled):
        a = np.zeros(D)
        present = np.flatnonzero(mask[i])
        s = c.sum() / c[present].sum()
        for p in present:
            a[off[p]:off[p + 1]] = s * c[p] * X[p][i]
        H += np.outer(a, a) / l
        rhs += np.outer(a, Y[r]) / l
    for i in range(n):
        present = np.flatnonzero(mask[i])
        for j, p in enumerate(present):
            for q in present[j + 1:]:
                b = np.zeros(D)
                b[off[p]:off[p + 1]] = X[p][i]
                b[off[q]:off[q + 1]] = -X[q][i]
                H += gB * w[i] * np.outer(b, b)
    for p in range(m):
        Xp = X[p][mask[:, p]]
        H[off[p]:off[p + 1], off[p]:off[p + 1]] += gW * Xp.T @ Ls[p] @ Xp
    Wt = np.linalg.solve(H, rhs)
    return [Wt[off[p]:off[p + 1]] for p in range(m)]


@pytest.mark.parametrize("gamma_B,gamma_W", [(0.0, 0.0), (1e-2, 0.0), (1e-2, 5e-2)])
@signal_free
def test_estimator_equals_weight_space_minimiser(gamma_B, gamma_W):
    """MVLLeastSquares on NaN-marked feature views (linear kernels, an explicit Laplacian restricted to each view's
    samples) reproduces the weight-space minimiser: per-view outputs on the training samples and the renormalised
    combination at test points that miss views."""
    rng = np.random.default_rng(3)
    n, m, t = 16, 3, 9
    X = [rng.standard_normal((n, 3)) for _ in range(m)]
    mask = mask_at_random(n, m, 0.35, rng)
    y = rng.integers(0, 3, n)
    y[rng.choice(n, 7, replace=False)] = -1
    labelled = np.flatnonzero(y >= 0)
    Y = -np.ones((labelled.size, 3))
    Y[np.arange(labelled.size), y[labelled]] = 1.0
    c = np.array([0.5, 0.2, 0.3])
    Lfull = np.zeros((n, n, m))
    Ls = []
    for p in range(m):
        G = np.abs(rng.standard_normal((n, n)))
        Lfull[:, :, p] = laplacian(G + G.T)
        idx = np.flatnonzero(mask[:, p])
        Ls.append(Lfull[:, :, p][np.ix_(idx, idx)])
    W = _weight_space_reference(X, mask, labelled, Y, c, 1e-2, gamma_B, gamma_W, Ls, np.ones(n))
    model = MVLLeastSquares(loss="squared", kernel="linear", gamma_A=1e-2, gamma_B=gamma_B, gamma_W=gamma_W, c=c,
                            laplacian=Lfull, n_neighbors=None, solver="structured")
    model.fit(apply_mask(X, mask), y)
    assert model.view_mask_ is not None and np.array_equal(model.view_mask_, mask)
    F = model.view_decision_function(apply_mask(X, mask))  # (n, m, P), NaN where a view is missing
    for p in range(m):
        ref = X[p] @ W[p]
        np.testing.assert_allclose(F[mask[:, p], p], ref[mask[:, p]], rtol=0, atol=1e-8)
        assert np.all(np.isnan(F[~mask[:, p], p]))
    Z = [rng.standard_normal((t, 3)) for _ in range(m)]
    tmask = mask_at_random(t, m, 0.4, rng)
    ref = np.zeros((t, 3))
    for i in range(t):
        present = np.flatnonzero(tmask[i])
        s = c.sum() / c[present].sum()
        ref[i] = sum(s * c[p] * (Z[p][i] @ W[p]) for p in present)
    np.testing.assert_allclose(model.decision_function(apply_mask(Z, tmask)), ref, rtol=0, atol=1e-8)
    # the dense textbook solver through the estimator, same problem
    dense = MVLLeastSquares(loss="squared", kernel="linear", gamma_A=1e-2, gamma_B=gamma_B, gamma_W=gamma_W, c=c,
                            laplacian=Lfull, n_neighbors=None, solver="dense").fit(apply_mask(X, mask), y)
    np.testing.assert_allclose(dense.decision_function(apply_mask(Z, tmask)), ref, rtol=0, atol=1e-8)


def _mfeat_like(n=120, t=60, seed=0):
    from mvl.data.embedded import load_mfeat

    ds = load_mfeat(["fou", "kar", "mor"])
    rng = np.random.default_rng(seed)
    idx = rng.permutation(2000)[:n + t]
    X = np.hstack(ds.views)[idx]
    X = (X - X[:n].mean(0)) / X[:n].std(0)
    y = ds.y[idx].copy()
    y_train = y[:n].copy()
    y_train[30:] = -1
    return X[:n], y_train, X[n:], y[n:], [76, 64, 6]


def test_nothing_missing_is_todays_fit_bit_for_bit():
    """No NaN: the estimator takes exactly today's path (solve_structured on the same kernels and Laplacians)."""
    X, y, Xt, yt, sizes = _mfeat_like()
    model = MVLLeastSquares(views=sizes, gamma_B=1e-5, loss="squared").fit(X, y)
    assert model.view_mask_ is None
    K = model._fit_kernels(X)
    y_enc, labelled = model._fit_labels(y, K.shape[1])
    Y_L, L = model._mvl_inputs(K, y_enc, labelled)
    coef = solve_structured(K, labelled, Y_L, model.c_, gamma_A=1e-5, gamma_B=1e-5, gamma_W=1e-2, L=L)
    assert np.array_equal(model.coef_, coef)
    d = model.decision_function(Xt)
    assert np.array_equal(d, np.einsum("ptn,pnk,p->tk", model._test_kernels(Xt), coef, model.c_, optimize=True))
    # precomputed input without NaN: the complete path too
    Kpre = np.moveaxis(K, 0, -1)
    pre = MVLLeastSquares(kernel="precomputed", gamma_B=1e-5, loss="squared").fit(Kpre, y)
    assert pre.view_mask_ is None and np.array_equal(pre.coef_, model.coef_)


@pytest.mark.parametrize("c", [None, (0.5, 0.2, 0.3)])
def test_view_missing_everywhere_is_the_fit_without_it(c):
    """A view that no training sample has: the fit (and every prediction) of the remaining views, with c
    renormalised over them; with feature views and with precomputed kernels."""
    X, y, Xt, yt, sizes = _mfeat_like()
    drop = 1
    cols = np.arange(76, 140)
    keep = np.setdiff1d(np.arange(X.shape[1]), cols)
    Xm = X.copy()
    Xm[:, cols] = np.nan
    cc = None if c is None else np.asarray(c)
    cr = None if c is None else np.delete(cc, drop) * cc.sum() / np.delete(cc, drop).sum()
    kw = dict(gamma_B=1e-4, solver="structured")
    with pytest.warns(MissingViewWarning, match=f"view {drop} is missing"):
        inc = MVLLeastSquares(loss="squared", views=sizes, c=cc, **kw).fit(Xm, y)
    ref = MVLLeastSquares(loss="squared", views=[76, 6], c=cr, **kw).fit(X[:, keep], y)
    assert inc.dropped_views_ == (drop,)  # feature views: the view is dropped, coef_ holds the others
    np.testing.assert_allclose(inc.coef_, ref.coef_, rtol=0, atol=1e-9)
    # the test samples may have the view or not: no training sample has it, so it is not used
    Xt_half = Xt.copy()
    Xt_half[::2][:, cols] = np.nan
    expect = ref.decision_function(Xt[:, keep])
    for Z in (Xt, Xt_half):
        np.testing.assert_allclose(inc.decision_function(Z), expect, rtol=0, atol=1e-9)
    # precomputed kernels with that view's slice all NaN
    K = np.moveaxis(ref._fit_kernels(X[:, keep]), 0, -1)
    Kt = np.moveaxis(ref._test_kernels(Xt[:, keep]), 0, -1)
    K3 = np.insert(K, drop, np.nan, axis=2)
    Kt3 = np.insert(Kt, drop, np.nan, axis=2)
    pre = MVLLeastSquares(loss="squared", kernel="precomputed", c=cc, **kw).fit(K3, y)
    np.testing.assert_allclose(pre.decision_function(Kt3), expect, rtol=0, atol=1e-9)


def test_precomputed_matches_feature_views():
    """NaN rows/columns of a precomputed view give the same fit as NaN rows of that view's features."""
    X, y, Xt, yt, sizes = _mfeat_like()
    rng = np.random.default_rng(1)
    M, Mt = mask_at_random(len(y), 3, 0.3, rng), mask_at_random(len(yt), 3, 0.3, rng)
    feat = MVLLeastSquares(loss="squared", views=sizes, gamma_B=1e-4).fit(apply_mask(X, M, sizes), y)
    # bandwidths of the present samples differ: pass feat's
    full = MVLLeastSquares(loss="squared", views=sizes).fit(X, y)
    K = np.zeros((len(y), len(y), 3))
    Kt = np.zeros((len(yt), len(y), 3))
    for p, cols in enumerate(full.view_columns_):
        s2 = 2 * feat.bandwidths_[p] ** 2
        K[:, :, p] = np.exp(-((X[:, None, cols] - X[None, :, cols]) ** 2).sum(-1) / s2)
        Kt[:, :, p] = np.exp(-((Xt[:, None, cols] - X[None, :, cols]) ** 2).sum(-1) / s2)
    pre = MVLLeastSquares(loss="squared", kernel="precomputed", gamma_B=1e-4).fit(apply_mask_kernels(K, M), y)
    assert np.array_equal(pre.view_mask_, M)
    d1 = feat.decision_function(apply_mask(Xt, Mt, sizes))
    d2 = pre.decision_function(apply_mask_kernels(Kt, Mt, M))
    np.testing.assert_allclose(d2, d1, rtol=0, atol=1e-8)
    assert feat.score(apply_mask(Xt, Mt, sizes), yt) > 0.5  # 30 labels, 10 classes, views missing: well above 0.1


def test_pipeline_with_scaler_passes_nan_through():
    """scikit-learn's StandardScaler ignores NaN when fitting and keeps it when transforming: a Pipeline fit equals
    the fit on data standardised by NaN-aware means and deviations."""
    X, y, Xt, yt, sizes = _mfeat_like()
    rng = np.random.default_rng(2)
    raw = 3.0 * X + 1.0
    rawt = 3.0 * Xt + 1.0
    M, Mt = mask_at_random(len(y), 3, 0.4, rng), mask_at_random(len(yt), 3, 0.4, rng)
    Xm, Xtm = apply_mask(raw, M, sizes), apply_mask(rawt, Mt, sizes)
    pipe = make_pipeline(StandardScaler(), MVLLeastSquares(loss="squared", views=sizes)).fit(Xm, y)
    mu, sd = np.nanmean(Xm, axis=0), np.nanstd(Xm, axis=0)
    direct = MVLLeastSquares(loss="squared", views=sizes).fit((Xm - mu) / sd, y)
    np.testing.assert_allclose(pipe.decision_function(Xtm), direct.decision_function((Xtm - mu) / sd),
                               rtol=0, atol=1e-8)
    assert np.array_equal(pipe[-1].view_mask_, M)


def test_nan_convention_errors():
    X, y, Xt, yt, sizes = _mfeat_like(n=40, t=10)
    model = MVLLeastSquares(loss="squared", views=sizes)
    Xp = X.copy()
    Xp[3, 80] = np.nan  # one feature of view 1
    with pytest.raises(ValueError, match=r"Input X contains NaN: view 1 of sample\(s\) \[3\].*partial NaN is not a "
                                         "missing view"):
        model.fit(Xp, y)
    Xe = X.copy()
    Xe[5] = np.nan
    with pytest.raises(ValueError, match=r"sample\(s\) \[5\] have no view at all"):
        model.fit(Xe, y)
    Xi = apply_mask(X, mask_at_random(40, 3, 0.3, 0), sizes)
    Xi[0, 0] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        model.fit(Xi, y)
    model.fit(apply_mask(X, mask_at_random(40, 3, 0.3, 0), sizes), y)
    Zp = Xt.copy()
    Zp[2, 0] = np.nan
    with pytest.raises(ValueError, match=r"view 0 of sample\(s\) \[2\].*partial NaN"):
        model.predict(Zp)
    Ze = Xt.copy()
    Ze[1] = np.nan
    with pytest.raises(ValueError, match=r"sample\(s\) \[1\] have no view at all"):
        model.predict(Ze)
    with pytest.raises(ValueError, match="features"):
        model.predict(Xt[:, :-1])
    # precomputed: a NaN row without its column, a NaN inside the present block, wrong test shape
    K = np.stack([np.exp(-((X[:, None, :5] - X[None, :, :5]) ** 2).sum(-1))] * 2, axis=-1)
    K1 = K.copy()
    K1[4, :, 0] = np.nan
    with pytest.raises(ValueError, match="NaN row AND column"):
        MVLLeastSquares(loss="squared", kernel="precomputed").fit(K1, y)
    K2 = K.copy()
    K2[4, 7, 1] = K2[7, 4, 1] = np.nan
    with pytest.raises(ValueError, match="partial NaN is not a missing view"):
        MVLLeastSquares(loss="squared", kernel="precomputed").fit(K2, y)
    K3 = apply_mask_kernels(K, np.column_stack([np.arange(40) % 2 == 0, np.ones(40, bool)]))
    pre = MVLLeastSquares(loss="squared", kernel="precomputed").fit(K3, y)
    with pytest.raises(ValueError, match="39"):
        pre.predict(K[:5, :39])
    Kt = K3[:5].copy()
    Kt[0, 0, 1] = np.nan  # a present training column of view 1
    with pytest.raises(ValueError, match="partial NaN"):
        pre.predict(Kt)
    # solver "graph" refuses missing views ("cg", "nystrom" and MVLLeastSquaresCV take them:
    # tests/test_incomplete_scalable.py); the other estimators still refuse NaN
    from mvl.estimators.optc import MVLLeastSquaresOptC

    Xm = apply_mask(X, mask_at_random(40, 3, 0.3, 0), sizes)
    with pytest.raises(ValueError, match="missing views.*'graph'"):
        MVLLeastSquares(loss="squared", views=sizes, solver="graph").fit(Xm, y)
    for solver in ("cg", "nystrom"):  # MVL-LS-optC takes missing views with its structured f-step only
        with pytest.raises(ValueError, match="missing views"):
            MVLLeastSquaresOptC(views=sizes, solver=solver, n_restarts=2).fit(Xm, y)
    with pytest.raises(ValueError, match=r"Input X contains NaN: view 1 of sample\(s\) \[3\].*partial NaN"):
        MVLLeastSquaresOptC(views=sizes, n_restarts=2).fit(Xp, y)


def test_complete_fit_predicts_samples_that_miss_views():
    """A model fitted on complete views predicts a test sample from the views it has, with every solver: "cg" and
    "nystrom" (n_components = n: exact) by their blocked prediction, "structured" through the test kernels."""
    X, y, Xt, yt, sizes = _mfeat_like(n=60, t=20)
    Mt = mask_at_random(len(yt), 3, 0.4, np.random.default_rng(7))
    Xtm = apply_mask(Xt, Mt, sizes)
    ref = MVLLeastSquares(loss="squared", views=sizes, solver="structured").fit(X, y)
    F = ref.view_decision_function(Xt)
    Ct = combination_weights(ref.c_, Mt)
    expect = np.einsum("tpk,tp->tk", F, Ct)
    np.testing.assert_allclose(ref.decision_function(Xtm), expect, rtol=0, atol=1e-10)
    for solver in ("cg", "nystrom"):
        model = MVLLeastSquares(loss="squared", views=sizes, solver=solver, n_components=60, tol=1e-12, max_iter=2000,
                                random_state=0).fit(X, y)
        np.testing.assert_allclose(model.decision_function(Xtm), expect, rtol=0, atol=1e-6 * np.abs(expect).max())


def test_combination_weights():
    mask = np.array([[1, 1, 1], [1, 0, 1], [0, 1, 0], [0, 0, 1]], dtype=bool)
    Ct = combination_weights(np.full(3, 1 / 3), mask)
    np.testing.assert_allclose(Ct, mask / mask.sum(1, keepdims=True))  # the mean of the present views
    c = np.array([0.6, 0.8, 0.0])
    Ct = combination_weights(c, mask)
    assert np.array_equal(Ct[0], c)
    np.testing.assert_allclose(Ct[1], [1.4, 0, 0])  # sum rule: the total weight sum(c) = 1.4 is kept
    c = np.array([0.6, -0.8, 0.0])  # a unit vector (as optC's): present parts may change the sign of the sum
    Ct = combination_weights(c, mask)
    np.testing.assert_allclose(Ct[1], [1.0, 0, 0])  # 0.6 vs sum(c) = -0.2: norm rule, ||c~_i|| = ||c|| = 1
    np.testing.assert_allclose(Ct[2], [0, -0.2, 0])  # -0.8 vs -0.2: same sign, sum rule
    np.testing.assert_allclose(Ct[3], 0)  # the only present weight is 0


def test_masks():
    rng = np.random.default_rng(0)
    M = mask_at_random(200, 6, 0.6, rng)
    assert M.shape == (200, 6) and (~M).sum() == 720 and M.any(axis=1).all()
    assert mask_at_random(10, 3, 0.0, rng).all()
    with pytest.raises(ValueError, match="q must be in"):
        mask_at_random(10, 3, 0.7, rng)
    y = np.repeat(np.arange(4), 5)
    C = mask_class_views(y, 3, views_per_class=1)
    assert np.array_equal(C[y == 1], np.tile([True, False, True], (5, 1)))
    B = mask_sample_blocks(20, 4, 5, 2, rng)
    assert (~B).sum() == 40 and B.any(axis=1).all()
    with pytest.raises(ValueError, match="mask has shape"):
        apply_mask(np.zeros((5, 4)), np.ones((4, 2), bool), [2, 2])


def test_view_operators_restrict_each_graph():
    """The within-view operator of a view is the graph Laplacian built on that view's samples only."""
    _, K, mask, _, _, _ = _problem()
    ops = view_operators(K, mask, "normalized", None, gamma_W=1e-2, laplacian_power=1, graph_weights="kernel")
    for p in range(3):
        idx = np.flatnonzero(mask[:, p])
        np.testing.assert_allclose(ops[p], laplacian(K[p][np.ix_(idx, idx)]), atol=1e-14)
    assert view_operators(K, mask, "normalized", None, gamma_W=0.0, laplacian_power=1, graph_weights="kernel") is None


def test_incomplete_beats_mean_imputation_small():
    """A smoke check of the point of it all (the benchmark measures it): on 3 mfeat views with 40 % of the entries
    missing, the incomplete fit is at least as accurate as mean imputation of the same model."""
    X, y, Xt, yt, sizes = _mfeat_like(n=300, t=300, seed=4)
    y = y.copy()
    rng = np.random.default_rng(5)
    M, Mt = mask_at_random(len(y), 3, 0.4, rng), mask_at_random(len(yt), 3, 0.4, rng)
    Xm, Xtm = apply_mask(X, M, sizes), apply_mask(Xt, Mt, sizes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        inc = MVLLeastSquares(loss="squared", views=sizes, gamma_B=1e-4).fit(Xm, y).score(Xtm, yt)
        imp = make_pipeline(SimpleImputer(), MVLLeastSquares(loss="squared", views=sizes, gamma_B=1e-4))
        imp = imp.fit(Xm, y).score(Xtm, yt)
    assert inc >= imp - 0.01, (inc, imp)


# ---------------------------------------------------------------- MVL-SVM / MVL-binSVM


def _dense_svm_operators(K, mask, labelled, c, gA, gB, gW, Ls):
    """Q_G = C~_L^T G M_reg C~_L and the coefficient map M_reg C~_L (eq 79, 194) written out over the present
    (sample, view) pairs: M_reg = [(gB sum_i e_i e_i^T (x) M_{V_i} + gW blockdiag(L^p)) G + gA I]^{-1}."""
    pairs = np.argwhere(mask)
    I, V = pairs[:, 0], pairs[:, 1]
    N = len(pairs)
    G = np.zeros((N, N))
    Mop = np.zeros((N, N))
    for a in range(N):
        for b in range(N):
            if V[a] == V[b]:
                G[a, b] = K[V[a], I[a], I[b]]
            if I[a] == I[b]:
                Mop[a, b] = gB * (mask[I[a]].sum() * (V[a] == V[b]) - 1.0)
    for p in range(mask.shape[1]):
        rows = np.flatnonzero(V == p)
        Mop[np.ix_(rows, rows)] += gW * Ls[p]
    Creg = np.zeros((N, len(labelled)))
    for r, i in enumerate(labelled):
        present = np.flatnonzero(mask[i])
        for p in present:  # c~ written out: c_p sum(c) / sum_{V_i} c (c > 0 here)
            Creg[np.flatnonzero((I == i) & (V == p)), r] = c[p] * c.sum() / c[present].sum()
    A = np.linalg.solve(Mop @ G + gA * np.eye(N), Creg)
    return Creg.T @ G @ A, A, I, V


@pytest.mark.parametrize("gamma_B", [0.0, 1e-1])
def test_svm_dual_matches_masked_dense_operators(gamma_B):
    from mvl.solvers.svm_dual import build_svm_dual_incomplete

    _, K, mask, labelled, _, rng = _problem()
    Ls = [laplacian(K[p][np.ix_(idx, idx)]) for p in range(3) for idx in [np.flatnonzero(mask[:, p])]]
    c = np.array([0.5, 0.3, 0.2])
    dual = build_svm_dual_incomplete(K, mask, labelled, c, 1e-2, gamma_B, 5e-2, Ls)
    Q_ref, A_ref, I, V = _dense_svm_operators(K, mask, labelled, c, 1e-2, gamma_B, 5e-2, Ls)
    np.testing.assert_allclose(dual.Q_G, Q_ref, rtol=0, atol=1e-10 * np.abs(Q_ref).max())
    W = rng.standard_normal((len(labelled), 4))
    coef = dual.coefficients(W)
    np.testing.assert_allclose(coef[V, I], A_ref @ W, rtol=0, atol=1e-10 * np.abs(A_ref @ W).max())
    assert np.all(coef[~mask.T] == 0)


@pytest.mark.parametrize("P", [2, 3])
@signal_free
def test_svm_on_incomplete_kernels_matches_generic_qp(P):
    """MVLSVM on NaN-marked precomputed kernels: its dual optimum equals clarabel's on the dense masked Q_G (x) Q_S
    (box of eq 24), and its predictions follow from the dense coefficient map."""
    qpsolvers = pytest.importorskip("qpsolvers")
    import scipy.sparse as sp

    from mvl import MVLSVM

    _, K, mask, labelled, _, rng = _problem(n=16, seed=4)
    y = -np.ones(16, dtype=int)
    y[labelled] = np.arange(labelled.size) % P
    Ls = [laplacian(K[p][np.ix_(idx, idx)]) for p in range(3) for idx in [np.flatnonzero(mask[:, p])]]
    Lfull = np.zeros((16, 16, 3))
    for p in range(3):
        idx = np.flatnonzero(mask[:, p])
        Lfull[np.ix_(idx, idx, [p])] = Ls[p][:, :, None]
    c = np.array([0.5, 0.3, 0.2])
    gA, gB, gW = 1e-2, 1e-2, 5e-2
    est = MVLSVM(kernel="precomputed", gamma_A=gA, gamma_B=gB, gamma_W=gW, c=c, laplacian=Lfull, n_neighbors=None,
                 tol=1e-9, max_iter=200000)
    est.fit(apply_mask_kernels(np.moveaxis(K, 0, -1), mask), y)
    assert np.array_equal(est.view_mask_, mask)
    Q_G, A_ref, I, V = _dense_svm_operators(K, mask, labelled, c, gA, gB, gW, Ls)
    S = est.code_matrix_
    Q = np.kron(Q_G, S.T @ S)
    l = labelled.size
    ub = np.full((l, P), 1.0 / l)
    ub[np.arange(l), y[labelled]] = 0.0
    free = ub.ravel() > 0
    x = np.zeros(l * P)
    x[free] = qpsolvers.solve_qp(sp.csc_matrix(0.5 * Q[np.ix_(free, free)]), -np.ones(free.sum()) / (P - 1),
                                 lb=np.zeros(free.sum()), ub=ub.ravel()[free], solver="clarabel", tol_gap_abs=1e-12,
                                 tol_gap_rel=1e-12, tol_feas=1e-12)
    obj_ref = 0.25 * x @ Q @ x - x.sum() / (P - 1)
    assert abs(est.dual_objective_ - obj_ref) <= 1e-6 * abs(obj_ref)
    alpha = x.reshape(l, P).T
    coef_ref = np.zeros((3, 16, P))
    coef_ref[V, I] = -0.5 * A_ref @ (S.T @ S @ alpha).T  # eq (77), (83)
    h_ours = est.view_decision_function(apply_mask_kernels(np.moveaxis(K, 0, -1), mask))
    for p in range(3):
        ref = K[p] @ coef_ref[p]
        np.testing.assert_allclose(h_ours[mask[:, p], p], ref[mask[:, p]], rtol=0, atol=1e-4 * np.abs(ref).max())


@pytest.mark.parametrize("cls_name", ["MVLSVM", "MVLBinarySVM"])
def test_svm_view_missing_everywhere_is_the_fit_without_it(cls_name):
    import mvl

    X, y, Xt, yt, sizes = _mfeat_like(n=80, t=30)
    cols = np.arange(76, 140)
    keep = np.setdiff1d(np.arange(X.shape[1]), cols)
    Xm = X.copy()
    Xm[:, cols] = np.nan
    cls = getattr(mvl, cls_name)
    with pytest.warns(MissingViewWarning, match="view 1 is missing"):
        inc = cls(views=sizes, gamma_B=1e-4, tol=1e-8).fit(Xm, y)
    ref = cls(views=[76, 6], gamma_B=1e-4, tol=1e-8).fit(X[:, keep], y)
    np.testing.assert_allclose(inc.coef_, ref.coef_, rtol=0, atol=1e-6 * np.abs(ref.coef_).max())
    np.testing.assert_allclose(inc.decision_function(Xt), ref.decision_function(Xt[:, keep]), rtol=0,
                               atol=1e-6 * np.abs(ref.decision_function(Xt[:, keep])).max())
