# Rule `dataset`: mvl.workflow.jobs.dataset with the object Snakemake passes to a script.
from mvl.workflow.jobs import dataset

dataset(snakemake)  # noqa: F821 (the object Snakemake passes to a script)
