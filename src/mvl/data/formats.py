"""Readers and structural checks of the raw files of the paper's data sets (Section 7.2): MAT files, HDF5, CUB text
tables.

What a file must look like to be accepted: :func:`loadmat` (scipy's reader with errors that name the problem), the
validators that :mod:`mvl.data.download`'s registry attaches to files without a published checksum (Flowers-17
splits and chi2 distance matrices, Caltech-101 kernels and metadata, the SSL benchmark MAT files, the multi-view
MNIST HDF5 file, the CUB tables) and the CUB attribute parser :func:`read_image_attribute_labels` that
:mod:`mvl.data.paper` loads the attribute view with. Every check raises :class:`mvl.data.errors.DataIntegrityError`
naming the file and what is wrong. Nothing here downloads or caches.
"""

from __future__ import annotations

import numpy as np

from .errors import DataIntegrityError

CUB_N_ATTRIBUTES = 312


def fail(path, what):
    raise DataIntegrityError(f"{path}: {what}")


def loadmat(path, variable_names=None):
    """scipy.io.loadmat with readable errors (not a MAT file, truncated, MATLAB v7.3/HDF5)."""
    import scipy.io

    try:
        return scipy.io.loadmat(str(path), variable_names=variable_names)
    except NotImplementedError as exc:  # v7.3 files are HDF5
        fail(path, f"MATLAB v7.3 (HDF5) file, scipy cannot read it ({exc}); re-save it with -v7 or -v6")
    except Exception as exc:  # truncated or not a MAT file: scipy raises various errors
        fail(path, f"not a readable MATLAB v5/v7 file ({type(exc).__name__}: {exc})")


def index_vector(path, name, value):
    v = np.asarray(value)
    if v.ndim != 2 or 1 not in v.shape or v.dtype.kind not in "iuf":
        fail(path, f"{name} must be a numeric row or column vector, got {v.dtype} array of shape {v.shape}")
    v = v.ravel()
    if not np.all(np.isfinite(v)) or not np.all(v == np.round(v)) or v.size == 0 or v.min() < 1:
        fail(path, f"{name} must hold 1-based integer indices")
    return v.astype(np.int64)


FLOWERS17_N_CLASSES = 17
FLOWERS17_SPLIT_VARIABLES = tuple(f"{p}{s}" for s in (1, 2, 3) for p in ("trn", "val", "tst"))


def validate_flowers17_datasplits(path):
    """``datasplits.mat``: ``trn1..3``, ``val1..3``, ``tst1..3``, 1-based indices; per split the three
    sets are disjoint and cover 1..n with n a multiple of 17 (class of image i is ``(i-1) // (n/17)``;
    n = 1360 for the real file), and ``|trn| = 2 |val| = 2 |tst|`` (680/340/340)."""
    d = loadmat(path)
    missing = [v for v in FLOWERS17_SPLIT_VARIABLES if v not in d]
    if missing:
        fail(path, f"missing variables {missing} (expected {list(FLOWERS17_SPLIT_VARIABLES)})")
    sizes = set()
    for s in (1, 2, 3):
        trn, val, tst = (index_vector(path, f"{p}{s}", d[f"{p}{s}"]) for p in ("trn", "val", "tst"))
        allidx = np.concatenate([trn, val, tst])
        n = allidx.size
        if np.unique(allidx).size != n:
            fail(path, f"split {s}: trn{s}, val{s}, tst{s} overlap or contain duplicates")
        if not np.array_equal(np.sort(allidx), np.arange(1, n + 1)):
            fail(path, f"split {s}: indices do not cover 1..{n}")
        if n % FLOWERS17_N_CLASSES or trn.size != 2 * val.size or val.size != tst.size:
            fail(path, f"split {s}: sizes trn {trn.size}, val {val.size}, tst {tst.size} (n = {n}) do not "
                        f"match the 2:1:1 layout over {FLOWERS17_N_CLASSES} classes")
        sizes.add(n)
    if len(sizes) != 1:
        fail(path, f"the three splits index different numbers of images {sorted(sizes)}")


def check_distance_matrix(path, name, D, n_classes=None):
    if not isinstance(D, np.ndarray) or D.ndim != 2 or D.shape[0] != D.shape[1]:
        fail(path, f"{name} must be a square 2-d matrix, got shape {getattr(D, 'shape', None)}")
    if D.dtype != np.float64:
        fail(path, f"{name} must be float64 (MATLAB double), got {D.dtype}")
    n = D.shape[0]
    if n < 2 or (n_classes and n % n_classes):
        fail(path, f"{name} has shape {D.shape}; expected n x n with n a multiple of {n_classes}")
    if not np.all(np.isfinite(D)):
        fail(path, f"{name} contains NaN or inf")
    if D.min() < 0:
        fail(path, f"{name} has negative entries (min {D.min():.3g}); chi2 distances are >= 0")
    scale = max(float(D.max()), 1e-300)
    asym = float(np.max(np.abs(D - D.T)))
    if asym > 1e-6 * scale:
        fail(path, f"{name} is not symmetric (max |D - D^T| = {asym:.3g}, max D = {scale:.3g})")
    diag = float(np.max(np.abs(np.diag(D))))
    if diag > 1e-8 * scale:
        fail(path, f"{name} has a non-zero diagonal (max |D_ii| = {diag:.3g})")


def validate_distance_matrices(variables, n_classes=FLOWERS17_N_CLASSES):
    """Validator factory: the MAT file holds ``variables``, each a float64, symmetric, non-negative
    n x n distance matrix with zero diagonal, all of the same n (a multiple of ``n_classes``)."""
    variables = tuple(variables)

    def validate(path):
        d = loadmat(path)
        missing = [v for v in variables if v not in d]
        if missing:
            fail(path, f"missing variables {missing} (expected {list(variables)})")
        shapes = set()
        for v in variables:
            check_distance_matrix(path, v, d[v], n_classes)
            shapes.add(d[v].shape)
        if len(shapes) != 1:
            fail(path, f"the distance matrices have different shapes {sorted(shapes)}")

    validate.__doc__ = f"Distance matrices {list(variables)} (see validate_distance_matrices)."
    return validate


def kernel_matrix(path):
    d = loadmat(path)
    if "matrix" not in d:
        fail(path, f"no variable 'matrix' (found {sorted(k for k in d if not k.startswith('__'))})")
    K = d["matrix"]
    if not isinstance(K, np.ndarray) or K.ndim != 2 or K.dtype.kind != "f" or K.size == 0:
        fail(path, f"'matrix' must be a non-empty 2-d float array, got {getattr(K, 'dtype', None)} "
                    f"{getattr(K, 'shape', None)}")
    if not np.all(np.isfinite(K)):
        fail(path, "'matrix' contains NaN or inf")
    return K


def validate_caltech101_train_kernel(path):
    """Training kernel of Vedaldi et al. (2009): ``matrix`` is a square, symmetric, finite float matrix."""
    K = kernel_matrix(path)
    if K.shape[0] != K.shape[1]:
        fail(path, f"training kernel 'matrix' must be square, got {K.shape}")
    scale = max(float(np.max(np.abs(K))), 1e-300)
    asym = float(np.max(np.abs(K - K.T)))
    if asym > 1e-5 * scale:
        fail(path, f"training kernel 'matrix' is not symmetric (max |K - K^T| = {asym:.3g})")


def validate_caltech101_test_kernel(path):
    """Test kernel: ``matrix`` is a finite float (n_train x n_test) matrix."""
    kernel_matrix(path)


def cellstr(value):
    arr = np.asarray(value, dtype=object).ravel()
    out = []
    for item in arr:
        a = np.asarray(item)
        out.append(str(a.ravel()[0]) if a.size else "")
    return out


def validate_caltech101_meta(path):
    """``cal101-meta/meta-<N>-<s>.mat``: ``trainImageClasses``, ``testImageClasses`` (1-based class
    indices) and ``trainImageNames``, ``testImageNames`` (cell arrays of the same lengths)."""
    d = loadmat(path)
    need = ("trainImageClasses", "testImageClasses", "trainImageNames", "testImageNames")
    missing = [v for v in need if v not in d]
    if missing:
        fail(path, f"missing variables {missing} (expected {list(need)})")
    for part in ("train", "test"):
        cls = index_vector(path, f"{part}ImageClasses", d[f"{part}ImageClasses"])
        names = cellstr(d[f"{part}ImageNames"])
        if len(names) != cls.size:
            fail(path, f"{part}ImageNames has {len(names)} entries, {part}ImageClasses {cls.size}")


def mat_variables(shapes):
    """Validator factory for plain MAT files: each variable present with a given number of rows
    (None: any) -- e.g. ``{"X": None, "y": None}``; rows of all given variables must agree."""

    def validate(path):
        d = loadmat(path)
        rows = set()
        for name, n in shapes.items():
            if name not in d:
                fail(path, f"missing variable {name!r} (expected {sorted(shapes)})")
            shape = d[name].shape
            if len(shape) != 2 or (n is not None and shape[0] != n):
                fail(path, f"{name} has shape {shape}, expected {n if n is not None else 'n'} rows")
            rows.add(shape[0])
        if len(rows) != 1:
            fail(path, f"variables {sorted(shapes)} have different numbers of rows {sorted(rows)}")

    return validate


def validate_hdf5(path):
    with open(path, "rb") as fh:
        if fh.read(8) != b"\x89HDF\r\n\x1a\n":
            fail(path, "not an HDF5 file (bad signature)")


def text_table(path, n_columns, min_rows=1):
    """Rows of whitespace-separated integers (first ``n_columns`` of each line)."""
    rows = []
    with open(path, encoding="utf-8", errors="strict") as fh:
        for i, line in enumerate(fh, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) < n_columns:
                fail(path, f"line {i} has {len(parts)} fields, expected >= {n_columns}")
            rows.append(parts[:n_columns])
    if len(rows) < min_rows:
        fail(path, f"{len(rows)} rows, expected >= {min_rows}")
    return rows


def validate_cub_id_table(kind):
    """``<image_id> <value>`` tables of CUB with consecutive 1-based ids."""

    def validate(path):
        rows = text_table(path, 2)
        ids = [int(r[0]) for r in rows]
        if ids != list(range(1, len(ids) + 1)):
            fail(path, "ids are not 1..n in order")
        if kind == "int":
            try:
                vals = np.array([int(r[1]) for r in rows])
            except ValueError:
                fail(path, "second column must be integers")
            if vals.min() < 0:
                fail(path, "negative values")

    return validate


def validate_cub_image_attribute_labels(path):
    """``<image_id> <attribute_id> <is_present> <certainty_id> <time>`` for every (image, attribute)."""
    try:
        read_image_attribute_labels(path)
    except ValueError as exc:
        fail(path, str(exc))


def read_image_attribute_labels(path, n_images=None, n_attributes=CUB_N_ATTRIBUTES):
    """Binary attribute matrix (n_images, 312) from ``image_attribute_labels.txt``.

    Lines are ``<image_id> <attribute_id> <is_present> <certainty_id> <time>``; only the first
    three fields are used (lines with extra fields are tolerated). Every (image, attribute) pair must
    occur exactly once and ``is_present`` be 0 or 1; raises ValueError otherwise.
    """
    import pandas as pd

    try:
        table = pd.read_csv(path, sep=r"\s+", header=None, usecols=[0, 1, 2], engine="c", dtype=np.float64)
    except Exception as exc:
        raise ValueError(f"cannot parse {path}: {type(exc).__name__}: {exc}") from None
    a = table.to_numpy()
    if a.size == 0 or not np.all(np.isfinite(a)) or not np.all(a == np.round(a)):
        raise ValueError(f"{path}: the first three columns must be integers")
    img, att, present = a[:, 0].astype(np.int64), a[:, 1].astype(np.int64), a[:, 2].astype(np.int64)
    n = int(img.max()) if n_images is None else int(n_images)
    if img.min() < 1 or img.max() > n or att.min() < 1 or att.max() > n_attributes:
        raise ValueError(f"{path}: image ids must be in 1..{n} and attribute ids in 1..{n_attributes}")
    if not np.all((present == 0) | (present == 1)):
        raise ValueError(f"{path}: is_present must be 0 or 1")
    if img.size != n * n_attributes:
        raise ValueError(f"{path}: {img.size} rows, expected {n} images x {n_attributes} attributes")
    flat = (img - 1) * n_attributes + (att - 1)
    if np.unique(flat).size != flat.size:
        raise ValueError(f"{path}: some (image, attribute) pairs occur more than once")
    X = np.zeros(n * n_attributes)
    X[flat] = present
    return X.reshape(n, n_attributes)
