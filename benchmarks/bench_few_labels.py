"""What the package defaults give with few labels: ``MVLLeastSquares(views=sizes)`` on the peers study's draws.

What is measured
----------------
For each data set, seed and number of labels per class (and, for USPST, its BNS-2006 transductive splits), the
fit with every parameter at its default (``loss="auto"``, ``solver="auto"``), on the peers study's points and draws
(:mod:`mvl.workflow.peers`: every point of the data set, each view standardised, l_c labelled points per class
drawn with :func:`mvl.workflow.peers.draw_labelled`, the BNS split ``seed``), -1 on the unlabelled points: the
transductive accuracy on the unlabelled points, the data term and the solver the fit chose (``loss_``,
``solver_``). The rows are mean ± std over the seeds.

The draws are the paper profile's peers study's, so its Poisson-learning column
(``benchmarks/results/peers.csv``) is the graph method on the same labelled points; with ``--check`` the script
runs graphlearning's Poisson learning on the same draws and prints its mean beside that file's (not stored: the
number has one source, ``peers.csv``).

Usage::

    python benchmarks/bench_few_labels.py --data-mirror /path/to/data          # mfeat and USPST, seeds 0-9
    python benchmarks/bench_few_labels.py --datasets mfeat --seeds 0 1 --check

writes ``benchmarks/results/few_labels.csv``.
"""

from __future__ import annotations

import argparse
import csv
import os
import platform
import time
import warnings
from pathlib import Path

import numpy as np

from mvl import MVLLeastSquares
from mvl.workflow.peers import draw_labelled, fit_graph_learning, load_peer_data, standardise

OUT = Path(__file__).resolve().parent / "results" / "few_labels.csv"
NAMES = {"mfeat": "mfeat (n = 2,000, 6 views)", "uspst": "USPST (n = 2,007, 1 view)"}


def default_fit(views, y, labelled):
    """(accuracy on the unlabelled points, loss_, solver_, seconds) of ``MVLLeastSquares(views=sizes)``."""
    X = np.hstack(views)
    yy = np.full(len(y), -1, dtype=np.int64)
    yy[labelled] = y[labelled]
    unl = yy == -1
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fit's warnings are not what is measured (none is expected here)
        est = MVLLeastSquares(views=[v.shape[1] for v in views]).fit(X, yy)
    pred = est.predict(X)
    return float(np.mean(pred[unl] == y[unl])), est.loss_, est.solver_, time.perf_counter() - t0


def draws(y, bns, seed, labels_per_class):
    """(setting, l_c, labelled indices) of one seed, as :func:`mvl.workflow.peers.run_peers` draws them."""
    out = [("stratified", lc, idx) for lc, idx in draw_labelled(y, labels_per_class, seed).items()]
    if bns is not None and seed < len(bns):
        lab = np.sort(bns[seed])
        out.append(("bns", round(len(lab) / len(np.unique(y))), lab))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--datasets", nargs="+", default=["mfeat", "uspst"], choices=sorted(NAMES))
    ap.add_argument("--seeds", nargs="+", type=int, default=list(range(10)))
    ap.add_argument("--labels", nargs="+", type=int, default=[1, 5])
    ap.add_argument("--data-mirror", default=None, help="a folder with the data files (offline)")
    ap.add_argument("--check", action="store_true", help="also Poisson learning on the same draws (printed)")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    data_config = {"mirror": args.data_mirror, "offline": True} if args.data_mirror else None
    cells = {}
    for ds in args.datasets:
        views, y, bns = load_peer_data(ds, data_config)
        views = [standardise(v) for v in views]
        for seed in args.seeds:
            for setting, lc, labelled in draws(y, bns, seed, args.labels):
                acc, loss, solver, sec = default_fit(views, y, labelled)
                rec = dict(acc=acc, choice=f"{loss}, {solver}", seconds=sec)
                if args.check:
                    pred, _, _ = fit_graph_learning(views, y, labelled, 10, {}, "poisson", "concat")
                    unl = np.ones(len(y), dtype=bool)
                    unl[labelled] = False
                    rec["poisson"] = float(np.mean(pred[unl] == y[unl]))
                cells.setdefault((ds, setting, lc), []).append(rec)
                print(f"{ds} seed {seed} {setting} l_c={lc}: {100 * acc:.1f} % ({loss}, {solver}, {sec:.1f} s)"
                      + (f"; Poisson learning {100 * rec['poisson']:.1f} %" if args.check else ""), flush=True)
    rows = []
    for (ds, setting, lc), recs in cells.items():
        acc = 100 * np.array([r["acc"] for r in recs])
        choices = sorted({r["choice"] for r in recs})
        label = (f"{NAMES[ds]}, l_c = {lc}" if setting == "stratified"
                 else f"{NAMES[ds].split(' (')[0]}, BNS-2006 splits (l = {lc * 10})")
        rows.append([label, f"{acc.mean():.1f} +- {acc.std(ddof=1):.1f}" if len(acc) > 1 else f"{acc[0]:.1f}",
                     str(len(acc)), "; ".join(choices), f"{np.mean([r['seconds'] for r in recs]):.1f}"])
        if args.check:
            pois = 100 * np.array([r["poisson"] for r in recs])
            spread = pois.std(ddof=1) if len(pois) > 1 else 0.0
            print(f"check {label}: Poisson learning {pois.mean():.1f} +- {spread:.1f}")
    header = ["data set and labels", "package defaults: accuracy (%)", "draws", "the fit chose (loss_, solver_)",
              "seconds per fit"]
    cmd = ("python benchmarks/bench_few_labels.py" + (f" --datasets {' '.join(args.datasets)}"
                                                       if args.datasets != ["mfeat", "uspst"] else "")
           + (" --data-mirror DATA" if args.data_mirror else "") + (" --check" if args.check else ""))
    with open(args.out, "w", newline="") as fh:
        fh.write("# title: The package defaults with few labels: MVLLeastSquares(views=sizes) on the peers study's "
                 "draws (transductive accuracy % on the unlabelled points, mean +- std over the draws)\n")
        fh.write(f"# command: {cmd}\n")
        fh.write(f"# machine: {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}, shared "
                 "with other jobs "
                 "(seconds are upper bounds)\n")
        fh.write("# source: the script's rows; the draws are the paper profile's peers study's (seeds "
                 f"{args.seeds[0]}-{args.seeds[-1]}; USPST: its BNS-2006 splits), Poisson learning on them in "
                 "benchmarks/results/peers.csv\n")
        csv.writer(fh, lineterminator="\n").writerows([header, *rows])
    print(f"-> {args.out}")


if __name__ == "__main__":
    main()
