# What a reader opens: every executed notebook exported to HTML beside it, and results/index.html linking
# every report (HTML and notebook) and every figure of the run (mvl.workflow.index).
# every executed notebook the run produces: the report targets ending in .ipynb (common.smk: all_report_targets)
REPORT_NOTEBOOKS = sorted({t for t in all_report_targets() if t.endswith(".ipynb")})
# their HTML exports, beside them
REPORT_HTML = [nb[: -len(".ipynb")] + ".html" for nb in REPORT_NOTEBOOKS]
# The config hash shown on the page is computed by the job from the config its script receives
# (mvl.workflow.jobs.index), not passed as a param: a param would rerun the job whenever any key changes, also
# those that change no result (data.mirror, data.base_url); the page shows the hash of the config of the run
# that last wrote it.


rule notebook_html:
    """An executed notebook as an HTML page beside it (nbconvert; titled, code left out, figures with alt text)."""
    input:
        f"{RES}/{{nbdir}}/{{nbname}}.ipynb",
    output:
        f"{RES}/{{nbdir}}/{{nbname}}.html",
    wildcard_constraints:
        nbdir="[A-Za-z0-9_]+(/[A-Za-z0-9_]+)*",
        nbname="[A-Za-z0-9_]+",
    log:
        f"{RES}/{{nbdir}}/logs/{{nbname}}_html.log",
    conda:
        "../envs/mvl.yaml"
    script:
        "../scripts/notebook_html.py"


rule index:
    """results/index.html: profile, config hash, version, date, datasets; links to every report and figure."""
    input:
        notebooks=REPORT_NOTEBOOKS,
        html=REPORT_HTML,
    output:
        f"{RES}/index.html",
    params:
        profile=STUDY.profile,
        datasets=list(STUDY.datasets),
    log:
        f"{RES}/logs/index.log",
    conda:
        "../envs/mvl.yaml"
    script:
        "../scripts/index.py"
