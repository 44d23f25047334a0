"""A labelled class with few labels among classes with many: loss="auto" keeps the squared loss (labels per class
above the few-label threshold on average) and warns (FewLabelsWarning) naming the class and the fix,
loss="squared+poisson", whose fit predicts the class (recall against the test labels)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.metrics import recall_score

from mvl import MVLLeastSquares
from mvl.exceptions import FewLabelsWarning

CENTRES = np.random.default_rng(11).normal(size=(3, 12)) * 1.2


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


def test_one_label_among_twenty_warns_naming_the_class_and_the_fix(data):
    X, y, Xt, yt = data
    with pytest.warns(FewLabelsWarning, match=r'class 2 has 1 labelled sample.*loss="squared\+poisson"'):
        est = MVLLeastSquares(views=[5, 4, 3]).fit(X, labelled(y, (20, 20, 1)))
    assert est.loss_ == "squared"
    fixed = MVLLeastSquares(views=[5, 4, 3], loss="squared+poisson").fit(X, labelled(y, (20, 20, 1)))
    p = fixed.predict(Xt)
    assert recall_score(yt, p, average=None)[2] >= 0.9 and np.mean(p == yt) >= 0.9


@pytest.mark.parametrize("per_class, kw", [((20, 20, 20), {}), ((20, 20, 1), {"loss": "squared"}),
                                           ((20, 20, 1), {"n_neighbors": 7}), ((7, 7, 5), {})])
def test_no_warning_for_balanced_labels_or_an_explicit_setting(data, per_class, kw):
    X, y, _, _ = data
    with warnings.catch_warnings():
        warnings.simplefilter("error", FewLabelsWarning)
        MVLLeastSquares(views=[5, 4, 3], **kw).fit(X, labelled(y, per_class))
