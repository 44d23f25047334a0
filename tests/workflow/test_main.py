"""The main study's steps (mvl.workflow.main): the run tables collected into one and the summary over splits."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mvl.workflow import io
from mvl.workflow.main import SUMMARY_KEYS, write_collected, write_dataset, write_summary
from mvl.workflow.settings import DataSpec


def _run(split, accuracy, gamma_B=0.0, gamma_choice="configured"):
    return dict(dataset="toy", method="mvl_ls", views="a+b", n_views=2, setting="semi", l_c=1, u_c=5,
                graph="dense", gamma_choice=gamma_choice, gamma_B=gamma_B, gamma_W=0.0, split=split,
                accuracy=accuracy)


def test_collected_tables_keep_every_row_and_record_their_inputs(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    pd.DataFrame([_run(0, 0.5)]).to_csv(a, index=False)
    pd.DataFrame([_run(1, 0.7), _run(2, 0.9)]).to_csv(b, index=False)
    write_collected([a, b], tmp_path / "results.csv")
    table = pd.read_csv(tmp_path / "results.csv")
    assert table["split"].tolist() == [0, 1, 2]
    assert "a.csv" in (tmp_path / "results.csv.sha256").read_text()
    io.verify_file(tmp_path / "results.csv")


def test_summary_groups_by_run_keys_and_keeps_gamma_cells_apart(tmp_path):
    rows = [_run(s, acc) for s, acc in enumerate((0.5, 0.7, 0.9))] + [_run(0, 0.2, gamma_B=1e-6)]
    rows += [_run(s, 0.6, gamma_B=1e-6 * s, gamma_choice="selected") for s in range(2)]
    pd.DataFrame(rows).to_csv(tmp_path / "results.csv", index=False)
    write_summary(tmp_path / "results.csv", tmp_path / "summary.csv")
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert set(SUMMARY_KEYS) <= set(summary.columns)
    configured = summary[summary["gamma_choice"] == "configured"].set_index("gamma_B_on")
    assert configured.loc[False, "mean"] == pytest.approx(0.7) and configured.loc[False, "n_splits"] == 3
    assert configured.loc[False, "std"] == pytest.approx(np.std([0.5, 0.7, 0.9], ddof=1))
    assert configured.loc[True, "n_splits"] == 1
    selected = summary[summary["gamma_choice"] == "selected"]
    assert len(selected) == 1 and selected["n_splits"].iloc[0] == 2  # selected gammas: one group over splits


def test_write_dataset_keeps_the_chosen_views_and_rejects_unknown_ones(tmp_path):
    spec = DataSpec(dataset="mfeat", source="mfeat", views=("fou", "mor"), protocol=None, kernel=None,
                    n_val_per_class=5, u_max=5)
    write_dataset(spec, tmp_path / "mfeat.npz")
    with np.load(tmp_path / "mfeat.npz") as npz:
        assert npz["view_names"].tolist() == ["fou", "mor"] and npz["view_mor"].shape == (2000, 6)
        assert npz["y"].shape == (2000,)
    with pytest.raises(ValueError, match=r"views \['nope'\] are not in source 'mfeat'"):
        write_dataset(spec._replace(views=("nope",)), tmp_path / "bad.npz")
