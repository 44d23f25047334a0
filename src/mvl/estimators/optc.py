"""MVL-LS-optC: learning the combination vector c on a sphere (Section 6, eq 84-92).

Problem (84): minimise over f and c with ||c|| = alpha

    1/l sum_{i<=l} ||y_i - C f(x_i)||^2 + gamma_A ||f||^2 + gamma_B <f, M_B f> + gamma_W <f, M_W f>,

by alternating minimisation: c fixed -> f by Theorem 10; f fixed -> c by
quadratic optimisation on the sphere (eq 85, :func:`mvl.solvers.sphere.sphere_least_squares`),
restarted from random unit vectors scaled to alpha; the restart with the best
validation accuracy (or the lowest objective) is kept.

Cost. c enters the system of Theorem 10 only through c c^T (x) J (eq 68). In the
view-by-view form of :mod:`mvl.estimators.least_squares`, the coupled system reduces, after
eliminating T with G = I - l gamma_B Q_1 (independent of c), to one l x l system

    M(c) E_L = Y_L,   M(c) = I + (c (x) I_l)^T N (c (x) I_l),
    N_pq = delta_pq Q_p[L, L] + l gamma_B Q_p[L, :] G^{-1} Q_q[:, L],

and the labelled outputs of view p are F_p = sum_q c_q N_pq E_L. N (ml x ml) is
computed once per (data, gammas) and shared by every iteration and restart. An
iteration, batched over the restarts, forms every M(c_r) with one GEMM over
the pairs c_p c_q (N's symmetric pairs read once), one l x l Cholesky solve per restart, and the
labelled outputs F_p = Q_p[L, :] (c_p E + l gamma_B T) with T = Z(c) E_L, Z(c) = sum_q c_q G^{-1} Q_q[:, L]
(formed for the whole batch by one GEMM): m GEMMs of l x n by n x (R P), instead of a fresh O(m n^3) fit.
The c-step works on the (m+1) x (m+1) triangle of the QR of [F | vec Y].

Threads. The alternation runs with a one-thread BLAS, and the f-step spreads its work over the cores
itself: the combining GEMMs by column blocks and the restarts in contiguous groups, each group's
Cholesky solves and output GEMMs on its own thread through GIL-free LAPACK calls (:mod:`mvl.solvers.lapack`).
At Flowers-17 scale on 2 cores an f-step for 20 restarts took 0.15 s this way and 0.19-0.20 s with a
2-thread BLAS in each call: a 680 x 680 Cholesky gains little from BLAS threads, and OpenBLAS's idle
workers busy-wait after every call, taking a core from the step that follows.
At the optimum of the f-step the objective equals
(1/l) <Y_L, E_L> (a quadratic's minimum value), so it is tracked at no cost.

Incomplete views (:mod:`mvl.solvers.incomplete`). With a presence mask V_i (a NaN row marks a missing view)
problem (84) keeps the incomplete model of :mod:`mvl.solvers.incomplete`: the data term is
1/l sum_{i<=l} ||y_i - sum_{p in V_i} c~_ip(c) f^p(x_i)||^2 with the per-sample renormalised combination
c~_ip(c) = s_i(c) c_p (:func:`mvl.missing_views.combination_weights`), and the regularisers do not involve c.

- f-step (c fixed): Theorem 10 on incomplete data, :func:`mvl.solvers.incomplete.solve_structured_incomplete`; the
  objective after it is again (1/l) <Y_L, E_L> (a quadratic's minimum).
- c-step (f fixed): minimise g(c) = sum_{i<=l} ||y_i - sum_{p in V_i} c~_ip(c) F_ip||^2 over ||c|| = alpha
  (the analogue of eq 85). s_i(c) = sum_q c_q / sum_{q in V_i} c_q (or its norm fallback) depends on c, so g is
  not the quadratic of eq (86) and Theorems 15-16 do not give its global minimiser. With s frozen at a point c',
  c~_ip = s_i(c') c_p is linear in c and g becomes ||A(c') c - b||^2 with the columns of A(c') the vec of
  s_i(c') F_ip over the present (i, p), exactly problem (86): its global minimiser on the sphere is
  :func:`mvl.solvers.sphere.sphere_least_squares` (eq 87-92). :func:`incomplete_c_step` takes as candidates the current
  c, the frozen-s sphere solution at c and a few fixed-point passes of it (s refrozen at the last solution) and
  the best of 100 m fixed pseudo-random points of the sphere, polishes the best three by a local quasi-Newton
  descent of g(alpha v / ||v||) (scipy BFGS, finite-difference gradient), and returns the candidate with the
  smallest g. The current c being a candidate, g never increases, so neither does the objective (84) across an
  alternation (f-step: exact minimiser; c-step: g(c_new) <= g(c)). g is smooth only inside the cells cut out of
  the sphere by the hyperplanes sum_q c_q = 0 and sum_{q in V_i} c_q = 0 (i labelled, incomplete), where s_i
  switches branch: it has poles (sum_{V_i} c -> 0 with the sign of sum c) and jumps there, and its infimum can
  lie on a hyperplane without being attained (as sum c -> 0 the combined output of every incomplete sample tends
  to 0); at c_p = 0 exactly, the samples that have only view p get c~_i = 0 and leave the data term (an
  isolated lower value, deliberately not searched for). So the c-step is a heuristic, not a global solver: on
  tiny problems (m = 2, 3; tests/test_incomplete_optc.py) it reached the minimum of a fine grid of the sphere
  whenever that minimum lies inside a cell, and came within 2 % of it otherwise.
  With nothing missing s_i = 1, g is eq (86) and the frozen-s solution is the global one; the estimator then
  runs the complete code above unchanged.
- Cost: the LU of each H_p and Q_p (O(sum_p n_p^3)) do not depend on c and are computed once per fit; an f-step
  then assembles and solves the coupled (``l + |U|``) system of :mod:`mvl.solvers.incomplete`
  (``O((l + |U|)^3)``), not batched over the restarts as :class:`OptCSystem` does.
- A view missing for every training sample: at any c the f-step is the MVL-LS fit without that view at the
  combination c~_{-p}(c) (the limit tested in :mod:`mvl.solvers.incomplete`), but c~_{-p}(c) = c_{-p} sum(c) /
  sum(c_{-p}) is not on the sphere of radius alpha: its norm varies with c_p. So the fit is not the optC fit
  without the view; what holds is that its objective's minimum is at most that fit's (c_p = 0 gives c~ = c on
  the smaller sphere) and that at the returned ``c_`` it is exactly the (m-1)-view MVL-LS fit at ``c~_{-p}(c_)``.
"""

from __future__ import annotations

import time
import warnings
from numbers import Real

import numpy as np
from scipy.linalg import blas, lapack

from sklearn.base import _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.validation import column_or_1d

from .. import parallel as blocks
from ..labels import encode_labels, stratified_holdout
from ..docstrings import shared_parameters
from .base import (
    StrictInterval,
    COUNT,
    NON_NEGATIVE,
    POSITIVE,
    SEED,
    MVLClassifier,
    check_swamped,
    take_samples,
)
from ..missing_views import combination_weights
from .fit_route import RegisteredSolvers
from .least_squares import MEMORY_ADVICE, kept_for_prediction, memory_budget, sample_and_view_counts
from ..solvers import MVLProblem, choose_solver, get_solver
from ..solvers.problem import breakdown_message
from ..solvers.residual import direct_residual
from ..solvers.optc import OptCSystem, incomplete_c_objective, incomplete_c_step, qr_triangle, restart_outputs
from ..solvers.sphere import sphere_least_squares

__all__ = ["MVLLeastSquaresOptC"]


@shared_parameters
class MVLLeastSquaresOptC(MVLClassifier):
    """MVL-LS with the combination vector c optimised on the sphere ||c|| = alpha (Section 6).

    The problem (84) is solved by alternating f- and c-steps (eq 85-92) from ``n_restarts`` seeded random
    starts; the restart kept is the one with the best held-out accuracy (``validation_fraction``, or X_val in
    :meth:`fit`), else the one with the smallest objective (84). Graph and gammas as in
    :class:`mvl.MVLLeastSquares`, with the same defaults (the validation study's, ``benchmarks/study_defaults.py``).

    Parameters
    ----------
    {gamma_A, gamma_B, gamma_W, laplacian, n_neighbors, laplacian_power, graph_weights, n_classes}
    alpha : float > 0, default 1.0
        Radius of the sphere of c (eq 84); the paper uses 1.
    n_restarts : int >= 1, default 20
        Random unit starting vectors (scaled to alpha), 20 in the paper; typical 5 to 50.
    n_iter : int >= 1, default 25
        Maximum alternations (f-step then c-step) per restart; the paper reports 25 and 50.
    tol : float >= 0, default 1e-8
        A restart stops when its objective decreases by less than tol (relative).
    random_state : None, int, sequence of ints, Generator or SeedSequence, default None
        Seed of the starting vectors and of the ``validation_fraction`` split (and of the Nystrom centres of
        "cg"/"nystrom", which take None, an int or a RandomState).
    validation_fraction : float in (0, 1) or None, default None
        Hold out this fraction of the labelled samples of every class (seeded, stratified; at least one per
        class, so each class needs two) to choose the restart by held-out accuracy, as scikit-learn's early-
        stopping estimators do; the held-out samples stay in the graph as unlabelled ones, and once the restart
        is chosen f is refitted with every labelled sample at its c (Theorem 10). Works inside ``Pipeline`` and
        ``GridSearchCV`` (it splits what the estimator receives). Typical 0.1 to 0.3. None: no split.
    solver : "auto", "structured", "cg", "nystrom" or "graph", default "auto"
        The f-step (Theorem 10 with c fixed): as :class:`mvl.MVLLeastSquares` ("auto": precomputed kernels and
        feature views up to 5,000 points -> "structured", the batched solver of this module; "cg" up to 20,000;
        "nystrom" beyond). "cg", "nystrom" and "graph" need a kNN graph when gamma_W > 0. "graph" (the graph
        regime, :mod:`mvl.solvers.graph`; only when asked for) computes the kernels' Vecchia factors once and
        refactors the sparse preconditioner at every f-step (its graph term cc^T (x) J depends on c), warm-started
        from the restart's previous coefficients.
    n_components : int >= 1, default 1000
        As in :class:`mvl.MVLLeastSquares` ("cg", "nystrom").
    cg_tol : float in (0, 1), default 1e-6
        Relative residual of each "cg" or "graph" f-step, for "graph" also its estimated relative objective error
        (as ``tol`` of :class:`mvl.MVLLeastSquares`; this class's ``tol`` is the alternation's).
    cg_max_iter : int >= 1, default 500
        Iteration limit of each "cg" or "graph" f-step (``n_iter`` is the alternation's).
    max_memory : float > 0 or None, default None
        As in :class:`mvl.MVLLeastSquares` ("cg", "auto").
    verbose : int >= 0, default 0
        "cg": print the residual after every iteration.
    {kernel, views, bandwidth}

    Attributes
    ----------
    c_ : (m,) learned combination vector of the kept restart
    coef_ : (m, n, P) coefficients for ``c_``
    objective_history_ : (n_restarts, n_iter) objective (84) after each iteration (NaN once stopped)
    validation_scores_ : (n_restarts,) held-out accuracy of each restart (None without validation)
    validation_indices_ : array or None
        The training samples held out by ``validation_fraction``.
    best_restart_ : index of the kept restart
    restart_c_ : (n_restarts, m) final c of every restart
    final_objectives_ : (n_restarts,) objective (84) at the end of every restart
    centres_ : array (M,) or None
        "nystrom": indices of the training points that carry the coefficients; None otherwise.
    gamma_B_ : float
        The gamma_B of the fit.
    {fit_attributes}
    {solve_attributes}
    {view_attributes}

    See Also
    --------
    MVLLeastSquares : the same problem with a fixed combination c.
    MVLLeastSquaresCV : the graph and the gammas selected by cross-validation.

    Notes
    -----
    Missing views (incomplete multi-view data, :mod:`mvl.solvers.incomplete`): a row of NaN across a view's columns (a
    NaN row and column of a precomputed view) marks a missing view, as in :class:`mvl.MVLLeastSquares`; with solver
    "structured" ("auto" up to 5,000 samples) the alternation then runs on the incomplete model: the f-step is
    Theorem 10 on incomplete data, the c-step minimises the data term of (84) with c renormalised over each
    sample's present views, which is not eq (86)'s quadratic; it is solved by the sphere solution of eq (86)-(92)
    with the renormalisation frozen, probes of the sphere and a local descent, never increasing (84) (module
    docstring: the choice, its limits and cost). "cg" and "nystrom" refuse
    missing views.

    {mvl_references}

    {mfeat_example}
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from mvl import MVLLeastSquaresOptC
    >>> train, test = idx[:400], idx[400:]
    >>> y = ds.y[train].copy()
    >>> y[100:] = -1                                        # 100 labelled, 300 unlabelled
    >>> model = make_pipeline(StandardScaler(), MVLLeastSquaresOptC(views=[76, 64, 6], n_restarts=5,
    ...                       validation_fraction=0.2, random_state=0)).fit(X[train], y)
    >>> model[-1].c_.shape, bool(model.score(X[test], ds.y[test]) > 0.85)
    ((3,), True)
    """

    _parameter_constraints: dict = {
        **{k: v for k, v in MVLClassifier._parameter_constraints.items() if k != "c"},  # c is learned here
        "alpha": [POSITIVE],
        "n_restarts": [COUNT],
        "n_iter": [COUNT],
        "tol": [NON_NEGATIVE],
        "random_state": SEED,
        "validation_fraction": [None, StrictInterval(Real, 0, 1, closed="neither")],
        "solver": [RegisteredSolvers(optc=True)],
        "n_components": [COUNT],
        "cg_tol": [StrictInterval(Real, 0, 1, closed="neither")],
        "cg_max_iter": [COUNT],
        "max_memory": [None, POSITIVE],
        "verbose": ["verbose"],
    }
    _memory_advice = MEMORY_ADVICE
    _missing_views = True  # NaN rows mark missing views (mvl.solvers.incomplete; the structured f-step only)

    def __init__(self, *, gamma_A=1e-5, gamma_B=0.0, gamma_W=1e-2, alpha=1.0, n_restarts=20, n_iter=25, tol=1e-8,
                 laplacian="normalized", random_state=None, n_neighbors=5, n_classes=None, laplacian_power=None,
                 graph_weights="kernel", kernel="rbf", views=None, bandwidth=None, solver="auto", n_components=1000,
                 cg_tol=1e-6, cg_max_iter=500, max_memory=None, verbose=0, validation_fraction=None):
        self.gamma_A = gamma_A
        self.gamma_B = gamma_B
        self.gamma_W = gamma_W
        self.alpha = alpha
        self.n_restarts = n_restarts
        self.n_iter = n_iter
        self.tol = tol
        self.laplacian = laplacian
        self.random_state = random_state
        self.n_neighbors = n_neighbors
        self.n_classes = n_classes
        self.laplacian_power = laplacian_power
        self.graph_weights = graph_weights
        self.kernel = kernel
        self.views = views
        self.bandwidth = bandwidth
        self.solver = solver
        self.n_components = n_components
        self.cg_tol = cg_tol
        self.cg_max_iter = cg_max_iter
        self.max_memory = max_memory
        self.verbose = verbose
        self.validation_fraction = validation_fraction

    def _fit_scalable(self, X, y, X_val, y_val, alpha, budget, check=True):
        """The alternation of Section 6 with the f-step by solver "nystrom", "cg" (:mod:`mvl.solvers.system`) or "graph"
        (:mod:`mvl.solvers.graph`: the kernels' Vecchia factors computed once, the sparse LU with M(c) redone per c).

        Same objective (84) and c-step as the structured path. The f-step for a new c reuses one factorisation
        (:class:`mvl.solvers.optc.OptCNystrom`: B(c) = B_0 + U_c U_c^T); "cg" warm-starts each restart from its
        previous iterate and is preconditioned with that same factorisation. Labelled outputs: F_p[L] = Z_p[L] w_p
        ("nystrom") or K^p[L, :] a_p ("cg"). At the f-step's optimum the objective is (1/l) <Y_L, Y_L - S_L>.
        """
        solver = get_solver(self.solver_)
        t0 = time.perf_counter()
        problem = self.operator_problem(X, y, solver, budget, missing=False, tol=self.cg_tol,
                                        max_iter=self.cg_max_iter)
        system, labelled = problem.system, problem.labelled
        m, l = system.m, system.l
        Y_L = system.Y_L
        step = solver.optc_step(problem)
        centres = None  # the centres that carry the coefficients ("nystrom"), from the f-step's result

        last = {}  # restart -> the result of its latest f-step (the one that gave its coefficients)
        breakdown = []

        def fstep(c, state, r):
            nonlocal centres
            FL, state, result = step(c, state)
            centres = result.centres
            last[r] = result
            if not result.converged:
                self._cg_unconverged = max(getattr(self, "_cg_unconverged", 0.0), result.residual)
                if result.breakdown is not None:
                    breakdown.append(result)
            return FL, state

        rng = np.random.default_rng(self.random_state)
        C = rng.standard_normal((self.n_restarts, m))
        C *= alpha / np.linalg.norm(C, axis=1, keepdims=True)
        history = np.full((self.n_restarts, self.n_iter), np.nan)
        final_obj = np.empty(self.n_restarts)
        coefs = []
        Ab = np.empty((Y_L.size, m + 1), order="F")
        Ab[:, m] = Y_L.T.ravel()
        lwork = max(1, int(lapack.dgeqrf_lwork(Y_L.size, m + 1)[0]))
        self._cg_unconverged = 0.0
        for r in range(self.n_restarts):
            state, prev = None, np.inf
            for it in range(self.n_iter):
                FL, state = fstep(C[r], state, r)
                E = Y_L - np.tensordot(C[r], FL, axes=(0, 0))
                J_f = float(np.sum(Y_L * E)) / l
                Ab[:, :m] = FL.transpose(0, 2, 1).reshape(m, -1).T  # (P, l) order, as the last column
                R_, q_ = qr_triangle(Ab, m, lwork)
                c_new = sphere_least_squares(R_, q_, alpha)
                resid = Ab[:, :m] @ c_new - Ab[:, m]
                J = J_f + (float(resid @ resid) - float(np.sum(E * E))) / l
                history[r, it] = J
                C[r] = c_new
                if it > 0 and prev - J <= self.tol * abs(prev):
                    break
                prev = J
            FL, state = fstep(C[r], state, r)
            final_obj[r] = float(np.sum(Y_L * (Y_L - np.tensordot(C[r], FL, axes=(0, 0))))) / l
            coefs.append(state)
        if breakdown:
            warnings.warn(breakdown_message(solver.name, breakdown[0]), ConvergenceWarning, stacklevel=3)
        elif self._cg_unconverged:
            warnings.warn(f'solver="{solver.name}": some f-steps stopped at cg_max_iter with relative residual up to '
                          f'{self._cg_unconverged:.2e} > cg_tol = {self.cg_tol:g}', ConvergenceWarning, stacklevel=3)
        self._scalable = kept_for_prediction(self, problem.kernels, centres)
        self.centres_ = centres
        self.n_labelled_ = l
        scores = None
        if X_val is not None:
            y_val = column_or_1d(y_val)
            scores = np.empty(self.n_restarts)
            for r in range(self.n_restarts):
                self.coef_, self.c_ = coefs[r], C[r]
                scores[r] = np.mean(self.predict(X_val) == y_val)
            best = int(np.lexsort((final_obj, -scores))[0])
        else:
            best = int(np.argmin(final_obj))
        self.coef_ = np.ascontiguousarray(coefs[best])
        if not (np.all(np.isfinite(self.coef_)) and np.all(np.isfinite(final_obj))):
            raise FloatingPointError(f"optC produced NaN or inf (gamma_A = {self.gamma_A!r}); increase gamma_A")
        self._set_restarts(C, best, history, final_obj, scores)
        self._set_solve_attributes(self._outer_iterations(), last[best].residual, last[best].converged)
        self.fit_seconds_ = time.perf_counter() - t0
        if check:  # decision values on the labelled samples (l rows of kernels, no n x n array)
            check_swamped(self, self.decision_function(take_samples(X, labelled)),
                          (("gamma_A", self.gamma_A), ("gamma_B", self.gamma_B), ("gamma_W", self.gamma_W)),
                          np.argmax(Y_L, axis=1))
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, X_val=None, y_val=None):
        """Fit on X (see ``kernel``) and labels y (-1 = unlabelled). The restart kept is the one with the best
        accuracy on held-out data: an internal stratified split of the labelled samples (``validation_fraction``),
        or X_val and y_val; without either, the one with the smallest objective (84).

        X_val is given in the form of :meth:`predict`'s input (with "precomputed" (v, n_samples_fit, m)) and goes
        straight to this estimator: inside a ``Pipeline`` it bypasses the steps before it (a scaler, ...), and
        under cross-validation with "precomputed" its columns would have to be each fold's training samples.
        There, use ``validation_fraction``, which splits whatever the estimator receives.
        """
        from .base import unlabelled_mask

        alpha = float(self.alpha)

        self._scalable = None
        self.centres_ = None
        self.validation_indices_ = None
        self.view_mask_ = None
        if (X_val is None) != (y_val is None):
            raise ValueError("give both X_val and y_val, or neither")
        if X_val is not None and self.validation_fraction is not None:
            raise ValueError("give X_val and y_val or validation_fraction, not both")
        budget = memory_budget(self)
        n_all, m_all = sample_and_view_counts(self, X)
        l_all = n_all if y is None else int(np.count_nonzero(~unlabelled_mask(np.asarray(y)).ravel()))
        self.solver_ = choose_solver(self.solver, self.kernel, n_all, m_all, l_all, budget)
        if get_solver(self.solver_).operator:
            if self.validation_fraction is None:
                return self._fit_scalable(X, y, X_val, y_val, alpha, budget)
            return self._fit_scalable_held_out(X, y, alpha, budget)
        K = self._fit_kernels(X)
        m, n, _ = K.shape
        y_enc, labelled = self._fit_labels(y, n)
        if self.view_mask_ is not None:  # missing views: the incomplete alternation (complete path below unchanged)
            return self._fit_incomplete(K, y_enc, labelled, X_val, y_val, alpha)
        classes = self.classes_
        l_all = len(labelled)
        self._check_memory(8.0 * (2 * m * n * n + 3 * n * n + 2 * m * l_all * n + m * (m + 1) // 2 * l_all ** 2),
                           f"the optC system with n = {n} samples and m = {m} views")
        Y_all, L = self._mvl_inputs(K, y_enc, labelled)
        gammas = self._gammas()
        rng = np.random.default_rng(self.random_state)
        C = rng.standard_normal((self.n_restarts, m))  # drawn first: the same restarts with or without a split
        C *= alpha / np.linalg.norm(C, axis=1, keepdims=True)
        K_val, mask_val, y_val, held, labelled_all = self._validation(K, None, y_enc, labelled, X_val, y_val, rng)
        labelled, Y_L = labelled_all[self._kept(held, l_all)], Y_all[self._kept(held, l_all)]
        l = len(labelled)
        t0 = time.perf_counter()
        system = OptCSystem(K, labelled, Y_L, **gammas, L=L)
        history = np.full((self.n_restarts, self.n_iter), np.nan)
        active = np.ones(self.n_restarts, dtype=bool)
        Ab = np.empty((Y_L.size, m + 1), order="F")
        Ab[:, m] = Y_L.T.ravel()  # rows in (P, l) order, as OptCSystem.solve holds F
        lwork = max(1, int(lapack.dgeqrf_lwork(Y_L.size, m + 1)[0]))
        # the whole alternation with one BLAS thread: the f-steps spread their work over the cores by
        # hand (OptCSystem.solve), and a multithreaded BLAS call in the c-step would leave OpenBLAS
        # workers busy-waiting on a core the next f-step needs
        with blocks.single_threaded_blas():
            for it in range(self.n_iter):
                idx = np.flatnonzero(active)
                if idx.size == 0:
                    break
                E, F = system.solve(C[idx])
                Ft = F.transpose(0, 2, 3, 1)  # (m, R, P, l), C-contiguous: vec f^p in (P, l) order, as b
                for j, r in enumerate(idx):
                    # objective after the f-step: (1/l) <Y_L, E_L>; F c = Y_L - E_L
                    J_f = float(np.sum(Y_L * E[j])) / l
                    # eq (85): min ||b - A c|| on the sphere, A = [vec f^1 ... vec f^m] on the labelled points
                    # ((l P) x m). With the QR of [A | b], ||A c - b||^2 = ||R c - q||^2 + rho^2, so the
                    # sphere problem is solved on the m x m triangle R (same minimiser, far cheaper).
                    Ab[:, :m] = Ft[:, j].reshape(m, -1).T
                    R_, q_ = qr_triangle(Ab, m, lwork)
                    c_new = sphere_least_squares(R_, q_, alpha)
                    # ||A c - b||^2 evaluated directly (exact whichever triangle was used)
                    resid = blas.dgemv(1.0, Ab[:, :m], c_new)
                    resid -= Ab[:, m]
                    resid2 = float(blas.ddot(resid, resid))
                    J = J_f + (resid2 - float(np.sum(E[j] ** 2))) / l
                    prev = history[r, it - 1] if it > 0 else np.inf
                    history[r, it] = J
                    C[r] = c_new
                    if it > 0 and prev - J <= self.tol * abs(prev):
                        active[r] = False
            # final f-step at the final c of every restart
            E, _ = system.solve(C)
            final_obj = np.array([float(np.sum(Y_L * E[r])) / l for r in range(self.n_restarts)])
            scores = None
            if K_val is not None:  # coefficients of every restart, scored on the validation points
                A_all = system.coefficients_batch(C, E)
                out = restart_outputs(K_val, C, A_all, mask_val)  # (restarts, v, P)
                scores = np.mean(classes[np.argmax(out, axis=2)] == y_val[None], axis=1)
                best = int(np.lexsort((final_obj, -scores))[0])  # best validation accuracy, then objective
                coef = A_all[:, :, best]
            else:
                best = int(np.argmin(final_obj))
                coef = system.coefficients(C[best], E[best])
        del system
        return self._finish(K, None, L, coef, C, best, history, final_obj, scores, held, labelled_all, Y_all, y_enc,
                            t0)

    def _fit_incomplete(self, K, y_enc, labelled, X_val, y_val, alpha):
        """The alternation of Section 6 on incomplete views (module docstring): f-step by
        :func:`mvl.solvers.incomplete.solve_structured_incomplete`, c-step by :func:`incomplete_c_step`; restarts, their
        choice and the ``validation_fraction`` refit as in the complete path."""
        from ..solvers.incomplete import solve_structured_incomplete

        mask = self.view_mask_
        m, n, _ = K.shape
        classes = self.classes_
        Y_all, L = self._mvl_inputs(K, y_enc, labelled, mask)
        gammas = self._gammas()
        rng = np.random.default_rng(self.random_state)
        C = rng.standard_normal((self.n_restarts, m))  # the same draws as the complete path
        C *= alpha / np.linalg.norm(C, axis=1, keepdims=True)
        K_val, mask_val, y_val, held, labelled_all = self._validation(K, mask, y_enc, labelled, X_val, y_val, rng)
        labelled, Y_L = labelled_all[self._kept(held, len(labelled))], Y_all[self._kept(held, len(labelled))]
        l = len(labelled)
        mask_L = mask[labelled]
        t0 = time.perf_counter()

        cache = {}  # the LU of each H_p and Q_p: independent of c, shared by every f-step and restart

        def fstep(c):
            A = solve_structured_incomplete(K, mask, labelled, Y_L, c, **gammas, L=L, cache=cache)
            FL = np.einsum("pln,pnk->plk", K[:, labelled], A) * mask_L.T[:, :, None]  # f^p at the labelled x_i
            return A, FL

        history = np.full((self.n_restarts, self.n_iter), np.nan)
        final_obj = np.empty(self.n_restarts)
        coefs = np.empty((m, n, self.n_restarts, Y_L.shape[1]))
        for r in range(self.n_restarts):
            prev = np.inf
            for it in range(self.n_iter):
                _, FL = fstep(C[r])
                g_f = incomplete_c_objective(C[r], FL, Y_L, mask_L)
                E = Y_L - np.einsum("lp,plk->lk", combination_weights(C[r], mask_L), FL)
                J_f = float(np.sum(Y_L * E)) / l  # objective (84) at the f-step's optimum
                C[r], g_new = incomplete_c_step(FL, Y_L, mask_L, C[r], alpha)
                J = J_f + (g_new - g_f) / l
                history[r, it] = J
                if it > 0 and prev - J <= self.tol * abs(prev):
                    break
                prev = J
            A, FL = fstep(C[r])
            E = Y_L - np.einsum("lp,plk->lk", combination_weights(C[r], mask_L), FL)
            final_obj[r] = float(np.sum(Y_L * E)) / l
            coefs[:, :, r] = A
        scores = None
        if K_val is not None:
            out = restart_outputs(K_val, C, coefs, mask_val)
            scores = np.mean(classes[np.argmax(out, axis=2)] == y_val[None], axis=1)
            best = int(np.lexsort((final_obj, -scores))[0])
        else:
            best = int(np.argmin(final_obj))
        return self._finish(K, mask, L, coefs[:, :, best], C, best, history, final_obj, scores, held, labelled_all,
                            Y_all, y_enc, t0)

    def _validation(self, K, mask, y_enc, labelled, X_val, y_val, rng):
        """The held-out data that chooses the restart (both structured paths): (K_val, mask_val, y_val, held,
        labelled) with X_val and y_val given, or with ``validation_fraction`` a seeded stratified hold-out ``held``
        (positions among the labelled samples, whose labels are then hidden: they stay in the graph as unlabelled
        samples), else K_val None."""
        classes, held, mask_val, K_val = self.classes_, None, None, None
        if X_val is not None:
            K_val, mask_val = self._test_kernels(X_val, name="X_val", presence=True)  # mask: X_val misses views
            y_val = column_or_1d(y_val)
            if y_val.shape != (K_val.shape[1],):
                raise ValueError(f"y_val has shape {y_val.shape}, X_val has {K_val.shape[1]} samples")
        elif self.validation_fraction is not None:
            held = stratified_holdout(y_enc[labelled], float(self.validation_fraction), rng, classes)
            K_val = np.ascontiguousarray(K[:, labelled[held]])
            mask_val = None if mask is None else mask[labelled[held]]
            y_val = classes[y_enc[labelled[held]]]
        return K_val, mask_val, y_val, held, labelled

    @staticmethod
    def _kept(held, l):
        """Positions of the labelled samples the alternation fits on: all, or those not held out."""
        return np.arange(l) if held is None else np.setdiff1d(np.arange(l), held)

    def _finish(self, K, mask, L, coef, C, best, history, final_obj, scores, held, labelled, Y_all, y_enc, t0):
        """The fitted attributes of both structured paths; with a hold-out, f refitted from every labelled sample
        at the kept restart's c (Theorem 10 by the structured solver)."""
        if held is not None:
            problem = MVLProblem(K, labelled, Y_all, C[best], **self._gammas(), laplacians=L, mask=mask)
            coef = get_solver("structured").solve(problem).coef
            self.validation_indices_ = labelled[held]
        self.coef_ = np.ascontiguousarray(coef)
        if not (np.all(np.isfinite(self.coef_)) and np.all(np.isfinite(final_obj))):
            raise FloatingPointError(f"optC produced NaN or inf (gamma_A = {self.gamma_A:g}); increase gamma_A "
                                     "or check K")
        self.fit_seconds_ = time.perf_counter() - t0
        self._set_restarts(C, best, history, final_obj, scores)
        problem = MVLProblem(K, labelled, Y_all, C[best], **self._gammas(), laplacians=L, mask=mask)
        self._set_solve_attributes(self._outer_iterations(), direct_residual(problem, self.coef_), True)
        self.n_labelled_ = len(labelled)
        self._check_regularization(K, labelled, y_enc[labelled], mask)
        return self

    def _outer_iterations(self):
        """Iterations of the alternation of the kept restart (its objective history up to where it stopped)."""
        return max(1, int(np.count_nonzero(~np.isnan(self.objective_history_[self.best_restart_]))))

    def _set_restarts(self, C, best, history, final_obj, scores):
        """The fitted attributes of the restarts (both fit paths): c_ of the kept one, every restart's c, objective
        history and final objective (84), validation scores, the index kept."""
        self.c_ = C[best].copy()
        self.restart_c_ = C
        self.objective_history_ = history
        self.final_objectives_ = final_obj
        self.validation_scores_ = scores
        self.best_restart_ = best

    def _fit_scalable_held_out(self, X, y, alpha, budget):
        """``validation_fraction`` with the f-step of "cg" or "nystrom": the alternation on the labelled samples
        left after a seeded stratified hold-out (the held-out ones unlabelled), the restart chosen on the held-out
        ones, then f refitted with every labelled sample at the kept c (Theorem 10 by the same solver)."""
        y = column_or_1d(y, warn=True)
        classes, y_enc, labelled = encode_labels(y, y.shape[0])
        m = sample_and_view_counts(self, X)[1]
        rng = np.random.default_rng(self.random_state)
        rng.standard_normal((self.n_restarts, m))  # the draw of the restarts (_fit_scalable repeats it)
        held = labelled[stratified_holdout(y_enc[labelled], float(self.validation_fraction), rng, classes)]
        if y.dtype.kind in "iuf":  # hidden: unlabelled, still in the graph
            y_fit = y.copy()
            y_fit[held] = -1
        else:
            y_fit = y.astype(object)
            y_fit[held] = None
        self._fit_scalable(X, y_fit, take_samples(X, held), y[held], alpha, budget, check=False)
        solver = get_solver(self.solver_)
        problem = self.operator_problem(X, y, solver, budget, c=self.c_, missing=False, tol=self.cg_tol,
                                        max_iter=self.cg_max_iter)
        result = solver.solve(problem)
        if not result.converged:
            warnings.warn(solver.unconverged_message(result, self.cg_tol), ConvergenceWarning, stacklevel=3)
        self._set_solve_attributes(self.n_iter_, result.residual, result.converged)
        coef, labelled = result.coef, problem.labelled
        self._scalable = kept_for_prediction(self, problem.kernels, result.centres)
        self.centres_ = result.centres
        self.coef_ = np.ascontiguousarray(coef)
        self.n_labelled_ = len(labelled)
        self.validation_indices_ = held
        check_swamped(self, self.decision_function(take_samples(X, labelled)),
                      (("gamma_A", self.gamma_A), ("gamma_B", self.gamma_B), ("gamma_W", self.gamma_W)),
                      y_enc[labelled])
        return self
