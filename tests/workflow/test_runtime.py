"""What a rule job needs around its step (mvl.workflow.runtime): its log, the download options, and the
execution of a report notebook."""

from __future__ import annotations

import json
import sys
from types import SimpleNamespace

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
    assert sorted(p.name for p in out.parent.iterdir()) == ["report.ipynb"]  # nothing half-written beside it
