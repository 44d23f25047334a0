"""The settings of the Poisson-type data terms of :class:`mvl.MVLLeastSquares` (``loss="poisson"``,
``"squared+poisson"``, and ``"auto"`` at few labels per class or for a class with few labels among many). The term
and its system are derived in :mod:`mvl.solvers.poisson` and solved by the registered solvers that declare these
losses (``losses``: "structured", O(m n^3); "vecchia", the kernels' sparse Vecchia precision at any size and on
incomplete views, :mod:`mvl.solvers.poisson_sparse`; "dense", the textbook reference); the fit goes the one route of
:mod:`mvl.estimators.fit_route` (the graph built there, :class:`mvl.solvers.problem.SourceTerm`), new points are
scored by :class:`mvl.solvers.rules.SourceRule`; the graph and the out-of-sample rule are in
:mod:`mvl.selftuned_graph`. ``solver="auto"`` (:func:`mvl.solvers.auto.plan`) takes "structured" up to
:data:`mvl.solvers.auto.AUTO_STRUCTURED_MAX` points within the memory budget, "vecchia" beyond and on incomplete
views (feature views); ``loss="auto"`` has no size cap.

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
outputs at a point's 10 nearest training points; a training point gets its own output; a point that misses views,
its neighbours on the coordinates of the views it has, :func:`mvl.solvers.rules.present_view_induction`). The
representer theorem also gives out-of-sample values, C f(x) = sum_p c_p K^p(x, X) A_p, but on validation they lost
up to 28 points to the transductive ones at one label per class (multi-view MNIST: the kernel term is 1e-5 of the
graph term, so f is shaped by the graph on the training points and the kernel extension off them is nearly flat).
Precomputed kernels: the representer rule (the induction needs k(x, x) of the new points, which the cross-kernel
input does not hold).
The class of an output is the argmax after the degree-weighted shift of :func:`mvl.solvers.poisson.fit_decision`.
"""

from __future__ import annotations

__all__ = ["LOSSES", "AUTO_LABELS_PER_CLASS", "AUTO_UNEQUAL_RATIO", "AUTO_UNEQUAL_LOSS", "POISSON_NEIGHBORS",
           "POISSON_RATIO", "few_labelled_class", "resolve_loss", "source_refusal", "source_allowed",
           "GRAPH_PARAMETERS", "poisson_gammas", "few_labels_message"]

LOSSES = ("auto", "squared", "poisson", "squared+poisson")
"""The ``loss`` options of MVL-LS: the data terms of :data:`mvl.solvers.registry.LOSSES`, or "auto"
(:func:`mvl.solvers.auto.plan`, with :func:`source_allowed`)."""

AUTO_LABELS_PER_CLASS = 5
"""``loss="auto"``: the Poisson-type term when the labelled points are at most this many per class on average
(l / P) and some points are unlabelled, the squared loss otherwise (chosen on validation draws:
``docs/guide/few_labels.md``); also the most labels of a class that :func:`few_labelled_class` calls few."""

AUTO_UNEQUAL_RATIO = 4
"""``loss="auto"`` with unequal labelled classes (:func:`few_labelled_class`): a class with at most
:data:`AUTO_LABELS_PER_CLASS` labels while the largest has at least this many times as many."""

AUTO_UNEQUAL_LOSS = "squared+poisson"
"""The data term of ``loss="auto"`` for unequal labelled classes (:func:`few_labelled_class`) above
:data:`AUTO_LABELS_PER_CLASS` labels per class on average: the squared loss plus the class-balanced source term,
whose centred sources weigh every class alike (:func:`mvl.solvers.poisson.source_weights`), where the squared loss
alone lets the few labels be outweighed. Chosen over "poisson" on validation draws
(``benchmarks/bench_few_labelled_class.py validate``, seeds 100-104, never the reported ones)."""

POISSON_NEIGHBORS = 10
"""k of the Poisson-type fit's self-tuned graph (graphlearning's default; the point itself counted)."""

POISSON_RATIO = 1e-5
"""The validated gamma_A / gamma_W of the source term (``benchmarks/bench_poisson.py validate``)."""


def few_labelled_class(counts):
    """Whether labelled class counts ``counts`` (one entry per labelled class) are that unequal: at least two
    classes, the smallest with at most :data:`AUTO_LABELS_PER_CLASS` labels and the largest with at least
    :data:`AUTO_UNEQUAL_RATIO` times as many."""
    import numpy as np

    counts = np.asarray(counts if counts is not None else (), dtype=np.int64).ravel()
    if counts.size < 2 or counts.min() < 1:
        return False
    return bool(counts.min() <= AUTO_LABELS_PER_CLASS and counts.max() >= AUTO_UNEQUAL_RATIO * counts.min())


def resolve_loss(loss, n_labelled, n_classes, n, supported=True, counts=None):
    """The data term of a fit on the label counts alone: ``loss`` itself, or for "auto", when some points are
    unlabelled (n_labelled < n) and ``supported``: "poisson" when n_labelled / n_classes <=
    :data:`AUTO_LABELS_PER_CLASS`, else :data:`AUTO_UNEQUAL_LOSS` when the labelled class counts ``counts`` are
    unequal (:func:`few_labelled_class`), else "squared"."""
    if loss != "auto":
        return loss
    if not (n_labelled < n and supported):
        return "squared"
    if n_labelled <= AUTO_LABELS_PER_CLASS * max(n_classes, 1):
        return "poisson"
    return AUTO_UNEQUAL_LOSS if few_labelled_class(counts) else "squared"


def source_refusal(est, has_missing_views, n_labelled, n):
    """Why ``loss="auto"`` may not take a Poisson-type term for ``est`` (a phrase), or None when it may: every point
    labelled (the term needs unlabelled points), precomputed kernels (the graph would come from the kernels'
    distance and new points from the representer rule, neither validated), gamma_W = 0 (no graph term), a graph
    parameter set (:data:`GRAPH_PARAMETERS`: the Poisson-type terms use a graph of their own), incomplete views."""
    if n_labelled >= n:
        return "every training point is labelled"
    if est.kernel == "precomputed":
        return 'kernel="precomputed"'
    if not est.gamma_W > 0:
        return "gamma_W = 0"
    touched = [name for name in GRAPH_PARAMETERS if not is_default(est, name)]
    if touched:
        return f"{', '.join(touched)} {'is' if len(touched) == 1 else 'are'} set"
    if has_missing_views:
        return "views are missing"
    return None


def source_allowed(est, has_missing_views, n_labelled, n_classes, n, counts=None):
    """The Poisson-type term ``loss="auto"`` may take for ``est`` ("poisson" or "squared+poisson",
    :func:`resolve_loss` on the label counts; :func:`mvl.solvers.auto.plan` then tries it first, with a solver
    that declares it), or None: the squared loss. The term needs few labels (on average, or in a class among many:
    :func:`few_labelled_class`, ``counts`` the labelled class counts) with some unlabelled points, feature views
    (the validated graph and induction rule), a graph term (gamma_W > 0) built from the data with the default graph
    parameters (:data:`GRAPH_PARAMETERS` untouched: the Poisson-type terms use a graph of their own) and complete
    views (:func:`source_refusal`). Otherwise the user's setting is one of the squared loss."""
    supported = source_refusal(est, has_missing_views, n_labelled, n) is None
    loss = resolve_loss("auto", n_labelled, n_classes, n, supported, counts)
    return None if loss == "squared" else loss


GRAPH_PARAMETERS = ("laplacian", "n_neighbors", "laplacian_power", "graph_weights", "between_weights")
"""The squared loss's graph parameters, which the Poisson-type terms replace by their own graph: set to anything but
its default, one of them keeps ``loss="auto"`` on the squared loss."""


def is_default(est, name):
    """Whether parameter ``name`` of estimator ``est`` is at its constructor default (same value and type)."""
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


def few_labels_message(est, y, what, fix):
    """The :class:`mvl.exceptions.FewLabelsWarning` text of a fit of ``est`` on labels ``y`` (all the training
    labels, -1 unlabelled, or the labelled ones) whose data term does not weigh the classes alike while a labelled
    class has few labels among many (:func:`few_labelled_class`): the class, its count against the largest's,
    ``what`` was fitted (a phrase: why not the few-label term) and ``fix``; None when the classes are not that
    unequal."""
    import numpy as np

    from .fit_route import labelled_class_counts

    labels, counts = labelled_class_counts(y)
    if not few_labelled_class(counts):
        return None
    few = labels[counts == counts.min()]
    names = ", ".join(repr(v) for v in np.asarray(few).tolist())
    return (f"{type(est).__name__}: class {names} has {counts.min()} labelled sample(s) against {counts.max()} for "
            f"the largest class, so few that they can be outweighed and the class hardly predicted: {what}. {fix}")
