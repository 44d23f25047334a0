"""What each rule of the workflow does: one entry function per rule, called by its script (``workflow/scripts/``).

Every rule runs through Snakemake's ``script:`` directive: the thin script calls one function here with the
``snakemake`` object it receives, and that function calls the step that does the work (``write_*``, also usable
without Snakemake). Settings arrive once, as the objects of :mod:`mvl.workflow.settings` in the rule's ``params``
(which Snakemake compares between runs: a unit's params hold only its family's settings, so changing them reruns
only those units), never as JSON on a shell line. The download options (config key ``data``: mirror, cache, URLs,
offline) and the config hash shown on the index page come from ``snakemake.config``: where raw data come from does
not change what they are (files are verified), so changing them reruns no job. What a job prints goes to the
rule's log (:func:`mvl.fileio.redirected_output`); every output is written atomically, most with a SHA-256 sidecar
(<out>.sha256, which also records the digests of the inputs; :func:`mvl.workflow.io.verify_outputs`). No paper
section (workflow glue: it prepares the data of Section 7.2 and collects the results of Section 7).
"""

from __future__ import annotations

import json
import pickle
import time
from pathlib import Path

from ..fileio import atomic_path, redirected_output
from . import io

__all__ = ["logged", "data_options", "write_dataset", "write_prepared", "write_collected", "write_summary",
           "write_coreg", "dataset", "prepare", "run", "collect", "aggregate", "coreg_run", "report",
           "coreg_report", "notebook_html", "index"]

SUMMARY_KEYS = ["dataset", "method", "views", "n_views", "setting", "l_c", "u_c", "graph", "gamma_choice"]
"""Columns that form a group of the summary (with gamma_B_on, gamma_W_on and ablation_cell)."""


def logged(smk):
    """Standard output and error of the block go to the rule's log (its first log file), line-buffered."""
    return redirected_output(smk.log[0])


def data_options(data):
    """Download options (:class:`mvl.data.download.DataOptions`) from the config key ``data`` (a mapping)."""
    from ..data.download import DataOptions

    return DataOptions.from_config({"data": dict(data or {})})


# ------------------------------------------------------------------ steps


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
    (:func:`mvl.data.paper.prepare`), kept as a pickle ``out``."""
    from ..data import download
    from ..data.sources import source

    src = source(data.source)
    if not src.is_paper:
        raise ValueError(f"prepare is for the paper datasets, not {data.source!r}")
    paths = download.fetch(src.download, data_options(data_config))
    loaded = src.load_function()(data.source, paths, data.views, part=part, image_view=data.image_view)
    with io.atomic_path(out, checksum=True) as tmp, open(tmp, "wb") as fh:
        pickle.dump(loaded, fh, protocol=pickle.HIGHEST_PROTOCOL)
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


def write_coreg(dataset, seed, out, data_config=None):
    """One seeded split of a co-regularization benchmark (Sindhwani & Rosenberg 2008): MR and CoMR on every
    (gamma_1, gamma_2) of the grid under both graph weight conventions, one row each (``selected`` marks the
    per-split validation choice; :func:`mvl.workflow.coreg_runner.run_split`)."""
    from .coreg_runner import run_split

    data_dir = None
    if dataset != "lines":
        from ..data import download

        paths = download.fetch("ssl_benchmarks", data_options(data_config))
        data_dir = Path(paths["ssl_benchmarks/g50c.mat"]).parent
    t0 = time.perf_counter()
    rows = run_split(dataset, seed, data_dir=data_dir, all_grid=True)
    io.save_csv(out, rows, checksum=True)
    sel = rows[rows["selected"]]
    errs = ", ".join(f"{r.method}/{r.graph_weights} test {r.test_error:.2f} unl {r.unlabelled_error:.2f}"
                     for r in sel.itertuples())
    print(f"[coreg] {dataset} seed {seed}: {len(rows)} grid rows; selected on validation: {errs} "
          f"({time.perf_counter() - t0:.1f} s) -> {out}")


# ------------------------------------------------------------------ the rules


def dataset(smk):
    """Rule ``dataset``: the raw data of one dataset as one npz (params: data)."""
    with logged(smk):
        write_dataset(smk.params.data, smk.output[0], data_config=smk.config.get("data"))


def prepare(smk):
    """Rule ``prepare``: a paper dataset fetched and loaded once (params: data)."""
    with logged(smk):
        write_prepared(smk.params.data, smk.output[0], part=int(smk.wildcards.part),
                       data_config=smk.config.get("data"))


def run(smk):
    """Rule ``run``: every run of one (dataset, split, method family) in one process (params: unit,
    :func:`mvl.workflow.runner.run_unit`)."""
    from threadpoolctl import threadpool_limits

    from .runner import run_unit

    with logged(smk):
        # one BLAS thread per thread of the job: the units run side by side (snakemake --cores N), and
        # numpy's and scipy's separate OpenBLAS pools busy-wait against each other when both are threaded
        with threadpool_limits(limits=max(1, int(smk.threads)), user_api="blas"):
            run_unit(smk.params.unit, int(smk.wildcards.seed), smk.input.data, smk.output[0])


def collect(smk):
    """Rules ``collect`` and ``coreg_collect``: the run CSVs (input) in one tidy table."""
    with logged(smk):
        write_collected(list(smk.input), smk.output[0])


def aggregate(smk):
    """Rule ``aggregate``: mean and standard deviation over splits."""
    with logged(smk):
        write_summary(smk.input[0], smk.output[0])


def coreg_run(smk):
    """Rule ``coreg_run``: MR and CoMR on one split of a Sindhwani-Rosenberg benchmark."""
    with logged(smk):
        write_coreg(smk.wildcards.cds, int(smk.wildcards.seed), smk.output[0], data_config=smk.config.get("data"))


def execute_notebook(notebook, out, parameters):
    """Run the report ``notebook`` with papermill into ``out``, atomically (nothing half-written): an .ipynb as it
    is, a jupytext script (.py) converted to .ipynb into the temporary file first. The one way every report rule
    executes its notebook (cell tagged ``parameters``)."""
    import papermill

    with atomic_path(out, ".ipynb") as tmp:
        source = str(notebook)
        if not source.endswith(".ipynb"):
            import jupytext

            jupytext.write(jupytext.read(source), str(tmp), fmt="ipynb")
            source = str(tmp)
        papermill.execute_notebook(source, str(tmp), parameters=parameters, kernel_name="python3",
                                   progress_bar=False, log_output=False)


def report(smk):
    """Rule ``report``: the jupytext report script converted to a notebook beside the output, executed with
    papermill (parameters: the inputs, the figure paths and the run's settings table, params ``report``, a
    :class:`mvl.workflow.settings.ReportSettings`), renamed into place."""
    with logged(smk):
        out = smk.output.notebook
        settings = smk.params.report
        parameters = {
            "dataset": settings.dataset, "source": settings.source,
            "results_csv": smk.input.results, "summary_csv": smk.input.summary,
            "fig_png": smk.output.png, "fig_pdf": smk.output.pdf, "fig_optc_weights": smk.output.optc_weights,
            "fig_optc_objective": smk.output.optc_objective, "fig_comparison": smk.output.comparison,
            "fig_comparison_metric": smk.output.comparison_metric,
            "settings": json.dumps([list(row) for row in settings.rows]),
        }
        execute_notebook(smk.input.notebook, out, parameters)
        print(f"[report] {settings.dataset} -> {out}")


def coreg_report(smk):
    """Rule ``coreg_report``: the co-regularization notebook executed with papermill."""
    with logged(smk):
        execute_notebook(smk.input.notebook, smk.output.notebook,
                 {"results_csv": smk.input.results, "summary_csv": smk.output.summary})
        print(f"[coreg_report] -> {smk.output.notebook}")


def notebook_html(smk):
    """Rule ``notebook_html``: an executed notebook as HTML beside it."""
    from .index import export_html

    with logged(smk):
        export_html(smk.input[0], smk.output[0])


def index(smk):
    """Rule ``index``: results/index.html for the executed notebooks (input ``notebooks``), with the profile
    and datasets of params and the hash of the merged config (:func:`mvl.workflow.index.config_hash`)."""
    from mvl import __version__

    from .index import config_hash, write_index

    with logged(smk):
        write_index(smk.output[0], list(smk.input.notebooks), profile=smk.params.profile,
                    config_sha=config_hash(smk.config), version=__version__, datasets=list(smk.params.datasets))
        print(f"[index] -> {smk.output[0]}")
