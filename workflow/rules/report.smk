rule report:
    """Execute the report notebook with papermill (parameters cell tagged 'parameters').

    The notebook is kept as a jupytext percent script (notebooks/report.py); it is converted to .ipynb
    beside the output first, then executed, then renamed into place (nothing half-written is left).
    """
    input:
        notebook="notebooks/report.py",
        results=f"{RES}/{{dataset}}/results.csv",
        summary=f"{RES}/{{dataset}}/summary.csv",
    output:
        notebook=f"{RES}/{{dataset}}/report.ipynb",
        png=f"{RES}/{{dataset}}/figures/accuracy_vs_labels.png",
        pdf=f"{RES}/{{dataset}}/figures/accuracy_vs_labels.pdf",
        optc_weights=f"{RES}/{{dataset}}/figures/optc_weights.png",
        optc_weights_pdf=f"{RES}/{{dataset}}/figures/optc_weights.pdf",
        optc_objective=f"{RES}/{{dataset}}/figures/optc_objective.png",
        optc_objective_pdf=f"{RES}/{{dataset}}/figures/optc_objective.pdf",
        comparison=f"{RES}/{{dataset}}/figures/comparison.png",
        comparison_pdf=f"{RES}/{{dataset}}/figures/comparison.pdf",
        comparison_metric=f"{RES}/{{dataset}}/figures/comparison_metric.png",
        comparison_metric_pdf=f"{RES}/{{dataset}}/figures/comparison_metric.pdf",
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
        '"{params.python}" -m jupytext --to ipynb --output {output.notebook}.src.ipynb {input.notebook} > {log} 2>&1 '
        '&& "{params.python}" -m papermill {output.notebook}.src.ipynb {output.notebook}.tmp.ipynb -k python3 '
        "-p dataset {wildcards.dataset} -p source {params.source} -p results_csv {input.results} -p summary_csv {input.summary} "
        "-p fig_png {output.png} -p fig_pdf {output.pdf} -p fig_optc_weights {output.optc_weights} "
        "-p fig_optc_objective {output.optc_objective} -p fig_comparison {output.comparison} "
        "-p fig_comparison_metric {output.comparison_metric} -p graph {params.graph:q} "
        "-p kernel {params.kernel:q} -p gammas {params.gammas:q} >> {log} 2>&1 "
        "&& rm {output.notebook}.src.ipynb && mv {output.notebook}.tmp.ipynb {output.notebook}"
