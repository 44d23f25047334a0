rule select_gammas:
    """(gamma_A, gamma_B, gamma_W) selected on the validation set over the grid, once per split and u_c,
    at l_c = grid_labels_per_class (the paper, Section 7.3: selected at l_c = 10, kept for every l_c)."""
    input:
        unpack(run_inputs),
    output:
        f"{RES}/{{dataset}}/selected/u{{uc}}/l{{lc}}/seed{{seed}}.json",
    params:
        python=PYTHON,
        inputs=run_args,
        run=lambda w: run_params(w.dataset),
    log:
        f"{RES}/{{dataset}}/logs/select_u{{uc}}_l{{lc}}_seed{{seed}}.log",
    conda:
        "../envs/mvl.yaml"
    shell:
        '"{params.python}" -m mvl.cli select --dataset {wildcards.dataset} {params.inputs} '
        "--lc {wildcards.lc} --uc {wildcards.uc} "
        "--seed {wildcards.seed} --params {params.run:q} --out {output} > {log} 2>&1"


rule run:
    """One method on one draw (split seed, l_c labelled and u_c unlabelled per class)."""
    input:
        unpack(run_inputs),
        selected=selected_input,
    output:
        f"{RES}/{{dataset}}/runs/u{{uc}}/l{{lc}}/{{method}}/seed{{seed}}.csv",
    params:
        python=PYTHON,
        inputs=run_args,
        run=lambda w: run_params(w.dataset),
        selected=lambda w, input: f"--selected {input.selected}" if input.selected else "",
    log:
        f"{RES}/{{dataset}}/logs/runs/u{{uc}}_l{{lc}}_{{method}}_seed{{seed}}.log",
    conda:
        "../envs/mvl.yaml"
    shell:
        '"{params.python}" -m mvl.cli run --dataset {wildcards.dataset} {params.inputs} '
        "--method {wildcards.method} "
        "--lc {wildcards.lc} --uc {wildcards.uc} --seed {wildcards.seed} --params {params.run:q} "
        "{params.selected} --out {output} > {log} 2>&1"


rule collect:
    """Tidy results table: one row per run."""
    input:
        lambda w: run_targets(w.dataset),
    output:
        f"{RES}/{{dataset}}/results.csv",
    params:
        python=PYTHON,
    log:
        f"{RES}/{{dataset}}/logs/collect.log",
    conda:
        "../envs/mvl.yaml"
    shell:
        '"{params.python}" -m mvl.cli collect --out {output} {input} > {log} 2>&1'


rule aggregate:
    """Mean and standard deviation over splits."""
    input:
        f"{RES}/{{dataset}}/results.csv",
    output:
        f"{RES}/{{dataset}}/summary.csv",
    params:
        python=PYTHON,
    log:
        f"{RES}/{{dataset}}/logs/aggregate.log",
    conda:
        "../envs/mvl.yaml"
    shell:
        '"{params.python}" -m mvl.cli aggregate --results {input} --out {output} > {log} 2>&1'
