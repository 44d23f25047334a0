"""Running the co-regularization benchmark: MR vs CoMR on one seeded split (Sindhwani & Rosenberg, ICML 2008,
"SR", Section 4.3, Tables 2-4) and the statistics over seeds; what the co-regularization rules call (through
:func:`mvl.workflow.coreg_study.write_coreg`).

:func:`run_split` runs MR (Laplacian RLS) and CoMR on one (dataset, seed) split with the parameters of SR Table 4
over the whole (gamma_1, gamma_2) grid and both kNN graph weight conventions (binary and kernel weights), marking
the pair chosen on the split's validation set; :func:`summarize` and :func:`paired_ttest` compare MR and CoMR over
seeds. The data, splits and kernels come from :mod:`mvl.data.ssl_benchmarks`, the solvers from :mod:`mvl.coreg`
(the co-regularized least squares of JMLR Section 3.4); the protocols built on the rows are in
:mod:`mvl.workflow.coreg_report`. Error rates are in percent, as in SR Tables 2-3.
"""

from __future__ import annotations

import os
import time
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from ..estimators.base import encode_targets
from ..coreg import GAMMA_GRID, ambient_spectrum, comr_grid, graph_weights_name, mr_grid, select_on_validation
from ..data.ssl_benchmarks import graph_kernels, prepare_split, resolve_parameters
from .methods import methods_for

__all__ = ["run_split", "summarize", "paired_ttest", "mr_fits", "comr_fits"]


def mr_fits(K1, graph, lab, Y_L, K1e, grid, spectrum, mu, coreg_points):
    """MR (Laplacian RLS with k1 and R, SR eq 13) over the grid from one eigendecomposition: (gamma_1, gamma_2) ->
    (f on the training points, the same, f on the evaluation points); ``mu`` and ``coreg_points`` unused."""
    fits = mr_grid(K1, graph["R"], lab, Y_L, K1e, grid, K1_spectrum=spectrum)
    return {k: (ft, ft, fe) for k, (ft, fe) in fits.items()}


def comr_fits(K1, graph, lab, Y_L, K1e, grid, spectrum, mu, coreg_points):
    """CoMR (co-regularized RLS with k1 and K2, weight ``mu``, SR eq 2, 7) over the grid: (gamma_1, gamma_2) ->
    (the mean (f1 + f2)/2 on the training points, f1 there, f1 on the evaluation points)."""
    return comr_grid(K1, graph["K2"], lab, Y_L, K1e, mu=mu, grid=grid, coreg_points=coreg_points)


def _errors(F, y):
    return 100.0 * float(np.mean(np.argmax(F, axis=1) != y))


@validate_params({"dataset": [str], "seed": [Interval(Integral, 0, None, closed="left")],
                  "data_dir": [None, str, os.PathLike],
                  "X": [None, "array-like", "sparse matrix"], "y": [None, "array-like"], "sizes": [None, tuple, list],
                  "params": [None, dict],
                  "grid": ["array-like"], "mu": [Interval(Real, 0, None, closed="left")], "all_grid": ["boolean"],
                  "coreg_on": [StrOptions({"unlabelled", "all"})],
                  "blas_threads": [None, Interval(Integral, 1, None, closed="left")],
                  "graph_weights": [None, str, list, tuple]}, prefer_skip_nested_validation=True)
def run_split(dataset, seed, data_dir=None, X=None, y=None, sizes=None, params=None, grid=GAMMA_GRID, mu=1.0,
              all_grid=False, coreg_on="unlabelled", blas_threads=1, graph_weights=None):
    """Run MR (Laplacian RLS) and CoMR on one seeded split of ``dataset`` (SR Section 4.3) for every
    (gamma_1, gamma_2) of the grid and every kNN graph weight convention.

    Training points are the l labelled and u unlabelled points; the kNN graph, its normalized Laplacian M,
    R = M^p + 1e-6 I and the intrinsic Gram matrix K2 = R^-1 live on them. MR: Laplacian RLS with k1 and R
    (SR eq 13). CoMR: co-regularized RLS with k1 and K2 on the unlabelled points, mu = 1 (SR eq 2, 7). Multi-
    class problems are one-vs-rest with +-1 targets, prediction by the largest output. Test and validation
    points are out of sample: MR predicts with f, CoMR with its ambient component f1 (SR eq 9). The data,
    split, ambient kernel and distances are shared by both weight conventions; the graph and K2 are built per
    convention. MR solves the whole grid from one eigendecomposition (:func:`mvl.coreg.mr_grid`), CoMR with one
    Cholesky factorisation per pair (:func:`mvl.coreg.comr_grid`).

    The ``selected`` rows are per-split validation selection (protocol (a) of :mod:`mvl.workflow.coreg_report`):
    within each (method, graph_weights), the pair with the smallest validation error, ties broken by the
    smaller validation squared loss, then by grid order (:func:`mvl.coreg.select_on_validation`).

    Parameters
    ----------
    dataset : "lines", "g50c", "uspst", "coil20" or "pcmac"
    seed : int; seeds the split (and the LINES sample).
    data_dir : directory (or file) of the benchmark files; unused for LINES or when ``X``, ``y`` are given.
    sizes : (l, u, t, v), default :data:`SPLIT_SIZES` (smaller sizes give a reduced run).
    params : overrides of :data:`SR_PARAMETERS` (n_neighbors, sigma, laplacian_power (alias p), kernel,
        preprocess, each_class_labelled, graph_weights).
    grid : values tried for gamma_1 and for gamma_2 (default :data:`mvl.coreg.GAMMA_GRID`).
    mu : co-regularization weight of CoMR (SR Table 4: 1).
    coreg_on : "unlabelled" (SR eq 2: agreement on the unlabelled points) or "all" (on all l + u training points,
        the between-view operator of JMLR eq 57 / :class:`mvl.MVLLeastSquares`).
    all_grid : return every grid row (with the ``selected`` column) instead of the selected rows only.
    blas_threads : BLAS threads during the run (threadpoolctl), default 1; numpy and scipy ship separate
        OpenBLAS pools whose busy-waiting threads compete when calls alternate between them (a Cholesky of
        size 1430 took 10x longer on 2 shared cores). None leaves the pools as they are.
    graph_weights : a weight convention ("binary", "kernel"; "heat" = "kernel") or a sequence of them. Default:
        ``params["graph_weights"]`` if given, else both conventions where SR Table 4 gives sigma (binary only
        for LINES).

    Returns
    -------
    pandas.DataFrame with columns dataset, seed, method (MR, CoMR), graph_weights, gamma1, gamma2,
    validation_error, validation_loss (mean squared loss of the outputs against the +-1 targets on the
    validation points), test_error, unlabelled_error (CoMR: the mean (f1 + f2)/2, its transductive
    prediction), unlabelled_error_ambient (CoMR: f1; MR: same as unlabelled_error), selected, coreg_on, l, u,
    t, v, seconds (the whole call). Errors are in percent. Rows are ordered by graph_weights, method (MR, CoMR)
    and grid order (gamma_1, then gamma_2).
    """
    if blas_threads is not None:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=int(blas_threads), user_api="blas"):
            return run_split(dataset, seed, data_dir, X, y, sizes, params, grid, mu, all_grid, coreg_on,
                             blas_threads=None, graph_weights=graph_weights)
    import pandas as pd

    t0 = time.perf_counter()
    key, par = resolve_parameters(dataset, params)
    if graph_weights is None:
        if params and "graph_weights" in params:
            conventions = [par["graph_weights"]]
        else:
            conventions = ["binary"] + (["kernel"] if par.get("sigma") is not None else [])
    else:
        conventions = [graph_weights] if isinstance(graph_weights, str) else list(graph_weights)
        conventions = list(dict.fromkeys(graph_weights_name(w) for w in conventions))
        if not conventions:
            raise ValueError("graph_weights: give at least one weight convention")
    d = prepare_split(dataset, seed, data_dir, X, y, sizes, dict(params or {}, graph_weights=conventions[0]))
    sp = d["split"]
    n_l, n_u, n_t, n_v = (sp[k].size for k in ("labelled", "unlabelled", "test", "validation"))
    K1, K1e, lab, Y_L = d["K1"], d["K1_eval"], d["labelled"], d["Y_L"]
    Y_val = encode_targets(d["y_val"], d["classes"].size)
    unl_rows = np.arange(n_l, n_l + n_u)
    y_unl = d["y_train"][unl_rows]
    spectrum = ambient_spectrum(K1)
    rows = []
    for weights in conventions:
        graph = d if weights == conventions[0] else graph_kernels(d["sqdist"], d["params"], weights)
        coreg_points = np.arange(K1.shape[0]) if coreg_on == "all" else None
        results = {m.name: m.fit_function()(K1, graph, lab, Y_L, K1e, grid, spectrum, mu, coreg_points)
                   for m in methods_for("coreg")}  # MR, CoMR (the method registry)
        del graph
        for method, res in results.items():
            val_err = {k: _errors(r[2][:n_v], d["y_val"]) for k, r in res.items()}
            val_loss = {k: float(np.mean((r[2][:n_v] - Y_val) ** 2)) for k, r in res.items()}
            best = select_on_validation(val_err, val_loss)
            for k, (f_tr, f1_tr, f_ev) in res.items():
                if not all_grid and k != best:
                    continue
                rows.append(dict(
                    dataset=d["key"], seed=int(seed), method=method, graph_weights=weights, gamma1=k[0],
                    gamma2=k[1], validation_error=val_err[k], validation_loss=val_loss[k],
                    test_error=_errors(f_ev[n_v:], d["y_test"]),
                    unlabelled_error=_errors(f_tr[unl_rows], y_unl),
                    unlabelled_error_ambient=_errors(f1_tr[unl_rows], y_unl),
                    selected=(k == best), coreg_on=coreg_on, l=n_l, u=n_u, t=n_t, v=n_v,
                ))
    df = pd.DataFrame(rows)
    df["seconds"] = time.perf_counter() - t0
    return df


def _groups(df):
    """Grouping columns of a results table: dataset, and graph_weights where present."""
    return ["dataset"] + (["graph_weights"] if "graph_weights" in df else [])


def summarize(rows, metrics=("test_error", "unlabelled_error")):
    """Mean and standard deviation (ddof = 1, as MATLAB's std) over seeds of the selected rows (per-split
    validation selection), per dataset, graph_weights (where the column exists) and method."""
    df = rows[rows["selected"].astype(bool)] if "selected" in rows else rows
    agg = df.groupby(_groups(df) + ["method"], sort=False)[list(metrics)].agg(["mean", "std", "count"])
    agg.columns = [f"{m}_{s}" for m, s in agg.columns]
    return agg.reset_index()


def paired_ttest(rows, metric="test_error", a="MR", b="CoMR", alpha=0.05):
    """Paired t-test (scipy.stats.ttest_rel) of ``metric`` between methods ``a`` and ``b`` over the seeds of
    each dataset (and graph_weights, where the column exists) on the selected rows (SR Section 4.3: 5% level).
    Returns a DataFrame with dataset, (graph_weights,) metric, n, mean_a, mean_b, t, p_value and significant
    (p < alpha; False when the differences are all zero, p = NaN)."""
    import pandas as pd
    from scipy import stats

    df = rows[rows["selected"].astype(bool)] if "selected" in rows else rows
    keys = _groups(df)
    out = []
    for key, g in df.groupby(keys, sort=False):
        if g.duplicated(["seed", "method"]).any():
            raise ValueError(f"{dict(zip(keys, key, strict=True))}: more than one row per seed and method")
        wide = g.pivot(index="seed", columns="method", values=metric)
        wide = wide.dropna(subset=[a, b])
        xa, xb = wide[a].to_numpy(), wide[b].to_numpy()
        if xa.size < 2 or np.all(xa == xb):
            t, pv = np.nan, np.nan
        else:
            t, pv = stats.ttest_rel(xa, xb)
        out.append(dict(zip(keys, key, strict=True), metric=metric, n=int(xa.size), mean_a=float(np.mean(xa)),
                        mean_b=float(np.mean(xb)), t=float(t), p_value=float(pv),
                        significant=bool(np.isfinite(pv) and pv < alpha)))
    return pd.DataFrame(out)
