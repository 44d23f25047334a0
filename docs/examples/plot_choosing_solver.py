"""
Choosing a solver
=================

``MVLLeastSquares(solver=...)`` solves the same problem (Theorem 10) several ways. "structured" is exact and
costs O(m n^3) time and O(m n^2) memory; "cg" reaches the same solution to ``tol`` by preconditioned conjugate
gradients without an n x n factorisation; "nystrom" restricts each view's function to ``n_components`` centres.
Here the three are timed on up to 2,000 points of seeded multi-view manifold data (the smooth regime, where
"cg" converges in a few iterations): they predict the same labels. At these sizes the exact "structured" solver is
fast, and ``solver="auto"`` picks it up to 5,000 points; its O(n^3) cost grows fastest, and at 8,000 points "cg"
is 10-16 times and "nystrom" about 20 times faster (see :doc:`/benchmarks`).
"""

import time

import matplotlib.pyplot as plt
import numpy as np

from mvl import MVLLeastSquares
from mvl.data.synthetic import make_multiview_manifold

sizes = [500, 1000, 2000]
solvers = ["structured", "cg", "nystrom"]
times = {s: [] for s in solvers}
for n in sizes:
    data = make_multiview_manifold(n + 500, n_classes=4, n_views=3, n_features=20, random_state=0)
    X, X_test, y_test = data.X[:n], data.X[n:], data.y[n:]
    y = np.full(n, -1)
    for k in range(4):
        y[np.flatnonzero(data.y[:n] == k)[:5]] = k  # 5 labelled points per class
    predictions = {}
    for solver in solvers:
        model = MVLLeastSquares(solver=solver, views=data.view_sizes, n_components=300, gamma_B=1e-6,
                                random_state=0, loss="squared")  # the squared loss: every solver has it
        t0 = time.perf_counter()
        model.fit(X, y)
        times[solver].append(time.perf_counter() - t0)
        predictions[solver] = model.predict(X_test)
    agree = {s: np.mean(predictions[s] == predictions["structured"]) for s in ("cg", "nystrom")}
    print(f"n = {n}: " + ", ".join(f"{s} {times[s][-1]:.2f} s" for s in solvers)
          + f"; same predictions as structured: cg {agree['cg']:.1%}, nystrom {agree['nystrom']:.1%}")

# %%
# What "auto" picks
# -----------------
# "auto" takes "structured" for precomputed kernels and up to 5,000 training points of feature views (if its
# memory fits); beyond, "vecchia_direct" in the measured graph regime, otherwise "cg" up to 20,000 points and
# "nystrom" beyond ("graph" is never chosen by "auto"); the fitted estimator records its choice in ``solver_``.
auto = MVLLeastSquares(views=data.view_sizes, loss="squared").fit(X, y)
print(f"n = {len(y)}: auto chose {auto.solver_!r}")

fig, ax = plt.subplots(figsize=(5, 3.2))
for solver, marker in zip(solvers, "osd", strict=True):
    ax.plot(sizes, times[solver], marker + "-", label=solver)
ax.set_xlabel("training points n")
ax.set_ylabel("fit time (s)")
ax.legend()
fig.tight_layout()
