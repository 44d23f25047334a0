"""The one fit route of MVL-LS: estimator -> :class:`~mvl.solvers.auto.Regime` -> plan (loss and solver,
:func:`mvl.solvers.auto.plan`) -> :class:`~mvl.solvers.problem.MVLProblem` -> solver -> typed
:class:`~mvl.solvers.problem.SolverResult` -> fitted attributes, for every loss and every registered solver.

:func:`describe` says what the estimator asks before any kernel is computed (sizes, layout, the lazily measured
graph regime, whether ``loss="auto"`` may take the few-label term); :func:`check_declarations` checks every
declaration of the chosen solver (losses, sparse graph, memory) against it, with a ValueError naming the user's
parameter; :func:`build_problem` builds the problem for the solver's inputs (dense kernels, or a kernel operator,
``operator``) and loss, and refuses incomplete views the solver does not take (``missing_views``);
:func:`apply_result` sets the fitted attributes from the typed result. No step reads a solver's name: what differs
between solvers is in their declarations and results (:mod:`mvl.solvers.problem`).
"""

from __future__ import annotations

import warnings
from contextlib import nullcontext

import numpy as np
from sklearn.utils._param_validation import StrOptions

from ..exceptions import IllConditionedWarning
from ..labels import encode_targets
from ..solvers.problem import MVLProblem, SourceTerm, takes_missing_views
from ..solvers.registry import SOLVERS, solver_names
from ..solvers.rules import RepresenterRule
from ..validation import check_combination

__all__ = ["RegisteredSolvers", "describe", "check_declarations", "build_problem", "solve", "apply_result",
           "default_max_memory", "ILL_CONDITIONED", "check_solution", "sample_and_view_counts", "memory_budget",
           "kept_for_prediction"]


def default_max_memory():
    """Half of the memory available now (:func:`mvl.memory.available_memory`), 4 GB if unknown."""
    from ..memory import available_memory

    avail = available_memory()
    return 4e9 if avail is None else 0.5 * avail


# Above this 1-norm condition estimate (LAPACK dgecon) of a factored matrix, fit() warns: with float64
# (eps ~ 1e-16) the coefficients may then have lost more than ~4 significant digits.
ILL_CONDITIONED = 1e12


def check_solution(coef, condition, gamma_A):
    """Never NaN silently; warn (with the estimate) when the system was numerically ill-conditioned."""
    if not np.all(np.isfinite(coef)):
        raise FloatingPointError(f"the solution has NaN or inf entries (condition estimate {condition:.1e}); "
                                 f"increase gamma_A (now {gamma_A:g}) or check the kernels")
    if condition > ILL_CONDITIONED:
        warnings.warn(f"ill-conditioned system: condition estimate {condition:.1e} > {ILL_CONDITIONED:.0e}; "
                      f"the coefficients may be inaccurate (increase gamma_A, now {gamma_A:g})",
                      IllConditionedWarning, stacklevel=3)


def sample_and_view_counts(est, X):
    """(n, m) of the training input without computing kernels (for the solver choice and the memory check)."""
    from .inputs import is_view_list

    from sklearn.utils.validation import _num_samples

    if is_view_list(X):
        return _num_samples(X[0]), len(X)
    try:
        n = _num_samples(X)
    except TypeError:  # not array-like: the full validation reports it
        return 0, 1
    if est.kernel == "precomputed":
        ndim = getattr(X, "ndim", None)
        shape = getattr(X, "shape", None)
        return n, int(shape[2]) if ndim == 3 and shape is not None else 1
    views = est.views
    m = 1 if views is None or isinstance(views, (str, bytes)) or not hasattr(views, "__len__") else len(views)
    return n, m


def memory_budget(est):
    """The memory budget in bytes of a fit: ``max_memory`` (validated by its constraint), or with None
    :func:`default_max_memory`."""
    return default_max_memory() if est.max_memory is None else float(est.max_memory)


def kept_for_prediction(est, kernels, centres=None):
    """What prediction needs of a scalable fit: the training features (or only the centres' after "nystrom"),
    never the Gram matrices; precomputed kernels: nothing (the test kernels are the input)."""
    if kernels.views is None:
        kernels.gram = None
        return kernels
    from ..kernel_blocks import ViewKernels

    views = kernels.views if centres is None else [V[centres] for V in kernels.views]
    est._fit_views = None
    return ViewKernels(views, kernels.kind, kernels.scales, max_memory=0)


class RegisteredSolvers(StrOptions):
    """The ``solver`` constraint of an estimator: "auto" and the names registered now whose declarations match
    ``needs`` (read at validation time, so that a solver registered later is accepted)."""

    def __init__(self, **needs):
        self._needs = needs
        super().__init__(set())

    @property
    def options(self):
        names = solver_names(**self._needs) if self._needs else set(SOLVERS)
        return names | {"auto"}

    @options.setter
    def options(self, value):  # set by the base class's __init__; the registry is the source
        pass


def _holds_nan(X):
    """Whether the training input holds NaN (incomplete views); False for input that is not numeric (the
    validation of the fit reports it)."""
    from .inputs import is_view_list

    def floats(v):  # pandas' nullable dtypes (Float64, Int64) hold pd.NA, read as NaN as the input validation does
        if hasattr(v, "to_numpy"):
            return v.to_numpy(dtype=np.float64, na_value=np.nan)
        return np.asarray(v, dtype=np.float64)

    try:
        if is_view_list(X):
            return any(bool(np.isnan(floats(v)).any()) for v in X)
        return bool(np.isnan(floats(X)).any())
    except (TypeError, ValueError):
        return False


def _missing_views(est, X):
    """(whether a view is missing in some but not all training samples, the number of feature views missing in
    every sample): the incomplete-view regime is decided on the views the fit keeps (it drops the empty ones)."""

    if not _holds_nan(X) or est.kernel == "precomputed":
        return _holds_nan(X), 0
    try:
        nan = [np.isnan(a) for a in _raw_view_arrays(est, X)]
    except (TypeError, ValueError, IndexError):  # the validation of the fit reports it
        return True, 0
    empty = sum(1 for v in nan if v.size and v.all())
    if empty == len(nan):
        return True, 0
    return any(v.any() and not v.all() for v in nan), empty


def _raw_view_arrays(est, X):
    """The per-view float64 arrays of the training input before validation (pandas' NA as NaN): the list of views
    as given, or the columns of one matrix by ``views``. Raises TypeError / ValueError / IndexError on input the
    validation of the fit reports."""
    from .inputs import is_view_list

    def dense(a):
        return np.asarray(a.to_numpy(dtype=np.float64, na_value=np.nan) if hasattr(a, "to_numpy") else a,
                          dtype=np.float64)

    if is_view_list(X):
        return [dense(v) for v in X]
    A = dense(X)
    return [A[:, c] for c in est._view_columns(A.shape[1])]


def _has_copies(est, X):
    """Whether a complete feature view of the training input holds exact copies of a sample (equal rows,
    :func:`mvl.graph.feature_copies`); False for precomputed kernels, views with missing rows (the solvers that
    refuse copies need complete views anyway) and input that is not numeric (the validation of the fit reports
    it). Views missing in every sample are left out (the fit drops them)."""
    from ..graph import feature_copies

    if est.kernel == "precomputed":
        return False
    try:
        arrays = _raw_view_arrays(est, X)
    except (TypeError, ValueError, IndexError):
        return False
    for V in arrays:
        if V.ndim != 2 or V.size == 0:
            continue
        nan = np.isnan(V)
        if nan.all():
            continue
        if nan.any():
            return False
        if feature_copies(V) is not None:
            return True
    return False


def describe(est, X, y, built=None):
    """(the :class:`mvl.solvers.auto.Regime` of fitting ``est`` on (X, y), the few-label term ``loss="auto"`` may
    take, "poisson", "squared+poisson" or None: :func:`mvl.estimators.poisson_fit.source_allowed`), before any
    kernel is computed. The graph-regime measure
    (:func:`mvl.solvers.auto.measured_regime`) is a function called at most once, when a choice depends on it; it
    sets ``est.regime_`` and leaves the kernel operator it built in ``built["kernels"]`` for the fit to reuse."""
    from ..solvers.auto import Regime
    from .base import unlabelled_mask
    from .poisson_fit import labelled_class_counts, source_allowed

    budget = memory_budget(est)
    n, m = sample_and_view_counts(est, X)
    unlabelled = None if y is None else unlabelled_mask(np.asarray(y)).ravel()
    l = n if y is None else int(np.count_nonzero(~unlabelled))
    missing, empty = _missing_views(est, X)
    m -= empty  # views missing in every training sample are dropped by the fit (MissingViewWarning)
    built = {} if built is None else built
    knn = est.n_neighbors is not None and isinstance(est.laplacian, str)
    regime = None
    if knn and est.gamma_W > 0:

        def regime():  # measured only when the choice depends on it (beyond the structured solver)
            from ..solvers.auto import measured_regime

            kernels = built["kernels"] = est._fit_kernel_operator(X, 0, missing=True)
            mask = getattr(kernels, "mask", None)  # incomplete views: each view on the samples that have it
            est.regime_ = measured_regime(getattr(kernels, "base", kernels), est._gamma_A(), est._gamma_B(),
                                          est.gamma_W, est._laplacian_power(), est.n_components, est.random_state,
                                          mask=mask)
            return est.regime_

    graph = (est._graph(n)[1], est._laplacian_power()) if knn else None
    allowed = None
    if est.loss == "auto":
        counts = labelled_class_counts(y)[1]
        allowed = source_allowed(est, missing, l, len(counts), n, counts)
    fit = Regime(est.kernel, n, m, l, budget, measured=regime, graph=graph, missing=missing, unlabelled=unlabelled,
                 random_state=est.random_state, copies=lambda: _has_copies(est, X))
    return fit, allowed


def check_declarations(est, regime, solver, loss):
    """Check every declaration of ``solver`` against the fit before anything is computed: the loss it carries, a
    sparse kNN graph where gamma_W > 0 needs one, and its memory (:class:`mvl.memory.InsufficientMemoryError`);
    whether it takes incomplete views is checked once the views are read (:func:`build_problem`)."""
    if loss not in solver.losses:
        carriers = " or ".join(f'"{c}"' for c in sorted(n for n, s in SOLVERS.items() if loss in s.losses))
        hint = ' (loss="auto" resolved to "squared" here: set loss="poisson")' if est.loss == "auto" else ""
        raise ValueError(f'solver="{solver.name}" carries loss {" or ".join(map(repr, solver.losses))}, not '
                         f'{"the squared loss" if loss == "squared" else repr(loss)}{hint}: loss="{loss}" is solved by '
                         f'solver {carriers}; set solver="auto" or one of those')
    if solver.sparse_graph and loss == "squared" and float(est.gamma_W) > 0:
        if not isinstance(est.laplacian, str):
            raise ValueError(f'solver="{solver.name}" builds sparse kNN Laplacians from the data: laplacian must be '
                             f'"normalized" or "unnormalized", got {type(est.laplacian).__name__}')
        if est.n_neighbors is None:
            raise ValueError(f'solver="{solver.name}" needs a sparse kNN graph when gamma_W > 0: set n_neighbors '
                             '(e.g. 10); the dense graph W = K of the paper is an n x n matrix')
    nbytes = solver.memory_bytes(regime.n, regime.m, regime.l)
    if nbytes is not None:
        est._check_memory(nbytes, f"the {solver.name} MVL-LS solve at n = {regime.n}, m = {regime.m}")


def _refuse_missing(solver, loss):
    takers = tuple(n for n, s in SOLVERS.items() if loss in s.losses and takes_missing_views(s, loss))
    hint = "" if loss == "squared" else ', or loss="squared"'
    raise ValueError(f"missing views (NaN rows) with loss=\"{loss}\" are supported by the MVL-LS solvers "
                     f"{('auto',) + takers if takers else '(none)'}; solver '{solver.name}' needs complete views (no "
                     f"NaN rows): use solver=\"auto\" or one of those{hint}")


def _source_graph(est, views=None, K=None):
    """The Poisson-type terms' graph (:mod:`mvl.estimators.poisson_fit`): one self-tuned graph of the concatenated
    standardised ``views`` (or of the summed kernels' distance of ``K`` for precomputed kernels), L = D - W, for
    every view, as a :class:`mvl.solvers.problem.SourceTerm`."""
    from ..selftuned_graph import GraphSpace, kernel_distances, selftuned_weights, unnormalized_laplacian
    from .poisson_fit import POISSON_NEIGHBORS

    search = None
    if views is None:
        space, Z = None, None
        W = selftuned_weights(None, POISSON_NEIGHBORS, distances=kernel_distances(K))
    else:
        space = GraphSpace(views)
        Z = space.transform(views)
        W, search = selftuned_weights(Z, POISSON_NEIGHBORS, return_search=True)
    L, degrees = unnormalized_laplacian(W)
    return SourceTerm(L, degrees, Z, space, POISSON_NEIGHBORS, search=search)


def _source_problem(est, kernels, labelled, y_enc, c, loss, source, mask=None):
    """The Poisson-type terms' :class:`MVLProblem` (gammas of :func:`mvl.estimators.poisson_fit.poisson_gammas`)."""
    from .poisson_fit import poisson_gammas

    Y_L = encode_targets(y_enc[labelled], len(est.classes_))
    est.gamma_B_ = est._gamma_B()
    gA, gB, gW = poisson_gammas(est, loss)
    seed = 0 if est.random_state is None else est.random_state
    return MVLProblem(kernels, labelled, Y_L, c, gA, gB, gW, mask=mask, seed=seed, loss=loss, source=source)


def build_problem(est, X, y, regime, solver, loss, built=None):
    """The :class:`MVLProblem` of ``solver`` (dense kernels, or with ``operator`` a kernel operator) with ``loss``
    on (X, y); sets the estimator's input state. Incomplete views are refused here, once the views are read, if the
    solver does not take them with ``loss`` (a partial NaN inside a view is reported first, by the input
    validation)."""
    missing = takes_missing_views(solver, loss)
    kept = (built or {}).get("kernels")
    if solver.operator and loss == "squared":
        return est.operator_problem(X, y, solver, regime.max_memory, missing=missing, kernels=kept)
    if solver.operator:  # the few-label term on a kernel operator (feature views)
        if est.kernel == "precomputed":
            raise ValueError(f'loss="{loss}" with solver="{solver.name}" needs feature views (its sparse kernel '
                             'precision is built from each view\'s nearest neighbours); use solver="structured" '
                             'for precomputed kernels')
        reuse = kept is not None and not solver.keeps_kernels and (getattr(kept, "mask", None) is None or missing)
        kernels = kept if reuse else est._fit_kernel_operator(X, 0, missing=missing)
        mask = est.view_mask_ if missing else None
        views = est._fit_views
        if mask is not None:  # the graph's coordinates of a missing view: the training mean (GraphSpace)
            views = [np.where(mask[:, [p]], Xp, np.nan) for p, Xp in enumerate(views)]
        y_enc, labelled = est._fit_labels(y, kernels.n)
        c = check_combination(est._kept_views(est.c, combination=True), kernels.m)
        return _source_problem(est, kernels, labelled, y_enc, c, loss, _source_graph(est, views), mask)
    K = est._fit_kernels(X)
    m, n, _ = K.shape
    mask = est.view_mask_  # None: every view of every sample is present
    if mask is not None and not missing:
        _refuse_missing(solver, loss)
    y_enc, labelled = est._fit_labels(y, n)
    c = check_combination(est._kept_views(est.c, combination=True), m)
    if loss != "squared":
        source = _source_graph(est, K=K) if est.kernel == "precomputed" else _source_graph(est, est._fit_views)
        return _source_problem(est, K, labelled, y_enc, c, loss, source)
    Y_L, L = est._mvl_inputs(K, y_enc, labelled, mask)
    return MVLProblem(K, labelled, Y_L, c, **est._gammas(), laplacians=L, between_weights=est._between_weights(n),
                      mask=mask)


def solve(est, X, y, regime, solver, loss, built=None):
    """Build the problem and solve it (within the solver's thread limit, ``solver.threads``); returns (problem,
    result, seconds), the seconds those of the solve (dense inputs) or of the set-up and solve (operator)."""
    import time

    from threadpoolctl import threadpool_limits

    t0 = time.perf_counter()
    with nullcontext() if solver.threads is None else threadpool_limits(limits=solver.threads):
        problem = build_problem(est, X, y, regime, solver, loss, built)
        if not solver.operator:
            t0 = time.perf_counter()
        result = solver.solve(problem)
        if loss == "poisson" and isinstance(est.gamma_A, str) and problem.source is not None:
            problem, result = _kernel_dominated(est, problem, result, solver)
    return problem, result, time.perf_counter() - t0


def _sparse_source_solve(problem, factors):
    """The :class:`mvl.solvers.problem.SolverResult` of a few-label ``problem`` on dense Gram matrices (feature views)
    by the node-value system of :mod:`mvl.solvers.poisson_sparse` with Vecchia's ``factors`` of those matrices (the
    ones :func:`mvl.estimators.poisson_fit.source_energies` built): the outputs F_v on the training points, the
    graph's induction rule for new points, the coefficients a_v = Q_v F_v, its true relative residual of (P_v)."""
    from ..kernel_blocks import ViewKernels
    from ..solvers.poisson import fit_decision
    from ..solvers.poisson_sparse import solve_poisson_sparse
    from ..solvers.problem import SolverResult
    from ..solvers.rules import SourceRule

    src = problem.source
    m = len(problem.c)
    fit = solve_poisson_sparse(ViewKernels(gram=problem.kernels), problem.labelled, problem.Y_L, problem.c,
                               problem.gamma_A, problem.gamma_B, problem.gamma_W, laplacians=[src.laplacian] * m,
                               loss=problem.loss, balanced=src.balanced, random_state=problem.seed, factors=factors)
    F = fit.decision_nodes()
    rule = SourceRule(fit_decision(F, weights=src.degrees), F, src.points, src.space, src.neighbours,
                      search=src.search)
    res = fit.residual
    return SolverResult(fit.coef, 1, res, bool(np.isfinite(res)), rule=rule, details=fit)


def _kernel_dominated(est, problem, result, solver):
    """``gamma_A="auto"`` with ``loss="poisson"``: (problem, result) as solved when the kernel term's share of the
    penalties at the solution is at most :data:`mvl.estimators.poisson_fit.KERNEL_SHARE_MAX`; otherwise solved
    again at gamma_A = gamma_W :func:`mvl.estimators.poisson_fit.source_ratio` of the graph limit's energies
    (:mod:`mvl.estimators.poisson_fit`, "The scale"; with solver="auto" a dense solve that misses ``est.tol`` is
    replaced by the node-value system, :func:`_sparse_source_solve`; a named solver is kept), unless that solve
    fails (a factorisation lost at that ratio), that solve misses ``est.tol`` (:func:`_inaccurate`:
    the ratio is out of float64's reach for this system), is not finite, or gives a
    labelled class less than :data:`mvl.solvers.vecchia_direct.LIMIT_BALANCE` of its labelled share of the
    unlabelled points (:func:`mvl.solvers.vecchia_direct.limit_class_balance`: the graph's solution absorbed a
    class): then the first. Sets ``est._source_scale`` (share, the ratio solved at or None), and ``est.solver_`` to
    "vecchia" when the node-value system gave the fit."""
    from dataclasses import replace

    from ..solvers.vecchia_direct import LIMIT_BALANCE, limit_class_balance
    from .poisson_fit import KERNEL_SHARE_MAX, kernel_share, source_energies, source_ratio

    share = kernel_share(problem, result)
    est._source_scale = (share, None)
    if not share > KERNEL_SHARE_MAX:
        return problem, result
    src = problem.source
    from ..solvers.poisson import source_term

    S = source_term(problem.labelled, problem.Y_L, problem.kernels.shape[1] if isinstance(problem.kernels,
                    np.ndarray) else problem.kernels.n, src.balanced)
    factors = getattr(result.details, "_factors", None)
    E_W, E_K, factors = source_energies(problem.kernels, src.laplacian, S, problem.c, problem.mask,
                                        random_state=problem.seed, factors=factors)
    ratio = source_ratio(E_W, E_K)
    est._source_scale = (share, ratio)
    if not ratio < problem.gamma_A / problem.gamma_W:
        return problem, result
    if not isinstance(problem.kernels, np.ndarray):  # the sparse solver's Vecchia factors (same q and seed)
        src = replace(src, factors=factors)
    again = replace(problem, gamma_A=ratio * problem.gamma_W, source=src)
    try:
        second = solver.solve(again)
    except (ValueError, np.linalg.LinAlgError):  # e.g. a factorisation lost at this ratio: the first fit
        est._source_scale = (share, None)
        return problem, result
    if (_inaccurate(second.residual, est.tol) and isinstance(problem.kernels, np.ndarray) and src.space is not None
            and est.solver != solver.name):  # chosen by solver="auto", not named by the user
        second = _sparse_source_solve(again, factors)  # the dense solve's float64 floor: the node-value system
        if not _inaccurate(second.residual, est.tol) and np.all(np.isfinite(second.coef)):
            est.solver_ = "vecchia"  # what solved it (poisson_sparse's node-value system on these Gram matrices)
    if _inaccurate(second.residual, est.tol) or not np.all(np.isfinite(second.coef)):
        est._source_scale = (share, None)  # the ratio is out of float64's reach for this system: the first fit
        return problem, result
    rule = second.rule
    if limit_class_balance(rule.decision_rule.scores(rule.outputs), problem.labelled, problem.Y_L) < LIMIT_BALANCE:
        est._source_scale = (share, None)  # the graph's solution gives a class (almost) no point: the first fit
        return problem, result
    return again, second


def _inaccurate(residual, tol):
    """Whether a direct solve missed ``tol``: its true relative residual of the system solved
    (:mod:`mvl.solvers.residual`) is above the tolerance the iterative solvers stop at, or not finite."""
    return residual is not None and not (np.isfinite(residual) and residual <= float(tol))


def inaccurate_message(est, solver, problem, result, residual, tol):
    """The ConvergenceWarning of a solve whose residual misses ``tol``, naming the user's parameter that made the
    system (B + l gamma_A I) a = y (eq 68) too ill-conditioned for float64: gamma_A when far below its default,
    otherwise the largest of the terms m gamma_B (eq 54-57), gamma_W (eq 60-63) and the squared data term
    (weight 1, eq 53; none with ``loss="poisson"``) against gamma_A, in the system solved."""
    from .base import AUTO_GAMMA_A

    gA = float(problem.gamma_A)
    m = len(problem.c)
    terms = {"gamma_B": float(problem.gamma_B) * m if m > 1 else 0.0, "gamma_W": float(problem.gamma_W)}
    if problem.loss != "poisson":
        terms["the data term"] = 1.0
    top = max(terms, key=terms.get)
    ratio = terms[top] / gA if gA > 0 else np.inf
    user = {"gamma_A": est.gamma_A_, "gamma_B": float(est._gamma_B()), "gamma_W": float(est.gamma_W)}
    cond = "" if not np.isfinite(result.condition) else f", condition estimate {result.condition:.1e}"
    if user["gamma_A"] < 1e-3 * AUTO_GAMMA_A or top == "the data term":
        fix = f"increase gamma_A (now {user['gamma_A']:g}; default {AUTO_GAMMA_A:g})"
    else:
        fix = f"decrease {top} (now {user[top]:g}) or increase gamma_A (now {user['gamma_A']:g})"
    return (f'solver="{solver.name}": the solve is inaccurate: relative residual {residual:.2e} of the system '
            f"(68) > tol = {float(tol):g}{cond}, so the coefficients are not the solution: {top} outweighs gamma_A "
            f"{ratio:.1e} times in the system, too ill-conditioned for float64; {fix}")


def apply_result(est, X, problem, result, solver, seconds):
    """Set the fitted attributes from the typed ``result``: coefficients, centres, the gamma_A solved at, the
    prediction rule, the solve attributes (``n_iter_``, ``residual_``, ``converged_``, a ConvergenceWarning when
    not converged: an iterative solve at max_iter, or a direct solve whose true residual exceeds ``tol``,
    :func:`inaccurate_message`), the condition estimate; then the check that the fit does not ignore its labels
    (RegularizationWarning), except after a bad solve from a gamma_A far below its default, whose coefficients
    say nothing of the regularisation."""
    from sklearn.exceptions import ConvergenceWarning

    from ..solvers.residual import direct_residual
    from .base import check_swamped, take_samples

    coef, labelled = result.coef, problem.labelled
    est.gamma_A_ = float(problem.gamma_A if result.gamma_A is None else result.gamma_A)
    rule = RepresenterRule() if result.rule is None else result.rule
    dense = not solver.operator
    if dense:
        check_solution(coef, result.condition, est.gamma_A_)
        residual = result.residual if result.residual is not None else direct_residual(problem, coef)
    else:
        residual = result.residual
    # a direct solve reports success; its residual decides (the iterative solvers stop on their own criteria)
    accurate = result.converged and not (solver.direct and _inaccurate(residual, est.tol))
    est._set_solve_attributes(result.n_iter, residual, accurate)
    est.centres_ = result.centres
    if not result.converged:
        warnings.warn(solver.unconverged_message(result, problem.tol), ConvergenceWarning, stacklevel=4)
    elif not accurate:
        warnings.warn(inaccurate_message(est, solver, problem, result, residual, est.tol), ConvergenceWarning,
                      stacklevel=4)
    if not np.all(np.isfinite(coef)):
        raise FloatingPointError(f'solver="{solver.name}" produced NaN or inf; increase gamma_A '
                                 f'(now {est.gamma_A_:g})')
    est._rule = rule
    if rule.kernels is not None:  # a solver's own kernel rows (the kriging rows of "vecchia_direct")
        est._scalable = rule.kernels
    elif not dense and rule.representer:
        est._scalable = kept_for_prediction(est, problem.kernels, result.centres)
    else:
        est._scalable = None
    est.coef_ = coef
    est.c_ = problem.c
    est.n_labelled_ = len(labelled)
    est.condition_estimate_ = result.condition  # NaN: not estimated
    est.fit_seconds_ = seconds
    y_lab = np.argmax(problem.Y_L, axis=1)
    from .base import AUTO_GAMMA_A

    if not accurate and est.gamma_A_ < 1e-3 * AUTO_GAMMA_A:  # a bad solve from a tiny gamma_A: the
        return est  # coefficients are not the solution, and no regularisation swamps the data
    scores = rule.training_decision(labelled)
    gammas = (("gamma_A", problem.gamma_A), ("gamma_B", problem.gamma_B), ("gamma_W", problem.gamma_W))
    if scores is not None:
        check_swamped(est, scores, gammas, y_lab)
    elif dense:
        est._check_regularization(problem.kernels, labelled, y_lab, problem.mask)
    else:  # the decision values on the labelled samples (t = l rows of kernels, no n x n array)
        check_swamped(est, est.decision_function(take_samples(X, labelled)),
                      (("gamma_A", est.gamma_A_), ("gamma_B", est.gamma_B_), ("gamma_W", est.gamma_W)), y_lab)
    return est
