"""Results regression: compare an aggregated summary with committed expected values.

CI runs the workflow's CI profile and then ``python -m mvl.workflow.regression --summary ... --expected ...``;
any group whose mean (or std) accuracy drifts by more than ``atol`` from ``results/expected/``, or
that is missing on either side, fails the check with a readable table. ``make refresh-expected``
rewrites the expected files on purpose (see the README). No paper section (reproducibility check).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

__all__ = ["KEYS", "compare_summaries", "main"]

KEYS = ["dataset", "method", "views", "setting", "l_c", "u_c", "graph", "gamma_choice", "gamma_B_on", "gamma_W_on",
        "ablation_cell"]


def compare_summaries(actual, expected, atol=0.01, columns=("mean", "std")):
    """Rows (one per group) that drift or are missing; an empty frame means the check passes.

    ``actual``/``expected``: summary tables (:func:`mvl.workflow.main.write_summary`) as DataFrames or CSV paths.
    ``atol``: absolute tolerance on accuracy (fraction, e.g. 0.01 = one point), for every column.
    """
    a = pd.read_csv(actual) if not isinstance(actual, pd.DataFrame) else actual
    e = pd.read_csv(expected) if not isinstance(expected, pd.DataFrame) else expected
    keys = [k for k in KEYS if k in a.columns and k in e.columns]
    for name, frame in (("actual", a), ("expected", e)):
        dup = frame.duplicated(keys)
        if dup.any():
            raise ValueError(f"{name} summary has duplicated groups:\n{frame[dup][keys].to_string()}")
    m = e[keys + list(columns)].merge(a[keys + list(columns)], on=keys, how="outer",
                                      suffixes=("_expected", "_actual"), indicator=True)
    bad = m["_merge"] != "both"
    for c in columns:
        x, y = m[f"{c}_expected"].to_numpy(float), m[f"{c}_actual"].to_numpy(float)
        both_nan = np.isnan(x) & np.isnan(y)
        diff = np.where(both_nan, 0.0, np.abs(x - y))
        m[f"{c}_diff"] = diff
        bad |= ~(diff <= atol)  # NaN on one side only counts as drift
    out = m[bad].copy()
    out["problem"] = np.where(out["_merge"] == "left_only", "missing in actual",
                              np.where(out["_merge"] == "right_only", "not in expected", "drift > atol"))
    return out.drop(columns="_merge").reset_index(drop=True)


def main(argv=None):
    """``python -m mvl.workflow.regression --summary S --expected E [--atol A]``: exit 1 with a table of the
    groups that drift or are missing, 0 when the summary matches."""
    p = argparse.ArgumentParser(prog="python -m mvl.workflow.regression",
                                description="compare a summary with expected values (results regression)")
    p.add_argument("--summary", required=True, help="the summary.csv of a run")
    p.add_argument("--expected", required=True, help="the committed expected summary (results/expected/...)")
    p.add_argument("--atol", type=float, default=0.01, help="absolute tolerance on accuracies (default 0.01)")
    a = p.parse_args(argv)
    bad = compare_summaries(a.summary, a.expected, atol=a.atol)
    if len(bad):
        with pd.option_context("display.width", 200, "display.max_columns", 30, "display.max_rows", 500):
            print(f"[check] {len(bad)} group(s) of {a.summary} differ from {a.expected} (atol {a.atol}):")
            print(bad.to_string(index=False))
        print("If the change is intended, refresh the expected values: make refresh-expected")
        return 1
    print(f"[check] {a.summary} matches {a.expected} (atol {a.atol})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
