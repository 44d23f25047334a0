"""Every benchmark in one run, and one table of the ratios.

    python benchmarks/run_all.py            # full sizes (tens of minutes on 2 cores)
    python benchmarks/run_all.py --quick    # smoke run (a few minutes)

Runs, one after the other (each in its own process, so their memory does not add up): bench_least_squares.py
(structured vs dense MVL-LS), bench_optc.py (optC vs one plain fit), bench_svm.py (MVL-SVM: ADMM, SMO,
L-BFGS-B and APG vs clarabel, and at the paper's scale) and bench_scaling.py (fit time vs n, figure in
results/benchmarks/). It also measures the machine's own dense LU rate (LAPACK dgetrf, scipy's OpenBLAS, N =
3000) and reports the MVL-LS structured solve's achieved GFLOP/s against it, from the flop count of
solve_structured: m (2 + 2/3 + 2) n^3 (H_p = M_p K_p, its LU, Q_p = H_p^-T K_p) plus 2/3 (l + n)^3 (the
coupled system). JSON of every part goes to results/benchmarks/.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "results" / "benchmarks"


def lu_rate(N=3000, repeats=3):
    """GFLOP/s of LAPACK dgetrf (2/3 N^3 flops) on a random N x N matrix, best of ``repeats``."""
    from scipy.linalg import lapack

    A = np.asfortranarray(np.random.default_rng(0).standard_normal((N, N)))
    best = np.inf
    for _ in range(repeats):
        B = A.copy(order="F")
        t0 = time.perf_counter()
        lapack.dgetrf(B, overwrite_a=True)
        best = min(best, time.perf_counter() - t0)
    return 2.0 / 3.0 * N**3 / best / 1e9


def structured_flops(n, m, l):
    return m * (2 + 2 / 3 + 2) * n**3 + 2 / 3 * (l + n) ** 3


def run(script, args, json_path):
    cmd = [sys.executable, str(HERE / script), *args, "--json", str(json_path)]
    print(f"\n=== {' '.join(cmd[1:])}", flush=True)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, check=False)
    print(f"=== {script}: exit {proc.returncode}, {time.perf_counter() - t0:.0f} s", flush=True)
    if proc.returncode != 0 or not json_path.exists():
        return None
    return json.loads(json_path.read_text())


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--skip", nargs="*", default=[], choices=["least_squares", "optc", "svm", "scaling"])
    a = ap.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    q = ["--quick"] if a.quick else []
    rate = lu_rate(1500 if a.quick else 3000)
    print(f"machine dense LU rate (dgetrf): {rate:.1f} GFLOP/s", flush=True)
    res = {}
    if "least_squares" not in a.skip:
        res["ls"] = run("bench_least_squares.py", q, OUT / "least_squares.json")
    if "optc" not in a.skip:
        res["optc"] = run("bench_optc.py", q, OUT / "optc.json")
    if "svm" not in a.skip and (HERE / "bench_svm.py").exists():
        res["svm"] = run("bench_svm.py", q, OUT / "svm.json")
    if "scaling" not in a.skip:
        res["scaling"] = run("bench_scaling.py", q, OUT / "scaling.json")

    print("\n" + "=" * 100 + "\nSummary (ratios measured within one run of each benchmark)\n" + "=" * 100)
    print(f"{'what':<62} {'value':>14} {'target':>10}")
    if res.get("ls"):
        for row in res["ls"]["compare"]:
            n, m, l = row["n"], row["m"], row["l"]
            tgt = row.get("ratio_target")
            label = f"structured vs dense MVL-LS, {row.get('name', '')} (n={n}, m={m}, l={l})"
            print(f"{label:<62} {row['ratio']:>13.1f}x {('>= ' + str(tgt)) if tgt else '':>10}")
            if row.get("ratio_fit") is not None:
                label = "  dense solve / the estimator's whole structured fit"
                print(f"{label:<62} {row['ratio_fit']:>13.1f}x {('>= ' + str(tgt)) if tgt else '':>10}")
            gf = structured_flops(n, m, l) / row["t_structured"] / 1e9
            label = f"  structured solve GFLOP/s (machine LU rate {rate:.0f})"
            print(f"{label:<62} {gf:>9.1f} ({gf / rate:.0%})")
    if res.get("optc"):
        o = res["optc"]
        label = f"optC {o['restarts']}x{o['iterations']} / one plain fit (n={o['n']}, m={o['m']})"
        print(f"{label:<62} {o['ratio']:>13.1f}x {'<= 25':>10}")
    if res.get("svm"):
        for row in res["svm"].get("rows", []):
            for key, what, tgt in (("ratio_clarabel_admm", "clarabel / ADMM (default)", ">= 20"),
                                   ("ratio_clarabel_smo", "clarabel / SMO", ""),
                                   ("admm_over_lbfgsb", "ADMM / L-BFGS-B time", "<= 1"),
                                   ("smo_over_lbfgsb", "SMO / L-BFGS-B time", "")):
                val = row.get(key)
                if isinstance(val, (int, float)):
                    label = f"MVL-SVM l={row.get('l')} {row.get('regime')}: {what} (to gap 1e-6)"
                    print(f"{label:<62} {val:>13.2f}x {tgt:>10}")
    if res.get("svm"):
        for row in res["svm"].get("scale_rows", []):
            val = row.get("svm_over_binsvm")
            if isinstance(val, (int, float)):
                label = f"MVL-SVM / MVL-binSVM fit, l={row.get('l')} P={row.get('P')}"
                print(f"{label:<62} {val:>13.2f}x {'<= 3':>10}")
    if res.get("scaling"):
        exps = res["scaling"]["exponents"]
        print(f"{'scaling exponents t ~ n^k (structured, m=2/4/7)':<62} "
              + " / ".join(f"{exps.get(f'structured_m{m}', np.nan):.2f}" for m in (2, 4, 7)))
        print(f"{'scaling exponents t ~ n^k (dense, m=2/4/7)':<62} "
              + " / ".join(f"{exps.get(f'dense_m{m}', np.nan):.2f}" for m in (2, 4, 7)))
        print(f"scaling figure: {OUT / 'scaling.png'}")
    missing = [k for k in ("ls", "optc", "svm", "scaling") if k in res and res[k] is None]
    if missing:
        print(f"FAILED benchmarks: {missing}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
