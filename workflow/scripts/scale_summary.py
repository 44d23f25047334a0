# Rule `scale_summary`: mvl.workflow.scale.scale_summary with the object Snakemake passes to a script.
from mvl.workflow.scale import scale_summary

scale_summary(snakemake)  # noqa: F821 (the object Snakemake passes to a script)
