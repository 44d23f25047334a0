"""Atomic file output: write to a temporary file in the target folder, then rename.

An interrupted run therefore never leaves a half-written result that a rerun
(or Snakemake) would trust.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

import numpy as np

__all__ = ["atomic_path", "save_npz", "save_json", "save_csv", "save_rows_csv"]


@contextlib.contextmanager
def atomic_path(path, suffix=None):
    """Yield a temporary path beside ``path``; on success rename it to ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=suffix or path.suffix)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def save_npz(path, **arrays):
    with atomic_path(path, suffix=".npz") as tmp:
        np.savez(tmp, **arrays)


def save_json(path, obj):
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=1, sort_keys=True))


def save_csv(path, frame):
    """Write a pandas DataFrame as CSV atomically."""
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False)


def save_rows_csv(path, rows):
    """Write a list of dicts (same keys in the same order, union taken) as CSV atomically, without pandas."""
    import csv

    fields = []
    for row in rows:
        fields += [k for k in row if k not in fields]
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if v is None or (isinstance(v, float) and v != v) else v) for k, v in row.items()})
