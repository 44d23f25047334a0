"""Tables and statements of the report notebooks, computed from the tidy results table (``results.csv``).

The notebooks call these functions and display what they return, so that what a report says is unit-tested
(tests/test_report.py). Accuracies are in % with two decimals and the standard deviation over splits in
parentheses, as in the paper's tables. Comparisons are paired per split (same test set, same labelled and
unlabelled samples) and come with a paired t-test and a Wilcoxon signed-rank test (scipy.stats).

Semi-supervised questions (JMLR 2016 Section 7, Table 2 design): the cells of the gamma_B / gamma_W ablation
are read from the methods ``mvl_ls_ablation`` (the configured gammas and graph), ``mvl_ls_ablation_cv`` (each
cell's gammas selected on validation, the configured graph) and ``mvl_ls_ablation_cvgraph`` (the graph selected
too); see :mod:`mvl.experiments`. Cell "none" is supervised MVL-LS, so a cell minus "none" is what the
unlabelled data bring; cell "any" is the model selected over all cells.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = [
    "SCOPES",
    "u_label",
    "mean_std",
    "paired_comparison",
    "unlabelled_gain",
    "ablation_table",
    "unlabelled_verdicts",
    "selected_graphs",
    "grid_cost",
]

SCOPES = {
    "mvl_ls_ablation": "paper graph, configured gammas",
    "mvl_ls_ablation_cv": "paper graph, gammas selected on validation",
    "mvl_ls_ablation_cvgraph": "graph and gammas selected on validation",
}
"""Ablation methods and what they hold fixed or select."""

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
    return res[res["method"].isin(list(SCOPES)) & res["ablation_cell"].notna()]


def unlabelled_gain(res, cells=("B", "W", "BW", "any")):
    """Semi-supervised cells against cell "none" (supervised), paired per split.

    One row per (scope, l_c, u_c, cell): the scope's label, the accuracies as mean (std), the difference in
    points, wins/losses over splits and both p-values.
    """
    ab = _ablation_rows(res)
    out = []
    for (method, lc, uc), g in ab.groupby(["method", "l_c", "u_c"], sort=True):
        by = {cell: gg.set_index("split")["accuracy"] for cell, gg in g.groupby("ablation_cell")}
        if "none" not in by:
            continue
        for cell in cells:
            if cell not in by:
                continue
            cmp = paired_comparison(by[cell], by["none"])
            out.append({"scope": SCOPES[method], "l_c": int(lc), "u_c": u_label(uc), "cell": cell,
                        "semi-supervised": mean_std(by[cell]), "supervised": mean_std(by["none"]),
                        "difference (points)": round(cmp["difference"], 2),
                        "better / worse (splits)": f"{cmp['wins']} / {cmp['losses']} of {cmp['n']}",
                        "p (paired t)": cmp["p_ttest"], "p (Wilcoxon)": cmp["p_wilcoxon"]})
    return pd.DataFrame(out)


def ablation_table(res):
    """The Table-2 ablation: rows (scope, cell), columns (l_c, u_c), cells mean (std) accuracy in %."""
    ab = _ablation_rows(res)
    rows = []
    for (method, cell, lc, uc), g in ab.groupby(["method", "ablation_cell", "l_c", "u_c"], sort=True):
        order = list(CELL_LABELS).index(cell) if cell in CELL_LABELS else 9
        rows.append({"scope": SCOPES[method], "cell": CELL_LABELS.get(cell, cell), "_order": order,
                     "column": f"l_c={int(lc)}, u_c={u_label(uc)}",
                     "_col": (int(lc), 10**9 if int(uc) == -1 else int(uc)), "value": mean_std(g["accuracy"])})
    if not rows:
        return pd.DataFrame()
    t = pd.DataFrame(rows)
    cols = [c for _, c in sorted({(k, c) for k, c in zip(t["_col"], t["column"], strict=True)})]
    wide = t.pivot_table(index=["scope", "_order", "cell"], columns="column", values="value", aggfunc="first")
    wide = wide[cols].reset_index().drop(columns="_order").set_index(["scope", "cell"])
    wide.columns.name = None
    return wide


def unlabelled_verdicts(gain, alpha=0.05, cell="any"):
    """One sentence per (scope, l_c, u_c) for the model selected over all cells against supervised MVL-LS:
    the numbers and whether the difference is significant at ``alpha`` by the paired t-test."""
    lines = []
    if gain.empty:
        return lines
    for r in gain[gain["cell"] == cell].to_dict("records"):
        d, p, pw = r["difference (points)"], r["p (paired t)"], r["p (Wilcoxon)"]
        if np.isfinite(p) and p < alpha:
            word = "unlabelled data help" if d > 0 else "unlabelled data hurt"
        else:
            word = "no significant difference"
        lines.append(f"l_c = {r['l_c']}, u_c = {r['u_c']}, {r['scope']}: {r['semi-supervised']} semi-supervised vs "
                     f"{r['supervised']} supervised, {d:+.2f} points, better/worse on "
                     f"{r['better / worse (splits)']} splits, paired t p = {_p(p)}, Wilcoxon p = {_p(pw)}: {word}.")
    return lines


def _p(p):
    return "n/a" if not np.isfinite(p) else (f"{p:.2g}" if p >= 1e-4 else f"{p:.1e}")


def selected_graphs(res, method="mvl_ls_cvgraph"):
    """How often each graph was selected on validation: rows graph, columns u_c, counts of selections
    (one per split and u_c; the selection is made once and kept for every l_c)."""
    g = res[(res["method"] == method)]
    if g.empty or "graph_used" not in g:
        return pd.DataFrame()
    one = g.drop_duplicates(["split", "u_c"])
    t = one.groupby(["graph_used", "u_c"]).size().unstack("u_c", fill_value=0)
    t.columns = [f"u_c={u_label(u)}" for u in t.columns]
    t.index.name = "selected graph"
    return t


def grid_cost(res):
    """Size and time of the validation grid per u_c: grid points, selections, mean and total seconds."""
    if "grid_seconds" not in res:
        return pd.DataFrame()
    g = res[res["method"].isin(["mvl_ls_cv", "mvl_ls_cvgraph", *SCOPES]) & res["grid_seconds"].notna()]
    if g.empty:
        return pd.DataFrame()
    one = g.drop_duplicates(["split", "u_c"])
    t = one.groupby("u_c").agg(grid_points=("grid_size", "first"), selections=("split", "size"),
                               mean_seconds=("grid_seconds", "mean"), total_seconds=("grid_seconds", "sum"))
    t.index = [u_label(u) for u in t.index]
    t.index.name = "u_c"
    return t.round(2)
