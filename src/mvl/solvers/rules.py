"""The prediction rules a solver returns with its coefficients (``SolverResult.rule``): how a fitted MVL-LS model
scores new points.

:class:`RepresenterRule`: the representer theorem, C f(x) = sum_p c_p K^p(x, X) A_p (Theorem 2, eq 14), on the
training kernels or on a solver's own kernel rows (solver "vecchia_direct": the kriging rows,
:mod:`mvl.solvers.vecchia_kriging`). :class:`SourceRule`: the Poisson-type fits' rule
(:mod:`mvl.estimators.poisson_fit`): the induction rule of :mod:`mvl.selftuned_graph` on feature views (the
representer rule for precomputed kernels), then the degree-weighted class shift of
:func:`mvl.solvers.poisson.fit_decision`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["RepresenterRule", "SourceRule", "present_view_induction"]


def _two_class(S):
    return 0.5 * (S[:, 1] - S[:, 0]) if S.shape[1] == 2 else S


def present_view_induction(points, outputs, views, space, k, search=None):
    """The induction rule of :func:`mvl.selftuned_graph.knn_induction` at new points given as feature ``views``,
    each point from the views it has (as the representer rule combines the present views' functions): a point
    that misses views (NaN rows, :func:`mvl.missing_views.feature_presence`) has its neighbours found on the
    coordinates of its present views only; ``points`` the training points' graph coordinates (``space``);
    ``search`` the graph's neighbour search of the training points (dist, ind), reused when the new points are
    exactly the training points."""
    from ..missing_views import feature_presence
    from ..selftuned_graph import knn_induction

    Z = space.transform(views)
    mask = feature_presence(views, name="X")
    if mask is None:
        same = search is not None and Z.shape == np.shape(points) and np.array_equal(Z, points)
        return knn_induction(points, outputs, Z, k, search=search if same else None)
    ends = np.cumsum([v.shape[1] for v in views])
    cols = [np.arange(e - v.shape[1], e) for v, e in zip(views, ends, strict=True)]
    F = np.empty((Z.shape[0], np.shape(outputs)[1]))
    patterns, which = np.unique(mask, axis=0, return_inverse=True)
    for j, present in enumerate(patterns):  # one neighbour search per pattern of present views
        rows = np.flatnonzero(which.ravel() == j)
        c = np.concatenate([cols[p] for p in np.flatnonzero(present)])
        F[rows] = knn_induction(points[:, c], outputs, Z[np.ix_(rows, c)], k)
    return F


@dataclass
class RepresenterRule:
    """C f(x) = sum_p c_p K^p(x, X) A_p. ``kernels``: the kernel rows a solver predicts from (None: the training
    kernels, kept by the estimator)."""

    kernels: Any = None
    representer = True
    """It scores new points from the training kernels (the estimator keeps what they need when ``kernels`` is
    None)."""

    def decision(self, est, X):
        """Scores (t,) or (t, P) of the samples X."""
        return est._representer_decision(X)

    def training_decision(self, labelled):
        """Scores at the labelled training points without new kernels, or None (the estimator computes them)."""
        return None


@dataclass
class SourceRule:
    """The Poisson-type fits' rule: outputs F of the training points (n, P), the decision rule fitted on them
    (:class:`mvl.solvers.poisson.PoissonDecision`), the graph's coordinates of the training points and the map of new
    points into them (None: precomputed kernels, new points by the representer rule), k of the induction."""

    decision_rule: Any
    outputs: np.ndarray
    points: Any = None
    space: Any = None
    neighbours: int = 10
    kernels: Any = None  # no kernel rows of its own
    search: Any = None  # the graph's neighbour search (dist, ind) of the training points, or None
    representer = False  # new points by the graph's induction rule (precomputed kernels: the test kernels given)

    def decision(self, est, X):
        """Scores (t,) or (t, P) of the samples X (module docstring)."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(est)
        if self.space is None:  # precomputed kernels: the representer rule
            F = est._outputs(est._test_kernels(X))
        else:
            views = est._feature_views(X, reset=False)
            F = present_view_induction(self.points, self.outputs, views, self.space, self.neighbours, self.search)
        return _two_class(self.decision_rule.scores(F))

    def training_decision(self, labelled):
        """Scores at the labelled training points."""
        return _two_class(self.decision_rule.scores(self.outputs[labelled]))
