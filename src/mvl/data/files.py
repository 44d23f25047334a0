"""A researcher's own multi-view data: one array file per view plus a labels file (the ``files`` source).

Each view is one file with one row per sample, in the same sample order as the labels: ``.npy`` (a 2-D array),
``.csv`` (numbers only, comma-separated, a decimal point; a first row that is not all numbers, or is the column
numbers 0, 1, ..., d-1 that pandas writes by default, is taken as a header and skipped) or
``.parquet`` (every column numeric; needs pyarrow). A view is either features (n, d_i), from which the workflow
computes the view's kernel on each split's training pool as for the embedded data (Section 7.1), or a precomputed
(n, n) kernel matrix over all samples (``kernels: true``; the workflow then slices rows and columns per split).
Labels are one value per sample (a 1-D ``.npy`` of numbers or fixed-width strings, or a one-column ``.csv`` /
``.parquet``), numbers or strings; in a labels ``.csv`` a first value that is not a number and occurs nowhere else
in the column is a header (a class has at least two samples); labels are encoded as 0..C-1 in the order of
``numpy.unique``.

Every sample needs its class: the protocol chooses which labels the estimators see, so the files hold no unlabelled
marker. A label -1 (the number, or the text "-1") is therefore an error, because the estimators read -1 as
"unlabelled" -- except where the labels are exactly -1 and 1, the binary +-1 convention, where -1 is a class.
At least two classes, and at least ``min_per_class`` (default 2) samples of each.

:func:`load_files` reads and checks everything and raises :class:`mvl.data.errors.DataIntegrityError` naming the
file, the rows (0-based samples) or lines (1-based lines of a text file) concerned and what to change: an empty file,
a .csv line with more or fewer values than the others, decimal commas, values that are not numbers, an object
``.npy`` (pickled, not loaded), a view whose rows differ from the labels', NaN or inf values, a view that is not
2-D, a kernel that is not square (n, n), a missing label, a -1 label, a single class or a class with too few
samples, an unknown or unreadable file. No paper section (data loading).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np

from .embedded import MultiViewDataset
from .errors import DataIntegrityError

__all__ = ["FORMATS", "read_table", "load_files"]

FORMATS = (".npy", ".csv", ".parquet")
"""File types a view or the labels may have."""

_DECIMAL_COMMA = re.compile(r"^\s*[-+]?\d*,\d+(?:[eE][-+]?\d+)?\s*$")
_CSV_ADVICE = ("write it with a decimal point and commas between the values, one line per sample (pandas: "
               "DataFrame.to_csv(path, index=False); numpy: np.savetxt(path, X, delimiter=','))")


def _rows(mask):
    idx = np.flatnonzero(mask)
    more = f" and {idx.size - 5} more" if idx.size > 5 else ""
    return f"rows {', '.join(str(i) for i in idx[:5])}{more} (0-based)"


def _csv_lines_problem(path):
    """What is wrong with the lines of a .csv that pandas could not parse: semicolons (decimal commas), or the first
    line whose number of values differs from the first line's."""
    with open(path, newline="", encoding="utf-8", errors="replace") as fh:
        lines = list(csv.reader(fh))
    if any(";" in field for line in lines for field in line):
        i = next(i for i, line in enumerate(lines, 1) if any(";" in field for field in line))
        return (f"line {i} (1-based) holds ';': a semicolon-separated file with decimal commas? {_CSV_ADVICE}")
    width = len(lines[0]) if lines else 0
    for i, line in enumerate(lines, 1):
        if line and len(line) != width:
            return (f"line {i} (1-based) has {len(line)} values, line 1 has {width}: every line needs the same number "
                    "of comma-separated values (one per column); remove the extra value or fill the missing one")
    return None


def _read_csv(path, what):
    import pandas as pd

    try:
        return pd.read_csv(path, header=None, skip_blank_lines=False)  # an empty line is a missing value
    except pd.errors.EmptyDataError:
        raise DataIntegrityError(f"{what}: the file is empty; write one line per sample") from None
    except pd.errors.ParserError as exc:
        problem = _csv_lines_problem(path) or f"not a readable .csv file ({exc})"
        raise DataIntegrityError(f"{what}: {problem}") from None
    except UnicodeDecodeError as exc:
        raise DataIntegrityError(f"{what}: not UTF-8 text (byte {exc.start}); save the file as UTF-8") from None


def _read_npy(path, what):
    try:
        return np.load(path, allow_pickle=False)
    except ValueError as exc:
        if "allow_pickle" in str(exc):
            raise DataIntegrityError(
                f"{what}: an object array (dtype=object, stored with pickle), which is not loaded; save numbers, or "
                "labels as fixed-width strings: np.save(path, np.asarray(values, dtype=str))") from None
        raise DataIntegrityError(f"{what}: not a readable .npy file ({exc}); write it with np.save") from None
    except (EOFError, OSError) as exc:
        problem = "the file is empty" if path.stat().st_size == 0 else f"not a readable .npy file ({exc})"
        raise DataIntegrityError(f"{what}: {problem}; write it with np.save") from None


def _read_parquet(path, what):
    import pandas as pd

    try:
        return pd.read_parquet(path).to_numpy()
    except ImportError as exc:
        raise DataIntegrityError(f"{what}: reading Parquet needs pyarrow ({exc}); pip install pyarrow") from None
    except Exception as exc:  # noqa: BLE001 -- pyarrow raises various errors on a truncated or foreign file
        raise DataIntegrityError(f"{what}: not a readable Parquet file ({type(exc).__name__}: {exc})") from None


def read_table(path, labels=False):
    """The array in ``path`` (.npy, .csv or .parquet), as stored (no conversion beyond the file format's); a .csv
    header row is recognised as described in the module docstring (``labels``: the file holds labels). Raises
    :class:`mvl.data.errors.DataIntegrityError` naming the file (and the line) when it cannot be read."""
    return _read_table(Path(path), labels, str(path))[0]


def _read_table(path, labels, what):
    """(array, whether a .csv header line was skipped); errors start with ``what``."""
    suffix = path.suffix.lower()
    if suffix not in FORMATS:
        raise DataIntegrityError(f"{path}: unknown file type {path.suffix!r}; use one of {', '.join(FORMATS)}")
    if not path.is_file():
        raise DataIntegrityError(f"{path}: no such file")
    if suffix == ".npy":
        return _read_npy(path, what), False
    if suffix == ".parquet":
        return _read_parquet(path, what), False
    import pandas as pd

    table, header = _read_csv(path, what), False
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
    return table.to_numpy(), header


def _is_marker(v):
    """-1 as a number or as the text "-1" (what a string array stores for -1)."""
    if isinstance(v, str):
        return v.strip() == "-1"
    try:
        return float(v) == -1.0
    except (TypeError, ValueError):
        return False


def _number(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return v


def _labels(path, min_per_class=2):
    y = _read_table(path, True, f"labels {path}")[0]
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise DataIntegrityError(f"labels {path}: expected one label per row (one column), got shape {y.shape}")
    if y.size == 0:
        raise DataIntegrityError(f"labels {path}: the file holds no label")
    values = y.tolist()
    missing = np.array([v is None or (isinstance(v, float) and v != v) for v in values])
    if missing.any():
        raise DataIntegrityError(f"labels {path}: {int(missing.sum())} missing (NaN or empty) labels, "
                                 f"{_rows(missing)}; every sample needs its class (the protocol chooses which labels "
                                 "to hide)")
    marker = np.array([_is_marker(v) for v in values])
    if marker.any() and {-1.0 if _is_marker(v) else _number(v) for v in values} != {-1.0, 1.0}:
        raise DataIntegrityError(
            f"labels {path}: label -1 in {_rows(marker)}; the estimators read -1 as 'unlabelled', but every sample "
            "here needs its class (the protocol chooses which labels to hide): give these samples their class, or "
            "remove their rows from every file; if -1 is a class, name the classes differently (e.g. as text)")
    classes, codes, counts = np.unique(y.astype(str) if y.dtype == object else y, return_inverse=True,
                                       return_counts=True)
    if classes.size < 2:
        raise DataIntegrityError(f"labels {path}: every sample has the label {classes[0].item()!r}; classification "
                                 "needs at least two classes, each with at least two samples")
    small = np.flatnonzero(counts < min_per_class)
    if small.size:
        k = small[0]
        others = f" (and {small.size - 1} more classes)" if small.size > 1 else ""
        raise DataIntegrityError(
            f"labels {path}: class {classes[k].item()!r} has {counts[k]} sample(s), {_rows(codes == k)}"
            f"{others}; every class needs at least {min_per_class} (training and test samples): add samples of it, "
            "or remove its rows from every file")
    return codes.astype(np.int64), classes


def _not_numbers(what, X, header):
    """The error for a table with values that are not numbers: the rows, one value, and decimal commas named."""
    import pandas as pd

    table = pd.DataFrame(X)
    coerced = table.apply(pd.to_numeric, errors="coerce")
    bad = (coerced.isna() & table.notna()).to_numpy()
    if not bad.any():  # e.g. complex values
        return DataIntegrityError(f"{what}: holds values that are not real numbers (dtype {X.dtype})")
    i, j = np.argwhere(bad)[0]
    value = str(X[i, j])
    if ";" in value:
        hint = f"; ';' separates values: a semicolon-separated file with decimal commas? {_CSV_ADVICE}"
    elif _DECIMAL_COMMA.match(value):
        hint = f"; '{value}' has a decimal comma: {_CSV_ADVICE}"
    else:
        hint = "; replace them by numbers"
    rows = _rows(bad.any(axis=1))
    if header:
        rows = rows[:-1] + ", after the header line that was skipped: were the first line's values not numbers too?)"
    return DataIntegrityError(f"{what}: holds values that are not numbers, {rows}, e.g. {value!r} in column {j}"
                              f"{hint}")


def _view(name, path, n, kernel):
    what = f"view {name} ({path})"
    X, header = _read_table(path, False, what)
    if X.dtype.kind == "c":
        raise DataIntegrityError(f"{what}: holds complex numbers; a view needs real numbers")
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError):
        raise _not_numbers(what, X if X.ndim == 2 else np.asarray(X).reshape(len(X), -1), header) from None
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
        hint = ""
        if path.suffix.lower() == ".csv":
            hint = _csv_lines_problem(path)
            hint = f" ({hint})" if hint else " (empty fields?)"
        raise DataIntegrityError(f"{what}: {int(bad.sum())} NaN or inf values, {_rows(bad.any(axis=1))}{hint}; "
                                 "every value must be a finite number")
    if kernel and not np.allclose(X, X.T, rtol=1e-8, atol=1e-10 * max(1.0, float(np.abs(X).max()))):
        raise DataIntegrityError(f"{what}: a precomputed kernel must be symmetric")
    return np.ascontiguousarray(X)


def load_files(views, labels, kernels=False, name="files", base_dir=None, min_per_class=2):
    """Read a multi-view data set from files (see the module docstring).

    Parameters
    ----------
    views : mapping of str to path
        View name -> file.
    labels : path
        The labels file.
    kernels : bool, default False
        The view files hold precomputed (n, n) kernels instead of features.
    name : str, default "files"
        The data set's name.
    base_dir : path or None, default None
        Relative paths are taken from here (None: the working directory).
    min_per_class : int >= 2, default 2
        Fewest samples a class may have (a protocol that draws test, validation and labelled samples per class
        needs their sum).

    Returns
    -------
    MultiViewDataset
        Labels encoded 0..C-1, the original values in its description.

    Raises
    ------
    mvl.data.errors.DataIntegrityError
        Naming the file, the rows or lines concerned and what to change.
    """
    base = Path(base_dir or ".")
    if not views:
        raise DataIntegrityError("files: give at least one view file")
    y, classes = _labels(base / labels, max(2, int(min_per_class)))
    arrays = [_view(v, base / p, y.size, bool(kernels)) for v, p in views.items()]
    kind = "kernel" if kernels else "features"
    return MultiViewDataset(views=arrays, y=y, view_names=tuple(views), name=name,
                            description=f"{y.size} samples, {len(arrays)} views, {classes.size} classes "
                                        f"({', '.join(map(str, classes[:10]))}{', ...' if classes.size > 10 else ''})",
                            view_kinds=tuple(kind for _ in arrays))
