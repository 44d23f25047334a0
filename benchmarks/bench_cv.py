"""MVLLeastSquaresCV vs GridSearchCV over the same grid and folds: time, and that the selection is the same.

Problem: the embedded UCI Multiple Features data, all six views as raw features (``kernel="rbf"``), a seeded
stratified draw of ``--labelled`` labelled and ``--unlabelled`` unlabelled samples per class (10 classes).
Folds: StratifiedKFold(``--folds``, shuffled, seeded) over the labelled samples, every unlabelled sample in
every training fold (:class:`mvl.SemiSupervisedCV`). Grid: the CV estimator's default (gamma_A in {1e-5, 1e-4,
1e-3, 1e-2}, gamma_B = 0, gamma_W in {0, 1e-4, 1e-2, 1}, graphs (5, 2), (10, 2), (5, 4), (10, 4): 64 points),
and with ``--gamma-b`` also gamma_B = 1e-6 (128 points; gamma_B > 0 points cost an O(m n^3) product each in
the shared grid too). GridSearchCV fits ``MVLLeastSquares`` at every point of every fold (n_jobs=1, as the CV
estimator); both refit the best point on all the data. Printed: both wall times (best of ``--repeats``), the
ratio, and whether the selected parameters and the mean CV scores agree; the machine load before and after.

    python benchmarks/bench_cv.py                 # 10 labelled + 40 unlabelled per class, 5 folds
    python benchmarks/bench_cv.py --gamma-b --repeats 1
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--labelled", type=int, default=10, help="labelled samples per class (default 10)")
    ap.add_argument("--unlabelled", type=int, default=40, help="unlabelled samples per class (default 40)")
    ap.add_argument("--folds", type=int, default=5, help="folds of the labelled samples (default 5)")
    ap.add_argument("--gamma-b", action="store_true", help="add gamma_B = 1e-6 to the grid")
    ap.add_argument("--repeats", type=int, default=2, help="timed runs of each, best kept (default 2)")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)

    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    from mvl import MVLLeastSquares, MVLLeastSquaresCV, SemiSupervisedCV
    from mvl.data.embedded import load_mfeat

    ds = load_mfeat()
    sizes = [v.shape[1] for v in ds.views]
    rng = np.random.default_rng([21, args.seed])
    lab, unl = [], []
    for k in range(10):
        idx = rng.permutation(np.flatnonzero(ds.y == k))
        lab.append(idx[:args.labelled])
        unl.append(idx[args.labelled:args.labelled + args.unlabelled])
    idx = np.sort(np.concatenate(lab + unl))
    X = np.hstack(ds.views)[idx]
    y = np.where(np.isin(idx, np.concatenate(lab)), ds.y[idx], -1)
    labelled_cv = StratifiedKFold(args.folds, shuffle=True, random_state=args.seed)
    grid = {} if not args.gamma_b else {"gammas_B": (0.0, 1e-6)}
    print(f"bench_cv: n = {len(y)} ({args.labelled} labelled + {args.unlabelled} unlabelled per class), m = 6 views, "
          f"{args.folds} folds; load before {os.getloadavg()}", flush=True)

    def run_cv():
        return MVLLeastSquaresCV(views=sizes, cv=labelled_cv, **grid).fit(X, y)

    def run_search(params):
        points = [{k: [v] for k, v in p.items()} for p in params]
        return GridSearchCV(MVLLeastSquares(views=sizes), points, cv=SemiSupervisedCV(cv=labelled_cv)).fit(X, y)

    warnings.simplefilter("ignore")  # gamma_W = 0 points leave the unlabelled samples unused: warned per fit
    t_cv, t_gs = [], []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        cv = run_cv()
        t_cv.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        gs = run_search(cv.cv_results_["params"])
        t_gs.append(time.perf_counter() - t0)
    same = cv.best_params_ == gs.best_params_
    diff = float(np.max(np.abs(cv.cv_results_["mean_test_score"] - gs.cv_results_["mean_test_score"])))
    n_points = len(cv.cv_results_["params"])
    print(f"grid: {n_points} points x {args.folds} folds = {n_points * args.folds} fits for GridSearchCV")
    print(f"MVLLeastSquaresCV  {min(t_cv):8.2f} s   (runs: {', '.join(f'{t:.2f}' for t in t_cv)})")
    print(f"GridSearchCV       {min(t_gs):8.2f} s   (runs: {', '.join(f'{t:.2f}' for t in t_gs)})")
    print(f"speed-up GridSearchCV / MVLLeastSquaresCV = {min(t_gs) / min(t_cv):.1f}x")
    print(f"same selection: {same} ({cv.best_params_}, CV accuracy {cv.best_score_:.4f}); largest difference of "
          f"the mean CV scores {diff:.2g}")
    print(f"load after {os.getloadavg()}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
