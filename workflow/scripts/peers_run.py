# Rule `peers_run`: mvl.workflow.peers.peers_run with the object Snakemake passes to a script.
from mvl.workflow.peers import peers_run

peers_run(snakemake)  # noqa: F821 (the object Snakemake passes to a script)
