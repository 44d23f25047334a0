"""The co-regularization study's section and step (mvl.workflow.coreg_study)."""

from __future__ import annotations

import pandas as pd

from mvl.workflow import coreg_runner, coreg_study, io


def test_parse_settings_reads_datasets_and_seeds_and_an_empty_section_runs_nothing():
    s = coreg_study.parse_settings({"datasets": ["lines", "g50c"], "seeds": [0, 1, 2]})
    assert s == coreg_study.CoregSettings(datasets=("lines", "g50c"), seeds=(0, 1, 2))
    assert coreg_study.parse_settings(None) == coreg_study.parse_settings({}) == coreg_study.CoregSettings()


def test_write_coreg_writes_the_split_rows_with_a_sidecar(tmp_path, monkeypatch):
    calls = []

    def run_split(dataset, seed, data_dir=None, all_grid=False):
        calls.append((dataset, seed, data_dir, all_grid))
        return pd.DataFrame(dict(method=["MR", "CoMR"], graph_weights="binary", test_error=[12.0, 10.0],
                                 unlabelled_error=[11.0, 9.0], selected=[True, True]))

    monkeypatch.setattr(coreg_runner, "run_split", run_split)
    out = tmp_path / "runs" / "seed3.csv"
    coreg_study.write_coreg("lines", 3, out)
    assert calls == [("lines", 3, None, True)]  # LINES is generated: no data folder
    assert pd.read_csv(out)["test_error"].tolist() == [12.0, 10.0]
    io.verify_file(out)
