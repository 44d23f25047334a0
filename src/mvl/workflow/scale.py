"""The ``scale`` profile: MVL-LS solvers on seeded multi-view manifold data of growing size (issue 20).

One rule job fits one method at one n (:func:`fit_one`, in the job's own process, so that the process's peak
RSS is the method's) and writes one JSON record; :func:`write_summary` gathers them into a tidy CSV with the
fitted growth exponents; the report notebook (``notebooks/scale_report.py``) draws time and memory
against n (log-log, exponents in the legend) and accuracy against n (:func:`plot_scale`). The same
:func:`fit_one` serves ``benchmarks/bench_scale.py``. Data: :func:`mvl.data.synthetic.make_multiview_manifold`
(4 classes on intertwined curves, 3 views of 20 features), ``labels`` labelled points per class, the other
training points unlabelled, 2,000 test points. No paper section (the solvers are Theorem 10's, :mod:`mvl.scalable`).
"""

from __future__ import annotations

import json
import resource
import time

import numpy as np

from .settings import SCALE_METHODS

__all__ = ["PRESETS", "METHODS", "N_TEST", "NEIGHBOR_RULES", "graph_neighbors", "fit_one", "write_fit", "write_summary",
           "growth_exponents", "plot_scale", "scale_fit", "scale_summary", "scale_report"]

N_TEST = 2000
PRESETS = {"graph": dict(bw=0.1, gamma_A=1e-4, gamma_B=1e-6, gamma_W=1.0),
           "smooth": dict(bw=1.0, gamma_A=1e-5, gamma_B=1e-6, gamma_W=1e-2)}
"""Hyperparameters fixed for every n: ``graph`` chosen on a validation split at n = 2,000 (exact solver 0.961),
``smooth`` the paper's order of gammas with the median bandwidth (see benchmarks/README.md)."""
METHODS = SCALE_METHODS
"""structured / cg / nystrom: MVL-LS (Theorem 10) by each solver; labelonly: MVL-LS on the labelled points;
labelspreading: scikit-learn's LabelSpreading (kNN, transductive); ridge: supervised Nystroem + RidgeClassifier.
In the config and file names "nystrom_<M>" names nystrom with M centres
(:class:`mvl.workflow.settings.ScaleSettings`)."""


NEIGHBOR_RULES = ("scaled", "fixed")
KNN_FRACTION, KNN_MIN, KNN_MAX = 0.005, 10, 500


def graph_neighbors(n, rule="scaled"):
    """k of the kNN graphs at n training points: ``"fixed"`` 10 at every n; ``"scaled"`` 0.5 % of n within [10, 500]
    (10 up to n = 2,000, 40 at 8,000, 160 at 32,000, 500 from 100,000 on).

    Why scaled: with k fixed the neighbourhoods shrink as n grows and the graph term stops informing the fit;
    measured on this data (benchmarks/README.md, validation draw seed 7, n = 32,000, narrow kernels): nystrom with
    1,000 centres 0.575 at k = 10 whatever gamma_W (1e-2 to 1e4) or Laplacian power (1-3), against 0.592 for the
    labelled points alone, and 0.942 at k = 160. The same degeneration of graph Laplacian regularization with few
    labels and growing unlabelled data is the subject of Nadler, Srebro & Zhou (NIPS 2009). The cap keeps the graphs'
    memory (n k nonzeros per view) and the kNN search within the profile's budget."""
    if rule not in NEIGHBOR_RULES:
        raise ValueError(f"neighbors must be one of {NEIGHBOR_RULES}, got {rule!r}")
    if rule == "fixed":
        return KNN_MIN
    return int(min(max(round(KNN_FRACTION * n), KNN_MIN), KNN_MAX))


def _data(n, seed, labels):
    from ..data.synthetic import make_multiview_manifold

    d = make_multiview_manifold(n + N_TEST, n_classes=4, n_views=3, n_features=20, random_state=seed)
    ytr = np.full(n, -1)
    for k in range(4):
        ytr[np.flatnonzero(d.y[:n] == k)[:labels]] = k
    return d.X[:n], ytr, d.X[n:], d.y[n:], d.view_sizes


def fit_one(method, n, preset="graph", seed=1, labels=5, n_components=1000, tol=1e-6, max_iter=300, neighbors="scaled",
            **overrides):
    """Fit and score one method at n training points; returns a dict (method, n, n_components, n_neighbors, seconds,
    accuracy, n_iter, residual, converged). ``method`` in :data:`METHODS`; "nystrom" uses ``n_components``
    centres, "cg" as many for its preconditioner; the kNN graphs (MVL-LS and LabelSpreading) have
    :func:`graph_neighbors` (n, ``neighbors``) neighbours. Keyword overrides of the preset: bw, gamma_A, gamma_B,
    gamma_W."""
    import warnings

    from .. import MVLLeastSquares
    from ..kernels import gaussian_bandwidth

    hp = {**PRESETS[preset], **{k: v for k, v in overrides.items() if v is not None}}
    knn = graph_neighbors(n, neighbors)
    X, ytr, Xt, yt, sizes = _data(n, seed, labels)
    t0 = time.perf_counter()
    off = np.concatenate([[0], np.cumsum(sizes)])
    bws = [hp["bw"] * gaussian_bandwidth(X[:, off[p]:off[p + 1]], "median") for p in range(len(sizes))]
    kw = dict(kernel="rbf", views=sizes, bandwidth=bws, gamma_A=hp["gamma_A"], gamma_B=hp["gamma_B"],
              gamma_W=hp["gamma_W"], n_neighbors=knn, laplacian_power=1, random_state=0)
    row = dict(method=method, n=int(n), n_components=int(n_components) if method in ("cg", "nystrom") else 0,
               n_neighbors=knn if method not in ("labelonly", "ridge") else 0, n_iter=np.nan, residual=np.nan,
               converged=True)
    pred = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        if method == "structured":
            pred = MVLLeastSquares(solver="structured", **kw).fit(X, ytr).predict(Xt)
        elif method == "cg":
            est = MVLLeastSquares(solver="cg", tol=tol, max_iter=max_iter, n_components=n_components, **kw).fit(X, ytr)
            pred = est.predict(Xt)
            row.update(n_iter=est.n_iter_, residual=est.residual_, converged=est.residual_ <= tol)
        elif method == "nystrom":
            pred = MVLLeastSquares(solver="nystrom", n_components=n_components, **kw).fit(X, ytr).predict(Xt)
        elif method == "labelonly":
            lab = ytr >= 0
            pred = MVLLeastSquares(solver="structured", **{**kw, "gamma_B": 0.0, "gamma_W": 0.0}).fit(
                X[lab], ytr[lab]).predict(Xt)
        elif method == "labelspreading":  # transductive: fitted on train + test points, test labels hidden
            from sklearn.preprocessing import StandardScaler
            from sklearn.semi_supervised import LabelSpreading

            Z = StandardScaler().fit_transform(np.vstack([X, Xt]))
            yy = np.concatenate([ytr, -np.ones(len(yt), dtype=int)])
            pred = LabelSpreading(kernel="knn", n_neighbors=knn, max_iter=1000).fit(Z, yy).transduction_[n:]
        elif method == "ridge":  # supervised Nystroem + RidgeClassifier, concatenated standardised views
            from sklearn.kernel_approximation import Nystroem
            from sklearn.linear_model import RidgeClassifier
            from sklearn.pipeline import make_pipeline
            from sklearn.preprocessing import StandardScaler

            lab = ytr >= 0
            pred = make_pipeline(StandardScaler(), Nystroem(n_components=int(lab.sum()), random_state=0),
                                 RidgeClassifier(alpha=1e-3)).fit(X[lab], ytr[lab]).predict(Xt)
        else:
            raise ValueError(f"unknown method {method!r}; one of {METHODS}")
    row["seconds"] = time.perf_counter() - t0
    row["accuracy"] = float(np.mean(pred == yt))
    row["warnings"] = "; ".join(str(w.message)[:160] for w in caught
                                if type(w.message).__name__ == "ConvergenceWarning")
    return row, pred


def peak_rss():
    """Peak resident set size of this process so far, bytes (Linux ru_maxrss is in kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def write_fit(name, n, out, **settings):
    """:func:`fit_one` of the method ``name`` ("nystrom_<M>" allowed) in this process, with its peak RSS, as one JSON
    record written atomically to ``out``."""
    from ..fileio import atomic_write_text

    row, _ = fit_one(name.partition("_")[0], n, **settings)
    row["rss"] = peak_rss()
    row = {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in row.items()}
    atomic_write_text(out, json.dumps(row) + "\n")
    print(f"[scale] {name} n={n}: {row['seconds']:.1f} s, {row['rss'] / 1e9:.2f} GB, accuracy {row['accuracy']:.3f}")
    return row


def growth_exponents(df):
    """Per method (and n_components), the slopes k of log time ~ k log n and log RSS ~ k log n (NaN with < 2 sizes)."""
    import pandas as pd

    def slope(rows, col):
        if len(rows) < 2:
            return np.nan
        return float(np.polyfit(np.log(rows["n"]), np.log(rows[col]), 1)[0])

    out = []
    for (method, M), group in df.groupby(["method", "n_components"], sort=False):
        rows = group.sort_values("n")
        out.append(dict(method=method, n_components=M, n_min=int(rows["n"].min()), n_max=int(rows["n"].max()),
                        time_exponent=slope(rows, "seconds"), rss_exponent=slope(rows, "rss")))
    return pd.DataFrame(out)


def write_summary(inputs, out):
    """The JSON records of the fits as one tidy CSV (``out``, atomic), sorted by method and n."""
    import pandas as pd

    from ..fileio import atomic_path

    df = pd.DataFrame([json.loads(open(p).read()) for p in inputs])
    df = df.sort_values(["method", "n_components", "n"]).reset_index(drop=True)
    with atomic_path(out) as tmp:
        df.to_csv(tmp, index=False)
    return df


def label(method, M):
    return f"{method} (M = {M})" if method in ("cg", "nystrom") else method


def plot_scale(df, png, pdf=None):
    """Three panels: time, peak RSS and test accuracy against n (log-log for the first two, the fitted exponent in
    each legend entry)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    exps = growth_exponents(df).set_index(["method", "n_components"])
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for (method, M), group in df.groupby(["method", "n_components"], sort=False):
        g = group.sort_values("n")
        k = exps.loc[(method, M)]
        name = label(method, M)
        axes[0].loglog(g["n"], g["seconds"], "o-", label=f"{name}: n^{k.time_exponent:.2f}")
        axes[1].loglog(g["n"], g["rss"] / 1e9, "o-", label=f"{name}: n^{k.rss_exponent:.2f}")
        axes[2].semilogx(g["n"], g["accuracy"], "o-", label=name)
    axes[0].set(xlabel="training points n", ylabel="fit + predict time (s)", title="time")
    axes[1].set(xlabel="training points n", ylabel="peak RSS of the process (GB)", title="memory")
    axes[2].set(xlabel="training points n", ylabel="test accuracy", title="accuracy (2,000 test points)",
                ylim=(0, 1.02))
    from matplotlib.ticker import FixedLocator, NullFormatter

    sizes = sorted(df["n"].unique())
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
        # the measured sizes as the n ticks ("32,000"), no minor labels (they overlap on a short log axis)
        ax.xaxis.set_major_locator(FixedLocator(sizes))
        ax.set_xticklabels([f"{int(n):,}" for n in sizes])
        ax.xaxis.set_minor_formatter(NullFormatter())
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    if pdf:
        fig.savefig(pdf)
    plt.close(fig)
    return fig


# ------------------------------------------------------------------ rule entry points


def scale_fit(smk):
    """Rule ``scale_fit``: one method at one n (wildcards), settings from params ``scale``."""
    from .jobs import logged

    with logged(smk):
        write_fit(smk.wildcards.method, int(smk.wildcards.n), smk.output[0], **smk.params.fit)


def scale_summary(smk):
    """Rule ``scale_summary``: every fit's record into one CSV."""
    from .jobs import logged

    with logged(smk):
        write_summary(smk.input, smk.output[0])


def scale_report(smk):
    """Rule ``scale_report``: the jupytext notebook executed with papermill (parameters: the results CSV, the
    figure paths, the settings as JSON)."""
    import jupytext
    import papermill

    from ..fileio import atomic_path
    from .jobs import logged

    with logged(smk):
        out = smk.output.notebook
        parameters = {"results_csv": smk.input.results, "fig_png": smk.output.png, "fig_pdf": smk.output.pdf,
                      "settings": json.dumps(smk.params.settings)}
        with atomic_path(out, ".ipynb") as tmp:  # the converted source, then the executed notebook, renamed
            jupytext.write(jupytext.read(smk.input.notebook), str(tmp), fmt="ipynb")
            papermill.execute_notebook(str(tmp), str(tmp), parameters=parameters, kernel_name="python3",
                                       progress_bar=False, log_output=False)
        print(f"[scale_report] -> {out}")
