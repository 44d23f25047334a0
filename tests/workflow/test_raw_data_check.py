"""The workflow's parse-time check of the raw data: a corrupted file in the mirror stops the run before any job,
with the DataIntegrityError's one line (file, path, both checksums) and no traceback."""

from __future__ import annotations

import hashlib
import json
import os
import shutil

import pytest
from conftest import copy_workflow, run_snakemake


@pytest.fixture(scope="module")
def workflow_copy(tmp_path_factory):
    return copy_workflow(tmp_path_factory.mktemp("wf"))


@pytest.mark.parametrize("how", ["truncated", "flipped"])
def test_corrupted_mirror_file_stops_the_workflow_before_any_job(workflow_copy, tmp_path, shared_data, how):
    mirror = tmp_path / "mirror"
    shutil.copytree(shared_data / "ssl_benchmarks", mirror / "ssl_benchmarks",
                    ignore=shutil.ignore_patterns("chapelle_ssl_book"))
    bad = mirror / "ssl_benchmarks" / "g50c.mat"
    data = bytearray(bad.read_bytes())
    if how == "truncated":
        data = data[: len(data) // 2]
    else:
        data[len(data) // 2] ^= 0x01
    bad.write_bytes(bytes(data))
    expected = hashlib.sha256((shared_data / "ssl_benchmarks" / "g50c.mat").read_bytes()).hexdigest()
    got = hashlib.sha256(bytes(data)).hexdigest()
    config = {"data": {"mirror": str(mirror), "offline": True, "cache_dir": str(tmp_path / "cache")},
              "coreg": {"datasets": ["g50c"], "seeds": [0]}}
    args = ["-n", "--cores", "1", "--config"] + [f"{k}={json.dumps(v).replace(chr(34), '')}" for k, v in config.items()]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MVL_")}
    proc = run_snakemake(*args, cwd=workflow_copy, env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert "Raw data corrupted; no job was started." in out and "Traceback" not in out
    line = next(t for t in out.splitlines() if t.startswith("ssl_benchmarks/g50c.mat: sha256 checksum mismatch"))
    assert f"expected {expected}, got {got}" in line and f"The file in data_mirror ({bad})" in line
    assert not (workflow_copy / "results").exists() and not (tmp_path / "cache").exists()
    bad.write_bytes((shared_data / "ssl_benchmarks" / "g50c.mat").read_bytes())  # repaired: the plan is made
    again = run_snakemake(*args, cwd=workflow_copy, env=env)
    assert again.returncode == 0, (again.stdout + again.stderr)[-3000:]


def _flipped_copy(src, dest):
    """A copy of ``src`` at ``dest`` with one byte in the middle flipped; (expected, got) sha256."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    data = bytearray(src.read_bytes())
    data[len(data) // 2] ^= 0x01
    dest.write_bytes(bytes(data))
    return hashlib.sha256(src.read_bytes()).hexdigest(), hashlib.sha256(bytes(data)).hexdigest()


@pytest.mark.parametrize("study", ["datasets", "incomplete"])
def test_corrupted_file_of_an_embedded_source_stops_the_workflow_before_any_job(workflow_copy, tmp_path,
                                                                                shared_data, study):
    """mvmnist downloads its file: a byte flipped in the mirror's copy stops the main study (dataset rule) and the
    incomplete-views study (every run job loads it) at parse time, not in a job's traceback."""
    mirror = tmp_path / "mirror"
    rel = "multiview_mnist/multiview_mnist.hdf5"
    expected, got = _flipped_copy(shared_data / rel, mirror / rel)
    (workflow_copy / "config" / "mvmnist.yaml").write_text(
        "datasets: [mvmnist]\n"
        "dataset_settings:\n  mvmnist:\n    source: mvmnist\n    views: [view0, view1]\n"
        "    protocol: {type: random, n_test_per_class: 20}\n    kernel: {type: rbf}\n"
        if study == "datasets" else "datasets: []\nincomplete: {datasets: [mvmnist], seeds: [0]}\n")
    data = f"data={{mirror: {mirror}, offline: true, cache_dir: {tmp_path / 'cache'}}}"
    args = ["-n", "--cores", "1", "--configfile", "config/mvmnist.yaml", "--config", data, "coreg={datasets: []}",
            "peers={datasets: [mfeat]}"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MVL_")}
    proc = run_snakemake(*args, cwd=workflow_copy, env=env)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out[-3000:]
    assert "Raw data corrupted; no job was started." in out and "Traceback" not in out
    line = next(t for t in out.splitlines() if t.startswith(f"{rel}: sha256 checksum mismatch"))
    assert f"expected {expected}, got {got}" in line and f"The file in data_mirror ({mirror / rel})" in line
    assert not (workflow_copy / "results").exists() and not (tmp_path / "cache").exists()


def test_download_check_names_a_corrupted_file_also_when_others_are_missing(tmp_path, capsys, shared_data,
                                                                            monkeypatch):
    """Flowers-17's distance matrices are not in the mirror: the check still verifies the splits file it has and
    names it (both md5) before the list of missing files, instead of stopping at the missing ones."""
    from mvl.data import download

    for var in (download.ENV_MIRROR, download.ENV_CACHE, download.ENV_OFFLINE):
        monkeypatch.delenv(var, raising=False)
    mirror = tmp_path / "mirror"
    rel = "flowers17/datasplits.mat"
    _flipped_copy(shared_data / rel, mirror / rel)
    argv = ["check", "flowers17", "--data-mirror", str(mirror), "--offline", "--cache-dir", str(tmp_path / "cache")]
    assert download.main(argv) == 1
    err = capsys.readouterr().err
    expected = hashlib.md5((shared_data / rel).read_bytes()).hexdigest()
    got = hashlib.md5((mirror / rel).read_bytes()).hexdigest()
    first, *rest = err.splitlines()
    assert first.startswith(f"error: {rel}: md5 checksum mismatch: expected {expected}, got {got}")
    assert "Besides, 2 data file(s) needed for flowers17 are missing" in err
    assert "flowers17/distancematrices17gcfeat06.mat" in err
    shutil.copy(shared_data / rel, mirror / rel)  # repaired: only the missing files are reported
    assert download.main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: 2 data file(s) needed for flowers17 are missing") and "checksum" not in err
