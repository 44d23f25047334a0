"""A labelled class with few labels among classes with many: loss="auto" takes the class-balanced few-label term
(AUTO_UNEQUAL_LOSS, "squared+poisson") and predicts the class (recall against the test labels); where the settings
do not allow the term (precomputed kernels, a graph parameter set, gamma_W = 0, incomplete views, a named solver
without it) it keeps the squared loss and warns (FewLabelsWarning) naming the class and the fix, as the SVMs do;
balanced labels keep the squared loss. The rule itself is checked against a brute-force reading of its
definition."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from sklearn.metrics import recall_score

from mvl import MVLBinarySVM, MVLLeastSquares, MVLLeastSquaresCV, MVLSVM
from mvl.estimators.poisson_fit import (AUTO_LABELS_PER_CLASS, AUTO_UNEQUAL_LOSS, AUTO_UNEQUAL_RATIO,
                                        few_labelled_class, resolve_loss)
from mvl.exceptions import FewLabelsWarning

CENTRES = np.random.default_rng(11).normal(size=(3, 12)) * 1.2
VIEWS = [5, 4, 3]


def blobs(n, seed):
    g = np.random.default_rng(seed)
    y = np.arange(n) % 3
    g.shuffle(y)
    return CENTRES[y] + g.normal(size=(n, 12)), y


def labelled(y, per_class):
    ys = np.full(y.shape, -1)
    for c, k in enumerate(per_class):
        idx = np.flatnonzero(y == c)[:k]
        ys[idx] = c
    return ys


@pytest.fixture(scope="module")
def data():
    X, y = blobs(900, 1)
    Xt, yt = blobs(600, 2)
    return X, y, Xt, yt


def _accuracy_and_recall(est, Xt, yt, few=2):
    p = est.predict(Xt)
    return np.mean(p == yt), recall_score(yt, p, average=None)[few]


@pytest.mark.parametrize("kw", [{}, {"max_memory": 2e6}])  # "structured"; "vecchia" (the structured solve too big)
def test_default_takes_the_class_balanced_term_and_predicts_the_class(data, kw):
    X, y, Xt, yt = data
    with warnings.catch_warnings():
        warnings.simplefilter("error", FewLabelsWarning)
        est = MVLLeastSquares(views=VIEWS, **kw).fit(X, labelled(y, (20, 20, 1)))
    assert est.loss_ == AUTO_UNEQUAL_LOSS == "squared+poisson"
    assert est.solver_ == ("vecchia" if kw else "structured")
    acc, recall = _accuracy_and_recall(est, Xt, yt)
    assert acc >= 0.9 and recall >= 0.9
    squared = MVLLeastSquares(views=VIEWS, loss="squared", **kw).fit(X, labelled(y, (20, 20, 1)))
    assert _accuracy_and_recall(squared, Xt, yt)[1] < 0.5  # what the default gave before: the class lost


def test_default_equals_the_named_loss(data):
    X, y, Xt, _ = data
    ys = labelled(y, (20, 20, 1))
    auto = MVLLeastSquares(views=VIEWS).fit(X, ys)
    named = MVLLeastSquares(views=VIEWS, loss=AUTO_UNEQUAL_LOSS).fit(X, ys)
    np.testing.assert_array_equal(auto.decision_function(Xt), named.decision_function(Xt))


def _missing_view(X):
    Xm = X.copy()
    Xm[:30, 5:9] = np.nan
    return Xm


@pytest.mark.parametrize("kw, transform, why", [
    ({"kernel": "precomputed"}, "kernel", r'kernel="precomputed"'),
    ({"n_neighbors": 7}, None, "n_neighbors is set"),
    ({"laplacian_power": 1}, None, "laplacian_power is set"),
    ({"gamma_W": 0.0}, None, r"gamma_W = 0.*Set gamma_W > 0"),
    ({}, "missing", "views are missing"),
    ({"solver": "cg"}, None, r'solver="cg" carries only the squared loss'),
])
def test_squared_loss_kept_where_the_term_is_not_allowed_warns_naming_the_class_and_the_fix(data, kw, transform,
                                                                                           why):
    X, y, _, _ = data
    ys = labelled(y, (20, 20, 1))
    views = {} if kw.get("kernel") == "precomputed" else {"views": VIEWS}
    if transform == "kernel":
        X = np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 24.0)
    elif transform == "missing":
        X = _missing_view(X)
    with pytest.warns(FewLabelsWarning, match=rf"class 2 has 1 labelled sample\(s\) against 20 .*{why}.*"
                                              rf'(loss="squared\+poisson"|solver="auto")'):
        est = MVLLeastSquares(**views, **kw).fit(X, ys)
    assert est.loss_ == "squared"


@pytest.mark.parametrize("per_class, kw", [((20, 20, 20), {}), ((20, 20, 1), {"loss": "squared"}),
                                           ((7, 7, 5), {}), ((20, 20, 6), {}), ((19, 19, 5), {}),
                                           ((20, 20, 1), {"loss": "poisson"})])
def test_balanced_labels_or_an_explicit_setting_keep_their_loss_without_a_warning(data, per_class, kw):
    X, y, _, _ = data
    with warnings.catch_warnings():
        warnings.simplefilter("error", FewLabelsWarning)
        est = MVLLeastSquares(views=VIEWS, **kw).fit(X, labelled(y, per_class))
    assert est.loss_ == kw.get("loss", "squared")


def test_all_labelled_keeps_the_squared_loss_without_a_warning(data):
    X, y, _, _ = data
    idx = np.r_[np.flatnonzero(y[:100] != 2), np.flatnonzero(y == 2)[:1]]  # every point labelled, class 2 once
    with warnings.catch_warnings():
        warnings.simplefilter("error", FewLabelsWarning)
        assert MVLLeastSquares(views=VIEWS).fit(X[idx], y[idx]).loss_ == "squared"


@pytest.mark.parametrize("make", [lambda: MVLSVM(views=VIEWS), lambda: MVLBinarySVM(views=VIEWS)])
def test_svms_warn_naming_the_class_and_the_fix(data, make):
    X, y, _, _ = data
    with pytest.warns(FewLabelsWarning, match=r'class 2 has 1 labelled sample.*weighs each labelled sample alike.*'
                                              r'MVLLeastSquares, whose default loss="auto"'):
        make().fit(X, labelled(y, (20, 20, 1)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", FewLabelsWarning)
        make().fit(X, labelled(y, (20, 20, 20)))


def test_cv_warns_naming_the_class_and_the_fix(data):
    X, y, _, _ = data
    with pytest.warns(FewLabelsWarning, match=r'class 2 has 1 labelled sample.*cross-validates the squared loss.*'
                                              r'MVLLeastSquares\(\) with its defaults'):
        MVLLeastSquaresCV(views=VIEWS, gammas_A=[1e-5], gammas_W=[1e-2], graphs=[(5, 2)]).fit(
            X, labelled(y, (20, 20, 1)))


def _brute_few(counts):
    """The rule as defined: some class has at most 5 labels while the largest has at least 4 times as many."""
    if len(counts) < 2:
        return False
    small = min(counts)
    return small <= 5 and any(c >= 4 * small for c in counts)


def test_the_rule_against_its_definition():
    assert AUTO_LABELS_PER_CLASS == 5 and AUTO_UNEQUAL_RATIO == 4
    for counts in itertools.product(range(1, 25), repeat=2):
        assert few_labelled_class(counts) == _brute_few(counts), counts
    for counts in itertools.product((1, 2, 5, 6, 8, 20, 21), repeat=3):
        assert few_labelled_class(counts) == _brute_few(counts), counts
        l, P = sum(counts), len(counts)
        if l <= AUTO_LABELS_PER_CLASS * P:
            want = "poisson"
        else:
            want = AUTO_UNEQUAL_LOSS if _brute_few(counts) else "squared"
        assert resolve_loss("auto", l, P, l + 100, counts=counts) == want
        assert resolve_loss("auto", l, P, l, counts=counts) == "squared"  # nothing unlabelled
        assert resolve_loss("auto", l, P, l + 100, supported=False, counts=counts) == "squared"
        assert resolve_loss("squared", l, P, l + 100, counts=counts) == "squared"
    assert not few_labelled_class([3]) and not few_labelled_class([])
