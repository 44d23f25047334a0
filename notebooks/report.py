# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#       format_version: '1.3'
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # Single-view vs multi-view learning with MVL-LS
#
# Report of the `mvl` workflow for one data set: MVL-LS (Minh, Bazzani & Murino, JMLR 2016, Algorithm 1 /
# Theorem 10) on all views, each view alone, a scikit-learn SVC on the average of the view kernels,
# semi-supervised MVL-LS with fixed and validation-selected regularisation, the hinge-loss variants MVL-SVM
# (simplex-cone multi-class SVM, Theorem 13; its dual solved by ADMM, see mvl.solvers.svm_dual) and MVL-binSVM
# (one-vs-all, by the SMO of Algorithm 3), MVL-LS-optC (Section 6) and the related systems MVML and the
# multi-view perceptrons.
#
# Accuracies are test accuracies in %, as mean (standard deviation) over the splits, two decimals, as in the
# paper's tables. Every table and figure comes from `mvl.workflow.report` (unit-tested); this notebook is
# `notebooks/report.py` (jupytext), executed by papermill from the Snakemake rule `report`, which
# overwrites the parameters cell below. The HTML page (`mvl.workflow.index.export_html`) shows the text and the
# results; the code is kept here.

# %% tags=["parameters"]
# Parameters (overwritten by papermill -p ...)
dataset = "mfeat"
source = "mfeat"
results_csv = "results/mfeat/results.csv"
summary_csv = "results/mfeat/summary.csv"
fig_png = "results/mfeat/figures/accuracy_vs_labels.png"
fig_pdf = "results/mfeat/figures/accuracy_vs_labels.pdf"
fig_optc_weights = "results/mfeat/figures/optc_weights.png"
fig_optc_objective = "results/mfeat/figures/optc_objective.png"
fig_comparison = "results/mfeat/figures/comparison.png"
fig_comparison_metric = "results/mfeat/figures/comparison_metric.png"
settings = "[]"  # the run's settings as JSON [[setting, value], ...] (mvl.workflow.settings.ReportSettings)

# %% tags=["plumbing"]
import json
import os

import pandas as pd
from IPython.display import Image, Markdown, display

from mvl.workflow import report as R
from mvl.workflow.compare import published_comparison, published_name
from mvl.workflow.figures import save_figure


def show_table(table, caption=None, empty="nothing of this kind in this profile"):
    display(R.styled(table, caption) if not table.empty else Markdown(f"*{empty}*"))


def show_figure(fig, png, pdf=None):
    save_figure(fig, png, pdf or os.path.splitext(png)[0] + ".pdf")
    display(Image(filename=png, width=int(fig.get_figwidth() * 100)))  # saved at 150 dpi, shown at 100


def say(*lines):
    display(Markdown("\n".join(line.replace("_", r"\_") for line in lines)))


res = pd.read_csv(results_csv)
verdicts = R.report_verdicts(res)  # every comparison the report concludes on, judged together by one rule

# %% [markdown]
# ## The run
# The data set, the kernel, the fixed gammas and the graph of every scope: the configured graph of the fixed-gamma
# methods and of the gammas selected on the paper's graph, the graphs the validation grid tries, and the graphs it
# selected.

# %%
show_table(R.settings_table(dataset=dataset, source=source, results=res, rows=json.loads(settings)))

# %% [markdown]
# ## Accuracy vs number of labelled samples per class (l_c)
# Every method of the main sweep; u_c is the number of unlabelled samples per class (u_c = 0: supervised).

# %%
show_table(R.accuracy_table(res))

# %%
show_figure(R.accuracy_figure(res, dataset), fig_png, fig_pdf)

# %% [markdown]
# *Figure: test accuracy against l_c (log axis), mean and standard deviation over splits; points of one
# l_c are slightly spread sideways so that their error bars stay apart.* Left, supervised: how far the
# multi-view methods lie above the best single view (black, chosen on the test set, which favours it) and
# whether the squared loss (MVL-LS) and the hinge losses (MVL-SVM, MVL-binSVM) differ. Right, one panel per
# u_c: whether any semi-supervised variant rises above supervised MVL-LS (grey dashed); the selected
# variants choose their gammas (and graph) on a validation set.

# %% [markdown]
# ## How the verdicts are reached
# Every verdict below follows one rule (`mvl.workflow.verdict`): a paired t-test over the splits, at the 0.05
# level after Holm's correction for the number of comparisons this report concludes on; with fewer than 6 splits
# the answer is "too few splits to tell", whatever the difference.

# %%
say(f"This report concludes on {sum(len(v) for v in verdicts.values())} comparisons.")

# %% [markdown]
# ## Does multi-view beat the best single view at every l_c?
# The best single view is chosen per l_c by its mean *test* accuracy, which favours the single-view side.
# Paired per split; difference in points (MVL-LS minus the view).

# %%
mv = R.multiview_vs_best_view(res)
show_table(mv)
say(*(f"- {line}" for line in R.multiview_verdict(verdicts)))

# %% [markdown]
# ## Does unlabelled data help at l_c = 1 and l_c = 5?
#
# The cells of the paper's Table-2 design (between-view term γ_B and within-view term γ_W each
# off or on) against cell "none" (γ_B = γ_W = 0: unlabelled points then get zero coefficients, Corollary 19, so
# the fit is supervised; the main table's supervised row keeps the configured γ_B and γ_W on the labelled points,
# see below), paired per split, for the run's u_c (5 and 50; the paper profile adds
# "all", every pool sample that is neither labelled nor validation, shown as u_c = all). Three scopes: the
# paper's graph (dense kernel weights, p = 1) with the configured gammas; the paper's graph with each
# cell's gammas selected on the validation set; and the graph (kNN size, Laplacian power L^p) selected on
# validation too. Cell "any" is the model selected over all cells
# (it may be "none": then the selection found no use for the unlabelled data). The selection is made once per
# split and u_c at l_c = `grid_labels_per_class` on 5 validation samples per class, never on test data.
# Differences in points; p-values of the paired t-test and the Wilcoxon signed-rank test, each comparison alone
# (the verdicts use the corrected ones).

# %%
gain = R.unlabelled_gain(res)
say(*(f"- {line}" for line in R.unlabelled_verdicts(verdicts)))
show_table(gain, empty="no ablation runs in this profile")

# %% [markdown]
# ### The Table-2 ablation with the paper's graph and with the selected graph
# Mean (std) test accuracy in % over splits; each column is one (l_c, u_c).

# %%
show_table(R.ablation_table(res), empty="no ablation runs in this profile")
say(*R.supervised_vs_none(res))

# %% [markdown]
# ### Which graph the validation set chose, and what the grid cost
# Counts over splits of the graph selected for `mvl_ls_cvgraph` (the selection over graphs × γ_A
# × γ_B × γ_W; the paper's dense graph is one of the candidates), and the size and
# time of the grid (one evaluation of every grid point per split and u_c, factorisations reused across the
# grid).

# %%
show_table(R.selected_graphs(res), empty="no graph selection in this profile")
show_table(R.grid_cost(res), empty="no validation grid in this profile")

# %% [markdown]
# ## Selected regularisation (validation set, 5 per class)
# Which (γ_A, γ_B, γ_W) the validation grid chose for `mvl_ls_cv`, counted over splits,
# with the validation accuracy of the choice. As in the paper (Section 7.3) the selection is made once per
# split and u_c at `selected at l_c` and kept for every l_c.

# %%
show_table(R.selected_gammas(res), empty="no validation-selected runs in this profile")
say(*(f"- {line}" for line in R.validation_ties(res)))

# %% [markdown]
# ## Ablation of the between-view (γ_B) and within-view (γ_W) terms with the configured gammas
# All three solvers, the paper's Table-2 design on the paper's graph: γ_B and γ_W each off (0)
# or at its configured value. Mean (std) test accuracy in % over splits.

# %%
show_table(R.configured_ablation_table(res), empty="no ablation runs in this profile")

# %% [markdown]
# ## Optimising the combination operator (MVL-LS-optC, Section 6)
# Uniform c = 1/m vs c learned on the sphere ‖c‖ = α by alternating minimisation, seeded random
# restarts, the restart with the best validation accuracy kept (validation: 5 per class from the training
# pool), supervised, fixed gammas. Mean (std) test accuracy in %, in the style of the paper's Tables 7-9; then
# optC (largest iteration count) minus uniform, paired per split.

# %%
show_table(R.optc_table(res), empty="no optC runs in this profile")
show_table(R.optc_gain(res), empty="no optC runs in this profile")
say(*(f"- {line}" for line in R.optc_verdicts(verdicts)))

# %%
show_figure(R.optc_weights_figure(res, dataset), fig_optc_weights)

# %% [markdown]
# *Figure: learned view weights c_i² (they sum to α²), mean and standard deviation over splits, one
# bar per l_c; the dotted line is equal weighting.* The paper reads view importance from c_i²: a view far
# above the line carries the combination, one near zero is switched off. Long error bars mean the splits
# disagree, i.e. the weights are not identified by so few labels.

# %%
show_figure(R.optc_objective_figure(res, dataset), fig_optc_objective)

# %% [markdown]
# *Figure: objective (84) against the iteration on one split and one l_c: the restart kept by validation
# (red) and the range and median of the other restarts (grey).* The objective never increases along a
# restart (checked in the tests); restarts end at different levels, and the kept one need not have the
# lowest objective, since the choice is made on validation accuracy.

# %% [markdown]
# ## Related systems: MVML and the multi-view perceptrons
# Supervised runs (labelled data only): MVML (Huusari et al. 2017; learned block metric full / sparse, or
# identity; Nystrom approximation at the given % of the training points), the kernel matrix and orthogonal
# multi-view perceptrons (Fornoni 2009, averaged), beside MVL-LS, MVL-SVM, MVL-binSVM and the sum-kernel SVC.
# Mean (std) test accuracy in % and mean fit time in seconds over splits.

# %%
show_table(R.comparison_table(res), empty="no MVML / perceptron runs in this profile")
say(*(f"- {line}" for line in R.identical_methods(res)))

# %%
show_figure(R.comparison_figure(res, dataset), fig_comparison)

# %% [markdown]
# *Figure: one row per family, test accuracy (left) and mean fit time (right, log scale) against l_c; the
# same colour is the same method in both panels of a row, and supervised MVL-LS (grey dashed) is repeated in
# every row as the common reference.* Read along a row how the Nystrom size or the metric trades accuracy
# for time, and against the grey line whether a related system reaches MVL-LS at all.

# %%
show_figure(R.mvml_metric_figure(res, dataset), fig_comparison_metric)

# %% [markdown]
# *Figure: MVML's learned metric, the mean Frobenius norm of each view-pair block of A over the one-vs-all
# problems (largest l_c, first split).* Bright diagonal blocks are views MVML relies on by themselves;
# bright off-diagonal blocks are pairs of views it couples.

# %% [markdown]
# ## Published numbers (JMLR 2016, Tables 2-11)
# Every published row for this data set beside our mean (std) over splits, in %, and the difference (ours -
# published, points). Rows of other authors' methods, or of settings this run does not include, have empty
# "ours" cells; cells that the paper's text conversion left illegible have an empty published mean (see
# `mvl/data/published`). The paper reports nothing on UCI Multiple Features.

# %%
if published_name(source) is not None:
    cmp = published_comparison(res, source)
    show_table(R.published_table(cmp))
    say(R.published_summary(cmp))
else:
    say(f"No published numbers for {dataset} (source {source}).")
