"""The rules' entry points (mvl.workflow.jobs and the studies' own): every script of workflow/scripts calls an entry
function that exists, and every rule names a script that exists."""

from __future__ import annotations

import importlib
import re

from conftest import ROOT

from mvl.workflow import jobs

SCRIPTS = sorted((ROOT / "workflow" / "scripts").glob("*.py"))


def test_every_script_calls_an_entry_function_with_the_snakemake_object():
    assert SCRIPTS
    for path in SCRIPTS:
        text = path.read_text()
        module, name = re.search(r"^from (mvl\.workflow\.\w+) import (\w+)$", text, re.M).groups()
        assert callable(getattr(importlib.import_module(module), name)), path.name
        assert f"{name}(snakemake)" in text, path.name


def test_every_rule_script_exists_and_jobs_holds_only_rule_entries():
    rules = "\n".join(p.read_text() for p in (ROOT / "workflow" / "rules").glob("*.smk"))
    named = set(re.findall(r'"\.\./scripts/(\w+\.py)"', rules))
    assert named and named <= {p.name for p in SCRIPTS}
    assert set(jobs.__all__) == {"dataset", "prepare", "run", "collect", "aggregate", "report", "notebook_html",
                                 "index"}
