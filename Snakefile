# Vector-valued multi-view learning (Minh, Bazzani & Murino, JMLR 2016): the reproduction workflow. The entry point:
# `snakemake --cores N` here reads this file, which includes workflow/rules/*.smk (workflow/ also holds the rules'
# scripts, the conda env and the config schema); the report notebooks are in notebooks/, the config in config/.
#   snakemake --profile profiles/default      # embedded UCI Multiple Features, a few minutes
#   snakemake --profile profiles/ci           # tiny, used by CI (the template's .test/ equivalent)
#   snakemake --profile profiles/paper        # paper-scale protocol
import sys

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
include: "workflow/rules/scale.smk"
include: "workflow/rules/peers.smk"
include: "workflow/rules/incomplete.smk"
include: "workflow/rules/index.smk"


# The two things done while this file is parsed, in the main Snakemake process only (not in a job that re-reads
# the Snakefile on a cluster node), both before the DAG is built:
#  - outputs whose content no longer matches their checksum sidecar (mvl.workflow.io) are deleted, one line each
#    on stderr, with everything computed from them, so that the DAG built next recomputes them. onstart: runs
#    after the DAG is built (too late: it would plan nothing for them), so this has to happen here. A dry run
#    (-n) only lists them (nothing deleted; its plan then does not show their recomputation), and --lint (which
#    Snakemake parses without checking environment variables) does nothing.
#  - the raw data the paper datasets still need are checked (read-only); offline with files missing, a
#    WorkflowError lists them all and no job starts, also in a dry run.
if workflow.is_main_process and workflow.check_envvars:
    from mvl.workflow.io import verify_outputs

    _dry = workflow.output_settings.dryrun
    verify_outputs(RES, remove=not _dry, stream=sys.stderr)
    if _dry:
        print("(dry run: the files above were not deleted; a real run recomputes them)", file=sys.stderr)
    check_raw_data()


rule all:
    input:
        all_report_targets(),
        REPORT_HTML,
        f"{RES}/index.html",
    default_target: True
