"""A researcher's own multi-view data: one array file per view plus a labels file (the ``files`` source).

Each view is one file with one row per sample, in the same sample order as the labels: ``.npy`` (a 2-D array),
``.csv`` (numbers only; a first row that is not all numbers, or is the column numbers 0, 1, ..., d-1 that pandas
writes by default, is taken as a header and skipped) or
``.parquet`` (every column numeric; needs pyarrow). A view is either features (n, d_i), from which the workflow
computes the view's kernel on each split's training pool as for the embedded data (Section 7.1), or a precomputed
(n, n) kernel matrix over all samples (``kernels: true``; the workflow then slices rows and columns per split).
Labels are one value per sample (a 1-D ``.npy``, or a one-column ``.csv`` / ``.parquet``), numbers or strings; in a
labels ``.csv`` a first value that is not a number and occurs nowhere else in the column is a header (a class has at
least two samples); labels are encoded as 0..C-1 in the order of ``numpy.unique``.

:func:`load_files` reads and checks everything and raises :class:`mvl.data.errors.DataIntegrityError` naming the
file and the problem: a view whose rows differ from the labels', NaN or inf values (with the first rows concerned),
a view that is not 2-D, a kernel that is not square (n, n), a missing label, an unknown file type. No paper section
(data loading).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .embedded import MultiViewDataset
from .errors import DataIntegrityError

__all__ = ["FORMATS", "read_table", "load_files"]

FORMATS = (".npy", ".csv", ".parquet")
"""File types a view or the labels may have."""


def _rows(mask):
    idx = np.flatnonzero(mask)
    more = f" and {idx.size - 5} more" if idx.size > 5 else ""
    return f"rows {', '.join(str(i) for i in idx[:5])}{more} (0-based)"


def read_table(path, labels=False):
    """The array in ``path`` (.npy, .csv or .parquet), as stored (no conversion beyond the file format's); a .csv
    header row is recognised as described in the module docstring (``labels``: the file holds labels)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise DataIntegrityError(f"{path}: unknown file type {path.suffix!r}; use one of {', '.join(FORMATS)}")
    if not path.is_file():
        raise DataIntegrityError(f"{path}: no such file")
    if suffix == ".npy":
        return np.load(path, allow_pickle=False)
    import pandas as pd

    if suffix == ".parquet":
        return pd.read_parquet(path).to_numpy()
    table = pd.read_csv(path, header=None, skip_blank_lines=False)  # an empty line is a missing value
    if len(table) > 1:
        first = table.iloc[0]
        not_numbers = pd.to_numeric(first, errors="coerce").isna() & first.notna()
        if labels:
            header = bool(not_numbers.iloc[0]) and not (table.iloc[1:, 0] == first.iloc[0]).any()
        else:  # names, or the column numbers 0..d-1 that pandas writes by default
            numbers = pd.to_numeric(first, errors="coerce").to_numpy()
            header = bool(not_numbers.any()) or bool(np.array_equal(numbers, np.arange(table.shape[1])))
        if header:  # the rest was read as text because of it: numbers are converted by the caller
            table = table.iloc[1:].reset_index(drop=True)
    return table.to_numpy()


def _labels(path):
    y = read_table(path, labels=True)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise DataIntegrityError(f"labels {path}: expected one label per row (one column), got shape {y.shape}")
    if y.size == 0:
        raise DataIntegrityError(f"labels {path}: the file holds no label")
    missing = np.array([v is None or (isinstance(v, float) and v != v) for v in y.tolist()])
    if missing.any():
        raise DataIntegrityError(f"labels {path}: {int(missing.sum())} missing (NaN or empty) labels, {_rows(missing)}")
    classes, codes = np.unique(y.astype(str) if y.dtype == object else y, return_inverse=True)
    return codes.astype(np.int64), classes


def _view(name, path, n, kernel):
    X = read_table(path)
    what = f"view {name} ({path})"
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataIntegrityError(f"{what}: holds values that are not numbers") from None
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2:
        raise DataIntegrityError(f"{what}: expected a 2-D array (samples x features), got shape {X.shape}")
    if X.shape[0] != n:
        hint = " (a header row of numbers in one of the files?)" if abs(X.shape[0] - n) == 1 else ""
        raise DataIntegrityError(f"{what}: {X.shape[0]} rows, but the labels have {n}{hint}; every view needs one row "
                                 "per sample, in the labels' order")
    if kernel and X.shape != (n, n):
        raise DataIntegrityError(f"{what}: a precomputed kernel must be ({n}, {n}) (samples x samples), "
                                 f"got {X.shape}")
    bad = ~np.isfinite(X)
    if bad.any():
        raise DataIntegrityError(f"{what}: {int(bad.sum())} NaN or inf values, {_rows(bad.any(axis=1))}")
    if kernel and not np.allclose(X, X.T, rtol=1e-8, atol=1e-10 * max(1.0, float(np.abs(X).max()))):
        raise DataIntegrityError(f"{what}: a precomputed kernel must be symmetric")
    return np.ascontiguousarray(X)


def load_files(views, labels, kernels=False, name="files", base_dir=None):
    """Read a multi-view data set from files (see the module docstring).

    ``views``: mapping view name -> file; ``labels``: the labels file; ``kernels``: the view files hold
    precomputed (n, n) kernels instead of features; relative paths are taken from ``base_dir`` (default: the
    working directory). Returns a :class:`mvl.data.embedded.MultiViewDataset` (labels encoded 0..C-1, the original
    values in its description) or raises :class:`mvl.data.errors.DataIntegrityError`.
    """
    base = Path(base_dir or ".")
    if not views:
        raise DataIntegrityError("files: give at least one view file")
    y, classes = _labels(base / labels)
    arrays = [_view(v, base / p, y.size, bool(kernels)) for v, p in views.items()]
    kind = "kernel" if kernels else "features"
    return MultiViewDataset(views=arrays, y=y, view_names=tuple(views), name=name,
                            description=f"{y.size} samples, {len(arrays)} views, {classes.size} classes "
                                        f"({', '.join(map(str, classes[:10]))}{', ...' if classes.size > 10 else ''})",
                            view_kinds=tuple(kind for _ in arrays))
