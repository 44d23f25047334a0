"""The few-label term on Vecchia's sparse precision (:func:`mvl.solvers.poisson_sparse.solve_poisson_sparse`): its
three factorisations, and the kNN graph's exact (scikit-learn) against approximate (hnswlib) neighbour search.

What is measured
----------------
Multi-view manifold data (:func:`mvl.data.synthetic.make_multiview_manifold`: 3 views of 20 features, 4 classes,
1 labelled point per class), Gaussian kernels of bandwidth 1, 10-NN graphs (kernel weights, unnormalised
Laplacian), gamma_A = 1e-5, gamma_B = 0, gamma_W = 1 (the views decouple: one sparse system of size n per view),
Vecchia with q = 20. Per n and factorisation (qdldl, cholespy, splu): the solve's wall time (factorisation + solve,
``info["factor_seconds"]``) and the whole call's, with the Vecchia factors and Laplacians given; per n the graphs'
neighbour search over the 3 views by ``exact`` and ``hnsw`` (:func:`mvl.graph.sparse_knn_weights`). Every cell
runs in its own process, so that its peak RSS (``ru_maxrss``, data and setup included) is its own. Ratios are
against the fastest cell of the same group in the same run.

How to run
----------
    python benchmarks/bench_poisson_sparse.py            # n = 5,000 and 20,000
    python benchmarks/bench_poisson_sparse.py --large    # and 100,000
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

FACTORISATIONS = ("qdldl", "cholespy", "splu")
SEARCHES = ("exact", "hnsw")
OUT = Path(__file__).resolve().parent / "results" / "sparse_poisson.csv"
M_VIEWS, CLASSES, FEATURES, K_NN, SIGMA = 3, 4, 20, 10, 1.0
GAMMA_A, GAMMA_B, GAMMA_W = 1e-5, 0.0, 1.0


def _data(n):
    from mvl.data.synthetic import make_multiview_manifold
    from mvl.kernel_blocks import ViewKernels

    d = make_multiview_manifold(n, n_classes=CLASSES, n_views=M_VIEWS, n_features=FEATURES, random_state=0)
    labelled = np.array([np.flatnonzero(d.y == k)[0] for k in range(CLASSES)])
    kernels = ViewKernels([np.asarray(V, dtype=np.float64) for V in d.views], "rbf", [SIGMA] * M_VIEWS, max_memory=0)
    return kernels, labelled, np.eye(CLASSES)[d.y[labelled]]


def _cell(n, kind, what):
    """One measurement in this process: a dict of its numbers."""
    from mvl.graph import sparse_knn_weights, sparse_laplacian
    from mvl.solvers.poisson_sparse import solve_poisson_sparse, view_vecchia_factors

    kernels, labelled, Y_L = _data(n)
    if kind == "knn":
        from mvl.kernel_blocks import ViewKernels

        warm = ViewKernels([V[:200] for V in kernels.views], "rbf", [SIGMA] * M_VIEWS, max_memory=0)
        sparse_knn_weights(warm, 0, K_NN, algorithm=what)  # imports and thread pools outside the timing
        t0 = time.perf_counter()
        for p in range(M_VIEWS):
            sparse_knn_weights(kernels, p, K_NN, algorithm=what)
        out = dict(seconds=time.perf_counter() - t0)
    else:
        Ls = [sparse_laplacian(sparse_knn_weights(kernels, p, K_NN), normalized=False) for p in range(M_VIEWS)]
        idx = [np.arange(n)] * M_VIEWS
        factors = view_vecchia_factors(kernels, idx, 20)
        fit = solve_poisson_sparse(kernels, labelled, Y_L, np.full(M_VIEWS, 1.0 / M_VIEWS), GAMMA_A, GAMMA_B, GAMMA_W,
                                   Ls, neighbours=20, factorisation=what, factors=factors)
        if fit.info["factorisation"] != what:
            raise RuntimeError(f"{what} is not importable (got {fit.info['factorisation']})")
        out = dict(seconds=fit.info["factor_seconds"], total=fit.info["seconds"], fill=fit.info["fill"],
                   residual=fit.info["residual"])
    out["rss_gb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    return out


def _run(n, kind, what, timeout):
    cmd = [sys.executable, __file__, "--cell", str(n), kind, what]
    load = os.getloadavg()[0]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return dict(error=f"stopped after {timeout} s", load=load)
    if p.returncode:
        return dict(error=(p.stderr.strip().splitlines() or ["failed"])[-1][:120], load=load)
    res = json.loads(p.stdout.strip().splitlines()[-1])
    res["load"] = load
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[5000, 20000])
    ap.add_argument("--large", action="store_true", help="add n = 100,000")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per cell")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--cell", nargs=3, metavar=("N", "KIND", "WHAT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.cell:
        print(json.dumps(_cell(int(args.cell[0]), args.cell[1], args.cell[2])))
        return
    sizes = args.sizes + ([100000] if args.large else [])
    rows, loads = [], []
    print(f"{'n':>7} {'stage':>14} {'method':>9} {'seconds':>9} {'ratio':>6} {'whole call s':>12} {'factor nnz':>11} "
          f"{'residual':>9} {'peak RSS GB':>11}")
    for n in sizes:
        for kind, methods in (("factorisation", FACTORISATIONS), ("knn", SEARCHES)):
            res = {w: _run(n, kind, w, args.timeout) for w in methods}
            loads += [r["load"] for r in res.values()]
            best = min((r["seconds"] for r in res.values() if "seconds" in r), default=np.nan)
            for w, r in res.items():
                row = dict(n=n, stage="solve" if kind == "factorisation" else "kNN graph (3 views)", method=w)
                if "error" in r:
                    row.update(seconds=r["error"], ratio="", total="", fill="", residual="", rss="")
                else:
                    row.update(seconds=f"{r['seconds']:.2f}", ratio=f"{r['seconds'] / best:.2f}",
                               total=f"{r['total']:.2f}" if "total" in r else "",
                               fill=str(r.get("fill", "")), residual=f"{r['residual']:.1e}" if "residual" in r else "",
                               rss=f"{r['rss_gb']:.2f}")
                rows.append(row)
                print(f"{n:>7} {kind:>14} {w:>9} {row['seconds']:>9} {row['ratio']:>6} {row['total']:>12} "
                      f"{row['fill']:>11} {row['residual']:>9} {row['rss']:>11}", flush=True)
    note = (f"{os.cpu_count()} cores shared with other jobs (contended; load {min(loads):.1f}-{max(loads):.1f}), "
            f"{platform.machine()}, Python {platform.python_version()}, run under nice -n 5")
    print(f"\nmachine: {note}")
    if args.no_write:
        return
    header = ["n", "stage", "method", "seconds", "ratio to fastest", "whole call seconds", "factor entries",
              "relative residual", "peak RSS GB"]
    lines = ["# title: The few-label term's sparse solve (3 views, 10-NN graphs, q = 20, gamma_A = 1e-5, gamma_B = 0, "
             "gamma_W = 1, 1 label per class) by factorisation, and the kNN graphs by neighbour search",
             f"# command: python benchmarks/bench_poisson_sparse.py{' --large' if args.large else ''}",
             f"# machine: {note}",
             "# source: the script's table, one process per cell; seconds = factorisation + solve (solve rows) or "
             "neighbour search + weights (kNN rows); factor entries: qdldl's L plus diagonal, splu's L plus U, "
             "cholespy's the assembled SPD matrix (CHOLMOD's factor is not exposed); "
             "ratio against the fastest of the same n and stage in this run",
             ",".join(header)]
    lines += [",".join(str(r[k]) for k in ("n", "stage", "method", "seconds", "ratio", "total", "fill", "residual",
                                           "rss")) for r in rows]
    OUT.parent.mkdir(exist_ok=True)
    tmp = OUT.with_suffix(".csv.tmp")
    tmp.write_text("\n".join(lines) + "\n")
    os.replace(tmp, OUT)
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
