# The scale profile: MVL-LS by the structured, cg and nystrom solvers and the baselines on seeded
# multi-view manifold data of growing size; one job per (method, n), so each job's peak RSS is its method's
# (mvl.workflow.scale). Settings: config section `scale`, parsed once (SCALE, common.smk).


rule scale_fit:
    output:
        f"{SCALE_DIR}/runs/{{method}}_n{{n}}.json",
    wildcard_constraints:
        method="[a-z]+(_[a-z]+)?(_[0-9]+)?",
        n=r"\d+",
    params:
        fit=lambda w: SCALE.fit_settings(w.method),
    log:
        f"{SCALE_DIR}/logs/{{method}}_n{{n}}.log",
    threads: 2  # the whole machine: one fit at a time, its time and peak RSS its own
    resources:
        mem_mb=per_attempt(8000),
        runtime=per_attempt(120),
    conda:
        "../envs/mvl.yaml"
    script:
        "../scripts/scale_fit.py"


rule scale_summary:
    input:
        lambda w: [f"{SCALE_DIR}/runs/{m}_n{n}.json" for m, n in SCALE.runs()],
    output:
        f"{SCALE_DIR}/results.csv",
    log:
        f"{SCALE_DIR}/logs/summary.log",
    resources:
        mem_mb=per_attempt(1024),
        runtime=per_attempt(10),
    conda:
        "../envs/mvl.yaml"
    script:
        "../scripts/scale_summary.py"


rule scale_report:
    input:
        notebook="notebooks/scale_report.py",
        results=f"{SCALE_DIR}/results.csv",
    output:
        notebook=f"{SCALE_DIR}/report.ipynb",
        png=f"{SCALE_DIR}/figures/scale.png",
        pdf=f"{SCALE_DIR}/figures/scale.pdf",
    params:
        settings=lambda w: SCALE._asdict(),
    log:
        f"{SCALE_DIR}/logs/report.log",
    resources:
        mem_mb=per_attempt(2048),
        runtime=per_attempt(20),
    conda:
        "../envs/mvl.yaml"
    script:
        "../scripts/scale_report.py"
