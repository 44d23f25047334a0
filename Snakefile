# Vector-valued multi-view learning (Minh, Bazzani & Murino, JMLR 2016): the reproduction workflow.
#   snakemake --profile profiles/default      # embedded UCI Multiple Features, a few minutes
#   snakemake --profile profiles/ci           # tiny, used by CI
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
include: "workflow/rules/index.smk"


# The two things done while this file is parsed, in the main Snakemake process only (not in a job that
# re-reads the Snakefile on a cluster node), both before the DAG is built:
#  - outputs whose content no longer matches their checksum sidecar (mvl.workflow.io) are deleted, one line each
#    on stderr, so that the DAG built next recomputes them and everything downstream. onstart: runs after the
#    DAG is built (too late: it would plan nothing for them), so this has to happen here.
#  - the raw data the paper datasets still need are checked (read-only); offline with files missing, a
#    WorkflowError lists them all and no job starts. onstart: does not run in a dry run (-n), which should
#    fail the same way.
if workflow.is_main_process:
    from mvl.workflow.io import verify_outputs

    verify_outputs(RES, stream=sys.stderr)
    check_raw_data()


rule all:
    input:
        [report_targets(d) for d in DATASETS],
        coreg_targets(),
        REPORT_HTML,
        f"{RES}/index.html",
    default_target: True

