rule run:
    """One method on one draw (split seed, l_c labelled and u_c unlabelled per class)."""
    input:
        data=f"{RES}/{{dataset}}/dataset.npz",
        split=f"{RES}/{{dataset}}/splits/seed{{seed}}.json",
        kernels=lambda w: [f"{RES}/{w.dataset}/kernels/seed{w.seed}/{v}.npz" for v in method_views(w.method)],
    output:
        f"{RES}/{{dataset}}/runs/u{{uc}}/l{{lc}}/{{method}}/seed{{seed}}.csv",
    params:
        run=run_params(),
    log:
        f"{RES}/{{dataset}}/logs/runs/u{{uc}}_l{{lc}}_{{method}}_seed{{seed}}.log",
    shell:
        '"{PYTHON}" -m mvl.cli run --dataset {wildcards.dataset} --dataset-npz {input.data} '
        "--split {input.split} --kernels {input.kernels} --method {wildcards.method} "
        "--lc {wildcards.lc} --uc {wildcards.uc} --seed {wildcards.seed} --params {params.run:q} "
        "--out {output} > {log} 2>&1"


rule collect:
    """Tidy results table: one row per run."""
    input:
        lambda w: run_targets(w.dataset),
    output:
        f"{RES}/{{dataset}}/results.csv",
    log:
        f"{RES}/{{dataset}}/logs/collect.log",
    shell:
        '"{PYTHON}" -m mvl.cli collect --out {output} {input} > {log} 2>&1'


rule aggregate:
    """Mean and standard deviation over splits."""
    input:
        f"{RES}/{{dataset}}/results.csv",
    output:
        f"{RES}/{{dataset}}/summary.csv",
    log:
        f"{RES}/{{dataset}}/logs/aggregate.log",
    shell:
        '"{PYTHON}" -m mvl.cli aggregate --results {input} --out {output} > {log} 2>&1'
