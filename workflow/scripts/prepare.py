# Rule `prepare`: mvl.workflow.jobs.prepare with the object Snakemake passes to a script.
from mvl.workflow.jobs import prepare

prepare(snakemake)  # noqa: F821 (the object Snakemake passes to a script)
