"""Atomic writes, digests and redirected output (mvl.fileio) against hashlib, the file system and sys.stdout."""

from __future__ import annotations

import hashlib
import os
import sys

import pytest

from mvl.fileio import atomic_path, atomic_write_text, file_digest, redirected_output


@pytest.mark.parametrize("algorithm", ["sha256", "md5"])
def test_file_digest_is_hashlib_of_the_content(tmp_path, algorithm):
    path = tmp_path / "data.bin"
    content = os.urandom(3 * (1 << 20) + 17)  # more than one read block
    path.write_bytes(content)
    assert file_digest(path, algorithm) == hashlib.new(algorithm, content).hexdigest()


def test_atomic_write_text_creates_folders_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "a" / "b" / "out.txt"
    atomic_write_text(path, "première ligne\n")
    assert path.read_text(encoding="utf-8") == "première ligne\n"
    assert sorted(p.name for p in path.parent.iterdir()) == ["out.txt"]
    mask = os.umask(0)
    os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~mask  # what a plain open() gives


def test_atomic_path_keeps_the_old_file_when_the_block_fails(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")
    with pytest.raises(RuntimeError), atomic_path(path) as tmp:
        tmp.write_text("half written")
        raise RuntimeError("interrupted")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_atomic_path_calls_before_replace_on_the_finished_temporary_file(tmp_path):
    path = tmp_path / "out.txt"
    seen = []
    with atomic_path(path, before_replace=lambda p: seen.append((p.parent, p.read_text(), path.exists()))) as tmp:
        tmp.write_text("new")
    assert seen == [(tmp_path, "new", False)] and path.read_text() == "new"


def test_redirected_output_sends_stdout_and_stderr_to_the_log_and_restores_them(tmp_path):
    log = tmp_path / "run.log"
    before = sys.stdout, sys.stderr
    with redirected_output(log):
        print("to stdout")
        print("to stderr", file=sys.stderr)
    assert (sys.stdout, sys.stderr) == before
    assert log.read_text() == "to stdout\nto stderr\n"
