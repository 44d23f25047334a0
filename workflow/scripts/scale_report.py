# Rule `scale_report`: mvl.workflow.scale.scale_report with the object Snakemake passes to a script.
from mvl.workflow.scale import scale_report

scale_report(snakemake)  # noqa: F821 (the object Snakemake passes to a script)
