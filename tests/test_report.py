"""mvl.workflow.report on small hand-made result tables, against values computed by hand in the test."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mvl.workflow import report as R


def test_mean_std_format():
    assert R.mean_std([0.9, 0.8, 0.7]) == "80.00 (10.00)"
    assert R.mean_std([0.5]) == "50.00"
    assert R.u_label(-1) == "all" and R.u_label(50) == "50"


def test_paired_comparison_by_hand():
    a = pd.Series([0.80, 0.90, 0.85, 0.70], index=[0, 1, 2, 3])
    b = pd.Series([0.75, 0.80, 0.85, 0.72, 0.99], index=[0, 1, 2, 3, 4])  # split 4 has no partner
    c = R.paired_comparison(a, b)
    d = np.array([5.0, 10.0, 0.0, -2.0])
    t = d.mean() / (d.std(ddof=1) / math.sqrt(4))  # the paired t statistic by its formula
    assert c["n"] == 4 and c["wins"] == 2 and c["losses"] == 1
    assert c["difference"] == pytest.approx(3.25)
    assert c["p_ttest"] == pytest.approx(2 * stats.t.sf(abs(t), df=3))
    # Wilcoxon on the 3 non-zero differences: ranks of |2|, |5|, |10| are 1, 2, 3; W- = 1 -> exact p = 2 * 2/8
    assert c["p_wilcoxon"] == pytest.approx(0.5)


def test_paired_comparison_degenerate():
    same = pd.Series([0.5, 0.6])
    c = R.paired_comparison(same, same)
    assert c["difference"] == 0 and np.isnan(c["p_ttest"]) and np.isnan(c["p_wilcoxon"])
    shifted = R.paired_comparison(same + 0.1, same)
    assert shifted["p_ttest"] == 0.0 and shifted["wins"] == 2


def _results():
    rows = []
    acc = {"none": [0.70, 0.72, 0.71], "B": [0.71, 0.72, 0.70], "W": [0.80, 0.85, 0.82], "BW": [0.81, 0.84, 0.83]}
    for method in ("mvl_ls_ablation_cv", "mvl_ls_ablation_cvgraph"):
        for cell, values in acc.items():
            for split, a in enumerate(values):
                bonus = 0.05 if method.endswith("graph") and cell in ("W", "BW") else 0.0
                rows.append(dict(method=method, l_c=1, u_c=-1, split=split, ablation_cell=cell, accuracy=a + bonus,
                                 grid_seconds=2.0, grid_size=540, graph_used="normalized-knn10-p2"))
        for split, a in enumerate(acc["W"]):  # "any" = the selected cell (here W)
            rows.append(dict(method=method, l_c=1, u_c=-1, split=split, ablation_cell="any",
                             accuracy=a + (0.05 if method.endswith("graph") else 0.0)))
    return pd.DataFrame(rows)


def test_unlabelled_gain_and_verdicts():
    g = R.unlabelled_gain(_results())
    assert len(g) == 2 * 4
    row = g[(g.scope == R.SCOPES["mvl_ls_ablation_cv"]) & (g.cell == "W")].iloc[0]
    assert row["u_c"] == "all" and row["supervised"] == "71.00 (1.00)"
    assert row["difference (points)"] == pytest.approx(11.33, abs=0.01)
    assert row["better / worse (splits)"] == "3 / 0 of 3"
    b = g[(g.scope == R.SCOPES["mvl_ls_ablation_cv"]) & (g.cell == "B")].iloc[0]
    assert b["difference (points)"] == 0.0
    lines = R.unlabelled_verdicts(g)
    assert len(lines) == 2
    assert lines[0].startswith("l_c = 1, u_c = all, paper graph, gammas selected on validation: 82.33 (2.52)")
    assert lines[0].endswith("unlabelled data help.")


def test_ablation_table_layout():
    t = R.ablation_table(_results())
    assert list(t.columns) == ["l_c=1, u_c=all"]
    cells = list(t.loc[R.SCOPES["mvl_ls_ablation_cvgraph"]].index)
    assert cells == [R.CELL_LABELS[c] for c in ("none", "B", "W", "BW", "any")]
    assert t.loc[(R.SCOPES["mvl_ls_ablation_cvgraph"], R.CELL_LABELS["W"]), "l_c=1, u_c=all"] == "87.33 (2.52)"


def test_selected_graphs_and_grid_cost():
    res = _results()
    res = pd.concat([res, pd.DataFrame([dict(method="mvl_ls_cvgraph", l_c=1, u_c=5, split=s, accuracy=0.9,
                                             graph_used=gu, grid_seconds=1.0 + s, grid_size=540)
                                        for s, gu in enumerate(["a", "b", "a"])])], ignore_index=True)
    t = R.selected_graphs(res)
    assert t.loc["a", "u_c=5"] == 2 and t.loc["b", "u_c=5"] == 1
    c = R.grid_cost(res)
    assert c.loc["5", "selections"] == 3 and c.loc["5", "mean_seconds"] == 2.0 and c.loc["all", "grid_points"] == 540


def test_tables_of_a_run_without_ablation_or_selection():
    """A profile without ablation and validation grid (e.g. Caltech-101): every table is empty, none fails."""
    res = pd.DataFrame([dict(method="mvl_ls", l_c=1, u_c=0, split=0, accuracy=0.5)])
    assert R.unlabelled_gain(res).empty and R.ablation_table(res).empty
    assert R.selected_graphs(res).empty and R.grid_cost(res).empty
    assert R.unlabelled_verdicts(R.unlabelled_gain(res)) == []
