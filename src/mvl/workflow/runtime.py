"""What every rule job needs around its step: its log, the download options, and the execution of a report notebook.

Each study's rule entry functions (:mod:`mvl.workflow.jobs` for the main study and the shared rules, the study
modules for theirs) wrap their step in :func:`logged`; steps that read raw data build their
:class:`mvl.data.download.DataOptions` with :func:`data_options`; every report rule runs its notebook with
:func:`execute_notebook`. No paper section (workflow infrastructure).
"""

from __future__ import annotations

from ..fileio import atomic_path, redirected_output

__all__ = ["logged", "data_options", "execute_notebook"]


def logged(smk):
    """Standard output and error of the block go to the rule's log (its first log file), line-buffered."""
    return redirected_output(smk.log[0])


def data_options(data):
    """Download options (:class:`mvl.data.download.DataOptions`) from the config key ``data`` (a mapping)."""
    from ..data.download import DataOptions

    return DataOptions.from_config({"data": dict(data or {})})


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
