"""
Learned view weights (MVL-LS-optC)
==================================

MVL-LS combines the views' functions with a vector c (uniform by default). ``MVLLeastSquaresOptC`` learns c on
the unit sphere (Section 6 of the paper) by alternating minimisation with random restarts; c_i^2 is the weight of
view i. A noise view added to the digits should get a small weight.
"""

import matplotlib.pyplot as plt
import numpy as np

from mvl import MVLLeastSquares, MVLLeastSquaresOptC
from mvl.data.embedded import load_mfeat

ds = load_mfeat(["fou", "kar", "mor"])
rng = np.random.default_rng(0)
noise = rng.standard_normal((len(ds.y), 20))  # a fourth view that carries no information
views = [*ds.views, noise]
names = [*ds.view_names, "noise"]
X, sizes = np.hstack(views), [V.shape[1] for V in views]
idx = rng.permutation(len(ds.y))
train, test = idx[:300], idx[300:]

optc = MVLLeastSquaresOptC(views=sizes, n_restarts=5, n_iter=15, random_state=0).fit(X[train], ds.y[train])
uniform = MVLLeastSquares(views=sizes).fit(X[train], ds.y[train])
print(f"learned c = {np.round(optc.c_, 3)}")
print(f"accuracy: learned c {optc.score(X[test], ds.y[test]):.3f}, uniform c {uniform.score(X[test], ds.y[test]):.3f}")

fig, ax = plt.subplots(figsize=(5, 3))
ax.bar(names, optc.c_ ** 2, color="C2")
ax.axhline(1 / len(names), color="grey", linestyle=":", label="uniform")
ax.set_ylabel("view weight $c_i^2$")
ax.legend()
fig.tight_layout()
