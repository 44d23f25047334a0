"""Files: atomic writes, content digests and redirected output, the one copy every layer uses.

An output is written to a temporary file in its target folder and renamed into place (:func:`atomic_path`,
:func:`atomic_write_text`), so an interrupted run never leaves a half-written file that a rerun would trust;
the download cache (:mod:`mvl.data.download`) and the workflow's outputs with checksum sidecars
(:mod:`mvl.workflow.io`) both build on it. :func:`file_digest` hashes a file in blocks (SHA-256 by default,
MD5 for the registry's published checksums); :func:`redirected_output` sends a job's standard output and error
to its log. Imports nothing heavy. No paper section (infrastructure).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import tempfile
from pathlib import Path

__all__ = ["atomic_path", "atomic_write_text", "file_digest", "redirected_output"]

_CHUNK = 1 << 20


def file_digest(path, algorithm="sha256"):
    """Hex digest (``algorithm``: any name :func:`hashlib.new` knows) of a file's content, read in 1 MiB blocks."""
    h = hashlib.new(algorithm)
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def _default_mode():
    """0o666 less the process umask: what ``open(path, "w")`` would give (mkstemp gives 0o600)."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


@contextlib.contextmanager
def atomic_path(path, suffix=None, *, before_replace=None):
    """Yield a temporary path beside ``path`` (same folder, hidden name); on success rename it to ``path``.

    The folder is created if needed; the file gets the permissions a plain ``open`` would give. On any error
    (also KeyboardInterrupt) the temporary file is removed and ``path`` is untouched. ``before_replace``, if
    given, is called with the temporary path after the block and before the rename (e.g. to hash it, or to
    remove a stale checksum sidecar).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix or path.suffix)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, _default_mode())
        if before_replace is not None:
            before_replace(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_text(path, text, encoding="utf-8"):
    """Write ``text`` to ``path`` atomically (:func:`atomic_path`)."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding=encoding)


@contextlib.contextmanager
def redirected_output(log_path):
    """Standard output and error of the block go to ``log_path`` (created, line-buffered); restored after."""
    saved = sys.stdout, sys.stderr
    with open(log_path, "w", buffering=1) as fh:
        sys.stdout = sys.stderr = fh
        try:
            yield fh
        finally:
            sys.stdout, sys.stderr = saved
