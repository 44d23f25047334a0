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
    judged,
    pair_table,
    per_dataset_choice,
    protocol_rows,
    protocol_table,
    published_comparison,
    published_pairs,
    reproduction,
    reproduction_summary,
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


def test_judged_p_values_against_the_closed_form():
    found = judged(toy_rows(), pairs=PAIRS)
    v = {(r.protocol, r.metric): r.verdict for r in found.itertuples()}
    # paired differences MR - CoMR per split, from EXPECTED
    diffs = {("a", "test_error"): [25, 14, 14], ("b", "test_error"): [15, 15, 14], ("c", "test_error"): [-5, -6, -5],
             ("a", "unlabelled_error"): [24, 15, 15], ("b", "unlabelled_error"): [14, 15, 15],
             ("c", "unlabelled_error"): [-5, -5, -6]}
    assert set(v) == set(diffs)
    for key, d in diffs.items():
        _, p = _t_p_df2(d)
        assert v[key].n == 3 and v[key].difference == pytest.approx(sum(d) / 3)
        assert v[key].p == pytest.approx(p, rel=1e-7), key
        assert v[key].outcome == "too few splits to tell"  # 3 splits: under the rule's minimum
    # a: t = 17.667 / (6.3509 / sqrt 3) = 4.818, p = 0.0405; c: t = -16, p = 1 - 16 / sqrt(258) = 0.00388
    assert v[("a", "test_error")].p == pytest.approx(0.0405, abs=1e-4)
    assert v[("c", "test_error")].p == pytest.approx(1 - 16 / 258**0.5)
    assert v[("a", "test_error")].mean_a == pytest.approx(86 / 3)
    assert v[("a", "test_error")].mean_b == pytest.approx(11.0)
    assert v[("c", "test_error")].wins == 3  # MR's error lower on every split


def test_judged_equal_methods_give_p_one():
    rows = toy_rows()
    mr = rows[rows["method"] == "MR"]
    same = pd.concat([mr, mr.assign(method="CoMR")], ignore_index=True)
    found = judged(same, pairs=PAIRS.assign(gamma1=10.0, gamma2=1.0))
    assert all(v.p == 1.0 and v.difference == 0 for v in found["verdict"])


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


def test_verdict_sentence_on_three_splits_is_too_few():
    """The toy table has 3 splits: under the rule's minimum, so every setting is "too few splits to tell"."""
    s = verdicts(toy_rows(), pairs=PAIRS, published=PUBLISHED).loc[0, "verdict"]
    assert s.startswith("TOY: Test error: SR Table 2 has CoMR lower (MR 23.50, CoMR 16.00); too few splits to tell "
                        "under a/binary (MR 28.67, CoMR 11.00, 3 splits), b/binary (MR 22.00, CoMR 7.33, 3 splits) "
                        "and c/binary (MR 12.00, CoMR 17.33, 3 splits). Unlabelled error: SR Table 3 has CoMR lower")
    assert "as SR" not in s and "reverse" not in s


# ---------------------------------------------------------------- the rule on constructed tables (8 splits)

BASE8 = np.array([10.0, 12.0, 9.0, 11.0, 13.0, 10.5, 12.5, 11.5])
JIT8 = np.array([0.3, -0.2, 0.1, -0.4, 0.2, -0.1, 0.4, -0.3])  # mean 0


def _rule_rows(spec):
    """One grid pair (1, 1) per dataset, binary weights, so protocols a, b and c all use the same rows.
    ``spec``: dataset -> (MR errors, CoMR errors) per split."""
    rows = []
    for ds, (mr, comr) in spec.items():
        for method, err in (("MR", mr), ("CoMR", comr)):
            rows += [dict(dataset=ds, seed=s, method=method, graph_weights="binary", gamma1=1.0, gamma2=1.0,
                          validation_error=0.0, validation_loss=0.0, test_error=float(e), unlabelled_error=float(e),
                          selected=True) for s, e in enumerate(err)]
    return pd.DataFrame(rows)


def _textbook_p(d):
    from scipy import stats

    d = np.asarray(d, float)
    t = d.mean() / (d.std(ddof=1) / np.sqrt(d.size))
    return 2 * stats.t.sf(abs(t), d.size - 1)


def _rule_published(names):
    """SR's cells for the constructed datasets: CoMR lower on both error types (as on every SR dataset's test
    error)."""
    return pd.DataFrame([dict(dataset=d, method=m, error=e, table=t, published_mean=v, published_std=1.0)
                         for d in names for e, t in (("test", 2), ("unlabelled", 3))
                         for m, v in (("MR", 7.7), ("CoMR", 1.0))])


def test_rule_win_tie_loss_and_too_few():
    spec = {"win": (BASE8, BASE8 + 2.6 + JIT8),  # MR lower on every split: the reverse of SR's direction
            "loss": (BASE8 + 3.0 + JIT8, BASE8),  # CoMR lower: SR's direction
            "tie": (BASE8 + JIT8, BASE8),  # differences centred on 0
            "few": (BASE8[:3], BASE8[:3] + 5.0)}  # 3 splits
    rows = _rule_rows(spec)
    pairs = pd.DataFrame([dict(dataset=d, method=m, gamma1=1.0, gamma2=1.0) for d in spec for m in ("MR", "CoMR")])
    found = judged(rows, pairs=pairs)
    assert len(found) == 4 * 3 * 2  # datasets x protocols x error types
    by = {d: [r.verdict for r in found[found["dataset"] == d].itertuples()] for d in spec}
    assert {v.outcome for v in by["win"]} == {"better"}  # MR (a) has the lower error
    assert {v.outcome for v in by["loss"]} == {"worse"}
    assert {v.outcome for v in by["tie"]} == {"no difference shown"}
    assert {v.outcome for v in by["few"]} == {"too few splits to tell"}
    # one family: the 18 tested comparisons (the 6 of "few" not counted); p against the textbook formula
    v = by["tie"][0]
    assert v.family == 18 and v.p == pytest.approx(_textbook_p(JIT8), rel=1e-9)
    assert by["win"][0].wins == 8 and by["win"][0].losses == 0  # wins: splits where MR's error is lower
    assert by["win"][0].difference == pytest.approx(-2.6)  # MR - CoMR, percentage points (errors not rescaled)
    assert by["win"][0].mean_a == pytest.approx(BASE8.mean())

    text = verdicts(rows, pairs=pairs, published=_rule_published(spec)).set_index("dataset")["verdict"]
    m = f"{BASE8.mean():.2f}"
    win = text["win"]
    assert win.startswith("WIN: Test error: SR Table 2 has CoMR lower (MR 7.70, CoMR 1.00); ours has MR lower, the "
                          f"reverse of SR, under a/binary (MR {m}, CoMR {BASE8.mean() + 2.6:.2f}, adjusted p = ")
    # every setting of "win" listed under the reverse, none under SR's direction
    assert "as SR" not in win and win.count("b/binary") == 2 and win.count("the reverse of SR") == 2
    loss = text["loss"]
    assert "ours has CoMR lower, as SR, under a/binary (MR " in loss and "reverse" not in loss
    assert "no difference shown under a/binary" in text["tie"] and "lower, as SR" not in text["tie"]
    assert "too few splits to tell under a/binary (MR " in text["few"] and ", 3 splits)" in text["few"]


def test_rule_where_sr_has_the_methods_equal():
    spec = {"eq": (BASE8 + 3.0 + JIT8, BASE8)}
    rows = _rule_rows(spec)
    pairs = pd.DataFrame([dict(dataset="eq", method=m, gamma1=1.0, gamma2=1.0) for m in ("MR", "CoMR")])
    pub = _rule_published(spec).assign(published_mean=5.0)
    s = verdicts(rows, pairs=pairs, published=pub).loc[0, "verdict"]
    assert s.startswith("EQ: Test error: SR Table 2 has MR and CoMR equal (5.00); ours has CoMR lower, where SR have "
                        "them equal, under a/binary")


def _comparison(cells):
    """A published_comparison-shaped table: (dataset, method, error, setting, ours, published, std) per row, with
    difference and within worked out here."""
    out = []
    for ds, method, err, setting, ours, pub, std in cells:
        proto, weights = setting.split("/")
        out.append(dict(dataset=ds, method=method, graph_weights=weights, protocol=proto, error=err,
                        table=2 if err == "test" else 3, ours_mean=ours, ours_std=0.1, n_splits=10,
                        published_mean=pub, published_std=std, difference=ours - pub,
                        within_one_std=abs(ours - pub) <= std))
    return pd.DataFrame(out)


def test_reproduction_sentences():
    cmp = _comparison([
        ("lines", "MR", "test", "a/binary", 0.36, 7.7, 1.2),  # 7.34 below, 6.1 stds: not reproduced
        ("lines", "MR", "test", "c/binary", 1.72, 7.7, 1.2),  # 5.98 below
        ("lines", "CoMR", "test", "a/binary", 4.36, 1.0, 1.5),  # 3.36 above
        ("lines", "CoMR", "test", "c/binary", 2.0, 1.0, 1.5),  # within
        ("g50c", "MR", "test", "a/binary", 6.0, 5.8, 2.8),  # within
        ("g50c", "CoMR", "test", "a/binary", np.nan, np.nan, np.nan),  # not published: left out
    ])
    r = reproduction(cmp).set_index(["dataset", "method", "error"])
    assert len(r) == 3
    mr = r.loc[("lines", "MR", "test")]
    assert not mr["reproduced"] and mr["within"] == 0 and mr["settings"] == 2 and mr["closest"] == "c/binary"
    assert mr["sentence"] == ("LINES, MR test error: not reproduced: SR Table 2 has 7.70 (std 1.20); ours 0.36 to "
                              "1.72 over the 2 settings (10 splits each), none within one published std (closest: "
                              "c/binary 1.72, 5.98 points below, 5.0 published stds).")
    co = r.loc[("lines", "CoMR", "test")]
    assert co["reproduced"] and co["within"] == 1
    assert co["sentence"].endswith("within one published std under c/binary (2.00).")
    assert r.loc[("g50c", "MR", "test"), "sentence"] == (
        "G50C, MR test error: reproduced: SR Table 2 has 5.80 (std 2.80); ours 6.00 (one setting, 10 splits), within "
        "one published std under a/binary (6.00).")
    assert reproduction_summary(reproduction(cmp)) == (
        "2 of the 3 published cells (SR Tables 2-3) are within one published std of our mean under at least one "
        "setting; not reproduced under any setting: LINES MR test.")
    assert reproduction_summary(reproduction(cmp[cmp["method"] == "CoMR"])).endswith("setting.")


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
