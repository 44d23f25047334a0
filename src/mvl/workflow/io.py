"""Atomic file output with checksum sidecars, and the check that finds corrupted outputs.

Every output is written to a temporary file in the target folder, then renamed: an interrupted run
therefore never leaves a half-written result that a rerun (or Snakemake) would trust.

With ``checksum=True`` (what the steps of every study use) the SHA-256 of the content is
recorded, right after the rename, in a sidecar ``<file>.sha256`` in ``sha256sum`` format: the first line
is the file itself, further lines are the inputs it was computed from (``inputs=``; their digests at that
time, paths relative to the file's folder), so ``sha256sum -c <file>.sha256`` in that folder checks the file
and that its inputs are unchanged. :func:`verify_outputs` rehashes every file that has a sidecar, deletes
the files whose content no longer matches (bit rot, a truncated copy, a hand edit) together with every
output recorded as computed from them, so that a workflow sees them all missing and recomputes them.
No paper section (infrastructure of the workflow).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .. import fileio

__all__ = [
    "SIDECAR_SUFFIX",
    "atomic_path",
    "file_sha256",
    "save_csv",
    "save_json",
    "save_npz",
    "save_rows_csv",
    "sidecar_path",
    "verify_file",
    "verify_outputs",
    "write_sidecar",
]

SIDECAR_SUFFIX = ".sha256"
_HEX = frozenset("0123456789abcdef")


def sidecar_path(path):
    """The checksum sidecar of ``path``: ``<path>.sha256``."""
    path = Path(path)
    return path.with_name(path.name + SIDECAR_SUFFIX)


def file_sha256(path):
    """Hex SHA-256 of a file's content (:func:`mvl.fileio.file_digest`)."""
    return fileio.file_digest(path)


def _parse_line(line):
    """(digest, name) of one ``sha256sum`` line, or None if it is not one."""
    digest, sep, name = line.partition("  ")
    if not sep or len(digest) != 64 or not set(digest) <= _HEX or not name:
        return None
    return digest, name


def _recorded_digest(path):
    """The digest of ``path`` from its sidecar, else computed; None if the file does not exist."""
    with contextlib.suppress(OSError, UnicodeDecodeError):
        first = _parse_line(sidecar_path(path).read_text().partition("\n")[0])
        if first is not None:
            return first[0]
    try:
        return file_sha256(path)
    except FileNotFoundError:
        return None


def write_sidecar(path, digest=None, inputs=()):
    """Record the SHA-256 of ``path`` (``digest`` if already known) in its sidecar, atomically, followed by
    the digests of ``inputs`` (taken from their own sidecars where they have one; missing inputs skipped)."""
    path = Path(path)
    digest = digest or file_sha256(path)
    lines = [f"{digest}  {path.name}"]
    folder = os.path.abspath(path.parent)
    for inp in inputs:
        d = _recorded_digest(inp)
        if d is not None:
            lines.append(f"{d}  {os.path.relpath(os.path.abspath(inp), folder)}")
    fileio.atomic_write_text(sidecar_path(path), "\n".join(lines) + "\n")
    return digest


def _parse_sidecar(text):
    """(own digest or None if malformed, [input paths relative to the file's folder])."""
    lines = (text or "").splitlines()
    first = _parse_line(lines[0]) if lines else None
    inputs = [parsed[1] for parsed in map(_parse_line, lines[1:]) if parsed is not None]
    return (first[0] if first else None), inputs


def _snapshot(path):
    """(sidecar text, identity of the file) -- what a concurrent atomic rewrite of ``path`` would change."""
    try:
        text = sidecar_path(path).read_bytes().decode("utf-8", "replace")
    except FileNotFoundError:
        text = None
    try:
        st = os.stat(path)
        ident = (st.st_ino, st.st_size, st.st_mtime_ns)
    except FileNotFoundError:
        ident = None
    return text, ident


def _check(path):
    """(status as in :func:`verify_file`, the snapshot it was computed from)."""
    snap = _snapshot(path)
    text, ident = snap
    if text is None:
        return None, snap
    expected = _parse_sidecar(text)[0]
    if expected is None or ident is None:
        return False, snap
    try:
        return file_sha256(path) == expected, snap
    except FileNotFoundError:
        return _check(path)[0], snap  # replaced or removed while being read: look again
    except OSError:
        return False, snap


def verify_file(path):
    """Whether ``path`` matches its sidecar: True (matches), False (mismatch, malformed sidecar or file
    gone while its sidecar remains) or None (no sidecar: nothing recorded, nothing to check)."""
    return _check(Path(path))[0]


@contextlib.contextmanager
def atomic_path(path, suffix=None, *, checksum=False, inputs=()):
    """Yield a temporary path beside ``path``; on success rename it to ``path`` (:func:`mvl.fileio.atomic_path`).

    A sidecar left by an earlier version of ``path`` is removed before the rename, so that a sidecar never
    describes other content than the file beside it. With ``checksum=True`` a new sidecar (recording
    ``inputs`` too) is written right after the rename; a crash in between leaves the file without a
    sidecar: unchecked, never mismatched.
    """
    path = Path(path)
    digest = []

    def before_replace(tmp):
        if checksum:
            digest.append(file_sha256(tmp))
        with contextlib.suppress(FileNotFoundError):
            os.unlink(sidecar_path(path))

    with fileio.atomic_path(path, suffix, before_replace=before_replace) as tmp:
        yield tmp
    if checksum:
        write_sidecar(path, digest[0], inputs)


def save_npz(path, *, checksum=False, inputs=(), **arrays):
    import numpy as np

    with atomic_path(path, suffix=".npz", checksum=checksum, inputs=inputs) as tmp:
        np.savez(tmp, **arrays)


def save_json(path, obj, *, checksum=False, inputs=()):
    with atomic_path(path, checksum=checksum, inputs=inputs) as tmp:
        tmp.write_text(json.dumps(obj, indent=1, sort_keys=True))


def save_csv(path, frame, *, checksum=False, inputs=()):
    """Write a pandas DataFrame as CSV atomically."""
    with atomic_path(path, checksum=checksum, inputs=inputs) as tmp:
        frame.to_csv(tmp, index=False)


def save_rows_csv(path, rows, *, checksum=False, inputs=()):
    """Write a list of dicts (same keys in the same order, union taken) as CSV atomically, without pandas."""
    import csv

    fields = []
    for row in rows:
        fields += [k for k in row if k not in fields]
    with atomic_path(path, checksum=checksum, inputs=inputs) as tmp, open(tmp, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if v is None or (isinstance(v, float) and v != v) else v) for k, v in row.items()})


def _sidecars(root):
    """Every sidecar under ``root`` (temporaries of atomic writes, named ``.<name>.*``, skipped)."""
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(SIDECAR_SUFFIX) and not name.startswith("."):
                yield Path(folder) / name


def verify_outputs(root, *, remove=True, stream=None, workers=None):
    """Check every file under ``root`` that has a sidecar; return what is (or, with ``remove=False``, would
    be) removed, as sorted paths.

    A file is corrupted if its content no longer has the recorded SHA-256 or its sidecar is malformed. With
    ``remove`` (the default) it is deleted with its sidecar, and so is, transitively, every output under
    ``root`` whose sidecar records it as an input: a workflow then sees them missing and recomputes the file
    and everything downstream (Snakemake would not rerun up-to-date consumers of a missing file). A sidecar
    whose file vanished is removed (nothing downstream is: deleting an intermediate file is not
    corruption). One line per removed file goes to ``stream`` (e.g. ``sys.stderr``; None prints nothing):
    ``corrupted, will be recomputed: <file>``, ``downstream of a corrupted file, will be recomputed: <file>``
    or ``missing, stale checksum sidecar removed: <file>``. Only files with sidecars are read; ``workers``
    threads hash in parallel (default: up to 4, one per CPU).
    """
    root = Path(root)
    if not root.is_dir():
        return []
    pairs = [(side.with_name(side.name[: -len(SIDECAR_SUFFIX)]), side) for side in _sidecars(root)]
    workers = workers or min(4, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        status = list(pool.map(lambda pair: _check(pair[0]), pairs))
    corrupted, vanished, consumers = [], [], {}
    for (path, side), (ok, snap) in zip(pairs, status, strict=True):
        for rel in _parse_sidecar(snap[0])[1]:
            consumers.setdefault(os.path.normpath(side.parent / rel), []).append(path)
        # a file or sidecar that changed while it was checked is being rewritten (atomically) by a job
        # running right now, not corrupted: leave it
        if ok is not False or _snapshot(path) != snap:
            continue
        (vanished if snap[1] is None else corrupted).append(path)
    # everything computed from a corrupted file, transitively
    downstream, seen = [], {os.path.normpath(p) for p in corrupted}
    queue = deque(corrupted)
    while queue:
        for user in consumers.get(os.path.normpath(queue.popleft()), []):
            if os.path.normpath(user) not in seen and user.exists():
                seen.add(os.path.normpath(user))
                downstream.append(user)
                queue.append(user)
    removed = [(p, "corrupted") for p in corrupted] + [(p, "downstream") for p in downstream]
    removed += [(p, "vanished") for p in vanished]
    for path, why in removed:
        if remove:
            for f in (path, sidecar_path(path)):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(f)
        if stream is not None:
            will = ", will be recomputed" if remove else ""
            msg = {"corrupted": f"corrupted{will}: {path}",
                   "downstream": f"downstream of a corrupted file{will}: {path}",
                   "vanished": f"missing, stale checksum sidecar {'removed' if remove else 'left'}: {path}"}[why]
            print(msg, file=stream)
    return sorted(p for p, _ in removed)


def _main(argv=None):
    """``python -m mvl.workflow.io [--check-only] ROOT...``: verify outputs by their sidecars (exit 1 if any bad)."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m mvl.workflow.io", description=verify_outputs.__doc__.splitlines()[0])
    p.add_argument("roots", nargs="+")
    p.add_argument("--check-only", action="store_true", help="report corrupted files, do not delete them")
    a = p.parse_args(argv)
    bad = [f for root in a.roots for f in verify_outputs(root, remove=not a.check_only, stream=sys.stderr)]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(_main())
