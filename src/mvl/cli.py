"""Command-line steps called by the Snakemake rules (``python -m mvl.cli STEP ...``).

Each step reads its inputs, writes its single output atomically with a SHA-256 sidecar
(``<out>.sha256``, also recording the inputs' digests; checked by :func:`mvl.io.verify_outputs` when the
workflow starts) and prints a short progress line. Steps: ``dataset``, ``split``, ``kernel``, ``select``, ``run``,
``collect``, ``aggregate``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from pathlib import Path

import numpy as np

from . import io


def _inputs(a):
    """The files a step read (recorded in its output's checksum sidecar, see :func:`mvl.io.verify_outputs`)."""
    files = []
    for name in ("dataset_npz", "split", "kernels", "prepared", "selected", "results", "inputs"):
        value = getattr(a, name, None)
        files += value if isinstance(value, list) else [value] if value else []
    return files


def _load_source(source, data_options):
    """The raw dataset of a ``source`` (see config ``dataset_settings.<name>.source``)."""
    from .datasets import load_mfeat

    if source == "mfeat":
        return load_mfeat()
    if source == "mvmnist":
        from .datasets import load_multiview_mnist

        return load_multiview_mnist(options=_data_options(json.dumps(data_options) if data_options else None))
    raise ValueError(f"unknown dataset source {source!r} (available: mfeat, mvmnist)")


def step_dataset(a):
    ds = _load_source(a.source, json.loads(a.data) if a.data else {})
    names = list(ds.view_names)
    wanted = a.views or names
    missing = [v for v in wanted if v not in names]
    if missing:
        raise ValueError(f"dataset {a.dataset}: views {missing} are not in source {a.source!r} (views: {names})")
    arrays = {}
    for v in wanted:
        i = names.index(v)
        kind = getattr(ds, "view_kinds", None)
        # full kernel matrices are stored as kernel_<view>, features as view_<view>
        key = "kernel" if kind is not None and kind[i] == "kernel" else "view"
        arrays[f"{key}_{v}"] = ds.views[i]
    extra = getattr(ds, "arrays", None) or {}  # e.g. official splits
    io.save_npz(a.out, checksum=True, y=ds.y, view_names=np.array(wanted), **extra, **arrays)
    print(f"[dataset] {a.dataset} (source {a.source}): n = {ds.n_samples}, views = {wanted} -> {a.out}")


def step_split(a):
    from .protocols import official_split, stratified_split

    data = np.load(a.dataset_npz)
    y = data["y"]
    protocol = json.loads(a.protocol)
    if protocol["type"] == "random":
        split = stratified_split(y, protocol["n_test_per_class"], seed=a.seed)
    elif protocol["type"] == "official":
        keys = [f"split{a.seed}_{role}" for role in ("labelled", "unlabelled", "validation", "test")]
        absent = [k for k in keys if k not in data.files]
        if absent:
            have = sorted({k.split("_")[0] for k in data.files if k.startswith("split")})
            raise ValueError(f"official split {a.seed} is not in {a.dataset_npz} (missing {absent}; it has {have})")
        split = official_split(y, *(data[k] for k in keys), seed=a.seed)
    else:
        raise ValueError(f"unknown protocol type {protocol['type']!r}")
    io.save_json(a.out, dict(split.to_dict(), seed=a.seed, protocol=protocol), checksum=True, inputs=_inputs(a))
    print(f"[split] seed {a.seed} ({protocol['type']}): pool {split.pool.size}, test {split.test.size} -> {a.out}")


def step_kernel(a):
    from .kernels import gaussian_kernel, linear_kernel
    from .protocols import Split

    data = np.load(a.dataset_npz)
    split = Split.from_dict(json.loads(open(a.split).read()))
    spec = json.loads(a.kernel)
    kind = spec.get("type", "gaussian")
    if f"kernel_{a.view}" in data.files:
        # a full kernel over all samples (precomputed from the raw data): rows/columns of pool and test
        if kind != "precomputed":
            raise ValueError(f"view {a.view} is stored as a kernel matrix; set kernel type: precomputed")
        Kall = data[f"kernel_{a.view}"]
        K, Kt = Kall[np.ix_(split.pool, split.pool)], Kall[np.ix_(split.test, split.pool)]
    else:
        if kind == "precomputed":
            raise ValueError(f"kernel type precomputed, but view {a.view} is stored as features")
        X = data[f"view_{a.view}"]
        std = bool(spec.get("standardize", True))
        # kernel parameters (standardisation, bandwidth) come from the training pool only
        if kind == "gaussian":
            K, Kt = gaussian_kernel(X[split.pool], X[split.test], bandwidth=spec.get("bandwidth", "median"),
                                    standardize_features=std)
        elif kind == "linear":
            K, Kt = linear_kernel(X[split.pool], X[split.test], standardize_features=std)
        else:
            raise ValueError(f"unknown kernel type {kind!r}")
    io.save_npz(a.out, checksum=True, inputs=_inputs(a), K_pool=K, K_test=Kt)
    print(f"[kernel] view {a.view}: pool {K.shape}, test {Kt.shape} -> {a.out}")


PAPER_SOURCES = ("flowers17", "caltech101", "cub")


def _data_options(data_json):
    """Download options: --data JSON, else $MVL_DATA_OPTIONS (set by the workflow), else the defaults."""
    import os

    from .download import DataOptions

    data_json = data_json or os.environ.get("MVL_DATA_OPTIONS")
    return DataOptions.from_config({"data": json.loads(data_json) if data_json else {}})


def step_prepare(a):
    """Paper datasets: fetch (verified) and load the raw files once, keep the loaded object (pickle)."""
    import pickle

    from . import download
    from . import paper_datasets as P

    options = _data_options(a.data)
    loader = json.loads(a.loader) if a.loader else {}
    views = tuple(a.views)
    if a.source not in PAPER_SOURCES:
        raise ValueError(f"prepare is for the paper datasets {PAPER_SOURCES}, not {a.source!r}")
    paths = download.fetch(a.source, options)
    if a.source == "flowers17":
        data = P.load_flowers17(paths=paths, views=views)
    elif a.source == "caltech101":
        data = P.load_caltech101(split=a.part, views=views, paths=paths)
    else:
        data = P.load_cub(paths=paths, image_view=loader.get("image_view"))
        missing = [v for v in views if v not in data.view_names]
        if missing:
            raise ValueError(f"CUB views {missing} are not available (loaded: {list(data.view_names)}); the image "
                             "view needs data_settings.cub.loader.image_view (see mvl.paper_datasets.load_cub)")
    with io.atomic_path(a.out, checksum=True) as tmp, open(tmp, "wb") as fh:
        pickle.dump(data, fh, protocol=pickle.HIGHEST_PROTOCOL)
    print(f"[prepare] {a.dataset} (source {a.source}, part {a.part}): views {list(views)} -> {a.out}")


def _paper_draw_kernels(a, method, params):
    """Kernels of one draw of a paper dataset (the loaders' own protocols, Section 7.2)."""
    import pickle

    from . import paper_datasets as P

    with open(a.prepared, "rb") as fh:
        data = pickle.load(fh)
    views = json.loads(a.views) if a.views else None
    needs_val = method in ("mvl_ls_cv", "select") or method.startswith("mvl_ls_optc")
    n_val = int(params["n_val_per_class"]) if needs_val else 0
    if a.source == "flowers17":
        draw = P.flowers17_draw(data, split=a.seed, l_c=a.lc, u_c=a.uc, seed=int(params.get("draw_seed", 0)))
    elif a.source == "caltech101":
        draw = P.caltech101_draw(data, l_c=a.lc, u_c=a.uc, n_val_per_class=n_val,
                                 seed=int(params.get("draw_seed", 0)))
    elif a.source == "cub":
        draw = P.cub_draw(data, l_c=a.lc, u_c=a.uc, seed=a.seed, u_max=max(a.uc, int(params.get("u_max", 0))))
    else:
        raise ValueError(f"unknown paper dataset source {a.source!r}")
    pr = data.problem(draw, views)
    y_val = np.empty(0, dtype=np.int64) if pr.y_val is None else pr.y_val
    return dict(K_tr=pr.K, y_train=pr.y, K_te=pr.K_test, y_test=pr.y_test, K_va=pr.K_val, y_val=y_val,
                n_labelled=int(draw.labelled.size)), list(pr.view_names)


def _load_run_inputs(a):
    from .protocols import Split

    data = np.load(a.dataset_npz)
    split = Split.from_dict(json.loads(open(a.split).read()))
    Ks = [np.load(f) for f in a.kernels]
    return data, split, np.stack([k["K_pool"] for k in Ks]), np.stack([k["K_test"] for k in Ks])


def step_select(a):
    from .experiments import select_gammas, select_gammas_on_draw

    if a.prepared:
        params = json.loads(a.params)
        d, _ = _paper_draw_kernels(a, "select", params)
        sel = select_gammas_on_draw(d, a.lc, a.uc, params)
    else:
        data, split, K_pool, K_test = _load_run_inputs(a)
        sel = select_gammas(K_pool, K_test, data["y"], split, a.lc, a.uc, json.loads(a.params))
    io.save_json(a.out, sel, checksum=True, inputs=_inputs(a))
    print(f"[select] l_c={a.lc} u_c={a.uc} seed={a.seed}: gamma_A={sel['gamma_A']:g} gamma_B={sel['gamma_B']:g} "
          f"gamma_W={sel['gamma_W']:g} (validation accuracy {sel['val_accuracy']:.4f}, "
          f"{sel['grid_size']} grid points in {sel['grid_seconds']:.1f} s) -> {a.out}")


def step_run(a):
    from .experiments import method_views, run_method, run_on_draw

    selected = json.loads(open(a.selected).read()) if a.selected else None
    if a.prepared:
        params = json.loads(a.params)
        t0 = time.perf_counter()
        all_views = json.loads(a.views)
        views = method_views(a.method, all_views)
        a.views = json.dumps(views)
        d, names = _paper_draw_kernels(a, a.method, params)
        rows = run_on_draw(a.method, d, a.lc, a.uc, params, names, dataset=a.dataset, seed=a.seed,
                           selected=selected)
        io.save_rows_csv(a.out, rows, checksum=True, inputs=_inputs(a))
        accs = ", ".join(f"{r['accuracy']:.4f}" for r in rows)
        print(f"[run] {a.dataset} {a.method} l_c={a.lc} u_c={a.uc} split/seed={a.seed}: accuracy {accs} "
              f"({time.perf_counter() - t0:.2f} s) -> {a.out}")
        return
    data, split, K_pool, K_test = _load_run_inputs(a)
    view_names = [str(v) for v in data["view_names"]]
    params = json.loads(a.params)
    views = method_views(a.method, view_names)
    if len(a.kernels) != len(views):
        raise ValueError(f"method {a.method} uses views {views} but {len(a.kernels)} kernel files were given")
    t0 = time.perf_counter()
    rows = run_method(a.method, K_pool, K_test, data["y"], split, a.lc, a.uc, params, views,
                      dataset=a.dataset, seed=a.seed, selected=selected)
    io.save_rows_csv(a.out, rows, checksum=True, inputs=_inputs(a))
    accs = ", ".join(f"{r['accuracy']:.4f}" for r in rows)
    print(f"[run] {a.dataset} {a.method} l_c={a.lc} u_c={a.uc} seed={a.seed}: accuracy {accs} "
          f"({time.perf_counter() - t0:.2f} s) -> {a.out}")


def step_collect(a):
    import pandas as pd

    frames = [pd.read_csv(f) for f in a.inputs]
    table = pd.concat(frames, ignore_index=True)
    io.save_csv(a.out, table, checksum=True, inputs=_inputs(a))
    print(f"[collect] {len(a.inputs)} files, {len(table)} rows -> {a.out}")


def step_aggregate(a):
    import pandas as pd

    table = pd.read_csv(a.results)
    keys = ["dataset", "method", "views", "n_views", "setting", "l_c", "u_c", "graph", "gamma_choice"]
    # ablation rows differ only in their gammas: keep them apart
    table["gamma_B_on"] = table["gamma_B"].fillna(0) > 0
    table["gamma_W_on"] = table["gamma_W"].fillna(0) > 0
    keys_ab = keys + ["gamma_B_on", "gamma_W_on"]
    summary = (table.groupby(keys_ab, dropna=False)["accuracy"]
               .agg(mean="mean", std="std", n_splits="count").reset_index())
    io.save_csv(a.out, summary, checksum=True, inputs=_inputs(a))
    print(f"[aggregate] {len(summary)} groups -> {a.out}")


def step_check(a):
    from .regression import compare_summaries

    bad = compare_summaries(a.summary, a.expected, atol=a.atol)
    if len(bad):
        import pandas as pd

        with pd.option_context("display.width", 200, "display.max_columns", 30, "display.max_rows", 500):
            print(f"[check] {len(bad)} group(s) of {a.summary} differ from {a.expected} (atol {a.atol}):")
            print(bad.to_string(index=False))
        print("If the change is intended, refresh the expected values: make refresh-expected")
        return 1
    print(f"[check] {a.summary} matches {a.expected} (atol {a.atol})")
    return 0


def step_coreg(a):
    """One seeded split of a co-regularization benchmark (Sindhwani & Rosenberg 2008): MR and CoMR on every
    (gamma_1, gamma_2) of the grid under both graph weight conventions, one row each (``selected`` marks the
    per-split validation choice; :func:`mvl.ssl_data.run_split`)."""
    from .ssl_data import run_split

    data_dir = None
    if a.dataset != "lines":
        from . import download

        paths = download.fetch("ssl_benchmarks", _data_options(a.data))
        data_dir = Path(paths["ssl_benchmarks/g50c.mat"]).parent
    t0 = time.perf_counter()
    rows = run_split(a.dataset, a.seed, data_dir=data_dir, all_grid=True)
    io.save_csv(a.out, rows, checksum=True)
    sel = rows[rows["selected"]]
    errs = ", ".join(f"{r.method}/{r.graph_weights} test {r.test_error:.2f} unl {r.unlabelled_error:.2f}"
                     for r in sel.itertuples())
    print(f"[coreg] {a.dataset} seed {a.seed}: {len(rows)} grid rows; selected on validation: {errs} "
          f"({time.perf_counter() - t0:.1f} s) -> {a.out}")


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m mvl.cli", description=__doc__)
    sub = p.add_subparsers(dest="step", required=True)
    s = sub.add_parser("dataset")
    s.add_argument("--dataset", required=True, help="name of the dataset entry (results/<name>)")
    s.add_argument("--source", default=None, help="loader of the raw data (default: the dataset name)")
    s.add_argument("--views", nargs="*", default=None, help="views to keep, in this order (default: all)")
    s.add_argument("--data", default=None, help="JSON download/mirror options (config key data)")
    s.add_argument("--out", required=True)
    s = sub.add_parser("split")
    s.add_argument("--dataset", default="")
    s.add_argument("--dataset-npz", required=True)
    s.add_argument("--seed", type=int, required=True)
    s.add_argument("--protocol", required=True, help='JSON, e.g. {"type": "random", "n_test_per_class": 100}')
    s.add_argument("--out", required=True)
    s = sub.add_parser("kernel")
    s.add_argument("--dataset-npz", required=True)
    s.add_argument("--split", required=True)
    s.add_argument("--view", required=True)
    s.add_argument("--kernel", required=True, help="JSON kernel spec")
    s.add_argument("--out", required=True)
    s = sub.add_parser("prepare", help="paper datasets: fetch, verify and load the raw files once")
    s.add_argument("--dataset", required=True)
    s.add_argument("--source", required=True, choices=PAPER_SOURCES)
    s.add_argument("--views", nargs="+", required=True)
    s.add_argument("--part", type=int, default=0, help="Caltech-101: the split whose kernels to load")
    s.add_argument("--data", default=None, help="JSON download/mirror options (config key data)")
    s.add_argument("--loader", default=None, help="JSON extra loader options (e.g. CUB image_view)")
    s.add_argument("--out", required=True)
    for step in ("run", "select"):
        s = sub.add_parser(step)
        s.add_argument("--dataset", required=True)
        # features/kernel datasets: the dataset npz, the split and per-view kernels
        s.add_argument("--dataset-npz", default=None)
        s.add_argument("--split", default=None)
        s.add_argument("--kernels", nargs="+", default=None)
        # paper datasets: the prepared object, its source and the views (JSON list)
        s.add_argument("--prepared", default=None)
        s.add_argument("--source", default=None)
        s.add_argument("--views", default=None)
        s.add_argument("--lc", type=int, required=True)
        s.add_argument("--uc", type=int, required=True)
        s.add_argument("--seed", type=int, required=True)
        s.add_argument("--params", required=True, help="JSON parameters")
        s.add_argument("--out", required=True)
        if step == "run":
            s.add_argument("--method", required=True)
            s.add_argument("--selected", default=None, help="JSON of gammas selected by the select step")
    s = sub.add_parser("collect")
    s.add_argument("--out", required=True)
    s.add_argument("inputs", nargs="+")
    s = sub.add_parser("aggregate")
    s.add_argument("--results", required=True)
    s.add_argument("--out", required=True)
    s = sub.add_parser("coreg", help="MR and CoMR on one split of a Sindhwani-Rosenberg benchmark (every grid row)")
    s.add_argument("--dataset", required=True, choices=["lines", "g50c", "uspst", "coil20", "pcmac"])
    s.add_argument("--seed", type=int, required=True)
    s.add_argument("--data", default=None, help="JSON download/mirror options (default: $MVL_DATA_OPTIONS)")
    s.add_argument("--out", required=True)
    s = sub.add_parser("check", help="compare a summary with expected values (results regression)")
    s.add_argument("--summary", required=True)
    s.add_argument("--expected", required=True)
    s.add_argument("--atol", type=float, default=0.01, help="absolute tolerance on accuracies (default 0.01)")
    a = p.parse_args(argv)
    if a.step == "dataset" and a.source is None:
        a.source = a.dataset
    if a.step in ("run", "select") and not a.prepared and not (a.dataset_npz and a.split and a.kernels):
        p.error(f"{a.step}: give --dataset-npz, --split and --kernels, or --prepared with --source and --views")
    steps = {"prepare": step_prepare, "dataset": step_dataset, "split": step_split, "kernel": step_kernel,
             "run": step_run, "select": step_select, "collect": step_collect, "aggregate": step_aggregate,
             "check": step_check, "coreg": step_coreg}
    return steps[a.step](a) or 0


if __name__ == "__main__":
    sys.exit(main())
