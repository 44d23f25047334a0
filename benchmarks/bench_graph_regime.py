"""The graph regime at 8,000 to 10^6 points: solver="vecchia" (:mod:`mvl.solvers.vecchia_direct`) against the
exact solver, Laplace learning and the labelled-only fit.

What is measured
----------------
``bench_scale.py``'s ``graph6`` data (:func:`mvl.workflow.scale._data`: 6 classes, 3 standardised views of
20/30/40 features, 5 labels per class, seed 1, 2,000 held-out points) and keywords (sigma = 1, gamma_B = 0,
gamma_W = 1, 10-NN graphs, normalized Laplacian squared). Each method at each n runs in its own process
(wall time of fit + predict; peak RSS and CPU time of that process by ``resource.getrusage``: on a shared machine
the CPU time, summed over threads and including the data and graphs, is the steadier measure):

- ``auto`` / ``auto-share``: ``MVLLeastSquares(solver="auto")`` as a new user would (the solver it picks in the
  CSV's ``solver`` column, ``regime``): ``auto`` with the package default ``gamma_A="auto"`` (the rule inside the
  fit, ``gamma_A_``), ``auto-share`` with gamma_A set by hand from the rule
  (:func:`mvl.solvers.vecchia_direct.share_gamma_A` on the points the fit solves on: all n, or the node subsample
  of :mod:`mvl.solvers.vecchia_nodes` when the full factorisation exceeds ``--max-memory``; its time included);
  held-out predictions by ``predict``; ``nodes``: the points the fit solved on. ``--transductive``: also the
  accuracy on every unlabelled training point (predicted in chunks of 100,000; ``transductive_seconds``), with
  the fit's CPU time and peak RSS before it (``cpu_seconds_fit``, ``rss_gb_fit``).
- ``vecchia``: the preset's gamma_A = 1e-6; ``vecchia-share``: gamma_A from
  :func:`mvl.solvers.vecchia_direct.share_gamma_A` at that n (its Vecchia factors reused by the fit, its time
  included). Held-out predictions by the kriging rule.
- ``structured`` / ``structured-share``: the exact solver (dense, n <= ~10,000) at the same gamma_A (the rule's
  time not included); the CSV's ``agreement`` column is the share of held-out points on which ``auto`` or
  ``vecchia`` and ``structured`` (and the ``-share`` pairs, and ``auto`` with ``structured-share``: the same
  gamma_A) predict the same class.
- ``laplace``: graphlearning's Laplace learning on the 10-NN graph of the concatenated views (transductive: the
  held-out points in the graph, unlabelled); ``labelonly``: MVL-LS on the 30 labelled points alone.

How to run
----------
    python benchmarks/bench_graph_regime.py --sizes 8000 --methods vecchia vecchia-share structured structured-share
    python benchmarks/bench_graph_regime.py --sizes 32000 100000 --methods vecchia-share laplace labelonly
    python benchmarks/bench_graph_regime.py --sizes 8000 --methods auto-share structured-share laplace labelonly
    python benchmarks/bench_graph_regime.py --sizes 32000 100000 --methods auto-share laplace labelonly
    python benchmarks/bench_graph_regime.py --sizes 1000000 --methods auto-share labelonly --max-memory 1e10 \
        --transductive
    python benchmarks/bench_graph_regime.py --sizes 8000 --methods auto structured-share auto structured-share
    python benchmarks/bench_graph_regime.py --phases 8000

``--phases N`` times the phases of the ``auto`` fit at N points in this process, as the estimator runs them
(regime measurement, kNN graphs, Vecchia factors, the operator M, the limit's factorisation, the refactor at the
rule's gamma_A, kriging predictions): CPU and wall seconds per phase.

Rows are appended to ``--out`` (default benchmarks/results/graph_regime.csv) with the host's load average at the
start of each run (the machine may be shared: times are then upper bounds).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

METHODS = ("auto", "auto-share", "vecchia", "vecchia-share", "structured", "structured-share", "laplace", "labelonly")
KW = dict(kernel="rbf", bandwidth=[1.0] * 3, gamma_A=1e-6, gamma_B=0.0, gamma_W=1.0, n_neighbors=10,
          laplacian_power=2, random_state=0)


def run_one(method, n, seed, pred_path, budget=None, transductive=False):
    """One method at n points in this process: a dict of the measurements; predictions saved to ``pred_path``.
    ``budget``: max_memory of the "auto" fits (None: half of the memory available now)."""
    from mvl import MVLLeastSquares
    from mvl.workflow.scale import _data, fit_one

    from mvl.estimators.least_squares import default_max_memory

    budget = default_max_memory() if budget is None else float(budget)
    row = dict(method=method, n=n, seed=seed, gamma_A=np.nan, load=os.getloadavg()[0], max_memory=budget)
    t0 = time.perf_counter()
    if method in ("laplace", "labelonly"):
        rec, pred = fit_one(method, n, preset="graph6", seed=seed)
        row.update(seconds=rec["seconds"], accuracy=rec["accuracy"])
    elif method.startswith("auto"):  # as a new user would: solver="auto", gamma_A from the rule with "-share"
        from mvl.solvers.vecchia_direct import problem, share_gamma_A
        from mvl.solvers.vecchia_nodes import subsample_nodes

        X, ytr, Xt, yt, sizes, ytrue = _data(n, seed, 5, 6, (20, 30, 40), True, truth=True)
        kw = {**KW, "views": sizes, "max_memory": budget}
        if method == "auto-share":  # the rule on the points the fit solves on: all, or the node subsample's
            nodes = subsample_nodes(ytr < 0, 3, KW["n_neighbors"], KW["laplacian_power"], budget, KW["random_state"])
            Xs, ys = (X, ytr) if nodes is None else (X[nodes], ytr[nodes])
            kernels, system = problem(MVLLeastSquares(**kw), Xs, ys)
            kw["gamma_A"] = share_gamma_A(system, kernels)
            del kernels, system, Xs, ys
        if method == "auto":
            del kw["gamma_A"]  # the package default, "auto"
        est = MVLLeastSquares(solver="auto", **kw).fit(X, ytr)
        row["fit_seconds"] = time.perf_counter() - t0
        pred = est.predict(Xt)
        row.update(seconds=time.perf_counter() - t0, accuracy=float(np.mean(pred == yt)), solver=est.solver_,
                   regime=est.regime_, gamma_A=est.gamma_A_, nodes=n if est.centres_ is None else len(est.centres_))
        if transductive:  # every unlabelled training point, by chunks (kriging from the nodes after a subsample)
            use = resource.getrusage(resource.RUSAGE_SELF)
            row.update(cpu_seconds_fit=use.ru_utime + use.ru_stime, rss_gb_fit=use.ru_maxrss / 1e6)
            t1 = time.perf_counter()
            unl = np.flatnonzero(ytr < 0)
            hits = sum(int(np.sum(est.predict(X[unl[s:s + 100_000]]) == ytrue[unl[s:s + 100_000]]))
                       for s in range(0, len(unl), 100_000))
            row.update(transductive=hits / len(unl), transductive_seconds=time.perf_counter() - t1)
    else:
        from mvl.solvers.graph import vecchia_factors
        from mvl.solvers.vecchia_direct import problem, share_gamma_A, solve_vecchia

        X, ytr, Xt, yt, sizes = _data(n, seed, 5, 6, (20, 30, 40), True)
        kw = {**KW, "views": sizes}
        gamma_A, factors = kw["gamma_A"], None
        if method.endswith("-share"):
            kernels, system = problem(MVLLeastSquares(**kw), X, ytr)
            factors = vecchia_factors(kernels)
            gamma_A = share_gamma_A(system, kernels, factors=factors)
        row["gamma_A"] = gamma_A
        if method.startswith("structured"):
            t0, c0 = time.perf_counter(), time.process_time()
            est = MVLLeastSquares(solver="structured", **{**kw, "gamma_A": gamma_A}).fit(X, ytr)
            pred = est.predict(Xt)
            row["fit_cpu_seconds"] = time.process_time() - c0  # the fit and predictions alone (not the rule)
        else:
            est = MVLLeastSquares(**{**kw, "gamma_A": gamma_A})
            kernels, system = problem(est, X, ytr)
            fit = solve_vecchia(system, kernels, factors=factors)
            row.update(fill=fit.info["fill"], factor_seconds=fit.info["factor_seconds"])
            pred = est.classes_[fit.decision_function(est._feature_views(Xt, reset=False)).argmax(axis=1)]
        row.update(seconds=time.perf_counter() - t0, accuracy=float(np.mean(pred == yt)))
    use = resource.getrusage(resource.RUSAGE_SELF)
    row["rss_gb"] = use.ru_maxrss / 1e6
    row["cpu_seconds"] = use.ru_utime + use.ru_stime  # the whole process (data, graphs), all threads
    np.save(pred_path, pred)
    return row


def phases(n, seed):
    """(phase, CPU seconds, wall seconds) of ``MVLLeastSquares(solver="auto")`` with the default gamma_A at n points,
    the estimator's steps run one by one as its fit runs them (one thread, :attr:`VecchiaDirectSolver.threads`)."""
    from threadpoolctl import threadpool_limits

    from mvl import MVLLeastSquares
    from mvl.solvers.auto import measured_regime
    from mvl.solvers.graph import vecchia_factors
    from mvl.solvers.vecchia_direct import KERNEL_SHARE, VecchiaDirectSolver, VecchiaSystem, limit_energies
    from mvl.workflow.scale import _data

    X, ytr, Xt, yt, sizes = _data(n, seed, 5, 6, (20, 30, 40), True)
    kw = {**KW, "views": sizes}
    del kw["gamma_A"]
    est = MVLLeastSquares(solver="auto", **kw)
    out = []

    def timed(name, fn):
        c, w = time.process_time(), time.perf_counter()
        value = fn()
        out.append((name, time.process_time() - c, time.perf_counter() - w))
        return value

    est.view_mask_ = None
    kernels = timed("kernel operator (features, bandwidths)", lambda: est._fit_kernel_operator(X, 0, missing=True))
    timed("regime measurement (Nystrom trace, 3 x 1000^2)", lambda: measured_regime(
        kernels, est._gamma_A(), est._gamma_B(), est.gamma_W, est._laplacian_power(), est.n_components, 0))
    solver = VecchiaDirectSolver()
    with threadpool_limits(limits=solver.threads):
        problem = timed("kNN graphs, Laplacians, system", lambda: est.operator_problem(X, ytr, solver, 0.0,
                                                                                      kernels=kernels))
        factors = timed("Vecchia factors (earlier neighbours, q = 20)", lambda: vecchia_factors(kernels, None, 0))
        vs = timed("operator M (L^2, labelled term), block factors", lambda: VecchiaSystem(
            problem.system, kernels, factors=factors))
        graph, kern = timed("limit: symbolic + numeric LDL^T, solve", lambda: limit_energies(problem.system, kernels,
                                                                                            vsystem=vs))
        system = problem.system
        system.delta = KERNEL_SHARE / (1.0 - KERNEL_SHARE) * graph / kern
        fit = timed("refactor at the rule's gamma_A, solve", lambda: vs.fit(system.delta))
        rows = timed("kriging rows", fit.kernel_rows)
        est._scalable, est.coef_, est.c_ = rows, fit.coef, problem.c
        est.n_labelled_ = len(problem.labelled)
        pred = timed("predict 2,000 held-out points", lambda: est.predict(Xt))
    out.append((f"total (held-out accuracy {float(np.mean(pred == yt)):.3f})", sum(r[1] for r in out),
                sum(r[2] for r in out)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[8000])
    ap.add_argument("--methods", nargs="+", default=["vecchia-share", "laplace", "labelonly"], choices=METHODS)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "graph_regime.csv"))
    ap.add_argument("--max-memory", type=float, default=None,
                    help='max_memory of the "auto" fits in bytes (default: half of the memory available)')
    ap.add_argument("--transductive", action="store_true",
                    help='"auto": also the accuracy on every unlabelled training point')
    ap.add_argument("--one", nargs=3, metavar=("METHOD", "N", "PRED"), help=argparse.SUPPRESS)
    ap.add_argument("--phases", type=int, metavar="N", help="time the phases of the auto fit at N points")
    args = ap.parse_args()
    if args.phases:
        for name, cpu, wall in phases(args.phases, args.seed):
            print(f"{name:<44} {cpu:7.2f} s CPU {wall:7.2f} s wall", flush=True)
        return
    if args.one:
        print(json.dumps(run_one(args.one[0], int(args.one[1]), args.seed, args.one[2], args.max_memory,
                                args.transductive)))
        return
    import pandas as pd

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            preds = {}
            for k, method in enumerate(args.methods):  # a method may repeat (interleaved timings)
                path = os.path.join(tmp, f"{method}_{n}_{k}.npy")
                extra = ([] if args.max_memory is None else ["--max-memory", str(args.max_memory)]) + \
                    (["--transductive"] if args.transductive else [])
                out = subprocess.run([sys.executable, __file__, "--seed", str(args.seed), *extra, "--one", method,
                                      str(n), path], check=False, capture_output=True, text=True)
                if out.returncode != 0:
                    print(out.stderr[-2000:], file=sys.stderr)
                    continue
                row = json.loads(out.stdout.strip().splitlines()[-1])
                preds.setdefault(method, []).append((len(rows), np.load(path)))
                rows.append(row)
                print(f"n={n} {method}: {row['seconds']:.1f} s wall, {row['cpu_seconds']:.1f} s CPU, "
                      f"{row['rss_gb']:.2f} GB, accuracy {row['accuracy']:.4f} (gamma_A {row['gamma_A']:.3g}, load "
                      f"{row['load']:.1f}); nodes {row.get('nodes')}, transductive {row.get('transductive')}",
                      flush=True)
            for a, b in (("vecchia", "structured"), ("vecchia-share", "structured-share"),
                         ("auto", "structured-share"), ("auto-share", "structured-share")):
                for (ia, pa), (ib, pb) in zip(preds.get(a, []), preds.get(b, []), strict=False):
                    agree = float(np.mean(pa == pb))
                    for i in (ia, ib):
                        rows[i]["agreement"] = agree
                    print(f"n={n} {a} vs {b}: same prediction on {agree:.4f} of the held-out points", flush=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    df = pd.DataFrame(rows)
    if os.path.exists(args.out):  # earlier rows kept; columns united
        df = pd.concat([pd.read_csv(args.out), df], ignore_index=True)
    df.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
