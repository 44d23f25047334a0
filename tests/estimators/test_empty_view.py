"""A view missing (NaN) in every training sample is dropped with a MissingViewWarning naming it, before the solver,
the loss and gamma_B="auto" are chosen: the fit equals the fit on the other views (the reference: the estimator
fitted on the remaining columns only, c and per-view bandwidths restricted by hand)."""

from __future__ import annotations

import numpy as np
import pytest

from mvl import MVLLeastSquares, MVLSVM
from mvl.exceptions import MissingViewWarning

CENTRES = np.random.default_rng(11).normal(size=(3, 12)) * 1.2


def blobs(n, seed):
    g = np.random.default_rng(seed)
    y = np.arange(n) % 3
    g.shuffle(y)
    return CENTRES[y] + g.normal(size=(n, 12)), y


@pytest.fixture(scope="module")
def data():
    X, y = blobs(150, 1)
    Xt, _ = blobs(200, 2)
    ys = np.where(np.arange(150) < 30, y, -1)
    Xm = X.copy()
    Xm[:, 9:12] = np.nan
    return Xm, X[:, :9], ys, Xt


@pytest.mark.parametrize("make", [
    lambda **kw: MVLLeastSquares(random_state=0, **kw),
    lambda **kw: MVLLeastSquares(solver="cg", random_state=0, **kw),
    lambda **kw: MVLLeastSquares(loss="poisson", **kw),
    lambda **kw: MVLSVM(n_neighbors=5, **kw),
])
def test_a_view_missing_everywhere_gives_the_fit_on_the_other_views(data, make):
    Xm, X2, ys, Xt = data
    with pytest.warns(MissingViewWarning, match=r"view 2 is missing \(NaN\) in every training sample: dropped"):
        est = make(views=[5, 4, 3]).fit(Xm, ys)
    ref = make(views=[5, 4]).fit(X2, ys)
    assert est.n_views_ == 2 and est.view_mask_ is None
    if hasattr(ref, "gamma_B_"):
        assert est.gamma_B_ == ref.gamma_B_
    np.testing.assert_allclose(est.decision_function(Xt), ref.decision_function(Xt[:, :9]), rtol=1e-9, atol=1e-12)
    Xtm = Xt.copy()
    Xtm[:, 9:] = np.nan  # the dropped view at prediction: read, ignored
    np.testing.assert_array_equal(est.predict(Xtm), ref.predict(Xt[:, :9]))


def test_per_view_parameters_follow_the_kept_views(data):
    Xm, X2, ys, Xt = data
    with pytest.warns(MissingViewWarning, match="view 2"):
        est = MVLLeastSquares(views=[5, 4, 3], c=[0.7, 0.2, 0.1], bandwidth=[2.0, 3.0, 9.0]).fit(Xm, ys)
    # c renormalised over the kept views, as over a sample's present views
    ref = MVLLeastSquares(views=[5, 4], c=[0.7 / 0.9, 0.2 / 0.9], bandwidth=[2.0, 3.0]).fit(X2, ys)
    np.testing.assert_allclose(est.decision_function(Xt), ref.decision_function(Xt[:, :9]), rtol=1e-9, atol=1e-12)


def test_a_list_of_views_drops_the_empty_one(data):
    Xm, X2, ys, Xt = data
    with pytest.warns(MissingViewWarning, match="view 1"):
        est = MVLLeastSquares().fit([Xm[:, :5], Xm[:, 9:], Xm[:, 5:9]], ys)
    ref = MVLLeastSquares().fit([X2[:, :5], X2[:, 5:9]], ys)
    np.testing.assert_allclose(est.decision_function([Xt[:, :5], Xt[:, 9:], Xt[:, 5:9]]),
                               ref.decision_function([Xt[:, :5], Xt[:, 5:9]]), rtol=1e-9, atol=1e-12)
