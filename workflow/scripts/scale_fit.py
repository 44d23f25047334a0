# Rule `scale_fit`: mvl.workflow.scale.scale_fit with the object Snakemake passes to a script.
from mvl.workflow.scale import scale_fit

scale_fit(snakemake)  # noqa: F821 (the object Snakemake passes to a script)
