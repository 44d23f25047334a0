"""MVL-LS-optC on incomplete views against MVL-LS on the same incomplete views and optC on complete data.

mfeat (6 views, standardised), l_c = 5 labelled + u_c = 50 unlabelled per class, the rest of a 1,000-sample test
set, q of the (sample, view) entries missing at random (train and test), gamma_B = 1e-4 (the incomplete study's),
optC with 5 restarts x 10 alternations chosen by the objective (84). Prints accuracy and fit time per draw and the
time ratio incomplete optC / complete optC within one run, with the peak RSS.

    python benchmarks/bench_incomplete_optc.py [--draws 2] [--q 0.4]
"""

import argparse
import resource
import time

import numpy as np

from mvl import MVLLeastSquares, MVLLeastSquaresOptC
from mvl.data.embedded import load_mfeat
from mvl.data.missing import apply_mask, mask_at_random


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--draws", type=int, default=2)
    ap.add_argument("--q", type=float, default=0.4)
    args = ap.parse_args()
    ds = load_mfeat()
    X, sizes = np.hstack(ds.views), [V.shape[1] for V in ds.views]
    kw = dict(views=sizes, gamma_B=1e-4)
    okw = dict(n_restarts=5, n_iter=10, random_state=0)
    rows = []
    for seed in range(args.draws):
        rng = np.random.default_rng(seed)
        lab = np.concatenate([rng.permutation(np.flatnonzero(ds.y == k))[:55] for k in range(10)])
        rest = np.setdiff1d(np.arange(2000), lab)
        test = rng.permutation(rest)[:1000]
        train = lab
        y = ds.y[train].copy()
        is_lab = np.zeros(len(train), bool)
        for k in range(10):
            is_lab[np.flatnonzero(y == k)[:5]] = True
        y[~is_lab] = -1
        mu, sd = X[train].mean(0), X[train].std(0) + 1e-12
        Xtr, Xte = (X[train] - mu) / sd, (X[test] - mu) / sd
        Xtr_m = apply_mask(Xtr, mask_at_random(len(train), 6, args.q, rng), sizes)
        Xte_m = apply_mask(Xte, mask_at_random(len(test), 6, args.q, rng), sizes)
        res = {}
        for name, est, Xa, Xb in [("optC complete", MVLLeastSquaresOptC(**kw, **okw), Xtr, Xte),
                                  ("optC incomplete", MVLLeastSquaresOptC(**kw, **okw), Xtr_m, Xte_m),
                                  ("MVL-LS incomplete", MVLLeastSquares(**kw), Xtr_m, Xte_m)]:
            t0 = time.perf_counter()
            est.fit(Xa, y)
            t = time.perf_counter() - t0
            res[name] = (100 * est.score(Xb, ds.y[test]), t)
            print(f"draw {seed} q={args.q} {name:18s} acc {res[name][0]:5.1f} %  fit {t:6.2f} s", flush=True)
        print(f"draw {seed}: time ratio optC incomplete / optC complete = "
              f"{res['optC incomplete'][1] / res['optC complete'][1]:.1f}", flush=True)
        rows.append(res)
    for name in rows[0]:
        a = np.array([r[name][0] for r in rows])
        print(f"mean over {len(rows)} draws: {name:18s} {a.mean():5.1f} +- {a.std():.1f} %")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
