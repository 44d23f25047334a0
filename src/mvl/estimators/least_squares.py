"""Vector-valued multi-view least squares, MVL-LS (Theorem 10, Algorithm 1): the estimator. The solvers of its
system (67)-(68) are in :mod:`mvl.solvers` (the derivation in :mod:`mvl.solvers.structured`)."""

from __future__ import annotations

from numbers import Real

import numpy as np

from sklearn.base import _fit_context
from sklearn.utils._param_validation import StrOptions

from ..docstrings import AUTO_GAMMA_A, AUTO_GAMMA_B, shared_parameters
from .base import (
    StrictInterval,
    COUNT,
    POSITIVE,
    MVLClassifier,
    take_samples,
)
from ..exceptions import IllConditionedWarning  # noqa: F401  (named here for the condition warning's users)
from ..solvers import get_solver, plan
from . import fit_route
from .fit_route import (  # noqa: F401  (the route's helpers, named here as before)
    ILL_CONDITIONED,
    default_max_memory,
    kept_for_prediction,
    memory_budget,
    sample_and_view_counts,
)
from .poisson_fit import LOSSES

__all__ = ["MVLLeastSquares", "MEMORY_ADVICE", "memory_budget", "sample_and_view_counts", "kept_for_prediction"]


MEMORY_ADVICE = ('use solver="cg" (exact, iterative: no n x n factorisation) or solver="nystrom" (approximate, '
                 'O(n n_components) memory per view), or fewer training samples')
"""What MVL-LS and MVL-LS-optC say when a fit would not fit in memory."""


@shared_parameters(gamma_A=AUTO_GAMMA_A, gamma_B=AUTO_GAMMA_B)
class MVLLeastSquares(MVLClassifier):
    """Multi-view vector-valued least squares classifier (MVL-LS, Algorithm 1).

    Semi-supervised: samples labelled -1 (or None/NaN in object arrays) are unlabelled and enter through the
    graph (gamma_W) and the between-view term (gamma_B). The defaults are the validation study's choice
    (``benchmarks/study_defaults.py``): a 5-NN graph with kernel weights, the normalized Laplacian squared,
    gamma_A = 1e-5 (the graph regime's rule with "vecchia_direct", ``gamma_A="auto"``), gamma_B = 0 (3e-4 on
    incomplete views, ``gamma_B="auto"``), gamma_W = 1e-2;
    ``n_neighbors=None`` gives the paper's dense graph. To select the graph and the gammas by cross-validation, use
    :class:`mvl.MVLLeastSquaresCV`.

    Parameters
    ----------
    {gamma_A, gamma_B, gamma_W, laplacian, n_neighbors, laplacian_power, graph_weights, n_classes, c}
    solver : "auto", "structured", "dense", "cg", "nystrom", "graph", "vecchia_direct" or "vecchia", default "auto"
        A solver of :data:`mvl.solvers.SOLVERS`. "structured": Theorem 10 view by view, exact, O(m n^3) time and
        O(m n^2) memory (:mod:`mvl.solvers.structured`). "cg": the same exact system by conjugate gradients
        (:mod:`mvl.solvers.cg`), exact to ``tol``, no n x n array beyond the kernels that fit ``max_memory``.
        "nystrom": each view's function on the span of ``n_components`` training points, approximate,
        O(n n_components m) memory (:mod:`mvl.solvers.nystrom`). "graph": exact to ``tol`` in the graph regime
        (gamma_W / gamma_A >= 1e4) where "cg" stalls (:mod:`mvl.solvers.graph`). "vecchia_direct": the graph
        regime at 10^4-10^6 points, the kernels replaced by Vecchia's sparse approximation, one sparse
        factorisation, kriging predictions (:mod:`mvl.solvers.vecchia_direct`; complete feature views); where the
        factorisation on all points would exceed ``max_memory``, on a node subsample that fits (every labelled
        point and uniformly drawn unlabelled ones, ``centres_``), the other points predicted by kriging
        (:mod:`mvl.solvers.vecchia_nodes`). "cg",
        "nystrom", "graph" and "vecchia_direct" need a kNN graph (``n_neighbors``) when gamma_W > 0. "dense": the
        textbook (u+l)m system, for tests and benchmarks. "vecchia": the few-label terms only (``loss="poisson"``,
        ``"squared+poisson"``) on the kernels' sparse Vecchia precision, any size, incomplete views, feature views
        (:mod:`mvl.solvers.poisson_sparse`). Any solver registered later (:func:`mvl.solvers.registry.register`) is
        accepted by name. "auto" (:func:`mvl.solvers.auto.plan`, with the loss):
        precomputed kernels -> "structured"; feature views -> "structured" up to 5,000 training points (if its
        memory fits), beyond "vecchia_direct" in the measured graph regime (``regime_``; on a node subsample
        when all points do not fit, falling back with a warning only when not even the labelled points do),
        otherwise "cg" up to 20,000 and "nystrom" beyond; with the few-label terms "structured" up to 5,000 points
        within the memory budget, "vecchia" beyond and on incomplete views.
    n_components : int >= 1, default 1000
        Nystrom centres (uniformly drawn training points, seeded by ``random_state``): the approximation of
        "nystrom" and the preconditioner of "cg" (typical 500-4000; more is more accurate and costs
        O(n n_components m) memory); not used by "graph".
    tol : float in (0, 1), default 1e-6
        "cg", "graph": stop when the relative residual ||r - (B + l gamma_A I) a|| / ||r|| of the system (68) is
        <= tol for every output column; "graph" also when the estimated relative error of its quadratic objective
        is <= tol, which bounds every decision value's error by ||c|| sqrt(tol) ||a||_A
        (:func:`mvl.solvers.graph.solve_graph`; 1e-4 halves the iterations of 1e-6, with the same predictions where
        measured). The direct solvers ("structured", "dense", "vecchia_direct", "vecchia"): a solve whose true
        relative residual exceeds ``tol`` is reported as not converged (``converged_`` False, a ConvergenceWarning
        naming the gamma that makes the system too ill-conditioned).
    max_iter : int >= 1, default 500
        "cg", "graph": iteration limit; reaching it warns (``ConvergenceWarning``) with the residual.
    max_memory : float > 0 or None, default None
        Bytes the kernels of "cg" may keep (above it they are recomputed per product), and the budget of
        "auto"; None: half of the memory available at fit time.
    random_state : int, RandomState or None, default None
        Seed of the Nystrom centres ("cg", "nystrom") and, if an int, of the orderings of "graph"'s Vecchia
        preconditioner (else 0).
    verbose : int >= 0, default 0
        "cg": print the residual after every iteration.
    between_weights : array (n,) of non-negative numbers, or None, default None
        Per-point weights w of the between-view term, M_B = diag(w) (x) M_m; None is w = 1 (eq 57). The
        indicator of the unlabelled points gives co-regularization on them (Section 3.4, eq 43-48;
        Sindhwani & Rosenberg 2008, see :mod:`mvl.coreg`).
    {kernel, views, bandwidth}
    loss : "auto", "squared", "poisson" or "squared+poisson", default "auto"
        The data term. "squared": the labelled least squares of eq (53), (1/l) sum_j ||y_j - C f(x_j)||^2.
        "poisson": the centred source term of Poisson learning (Calder et al. 2020) in its place,
        -(2/l) sum_j <y_j - ybar, C f(x_j)>, ybar the mean target (:mod:`mvl.solvers.poisson`): the low-label
        remedy of a graph-dominated fit, which otherwise tends to a constant with spikes at the labels.
        "squared+poisson": both. The Poisson-type terms use one self-tuned 10-NN graph of the concatenated
        standardised views, L = D - W, for every view (not ``laplacian``, ``n_neighbors``, ``laplacian_power``,
        ``graph_weights``), gamma_W raised to gamma_A / 1e-5 if smaller with "poisson", the solvers that declare
        these losses ("structured" and "dense" on complete views, "vecchia" at any size and on incomplete views),
        and predict new points by the graph's induction rule (:mod:`mvl.estimators.poisson_fit`). "auto":
        "poisson" when at most 5 points per class are labelled on average, "squared+poisson" when a labelled class
        has at most 5 labels while the largest has at least 4 times as many (the class-balanced sources keep the
        few-label class, which the squared loss alone lets the others outweigh), in both cases when some points are
        unlabelled and the other parameters allow it (feature views, gamma_W > 0, the graph parameters at their
        defaults, complete views, a solver that declares the loss; at any size: "structured" up to 5,000 points
        within the memory budget, "vecchia" beyond), "squared" otherwise (the thresholds and the unequal classes'
        term chosen on validation draws, ``AUTO_LABELS_PER_CLASS`` and ``AUTO_UNEQUAL_LOSS`` of
        :mod:`mvl.estimators.poisson_fit`). Where "auto" keeps the squared loss for such unequal classes
        (a setting above does not allow the term), a :class:`mvl.exceptions.FewLabelsWarning` names the class, the
        reason and the fix.

    Attributes
    ----------
    coef_ : array (m, n, P)
        Coefficients a_j per view (A of Theorem 10, view-major).
    {fit_attributes}
    c_ : array (m,)
        The combination vector c of C = c^T (x) I (eq 52) of the fit: ``c``, or the average 1/m for None (with
        ``dropped_views_``, ``c`` over the kept views, renormalised to its sum).
    condition_estimate_ : float
        1-norm condition estimate of the factored systems (structured solver; NaN for cg and nystrom).
    regime_ : float or None
        solver="auto" beyond the structured solver (feature views, over 5,000 points, a kNN graph): the measured
        graph-regime size :func:`mvl.solvers.auto.measured_regime` (the fraction of the kernels' trace that
        ``n_components`` Nystrom centres miss, on 500 sampled points, times (gamma_B m + gamma_W 2^k) / gamma_A),
        "vecchia_direct" when >= 1 (:data:`mvl.solvers.auto.GRAPH_REGIME`); None when not measured.
    gamma_A_ : float
        The gamma_A of the fit (``gamma_A="auto"`` resolved): 1e-5, or with solver "vecchia_direct" the rule's value
        (:func:`mvl.solvers.vecchia_direct.share_gamma_A`) where the graph term's limit is not degenerate.
    gamma_B_ : float
        The gamma_B of the fit (``gamma_B="auto"`` resolved).
    centres_ : array (M,) or None
        "nystrom": indices of the training points that carry the coefficients (``coef_`` is then (m, M, P));
        "vecchia_direct" on a node subsample: the nodes.
    {solve_attributes}
    {view_attributes}
    loss_ : str
        The data term used ("auto" resolved).

    See Also
    --------
    MVLLeastSquaresCV : the graph and the gammas selected by cross-validation.
    MVLLeastSquaresOptC : the same problem with the combination c learned (Section 6).
    MVLSVM : the multi-class SVM of the same framework (Algorithm 2).
    mvl.coreg : co-regularization on the unlabelled points (``between_weights``).

    Notes
    -----
    The gammas enter multiplied by l, the number of labelled samples, exactly
    as in eq (67)-(68), so values from the paper mean the same here. Labels: any sortable labels,
    -1 (or None/NaN in object arrays) marks an unlabelled sample (:mod:`mvl.estimators.base`). Before a large
    allocation the memory is estimated: InsufficientMemoryError (a MemoryError) says what to do instead.

    Missing views (incomplete multi-view data, :mod:`mvl.solvers.incomplete`): a sample's missing view is a row of NaN
    across all that view's columns (with "precomputed", a NaN row and column of that view's Gram matrix; at
    prediction a NaN row of the view's slice); a NaN inside an otherwise present view is an error, and so is a
    sample with no view. A feature view missing in every training sample is dropped before anything is chosen
    (a MissingViewWarning naming it; ``dropped_views_``, and ``c``, ``bandwidth`` read for the other views): the
    fit is that on the other views. Each view's function is then learnt on the samples that have the view, the
    combination c is renormalised over each sample's present views (the mean of the present views for the default
    c), the between-view term couples the views present together, each graph is built on its view's samples, and a
    test point is predicted from the views it has. Solvers "structured" (O(sum_p n_p^3)), "dense", "cg" and
    "nystrom" (the same system, :mod:`mvl.solvers.system`; view p draws min(n_components, n_p) centres among its
    samples, ``centres_`` is their union and ``coef_[p]`` is zero at the other views' centres); "graph" and
    "vecchia_direct" need complete views ("auto" then picks "cg" or "nystrom", with a GraphRegimeFallbackWarning
    in the measured graph regime); scikit-learn's
    ``StandardScaler`` passes the NaN through in a ``Pipeline``. With views missing, gamma_B > 0 carries the labels
    across views at the unlabelled samples: ``gamma_B="auto"`` (the default) takes
    :data:`mvl.estimators.base.INCOMPLETE_GAMMA_B` then (chosen on validation draws,
    ``benchmarks/bench_incomplete.py --sweep``), 0 on complete views.

    {mvl_references}

    {mfeat_example}
    >>> from mvl import MVLLeastSquares
    >>> train, test = idx[:500], idx[500:]
    >>> y = ds.y[train].copy()
    >>> y[50:] = -1                                         # 50 labelled samples, 450 unlabelled
    >>> model = MVLLeastSquares(views=[76, 64, 6]).fit(X[train], y)
    >>> bool(model.score(X[test], ds.y[test]) > 0.85)
    True
    >>> model.decision_function(X[test]).shape              # (t, P): one output per class
    (1500, 10)
    """

    # scikit-learn's parameter validation (run by fit): the MVL entries shared with optC and the SVMs, then the
    # solver's, one per line
    _parameter_constraints: dict = {
        **MVLClassifier._parameter_constraints,
        "gamma_A": [*MVLClassifier._parameter_constraints["gamma_A"], StrOptions({"auto"})],
        "gamma_B": [*MVLClassifier._parameter_constraints["gamma_B"], StrOptions({"auto"})],
        "solver": [fit_route.RegisteredSolvers()],
        "between_weights": [None, "array-like"],
        "n_components": [COUNT],
        "tol": [StrictInterval(Real, 0, 1, closed="neither")],
        "max_iter": [COUNT],
        "max_memory": [None, POSITIVE],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
        "loss": [StrOptions(set(LOSSES))],
    }
    _memory_advice = MEMORY_ADVICE
    _missing_views = True

    def __init__(self, *, gamma_A="auto", gamma_B="auto", gamma_W=1e-2, c=None, laplacian="normalized",
                 solver="auto", n_neighbors=5, n_classes=None, between_weights=None, laplacian_power=None,
                 graph_weights="kernel", kernel="rbf", views=None, bandwidth=None, n_components=1000, tol=1e-6,
                 max_iter=500, max_memory=None, random_state=None, verbose=0, loss="auto"):
        self.gamma_A = gamma_A
        self.gamma_B = gamma_B
        self.gamma_W = gamma_W
        self.c = c
        self.laplacian = laplacian
        self.solver = solver
        self.n_neighbors = n_neighbors
        self.n_classes = n_classes
        self.between_weights = between_weights
        self.laplacian_power = laplacian_power
        self.graph_weights = graph_weights
        self.kernel = kernel
        self.views = views
        self.bandwidth = bandwidth
        self.n_components = n_components
        self.tol = tol
        self.max_iter = max_iter
        self.max_memory = max_memory
        self.random_state = random_state
        self.verbose = verbose
        self.loss = loss

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit on X (see ``kernel``) and labels ``y`` (n,), -1 = unlabelled: the one route of
        :mod:`mvl.estimators.fit_route` (loss and solver chosen together, every declaration checked, the typed
        result applied)."""
        self._scalable = None
        self._rule = None
        self.view_mask_ = None
        self.regime_ = None
        built = {}  # the regime measurement's kernel operator, reused by the fit
        if self.kernel == "linear":
            _warn_linear_scales(self, X)
        regime, source_allowed = fit_route.describe(self, X, y, built)
        chosen = plan(self.solver, regime, self.loss, source_allowed)
        self.loss_, self.solver_ = chosen.loss, chosen.solver
        solver = get_solver(chosen.solver)
        fit_route.check_declarations(self, regime, solver, chosen.loss)
        nodes = solver.subsample(regime)
        if nodes is not None:  # on a node subsample (e.g. mvl.solvers.vecchia_nodes): the others as new points
            Xs, ys = take_samples(X, nodes), np.asarray(y)[nodes]
            problem, result, seconds = fit_route.solve(self, Xs, ys, regime, solver, chosen.loss)
            fit_route.apply_result(self, Xs, problem, result, solver, seconds)
            self.centres_, self.n_train_ = nodes, regime.n
        else:
            problem, result, seconds = fit_route.solve(self, X, y, regime, solver, chosen.loss, built)
            fit_route.apply_result(self, X, problem, result, solver, seconds)
        if self.loss == "auto" and chosen.loss == "squared":
            _warn_few_labelled_class(self, y, regime)
        return self

    def decision_function(self, X):
        """Scores of the samples of X: (t,) for two classes (positive: ``classes_[1]``), (t, P) otherwise, by the
        fit's prediction rule (:mod:`mvl.solvers.rules`): the representer theorem on the training kernels (or a
        solver's own kernel rows), or after a Poisson-type fit (``loss_``) the induction rule for feature views
        minus the fitted class shift."""
        rule = getattr(self, "_rule", None)
        if rule is None:
            return self._representer_decision(X)
        return rule.decision(self, X)


def _warn_few_labelled_class(est, y, regime):
    """:class:`mvl.exceptions.FewLabelsWarning` after ``loss="auto"`` kept the squared loss while a labelled class has
    at most ``AUTO_LABELS_PER_CLASS`` labels and the largest at least ``AUTO_UNEQUAL_RATIO`` times its count
    (:func:`mvl.estimators.poisson_fit.few_labelled_class`), where "auto" takes the class-balanced few-label term
    when it may: here the settings did not allow it (:func:`mvl.estimators.poisson_fit.source_refusal`) or the named
    solver does not carry it. The warning names the class, the reason and the fix. Measured
    (``benchmarks/bench_few_labelled_class.py``): 3,000 points labelled 20 / 20 / 1 per class, squared loss
    accuracy 0.643 and recall 0.005 of the one-label class; weighting the classes' squared losses alike
    (l / (P l_c)) 0.668 and 0.08; loss="squared+poisson" 0.985 and 0.985 (its centred sources weigh every class
    alike)."""
    import warnings

    from ..exceptions import FewLabelsWarning
    from .poisson_fit import AUTO_UNEQUAL_LOSS, few_labels_message, source_refusal

    why = source_refusal(est, regime.missing, regime.l, regime.n)
    if why == "every training point is labelled":
        return  # no graph to carry the sources: the term does not apply
    if why is None:
        why = f'solver="{est.solver_}" carries only the squared loss'
        fix = f'Use solver="auto" (or one that carries loss="{AUTO_UNEQUAL_LOSS}") for the class-balanced term.'
    elif why == 'kernel="precomputed"':
        fix = (f'Set loss="{AUTO_UNEQUAL_LOSS}" (or "poisson"): its centred source term weighs every class alike '
               "(with precomputed kernels its graph is that of the kernels' distance, not validated).")
    elif why == "gamma_W = 0":
        fix = (f'Set gamma_W > 0 (e.g. the default 1e-2) and loss="{AUTO_UNEQUAL_LOSS}" (or "poisson"): its '
               "centred source term on the graph weighs every class alike.")
    else:
        fix = (f'Set loss="{AUTO_UNEQUAL_LOSS}" (or "poisson"): its centred source term weighs every class alike '
               "(on a graph of its own).")
    message = few_labels_message(est, y, f'loss="auto" kept the squared loss because {why}', fix)
    if message is not None:  # stacklevel: this function, fit, scikit-learn's fit wrapper, the caller
        warnings.warn(message, FewLabelsWarning, stacklevel=4)


LINEAR_SCALE_RATIO = 1e12
"""Linear views whose kernel scales (mean ||x||^2 over the training samples) differ by more than this: the system
(67)-(68) of the sum of their kernels is then too ill-conditioned for float64 at any gamma_A."""


def _warn_linear_scales(est, X):
    """:class:`mvl.exceptions.IllConditionedWarning` naming the views when the linear kernels' scales differ by more
    than :data:`LINEAR_SCALE_RATIO`: one view's kernel K^p = X_p X_p^T then dwarfs another's and gamma_A, and the
    solve loses the small view and the regularisation to rounding (measured in ``benchmarks/probe_route_checks.py``:
    views scaled 1e6 / 1 / 1e-6, accuracy 0.29 "structured", 0.43 "dense", 0.89 "cg" with a breakdown, 0.95
    unscaled). The Gaussian kernel's bandwidth rule is per view, so it is not affected. Input that is not numeric
    is left to the fit's validation."""
    import warnings

    from .inputs import is_view_list

    try:
        if is_view_list(X):
            arrays = [np.asarray(v, dtype=np.float64) for v in X]
        else:
            A = np.asarray(X.to_numpy(dtype=np.float64, na_value=np.nan) if hasattr(X, "to_numpy") else X,
                           dtype=np.float64)
            arrays = [A[:, c] for c in est._view_columns(A.shape[1])]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN view: its scale is NaN, not compared
            scales = np.array([np.nanmean(np.einsum("ij,ij->i", V, V)) for V in arrays])
    except (TypeError, ValueError, IndexError, AttributeError):
        return
    ok = np.isfinite(scales) & (scales > 0)
    if ok.sum() < 2:
        return
    hi = int(np.flatnonzero(ok)[np.argmax(scales[ok])])
    lo = int(np.flatnonzero(ok)[np.argmin(scales[ok])])
    if scales[hi] <= LINEAR_SCALE_RATIO * scales[lo]:
        return
    warnings.warn(f'{type(est).__name__}: kernel="linear" views on scales {scales[hi] / scales[lo]:.1e} apart (mean '
                  f"||x||^2 {scales[hi]:.3g} in view {hi}, {scales[lo]:.3g} in view {lo}): the sum of their kernels is "
                  "too ill-conditioned for float64, so the small view and gamma_A are lost to rounding. Standardise "
                  "the features (sklearn.preprocessing.StandardScaler in a Pipeline) or rescale the views to "
                  'comparable norms, or use kernel="rbf" (a bandwidth per view)', IllConditionedWarning, stacklevel=3)
