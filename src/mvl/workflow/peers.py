"""The ``peers`` study: MVL-LS against Laplace and Poisson learning on real data, transductive.

Protocol (every profile; :class:`PeersSettings`): all n points of the data set (or, in the
quick profiles, a seeded stratified subset of ``points_per_class`` per class) form the graph and the training set;
for each seed, l_c labelled points per class are drawn uniformly within each class (nested: the 1-label set is
inside the 5-label set), every other point is unlabelled, and the accuracy is measured on the unlabelled points.
For USPST (one view, 2,007 digits) the BNS-2006 transductive splits of Sindhwani's file (``idxLabs``: 50 labelled
points, not stratified) are run as well, split ``seed`` for seed < 10 (setting "bns"). Nothing is tuned on the
evaluation points: every method has the package defaults or the fixed choice documented below.

Features: every view standardised (zero mean, unit variance per feature over the n points; no label is used).

- ``mvl_ls``: :class:`mvl.MVLLeastSquares` with the squared loss and the package defaults (5-NN graph with kernel
  weights, normalized Laplacian squared, Gaussian kernels of median bandwidth, gamma_A = 1e-5, gamma_B = 0,
  gamma_W = 1e-2), the views as feature views (mfeat 6, multi-view MNIST 4, USPST 1), every point in the training
  set, the unlabelled ones marked -1 (Algorithm 1; eq 67-68 solved by the "auto" solver, "structured" at these n).
- ``mvl_ls_concat``: the same estimator with the views concatenated into one feature view (one kernel, one graph:
  the graph the graph methods use, up to MVL-LS's own 5-NN and weights), the diagnostic of the per-view graphs.
- ``mvl_ls_graph``: the same as ``mvl_ls`` with the graph-regime setting (chosen on validation on
  synthetic data at n = 2,000, never on these data): 10-NN, p = 2, gamma_A = 1e-6, gamma_W = 1.
- ``mvl_poisson``: the same estimator with the Poisson-type data term, ``MVLLeastSquares(loss="poisson")``
  (:mod:`mvl.estimators.poisson_fit`: one self-tuned 10-NN graph of the concatenated views, L = D - W, shared by
  every view; gamma_A / gamma_W = 1e-5; the other parameters the package defaults); new points predicted by the
  graph's induction rule. With the package default ``loss="auto"`` a first fit is this at l_c <= 5 and ``mvl_ls``
  above.
- ``laplace`` / ``poisson``: Laplace learning (the harmonic solution of Zhu, Ghahramani & Lafferty 2003:
  L_UU f_U = -L_UL y_L, L = D - W) and Poisson learning (Calder, Cook, Thorpe & Slepcev, ICML 2020), both
  graphlearning 1.7.5 defaults, on the symmetrised k-NN graph (exact neighbours, graphlearning's Gaussian weights
  ``exp(-4 |x_i - x_j|^2 / d_k(x_i)^2)``) of the concatenated standardised views; ``laplace_sum`` / ``poisson_sum`` on
  the sum of the per-view k-NN graphs (data with more than one view).
- ``poisson_priors`` / ``poisson_mbo`` / ``volume_mbo``: Poisson learning with class priors (graphlearning's volume
  label projection), PoissonMBO (Calder et al. 2020) and VolumeMBO (Jacobs, Merkurjev & Esedoglu 2018), graphlearning
  1.7.5 defaults, on the same graph, the class priors the proportions of the labelled points' classes (what a user
  has; on stratified draws uniform). The ``*_true`` variants take the true class proportions of every point in the
  graph, the authors' protocol: they read the labels of the evaluation points, so they are shown as a reference and
  are not among the graph methods MVL-LS is judged against. VolumeMBO's C code draws from the C library's ``rand``,
  seeded with the draw's seed before each fit (POSIX ``srand``). None of these run by default.
- ``labelspreading``: scikit-learn's LabelSpreading, k-NN kernel with the same k, alpha 0.2, max_iter 1000.

Inductive setting (``inductive: true``): per seed a stratified fifth of every class is held out (never in the
graph, the kernels' bandwidths, the standardisation or the fit); the labelled points are drawn among the rest as
above; the methods that predict new points (:data:`INDUCTIVE_METHODS`) are fit on the rest and scored on the
held-out points (setting "inductive").

No paper section for the peers (MVL-LS is Algorithm 1 / Theorem 10 of Minh, Bazzani & Murino 2016).
"""

from __future__ import annotations

import inspect
import time

import numpy as np

from . import io
from .figures import new_figure
from .runtime import data_options, execute_notebook, logged
from .methods import method as registry_method, methods_for
from .peers_settings import INDUCTIVE_METHODS, PEER_DATASETS, PEER_METHODS, PeersSettings, parse_settings

__all__ = ["PEER_METHODS", "INDUCTIVE_METHODS", "PEER_DATASETS", "PeersSettings", "parse_settings", "reference_numbers",
           "verdicts",
           "MVL_GRAPH_SETTING", "load_peer_data", "stratified_subset", "draw_labelled", "knn_graph", "graph_learning",
           "fit_method", "fit_mvl", "fit_graph_learning", "GRAPH_LEARNING", "class_priors",
           "fit_labelspreading", "holdout", "inductive_split",
           "run_peers", "write_run", "write_summary", "summarise",
           "accuracy_figure", "accuracy_table", "peers_run", "peers_summary", "peers_report",
           "GraphlearningUnavailable"]

MVL_GRAPH_SETTING = {k: v for k, v in registry_method("mvl_ls_graph", "peers").fit_params if k != "loss"}
"""``mvl_ls_graph``: the graph-regime setting (the others: the package defaults), from the method registry."""



def reference_numbers():
    """The accuracies (%) of the literature the report shows beside this study's, each with its source and
    protocol (:func:`mvl.data.published.load_reference`, table ``peers_reference``).

    Returns
    -------
    pandas.DataFrame
        Columns dataset, setting, l_c, method, quoted, source.
    """
    from ..data.published import load_reference

    ref = load_reference("peers_reference").rename(columns={"labels_per_class": "l_c", "accuracy": "quoted"})
    ref["l_c"] = ref["l_c"].astype(int)
    return ref[["dataset", "setting", "l_c", "method", "quoted", "source"]]


LABELS = {m.name: m.label for m in methods_for("peers")}
"""Method -> its label in the tables, legends and verdicts (the method registry's order)."""
DATASET_NAMES = {"mfeat": "UCI Multiple Features (6 views)", "uspst": "USPST (1 view)",
                 "mvmnist": "multi-view MNIST (4 views)"}


class GraphlearningUnavailable(ImportError):
    """graphlearning (the optional extra ``peers``) is not installed: Laplace and Poisson learning cannot run."""


def _graphlearning():
    try:
        import graphlearning
    except ImportError as err:
        raise GraphlearningUnavailable(
            "Laplace and Poisson learning are unavailable: graphlearning is not installed "
            "(pip install 'mvl[peers]', i.e. graphlearning==1.7.5); remove laplace*/poisson* from peers.methods "
            f"to run without them ({err})") from None
    return graphlearning


# ------------------------------------------------------------------ data


def load_peer_data(name, data_config=None):
    """(views, y, bns) of a peers data set: a list of (n, d_v) float64 arrays, labels 0..C-1, and for USPST the
    BNS-2006 labelled index sets (10, 50) (0-based; None for the others). ``data_config``: the config key ``data``
    (mirror, cache, offline) for the files that come through :mod:`mvl.data.download`."""
    if name == "mfeat":
        from ..data.embedded import load_mfeat

        ds = load_mfeat()
        return [np.asarray(v, dtype=np.float64) for v in ds.views], np.asarray(ds.y), None
    if name == "mvmnist":
        from ..data.embedded import load_multiview_mnist

        ds = load_multiview_mnist(data_options(data_config))
        return [np.asarray(v, dtype=np.float64) for v in ds.views], np.asarray(ds.y), None
    if name == "uspst":
        from pathlib import Path

        from ..data import download
        from ..data.ssl_benchmarks import load_ssl_benchmark

        paths = download.fetch("ssl_benchmarks", data_options(data_config))
        ds = load_ssl_benchmark("uspst", Path(paths["ssl_benchmarks/uspst.mat"]).parent)
        return [np.asarray(ds.X, dtype=np.float64)], np.asarray(ds.y), ds.idx_labelled
    raise ValueError(f"unknown peers data set {name!r}; one of mfeat, uspst, mvmnist")


def standardise(view):
    """Zero mean and unit variance per feature over all points (constant features left at zero)."""
    sd = view.std(axis=0)
    return (view - view.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def stratified_subset(y, per_class, seed):
    """Sorted indices of a seeded subset with min(per_class, class size) points of each class (all with None)."""
    if per_class is None:
        return np.arange(len(y))
    rng = np.random.default_rng([int(seed), 1])
    idx = [rng.permutation(np.flatnonzero(y == c))[:per_class] for c in np.unique(y)]
    return np.sort(np.concatenate(idx))


def draw_labelled(y, labels_per_class, seed):
    """{l_c: sorted labelled indices} for every l_c, l_c points per class drawn uniformly with ``seed``, nested
    (a class's permutation is drawn once and its first l_c points taken)."""
    rng = np.random.default_rng([int(seed), 2])
    perms = [rng.permutation(np.flatnonzero(y == c)) for c in np.unique(y)]
    out = {}
    for lc in labels_per_class:
        if any(len(p) <= lc for p in perms):
            raise ValueError(f"l_c = {lc} leaves a class without unlabelled points (class sizes "
                             f"{[len(p) for p in perms]})")
        out[lc] = np.sort(np.concatenate([p[:lc] for p in perms]))
    return out


# ------------------------------------------------------------------ methods


def knn_graph(X, k):
    """graphlearning's symmetrised k-NN weight matrix (Gaussian weights exp(-4 d^2 / d_k(x_i)^2), (W + W^T) / 2,
    zero diagonal) on exact neighbours (scikit-learn's search; graphlearning's own search needs annoy for d > 5)."""
    from sklearn.neighbors import NearestNeighbors

    gl = _graphlearning()
    dist, ind = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)
    return gl.weightmatrix.knn(None, k, knn_data=(ind, dist))


GRAPH_LEARNING = ("laplace", "poisson", "poisson_mbo", "volume_mbo")
"""graphlearning's classes (``graphlearning.ssl``) the peers run; the last two need class priors."""


def class_priors(y, labelled, source):
    """The class priors of the classes of the labelled points (sorted), from the proportions of the labelled points
    (``source`` "labelled") or of every point (``"true"``: reads every label), normalised to sum 1."""
    classes = np.unique(y[labelled])
    ref = {"labelled": y[labelled], "true": y}[source]
    counts = np.array([np.sum(ref == c) for c in classes], dtype=np.float64)
    return counts / counts.sum()


def _seed_c_rand(seed):
    """Seed the C library's ``rand`` (graphlearning's C extension draws from it) with ``seed``."""
    import ctypes

    ctypes.CDLL(None).srand(ctypes.c_uint(int(seed) % 2**32))


def graph_learning(W, labelled, y_labelled, method="laplace", class_priors=None, seed=None):
    """Predicted labels of every node by graphlearning's ``method`` (:data:`GRAPH_LEARNING`, defaults) on the weight
    matrix W, from the labels ``y_labelled`` of the nodes ``labelled``; labels are mapped to 0..c-1 and back.
    ``class_priors``: one per class of ``y_labelled`` (sorted), None for none (required by the MBO methods);
    ``seed``: the C library's ``rand`` is seeded with it before VolumeMBO (None: not seeded)."""
    gl = _graphlearning()
    if method not in GRAPH_LEARNING:
        raise ValueError(f"unknown graph learning method {method!r}; one of {GRAPH_LEARNING}")
    classes, codes = np.unique(y_labelled, return_inverse=True)
    if class_priors is None and method in ("poisson_mbo", "volume_mbo"):
        raise ValueError(f"{method} needs class_priors")
    kw = {}
    if class_priors is not None:
        priors = np.asarray(class_priors, dtype=np.float64)
        if priors.shape != classes.shape:
            raise ValueError(f"class_priors: one per labelled class ({len(classes)}), got {priors.shape}")
        kw["class_priors"] = priors / priors.sum()
    model = getattr(gl.ssl, method)(W, **kw)
    if method == "volume_mbo" and seed is not None:
        _seed_c_rand(seed)
    return classes[model.fit_predict(np.asarray(labelled), codes)]


def fit_method(method, views, y, labelled, k=10, graphs=None, test_views=None, seed=None):
    """Predicted labels of every point by ``method`` (:data:`PEER_METHODS`) from the labels
    of the points ``labelled``; ``views`` standardised; ``graphs`` a dict caching the k-NN graphs ("concat",
    "sum": the weight matrix and the seconds it took) over calls with the same points; ``test_views`` (the MVL-LS
    methods only): predict these points instead; ``seed`` (the draw's) passed to the fit functions that take one.
    Returns (predictions, solver or "", seconds of the graph build
    when the graph came from the cache, else 0: a method's time then always includes its graph). The method's fit
    function and its fixed keywords come from the method registry (:func:`mvl.workflow.methods.methods_for`)."""
    try:
        m = registry_method(method, "peers")
    except ValueError:
        raise ValueError(f"unknown peers method {method!r}; one of {PEER_METHODS}") from None
    graphs = {} if graphs is None else graphs
    if m.inductive:
        return m.fit_function()(views, y, labelled, k, graphs, test_views=test_views)
    if test_views is not None:
        raise ValueError(f"peers method {method!r} has no out-of-sample predictions; one of {INDUCTIVE_METHODS}")
    fit = m.fit_function()
    kw = {"seed": seed} if "seed" in inspect.signature(fit).parameters else {}
    return fit(views, y, labelled, k, graphs, **kw)


def fit_mvl(views, y, labelled, k, graphs, test_views=None, concatenate=False, **params):
    """:class:`mvl.MVLLeastSquares` with ``params`` (the package defaults otherwise) on the views, or on the
    views concatenated into one feature view (``concatenate``); every point in the training set, the unlabelled ones
    marked -1; predicts every point (or ``test_views``). ``k`` and ``graphs`` unused (its own graphs)."""
    from .. import MVLLeastSquares

    X = np.hstack(views)
    yy = np.full(len(y), -1, dtype=np.int64)
    yy[labelled] = y[labelled]
    sizes = [X.shape[1]] if concatenate else [v.shape[1] for v in views]
    est = MVLLeastSquares(views=sizes, **params).fit(X, yy)
    return est.predict(X if test_views is None else np.hstack(test_views)), est.solver_, 0.0


def fit_graph_learning(views, y, labelled, k, graphs, base, graph, priors=None, seed=None):
    """graphlearning's ``base`` (:data:`GRAPH_LEARNING`) on the k-NN graph of the concatenated views
    (``graph`` "concat") or on the sum of the per-view k-NN graphs ("sum"), built once per ``graphs`` cache;
    ``priors`` None, or the source of the class priors (:func:`class_priors`: "labelled" or "true"); ``seed``
    for VolumeMBO's draws."""
    cached = graph in graphs
    if not cached:
        t0 = time.perf_counter()
        W = knn_graph(np.hstack(views), k) if graph == "concat" else sum(knn_graph(v, k) for v in views)
        graphs[graph] = (W, time.perf_counter() - t0)
    W, build = graphs[graph]
    pri = None if priors is None else class_priors(y, labelled, priors)
    return graph_learning(W, labelled, y[labelled], base, class_priors=pri, seed=seed), "", build if cached else 0.0


def fit_labelspreading(views, y, labelled, k, graphs):
    """scikit-learn's LabelSpreading on the concatenated views, k-NN kernel, alpha 0.2, max_iter 1000."""
    from sklearn.semi_supervised import LabelSpreading

    yy = np.full(len(y), -1, dtype=np.int64)
    yy[labelled] = y[labelled]
    return LabelSpreading(kernel="knn", n_neighbors=k, max_iter=1000).fit(np.hstack(views), yy).transduction_, "", 0.0


def holdout(y, seed, fraction=0.2):
    """Boolean mask of a seeded stratified held-out ``fraction`` of every class (the inductive setting)."""
    rng = np.random.default_rng([int(seed), 3])
    mask = np.zeros(len(y), dtype=bool)
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        mask[idx[:round(fraction * len(idx))]] = True
    return mask


def inductive_split(views, y, seed):
    """(training views, held-out views, the held-out mask) of the inductive setting: :func:`holdout`'s seeded
    stratified fifth held out, each view standardised by the training points' mean and scale (a constant feature
    keeps scale 1)."""
    test = holdout(y, seed)
    tr = [v[~test] for v in views]
    mean = [v.mean(axis=0) for v in tr]
    sd = [np.where(v.std(axis=0) > 0, v.std(axis=0), 1.0) for v in tr]
    train_views = [(v - mu) / s for v, mu, s in zip(tr, mean, sd, strict=True)]
    test_views = [(v[test] - mu) / s for v, mu, s in zip(views, mean, sd, strict=True)]
    return train_views, test_views, test


def _inductive_rows(dataset, seed, settings, views, y):
    """The inductive setting of one seed (module docstring): rows as :func:`run_peers`'s, accuracy on the held-out
    points; ``views`` not yet standardised (the training points' mean and scale are applied to the held-out ones)."""
    train_views, test_views, test = inductive_split(views, y, seed)
    y_tr = y[~test]
    rows = []
    for lc, labelled in draw_labelled(y_tr, settings.labels_per_class, seed).items():
        for method in settings.methods:
            if method not in INDUCTIVE_METHODS or (len(views) == 1 and "one_view" not in _DATA[method]):
                continue
            t0 = time.perf_counter()
            pred, solver, _ = fit_method(method, train_views, y_tr, labelled, settings.n_neighbors,
                                         test_views=test_views)
            rows.append(dict(dataset=dataset, seed=int(seed), n=len(y_tr), n_views=len(views), setting="inductive",
                             l_c=int(lc), n_labelled=len(labelled), method=method, solver=solver,
                             accuracy=float(np.mean(pred == y[test])), seconds=time.perf_counter() - t0))
            print(f"[peers] {dataset} seed {seed} inductive l_c={lc}: {method} {100 * rows[-1]['accuracy']:.1f} % "
                  f"({rows[-1]['seconds']:.1f} s)", flush=True)
    return rows


def run_peers(dataset, seed, settings, data=None):
    """Every (setting, l_c, method) of one seed on one data set: a list of dict rows (dataset, seed, n, n_views,
    setting "stratified" or "bns", l_c, n_labelled, method, solver, accuracy on the unlabelled points, seconds).
    ``settings``: :class:`PeersSettings`; ``data``: (views, y, bns) as
    :func:`load_peer_data` returns them (loaded with the default data options if None)."""
    views, y, bns = load_peer_data(dataset) if data is None else data
    sub = stratified_subset(y, settings.points_per_class, seed)
    raw = [v[sub] for v in views]
    views = [standardise(v) for v in raw]
    y = y[sub]
    draws = [("stratified", lc, idx) for lc, idx in draw_labelled(y, settings.labels_per_class, seed).items()]
    if bns is not None and settings.points_per_class is None and seed < len(bns):
        lab = np.sort(bns[seed])
        draws.append(("bns", round(len(lab) / len(np.unique(y))), lab))
    if any("graphlearning" in registry_method(m, "peers").requires for m in settings.methods):
        _graphlearning()  # imported before the clocks start (and a missing package reported before any fit)
        import sklearn.neighbors  # noqa: F401
    rows = []
    graphs = {}  # the k-NN graphs do not depend on the labels: built once per job, their time charged to every use
    for setting, lc, labelled in draws:
        unl = np.ones(len(y), dtype=bool)
        unl[labelled] = False
        for method in settings.methods:
            if len(views) == 1 and "one_view" not in _DATA[method]:
                continue  # one view: the sum of the view graphs is the graph of the concatenation
            t0 = time.perf_counter()
            pred, solver, graph_seconds = fit_method(method, views, y, labelled, settings.n_neighbors, graphs,
                                                     seed=seed)
            rows.append(dict(dataset=dataset, seed=int(seed), n=len(y), n_views=len(views), setting=setting,
                             l_c=int(lc), n_labelled=len(labelled), method=method, solver=solver,
                             accuracy=float(np.mean(pred[unl] == y[unl])),
                             seconds=time.perf_counter() - t0 + graph_seconds))
            r = rows[-1]
            print(f"[peers] {dataset} seed {seed} {setting} l_c={lc}: {method} {100 * r['accuracy']:.1f} % "
                  f"({r['seconds']:.1f} s)", flush=True)
    if getattr(settings, "inductive", False):
        rows += _inductive_rows(dataset, seed, settings, raw, y)
    return rows


def write_run(dataset, seed, settings, out, data_config=None):
    """:func:`run_peers` of one (data set, seed) as a CSV ``out`` (atomic, checksum sidecar)."""
    rows = run_peers(dataset, seed, settings, load_peer_data(dataset, data_config))
    io.save_rows_csv(out, rows, checksum=True)
    return rows


def summarise(results):
    """Mean, standard deviation (ddof 1) and count over seeds of the accuracy (%) and time, per data set, setting,
    l_c and method."""
    keys = ["dataset", "setting", "l_c", "method"]
    g = results.assign(accuracy=100 * results["accuracy"]).groupby(keys, sort=False)
    out = g.agg(n=("n", "first"), n_labelled=("n_labelled", "first"), mean=("accuracy", "mean"),
                std=("accuracy", "std"), seeds=("seed", "nunique"), seconds=("seconds", "mean")).reset_index()
    return out


GRAPH_METHODS = tuple(m.name for m in methods_for("peers") if m.baseline)
"""The graph methods every MVL-LS variant is judged against."""
MVL_METHODS = INDUCTIVE_METHODS
"""The MVL-LS variants."""
_DATA = {m.name: m.data for m in methods_for("peers")}  # the data kinds of each method (one view or several)


def verdicts(results, alpha=None, min_pairs=None):
    """The comparisons the peers report concludes on, judged together by :func:`mvl.workflow.verdict.judge` (one
    family, paired over the seeds, i.e. the labelled draws): per (data set, setting, l_c), every MVL-LS variant
    against the graph method with the best mean there, and Laplace learning against Poisson learning (on the
    concatenated views' graph). ``results``: the per-seed table (columns dataset, setting, l_c, method, seed,
    accuracy as a fraction). Returns a list of :class:`mvl.workflow.verdict.Verdict`."""
    from .verdict import ALPHA, MIN_PAIRS, judge

    family = []
    for (d, setting, lc), g in results.groupby(["dataset", "setting", "l_c"], sort=False):
        by = {m: gg.set_index("seed")["accuracy"] for m, gg in g.groupby("method")}
        where = f"{d}, {'BNS split (l = 50)' if setting == 'bns' else f'l_c = {int(lc)}'}"
        if setting not in ("stratified", "bns"):
            where += f" ({setting})"
        peers = [m for m in GRAPH_METHODS if m in by]
        if peers:
            top = max(peers, key=lambda m: by[m].mean())
            family += [dict(a=LABELS[m], b=f"{LABELS[top]} (best graph method here)", x=by[m], y=by[top],
                            context=where) for m in MVL_METHODS if m in by]
        if "laplace" in by and "poisson" in by:
            family.append(dict(a=LABELS["laplace"], b=LABELS["poisson"], x=by["laplace"], y=by["poisson"],
                               context=where))
    return judge(family, alpha=ALPHA if alpha is None else alpha,
                 min_pairs=MIN_PAIRS if min_pairs is None else min_pairs, unit="draws")


def write_summary(inputs, results_out, summary_out):
    """The run CSVs ``inputs`` as one tidy table ``results_out`` and its :func:`summarise` ``summary_out``."""
    import pandas as pd

    table = pd.concat([pd.read_csv(f) for f in inputs], ignore_index=True)
    io.save_csv(results_out, table, checksum=True, inputs=list(inputs))
    summary = summarise(table)
    io.save_csv(summary_out, summary, checksum=True, inputs=[results_out])
    return table, summary


def accuracy_figure(summary):
    """Accuracy on the unlabelled points against the labelled points per class, one panel per data set, one line
    per method with the standard deviation over seeds as error bars (USPST's BNS splits as a separate point; the
    inductive setting's accuracy on held-out points dashed, in the method's colour); the legend below the panels
    (save with ``bbox_inches="tight"``, :func:`mvl.workflow.figures.save_figure`).

    Parameters
    ----------
    summary : pandas.DataFrame
        The summary of :func:`summarise` (dataset, setting, l_c, method, mean, std, seeds, n).

    Returns
    -------
    matplotlib.figure.Figure
    """
    import matplotlib

    datasets = list(dict.fromkeys(summary["dataset"]))
    fig, axes = new_figure(1, len(datasets), max(5.2 * len(datasets), 8.0), 4.6, layout=None)
    methods = [m for m in PEER_METHODS if m in set(summary["method"])]
    # one colour per method in every run (the registry's order), whichever methods a run has
    palette = matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]
    palette = palette + [c for c in matplotlib.colormaps["tab20"].colors[1::2] if c not in palette]
    colours = {m: palette[i % len(palette)] for i, m in enumerate(PEER_METHODS)}
    for ax, d in zip(axes[0], datasets, strict=True):
        s = summary[summary["dataset"] == d]
        ticks = sorted(s.loc[s["setting"] == "stratified", "l_c"].unique())
        x_of = {lc: i for i, lc in enumerate(ticks)}
        for j, m in enumerate(methods):
            g = s[(s["method"] == m) & (s["setting"] == "stratified")].sort_values("l_c")
            if g.empty:
                continue
            off = (j - (len(methods) - 1) / 2) * 0.05  # a small shift so that error bars do not hide each other
            ax.errorbar([x_of[v] + off for v in g["l_c"]], g["mean"], yerr=g["std"].fillna(0), marker="o",
                        capsize=3, color=colours[m], label=LABELS[m])
            h = s[(s["method"] == m) & (s["setting"] == "inductive") & s["l_c"].isin(ticks)].sort_values("l_c")
            if not h.empty:  # the same method on held-out points: dashed, the same colour
                ax.errorbar([x_of[v] + off for v in h["l_c"]], h["mean"], yerr=h["std"].fillna(0), marker="^",
                            capsize=3, color=colours[m], linestyle="--", label=f"{LABELS[m]}, held-out points")
            b = s[(s["method"] == m) & (s["setting"] == "bns")]
            if not b.empty:
                ax.errorbar([len(ticks) + off], b["mean"], yerr=b["std"].fillna(0), marker="s", capsize=3,
                            color=colours[m])
        labels = [str(v) for v in ticks]
        if (s["setting"] == "bns").any():
            labels.append("BNS split\n(l = 50)")
        ax.set_xticks(range(len(labels)))
        ax.set_xticklabels(labels)
        ax.set_xlim(-0.4, len(labels) - 0.6)
        n = int(s["n"].iloc[0])
        seeds = int(s["seeds"].max())
        ax.set(xlabel="labelled points per class", ylabel="accuracy on the unlabelled points (%)",
               title=f"{DATASET_NAMES.get(d, d)}\nn = {n:,}, {seeds} draw{'s' if seeds > 1 else ''}")
        ax.grid(True, alpha=0.3)
    handles, names = axes[0][0].get_legend_handles_labels()
    for ax in axes[0][1:]:
        h, nm = ax.get_legend_handles_labels()
        for hh, nn in zip(h, nm, strict=True):
            if nn not in names:
                handles.append(hh)
                names.append(nn)
    ncol = min(3 if len(datasets) == 1 else 4, len(names))
    fig.tight_layout()
    fig.legend(handles, names, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=ncol, fontsize=9, frameon=False)
    return fig


# ------------------------------------------------------------------ rule entry points


def peers_run(smk):
    """Rule ``peers_run``: one (data set, seed) (wildcards), settings from params ``settings``."""
    with logged(smk):
        t0 = time.perf_counter()
        rows = write_run(smk.wildcards.pds, int(smk.wildcards.seed), smk.params.settings, smk.output[0],
                         data_config=smk.config.get("data"))
        print(f"[peers] {len(rows)} rows in {time.perf_counter() - t0:.1f} s -> {smk.output[0]}")


def peers_summary(smk):
    """Rule ``peers_summary``: every run's rows in one CSV, and the mean and std over seeds."""
    with logged(smk):
        write_summary(list(smk.input), smk.output.results, smk.output.summary)


def peers_report(smk):
    """Rule ``peers_report``: the jupytext notebook executed with papermill (parameters: the CSVs, the figure
    paths, the settings as JSON)."""
    import json

    with logged(smk):
        out = smk.output.notebook
        parameters = {"results_csv": smk.input.results, "summary_csv": smk.input.summary, "fig_png": smk.output.png,
                      "fig_pdf": smk.output.pdf, "settings": json.dumps(smk.params.settings._asdict())}
        execute_notebook(smk.input.notebook, out, parameters, outputs=list(smk.output))
        print(f"[peers_report] -> {out}")


def accuracy_table(summary):
    """The summary as one text table: a row per (data set, setting, l_c), a column per method, "mean ± std"."""
    import pandas as pd

    cell = [f"{m:.1f} ± {0.0 if pd.isna(s) else s:.1f}" for m, s in zip(summary["mean"], summary["std"], strict=True)]
    t = summary.assign(value=cell).pivot_table(index=["dataset", "setting", "l_c", "n", "seeds"], columns="method",
                                                values="value", aggfunc="first")
    return t[[m for m in PEER_METHODS if m in t.columns]]


def main(argv=None):
    """``python -m mvl.workflow.peers results/peers/summary.csv``: the accuracy table (%, mean ± std over seeds)."""
    import argparse

    import pandas as pd

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("summary", help="summary.csv of the peers study")
    args = parser.parse_args(argv)
    with pd.option_context("display.width", 250, "display.max_columns", 20):
        print(accuracy_table(pd.read_csv(args.summary)).to_string())


if __name__ == "__main__":
    main()
