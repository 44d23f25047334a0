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
# # Incomplete multi-view data: accuracy against the missing fraction q
#
# Real multi-view data are rarely complete. Here a fraction q of the views is removed from the training
# **and** the test samples (every sample keeps at least one view), and three ways of learning from what is left are
# compared (`mvl.workflow.incomplete`):
#
# - **MVL-LS, incomplete views**: `MVLLeastSquares` on the views each sample has, with the package defaults but
#   the configured gamma_B (the settings below give it beside the package default; with views missing, the
#   between-view term carries the labels across views) (a
#   missing view is a row of NaN across that view's columns; each view standardised on the training samples that
#   have it by a `StandardScaler` in a `Pipeline`, which passes the NaN rows through). Each view's function lives
#   on the samples that have that view, the data term combines the views present at a labelled sample, the
#   between-view term couples only views present together, and a test point is predicted from the views it has
#   (`mvl.solvers.incomplete`).
# - **mean imputation + MVL-LS**: scikit-learn's `SimpleImputer` (feature means over the training samples),
#   then the same pipeline (the same gamma_B) on the filled-in data.
# - **best single view**: each view alone (MVL-LS with one view), fitted on the training samples that have it; a
#   test sample lacking that view gets the most frequent class of the labelled samples (every class has the same
#   number of labels, so that is the first class: chance on those points). The view shown is the best one per
#   (pattern, q), **chosen on its mean test accuracy** (as the main report's "best single view"): an optimistic
#   baseline.
# - **complete data**: the same MVL-LS with nothing removed (the reference line; it equals the q = 0 points).
#
# Patterns (the settings below say which ran): **random** = round(q n m) of the n m (sample, view) entries missing,
# uniformly; **class** = round(q C m) of the C m (class, view) cells missing, a missing cell removing that view
# from *every* sample of the class, training and test (a structured, class-dependent pattern: missing not at
# random); **block** = the same on random blocks of samples (a sensor down for a batch). Each split draws per class
# l_c labelled, u_c unlabelled and a test set; every random choice comes from the configured seeds (the split from
# the seed, each mask from (seed, pattern, q)).

# %% tags=["parameters"]
results_csv = "results/incomplete/results.csv"
summary_csv = "results/incomplete/summary.csv"
fig_png = "results/incomplete/figures/accuracy_vs_q.png"
fig_pdf = "results/incomplete/figures/accuracy_vs_q.pdf"
settings = "{}"  # the config section `incomplete` as JSON (mvl.workflow.incomplete.IncompleteSettings)

# %% tags=["plumbing"]
import json

import pandas as pd
from IPython.display import Image, Markdown, display

from mvl.workflow import incomplete as I
from mvl.workflow.figures import save_figure

pd.set_option("display.max_colwidth", None)
results = pd.read_csv(results_csv, keep_default_na=False, na_values=[""])
summary = pd.read_csv(summary_csv, keep_default_na=False, na_values=[""])
summary["view"] = summary["view"].fillna("")
cfg = json.loads(settings)

# %% [markdown]
# ## Settings

# %%
rows = [("data sets", ", ".join(cfg.get("datasets", []))),
        ("missing fractions q", ", ".join(f"{q:g}" for q in cfg.get("q", []))),
        ("patterns", ", ".join(cfg.get("patterns", []))
         + (f" ({cfg.get('n_blocks')} blocks)" if "block" in cfg.get("patterns", []) else "")),
        ("split seeds", ", ".join(str(s) for s in cfg.get("seeds", []))),
        ("per class", f"l_c = {cfg.get('labels_per_class')} labelled, u_c = {cfg.get('unlabelled_per_class')} "
                      f"unlabelled, {cfg.get('test_per_class')} test"),
        ("MVL-LS", I.settings_text(cfg.get("gamma_B", 0.0)))]
display(pd.DataFrame(rows, columns=["setting", "value"]).set_index("setting"))

# %% [markdown]
# ## Accuracy against q
#
# One panel per data set and pattern; error bars and the grey band: standard deviation over the seeds.

# %%
save_figure(I.accuracy_figure(summary), fig_png, fig_pdf, dpi=120)
display(Image(filename=fig_png))

# %% [markdown]
# ## The numbers (accuracy %, mean ± std over seeds)

# %%
for d in dict.fromkeys(summary["dataset"]):
    display(Markdown(f"**{d}**"))
    display(I.accuracy_table(summary, d))

# %% [markdown]
# ## What the numbers say
#
# Every verdict follows the rule all the reports use: a paired t-test over the splits (seeds), at the 0.05 level
# after Holm's correction over the comparisons below; with fewer than 6 splits the answer is "too few splits to
# tell". Per data set, pattern and q > 0: MVL-LS on the incomplete views against mean imputation and against the
# best single view (chosen on its test accuracy, so an optimistic baseline).

# %%
found = I.verdicts(results)
display(Markdown("\n".join(f"- {v.sentence()}" for v in found) if found else "Nothing to compare in this run."))

# %% [markdown]
# ## Against the complete data

# %%
lines = []
comp = summary[summary["method"] == "complete"]
for r in comp.itertuples():
    inc = summary[(summary["dataset"] == r.dataset) & (summary["pattern"] == "random")
                  & (summary["method"] == "mvl_ls_incomplete") & (summary["q"] == 0.4)]
    if len(inc):
        gap = 100 * (r.mean - inc["mean"].iloc[0])
        lines.append(f"- {r.dataset}: complete data {100 * r.mean:.1f} %; at q = 0.4 (random) MVL-LS on incomplete "
                     f"views is {abs(gap):.1f} points {'below' if gap >= 0 else 'above'} it (means over the seeds)")
display(Markdown("\n".join(lines) if lines else "No data set ran both the complete data and q = 0.4."))

# %% [markdown]
# ## Missing fractions realised, and the fits that departed from the protocol
#
# The masks cover the training and test samples together; the fractions are those realised on each part (mean
# over seeds). Mean imputation puts every sample lacking a view on one point; where more than ~71 % of the training
# samples lack a view, over half of the pairs are at distance 0 and the estimator refuses the median bandwidth:
# such a fit is redone with the mean distance as the bandwidth of every view (counted below as "bandwidth mean").

# %%
inc = results[results["pattern"] != "none"]
real = inc.groupby(["dataset", "pattern", "q"])[["missing_train", "missing_test"]].mean().round(3)
notes = results["note"].astype("string").fillna("")  # an all-empty column reads as float
real["fits with bandwidth mean"] = (inc.assign(n=notes.eq("bandwidth mean"))
                                    .groupby(["dataset", "pattern", "q"])["n"].sum())
display(real)

# %% [markdown]
# ## Reading the structured pattern
#
# With views absent per class, *which* views a sample has tells which classes it can belong to (missing not at
# random): a test point is predicted from the views it has, whose functions were learnt on the classes that have
# them, and mean imputation puts a class's missing views on one shared point. Both methods can therefore exceed the
# complete-data accuracy there; the missing-at-random panel is the test of learning from fewer views.
