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

from .main import write_collected, write_dataset, write_prepared, write_summary
from .runtime import execute_notebook, logged

__all__ = ["dataset", "prepare", "run", "collect", "aggregate", "report", "notebook_html", "index"]

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
        execute_notebook(smk.input.notebook, out, parameters, outputs=list(smk.output))
        print(f"[report] {settings.dataset} -> {out}")


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
