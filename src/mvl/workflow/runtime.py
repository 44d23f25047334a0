"""What every rule job needs around its step: its log, the download options, and the execution of a report notebook.

Each study's rule entry functions (:mod:`mvl.workflow.jobs` for the main study and the shared rules, the study
modules for theirs) wrap their step in :func:`logged`; steps that read raw data build their
:class:`mvl.data.download.DataOptions` with :func:`data_options`; every report rule runs its notebook with
:func:`execute_notebook`. No paper section (workflow infrastructure).
"""

from __future__ import annotations

import contextlib
import glob
import signal
import threading
from pathlib import Path

from ..fileio import redirected_output

__all__ = ["logged", "data_options", "execute_notebook", "remove_stale_temporaries"]


@contextlib.contextmanager
def _terminate_as_exit():
    """SIGTERM (what Snakemake sends a job it cancels) raises SystemExit in the block, so that its ``finally``
    and ``except`` clauses run (temporary files removed) instead of the process dying at once; restored after.
    Only in the main thread (elsewhere a handler cannot be installed)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def logged(smk):
    """Standard output and error of the block go to the rule's log (its first log file), line-buffered; a
    SIGTERM ends the block with SystemExit (its temporary files removed)."""
    with redirected_output(smk.log[0]) as fh, _terminate_as_exit():
        yield fh


def remove_stale_temporaries(out, suffix):
    """Remove the temporaries of ``out`` (``.<name>.*<suffix>`` beside it, :func:`mvl.fileio.atomic_path`) that a
    killed job left (SIGKILL runs no cleanup). Safe in a job: Snakemake runs one job per output, under its lock.
    Returns the removed paths."""
    out = Path(out)
    removed = []
    if out.parent.is_dir():
        for p in out.parent.glob(f".{glob.escape(out.name)}.*{suffix}"):
            with contextlib.suppress(FileNotFoundError):
                p.unlink()
                removed.append(p)
    return removed


def data_options(data):
    """Download options (:class:`mvl.data.download.DataOptions`) from the config key ``data`` (a mapping)."""
    from ..data.download import DataOptions

    return DataOptions.from_config({"data": dict(data or {})})


def execute_notebook(notebook, out, parameters, outputs=()):
    """Run the report ``notebook`` with papermill into ``out``, atomically (nothing half-written) and with its
    checksum sidecar (:func:`mvl.workflow.io.atomic_path`: the workflow's start-up check finds a notebook whose
    content changed): an .ipynb as it is, a jupytext script (.py) converted to .ipynb into the temporary file first.
    The one way every report rule executes its notebook (cell tagged ``parameters``). On failure (an error, an
    interrupt, SIGTERM inside :func:`logged`) the temporary notebook is removed; one left by a killed run is removed
    first, and so are the temporaries of the job's other ``outputs`` (its figures) that a killed run left.

    The other ``outputs`` the notebook wrote (figures, tables, each with its own sidecar) are recorded in the
    notebook's sidecar as files it comes with: one of them corrupted deletes the notebook too
    (:func:`mvl.workflow.io.verify_outputs`), so that the whole report job is rerun also when only the notebook is
    requested (Snakemake reruns a job for a missing output only if that output is requested)."""
    import papermill

    from .io import atomic_path as checked_path

    others = [o for o in outputs if Path(o) != Path(out)]
    for p in remove_stale_temporaries(out, ".ipynb"):
        print(f"[report] removed {p}, the temporary notebook of a killed run")
    for other in others:
        for p in remove_stale_temporaries(other, Path(other).suffix):
            print(f"[report] removed {p}, a temporary file of a killed run")
    with checked_path(out, ".ipynb", checksum=True, inputs=others) as tmp:
        source = str(notebook)
        if not source.endswith(".ipynb"):
            import jupytext

            jupytext.write(jupytext.read(source), str(tmp), fmt="ipynb")
            source = str(tmp)
        papermill.execute_notebook(source, str(tmp), parameters=parameters, kernel_name="python3",
                                   progress_bar=False, log_output=False)
