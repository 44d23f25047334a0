"""Scaling study: MVL-LS fit time vs n for m in {2, 4, 7}, structured and dense, with fitted exponents.

The structured solver costs O(m n^3) and the dense textbook system O((n m)^3); this measures both on the
problems of bench_least_squares (Gaussian kernels, l = 0.8 n labelled, P = 10, all gammas > 0) for
n = 250 ... 4000 and draws a log-log figure with the least-squares slope of log t vs log n (fitted on
n >= 500) per solver and m. The dense solver is run only while its (n m)^2 system fits comfortably
in memory (n m <= --dense-max, default 6000: about 1.7 GB at the peak).

    python benchmarks/bench_scaling.py                    # figure results/benchmarks/scaling.{png,pdf}
    python benchmarks/bench_scaling.py --quick            # n <= 1000
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_least_squares import GAMMA_A, GAMMA_B, GAMMA_W, make_problem, write_json  # noqa: E402

from mvl.graph import view_laplacians  # noqa: E402
from mvl.solvers.dense import solve_dense  # noqa: E402
from mvl.solvers.structured import solve_structured  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def time_fit(solver, K, labelled, Y, c, L, repeats):
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        solver(K, labelled, Y, c, GAMMA_A, GAMMA_B, GAMMA_W, L)
        best = min(best, time.perf_counter() - t0)
    return best


def fit_exponent(ns, ts, n_min=500):
    ns, ts = np.asarray(ns, float), np.asarray(ts, float)
    keep = (ns >= n_min) & np.isfinite(ts)
    if keep.sum() < 2:  # e.g. the dense solver at m = 7 (memory cap): use every point there is
        keep = np.isfinite(ts)
    if keep.sum() < 2:
        return np.nan
    return float(np.polyfit(np.log(ns[keep]), np.log(ts[keep]), 1)[0])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="n in {250, 500, 1000}")
    ap.add_argument("--ns", type=int, nargs="+", default=None)
    ap.add_argument("--ms", type=int, nargs="+", default=[2, 4, 7])
    ap.add_argument("--dense-max", type=int, default=6000, help="largest n m for the dense solver")
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--out", default=str(ROOT / "results" / "benchmarks" / "scaling"),
                    help="figure path without suffix (.png and .pdf are written)")
    ap.add_argument("--json", metavar="PATH")
    a = ap.parse_args(argv)
    ns = a.ns or ([250, 500, 1000] if a.quick else [250, 500, 1000, 2000, 4000])
    rows = []
    print(f"{'n':>5} {'m':>2} {'structured s':>13} {'dense s':>10}", flush=True)
    for m in a.ms:
        for n in ns:
            l, P = int(0.8 * n), 10
            K, labelled, Y, c = make_problem(n, m, P, l)
            L = view_laplacians(K)
            t_s = time_fit(solve_structured, K, labelled, Y, c, L, a.repeats)
            t_d = time_fit(solve_dense, K, labelled, Y, c, L, 1) if n * m <= a.dense_max else np.nan
            rows.append({"n": n, "m": m, "l": l, "P": P, "t_structured": t_s, "t_dense": t_d})
            print(f"{n:>5} {m:>2} {t_s:>13.3f} {t_d:>10.3f}", flush=True)
            del K, L
    exps = {}
    for m in a.ms:
        sub = [r for r in rows if r["m"] == m]
        for solver in ("structured", "dense"):
            exps[f"{solver}_m{m}"] = fit_exponent([r["n"] for r in sub], [r[f"t_{solver}"] for r in sub])
    print("exponents of t ~ n^k (n >= 500, else all n): " + ", ".join(f"{k} {v:.2f}" for k, v in exps.items()))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 4.5))
    for i, m in enumerate(a.ms):
        sub = [r for r in rows if r["m"] == m]
        for solver, ls in (("structured", "-"), ("dense", "--")):
            x = [r["n"] for r in sub if np.isfinite(r[f"t_{solver}"])]
            y = [r[f"t_{solver}"] for r in sub if np.isfinite(r[f"t_{solver}"])]
            if x:
                ax.loglog(x, y, ls, marker="o", color=f"C{i}",
                          label=f"{solver}, m={m} (slope {exps[f'{solver}_m{m}']:.2f})")
    ax.set_xlabel("n (training points)")
    ax.set_ylabel("fit time (s)")
    ax.set_title("MVL-LS fit time: structured O(m n^3) vs dense O((nm)^3)")
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    for suffix in (".png", ".pdf"):
        tmp = out.with_name(f".{out.name}.tmp{suffix}")
        fig.savefig(tmp)
        tmp.replace(out.with_suffix(suffix))
    print(f"figure: {out.with_suffix('.png')}, {out.with_suffix('.pdf')}")
    if a.json:
        write_json(a.json, {"benchmark": "bench_scaling", "rows": rows, "exponents": exps})
    return 0


if __name__ == "__main__":
    sys.exit(main())
