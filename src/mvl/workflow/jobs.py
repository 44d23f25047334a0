"""Entry points of the workflow's rules: one function per rule, called by its script (``workflow/scripts/``).

Every rule of the Snakefile runs through Snakemake's ``script:`` directive: the thin script calls one function
here with the ``snakemake`` object it receives. Settings arrive as Python objects (the rule's ``params``, which
Snakemake compares between runs, and the merged ``config``, which it does not), never as JSON or quoted words
on a shell line, and are read once. The download options (config key ``data``: mirror, cache, URLs, offline)
and the config hash shown on the index page come from ``snakemake.config``: where raw data come from does not
change what they are (files are verified), so changing them reruns no job. The interpreter is the one
Snakemake picks for scripts: its own, or python of the rule's conda environment (workflow/envs/mvl.yaml) with
``--sdm conda``. What a job prints goes to the rule's log. The rule ``run`` is
:func:`mvl.workflow.runner.main`. No paper section (workflow glue).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..fileio import atomic_path, redirected_output
from . import cli

__all__ = ["logged", "dataset", "prepare", "collect", "aggregate", "coreg_run", "graph_label", "report",
           "coreg_report", "notebook_html", "index"]


def logged(smk):
    """Standard output and error of the block go to the rule's log (its first log file), line-buffered."""
    return redirected_output(smk.log[0])


def _data(smk):
    return smk.config.get("data") or {}


def dataset(smk):
    """Rule ``dataset``: the raw data of one dataset as one npz (params: source, views)."""
    with logged(smk):
        cli.write_dataset(smk.wildcards.dataset, smk.params.source, list(smk.params.views), smk.output[0],
                          data_options=_data(smk))


def prepare(smk):
    """Rule ``prepare``: a paper dataset fetched and loaded once (params: source, views, loader)."""
    with logged(smk):
        cli.write_prepared(smk.wildcards.dataset, smk.params.source, list(smk.params.views), smk.output[0],
                           part=int(smk.wildcards.part), loader=smk.params.loader, data_options=_data(smk))


def collect(smk):
    """Rules ``collect`` and ``coreg_collect``: the run CSVs (input) in one tidy table."""
    with logged(smk):
        cli.write_collected(list(smk.input), smk.output[0])


def aggregate(smk):
    """Rule ``aggregate``: mean and standard deviation over splits."""
    with logged(smk):
        cli.write_summary(smk.input[0], smk.output[0])


def coreg_run(smk):
    """Rule ``coreg_run``: MR and CoMR on one split of a Sindhwani-Rosenberg benchmark."""
    with logged(smk):
        cli.write_coreg(smk.wildcards.cds, int(smk.wildcards.seed), smk.output[0], data_options=_data(smk))


def graph_label(graph):
    """The report's description of the within-view graph (config key ``graph``)."""
    k = graph.get("n_neighbors")
    return graph["laplacian"] + (f", symmetrised kNN graph (k = {k})" if k else ", dense kernel weights (paper)")


def _execute(notebook, out, parameters):
    """Run ``notebook`` (.ipynb) with papermill and move the executed copy to ``out`` (nothing half-written)."""
    import papermill

    with atomic_path(out, ".ipynb") as tmp:
        papermill.execute_notebook(str(notebook), str(tmp), parameters=parameters, kernel_name="python3",
                                   progress_bar=False, log_output=False)


def report(smk):
    """Rule ``report``: the jupytext report script converted to a notebook beside the output, executed with
    papermill (parameters: the inputs, the figure paths and the settings of params), renamed into place."""
    import jupytext

    with logged(smk):
        out = smk.output.notebook
        src = f"{out}.src.ipynb"
        jupytext.write(jupytext.read(smk.input.notebook), src, fmt="ipynb")
        parameters = {
            "dataset": smk.wildcards.dataset, "source": smk.params.source,
            "results_csv": smk.input.results, "summary_csv": smk.input.summary,
            "fig_png": smk.output.png, "fig_pdf": smk.output.pdf, "fig_optc_weights": smk.output.optc_weights,
            "fig_optc_objective": smk.output.optc_objective, "fig_comparison": smk.output.comparison,
            "fig_comparison_metric": smk.output.comparison_metric,
            # shown as given in the report's settings table
            "graph": graph_label(smk.params.graph),
            "kernel": json.dumps(smk.params.kernel, sort_keys=True),
            "gammas": json.dumps(smk.params.gammas, sort_keys=True),
        }
        _execute(src, out, parameters)
        Path(src).unlink()
        print(f"[report] {smk.wildcards.dataset} -> {out}")


def coreg_report(smk):
    """Rule ``coreg_report``: the co-regularization notebook executed with papermill."""
    with logged(smk):
        _execute(smk.input.notebook, smk.output.notebook,
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
