"""Command-line steps of the workflow: python -m mvl.workflow.cli STEP [options]  (STEP -h for one step).

Each step reads its inputs, writes its single output atomically with a SHA-256 sidecar (<out>.sha256, which
also records the digests of the inputs; checked by mvl.workflow.io.verify_outputs when the workflow starts) and prints
a short progress line. Steps: dataset, prepare, collect, aggregate, coreg, check. The runs themselves are the
workflow's rule run (mvl.workflow.runner). No paper section: it prepares the data of Section 7.2 and
collects the results of Section 7.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from pathlib import Path

import numpy as np

from ..data.paper import SOURCES as PAPER_SOURCES
from . import io


def _load_source(source, data_options):
    """The raw dataset of a ``source`` (see config ``dataset_settings.<name>.source``)."""
    from ..data.embedded import load_mfeat

    if source == "mfeat":
        return load_mfeat()
    if source == "mvmnist":
        from ..data.embedded import load_multiview_mnist

        return load_multiview_mnist(options=data_options_from(data_options))
    raise ValueError(f"unknown dataset source {source!r} (available: mfeat, mvmnist)")


def write_dataset(dataset, source, views, out, data_options=None):
    """Raw data of ``source`` (embedded or downloaded) as one npz ``out``: labels, the ``views`` (features as
    ``view_<name>``, full kernels as ``kernel_<name>``; all views if empty) and the official splits if any."""
    ds = _load_source(source, data_options or {})
    names = list(ds.view_names)
    wanted = list(views or names)
    missing = [v for v in wanted if v not in names]
    if missing:
        raise ValueError(f"dataset {dataset}: views {missing} are not in source {source!r} (views: {names})")
    arrays = {}
    for v in wanted:
        i = names.index(v)
        kind = getattr(ds, "view_kinds", None)
        # full kernel matrices are stored as kernel_<view>, features as view_<view>
        key = "kernel" if kind is not None and kind[i] == "kernel" else "view"
        arrays[f"{key}_{v}"] = ds.views[i]
    extra = getattr(ds, "arrays", None) or {}  # e.g. official splits
    io.save_npz(out, checksum=True, y=ds.y, view_names=np.array(wanted), **extra, **arrays)
    print(f"[dataset] {dataset} (source {source}): n = {ds.n_samples}, views = {wanted} -> {out}")


def step_dataset(a):
    write_dataset(a.dataset, a.source, a.views, a.out, _data_mapping(a.data))



def data_options_from(data):
    """Download options (:class:`mvl.data.download.DataOptions`) from the config key ``data`` (a mapping)."""
    from ..data.download import DataOptions

    return DataOptions.from_config({"data": dict(data or {})})


def _data_mapping(data_json):
    """The config key ``data`` of the command line: --data JSON, else empty (the defaults)."""
    return json.loads(data_json or "{}")


def write_prepared(dataset, source, views, out, part=0, loader=None, data_options=None):
    """Paper datasets: fetch (verified) and load the raw files of ``source`` once, keep the loaded object
    (pickle ``out``). ``loader``: extra loader options (a mapping, e.g. CUB's ``image_view``)."""
    import pickle

    from ..data import download
    from ..data import paper as P

    options = data_options_from(data_options)
    loader = dict(loader or {})
    views = tuple(views)
    if source not in PAPER_SOURCES:
        raise ValueError(f"prepare is for the paper datasets {PAPER_SOURCES}, not {source!r}")
    paths = download.fetch(source, options)
    if source == "flowers17":
        data = P.load_flowers17(paths=paths, views=views)
    elif source == "caltech101":
        data = P.load_caltech101(split=part, views=views, paths=paths)
    else:
        data = P.load_cub(paths=paths, image_view=loader.get("image_view"))
        missing = [v for v in views if v not in data.view_names]
        if missing:
            raise ValueError(f"CUB views {missing} are not available (loaded: {list(data.view_names)}); the image "
                             "view needs data_settings.cub.loader.image_view (see mvl.data.paper.load_cub)")
    with io.atomic_path(out, checksum=True) as tmp, open(tmp, "wb") as fh:
        pickle.dump(data, fh, protocol=pickle.HIGHEST_PROTOCOL)
    print(f"[prepare] {dataset} (source {source}, part {part}): views {list(views)} -> {out}")


def step_prepare(a):
    """Paper datasets: fetch (verified) and load the raw files once, keep the loaded object (pickle)."""
    write_prepared(a.dataset, a.source, a.views, a.out, part=a.part, loader=json.loads(a.loader) if a.loader else {},
                   data_options=_data_mapping(a.data))


def write_collected(inputs, out):
    """The run CSVs ``inputs`` concatenated into one tidy table ``out`` (one row per run)."""
    import pandas as pd

    frames = [pd.read_csv(f) for f in inputs]
    table = pd.concat(frames, ignore_index=True)
    io.save_csv(out, table, checksum=True, inputs=list(inputs))
    print(f"[collect] {len(inputs)} files, {len(table)} rows -> {out}")


def step_collect(a):
    write_collected(a.inputs, a.out)


def write_summary(results, out):
    """Mean, std and count of the accuracy over splits of the tidy table ``results``, per group, as ``out``."""
    import pandas as pd

    table = pd.read_csv(results)
    keys = ["dataset", "method", "views", "n_views", "setting", "l_c", "u_c", "graph", "gamma_choice"]
    # ablation rows differ only in their gammas: keep them apart; rows with gammas selected per split
    # (which may switch gamma_B or gamma_W on in some splits and off in others) form one group
    table["gamma_B_on"] = (table["gamma_B"].fillna(0) > 0).astype(object)
    table["gamma_W_on"] = (table["gamma_W"].fillna(0) > 0).astype(object)
    table.loc[table["gamma_choice"].eq("selected"), ["gamma_B_on", "gamma_W_on"]] = None
    if "ablation_cell" not in table:
        table["ablation_cell"] = None
    keys_ab = keys + ["gamma_B_on", "gamma_W_on", "ablation_cell"]
    summary = (table.groupby(keys_ab, dropna=False)["accuracy"]
               .agg(mean="mean", std="std", n_splits="count").reset_index())
    io.save_csv(out, summary, checksum=True, inputs=[results])
    print(f"[aggregate] {len(summary)} groups -> {out}")


def step_aggregate(a):
    write_summary(a.results, a.out)


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


def write_coreg(dataset, seed, out, data_options=None):
    """One seeded split of a co-regularization benchmark (Sindhwani & Rosenberg 2008): MR and CoMR on every
    (gamma_1, gamma_2) of the grid under both graph weight conventions, one row each (``selected`` marks the
    per-split validation choice; :func:`mvl.workflow.coreg_runner.run_split`)."""
    from .coreg_runner import run_split

    data_dir = None
    if dataset != "lines":
        from ..data import download

        paths = download.fetch("ssl_benchmarks", data_options_from(data_options))
        data_dir = Path(paths["ssl_benchmarks/g50c.mat"]).parent
    t0 = time.perf_counter()
    rows = run_split(dataset, seed, data_dir=data_dir, all_grid=True)
    io.save_csv(out, rows, checksum=True)
    sel = rows[rows["selected"]]
    errs = ", ".join(f"{r.method}/{r.graph_weights} test {r.test_error:.2f} unl {r.unlabelled_error:.2f}"
                     for r in sel.itertuples())
    print(f"[coreg] {dataset} seed {seed}: {len(rows)} grid rows; selected on validation: {errs} "
          f"({time.perf_counter() - t0:.1f} s) -> {out}")


def step_coreg(a):
    write_coreg(a.dataset, a.seed, a.out, _data_mapping(a.data))


def build_parser():
    """The argument parser of every step (each subcommand and option with its help text)."""
    p = argparse.ArgumentParser(prog="python -m mvl.workflow.cli", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="step", required=True, metavar="STEP")
    out_help = "output file (written atomically, with a .sha256 sidecar)"
    data_help = "download/mirror options as JSON, the config key data, e.g. '{\"mirror\": \"../shared/data\"}'"
    s = sub.add_parser("dataset", help="raw data of a dataset (embedded or downloaded) as one npz")
    s.add_argument("--dataset", required=True, help="name of the dataset entry (results/<name>)")
    s.add_argument("--source", default=None, choices=["mfeat", "mvmnist"],
                   help="loader of the raw data (default: the dataset name)")
    s.add_argument("--views", nargs="*", default=None, help="views to keep, in this order (default: all)")
    s.add_argument("--data", default=None, help=data_help)
    s.add_argument("--out", required=True, help=out_help)
    s = sub.add_parser("prepare", help="paper datasets: fetch, verify and load the raw files once (a pickle)")
    s.add_argument("--dataset", required=True, help="name of the dataset entry (results/<name>)")
    s.add_argument("--source", required=True, choices=PAPER_SOURCES, help="which paper dataset")
    s.add_argument("--views", nargs="+", required=True, help="views to load, in this order")
    s.add_argument("--part", type=int, default=0, help="Caltech-101: the split whose kernels to load (1-3)")
    s.add_argument("--data", default=None, help=data_help)
    s.add_argument("--loader", default=None, help="extra loader options as JSON, e.g. '{\"image_view\": \"f.npz\"}'")
    s.add_argument("--out", required=True, help=out_help)
    s = sub.add_parser("collect", help="concatenate run CSVs into one tidy table (one row per run)")
    s.add_argument("--out", required=True, help=out_help)
    s.add_argument("inputs", nargs="+", help="the run CSVs (results/<dataset>/runs/<family>/seed<k>.csv)")
    s = sub.add_parser("aggregate", help="mean, std and count of the accuracy over splits, per group")
    s.add_argument("--results", required=True, help="the tidy table written by collect")
    s.add_argument("--out", required=True, help=out_help)
    s = sub.add_parser("coreg", help="MR and CoMR on one split of a Sindhwani-Rosenberg benchmark (every grid row)")
    s.add_argument("--dataset", required=True, choices=["lines", "g50c", "uspst", "coil20", "pcmac"],
                   help="benchmark (SR 2008 Table 1)")
    s.add_argument("--seed", type=int, required=True, help="seed of the split (and of the LINES sample)")
    s.add_argument("--data", default=None, help=data_help + " (default: the defaults)")
    s.add_argument("--out", required=True, help=out_help)
    s = sub.add_parser("check", help="compare a summary with expected values (results regression)")
    s.add_argument("--summary", required=True, help="the summary.csv of a run")
    s.add_argument("--expected", required=True, help="the committed expected summary (results/expected/...)")
    s.add_argument("--atol", type=float, default=0.01, help="absolute tolerance on accuracies (default 0.01)")
    return p


def main(argv=None):
    a = build_parser().parse_args(argv)
    if a.step == "dataset" and a.source is None:
        a.source = a.dataset
    steps = {"prepare": step_prepare, "dataset": step_dataset, "collect": step_collect, "aggregate": step_aggregate,
             "check": step_check, "coreg": step_coreg}
    return steps[a.step](a) or 0


if __name__ == "__main__":
    sys.exit(main())
