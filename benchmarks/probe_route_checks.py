"""What MVL-LS's fit route reports on inputs where a solve or a prediction could be silently wrong: a direct solve
of a system too ill-conditioned for float64 (huge gamma_B, tiny gamma_A), ``regime_`` where nothing was measured,
a test sample that misses a view after a fit on complete views, and a pandas frame of the nullable ``Float64``
dtype with ``pd.NA``; exact copies of the training points (the 300 points tiled 10 times, the copies unlabelled),
a view missing in every training sample, and 3,000 points labelled 20 / 20 / 1 per class. One line per setting:
the solver and loss used, the test accuracy, ``converged_``, ``residual_`` and the warnings given (class: first
words), or the error.

    python benchmarks/probe_route_checks.py

Data: three Gaussian blobs in 12 features (views of 5, 4 and 3 columns), seeded; 90 training points with 15
labels (300 with 12 for the missing-view rows), 600 test points.
"""

from __future__ import annotations

import warnings

import numpy as np

from mvl import MVLLeastSquares

VIEWS = [5, 4, 3]
CENTRES = np.random.default_rng(11).normal(size=(3, 12)) * 1.2


def blobs(n, seed):
    g = np.random.default_rng(seed)
    y = np.arange(n) % 3
    g.shuffle(y)
    return CENTRES[y] + g.normal(size=(n, 12)), y


def line(label, make, X, y, Xt, yt):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            est = make().fit(X, y)
            acc = est.score(Xt, yt)
        except Exception as exc:  # noqa: BLE001 -- the probe reports any error
            print(f"{label:44s} {type(exc).__name__}: {str(exc)[:110]}")
            return
    said = "; ".join(f"{w.category.__name__}: {str(w.message)[:70]}" for w in caught) or "no warning"
    print(f"{label:44s} {est.solver_:10s} {est.loss_:8s} acc {acc:.3f} converged_ {est.converged_!s:5s} "
          f"residual_ {est.residual_:.2e} regime_ {est.regime_}  [{said}]")


def main():
    X, y = blobs(90, 1)
    ys = np.where(np.arange(90) < 15, y, -1)
    Xt, yt = blobs(600, 2)
    print("-- direct solves of ill-conditioned systems")
    for kw in ({"gamma_B": 3e6}, {"gamma_B": 3e6, "solver": "dense"}, {"gamma_B": 3e6, "loss": "squared"},
               {"gamma_B": 1e12}, {"gamma_A": 1e-300}, {"gamma_A": 1e-300, "loss": "squared"}, {}):
        line(f"LS({kw})", lambda kw=kw: MVLLeastSquares(views=VIEWS, **kw), X, ys, Xt, yt)
    print("-- a test view missing (NaN) after a fit on complete views: accuracy with view 0 / 1 / 2 missing")
    X3, y3 = blobs(300, 1)
    y3s = np.where(np.arange(300) < 12, y3, -1)
    for solver, loss in (("structured", "poisson"), ("dense", "poisson"), ("vecchia", "poisson"),
                         ("structured", "squared"), ("cg", "squared"), ("graph", "squared")):
        est = MVLLeastSquares(views=VIEWS, solver=solver, loss=loss).fit(X3, y3s)
        accs = []
        for cols in (slice(0, 5), slice(5, 9), slice(9, 12)):
            Xm = Xt.copy()
            Xm[:, cols] = np.nan
            accs.append(f"{est.score(Xm, yt):.3f}")
        print(f"{solver:10s} {loss:8s} complete {est.score(Xt, yt):.3f}  missing {' / '.join(accs)}")
    copies_and_classes(Xt, yt)
    try:
        import pandas as pd
    except ImportError:
        return
    print("-- pandas Float64 with pd.NA (view 1 of 10 samples)")
    df = pd.DataFrame(X, columns=[f"f{i}" for i in range(12)]).astype("Float64")
    df.iloc[:10, 5:9] = pd.NA
    dt = pd.DataFrame(Xt, columns=df.columns).astype("Float64")
    for solver in ("auto", "structured", "cg", "nystrom"):
        line(f"LS(solver={solver!r}) on Float64", lambda s=solver: MVLLeastSquares(views=VIEWS, solver=s,
                                                                                  random_state=0), df, ys, dt, yt)


def copies_and_classes(Xt, yt):
    """Test accuracy of the fit on 300 points (60 labelled) and on the same points tiled 10 times (copies
    unlabelled), with their agreement; of a fit with view 2 missing everywhere against the fit on views 0-1; and at
    20 / 20 / 1 labels of 3,000 points, accuracy and recall of the one-label class per loss, with the warnings."""
    from sklearn.metrics import recall_score

    X, y = blobs(300, 1)
    ys = np.where(np.arange(300) < 60, y, -1)
    print("-- exact copies: fit on X / on X tiled 10x (copies unlabelled), agreement of test predictions")
    for kw in ({}, {"solver": "cg"}, {"solver": "graph"}, {"loss": "poisson"}):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = MVLLeastSquares(views=VIEWS, random_state=0, **kw).fit(X, ys)
            b = MVLLeastSquares(views=VIEWS, random_state=0, **kw).fit(np.tile(X, (10, 1)),
                                                                       np.r_[ys, np.full(2700, -1)])
        print(f"LS({kw}) acc {a.score(Xt, yt):.3f} / {b.score(Xt, yt):.3f}  agreement "
              f"{np.mean(a.predict(Xt) == b.predict(Xt)):.3f}")
    print("-- view 2 missing in every training sample against the fit on views 0-1")
    Xm = X.copy()
    Xm[:, 9:] = np.nan
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        a = MVLLeastSquares(views=VIEWS).fit(Xm, ys)
    b = MVLLeastSquares(views=VIEWS[:2]).fit(X[:, :9], ys)
    said = "; ".join(f"{w.category.__name__}: {str(w.message)[:60]}" for w in caught) or "no warning"
    print(f"gamma_B_ {a.gamma_B_:g} / {b.gamma_B_:g}  agreement {np.mean(a.predict(Xt) == b.predict(Xt[:, :9])):.3f}"
          f"  [{said}]")
    print("-- 3,000 points labelled 20 / 20 / 1 per class: accuracy, recall of the one-label class")
    X, y = blobs(3000, 1)
    ys = np.full(3000, -1)
    for c, k in ((0, 20), (1, 20), (2, 1)):
        ys[np.flatnonzero(y == c)[:k]] = c
    for loss in ("auto", "squared+poisson", "poisson"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = MVLLeastSquares(views=VIEWS, loss=loss).fit(X, ys)
        p = est.predict(Xt)
        said = "; ".join(f"{w.category.__name__}: {str(w.message)[:60]}" for w in caught) or "no warning"
        recall = recall_score(yt, p, average=None)[2]
        print(f"loss={loss!r:18s} {est.loss_:16s} acc {np.mean(p == yt):.3f} recall {recall:.3f}  [{said}]")


if __name__ == "__main__":
    main()
