# The incomplete-views study: MVL-LS on incomplete views against mean imputation and the best single
# view, accuracy against the missing fraction q (mvl.workflow.incomplete); one job per (data set, split seed).
# Settings: config section `incomplete`, parsed once (INCOMPLETE and incomplete_targets are in common.smk).


rule incomplete_run:
    """Every pattern, q and method of one (data set, seed): one row per run."""
    output:
        f"{RES}/incomplete/runs/{{idataset}}/seed{{seed}}.csv",
    wildcard_constraints:
        idataset="[a-z0-9_]+",
    params:
        settings=lambda w: INCOMPLETE.job(),  # without the data sets and seeds: a new seed reruns no finished job
    log:
        f"{RES}/incomplete/logs/{{idataset}}_seed{{seed}}.log",
    threads: 1
    resources:
        mem_mb=per_attempt(2048),
        runtime=per_attempt(30),
    conda:
        "../envs/mvl.yaml"
    script:
        "../scripts/incomplete_run.py"


rule incomplete_summary:
    """Every run's rows in one table, and mean, std and count over seeds (with the best single view)."""
    input:
        lambda w: [f"{RES}/incomplete/runs/{d}/seed{s}.csv" for d, s in INCOMPLETE.runs()],
    output:
        results=f"{RES}/incomplete/results.csv",
        summary=f"{RES}/incomplete/summary.csv",
    log:
        f"{RES}/incomplete/logs/summary.log",
    resources:
        mem_mb=per_attempt(1024),
        runtime=per_attempt(10),
    conda:
        "../envs/mvl.yaml"
    script:
        "../scripts/incomplete_summary.py"


rule incomplete_report:
    """The report notebook (notebooks/incomplete_report.py) executed with papermill: protocol, table, figure."""
    input:
        notebook="notebooks/incomplete_report.py",
        results=f"{RES}/incomplete/results.csv",
        summary=f"{RES}/incomplete/summary.csv",
    output:
        notebook=f"{RES}/incomplete/report.ipynb",
        png=f"{RES}/incomplete/figures/accuracy_vs_q.png",
        pdf=f"{RES}/incomplete/figures/accuracy_vs_q.pdf",
    params:
        settings=lambda w: INCOMPLETE,
    log:
        f"{RES}/incomplete/logs/report.log",
    resources:
        mem_mb=per_attempt(2048),
        runtime=per_attempt(20),
    conda:
        "../envs/mvl.yaml"
    script:
        "../scripts/incomplete_report.py"
