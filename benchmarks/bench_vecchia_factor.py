"""The factorisation of solver="vecchia_direct"'s quasi-definite system at growing n: SuperLU with partial pivoting,
SuperLU in symmetric mode, qdldl (:class:`mvl.solvers.vecchia_direct.QuasiDefiniteFactor`).

What is measured
----------------
``bench_graph_regime.py``'s graph6 data and keywords (gamma_A = 1e-8) at n points: the matrix
[[M, (I - B)^T], [I - B, -D / delta]] (Vecchia's factors with q = 20), then one factorisation and one solve by the
chosen method, in this process: the factor's entries, its wall time and the process's peak RSS (data, graphs and
kernels' Vecchia factors included). One method per run, so that the peak RSS is its own.

How to run
----------
    python benchmarks/bench_vecchia_factor.py 8000 superlu-pivot
    python benchmarks/bench_vecchia_factor.py 100000 qdldl
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np
from scipy import sparse
from scipy.sparse import linalg as sla

METHODS = ("superlu-pivot", "superlu-symmetric", "qdldl")


def main():
    from mvl import MVLLeastSquares
    from mvl.solvers.graph import vecchia_factors
    from mvl.solvers.vecchia_direct import problem
    from mvl.workflow.scale import _data

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("n", type=int)
    ap.add_argument("method", choices=METHODS)
    args = ap.parse_args()
    X, ytr, _, _, sizes = _data(args.n, 1, 5, 6, (20, 30, 40), True)
    kw = dict(kernel="rbf", views=sizes, bandwidth=[1.0] * 3, gamma_A=1e-8, gamma_B=0.0, gamma_W=1.0, n_neighbors=10,
              laplacian_power=2, random_state=0)
    kernels, system = problem(MVLLeastSquares(**kw), X, ytr)
    factors = vecchia_factors(kernels)
    from mvl.solvers.graph import sparse_operator

    IB = sparse.block_diag([f[0] for f in factors], format="csr")
    d = np.concatenate([f[1] for f in factors])
    M = sparse_operator(system)
    N = M.shape[0]
    aug = sparse.bmat([[M, IB.T], [IB, sparse.diags(-d / system.delta)]], format="csc")
    rhs = np.vstack([system.rhs().reshape(N, -1), np.zeros((N, system.rhs().shape[2]))])
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    if args.method == "qdldl":
        import qdldl

        solver = qdldl.Solver(aug)
        fill = int(solver.factors()[0].nnz) + aug.shape[0]
        solver.solve(rhs[:, 0])
    else:
        opts = dict(permc_spec="MMD_AT_PLUS_A")
        if args.method == "superlu-symmetric":
            opts.update(diag_pivot_thresh=0.0, options=dict(SymmetricMode=True))
        lu = sla.splu(aug, **opts)
        fill = int(lu.L.nnz + lu.U.nnz)
        lu.solve(rhs[:, :1])
    seconds = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    print(f"n={args.n} {args.method}: nnz(M) {M.nnz}, factor entries {fill}, {seconds:.1f} s, peak RSS {rss:.2f} GB, "
          f"load {load:.1f}")


if __name__ == "__main__":
    main()
