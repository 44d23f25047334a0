"""The run settings (mvl.workflow.settings): the shared settings of every data set, checked once, and the dispatch
of each study's config section to the study that parses it."""

from __future__ import annotations

import pytest
import yaml
from conftest import ROOT

from mvl.workflow import coreg_study, incomplete, peers, scale
from mvl.workflow.settings import STUDY_SECTIONS, SettingsError, dataset_settings, load_study


def test_files_settings_are_checked():
    base = dict(source="files", files={"views": {"a": "a.npy"}, "labels": "y.npy"},
                protocol={"type": "random", "n_test_per_class": 2}, kernel={"type": "rbf"}, seeds=[0],
                n_val_per_class=1, labels_per_class=[1], unlabelled_per_class=[1], graph={"laplacian": "normalized"},
                gammas={"A": 1e-5, "B": 0, "W": 0}, grid={"A": [1e-5], "B": [0], "W": [0]}, grid_labels_per_class=None,
                ablation={"labels_per_class": [], "unlabelled_per_class": []}, svc_C=1.0,
                optc={"labels_per_class": [], "iterations": [], "n_restarts": 1}, methods={"supervised": ["mvl_ls"]})
    ds = dataset_settings("mine", base)
    assert ds.data.views == ("a",) and ds.data.files.paths() == ["a.npy", "y.npy"]  # views default to the files'
    with pytest.raises(SettingsError, match=r"views: \['b'\] have no file"):
        dataset_settings("mine", dict(base, views=["a", "b"]))
    with pytest.raises(SettingsError, match="files.kernels: true needs kernel type precomputed"):
        dataset_settings("mine", dict(base, files=dict(base["files"], kernels=True)))


def _default_config():
    return yaml.safe_load((ROOT / "config" / "config.yaml").read_text())


def test_every_study_section_is_parsed_by_its_study():
    assert STUDY_SECTIONS == {"coreg": coreg_study.parse_settings, "scale": scale.parse_settings,
                              "peers": peers.parse_settings, "incomplete": incomplete.parse_settings}
    schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
    assert set(STUDY_SECTIONS) <= set(schema["properties"])
    study = load_study(_default_config())
    assert isinstance(study.coreg, coreg_study.CoregSettings) and isinstance(study.peers, peers.PeersSettings)
    assert isinstance(study.incomplete, incomplete.IncompleteSettings) and study.scale is None
    assert list(study.datasets) == ["mfeat"] and study["mfeat"].name == "mfeat"


def test_a_study_section_error_names_its_key():
    config = _default_config()
    config["peers"] = dict(config["peers"], methods=["mvl_ls", "nope"])
    with pytest.raises(SettingsError, match=r"peers.methods: unknown \['nope'\]"):
        load_study(config)


def test_a_listed_dataset_needs_its_settings():
    config = dict(_default_config(), datasets=["mfeat", "other"])
    with pytest.raises(SettingsError, match="dataset 'other' is listed in `datasets` but has no entry"):
        load_study(config)
