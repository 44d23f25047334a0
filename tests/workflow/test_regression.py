"""The results-regression check (mvl.workflow.regression, `python -m mvl.workflow.regression`)."""

import subprocess
import sys

import pandas as pd
import pytest

from mvl.workflow.regression import compare_summaries


@pytest.fixture
def summary():
    return pd.DataFrame({
        "dataset": ["d"] * 3, "method": ["mvl_ls", "mvl_ls", "svc_sum"], "views": ["a+b"] * 3,
        "setting": ["supervised"] * 3, "l_c": [1, 5, 1], "u_c": [0, 0, 0], "graph": ["g"] * 3,
        "gamma_choice": ["fixed", "fixed", "svc_C=1.0"], "gamma_B_on": [True, True, False],
        "gamma_W_on": [True, True, False], "mean": [0.8, 0.9, 0.7], "std": [0.01, 0.02, float("nan")],
        "n_splits": [2, 2, 2]})


def test_identical_and_within_tolerance_pass(summary):
    assert compare_summaries(summary, summary).empty
    nudged = summary.assign(mean=summary["mean"] + 0.004)
    assert compare_summaries(nudged, summary, atol=0.005).empty


def test_drift_missing_and_new_groups_are_reported(summary):
    drifted = summary.copy()
    drifted.loc[1, "mean"] = 0.85
    bad = compare_summaries(drifted, summary, atol=0.01)
    assert len(bad) == 1 and bad.loc[0, "l_c"] == 5 and bad.loc[0, "problem"] == "drift > atol"
    assert bad.loc[0, "mean_diff"] == pytest.approx(0.05)
    bad = compare_summaries(summary.iloc[:2], summary)
    assert list(bad["problem"]) == ["missing in actual"] and bad.loc[0, "method"] == "svc_sum"
    bad = compare_summaries(summary, summary.iloc[:2])
    assert list(bad["problem"]) == ["not in expected"]
    nan_std = summary.copy()
    nan_std.loc[0, "std"] = float("nan")  # NaN on one side only is a drift
    assert len(compare_summaries(nan_std, summary)) == 1


def test_cli_exit_code_and_table(summary, tmp_path):
    exp, act = tmp_path / "expected.csv", tmp_path / "summary.csv"
    summary.to_csv(exp, index=False)
    summary.assign(mean=summary["mean"] - 0.1).to_csv(act, index=False)
    cmd = [sys.executable, "-m", "mvl.workflow.regression", "--summary", str(act), "--expected", str(exp)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 1
    assert "3 group(s)" in proc.stdout and "mean_expected" in proc.stdout and "make refresh-expected" in proc.stdout
    summary.to_csv(act, index=False)
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and "matches" in proc.stdout
