"""PoissonMBO with exact class sizes (mvl.solvers.volume.poisson_mbo, auction threshold) beside graphlearning's
Poisson learning and PoissonMBO, on the same sparse 10-NN graphs and class priors.

Graphs: "concat" = one 10-NN graph (graphlearning's Gaussian kNN weights) of the standardised concatenated
views; "views" = per-view 10-NN graphs of the standardised views summed with equal weights. Priors: "true" = the
class fractions of the whole data set, "labelled" = the labelled proportions. Accuracy on the unlabelled points.

    nice python benchmarks/bench_mbo.py --draws 5 --out benchmarks/results/mbo.csv
"""

import argparse
import csv
import sys
import time

import graphlearning as gl
import numpy as np

from mvl.data.embedded import load_mfeat
from mvl.data.ssl_benchmarks import load_dataset
from mvl.solvers.volume import combined_weights, poisson_mbo


def knn_graph(X, k=10):
    X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
    return gl.weightmatrix.knn(X, k, knn_data=gl.weightmatrix.knnsearch(X, k, method="brute")).tocsr()


METHODS = ("gl_poisson", "gl_poisson_mbo", "mvl_poisson_mbo_auction")


def fit_predict(method, W, idx, labels, priors):
    if method == "gl_poisson":
        return gl.ssl.poisson(W, class_priors=priors).fit_predict(idx, labels)
    if method == "gl_poisson_mbo":
        return gl.ssl.poisson_mbo(W, class_priors=priors).fit_predict(idx, labels)
    return poisson_mbo(W, idx, labels, class_priors=priors)


def datasets(data_dir):
    ds = load_mfeat()
    views = [np.asarray(v, dtype=np.float64) for v in ds.views]
    y = np.unique(np.asarray(ds.y), return_inverse=True)[1]
    yield "mfeat", {"concat": knn_graph(np.hstack(views)), "views": combined_weights([knn_graph(v) for v in views])}, y
    X, y = load_dataset("uspst", f"{data_dir}/ssl_benchmarks")
    yield "uspst", {"concat": knn_graph(np.asarray(X, dtype=np.float64))}, np.unique(y, return_inverse=True)[1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=5)
    ap.add_argument("--labels", type=int, nargs="+", default=[1, 3, 5])
    ap.add_argument("--data-dir", default="/work/shared/data")
    ap.add_argument("--out", default="benchmarks/results/mbo.csv")
    args = ap.parse_args()
    with open(args.out, "w", newline="") as f:
        f.write("# command: " + " ".join(sys.argv) + "\n")
        out = csv.writer(f)
        out.writerow(["dataset", "graph", "priors", "labels_per_class", "draw", "method", "accuracy", "seconds"])
        for name, graphs, y in datasets(args.data_dir):
            k = y.max() + 1
            true = np.bincount(y, minlength=k) / y.size
            for per in args.labels:
                for draw in range(args.draws):
                    rng = np.random.default_rng(1000 * per + draw)
                    idx = np.concatenate([rng.choice(np.flatnonzero(y == c), per, replace=False) for c in range(k)])
                    unl = np.setdiff1d(np.arange(y.size), idx)
                    lab_p = np.bincount(y[idx], minlength=k) / idx.size
                    for gname, W in graphs.items():
                        for pname, pri in (("true", true), ("labelled", lab_p)):
                            for method in METHODS:
                                t0 = time.perf_counter()
                                pred = fit_predict(method, W, idx, y[idx], pri)
                                sec = time.perf_counter() - t0
                                acc = float(np.mean(pred[unl] == y[unl]))
                                out.writerow([name, gname, pname, per, draw, method, f"{acc:.4f}", f"{sec:.3f}"])
                                f.flush()


if __name__ == "__main__":
    main()
