# Rule `incomplete_summary`: mvl.workflow.incomplete.incomplete_summary with the object Snakemake passes to a script.
from mvl.workflow.incomplete import incomplete_summary

incomplete_summary(snakemake)  # noqa: F821 (the object Snakemake passes to a script)
