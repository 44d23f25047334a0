# Rule `run`: every run of one (dataset, split seed, method family) in one process (mvl.workflow.runner).
from mvl.workflow.jobs import run

run(snakemake)  # noqa: F821 (the object Snakemake passes to a script)
