# Vector-valued multi-view learning (Minh, Bazzani & Murino, JMLR 2016): the reproduction workflow.
#   snakemake --profile profiles/default      # embedded UCI Multiple Features, a few minutes
#   snakemake --profile profiles/ci           # tiny, used by CI
#   snakemake --profile profiles/paper        # paper-scale protocol
from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config/config.yaml"


include: "workflow/rules/config_overlay.smk"


validate(config, "workflow/schemas/config.schema.yaml")


include: "workflow/rules/common.smk"
include: "workflow/rules/resources.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/experiments.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/coreg.smk"
include: "workflow/rules/index.smk"


rule all:
    input:
        [report_targets(d) for d in DATASETS],
        coreg_targets(),
        REPORT_HTML,
        f"{RES}/index.html",
    default_target: True


apply_rule_resources()
