# Rules `collect` and `coreg_collect`: mvl.workflow.jobs.collect with the object Snakemake passes to a script.
from mvl.workflow.jobs import collect

collect(snakemake)  # noqa: F821 (the object Snakemake passes to a script)
