"""Generates notebooks/coreg_report.ipynb (run by the workflow rule coreg_report; edit this script and rerun
it to change the report): python notebooks/tools/make_coreg_notebook.py"""
import pathlib

import nbformat as nbf

nb = nbf.v4.new_notebook()
cells = []
md = lambda s: cells.append(nbf.v4.new_markdown_cell(s))  # noqa: E731
code = lambda s, **kw: cells.append(nbf.v4.new_code_cell(s, **kw))  # noqa: E731
md("""# Co-regularization: MR vs CoMR (Sindhwani & Rosenberg 2008, Tables 2-3)

Laplacian RLS (MR, their eq 13) and manifold co-regularization (CoMR: ambient Gaussian kernel k1 and the
intrinsic graph kernel K2 = (M^p + 1e-6 I)^-1, mu = 1) on seeded splits with their sizes (l, u, t, v of their
Table 1) and parameters (their Table 4); (gamma_1, gamma_2) chosen on the validation points from
{1e-6, 1e-4, 1e-2, 1, 10, 100}. Test error (out-of-sample) and unlabelled error (transductive), in %, mean (std)
over splits, beside the published numbers, and a paired t-test at 5% between MR and CoMR. The same problems
solved as two-view MVL instances agree with these formulations to 1e-8 (tests/test_coreg.py).""")
code("""# Parameters (overwritten by papermill -p ...)
results_csv = "results/coreg/results.csv"
summary_csv = "results/coreg/summary.csv"
""", metadata={"tags": ["parameters"]})
code("""import numpy as np
import pandas as pd

from mvl import io
from mvl.published import load_published
from mvl.ssl_data import paired_ttest, summarize

pd.set_option("display.width", 160)
rows = pd.read_csv(results_csv)
summ = summarize(rows)
io.save_csv(summary_csv, summ)
print(f"{rows['seed'].nunique()} splits per dataset; datasets: {sorted(rows['dataset'].unique())}")""")
md("## Ours beside the published numbers")
code("""pub = load_published("sindhwani2008_results")
pub["dataset"] = pub["dataset"].str.lower()
table = []
for (ds, method), g in summ.groupby(["dataset", "method"]):
    for err, tab in (("test", 2), ("unlabelled", 3)):
        p = pub[(pub.dataset == ds) & (pub.method == method) & (pub.error_type == err)]
        pm, ps = (float(p["mean"].iloc[0]), float(p["std"].iloc[0])) if len(p) else (np.nan, np.nan)
        om, osd = float(g[f"{err}_error_mean"].iloc[0]), float(g[f"{err}_error_std"].iloc[0])
        table.append(dict(table=tab, dataset=ds, method=method, error=err, published_mean=pm, published_std=ps,
                          ours_mean=om, ours_std=osd, n_splits=int(g[f"{err}_error_count"].iloc[0]),
                          difference=om - pm, within_one_published_std=bool(abs(om - pm) <= ps)))
cmp = pd.DataFrame(table).sort_values(["table", "dataset", "method"])
display(cmp.round(2))
agree = cmp.dropna(subset=["published_mean"])
print(f"{int(agree.within_one_published_std.sum())} of {len(agree)} numbers within one published std")""")
md("## Paired t-test MR vs CoMR (5%)")
code("""for metric in ("test_error", "unlabelled_error"):
    display(paired_ttest(rows, metric=metric).round(4))""")
nb["cells"] = cells
nb["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
nb["metadata"]["language_info"] = {"name": "python"}
nbf.write(nb, str(pathlib.Path(__file__).resolve().parents[1] / "coreg_report.ipynb"))
