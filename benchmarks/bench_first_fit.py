"""The first fit with package defaults beside graphlearning's Poisson learning, in one run.

What is measured
----------------
For each data set and number of labels per class, interleaved (first fit, Poisson learning, first fit, ...), each
measurement in its own process (so its peak RSS is its own):

- ``first fit``: ``MVLLeastSquares(views=sizes)`` with every other parameter at its default, fitted on the
  standardised views with -1 on the unlabelled points; its time covers everything the fit does (kernels, graphs,
  bandwidths, the solve) and the prediction of the training points.
- ``Poisson learning``: graphlearning 1.7.5's ``ssl.poisson`` with its defaults on the 10-NN graph of the
  concatenated standardised views (:func:`mvl.workflow.peers.knn_graph`); its time includes the graph.

Accuracy is transductive: on the unlabelled training points. Data: multi-view MNIST (5,000 points, 4 views,
:func:`mvl.workflow.peers.load_peer_data`) and graph6 (the scale study's graph-regime data: 6 classes, 3 views of
20 / 30 / 40 features, :func:`mvl.workflow.scale._data`, standardised) at the sizes given.

Usage::

    python benchmarks/bench_first_fit.py                      # MNIST 1 and 5 labels; graph6 8k, 32k, 100k, 1 label
    python benchmarks/bench_first_fit.py --quick              # MNIST only, 1 label
    python benchmarks/bench_first_fit.py --graph6 8000 --labels 1 --no-mnist

writes ``benchmarks/results/first_fit.csv`` (rendered in the docs' benchmarks page).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "first_fit.csv"


MIRROR = HERE.parent.parent / "shared" / "data"
"""The data mirror beside the checkout (as CI has it); ``--mirror`` or MVL_DATA_MIRROR give another."""


def _data(dataset, n, labels, seed):
    """(views, y_train with -1 on the unlabelled points, y_true) of one measurement."""
    from mvl.workflow.peers import draw_labelled, load_peer_data, standardise

    if dataset == "mvmnist":
        mirror = os.environ.get("MVL_DATA_MIRROR", str(MIRROR))
        views, y, _ = load_peer_data("mvmnist", {"mirror": mirror, "offline": True} if Path(mirror).is_dir() else None)
        views = [standardise(v) for v in views]
        labelled = draw_labelled(y, [labels], seed)[labels]
    else:
        from mvl.workflow.scale import _data as scale_data

        X, ytr, _, _, sizes, y = scale_data(n, seed, labels, classes=6, features=(20, 30, 40), standardise=True,
                                            truth=True)
        views = np.split(X, np.cumsum(sizes)[:-1], axis=1)
        labelled = np.flatnonzero(ytr >= 0)
    ytr = np.full(len(y), -1)
    ytr[labelled] = y[labelled]
    return views, ytr, y


def measure(method, dataset, n, labels, seed):
    """One measurement in this process: a dict with accuracy, wall seconds, CPU seconds, peak RSS and details."""
    views, ytr, y = _data(dataset, n, labels, seed)
    X = np.hstack(views)
    unl = ytr < 0
    t0, c0 = time.perf_counter(), time.process_time()
    detail = ""
    if method == "first fit":
        from mvl import MVLLeastSquares

        est = MVLLeastSquares(views=[v.shape[1] for v in views]).fit(X, ytr)
        pred = est.predict(X)
        detail = f"loss {est.loss_}, solver {est.solver_}"
    elif method == "Poisson learning":
        from mvl.workflow.peers import graph_learning, knn_graph

        W = knn_graph(X, 10)
        lab = np.flatnonzero(~unl)
        pred = graph_learning(W, lab, ytr[lab], "poisson")
    else:
        raise ValueError(method)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"accuracy": float(np.mean(pred[unl] == y[unl])), "wall": wall, "cpu": cpu,
            "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, "detail": detail}


def run_one(method, dataset, n, labels, seed):
    """:func:`measure` in a new process (its own peak RSS)."""
    cmd = [sys.executable, __file__, "--one", json.dumps([method, dataset, n, labels, seed])]
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{method} on {dataset} n={n} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--one", help=argparse.SUPPRESS)
    ap.add_argument("--graph6", type=int, nargs="*", default=[8000, 32000, 100000])
    ap.add_argument("--labels", type=int, nargs="*", default=None, help="labels per class (MNIST: 1 5; graph6: 1)")
    ap.add_argument("--no-mnist", action="store_true")
    ap.add_argument("--seeds", type=int, nargs="*", default=[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--mirror", help="local data mirror (default: ../shared/data beside the checkout)")
    a = ap.parse_args(argv)
    if a.mirror:
        os.environ["MVL_DATA_MIRROR"] = a.mirror
    if a.one:
        print(json.dumps(measure(*json.loads(a.one))))
        return
    cases = [] if a.no_mnist else [("mvmnist", 5000, lc) for lc in (a.labels or [1, 5])]
    if not a.quick:
        cases += [("graph6", n, lc) for n in a.graph6 for lc in (a.labels or [1])]
    else:
        cases = cases[:1]
    rows = []
    for dataset, n, lc in cases:
        for seed in a.seeds:
            load = os.getloadavg()[0]
            r = {m: run_one(m, dataset, n, lc, seed) for m in ("first fit", "Poisson learning")}
            f, p = r["first fit"], r["Poisson learning"]
            rows.append({"data": "multi-view MNIST" if dataset == "mvmnist" else "graph6", "n": n,
                         "labels per class": lc, "seed": seed, "load": f"{load:.1f}",
                         "first fit: accuracy": f"{100 * f['accuracy']:.2f}", "first fit: wall s": f"{f['wall']:.1f}",
                         "first fit: peak RSS GB": f"{f['rss'] / 1e9:.2f}",
                         "Poisson learning: accuracy": f"{100 * p['accuracy']:.2f}",
                         "Poisson learning: wall s": f"{p['wall']:.1f}",
                         "Poisson learning: peak RSS GB": f"{p['rss'] / 1e9:.2f}",
                         "wall ratio": f"{f['wall'] / p['wall']:.2f}",
                         "accuracy difference": f"{100 * (f['accuracy'] - p['accuracy']):+.2f}",
                         "first fit chose": f["detail"]})
            print(rows[-1], flush=True)
    import pandas as pd

    from mvl.fileio import atomic_write_text

    meta = [
        "# title: The first fit (MVLLeastSquares(views=sizes), package defaults) beside graphlearning's Poisson "
        "learning (10-NN graph of the concatenated standardised views), both timed with their graph construction, "
        "interleaved, one process per measurement; transductive accuracy on the unlabelled points",
        "# command: python benchmarks/bench_first_fit.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        f"# machine: {os.cpu_count()} cores, {platform.python_version()}, load (1-min average) at each row's start "
        "in the table; wall times under load are upper bounds, the ratio is what holds",
        "# source: the script's rows (one measurement per cell)",
    ]
    atomic_write_text(a.out, "\n".join(meta) + "\n" + pd.DataFrame(rows).to_csv(index=False))
    print(f"wrote {a.out}")


if __name__ == "__main__":
    main()
