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
