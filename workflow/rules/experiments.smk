rule run:
    """Every run of one method family on one split (all its l_c, u_c and methods) in one process, sharing the
    split's kernels and the validation selection (mvl.workflow.runner); one progress line per run in the log."""
    input:
        data=unit_input,
    output:
        f"{RES}/{{dataset}}/runs/{{family}}/seed{{seed}}.csv",
    params:
        # only the family's settings (mvl.workflow.settings.Unit): changing another family's reruns nothing here
        unit=lambda w: STUDY[w.dataset].unit(w.family),
    log:
        f"{RES}/{{dataset}}/logs/run_{{family}}_seed{{seed}}.log",
    threads: 1
    resources:
        mem_mb=run_mem_mb,
        runtime=run_runtime,
    conda:
        "../envs/mvl.yaml"
    script:
        "../scripts/run_unit.py"


rule collect:
    """Tidy results table: one row per run."""
    input:
        lambda w: run_targets(w.dataset),
    output:
        f"{RES}/{{dataset}}/results.csv",
    log:
        f"{RES}/{{dataset}}/logs/collect.log",
    resources:
        mem_mb=per_attempt(1024),
        runtime=per_attempt(10),
    conda:
        "../envs/mvl.yaml"
    script:
        "../scripts/collect.py"


rule aggregate:
    """Mean and standard deviation over splits."""
    input:
        f"{RES}/{{dataset}}/results.csv",
    output:
        f"{RES}/{{dataset}}/summary.csv",
    log:
        f"{RES}/{{dataset}}/logs/aggregate.log",
    resources:
        mem_mb=per_attempt(1024),
        runtime=per_attempt(10),
    conda:
        "../envs/mvl.yaml"
    script:
        "../scripts/aggregate.py"
