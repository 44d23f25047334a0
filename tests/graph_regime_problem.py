"""A small graph-regime problem shared by the Vecchia solver tests: 240 training and 60 new points of a 3-class
multi-view manifold (views of 6, 8 and 10 standardised features), 3 labelled points per class, and the MVL-LS
keywords of the graph regime (sigma = 1.5, gamma_W = 1, 8-NN graphs, L^2)."""

import numpy as np

from mvl.data.synthetic import make_multiview_manifold

N, T, FEATURES = 240, 60, (6, 8, 10)


def manifold_problem():
    """(X training (N, 24), y with -1 for the unlabelled points (N,), X new (T, 24))."""
    d = make_multiview_manifold(N + T, n_classes=3, n_views=3, n_features=max(FEATURES), random_state=3)
    views = [V[:, :f] for V, f in zip(d.views, FEATURES, strict=True)]
    views = [(V - V[:N].mean(axis=0)) / V[:N].std(axis=0) for V in views]
    X = np.hstack(views)
    y = np.full(N, -1)
    for k in range(3):
        y[np.flatnonzero(d.y[:N] == k)[:3]] = k
    return X[:N], y, X[N:]


def graph_params(gamma_A, **kw):
    """MVLLeastSquares keywords of the problem's graph regime at ``gamma_A``, updated by ``kw``."""
    return {**dict(kernel="rbf", views=list(FEATURES), bandwidth=[1.5] * 3, gamma_A=gamma_A, gamma_B=0.0,
                   gamma_W=1.0, n_neighbors=8, laplacian_power=2, random_state=0), **kw}
