rule dataset:
    output:
        f"{RES}/{{dataset}}/dataset.npz",
    params:
        python=PYTHON,
    log:
        f"{RES}/{{dataset}}/logs/dataset.log",
    conda:
        "../envs/mvl.yaml"
    shell:
        '"{params.python}" -m mvl.cli dataset --dataset {wildcards.dataset} --out {output} > {log} 2>&1'


rule split:
    input:
        f"{RES}/{{dataset}}/dataset.npz",
    output:
        f"{RES}/{{dataset}}/splits/seed{{seed}}.json",
    params:
        python=PYTHON,
        n_test=config["n_test_per_class"],
    log:
        f"{RES}/{{dataset}}/logs/split_seed{{seed}}.log",
    conda:
        "../envs/mvl.yaml"
    shell:
        '"{params.python}" -m mvl.cli split --dataset-npz {input} --seed {wildcards.seed} '
        "--n-test-per-class {params.n_test} --out {output} > {log} 2>&1"


rule kernel:
    """Kernel of one view for one split: pool x pool and test x pool, parameters from the pool."""
    input:
        data=f"{RES}/{{dataset}}/dataset.npz",
        split=f"{RES}/{{dataset}}/splits/seed{{seed}}.json",
    output:
        f"{RES}/{{dataset}}/kernels/seed{{seed}}/{{view}}.npz",
    params:
        python=PYTHON,
        spec=json.dumps(config["kernel"], sort_keys=True),
    log:
        f"{RES}/{{dataset}}/logs/kernel_seed{{seed}}_{{view}}.log",
    conda:
        "../envs/mvl.yaml"
    shell:
        '"{params.python}" -m mvl.cli kernel --dataset-npz {input.data} --split {input.split} '
        "--view {wildcards.view} --kernel {params.spec:q} --out {output} > {log} 2>&1"
