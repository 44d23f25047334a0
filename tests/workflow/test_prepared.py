"""Prepared paper data sets on disk (mvl.workflow.prepared): an npz read with allow_pickle=False that gives back
the loaded object field for field and draw for draw; a pickle or an object array in results/ is refused
without running any of it."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import paper_fixtures as pf
import pytest
import yaml
from conftest import ROOT

from mvl.data import download as dl
from mvl.data import paper as P
from mvl.workflow import io
from mvl.workflow import prepared as prep
from mvl.workflow.runner import unit_source
from mvl.workflow.settings import load_study


def _offline(tmp_path, fs):
    return dl.DataOptions(cache_dir=tmp_path / "cache", data_mirror=fs.root, offline=True, checksums=fs.checksums)


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """One object of each prepared class, loaded from format-faithful fixtures through the download path."""
    t = tmp_path_factory.mktemp("prep")
    fl = pf.write_flowers17(t / "fl")
    ca = pf.write_caltech101(t / "ca")
    cu = pf.write_cub(t / "cu", mirror_layout=True)
    n_cub = cu.expected["n"]
    H = np.random.default_rng(3).gamma(1.0, size=(n_cub, 9))
    np.savez(t / "image.npz", features=H)
    return {
        "flowers17": P.prepare("flowers17", dl.fetch("flowers17", _offline(t / "o1", fl)), ("hog", "hsv", "shapegc")),
        "caltech101": P.prepare("caltech101", dl.fetch("caltech101", _offline(t / "o2", ca)), P.CALTECH101_VIEWS_4,
                                part=1),
        "cub": P.prepare("cub", dl.fetch("cub", _offline(t / "o3", cu)), ("image", "attributes"),
                         image_view=t / "image.npz"),
    }


def _same(a, b):
    """Equal values of the same types, arrays with the same dtype, shape and bytes."""
    if isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes()
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
    elif isinstance(a, dict):
        assert type(b) is dict and list(a) == list(b)
        for k in a:
            assert type(k) is type(next(kk for kk in b if kk == k))
            _same(a[k], b[k])
    else:
        assert type(a) is type(b) and a == b


@pytest.mark.parametrize("name", ["flowers17", "caltech101", "cub"])
def test_round_trip_field_for_field_and_draw_for_draw(loaded, name, tmp_path):
    data = loaded[name]
    out = tmp_path / "prepared" / "part0.npz"
    prep.save_prepared(out, data)
    assert io.verify_file(out) is True  # with its sidecar
    with np.load(out, allow_pickle=False) as z:  # numbers and text only
        assert all(z[k].dtype != object for k in z.files)
    back = prep.load_prepared(out)
    assert type(back) is type(data)
    for f in dataclasses.fields(data):
        _same(getattr(data, f.name), getattr(back, f.name))
    for seed, lc, uc in [(1, 1, 0), (2, 2, 1)]:
        kw = dict(n_val_per_class=1, validation=True) if name == "caltech101" else {}
        d0, d1 = data.kernel_draw(seed, lc, uc, **kw), back.kernel_draw(seed, lc, uc, **kw)
        for f in dataclasses.fields(d0):
            _same(getattr(d0, f.name), getattr(d1, f.name))


class _Payload:
    """A pickle that creates a file when unpickled."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.mark.parametrize("name", ["part0.npz", "part0.pkl"])
def test_pickle_in_results_is_refused_and_not_executed(tmp_path, name):
    marker = tmp_path / "executed"
    bad = tmp_path / "results" / "flowers17" / "prepared" / name
    bad.parent.mkdir(parents=True)
    bad.write_bytes(pickle.dumps(_Payload(marker)))
    io.write_sidecar(bad)  # a matching checksum proves integrity, not origin
    with pytest.raises(prep.PreparedFileError, match="a pickle, which is never loaded"):
        prep.load_prepared(bad)
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    config["dataset_settings"].update(yaml.safe_load((ROOT / "config" / "paper.yaml").read_text())["dataset_settings"])
    study = load_study(dict(config, datasets=["flowers17"]))
    with pytest.raises(prep.PreparedFileError, match="Delete it and rerun the prepare step"):
        unit_source(study["flowers17"].data, 1, bad)
    assert not marker.exists()


def test_npz_with_object_array_or_unknown_class_is_refused(tmp_path):
    marker = tmp_path / "executed"
    obj = tmp_path / "obj.npz"
    np.savez(obj, __meta__=np.array("{}"), a0=np.array([_Payload(marker)], dtype=object))
    with pytest.raises(prep.PreparedFileError, match="allow_pickle"):
        prep.load_prepared(obj)
    assert not marker.exists()
    other = tmp_path / "other.npz"
    np.savez(other, __meta__=np.array('{"format": "mvl-prepared-1", "class": "os.system", "fields": {}}'))
    with pytest.raises(prep.PreparedFileError, match="class 'os.system'"):
        prep.load_prepared(other)
    with pytest.raises(TypeError, match="a prepared file holds one of"):
        prep.save_prepared(tmp_path / "x.npz", {"y": np.zeros(3)})
