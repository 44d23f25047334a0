"""mvl.workflow.report on small hand-made result tables, against values computed by hand in the test."""

from __future__ import annotations

import json
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
    row = g[(g.scope == R.scopes()["mvl_ls_ablation_cv"]) & (g.cell == "W")].iloc[0]
    assert row["u_c"] == "all" and row["supervised"] == "71.00 (1.00)"
    assert row["difference (points)"] == pytest.approx(11.33, abs=0.01)
    assert row["better / worse (splits)"] == "3 / 0 of 3"
    b = g[(g.scope == R.scopes()["mvl_ls_ablation_cv"]) & (g.cell == "B")].iloc[0]
    assert b["difference (points)"] == 0.0
    lines = R.unlabelled_verdicts(R.report_verdicts(_results()))
    assert len(lines) == 2  # one per scope, the "any" cell against "none"
    assert lines[0].startswith("l_c = 1, u_c = all, paper graph, gammas selected on validation: semi-supervised")
    assert "82.33 against supervised 71.00, +11.33 points over 3 splits" in lines[0]
    assert lines[0].endswith("too few splits to tell (the rule needs at least 6).")  # 3 splits, whatever the gain


def test_ablation_table_layout():
    t = R.ablation_table(_results())
    assert list(t.columns) == ["l_c = 1, u_c = all"]
    cells = list(t.loc[R.scopes()["mvl_ls_ablation_cvgraph"]].index)
    assert cells == [R.CELL_LABELS[c] for c in ("none", "B", "W", "BW", "any")]
    assert t.loc[(R.scopes()["mvl_ls_ablation_cvgraph"], R.CELL_LABELS["W"]), "l_c = 1, u_c = all"] == "87.33 (2.52)"


def test_selected_graphs_and_grid_cost():
    res = _results()
    res = pd.concat([res, pd.DataFrame([dict(method="mvl_ls_cvgraph", l_c=1, u_c=5, split=s, accuracy=0.9,
                                             graph_used=gu, grid_seconds=1.0 + s, grid_size=540)
                                        for s, gu in enumerate(["a", "b", "a"])])], ignore_index=True)
    t = R.selected_graphs(res)
    assert t.loc["a", "u_c = 5"] == 2 and t.loc["b", "u_c = 5"] == 1
    c = R.grid_cost(res)
    assert c.loc["5", "selections"] == 3 and c.loc["5", "seconds per selection (mean)"] == 2.0
    assert c.loc["all", "grid points"] == 540


# ------------------------------------------------------------------ tables and figures of the report notebook


def _row(method, l_c, u_c, split, accuracy, **kw):
    return dict(dataset="toy", method=method, views="a+b+c", l_c=l_c, u_c=u_c, split=split, accuracy=accuracy,
                fit_seconds=kw.pop("fit_seconds", 0.01), **kw)


def _sweep(lcs=(1, 5, 10, 20, 40), ucs=(5, 50), splits=(0, 1, 2)):
    """A results table shaped like the default profile's (every family of method), with made-up numbers."""
    rows = []
    views = ("a", "b", "c")
    for s in splits:
        for k, lc in enumerate(lcs):
            base = 0.5 + 0.08 * k + 0.01 * s
            for m in ("mvl_ls", "mvl_svm", "mvl_binsvm", "svc_sum"):
                rows.append(_row(m, lc, 0, s, base))
            for j, v in enumerate(views):
                rows.append(_row(f"view_{v}", lc, 0, s, base - 0.1 * (j + 1)))
            for uc in ucs:
                for m in ("mvl_ls", "mvl_ls_cv", "mvl_ls_cvgraph", "mvl_svm", "mvl_binsvm"):
                    rows.append(_row(m, lc, uc, s, base + 0.01, gamma_A=1e-5, gamma_B=1e-6, gamma_W=0.0,
                                     val_accuracy=0.9, selected_at_l_c=10, graph_used="knn10-p1"))
                for v in views:
                    rows.append(_row(f"view_{v}", lc, uc, s, base - 0.2))
            for it in (25, 50):
                obj = [[1.0 - 0.01 * t + r for t in range(it)] for r in range(4)]
                rows.append(_row(f"mvl_ls_optc{it}", lc, 0, s, base + 0.02, optc_c="[0.6, 0.8, 0.0]",
                                 optc_best_restart=2, optc_objective=json.dumps(obj)))
        for lc in lcs[1:]:
            for m in ("mvml_full_n100", "mvml_full_n24", "mvml_full_n12", "mvml_full_n6", "mvml_sparse_n24",
                      "mvml_sparse_n12", "mvml_sparse_n6", "mvml_identity_n100", "mvml_identity_n24",
                      "mvml_identity_n12", "mvml_identity_n6", "perceptron_matrix", "perceptron_orth"):
                rows.append(_row(m, lc, 0, s, 0.7, fit_seconds=0.5,
                                 mvml_block_norms=json.dumps([[1.0, 0.2, 0.1], [0.2, 2.0, 0.3], [0.1, 0.3, 3.0]])))
    return pd.DataFrame(rows)


def _series(ax):
    """Series drawn on an axes: error-bar containers plus plain lines that belong to none."""
    in_containers = set()
    for c in ax.containers:
        for part in c:
            for artist in (part if isinstance(part, tuple) else (part,)):
                in_containers.add(id(artist))
    return len(ax.containers) + sum(id(line) not in in_containers for line in ax.lines)


def test_method_labels_in_full():
    assert R.method_label("mvl_ls_cvgraph") == "MVL-LS, selected graph and gammas"
    assert R.method_label("mvml_sparse_n24") == "MVML sparse, Nystrom 24 %"
    assert R.method_label("view_fou") == "single view fou"
    assert R.method_label("something_new") == "something_new"


def test_accuracy_table_two_decimals_and_order():
    rows = [_row("view_b", 1, 0, 0, 0.40), _row("view_b", 1, 0, 1, 0.50),
            _row("mvl_ls", 1, 0, 0, 0.80), _row("mvl_ls", 1, 0, 1, 0.81),
            _row("mvl_ls", 5, 0, 0, 0.90), _row("mvl_ls", 5, 0, 1, 0.90),
            _row("mvl_ls_cvgraph", 1, -1, 0, 0.805), _row("mvl_ls_cvgraph", 1, -1, 1, 0.805),
            _row("mvl_ls", 1, 5, 0, 0.70), _row("mvl_ls", 1, 5, 1, 0.72),
            _row("mvl_ls_optc25", 1, 0, 0, 0.1), _row("mvml_full_n6", 1, 0, 0, 0.1),
            _row("mvl_ls_ablation", 1, 5, 0, 0.1)]
    t = R.accuracy_table(pd.DataFrame(rows))
    assert list(t.columns) == ["l_c = 1", "l_c = 5"]
    assert t.index.names == ["method", "u_c"]
    assert list(t.index) == [("MVL-LS", "0"), ("MVL-LS", "5"), ("MVL-LS, selected graph and gammas", "all"),
                             ("single view b", "0")]
    # mean 80.5, sample std sqrt(0.5^2 * 2) = 0.7071: the trailing zero stays
    assert t.loc[("MVL-LS", "0"), "l_c = 1"] == "80.50 (0.71)"
    assert t.loc[("MVL-LS", "0"), "l_c = 5"] == "90.00 (0.00)"
    assert t.loc[("MVL-LS, selected graph and gammas", "all"), "l_c = 5"] == ""
    assert t.loc[("single view b", "0"), "l_c = 1"] == "45.00 (7.07)"


def test_multiview_vs_best_view_and_verdict():
    rows = [_row("mvl_ls", 1, 0, s, a) for s, a in enumerate([0.80, 0.70, 0.75])]
    rows += [_row("view_a", 1, 0, s, a) for s, a in enumerate([0.60, 0.65, 0.70])]
    rows += [_row("view_b", 1, 0, s, a) for s, a in enumerate([0.50, 0.50, 0.50])]
    rows += [_row("mvl_ls", 5, 0, s, 0.9) for s in range(3)] + [_row("view_b", 5, 0, s, 0.95) for s in range(3)]
    t = R.multiview_vs_best_view(pd.DataFrame(rows))
    assert list(t["l_c"]) == [1, 5] and list(t["best single view"]) == ["a", "b"]
    first = t.iloc[0]
    assert first["MVL-LS (all views)"] == "75.00 (5.00)" and first["best single view accuracy"] == "65.00 (5.00)"
    assert first["difference (points)"] == pytest.approx(10.0)  # (20 + 5 + 5) / 3
    assert first["better / worse (splits)"] == "3 / 0 of 3"
    assert t.iloc[1]["difference (points)"] == pytest.approx(-5.0)
    lines = R.multiview_verdict(R.report_verdicts(pd.DataFrame(rows)))
    assert [line.split(":")[0] for line in lines] == ["l_c = 1", "l_c = 5"]
    assert "+10.00 points over 3 splits" in lines[0] and "-5.00 points over 3 splits" in lines[1]
    assert all(line.endswith("too few splits to tell (the rule needs at least 6).") for line in lines)
    # 8 splits: +10 points on average is a win, -5 points on every split a loss; two comparisons in the family
    many = [_row("mvl_ls", 1, 0, s, 0.75 + 0.01 * (s % 3)) for s in range(8)]
    many += [_row("view_a", 1, 0, s, 0.65 + 0.005 * (s % 2)) for s in range(8)]
    many += [_row("mvl_ls", 5, 0, s, 0.9) for s in range(8)] + [_row("view_b", 5, 0, s, 0.95) for s in range(8)]
    v = R.report_verdicts(pd.DataFrame(many))["multiview"]
    assert [x.outcome for x in v] == ["better", "worse"] and v[0].family == 2
    assert R.multiview_verdict(v and {"multiview": v})[0].endswith(
        "MVL-LS (all views) is better than the best single view (a) (adjusted p < 0.05).")
    assert R.multiview_verdict({}) == ["No supervised MVL-LS and single-view runs to compare."]


def test_selected_gammas_counts_one_selection_per_split():
    rows = [_row("mvl_ls_cv", lc, 5, s, 0.8, gamma_A=a, gamma_B=b, gamma_W=0.0, val_accuracy=v, selected_at_l_c=10)
            for lc in (1, 5) for s, a, b, v in [(0, 1e-5, 1e-6, 0.9), (1, 1e-5, 1e-6, 0.8), (2, 1e-6, 0.0, 1.0)]]
    t = R.selected_gammas(pd.DataFrame(rows))
    assert list(t.columns) == ["u_c", "selected at l_c", "gamma_A", "gamma_B", "gamma_W", "splits",
                               "validation accuracy"]
    assert t.values.tolist() == [["5", 10, "1e-06", "0", "0", 1, "100.00"],
                                 ["5", 10, "1e-05", "1e-06", "0", 2, "85.00 (7.07)"]]


def test_configured_ablation_table_rows_in_table2_order():
    rows = []
    for method in ("mvl_svm_ablation", "mvl_ls_ablation"):
        for b, w, acc in [(1e-6, 1e-6, 0.74), (0.0, 0.0, 0.70), (0.0, 1e-6, 0.73), (1e-6, 0.0, 0.71)]:
            rows += [_row(method, 1, -1, s, acc + 0.01 * s, gamma_B=b, gamma_W=w) for s in range(2)]
    t = R.configured_ablation_table(pd.DataFrame(rows))
    assert t.index.names == ["solver", "gamma_B", "gamma_W"]
    assert list(t.index) == [(s, b, w) for s in ("MVL-LS", "MVL-SVM")
                             for b, w in [("0", "0"), ("1e-06", "0"), ("0", "1e-06"), ("1e-06", "1e-06")]]
    assert list(t.columns) == ["l_c = 1, u_c = all"]
    assert t.loc[("MVL-LS", "0", "1e-06"), "l_c = 1, u_c = all"] == "73.50 (0.71)"


def test_optc_table_and_gain():
    rows = [_row("mvl_ls", 1, 0, s, a) for s, a in enumerate([0.70, 0.80])]
    rows += [_row("mvl_ls_optc5", 1, 0, s, a) for s, a in enumerate([0.72, 0.80])]
    rows += [_row("mvl_ls_optc25", 1, 0, s, a) for s, a in enumerate([0.75, 0.85])]
    res = pd.DataFrame(rows)
    t = R.optc_table(res)
    assert list(t.index) == ["MVL-LS (uniform c = 1/m)", "MVL-LS-optC (5 iterations)",
                             "MVL-LS-optC (25 iterations)"]
    assert t["l_c = 1"].tolist() == ["75.00 (7.07)", "76.00 (5.66)", "80.00 (7.07)"]
    g = R.optc_gain(res)
    assert g.iloc[0]["iterations"] == 25 and g.iloc[0]["difference (points)"] == pytest.approx(5.0)
    assert g.iloc[0]["better / worse (splits)"] == "2 / 0 of 2" and g.iloc[0]["p (paired t)"] == 0.0


def test_comparison_table_families_and_columns():
    t = R.comparison_table(_sweep(lcs=(1, 5, 10), splits=(0, 1)))
    assert list(t.columns) == [("test accuracy (%)", "l_c = 5"), ("test accuracy (%)", "l_c = 10"),
                               ("fit time (s)", "l_c = 5"), ("fit time (s)", "l_c = 10")]
    families = list(dict.fromkeys(t.index.get_level_values("family")))
    assert families == ["MVL (this paper) and SVC", "MVML, full metric", "MVML, sparse metric",
                        "MVML, identity metric", "multi-view perceptrons"]
    full = [m for f, m in t.index if f == "MVML, full metric"]
    assert full == ["MVML full, Nystrom 100 %", "MVML full, Nystrom 24 %", "MVML full, Nystrom 12 %",
                    "MVML full, Nystrom 6 %"]
    assert t.loc[("multi-view perceptrons", "orthogonal multi-view perceptron")].tolist() == [
        "70.00 (0.00)", "70.00 (0.00)", "0.500", "0.500"]


def test_published_table_formats_by_hand():
    cmp = pd.DataFrame([
        dict(table=6, method="MVL-LS", setting="supervised", views=7, l_c=1, u_c=np.nan, iterations=np.nan,
             published_mean=39.41, published_std=1.5, ours_mean=40.0, ours_std=1.2, n_splits=3, difference=0.59,
             note=""),
        dict(table=7, method="other", setting="x", views=np.nan, l_c=5, u_c=5.0, iterations=25.0,
             published_mean=50.1, published_std=np.nan, ours_mean=np.nan, ours_std=np.nan, n_splits=0,
             difference=np.nan, note="")])
    t = R.published_table(cmp)
    assert t.iloc[0][["published", "ours", "difference (points)", "u_c"]].tolist() == [
        "39.41 (1.50)", "40.00 (1.20)", "+0.59", ""]
    assert t.iloc[1][["published", "ours", "difference (points)", "u_c", "iterations", "views"]].tolist() == [
        "50.10", "", "", "5", "25", ""]
    assert R.published_summary(cmp) == ("1 published numbers have a counterpart in this run; "
                                        "mean |difference| 0.59 points.")


def test_styled_keeps_labels_whole_and_formats_numbers():
    long = "MVL-LS (all views), semi-supervised u_c = 50, selected graph and gammas"
    t = pd.DataFrame({"method": [long], "difference (points)": [1.5], "p (paired t)": [0.012345],
                      "seconds": [2.0]})
    html = R.styled(t, "caption").to_html()
    assert long in html and "..." not in html
    assert ">+1.50<" in html and ">0.012<" in html and ">2.00<" in html and "caption" in html


def test_settings_table():
    t = R.settings_table("toy", "mfeat", _sweep(splits=(0, 3)), rows=[("kernel", "rbf")])
    assert t.loc["splits", "value"] == "2" and t.loc["data set", "value"] == "toy" and t.loc["kernel", "value"] == "rbf"
    sel = pd.DataFrame([dict(method="mvl_ls_cvgraph", split=s, u_c=5, l_c=lc, graph_used=g)
                        for s, g in enumerate(["normalized-knn10-p2", "normalized-knn10-p2", "normalized-dense"])
                        for lc in (1, 5)])
    t = R.settings_table("toy", "mfeat", sel)
    assert (t.loc["graphs selected on validation (selected-graph scope)", "value"]
            == "normalized-knn10-p2 (2 of 3 selections), normalized-dense (1 of 3 selections)")


def test_lc_axis_ticks_are_the_label_counts():
    from matplotlib.figure import Figure

    ax = Figure().subplots()
    R.lc_axis(ax, [40, 1, 5, 10, 20, 5])
    assert list(ax.get_xticks()) == [1, 5, 10, 20, 40]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "5", "10", "20", "40"]
    assert len(ax.xaxis.get_minor_locator()()) == 0  # no minor ticks, hence no overlapping minor labels


def test_accuracy_figure_panels_and_series():
    fig = R.accuracy_figure(_sweep(), "toy")
    axes = fig.axes
    assert len(axes) == 3  # supervised, u_c = 5, u_c = 50
    assert [ax.get_title() for ax in axes] == ["supervised (labelled data only)",
                                               "semi-supervised, $u_c$ = 5 unlabelled per class",
                                               "semi-supervised, $u_c$ = 50 unlabelled per class"]
    assert _series(axes[0]) == 5 and _series(axes[1]) == 6 and _series(axes[2]) == 6
    for ax in axes:
        assert _series(ax) <= R.MAX_SERIES
        fig.canvas.draw()
        assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "5", "10", "20", "40"]
    assert "best single view (chosen on test per $l_c$; its name beside each point)" in \
        axes[0].get_legend_handles_labels()[1]
    assert [t.get_text() for t in axes[0].texts] == ["a"] * 5  # the best view named at every l_c


def test_comparison_figure_one_row_per_family():
    fig = R.comparison_figure(_sweep(), "toy")
    assert len(fig.axes) == 2 * 5
    for ax in fig.axes:
        assert 1 <= _series(ax) <= R.MAX_SERIES
    acc = fig.axes[2]  # row 2 = MVML, full metric: MVL-LS reference and four Nystrom sizes
    assert acc.get_title(loc="left") == "MVML, full metric"
    assert acc.get_legend_handles_labels()[1] == ["MVL-LS (reference)", "MVML full, Nystrom 100 %",
                                                  "MVML full, Nystrom 24 %", "MVML full, Nystrom 12 %",
                                                  "MVML full, Nystrom 6 %"]
    assert fig.axes[3].get_yscale() == "log"


def test_optc_and_metric_figures():
    res = _sweep(lcs=(1, 5), ucs=())
    w = R.optc_weights_figure(res, "toy").axes[0]
    assert len(w.containers) == 2 * 2  # bars and their error bars, one pair per l_c
    from matplotlib.container import BarContainer

    bars = [c for c in w.containers if isinstance(c, BarContainer)]
    heights = [p.get_height() for p in bars[0].patches]
    assert heights == pytest.approx([0.36, 0.64, 0.0])  # c = (0.6, 0.8, 0) squared
    obj = R.optc_objective_figure(res, "toy").axes[0]
    assert _series(obj) == 2 and len(obj.collections) == 1  # kept restart, median of the others, their range
    kept = [line for line in obj.lines if line.get_label().startswith("restart 2")][0]
    assert kept.get_ydata()[:2] == pytest.approx([3.0, 2.99])
    m = R.mvml_metric_figure(res.assign(l_c=5), "toy").axes[0]
    assert [t.get_text() for t in m.get_xticklabels()] == ["a", "b", "c"]
    assert m.images[0].get_array()[2, 2] == 3.0


def test_figures_without_runs_say_so():
    res = pd.DataFrame([_row("mvl_ls", 1, 0, 0, 0.5)])
    for f in (R.comparison_figure, R.mvml_metric_figure, R.optc_weights_figure, R.optc_objective_figure):
        texts = [t.get_text() for ax in f(res, "toy").axes for t in ax.texts]
        assert any("no " in t for t in texts), f.__name__


def test_tables_of_a_run_without_ablation_or_selection():
    """A profile without ablation and validation grid (e.g. Caltech-101): every table is empty, none fails."""
    res = pd.DataFrame([dict(method="mvl_ls", l_c=1, u_c=0, split=0, accuracy=0.5)])
    assert R.unlabelled_gain(res).empty and R.ablation_table(res).empty
    assert R.selected_graphs(res).empty and R.grid_cost(res).empty
    assert R.unlabelled_verdicts(R.report_verdicts(res)) == []


def test_every_table_and_figure_of_a_minimal_run():
    """Only the columns every run has (e.g. mvmnist: supervised, no optC, no related systems): the notebook's
    tables are empty or built from what is there, the figures say what is missing, nothing fails."""
    res = pd.DataFrame([dict(method=m, l_c=lc, u_c=0, split=s, accuracy=0.5 + 0.1 * s)
                        for m in ("mvl_ls", "view_x") for lc in (5, 10) for s in (0, 1)])
    assert R.accuracy_table(res).shape == (2, 2)
    assert R.multiview_vs_best_view(res)["best single view"].tolist() == ["x", "x"]
    for table in (R.selected_gammas, R.configured_ablation_table, R.optc_table, R.optc_gain, R.comparison_table):
        assert table(res).empty, table.__name__
    assert R.settings_table("d", "s", res).loc["splits", "value"] == "2"
    assert len(R.accuracy_figure(res, "d").axes) == 1
    for figure in (R.comparison_figure, R.mvml_metric_figure, R.optc_weights_figure, R.optc_objective_figure):
        assert any("no " in t.get_text() for ax in figure(res, "d").axes for t in ax.texts), figure.__name__


def test_supervised_vs_none_says_why_they_differ():
    rows = []
    for s, (sup, none) in enumerate([(0.80, 0.805), (0.81, 0.81)]):
        rows.append(_row("mvl_ls", 1, 0, s, sup, gamma_A=1e-5, gamma_B=1e-6, gamma_W=1e-6))
        for uc in (5, 50):
            rows.append(_row("mvl_ls_ablation", 1, uc, s, none, gamma_A=1e-5, gamma_B=0.0, gamma_W=0.0,
                             ablation_cell="none"))
    lines = R.supervised_vs_none(pd.DataFrame(rows))
    assert "configured γ_B = 1e-06 and γ_W = 1e-06" in lines[0] and "Corollary 19" in lines[0]
    assert "the same at every u_c on every split" in lines[0]
    assert lines[1] == 'At l_c = 1: main table 80.50, cell "none" 80.75 (-0.25 points over 2 splits).'
    # a "none" that moved with u_c is reported, not hidden
    rows.append(_row("mvl_ls_ablation", 1, 100, 0, 0.815, gamma_A=1e-5, gamma_B=0.0, gamma_W=0.0,
                     ablation_cell="none"))
    assert "differs across u_c by up to 1.00 points" in R.supervised_vs_none(pd.DataFrame(rows))[0]
    # configured gammas 0: the same model
    same = pd.DataFrame([_row("mvl_ls", 1, 0, 0, 0.8, gamma_B=0.0, gamma_W=0.0),
                         _row("mvl_ls_ablation", 1, 5, 0, 0.8, gamma_B=0.0, gamma_W=0.0, ablation_cell="none")])
    assert "are the same model" in R.supervised_vs_none(same)[0]
    assert R.supervised_vs_none(_sweep()) == []  # no ablation rows


def test_validation_ties_count_the_selections_at_100_percent():
    rows = [_row("mvl_ls_cv", lc, 5, s, 0.8, gamma_A=1e-5, gamma_B=0.0, gamma_W=0.0, val_accuracy=v,
                 selected_at_l_c=10) for lc in (1, 5) for s, v in [(0, 1.0), (1, 0.9), (2, 1.0)]]
    lines = R.validation_ties(pd.DataFrame(rows))
    assert len(lines) == 1 and lines[0].startswith("MVL-LS, selected gammas: 2 of 3 selections")
    below = pd.DataFrame([{**r, "val_accuracy": 0.9} for r in rows])
    assert R.validation_ties(below) == []


def test_identical_methods_are_named_with_the_reason():
    res = _sweep(lcs=(1, 5, 10), splits=(0, 1))  # every related system at 0.70 on every split
    lines = R.identical_methods(res)
    perceptrons = [t for t in lines if "perceptron" in t and "MVML" not in t]
    assert len(perceptrons) == 1 and "eq 4.1.7" in perceptrons[0] and "(5, 10; 4 fits each)" in perceptrons[0]
    assert any("MVML" in t and "cannot tell the two apart" in t for t in lines)
    differ = res.copy()
    orth = differ["method"] == "perceptron_orth"
    differ.loc[orth & (differ["split"] == 1), "accuracy"] = 0.71
    assert not any("orthogonal" in t and "kernel matrix" in t for t in R.identical_methods(differ))
