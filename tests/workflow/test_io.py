"""Atomic writes, checksum sidecars and the detection of corrupted outputs (mvl.workflow.io)."""

import hashlib
import io as _stdio
import json
import shutil
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from mvl.workflow import io


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write_all(root):
    """One output of every kind the workflow writes, each with its sidecar."""
    out = {
        "npz": root / "kernels" / "seed0" / "fou.npz",
        "json": root / "splits" / "seed0.json",
        "csv": root / "results.csv",
        "rows": root / "runs" / "u0" / "l1" / "mvl_ls" / "seed0.csv",
        "prep": root / "prepared" / "part0.npz",
    }
    # the chain of the workflow: split -> kernel -> run -> results; the prepared data stand alone
    io.save_json(out["json"], {"pool": [1, 2], "test": [0]}, checksum=True)
    io.save_npz(out["npz"], checksum=True, inputs=[out["json"]], K_pool=np.eye(3), K_test=np.ones((2, 3)))
    io.save_rows_csv(out["rows"], [{"method": "mvl_ls", "accuracy": 0.75}], checksum=True,
                     inputs=[out["json"], out["npz"]])
    io.save_csv(out["csv"], pd.DataFrame({"a": [1, 2], "b": [0.5, 0.25]}), checksum=True, inputs=[out["rows"]])
    io.save_npz(out["prep"], checksum=True, y=np.arange(3))
    return out


def test_every_writer_records_the_sha256_in_a_sidecar(tmp_path):
    out = _write_all(tmp_path)
    for path in out.values():
        side = io.sidecar_path(path)
        assert side == path.with_name(path.name + ".sha256")
        assert side.read_text().splitlines()[0] == f"{_sha(path)}  {path.name}"  # sha256sum format
        assert io.verify_file(path) is True
    # the inputs follow, with their digests, relative to the output's folder
    assert io.sidecar_path(out["rows"]).read_text().splitlines()[1:] == [
        f"{_sha(out['json'])}  ../../../../splits/seed0.json", f"{_sha(out['npz'])}  ../../../../kernels/seed0/fou.npz"]
    assert io.sidecar_path(out["prep"]).read_text() == f"{_sha(out['prep'])}  part0.npz\n"
    # nothing else left behind: no temporaries of the files or of their sidecars
    names = sorted(p.name for p in tmp_path.rglob("*") if p.is_file())
    assert not [n for n in names if n.startswith(".")]
    assert len(names) == 10


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="no sha256sum")
def test_sidecar_is_checked_by_sha256sum(tmp_path):
    """`sha256sum -c <file>.sha256` in the file's folder checks the file and that its inputs are unchanged."""
    out = _write_all(tmp_path)

    def check(path):
        return subprocess.run(["sha256sum", "-c", io.sidecar_path(path).name], cwd=path.parent,
                              capture_output=True, text=True, check=False)

    for path in out.values():
        proc = check(path)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    io.save_json(out["json"], {"pool": [1], "test": [0, 2]}, checksum=True)  # an input recomputed differently
    proc = check(out["rows"])
    assert proc.returncode == 1 and "splits/seed0.json: FAILED" in proc.stdout


def test_no_sidecar_by_default_and_a_stale_one_is_removed(tmp_path):
    target = tmp_path / "out.json"
    io.save_json(target, {"a": 1})
    assert not io.sidecar_path(target).exists() and io.verify_file(target) is None
    io.save_json(target, {"a": 2}, checksum=True)
    assert io.verify_file(target) is True
    # rewritten without checksum (e.g. by a caller that does not record one): the old sidecar would lie
    io.save_json(target, {"a": 3})
    assert not io.sidecar_path(target).exists()
    assert io.verify_outputs(tmp_path) == [] and json.loads(target.read_text()) == {"a": 3}


def test_rewrite_updates_the_sidecar_and_failure_keeps_the_old_pair(tmp_path):
    target = tmp_path / "k.npz"
    io.save_npz(target, checksum=True, K=np.zeros(4))
    old = (target.read_bytes(), io.sidecar_path(target).read_text())
    with pytest.raises(KeyboardInterrupt):
        with io.atomic_path(target, checksum=True) as tmp:
            np.savez(tmp, K=np.ones(4))
            assert io.verify_file(target) is True  # the old pair stays consistent while the new one is written
            raise KeyboardInterrupt
    assert (target.read_bytes(), io.sidecar_path(target).read_text()) == old
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.npz", "k.npz.sha256"]
    io.save_npz(target, checksum=True, K=np.ones(4))
    assert io.verify_file(target) is True and io.sidecar_path(target).read_text() != old[1]
    np.testing.assert_array_equal(np.load(target)["K"], np.ones(4))


def _flip_byte(path, offset):
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x01
    path.write_bytes(bytes(data))


def test_verify_outputs_removes_corrupted_files_and_reports_them(tmp_path):
    out = _write_all(tmp_path)
    untouched = tmp_path / "logs" / "run.log"  # no sidecar: never read, never removed
    untouched.parent.mkdir()
    untouched.write_text("log")
    out["rows"].write_text(out["rows"].read_text().replace("0.75", "0.76"))  # a changed digit
    with open(out["prep"], "r+b") as fh:  # truncated
        fh.truncate(5)
    stderr = _stdio.StringIO()
    bad = io.verify_outputs(tmp_path, stream=stderr)
    # the results table was computed from the corrupted run CSV: removed too, so that it is recomputed
    assert bad == sorted([out["rows"], out["prep"], out["csv"]])
    for path in bad:
        assert not path.exists() and not io.sidecar_path(path).exists()
    assert stderr.getvalue().splitlines() == [
        f"corrupted, will be recomputed: {out['prep']}", f"corrupted, will be recomputed: {out['rows']}",
        f"downstream of a corrupted file, will be recomputed: {out['csv']}"]
    for key in ("json", "npz"):  # upstream of the corrupted file: kept
        assert io.verify_file(out[key]) is True
    assert untouched.read_text() == "log"
    # a second pass finds nothing
    assert io.verify_outputs(tmp_path, stream=stderr) == [] and len(stderr.getvalue().splitlines()) == 3


def test_verify_outputs_removes_everything_downstream(tmp_path):
    out = _write_all(tmp_path)
    _flip_byte(out["npz"], len(out["npz"].read_bytes()) // 2)  # a flipped bit inside the array data
    stderr = _stdio.StringIO()
    assert io.verify_outputs(tmp_path, remove=False, stream=stderr) == sorted([out["npz"], out["rows"], out["csv"]])
    assert all(p.exists() for p in out.values())  # remove=False only reports
    assert stderr.getvalue().splitlines()[0] == f"corrupted: {out['npz']}"
    assert io.verify_outputs(tmp_path) == sorted([out["npz"], out["rows"], out["csv"]])
    assert sorted(p for p in out.values() if p.exists()) == sorted([out["json"], out["prep"]])


def test_verify_outputs_truncated_npz(tmp_path):
    target = tmp_path / "kernels" / "fac.npz"
    io.save_npz(target, checksum=True, K_pool=np.random.default_rng(0).normal(size=(50, 50)))
    size = target.stat().st_size
    with open(target, "r+b") as fh:
        fh.truncate(size // 2)
    assert io.verify_file(target) is False
    assert io.verify_outputs(tmp_path) == [target] and not target.exists()


def test_verify_outputs_stale_and_malformed_sidecars(tmp_path):
    out = _write_all(tmp_path)
    out["csv"].unlink()  # the file vanished, its sidecar remained
    io.sidecar_path(out["json"]).write_text("not a checksum\n")  # malformed: the file cannot be trusted
    stderr = _stdio.StringIO()
    bad = io.verify_outputs(tmp_path, stream=stderr)
    # the malformed sidecar's file is corrupted for all we know, and so is what was computed from it; a file
    # that vanished is not corruption: its stale sidecar goes, nothing downstream does
    assert bad == sorted([out["csv"], out["json"], out["npz"], out["rows"]])
    assert not io.sidecar_path(out["csv"]).exists() and not out["json"].exists()
    assert f"missing, stale checksum sidecar removed: {out['csv']}" in stderr.getvalue()
    assert f"corrupted, will be recomputed: {out['json']}" in stderr.getvalue()


def test_vanished_file_does_not_remove_downstream(tmp_path):
    out = _write_all(tmp_path)
    out["npz"].unlink()  # e.g. deleted by hand to save space: what was computed from it stays valid
    assert io.verify_outputs(tmp_path) == [out["npz"]]
    assert not io.sidecar_path(out["npz"]).exists()
    assert all(io.verify_file(out[k]) is True for k in ("json", "rows", "csv", "prep"))


def test_verify_outputs_check_only_and_edge_cases(tmp_path):
    assert io.verify_outputs(tmp_path / "absent") == []
    out = _write_all(tmp_path)
    # temporaries of an interrupted sidecar write (".<name>.*") are not sidecars
    (tmp_path / ".results.csv.sha256.abc.tmp").write_text("0" * 64)
    (tmp_path / ".orphan.sha256").write_text("0" * 64)
    out["csv"].write_text("a,b\n1,0.5\n")  # the last output of the chain: nothing downstream
    stderr = _stdio.StringIO()
    assert io.verify_outputs(tmp_path, remove=False, stream=stderr, workers=1) == [out["csv"]]
    assert out["csv"].exists() and io.sidecar_path(out["csv"]).exists()
    assert stderr.getvalue() == f"corrupted: {out['csv']}\n"
    proc = subprocess.run([sys.executable, "-m", "mvl.workflow.io", str(tmp_path)], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 1 and f"corrupted, will be recomputed: {out['csv']}" in proc.stderr
    assert not out["csv"].exists()
    proc = subprocess.run([sys.executable, "-m", "mvl.workflow.io", "--check-only", str(tmp_path)], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0 and proc.stderr == ""
