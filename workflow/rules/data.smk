rule dataset:
    """Raw data of one dataset (embedded, downloaded and verified, or read from the mirror) as one npz:
    labels, view features or full view kernels, and the official splits where the dataset has them."""
    output:
        f"{RES}/{{dataset}}/dataset.npz",
    params:
        python=PYTHON,
        source=lambda w: dcfg(w.dataset)["source"],
        views=lambda w: " ".join(views(w.dataset)),
        data=data_options(),
    log:
        f"{RES}/{{dataset}}/logs/dataset.log",
    conda:
        "../envs/mvl.yaml"
    shell:
        '"{params.python}" -m mvl.cli dataset --dataset {wildcards.dataset} --source {params.source} '
        "--views {params.views} --data {params.data:q} --out {output} > {log} 2>&1"


rule split:
    input:
        f"{RES}/{{dataset}}/dataset.npz",
    output:
        f"{RES}/{{dataset}}/splits/seed{{seed}}.json",
    params:
        python=PYTHON,
        protocol=lambda w: json.dumps(dcfg(w.dataset)["protocol"], sort_keys=True),
    log:
        f"{RES}/{{dataset}}/logs/split_seed{{seed}}.log",
    conda:
        "../envs/mvl.yaml"
    shell:
        '"{params.python}" -m mvl.cli split --dataset-npz {input} --seed {wildcards.seed} '
        "--protocol {params.protocol:q} --out {output} > {log} 2>&1"


rule kernel:
    """Kernel of one view for one split: pool x pool and test x pool, parameters from the pool."""
    input:
        data=f"{RES}/{{dataset}}/dataset.npz",
        split=f"{RES}/{{dataset}}/splits/seed{{seed}}.json",
    output:
        f"{RES}/{{dataset}}/kernels/seed{{seed}}/{{view}}.npz",
    params:
        python=PYTHON,
        spec=lambda w: json.dumps(dcfg(w.dataset)["kernel"], sort_keys=True),
    log:
        f"{RES}/{{dataset}}/logs/kernel_seed{{seed}}_{{view}}.log",
    conda:
        "../envs/mvl.yaml"
    shell:
        '"{params.python}" -m mvl.cli kernel --dataset-npz {input.data} --split {input.split} '
        "--view {wildcards.view} --kernel {params.spec:q} --out {output} > {log} 2>&1"
