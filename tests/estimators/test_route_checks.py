"""What the one fit route of MVL-LS checks on every solver, against independent references: the direct solves'
residual against ``tol`` (a textbook (nm) x (nm) residual in numpy), ``regime_`` on every fit, one prediction
rule for a sample that misses views (the present views' outputs combined; the kNN induction on the present views'
coordinates written out in numpy), and pandas' nullable dtypes read as scikit-learn reads them."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from mvl import MVLLeastSquares
from mvl.estimators.fit_route import ILL_CONDITIONED
from mvl.exceptions import IllConditionedWarning, RegularizationWarning

VIEWS = [5, 4, 3]
CENTRES = np.random.default_rng(11).normal(size=(3, 12)) * 1.2


def blobs(n, seed):
    """Three Gaussian blobs in 12 features (views of 5, 4 and 3), classes in equal numbers."""
    g = np.random.default_rng(seed)
    y = np.arange(n) % 3
    g.shuffle(y)
    return CENTRES[y] + g.normal(size=(n, 12)), y


def few_labels(n=90, labelled=15, seed=1):
    X, y = blobs(n, seed)
    return X, np.where(np.arange(n) < labelled, y, -1)


def gaussian_views(X, sigma=3.0):
    """Per-view Gaussian Gram matrices (m, n, n) of the VIEWS blocks."""
    ends = np.cumsum(VIEWS)
    out = []
    for e, d in zip(ends, VIEWS, strict=True):
        V = X[:, e - d:e]
        D = ((V[:, None, :] - V[None, :, :]) ** 2).sum(axis=2)
        out.append(np.exp(-D / (2 * sigma**2)))
    return np.stack(out)


def textbook_residual(K, labelled, Y_L, c, gamma_A, gamma_B, coef):
    """||Y_C - (B + l gamma_A I) a|| / ||Y_C|| of eq (67)-(68) with gamma_W = 0, formed densely (sample-major),
    largest over the output columns."""
    m, n, _ = K.shape
    l = len(labelled)
    N = n * m
    G = np.zeros((N, N))
    for p in range(m):
        E = np.zeros((m, m))
        E[p, p] = 1.0
        G += np.kron(K[p], E)
    J = np.zeros((n, n))
    J[labelled, labelled] = 1.0
    Mm = m * np.eye(m) - np.ones((m, m))
    B = (np.kron(J, np.outer(c, c)) + l * gamma_B * np.kron(np.eye(n), Mm)) @ G + l * gamma_A * np.eye(N)
    Y = np.zeros((n, Y_L.shape[1]))
    Y[labelled] = Y_L
    Y_C = np.kron(Y, c[:, None])
    a = coef.transpose(1, 0, 2).reshape(N, -1)
    R = Y_C - B @ a
    return float(np.max(np.linalg.norm(R, axis=0) / np.linalg.norm(Y_C, axis=0)))


def _fit_recorded(est, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    return est, caught


# ---- regime_: set on every fit ---------------------------------------------------------------------------------


@pytest.mark.parametrize("solver", ["auto", "structured", "dense", "cg", "nystrom", "graph"])
def test_regime_is_none_when_not_measured_on_every_solver(solver):
    X, y = blobs(60, 1)
    est = MVLLeastSquares(views=VIEWS, solver=solver, n_components=30, random_state=0).fit(X, y)
    assert est.regime_ is None
    est.fit(*few_labels())  # a refit measures nothing either
    assert est.regime_ is None


# ---- direct solves: the residual against tol ----------------------------------------------------------------------


@pytest.mark.parametrize("solver", ["structured", "dense"])
def test_direct_solve_that_misses_tol_is_not_converged_and_names_gamma_B(solver):
    X, y = few_labels()
    K = gaussian_views(X)
    est = MVLLeastSquares(kernel="precomputed", solver=solver, gamma_A=1e-5, gamma_B=3e6, gamma_W=0.0,
                          loss="squared")
    est, caught = _fit_recorded(est, np.transpose(K, (1, 2, 0)), y)
    msgs = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(msgs) == 1 and re.search(r"relative residual .* > tol = 1e-06.*decrease gamma_B \(now 3e\+06\) "
                                        r"or increase gamma_A \(now 1e-05\)", msgs[0])
    # the condition estimate's own warning where it is estimated (structured) and above ILL_CONDITIONED
    ill = [w for w in caught if issubclass(w.category, IllConditionedWarning)]
    assert len(ill) == int(est.condition_estimate_ > ILL_CONDITIONED)
    labelled = np.flatnonzero(y >= 0)
    Y_L = 2.0 * np.eye(3)[y[labelled]] - 1.0  # the +-1 coding of Section 5.1
    ref = textbook_residual(K, labelled, Y_L, est.c_, 1e-5, 3e6, est.coef_)
    assert ref > 10 * est.tol and est.residual_ > est.tol  # the solve is inaccurate by an independent measure
    assert est.converged_ is False


def test_direct_solve_residual_is_the_textbook_residual_when_accurate():
    X, y = few_labels()
    K = gaussian_views(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = MVLLeastSquares(kernel="precomputed", solver="structured", gamma_A=1e-3, gamma_B=1e-3, gamma_W=0.0,
                              loss="squared").fit(np.transpose(K, (1, 2, 0)), y)
    labelled = np.flatnonzero(y >= 0)
    Y_L = 2.0 * np.eye(3)[y[labelled]] - 1.0
    ref = textbook_residual(K, labelled, Y_L, est.c_, 1e-3, 1e-3, est.coef_)
    assert est.converged_ is True and est.residual_ <= est.tol and ref <= est.tol


@pytest.mark.parametrize("solver", ["auto", "structured", "dense"])
def test_few_label_direct_solve_at_huge_gamma_B_warns_and_is_not_converged(solver):
    X, y = few_labels()
    est, caught = _fit_recorded(MVLLeastSquares(views=VIEWS, solver=solver, gamma_B=3e6), X, y)
    assert est.loss_ == "poisson" and est.solver_ in ("structured", "dense")
    msgs = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(msgs) == 1 and "decrease gamma_B (now 3e+06)" in msgs[0] and "> tol = 1e-06" in msgs[0]
    assert est.converged_ is False and est.residual_ > est.tol


@pytest.mark.parametrize(("solver", "loss"), [("vecchia_direct", "squared"), ("vecchia", "poisson")])
def test_sparse_direct_solve_at_huge_gamma_B_warns_and_is_not_converged(solver, loss):
    X, y = few_labels(300, 15)
    est, caught = _fit_recorded(MVLLeastSquares(views=VIEWS, solver=solver, loss=loss, gamma_B=1e12), X, y)
    msgs = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(msgs) == 1 and f'solver="{solver}": the solve is inaccurate' in msgs[0]
    assert "decrease gamma_B (now 1e+12)" in msgs[0]
    assert est.converged_ is False and est.residual_ > est.tol
    est = MVLLeastSquares(views=VIEWS, solver=solver, loss=loss).fit(X, y)  # the defaults: accurate
    assert est.converged_ is True and est.residual_ <= est.tol


def test_sparse_factorisation_that_fails_names_gamma_A():
    X, y = few_labels(300, 15)
    with pytest.raises(ValueError, match=r'solver="vecchia": the sparse Cholesky factorisation failed.*increase '
                                         r"gamma_A"):
        MVLLeastSquares(views=VIEWS, solver="vecchia", loss="poisson", gamma_A=1e-300).fit(X, y)


@pytest.mark.parametrize("loss", ["auto", "squared"])
def test_tiny_gamma_A_names_gamma_A_not_a_swamping_regularisation(loss):
    X, y = few_labels()
    est, caught = _fit_recorded(MVLLeastSquares(views=VIEWS, solver="structured", gamma_A=1e-300, loss=loss), X, y)
    convergence = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(convergence) == 1 and "increase gamma_A (now 1e-300; default 1e-05)" in convergence[0]
    assert not [w for w in caught if issubclass(w.category, RegularizationWarning)]
    assert est.converged_ is False and est.residual_ > est.tol


@pytest.mark.parametrize("solver", ["auto", "structured", "dense"])
@pytest.mark.parametrize("loss", ["auto", "squared", "squared+poisson"])
def test_default_direct_fits_converge_silently(solver, loss):
    X, y = few_labels()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        est = MVLLeastSquares(views=VIEWS, solver=solver, loss=loss).fit(X, y)
    assert est.converged_ is True and est.residual_ <= est.tol


# ---- a sample that misses views at prediction, after a fit on complete views ---------------------------------------


def _incomplete_test_points():
    Xt, _ = blobs(8, 2)
    Xm = Xt.copy()
    Xm[:4, 5:9] = np.nan  # view 1 missing
    Xm[4:, 0:5] = np.nan  # view 0 missing
    present = np.ones((8, 3), dtype=bool)
    present[:4, 1] = False
    present[4:, 0] = False
    return Xt, Xm, present


@pytest.mark.parametrize("solver", ["auto", "structured", "dense", "cg", "nystrom", "graph", "vecchia_direct"])
def test_missing_view_at_predict_combines_the_present_views_on_every_solver(solver):
    X, y = few_labels(120, 30)
    Xt, Xm, present = _incomplete_test_points()
    kw = dict(views=VIEWS, solver=solver, loss="squared", gamma_A=1e-3, gamma_W=1.0, n_components=60,
              random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # vecchia_direct's notes on its own gamma_A
        est = MVLLeastSquares(**kw).fit(X, y)
    d = est.decision_function(Xm)
    V = est.view_decision_function(Xt)  # f^p on the complete points
    w = np.where(present, 1.0, 0.0)
    expected = np.einsum("tpk,tp->tk", V, w / w.sum(axis=1, keepdims=True))  # c = 1/m renormalised: the mean
    np.testing.assert_allclose(d, expected, rtol=1e-9, atol=1e-12)
    if est.solver_ in ("structured", "cg", "graph"):  # exact solvers: the textbook system's prediction
        ref = MVLLeastSquares(**{**kw, "solver": "dense"}).fit(X, y).decision_function(Xm)
        # graph stops at an objective error tol = 1e-6: decision values within ~sqrt(tol) (solver docstring)
        bound = 1e-3 if est.solver_ == "graph" else 1e-6
        np.testing.assert_allclose(d, ref, rtol=0, atol=bound * np.abs(ref).max())


def _brute_induction(est, Xm, present):
    """The induction rule on each point's present views, written out: the k nearest training points in the
    standardised coordinates of those views, weights exp(-4 d^2 / d_k^2), then the fit's class shift."""
    rule = est._rule
    Z = (Xm - rule.space.mean_) / rule.space.scale_
    cols = np.split(np.arange(12), np.cumsum(VIEWS)[:-1])
    out = []
    for i in range(len(Xm)):
        c = np.concatenate([cols[p] for p in np.flatnonzero(present[i])])
        d2 = ((rule.points[:, c] - Z[i, c]) ** 2).sum(axis=1)
        nearest = np.argsort(d2, kind="stable")[:rule.neighbours]
        wts = np.exp(-4.0 * d2[nearest] / d2[nearest[-1]])
        out.append(wts @ rule.outputs[nearest] / wts.sum())
    return rule.decision_rule.scores(np.array(out))


@pytest.mark.parametrize("solver", ["auto", "structured", "dense", "vecchia"])
def test_missing_view_at_predict_after_a_few_label_fit_uses_the_present_views(solver):
    X, y = few_labels(120, 12)
    _, Xm, present = _incomplete_test_points()
    kw = dict(views=VIEWS, loss="poisson", gamma_A=1e-5)  # the validated ratio (not the scale rule's re-solve)
    est = MVLLeastSquares(solver=solver, **kw).fit(X, y)
    d = est.decision_function(Xm)
    np.testing.assert_allclose(d, _brute_induction(est, Xm, present), rtol=1e-10, atol=1e-14)
    if solver != "vecchia":  # the exact solvers agree with the textbook system
        ref = MVLLeastSquares(solver="dense", **kw).fit(X, y).decision_function(Xm)
        np.testing.assert_allclose(d, ref, rtol=1e-6, atol=1e-9 * np.abs(ref).max())


# ---- pandas' nullable dtypes -------------------------------------------------------------------------------------


def _nullable_frame():
    pd = pytest.importorskip("pandas")
    X, y = few_labels()
    Xn = X.copy()
    Xn[:10, 5:9] = np.nan
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(12)]).astype("Float64")
    df.iloc[:10, 5:9] = pd.NA
    return df, Xn, y


def test_nullable_float_frame_with_na_is_read_as_missing_views_by_loss_auto():
    df, Xn, y = _nullable_frame()
    est = MVLLeastSquares(views=VIEWS).fit(df, y)
    ref = MVLLeastSquares(views=VIEWS).fit(Xn, y)  # the same data with NaN
    assert est.loss_ == ref.loss_ == "squared" and est.solver_ == ref.solver_
    np.testing.assert_array_equal(est.view_mask_, ref.view_mask_)
    np.testing.assert_allclose(est.decision_function(df), ref.decision_function(Xn), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("solver", ["auto", "cg", "nystrom"])
def test_nullable_float_frame_keeps_its_feature_names_as_scikit_learn_does(solver):
    df, Xn, y = _nullable_frame()
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no feature-name warning from fit or predict on the frame
        est = MVLLeastSquares(views=VIEWS, solver=solver, n_components=40, random_state=0).fit(df, y)
        pred = est.predict(df)
    assert list(est.feature_names_in_) == list(df.columns) and pred.shape == (90,)
    with pytest.warns(UserWarning, match="X does not have valid feature names"):
        est.predict(Xn)  # scikit-learn's warning, for an array after a fit on a frame
