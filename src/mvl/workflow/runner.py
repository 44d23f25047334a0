"""One workflow job: every run of one (dataset, split seed, method family) in one process.

Starting a Python process with numpy, scipy and pandas costs about 1.5 s of CPU, while most fits of the
mfeat study take milliseconds; so a job runs a whole unit of work (:func:`unit_tasks`: every l_c, u_c and
method of one family for one split), sharing the data, the split's kernels and the validation selection
(made once per split and u_c at l_c = ``grid_labels_per_class``, Section 7.3) across its runs. It writes
one tidy CSV (atomically, with its checksum sidecar, :mod:`mvl.workflow.io`) and one progress line per run to its
log. An interrupted job is rerun whole.

:func:`unit_tasks` is also what the Snakefile reads to know which units exist and what they cost
(:func:`unit_cost`, in MVL-LS fits, for the cluster resources).
"""

from __future__ import annotations

import pickle
import time

import numpy as np

from . import io
from ..fileio import redirected_output
from .experiments import run_on_draw, select_gammas_on_draw
from ..kernels import gaussian_kernel, linear_kernel
from ..data.paper import SOURCES
from ..data.protocols import SplitKernels, official_split, stratified_split
from .methods import FAMILIES, method

__all__ = ["DEFAULT_METHODS", "PAPER_SOURCES", "unit_tasks", "unit_cost", "run_params", "split_for_seed",
           "split_kernels", "unit_source", "draw", "views_of", "run_unit"]

PAPER_SOURCES = SOURCES  # the paper datasets (mvl.data.paper.SOURCES)

DEFAULT_METHODS = {
    "supervised": ["mvl_ls", "mvl_svm", "mvl_binsvm", "svc_sum", "single_views"],
    "semi": ["mvl_ls", "mvl_ls_cv", "mvl_ls_cvgraph", "mvl_svm", "mvl_binsvm", "single_views"],
}


def _u_max(settings):
    counts = list(settings["unlabelled_per_class"]) + list(settings["ablation"]["unlabelled_per_class"]) + [0]
    return max(u for u in counts if u != "all")


def run_params(settings):
    """What the runs of one dataset need from its merged settings (``dataset_settings.<name>`` over the
    defaults)."""
    return {"gammas": settings["gammas"], "grid": settings["grid"], "graph": settings["graph"],
            "n_val_per_class": settings["n_val_per_class"], "u_max": _u_max(settings), "svc_C": settings["svc_C"],
            "optc": settings["optc"], "draw_seed": settings.get("draw_seed", 0),
            "comparison": settings.get("comparison", {})}


def _all_tasks(settings):
    """Every (l_c, u_c, method) of one split; u_c = 0 is the supervised setting (duplicates removed)."""
    out = []
    methods = dict(DEFAULT_METHODS, **settings.get("methods", {}))
    semi_lc = settings.get("semi_labels_per_class") or settings["labels_per_class"]
    for lc in settings["labels_per_class"]:
        out += [(lc, 0, m) for m in methods["supervised"]]
        for uc in settings["unlabelled_per_class"] if lc in semi_lc else []:
            out += [(lc, uc, m) for m in methods["semi"]]
    for lc in settings["optc"]["labels_per_class"]:
        out += [(lc, 0, f"mvl_ls_optc{it}") for it in settings["optc"]["iterations"]]
    comparison = settings.get("comparison") or {}
    for lc in comparison.get("labels_per_class", []):
        out += [(lc, 0, m) for m in comparison.get("methods", [])]
    ab = settings["ablation"]
    for lc in ab["labels_per_class"]:
        for uc in ab["unlabelled_per_class"]:
            out += [(lc, uc, m) for m in ab.get("methods", ["mvl_ls_ablation"])]
    seen, unique = set(), []
    for t in out:
        if t not in seen:
            seen.add(t)
            unique.append(t)
    return unique


def unit_tasks(settings, family):
    """The runs of one unit: (l_c, u_c, method) of ``family`` for any split of the dataset, in a fixed order."""
    if family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}; families are {FAMILIES}")
    return [t for t in _all_tasks(settings) if method(t[2]).family == family]


def unit_cost(settings, family, n_points):
    """Cost of one unit in structured MVL-LS fits: the runs' fits, each at its size relative to the largest
    (``n_points(l_c, u_c)`` gives a run's training points), plus the validation grids (0.75 fits per grid point
    per graph, measured)."""
    tasks = unit_tasks(settings, family)
    if not tasks:
        return 0.0
    sizes = {(lc, uc): n_points(lc, uc) for lc, uc, _ in tasks}
    big = max(sizes.values())
    fits = sum(method(m).fits * (sizes[lc, uc] / big) ** 3 for lc, uc, m in tasks)
    sel = {uc for lc, uc, m in tasks if method(m).uses_selection}
    if sel:
        g = settings["grid"]
        pick = settings["graph"].get("select") or {}
        graphs = 1 + len(pick.get("n_neighbors", [])) * len(pick.get("laplacian_power", [1]))
        lc_sel = settings.get("grid_labels_per_class") or max(lc for lc, _, _ in tasks)
        per = 0.75 * graphs * len(g["A"]) * len(g["B"]) * len(g["W"])
        fits += sum(per * (n_points(lc_sel, uc) / big) ** 3 for uc in sel)
    return fits


# ------------------------------------------------------------------ data of one split


def split_for_seed(data, protocol, seed):
    """The split of ``seed`` under the dataset's protocol (random stratified, or its official splits)."""
    y = data["y"]
    if protocol["type"] == "random":
        return stratified_split(y, protocol["n_test_per_class"], seed=seed)
    if protocol["type"] == "official":
        keys = [f"split{seed}_{role}" for role in ("labelled", "unlabelled", "validation", "test")]
        absent = [k for k in keys if k not in data.files]
        if absent:
            have = sorted({k.split("_")[0] for k in data.files if k.startswith("split")})
            raise ValueError(f"official split {seed} is not in the dataset (missing {absent}; it has {have})")
        return official_split(y, *(data[k] for k in keys), seed=seed)
    raise ValueError(f"unknown protocol type {protocol['type']!r}")


def split_kernels(data, split, view, spec):
    """Kernel of one view for one split: pool x pool and test x pool, parameters from the pool only."""
    kind = spec.get("type", "gaussian")
    if f"kernel_{view}" in data.files:  # a full kernel over all samples: rows/columns of pool and test
        if kind != "precomputed":
            raise ValueError(f"view {view} is stored as a kernel matrix; set kernel type: precomputed")
        Kall = data[f"kernel_{view}"]
        return Kall[np.ix_(split.pool, split.pool)], Kall[np.ix_(split.test, split.pool)]
    if kind == "precomputed":
        raise ValueError(f"kernel type precomputed, but view {view} is stored as features")
    X = data[f"view_{view}"]
    std = bool(spec.get("standardize", True))
    if kind == "gaussian":
        return gaussian_kernel(X[split.pool], X[split.test], bandwidth=spec.get("bandwidth", "median"),
                               standardize_features=std)
    if kind == "linear":
        return linear_kernel(X[split.pool], X[split.test], standardize_features=std)
    raise ValueError(f"unknown kernel type {kind!r}")


def unit_source(settings, seed, data_path, log=None):
    """What every draw of one unit (dataset, split ``seed``) comes from, an object with a ``kernel_draw`` method:
    the prepared paper dataset (the pickle of :mod:`mvl.data.paper`'s loaders, with their protocols,
    Section 7.2), or the split's kernels of every view, computed once per unit
    (:class:`mvl.data.protocols.SplitKernels`)."""
    t0 = time.perf_counter()
    views = list(settings["views"])
    if settings["source"] in PAPER_SOURCES:
        with open(data_path, "rb") as fh:
            return pickle.load(fh)
    data = np.load(data_path)
    split = split_for_seed(data, settings["protocol"], seed)
    # every view's kernels once per unit, stacked sample-first (N, N, m) and (T, N, m); draws slice them
    K_pool = np.empty((split.pool.size, split.pool.size, len(views)))
    K_test = np.empty((split.test.size, split.pool.size, len(views)))
    for i, v in enumerate(views):
        K_pool[..., i], K_test[..., i] = split_kernels(data, split, v, settings["kernel"])
    if log is not None:
        log(f"[unit] split: pool {split.pool.size}, test {split.test.size}; kernels of {len(views)} views "
            f"({time.perf_counter() - t0:.1f} s)")
    return SplitKernels(K_pool=K_pool, K_test=K_test, y=data["y"], split=split, view_names=tuple(views))


def draw(source, seed, l_c, u_c, params, views, needs_validation):
    """The :class:`mvl.data.protocols.KernelDraw` of one run, the same object for every dataset: the draw of
    (``seed``, l_c, u_c) from the unit's ``source`` (:func:`unit_source`) on ``views``, with a validation set when
    the method ``needs_validation``."""
    return source.kernel_draw(seed, l_c, u_c, n_val_per_class=int(params["n_val_per_class"]),
                              validation=needs_validation, u_max=params.get("u_max"),
                              draw_seed=int(params.get("draw_seed", 0)), views=list(views))


# ------------------------------------------------------------------ the unit


def views_of(name, views):
    """The views a method uses: one for ``view_<name>``, all otherwise (the registry's ``Method.view``)."""
    view = method(name).view
    if view is None:
        return list(views)
    if view not in views:
        raise ValueError(f"method {name!r}: unknown view {view!r}; views are {list(views)}")
    return [view]


def run_unit(settings, dataset, seed, family, data_path, out, log=None):
    """Run every task of the unit (``settings``: the dataset's merged settings; ``data_path``: its
    ``dataset.npz``, or the prepared pickle of a paper dataset) and write the rows to ``out`` (CSV + sidecar).
    Returns the rows."""
    log = log or (lambda text: print(text, flush=True))
    t_unit = time.perf_counter()
    params = run_params(settings)
    tasks = unit_tasks(settings, family)
    views = list(settings["views"])
    log(f"[unit] {dataset} seed {seed} family {family}: {len(tasks)} runs")
    source = unit_source(settings, seed, data_path, log)

    selections = {}

    def selection(lc, uc):
        lc_sel = settings.get("grid_labels_per_class") or lc
        if (lc_sel, uc) not in selections:
            t0 = time.perf_counter()
            sel = select_gammas_on_draw(draw(source, seed, lc_sel, uc, params, views, True), lc_sel, uc, params)
            g = sel["graph_selected"]
            log(f"[select] l_c={lc_sel} u_c={uc}: paper graph gamma_A={sel['gamma_A']:g} gamma_B={sel['gamma_B']:g} "
                f"gamma_W={sel['gamma_W']:g} (validation {sel['val_accuracy']:.4f}); selected graph "
                f"n_neighbors={g['n_neighbors']} p={g['laplacian_power']} gamma_A={g['gamma_A']:g} "
                f"gamma_B={g['gamma_B']:g} gamma_W={g['gamma_W']:g} (validation {g['val_accuracy']:.4f}); "
                f"{sel['grid_size']} grid points in {time.perf_counter() - t0:.1f} s")
            selections[lc_sel, uc] = sel
        return selections[lc_sel, uc]

    rows = []
    for i, (lc, uc, name) in enumerate(tasks, 1):
        t0 = time.perf_counter()
        m = method(name)
        sel = selection(lc, uc) if m.uses_selection else None
        d = draw(source, seed, lc, uc, params, views_of(name, views), m.needs_validation)
        new = run_on_draw(name, d, lc, uc, params, d.view_names, dataset=dataset, seed=seed, selected=sel)
        rows += new
        accs = ", ".join(f"{r['accuracy']:.4f}" for r in new)
        log(f"[run {i}/{len(tasks)}] {name} l_c={lc} u_c={uc}: accuracy {accs} ({time.perf_counter() - t0:.2f} s)")
    io.save_rows_csv(out, rows, checksum=True, inputs=[data_path])
    log(f"[unit] {len(rows)} rows in {time.perf_counter() - t_unit:.1f} s -> {out}")
    return rows


def main(smk):
    """Entry point of the Snakemake rule ``run`` (``script:``): the settings come from the rule's params, the
    progress goes to the rule's log."""
    from threadpoolctl import threadpool_limits

    with redirected_output(smk.log[0]):
        # one BLAS thread per thread of the job: the units run side by side (snakemake --cores N), and
        # numpy's and scipy's separate OpenBLAS pools busy-wait against each other when both are threaded
        with threadpool_limits(limits=max(1, int(smk.threads)), user_api="blas"):
            run_unit(smk.params.settings, smk.wildcards.dataset, int(smk.wildcards.seed),
                     smk.wildcards.family, smk.input.data, smk.output[0])
