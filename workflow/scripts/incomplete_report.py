# Rule `incomplete_report`: mvl.workflow.incomplete.incomplete_report with the object Snakemake passes to a script.
from mvl.workflow.incomplete import incomplete_report

incomplete_report(snakemake)  # noqa: F821 (the object Snakemake passes to a script)
