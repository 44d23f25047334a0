rule report:
    """Execute the report notebook with papermill (parameters cell tagged 'parameters').

    The notebook is kept as a jupytext percent script (notebooks/report.py); it is converted to .ipynb
    beside the output first, then executed, then renamed into place (nothing half-written is left;
    mvl.workflow.jobs.report).
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
        report=lambda w: STUDY[w.dataset].report_settings(),
    log:
        f"{RES}/{{dataset}}/logs/report.log",
    resources:
        mem_mb=per_attempt(2048),
        runtime=per_attempt(20),
    conda:
        "../envs/mvl.yaml"
    script:
        "../scripts/report.py"
