"""
What unlabelled data add
========================

Accuracy against the number of labelled samples per class, with and without 50 unlabelled samples per class,
on the six views of the embedded digits. The unlabelled samples enter through the graph Laplacian of each view
(``gamma_W``) and, optionally, the between-view term (``gamma_B``); with the default ``loss="auto"`` and at most 5
labelled samples per class, through the Poisson-type term on one graph of all the views (the guide's "Few labels").
"""

import matplotlib.pyplot as plt
import numpy as np

from mvl import MVLLeastSquares
from mvl.data.embedded import load_mfeat

ds = load_mfeat()
X = np.hstack(ds.views)
sizes = [V.shape[1] for V in ds.views]
rng = np.random.default_rng(0)
order = rng.permutation(len(ds.y))
test = order[1000:]

# %%
# Nested draws: the labelled set grows, the unlabelled set stays the same
# -----------------------------------------------------------------------
per_class = {k: order[:1000][ds.y[order[:1000]] == k] for k in range(10)}
labels_per_class = [1, 2, 5, 10]
with_unlabelled, labelled_only = [], []
for l_c in labels_per_class:
    lab = np.concatenate([per_class[k][:l_c] for k in range(10)])
    unl = np.concatenate([per_class[k][20:70] for k in range(10)])
    train = np.concatenate([lab, unl])
    y = np.concatenate([ds.y[lab], np.full(len(unl), -1)])
    semi = MVLLeastSquares(views=sizes).fit(X[train], y)
    sup = MVLLeastSquares(views=sizes).fit(X[lab], ds.y[lab])
    with_unlabelled.append(semi.score(X[test], ds.y[test]))
    labelled_only.append(sup.score(X[test], ds.y[test]))
    print(f"l_c = {l_c:2d}: labelled only {labelled_only[-1]:.3f}, with 500 unlabelled {with_unlabelled[-1]:.3f}")

fig, ax = plt.subplots(figsize=(5, 3.2))
ax.plot(labels_per_class, with_unlabelled, "o-", label="with 50 unlabelled per class")
ax.plot(labels_per_class, labelled_only, "s--", label="labelled samples only")
ax.set_xscale("log")
ax.set_xticks(labels_per_class, [str(v) for v in labels_per_class])
ax.set_xlabel("labelled samples per class")
ax.set_ylabel("test accuracy")
ax.legend()
fig.tight_layout()
