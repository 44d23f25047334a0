# Rule `run`: every run of one (dataset, split seed, method family) in one process (mvl.workflow.runner).
from mvl.workflow.runner import main

main(snakemake)  # noqa: F821 (the object Snakemake passes to a script)
