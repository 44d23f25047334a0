"""The verdict rule on constructed tables; t and p checked against the textbook formula, Holm against the
sequential step-down procedure written out."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mvl.workflow import verdict as V


def _series(values):
    return pd.Series(np.asarray(values, dtype=float), index=pd.RangeIndex(len(values), name="split"))


def _textbook_p(d):
    """Two-sided paired t p-value: t = mean(d) / (sd(d) / sqrt(n)), n - 1 degrees of freedom."""
    d = np.asarray(d, dtype=float)
    n = d.size
    t = d.mean() / (d.std(ddof=1) / math.sqrt(n))
    return 2 * stats.t.sf(abs(t), n - 1)


def _stepdown(p, alpha):
    """Holm's procedure as published: test the sorted p-values against alpha / (m - i) until one fails."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    rejected = set()
    for k, i in enumerate(order):
        if p[i] < alpha / (len(p) - k):
            rejected.add(i)
        else:
            break
    return rejected


BASE = np.array([0.80, 0.82, 0.78, 0.85, 0.81, 0.79, 0.83, 0.80])
JITTER = np.array([0.004, -0.003, 0.002, -0.001, 0.003, -0.002, 0.001, -0.004])


def test_clear_win():
    x, y = BASE + 0.05 + JITTER, BASE
    (v,) = V.judge([dict(a="MVL-LS", b="SVC", x=_series(x), y=_series(y), context="l_c = 5")])
    assert v.outcome == "better" and v.n == 8 and v.wins == 8 and v.losses == 0
    assert v.difference == pytest.approx(100 * np.mean(x - y))
    assert v.p == pytest.approx(_textbook_p(100 * (x - y)), rel=1e-9)
    s = v.sentence()
    assert s.startswith("l_c = 5: MVL-LS ")
    assert "MVL-LS is better than SVC" in s and f"{v.difference:+.2f} points over 8 splits" in s


def test_loss():
    x, y = BASE - 0.04 + JITTER, BASE
    (v,) = V.judge([dict(a="MVL-LS", b="SVC", x=_series(x), y=_series(y))])
    assert v.outcome == "worse" and v.losses == 8
    assert "MVL-LS is worse than SVC" in v.sentence()


def test_errors_lower_is_better():
    x, y = 100 * (BASE - 0.04 + JITTER), 100 * BASE  # errors in %: a lower on every split
    (v,) = V.judge([dict(a="MR", b="CoMR", x=_series(x), y=_series(y))], scale=1.0, lower_is_better=True)
    assert v.outcome == "better" and v.wins == 8 and v.losses == 0
    assert v.difference == pytest.approx(np.mean(x - y)) and v.difference < 0
    assert v.p == pytest.approx(_textbook_p(x - y), rel=1e-9)
    assert "(lower is better)" in v.sentence() and "MR is better than CoMR" in v.sentence()
    (w,) = V.judge([dict(a="CoMR", b="MR", x=_series(y), y=_series(x))], scale=1.0, lower_is_better=True)
    assert w.outcome == "worse" and w.losses == 8


def test_tie():
    x, y = BASE + JITTER, BASE  # differences centred on zero
    (v,) = V.judge([dict(a="A", b="B", x=_series(x), y=_series(y))])
    assert v.outcome == "no difference shown"
    assert v.p == pytest.approx(_textbook_p(100 * (x - y)), rel=1e-9) and v.p > 0.05
    assert "no difference shown at the 0.05 level" in v.sentence()
    (same,) = V.judge([dict(a="A", b="B", x=_series(BASE), y=_series(BASE))])
    assert same.p == 1.0 and same.outcome == "no difference shown"


def test_too_few_splits_whatever_the_numbers():
    x, y = BASE[:5] + 0.20, BASE[:5]  # +20 points on every one of 5 splits
    (v,) = V.judge([dict(a="A", b="B", x=_series(x), y=_series(y))])
    assert v.outcome == "too few splits to tell" and v.n == 5 and not v.tested
    assert np.isnan(v.p_holm) and v.family == 0
    assert "too few splits to tell (the rule needs at least 6)" in v.sentence()
    (w,) = V.judge([dict(a="A", b="B", x=_series(x), y=_series(y))], unit="draws")
    assert "too few draws to tell" in w.sentence()


def test_pairs_with_a_missing_side_are_dropped():
    x = _series(BASE + 0.05 + JITTER)
    y = _series(BASE).drop([0, 1, 2])  # 5 pairs left
    (v,) = V.judge([dict(a="A", b="B", x=x, y=y)])
    assert v.n == 5 and v.outcome == "too few splits to tell"


def test_holm_changes_a_verdict():
    # a moderate effect, significant alone at 0.05, not after correcting over four comparisons
    rng = np.random.default_rng(0)
    d = np.array([0.010, 0.030, -0.005, 0.020, 0.002, 0.015, 0.000, 0.025])
    alone_p = _textbook_p(100 * d)
    assert 0.0125 < alone_p < 0.05  # chosen so: below alpha, above alpha / 4
    moderate = dict(a="A", b="B", x=_series(BASE + d), y=_series(BASE))
    (alone,) = V.judge([moderate])
    assert alone.outcome == "better" and alone.family == 1
    ties = [dict(a=f"C{k}", b="B", x=_series(BASE + rng.normal(0, 0.01, 8)), y=_series(BASE)) for k in range(3)]
    family = V.judge([moderate, *ties])
    assert family[0].outcome == "no difference shown" and family[0].family == 4
    assert family[0].p == pytest.approx(alone.p)
    assert "Holm-adjusted over 4 comparisons" in family[0].sentence()
    ps = [v.p for v in family]
    rejected = _stepdown(ps, 0.05)
    assert {i for i, v in enumerate(family) if v.outcome in ("better", "worse")} == rejected


def test_holm_adjusted_values_against_the_step_down_procedure():
    rng = np.random.default_rng(1)
    p = rng.uniform(0, 0.08, size=7)
    adj = V.holm(p)
    for alpha in np.linspace(0.001, 0.1, 60):
        assert {i for i in range(7) if adj[i] < alpha} == _stepdown(list(p), alpha)
    assert np.all(adj >= p) and np.all(adj <= 1)
    assert np.isnan(V.holm([0.01, np.nan])[1]) and V.holm([0.01, np.nan])[0] == pytest.approx(0.01)


def test_too_few_are_not_counted_in_the_family():
    good = dict(a="A", b="B", x=_series(BASE + 0.05 + JITTER), y=_series(BASE))
    short = dict(a="C", b="B", x=_series(BASE[:3] + 0.05), y=_series(BASE[:3]))
    v = V.judge([good, short])
    assert v[0].family == 1 and v[0].p_holm == pytest.approx(v[0].p)
    assert v[1].outcome == "too few splits to tell"


def test_table_and_bad_input():
    v = V.judge([dict(a="A", b="B", x=_series(BASE + 0.05 + JITTER), y=_series(BASE), context="l_c = 1")])
    t = V.verdict_table(v)
    assert list(t["verdict"]) == ["better"] and t.loc[0, "splits"] == 8
    with pytest.raises(ValueError, match="missing"):
        V.judge([dict(a="A", b="B", x=_series(BASE))])
    with pytest.raises(ValueError, match="alpha"):
        V.judge([], alpha=1.5)
    with pytest.raises(ValueError, match="min_pairs"):
        V.judge([], min_pairs=1)


def test_no_fixed_verdict_text_in_the_reports():
    """The main, peers, co-regularization and incomplete-views reports state verdicts only through this module:
    no verdict written as fixed text, no uncorrected "p < 0.05" column, no package default restated by hand."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    files = ["src/mvl/workflow/report.py", "src/mvl/workflow/peers.py", "notebooks/report.py",
             "notebooks/peers_report.py", "src/mvl/workflow/coreg_report.py", "notebooks/coreg_report.py",
             "src/mvl/workflow/incomplete.py", "notebooks/incomplete_report.py"]
    words = ("beats", "far below", "far above", "significant difference", "unlabelled data help.",
             "unlabelled data hurt.", "earlier measurement", "is reversed", "holds with", '"p < 0.05"',
             "0: the package default")
    found = [(f, w) for f in files for w in words if w in (root / f).read_text(encoding="utf-8").lower()]
    assert found == []
