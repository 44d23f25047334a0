"""Results regression: compare an aggregated summary with committed expected values.

CI runs the workflow's CI profile and then ``python -m mvl.workflow.cli check --summary ... --expected ...``;
any group whose mean (or std) accuracy drifts by more than ``atol`` from ``results/expected/``, or
that is missing on either side, fails the check with a readable table. ``make refresh-expected``
rewrites the expected files on purpose (see the README). No paper section (reproducibility check).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

__all__ = ["KEYS", "compare_summaries"]

KEYS = ["dataset", "method", "views", "setting", "l_c", "u_c", "graph", "gamma_choice", "gamma_B_on", "gamma_W_on",
        "ablation_cell"]


def compare_summaries(actual, expected, atol=0.01, columns=("mean", "std")):
    """Rows (one per group) that drift or are missing; an empty frame means the check passes.

    ``actual``/``expected``: summary tables (``mvl.workflow.cli aggregate``) as DataFrames or CSV paths.
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
