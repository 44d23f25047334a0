"""The co-regularization experiment runner (:mod:`mvl.workflow.coreg_runner`): the paired t-test and summary, reduced
LINES and G50C splits (the kernel route against MVL-LS on the same split) and full splits near SR's published level."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import rel_diff
from coreg_reference import benchmark_dir, solve_mvl_by_objective
from scipy import stats

from mvl.coreg import GAMMA_GRID, coregularization_as_mvl, coregularization_rls
from mvl.data.published import load_published
from mvl.data.ssl_benchmarks import prepare_split
from mvl.workflow.coreg_runner import paired_ttest, run_split, summarize


@pytest.fixture(scope="module")
def data_dir():
    return benchmark_dir()


def test_paired_ttest_and_summary():
    rng = np.random.default_rng(0)
    a, b = rng.uniform(5, 10, 10), rng.uniform(1, 5, 10)
    rows = pd.DataFrame(
        [dict(dataset="x", seed=s, method="MR", test_error=a[s], unlabelled_error=a[s], selected=True)
         for s in range(10)]
        + [dict(dataset="x", seed=s, method="CoMR", test_error=b[s], unlabelled_error=b[s], selected=True)
           for s in range(10)])
    res = paired_ttest(rows)
    t, p = stats.ttest_rel(a, b)
    assert res.loc[0, "t"] == pytest.approx(t) and res.loc[0, "p_value"] == pytest.approx(p)
    assert bool(res.loc[0, "significant"]) == (p < 0.05)
    summ = summarize(rows).set_index("method")
    assert summ.loc["MR", "test_error_mean"] == pytest.approx(a.mean())
    assert summ.loc["MR", "test_error_std"] == pytest.approx(a.std(ddof=1))


def test_run_split_lines_reduced():
    """One reduced LINES split: tidy rows, one selected row per method, and both methods near-perfect."""
    df = run_split("lines", 0, sizes=(2, 200, 100, 100), grid=(1e-4, 1e-2, 1.0, 100.0))
    assert list(df["method"]) == ["MR", "CoMR"]
    for col in ("test_error", "unlabelled_error", "unlabelled_error_ambient", "validation_error", "validation_loss",
                "gamma1"):
        assert col in df
    assert (df["graph_weights"] == "binary").all()  # Table 4 has no sigma for LINES: binary weights only
    assert (df["test_error"] <= 10).all()
    full = run_split("lines", 0, sizes=(2, 200, 100, 100), grid=(1e-2, 1.0), all_grid=True)
    assert len(full) == 8 and full["selected"].sum() == 2
    pairs = list(zip(full["gamma1"], full["gamma2"], strict=True))
    assert pairs[:4] == [(1e-2, 1e-2), (1e-2, 1.0), (1.0, 1e-2), (1.0, 1.0)]  # grid order within a method
    every = run_split("lines", 0, sizes=(2, 200, 100, 100), grid=(1e-2, 1.0), coreg_on="all")
    assert (every["coreg_on"] == "all").all()
    # p (SR Table 4's name) is an alias of laplacian_power
    a = run_split("lines", 0, sizes=(2, 60, 30, 30), grid=(1e-2, 1.0), params={"p": 2}, all_grid=True)
    b = run_split("lines", 0, sizes=(2, 60, 30, 30), grid=(1e-2, 1.0), params={"laplacian_power": 2}, all_grid=True)
    c = run_split("lines", 0, sizes=(2, 60, 30, 30), grid=(1e-2, 1.0), all_grid=True)
    cols = ["validation_loss", "test_error", "unlabelled_error"]
    assert a[cols].equals(b[cols]) and not a["validation_loss"].equals(c["validation_loss"])
    with pytest.raises(ValueError, match="coreg_on"):
        run_split("lines", 0, sizes=(2, 20, 10, 10), coreg_on="labelled")
    with pytest.raises(ValueError, match="unknown parameter"):
        run_split("lines", 0, sizes=(2, 20, 10, 10), params={"sigmaa": 1.0})
    with pytest.raises(ValueError, match="sigma"):
        run_split("lines", 0, sizes=(2, 20, 10, 10), graph_weights="kernel")


def test_run_split_real_reduced_matches_mvl(data_dir):
    """A reduced G50C split runs under both graph weight conventions; CoMR predictions of the kernel route match
    MVL-LS on the same split."""
    grid = (1e-2, 1.0, 10.0)
    df = run_split("g50c", 0, data_dir, sizes=(50, 150, 100, 50), grid=grid)
    assert list(zip(df["graph_weights"], df["method"], strict=True)) == [("binary", "MR"), ("binary", "CoMR"),
                                                                          ("kernel", "MR"), ("kernel", "CoMR")]
    assert (df["test_error"] < 25).all() and (df["unlabelled_error"] < 25).all()
    full = run_split("g50c", 0, data_dir, sizes=(50, 150, 100, 50), grid=grid, all_grid=True)
    assert len(full) == 2 * 2 * 9
    assert (full.groupby(["graph_weights", "method"])["selected"].sum() == 1).all()
    cols = ["method", "graph_weights", "gamma1", "gamma2", "validation_error", "test_error", "unlabelled_error"]
    assert full[full["selected"]][cols].reset_index(drop=True).equals(df[cols])
    # the selected pair has the smallest validation error of its (method, graph_weights) group
    best = full.groupby(["graph_weights", "method"])["validation_error"].min()
    sel = full[full["selected"]].set_index(["graph_weights", "method"])["validation_error"]
    assert (sel.sort_index() == best.sort_index()).all()
    # one convention alone gives the same rows as within the shared run
    alone = run_split("g50c", 0, data_dir, sizes=(50, 150, 100, 50), grid=grid, all_grid=True,
                      params={"graph_weights": "heat"})
    assert (alone["graph_weights"] == "kernel").all()
    shared = full[full["graph_weights"] == "kernel"].reset_index(drop=True)
    assert alone[cols].equals(shared[cols])
    d = prepare_split("g50c", 0, data_dir, sizes=(50, 150, 100, 50))
    K1, K2, lab, Y = d["K1"], d["K2"], d["labelled"], d["Y_L"]
    fit = coregularization_rls(K1, K2, lab, Y, 1.0, 10.0, 1.0, K1_test=d["K1_eval"])
    inp = coregularization_as_mvl(K1, K2, 1.0, 10.0, 1.0, lab.size)
    w = np.ones(K1.shape[0])
    w[lab] = 0.0
    A = solve_mvl_by_objective(inp["K"], lab, Y, inp["c"], inp["gamma_A"], inp["gamma_B"], between_weights=w)
    assert rel_diff(d["K1_eval"] / 1.0 @ A[0], fit.test_ambient) <= 1e-7


def _published_test_errors(name):
    """SR Table 2: the published mean test errors (in %) of MR and CoMR on a benchmark (mvl.data.published)."""
    table = load_published("sindhwani2008_results")
    rows = table[(table["table"] == 2) & (table["error_type"] == "test") & (table["dataset"] == name.upper())]
    return tuple(float(rows.loc[rows["method"] == method, "mean"].item()) for method in ("MR", "CoMR"))


@pytest.mark.slow
@pytest.mark.parametrize("name", ["coil20", "g50c", "pcmac", "uspst"])
def test_one_full_split_near_published_level(name, data_dir):
    """One full-size split per benchmark (SR Table 1 sizes, full grid): test errors of the published order."""
    df = run_split(name, 0, data_dir, grid=GAMMA_GRID)
    for weights in ("binary", "kernel"):
        sel = df[df["graph_weights"] == weights].set_index("method")
        for method, published in zip(("MR", "CoMR"), _published_test_errors(name), strict=True):
            assert sel.loc[method, "test_error"] <= max(2.0 * published, published + 10.0), df


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
