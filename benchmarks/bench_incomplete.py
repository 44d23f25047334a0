"""Incomplete multi-view data: MVL-LS on the views each sample has vs complete data, mean imputation and
the best single view; and the cost of the incomplete fit against the complete fit at the same n.

Protocol: mfeat (6 views, standardised by a StandardScaler fitted on the training samples, which ignores NaN), per
draw l_c = 5 labelled and u_c = 50 unlabelled samples per class (550 training samples), the other 1450 samples for
test; a fraction q of the (sample, view) entries of the training AND test samples is missing at random
(:func:`mvl.data.missing.mask_at_random`: every sample keeps >= 1 view), plus two structured patterns: blocks of
samples (10 random blocks, each lacking the same 2 views, :func:`mvl.data.missing.mask_sample_blocks`, q = 1/3), and
every sample of class k lacking views k mod 6 and (k + 1) mod 6 (:func:`mvl.data.missing.mask_class_views`,
q = 1/3; there the absence itself tells the class apart, so it is easier, not harder). Methods, all
``MVLLeastSquares(views=sizes, **params)``:

- incomplete: the NaN rows themselves (:mod:`mvl.solvers.incomplete`);
- complete: the same samples with every view (the reference the missing views are measured against);
- mean imputation: ``SimpleImputer(strategy="mean")`` after the scaler (the training means);
- best single view: one view (mean imputation of its missing rows), the best of the 6 on the test set (optimistic).

``--gamma-B`` sets the between-view weight (default "auto", the estimator's default); with views missing it is the term
that carries the labels across views at the unlabelled samples (:mod:`mvl.solvers.incomplete`). ``--sweep`` selects it:
incomplete-fit accuracy for gamma_B in {0, 1e-5, 3e-5, 1e-4, 3e-4, 1e-3} at q = 0.4 and 0.6 on 3 validation draws
(seeds disjoint from the reported draws' seeds). Fit time: the ``fit()`` wall time, incomplete / complete within one
draw (the machine may be shared: ratios only).

    python benchmarks/bench_incomplete.py                 # 5 draws, q in {0, 0.2, 0.4, 0.6} + the two patterns
    python benchmarks/bench_incomplete.py --gamma-B 1e-4
    python benchmarks/bench_incomplete.py --sweep         # the selection of gamma_B on validation draws
    python benchmarks/bench_incomplete.py --quick         # 1 draw
    python benchmarks/bench_incomplete.py --timing        # cost only: best of 5 interleaved fits per q
    python benchmarks/bench_incomplete.py --timing-cg     # solver "cg" on incomplete views: vs "structured", vs
                                                          # "cg" on the complete views (best of 3 interleaved)
    python benchmarks/bench_incomplete.py --timing-cg-n 3000  # cg, nystrom at n = 3000 (synthetic views)
"""

from __future__ import annotations

import argparse
import resource
import time
import warnings

import numpy as np
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from mvl import MVLLeastSquares
from mvl.data.embedded import load_mfeat
from mvl.data.missing import apply_mask, mask_at_random, mask_class_views, mask_sample_blocks


def draw(y, l_c, u_c, rng):
    """Indices (train, test) and the training labels with -1 for the unlabelled: l_c + u_c per class for training."""
    lab, unl = [], []
    for k in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == k))
        lab.append(idx[:l_c])
        unl.append(idx[l_c:l_c + u_c])
    lab, unl = np.concatenate(lab), np.concatenate(unl)
    train = np.concatenate([lab, unl])
    test = np.setdiff1d(np.arange(y.size), train)
    y_train = np.concatenate([y[lab], -np.ones(unl.size, dtype=y.dtype)])
    return train, test, y_train


def timed_fit(model, X, y):
    t0 = time.perf_counter()
    model.fit(X, y)
    return time.perf_counter() - t0


def sweep(X_all, y_all, sizes, args, gammas=(0.0, 1e-5, 3e-5, 1e-4, 3e-4, 1e-3), qs=(0.4, 0.6), draws=3):
    """Incomplete-fit accuracy per gamma_B on validation draws (seeds 500 + d, disjoint from the reported 1000 + d)."""
    warnings.simplefilter("ignore")
    acc = np.zeros((len(qs), len(gammas), draws))
    for d in range(draws):
        rng = np.random.default_rng(500 + d)
        train, test, y_train = draw(y_all, args.l_c, args.u_c, rng)
        for a, q in enumerate(qs):
            mrng = np.random.default_rng([600 + d, int(1000 * q)])
            Mtr, Mte = mask_at_random(len(train), len(sizes), q, mrng), mask_at_random(len(test), len(sizes), q, mrng)
            Xtr_m, Xte_m = apply_mask(X_all[train], Mtr, sizes), apply_mask(X_all[test], Mte, sizes)
            for b, g in enumerate(gammas):
                model = make_pipeline(StandardScaler(), MVLLeastSquares(views=sizes, gamma_B=g)).fit(Xtr_m, y_train)
                acc[a, b, d] = model.score(Xte_m, y_all[test])
                print(f"validation draw {d} q={q:g} gamma_B={g:g}: {acc[a, b, d]:.4f}", flush=True)
    print("\n| gamma_B | " + " | ".join(f"q = {q:g}" for q in qs) + " |")
    print("|---|" + "---|" * len(qs))
    for b, g in enumerate(gammas):
        print(f"| {g:g} | " + " | ".join(f"{100 * acc[a, b].mean():.1f}" for a in range(len(qs))) + " |")


def timing(X_all, y_all, sizes, args, reps=5):
    """Fit time (whole fit(): kernels, graphs, solve) and solve time (``fit_seconds_``) of the incomplete fit over
    the complete fit on the same 550 training samples, best of ``reps`` interleaved repetitions per q."""
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(1000)
    train, _, y_train = draw(y_all, args.l_c, args.u_c, rng)
    Xtr = StandardScaler().fit_transform(X_all[train])
    print("| q | fit complete (s) | fit incomplete (s) | ratio | solve complete (s) | solve incomplete (s) | ratio |")
    print("|---|---|---|---|---|---|---|")
    for q in (0.2, 0.4, 0.6):
        Xm = apply_mask(Xtr, mask_at_random(len(train), len(sizes), q, np.random.default_rng(7)), sizes)
        best = {"c": [np.inf, np.inf], "i": [np.inf, np.inf]}
        for _ in range(reps):
            for key, data in (("c", Xtr), ("i", Xm)):
                model = MVLLeastSquares(views=sizes, gamma_B=args.gamma_B)
                t = timed_fit(model, data, y_train)
                best[key] = [min(best[key][0], t), min(best[key][1], model.fit_seconds_)]
        (fc, sc), (fi, si) = best["c"], best["i"]
        print(f"| {q:g} | {fc:.3f} | {fi:.3f} | {fi / fc:.2f} | {sc:.3f} | {si:.3f} | {si / sc:.2f} |", flush=True)
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def timing_cg(X_all, y_all, sizes, args, reps=3):
    """Solver "cg" on incomplete views (:mod:`mvl.solvers.system` with the presence mask) at the same 550 training
    samples: its fit time over the structured incomplete fit and over the "cg" fit of the complete views, best of
    ``reps`` interleaved repetitions per q; its iterations, and the largest difference of its test decision values
    from the structured incomplete fit's (relative to their largest value; tol 1e-8). A difference above the tol
    is the graphs': the sparse kNN graph of "cg" (scikit-learn's NearestNeighbors on the features) and the dense
    one of "structured" (ranking the kernel rows) can break ties between equally distant neighbours differently
    (mfeat's 6-feature "mor" view has them); with the same Laplacians the two solutions agree to ~1e-10."""
    warnings.simplefilter("ignore")
    rng = np.random.default_rng(1000)
    train, test, y_train = draw(y_all, args.l_c, args.u_c, rng)
    scaler = StandardScaler().fit(X_all[train])
    Xtr, Xte = scaler.transform(X_all[train]), scaler.transform(X_all[test])
    print("| q | structured incomplete (s) | cg incomplete (s) | cg / structured | cg complete (s) | "
          "cg incomplete / complete | iterations incomplete, complete | max rel. diff. |")
    print("|---|---|---|---|---|---|---|---|")
    kw = dict(views=sizes, gamma_B=args.gamma_B)
    cg = dict(solver="cg", tol=1e-8, random_state=0, **kw)
    for q in (0.2, 0.4, 0.6):
        mrng = np.random.default_rng(7)
        Xm = apply_mask(Xtr, mask_at_random(len(train), len(sizes), q, mrng), sizes)
        Xtm = apply_mask(Xte, mask_at_random(len(test), len(sizes), q, mrng), sizes)
        best = {"s": np.inf, "i": np.inf, "c": np.inf}
        models = {}
        for _ in range(reps):
            for key, data, params in (("s", Xm, dict(solver="structured", **kw)), ("i", Xm, cg), ("c", Xtr, cg)):
                models[key] = MVLLeastSquares(**params)
                best[key] = min(best[key], timed_fit(models[key], data, y_train))
        F, Fs = models["i"].decision_function(Xtm), models["s"].decision_function(Xtm)
        diff = np.abs(F - Fs).max() / np.abs(Fs).max()
        print(f"| {q:g} | {best['s']:.3f} | {best['i']:.3f} | {best['i'] / best['s']:.2f} | {best['c']:.3f} | "
              f"{best['i'] / best['c']:.2f} | {models['i'].n_iter_}, {models['c'].n_iter_} | {diff:.1e} |",
              flush=True)
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def timing_cg_n(n, reps=3):
    """"cg" and "nystrom" (1000 centres) at n training samples of :func:`mvl.data.synthetic.make_multiview_manifold`
    (3 views of 10 features, 10 classes, 20 labels per class), the kernels recomputed by tiles in every product
    (``max_memory`` below their size): fit time on incomplete views (q = 0.2, 0.4) over the complete fit, best of
    ``reps`` interleaved repetitions (complete, q = 0.2, q = 0.4 in turn); the test accuracy of each."""
    from mvl.data.synthetic import make_multiview_manifold

    warnings.simplefilter("ignore")
    d = make_multiview_manifold(n + 2000, n_classes=10, n_views=3, n_features=10, random_state=0)
    Xtr, Xte = [V[:n] for V in d.views], [V[n:] for V in d.views]
    y = np.full(n, -1)
    for k in range(10):
        lab = np.flatnonzero(d.y[:n] == k)[:20]
        y[lab] = k
    kw = dict(n_neighbors=10, max_memory=8.0 * n * n, random_state=0, gamma_B=1e-4)
    data = {0.0: (Xtr, Xte)}
    for q in (0.2, 0.4):
        mrng = np.random.default_rng(7)
        data[q] = (apply_mask(Xtr, mask_at_random(n, 3, q, mrng)), apply_mask(Xte, mask_at_random(len(d.y) - n, 3, q,
                                                                                                   mrng)))
    print(f"n = {n}: | solver | q | fit complete (s) | fit incomplete (s) | ratio | iterations | accuracy complete | "
          "accuracy incomplete |")
    print("|---|---|---|---|---|---|---|---|")
    for solver in ("cg", "nystrom"):
        best, models = {q: np.inf for q in data}, {}
        for _ in range(reps):
            for q, (Xa, _) in data.items():
                models[q] = MVLLeastSquares(solver=solver, **kw)
                best[q] = min(best[q], timed_fit(models[q], Xa, y))
        acc = {q: 100 * models[q].score(data[q][1], d.y[n:]) for q in data}
        for q in (0.2, 0.4):
            print(f"| {solver} | {q:g} | {best[0.0]:.2f} | {best[q]:.2f} | {best[q] / best[0.0]:.2f} | "
                  f"{models[q].n_iter_} (complete {models[0.0].n_iter_}) | {acc[0.0]:.1f} | {acc[q]:.1f} |", flush=True)
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--draws", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="one draw")
    ap.add_argument("--gamma-B", type=lambda v: v if v == "auto" else float(v), default="auto",
                    help='gamma_B of every MVL-LS fit: a number, or "auto" (the estimator\'s default)')
    ap.add_argument("--l-c", type=int, default=5)
    ap.add_argument("--u-c", type=int, default=50)
    ap.add_argument("--qs", type=float, nargs="+", default=[0.0, 0.2, 0.4, 0.6])
    ap.add_argument("--sweep", action="store_true", help="select gamma_B on validation draws")
    ap.add_argument("--timing", action="store_true", help="fit time incomplete / complete, best of 5 interleaved")
    ap.add_argument("--timing-cg", action="store_true", help='solver "cg" on incomplete views: fit time ratios')
    ap.add_argument("--timing-cg-n", type=int, default=0, help='"cg", "nystrom" at this n (synthetic views)')
    args = ap.parse_args(argv)
    if args.timing_cg_n:
        return timing_cg_n(args.timing_cg_n)
    draws = 1 if args.quick else args.draws
    ds = load_mfeat()
    X_all = np.hstack(ds.views)
    sizes = [v.shape[1] for v in ds.views]
    m = len(sizes)
    y_all = ds.y
    if args.sweep:
        return sweep(X_all, y_all, sizes, args)
    if args.timing:
        return timing(X_all, y_all, sizes, args)
    if args.timing_cg:
        return timing_cg(X_all, y_all, sizes, args)
    params = dict(views=sizes, gamma_B=args.gamma_B)
    patterns = ([(f"random q={q:g}", q) for q in args.qs] + [("blocks: 10 x 2 views", "blocks")]
                + [("class: 2 views/class", "class")])
    rows = {name: {"incomplete": [], "complete": [], "mean imputation": [], "best single view": [], "ratio": [],
                   "q": []} for name, _ in patterns}
    warnings.simplefilter("ignore")  # RegularizationWarning etc. are not the point here
    for d in range(draws):
        rng = np.random.default_rng(1000 + d)
        train, test, y_train = draw(y_all, args.l_c, args.u_c, rng)
        Xtr, Xte, yte = X_all[train], X_all[test], y_all[test]
        complete = make_pipeline(StandardScaler(), MVLLeastSquares(**params))
        t_complete = timed_fit(complete, Xtr, y_train)
        acc_complete = complete.score(Xte, yte)
        for name, q in patterns:
            mrng = np.random.default_rng([2000 + d, int(1000 * q) if not isinstance(q, str) else len(q)])
            if q == "blocks":
                Mtr, Mte = mask_sample_blocks(len(train), m, 10, 2, mrng), mask_sample_blocks(len(test), m, 10, 2, mrng)
            elif q == "class":
                Mtr = mask_class_views(y_all[train], m, views_per_class=2)
                Mte = mask_class_views(yte, m, views_per_class=2)
            else:
                Mtr, Mte = mask_at_random(len(train), m, q, mrng), mask_at_random(len(test), m, q, mrng)
            Xtr_m, Xte_m = apply_mask(Xtr, Mtr, sizes), apply_mask(Xte, Mte, sizes)
            inc = make_pipeline(StandardScaler(), MVLLeastSquares(**params))
            t_inc = timed_fit(inc, Xtr_m, y_train)
            imp = make_pipeline(StandardScaler(), SimpleImputer(strategy="mean"), MVLLeastSquares(**params))
            imp.fit(Xtr_m, y_train)
            single = []
            ends = np.cumsum(sizes)
            for p in range(m):
                cols = np.arange(ends[p] - sizes[p], ends[p])
                sv = make_pipeline(StandardScaler(), SimpleImputer(strategy="mean"),
                                   MVLLeastSquares(gamma_B=args.gamma_B))
                sv.fit(Xtr_m[:, cols], y_train)
                single.append(sv.score(Xte_m[:, cols], yte))
            r = rows[name]
            r["q"].append(1.0 - Mtr.mean())
            r["incomplete"].append(inc.score(Xte_m, yte))
            r["complete"].append(acc_complete)
            r["mean imputation"].append(imp.score(Xte_m, yte))
            r["best single view"].append(max(single))
            r["ratio"].append(t_inc / t_complete)
            print(f"draw {d} {name:24s} incomplete {r['incomplete'][-1]:.4f} complete {acc_complete:.4f} "
                  f"imputation {r['mean imputation'][-1]:.4f} single {max(single):.4f} "
                  f"fit {t_inc:.2f} s / {t_complete:.2f} s", flush=True)
    print(f"\nmfeat, l_c = {args.l_c}, u_c = {args.u_c}, {draws} draw(s), gamma_B = {args.gamma_B}; "
          "accuracy in % (mean +- std over draws); fit-time ratio incomplete / complete (median)")
    print("| pattern | missing | incomplete (mvl) | complete | mean imputation | best single view | fit ratio |")
    print("|---|---|---|---|---|---|---|")
    for name, _ in patterns:
        r = rows[name]

        def f(key, r=r):
            v = 100 * np.asarray(r[key])
            return f"{v.mean():.1f} +- {v.std():.1f}"

        print(f"| {name} | {np.mean(r['q']):.2f} | {f('incomplete')} | {f('complete')} | {f('mean imputation')} | "
              f"{f('best single view')} | {np.median(r['ratio']):.2f} |")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
