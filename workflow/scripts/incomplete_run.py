# Rule `incomplete_run`: mvl.workflow.incomplete.incomplete_run with the object Snakemake passes to a script.
from mvl.workflow.incomplete import incomplete_run

incomplete_run(snakemake)  # noqa: F821 (the object Snakemake passes to a script)
