"""The main study's steps (Section 7): the raw data of a data set, a paper data set prepared once, the run tables
collected into one, and the summary over splits.

Each step is a plain function (usable without Snakemake) that its rule entry in :mod:`mvl.workflow.jobs` wraps;
every output is written atomically with a SHA-256 sidecar (:mod:`mvl.workflow.io`). The runs themselves are
:func:`mvl.workflow.runner.run_unit`, the report's tables and figures :mod:`mvl.workflow.report`. No paper section
(it prepares the data of Section 7.2 and collects the results of Section 7).
"""

from __future__ import annotations

from . import io
from .runtime import data_options

__all__ = ["SUMMARY_KEYS", "write_dataset", "write_prepared", "write_collected", "write_summary"]

SUMMARY_KEYS = ["dataset", "method", "views", "n_views", "setting", "l_c", "u_c", "graph", "gamma_choice"]
"""Columns that form a group of the summary (with gamma_B_on, gamma_W_on and ablation_cell)."""


def write_dataset(data, out, data_config=None):
    """Raw data of a dataset (:class:`mvl.workflow.settings.DataSpec` ``data``: an embedded source, or a
    researcher's own files) as one npz ``out``: labels, its views (features as ``view_<name>``, full kernels as
    ``kernel_<name>``) and the official splits if any."""
    from ..data.sources import load_dataset

    import numpy as np

    files = None if data.files is None else dict(views=dict(data.files.views), labels=data.files.labels,
                                                   kernels=data.files.kernels)
    ds = load_dataset(data.source, options=data_options(data_config), files=files)
    names = list(ds.view_names)
    wanted = list(data.views or names)
    missing = [v for v in wanted if v not in names]
    if missing:
        raise ValueError(f"dataset {data.dataset}: views {missing} are not in source {data.source!r} (views: {names})")
    kinds = ds.view_kinds or ("features",) * len(names)
    arrays = {f"{'kernel' if kinds[names.index(v)] == 'kernel' else 'view'}_{v}": ds.views[names.index(v)]
              for v in wanted}
    extra = getattr(ds, "arrays", None) or {}  # e.g. official splits
    io.save_npz(out, checksum=True, inputs=[] if data.files is None else data.files.paths(), y=ds.y,
                view_names=np.array(wanted), **extra, **arrays)
    print(f"[dataset] {data.dataset} (source {data.source}): n = {ds.n_samples}, views = {wanted} -> {out}")


def write_prepared(data, out, part=0, data_config=None):
    """A paper dataset (``data``, a :class:`mvl.workflow.settings.DataSpec`) fetched (verified) and loaded once
    (:func:`mvl.data.paper.prepare`), kept as an npz ``out`` that loads without pickle
    (:func:`mvl.workflow.prepared.save_prepared`)."""
    from ..data import download
    from ..data.sources import source
    from .prepared import save_prepared

    src = source(data.source)
    if not src.is_paper:
        raise ValueError(f"prepare is for the paper datasets, not {data.source!r}")
    paths = download.fetch(src.download, data_options(data_config))
    loaded = src.load_function()(data.source, paths, data.views, part=part, image_view=data.image_view)
    save_prepared(out, loaded)
    print(f"[prepare] {data.dataset} (source {data.source}, part {part}): views {list(data.views)} -> {out}")


def write_collected(inputs, out):
    """The run CSVs ``inputs`` concatenated into one tidy table ``out`` (one row per run)."""
    import pandas as pd

    table = pd.concat([pd.read_csv(f) for f in inputs], ignore_index=True)
    io.save_csv(out, table, checksum=True, inputs=list(inputs))
    print(f"[collect] {len(inputs)} files, {len(table)} rows -> {out}")


def write_summary(results, out):
    """Mean, std and count of the accuracy over splits of the tidy table ``results``, per group, as ``out``."""
    import pandas as pd

    table = pd.read_csv(results)
    # ablation rows differ only in their gammas: keep them apart; rows with gammas selected per split
    # (which may switch gamma_B or gamma_W on in some splits and off in others) form one group
    table["gamma_B_on"] = (table["gamma_B"].fillna(0) > 0).astype(object)
    table["gamma_W_on"] = (table["gamma_W"].fillna(0) > 0).astype(object)
    table.loc[table["gamma_choice"].eq("selected"), ["gamma_B_on", "gamma_W_on"]] = None
    if "ablation_cell" not in table:
        table["ablation_cell"] = None
    keys = SUMMARY_KEYS + ["gamma_B_on", "gamma_W_on", "ablation_cell"]
    summary = (table.groupby(keys, dropna=False)["accuracy"]
               .agg(mean="mean", std="std", n_splits="count").reset_index())
    io.save_csv(out, summary, checksum=True, inputs=[results])
    print(f"[aggregate] {len(summary)} groups -> {out}")
