"""Validation study behind the estimators' default graph and gammas.

Question: which within-view graph (eq 60-64: kNN size k, Laplacian power p, edge weights, normalized or not)
and which (gamma_A, gamma_B, gamma_W) should MVLLeastSquares, MVLLeastSquaresOptC, MVLSVM and MVLBinarySVM use
when a user passes nothing, so that adding unlabelled data helps (or at least does not hurt)?

Data sets (four; none of them the paper's, all digits, 10 classes):

- ``mfeat``: UCI Multiple Features, the six views, embedded in the package (:func:`mvl.data.embedded.load_mfeat`).
- ``mnist``: multi-view MNIST (scikit-multimodallearn), 4 views x 192 HOG-type features, 5000 digits
  (``../shared/data/multiview_mnist/multiview_mnist.hdf5``, or ``--mnist PATH``).
- ``uspst``: USPS test set (2007 digits, 16 x 16 pixels) of the manifold-regularization benchmarks
  (``../shared/data/ssl_benchmarks/uspst.mat``), one view (the whole image: the single-view first fit,
  ``views=None``), with the file's own splits: the labelled set is ``idxLabs[s]`` (50 samples), and
  ``idxUnls[s]`` is cut (seeded) into 50 validation and 477 test samples, the sizes of Sindhwani & Rosenberg
  (2008), Table 1, and 470 of their 1430 unlabelled samples (n = 520 training samples, as for the others).
- ``digits``: scikit-learn's 8 x 8 digits (1797) in three feature views: the 64 pixels, the 4 x 4 image of
  2 x 2 block sums (16) and the projection profiles (8 row sums and 8 column sums, 16).

Protocol (mfeat, mnist, digits): per seed a stratified draw of 3 labelled, 47 unlabelled and 5 validation
samples per class, and a test set of 100 per class (digits: every remaining sample). Kernels are what a
user's first fit computes: per view a Gaussian kernel on the raw features with sigma = the median pairwise
distance of the training samples (``kernel="rbf"``, ``bandwidth="median"``).

For every configuration, laplacian x edge weights x (k, p) x gamma_A x gamma_B x gamma_W, MVL-LS is fitted
twice: on the labelled samples only, and on the labelled plus unlabelled samples (one call of
:func:`mvl.grid_decision_functions` per laplacian and weights evaluates the whole grid, factorisations
shared). Accuracies are measured on the validation set and on the test set. **Only validation accuracy
selects**; test accuracy is reported for the selected configurations.

What is printed:

1. the default: the configuration with the best validation accuracy averaged over the data sets (each
   averaged over its seeds), among the configurations whose unlabelled data do not lower the mean
   validation accuracy on any data set; beside it the runner-ups;
2. for each data set, the test accuracy of the default with and without the unlabelled data (mean, std
   over seeds, the per-seed difference and its worst case), and of the previous default (the paper's dense
   graph) at gamma_W = 1e-6, 1e-4, 1e-2;
3. how often each graph is selected on validation per data set (per seed, over the whole grid).

Run (minutes; the grid is 2 laplacians x 2 weights x 9-11 graphs x 5 x 2 x 5 gammas, twice per seed)::

    python benchmarks/study_defaults.py                      # 5 seeds, four data sets
    python benchmarks/study_defaults.py --seeds 2 --datasets mfeat digits   # smaller
    python benchmarks/study_defaults.py --csv results/benchmarks/study_defaults.csv

Every random choice comes from the seed; the same command prints the same table.
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from pathlib import Path

import numpy as np

from mvl import grid_decision_functions
from mvl.kernels import multiview_kernels

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"

LAPLACIANS = ("normalized", "unnormalized")
WEIGHTS = ("kernel", "binary")
KNN = (5, 10, 20)
POWERS = (1, 2, 4)
DENSE_POWERS = (1, 2)
GAMMAS_A = (1e-6, 1e-5, 1e-4, 1e-3, 1e-2)
GAMMAS_B = (0.0,)
GAMMAS_B_CHECK = (0.0, 1e-6, 1e-4)  # gamma_B > 0 costs O(m n^3) per grid point: checked at the default graph
GAMMAS_W = (0.0, 1e-6, 1e-4, 1e-2, 1.0)
PREVIOUS = ("normalized", "kernel", None, 1)  # the paper's dense graph, the previous default
TIE = 0.005  # mean validation accuracies closer than this are a tie (see report)


# ---------------------------------------------------------------------------------------------- data


def _digits_views():
    from sklearn.datasets import load_digits

    d = load_digits()
    img = d.images.astype(np.float64)  # (n, 8, 8), values 0..16
    pixels = img.reshape(len(img), 64)
    blocks = img.reshape(len(img), 4, 2, 4, 2).sum(axis=(2, 4)).reshape(len(img), 16)
    profiles = np.hstack([img.sum(axis=2), img.sum(axis=1)])
    return [pixels, blocks, profiles], d.target.astype(np.int64)


def load(name, mnist_path=None, uspst_path=None):
    """(views, y, fixed_splits): fixed_splits is None or (idxLabs, idxUnls) 0-based."""
    if name == "mfeat":
        from mvl.data.embedded import load_mfeat

        ds = load_mfeat()
        return ds.views, ds.y, None
    if name == "mnist":
        import h5py

        path = Path(mnist_path or SHARED / "multiview_mnist" / "multiview_mnist.hdf5")
        with h5py.File(path, "r") as f:
            views = [np.asarray(f[f"View{i}"], dtype=np.float64) for i in range(4)]
            y = np.asarray(f["Labels"]).astype(np.int64).ravel()
        return views, y, None
    if name == "uspst":
        from mvl.data.ssl_benchmarks import load_ssl_benchmark

        ds = load_ssl_benchmark("uspst", uspst_path or SHARED / "ssl_benchmarks")
        return [np.asarray(ds.X)], ds.y, (ds.idx_labelled, ds.idx_unlabelled)
    if name == "digits":
        views, y = _digits_views()
        return views, y, None
    raise ValueError(f"unknown data set {name!r}")


def draw(y, seed, fixed, l_c=3, u_c=47, v_c=5, t_c=100):
    """Index arrays (L, U, V, T) of one seeded draw."""
    rng = np.random.default_rng([21, seed])
    if fixed is not None:
        labs, unls = fixed
        L = np.sort(labs[seed])
        rest = rng.permutation(unls[seed])
        return L, np.sort(rest[527:527 + 470]), np.sort(rest[:50]), np.sort(rest[50:527])
    parts = [[], [], [], []]
    for k in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == k))
        cut = np.cumsum([l_c, u_c, v_c])
        parts[0].append(idx[:cut[0]])
        parts[1].append(idx[cut[0]:cut[1]])
        parts[2].append(idx[cut[1]:cut[2]])
        parts[3].append(idx[cut[2]:cut[2] + t_c])
    return tuple(np.sort(np.concatenate(p)) for p in parts)


# ---------------------------------------------------------------------------------------------- grid


def graphs_for(weights):
    out = [(k, p) for k in KNN for p in POWERS]
    if weights == "kernel":
        out += [(None, p) for p in DENSE_POWERS]
    return out


def evaluate(views, y, train, evals, labelled_mask, runs):
    """Accuracy arrays {(laplacian, weights, k, p): (nA, nB, nW, len(evals))} of MVL-LS trained on ``train``
    (labels hidden where ``labelled_mask`` is False), evaluated on each index array of ``evals``; ``runs`` lists
    (laplacian, weights, graphs, gammas_B), one call of grid_decision_functions each."""
    ev = np.concatenate(evals)
    K, Kt = multiview_kernels([V[train] for V in views], [V[ev] for V in views], kernel="rbf",
                              standardize_features=False, bandwidth="median")
    y_tr = np.where(labelled_mask, y[train], -1)
    bounds = np.cumsum([0] + [len(e) for e in evals])
    out = {}
    for lap, w, graphs, gammas_B in runs:
        F, classes = grid_decision_functions(K, y_tr, Kt, GAMMAS_A, gammas_B, GAMMAS_W, laplacian=lap,
                                             graph_weights=w, graphs=graphs)
        pred = classes[np.argmax(F, axis=-1)]  # (G, nA, nB, nW, t)
        hit = pred == y[ev]
        for ig, (k, p) in enumerate(graphs):
            out[lap, w, k, p] = np.stack([hit[ig, ..., a:b].mean(axis=-1) for a, b in
                                          zip(bounds[:-1], bounds[1:], strict=True)], axis=-1)
    return out


def run_dataset(name, seeds, args, runs=None, gammas_B=GAMMAS_B):
    """Rows (data set, seed, laplacian, weights, k, p, gammas, val/test accuracy with and without the
    unlabelled data) over ``runs`` (default: every laplacian, weights and graph)."""
    views, y, fixed = load(name, args.mnist, args.uspst)
    if runs is None:
        runs = [(lap, w, graphs_for(w), gammas_B) for lap, w in itertools.product(LAPLACIANS, WEIGHTS)]
    rows = []
    for s in range(seeds):
        t0 = time.perf_counter()
        L, U, V, T = draw(y, s, fixed)
        semi = evaluate(views, y, np.concatenate([L, U]), [V, T],
                        np.concatenate([np.ones(len(L), bool), np.zeros(len(U), bool)]), runs)
        sup = evaluate(views, y, L, [V, T], np.ones(len(L), bool), runs)
        for key, acc in semi.items():
            acc_l = sup[key]
            for (ia, gA), (ib, gB), (iw, gW) in itertools.product(enumerate(GAMMAS_A), enumerate(runs[0][3]),
                                                                 enumerate(GAMMAS_W)):
                rows.append((name, s, *key, gA, gB, gW, acc[ia, ib, iw, 0], acc[ia, ib, iw, 1],
                             acc_l[ia, ib, iw, 0], acc_l[ia, ib, iw, 1]))
        print(f"  {name} seed {s}: l={len(L)} u={len(U)} v={len(V)} t={len(T)}, "
              f"{time.perf_counter() - t0:.1f} s", flush=True)
    return rows


# ---------------------------------------------------------------------------------------------- report


def _graph(key):
    lap, w, k, p = key
    g = "dense" if k is None else f"kNN {k} {w}"
    return f"{lap[:5]}. {g}, p={p}"


def report(df):
    import pandas as pd

    pd.set_option("display.width", 160)
    cfg = ["laplacian", "weights", "k", "p", "gamma_A", "gamma_B", "gamma_W"]
    df = df.copy()
    df["k"] = df["k"].fillna(0).astype(int)  # 0 = dense (None)
    per = df.groupby(["dataset"] + cfg, dropna=False).agg(
        val=("val_semi", "mean"), val_l=("val_sup", "mean"), test=("test_semi", "mean"),
        test_l=("test_sup", "mean")).reset_index()
    per["val_gain"] = per["val"] - per["val_l"]
    agg = per.groupby(cfg).agg(val=("val", "mean"), worst_val_gain=("val_gain", "min"),
                               test=("test", "mean")).reset_index()
    ok = agg[agg["worst_val_gain"] >= 0].sort_values("val", ascending=False)
    print("\n== 1. Configurations by validation accuracy (mean over data sets), unlabelled data not hurting on "
          "validation in any data set ==")
    print(ok.head(15).to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    # Within TIE of the best mean validation accuracy the configurations cannot be told apart (the standard error
    # of a mean over 20 draws of 50 validation samples is about 1 point): among those, prefer kernel edge weights
    # (the paper's weights, so that n_neighbors=None alone restores the paper's graph), then the smaller power
    # (fewer n x n products), then the smaller k, then the better validation accuracy.
    tied = ok[ok["val"] >= ok["val"].iloc[0] - TIE].copy()
    tied["_binary"] = tied["weights"] != "kernel"
    best = tied.sort_values(["_binary", "p", "k", "val"], ascending=[True, True, True, False]).iloc[0]
    print(f"\n{len(tied)} configuration(s) within {100 * TIE:.1f} points of the best; by the rule above:")
    print(f"\nDefault by validation: {best['laplacian']} Laplacian, "
          f"{'dense' if best['k'] == 0 else 'kNN k=' + str(best['k'])} {best['weights']} weights, "
          f"p={best['p']}, gamma_A={best['gamma_A']:g}, gamma_B={best['gamma_B']:g}, gamma_W={best['gamma_W']:g}")
    # the best configuration with gamma_W = 0 for comparison
    print("best with gamma_W = 0:", ok[ok["gamma_W"] == 0].head(1)[cfg + ["val"]].to_string(index=False, header=False))

    def show(sel, title):
        print(f"\n== {title} ==")
        rows = []
        for ds, g in sel.groupby("dataset", sort=False):
            diff = g["test_semi"] - g["test_sup"]
            rows.append(dict(dataset=ds, seeds=len(g), labelled_only=f"{100 * g['test_sup'].mean():.1f} "
                             f"({100 * g['test_sup'].std():.1f})",
                             with_unlabelled=f"{100 * g['test_semi'].mean():.1f} ({100 * g['test_semi'].std():.1f})",
                             gain=f"{100 * diff.mean():+.1f}", worst_seed=f"{100 * diff.min():+.1f}",
                             val_gain=f"{100 * (g['val_semi'] - g['val_sup']).mean():+.1f}"))
        print(pd.DataFrame(rows).to_string(index=False))

    def pick(lap, w, k, p, gA, gB, gW):
        m = ((df["laplacian"] == lap) & (df["weights"] == w) & (df["k"] == k) & (df["p"] == p)
             & np.isclose(df["gamma_A"], gA) & np.isclose(df["gamma_B"], gB) & np.isclose(df["gamma_W"], gW))
        return df[m]

    show(pick(*[best[c] for c in cfg]), "2. Test accuracy % (std over seeds) of the default, labelled only vs "
         "with the unlabelled data")
    for gW in (1e-6, 1e-4, 1e-2):
        show(pick("normalized", "kernel", 0, 1, 1e-5, 0.0, gW), f"2b. previous default graph (paper's dense, "
             f"normalized), gamma_A=1e-5, gamma_B=0, gamma_W={gW:g}")
    if best["gamma_W"] != 1e-2:
        show(pick(best["laplacian"], best["weights"], best["k"], best["p"], best["gamma_A"], best["gamma_B"], 1e-2),
             "2c. the default graph at gamma_W = 1e-2")
    sup = pick(best["laplacian"], best["weights"], best["k"], best["p"], best["gamma_A"], 0.0, 0.0)
    semi = pick(*[best[c] for c in cfg])
    rows = []
    for ds, g in sup.groupby("dataset", sort=False):
        h = semi[semi["dataset"] == ds]
        diff = h["test_semi"].to_numpy() - g["test_sup"].to_numpy()  # same seeds, same order
        rows.append(dict(dataset=ds, supervised=f"{100 * g['test_sup'].mean():.1f} ({100 * g['test_sup'].std():.1f})",
                         default_with_unlabelled=f"{100 * h['test_semi'].mean():.1f}", gain=f"{100 * diff.mean():+.1f}",
                         worst_seed=f"{100 * diff.min():+.1f}"))
    print(f"\n== 2d. Supervised MVL-LS (labelled only, gamma_B = gamma_W = 0, gamma_A = {best['gamma_A']:g}) vs the "
          f"default with the unlabelled data, test % ==")
    print(pd.DataFrame(rows).to_string(index=False))
    print("\n== 3. Graph selected on validation (per seed, whole grid; ties: first in grid order) ==")
    g = df.copy()
    g["graph"] = [_graph((a, b, None if c == 0 else c, d)) for a, b, c, d in
                  zip(g["laplacian"], g["weights"], g["k"], g["p"], strict=True)]
    top = g.loc[g.groupby(["dataset", "seed"])["val_semi"].idxmax()]
    print(top.groupby(["dataset", "graph"]).size().rename("times").reset_index().to_string(index=False))
    sel = top.groupby("dataset").agg(test=("test_semi", "mean"), val=("val_semi", "mean"))
    print("\ntest accuracy of the per-seed validation selection:\n", sel.to_string(float_format=lambda v: f"{v:.3f}"))
    return best


def supervised_check(seeds=3):
    """What the default gamma_W costs without unlabelled data: MVLLeastSquares() against
    MVLLeastSquares(gamma_W=0) fitted on l_c labelled samples per class only (raw features, as a user would),
    mfeat and digits, test 100 per class (digits: the rest)."""
    from mvl import MVLLeastSquares
    from mvl.data.embedded import load_mfeat

    ds = load_mfeat()
    print("\n== 5. Purely supervised data: test accuracy % of the defaults vs gamma_W = 0 (mean over seeds) ==")
    for name, (views, y) in {"mfeat": (ds.views, ds.y), "digits": _digits_views()}.items():
        X, sizes = np.hstack(views), [v.shape[1] for v in views]
        for l_c in (3, 10, 30, 60):
            acc = []
            for s in range(seeds):
                L, _, _, T = draw(y, s, None, l_c=l_c, u_c=0)
                acc.append([MVLLeastSquares(views=sizes, **kw).fit(X[L], y[L]).score(X[T], y[T])
                            for kw in ({"gamma_W": 0.0}, {})])
            a = 100 * np.mean(acc, axis=0)
            print(f"  {name:6s} l_c = {l_c:2d}: gamma_W = 0: {a[0]:.1f}, defaults: {a[1]:.1f} ({a[1] - a[0]:+.1f})",
                  flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=5, help="seeds (draws) per data set (default 5)")
    ap.add_argument("--datasets", nargs="+", default=["mfeat", "mnist", "uspst", "digits"],
                    help="data sets to run (default: all four)")
    ap.add_argument("--mnist", help="path of multiview_mnist.hdf5 (default: ../shared/data/multiview_mnist/)")
    ap.add_argument("--uspst", help="path of uspst.mat or its folder (default: ../shared/data/ssl_benchmarks/)")
    ap.add_argument("--csv", help="also write every row (data set, seed, configuration, accuracies) here")
    ap.add_argument("--supervised", action="store_true",
                    help="only section 5: what the default gamma_W costs on purely supervised data")
    ap.add_argument("--from-csv", help="report from the rows of an earlier --csv instead of recomputing the grid "
                                        "(the gamma_B check of section 4 is computed)")
    args = ap.parse_args(argv)
    if args.supervised:
        import warnings

        warnings.simplefilter("ignore")
        supervised_check()
        return 0
    print(f"study_defaults: {args.seeds} seeds, data sets {args.datasets}; load: {os.getloadavg()}", flush=True)
    t0 = time.perf_counter()
    import pandas as pd

    columns = ["dataset", "seed", "laplacian", "weights", "k", "p", "gamma_A", "gamma_B", "gamma_W", "val_semi",
               "test_semi", "val_sup", "test_sup"]
    if args.from_csv:
        df = pd.read_csv(args.from_csv)
        df = df[df["dataset"].isin(args.datasets) & (df["seed"] < args.seeds)]
        df["k"] = df["k"].astype(object).where(df["k"].notna(), None)
    else:
        rows = []
        for name in args.datasets:
            rows += run_dataset(name, args.seeds, args)
        df = pd.DataFrame(rows, columns=columns)
    if args.csv:
        Path(args.csv).parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(args.csv).with_suffix(".tmp")
        df.to_csv(tmp, index=False)
        os.replace(tmp, args.csv)
    best = report(df)
    # gamma_B > 0 at the default graph (the main grid has gamma_B = 0: with gamma_B > 0 every grid point costs
    # O(m n^3))
    k = None if best["k"] == 0 else int(best["k"])
    runs = [(best["laplacian"], best["weights"], [(k, int(best["p"]))], GAMMAS_B_CHECK)]
    print("\n== 4. gamma_B at the default graph and gammas (validation accuracy, then test; mean over seeds) ==",
          flush=True)
    rows = []
    for name in args.datasets:
        rows += run_dataset(name, args.seeds, args, runs=runs)
    db = pd.DataFrame(rows, columns=df.columns)
    at = db[np.isclose(db["gamma_A"], best["gamma_A"]) & np.isclose(db["gamma_W"], best["gamma_W"])]
    tab = at.groupby(["dataset", "gamma_B"]).agg(val=("val_semi", "mean"), test=("test_semi", "mean"))
    print(tab.unstack("gamma_B").to_string(float_format=lambda v: f"{v:.3f}"))
    top = db.groupby(["dataset", "gamma_B", "gamma_A", "gamma_W"])["val_semi"].mean().groupby(
        ["dataset", "gamma_B"]).max()
    print("\nbest mean validation accuracy over gamma_A x gamma_W, per gamma_B:")
    print(top.unstack("gamma_B").to_string(float_format=lambda v: f"{v:.3f}"))
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
