"""mvl.workflow.coreg_report on small hand-made tables whose expected values are computed by hand (in the
comments and the literals below), never by the functions under test.

The toy table: one dataset, three splits, MR and CoMR on the grid (1, 1), (1, 10), (10, 1) with binary graph
weights. ``selected`` marks the per-split choice of protocol (a) as run_split would (smallest validation error,
then validation loss, then grid order); protocol (b) and (c) are worked out in the comments.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mvl.workflow.coreg_report import (
    error_table,
    format_gamma,
    format_mean_std,
    pair_table,
    per_dataset_choice,
    protocol_rows,
    protocol_table,
    protocol_ttests,
    published_comparison,
    published_pairs,
    verdicts,
)

# (method, seed, gamma1, gamma2): (validation_error, validation_loss, test_error, unlabelled_error, selected)
TOY = {
    # MR, seed 0: (1, 1) and (1, 10) tie on validation error 10; loss 0.4 < 0.5 -> (1, 10)
    ("MR", 0, 1.0, 1.0): (10, 0.5, 20, 21, False),
    ("MR", 0, 1.0, 10.0): (10, 0.4, 30, 31, True),
    ("MR", 0, 10.0, 1.0): (20, 0.1, 10, 11, False),
    ("MR", 1, 1.0, 1.0): (20, 0.3, 22, 23, False),
    ("MR", 1, 1.0, 10.0): (10, 0.9, 32, 33, True),
    ("MR", 1, 10.0, 1.0): (30, 0.2, 12, 13, False),
    # seed 2: (1, 1) and (10, 1) tie on error and loss -> grid order -> (1, 1)
    ("MR", 2, 1.0, 1.0): (0, 0.6, 24, 25, True),
    ("MR", 2, 1.0, 10.0): (10, 0.5, 34, 35, False),
    ("MR", 2, 10.0, 1.0): (0, 0.6, 14, 15, False),
    ("CoMR", 0, 1.0, 1.0): (0, 0.2, 5, 7, True),
    ("CoMR", 0, 1.0, 10.0): (10, 0.1, 15, 16, False),
    ("CoMR", 0, 10.0, 1.0): (20, 0.1, 25, 26, False),
    ("CoMR", 1, 1.0, 1.0): (10, 0.2, 7, 8, False),
    ("CoMR", 1, 1.0, 10.0): (0, 0.1, 18, 18, True),
    ("CoMR", 1, 10.0, 1.0): (20, 0.1, 27, 28, False),
    ("CoMR", 2, 1.0, 1.0): (0, 0.2, 10, 10, True),
    ("CoMR", 2, 1.0, 10.0): (10, 0.1, 19, 21, False),
    ("CoMR", 2, 10.0, 1.0): (20, 0.1, 29, 30, False),
}
# protocol (b): MR mean validation errors (1,1) 10, (1,10) 10, (10,1) 16.7; tie -> mean losses 0.467 < 0.6 -> (1, 1)
#               CoMR (1,1) 3.33, (1,10) 6.67, (10,1) 20 -> (1, 1)
# protocol (c): the "published" pairs below: MR (10, 1), CoMR (1, 10)
PAIRS = pd.DataFrame([dict(dataset="TOY", method="MR", gamma1=10.0, gamma2=1.0),
                      dict(dataset="TOY", method="CoMR", gamma1=1.0, gamma2=10.0)])
PUBLISHED = pd.DataFrame([
    dict(dataset="TOY", method="MR", error="test", table=2, published_mean=23.5, published_std=2.0),
    dict(dataset="TOY", method="CoMR", error="test", table=2, published_mean=16.0, published_std=1.5),
    dict(dataset="TOY", method="MR", error="unlabelled", table=3, published_mean=23.0, published_std=1.0),
    dict(dataset="TOY", method="CoMR", error="unlabelled", table=3, published_mean=9.0, published_std=0.5),
])

# the rows each protocol uses, per seed 0, 1, 2 (read off TOY by hand)
EXPECTED = {  # (method, protocol): (test errors, unlabelled errors)
    ("MR", "a"): ([30, 32, 24], [31, 33, 25]),
    ("MR", "b"): ([20, 22, 24], [21, 23, 25]),
    ("MR", "c"): ([10, 12, 14], [11, 13, 15]),
    ("CoMR", "a"): ([5, 18, 10], [7, 18, 10]),
    ("CoMR", "b"): ([5, 7, 10], [7, 8, 10]),
    ("CoMR", "c"): ([15, 18, 19], [16, 18, 21]),
}


def toy_rows(order=1):
    rows = [dict(dataset="toy", seed=s, method=m, graph_weights="binary", gamma1=g1, gamma2=g2,
                 validation_error=float(v[0]), validation_loss=v[1], test_error=float(v[2]),
                 unlabelled_error=float(v[3]), selected=v[4])
            for (m, s, g1, g2), v in TOY.items()]
    return pd.DataFrame(rows[::order])


def _mean_std(x):
    """Plain mean and sample std (ddof 1) of three numbers."""
    m = sum(x) / 3
    return m, (sum((v - m) ** 2 for v in x) / 2) ** 0.5


def _t_p_df2(d):
    """Paired t statistic of three differences and its two-sided p-value with 2 degrees of freedom, in closed
    form: the t distribution with 2 df has P(|T| > t) = 1 - t / sqrt(t^2 + 2)."""
    m, s = _mean_std(d)
    t = m / (s / 3**0.5)
    return t, 1 - abs(t) / (t * t + 2) ** 0.5


def test_per_dataset_choice_ties_by_loss_then_grid_order():
    choice = per_dataset_choice(toy_rows(order=-1)).set_index("method")  # rows given in reverse grid order
    assert (choice.loc["MR", "gamma1"], choice.loc["MR", "gamma2"]) == (1.0, 1.0)  # tie on error, smaller loss
    assert choice.loc["MR", "mean_validation_error"] == pytest.approx(10.0)
    assert choice.loc["MR", "mean_validation_loss"] == pytest.approx((0.5 + 0.3 + 0.6) / 3)
    assert (choice.loc["CoMR", "gamma1"], choice.loc["CoMR", "gamma2"]) == (1.0, 1.0)
    assert choice.loc["CoMR", "n_splits"] == 3
    # a tie on error and loss goes to the first pair in grid order, whatever the row order
    rows = pd.DataFrame([dict(dataset="x", seed=0, method="MR", graph_weights="kernel", gamma1=g1, gamma2=g2,
                              validation_error=5.0, validation_loss=0.25, test_error=t, unlabelled_error=t,
                              selected=False)
                         for g1, g2, t in ((100.0, 1e-6, 1.0), (1e-4, 10.0, 2.0), (1e-4, 1.0, 3.0))])
    c = per_dataset_choice(rows)
    assert (c.loc[0, "gamma1"], c.loc[0, "gamma2"]) == (1e-4, 1.0)
    # a pair missing from one split does not compete
    rows = pd.concat([rows, rows.assign(seed=1)[:2]], ignore_index=True)  # (1e-4, 1) missing in split 1
    c = per_dataset_choice(rows)
    assert (c.loc[0, "gamma1"], c.loc[0, "gamma2"]) == (1e-4, 10.0)


def test_protocol_rows_pick_the_hand_worked_rows():
    pr = protocol_rows(toy_rows(), pairs=PAIRS)
    assert len(pr) == 2 * 3 * 3
    for (method, proto), (test, unl) in EXPECTED.items():
        g = pr[(pr["method"] == method) & (pr["protocol"] == proto)].sort_values("seed")
        assert g["test_error"].tolist() == test and g["unlabelled_error"].tolist() == unl, (method, proto)


def test_protocol_table_means_stds_and_pairs():
    table = protocol_table(toy_rows(), pairs=PAIRS)
    assert list(table["protocol"]) == ["a", "a", "b", "b", "c", "c"]
    assert list(table["method"]) == ["MR", "CoMR"] * 3
    t = table.set_index(["method", "protocol"])
    for key, (test, unl) in EXPECTED.items():
        m, s = _mean_std(test)
        assert t.loc[key, "test_error_mean"] == pytest.approx(m) and t.loc[key, "test_error_std"] == pytest.approx(s)
        m, s = _mean_std(unl)
        assert t.loc[key, "unlabelled_error_mean"] == pytest.approx(m)
        assert t.loc[key, "unlabelled_error_std"] == pytest.approx(s)
        assert t.loc[key, "n_splits"] == 3
    # e.g. MR (a): 30, 32, 24 -> mean 28.667, std sqrt(34.667 / 2) = 4.1633
    assert t.loc[("MR", "a"), "test_error_std"] == pytest.approx(4.1633, abs=1e-4)
    assert t.loc[("MR", "a"), "pairs"] == "(1, 10) x2, (1, 1) x1"
    assert np.isnan(t.loc[("MR", "a"), "gamma1"])
    assert (t.loc[("MR", "b"), "gamma1"], t.loc[("MR", "b"), "gamma2"]) == (1.0, 1.0)
    assert (t.loc[("CoMR", "c"), "gamma1"], t.loc[("CoMR", "c"), "gamma2"]) == (1.0, 10.0)
    assert t.loc[("CoMR", "c"), "pairs"] == "(1, 10)"
    # validation error of the pair, mean over splits: MR (b) = (10 + 20 + 0) / 3
    assert t.loc[("MR", "b"), "validation_error_mean"] == pytest.approx(10.0)


def test_protocol_ttests_against_the_closed_form():
    tests = protocol_ttests(toy_rows(), pairs=PAIRS).set_index(["protocol", "metric"])
    # paired differences MR - CoMR per split, from EXPECTED
    diffs = {("a", "test_error"): [25, 14, 14], ("b", "test_error"): [15, 15, 14], ("c", "test_error"): [-5, -6, -5],
             ("a", "unlabelled_error"): [24, 15, 15], ("b", "unlabelled_error"): [14, 15, 15],
             ("c", "unlabelled_error"): [-5, -5, -6]}
    for key, d in diffs.items():
        t, p = _t_p_df2(d)
        row = tests.loc[key]
        assert row["n"] == 3 and row["difference"] == pytest.approx(sum(d) / 3)
        assert row["t"] == pytest.approx(t, rel=1e-9) and row["p_value"] == pytest.approx(p, rel=1e-7), key
        assert bool(row["significant"]) == (p < 0.05)
    # a: t = 17.667 / (6.3509 / sqrt 3) = 4.818, p = 0.0405; c: t = -16, p = 1 - 16 / sqrt(258) = 0.00388
    assert tests.loc[("a", "test_error"), "p_value"] == pytest.approx(0.0405, abs=1e-4)
    assert tests.loc[("c", "test_error"), "t"] == pytest.approx(-16.0)
    assert tests.loc[("a", "test_error"), "MR_mean"] == pytest.approx(86 / 3)
    assert tests.loc[("a", "test_error"), "CoMR_mean"] == pytest.approx(11.0)


def test_protocol_ttests_equal_methods_give_no_p_value():
    rows = toy_rows()
    mr = rows[rows["method"] == "MR"]
    same = pd.concat([mr, mr.assign(method="CoMR")], ignore_index=True)
    tests = protocol_ttests(same, pairs=PAIRS.assign(gamma1=10.0, gamma2=1.0))
    assert tests["p_value"].isna().all() and not tests["significant"].any()


def test_published_comparison_within_one_std():
    table = protocol_table(toy_rows(), pairs=PAIRS)
    cmp = published_comparison(table, published=PUBLISHED).set_index(["method", "protocol", "error"])
    # MR test: a 28.667 (|5.17| > 2), b 22 (|-1.5| <= 2), c 12; CoMR test: a 11, b 7.333, c 17.333 (|1.333| <= 1.5)
    expected_within = {("MR", "b", "test"), ("CoMR", "c", "test"), ("MR", "b", "unlabelled")}
    for key, row in cmp.iterrows():
        assert bool(row["within_one_std"]) == (key in expected_within), key
    assert cmp.loc[("MR", "b", "test"), "difference"] == pytest.approx(22 - 23.5)
    assert cmp.loc[("CoMR", "c", "unlabelled"), "published_mean"] == 9.0
    assert cmp.loc[("CoMR", "c", "unlabelled"), "table"] == 3
    assert cmp.loc[("CoMR", "b", "unlabelled"), "ours_mean"] == pytest.approx(25 / 3)  # |8.333 - 9| > 0.5


def test_verdict_sentence():
    v = verdicts(toy_rows(), pairs=PAIRS, published=PUBLISHED)
    assert list(v["dataset"]) == ["toy"]
    s = v.loc[0, "verdict"]
    assert s.startswith("TOY: SR's direction MR > CoMR on test error (23.50 vs 16.00) holds with p < 0.05 under "
                        "a/binary (28.67 vs 11.00, p = 0.04) and b/binary (22.00 vs 7.33, p = 0.00052) and is "
                        "reversed with p < 0.05 under c/binary (12.00 vs 17.33, p = 0.0039); ")
    assert ("ours is within one published std of the MR cell under b/binary (22.00) and of the CoMR cell under "
            "c/binary (17.33); ") in s
    # unlabelled: a d = 24, 15, 15 (t = 6, p = 1 - 6 / sqrt 38 = 0.027), b d = 14, 15, 15 (p = 0.00052),
    # c d = -5, -5, -6
    assert ("SR's direction MR > CoMR on unlabelled error (23.00 vs 9.00) holds with p < 0.05 under a/binary "
            "(29.67 vs 11.67, p = 0.027) and b/binary (23.00 vs 8.33, p = 0.00052) and is reversed with p < 0.05 "
            "under c/binary (13.00 vs 18.33, p = 0.0039)") in s
    assert s.endswith("ours is within one published std of the MR cell under b/binary (23.00) and of the CoMR "
                      "cell under no setting.")
    # published means equal: no direction to hold; p >= 0.05 stated as such
    pub = PUBLISHED.assign(published_mean=10.0)
    s = verdicts(toy_rows(), pairs=PAIRS, published=pub).loc[0, "verdict"]
    assert "SR's MR and CoMR test errors are equal (10.00); ours differ with p < 0.05 under a/binary" in s


def test_published_pairs_are_sr_table_4():
    """Read through mvl.data.published from the transcribed Table 4 (SR: 'MR gamma_1, gamma_2' and 'CoMR ...' rows)."""
    pp = published_pairs().set_index(["dataset", "method"])
    printed = {("lines", "MR"): (0.01, 1e-6), ("g50c", "MR"): (1, 100), ("uspst", "MR"): (0.01, 0.01),
               ("coil20", "MR"): (1e-4, 1e-6), ("pcmac", "MR"): (10, 100), ("lines", "CoMR"): (1e-4, 100),
               ("g50c", "CoMR"): (10, 10), ("uspst", "CoMR"): (1e-6, 1e-4), ("coil20", "CoMR"): (1e-6, 1e-6),
               ("pcmac", "CoMR"): (1, 10)}
    assert len(pp) == len(printed)
    for key, (g1, g2) in printed.items():
        assert (pp.loc[key, "gamma1"], pp.loc[key, "gamma2"]) == (g1, g2), key


def test_display_helpers():
    assert format_mean_std(12.345, 1.2) == "12.35 (1.20)" and format_mean_std(np.nan, 1.0) == ""
    assert format_mean_std(3.0, np.nan) == "3.00 (-)"
    assert [format_gamma(g) for g in (1e-6, 1e-4, 0.01, 1.0, 10.0, 100.0)] == ["1e-6", "1e-4", "0.01", "1", "10",
                                                                                "100"]
    table = protocol_table(toy_rows(), pairs=PAIRS)
    et = error_table(table, "test_error", published=PUBLISHED)
    assert list(et.index) == [("toy", "published (SR Table 2)"), ("toy", "(a) per-split validation selection"),
                              ("toy", "(b) one pair per dataset (mean validation error over splits)"),
                              ("toy", "(c) SR Table 4 pair")]
    assert list(et.columns) == [("binary", "MR"), ("binary", "CoMR")]
    assert et.loc[("toy", "published (SR Table 2)"), ("binary", "MR")] == "23.50 (2.00)"
    assert et.loc[("toy", "(b) one pair per dataset (mean validation error over splits)"), ("binary", "MR")] == \
        "22.00 (2.00)"
    pt = pair_table(table, pairs=PAIRS)
    assert list(pt.index) == [("toy", "MR", "binary"), ("toy", "CoMR", "binary")]
    assert list(pt.columns) == ["(a) per-split choices", "(b) one pair per dataset", "(c) SR Table 4"]
    assert pt.loc[("toy", "MR", "binary"), "(c) SR Table 4"] == "(10, 1)"
    assert pt.loc[("toy", "MR", "binary"), "(a) per-split choices"] == "(1, 10) x2, (1, 1) x1"
    assert pt.loc[("toy", "CoMR", "binary"), "(b) one pair per dataset"] == "(1, 1)"
