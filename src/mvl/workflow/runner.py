"""One workflow job: every run of one (dataset, split seed, method family) in one process.

Starting a Python process with numpy, scipy and pandas costs about 1.5 s of CPU, while most fits of the
mfeat study take milliseconds; so a job runs a whole unit of work (a :class:`mvl.workflow.settings.Unit`: every
l_c, u_c and method of one family for one split), sharing the data, the split's kernels and the validation
selection (made once per split and u_c at l_c = ``grid_labels_per_class``, Section 7.3) across its runs. It
writes one tidy CSV (atomically, with its checksum sidecar, :mod:`mvl.workflow.io`) and one progress line per
run to its log. An interrupted job is rerun whole.
"""

from __future__ import annotations

import time

import numpy as np

from ..data.protocols import SplitKernels, official_split, stratified_split
from ..data.sources import source as data_source
from ..kernels import rbf_kernel, linear_kernel
from . import io
from .experiments import run_on_draw, select_gammas_on_draw
from .methods import method
from .prepared import load_prepared

__all__ = ["split_for_seed", "split_kernels", "unit_source", "draw", "views_of", "run_unit"]


# ------------------------------------------------------------------ data of one split


def split_for_seed(data, protocol, seed):
    """The split of ``seed`` under the dataset's :class:`mvl.workflow.settings.Protocol` (random stratified, or
    its official splits)."""
    y = data["y"]
    if protocol.type == "random":
        return stratified_split(y, protocol.n_test_per_class, seed=seed)
    if protocol.type == "official":
        keys = [f"split{seed}_{role}" for role in ("labelled", "unlabelled", "validation", "test")]
        absent = [k for k in keys if k not in data.files]
        if absent:
            have = sorted({k.split("_")[0] for k in data.files if k.startswith("split")})
            raise ValueError(f"official split {seed} is not in the dataset (missing {absent}; it has {have})")
        return official_split(y, *(data[k] for k in keys), seed=seed)
    raise ValueError(f"unknown protocol type {protocol.type!r}")


def split_kernels(data, split, view, spec):
    """Kernel of one view for one split (:class:`mvl.workflow.settings.KernelSpec`): pool x pool and test x pool,
    parameters from the pool only."""
    if f"kernel_{view}" in data.files:  # a full kernel over all samples: rows/columns of pool and test
        if spec.type != "precomputed":
            raise ValueError(f"view {view} is stored as a kernel matrix; set kernel type: precomputed")
        Kall = data[f"kernel_{view}"]
        return Kall[np.ix_(split.pool, split.pool)], Kall[np.ix_(split.test, split.pool)]
    if spec.type == "precomputed":
        raise ValueError(f"kernel type precomputed, but view {view} is stored as features")
    X = data[f"view_{view}"]
    if spec.type == "rbf":
        return rbf_kernel(X[split.pool], X[split.test], bandwidth=spec.bandwidth,
                               standardize_features=spec.standardize)
    if spec.type == "linear":
        return linear_kernel(X[split.pool], X[split.test], standardize_features=spec.standardize)
    raise ValueError(f"unknown kernel type {spec.type!r}")


def unit_source(data_spec, seed, data_path, log=None):
    """What every draw of one unit (dataset, split ``seed``) comes from, an object with a ``kernel_draw`` method:
    the prepared paper dataset (:func:`mvl.data.paper.prepare`, with its protocols, Section 7.2; read without
    pickle by :func:`mvl.workflow.prepared.load_prepared`),
    or the split's kernels of every view, computed once per unit (:class:`mvl.data.protocols.SplitKernels`)."""
    t0 = time.perf_counter()
    views = list(data_spec.views)
    if data_source(data_spec.source).is_paper:
        return load_prepared(data_path)
    data = np.load(data_path)
    split = split_for_seed(data, data_spec.protocol, seed)
    # every view's kernels once per unit, stacked sample-first (N, N, m) and (T, N, m); draws slice them
    K_pool = np.empty((split.pool.size, split.pool.size, len(views)))
    K_test = np.empty((split.test.size, split.pool.size, len(views)))
    for i, v in enumerate(views):
        K_pool[..., i], K_test[..., i] = split_kernels(data, split, v, data_spec.kernel)
    if log is not None:
        log(f"[unit] split: pool {split.pool.size}, test {split.test.size}; kernels of {len(views)} views "
            f"({time.perf_counter() - t0:.1f} s)")
    return SplitKernels(K_pool=K_pool, K_test=K_test, y=data["y"], split=split, view_names=tuple(views))


def draw(source, seed, l_c, u_c, data_spec, views, needs_validation):
    """The :class:`mvl.data.protocols.KernelDraw` of one run, the same object for every dataset: the draw of
    (``seed``, l_c, u_c) from the unit's ``source`` (:func:`unit_source`) on ``views``, with a validation set when
    the method ``needs_validation``."""
    return source.kernel_draw(seed, l_c, u_c, n_val_per_class=data_spec.n_val_per_class, validation=needs_validation,
                              u_max=data_spec.u_max, draw_seed=data_spec.draw_seed, views=list(views))


# ------------------------------------------------------------------ the unit


def views_of(m, views):
    """The views the method ``m`` (a :class:`mvl.workflow.methods.Method`) uses: one for ``view_<name>``, all
    otherwise (the registry's ``Method.view``)."""
    if m.view is None:
        return list(views)
    if m.view not in views:
        raise ValueError(f"method {m.name!r}: unknown view {m.view!r}; views are {list(views)}")
    return [m.view]


def run_unit(unit, seed, data_path, out, log=None):
    """Run every task of ``unit`` (:class:`mvl.workflow.settings.Unit`) on split ``seed`` (``data_path``: the
    dataset's ``dataset.npz``, or the prepared npz of a paper dataset) and write the rows to ``out`` (CSV +
    sidecar). Returns the rows."""
    log = log or (lambda text: print(text, flush=True))
    t_unit = time.perf_counter()
    data, run = unit.data, unit.run
    views = list(data.views)
    log(f"[unit] {data.dataset} seed {seed} family {unit.family}: {len(unit.tasks)} runs")
    source = unit_source(data, seed, data_path, log)

    selections = {}
    specs = {name: method(name) for _, _, name in unit.tasks}

    def selection(lc, uc):
        lc_sel = run.grid.labels_per_class or lc
        if (lc_sel, uc) not in selections:
            t0 = time.perf_counter()
            sel = select_gammas_on_draw(draw(source, seed, lc_sel, uc, data, views, True), lc_sel, uc, run)
            p, g = sel.paper, sel.graph_selected
            log(f"[select] l_c={lc_sel} u_c={uc}: paper graph gammas {p.gammas} (validation {p.val_accuracy:.4f}); "
                f"selected graph {g.graph.label} gammas {g.gammas} (validation {g.val_accuracy:.4f}); "
                f"{sel.grid_size} grid points in {time.perf_counter() - t0:.1f} s")
            selections[lc_sel, uc] = sel
        return selections[lc_sel, uc]

    rows = []
    for i, (lc, uc, name) in enumerate(unit.tasks, 1):
        t0 = time.perf_counter()
        m = specs[name]
        sel = selection(lc, uc) if m.uses_selection else None
        d = draw(source, seed, lc, uc, data, views_of(m, views), m.needs_validation)
        new = run_on_draw(name, d, lc, uc, run, d.view_names, dataset=data.dataset, seed=seed, selected=sel)
        rows += new
        accs = ", ".join(f"{r['accuracy']:.4f}" for r in new)
        log(f"[run {i}/{len(unit.tasks)}] {name} l_c={lc} u_c={uc}: accuracy {accs} ({time.perf_counter() - t0:.2f} s)")
    io.save_rows_csv(out, rows, checksum=True, inputs=[data_path])
    log(f"[unit] {len(rows)} rows in {time.perf_counter() - t_unit:.1f} s -> {out}")
    return rows
