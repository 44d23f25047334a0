# Rule `coreg_report`: mvl.workflow.coreg_study.coreg_report with the object Snakemake passes to a script.
from mvl.workflow.coreg_study import coreg_report

coreg_report(snakemake)  # noqa: F821 (the object Snakemake passes to a script)
