"""Benchmark: semi-supervised multi-view learning at scale.

What is measured
----------------
Seeded multi-view manifold data (:func:`mvl.data.synthetic.make_multiview_manifold`: 4 classes on intertwined
curves, 3 views of 20 features, each a different noisy nonlinear embedding), ``--labels`` labelled points per
class, every other training point unlabelled, 2,000 held-out test points. For each n (training points) and
method, one fresh Python process fits and predicts; the table gives the fit+predict wall time, the peak RSS of
that process (``ru_maxrss``: data, kernels, graphs, solver) and the test accuracy:

* ``structured``: MVL-LS, the exact O(m n^3) solver (while its memory fits: n <= ``--structured-max``);
* ``cg``: the same problem by preconditioned CG (``solver="cg"``, tol ``--tol``, ``n_components`` centres);
* ``graph``: the same problem by CG on the symmetric pencil with the graph term exact and the kernels by Vecchia's
  sparse inverse (``solver="graph"``; tol ``--tol``: (68)'s residual or the relative objective error);
* ``nystrom-M``: the Nystrom restriction with M centres, two values of M;
* ``labelonly``: MVL-LS on the labelled points only (what the unlabelled data must beat);
* ``transductive``: MVL-LS (exact) with the test points in the fit as unlabelled points, scored on them: the
  protocol of the graph-only peers below (n + 2,000 points in the fit);
* ``graphlimit``: MVL-LS's limit gamma_A -> 0 with the test points in the graph (the graph term alone, one
  sparse LU: :func:`mvl.workflow.scale.graph_limit_scores`), transductive;
* ``labelspreading``: scikit-learn's ``LabelSpreading(kernel="knn")`` on the concatenated views (transductive:
  it is fitted on train + test points, test labels hidden, and scored on the test points);
* ``nystroem-ridge``: supervised ``Nystroem`` + ``RidgeClassifier`` on the concatenated, standardised views;
* ``laplace``, ``poisson``: graphlearning's Laplace and Poisson learning (Calder et al. 2020; optional extra
  ``peers``, reported as unavailable without it) on a kNN graph of the concatenated standardised views, transductive
  like LabelSpreading.

Hyperparameters are fixed for every n (not tuned on the test points): Gaussian views with sigma = ``--bw`` x the
median pairwise distance of the view, kNN graphs (normalized Laplacian, power 1) with k = 0.5 % of n within
[10, 500] (``--neighbors scaled``, default: the graphs' neighbourhoods keep their size as n grows; with
``--neighbors fixed`` k = 10 at every n, under which the graph stops
helping beyond ~8,000 points; :func:`mvl.workflow.scale.graph_neighbors`), gamma_A, gamma_B, gamma_W.
Two presets (``--preset``):

* ``graph`` (default): sigma = 0.1 x median, gamma_A = 1e-4, gamma_B = 1e-6, gamma_W = 1 -- chosen on a validation
  split at n = 2,000 (exact solver: validation accuracy 0.961, vs 0.889-0.912 for the neighbouring grid points);
  the regime where the graph carries the labels along the curves, and where cg's preconditioner is weak;
* ``smooth``: sigma = the median, gamma_A = 1e-5, gamma_B = 1e-6, gamma_W = 1e-2 (the paper's order of
  magnitude): unlabelled data help less, the Nystrom preconditioner captures the kernel and cg converges in
  a few tens of iterations;
* ``graph6`` / ``graph6-1e4``: 6 classes, views of 20/30/40 features standardised, sigma = 1
  (absolute), gamma_A = 1e-6 / 1e-4, gamma_B = 0, gamma_W = 1, 10-NN graphs at every n, Laplacian squared.

The growth exponent of each method is the slope of log time and log RSS against log n
over the sizes it ran. The ratios printed: structured / cg and structured / nystrom time at each n where both
ran, and whether the predictions agree.

How to run
----------
    python benchmarks/bench_scale.py                       # n = 2k, 8k, 32k, 100k
    python benchmarks/bench_scale.py --sizes 2000 8000     # some sizes
    python benchmarks/bench_scale.py --huge                # adds n = 10^6 (nystrom only)
    python benchmarks/bench_scale.py --quick               # smoke run (n = 500, 1000)
    python benchmarks/bench_scale.py --json results/benchmarks/scale.json
    python benchmarks/bench_scale.py --preset graph6 --sizes 2000 --methods structured graph cg laplace poisson

Run it on an idle machine; every method runs with the BLAS threads the machine gives (2 here). A method whose
process exceeds ``--timeout`` seconds is reported as such.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import numpy as np

from mvl.workflow.scale import NEIGHBOR_RULES, PRESETS, graph_neighbors

HERE = os.path.dirname(os.path.abspath(__file__))


def worker(args):
    """One method at one n in this process (:func:`mvl.workflow.scale.fit_one`, what the scale profile runs);
    prints one JSON line."""
    from mvl.workflow.scale import fit_one, peak_rss

    base, _, M = args.method.partition("-")
    base = {"nystroem": "ridge"}.get(base, base)
    row, pred = fit_one(base, args.n, preset=args.preset, seed=args.seed, labels=args.labels,
                        n_components=int(M) if M.isdigit() else args.centres, tol=args.tol, max_iter=args.max_iter,
                        bw=args.bw, gamma_A=args.gamma_A, gamma_B=args.gamma_B, gamma_W=args.gamma_W,
                        neighbors=args.neighbors)
    if args.save_pred:
        np.save(args.save_pred, pred)
    row.update(method=args.method, rss=peak_rss(), warnings=[row["warnings"]] if row["warnings"] else [])
    row = {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in row.items()}
    print(json.dumps(row))


def run_one(method, n, args, save_pred=None):
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", method, "--n", str(n), "--preset", args.preset,
           "--seed", str(args.seed),
           "--labels", str(args.labels), "--gamma-A", str(args.gamma_A), "--gamma-B", str(args.gamma_B),
           "--gamma-W", str(args.gamma_W), "--bw", str(args.bw), "--tol", str(args.tol),
           "--max-iter", str(args.max_iter), "--centres", str(args.centres), "--neighbors", args.neighbors]
    if save_pred:
        cmd += ["--save-pred", save_pred]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"method": method, "n": n, "error": f"timeout > {args.timeout} s"}
    if out.returncode != 0:
        return {"method": method, "n": n, "error": (out.stderr.strip().splitlines() or ["?"])[-1][:160]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def slope(xs, ys):
    if len(xs) < 2:
        return float("nan")
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 8000, 32000, 100000])
    ap.add_argument("--huge", action="store_true", help="also n = 1,000,000 (nystrom only)")
    ap.add_argument("--quick", action="store_true", help="smoke run: n = 500, 1000")
    ap.add_argument("--methods", nargs="+", default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--labels", type=int, default=5, help="labelled points per class")
    ap.add_argument("--preset", choices=sorted(PRESETS), default="graph")
    ap.add_argument("--neighbors", choices=NEIGHBOR_RULES, default="scaled",
                    help="kNN graphs: k = 0.5%% of n within [10, 500] (scaled) or 10 (fixed)")
    ap.add_argument("--gamma-A", type=float, default=None, help="overrides the preset")
    ap.add_argument("--gamma-B", type=float, default=None)
    ap.add_argument("--gamma-W", type=float, default=None)
    ap.add_argument("--bw", type=float, default=None, help="Gaussian sigma as a multiple of the median distance")
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--max-iter", type=int, default=300)
    ap.add_argument("--centres", type=int, default=1000, help="n_components of cg's preconditioner")
    ap.add_argument("--nystrom", type=int, nargs=2, default=[1000, 4000], help="the two M of nystrom")
    ap.add_argument("--structured-max", type=int, default=8000)
    ap.add_argument("--cg-max", type=int, default=100000)
    ap.add_argument("--timeout", type=float, default=3600)
    ap.add_argument("--json", default=None)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--n", type=int, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--save-pred", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    for key, value in PRESETS[args.preset].items():
        if key in ("bw", "gamma_A", "gamma_B", "gamma_W") and getattr(args, key) is None:
            setattr(args, key, value)
    if args.worker:
        args.method = args.worker
        return worker(args)
    sizes = [500, 1000] if args.quick else list(args.sizes) + ([1_000_000] if args.huge else [])
    if args.quick:
        args.nystrom = [100, 400]
        args.centres = 200
    nys = [f"nystrom-{M}" for M in args.nystrom]
    methods = args.methods or ["structured", "cg", *nys, "labelonly", "labelspreading",
                               "nystroem-ridge"]
    absolute = PRESETS[args.preset].get("absolute_bw", False)
    n_neighbors = PRESETS[args.preset].get("n_neighbors")
    print(f"bench_scale: preset {args.preset}, sizes {sizes}, methods {methods}, gammas A={args.gamma_A} "
          f"B={args.gamma_B} W={args.gamma_W}, sigma = {args.bw}{'' if absolute else ' x median'}, kNN "
          f"{'fixed by the preset' if n_neighbors else args.neighbors} (k = "
          f"{', '.join(str(n_neighbors or graph_neighbors(n, args.neighbors)) for n in sizes)}), {args.labels} "
          f"labels per class, cpus {os.cpu_count()}", flush=True)
    rows = []
    import tempfile

    tmp = tempfile.mkdtemp(prefix="bench_scale_")
    for n in sizes:
        for method in methods:
            if method == "structured" and n > args.structured_max:
                continue
            if method == "cg" and n > args.cg_max:
                continue
            if method == "labelspreading" and n > 100_000:
                continue
            if method.startswith("nystrom-") and int(method.split("-")[1]) > n:
                continue
            pred = os.path.join(tmp, f"{method}_{n}.npy") if method in ("structured", "cg", "graph", *nys) else None
            r = run_one(method, n, args, pred)
            r["pred"] = pred
            rows.append(r)
            if "error" in r:
                print(f"  n={n:>8} {method:<16} {r['error']}", flush=True)
            elif r.get("unavailable"):
                print(f"  n={n:>8} {method:<16} unavailable ({r.get('note', '')})", flush=True)
            else:
                it = f" iters {r['n_iter']} res {r['residual']:.1e}" if r.get("n_iter") else ""
                print(f"  n={n:>8} {method:<16} {r['seconds']:9.1f} s {r['rss'] / 1e9:7.2f} GB  acc "
                      f"{r['accuracy']:.3f}{it}" + (f"  WARN {r['warnings'][0]}" if r.get("warnings") else ""),
                      flush=True)
    print("\nratios (same n, same process layout):")
    for n in sizes:
        by = {r["method"]: r for r in rows if r["n"] == n and "error" not in r and not r.get("unavailable")}
        if "structured" in by:
            for other in ["cg", "graph", *nys]:
                if other in by:
                    same = float(np.mean(np.load(by["structured"]["pred"]) == np.load(by[other]["pred"])))
                    ratio = by["structured"]["seconds"] / by[other]["seconds"]
                    print(f"  n={n}: structured / {other} time = {ratio:.1f}"
                          f", predictions equal on {100 * same:.1f} % of the test points, accuracy gap "
                          f"{by['structured']['accuracy'] - by[other]['accuracy']:+.3f}")
        if "laplace" in by:
            for other in ["structured", "cg", "graph", *nys]:
                if other in by:
                    gap = by[other]["accuracy"] - by["laplace"]["accuracy"]
                    print(f"  n={n}: accuracy {other} - laplace = {gap:+.3f}")
        if "cg" in by:
            for other in nys:
                if other in by:
                    print(f"  n={n}: accuracy cg - {other} = {by['cg']['accuracy'] - by[other]['accuracy']:+.3f}, "
                          f"time {other} / cg = {by[other]['seconds'] / by['cg']['seconds']:.2f}")
    print("\ngrowth exponents (time ~ n^k, RSS ~ n^k, over the sizes each method ran):")
    for method in methods:
        ok = [r for r in rows if r["method"] == method and "error" not in r and not r.get("unavailable")]
        if len(ok) >= 2:
            ns = [r["n"] for r in ok]
            print(f"  {method:<16} time k = {slope(ns, [r['seconds'] for r in ok]):.2f}, RSS k = "
                  f"{slope(ns, [r['rss'] for r in ok]):.2f}  (n = {ns[0]}..{ns[-1]})")
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json + ".tmp", "w") as fh:
            json.dump({"args": vars(args), "rows": rows}, fh, indent=1)
        os.replace(args.json + ".tmp", args.json)


if __name__ == "__main__":
    main()
