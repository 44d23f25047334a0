"""The scale rule of ``gamma_A="auto"`` with the few-label term (:mod:`mvl.estimators.poisson_fit`, "The scale where
the kernel term dominates") on validation draws, beside graphlearning's Poisson learning on graph6.

What is measured
----------------
Per data set and validation seed (100-104; never the reported seeds), the first fit ``MVLLeastSquares(views=sizes)``
at package defaults (``loss="auto"``: the source term at these label counts) with -1 on the unlabelled points, for
each value of :data:`mvl.estimators.poisson_fit.SOURCE_SHARE` given: transductive accuracy on the unlabelled points,
the kernel share theta at the solution of POISSON_RATIO, the ratio the rule took (None: not triggered, the fit of
POISSON_RATIO kept), gamma_A_, the wall seconds of the fit. Data: mfeat and USPST (all points), multi-view MNIST (300
points per class, a seeded stratified subset, as ``bench_poisson.py validate``), labelled draws of 1 and 5 per class
(:func:`mvl.workflow.peers.draw_labelled`); graph6 (:func:`mvl.workflow.scale._data`, 6 classes, views of 20 / 30 /
40 features, standardised; the seed draws the data and its first point per class is labelled) at the sizes given,
with Poisson learning (graphlearning defaults, 10-NN graph of the concatenated views) beside it.

Usage::

    nice python benchmarks/bench_poisson_scale.py mfeat uspst mvmnist graph6:4000 graph6:8000 \\
        --shares 1e-2 1e-3 1e-4

writes ``benchmarks/results/source_scale_validate.csv``.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "source_scale_validate.csv"


def cases(name, seeds):
    """(seed, labels per class, X, sizes, y, labelled indices) of every validation draw of ``name``."""
    if name.startswith("graph6:"):
        from mvl.workflow.scale import _data as scale_data

        n = int(name.split(":")[1])
        for seed in seeds:
            X, ytr, _, _, sizes, y = scale_data(n, seed, 1, classes=6, features=(20, 30, 40), standardise=True,
                                                truth=True)
            yield seed, 1, X, list(sizes), y, np.flatnonzero(ytr >= 0)
        return
    import bench_poisson as bp

    from mvl.workflow.peers import draw_labelled

    views, y, _ = bp.load(name, 300 if name == "mvmnist" else None)
    X, sizes = np.hstack(views), [v.shape[1] for v in views]
    for seed in seeds:
        for lc, lab in draw_labelled(y, [1, 5], seed).items():
            yield seed, lc, X, sizes, y, lab


def main(argv=None):
    import pandas as pd

    import bench_poisson as bp
    import mvl.estimators.poisson_fit as pf
    from mvl import MVLLeastSquares
    from mvl.workflow.peers import graph_learning, knn_graph

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("datasets", nargs="+", help="mfeat, uspst, mvmnist, graph6:<n>")
    ap.add_argument("--shares", nargs="+", type=float, default=[pf.SOURCE_SHARE])
    ap.add_argument("--seeds", nargs="+", type=int, default=list(range(100, 105)))
    ap.add_argument("--mirror", default=str(HERE.parent.parent / "shared" / "data"))
    ap.add_argument("--out", type=Path, default=OUT)
    a = ap.parse_args(argv)
    bp.DATA["mirror"] = a.mirror
    rows = []
    for name in a.datasets:
        for seed, lc, X, sizes, y, lab in cases(name, a.seeds):
            yy = np.full(len(y), -1)
            yy[lab] = y[lab]
            unl = yy < 0
            for share in a.shares:
                pf.SOURCE_SHARE = share
                t0 = time.perf_counter()
                est = MVLLeastSquares(views=sizes).fit(X, yy)
                acc = float(np.mean(est.predict(X)[unl] == y[unl]))
                theta, ratio = getattr(est, "_source_scale", (None, None))
                rows.append(dict(data=name, seed=seed, labels_per_class=lc, method="first fit", share=share,
                                 accuracy=acc, theta=theta, ratio=ratio, gamma_A=est.gamma_A_, loss=est.loss_,
                                 solver=est.solver_, seconds=time.perf_counter() - t0))
                print(json.dumps(rows[-1]), flush=True)
            if name.startswith("graph6:"):
                t0 = time.perf_counter()
                pred = graph_learning(knn_graph(X, 10), lab, y[lab], "poisson")
                rows.append(dict(data=name, seed=seed, labels_per_class=lc, method="Poisson learning",
                                 accuracy=float(np.mean(pred[unl] == y[unl])), seconds=time.perf_counter() - t0))
                print(json.dumps(rows[-1]), flush=True)
            a.out.parent.mkdir(parents=True, exist_ok=True)
            pd.DataFrame(rows).to_csv(a.out, index=False)
    df = pd.DataFrame(rows)
    print((100 * df.groupby(["data", "labels_per_class", "method", "share"], dropna=False).accuracy.mean())
          .round(2).to_string())


if __name__ == "__main__":
    main()
