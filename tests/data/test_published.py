"""Transcribed published numbers (mvl.data.published): structure, ranges and spot checks against the paper texts.

Line numbers refer to /work/shared/papers/minh-bazzani-murino-2016-jmlr-unifying-vv-rkhs.txt (1-based, as
``sed -n Np``); the Sindhwani & Rosenberg text is a single line, so positions there are character offsets
(Python ``str.find``) into sindhwani-rosenberg-2008-rkhs-coregularization.txt.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mvl.data.published import PUBLISHED, REFERENCES, load_published, load_reference

COLUMNS = {
    "jmlr2016_results": ["table", "dataset", "method", "setting", "views", "labels_per_class",
                         "unlabelled_per_class", "iterations", "metric", "mean", "std", "note"],
    "jmlr2016_parameters": ["dataset", "parameter", "value", "note"],
    "sindhwani2008_results": ["table", "dataset", "method", "error_type", "mean", "std", "note"],
    "sindhwani2008_parameters": ["table", "dataset", "parameter", "value", "note"],
}
KEYS = {
    "jmlr2016_results": ["table", "dataset", "method", "setting", "views", "labels_per_class",
                         "unlabelled_per_class", "iterations", "metric"],
    "jmlr2016_parameters": ["dataset", "parameter"],
    "sindhwani2008_results": ["table", "dataset", "method", "error_type"],
    "sindhwani2008_parameters": ["table", "dataset", "parameter"],
}
FLAGS = ("[illegible]", "[reconstructed]", "[N/A]")


@pytest.fixture(scope="module", params=PUBLISHED)
def named(request):
    return request.param, load_published(request.param)


def test_unknown_name():
    with pytest.raises(ValueError, match="unknown published table"):
        load_published("nope")


def test_columns_keys_and_flags(named):
    name, df = named
    assert list(df.columns) == COLUMNS[name]
    assert len(df) > 0
    dup = df[df.duplicated(KEYS[name], keep=False)]
    assert dup.empty, dup
    value = "value" if "value" in df.columns else "mean"
    # an empty number is always explained, by an [illegible] or [N/A] note
    missing = df[df[value].isna()]
    assert missing["note"].str.startswith(("[illegible]", "[N/A]")).all(), missing
    # a flagged note opens the note; [reconstructed] cells carry a number
    flagged = df[df["note"].str.contains(r"\[(?:illegible|reconstructed|N/A)\]")]
    assert flagged["note"].str.startswith(FLAGS).all()
    assert df.loc[df["note"].str.startswith("[reconstructed]"), value].notna().all()
    assert df.loc[df["note"].str.startswith("[illegible]"), value].isna().all()


def test_jmlr_results_ranges_and_tables():
    df = load_published("jmlr2016_results")
    assert sorted(df["table"].unique()) == list(range(2, 12))
    assert set(df["metric"]) == {"accuracy"}
    assert set(df["dataset"]) == {"Caltech-101", "Flowers-17", "CUB-200-2011"}
    assert df["mean"].dropna().between(0, 100).all()
    assert df["std"].dropna().between(0, 100).all()
    assert (df["std"].dropna() < 15).all()
    assert df["labels_per_class"].notna().all()
    assert set(df["labels_per_class"]) <= {1, 5, 10, 15, 20, 40}
    assert set(df["unlabelled_per_class"].dropna()) <= {0, 5}
    assert set(df["iterations"].dropna()) == {25, 50}
    # optC rows and only they have an iteration count (Table 10/11 quote optC without one)
    assert (df["iterations"].notna() <= (df["method"] == "MVL-LS-optC")).all()
    assert set(df["setting"].str.split(";").str[0]) == {"supervised", "semi-supervised"}
    assert ((df["setting"] == "supervised") == (df["unlabelled_per_class"] == 0)).all()
    # each table has the printed grid: rows x columns
    shape = {2: 8, 3: 26, 4: 20, 5: 28, 6: 30, 7: 6, 8: 9, 9: 15, 10: 8, 11: 11}
    assert df.groupby("table").size().to_dict() == shape
    # the fully legible tables have no empty mean
    legible = df[df["table"].isin([2, 3, 4, 7, 10, 11])]
    assert legible["mean"].notna().all()


def _cell(df, **kw):
    sel = df
    for k, v in kw.items():
        sel = sel[sel[k] == v]
    assert len(sel) == 1, (kw, sel)
    return sel.iloc[0]


def test_jmlr_spot_checks():
    df = load_published("jmlr2016_results")
    cal, flo, cub = "Caltech-101", "Flowers-17", "CUB-200-2011"
    # Table 2, line 1387: "0 0 30.59% 63.68%"
    r = _cell(df, table=2, setting="semi-supervised; gamma_B=0, gamma_W=0", labels_per_class=1)
    assert r["mean"] == 30.59 and r["unlabelled_per_class"] == 5
    # Table 2, line 1390: last row, column l_c=u_c=5, printed "64.2%"
    assert _cell(df, table=2, setting="semi-supervised; gamma_B>0, gamma_W>0", labels_per_class=5)["mean"] == 64.2
    # Table 3, line 1414: "PHOW gray L2 25.64% 56.75%"
    assert _cell(df, table=3, views="PHOW gray L2", labels_per_class=5)["mean"] == 56.75
    # Table 3, line 1420: "MVL-binSVM 30.20% 62.37%"
    assert _cell(df, table=3, method="MVL-binSVM", labels_per_class=5)["mean"] == 62.37
    # Table 4, line 1432: "Attributes 13.53% | 30.99% | 38.96% | 43.79%"
    assert _cell(df, table=4, dataset=cub, views="Attributes", labels_per_class=15)["mean"] == 43.79
    # Table 5, lines 1451/1453: "M\./L-binSVB/I 32.4% 64.4% 71.4% N/A" over "(1.2%) (0.4%) (0.2%)"
    r = _cell(df, table=5, method="MVL-binSVM", setting="semi-supervised", labels_per_class=10)
    assert (r["mean"], r["std"]) == (71.4, 0.2)
    assert np.isnan(_cell(df, table=5, method="MVL-binSVM", setting="semi-supervised", labels_per_class=15)["mean"])
    # Table 6, lines 1488-1489: "MVL-LS 41.86% ..." over "(semi-sup.) (2.50%) ..."
    r = _cell(df, table=6, dataset=flo, method="MVL-LS", setting="semi-supervised", labels_per_class=1)
    assert (r["mean"], r["std"]) == (41.86, 2.50)
    # Table 6, lines 1483-1484: MVL-binSVM supervised l_c=20 "81.08%" over "(3.09%)"
    r = _cell(df, table=6, method="MVL-binSVM", setting="supervised", labels_per_class=20)
    assert (r["mean"], r["std"]) == (81.08, 3.09)
    # Table 7, lines 1587-1589: MVL-LS-optC (25 it.) l_c=10 "70.6%" over "(0.5%)"
    r = _cell(df, table=7, method="MVL-LS-optC", labels_per_class=10)
    assert (r["mean"], r["std"], r["iterations"], r["views"]) == (70.6, 0.5, 25, "10")
    # Table 10, line 1648: "MVL-binSVM 4 74.05%"
    r = _cell(df, table=10, method="MVL-binSVM")
    assert (r["mean"], r["views"], r["labels_per_class"]) == (74.05, "4", 15)
    # Table 10, line 1644: "LP-8 (Gehler and Nowozinl, [2009) 39 70.40%"
    assert _cell(df, table=10, method="LP-β (Gehler and Nowozin, 2009)")["mean"] == 70.40
    # Table 11, line 1669: "MK-FDA 87.2% (1.6%)"
    r = _cell(df, table=11, dataset=flo, method="MK-FDA")
    assert (r["mean"], r["std"]) == (87.2, 1.6)
    # Table 9 (garbled), reconstructed cell: 87.35 (text line 1573 and Table 11 line 1671)
    assert _cell(df, table=9, iterations=50, labels_per_class=40)["mean"] == 87.35
    assert _cell(df, table=8, method="MVL-LS (uniform)", labels_per_class=5, dataset=cal)["mean"] == 64.0


def test_jmlr_results_agree_with_running_text():
    df = load_published("jmlr2016_results")

    def m(**kw):
        return float(_cell(df, **kw)["mean"])

    # line 1380: with l_c=1 the between- and within-view terms improve by 2.35%
    t2 = df[(df["table"] == 2) & (df["labels_per_class"] == 1)].set_index("setting")["mean"]
    assert t2["semi-supervised; gamma_B>0, gamma_W>0"] - t2["semi-supervised; gamma_B=0, gamma_W=0"] == \
        pytest.approx(2.35)
    # lines 1399-1400: +4.77 (l_c=1) and +5.62 (l_c=5) over the best single view PHOW gray L2
    for lc, gain in ((1, 4.77), (5, 5.62)):
        best = df[(df["table"] == 3) & (df["labels_per_class"] == lc) & (df["views"] == "10")]["mean"].max()
        assert best - m(table=3, views="PHOW gray L2", labels_per_class=lc) == pytest.approx(gain)
    # line 1544: optC improves on uniform by 0.4% to 2.5% (Table 7)
    t7 = df[df["table"] == 7].pivot(index="labels_per_class", columns="method", values="mean")
    gains = (t7["MVL-LS-optC"] - t7["MVL-LS (uniform)"]).round(2)
    assert (gains.min(), gains.max()) == (0.4, 2.5)
    # line 1571: Flowers optC improvement "from 0.98%"; line 1566-1567: 73.85% vs 73.33% (Table 10)
    assert m(table=9, iterations=50, labels_per_class=40) - m(table=9, method="MVL-LS (uniform)",
                                                              labels_per_class=40) == pytest.approx(0.98)
    assert (m(table=10, method="MVL-LS-optC"), m(table=10, method="MVL-LS")) == (73.85, 73.33)
    # Table 11 MVL rows are Table 6 supervised l_c=40 rounded to one decimal
    for meth in ("MVL-LS", "MVL-binSVM", "MVL-SVM"):
        t6 = _cell(df, table=6, method=meth, setting="supervised", labels_per_class=40)
        t11 = _cell(df, table=11, method=meth)
        assert round(t6["mean"], 1) == t11["mean"] and round(t6["std"], 1) == t11["std"]


def test_jmlr_parameters():
    df = load_published("jmlr2016_parameters")
    table1 = df[df["parameter"].str.contains("/gamma_")]
    assert len(table1) == 27  # 3 methods x 3 data sets x (gamma_A, gamma_B, gamma_W)
    assert table1["value"].dropna().between(0, 1).all()
    # Table 1, line 1359-1360: the last cell (Caltech Birds, gamma_W) of the two SVM rows is printed 0
    for meth in ("MVL-binSVM", "MVL-SVM"):
        assert _cell(df, dataset="CUB-200-2011", parameter=f"{meth}/gamma_W")["value"] == 0
    # lines 1537-1538: alpha = 2 (Caltech-101) and 1 (Flowers); line 1532: 20 restarts
    assert _cell(df, dataset="Caltech-101", parameter="MVL-LS-optC/alpha")["value"] == 2
    assert _cell(df, dataset="Flowers-17", parameter="MVL-LS-optC/alpha")["value"] == 1
    assert _cell(df, dataset="Flowers-17", parameter="MVL-LS-optC/restarts")["value"] == 20

    def vec(prefix):
        sel = df[df["parameter"].str.startswith(prefix + "/c")]
        order = sel["parameter"].str.rsplit("/c", n=1).str[1].astype(int)
        return sel.assign(i=order).sort_values("i")["value"].to_numpy()

    # lines 1546-1547: c* for 10 kernels; on the sphere ||c|| = alpha = 2
    c = vec("MVL-LS-optC/c_star_10views_lc10")
    assert len(c) == 10 and c[2] == -0.7975 and c[8] == 1.2634
    assert np.linalg.norm(c) == pytest.approx(2.0, abs=1e-3)
    # line 1574: Flowers c*, ||c|| = alpha = 1 up to 0.7% (see the note)
    c = vec("MVL-LS-optC/c_star_lc40_50it")
    assert len(c) == 7 and c[3] == 0.5486
    assert np.linalg.norm(c) == pytest.approx(1.0, abs=0.01)
    # line 1521: the empirically found c sums to 1 (up to rounding)
    c = vec("MVL-LS/c_empirical")
    assert len(c) == 7 and c.sum() == pytest.approx(1.0, abs=5e-4)


def test_sindhwani_results():
    df = load_published("sindhwani2008_results")
    datasets = {"LINES", "G50C", "USPST", "COIL20", "PCMAC"}
    assert len(df) == 20
    assert set(df["table"]) == {2, 3}
    assert set(df["error_type"]) == {"test", "unlabelled"}
    assert ((df["table"] == 2) == (df["error_type"] == "test")).all()
    assert df["mean"].between(0, 100).all() and df["std"].between(0, 100).all()
    for (table, meth), g in df.groupby(["table", "method"]):
        assert set(g["dataset"]) == datasets, (table, meth)
    # Table 2 (char offset 24950): "... 23.8 (11.1) ..." MR COIL20 and "14.8 (8.8)" CoMR COIL20
    r = _cell(df, table=2, method="MR", dataset="COIL20")
    assert (r["mean"], r["std"]) == (23.8, 11.1)
    r = _cell(df, table=2, method="CoMR", dataset="COIL20")
    assert (r["mean"], r["std"]) == (14.8, 8.8)
    # Table 3 (char offset 25449): "7.5 6.6 18.6 37.5 11.0 MR (1.0) (0.8) (1.4) (6.0) (2.4)"
    r = _cell(df, table=3, method="MR", dataset="COIL20")
    assert (r["mean"], r["std"]) == (37.5, 6.0)
    r = _cell(df, table=3, method="CoMR", dataset="PCMAC")
    assert (r["mean"], r["std"]) == (9.4, 1.9)


def test_sindhwani_parameters():
    df = load_published("sindhwani2008_parameters")
    # Table 1 (char offset 23476): 6 rows x 5 data sets; Table 4 (char offset 25155): nn, sigma, p, 2 x 2 gammas, mu
    assert df.groupby("table").size().to_dict() == {1: 30, 4: 40}
    t1 = df[df["table"] == 1].pivot(index="dataset", columns="parameter", values="value")
    assert t1.loc["USPST"].to_dict() == {"c": 10, "d": 256, "l": 50, "t": 477, "u": 1430, "v": 50}
    assert t1.loc["PCMAC", "d"] == 7511 and t1.loc["COIL20", "u"] == 1320
    assert (t1 > 0).all().all() and (t1 == t1.round()).all().all()
    assert _cell(df, dataset="G50C", parameter="sigma")["value"] == 17.5
    assert np.isnan(_cell(df, dataset="LINES", parameter="sigma")["value"])  # '-': linear kernel
    assert _cell(df, dataset="COIL20", parameter="nn")["value"] == 2
    # "MR γ1, γ2 0.01, 10-6 ..." and "CoMR γ1, γ2 10-4 , 100 ..." (LINES column)
    assert _cell(df, dataset="LINES", parameter="MR/gamma_2")["value"] == 1e-6
    assert _cell(df, dataset="LINES", parameter="CoMR/gamma_1")["value"] == 1e-4
    gammas = df[df["parameter"].str.contains("gamma")]["value"]
    assert gammas.isin([1e-6, 1e-4, 1e-2, 1, 10, 100]).all()  # the grid stated in the text
    assert (df.loc[df["parameter"] == "CoMR/mu", "value"] == 1).all()


def test_csv_keeps_printed_digits():
    # the CSV stores numbers as printed (e.g. trailing zeros), which pandas drops on load
    from importlib import resources

    text = resources.files("mvl").joinpath("data", "published", "jmlr2016_results.csv").read_text("utf-8")
    assert ",73.00,," in text and ",64.2,," in text and ",75.00,1.06," in text
    assert isinstance(load_published("jmlr2016_results"), pd.DataFrame)


@pytest.mark.parametrize("name", REFERENCES)
def test_reference_numbers_name_their_source(name):
    """The numbers the study reports quote beside their own: each row names its source (a paper and its
    protocol, never the project's own measurement), and the accuracies are in range."""
    df = load_reference(name)
    assert len(df) > 0 and df["source"].str.len().gt(20).all()
    assert not df["source"].str.contains("earlier measurement|main study|coreg study").any()
    assert df["accuracy"].between(0, 100 if name == "peers_reference" else 1).all()
    with pytest.raises(ValueError, match="unknown reference table"):
        load_reference("jmlr2016_results")


def test_the_reports_read_their_quoted_numbers_from_the_reference_tables():
    from mvl.workflow import peers

    quoted = peers.reference_numbers()
    assert list(quoted.columns) == ["dataset", "setting", "l_c", "method", "quoted", "source"]
    assert quoted["quoted"].tolist() == load_reference("peers_reference")["accuracy"].tolist()
