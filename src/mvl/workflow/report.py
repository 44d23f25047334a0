"""Tables and statements of the report notebooks, computed from the tidy results table (``results.csv``).

The notebooks call these functions and display what they return, so that what a report says is unit-tested
(tests/workflow/test_report.py). Accuracies are in % with two decimals and the standard deviation over splits in
parentheses, as in the paper's tables. Comparisons are paired per split (same test set, same labelled and
unlabelled samples) and come with a paired t-test and a Wilcoxon signed-rank test (scipy.stats); every verdict
sentence is made by the one rule of :mod:`mvl.workflow.verdict` over the report's comparisons
(:func:`report_verdicts`).

Which method appears in which table or figure, in which order, colour and panel, comes from the method registry
(:mod:`mvl.workflow.methods`: ``Method.sections``, ``rank``, ``color``, ``panel``, ``scope_label``,
``solver_label``); a method added there appears here without a change. Every question is asked against the
registry's reference method (:data:`mvl.workflow.methods.REFERENCE`, supervised MVL-LS).

Semi-supervised questions (JMLR 2016 Section 7, Table 2 design): the cells of the gamma_B / gamma_W ablation
are read from the methods with a scope (the configured gammas and graph; each cell's gammas selected on
validation, the configured graph; the graph selected too); see :mod:`mvl.workflow.experiments`. Cell "none" is
supervised MVL-LS, so a cell minus "none" is what the unlabelled data bring; cell "any" is the model selected
over all cells.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from .figures import new_figure
from .methods import REFERENCE, lookup, method_attribute, methods_in, rank
from .verdict import ALPHA, MIN_PAIRS, judge

__all__ = [
    "scopes",
    "u_label",
    "mean_std",
    "paired_comparison",
    "unlabelled_gain",
    "ablation_table",
    "unlabelled_verdicts",
    "selected_graphs",
    "grid_cost",
    "settings_table",
    "method_label",
    "accuracy_table",
    "best_single_view",
    "multiview_vs_best_view",
    "multiview_verdict",
    "report_verdicts",
    "optc_verdicts",
    "selected_gammas",
    "configured_ablation_table",
    "optc_table",
    "optc_gain",
    "comparison_family",
    "comparison_table",
    "supervised_vs_none",
    "validation_ties",
    "identical_methods",
    "published_table",
    "published_summary",
    "styled",
    "lc_axis",
    "accuracy_figure",
    "comparison_figure",
    "mvml_metric_figure",
    "optc_weights_figure",
    "optc_objective_figure",
]

def scopes(names=None):
    """Ablation methods with a scope, in the registry's order -> what they hold fixed or select."""
    return {m: lookup(m).scope_label for m in methods_in("ablation_scope", names)}


CELL_LABELS = {"none": "gamma_B = gamma_W = 0 (supervised)", "B": "gamma_B only", "W": "gamma_W only",
               "BW": "gamma_B and gamma_W", "any": "selected over all cells"}


def u_label(u_c):
    """u_c as shown: "all" for -1 (every remaining pool sample unlabelled), else the number."""
    return "all" if int(u_c) == -1 else str(int(u_c))


def mean_std(values, scale=100.0):
    """``"93.61 (1.20)"``: mean and sample standard deviation (ddof 1) of ``values`` times ``scale``."""
    v = np.asarray(values, dtype=float) * scale
    if v.size == 0:
        return ""
    sd = np.std(v, ddof=1) if v.size > 1 else np.nan
    return f"{v.mean():.2f} ({sd:.2f})" if np.isfinite(sd) else f"{v.mean():.2f}"


def paired_comparison(a, b):
    """Paired comparison of two accuracy series indexed by split (``a`` minus ``b``), in points.

    Returns a dict with ``n`` (splits present in both), ``mean_a``, ``mean_b`` and ``difference`` (points),
    ``wins`` / ``losses`` (splits where a is better / worse), ``p_ttest`` (scipy.stats.ttest_rel) and
    ``p_wilcoxon`` (scipy.stats.wilcoxon, zero differences dropped); p-values are NaN when undefined (fewer
    than two splits, or all differences zero).
    """
    from scipy import stats

    joined = pd.concat({"a": pd.Series(a), "b": pd.Series(b)}, axis=1).dropna()
    x, y = joined["a"].to_numpy(float) * 100, joined["b"].to_numpy(float) * 100
    d = x - y
    p_t = p_w = np.nan
    if d.size >= 2 and np.any(d != 0):
        if np.std(d) > 0:
            p_t = float(stats.ttest_rel(x, y).pvalue)
        else:  # every split moves by the same amount: the t statistic is infinite
            p_t = 0.0
        p_w = float(stats.wilcoxon(d[d != 0]).pvalue) if np.count_nonzero(d) >= 1 else np.nan
    return dict(n=int(d.size), mean_a=float(x.mean()) if d.size else np.nan,
                mean_b=float(y.mean()) if d.size else np.nan, difference=float(d.mean()) if d.size else np.nan,
                wins=int(np.sum(d > 0)), losses=int(np.sum(d < 0)), p_ttest=p_t, p_wilcoxon=p_w)


def _ablation_rows(res):
    if "ablation_cell" not in res:  # no ablation in this run
        return res.iloc[:0].assign(ablation_cell=pd.Series(dtype=object))
    return res[res["method"].isin(list(scopes(res["method"].unique()))) & res["ablation_cell"].notna()]


def unlabelled_gain(res, cells=("B", "W", "BW", "any")):
    """Semi-supervised cells against cell "none" (supervised), paired per split.

    One row per (scope, l_c, u_c, cell): the scope's label, the accuracies as mean (std), the difference in
    points, wins/losses over splits and both p-values.
    """
    ab = _ablation_rows(res)
    scope = scopes(ab["method"].unique())
    out = []
    for (method, lc, uc), g in ab.groupby(["method", "l_c", "u_c"], sort=True):
        by = {cell: gg.set_index("split")["accuracy"] for cell, gg in g.groupby("ablation_cell")}
        if "none" not in by:
            continue
        for cell in cells:
            if cell not in by:
                continue
            cmp = paired_comparison(by[cell], by["none"])
            out.append({"scope": scope[method], "l_c": int(lc), "u_c": u_label(uc), "cell": cell,
                        "semi-supervised": mean_std(by[cell]), "supervised": mean_std(by["none"]),
                        "difference (points)": round(cmp["difference"], 2),
                        "better / worse (splits)": f"{cmp['wins']} / {cmp['losses']} of {cmp['n']}",
                        "p (paired t)": cmp["p_ttest"], "p (Wilcoxon)": cmp["p_wilcoxon"]})
    return pd.DataFrame(out)


def ablation_table(res):
    """The Table-2 ablation: rows (scope, cell), columns (l_c, u_c), cells mean (std) accuracy in %."""
    ab = _ablation_rows(res)
    scope = scopes(ab["method"].unique())
    rows = []
    for (method, cell, lc, uc), g in ab.groupby(["method", "ablation_cell", "l_c", "u_c"], sort=True):
        order = list(CELL_LABELS).index(cell) if cell in CELL_LABELS else 9
        rows.append({"scope": scope[method], "_scope": list(scope).index(method),
                     "cell": CELL_LABELS.get(cell, cell), "_order": order,
                     "column": f"l_c = {int(lc)}, u_c = {u_label(uc)}",
                     "_col": (int(lc), 10**9 if int(uc) == -1 else int(uc)), "value": mean_std(g["accuracy"])})
    if not rows:
        return pd.DataFrame()
    t = pd.DataFrame(rows)
    cols = [c for _, c in sorted({(k, c) for k, c in zip(t["_col"], t["column"], strict=True)})]
    wide = t.pivot_table(index=["_scope", "scope", "_order", "cell"], columns="column", values="value",
                         aggfunc="first")
    wide = wide[cols].reset_index().drop(columns=["_scope", "_order"]).set_index(["scope", "cell"])
    wide.columns.name = None
    return wide


def unlabelled_verdicts(verdicts):
    """One sentence per (scope, l_c, u_c): the model selected over all cells against supervised MVL-LS, by the rule
    of :mod:`mvl.workflow.verdict` (``verdicts``: the dict of :func:`report_verdicts`)."""
    return [v.sentence() for v in verdicts.get("unlabelled", [])]


def optc_verdicts(verdicts):
    """One sentence per l_c: optC against uniform c, by the rule of :mod:`mvl.workflow.verdict`."""
    return [v.sentence() for v in verdicts.get("optc", [])]


def _p(p):
    return "n/a" if not np.isfinite(p) else (f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}")


def _selected(scope, names):
    """The registry's selected methods (run kind "selected") of a selection scope among ``names``."""
    return [n for n in sorted({str(n) for n in names}, key=rank)
            if (m := lookup(n)) is not None and m.run == "selected" and m.selection_scope == scope]


def selected_graphs(res, method=None):
    """How often each graph was selected on validation: rows graph, columns u_c, counts of selections
    (one per split and u_c; the selection is made once and kept for every l_c). ``method``: default the
    registry's selected-graph method."""
    method = method or next(iter(_selected("graph_selected", res["method"].unique())), None)
    g = res[(res["method"] == method)]
    if g.empty or "graph_used" not in g:
        return pd.DataFrame()
    one = g.drop_duplicates(["split", "u_c"])
    t = one.groupby(["graph_used", "u_c"]).size().unstack("u_c", fill_value=0)
    t.columns = [f"u_c = {u_label(u)}" for u in t.columns]
    t.index.name = "selected graph"
    return t


def grid_cost(res):
    """Size and time of the validation grid per u_c: grid points, selections, seconds per selection (mean)
    and in total."""
    if "grid_seconds" not in res:
        return pd.DataFrame()
    selecting = [n for n in res["method"].unique() if (m := lookup(n)) is not None and m.uses_selection]
    g = res[res["method"].isin(selecting) & res["grid_seconds"].notna()]
    if g.empty:
        return pd.DataFrame()
    one = g.drop_duplicates(["split", "u_c"])
    t = one.groupby("u_c").agg(grid_points=("grid_size", "first"), selections=("split", "size"),
                               mean_seconds=("grid_seconds", "mean"), total_seconds=("grid_seconds", "sum"))
    t["grid_points"] = t["grid_points"].astype(int)
    t = t.rename(columns={"grid_points": "grid points", "mean_seconds": "seconds per selection (mean)",
                          "total_seconds": "seconds (total)"})
    t.index = [u_label(u) for u in t.index]
    t.index.name = "u_c"
    return t.round(2)


# --------------------------------------------------------------------------------------------- labels


def method_label(name):
    """Display label of a method name (``mvl_ls_cv`` -> "MVL-LS, selected gammas"), never abbreviated."""
    m = lookup(name)
    return name if m is None else m.label


def _view_names(res):
    """Views in the order of the results' ``views`` column (the configured order), else sorted."""
    if "views" in res and res["views"].notna().any():
        order = str(res["views"].dropna().iloc[0]).split("+")
    else:
        order = []
    present = sorted({v for v in method_attribute(res["method"], "view") if v is not None})
    return [v for v in order if v in present] + [v for v in present if v not in order]


def _gamma(v):
    """A regularisation parameter as printed in the tables: "0" or "1e-06"."""
    return "0" if v == 0 else f"{float(v):g}"


def _lc_col(lc):
    return f"l_c = {int(lc)}"


def _main_rows(res):
    """Runs of the main sweep (the registry's section "main"; names that are no method are kept)."""
    main = [m is None or m.in_section("main") for m in map(lookup, res["method"])]
    return res[np.array(main, dtype=bool)]


# --------------------------------------------------------------------------------------------- tables


def settings_table(dataset, source, results, rows=()):
    """What the report is about, one row per setting: data set, source, result rows and splits, then ``rows``
    ((setting, value) pairs of the run's settings: kernel, gammas, the graph of every scope;
    :meth:`mvl.workflow.settings.DatasetSettings.report_settings`), then the graphs selected on validation
    (counted over the selections of the selected-graph method)."""
    n_splits = int(results["split"].nunique()) if "split" in results else 0
    out = [("data set", dataset), ("source", source), ("result rows", str(len(results))), ("splits", str(n_splits))]
    out += [(str(k), str(v)) for k, v in rows]
    chosen = selected_graphs(results)
    if not chosen.empty:
        total = chosen.sum(axis=1).sort_values(ascending=False, kind="stable")
        out.append(("graphs selected on validation (selected-graph scope)",
                    ", ".join(f"{g} ({int(n)} of {int(total.sum())} selections)" for g, n in total.items())))
    return pd.DataFrame({"value": [v for _, v in out]}, index=pd.Index([k for k, _ in out], name="setting"))


def accuracy_table(res):
    """Mean (std) test accuracy in % of every method of the main sweep: rows (method, u_c), columns l_c.

    u_c = 0 is the supervised setting. Methods in the registry's order (the single views in the configured view
    order).
    """
    main = _main_rows(res)
    if main.empty:
        return pd.DataFrame()
    views = {f"view_{v}": k for k, v in enumerate(_view_names(main))}  # single views in the configured order
    rows = {}
    for (meth, uc, lc), g in main.groupby(["method", "u_c", "l_c"]):
        rows.setdefault(((rank(meth), views.get(meth, 0)), meth, int(uc) if int(uc) != -1 else 10**9, uc), {})[
            _lc_col(lc)] = mean_std(g["accuracy"])
    cols = [_lc_col(lc) for lc in sorted(main["l_c"].unique())]
    index = pd.MultiIndex.from_tuples([(method_label(k[1]), u_label(k[3])) for k in sorted(rows)],
                                      names=["method", "u_c"])
    return pd.DataFrame([[rows[k].get(c, "") for c in cols] for k in sorted(rows)], index=index, columns=cols)


def _is_single_view(res):
    """Boolean Series: the rows of single-view runs (``view_<name>``, the registry's ``Method.view``)."""
    return pd.Series([v is not None for v in method_attribute(res["method"], "view")], index=res.index, dtype=bool)


def best_single_view(res):
    """Per l_c, the supervised single view with the best mean *test* accuracy: Series l_c -> method name."""
    single = res[_is_single_view(res) & (res["u_c"] == 0)]
    if single.empty:
        return pd.Series(dtype=object)
    return single.groupby(["l_c", "method"])["accuracy"].mean().unstack("method").idxmax(axis=1)


def multiview_vs_best_view(res):
    """Supervised MVL-LS (the registry's reference method) on all views against the best single view of each
    l_c, paired per split.

    Columns: l_c, MVL-LS (all views), best single view, its accuracy, difference (points), better / worse
    (splits), p (paired t), p (Wilcoxon). Accuracies as mean (std) in %.
    """
    best = best_single_view(res)
    sup = res[res["u_c"] == 0]
    out = []
    for lc, view in best.items():
        mv = sup[(sup["method"] == REFERENCE) & (sup["l_c"] == lc)].set_index("split")["accuracy"]
        sv = sup[(sup["method"] == view) & (sup["l_c"] == lc)].set_index("split")["accuracy"]
        if mv.empty:
            continue
        c = paired_comparison(mv, sv)
        out.append({"l_c": int(lc), "MVL-LS (all views)": mean_std(mv), "best single view": view[5:],
                    "best single view accuracy": mean_std(sv), "difference (points)": c["difference"],
                    "better / worse (splits)": f"{c['wins']} / {c['losses']} of {c['n']}",
                    "p (paired t)": c["p_ttest"], "p (Wilcoxon)": c["p_wilcoxon"]})
    return pd.DataFrame(out)


def multiview_verdict(verdicts):
    """The answers to "does multi-view MVL-LS beat the best single view?", one sentence per l_c, from the rule of
    :mod:`mvl.workflow.verdict` (``verdicts``: the dict of :func:`report_verdicts`)."""
    lines = [v.sentence() for v in verdicts.get("multiview", [])]
    return lines or ["No supervised MVL-LS and single-view runs to compare."]


def report_verdicts(res, alpha=ALPHA, min_pairs=MIN_PAIRS):
    """Every comparison the report concludes on, judged together by :func:`mvl.workflow.verdict.judge` (one
    family: Holm's correction counts all of them).

    Returns a dict question -> list of :class:`mvl.workflow.verdict.Verdict`: "multiview" (supervised MVL-LS on
    all views against the best single view of each l_c), "unlabelled" (per scope, l_c and u_c, the cell selected
    over all cells against cell "none", supervised), "optc" (optC at its largest iteration count against uniform
    c, per l_c). Paired per split.
    """
    family = []
    sup = res[res["u_c"] == 0]
    for lc, view in best_single_view(res).items():
        mv = sup[(sup["method"] == REFERENCE) & (sup["l_c"] == lc)].set_index("split")["accuracy"]
        sv = sup[(sup["method"] == view) & (sup["l_c"] == lc)].set_index("split")["accuracy"]
        if not mv.empty:
            family.append(("multiview", dict(a=f"{method_label(REFERENCE)} (all views)",
                                             b=f"the best single view ({view[5:]})", x=mv, y=sv,
                                             context=f"l_c = {int(lc)}")))
    ab = _ablation_rows(res)
    scope = scopes(ab["method"].unique())
    for (method, lc, uc), g in ab.groupby(["method", "l_c", "u_c"], sort=True):
        by = {cell: gg.set_index("split")["accuracy"] for cell, gg in g.groupby("ablation_cell")}
        if "none" in by and "any" in by:
            family.append(("unlabelled", dict(a="semi-supervised (cell selected on validation)",
                                              b="supervised", x=by["any"], y=by["none"],
                                              context=f"l_c = {int(lc)}, u_c = {u_label(uc)}, {scope[method]}")))
    optc = _optc_rows(res)
    if not optc.empty:
        it = int(optc["iterations"].max())
        best = optc[optc["iterations"] == it]
        uni = res[(res["method"] == REFERENCE) & (res["u_c"] == 0)]
        for lc, g in best.groupby("l_c"):
            family.append(("optc", dict(a=method_label(g["method"].iloc[0]), b="uniform c = 1/m",
                                        x=g.set_index("split")["accuracy"],
                                        y=uni[uni["l_c"] == lc].set_index("split")["accuracy"],
                                        context=f"l_c = {int(lc)}")))
    judged = judge([c for _, c in family], alpha=alpha, min_pairs=min_pairs)
    out = {"multiview": [], "unlabelled": [], "optc": []}
    for (question, _), v in zip(family, judged, strict=True):
        out[question].append(v)
    return out


def selected_gammas(res, method=None):
    """The gammas chosen on validation, one row per (u_c, selection l_c, gamma_A, gamma_B, gamma_W): the
    number of splits that chose them and their validation accuracy, mean (std) in %. ``method``: default the
    registry's selected-gamma method on the configured graph."""
    method = method or next(iter(_selected("paper", res["method"].unique())), None)
    cv = res[res["method"] == method]
    if cv.empty:
        return pd.DataFrame()
    at = "selected_at_l_c" if "selected_at_l_c" in cv and cv["selected_at_l_c"].notna().any() else "l_c"
    one = cv.drop_duplicates(["u_c", "split", at])
    out = []
    for (uc, lc, a, b, w), g in one.groupby(["u_c", at, "gamma_A", "gamma_B", "gamma_W"], sort=True):
        out.append({"u_c": u_label(uc), "selected at l_c": int(lc), "gamma_A": _gamma(a), "gamma_B": _gamma(b),
                    "gamma_W": _gamma(w), "splits": int(g["split"].nunique()),
                    "validation accuracy": mean_std(g["val_accuracy"])})
    return pd.DataFrame(out)


_CELL_ORDER = ("none", "B", "W", "BW")


def configured_ablation_table(res):
    """The Table-2 ablation with the configured gammas for every solver: rows (solver, gamma_B, gamma_W),
    columns (l_c, u_c), mean (std) test accuracy in %."""
    solvers = methods_in("configured_ablation", res["method"].unique())
    ab = res[res["method"].isin(solvers)]
    if ab.empty:
        return pd.DataFrame()
    rows, cols = {}, set()
    for (meth, b, w, lc, uc), g in ab.groupby(["method", "gamma_B", "gamma_W", "l_c", "u_c"]):
        cell = ("B" if b > 0 else "") + ("W" if w > 0 else "") or "none"
        key = (solvers.index(meth), _CELL_ORDER.index(cell), lookup(meth).solver_label, _gamma(b), _gamma(w))
        col = (int(lc), 10**9 if int(uc) == -1 else int(uc), f"l_c = {int(lc)}, u_c = {u_label(uc)}")
        cols.add(col)
        rows.setdefault(key, {})[col[2]] = mean_std(g["accuracy"])
    names = [c[2] for c in sorted(cols)]
    keys = sorted(rows)
    index = pd.MultiIndex.from_tuples([k[2:] for k in keys], names=["solver", "gamma_B", "gamma_W"])
    return pd.DataFrame([[rows[k].get(c, "") for c in names] for k in keys], index=index, columns=names)


def _optc_rows(res):
    """The optC runs (the registry's section "optc") with their iteration count."""
    its = pd.Series(method_attribute(res["method"], "optc_iterations"), index=res.index, dtype=object)
    optc = res[its.notna().to_numpy()].copy()
    optc["iterations"] = its[its.notna()].astype(int)
    return optc


def optc_table(res):
    """Uniform c = 1/m against optC per iteration count (paper Tables 7-9): rows method, columns l_c,
    mean (std) test accuracy in %."""
    optc = _optc_rows(res)
    if optc.empty:
        return pd.DataFrame()
    lcs = sorted(optc["l_c"].unique())
    uni = res[(res["method"] == REFERENCE) & (res["u_c"] == 0)]
    groups = [(f"{method_label(REFERENCE)} (uniform c = 1/m)", uni)]
    groups += [(method_label(g["method"].iloc[0]), g) for _, g in optc.groupby("iterations")]
    table = pd.DataFrame({_lc_col(lc): [mean_std(g.loc[g["l_c"] == lc, "accuracy"]) for _, g in groups]
                          for lc in lcs}, index=pd.Index([name for name, _ in groups], name="method"))
    return table


def optc_gain(res):
    """optC (largest iteration count) minus uniform c per l_c, paired per split: difference in points,
    better / worse splits, p-values."""
    optc = _optc_rows(res)
    if optc.empty:
        return pd.DataFrame()
    it = int(optc["iterations"].max())
    best = optc[optc["iterations"] == it]
    uni = res[(res["method"] == REFERENCE) & (res["u_c"] == 0)]
    out = []
    for lc, g in best.groupby("l_c"):
        u = uni[uni["l_c"] == lc].set_index("split")["accuracy"]
        c = paired_comparison(g.set_index("split")["accuracy"], u)
        out.append({"l_c": int(lc), "iterations": it, "optC": mean_std(g["accuracy"]), "uniform c": mean_std(u),
                    "difference (points)": c["difference"],
                    "better / worse (splits)": f"{c['wins']} / {c['losses']} of {c['n']}",
                    "p (paired t)": c["p_ttest"], "p (Wilcoxon)": c["p_wilcoxon"]})
    return pd.DataFrame(out)


def comparison_family(name):
    """Panel of the related-systems comparison a method belongs to (the registry's ``Method.panel``)."""
    m = lookup(name)
    return m.panel if m is not None and m.panel else "other"


def _comparison_rows(res):
    m = res["method"].astype(str)
    names = m.unique()
    related = m.isin(methods_in("comparison", names))
    rel = res[(res["u_c"] == 0) & related]
    if rel.empty:
        return rel
    lcs = rel["l_c"].unique()
    return res[(res["u_c"] == 0) & res["l_c"].isin(lcs) & (related | m.isin(methods_in("comparison_reference", names)))]


def _comparison_order(names):
    """The registry's order: the reference methods first (MVL and SVC), then MVML by metric and Nystrom size
    (largest first), then the perceptrons."""
    return sorted({str(n) for n in names}, key=rank)


SAME_BY_CONSTRUCTION = {
    frozenset(("perceptron_matrix", "perceptron_orth")):
        "with per-view kernels (the workflow's: no cross-view kernels) the kernel matrix perceptron runs the "
        "orthogonal perceptron's algorithm (Fornoni 2009, eq 4.1.7; see mvl.KernelMultiViewPerceptron), so the "
        "two are one method here",
}
"""Pairs of methods that are the same algorithm on the workflow's inputs -> why (the sentence of
:func:`identical_methods`)."""


def supervised_vs_none(res, ablation="mvl_ls_ablation"):
    """Why supervised MVL-LS of the main table (u_c = 0, the configured gammas) and the ablation's cell "none"
    (gamma_B = gamma_W = 0) are different numbers: a list of sentences, computed from the rows (empty without
    both). The main table's fit keeps the configured gamma_B and gamma_W, which with u_c = 0 act on the labelled
    samples alone; cell "none" has neither term, its unlabelled samples get zero coefficients (Corollary 19), so
    it is one fit at every u_c (checked on the rows). Paired per split at each l_c both have."""
    sup = res[(res["method"] == REFERENCE) & (res["u_c"] == 0)]
    if "ablation_cell" not in res:
        return []
    none = res[(res["method"] == ablation) & (res["ablation_cell"] == "none")]
    if sup.empty or none.empty:
        return []
    gB, gW = (sorted({float(v) for v in sup[g].dropna()}) for g in ("gamma_B", "gamma_W"))
    coupled = any(v > 0 for v in gB + gW)
    terms = f"γ_B = {'/'.join(map(_gamma, gB)) or '?'} and γ_W = {'/'.join(map(_gamma, gW)) or '?'}"
    spread = none.groupby(["l_c", "split"])["accuracy"].agg(lambda a: a.max() - a.min())
    same = bool((spread <= 1e-12).all())
    head = ("Supervised MVL-LS in the main table (u_c = 0) and the ablation's cell \"none\" are two fits: the main "
            f"table's keeps the configured {terms}, which with no unlabelled samples act on the labelled samples "
            "alone (their between-view agreement and their graph); cell \"none\" sets both to 0, so its unlabelled "
            "samples get zero coefficients (Corollary 19)" if coupled else
            "Supervised MVL-LS in the main table (u_c = 0) and the ablation's cell \"none\" are the same model "
            "(the configured γ_B and γ_W are 0); its unlabelled samples get zero coefficients (Corollary 19)")
    head += (", and its accuracy is the same at every u_c on every split." if same else
             f"; its accuracy differs across u_c by up to {100 * spread.max():.2f} points on a split.")
    out = [head]
    first_u = none.sort_values("u_c").drop_duplicates(["l_c", "split"])
    for lc in sorted(set(sup["l_c"]) & set(first_u["l_c"])):
        a = sup[sup["l_c"] == lc].drop_duplicates("split").set_index("split")["accuracy"]
        b = first_u[first_u["l_c"] == lc].set_index("split")["accuracy"]
        c = paired_comparison(a, b)
        if c["n"]:
            out.append(f"At l_c = {int(lc)}: main table {c['mean_a']:.2f}, cell \"none\" "
                       f"{c['mean_b']:.2f} ({c['difference']:+.2f} points over {c['n']} splits).")
    return out


def validation_ties(res):
    """Sentences on the validation selections that reached 100 % validation accuracy (computed from
    ``val_accuracy``; empty when none did): there the validation set cannot rank the other grid points that
    reach it too, and :func:`mvl.workflow.experiments.select_gammas_on_draw`'s tie-break decides."""
    if "val_accuracy" not in res:
        return []
    out = []
    for name in _selected("paper", res["method"].unique()) + _selected("graph_selected", res["method"].unique()):
        g = res[(res["method"] == name) & res["val_accuracy"].notna()]
        at = "selected_at_l_c" if "selected_at_l_c" in g and g["selected_at_l_c"].notna().any() else "l_c"
        one = g.drop_duplicates(["u_c", "split", at])
        top = int((one["val_accuracy"] >= 1 - 1e-12).sum())
        if top:
            out.append(f"{method_label(name)}: {top} of {len(one)} selections (one per split and u_c) reached 100 % "
                       "validation accuracy. There the validation set cannot rank the grid points that reach "
                       "100 % as well; the tie-break chose (the smaller mean squared distance of the validation "
                       "outputs to the ±1 targets, then the grid's order), so the gammas shown are one of several "
                       "equally good on validation.")
    return out


def identical_methods(res):
    """Sentences on pairs of the related-systems comparison whose test accuracy is the same on every split at
    every l_c (computed; empty when no pair is): the reason from :data:`SAME_BY_CONSTRUCTION` when the pair is
    one algorithm on these inputs, otherwise that the run cannot tell them apart."""
    comp = _comparison_rows(res)
    if comp.empty:
        return []
    acc = comp.pivot_table(index=["l_c", "split"], columns="method", values="accuracy", aggfunc="first")
    names = _comparison_order(acc.columns)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            x, y = acc[a], acc[b]
            both = x.notna() & y.notna()
            if both.sum() == 0 or not (x.notna() == y.notna()).all() or not np.allclose(x[both], y[both], rtol=0,
                                                                                       atol=1e-12):
                continue
            lcs = ", ".join(str(int(v)) for v in sorted(set(acc.index[both].get_level_values("l_c"))))
            why = SAME_BY_CONSTRUCTION.get(frozenset((a, b)),
                                           "this run cannot tell the two apart (they may make the same predictions)")
            out.append(f"{method_label(a)} and {method_label(b)} have the same test accuracy on every split at "
                       f"every l_c ({lcs}; {int(both.sum())} fits each): {why}.")
    return out


def comparison_table(res):
    """MVML and the perceptrons beside MVL and SVC (supervised): rows (family, method), columns
    (test accuracy in % as mean (std) | mean fit time in seconds) x l_c."""
    comp = _comparison_rows(res)
    if comp.empty:
        return pd.DataFrame()
    lcs = sorted(comp["l_c"].unique())
    rows = []
    for meth in _comparison_order(comp["method"].unique()):
        g = comp[comp["method"] == meth]
        acc = [mean_std(g.loc[g["l_c"] == lc, "accuracy"]) for lc in lcs]
        secs = [_seconds(g.loc[g["l_c"] == lc, "fit_seconds"].mean()) for lc in lcs]
        rows.append(((comparison_family(meth), method_label(meth)), acc + secs))
    cols = pd.MultiIndex.from_tuples([("test accuracy (%)", _lc_col(lc)) for lc in lcs]
                                     + [("fit time (s)", _lc_col(lc)) for lc in lcs])
    index = pd.MultiIndex.from_tuples([r[0] for r in rows], names=["family", "method"])
    return pd.DataFrame([r[1] for r in rows], index=index, columns=cols)


def _seconds(x):
    if not np.isfinite(x):
        return ""
    return f"{x:.3f}" if x < 10 else f"{x:.1f}"


def _pm(mean, std):
    if pd.isna(mean):
        return ""
    return f"{mean:.2f} ({std:.2f})" if pd.notna(std) else f"{mean:.2f}"


def _cell(v):
    """A table cell as text: "" for missing, integral numbers without ".0"."""
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return ""
    if isinstance(v, (int, float, np.integer, np.floating)) and float(v).is_integer():
        return str(int(v))
    return str(v)


def published_table(cmp):
    """The frame of :func:`mvl.workflow.compare.published_comparison` as shown: published and ours as mean (std)
    in %, the difference with its sign, two decimals; rows without our counterpart keep empty cells."""
    if cmp.empty:
        return pd.DataFrame()
    out = pd.DataFrame({
        "table": cmp["table"].astype(int),
        "method": cmp["method"],
        "setting": cmp["setting"].fillna(""),
        "views": cmp["views"].map(_cell),
        "l_c": cmp["l_c"].map(lambda v: "" if pd.isna(v) else str(int(v))),
        "u_c": cmp["u_c"].map(lambda v: "" if pd.isna(v) else u_label(v)),
        "iterations": cmp["iterations"].map(lambda v: "" if pd.isna(v) else str(int(v))),
        "published": [_pm(m, s) for m, s in zip(cmp["published_mean"], cmp["published_std"], strict=True)],
        "ours": [_pm(m, s) for m, s in zip(cmp["ours_mean"], cmp["ours_std"], strict=True)],
        "splits": cmp["n_splits"].astype(int),
        "difference (points)": cmp["difference"].map(lambda d: "" if pd.isna(d) else f"{d:+.2f}"),
    })
    return out


def published_summary(cmp):
    """One sentence: how many published numbers have a counterpart here and the mean ``|difference|``."""
    matched = cmp.dropna(subset=["published_mean", "ours_mean"]) if not cmp.empty else cmp
    if matched.empty:
        return "No published number has a counterpart in this run."
    return (f"{len(matched)} published numbers have a counterpart in this run; mean |difference| "
            f"{matched['difference'].abs().mean():.2f} points.")


# --------------------------------------------------------------------------------------------- display


_P_COLUMNS = ("p (paired t)", "p (Wilcoxon)")


def styled(table, caption=None):
    """A table as a pandas Styler for the notebooks: every label in full (no truncation), p-values with two
    significant digits, differences with a sign and two decimals, other floats with two decimals, index
    hidden when it is a plain row number."""
    fmt = {}
    for col in table.columns:
        name = col[-1] if isinstance(col, tuple) else col
        if name in _P_COLUMNS:
            fmt[col] = _p
        elif isinstance(name, str) and name.startswith("difference"):
            fmt[col] = lambda v: v if isinstance(v, str) else f"{v:+.2f}"
        elif pd.api.types.is_float_dtype(table[col]):
            fmt[col] = "{:.2f}"
    st = table.style.format(fmt, na_rep="")
    if isinstance(table.index, pd.RangeIndex):
        st = st.hide(axis="index")
    st = st.set_table_styles([
        {"selector": "th, td", "props": "text-align: left; padding: 2px 8px; white-space: nowrap;"},
        {"selector": "caption", "props": "caption-side: top; text-align: left; font-weight: bold;"},
    ])
    if caption:
        st = st.set_caption(caption)
    return st


# --------------------------------------------------------------------------------------------- figures

MAX_SERIES = 8
"""Most series drawn on one axes (legibility)."""


def _legend_below(ax, ncol=1):
    """The legend under the axes (it never hides a point)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, ncol=ncol, loc="upper center", bbox_to_anchor=(0.5, -0.14), frameon=False)


def lc_axis(ax, lcs):
    """Log x axis with one labelled tick per l_c value (plain integers) and no minor tick labels."""
    from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

    lcs = sorted({int(v) for v in lcs})
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(FixedLocator(lcs))
    ax.xaxis.set_major_formatter(FixedFormatter([str(v) for v in lcs]))
    ax.xaxis.set_minor_locator(NullLocator())
    lo, hi = (lcs[0], lcs[-1]) if lcs else (1, 10)
    pad = max((hi / lo) ** 0.06, 1.25)
    ax.set_xlim(lo / pad, hi * pad)
    ax.set_xlabel("labelled samples per class $l_c$")


def _dodge(k, n, spread=0.04):
    """Multiplicative x offset of series k of n on a log axis, so that error bars do not hide each other."""
    return float(np.exp(spread * (k - (n - 1) / 2)))


def _errorbar(ax, g, k, n, **kw):
    """Mean and std over splits of one series (rows of one method) per l_c, in %."""
    s = g.groupby("l_c")["accuracy"].agg(["mean", "std"]).sort_index()
    ax.errorbar(s.index.to_numpy(float) * _dodge(k, n), s["mean"] * 100, yerr=s["std"].fillna(0) * 100,
                marker=kw.pop("marker", "o"), ms=4, capsize=2, lw=1.4, **kw)


def accuracy_figure(res, dataset="", n_splits=None):
    """Accuracy vs l_c: a supervised panel (MVL-LS, MVL-SVM, MVL-binSVM, SVC, best single view chosen on
    test per l_c) and one semi-supervised panel per u_c (supervised MVL-LS as a dashed reference; MVL-LS with
    fixed gammas, selected gammas, selected graph and gammas; MVL-SVM, MVL-binSVM). Shared y axis."""
    main = _main_rows(res)
    ucs = sorted(u for u in main["u_c"].unique() if u != 0) if not main.empty else []
    ucs = sorted(ucs, key=lambda u: 10**9 if u == -1 else u)
    n = 1 + len(ucs)
    fig, axes = new_figure(1, n, 4.6 * n + 0.6, 6.2, sharey=True)
    lcs = sorted(main["l_c"].unique()) if not main.empty else []
    # every main-sweep method the registry gives a colour, in its order (single views: the best one only)
    drawn = [n for n in _comparison_order(main["method"].unique()) if lookup(n) is not None and lookup(n).color]
    colors = {n: lookup(n).color for n in drawn}
    ax = axes[0, 0]
    sup = main[main["u_c"] == 0] if not main.empty else main
    series = [(m, sup[sup["method"] == m]) for m in drawn]
    series = [(m, g) for m, g in series if not g.empty]
    best = best_single_view(res)
    for k, (m, g) in enumerate(series):
        _errorbar(ax, g, k, len(series) + 1, color=colors[m], label=method_label(m))
    if len(best):
        g = pd.concat([sup[(sup["method"] == v) & (sup["l_c"] == lc)] for lc, v in best.items()])
        _errorbar(ax, g, len(series), len(series) + 1, color="k", ls="--", marker="s",
                  label="best single view (chosen on test per $l_c$; its name beside each point)")
        means = g.groupby("l_c")["accuracy"].mean() * 100
        for lc, v in best.items():
            ax.annotate(v[5:], (lc * _dodge(len(series), len(series) + 1), means[lc]), xytext=(6, -3),
                        textcoords="offset points", fontsize=8)
    ax.set_title("supervised (labelled data only)")
    for j, uc in enumerate(ucs, start=1):
        ax = axes[0, j]
        semi = main[main["u_c"] == uc]
        ref = sup[sup["method"] == REFERENCE]
        ser = [(m, semi[semi["method"] == m]) for m in drawn]
        ser = [(m, g) for m, g in ser if not g.empty]
        total = len(ser) + (not ref.empty)
        if not ref.empty:
            _errorbar(ax, ref[ref["l_c"].isin(semi["l_c"].unique())], 0, total, color="0.4", ls="--",
                      marker="x", label=f"{method_label(REFERENCE)} supervised (reference)")
        for k, (m, g) in enumerate(ser, start=int(not ref.empty)):
            label = method_label(m) + (", fixed gammas" if m == REFERENCE else "")
            _errorbar(ax, g, k, total, color=colors[m], label=label)
        ax.set_title(f"semi-supervised, $u_c$ = {u_label(uc)} unlabelled per class")
    for ax in axes[0]:
        lc_axis(ax, lcs)
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            _legend_below(ax)
        else:
            ax.text(0.5, 0.5, "no runs", ha="center", transform=ax.transAxes)
    axes[0, 0].set_ylabel("test accuracy (%)")
    splits = n_splits if n_splits is not None else (res["split"].nunique() if "split" in res else 0)
    fig.suptitle(f"{dataset}: test accuracy vs labelled samples per class (mean and std over {splits} splits)")
    return fig


def comparison_figure(res, dataset=""):
    """Related systems, one row per family (MVL and SVC; MVML full / sparse / identity metric;
    perceptrons): test accuracy (left) and mean fit time (right, log) vs l_c. Supervised MVL-LS is drawn in
    grey dashed in every row as the common reference."""
    comp = _comparison_rows(res)
    fams = []
    for m in _comparison_order(comp["method"].unique()) if not comp.empty else []:
        if comparison_family(m) not in fams:
            fams.append(comparison_family(m))
    n = max(len(fams), 1)
    fig, axes = new_figure(n, 2, 12.0, 2.6 * n + 0.8, sharey="col", sharex=True)
    if comp.empty:
        for ax in axes.ravel():
            ax.axis("off")
        axes[0, 0].text(0.5, 0.5, "no MVML / perceptron runs in this profile", ha="center",
                        transform=axes[0, 0].transAxes)
        return fig
    lcs = sorted(comp["l_c"].unique())
    ref = comp[comp["method"] == REFERENCE]
    for i, fam in enumerate(fams):
        members = [m for m in _comparison_order(comp["method"].unique())
                   if comparison_family(m) == fam and m != REFERENCE]
        draw_ref = not ref.empty
        total = len(members) + draw_ref
        acc, secs = axes[i, 0], axes[i, 1]
        if draw_ref:
            _errorbar(acc, ref, 0, total, color="0.4", ls="--", marker="x", label=method_label(REFERENCE) + (
                "" if i == 0 else " (reference)"))
            t = ref.groupby("l_c")["fit_seconds"].mean()
            secs.plot(t.index * _dodge(0, total), t.to_numpy(), color="0.4", ls="--", marker="x")
        for k, m in enumerate(members, start=int(draw_ref)):
            g = comp[comp["method"] == m]
            _errorbar(acc, g, k, total, color=f"C{k}", label=method_label(m))
            t = g.groupby("l_c")["fit_seconds"].mean()
            secs.plot(t.index * _dodge(k, total), t.to_numpy(), color=f"C{k}", marker="o", ms=4)
        acc.set_title(fam, loc="left", fontsize=10)
        for ax in (acc, secs):
            lc_axis(ax, lcs)
            ax.grid(alpha=0.3)
            if i < n - 1:
                ax.set_xlabel("")
        acc.set_ylabel("test accuracy (%)")
        secs.set_yscale("log")
        secs.set_ylabel("fit time (s)")
        secs.legend(*acc.get_legend_handles_labels(), fontsize=8, loc="center left", bbox_to_anchor=(1.02, 0.5),
                    frameon=False)
    fig.suptitle(f"{dataset}: related systems, supervised (mean and std over {res['split'].nunique()} splits)")
    return fig


def mvml_metric_figure(res, dataset=""):
    """MVML's learned metric: mean Frobenius norm of each view-pair block of A (largest l_c, first split,
    the first MVML method with a learned metric), as an annotated heat map."""
    fig, axes = new_figure(1, 1, 6.0, 5.0)
    ax = axes[0, 0]
    rows = res.iloc[:0]
    if "mvml_block_norms" in res:
        rows = res[[k == "mvml" for k in method_attribute(res["method"], "kind")]]
    rows = rows[rows["mvml_block_norms"].notna()] if not rows.empty else rows
    if rows.empty:
        ax.axis("off")
        ax.text(0.5, 0.5, "no learned MVML metric in this profile", ha="center", transform=ax.transAxes)
        return fig
    rows = rows[rows["l_c"] == rows["l_c"].max()]
    h = rows.loc[sorted(rows.index, key=lambda i: (rows.at[i, "split"], _comparison_order(
        rows["method"].unique()).index(rows.at[i, "method"])))[0]]
    B = np.array(json.loads(h["mvml_block_norms"]), dtype=float)
    views = str(h["views"]).split("+")
    im = ax.imshow(B, cmap="viridis")
    ax.set_xticks(range(len(views)), views, rotation=45, ha="right")
    ax.set_yticks(range(len(views)), views)
    if B.shape[0] <= 12:
        mid = (B.max() + B.min()) / 2
        for (i, j), v in np.ndenumerate(B):
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=8, color="k" if v > mid else "w")
    fig.colorbar(im, ax=ax, fraction=0.046, label="block norm")
    ax.set_title(f"{dataset}: {method_label(h['method'])}, $l_c$ = {int(h['l_c'])}, split {h['split']}")
    return fig


def optc_weights_figure(res, dataset=""):
    """Learned view weights c_i^2 of optC (largest iteration count): mean and std over splits per view,
    one bar per l_c."""
    optc = _optc_rows(res)
    views = str(res["views"].dropna().iloc[0]).split("+") if "views" in res and res["views"].notna().any() else []
    fig, axes = new_figure(1, 1, max(7.5, 0.9 * len(views) + 2), 4.2)
    ax = axes[0, 0]
    if optc.empty:
        ax.axis("off")
        ax.text(0.5, 0.5, "no optC runs in this profile", ha="center", transform=ax.transAxes)
        return fig
    it = int(optc["iterations"].max())
    g = optc[optc["iterations"] == it]
    lcs = sorted(g["l_c"].unique())
    width = 0.8 / len(lcs)
    x = np.arange(len(views))
    for k, lc in enumerate(lcs):
        c2 = np.array([np.square(json.loads(v)) for v in g.loc[g["l_c"] == lc, "optc_c"]], dtype=float)
        ax.bar(x + (k - (len(lcs) - 1) / 2) * width, c2.mean(0), width, yerr=c2.std(0), capsize=2,
               color=f"C{k}", label=f"$l_c$ = {int(lc)}")
    ax.axhline(1 / len(views), color="0.3", ls=":", lw=1, label="equal weights $c_i^2 = 1/m$")
    ax.set_xticks(x, views, rotation=30 if max(map(len, views)) > 6 else 0,
                  ha="right" if max(map(len, views)) > 6 else "center")
    ax.set_ylabel("learned weight $c_i^2$")
    ax.set_ylim(bottom=0)
    ax.legend(fontsize=8, ncol=2)
    ax.grid(axis="y", alpha=0.3)
    ax.set_title(f"{dataset}: view weights learned by optC ({it} iterations)")
    return fig


def optc_objective_figure(res, dataset=""):
    """Objective (84) vs iteration on one split and l_c: the restart kept by validation, and the range
    (min to max) and median of the other restarts."""
    optc = _optc_rows(res)
    fig, axes = new_figure(1, 1, 7.5, 4.2)
    ax = axes[0, 0]
    if optc.empty:
        ax.axis("off")
        ax.text(0.5, 0.5, "no optC runs in this profile", ha="center", transform=ax.transAxes)
        return fig
    g = optc[optc["iterations"] == optc["iterations"].max()]
    lcs = sorted(g["l_c"].unique())
    lc = lcs[len(lcs) // 2]
    row = g[g["l_c"] == lc].sort_values("split").iloc[0]
    hist = pd.DataFrame(json.loads(row["optc_objective"]), dtype=float).T  # iterations x restarts
    hist.index = np.arange(1, len(hist) + 1)
    kept = int(row["optc_best_restart"])
    others = hist.drop(columns=kept)
    if others.shape[1]:
        ax.fill_between(hist.index, others.min(axis=1), others.max(axis=1), color="0.85",
                        label=f"other {others.shape[1]} restarts: range")
        ax.plot(hist.index, others.median(axis=1), color="0.4", lw=1, ls="--", label="other restarts: median")
    ax.plot(hist.index, hist[kept], color="C3", lw=1.8, label=f"restart {kept}, kept by validation")
    ax.set_xlabel("iteration")
    ax.set_ylabel("objective (84)")
    ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, 3))
    ax.legend(fontsize=8, loc="best")
    ax.grid(alpha=0.3)
    ax.set_title(f"{dataset}: optC objective, {hist.shape[1]} restarts, $l_c$ = {int(lc)}, split {row['split']}")
    return fig
