"""The workflow's units (mvl.workflow.runner) and the settings they receive (mvl.workflow.settings): which runs a
job holds, what it writes, what it reads."""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd
import pytest

from mvl.data.embedded import load_mfeat
from mvl.data.protocols import stratified_split
from mvl.workflow import methods as registry
from mvl.workflow import report as R
from mvl.workflow.experiments import run_method, select_gammas
from mvl.workflow.methods import FAMILIES, Method, method
from mvl.workflow.runner import run_unit, split_kernels
from mvl.workflow.settings import GraphSpec, SettingsError, dataset_settings

SETTINGS = dict(
    source="mfeat", views=["fou", "kar"], protocol={"type": "random", "n_test_per_class": 10},
    kernel={"type": "rbf", "bandwidth": "median", "standardize": True}, seeds=[0], n_val_per_class=2,
    labels_per_class=[1, 3], unlabelled_per_class=[2], graph={"laplacian": "normalized", "n_neighbors": None,
    "laplacian_power": 1, "weights": "kernel", "select": {"n_neighbors": [4], "laplacian_power": [2]}},
    gammas={"A": 1e-5, "B": 1e-6, "W": 1e-6}, grid={"A": [1e-5, 1e-3], "B": [0.0, 1e-6], "W": [0.0, 1e-2]},
    grid_labels_per_class=3, ablation={"labels_per_class": [1], "unlabelled_per_class": [2],
    "methods": ["mvl_ls_ablation_cvgraph", "mvl_svm_ablation"]}, svc_C=1.0,
    optc={"labels_per_class": [1], "iterations": [2], "n_restarts": 2},
    comparison={"labels_per_class": [3], "methods": ["perceptron_orth", "mvl_ls"]},
    methods={"supervised": ["mvl_ls", "mvl_svm", "svc_sum", "single_views"],
             "semi": ["mvl_ls", "mvl_ls_cv", "mvl_ls_cvgraph", "single_views"]},
)


def _settings(**over):
    s = copy.deepcopy(SETTINGS)
    s.update(over)
    return dataset_settings("mfeat", s)


@pytest.fixture(scope="module")
def small_mfeat(tmp_path_factory):
    """20 digits per class, two views, as the dataset npz of the workflow."""
    ds = load_mfeat()
    keep = np.flatnonzero(np.isin(np.arange(2000) % 200, np.arange(20)))
    path = tmp_path_factory.mktemp("data") / "dataset.npz"
    np.savez(path, y=ds.y[keep], view_fou=ds.views[0][keep], view_kar=ds.views[2][keep])
    return path


def test_units_partition_the_runs_of_a_split():
    ds = _settings()
    every = ds.tasks
    assert len(every) == len(set(every))  # mvl_ls of the comparison coincides with the sweep's: listed once
    parts = [ds.tasks_of(f) for f in FAMILIES]
    assert sorted(sum(parts, ())) == sorted(every)
    assert all(method(m).family == f for f, part in zip(FAMILIES, parts, strict=True) for _, _, m in part)
    assert ("mvl_ls_optc2" in {m for _, _, m in parts[2]}) and ds.tasks_of("comparison") == ((3, 0, "perceptron_orth"),)
    assert ds.unit_cost("ls", lambda lc, uc: 10 * (lc + uc + 2)) > 0
    with pytest.raises(ValueError, match="unknown family"):
        ds.tasks_of("nope")


def test_a_unit_holds_only_its_familys_settings():
    """Changing one family's settings changes only that family's unit (what rule run compares)."""
    base = _settings()
    assert base.unit("optc").run.grid is None and base.unit("optc").run.optc is not None
    assert base.unit("ls").run.optc is None and base.unit("ls").run.grid is not None
    assert base.unit("comparison").run.gammas is None and base.unit("comparison").run.comparison is not None
    changes = {
        "optc": dict(optc=dict(SETTINGS["optc"], n_restarts=5)),
        "comparison": dict(comparison=dict(SETTINGS["comparison"], perceptron_epochs=3)),
        "ls": dict(grid=dict(SETTINGS["grid"], A=[1e-4]), svc_C=2.0),
    }
    for family, over in changes.items():
        other = _settings(**over)
        for f in base.families:
            same = base.unit(f) == other.unit(f) and repr(base.unit(f)) == repr(other.unit(f))
            assert same == (f != family), (family, f)
    # the gammas are read by the LS, SVM and optC units, not by the related systems
    moved = _settings(gammas={"A": 1e-4, "B": 1e-6, "W": 1e-6})
    assert [f for f in base.families if base.unit(f) != moved.unit(f)] == ["ls", "svm", "optc"]


def test_config_names_are_checked_against_the_registries():
    with pytest.raises(SettingsError, match=r"dataset_settings.mfeat.methods.semi: unknown method 'mvl_lsx'"):
        _settings(methods={"supervised": ["mvl_ls"], "semi": ["mvl_lsx"]})
    with pytest.raises(SettingsError, match=r"ablation.methods: method 'mvl_ls' runs as 'fixed'"):
        _settings(ablation=dict(SETTINGS["ablation"], methods=["mvl_ls"]))
    with pytest.raises(SettingsError, match=r"comparison.methods: unknown method 'mvml_full_n0'"):
        _settings(comparison=dict(SETTINGS["comparison"], methods=["mvml_full_n0"]))
    with pytest.raises(SettingsError, match=r"source: unknown data source 'mfeet'"):
        _settings(source="mfeet")
    with pytest.raises(SettingsError, match="type random needs n_test_per_class"):
        _settings(protocol={"type": "random"})


def test_laplacian_power_from_config_to_estimator_and_report(small_mfeat, tmp_path, monkeypatch):
    """laplacian_power (and gamma_W) change form four times: config mapping -> GraphSpec / Gammas (settings)
    -> estimator keywords -> the rows' label, which the report shows. Checked on a real unit: the estimator
    receives every graph parameter explicitly, the rows and the report's settings table name p = 2."""
    from mvl.estimators import least_squares

    seen = []
    real = least_squares.MVLLeastSquares.fit

    def spy(self, X, y):
        seen.append(self.get_params())
        return real(self, X, y)

    monkeypatch.setattr(least_squares.MVLLeastSquares, "fit", spy)
    graph = dict(SETTINGS["graph"], n_neighbors=5, laplacian_power=2, weights="binary")
    ds = _settings(graph=graph, gammas={"A": 1e-5, "B": 1e-6, "W": 1e-3},
                   methods={"supervised": ["mvl_ls"], "semi": ["mvl_ls"]}, comparison=None)
    assert ds.run.graph == GraphSpec("normalized", 5, 2, "binary")
    rows = run_unit(ds.unit("ls"), 0, str(small_mfeat), str(tmp_path / "ls.csv"), log=lambda _: None)
    fixed = [p for p in seen if p["gamma_W"] == 1e-3]
    assert fixed and all(p["laplacian_power"] == 2 and p["n_neighbors"] == 5 and p["graph_weights"] == "binary"
                         and p["laplacian"] == "normalized" for p in fixed)
    assert {r["graph"] for r in rows if r["method"] == "mvl_ls"} == {"normalized-knn5bin-p2"}
    table = R.settings_table("mfeat", "mfeat", pd.DataFrame(rows), ds.report_settings().rows)
    text = " ".join(table["value"])
    assert "5-NN graph with binary edge weights, p = 2" in text and "gamma_W = 0.001" in text


def test_unit_rows_equal_separate_runs(small_mfeat, tmp_path):
    """A unit (one process, kernels and selection shared) writes the rows that separate runs give."""
    ds = _settings()
    out = tmp_path / "ls.csv"
    rows = run_unit(ds.unit("ls"), 0, str(small_mfeat), str(out), log=lambda _: None)
    assert out.exists() and (tmp_path / "ls.csv.sha256").exists()
    assert len(pd.read_csv(out)) == len(rows)
    data = np.load(small_mfeat)
    split = stratified_split(data["y"], 10, seed=0)
    K = [split_kernels(data, split, v, ds.data.kernel) for v in ("fou", "kar")]
    Kp, Kt = np.stack([k[0] for k in K], axis=-1), np.stack([k[1] for k in K], axis=-1)
    size = dict(n_val_per_class=ds.data.n_val_per_class, u_max=ds.data.u_max)
    # the unit selects once at l_c = grid_labels_per_class = 3 and keeps the choice for l_c = 1 (Section 7.3)
    sel = select_gammas(Kp, Kt, data["y"], split, 3, 2, ds.run, **size)
    ref = run_method("mvl_ls_cvgraph", Kp, Kt, data["y"], split, 1, 2, ds.run, ["fou", "kar"], **size,
                     dataset="mfeat", selected=sel)
    got = [r for r in rows if r["method"] == "mvl_ls_cvgraph" and r["l_c"] == 1]
    assert len(got) == 1 and got[0]["selected_at_l_c"] == 3
    for key in ("accuracy", "gamma_A", "gamma_B", "gamma_W", "graph_used"):
        assert got[0][key] == ref[0][key], key
    view = [r for r in rows if r["method"] == "view_kar" and r["l_c"] == 3 and r["u_c"] == 0]
    one = run_method("view_kar", Kp[..., 1:2], Kt[..., 1:2], data["y"], split, 3, 0, ds.run, ["kar"], **size,
                     dataset="mfeat")
    assert view[0]["accuracy"] == one[0]["accuracy"]


def test_a_toy_method_through_the_registry_alone(small_mfeat, tmp_path):
    """Adding a method that reuses an estimator is one registry entry: named in the config, run by the unit with
    its fixed estimator keywords, shown in the report's accuracy table with its label, in the registry's order."""
    toy = Method(name="mvl_ls_unnormalized", studies=("main",), family="ls",
                 label="MVL-LS, unnormalized Laplacian (toy)", estimator="MVLLeastSquares",
                 estimator_params={"laplacian": "unnormalized"}, color="C7", sections=("main",))
    registry.register(toy, before="mvl_svm")
    try:
        ds = _settings(methods={"supervised": ["mvl_ls", "mvl_svm", "mvl_ls_unnormalized"],
                                "semi": ["mvl_ls_unnormalized"]}, comparison=None)
        rows = run_unit(ds.unit("ls"), 0, str(small_mfeat), str(tmp_path / "ls.csv"), log=lambda _: None)
        rows += run_unit(ds.unit("svm"), 0, str(small_mfeat), str(tmp_path / "svm.csv"), log=lambda _: None)
        res = pd.DataFrame(rows)
        est = method("mvl_ls_unnormalized").make_estimator(ds.run)
        assert est.get_params()["laplacian"] == "unnormalized" and est.get_params()["laplacian_power"] == 1
        table = R.accuracy_table(res)
        labels = list(dict.fromkeys(table.index.get_level_values("method")))
        assert labels[:3] == ["MVL-LS", "MVL-LS, unnormalized Laplacian (toy)", "MVL-SVM"]
        toy_rows = res[res["method"] == "mvl_ls_unnormalized"]
        assert set(toy_rows["u_c"]) == {0, 2} and toy_rows["accuracy"].between(0, 1).all()
    finally:
        registry.REGISTRY.remove(toy)
    with pytest.raises(ValueError, match="unknown method 'mvl_ls_unnormalized'"):
        method("mvl_ls_unnormalized")
