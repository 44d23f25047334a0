"""The workflow's units (mvl.workflow.runner): which runs a job holds, and what it writes."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mvl.data.embedded import load_mfeat
from mvl.workflow.experiments import run_method, select_gammas
from mvl.data.protocols import stratified_split
from mvl.workflow.methods import FAMILIES, method
from mvl.workflow.runner import _all_tasks, run_params, run_unit, split_kernels, unit_cost, unit_tasks

SETTINGS = dict(
    source="mfeat", views=["fou", "kar"], protocol={"type": "random", "n_test_per_class": 10},
    kernel={"type": "gaussian", "bandwidth": "median", "standardize": True}, seeds=[0], n_val_per_class=2,
    labels_per_class=[1, 3], unlabelled_per_class=[2], graph={"laplacian": "normalized", "n_neighbors": None,
    "laplacian_power": 1, "weights": "kernel", "select": {"n_neighbors": [4], "laplacian_power": [2]}},
    gammas={"A": 1e-5, "B": 1e-6, "W": 1e-6}, grid={"A": [1e-5, 1e-3], "B": [0.0, 1e-6], "W": [0.0, 1e-2]},
    grid_labels_per_class=3, ablation={"labels_per_class": [1], "unlabelled_per_class": [2],
    "methods": ["mvl_ls_ablation_cvgraph", "mvl_svm_ablation"]}, svc_C=1.0,
    optc={"labels_per_class": [1], "iterations": [2], "n_restarts": 2},
    comparison={"labels_per_class": [3], "methods": ["perceptron_orth", "mvl_ls"]},
)


def test_units_partition_the_runs_of_a_split():
    every = _all_tasks(SETTINGS)
    assert len(every) == len(set(every))  # mvl_ls of the comparison coincides with the sweep's: listed once
    parts = [unit_tasks(SETTINGS, f) for f in FAMILIES]
    assert sorted(sum(parts, [])) == sorted(every)
    assert all(method(m).family == f for f, part in zip(FAMILIES, parts, strict=True) for _, _, m in part)
    assert ("mvl_ls_optc2" in {m for _, _, m in parts[2]}) and unit_tasks(SETTINGS, "comparison") == [
        (3, 0, "perceptron_orth")]
    assert unit_cost(SETTINGS, "ls", lambda lc, uc: 10 * (lc + uc + 2)) > 0
    with pytest.raises(ValueError, match="unknown family"):
        unit_tasks(SETTINGS, "nope")


def test_unit_rows_equal_separate_runs(tmp_path):
    """A unit (one process, kernels and selection shared) writes the rows that separate runs give."""
    ds = load_mfeat()
    keep = np.flatnonzero(np.isin(np.arange(2000) % 200, np.arange(20)))  # 20 digits per class
    path = tmp_path / "dataset.npz"
    np.savez(path, y=ds.y[keep], view_fou=ds.views[0][keep], view_kar=ds.views[2][keep])
    out = tmp_path / "ls.csv"
    rows = run_unit(SETTINGS, "mfeat", 0, "ls", str(path), str(out), log=lambda _: None)
    assert out.exists() and (tmp_path / "ls.csv.sha256").exists()
    assert len(pd.read_csv(out)) == len(rows)
    data = np.load(path)
    split = stratified_split(data["y"], 10, seed=0)
    K = [split_kernels(data, split, v, SETTINGS["kernel"]) for v in ("fou", "kar")]
    Kp, Kt = np.stack([k[0] for k in K], axis=-1), np.stack([k[1] for k in K], axis=-1)
    params = run_params(SETTINGS)
    # the unit selects once at l_c = grid_labels_per_class = 3 and keeps the choice for l_c = 1 (Section 7.3)
    sel = select_gammas(Kp, Kt, data["y"], split, 3, 2, params)
    ref = run_method("mvl_ls_cvgraph", Kp, Kt, data["y"], split, 1, 2, params, ["fou", "kar"], dataset="mfeat",
                     selected=sel)
    got = [r for r in rows if r["method"] == "mvl_ls_cvgraph" and r["l_c"] == 1]
    assert len(got) == 1 and got[0]["selected_at_l_c"] == 3
    for key in ("accuracy", "gamma_A", "gamma_B", "gamma_W", "graph_used"):
        assert got[0][key] == ref[0][key], key
    view = [r for r in rows if r["method"] == "view_kar" and r["l_c"] == 3 and r["u_c"] == 0]
    one = run_method("view_kar", Kp[..., 1:2], Kt[..., 1:2], data["y"], split, 3, 0, params, ["kar"], dataset="mfeat")
    assert view[0]["accuracy"] == one[0]["accuracy"]
