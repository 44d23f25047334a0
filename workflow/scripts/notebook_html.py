# Rule `notebook_html`: mvl.workflow.jobs.notebook_html with the object Snakemake passes to a script.
from mvl.workflow.jobs import notebook_html

notebook_html(snakemake)  # noqa: F821 (the object Snakemake passes to a script)
