"""
A first fit on the embedded digits
==================================

Fit MVL-LS on three views of the embedded UCI Multiple Features data (2000 handwritten digits), with half of the
training samples unlabelled, and compare it with each view alone.
"""

# %%
# Load the data and mark unlabelled samples with -1
# -------------------------------------------------
# ``load_mfeat`` returns the views as separate arrays; the estimators take one feature matrix whose column
# blocks are the views (``views=`` gives their sizes).
import matplotlib.pyplot as plt
import numpy as np

from mvl import MVLLeastSquares
from mvl.data.embedded import load_mfeat

ds = load_mfeat(["fou", "kar", "mor"])
X = np.hstack(ds.views)
sizes = [V.shape[1] for V in ds.views]
rng = np.random.default_rng(0)
idx = rng.permutation(len(ds.y))
train, test = idx[:400], idx[400:]
y = ds.y[train].copy()
y[rng.random(400) < 0.5] = -1  # -1: unlabelled
print(f"views {ds.view_names}, sizes {sizes}; {np.sum(y >= 0)} labelled and {np.sum(y < 0)} unlabelled samples")

# %%
# Fit and score
# -------------
# Unlabelled samples take part in the fit (through the graph and between-view terms) and are ignored by ``score``.
model = MVLLeastSquares(views=sizes).fit(X[train], y)
print(f"all views: accuracy {model.score(X[test], ds.y[test]):.3f} (solver {model.solver_!r})")

# %%
# Each view alone
# ---------------
scores = {}
for name, V in zip(ds.view_names, ds.views, strict=True):
    scores[name] = MVLLeastSquares().fit(V[train], y).score(V[test], ds.y[test])
scores["all three"] = model.score(X[test], ds.y[test])

fig, ax = plt.subplots(figsize=(5, 3))
ax.barh(list(scores), list(scores.values()), color=["C0"] * 3 + ["C3"])
ax.set_xlabel("test accuracy")
ax.set_xlim(0.5, 1)
ax.set_title("MVL-LS, 200 labelled + 200 unlabelled digits")
fig.tight_layout()
