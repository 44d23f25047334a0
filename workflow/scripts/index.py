# Rule `index`: mvl.workflow.jobs.index with the object Snakemake passes to a script.
from mvl.workflow.jobs import index

index(snakemake)  # noqa: F821 (the object Snakemake passes to a script)
