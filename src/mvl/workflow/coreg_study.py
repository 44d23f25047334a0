"""The co-regularization study (Sindhwani & Rosenberg, ICML 2008: MR against CoMR, their Tables 2-4): its config
section ``coreg``, its run step and its rule entry points.

The runs are :func:`mvl.workflow.coreg_runner.run_split`, the report's tables
:mod:`mvl.workflow.coreg_report` (shown by ``notebooks/coreg_report.py``). This module stays light (the runner is
imported inside the step): :mod:`mvl.workflow.settings` reads the section through :func:`parse_settings` while the
Snakefile is parsed. No paper section of the JMLR paper (the co-regularized least squares of Section 3.4).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from . import io
from .runtime import data_options, execute_notebook, logged
from .sections import as_tuple

__all__ = ["CoregSettings", "parse_settings", "write_coreg", "coreg_run", "coreg_report"]


@dataclass(frozen=True)
class CoregSettings:
    """The co-regularization benchmarks (Sindhwani & Rosenberg 2008) to run, and their split seeds."""

    datasets: tuple = ()
    seeds: tuple = ()


def parse_settings(section):
    """The :class:`CoregSettings` of the config section ``coreg`` (a mapping or None: nothing to run)."""
    section = section or {}
    return CoregSettings(datasets=as_tuple(section.get("datasets")), seeds=as_tuple(section.get("seeds")))


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


# ------------------------------------------------------------------ rule entry points


def coreg_run(smk):
    """Rule ``coreg_run``: MR and CoMR on one split of a Sindhwani-Rosenberg benchmark."""
    with logged(smk):
        write_coreg(smk.wildcards.cds, int(smk.wildcards.seed), smk.output[0], data_config=smk.config.get("data"))


def coreg_report(smk):
    """Rule ``coreg_report``: the co-regularization report notebook executed with papermill."""
    with logged(smk):
        execute_notebook(smk.input.notebook, smk.output.notebook,
                         {"results_csv": smk.input.results, "summary_csv": smk.output.summary},
                         outputs=list(smk.output))
        print(f"[coreg_report] -> {smk.output.notebook}")
