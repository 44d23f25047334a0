# Rule `peers_summary`: mvl.workflow.peers.peers_summary with the object Snakemake passes to a script.
from mvl.workflow.peers import peers_summary

peers_summary(snakemake)  # noqa: F821 (the object Snakemake passes to a script)
