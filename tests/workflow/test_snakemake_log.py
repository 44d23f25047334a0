"""Snakemake's job table read from its output (mvl.workflow.snakemake_log)."""

from __future__ import annotations

from mvl.workflow.snakemake_log import job_stats

OUTPUT = """Building DAG of jobs...
Job stats:
job          count
---------  -------
all              1
run             12
report           1
total           14

Job stats:
job      count
-----  -------
run          3
"""


def test_the_first_job_table_as_counts_per_rule():
    assert job_stats(OUTPUT) == {"all": 1, "run": 12, "report": 1, "total": 14}


def test_output_without_a_job_table_gives_no_counts():
    assert job_stats("Nothing to be done (all requested files are present and up to date).") == {}
