"""The Poisson-type data terms of :class:`mvl.MVLLeastSquares` (``loss="poisson"``, ``"squared+poisson"``, and
``"auto"`` at few labels): the fit and the prediction. The term and its system are derived in
:mod:`mvl.solvers.poisson`; the graph and the out-of-sample rule are in :mod:`mvl.selftuned_graph`.

**The graph.** One self-tuned k-NN graph (k = :data:`POISSON_NEIGHBORS`) of the concatenated standardised views (or
of the summed kernels' distance for precomputed kernels), L = D - W, shared by every view's function; this replaces
the per-view graph of ``laplacian``, ``n_neighbors``, ``laplacian_power`` and ``graph_weights`` (which the Poisson-type
terms do not read). Chosen on validation draws (``benchmarks/bench_poisson.py validate``, seeds 100-104, never the
reported ones): per-view graphs, averaged or each view its own, lose 10-15 points on mfeat and multi-view MNIST (a
view's graph with several components breaks the centred sources); the self-tuned weights beat the Gaussian kernel
weights on USPST and MNIST and tie on mfeat; k = 10 ~ 5 > 20; L^2 and the normalized Laplacian lose (the latter
falls to chance at small gamma_A: its null space is not the constants).

**The sources.** Class-balanced (:func:`mvl.solvers.poisson.source_weights`): every class puts the same mass into
the graph whatever its number of labelled points (the same as Poisson learning's sources when the classes are
equally labelled); on validation draws with unequal counts it gained 5-12 points.

**The scale.** With the source term alone the solution depends on gamma_A / gamma_W and gamma_B / gamma_W only.
The validated ratio is gamma_A / gamma_W = :data:`POISSON_RATIO` (1e-5 ~ 1e-4 best; 1e-3, the package defaults'
1e-5 / 1e-2, loses 0.4 points on mfeat and 2 on USPST at one label per class, 1e-2 loses 4-8), so ``loss="poisson"``
raises gamma_W to gamma_A / POISSON_RATIO when it is smaller and scales gamma_B with it (:func:`poisson_gammas`);
``"squared+poisson"`` takes the gammas as given (its labelled squared term has a scale of its own).

**Prediction.** Feature views: the induction rule of :mod:`mvl.selftuned_graph` (the weighted mean of the training
outputs at a point's 10 nearest training points; a training point gets its own output). The representer theorem
also gives out-of-sample values, C f(x) = sum_p c_p K^p(x, X) A_p, but on validation they lost up to 28 points to
the transductive ones at one label per class (multi-view MNIST: the kernel term is 1e-5 of the graph term, so f is
shaped by the graph on the training points and the kernel extension off them is nearly flat). Precomputed kernels:
the representer rule (the induction needs k(x, x) of the new points, which the cross-kernel input does not hold).
The class of an output is the argmax after the degree-weighted shift of :func:`mvl.solvers.poisson.fit_decision`.
"""

from __future__ import annotations

import numpy as np

from ..labels import encode_targets

__all__ = ["LOSSES", "AUTO_LABELS_PER_CLASS", "POISSON_NEIGHBORS", "POISSON_RATIO", "POISSON_SOLVERS", "resolve_loss",
           "auto_supported", "GRAPH_PARAMETERS", "poisson_gammas", "fit_poisson", "poisson_decision"]

LOSSES = ("auto", "squared", "poisson", "squared+poisson")
"""The data terms of MVL-LS: the labelled least squares of eq (53), the centred source term, the two joined, or
"auto" (:func:`resolve_loss`)."""

AUTO_LABELS_PER_CLASS = 5
"""``loss="auto"``: the Poisson-type term when the labelled points are at most this many per class on average
(l / P) and some points are unlabelled, the squared loss otherwise (chosen on validation draws:
``docs/guide/few_labels.md``)."""

POISSON_NEIGHBORS = 10
"""k of the Poisson-type fit's self-tuned graph (graphlearning's default; the point itself counted)."""

POISSON_RATIO = 1e-5
"""The validated gamma_A / gamma_W of the source term (``benchmarks/bench_poisson.py validate``)."""

POISSON_SOLVERS = ("auto", "structured", "dense", "vecchia")
"""The solvers of the Poisson-type fit: "structured" (:func:`mvl.solvers.poisson.solve_structured`, O(m n^3)),
"vecchia" (the kernels' sparse Vecchia precision, one sparse factorisation per view, never an n x n array:
:mod:`mvl.solvers.poisson_sparse`) and "dense" (the textbook reference, for tests). "auto" is "structured" up to
:data:`mvl.solvers.auto.AUTO_STRUCTURED_MAX` samples, "vecchia" beyond (feature views)."""


def resolve_loss(loss, n_labelled, n_classes, n, supported=True):
    """The data term of a fit: ``loss`` itself, or for "auto" "poisson" when n_labelled / n_classes <=
    :data:`AUTO_LABELS_PER_CLASS`, n_labelled < n (some points unlabelled) and ``supported`` (the fit's other
    parameters and data allow the Poisson-type term: :func:`auto_supported`), else "squared"."""
    if loss != "auto":
        return loss
    few = n_labelled <= AUTO_LABELS_PER_CLASS * max(n_classes, 1)
    return "poisson" if few and n_labelled < n and supported else "squared"


def auto_supported(est, has_missing_views, n=0):
    """Whether ``loss="auto"`` may choose the Poisson-type term for ``est``: feature views (the validated graph and
    induction rule; with precomputed kernels the graph would come from the kernels' distance and new points from the
    representer rule, neither validated), a solver of :data:`POISSON_SOLVERS`, a graph term (gamma_W > 0) built from
    the data with the default graph parameters (:data:`GRAPH_PARAMETERS` untouched: the Poisson-type terms use a graph
    of their own) and complete views, at any size ``n`` (beyond the structured solver's range the sparse
    "vecchia" solver). Otherwise the user's setting is one of the squared loss, and "auto" keeps it."""
    graph_untouched = all(_is_default(est, name) for name in GRAPH_PARAMETERS)
    return (est.kernel != "precomputed" and est.solver in POISSON_SOLVERS and graph_untouched and est.gamma_W > 0
            and not has_missing_views)


GRAPH_PARAMETERS = ("laplacian", "n_neighbors", "laplacian_power", "graph_weights", "between_weights")
"""The squared loss's graph parameters, which the Poisson-type terms replace by their own graph: set to anything but
its default, one of them keeps ``loss="auto"`` on the squared loss."""


def _is_default(est, name):
    import inspect

    default = inspect.signature(type(est).__init__).parameters[name].default
    value = getattr(est, name)
    return isinstance(value, (str, int, type(None))) and value == default and type(value) is type(default)


def poisson_gammas(est, loss):
    """(gamma_A, gamma_B, gamma_W) of a Poisson-type fit: with ``loss="poisson"`` gamma_W is raised to gamma_A /
    :data:`POISSON_RATIO` when smaller (the source term alone sees only the ratios; a larger gamma_W, i.e. a smaller
    ratio, is kept) and gamma_B scaled by the same factor; ``"squared+poisson"``: the gammas as given."""
    gA, gB, gW = est._gamma_A(), float(est._gamma_B()), float(est.gamma_W)
    if loss == "poisson" and gW < gA / POISSON_RATIO:
        scale = gA / POISSON_RATIO / gW if gW > 0 else None
        gB = gB * scale if scale is not None else gB
        gW = gA / POISSON_RATIO
    return gA, gB, gW


def fit_poisson(est, X, y, loss, n_samples=0, has_missing_views=False):
    """Fit ``est`` (:class:`mvl.MVLLeastSquares`) with the Poisson-type ``loss``; sets the fitted attributes.
    ``n_samples`` and ``has_missing_views`` (the training input holds NaN) choose the solver of ``solver="auto"``."""
    import time

    from ..selftuned_graph import GraphSpace, kernel_distances, selftuned_weights, unnormalized_laplacian
    from ..solvers.poisson import combined_outputs, fit_decision, residual, solve_dense, solve_structured
    from ..validation import check_combination
    from .base import check_swamped

    solver = est.solver
    if solver not in POISSON_SOLVERS:
        raise ValueError(f'loss="{loss}" is solved by solver "structured", "vecchia" (sparse, any size) or "dense" '
                         f'(the textbook reference), not "{solver}": the cg, graph and nystrom solvers are not '
                         'implemented for the source term (mvl.solvers.poisson says what each would cost)')
    if solver == "auto":
        from ..solvers.auto import AUTO_STRUCTURED_MAX

        sparse_ = n_samples > AUTO_STRUCTURED_MAX or has_missing_views
        solver = "vecchia" if sparse_ and est.kernel != "precomputed" else "structured"
    if solver == "vecchia":
        return _fit_poisson_sparse(est, X, y, loss)
    K = est._fit_kernels(X)
    if est.view_mask_ is not None:
        raise ValueError(f'loss="{loss}" needs complete views (no NaN rows) on solver "{solver}"; use '
                         'solver="vecchia", or loss="squared" with missing views')
    m, n, _ = K.shape
    y_enc, labelled = est._fit_labels(y, n)
    P = len(est.classes_)
    Y_L = encode_targets(y_enc[labelled], P)
    if est.kernel == "precomputed":
        est._graph_space, Z = None, None
        W = selftuned_weights(None, POISSON_NEIGHBORS, distances=kernel_distances(K))
    else:
        est._graph_space = GraphSpace(est._fit_views)
        Z = est._graph_space.transform(est._fit_views)
        W = selftuned_weights(Z, POISSON_NEIGHBORS)
    L, degrees = unnormalized_laplacian(W)
    c = check_combination(est.c, m)
    est.gamma_B_ = est._gamma_B()
    gA, gB, gW = poisson_gammas(est, loss)
    est.gamma_A_ = gA
    t0 = time.perf_counter()
    if solver == "dense":
        coef = solve_dense(K, labelled, Y_L, c, gA, gB, gW, np.stack([L.toarray()] * m), loss=loss, balanced=True)
    else:
        Ls = [L] * m if loss == "poisson" else np.stack([L.toarray()] * m)
        coef = solve_structured(K, labelled, Y_L, c, gA, gB, gW, Ls, loss=loss, balanced=True)
    res = residual(K, labelled, Y_L, c, coef, gA, gB, gW, [L] * m, loss=loss, balanced=True)
    est.fit_seconds_ = time.perf_counter() - t0
    if not np.all(np.isfinite(coef)):
        raise FloatingPointError(f"the solution has NaN or inf entries; increase gamma_A (now {gA:g})")
    F = combined_outputs(K, coef, c)
    est._decision_rule = fit_decision(F, weights=degrees)
    est._train_outputs = F
    est._graph_points = Z
    est.coef_, est.c_ = coef, c
    est.n_labelled_ = len(labelled)
    est.solver_ = "dense" if solver == "dense" else "structured"
    est.loss_ = loss
    est.condition_estimate_ = np.nan
    est.centres_ = None
    est.n_iter_, est.residual_, est.converged_ = 1, res, bool(np.isfinite(res))
    est._scalable = None
    check_swamped(est, _two_class(est._decision_rule.scores(F[labelled])),
                  (("gamma_A", gA), ("gamma_B", gB), ("gamma_W", gW)), y_enc[labelled])
    return est


def _fit_poisson_sparse(est, X, y, loss):
    """The Poisson-type fit on the sparse route (:mod:`mvl.solvers.poisson_sparse`): kernels kept as feature views,
    the self-tuned graph sparse, node values from one sparse factorisation per view; complete or incomplete views."""
    import time

    from ..selftuned_graph import GraphSpace, selftuned_weights, unnormalized_laplacian
    from ..solvers.poisson import fit_decision
    from ..solvers.poisson_sparse import solve_poisson_sparse
    from ..validation import check_combination
    from .base import check_swamped

    if est.kernel == "precomputed":
        raise ValueError(f'loss="{loss}" with solver="vecchia" needs feature views (Vecchia\'s precision is built '
                         'from each view\'s nearest neighbours); use solver="structured" for precomputed kernels')
    kernels = est._fit_kernel_operator(X, 0, missing=True)
    mask = est.view_mask_
    views = est._fit_views
    m, n = len(views), views[0].shape[0]
    y_enc, labelled = est._fit_labels(y, n)
    P = len(est.classes_)
    Y_L = encode_targets(y_enc[labelled], P)
    if mask is not None:  # the graph's coordinates of a missing view: the training mean (GraphSpace)
        views = [np.where(mask[:, [p]], Xp, np.nan) for p, Xp in enumerate(views)]
    est._graph_space = GraphSpace(views)
    Z = est._graph_space.transform(views)
    W = selftuned_weights(Z, POISSON_NEIGHBORS)
    L, degrees = unnormalized_laplacian(W)
    c = check_combination(est.c, m)
    est.gamma_B_ = est._gamma_B()
    gA, gB, gW = poisson_gammas(est, loss)
    est.gamma_A_ = gA
    t0 = time.perf_counter()
    fit = solve_poisson_sparse(kernels, labelled, Y_L, c, gA, gB, gW, laplacians=[L] * m, loss=loss, balanced=True,
                               mask=mask, random_state=0 if est.random_state is None else est.random_state)
    est.fit_seconds_ = time.perf_counter() - t0
    if not np.all(np.isfinite(fit.values)):
        raise FloatingPointError(f"the solution has NaN or inf entries; increase gamma_A (now {gA:g})")
    F = fit.decision_nodes()
    est._decision_rule = fit_decision(F, weights=degrees)
    est._train_outputs = F
    est._graph_points = Z
    est.coef_, est.c_ = fit.coef, c
    est.n_labelled_ = len(labelled)
    est.solver_ = "vecchia"
    est.loss_ = loss
    est.condition_estimate_ = np.nan
    est.centres_ = None
    res = float(fit.info["residual"])
    est.n_iter_, est.residual_, est.converged_ = 1, res, bool(np.isfinite(res))
    est._scalable = None
    check_swamped(est, _two_class(est._decision_rule.scores(F[labelled])),
                  (("gamma_A", gA), ("gamma_B", gB), ("gamma_W", gW)), y_enc[labelled])
    return est


def _two_class(S):
    return 0.5 * (S[:, 1] - S[:, 0]) if S.shape[1] == 2 else S


def poisson_decision(est, X):
    """Decision values (t,) or (t, P) of a Poisson-type fit at the points X (module docstring)."""
    from sklearn.utils.validation import check_is_fitted

    check_is_fitted(est)
    if est._graph_space is None:  # precomputed kernels: the representer rule
        F = est._outputs(est._test_kernels(X))
    else:
        from ..selftuned_graph import knn_induction

        views = est._feature_views(X, reset=False)
        F = knn_induction(est._graph_points, est._train_outputs, est._graph_space.transform(views),
                          POISSON_NEIGHBORS)
    return _two_class(est._decision_rule.scores(F))
