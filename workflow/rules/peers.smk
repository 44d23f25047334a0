# The peers study: MVL-LS against Laplace and Poisson learning (graphlearning) and LabelSpreading on
# real data, transductive (mvl.workflow.peers); one job per (data set, seed), then one table and one report.
# Settings: config section `peers`, parsed once (PEERS, common.smk).


rule peers_run:
    """Every labelled draw (l_c per class, and USPST's BNS split) and method of one seed on one data set."""
    output:
        f"{RES}/peers/runs/{{pds}}/seed{{seed}}.csv",
    wildcard_constraints:
        pds="[a-z0-9]+",
    params:
        settings=lambda w: PEERS.for_run(w.pds, w.seed),
    log:
        f"{RES}/peers/logs/{{pds}}_seed{{seed}}.log",
    resources:
        mem_mb=peers_mem_mb,
        runtime=peers_runtime,
    conda:
        "../envs/mvl.yaml"
    script:
        "../scripts/peers_run.py"


rule peers_summary:
    """All runs in one tidy table, and the mean and standard deviation over seeds."""
    input:
        [f"{RES}/peers/runs/{d}/seed{s}.csv" for d, s in (PEERS.runs() if PEERS else [])],
    output:
        results=f"{RES}/peers/results.csv",
        summary=f"{RES}/peers/summary.csv",
    log:
        f"{RES}/peers/logs/summary.log",
    resources:
        mem_mb=per_attempt(1024),
        runtime=per_attempt(10),
    conda:
        "../envs/mvl.yaml"
    script:
        "../scripts/peers_summary.py"


rule peers_report:
    """The protocol, the accuracy tables beside the literature and earlier measurements, and the figure
    (papermill)."""
    input:
        notebook="notebooks/peers_report.py",
        results=f"{RES}/peers/results.csv",
        summary=f"{RES}/peers/summary.csv",
    output:
        notebook=f"{RES}/peers/report.ipynb",
        png=f"{RES}/peers/figures/accuracy.png",
        pdf=f"{RES}/peers/figures/accuracy.pdf",
    params:
        settings=PEERS,
    log:
        f"{RES}/peers/logs/report.log",
    resources:
        mem_mb=per_attempt(2048),
        runtime=per_attempt(20),
    conda:
        "../envs/mvl.yaml"
    script:
        "../scripts/peers_report.py"
