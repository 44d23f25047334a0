"""The embedded data (mvl.data.embedded): UCI Multiple Features as shipped, checked against its published files."""

import hashlib
from pathlib import Path

import numpy as np
import pytest

from mvl.data import embedded as datasets

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data" / "mfeat"


def test_load_mfeat_shapes_and_labels():
    ds = datasets.load_mfeat()
    assert ds.view_names == ("fou", "fac", "kar", "pix", "zer", "mor")
    assert [X.shape for X in ds.views] == [(2000, 76), (2000, 216), (2000, 64), (2000, 240), (2000, 47), (2000, 6)]
    assert np.array_equal(np.bincount(ds.y), np.full(10, 200))
    assert np.array_equal(ds.y, np.repeat(np.arange(10), 200))  # class-major, original order
    assert all(X.dtype == np.float64 and np.all(np.isfinite(X)) for X in ds.views)


def test_embedded_copy_equals_shared_data():
    """The embedded files decompress to the published CSVs (checksums of ../shared/data/SHA256SUMS)."""
    if not SHARED.exists():
        pytest.skip(f"reference data folder {SHARED} not present (it is in CI)")
    sums = dict(reversed(line.split()) for line in (SHARED.parent / "SHA256SUMS").read_text().splitlines()
                if "mfeat" in line)
    shipped = dict(reversed(line.split()) for line in
                   (Path(datasets.__file__).parent / "mfeat" / "SHA256SUMS").read_text().splitlines())
    assert {f"./mfeat/{k}": v for k, v in shipped.items()} == sums
    # the real CSV parses to the same numbers
    ref = np.loadtxt(SHARED / "mfeat-zer.csv", delimiter=",", skiprows=1)
    ds = datasets.load_mfeat(["zer"])
    np.testing.assert_array_equal(ds.views[0], ref[:, :-1])
    raw = (SHARED / "mfeat-zer.csv").read_bytes()
    assert hashlib.sha256(raw).hexdigest() == shipped["mfeat-zer.csv"]


def test_load_mfeat_subset_and_unknown_view():
    ds = datasets.load_mfeat(["mor", "fou"])
    assert ds.view_names == ("mor", "fou") and ds.views[0].shape[1] == 6
    with pytest.raises(ValueError, match="unknown mfeat view"):
        datasets.load_mfeat(["xyz"])


def test_corrupted_embedded_file_is_detected(tmp_path, monkeypatch):
    import lzma
    from importlib import resources

    folder = tmp_path / "mvl" / "data" / "mfeat"
    folder.mkdir(parents=True)
    real = resources.files("mvl").joinpath("data", "mfeat")
    folder.joinpath("SHA256SUMS").write_text(real.joinpath("SHA256SUMS").read_text())
    raw = lzma.decompress(real.joinpath("mfeat-mor.csv.xz").read_bytes())
    folder.joinpath("mfeat-mor.csv.xz").write_bytes(lzma.compress(raw[:-100]))  # truncated
    monkeypatch.setattr(datasets.resources, "files", lambda pkg: tmp_path / "mvl")
    with pytest.raises(ValueError, match="corrupted"):
        datasets.load_mfeat(["mor"])
