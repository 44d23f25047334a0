# Rule `aggregate`: mvl.workflow.jobs.aggregate with the object Snakemake passes to a script.
from mvl.workflow.jobs import aggregate

aggregate(snakemake)  # noqa: F821 (the object Snakemake passes to a script)
