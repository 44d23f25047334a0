"""n_neighbors="auto": the documented rule (mvl.graph.auto_neighbors) and the estimators resolving it
exactly as the integer it stands for (against fits given that integer)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils._param_validation import InvalidParameterError

from mvl import MVLLeastSquares, MVLSVM
from mvl.data.synthetic import make_multiview_manifold
from mvl.graph import auto_neighbors


@pytest.mark.parametrize("n,k", [(2, 10), (500, 10), (2000, 10), (2200, 11), (8000, 40), (32000, 160),
                                 (100000, 500), (10**6, 500)])
def test_rule(n, k):
    assert auto_neighbors(n) == k


def _data(n, seed=0):
    d = make_multiview_manifold(n + 40, n_classes=3, n_views=2, n_features=4, random_state=seed)
    X = np.hstack(d.views)
    y = d.y[:n].copy()
    keep = np.concatenate([np.flatnonzero(y == k)[:4] for k in range(3)])
    yl = np.full(n, -1)
    yl[keep] = y[keep]
    return X[:n], yl, X[n:]


@pytest.mark.parametrize("solver,n", [("structured", 300), ("nystrom", 2200)])
def test_least_squares_auto_is_the_rule(solver, n):
    X, y, Xt = _data(n)
    kw = dict(views=[4, 4], gamma_A=1e-4, gamma_W=1e-2, solver=solver, n_components=150, random_state=0)
    auto = MVLLeastSquares(n_neighbors="auto", **kw).fit(X, y)
    fixed = MVLLeastSquares(n_neighbors=auto_neighbors(n), **kw).fit(X, y)
    other = MVLLeastSquares(n_neighbors=auto_neighbors(n) + 5, **kw).fit(X, y)
    np.testing.assert_array_equal(auto.decision_function(Xt), fixed.decision_function(Xt))
    assert not np.array_equal(auto.decision_function(Xt), other.decision_function(Xt))  # the graph size matters


def test_svm_auto_is_the_rule():
    X, y, Xt = _data(240)
    kw = dict(views=[4, 4], gamma_A=1e-4, gamma_W=1e-2)
    auto = MVLSVM(n_neighbors="auto", **kw).fit(X, y)
    fixed = MVLSVM(n_neighbors=10, **kw).fit(X, y)
    np.testing.assert_array_equal(auto.decision_function(Xt), fixed.decision_function(Xt))


@pytest.mark.parametrize("bad", ["Auto", "scaled", 0, 2.5])
def test_bad_values(bad):
    X, y, _ = _data(60)
    with pytest.raises(InvalidParameterError, match="n_neighbors"):
        MVLLeastSquares(n_neighbors=bad, views=[4, 4]).fit(X, y)
