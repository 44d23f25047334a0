"""The Poisson-type data term (:mod:`mvl.solvers.poisson`) on real data, beside Poisson and Laplace learning.

What is measured
----------------
Data: mfeat (2,000 digits, 6 views), USPST (2,007 digits, 1 view; also the BNS-2006 splits, 50 labelled points)
and multi-view MNIST (5,000 digits, 4 views), loaded and standardised as the peers study does
(:func:`mvl.workflow.peers.load_peer_data`, :func:`~mvl.workflow.peers.standardise`); labelled points drawn by
:func:`~mvl.workflow.peers.draw_labelled` (l_c = 1, 3, 5, 10 per class, nested, per seed).

The Poisson-type fit: the source term alone (``loss="poisson"``), per-view Gaussian kernels of median bandwidth,
c = 1/m, gamma_W = 1 (with the source term alone only gamma_A / gamma_W and gamma_B / gamma_W matter), factored
once per graph and gamma_A (:class:`mvl.solvers.poisson.PoissonOperator`: the system is label-free) and solved for
every labelled draw at once. The graph choices (``Config``): ``graph`` "concat" (one k-NN graph of the concatenated
views, used by every view's function), "mean" (the per-view k-NN graphs averaged, used by every view) or "own"
(each view its own graph); ``weights`` "selftuned" (graphlearning's exp(-4 d^2 / d_k(x_i)^2), (W + W^T) / 2) or
"kernel" (the view's Gaussian kernel value on each edge of the symmetrised k-NN graph, the package's convention;
for "concat" the Gaussian kernel of the concatenated views); ``k``; ``power`` (L^power); ``laplacian``
"unnormalized" (D - W) or "normalized"; ``views`` "separate" (one function per view) or "concat" (one view of the
concatenated features). The decision rule (:func:`mvl.solvers.poisson.fit_decision`): argmax of C f - shift with
the shift the uniform ("uniform") or degree-weighted ("degree") mean of the training outputs per class, or
("priors") the uniform shift and graphlearning's volume label projection to the class fractions of the labelled
points, over the training points.

Beside it: graphlearning 1.7.5's Poisson and Laplace learning with their defaults on the 10-NN graph of the
concatenated views (:func:`mvl.workflow.peers.knn_graph`), transductive only (they have no out-of-sample values).

Protocols
---------
``validate``: transductive on all n points (multi-view MNIST: ``--per-class`` points per class, 300 by default, a
seeded stratified subset), seeds 100-104, every configuration of :func:`validation_grid`; the selection score of a
configuration is its mean accuracy over l_c = 1, 3, 5, 10, averaged over the data sets. These seeds' labelled
draws never serve as the reported numbers.

``report``: seeds 0-9 with the configuration given on the command line (the one ``validate`` chose).
Transductive: all n points form the graph, accuracy on the unlabelled points (USPST also on the BNS-2006 split
``seed``). Inductive: per seed a stratified fifth of every class is held out (never in the graph, the kernels'
bandwidths or the fit), the labelled points are drawn among the rest; accuracy on the held-out points and, from the
same fit, on the unlabelled training points. Two out-of-sample rules: the representer theorem's C f(x) =
sum_p c_p K^p(x, X) A_p (``test_accuracy``) and the graph's (``test_accuracy_knn``, :func:`knn_extension`: the
weighted mean of the training outputs at the point's 10 nearest training points).

How to run
----------
    nice -n 19 python benchmarks/bench_poisson.py validate --datasets mfeat uspst
    nice -n 19 python benchmarks/bench_poisson.py validate --datasets mvmnist --grid small \
        --out benchmarks/results/poisson_validate_mvmnist.csv
    for d in mfeat uspst; do nice -n 19 python benchmarks/bench_poisson.py report --datasets $d --graph concat \\
        --weights selftuned --k 10 --power 1 --gamma-A 1e-5 --shift degree \\
        --out benchmarks/results/poisson_report_$d.csv; done
    nice -n 19 python benchmarks/bench_poisson.py report --datasets mvmnist --graph concat --weights selftuned \\
        --k 10 --power 1 --gamma-A 1e-5 --shift degree --inductive-seeds 0 1 2 \\
        --out benchmarks/results/poisson_report_mvmnist.csv

The configuration of these commands is the one ``validate`` chose: the best mean over the three data sets among
the configurations every data set ran (multi-view MNIST ran :func:`small_grid` only); the "degree" shift was at
least as good as "uniform" for the chosen graph on USPST and multi-view MNIST (within 0.2 points), "priors" lost
about 8 points on USPST, whose classes are not balanced while the stratified draws give uniform labelled fractions.

``threshold``: the choice of ``loss="auto"`` (:data:`mvl.estimators.poisson_fit.AUTO_LABELS_PER_CLASS`): on the
validation seeds 100-104, transductive, MVL-LS with the package defaults and the squared loss against the
Poisson-type fit (``loss="poisson"``, the estimator's graph and gammas), at l_c = 1, 3, 5, 10 on mfeat, USPST and
multi-view MNIST (``--per-class`` points per class). The threshold is the largest l_c up to which the Poisson-type
fit is at least as accurate on every data set.

    nice -n 19 python benchmarks/bench_poisson.py threshold --per-class 150 \
        --out benchmarks/results/poisson_threshold.csv

Results: ``benchmarks/results/poisson_<protocol>.csv`` (one row per data set, seed, setting, l_c, method and
decision rule), tables printed.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
from scipy import sparse

from mvl.kernels import rbf_bandwidth, squared_distances
from mvl.solvers.poisson import PoissonOperator, combined_outputs, fit_decision
from mvl.workflow.peers import draw_labelled, graph_learning, holdout, knn_graph, load_peer_data, standardise, \
    stratified_subset

LABELS = (1, 3, 5, 10)
RESULTS = Path(__file__).resolve().parent / "results"
DATA = {"mirror": "../shared/data", "offline": True}


@dataclass(frozen=True)
class Config:
    """One Poisson-type fit's graph and weights (see the module docstring)."""

    graph: str = "concat"
    weights: str = "selftuned"
    k: int = 10
    power: int = 1
    laplacian: str = "unnormalized"
    views: str = "separate"
    gamma_A: float = 1e-3
    gamma_B: float = 0.0

    def effective(self, n_views):
        """The same fit written one way (with one view every graph choice is the same graph)."""
        if n_views == 1 or self.views == "concat":
            return replace(self, graph="concat", gamma_B=0.0, views="separate" if n_views == 1 else "concat")
        return self

    def label(self):
        return (f"{self.views[:3]}/{self.graph}/{self.weights}/k{self.k}/p{self.power}/{self.laplacian[:4]}/"
                f"gA{self.gamma_A:g}/gB{self.gamma_B:g}")


def small_grid():
    """The reduced grid for the largest data set: the two weights on the concatenated views' graph at k = 5 and 10,
    gamma_A = 1e-3 and 1e-5, and the averaged per-view graph (self-tuned, k = 10, gamma_A = 1e-3)."""
    grid = [Config(weights=w, k=k, gamma_A=g) for w in ("selftuned", "kernel") for k in (5, 10) for g in (1e-3, 1e-5)]
    return grid + [Config(graph="mean")]


def validation_grid():
    """The configurations compared on the validation seeds: graph x weights x gamma_A at k = 10, L^1, D - W; then,
    for each graph and weights at gamma_A = 1e-3, k = 5 and 20, L^2, the normalized Laplacian, gamma_B = 1e-2; and
    one view of the concatenated features."""
    grid = []
    for graph in ("concat", "mean", "own"):
        for weights in ("selftuned", "kernel"):
            base = Config(graph=graph, weights=weights)
            grid += [replace(base, gamma_A=g) for g in (1e-1, 1e-3, 1e-5)]
            grid += [replace(base, k=5), replace(base, k=20), replace(base, power=2),
                     replace(base, laplacian="normalized"), replace(base, gamma_B=1e-2)]
    grid += [Config(views="concat", gamma_A=g) for g in (1e-1, 1e-3, 1e-5)]
    return grid


# ------------------------------------------------------------------ kernels and graphs


def gaussian(X, sigma, Z=None):
    """exp(-|x - z|^2 / (2 sigma^2)) between the rows of Z (default X) and X."""
    return np.exp(-squared_distances(X if Z is None else Z, X) / (2.0 * sigma**2))


def knn_sparse(X, k, weights, sigma):
    """Symmetrised k-NN weight matrix (sparse, zero diagonal) of the rows of X, exact neighbours."""
    from sklearn.neighbors import NearestNeighbors

    dist, ind = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)
    if weights == "selftuned":
        return sparse.csr_array(knn_graph(X, k))
    n = len(X)
    rows, cols, d = [], [], []
    for i in range(n):  # drop the point itself (first neighbour, or wherever a duplicate put it)
        keep = ind[i] != i
        nb, di = ind[i][keep][:k], dist[i][keep][:k]
        rows.append(np.full(len(nb), i))
        cols.append(nb)
        d.append(di)
    rows, cols, d = np.concatenate(rows), np.concatenate(cols), np.concatenate(d)
    W = sparse.csr_array((np.exp(-d**2 / (2.0 * sigma**2)), (rows, cols)), shape=(n, n))
    return W.maximum(W.T)  # i ~ j if either is a neighbour of the other, the kernel value on the edge


def laplacian_of(W, normalized, power):
    """Sparse D - W or I - D^-1/2 W D^-1/2 (diagonal of W dropped), to the given power; and the degrees."""
    W = sparse.csr_array(W)
    W = W - sparse.diags_array(W.diagonal())
    d = np.asarray(W.sum(axis=1)).ravel()
    if normalized:
        s = sparse.diags_array(np.where(d > 0, 1.0 / np.sqrt(np.maximum(d, 1e-300)), 0.0))
        L = sparse.eye_array(W.shape[0]) - s @ W @ s
    else:
        L = sparse.diags_array(d) - W
    L = sparse.csr_array(L)
    out = L
    for _ in range(power - 1):
        out = out @ L
    return sparse.csr_array(out), d


class Problem:
    """Standardised views of the training points, their kernels and bandwidths, and a cache of graphs."""

    def __init__(self, views, views_test=None):
        self.views = views
        self.views_test = views_test
        self.sigma = [rbf_bandwidth(v) for v in views]
        self.K = np.stack([gaussian(v, s) for v, s in zip(views, self.sigma, strict=True)])
        self._concat = None
        self._graphs = {}

    def concat(self):
        """(X, sigma, K) of the concatenated views."""
        if self._concat is None:
            X = np.hstack(self.views)
            s = rbf_bandwidth(X)
            self._concat = (X, s, gaussian(X, s)[None])
        return self._concat

    def kernels(self, cfg):
        return self.concat()[2] if cfg.views == "concat" else self.K

    def test_kernels(self, cfg):
        if cfg.views == "concat":
            X, s, _ = self.concat()
            return gaussian(X, s, np.hstack(self.views_test))[None]
        return np.stack([gaussian(v, s, t) for v, s, t in zip(self.views, self.sigma, self.views_test,
                                                              strict=True)])

    def weights(self, which, k, kind):
        key = (which, k, kind)
        if key not in self._graphs:
            if which == "concat":
                X, s, _ = self.concat()
                self._graphs[key] = knn_sparse(X, k, kind, s)
            else:
                self._graphs[key] = knn_sparse(self.views[which], k, kind, self.sigma[which])
        return self._graphs[key]

    def laplacians(self, cfg):
        """Per-view Laplacians (a list of m sparse matrices) and the degrees for the "degree" decision."""
        m = 1 if cfg.views == "concat" else len(self.views)
        norm = cfg.laplacian == "normalized"
        if cfg.graph == "concat" or m == 1:
            L, d = laplacian_of(self.weights("concat", cfg.k, cfg.weights), norm, cfg.power)
            return [L] * m, d
        Ws = [self.weights(p, cfg.k, cfg.weights) for p in range(m)]
        if cfg.graph == "mean":
            L, d = laplacian_of(sum(Ws) / m, norm, cfg.power)
            return [L] * m, d
        pairs = [laplacian_of(W, norm, cfg.power) for W in Ws]
        return [L for L, _ in pairs], np.mean([d for _, d in pairs], axis=0)


# ------------------------------------------------------------------ fits


def draws_of(y, seed, bns=None):
    """[(setting, l_c, labelled indices)] of one seed: the nested stratified draws, and the BNS split if given."""
    out = [("stratified", lc, idx) for lc, idx in draw_labelled(y, LABELS, seed).items()]
    if bns is not None and seed < len(bns):
        lab = np.sort(bns[seed])
        out.append(("bns", round(len(lab) / len(np.unique(y))), lab))
    return out


def poisson_fit(problem, cfg, y, draws, y_test=None):
    """Accuracy rows of the Poisson-type fit ``cfg`` for every draw (one factorisation, one multi-column solve)."""
    K = problem.kernels(cfg)
    m, n = K.shape[0], K.shape[1]
    t0 = time.perf_counter()
    Ls, deg = problem.laplacians(cfg)
    op = PoissonOperator(K, np.full(m, 1.0 / m), cfg.gamma_A, cfg.gamma_B, 1.0, Ls)
    seconds = time.perf_counter() - t0
    P = int(y.max()) + 1
    R = np.zeros((n, P * len(draws)))
    for j, (_, _, lab) in enumerate(draws):
        Y = np.eye(P)[y[lab]]
        R[lab, j * P:(j + 1) * P] = (Y - Y.mean(axis=0)) / len(lab)
    A = op.solve(R)
    c = np.full(m, 1.0 / m)
    F = combined_outputs(K, A, c)
    F_test = F_knn = None
    if y_test is not None:
        F_test = combined_outputs(problem.test_kernels(cfg), A, c)
        F_knn = knn_extension(problem, F)
    rows = []
    for j, (setting, lc, lab) in enumerate(draws):
        cols = slice(j * P, (j + 1) * P)
        unl = np.ones(n, dtype=bool)
        unl[lab] = False
        priors = np.bincount(y[lab], minlength=P) / len(lab)
        for shift, w, pri in (("uniform", None, None), ("degree", deg, None), ("priors", None, priors)):
            rule = fit_decision(F[:, cols], weights=w, class_priors=pri)
            row = dict(setting=setting, l_c=lc, method="mvl_poisson", decision=shift, config=cfg.label(),
                       **asdict(cfg), accuracy=float(np.mean(rule.predict(F[unl, cols]) == y[unl])),
                       seconds=seconds)
            if F_test is not None:
                row["test_accuracy"] = float(np.mean(rule.predict(F_test[:, cols]) == y_test))
                row["test_accuracy_knn"] = float(np.mean(rule.predict(F_knn[:, cols]) == y_test))
            rows.append(row)
    return rows


def knn_extension(problem, F, k=10):
    """The graph's out-of-sample rule: at each held-out point, the mean of the training outputs F at its k nearest
    training points (concatenated views), weighted exp(-4 d^2 / d_k^2) as graphlearning's graph."""
    from sklearn.neighbors import NearestNeighbors

    dist, ind = NearestNeighbors(n_neighbors=k).fit(np.hstack(problem.views)).kneighbors(
        np.hstack(problem.views_test))
    w = np.exp(-4.0 * dist**2 / np.maximum(dist[:, -1:], 1e-300) ** 2)
    return np.einsum("tk,tkp->tp", w, F[ind]) / w.sum(axis=1, keepdims=True)


def graph_methods(views, y, draws, cache=None):
    """Poisson and Laplace learning (graphlearning defaults, 10-NN of the concatenated views), transductive;
    ``cache`` a dict keeping the graph (and its build time, charged to every fit) over calls on the same points."""
    cache = {} if cache is None else cache
    if "W" not in cache:
        t0 = time.perf_counter()
        cache["W"] = knn_graph(np.hstack(views), 10)
        cache["build"] = time.perf_counter() - t0
    W, build = cache["W"], cache["build"]
    rows = []
    for setting, lc, lab in draws:
        unl = np.ones(len(y), dtype=bool)
        unl[lab] = False
        for method in ("poisson", "laplace"):
            t0 = time.perf_counter()
            pred = graph_learning(W, lab, y[lab], method)
            rows.append(dict(setting=setting, l_c=lc, method=method, decision="", config="graphlearning",
                             accuracy=float(np.mean(pred[unl] == y[unl])),
                             seconds=time.perf_counter() - t0 + build))
    return rows


def load(name, per_class=None):
    views, y, bns = load_peer_data(name, DATA)
    sub = stratified_subset(y, per_class, 0)
    return [standardise(v[sub]) for v in views], y[sub], (bns if per_class is None else None)


# ------------------------------------------------------------------ protocols


def validate(datasets, seeds, per_class, grid="full", out_csv=None):
    """Rows of every configuration on every data set (written to ``out_csv`` after each data set if given)."""
    import pandas as pd

    rows = []
    grid = validation_grid() if grid == "full" else small_grid()
    for name in datasets:
        views, y, _ = load(name, per_class if name == "mvmnist" else None)
        problem = Problem(views)
        draws = [(s, lc, idx) for seed in seeds for (s, lc, idx) in draws_of(y, seed)]
        seeds_of = [seed for seed in seeds for _ in LABELS]
        for i, r in enumerate(graph_methods(views, y, draws)):
            rows.append(dict(dataset=name, seed=seeds_of[i // 2], **r))
        done = set()
        for cfg in grid:
            eff = cfg.effective(len(views))
            if eff in done:
                continue
            done.add(eff)
            out = poisson_fit(problem, eff, y, draws)
            for i, r in enumerate(out):
                rows.append(dict(dataset=name, seed=seeds_of[i // 3], **r))
            acc = np.mean([r["accuracy"] for r in out if r["decision"] == "uniform"])
            print(f"[validate] {name} {eff.label()}: {100 * acc:.1f} % ({out[0]['seconds']:.1f} s)", flush=True)
        if out_csv is not None:
            out_csv.parent.mkdir(parents=True, exist_ok=True)
            pd.DataFrame(rows).to_csv(out_csv, index=False)
    return rows


def report(datasets, seeds, cfg, decision, inductive_seeds=None, protocols=("transductive", "inductive")):
    rows = []
    for name in datasets:
        views, y, bns = load(name)
        cfg_eff = cfg.effective(len(views))
        # transductive: every point in the graph
        problem = Problem(views)
        cache = {}
        for seed in seeds if "transductive" in protocols else []:
            draws = draws_of(y, seed, bns)
            for r in graph_methods(views, y, draws, cache) + poisson_fit(problem, cfg_eff, y, draws):
                rows.append(dict(dataset=name, protocol="transductive", seed=seed, **r))
            print(f"[report] {name} transductive seed {seed}", flush=True)
        del problem
        # inductive: a held-out fifth, never seen by the fit
        for seed in (seeds if inductive_seeds is None else inductive_seeds) if "inductive" in protocols else []:
            test = holdout(y, seed)
            tr = [v[~test] for v in views]
            problem = Problem(tr, [v[test] for v in views])
            draws = draws_of(y[~test], seed)
            for r in poisson_fit(problem, cfg_eff, y[~test], draws, y_test=y[test]):
                rows.append(dict(dataset=name, protocol="inductive", seed=seed, **r))
            del problem
            print(f"[report] {name} inductive seed {seed}", flush=True)
        print(f"[report] {name} done", flush=True)
    return [r for r in rows if r["method"] != "mvl_poisson" or r["decision"] == decision] if decision else rows


def threshold(datasets, seeds, per_class, out_csv=None):
    """Rows (dataset, seed, l_c, loss, accuracy, seconds) of the estimator with ``loss="squared"`` (package defaults)
    and ``loss="poisson"`` on the validation draws (module docstring)."""
    import pandas as pd

    from mvl import MVLLeastSquares

    rows = []
    for name in datasets:
        views, y, _ = load(name, per_class if name == "mvmnist" else None)
        X, sizes = np.hstack(views), [v.shape[1] for v in views]
        for seed in seeds:
            for _, lc, lab in draws_of(y, seed):
                yy = np.full(len(y), -1)
                yy[lab] = y[lab]
                unl = yy < 0
                for loss in ("squared", "poisson"):
                    t0 = time.perf_counter()
                    est = MVLLeastSquares(views=sizes, loss=loss).fit(X, yy)
                    acc = float(np.mean(est.predict(X)[unl] == y[unl]))
                    rows.append(dict(dataset=name, seed=seed, l_c=lc, loss=loss, accuracy=acc,
                                     seconds=time.perf_counter() - t0))
                    print(f"[threshold] {name} seed {seed} l_c={lc} {loss}: {100 * acc:.1f} %", flush=True)
            if out_csv is not None:
                out_csv.parent.mkdir(parents=True, exist_ok=True)
                pd.DataFrame(rows).to_csv(out_csv, index=False)
    return rows


def print_tables(df, protocol):
    import pandas as pd

    pd.set_option("display.width", 200)
    if protocol == "threshold":
        print((100 * df.groupby(["dataset", "l_c", "loss"]).accuracy.mean().unstack("loss")).round(1).to_string())
        return
    if protocol == "validate":
        mv = df[df.method == "mvl_poisson"]
        per = mv.groupby(["config", "decision", "dataset"]).accuracy.mean().unstack("dataset")
        per["score"] = per.mean(axis=1)
        print((100 * per.sort_values("score", ascending=False)).round(1).to_string())
        base = df[df.method != "mvl_poisson"].groupby(["method", "dataset"]).accuracy.mean().unstack("dataset")
        print((100 * base).round(1).to_string())
        return
    tab = df.groupby(["dataset", "protocol", "setting", "l_c", "method"]).agg(
        accuracy=("accuracy", "mean"), sd=("accuracy", "std"), seconds=("seconds", "mean"))
    for col in ("test_accuracy", "test_accuracy_knn"):
        if col in df:
            tab[col] = df.groupby(["dataset", "protocol", "setting", "l_c", "method"])[col].mean()
    for col in ("accuracy", "sd", "test_accuracy", "test_accuracy_knn"):
        if col in tab:
            tab[col] = (100 * tab[col]).round(1)
    print(tab.round(2).to_string())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("protocol", choices=["validate", "report", "threshold"])
    ap.add_argument("--datasets", nargs="+", default=["mfeat", "uspst", "mvmnist"])
    ap.add_argument("--seeds", nargs="+", type=int, default=None)
    ap.add_argument("--per-class", type=int, default=300,
                    help="validate, threshold: multi-view MNIST points per class")
    for f in ("graph", "weights", "laplacian", "views"):
        ap.add_argument(f"--{f}", default=getattr(Config, f))
    ap.add_argument("--k", type=int, default=Config.k)
    ap.add_argument("--power", type=int, default=Config.power)
    ap.add_argument("--gamma-A", type=float, default=Config.gamma_A)
    ap.add_argument("--gamma-B", type=float, default=Config.gamma_B)
    ap.add_argument("--shift", default="uniform", choices=["uniform", "degree", "priors", ""])
    ap.add_argument("--grid", default="full", choices=["full", "small"], help="validate: validation_grid or small_grid")
    ap.add_argument("--inductive-seeds", nargs="+", type=int, default=None, help="report: default the seeds")
    ap.add_argument("--protocols", nargs="+", default=["transductive", "inductive"], help="report")
    ap.add_argument("--out", default=None)
    a = ap.parse_args(argv)
    import pandas as pd

    out = Path(a.out) if a.out else RESULTS / f"poisson_{a.protocol}.csv"
    if a.protocol == "threshold":
        rows = threshold(a.datasets, a.seeds or list(range(100, 105)), a.per_class, out)
    elif a.protocol == "validate":
        rows = validate(a.datasets, a.seeds or list(range(100, 105)), a.per_class, a.grid, out)
    else:
        cfg = Config(graph=a.graph, weights=a.weights, k=a.k, power=a.power, laplacian=a.laplacian, views=a.views,
                     gamma_A=a.gamma_A, gamma_B=a.gamma_B)
        rows = report(a.datasets, a.seeds or list(range(10)), cfg, a.shift, a.inductive_seeds, a.protocols)
    df = pd.DataFrame(rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(out, index=False)
    print_tables(df, a.protocol)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
