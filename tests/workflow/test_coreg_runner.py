"""The co-regularization runs' statistics over seeds (mvl.workflow.coreg_runner): means over the selected rows and
the paired t-test of MR against CoMR. The runs themselves are tested against the solvers in tests/test_coreg.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mvl.workflow.coreg_runner import paired_ttest, summarize


def _rows():
    rng = np.random.default_rng(0)
    rows = []
    for seed in range(5):
        for method, shift in (("MR", 2.0), ("CoMR", 0.0)):
            err = 10.0 + shift + rng.normal()
            rows.append(dict(dataset="lines", seed=seed, method=method, selected=True, test_error=err,
                             unlabelled_error=err - 1.0))
            rows.append(dict(dataset="lines", seed=seed, method=method, selected=False, test_error=99.0,
                             unlabelled_error=99.0))  # a grid row not chosen on validation: never counted
    return pd.DataFrame(rows)


def test_summarize_averages_the_selected_rows_per_method():
    rows = _rows()
    s = summarize(rows).set_index("method")
    sel = rows[rows["selected"]]
    for method in ("MR", "CoMR"):
        errs = sel.loc[sel["method"] == method, "test_error"]
        assert s.loc[method, "test_error_mean"] == pytest.approx(errs.mean())
        assert s.loc[method, "test_error_std"] == pytest.approx(errs.std(ddof=1))
        assert s.loc[method, "test_error_count"] == 5


def test_paired_ttest_matches_scipy_and_rejects_duplicate_seeds():
    rows = _rows()
    t = paired_ttest(rows).iloc[0]
    sel = rows[rows["selected"]].pivot(index="seed", columns="method", values="test_error")
    ref = stats.ttest_rel(sel["MR"], sel["CoMR"])
    assert t["t"] == pytest.approx(ref.statistic) and t["p_value"] == pytest.approx(ref.pvalue)
    assert t["n"] == 5 and t["significant"] == (ref.pvalue < 0.05)
    with pytest.raises(ValueError, match="more than one row per seed and method"):
        paired_ttest(pd.concat([rows, rows[rows["selected"]].head(1)]))
