"""Vecchia's kernel rows for new points (mvl.solvers.vecchia_kriging): kriging weights, the node values K_v a by
triangular solves, the rows as the estimator uses them."""

import numpy as np
import pytest

from mvl import MVLLeastSquares
from mvl.data.synthetic import make_multiview_manifold
from mvl.solvers.vecchia_direct import fit_estimator
from mvl.solvers.vecchia_kriging import kriging_weights


@pytest.fixture(scope="module")
def fitted():
    d = make_multiview_manifold(200, n_classes=2, n_views=2, n_features=5, random_state=0)
    X = np.hstack(d.views)
    y = np.full(200, -1)
    for k in range(2):
        y[np.flatnonzero(d.y == k)[:3]] = k
    est = MVLLeastSquares(kernel="rbf", views=[5, 5], bandwidth=[2.0, 2.0], gamma_A=1e-6, gamma_B=0.0, gamma_W=1.0,
                          n_neighbors=8, laplacian_power=2, random_state=0)
    fit = fit_estimator(est, X, y, neighbours=15)
    return est, fit, X


def test_kriging_weights_at_a_training_point_select_it(fitted):
    _, fit, _ = fitted
    rows = fit.kernel_rows()
    X0 = rows.views[0]
    idx = rows.neighbours_of(0, X0[:5])
    w = kriging_weights(rows.kernels, 0, X0[:5], idx)
    assert np.allclose(w, (idx == np.arange(5)[:, None]).astype(float), atol=1e-3)  # up to the jitter
    induction = kriging_weights(rows.kernels, 0, X0[:5], idx, rule="induction")
    assert np.allclose(induction.sum(axis=1), 1.0) and np.all(induction >= 0)


def test_node_values_by_triangular_solves_are_the_fitted_ones(fitted):
    _, fit, _ = fitted
    rows = fit.kernel_rows()
    for p in range(2):
        a = fit.coef[p].copy()  # not the fitted array itself: the triangular solves
        assert np.allclose(rows.node_values(p, a), fit.values[p], atol=1e-8 * np.abs(fit.values[p]).max())


def test_rows_times_coefficients_are_the_kriging_predictions(fitted):
    est, fit, X = fitted
    rows = fit.kernel_rows()
    views = est._feature_views(X[:30] + 0.05, reset=False)
    got = sum(fit.c[p] * (rows.cross(p, V) @ fit.coef[p]) for p, V in enumerate(views))
    assert np.allclose(got, fit.decision_function(views), atol=1e-10)
    with pytest.raises(ValueError, match="every training point"):
        rows.cross(0, views[0], cols=np.arange(3))
