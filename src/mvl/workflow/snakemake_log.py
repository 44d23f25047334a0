"""Reading Snakemake's own output: the job statistics table it prints before a run or dry run.

Used by the workflow benchmark (benchmarks/bench_workflow.py) and the workflow tests. No paper section.
"""

from __future__ import annotations

__all__ = ["job_stats"]


def job_stats(text):
    """The first "Job stats" table of a Snakemake run or dry run as {rule: count}, "total" included
    (empty when the output has none)."""
    counts = {}
    if "Job stats:" not in text:
        return counts
    for line in text.split("Job stats:", 1)[1].splitlines()[3:]:
        parts = line.split()
        if len(parts) != 2 or not parts[1].isdigit():
            break
        counts[parts[0]] = int(parts[1])
    return counts
