"""Where MVL-LS loses accuracy as n grows in the graph regime: the graph term or the kernel term.

What is measured
----------------
On ``bench_scale.py``'s ``graph6`` data (:func:`mvl.workflow.scale._data`: 6 classes, 3 standardised views of
20/30/40 features, 5 labels per class) and the preset's keywords (sigma = 1, gamma_B = 0, gamma_W = 1, 10-NN
graphs, normalized Laplacian squared):

``limit``: the accuracy, on the unlabelled training points (the graph nodes), of MVL-LS's limit gamma_A -> 0,
F = M^{-1} r (:func:`mvl.workflow.scale.graph_limit_scores`: the graph term alone), for the preset and one change
at a time (L^1, unnormalized L, binary weights, gamma_W x 1e-3 / x 1e3, gamma_B = 1, k = 0.5 % of n, the three
views concatenated as one view with sigma = sqrt(3)), beside Laplace learning (graphlearning, optional extra
``peers``) on each view's 10-NN graph and on the concatenated views' (graph nodes too).

``gamma``: the exact solution (``MVLLeastSquares(solver="graph")``, tol ``--tol``) at each gamma_A of ``--gammas``:
accuracy on the graph nodes and on the 2,000 held-out points of the draw ``--seed`` (seed 7 is the validation draw
of benchmarks/README.md, seed 1 the benchmark's test draw), iterations and fit time.

How to run
----------
    python benchmarks/bench_graph_limit.py limit --sizes 2000 8000 16000 32000
    python benchmarks/bench_graph_limit.py gamma --n 8000 --seed 7 --gammas 1e-6 1e-7 1e-8 1e-9 --tol 1e-4
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from mvl.workflow.scale import _data, graph_limit_scores

BASE = dict(kernel="rbf", bandwidth=[1.0] * 3, gamma_A=1e-6, gamma_B=0.0, gamma_W=1.0, n_neighbors=10,
            laplacian_power=2, random_state=0)
VARIANTS = {
    "preset": {},
    "L^1": dict(laplacian_power=1),
    "unnormalized L": dict(laplacian="unnormalized"),
    "binary weights": dict(graph_weights="binary"),
    "gamma_W x 1e-3": dict(gamma_W=1e-3),
    "gamma_W x 1e3": dict(gamma_W=1e3),
    "gamma_B = 1": dict(gamma_B=1.0),
    "k = 0.5 % of n": dict(n_neighbors="auto"),
    "concatenated view": dict(views=[90], bandwidth=[np.sqrt(3.0)]),
}


def truth(n, seed):
    """The true classes of the n training points of ``_data(n, seed, ...)`` (the unlabelled ones included)."""
    from mvl.data.synthetic import make_multiview_manifold

    return make_multiview_manifold(n + 2000, n_classes=6, n_views=3, n_features=40, random_state=seed).y[:n]


def laplace(Z, ytr, k=10):
    """graphlearning's Laplace learning on the k-NN graph of Z (its weights), predictions on every node."""
    import graphlearning as gl
    from sklearn.neighbors import NearestNeighbors

    dist, ind = NearestNeighbors(n_neighbors=k + 1).fit(Z).kneighbors(Z)
    W = gl.weightmatrix.knn(Z, k, knn_data=(ind, dist))
    lab = np.flatnonzero(ytr >= 0)
    return np.asarray(gl.ssl.laplace(W).fit_predict(lab, ytr[lab]))


def limit(sizes, seed):
    for n in sizes:
        X, ytr, _, _, sizes_ = _data(n, seed, 5, 6, (20, 30, 40), True)
        y, un = truth(n, seed), ytr < 0
        for name, change in VARIANTS.items():
            t = time.perf_counter()
            S, classes = graph_limit_scores(X, ytr, {**BASE, "views": sizes_, **change})
            acc = np.mean(classes[S.argmax(axis=1)][un] == y[un])
            print(f"n={n:6d} limit {name:18s} graph nodes {acc:.4f} ({time.perf_counter() - t:.1f} s)", flush=True)
        try:
            off = np.concatenate([[0], np.cumsum(sizes_)])
            for p in range(3):
                acc = np.mean(laplace(X[:, off[p]:off[p + 1]], ytr)[un] == y[un])
                print(f"n={n:6d} Laplace learning, view {p}      graph nodes {acc:.4f}", flush=True)
            acc = np.mean(laplace(X, ytr)[un] == y[un])
            print(f"n={n:6d} Laplace learning, concatenated graph nodes {acc:.4f}", flush=True)
        except ImportError:
            print("graphlearning is not installed (pip install 'mvl[peers]'): Laplace learning left out")


def gamma(n, seed, gammas, tol):
    from mvl import MVLLeastSquares

    X, ytr, Xt, yt, sizes_ = _data(n, seed, 5, 6, (20, 30, 40), True)
    y, un = truth(n, seed), ytr < 0
    for g in gammas:
        t = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = MVLLeastSquares(solver="graph", tol=tol, **{**BASE, "views": sizes_, "gamma_A": g}).fit(X, ytr)
        fit = time.perf_counter() - t
        unconverged = sum(type(w.message).__name__ == "ConvergenceWarning" for w in caught)
        print(f"n={n} seed={seed} gamma_A={g:g} tol={tol:g}: fit {fit:.0f} s, {est.n_iter_} iterations"
              f"{' (NOT converged)' if unconverged else ''} | graph nodes {np.mean(est.predict(X)[un] == y[un]):.4f}"
              f" | held-out {np.mean(est.predict(Xt) == yt):.4f}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    a = sub.add_parser("limit", help="the limit gamma_A -> 0 and Laplace learning on the graph nodes")
    a.add_argument("--sizes", type=int, nargs="+", default=[2000, 8000])
    a.add_argument("--seed", type=int, default=1)
    b = sub.add_parser("gamma", help="the exact solution at several gamma_A")
    b.add_argument("--n", type=int, default=8000)
    b.add_argument("--seed", type=int, default=7)
    b.add_argument("--gammas", type=float, nargs="+", default=[1e-6, 1e-7, 1e-8, 1e-9])
    b.add_argument("--tol", type=float, default=1e-4)
    args = ap.parse_args()
    if args.what == "limit":
        limit(args.sizes, args.seed)
    else:
        gamma(args.n, args.seed, args.gammas, args.tol)


if __name__ == "__main__":
    main()
