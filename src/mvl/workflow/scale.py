"""The ``scale`` profile: MVL-LS solvers on seeded multi-view manifold data of growing size.

One rule job fits one method at one n (:func:`fit_one`, in the job's own process, so that the process's peak
RSS is the method's) and writes one JSON record; :func:`write_summary` gathers them into a tidy CSV with the
fitted growth exponents; the report notebook (``notebooks/scale_report.py``) draws time and memory
against n (log-log, exponents in the legend) and accuracy against n (:func:`scale_figure`). The same
:func:`fit_one` serves ``benchmarks/bench_scale.py``. Data: :func:`mvl.data.synthetic.make_multiview_manifold`
(4 classes on intertwined curves, 3 views of 20 features), ``labels`` labelled points per class, the other
training points unlabelled, 2,000 test points. No paper section (Theorem 10's solvers, :mod:`mvl.solvers.system`).
"""

from __future__ import annotations

import json
import resource
import time

import numpy as np

from .figures import new_figure
from .methods import methods_for
from .runtime import execute_notebook, logged
from .scale_settings import ScaleSettings, parse_settings

__all__ = ["ScaleSettings", "parse_settings", "PRESETS", "METHODS", "REGISTRY", "N_TEST", "NEIGHBOR_RULES",
           "graph_neighbors", "graph_limit_scores", "fit_one", "settings_table", "write_fit", "write_summary",
           "growth_exponents", "scale_figure", "scale_fit", "scale_summary", "scale_report", "fit_auto", "fit_solver",
           "fit_labelonly", "fit_transductive", "fit_graphlimit", "fit_labelspreading", "fit_graphlearning",
           "fit_ridge"]

N_TEST = 2000
PRESETS = {"graph": dict(bw=0.1, gamma_A=1e-4, gamma_B=1e-6, gamma_W=1.0),
           "smooth": dict(bw=1.0, gamma_A=1e-5, gamma_B=1e-6, gamma_W=1e-2),
           # the graph-regime data and setting: 6 classes, views of 20/30/40 features standardised on the training
           # points, Gaussian sigma = 1 (absolute), L^2 of a 10-NN graph; gamma_W / gamma_A = 1e6 and 1e4
           "graph6": dict(bw=1.0, gamma_A=1e-6, gamma_B=0.0, gamma_W=1.0, classes=6, features=(20, 30, 40),
                          standardise=True, absolute_bw=True, laplacian_power=2, n_neighbors=10),
           "graph6-1e4": dict(bw=1.0, gamma_A=1e-4, gamma_B=0.0, gamma_W=1.0, classes=6, features=(20, 30, 40),
                              standardise=True, absolute_bw=True, laplacian_power=2, n_neighbors=10)}
"""Hyperparameters fixed for every n: ``graph`` chosen on a validation split at n = 2,000 (exact solver 0.961),
``smooth`` the paper's order of gammas with the median bandwidth (see benchmarks/README.md); ``graph6`` and
``graph6-1e4`` the graph-regime data (6 classes, 3 standardised views of 20, 30, 40 features) and setting (sigma = 1,
gamma_A = 1e-6 or 1e-4, gamma_W = 1, 10-NN graphs, Laplacian squared), with their own graph size (``n_neighbors``)."""

DATA_DEFAULTS = dict(classes=4, features=(20, 20, 20), standardise=False, absolute_bw=False, laplacian_power=1,
                     n_neighbors=None)
"""What a preset may set besides the gammas and bw (the ``graph``/``smooth`` data by default)."""


NEIGHBOR_RULES = ("scaled", "fixed")


def graph_neighbors(n, rule="scaled"):
    """k of the kNN graphs at n training points: ``"fixed"`` 10 at every n; ``"scaled"`` the estimators'
    ``n_neighbors="auto"`` (:func:`mvl.graph.auto_neighbors`: 0.5 % of n within [10, 500]; 10 up to n = 2,000, 40 at
    8,000, 160 at 32,000, 500 from 100,000 on).

    Why scaled: with k fixed the neighbourhoods shrink as n grows and the graph term stops informing the fit;
    measured on this data (benchmarks/README.md, validation draw seed 7, n = 32,000, narrow kernels): nystrom with
    1,000 centres 0.575 at k = 10 whatever gamma_W (1e-2 to 1e4) or Laplacian power (1-3), against 0.592 for the
    labelled points alone, and 0.942 at k = 160. The same degeneration of graph Laplacian regularization with few
    labels and growing unlabelled data is the subject of Nadler, Srebro & Zhou (NIPS 2009)."""
    from ..graph import AUTO_MIN, auto_neighbors

    if rule not in NEIGHBOR_RULES:
        raise ValueError(f"neighbors must be one of {NEIGHBOR_RULES}, got {rule!r}")
    if rule == "fixed":
        return AUTO_MIN
    return auto_neighbors(n)


def _data(n, seed, labels, classes=4, features=(20, 20, 20), standardise=False, truth=False):
    """Training views (n, sum d) with ``labels`` labelled points per class (-1 elsewhere), N_TEST test points, the view
    sizes. Views of different widths: one draw of max(features) features per view, the first d_p kept (the same
    latent curves); ``standardise``: each feature centred and scaled on the training points; ``truth``: the training
    points' classes too, last (transductive accuracy)."""
    from ..data.synthetic import make_multiview_manifold

    d = make_multiview_manifold(n + N_TEST, n_classes=classes, n_views=len(features), n_features=max(features),
                                random_state=seed)
    views = [V[:, :f] for V, f in zip(d.views, features, strict=True)]
    if standardise:
        views = [(V - V[:n].mean(axis=0)) / V[:n].std(axis=0) for V in views]
    X = np.hstack(views)
    ytr = np.full(n, -1)
    for k in range(classes):
        ytr[np.flatnonzero(d.y[:n] == k)[:labels]] = k
    if truth:
        return X[:n], ytr, X[n:], d.y[n:], list(features), d.y[:n]
    return X[:n], ytr, X[n:], d.y[n:], list(features)


class _Context:
    """What a method of the registry gets: the data, the MVL-LS keyword arguments, the solver settings."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def fit_solver(ctx, solver):
    """MVL-LS (Theorem 10) by ``solver``: "structured" exact, the others with ``ctx.n_components`` centres, "cg" and
    "graph" to ``ctx.tol`` (their iterations, residual and convergence recorded)."""
    from .. import MVLLeastSquares

    extra = {} if solver == "structured" else dict(n_components=ctx.n_components)
    if solver in ("cg", "graph"):
        extra.update(tol=ctx.tol, max_iter=ctx.max_iter)
    est = MVLLeastSquares(solver=solver, **extra, **ctx.kw).fit(ctx.X, ctx.ytr)
    info = {}
    if solver in ("cg", "graph"):
        info = dict(n_iter=est.n_iter_, residual=est.residual_, converged=est.converged_)
    return est.predict(ctx.Xt), info


def fit_auto(ctx):
    """A user's first fit on this data: the preset's kernel, graph and gamma_W, everything else (solver, gamma_A,
    gamma_B, loss, n_components) at the package defaults; records what "auto" chose (``solver``, ``regime``: the
    measured graph regime, ``gamma_A``: the value used)."""
    from .. import MVLLeastSquares

    kw = {k: v for k, v in ctx.kw.items() if k not in ("gamma_A", "gamma_B", "loss")}
    est = MVLLeastSquares(**kw).fit(ctx.X, ctx.ytr)
    gamma_A = getattr(est, "gamma_A_", est.gamma_A)
    regime = getattr(est, "regime_", None)
    info = dict(solver=est.solver_, regime=np.nan if regime is None else float(regime), gamma_A=float(gamma_A),
                n_iter=est.n_iter_, residual=est.residual_, converged=est.converged_)
    return est.predict(ctx.Xt), info


def fit_labelonly(ctx):
    """MVL-LS on the labelled points alone (no graph, gamma_B = 0)."""
    from .. import MVLLeastSquares

    lab = ctx.ytr >= 0
    est = MVLLeastSquares(solver="structured", **{**ctx.kw, "gamma_B": 0.0, "gamma_W": 0.0})
    return est.fit(ctx.X[lab], ctx.ytr[lab]).predict(ctx.Xt), {}


def _with_test_points(ctx):
    """The training and test points together, the test labels hidden (-1): the transductive protocol."""
    return np.vstack([ctx.X, ctx.Xt]), np.concatenate([ctx.ytr, -np.ones(len(ctx.yt), dtype=int)])


def _transductive_inputs(ctx):
    from sklearn.preprocessing import StandardScaler

    X, y = _with_test_points(ctx)
    return StandardScaler().fit_transform(X), y


def fit_labelspreading(ctx):  # transductive: fitted on train + test points, test labels hidden
    from sklearn.semi_supervised import LabelSpreading

    Z, yy = _transductive_inputs(ctx)
    return LabelSpreading(kernel="knn", n_neighbors=ctx.n_neighbors, max_iter=1000).fit(Z, yy).transduction_[ctx.n:], {}


def fit_graphlearning(ctx, kind):
    """graphlearning 1.7.5 (Calder): Laplace or Poisson learning (``kind``) on its kNN Gaussian weights,
    transductive like LabelSpreading."""
    try:
        import graphlearning as gl
    except ImportError as exc:
        raise Unavailable("graphlearning is not installed: pip install 'mvl[peers]'") from exc
    from sklearn.neighbors import NearestNeighbors

    Z, yy = _transductive_inputs(ctx)
    # exact neighbours (self first) from scikit-learn: graphlearning's own search needs the annoy package
    algorithm = "kd_tree" if Z.shape[1] <= 40 else "auto"
    dist, ind = NearestNeighbors(n_neighbors=ctx.n_neighbors + 1, algorithm=algorithm).fit(Z).kneighbors(Z)
    W = gl.weightmatrix.knn(Z, ctx.n_neighbors, knn_data=(ind, dist))
    model = gl.ssl.laplace(W) if kind == "laplace" else gl.ssl.poisson(W)
    lab = np.flatnonzero(yy >= 0)
    return np.asarray(model.fit_predict(lab, yy[lab]))[ctx.n:], {}


def fit_transductive(ctx):
    """MVL-LS (exact, "structured") with the test points in the fit as unlabelled points, scored on them: the
    protocol of the graph-only peers (transductive), where the other MVL-LS rows predict held-out points."""
    from .. import MVLLeastSquares

    est = MVLLeastSquares(solver="structured", **ctx.kw).fit(*_with_test_points(ctx))
    return est.predict(ctx.Xt), {}


def graph_limit_scores(X, y, kw):
    """MVL-LS's limit gamma_A -> 0 on its training points (graph nodes), (n, P) decision values and the classes:
    Theorem 10's values F = K a with M F + l gamma_A a = r (68) tend to F = M^{-1} r, one sparse LU of M_eps
    (:func:`mvl.solvers.graph.shifted_operator`; :mod:`mvl.solvers.graph`'s pencil with delta = 0), decision values
    sum_p c_p F_p: the model's graph term alone (each view's kNN graph, its Laplacian power, gamma_B, gamma_W; ``kw``
    the MVLLeastSquares keywords), the kind of sparse system that Laplace learning solves. No kernel term. The limit
    is unique where every graph component holds a labelled point (and gamma_B > 0 or m = 1, or only the combination
    sum_p c_p F_p is read, as here); elsewhere M is singular and the values there are set by the shift epsilon."""
    from scipy.sparse import linalg as sla

    from .. import MVLLeastSquares
    from ..solvers.graph import shifted_operator
    from ..solvers import get_solver

    est = MVLLeastSquares(solver="graph", **kw)
    system = est.operator_problem(X, y, get_solver("graph")).system
    M_eps, _ = shifted_operator(system)
    r = system.rhs()
    m, n, P = r.shape
    F = sla.splu(M_eps, permc_spec="MMD_AT_PLUS_A").solve(r.reshape(m * n, P)).reshape(m, n, P)
    return np.einsum("p,pnk->nk", system.c, F), est.classes_


def fit_graphlimit(ctx):
    """:func:`graph_limit_scores` transductive: the test points in the graph as unlabelled points, scored there."""
    S, classes = graph_limit_scores(*_with_test_points(ctx), ctx.kw)
    return classes[S[ctx.n:].argmax(axis=1)], {}


def fit_ridge(ctx):  # supervised Nystroem + RidgeClassifier, concatenated standardised views
    from sklearn.kernel_approximation import Nystroem
    from sklearn.linear_model import RidgeClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    lab = ctx.ytr >= 0
    pipe = make_pipeline(StandardScaler(), Nystroem(n_components=int(lab.sum()), random_state=0),
                         RidgeClassifier(alpha=1e-3))
    return pipe.fit(ctx.X[lab], ctx.ytr[lab]).predict(ctx.Xt), {}


class Unavailable(RuntimeError):
    """A peer method whose optional dependency is missing: reported as unavailable, not as an error."""


REGISTRY = {m.name: (m.fit_function(), m.label) for m in methods_for("scale")}
"""The scale profile's methods: name -> (fit function of a :class:`_Context` returning (test predictions, extra
record fields), label), from the method registry (:func:`mvl.workflow.methods.methods_for`, which the settings read
while the Snakefile is parsed, without numpy). :data:`METHODS` and the report read it."""
METHODS = tuple(REGISTRY)
"""auto: MVL-LS as a first fit (the package's defaults for the solver, gamma_A, gamma_B and the loss);
structured / cg / nystrom / graph / vecchia_direct: MVL-LS (Theorem 10) by each solver; labelonly: MVL-LS on the
labelled points;
transductive: MVL-LS with the test points in the fit (unlabelled), as the graph-only peers; graphlimit: its limit
gamma_A -> 0 (the graph term alone, one sparse solve);
labelspreading: scikit-learn's LabelSpreading (kNN, transductive); laplace / poisson: graphlearning's Laplace and
Poisson learning (transductive, optional extra ``peers``); ridge: supervised Nystroem + RidgeClassifier. In the
config and file names "nystrom_<M>" names nystrom with M centres (:class:`ScaleSettings`)."""
CENTRED = tuple(m.name for m in methods_for("scale") if m.centred)
"""Methods whose ``n_components`` matters (Nystrom centres)."""
_NO_GRAPH = tuple(m.name for m in methods_for("scale") if not m.uses_graph)


def fit_one(method, n, preset="graph", seed=1, labels=5, n_components=1000, tol=1e-6, max_iter=300, neighbors="scaled",
            **overrides):
    """Fit and score one method at n training points; returns (a dict: method, n, n_components, n_neighbors, seconds,
    accuracy, n_iter, residual, converged, unavailable; the test predictions). ``method`` in :data:`METHODS`
    (dispatched through :data:`REGISTRY`); "nystrom" uses ``n_components`` centres, "cg" and "graph" as many for
    their preconditioners; the kNN graphs (MVL-LS and the graph peers) have the preset's ``n_neighbors`` neighbours or
    :func:`graph_neighbors` (n, ``neighbors``). Keyword overrides of the preset: bw, gamma_A, gamma_B, gamma_W. A peer
    whose package is missing gives ``unavailable`` True and accuracy NaN."""
    import warnings

    from ..kernels import rbf_bandwidth

    if method not in REGISTRY:
        raise ValueError(f"unknown method {method!r}; one of {METHODS}")
    hp = {**DATA_DEFAULTS, **PRESETS[preset], **{k: v for k, v in overrides.items() if v is not None}}
    n_neighbors = hp["n_neighbors"] or graph_neighbors(n, neighbors)
    X, ytr, Xt, yt, sizes = _data(n, seed, labels, hp["classes"], hp["features"], hp["standardise"])
    t0 = time.perf_counter()
    off = np.concatenate([[0], np.cumsum(sizes)])
    bws = [hp["bw"] if hp["absolute_bw"] else hp["bw"] * rbf_bandwidth(X[:, off[p]:off[p + 1]], "median")
           for p in range(len(sizes))]
    kw = dict(kernel="rbf", views=sizes, bandwidth=bws, gamma_A=hp["gamma_A"], gamma_B=hp["gamma_B"],
              gamma_W=hp["gamma_W"], n_neighbors=n_neighbors, laplacian_power=hp["laplacian_power"], random_state=0,
              loss="squared")
    row = dict(method=method, n=int(n), n_components=int(n_components) if method in CENTRED else 0,
               n_neighbors=n_neighbors if method not in _NO_GRAPH else 0, n_iter=np.nan, residual=np.nan,
               converged=True, unavailable=False)
    ctx = _Context(X=X, ytr=ytr, Xt=Xt, yt=yt, n=n, kw=kw, n_neighbors=n_neighbors, tol=tol, max_iter=max_iter,
                   n_components=n_components)
    pred = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            pred, extra = REGISTRY[method][0](ctx)
            row.update(extra)
        except Unavailable as exc:
            row.update(unavailable=True, note=str(exc))
    row["seconds"] = time.perf_counter() - t0
    row["accuracy"] = float(np.mean(pred == yt)) if pred is not None else np.nan
    row["warnings"] = "; ".join(str(w.message)[:160] for w in caught
                                if type(w.message).__name__ == "ConvergenceWarning")
    return row, pred


def settings_table(cfg):
    """The report's settings table: the config section ``scale`` (as :meth:`ScaleSettings._asdict`) with its preset's
    data and hyperparameters spelled out; a DataFrame indexed by setting."""
    import pandas as pd

    hp = {**DATA_DEFAULTS, **PRESETS.get(cfg.get("preset", "graph"), {})}
    sizes = cfg.get("sizes", [])
    sigma = (f"sigma = {hp['bw']} (absolute, standardised features)" if hp["absolute_bw"]
             else f"sigma = {hp['bw']} x median distance per view")
    if hp["n_neighbors"]:
        knn = f"symmetrised kNN, k = {hp['n_neighbors']} at every n"
    else:
        rule = cfg.get("neighbors", "scaled")
        knn = (f"symmetrised kNN, {rule} k = " + ", ".join(str(graph_neighbors(n, rule)) for n in sizes)
               + " at these n (scaled: 0.5 % of n within [10, 500]; fixed: 10)")
    rows = [("sizes n", ", ".join(f"{n:,}" for n in sizes)),
            ("data", f"{hp['classes']} classes, views of {', '.join(str(f) for f in hp['features'])} features"),
            ("hyperparameter preset", f"{cfg.get('preset')}: {sigma}, gamma_A = {hp['gamma_A']} (auto: the "
                                      f"package default), gamma_B = {hp['gamma_B']}, gamma_W = {hp['gamma_W']}"),
            ("graph", f"{knn}, normalized Laplacian, power {hp['laplacian_power']}, kernel edge weights"),
            ("labelled points", f"{cfg.get('labels')} per class ({hp['classes']} classes)"),
            ("cg", f"tol {cfg.get('tol')} (relative residual of (68)), max_iter {cfg.get('max_iter')}, "
                   f"{cfg.get('centres')} Nyström centres in the preconditioner"),
            ("data seed", cfg.get("seed"))]
    return pd.DataFrame(rows, columns=["setting", "value"]).set_index("setting")


def peak_rss():
    """Peak resident set size of this process so far, bytes (Linux ru_maxrss is in kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def write_fit(name, n, out, **settings):
    """:func:`fit_one` of the method ``name`` ("nystrom_<M>" allowed) in this process, with its peak RSS, as one JSON
    record written atomically to ``out``, with its checksum sidecar (:mod:`mvl.workflow.io`)."""
    from . import io
    from .scale_settings import split_name

    row, _ = fit_one(split_name(name)[0], n, **settings)
    row["rss"] = peak_rss()
    row = {k: (None if isinstance(v, float) and not np.isfinite(v) else v) for k, v in row.items()}
    with io.atomic_path(out, checksum=True) as tmp:
        tmp.write_text(json.dumps(row) + "\n")
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
    """The JSON records of the fits as one tidy CSV (``out``, atomic, with its checksum sidecar recording the
    records), sorted by method and n."""
    import pandas as pd

    from . import io

    df = pd.DataFrame([json.loads(open(p).read()) for p in inputs])
    df = df.sort_values(["method", "n_components", "n"]).reset_index(drop=True)
    io.save_csv(out, df, checksum=True, inputs=inputs)
    return df


def label(method, M):
    """The method's name in tables and legends (with its centres where they matter); :data:`REGISTRY` holds the
    long labels."""
    return f"{method} (M = {M})" if method in CENTRED else method


def scale_figure(df):
    """Three panels: time, peak RSS and test accuracy against n (log-log for the first two, the fitted exponent in
    each legend entry); saved by :func:`mvl.workflow.figures.save_figure`.

    Parameters
    ----------
    df : pandas.DataFrame
        The records of :func:`write_summary` (method, n_components, n, seconds, rss, accuracy).

    Returns
    -------
    matplotlib.figure.Figure
    """
    exps = growth_exponents(df).set_index(["method", "n_components"])
    fig, axes = new_figure(1, 3, 15, 4.2, layout="tight")
    axes = axes[0]
    for (method, M), group in df.groupby(["method", "n_components"], sort=False):
        g = group.sort_values("n")
        k = exps.loc[(method, M)]
        name = label(method, M)
        one = len(g) < 2  # no exponent from one size
        axes[0].loglog(g["n"], g["seconds"], "o-", label=name if one else f"{name}: n^{k.time_exponent:.2f}")
        axes[1].loglog(g["n"], g["rss"] / 1e9, "o-", label=name if one else f"{name}: n^{k.rss_exponent:.2f}")
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
    return fig


# ------------------------------------------------------------------ rule entry points


def scale_fit(smk):
    """Rule ``scale_fit``: one method at one n (wildcards), settings from params ``scale``."""
    with logged(smk):
        write_fit(smk.wildcards.method, int(smk.wildcards.n), smk.output[0], **smk.params.fit)


def scale_summary(smk):
    """Rule ``scale_summary``: every fit's record into one CSV."""
    with logged(smk):
        write_summary(smk.input, smk.output[0])


def scale_report(smk):
    """Rule ``scale_report``: the jupytext notebook executed with papermill (parameters: the results CSV, the
    figure paths, the settings as JSON)."""
    with logged(smk):
        out = smk.output.notebook
        parameters = {"results_csv": smk.input.results, "fig_png": smk.output.png, "fig_pdf": smk.output.pdf,
                      "settings": json.dumps(smk.params.settings)}
        execute_notebook(smk.input.notebook, out, parameters, outputs=list(smk.output))
        print(f"[scale_report] -> {out}")
