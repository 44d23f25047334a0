"""Peer check: mvl.MVML against scikit-multimodallearn's MVML (multimodal.kernels.mvml).

A binary task from the embedded UCI Multiple Features data (two digits, six views, Gaussian kernels with
median bandwidths from ``mvl.kernels.multiview_kernels``), a random stratified training set per seed and
the rest of the two classes as test set. Both implementations get the same precomputed kernels, the same
lambda and eta, and the same Nystrom landmarks: the peer always takes the *first* n_approx samples, so its
training samples are reordered to put our (seeded, random) landmarks first. Reported per variant and
Nystrom level: test accuracy (mean and sd over seeds) and fit time of each, and the largest relative
difference of the two decision functions on the test set.

The peer is a benchmark dependency only: ``.venv/bin/pip install scikit-multimodallearn``.

    .venv/bin/python benchmarks/bench_mvml.py                 # 3 seeds, all variants, levels 1, .24, .06
    .venv/bin/python benchmarks/bench_mvml.py --quick         # 1 seed, Nystrom levels only
    .venv/bin/python benchmarks/bench_mvml.py --digits 1 7 --n-train 200 --json out.json

BLAS runs single-threaded for both (``--threads``), which also keeps the timings stable on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import logging
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from mvl.data.embedded import load_mfeat
from mvl.kernels import multiview_kernels
from mvl import MVML

PEER_CODES = {"full": 1, "sparse": 2, "cov": 3, "identity": 4}


def split(y, digits, n_train, seed):
    rng = np.random.default_rng(seed)
    per = n_train // 2
    tr, te = [], []
    for d in digits:
        idx = rng.permutation(np.flatnonzero(y == d))
        tr.append(idx[:per])
        te.append(idx[per:])
    return rng.permutation(np.concatenate(tr)), np.concatenate(te)


def run(args):
    from multimodal.kernels.mvml import MVML as PeerMVML

    data = load_mfeat()
    rows = []
    for seed in range(args.seeds):
        tr, te = split(data.y, args.digits, args.n_train, seed)
        K, Kt = multiview_kernels([v[tr] for v in data.views], [v[te] for v in data.views])  # (n, n, m), (t, n, m)
        ytr = (data.y[tr] == args.digits[1]).astype(int)
        yte = (data.y[te] == args.digits[1]).astype(int)
        n, m = K.shape[1:]
        for variant in args.variants:
            for level in args.levels:
                ours = MVML(lmbda=args.lmbda, eta=args.eta, learn_A=variant, nystrom=level, random_state=seed,
                            n_iter=args.n_iter, n_iter_A=args.n_iter_A, kernel="precomputed")
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ours.fit(K, ytr)
                t_ours = time.perf_counter() - t0
                f_ours = ours.decision_function(Kt)
                # the peer's Nystrom uses the first n_approx samples: put our landmarks first
                if level < 1.0:
                    pos = np.searchsorted(ours.labelled_, ours.landmarks_)
                    order = np.concatenate([pos, np.setdiff1d(np.arange(n), pos)])
                    peer_level = (pos.size + 0.5) / n  # floor(peer_level * n) = p
                else:
                    order, peer_level = np.arange(n), 1.0
                # the peer's precomputed input: the per-view kernels side by side, (n, m n) and (t, m n)
                Kp = K[np.ix_(order, order)]
                X = np.hstack([Kp[:, :, p] for p in range(m)])
                Xt = np.hstack([Kt[:, order, p] for p in range(m)])
                vi = np.arange(m + 1) * n
                peer = PeerMVML(lmbda=args.lmbda, eta=args.eta, kernel="precomputed", learn_A=PEER_CODES[variant],
                                nystrom_param=peer_level, n_loops=args.peer_loops)
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    peer.fit(X, ytr[order], views_ind=vi)
                t_peer = time.perf_counter() - t0
                f_peer = np.asarray(peer.decision_function(Xt), dtype=float).ravel()
                rel = float(np.max(np.abs(f_ours - f_peer)) / max(np.max(np.abs(f_peer)), 1e-300))
                row = dict(seed=seed, variant=variant, level=level, n_train=n, n_test=len(yte),
                           acc_ours=float(np.mean(ours.predict(Kt) == yte)),
                           acc_peer=float(np.mean(peer.predict(Xt) == yte)),
                           time_ours=t_ours, time_peer=t_peer, max_rel_diff=rel)
                rows.append(row)
                print(f"seed {seed} {variant:8s} {level:5.2f}  ours {row['acc_ours']:.4f} {t_ours:7.3f}s   "
                      f"peer {row['acc_peer']:.4f} {t_peer:7.3f}s   max rel diff {rel:.2e}", flush=True)
    return rows


def summarise(rows, args):
    print(f"\nmfeat digits {args.digits[0]} vs {args.digits[1]}, n_train = {rows[0]['n_train']}, "
          f"n_test = {rows[0]['n_test']}, lambda = {args.lmbda}, eta = {args.eta}, {args.seeds} seed(s)")
    print("| variant | Nystrom | acc ours | acc peer | fit s ours | fit s peer | max rel diff f |")
    print("|---|---|---|---|---|---|---|")
    for variant in args.variants:
        for level in args.levels:
            sel = [r for r in rows if r["variant"] == variant and r["level"] == level]
            ao = np.array([r["acc_ours"] for r in sel])
            ap = np.array([r["acc_peer"] for r in sel])
            to = np.median([r["time_ours"] for r in sel])
            tp = np.median([r["time_peer"] for r in sel])
            rd = max(r["max_rel_diff"] for r in sel)
            print(f"| {variant} | {level:g} | {ao.mean():.4f} +- {ao.std():.4f} | {ap.mean():.4f} +- {ap.std():.4f} "
                  f"| {to:.3f} | {tp:.3f} | {rd:.1e} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--digits", type=int, nargs=2, default=[3, 8])
    ap.add_argument("--n-train", type=int, default=120)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--variants", nargs="+", default=["identity", "cov", "full", "sparse"],
                    choices=list(PEER_CODES))
    ap.add_argument("--levels", type=float, nargs="+", default=[1.0, 0.24, 0.06])
    ap.add_argument("--lmbda", type=float, default=0.1)
    ap.add_argument("--eta", type=float, default=1.0)
    ap.add_argument("--n-iter", type=int, default=10, help="our outer iterations")
    ap.add_argument("--n-iter-A", type=int, default=1, help="our A-steps per outer iteration")
    ap.add_argument("--peer-loops", type=int, default=6, help="the peer's n_loops")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="1 seed, Nystrom levels 0.24 and 0.06 only")
    ap.add_argument("--json", help="write the per-seed rows here")
    args = ap.parse_args()
    if args.quick:
        args.seeds, args.levels = 1, [0.24, 0.06]
    logging.disable(logging.WARNING)  # the peer logs its preconditioning notes as warnings
    with threadpool_limits(args.threads):
        rows = run(args)
    summarise(rows, args)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(dict(args=vars(args), rows=rows), fh, indent=1)


if __name__ == "__main__":
    main()
