"""One experiment run = (dataset, split seed, l_c, u_c, method) -> tidy result rows.

The workflow's units (:mod:`mvl.workflow.runner`, which reads the method registry
:mod:`mvl.workflow.methods`) call :func:`run_on_draw`; :func:`run_method` and :func:`select_gammas` do the same
on a split's kernels and are usable directly. The settings are a :class:`mvl.workflow.settings.RunSettings`
(its graph a :class:`mvl.workflow.settings.GraphSpec`, which gives the estimators' graph keywords and the rows'
``graph`` label). Methods:

``mvl_ls``
    MVL-LS on all views with the configured (fixed) gammas.

``mvl_ls_cv``
    MVL-LS with (gamma_A, gamma_B, gamma_W) selected on the validation
    set over a grid (factorisations reused, :func:`mvl.grid_decision_functions`).
    By default the selection is made at this l_c; the workflow follows the
    paper (Section 7.3) and passes gammas selected once at l_c = 10
    (:func:`select_gammas`) for every l_c.

``mvl_ls_cvgraph``
    MVL-LS with the graph (kNN size, Laplacian power L^p) selected on validation beside
    the gammas (:func:`select_gammas_on_draw`); the row's ``graph`` is
    "validation-selected" and ``graph_used`` names the graph of that split.

``mvl_ls_kfold``
    MVL-LS with the graph and gammas selected by k-fold cross-validation over the labelled
    samples at every l_c (:class:`mvl.MVLLeastSquaresCV`, the config's grid; k = min(5, l_c);
    at l_c = 1 on the validation set): the supervised rows of the main sweep show the
    method at its best beside the paper's fixed gammas.

``mvl_ls_ablation``
    the gamma_B / gamma_W ablation of the paper's Table 2:
    {0, gamma_B} x {0, gamma_W} with the configured gammas, four rows.

``mvl_ls_ablation_cv``, ``mvl_ls_ablation_cvgraph``
    the same four cells (gamma_B, gamma_W each 0 or > 0),
    each with its other hyperparameters selected on validation within the cell, on the
    configured graph or over every graph of the grid. The cell "none" is supervised
    MVL-LS with a selected gamma_A (unlabelled points get zero coefficients,
    Corollary 19), so cell - "none" is what the unlabelled data bring.

``view_<name>``
    MVL-LS on one view alone (m = 1: vector-valued Laplacian RLS).

``mvl_ls_optc<N>``
    MVL-LS-optC (Section 6): c learned on the sphere ||c|| = alpha by N
    alternations from ``run.optc.n_restarts`` seeded random starts, the
    restart kept by validation accuracy (validation set of the draw).

``mvl_svm``
    MVL-SVM (Theorem 13, the multi-class simplex-cone SVM, SMO) on all views, fixed gammas.

``mvl_binsvm``
    MVL-binSVM (Corollary 8: one-vs-all, P binary problems sharing one factorisation).

``mvl_svm_ablation``, ``mvl_binsvm_ablation``
    the {0, gamma_B} x {0, gamma_W} ablation for the SVMs.

``mvml_<A>_n<pct>``
    MVML (Huusari et al. 2017) with metric ``A`` in {full, sparse, cov, identity} and a
    Nystrom approximation at ``pct`` % of the training points (100 = exact), one-vs-all.

``perceptron_matrix``, ``perceptron_orth``
    the kernel matrix multi-view perceptron (Cavallanti et al.) and
    the orthogonal one (Fornoni 2009), averaged, one-vs-all.

``single_views``
    every view alone, one row per view (method ``view_<name>``): one job
    instead of m in the workflow.

``svc_sum``
    scikit-learn ``SVC(kernel="precomputed")`` on the uniform average of the
    view kernels (the simplest MKL-style competitor), labelled data only.
"""

from __future__ import annotations

import json
import time
from typing import NamedTuple

import numpy as np

from ..data.protocols import ALL, KernelDraw, Split, kernel_draw
from ..solvers.grid import grid_decision_functions
from .methods import method as method_spec
from .settings import Gammas, GraphSpec

__all__ = ["Choice", "Selection", "ABLATION_CELLS", "run_method", "run_on_draw", "select_gammas",
           "select_gammas_on_draw"]


def _u_rows(u_c):
    """u_c as stored in result rows: -1 for "all" (every remaining pool sample unlabelled)."""
    return -1 if u_c == ALL else int(u_c)


def _draw_kernels(K_pool, K_test, y, split, l_c, u_c, n_val_per_class, u_max):
    """Kernels (sample-first, n x n x m) and labels of one draw (:func:`mvl.data.protocols.kernel_draw`)."""
    if not isinstance(split, Split):
        split = Split.from_dict(split)
    return kernel_draw(np.asarray(K_pool, dtype=np.float64), np.asarray(K_test, dtype=np.float64), np.asarray(y),
                       split, l_c, u_c, n_val_per_class, u_max=u_c if u_max is None else u_max).as_dict()


ABLATION_CELLS = {"none": (False, False), "B": (True, False), "W": (False, True), "BW": (True, True)}
"""Cells of the paper's Table-2 design: which of gamma_B, gamma_W is on (> 0)."""


def _cell(gamma_B, gamma_W):
    return {(False, False): "none", (True, False): "B", (False, True): "W", (True, True): "BW"}[
        (gamma_B > 0, gamma_W > 0)]


class Choice(NamedTuple):
    """One point chosen on validation: (gamma_A, gamma_B, gamma_W), the graph and the validation accuracy."""

    gammas: Gammas
    graph: GraphSpec
    val_accuracy: float


class Selection(NamedTuple):
    """The validation selection of one split and u_c (:func:`select_gammas_on_draw`)."""

    paper: Choice  # on the configured graph only (mvl_ls_cv)
    graph_selected: Choice  # over every graph of the grid (mvl_ls_cvgraph)
    ablation: dict  # scope ("paper", "graph_selected") -> cell -> Choice, None where the grid has no point
    grid_seconds: float
    grid_size: int
    selected_at_l_c: int
    u_c: int

    def diagnostics(self):
        """The rows' columns of the grid's cost and where it was made."""
        return dict(grid_seconds=self.grid_seconds, grid_size=self.grid_size, selected_at_l_c=self.selected_at_l_c)


def select_gammas(K_pool, K_test, y, split, l_c, u_c, run, n_val_per_class, u_max=None):
    """Select the graph and (gamma_A, gamma_B, gamma_W) on the validation set of the draw (l_c, u_c) of
    ``split`` (see :func:`select_gammas_on_draw`)."""
    d = _draw_kernels(K_pool, K_test, y, split, l_c, u_c, n_val_per_class, u_max)
    return select_gammas_on_draw(d, l_c, u_c, run)


def select_gammas_on_draw(d, l_c, u_c, run):
    """Validation selection (Section 7.3) over the graphs x gammas of ``run.grid`` on the kernels of one draw.

    The grid covers the graph (``run.grid.graphs``: the configured graph, the paper's dense kernel weights by
    default, and kNN sizes x Laplacian powers of ``graph.select``) beside (gamma_A, gamma_B, gamma_W); one call of
    :func:`mvl.grid_decision_functions` evaluates all of it. Validation accuracy decides; ties are broken by the
    smaller mean squared distance of the outputs to the +-1 targets, then by grid order (the configured graph and
    smaller indices first). Returns a :class:`Selection`: on the configured graph only (``paper``, method
    ``mvl_ls_cv``), over every graph (``graph_selected``, ``mvl_ls_cvgraph``), for each cell of
    :data:`ABLATION_CELLS` (gamma_B and gamma_W each forced to 0 or > 0) within the cell on both scopes
    (``mvl_ls_ablation_cv``, ``mvl_ls_ablation_cvgraph``), and the grid's size and time.
    """
    if isinstance(d, KernelDraw):
        d = d.as_dict()
    if d.get("K_va") is None or len(d["y_val"]) == 0:
        raise ValueError("gamma selection needs a validation set, and this draw has none")
    grid, g = run.grid, run.graph
    t0 = time.perf_counter()
    out, classes = grid_decision_functions(d["K_tr"], d["y_train"], d["K_va"], grid.A, grid.B, grid.W,
                                           laplacian=g.laplacian, graph_weights=g.weights,
                                           graphs=[(c.n_neighbors, c.laplacian_power) for c in grid.graphs])
    seconds = time.perf_counter() - t0
    y_val = d["y_val"]
    acc = np.mean(classes[np.argmax(out, axis=-1)] == y_val, axis=-1)  # (graphs, A, B, W)
    target = -np.ones(out.shape[-2:])
    target[np.arange(len(y_val)), np.searchsorted(classes, y_val)] = 1.0
    loss = np.mean((out - target) ** 2, axis=(-1, -2))
    B_on = np.asarray(grid.B, dtype=float) > 0
    W_on = np.asarray(grid.W, dtype=float) > 0

    def best(graph_idx, b_mask=None, w_mask=None):
        mask = np.zeros(acc.shape, dtype=bool)
        mask[graph_idx] = True
        if b_mask is not None:
            mask &= b_mask[None, None, :, None]
        if w_mask is not None:
            mask &= w_mask[None, None, None, :]
        if not mask.any():
            return None
        a = np.where(mask, acc, -np.inf).ravel()
        lo = np.where(mask, loss, np.inf).ravel()
        k = np.lexsort((lo, -a))[0]
        ig, ia, ib, iw = np.unravel_index(k, acc.shape)
        return Choice(gammas=Gammas(float(grid.A[ia]), float(grid.B[ib]), float(grid.W[iw])), graph=grid.graphs[ig],
                      val_accuracy=float(acc[ig, ia, ib, iw]))

    every = list(range(len(grid.graphs)))
    ablation = {scope: {cell: best(idx, B_on if b else ~B_on, W_on if w else ~W_on)
                        for cell, (b, w) in ABLATION_CELLS.items()}
                for scope, idx in (("paper", [0]), ("graph_selected", every))}
    return Selection(paper=best([0]), graph_selected=best(every), ablation=ablation, grid_seconds=seconds,
                     grid_size=int(acc.size), selected_at_l_c=int(l_c), u_c=_u_rows(u_c))


def run_method(method, K_pool, K_test, y, split, l_c, u_c, run, view_names, n_val_per_class, u_max=None,
               dataset="", seed=0, selected=None):
    """Run one method on the draw (l_c, u_c) of ``split`` and return its result rows (dicts).

    ``K_pool`` (N, N, m): kernels between the pool samples of ``split`` (in the sorted order of ``split.pool``),
    sample-first as the estimators take them; ``K_test`` (T, N, m): test vs pool; ``y``: labels of the whole
    dataset; ``run``: the :class:`mvl.workflow.settings.RunSettings`; ``n_val_per_class`` and ``u_max`` size the
    draw (validation per class, the largest u_c of the nested draws). ``selected``: the :class:`Selection`
    made elsewhere (e.g. at l_c = 10) for the selected methods; None selects at this l_c.
    """
    d = _draw_kernels(K_pool, K_test, y, split, l_c, u_c, n_val_per_class, u_max)
    return run_on_draw(method, d, l_c, u_c, run, view_names, dataset=dataset, seed=seed, selected=selected)


def run_on_draw(method, d, l_c, u_c, run, view_names, dataset="", seed=0, selected=None):
    """:func:`run_method` on the kernels of one draw: a dict with ``K_tr`` (n, n, m; labelled first),
    ``y_train`` (-1 = unlabelled), ``K_te`` (t, n, m), ``y_test``, ``K_va`` (v, n, m) and ``y_val``
    (validation; may be empty) and ``n_labelled``, or the :class:`mvl.data.protocols.KernelDraw` that every
    dataset's ``kernel_draw`` gives (:func:`mvl.workflow.runner.unit_source`).

    The method registry (:mod:`mvl.workflow.methods`) says how ``method`` runs: its run kind picks one function
    of :data:`RUNS`, which builds the estimator(s) with :meth:`mvl.workflow.methods.Method.make_estimator`."""
    spec = method_spec(method)
    if isinstance(d, KernelDraw):
        d = d.as_dict()
    r = _Run(spec, d, l_c, u_c, run, list(view_names), dataset, seed, selected)
    return RUNS[spec.run](r)


class _Run:
    """One method on one draw: the draw, the settings, the rows' common columns, and the fit helpers."""

    def __init__(self, spec, d, l_c, u_c, run, view_names, dataset, seed, selected):
        self.spec, self.d, self.l_c, self.u_c, self.run = spec, d, l_c, u_c, run
        self.view_names, self.dataset, self.seed, self.selected = view_names, dataset, seed, selected
        self.base = dict(dataset=dataset, method=spec.name, views="+".join(view_names), n_views=len(view_names),
                         l_c=l_c, u_c=_u_rows(u_c), split=seed, graph=run.graph.label,
                         setting="semi-supervised" if u_c == ALL or u_c > 0 else "supervised",
                         n_unlabelled=int(len(d["y_train"]) - d["n_labelled"]))
        self.rows = []

    @property
    def gammas(self):
        return self.run.gammas

    def estimator(self, gammas=None, graph=None):
        return self.spec.make_estimator(self.run, gammas=gammas, graph=graph, seed=self.seed, l_c=self.l_c,
                                        u_c=self.u_c)

    def fit_eval(self, gammas, choice, extra=None, graph=None):
        """One fit of the method's estimator and its test accuracy; ``graph`` = a :class:`GraphSpec` chosen on
        validation (the row's ``graph`` is then "validation-selected"), None = the configured graph."""
        d = self.d
        t0 = time.perf_counter()
        model = self.estimator(gammas, graph).fit(d["K_tr"], d["y_train"])
        seconds = time.perf_counter() - t0
        if hasattr(model, "kkt_violation_"):  # the SVMs: solver iterations and final KKT violation (Lemma 31)
            extra = dict(extra or {}, n_iter=int(np.sum(model.n_iter_)),
                         kkt_violation=float(np.max(model.kkt_violation_)))
        where = {} if graph is None else dict(graph="validation-selected", graph_used=graph.label)
        self.rows.append(dict(self.base, **Gammas(*gammas)._asdict(), gamma_choice=choice,
                              accuracy=model.score(d["K_te"], d["y_test"]), fit_seconds=seconds, **where,
                              **(extra or {})))

    def selection(self):
        """The validation selection of this draw's split (made elsewhere, or here at this l_c)."""
        if self.selected is not None:
            return self.selected
        return select_gammas_on_draw(self.d, self.l_c, self.u_c, self.run)

    def labelled(self):
        """Training and test kernels restricted to the labelled points, and their labels (supervised methods)."""
        d = self.d
        lab = np.arange(d["n_labelled"])
        return d["K_tr"][np.ix_(lab, lab)], d["y_train"][lab], d["K_te"][:, lab]

    def supervised_row(self, accuracy, seconds, choice, **extra):
        return dict(self.base, setting="supervised", gamma_A=np.nan, gamma_B=np.nan, gamma_W=np.nan,
                    gamma_choice=choice, accuracy=accuracy, fit_seconds=seconds, **extra)


def _run_fixed(r):
    """MVL-LS, one view alone, MVL-SVM, MVL-binSVM: one fit with the configured gammas."""
    r.fit_eval(r.gammas, "fixed")
    return r.rows


def _run_ablation(r):
    """The Table-2 ablation with the configured gammas: {0, gamma_B} x {0, gamma_W}, four rows."""
    gA, gB, gW = r.gammas
    for b in (0.0, gB):
        for w in (0.0, gW):
            r.fit_eval(Gammas(gA, b, w), "ablation", dict(ablation_cell=_cell(b, w)))
    return r.rows


def _graph_of(choice, scope):
    """The graph a selected fit uses: the configured one (None) in the paper scope, else the chosen one."""
    return None if scope == "paper" else choice.graph


def _run_selected(r):
    """One fit with the gammas selected on validation: on the configured graph (scope ``paper``) or with the graph
    selected beside them (scope ``graph_selected``)."""
    full = r.selection()
    scope = r.spec.selection_scope
    sel = full.paper if scope == "paper" else full.graph_selected
    r.fit_eval(sel.gammas, "selected", dict(val_accuracy=sel.val_accuracy, **full.diagnostics()),
               graph=_graph_of(sel, scope))
    return r.rows


def _run_kfold(r):
    """One fit with the graph and (gamma_A, gamma_B, gamma_W) selected by stratified k-fold cross-validation over
    the labelled samples of this draw, at this l_c (:class:`mvl.MVLLeastSquaresCV` over the config's grid: its
    graphs x gamma_A x gamma_B x gamma_W, gamma_B = 0 only in the supervised setting; k = min(5, l_c); unlabelled
    samples in every training fold), refitted
    on the whole training set. What a user of the estimators does on their own data (Section 7.3 selects once on a
    validation set of 5 per class instead, where a small validation set ties at 100 % and the tie-break decides).
    With one labelled sample per class there is nothing to cross-validate: the selection is then made on the
    draw's validation set, at this l_c (:func:`select_gammas_on_draw`), and the row says so (``selected_by``)."""
    from ..estimators.model_selection import MVLLeastSquaresCV

    d, grid = r.d, r.run.grid
    folds = min(5, int(r.l_c))
    t0 = time.perf_counter()
    if folds < 2:
        sel = select_gammas_on_draw(d, r.l_c, r.u_c, r.run).graph_selected
        gammas, graph, selected_by, score = sel.gammas, sel.graph, "validation set", sel.val_accuracy
    else:
        cfg = r.run.graph
        # supervised: gamma_B = 0 only; on labelled samples alone the between-view term hardly matters, and its
        # grid points cost an n x n x mn product each (mvl.solvers.grid), 80 % of the grid's time on mfeat at l_c = 40
        gammas_B = (0.0,) if r.u_c == 0 else grid.B
        cv = MVLLeastSquaresCV(gammas_A=grid.A, gammas_B=gammas_B, gammas_W=grid.W,
                               graphs=[(g.n_neighbors, g.laplacian_power) for g in grid.graphs],
                               graph_weights=cfg.weights, laplacian=cfg.laplacian, cv=folds, kernel="precomputed")
        best = cv.fit(d["K_tr"], d["y_train"]).best_params_
        gammas = Gammas(best["gamma_A"], best["gamma_B"], best["gamma_W"])
        graph = cfg.with_knn(best["n_neighbors"], best["laplacian_power"])
        selected_by, score = f"{folds}-fold CV", float(cv.best_score_)
    seconds = time.perf_counter() - t0
    size = grid.size if folds < 2 else len(grid.graphs) * len(grid.A) * len(gammas_B) * len(grid.W)
    r.fit_eval(gammas, "selected", dict(selected_by=selected_by, val_accuracy=score, grid_seconds=seconds,
                                        grid_size=size, selected_at_l_c=int(r.l_c)), graph=graph)
    return r.rows


def _run_ablation_selected(r):
    """The Table-2 cells, each with its remaining hyperparameters selected on validation within the cell."""
    full = r.selection()
    scope = r.spec.selection_scope
    anywhere = full.graph_selected if scope == "graph_selected" else full.paper
    for cell, sel in full.ablation[scope].items():
        if sel is None:  # the grid has no point in this cell (e.g. no gamma_B > 0)
            continue
        r.fit_eval(sel.gammas, "ablation-selected",
                   dict(val_accuracy=sel.val_accuracy, ablation_cell=cell, **full.diagnostics()),
                   graph=_graph_of(sel, scope))
        if sel.gammas == anywhere.gammas and (scope == "paper" or sel.graph == anywhere.graph):
            # the unrestricted selection (every cell) is this cell's: the same fit, reported as cell "any"
            r.rows.append(dict(r.rows[-1], ablation_cell="any"))
    return r.rows


def _run_optc(r):
    """MVL-LS-optC: the restart kept by validation accuracy (by objective when the draw has no validation set)."""
    d = r.d
    has_val = d.get("K_va") is not None and len(d["y_val"]) > 0  # CUB has no validation set
    d_va, y_va = (d["K_va"], d["y_val"]) if has_val else (None, None)
    t0 = time.perf_counter()
    model = r.estimator()
    model.fit(d["K_tr"], d["y_train"], d_va, y_va)
    seconds = time.perf_counter() - t0
    r.rows.append(dict(r.base, **r.gammas._asdict(), gamma_choice="fixed",
                       accuracy=model.score(d["K_te"], d["y_test"]), fit_seconds=seconds,
                       val_accuracy=float(model.validation_scores_[model.best_restart_]) if has_val else np.nan,
                       optc_c=json.dumps([round(float(v), 10) for v in model.c_]),
                       optc_best_restart=int(model.best_restart_),
                       optc_objective=json.dumps(np.round(model.objective_history_, 12).tolist())))
    return r.rows


def _comparison_extra(r, model):
    """The kind-specific part of a related system's row: its setting and, for a learnt MVML metric, the mean
    block norms (one-vs-all problems averaged)."""
    cfg = r.run.comparison
    if r.spec.run == "perceptron":
        return f"epochs={cfg.perceptron_epochs}", {}
    norms = np.asarray(model.block_norms_).mean(axis=0) if r.spec.mvml_metric in ("full", "sparse") else None
    return (f"lambda={cfg.mvml_lambda}",
            {"mvml_block_norms": None if norms is None else json.dumps(np.round(norms, 8).tolist())})


def _run_comparison(r):
    """A related system (MVML, a multi-view perceptron) on the labelled points (supervised), one-vs-all."""
    K, y, K_te = r.labelled()
    t0 = time.perf_counter()
    model = r.estimator()
    model.fit(K, y)
    seconds = time.perf_counter() - t0
    choice, extra = _comparison_extra(r, model)
    r.rows.append(r.supervised_row(float(np.mean(model.predict(K_te) == r.d["y_test"])), seconds, choice, **extra))
    return r.rows


def _run_svc(r):
    """scikit-learn's SVC on the uniform average of the view kernels, labelled points only."""
    K, y, K_te = r.labelled()
    t0 = time.perf_counter()
    svc = r.estimator().fit(K.mean(axis=-1), y)
    seconds = time.perf_counter() - t0
    r.rows.append(r.supervised_row(float(np.mean(svc.predict(K_te.mean(axis=-1)) == r.d["y_test"])), seconds,
                                   f"svc_C={r.run.svc_C}"))
    return r.rows


def _run_single_views(r):
    """Every view alone (method ``view_<name>``, one row per view)."""
    d, rows = r.d, []
    for p, name in enumerate(r.view_names):
        one = dict(d, K_tr=d["K_tr"][..., p:p + 1], K_te=d["K_te"][..., p:p + 1],
                   K_va=None if d.get("K_va") is None else d["K_va"][..., p:p + 1])
        rows += run_on_draw(f"view_{name}", one, r.l_c, r.u_c, r.run, [name], dataset=r.dataset, seed=r.seed)
    return rows


RUNS = {"fixed": _run_fixed, "ablation": _run_ablation, "selected": _run_selected, "kfold": _run_kfold,
        "ablation_selected": _run_ablation_selected, "optc": _run_optc, "mvml": _run_comparison,
        "perceptron": _run_comparison, "svc": _run_svc, "single_views": _run_single_views}
"""Run kind (:data:`mvl.workflow.methods.RUNS`, ``Method.run``) -> the function that runs a method of that kind."""
