"""Generates notebooks/report.ipynb (the committed notebook is what the workflow runs; edit this
script and rerun it to change the report): python notebooks/tools/make_report_notebook.py"""
import nbformat as nbf
nb = nbf.v4.new_notebook()
cells = []
md = lambda s: cells.append(nbf.v4.new_markdown_cell(s))
code = lambda s, **kw: cells.append(nbf.v4.new_code_cell(s, **kw))
md("""# Single-view vs multi-view learning with MVL-LS

Report of the `mvl` workflow: MVL-LS (Minh, Bazzani & Murino, JMLR 2016, Algorithm 1 / Theorem 10) on all
views, each view alone, a scikit-learn SVC on the average of the view kernels, and semi-supervised MVL-LS with
fixed and validation-selected regularisation, and the hinge-loss variants MVL-SVM (simplex-cone multi-class SVM,
Theorem 13, solved by SMO) and MVL-binSVM (one-vs-all). Executed by papermill from the Snakemake rule `report`; the
parameters cell below is overwritten by the workflow.""")
code("""# Parameters (overwritten by papermill -p ...)
dataset = "mfeat"
source = "mfeat"
results_csv = "results/mfeat/results.csv"
summary_csv = "results/mfeat/summary.csv"
fig_png = "results/mfeat/figures/accuracy_vs_labels.png"
fig_pdf = "results/mfeat/figures/accuracy_vs_labels.pdf"
fig_optc_weights = "results/mfeat/figures/optc_weights.png"
fig_optc_objective = "results/mfeat/figures/optc_objective.png"
fig_comparison = "results/mfeat/figures/comparison.png"
graph = "normalized, dense kernel weights (paper)"
kernel = "{}"
gammas = "{}"
""", metadata={"tags": ["parameters"]})
code("""import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

pd.set_option("display.width", 160)
res = pd.read_csv(results_csv)
print(f"dataset: {dataset}; {len(res)} result rows from {res['split'].nunique()} splits")
print(f"graph Laplacian used for the within-view term: {graph}")
print(f"kernel: {kernel}")
print(f"fixed gammas: {gammas}")""")
md("## Accuracy vs number of labelled samples per class ($l_c$)\nMean (std) of test accuracy over splits, in %.")
code("""def label(row):
    if row.method == "mvl_ls":
        return "MVL-LS (all views)" + ("" if row.u_c == 0 else f", semi-sup. u_c={row.u_c}")
    if row.method == "mvl_ls_cv":
        return f"MVL-LS (all views), semi-sup. u_c={row.u_c}, selected gammas"
    if row.method == "mvl_ls_cvgraph":
        return f"MVL-LS (all views), semi-sup. u_c={row.u_c}, selected graph and gammas"
    if row.method in ("mvl_svm", "mvl_binsvm"):
        name = {"mvl_svm": "MVL-SVM", "mvl_binsvm": "MVL-binSVM"}[row.method]
        return f"{name} (all views)" + ("" if row.u_c == 0 else f", semi-sup. u_c={row.u_c}")
    if row.method == "svc_sum":
        return "SVC on average kernel (sklearn)"
    if row.method.startswith("view_"):
        return "single view: " + row.method[5:] + ("" if row.u_c == 0 else f", semi-sup. u_c={row.u_c}")
    return row.method

main = res[~res.method.str.contains("_ablation") & ~res.method.str.startswith("mvl_ls_optc")
           & ~res.method.str.match(r"^(mvml_|perceptron_)")].copy()
main["label"] = main.apply(label, axis=1)
stats = main.groupby(["label", "l_c"])["accuracy"].agg(["mean", "std", "count"]).reset_index()
table = stats.pivot(index="label", columns="l_c", values="mean") * 100
table_std = stats.pivot(index="label", columns="l_c", values="std") * 100
fmt = table.round(2).astype(str) + " (" + table_std.round(2).astype(str) + ")"
fmt.columns = [f"l_c={c}" for c in fmt.columns]
fmt""")
code("""single = main[main.method.str.startswith("view_") & (main.u_c == 0)]  # supervised single views
single_mean = single.groupby(["method", "l_c"])["accuracy"].mean().unstack("method")
best_view = single_mean.idxmax(axis=1)
fig, ax = plt.subplots(figsize=(7.5, 4.8))
order = ["MVL-LS (all views)", "SVC on average kernel (sklearn)"]
order += sorted(l for l in table.index if l.startswith("MVL-LS") and l not in order)
for lab in order:
    s = stats[stats.label == lab]
    ax.errorbar(s.l_c, s["mean"] * 100, yerr=s["std"] * 100, marker="o", capsize=3, label=lab)
bv = [stats[(stats.label == "single view: " + best_view[lc][5:]) & (stats.l_c == lc)].iloc[0] for lc in best_view.index]
ax.errorbar([b.l_c for b in bv], [b["mean"] * 100 for b in bv], yerr=[b["std"] * 100 for b in bv],
            marker="s", ls="--", color="k", capsize=3, label="best single view (chosen on test, per l_c)")
ax.set_xscale("log")
ax.set_xticks(sorted(stats.l_c.unique()))
ax.set_xticklabels(sorted(stats.l_c.unique()))
ax.set_xlabel("labelled samples per class $l_c$")
ax.set_ylabel("test accuracy (%)")
ax.set_title(f"{dataset}: accuracy vs label-set size (mean and std over {res['split'].nunique()} splits)")
ax.grid(alpha=0.3)
ax.legend(fontsize=7, loc="lower right")
fig.tight_layout()
def save(fig, *paths):
    # write figures atomically (temporary file, then rename)
    for path in paths:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = path + ".tmp" + os.path.splitext(path)[1]
        fig.savefig(tmp, dpi=150)
        os.replace(tmp, path)


save(fig, fig_png, fig_pdf)
plt.show()""")
md("## Does multi-view beat the best single view at every $l_c$?\nThe best single view is chosen per $l_c$ by its mean *test* accuracy, which favours the single-view side. Paired per split.")
code("""mv = main[(main.method == "mvl_ls") & (main.u_c == 0)].set_index(["l_c", "split"])["accuracy"]
lines, always = [], True
for lc in sorted(best_view.index):
    bvm = best_view[lc]
    sv = single[(single.method == bvm) & (single.l_c == lc)].set_index("split")["accuracy"]
    m = mv.loc[lc]
    diff = (m - sv.reindex(m.index)) * 100
    beats = m.mean() > sv.mean()
    always &= bool(beats)
    lines.append(f"l_c={lc:>2}: MVL-LS {m.mean()*100:6.2f}% vs best single view {bvm[5:]} {sv.mean()*100:6.2f}% "
                 f"-> {'multi-view better' if beats else 'multi-view NOT better'} by {diff.mean():+.2f} points "
                 f"(wins on {(diff > 0).sum()}/{len(diff)} splits)")
print("\\n".join(lines))
print()
print("Answer: multi-view MVL-LS " + ("beats" if always else "does NOT beat") +
      " the best single view at every l_c.")""")
md("""## Does unlabelled data help at $l_c = 1$ and $l_c = 5$?

The cells of the paper's Table-2 design (between-view term $\\gamma_B$ and within-view term $\\gamma_W$ each
off or on) against cell "none" ($\\gamma_B = \\gamma_W = 0$, which is supervised MVL-LS: unlabelled points then
get zero coefficients, Corollary 19), paired per split, for $u_c$ = 5, 50 and "all" (every pool sample that
is neither labelled nor validation). Three scopes: the paper's graph (dense kernel weights, $p = 1$) with the
configured gammas; the paper's graph with each cell's gammas selected on the validation set; and the graph
(kNN size, Laplacian power $L^p$) selected on validation too. Cell "any" is the model selected over all cells
(it may be "none": then the selection found no use for the unlabelled data). The selection is made once per
split and $u_c$ at $l_c$ = `grid_labels_per_class` on 5 validation samples per class, never on test data.
Differences in points; p-values of the paired t-test and the Wilcoxon signed-rank test.""")
code("""from mvl.workflow import report as R

gain = R.unlabelled_gain(res)
if gain.empty:
    print("no ablation runs in this profile")
else:
    for line in R.unlabelled_verdicts(gain):
        print(line)
    display(gain.style.format({"p (paired t)": "{:.2g}", "p (Wilcoxon)": "{:.2g}", "difference (points)": "{:+.2f}"})
            .hide(axis="index"))""")
md("""### The Table-2 ablation with the paper's graph and with the selected graph
Mean (std) test accuracy in % over splits; each column is one ($l_c$, $u_c$).""")
code("""abl = R.ablation_table(res)
display(abl if not abl.empty else "no ablation runs in this profile")""")
md("""### Which graph the validation set chose, and what the grid cost
Counts over splits of the graph selected for `mvl_ls_cvgraph` (the selection over graphs $\\times$ $\\gamma_A$
$\\times$ $\\gamma_B$ $\\times$ $\\gamma_W$; the paper's dense graph is one of the candidates), and the size and time of the grid
(one evaluation of every grid point per split and $u_c$, factorisations reused across the grid).""")
code("""sg = R.selected_graphs(res)
display(sg if not sg.empty else "no graph selection in this profile")
gc = R.grid_cost(res)
display(gc if not gc.empty else "no validation grid in this profile")""")
md("## Selected regularisation (validation set, 5 per class)\nWhich (gamma_A, gamma_B, gamma_W) the validation grid chose, counted over splits. As in the paper (Section 7.3) the selection is made once per split and u_c at `selected_at_l_c` and kept for every l_c.")
code("""cv = res[res.method == "mvl_ls_cv"]
if cv.empty:
    print("no validation-selected runs in this profile")
else:
    one = cv.drop_duplicates(["u_c", "split", "selected_at_l_c"]) if "selected_at_l_c" in cv else cv
    keys = ["u_c"] + (["selected_at_l_c"] if "selected_at_l_c" in cv else ["l_c"])
    display(one.groupby(keys + ["gamma_A", "gamma_B", "gamma_W"]).agg(
        n_splits=("split", "nunique"), mean_val_accuracy=("val_accuracy", "mean")).reset_index())""")
md("## Ablation of the between-view ($\\\\gamma_B$) and within-view ($\\\\gamma_W$) terms with the configured gammas, all three solvers (paper Table 2 design, paper graph)")
code("""ab = res[res.method.str.endswith("_ablation")].copy()
if ab.empty:
    print("no ablation runs in this profile")
else:
    ab["method"] = ab.method.str.replace("_ablation", "").map(
        {"mvl_ls": "MVL-LS", "mvl_svm": "MVL-SVM", "mvl_binsvm": "MVL-binSVM"})
    ab["gamma_B"] = ab.gamma_B.map(lambda v: "0" if v == 0 else f"{v:g}")
    ab["gamma_W"] = ab.gamma_W.map(lambda v: "0" if v == 0 else f"{v:g}")
    t = ab.groupby(["method", "gamma_B", "gamma_W", "l_c", "u_c"])["accuracy"].mean().unstack(["l_c", "u_c"]) * 100
    display(t.round(2))""")
md("## Optimising the combination operator (MVL-LS-optC, Section 6)\nUniform c = 1/m vs c learned on the sphere ||c|| = 1 by alternating minimisation, 20 seeded random restarts, the restart with the best validation accuracy kept (validation: 5 per class from the training pool), supervised, fixed gammas. Mean (std) of test accuracy in %, in the style of the paper's Tables 7-9.")
code("""optc = res[res.method.str.startswith("mvl_ls_optc")].copy()
if optc.empty:
    print("no optC runs in this profile")
else:
    optc["iterations"] = optc.method.str.replace("mvl_ls_optc", "").astype(int)
    uni = res[(res.method == "mvl_ls") & (res.u_c == 0) & res.l_c.isin(optc.l_c.unique())]
    rows = {"MVL-LS (uniform c)": uni.groupby("l_c")["accuracy"].agg(["mean", "std"])}
    for it, g in optc.groupby("iterations"):
        rows[f"MVL-LS-optC ({it} iterations)"] = g.groupby("l_c")["accuracy"].agg(["mean", "std"])
    tab = pd.DataFrame({k: (v["mean"] * 100).round(2).astype(str) + " (" + (v["std"] * 100).round(2).astype(str) + ")"
                        for k, v in rows.items()}).T
    tab.columns = [f"l_c={c}" for c in tab.columns]
    display(tab)
    best_it = optc.iterations.max()
    d = (optc[optc.iterations == best_it].set_index(["l_c", "split"])["accuracy"]
         - uni.set_index(["l_c", "split"])["accuracy"]) * 100
    for lc, g in d.groupby(level=0):
        print(f"l_c={lc:>2}: optC ({best_it} it.) - uniform = {g.mean():+.2f} points (better on {(g > 0).sum()}/{len(g)} splits)")""")
md("### Learned view weights $c_i^2$\nThe paper reads view importance from $c_i^2$ (they sum to $\\alpha^2 = 1$). Mean and std over splits, for the largest iteration count.")
code("""views = res.views.dropna().iloc[0].split("+") if not res.empty else []
fig, ax = plt.subplots(figsize=(7.5, 4))
if optc.empty:
    ax.text(0.5, 0.5, "no optC runs in this profile", ha="center")
else:
    g = optc[optc.iterations == optc.iterations.max()]
    lcs = sorted(g.l_c.unique())
    width = 0.8 / len(lcs)
    for k, lc in enumerate(lcs):
        c2 = np.array([np.square(json.loads(v)) for v in g[g.l_c == lc].optc_c])
        ax.bar(np.arange(len(views)) + k * width, c2.mean(0), width, yerr=c2.std(0), capsize=2, label=f"l_c={lc}")
    ax.set_xticks(np.arange(len(views)) + 0.4 - width / 2)
    ax.set_xticklabels(views)
    ax.set_ylabel("$c_i^2$")
    ax.set_title(f"{dataset}: learned view weights (optC, {optc.iterations.max()} iterations)")
    ax.legend(fontsize=7)
fig.tight_layout()
save(fig, fig_optc_weights, os.path.splitext(fig_optc_weights)[0] + ".pdf")
plt.show()""")
md("### Objective (84) vs iteration for every restart\nOne split, one label-set size; the objective never increases (checked in the tests).")
code("""fig, ax = plt.subplots(figsize=(7.5, 4))
if optc.empty:
    ax.text(0.5, 0.5, "no optC runs in this profile", ha="center")
else:
    g = optc[optc.iterations == optc.iterations.max()]
    lcs = sorted(g.l_c.unique())
    lc = lcs[len(lcs) // 2]
    row = g[g.l_c == lc].sort_values("split").iloc[0]
    h = np.array(json.loads(row.optc_objective), dtype=float)
    for k, hr in enumerate(h):
        ax.plot(np.arange(1, len(hr) + 1), hr, lw=1.5 if k == row.optc_best_restart else 0.7,
                color="C3" if k == row.optc_best_restart else "0.5")
    ax.set_yscale("log")
    ax.set_xlabel("iteration")
    ax.set_ylabel("objective (84)")
    ax.set_title(f"{dataset}: {len(h)} restarts, l_c={lc}, split {row.split} (red: kept by validation)")
fig.tight_layout()
save(fig, fig_optc_objective, os.path.splitext(fig_optc_objective)[0] + ".pdf")
plt.show()""")
md("## Related systems: MVML and the multi-view perceptrons\nSupervised runs (labelled data only): MVML (Huusari et al. 2017; learned block metric full / sparse, or identity; Nystrom approximation at the given % of the training points), the kernel matrix and orthogonal multi-view perceptrons (Fornoni 2009, averaged), beside MVL-LS, MVL-SVM and the sum-kernel SVC. Mean (std) test accuracy in % and mean fit time in seconds over splits; the heat map is MVML's learned metric (mean Frobenius norm of each view-pair block of A over the one-vs-all problems) at the largest $l_c$ of the first split.")
code("""cmp_rows = res[(res.u_c == 0) & (res.method.str.match(r"^(mvml_|perceptron_)"))]
fig = plt.figure(figsize=(15, 4.5))
if cmp_rows.empty:
    print("no MVML / perceptron runs in this profile")
    fig.text(0.5, 0.5, "no MVML / perceptron runs in this profile", ha="center")
else:
    lcs = sorted(cmp_rows.l_c.unique())
    comp = res[(res.u_c == 0) & res.l_c.isin(lcs) & (res.method.str.match(r"^(mvml_|perceptron_)")
                                                     | res.method.isin(["mvl_ls", "mvl_svm", "mvl_binsvm", "svc_sum"]))]
    g = comp.groupby(["method", "l_c"])
    acc = (g["accuracy"].mean() * 100).unstack("l_c")
    acc_sd = (g["accuracy"].std() * 100).unstack("l_c")
    secs = g["fit_seconds"].mean().unstack("l_c")
    table = acc.round(2).astype(str) + " (" + acc_sd.round(2).astype(str) + ")"
    table.columns = [f"acc l_c={c}" for c in table.columns]
    timing = secs.round(3)
    timing.columns = [f"s l_c={c}" for c in timing.columns]
    display(pd.concat([table, timing], axis=1))
    ax1, ax2, ax3 = fig.add_subplot(1, 3, 1), fig.add_subplot(1, 3, 2), fig.add_subplot(1, 3, 3)
    for k, (method, row) in enumerate(acc.iterrows()):
        style = "-" if method.startswith(("mvl_", "svc")) else "--"
        ax1.errorbar(row.index, row.values, yerr=acc_sd.loc[method].values, ls=style, marker="o", ms=3,
                     capsize=2, label=method, color=f"C{k % 10}")
        ax2.plot(secs.columns, secs.loc[method].values, ls=style, marker="o", ms=3, color=f"C{k % 10}")
    ax1.set_xscale("log"); ax1.set_xlabel("labelled per class $l_c$"); ax1.set_ylabel("test accuracy (%)")
    ax1.legend(fontsize=6, ncol=2); ax1.set_title(f"{dataset}: accuracy")
    ax2.set_xscale("log"); ax2.set_yscale("log"); ax2.set_xlabel("labelled per class $l_c$")
    ax2.set_ylabel("fit time (s)"); ax2.set_title("fit time")
    heat = cmp_rows[cmp_rows.get("mvml_block_norms", pd.Series(dtype=object)).notna()] if "mvml_block_norms" in cmp_rows else cmp_rows.iloc[:0]
    if len(heat):
        h = heat[heat.l_c == heat.l_c.max()].sort_values(["split", "method"]).iloc[0]
        Bn = np.array(json.loads(h.mvml_block_norms))
        im = ax3.imshow(Bn, cmap="viridis")
        views = h.views.split("+")
        ax3.set_xticks(range(len(views)), views, rotation=45); ax3.set_yticks(range(len(views)), views)
        fig.colorbar(im, ax=ax3, fraction=0.046)
        ax3.set_title(f"MVML metric blocks ({h.method}, l_c={h.l_c})")
    else:
        ax3.text(0.5, 0.5, "no learned MVML metric", ha="center"); ax3.axis("off")
fig.tight_layout()
save(fig, fig_comparison, os.path.splitext(fig_comparison)[0] + ".pdf")
plt.show()""")
md("## Published numbers (JMLR 2016, Tables 2-11)\nEvery published row for this data set beside our mean (std) over splits, in %, and the difference (ours - published, points). Rows of other authors' methods, or of settings this run does not include, have empty 'ours' columns; cells that the paper's text conversion left illegible have an empty published mean (see `mvl/data/published`). The paper reports nothing on UCI Multiple Features.")
code("""from mvl.compare import PAPER_DATASETS, published_comparison

if source in PAPER_DATASETS:
    cmp = published_comparison(res, source)
    shown = cmp.drop(columns=["note"]).round(2)
    with pd.option_context("display.max_rows", 500, "display.max_columns", 20):
        display(shown)
    matched = cmp.dropna(subset=["published_mean", "ours_mean"])
    print(f"{len(matched)} published numbers with a counterpart here; "
          f"mean |difference| {matched.difference.abs().mean():.2f} points" if len(matched) else
          "no published number has a counterpart in this run")
else:
    print(f"no published numbers for {dataset} (source {source})")""")
nb["cells"] = cells
nb["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
nb["metadata"]["language_info"] = {"name": "python"}
import pathlib
nbf.write(nb, str(pathlib.Path(__file__).resolve().parents[1] / "report.ipynb"))
