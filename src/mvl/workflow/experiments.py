"""One experiment run = (dataset, split seed, l_c, u_c, method) -> tidy result rows.

The workflow's units (:mod:`mvl.workflow.runner`, which reads the method registry
:mod:`mvl.workflow.methods`) call :func:`run_method` / :func:`run_on_draw`; they are also usable directly.
Methods:

``mvl_ls``           MVL-LS on all views with the configured (fixed) gammas.
``mvl_ls_cv``        MVL-LS with (gamma_A, gamma_B, gamma_W) selected on the validation
                     set over a grid (factorisations reused, :func:`mvl.grid_decision_functions`).
                     By default the selection is made at this l_c; the workflow follows the
                     paper (Section 7.3) and passes gammas selected once at l_c = 10
                     (:func:`select_gammas`) for every l_c.
``mvl_ls_cvgraph``   MVL-LS with the graph (kNN size, Laplacian power L^p) selected on validation beside
                     the gammas (:func:`select_gammas_on_draw`); the row's ``graph`` is
                     "validation-selected" and ``graph_used`` names the graph of that split.
``mvl_ls_ablation``  the gamma_B / gamma_W ablation of the paper's Table 2:
                     {0, gamma_B} x {0, gamma_W} with the configured gammas, four rows.
``mvl_ls_ablation_cv``, ``mvl_ls_ablation_cvgraph``  the same four cells (gamma_B, gamma_W each 0 or > 0),
                     each with its other hyperparameters selected on validation within the cell, on the
                     configured graph or over every graph of the grid. The cell "none" is supervised
                     MVL-LS with a selected gamma_A (unlabelled points get zero coefficients,
                     Corollary 19), so cell - "none" is what the unlabelled data bring.
``view_<name>``      MVL-LS on one view alone (m = 1: vector-valued Laplacian RLS).
``mvl_ls_optc<N>``   MVL-LS-optC (Section 6): c learned on the sphere ||c|| = alpha by N
                     alternations from ``params["optc"]["n_restarts"]`` seeded random starts, the
                     restart kept by validation accuracy (validation set of the draw).
``mvl_svm``          MVL-SVM (Theorem 13, the multi-class simplex-cone SVM, SMO) on all views, fixed gammas.
``mvl_binsvm``       MVL-binSVM (Corollary 8: one-vs-all, P binary problems sharing one factorisation).
``mvl_svm_ablation``, ``mvl_binsvm_ablation``  the {0, gamma_B} x {0, gamma_W} ablation for the SVMs.
``mvml_<A>_n<pct>``  MVML (Huusari et al. 2017) with metric ``A`` in {full, sparse, cov, identity} and a
                     Nystrom approximation at ``pct`` % of the training points (100 = exact), one-vs-all.
``perceptron_matrix``, ``perceptron_orth``  the kernel matrix multi-view perceptron (Cavallanti et al.) and
                     the orthogonal one (Fornoni 2009), averaged, one-vs-all.
``single_views``     every view alone, one row per view (method ``view_<name>``): one job
                     instead of m in the workflow.
``svc_sum``          scikit-learn ``SVC(kernel="precomputed")`` on the uniform average of the
                     view kernels (the simplest MKL-style competitor), labelled data only.
"""

from __future__ import annotations

import json
import time

import numpy as np

from ..data.protocols import ALL, Split, draw_training_set
from ..grid import grid_decision_functions
from ..least_squares import MVLLeastSquares
from ..optc import MVLLeastSquaresOptC
from .methods import lookup

__all__ = ["run_method", "run_on_draw", "select_gammas", "select_gammas_on_draw"]

def _mvml_spec(method):
    """(metric, Nystrom fraction) of ``mvml_<metric>_n<pct>``, or None (from the method registry)."""
    m = lookup(method)
    return (m.mvml_metric, m.nystrom_percent / 100.0) if m is not None and m.mvml_metric else None


def _optc_iterations(method):
    """N of ``mvl_ls_optc<N>``, or None (from the method registry)."""
    m = lookup(method)
    return None if m is None else m.optc_iterations


def paper_graph(params):
    """The configured (fixed) graph of ``params``: laplacian, n_neighbors, laplacian_power, weights."""
    g = params.get("graph") or {}
    return dict(laplacian=g.get("laplacian", params.get("laplacian", "normalized")),
                n_neighbors=g.get("n_neighbors", params.get("n_neighbors")),
                laplacian_power=int(g.get("laplacian_power", 1)), weights=g.get("weights", "kernel"))


def graph_label(laplacian, n_neighbors, laplacian_power=1, weights="kernel"):
    """e.g. ``normalized-dense`` (the paper's graph), ``normalized-knn10-p2``, ``normalized-knn10bin-p2``."""
    kind = "dense" if n_neighbors in (None, 0) else f"knn{int(n_neighbors)}" + ("bin" if weights == "binary" else "")
    return f"{laplacian}-{kind}" + ("" if int(laplacian_power) == 1 else f"-p{int(laplacian_power)}")


def _graph_label(params):
    g = paper_graph(params)
    return graph_label(g["laplacian"], g["n_neighbors"], g["laplacian_power"], g["weights"])


def graph_candidates(params):
    """Graphs of the validation grid: the configured graph first, then kNN sizes x powers of ``graph.select``
    as (n_neighbors, laplacian_power) pairs (duplicates removed)."""
    g = paper_graph(params)
    sel = (params.get("graph") or {}).get("select") or {}
    out = [(g["n_neighbors"], g["laplacian_power"])]
    for k in sel.get("n_neighbors", []):
        for pw in sel.get("laplacian_power", [1]):
            if (k, int(pw)) not in out:
                out.append((k, int(pw)))
    return out


def _u_rows(u_c):
    """u_c as stored in result rows: -1 for "all" (every remaining pool sample unlabelled)."""
    return -1 if u_c == ALL else int(u_c)


def _draw_kernels(K_pool, K_test, y, split, l_c, u_c, params):
    """Kernels (sample-first, n x n x m) and labels of one draw: train (labelled then unlabelled), test and
    validation."""
    draw = draw_training_set(split, l_c, u_c, params["n_val_per_class"], u_max=params.get("u_max", u_c))
    pos = {int(g): i for i, g in enumerate(split.pool)}  # dataset index -> pool position
    train = np.array([pos[int(i)] for i in draw.train])
    val = np.array([pos[int(i)] for i in draw.validation])
    y_train = np.concatenate([y[draw.labelled], -np.ones(len(draw.unlabelled), dtype=np.int64)])
    return dict(K_tr=K_pool[np.ix_(train, train)], K_te=K_test[:, train], K_va=K_pool[np.ix_(val, train)],
                y_train=y_train, y_test=y[split.test], y_val=y[draw.validation], n_labelled=len(draw.labelled))


def select_gammas(K_pool, K_test, y, split, l_c, u_c, params):
    """Select the graph and (gamma_A, gamma_B, gamma_W) on the validation set (see :func:`select_gammas_on_draw`)."""
    if not isinstance(split, Split):
        split = Split.from_dict(split)
    d = _draw_kernels(np.asarray(K_pool, float), np.asarray(K_test, float), np.asarray(y), split, l_c, u_c,
                      params)
    return select_gammas_on_draw(d, l_c, u_c, params)


ABLATION_CELLS = {"none": (False, False), "B": (True, False), "W": (False, True), "BW": (True, True)}
"""Cells of the paper's Table-2 design: which of gamma_B, gamma_W is on (> 0)."""


def _cell(gamma_B, gamma_W):
    return {(False, False): "none", (True, False): "B", (False, True): "W", (True, True): "BW"}[
        (gamma_B > 0, gamma_W > 0)]


def select_gammas_on_draw(d, l_c, u_c, params):
    """Validation selection (Section 7.3) over graphs x ``params["grid"]`` on the kernels of one draw.

    The grid covers the graph (:func:`graph_candidates`: the configured graph, the paper's dense kernel
    weights by default, and kNN sizes x Laplacian powers of ``graph.select``) beside (gamma_A, gamma_B,
    gamma_W); one call of :func:`mvl.grid_decision_functions` evaluates all of it. Validation accuracy
    decides; ties are broken by the smaller mean squared distance of the outputs to the +-1 targets, then by
    grid order (the configured graph and smaller indices first). Returns a dict:

    - top level: the selection on the configured graph only (``gamma_A``, ``gamma_B``, ``gamma_W``,
      ``val_accuracy``; method ``mvl_ls_cv``);
    - ``graph_selected``: the selection over every graph (adds ``n_neighbors``, ``laplacian_power``;
      method ``mvl_ls_cvgraph``);
    - ``ablation``: for each cell of :data:`ABLATION_CELLS` (gamma_B and gamma_W each forced to 0 or > 0),
      the selection within the cell, on the configured graph (``paper``) and over every graph
      (``graph_selected``) (methods ``mvl_ls_ablation_cv`` and ``mvl_ls_ablation_cvgraph``);
    - diagnostics: ``grid_seconds``, ``grid_size``, ``graphs``, ``selected_at_l_c``, ``u_c``.
    """
    if d.get("K_va") is None or len(d["y_val"]) == 0:
        raise ValueError("gamma selection needs a validation set, and this draw has none")
    grid = params["grid"]
    g = paper_graph(params)
    graphs = graph_candidates(params)
    t0 = time.perf_counter()
    out, classes = grid_decision_functions(d["K_tr"], d["y_train"], d["K_va"], grid["A"], grid["B"], grid["W"],
                                           laplacian=g["laplacian"], graph_weights=g["weights"], graphs=graphs)
    seconds = time.perf_counter() - t0
    y_val = d["y_val"]
    acc = np.mean(classes[np.argmax(out, axis=-1)] == y_val, axis=-1)  # (graphs, A, B, W)
    target = -np.ones(out.shape[-2:])
    target[np.arange(len(y_val)), np.searchsorted(classes, y_val)] = 1.0
    loss = np.mean((out - target) ** 2, axis=(-1, -2))
    B_on = np.asarray(grid["B"], dtype=float) > 0
    W_on = np.asarray(grid["W"], dtype=float) > 0

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
        nn, pw = graphs[ig]
        return {"gamma_A": float(grid["A"][ia]), "gamma_B": float(grid["B"][ib]), "gamma_W": float(grid["W"][iw]),
                "n_neighbors": nn, "laplacian_power": int(pw), "val_accuracy": float(acc[ig, ia, ib, iw])}

    every = list(range(len(graphs)))
    sel = best([0])
    res = {k: sel[k] for k in ("gamma_A", "gamma_B", "gamma_W", "val_accuracy")}
    res["graph_selected"] = best(every)
    res["ablation"] = {
        scope: {cell: best(idx, B_on if b else ~B_on, W_on if w else ~W_on) for cell, (b, w) in ABLATION_CELLS.items()}
        for scope, idx in (("paper", [0]), ("graph_selected", every))}
    res.update(grid_seconds=seconds, grid_size=int(acc.size), graphs=[list(x) for x in graphs],
               selected_at_l_c=int(l_c), u_c=_u_rows(u_c))
    return res


def run_method(method, K_pool, K_test, y, split, l_c, u_c, params, view_names, dataset="", seed=0,
               selected=None):
    """Run one method on one draw and return a list of result rows (dicts).

    ``K_pool`` (N, N, m): kernels between the pool samples of ``split`` (in the
    sorted order of ``split.pool``), sample-first as the estimators take them; ``K_test`` (T, N, m): test vs pool.
    ``y``: labels of the whole dataset. ``params``: dict with ``gammas``
    (A, B, W), ``grid`` (A, B, W lists), ``laplacian``, ``n_neighbors``,
    ``n_val_per_class``, ``u_max``, ``svc_C``. ``selected``: for ``mvl_ls_cv``, the output of
    :func:`select_gammas` made elsewhere (e.g. at l_c = 10); None selects at this l_c.
    """
    if not isinstance(split, Split):
        split = Split.from_dict(split)
    K_pool = np.asarray(K_pool, dtype=np.float64)
    K_test = np.asarray(K_test, dtype=np.float64)
    y = np.asarray(y)
    d = _draw_kernels(K_pool, K_test, y, split, l_c, u_c, params)
    return run_on_draw(method, d, l_c, u_c, params, view_names, dataset=dataset, seed=seed, selected=selected)


def run_on_draw(method, d, l_c, u_c, params, view_names, dataset="", seed=0, selected=None):
    """:func:`run_method` on the kernels of one draw: a dict with ``K_tr`` (n, n, m; labelled first),
    ``y_train`` (-1 = unlabelled), ``K_te`` (t, n, m), ``y_test``, ``K_va`` (v, n, m) and ``y_val``
    (validation; may be empty) and ``n_labelled``. The paper datasets' loaders produce these directly."""
    K_tr, K_te, y_train, y_test = d["K_tr"], d["K_te"], d["y_train"], d["y_test"]
    gA, gB, gW = (float(params["gammas"][k]) for k in ("A", "B", "W"))
    g = paper_graph(params)
    base = dict(dataset=dataset, method=method, views="+".join(view_names), n_views=len(view_names),
                l_c=l_c, u_c=_u_rows(u_c), split=seed, graph=_graph_label(params),
                setting="semi-supervised" if u_c == ALL or u_c > 0 else "supervised",
                n_unlabelled=int(len(y_train) - d["n_labelled"]))
    rows = []

    def fit_eval(gammas, choice, extra=None, estimator=MVLLeastSquares, graph=None):
        """One fit and its test accuracy; ``graph`` = (n_neighbors, laplacian_power) chosen on validation
        (the row's ``graph`` is then "validation-selected"), None = the configured graph."""
        nn, pw = (g["n_neighbors"], g["laplacian_power"]) if graph is None else graph
        t0 = time.perf_counter()
        model = estimator(*gammas, laplacian=g["laplacian"], n_neighbors=nn, laplacian_power=pw,
                          graph_weights=g["weights"], kernel="precomputed").fit(K_tr, y_train)
        seconds = time.perf_counter() - t0
        if hasattr(model, "n_iter_"):  # the SVMs: solver iterations and final KKT violation (Lemma 31)
            extra = dict(extra or {}, n_iter=int(np.sum(model.n_iter_)),
                         kkt_violation=float(np.max(model.kkt_violation_)))
        where = {} if graph is None else dict(graph="validation-selected",
                                              graph_used=graph_label(g["laplacian"], nn, pw, g["weights"]))
        rows.append(dict(base, gamma_A=gammas[0], gamma_B=gammas[1], gamma_W=gammas[2],
                         gamma_choice=choice, accuracy=model.score(K_te, y_test), fit_seconds=seconds,
                         **where, **(extra or {})))

    def selection():
        return selected if selected is not None else select_gammas_on_draw(d, l_c, u_c, params)

    diagnostics = ("grid_seconds", "grid_size", "selected_at_l_c")

    if method == "single_views":
        rows = []
        for p, name in enumerate(view_names):
            one = dict(d, K_tr=K_tr[..., p:p + 1], K_te=K_te[..., p:p + 1],
                       K_va=None if d.get("K_va") is None else d["K_va"][..., p:p + 1])
            rows += run_on_draw(f"view_{name}", one, l_c, u_c, params, [name], dataset=dataset, seed=seed)
        return rows
    spec = lookup(method)
    if method == "mvl_ls" or (spec is not None and spec.view is not None):
        fit_eval((gA, gB, gW), "fixed")
    elif method == "mvl_ls_ablation":
        for b in (0.0, gB):
            for w in (0.0, gW):
                fit_eval((gA, b, w), "ablation", dict(ablation_cell=_cell(b, w)))
    elif method in ("mvl_svm", "mvl_binsvm", "mvl_svm_ablation", "mvl_binsvm_ablation"):
        from ..svm import MVLSVM, MVLBinarySVM

        est = MVLSVM if spec.kind == "mvl_svm" else MVLBinarySVM
        if spec.ablation:
            for b in (0.0, gB):
                for w in (0.0, gW):
                    fit_eval((gA, b, w), "ablation", dict(ablation_cell=_cell(b, w)), estimator=est)
        else:
            fit_eval((gA, gB, gW), "fixed", estimator=est)
    elif method == "mvl_ls_cv":
        sel = selection()
        fit_eval((sel["gamma_A"], sel["gamma_B"], sel["gamma_W"]), "selected",
                 {k: sel[k] for k in ("val_accuracy", *diagnostics)})
    elif method == "mvl_ls_cvgraph":
        full = selection()
        sel = full["graph_selected"]
        fit_eval((sel["gamma_A"], sel["gamma_B"], sel["gamma_W"]), "selected",
                 dict(val_accuracy=sel["val_accuracy"], **{k: full[k] for k in diagnostics}),
                 graph=(sel["n_neighbors"], sel["laplacian_power"]))
    elif method in ("mvl_ls_ablation_cv", "mvl_ls_ablation_cvgraph"):
        # the Table-2 cells, each with its remaining hyperparameters selected on validation within the cell
        full = selection()
        scope = "paper" if method == "mvl_ls_ablation_cv" else "graph_selected"
        anywhere = full["graph_selected"] if scope == "graph_selected" else {
            k: full[k] for k in ("gamma_A", "gamma_B", "gamma_W", "val_accuracy")}
        for cell, sel in full["ablation"][scope].items():
            if sel is None:  # the grid has no point in this cell (e.g. no gamma_B > 0)
                continue
            graph = None if scope == "paper" else (sel["n_neighbors"], sel["laplacian_power"])
            fit_eval((sel["gamma_A"], sel["gamma_B"], sel["gamma_W"]), "ablation-selected",
                     dict(val_accuracy=sel["val_accuracy"], ablation_cell=cell, **{k: full[k] for k in diagnostics}),
                     graph=graph)
            if all(sel[k] == anywhere[k] for k in anywhere if k != "val_accuracy"):
                # the unrestricted selection (every cell) is this cell's: the same fit, reported as cell "any"
                rows.append(dict(rows[-1], ablation_cell="any"))
    elif _optc_iterations(method):
        opt = params["optc"]
        has_val = d.get("K_va") is not None and len(d["y_val"]) > 0  # CUB has no validation set
        d_va, y_va = (d["K_va"], d["y_val"]) if has_val else (None, None)
        t0 = time.perf_counter()
        model = MVLLeastSquaresOptC(gA, gB, gW, alpha=float(opt.get("alpha", 1.0)),
                                    n_restarts=int(opt.get("n_restarts", 20)), n_iter=_optc_iterations(method),
                                    tol=float(opt.get("tol", 1e-8)), laplacian=g["laplacian"],
                                    n_neighbors=g["n_neighbors"],
                                    laplacian_power=g["laplacian_power"], graph_weights=g["weights"],
                                    random_state=[int(opt.get("seed", 0)), int(seed), int(l_c), _u_rows(u_c)],
                                    kernel="precomputed")
        model.fit(K_tr, y_train, d_va, y_va)
        seconds = time.perf_counter() - t0
        rows.append(dict(base, gamma_A=gA, gamma_B=gB, gamma_W=gW, gamma_choice="fixed",
                         accuracy=model.score(K_te, y_test), fit_seconds=seconds,
                         val_accuracy=(float(model.validation_scores_[model.best_restart_]) if has_val
                                       else np.nan),
                         optc_c=json.dumps([round(float(v), 10) for v in model.c_]),
                         optc_best_restart=int(model.best_restart_),
                         optc_objective=json.dumps(np.round(model.objective_history_, 12).tolist())))
    elif _mvml_spec(method):
        from ..mvml import MVML

        metric, frac = _mvml_spec(method)
        cfg = params.get("comparison", {})
        lab = np.arange(d["n_labelled"])  # supervised: MVML uses the labelled points
        t0 = time.perf_counter()
        model = MVML(lmbda=float(cfg.get("mvml_lambda", 0.1)), eta=float(cfg.get("mvml_eta", 1.0)), learn_A=metric,
                     n_iter=int(cfg.get("mvml_iterations", 10)), nystrom=frac, random_state=int(seed),
                     kernel="precomputed")
        model.fit(K_tr[np.ix_(lab, lab)], y_train[lab])
        seconds = time.perf_counter() - t0
        acc = float(np.mean(model.predict(K_te[:, lab]) == y_test))
        norms = np.asarray(model.block_norms_).mean(axis=0) if metric in ("full", "sparse") else None
        rows.append(dict(base, setting="supervised", gamma_A=np.nan, gamma_B=np.nan, gamma_W=np.nan,
                         gamma_choice=f"lambda={cfg.get('mvml_lambda', 0.1)}", accuracy=acc, fit_seconds=seconds,
                         mvml_block_norms=None if norms is None else json.dumps(np.round(norms, 8).tolist())))
    elif method in ("perceptron_matrix", "perceptron_orth"):
        from ..perceptron import KernelMultiViewPerceptron, OrthogonalMultiViewPerceptron

        cfg = params.get("comparison", {})
        est = KernelMultiViewPerceptron if method == "perceptron_matrix" else OrthogonalMultiViewPerceptron
        lab = np.arange(d["n_labelled"])
        t0 = time.perf_counter()
        model = est(n_epochs=int(cfg.get("perceptron_epochs", 10)), random_state=int(seed), kernel="precomputed")
        model.fit(K_tr[np.ix_(lab, lab)], y_train[lab])
        seconds = time.perf_counter() - t0
        rows.append(dict(base, setting="supervised", gamma_A=np.nan, gamma_B=np.nan, gamma_W=np.nan,
                         gamma_choice=f"epochs={cfg.get('perceptron_epochs', 10)}",
                         accuracy=float(np.mean(model.predict(K_te[:, lab]) == y_test)), fit_seconds=seconds))
    elif method == "svc_sum":
        from sklearn.svm import SVC

        lab = np.arange(d["n_labelled"])
        K_sum_tr = K_tr.mean(axis=-1)[np.ix_(lab, lab)]
        K_sum_te = K_te.mean(axis=-1)[:, lab]
        t0 = time.perf_counter()
        svc = SVC(kernel="precomputed", C=float(params.get("svc_C", 1.0))).fit(K_sum_tr, y_train[lab])
        seconds = time.perf_counter() - t0
        rows.append(dict(base, setting="supervised", gamma_A=np.nan, gamma_B=np.nan, gamma_W=np.nan,
                         gamma_choice="svc_C=" + str(params.get("svc_C", 1.0)),
                         accuracy=float(np.mean(svc.predict(K_sum_te) == y_test)), fit_seconds=seconds))
    else:
        raise ValueError(f"unknown method {method!r}")
    return rows
