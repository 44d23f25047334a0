"""The gamma_A rule of ``gamma_A="auto"`` (:func:`mvl.solvers.vecchia_direct.share_gamma_A`) on real data: multi-view
MNIST and mfeat, held-out accuracy, beside gamma_A = 1e-5 and Laplace / Poisson learning.

What is measured
----------------
Data as the peers study's inductive setting (:func:`mvl.workflow.peers.load_peer_data`, :func:`~mvl.workflow.peers.
holdout`: a stratified fifth of every class held out per seed, never in the graph, the bandwidths or the
standardisation; every view standardised on the training points), l_c = 5 labelled points per class drawn among the
training points (:func:`~mvl.workflow.peers.draw_labelled`), the other training points unlabelled. Multi-view MNIST:
5,000 digits, 4 views (4,000 training points: the largest real multi-view set at hand; none exceeds 5,000, so
``solver="auto"`` runs "structured" on all of them and a first fit keeps gamma_A = 1e-5 there); mfeat: 2,000
digits, 6 views.

Methods (``method`` column), each fit on the same draw:

- ``defaults``: ``MVLLeastSquares()`` with every package default (``loss="auto"``: the Poisson-type term at 5 labels
  per class; ``gamma_A="auto"``), what a user's first fit does;
- ``defaults-squared``: the same with ``loss="squared"`` (gamma_A "auto" resolves to 1e-5 here);
- ``defaults-auto``: the package defaults with ``solver="vecchia_direct"`` and ``loss="squared"``: what a first fit
  runs on such data beyond 5,000 points when the regime measures >= 1 (``loss="auto"`` keeps the squared loss
  beyond 5,000 points), gamma_A from the rule; ``defaults-auto-1e-5``: the same at gamma_A = 1e-5 (what "auto" ran
  there before the rule was the default);
- the graph keywords of the graph regime (gamma_W = 1, gamma_B = 0, 10-NN graphs, L^2, Gaussian kernels of median
  bandwidth), ``solver="structured"`` (exact): ``graph-1e-5`` (gamma_A = 1e-5), ``graph-1e-6`` (the peers study's
  ``mvl_ls_graph``), ``graph-rule`` (gamma_A = share_gamma_A at these data, the exact solution at the rule's value);
  ``graph-auto``: ``solver="vecchia_direct"`` with ``gamma_A="auto"`` (what "auto" runs in the measured graph
  regime beyond 5,000 points: the rule inside the fit, ``gamma_A_``);
- ``laplace`` / ``poisson``: graphlearning's Laplace and Poisson learning on the 10-NN graph of the concatenated
  standardised views (:func:`mvl.workflow.peers.knn_graph`) of the training and held-out points together
  (transductive: the held-out points are unlabelled nodes).

``regime`` is :func:`mvl.solvers.auto.measured_regime` at the method's keywords (>= 1: the graph regime, where
"auto" would pick "vecchia_direct" beyond 5,000 points).

How to run
----------
    python benchmarks/bench_gamma_rule.py --datasets mvmnist mfeat --seeds 0 1

Rows go to ``--out`` (default benchmarks/results/gamma_rule_runs.csv, not committed); the summary table is
``benchmarks/results/gamma_rule.csv``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

GRAPH_KW = dict(gamma_B=0.0, gamma_W=1.0, n_neighbors=10, laplacian_power=2, random_state=0)
METHODS = ("defaults", "defaults-squared", "defaults-auto", "defaults-auto-1e-5", "graph-1e-5", "graph-1e-6",
           "graph-rule", "graph-auto", "laplace", "poisson")


def split(dataset, seed, lc=5):
    """(train views, train labels with -1, test views, test labels) of one seed (module docstring)."""
    from mvl.workflow.peers import draw_labelled, inductive_split, load_peer_data

    views, y, _ = load_peer_data(dataset, {"mirror": os.path.join(os.path.dirname(__file__), "..", "..", "shared",
                                                                  "data"), "offline": True})
    train, held, test = inductive_split(views, y, seed)
    labelled = draw_labelled(y[~test], [lc], seed)[lc]
    yy = np.full(int((~test).sum()), -1, dtype=np.int64)
    yy[labelled] = y[~test][labelled]
    return train, yy, held, y[test]


def run(dataset, seed, methods):
    """The rows of one data set and seed."""
    from mvl import MVLLeastSquares
    from mvl.solvers.auto import measured_regime
    from mvl.solvers.vecchia_direct import problem, share_gamma_A
    from mvl.workflow.peers import graph_learning, knn_graph

    train, yy, held, yt = split(dataset, seed)
    X, Xt = np.hstack(train), np.hstack(held)
    sizes = [v.shape[1] for v in train]
    rows, rule = [], None
    for method in methods:
        t0 = time.perf_counter()
        row = dict(dataset=dataset, seed=seed, n_train=len(yy), n_test=len(yt), method=method,
                   load=os.getloadavg()[0])
        if method in ("laplace", "poisson"):
            W = knn_graph(np.vstack([X, Xt]), 10)
            lab = np.flatnonzero(yy >= 0)
            pred = graph_learning(W, lab, yy[lab], method)[len(yy):]
        else:
            kw = dict(views=sizes)
            if method.startswith("graph"):
                kw.update(GRAPH_KW, solver="vecchia_direct" if method == "graph-auto" else "structured")
                if method == "graph-rule":
                    if rule is None:
                        kernels, system = problem(MVLLeastSquares(**kw), X, yy)
                        rule = share_gamma_A(system, kernels)
                    kw["gamma_A"] = rule
                elif method != "graph-auto":
                    kw["gamma_A"] = float(method.split("-", 1)[1])
            elif method == "defaults-squared":
                kw["loss"] = "squared"
            elif method.startswith("defaults-auto"):
                kw.update(loss="squared", solver="vecchia_direct", random_state=0)
                if method.endswith("1e-5"):
                    kw["gamma_A"] = 1e-5
            est = MVLLeastSquares(**kw).fit(X, yy)
            pred = est.predict(Xt)
            row.update(gamma_A=est.gamma_A_, solver=est.solver_, loss=est.loss_)
            if method != "defaults":
                row["regime"] = measured_regime(est._fit_kernel_operator(X, 0), est._gamma_A(), est._gamma_B(),
                                                est.gamma_W, est._laplacian_power(), est.n_components, 0)
        row.update(accuracy=float(np.mean(pred == yt)), seconds=time.perf_counter() - t0)
        print(row, flush=True)
        rows.append(row)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["mvmnist", "mfeat"])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "gamma_rule_runs.csv"))
    args = ap.parse_args()
    import pandas as pd

    rows = [r for d in args.datasets for s in args.seeds for r in run(d, s, args.methods)]
    df = pd.DataFrame(rows)
    if os.path.exists(args.out):
        df = pd.concat([pd.read_csv(args.out), df], ignore_index=True)
    df.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
