# Rule `report`: mvl.workflow.jobs.report with the object Snakemake passes to a script.
from mvl.workflow.jobs import report

report(snakemake)  # noqa: F821 (the object Snakemake passes to a script)
