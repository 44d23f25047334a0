"""Our results beside the published numbers (mvl.workflow.compare)."""

import numpy as np
import pandas as pd
import pytest

from mvl.workflow.compare import published_comparison


def _rows(method, l_c, u_c, accs, n_views=7, **extra):
    return [dict(dataset="flowers17", method=method, n_views=n_views, l_c=l_c, u_c=u_c, split=i, accuracy=a,
                 gamma_B=extra.get("gamma_B", 1e-6), gamma_W=extra.get("gamma_W", 1e-6))
            for i, a in enumerate(accs)]


def test_flowers_rows_matched_by_method_setting_and_label_count():
    res = pd.DataFrame(_rows("mvl_ls", 1, 0, [0.40, 0.42, 0.38]) + _rows("mvl_ls", 1, 5, [0.45, 0.43, 0.44])
                       + _rows("mvl_ls_optc50", 40, 0, [0.88, 0.86, 0.87])
                       + _rows("view_hog", 1, 5, [0.2, 0.3], n_views=1))
    cmp = published_comparison(res, "flowers17")
    assert set(cmp["table"]) == {6, 9, 11}  # every Flowers-17 table of the paper
    row = cmp[(cmp.table == 6) & (cmp.method == "MVL-LS") & (cmp.setting == "supervised") & (cmp.l_c == 1)].iloc[0]
    assert row.published_mean == pytest.approx(39.41)  # Table 6, MVL-LS supervised, l_c = 1
    assert row.ours_mean == pytest.approx(40.0) and row.n_splits == 3
    assert row.ours_std == pytest.approx(2.0) and row.difference == pytest.approx(40.0 - 39.41)
    semi = cmp[(cmp.table == 6) & (cmp.method == "MVL-LS") & (cmp.setting == "semi-supervised") & (cmp.l_c == 1)]
    assert semi.iloc[0].ours_mean == pytest.approx(44.0)
    optc = cmp[(cmp.table == 9) & (cmp.iterations == 50) & (cmp.l_c == 40)].iloc[0]
    assert optc.published_mean == pytest.approx(87.35) and optc.ours_mean == pytest.approx(87.0)
    assert cmp[(cmp.table == 9) & (cmp.iterations == 25)].n_splits.sum() == 0  # no 25-iteration runs given
    mkl = cmp[cmp.method == "MK-FDA"].iloc[0]  # another author's method: published only
    assert mkl.n_splits == 0 and np.isnan(mkl.ours_mean)


def test_caltech_ablation_single_views_and_view_counts():
    rows = []
    for b, w, acc in ((0.0, 0.0, 0.30), (0.0, 1e-6, 0.31), (1e-6, 0.0, 0.32), (1e-6, 1e-6, 0.33)):
        rows += _rows("mvl_ls_ablation", 1, 5, [acc], n_views=4, gamma_B=b, gamma_W=w)
    rows += _rows("view_phow_gray_l2", 1, 5, [0.25], n_views=1) + _rows("mvl_ls", 1, 5, [0.5], n_views=10)
    rows += _rows("mvl_ls", 1, 5, [0.9], n_views=4)  # the 4-view set must not be matched with Table 3's 10 views
    cmp = published_comparison(pd.DataFrame(rows), "caltech101")
    t2 = cmp[(cmp.table == 2) & (cmp.l_c == 1)].set_index("setting")
    assert t2.loc["semi-supervised; gamma_B=0, gamma_W=0", "ours_mean"] == pytest.approx(30.0)
    assert t2.loc["semi-supervised; gamma_B=0, gamma_W>0", "ours_mean"] == pytest.approx(31.0)
    assert t2.loc["semi-supervised; gamma_B>0, gamma_W>0", "ours_mean"] == pytest.approx(33.0)
    t3 = cmp[(cmp.table == 3) & (cmp.l_c == 1)].set_index("views")
    assert t3.loc["PHOW gray L2", "ours_mean"] == pytest.approx(25.0)
    assert cmp[(cmp.table == 3) & (cmp.method == "MVL-LS") & (cmp.l_c == 1)].iloc[0].ours_mean == pytest.approx(50.0)


def test_unknown_source():
    with pytest.raises(ValueError, match="no published numbers"):
        published_comparison(pd.DataFrame(), "mfeat")
