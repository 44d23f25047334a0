# Rule `peers_report`: mvl.workflow.peers.peers_report with the object Snakemake passes to a script.
from mvl.workflow.peers import peers_report

peers_report(snakemake)  # noqa: F821 (the object Snakemake passes to a script)
