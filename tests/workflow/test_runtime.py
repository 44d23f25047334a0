"""What a rule job needs around its step (mvl.workflow.runtime): its log, the download options, and the
execution of a report notebook."""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

from mvl.workflow.io import verify_file
from mvl.workflow.runtime import data_options, execute_notebook, logged


def test_logged_sends_what_the_step_prints_to_the_rules_log(tmp_path):
    (tmp_path / "logs").mkdir()  # Snakemake creates a rule's log folder before the job runs
    smk = SimpleNamespace(log=[str(tmp_path / "logs" / "job.log")])
    with logged(smk):
        print("into the log")
        print("and its errors", file=sys.stderr)
    text = (tmp_path / "logs" / "job.log").read_text()
    assert "into the log" in text and "and its errors" in text


def test_data_options_read_the_config_key_data(tmp_path, monkeypatch):
    from mvl.data import download

    monkeypatch.delenv(download.ENV_OFFLINE, raising=False)
    opts = data_options({"mirror": str(tmp_path), "offline": True, "retries": 5})
    assert opts.offline is True and opts.data_mirror == tmp_path and opts.retries == 5
    assert data_options(None).offline is False


def test_a_jupytext_report_is_executed_with_its_parameters(tmp_path):
    script = tmp_path / "report.py"
    header = ("# ---\n# jupyter:\n#   kernelspec:\n#     display_name: Python 3\n#     language: python\n"
              "#     name: python3\n# ---\n\n")
    script.write_text(header + '# %% tags=["parameters"]\nanswer = 0\n\n# %%\nprint(f"answer = {answer + 1}")\n')
    out = tmp_path / "out" / "report.ipynb"
    execute_notebook(script, out, {"answer": 41})
    cells = json.loads(out.read_text())["cells"]
    outputs = [o for c in cells if c["cell_type"] == "code" for o in c.get("outputs", [])]
    assert any("answer = 42" in "".join(o.get("text", "")) for o in outputs)
    # nothing half-written beside it; the checksum sidecar records the notebook
    assert sorted(p.name for p in out.parent.iterdir()) == ["report.ipynb", "report.ipynb.sha256"]
    assert verify_file(out) is True


_HEADER = ("# ---\n# jupyter:\n#   kernelspec:\n#     display_name: Python 3\n#     language: python\n"
           "#     name: python3\n# ---\n\n")


def test_a_failing_report_leaves_no_temporary_and_a_killed_runs_temporary_is_removed(tmp_path):
    """A cell that raises: papermill's error, no output and no temporary notebook beside it. A 0-byte temporary
    that a SIGKILLed report left (``.report.ipynb.<random>.ipynb``) is removed by the next run of the report."""
    import papermill
    import pytest

    out = tmp_path / "results" / "mfeat" / "report.ipynb"
    out.parent.mkdir(parents=True)
    failing = tmp_path / "failing.py"
    failing.write_text(_HEADER + '# %% tags=["parameters"]\nx = 0\n\n# %%\nraise RuntimeError("bad figure")\n')
    with pytest.raises(papermill.PapermillExecutionError, match="bad figure"):
        execute_notebook(failing, out, {"x": 1})
    assert list(out.parent.iterdir()) == []
    stale = out.parent / ".report.ipynb.k1ll3d.ipynb"
    stale.write_bytes(b"")
    other = out.parent / ".summary.csv.k1ll3d.csv"  # another output's temporary: not this job's to remove
    other.write_bytes(b"")
    good = tmp_path / "good.py"
    good.write_text(_HEADER + '# %% tags=["parameters"]\nx = 0\n\n# %%\nprint(x)\n')
    execute_notebook(good, out, {"x": 1})
    assert sorted(p.name for p in out.parent.iterdir()) == [".summary.csv.k1ll3d.csv", "report.ipynb",
                                                            "report.ipynb.sha256"]


def test_the_temporaries_a_killed_report_left_beside_its_figures_are_removed(tmp_path):
    """A report killed while its kernel saved a figure leaves the figure's temporary (``.<name>.<random>.png``):
    the next run of the report removes those of every output of the job (``outputs``), and nothing else."""
    out = tmp_path / "results" / "mfeat" / "report.ipynb"
    figs = out.parent / "figures"
    figs.mkdir(parents=True)
    png, pdf = figs / "accuracy_vs_labels.png", figs / "accuracy_vs_labels.pdf"
    stale = [figs / ".accuracy_vs_labels.png.k1ll3d.png", figs / ".accuracy_vs_labels.pdf.k1ll3d.pdf",
             out.parent / ".report.ipynb.k1ll3d.ipynb"]
    for p in stale:
        p.write_bytes(b"")
    keep = figs / ".other.png.k1ll3d.png"  # not an output of this job
    keep.write_bytes(b"")
    good = tmp_path / "good.py"
    good.write_text(_HEADER + '# %% tags=["parameters"]\nx = 0\n\n# %%\nprint(x)\n')
    execute_notebook(good, out, {"x": 1}, outputs=[str(out), str(png), str(pdf)])
    assert sorted(p.name for p in figs.iterdir()) == [keep.name]
    assert sorted(p.name for p in out.parent.iterdir()) == ["figures", "report.ipynb", "report.ipynb.sha256"]


def test_sigterm_inside_logged_removes_the_temporary_file(tmp_path):
    """Snakemake cancels a job with SIGTERM: inside ``logged`` it ends the job with exit status 143 and the
    atomic writer's temporary file is removed (without the handler the process dies and leaves it)."""
    import subprocess

    out = tmp_path / "report.ipynb"
    code = f"""
import os, signal, time
from types import SimpleNamespace
from mvl.fileio import atomic_path
from mvl.workflow.runtime import logged
with logged(SimpleNamespace(log=[{str(tmp_path / 'job.log')!r}])):
    with atomic_path({str(out)!r}, ".ipynb") as tmp:
        tmp.write_text("half")
        print("temporary", tmp.name, flush=True)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(30)
"""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 143, proc.stderr
    assert "temporary .report.ipynb." in (tmp_path / "job.log").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job.log"]
    bare = code.replace("with logged(SimpleNamespace(log=[" + repr(str(tmp_path / "job.log")) + "])):",
                        "if True:")
    proc = subprocess.run([sys.executable, "-c", bare], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == -15
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".report.ipynb.")]  # the failure guarded
