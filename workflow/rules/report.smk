rule report:
    """Execute the report notebook with papermill (parameters cell tagged 'parameters')."""
    input:
        notebook="notebooks/report.ipynb",
        results=f"{RES}/{{dataset}}/results.csv",
        summary=f"{RES}/{{dataset}}/summary.csv",
    output:
        notebook=f"{RES}/{{dataset}}/report.ipynb",
        png=f"{RES}/{{dataset}}/figures/accuracy_vs_labels.png",
        pdf=f"{RES}/{{dataset}}/figures/accuracy_vs_labels.pdf",
        optc_weights=f"{RES}/{{dataset}}/figures/optc_weights.png",
        optc_objective=f"{RES}/{{dataset}}/figures/optc_objective.png",
        comparison=f"{RES}/{{dataset}}/figures/comparison.png",
    params:
        python=PYTHON,
        source=lambda w: dcfg(w.dataset)["source"],
        graph=lambda w: dcfg(w.dataset)["graph"]["laplacian"]
        + (
            ", dense kernel weights (paper)"
            if not dcfg(w.dataset)["graph"].get("n_neighbors")
            else f", symmetrised kNN graph (k = {dcfg(w.dataset)['graph']['n_neighbors']})"
        ),
        kernel=lambda w: json.dumps(dcfg(w.dataset)["kernel"], sort_keys=True),
        gammas=lambda w: json.dumps(dcfg(w.dataset)["gammas"], sort_keys=True),
    log:
        f"{RES}/{{dataset}}/logs/report.log",
    conda:
        "../envs/mvl.yaml"
    shell:
        '"{params.python}" -m papermill {input.notebook} {output.notebook}.tmp.ipynb -k python3 '
        "-p dataset {wildcards.dataset} -p source {params.source} -p results_csv {input.results} -p summary_csv {input.summary} "
        "-p fig_png {output.png} -p fig_pdf {output.pdf} -p fig_optc_weights {output.optc_weights} "
        "-p fig_optc_objective {output.optc_objective} -p fig_comparison {output.comparison} -p graph {params.graph:q} "
        "-p kernel {params.kernel:q} -p gammas {params.gammas:q} > {log} 2>&1 "
        "&& mv {output.notebook}.tmp.ipynb {output.notebook}"
