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
# # Semi-supervised multi-view learning at scale
#
# MVL-LS (Minh, Bazzani & Murino, JMLR 2016, Theorem 10) by its solvers on seeded multi-view manifold data
# (`mvl.data.synthetic`: classes on intertwined curves, 3 noisy nonlinear views, a few labelled points per class,
# every other training point unlabelled, 2,000 held-out test points), against n. The methods of this run are
# listed under "Every fit"; among them:
#
# - **auto**: a first fit, the package's defaults for the solver, gamma_A and the loss (what it chose, and the
#   measured graph regime, are in the table "What auto chose");
# - **structured**: the exact O(m n^3) solver, while its memory fits;
# - **cg**: the same problem by conjugate gradients in the K inner product with a Nyström preconditioner, no
#   n x n array (`mvl.solvers.system`); its relative residual of the system (68) is in the table;
# - **nystrom (M)**: each view's function in the span of M training points;
# - **vecchia_direct**: the graph regime's solver, the kernels replaced by Vecchia's sparse approximation, one sparse
#   factorisation, held-out points by kriging (`mvl.solvers.vecchia_direct`);
# - baselines: MVL-LS on the labelled points alone, scikit-learn's `LabelSpreading`, Laplace and Poisson learning
#   (graphlearning; kNN graphs of the concatenated standardised views, transductive: fitted on the test points too),
#   a supervised `Nystroem` + `RidgeClassifier` on the concatenated views.
#
# One Snakemake job per (method, n), one at a time: the time is the fit and prediction, the memory the job's peak
# resident set size. The hyperparameters are fixed for every n (the settings below), never chosen on test points.
# This notebook is `notebooks/scale_report.py`, executed by papermill from the rule `scale_report`.

# %% tags=["parameters"]
results_csv = "results/scale/results.csv"
fig_png = "results/scale/figures/scale.png"
fig_pdf = "results/scale/figures/scale.pdf"
settings = "{}"  # the config section `scale` as JSON (mvl.workflow.scale.ScaleSettings)

# %% tags=["plumbing"]
import json

import pandas as pd
from IPython.display import Image, Markdown, display

from mvl.workflow import scale as S
from mvl.workflow.figures import save_figure

pd.set_option("display.max_colwidth", None)
df = pd.read_csv(results_csv)
cfg = json.loads(settings)

# %% [markdown]
# ## Settings

# %%
display(S.settings_table(cfg))

# %% [markdown]
# ## Time, memory and accuracy against n

# %%
save_figure(S.scale_figure(df), fig_png, fig_pdf, dpi=120)
display(Image(filename=fig_png))

# %% [markdown]
# ## Every fit

# %%
table = df.assign(method=[S.label(m, M) for m, M in zip(df["method"], df["n_components"], strict=True)],
                  rss_GB=(df["rss"] / 1e9).round(2), seconds=df["seconds"].round(1),
                  accuracy=(100 * df["accuracy"]).round(1))
table = table.rename(columns={"n_neighbors": "k (kNN)"})
table["what"] = [S.REGISTRY[m][1] if m in S.REGISTRY else m for m in df["method"]]  # the one method registry
cols = ["method", "what", "n", "k (kNN)", "solver", "seconds", "rss_GB", "accuracy", "n_iter", "residual"]
cols = [c for c in cols if c in table.columns]  # results written before the graph rule have no k
display(table[cols].set_index(["method", "n"]))

# %% [markdown]
# ## What auto chose
#
# `solver="auto"` measures the graph regime beyond the structured solver's size (`regime_`: the fraction of the
# kernels' trace a Nyström basis misses times the graph term's weight over gamma_A; the graph regime from 1 on) and
# takes "vecchia_direct" there, with gamma_A from the kernel-share rule (`mvl.solvers.vecchia_direct.share_gamma_A`)
# where the graph term's limit carries the labels (its margin and class balance checked), 1e-5 otherwise.

# %%
if "solver" in df.columns and (df["method"] == "auto").any():
    chose = df[df["method"] == "auto"][["n", "solver", "regime", "gamma_A", "accuracy", "seconds"]].copy()
    chose["accuracy"] = (100 * chose["accuracy"]).round(1)
    chose["seconds"] = chose["seconds"].round(1)
    display(chose.set_index("n"))
else:
    display(Markdown("No `auto` fit in this run."))

# %% [markdown]
# ## Growth exponents (time ~ n^k, memory ~ n^k)

# %%
display(S.growth_exponents(df).round(2).set_index(["method", "n_components"]))

# %% [markdown]
# ## What the numbers say

# %%
lines = []
for n, g in df.groupby("n"):
    by = {S.label(m, M): r for (m, M), r in zip(zip(g["method"], g["n_components"], strict=True),
                                                g.to_dict("records"), strict=True)}
    best = max(by, key=lambda k: by[k]["accuracy"])
    parts = [f"**n = {n}**: best {best} ({100 * by[best]['accuracy']:.1f} %)"]
    if "labelonly" in by:
        parts.append(f"labelled only {100 * by['labelonly']['accuracy']:.1f} %")
    for peer, name in (("labelspreading", "LabelSpreading"), ("laplace", "Laplace learning"),
                       ("poisson", "Poisson learning")):
        if peer in by and by[peer]["accuracy"] == by[peer]["accuracy"]:  # NaN: the peer was unavailable
            parts.append(f"{name} {100 * by[peer]['accuracy']:.1f} %")
    cg = next((r for k, r in by.items() if k.startswith("cg")), None)
    if cg is not None and not bool(cg["converged"]):
        parts.append(f"cg did not reach tol (residual {cg['residual']:.1e} after {int(cg['n_iter'])} iterations)")
    lines.append("- " + "; ".join(parts))
display(Markdown("\n".join(lines)))
