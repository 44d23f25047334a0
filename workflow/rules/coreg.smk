# Co-regularization benchmarks of Sindhwani & Rosenberg (2008): MR (Laplacian RLS) vs CoMR, their Tables 2-4,
# under three ways of choosing (gamma_1, gamma_2) and two kNN graph weight conventions
# (mvl.workflow.coreg_report). (STUDY.coreg and coreg_targets are in common.smk.)


rule coreg_run:
    """MR and CoMR on one seeded split (l, u, t, v of SR Table 1): one row per (gamma_1, gamma_2) of the grid,
    method and graph weights (binary, kernel), the per-split validation choice marked `selected`."""
    output:
        f"{RES}/coreg/runs/{{cds}}/seed{{seed}}.csv",
    wildcard_constraints:
        cds="[a-z0-9]+",
    log:
        f"{RES}/coreg/logs/{{cds}}_seed{{seed}}.log",
    resources:
        mem_mb=per_attempt(2048),
        runtime=per_attempt(30),
    conda:
        "../envs/mvl.yaml"
    script:
        "../scripts/coreg_run.py"


rule coreg_collect:
    """All grid rows of every split and co-regularization dataset in one tidy table."""
    input:
        [f"{RES}/coreg/runs/{d}/seed{s}.csv" for d in STUDY.coreg.datasets for s in STUDY.coreg.seeds],
    output:
        f"{RES}/coreg/results.csv",
    log:
        f"{RES}/coreg/logs/collect.log",
    resources:
        mem_mb=per_attempt(1024),
        runtime=per_attempt(10),
    conda:
        "../envs/mvl.yaml"
    script:
        "../scripts/collect.py"


rule coreg_report:
    """Our MR/CoMR test and unlabelled errors under protocols (a) per-split validation, (b) one pair per dataset,
    (c) SR's Table-4 pairs, beside SR Tables 2-3, with paired t-tests and one generated verdict per dataset
    (papermill); summary.csv: mean (std) per dataset, method, graph weights and protocol."""
    input:
        notebook="notebooks/coreg_report.py",
        results=f"{RES}/coreg/results.csv",
    output:
        notebook=f"{RES}/coreg/report.ipynb",
        summary=f"{RES}/coreg/summary.csv",
    log:
        f"{RES}/coreg/logs/report.log",
    resources:
        mem_mb=per_attempt(2048),
        runtime=per_attempt(20),
    conda:
        "../envs/mvl.yaml"
    script:
        "../scripts/coreg_report.py"
