# Rule `coreg_run`: mvl.workflow.coreg_study.coreg_run with the object Snakemake passes to a script.
from mvl.workflow.coreg_study import coreg_run

coreg_run(snakemake)  # noqa: F821 (the object Snakemake passes to a script)
