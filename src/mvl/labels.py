"""Labels of the semi-supervised estimators: the unlabelled marker (-1, '-1' in string arrays, or None/NaN/pd.NA in
object arrays), the encoding of the labelled samples' classes, and the targets y_i in R^P of Section 5.1.

A numpy string array cannot hold None or NaN: assigning them stores their text cut to the array's width (None in a
'<U3' array is 'Non'), and -1 is stored as '-1'. So '-1' in a string array marks an unlabelled sample as -1 does,
and labels that look like such a stored marker ('', 'N', 'No', 'Non', 'None', 'nan', ...) give an
:class:`mvl.exceptions.UnlabelledMarkerWarning`: they are read as a class."""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import column_or_1d

__all__ = ["unlabelled_mask", "encode_labels", "encode_targets", "BINARY_HINT", "STRING_MARKER_HINT",
           "stratified_holdout"]


BINARY_HINT = ("-1 marks an unlabelled sample here; to fit a binary problem labelled {-1, +1}, recode it, e.g. "
               "y = np.where(y == -1, 0, 1) (or use string labels)")


STRING_MARKER_HINT = ("to mark unlabelled samples with string labels, use -1 or '-1' (y[unlabelled] = -1 stores "
                      "'-1'), or an object array with None (y = y.astype(object); y[unlabelled] = None)")

# texts that a numpy string array stores for an unlabelled marker it cannot hold (cut to the array's width)
_STORED_MARKERS = ("None", "nan", "NaN", "<NA>", "-1")


def unlabelled_mask(y, missing_only=False):
    """True where ``y`` marks an unlabelled sample: -1 (also '-1' in string and object arrays), and in object
    arrays None, NaN and pd.NA (``missing_only``: only the latter, the missing labels)."""
    y = np.asarray(y)
    if y.dtype.kind in "iuf":
        return np.zeros(y.shape, dtype=bool) if missing_only else y == -1
    if y.dtype.kind in "US":
        if missing_only:
            return np.zeros(y.shape, dtype=bool)
        return y == ("-1" if y.dtype.kind == "U" else b"-1")
    if y.dtype.kind != "O":
        return np.zeros(y.shape, dtype=bool)
    out = np.zeros(y.shape, dtype=bool)
    for i, v in enumerate(y):
        if v is None or (isinstance(v, numbers.Real) and not isinstance(v, bool)
                         and (v != v or (v == -1 and not missing_only))):
            out[i] = True
        elif type(v).__name__ == "NAType":  # pandas.NA, without importing pandas
            out[i] = True
        elif not missing_only and isinstance(v, str) and v == "-1":
            out[i] = True
    return out


def _check_stored_markers(y, labelled):
    """:class:`UnlabelledMarkerWarning` for labels of a numpy string array that look like an unlabelled marker the
    array could not hold: '' or a stored None / NaN / pd.NA / -1 cut to the array's width ('Non' in '<U3')."""
    if y.dtype.kind not in "US" or labelled.size == 0:
        return
    from .exceptions import UnlabelledMarkerWarning

    width = y.dtype.itemsize // (4 if y.dtype.kind == "U" else 1)
    texts = {""} | {t[:width] for t in _STORED_MARKERS}
    suspects = {t.encode() if y.dtype.kind == "S" else t for t in texts}
    values, counts = np.unique(y[labelled], return_counts=True)
    for v, k in zip(values, counts, strict=True):
        if v in suspects:
            text = v.decode() if isinstance(v, bytes) else str(v)
            warnings.warn(f"y: {k} sample(s) have the label {text!r} in a numpy string array ({y.dtype}), which is "
                          f"what such an array stores for an unlabelled marker it cannot hold (None in a '<U3' array "
                          f"becomes 'Non', NaN 'nan'); {text!r} is read as a class, not as unlabelled. Fix: "
                          f"{STRING_MARKER_HINT}. If {text!r} is a class, pass y.astype(object)",
                          UnlabelledMarkerWarning, stacklevel=4)


def encode_labels(y, n, unlabelled=True):
    """Labels of n training samples -> (classes, y_enc, labelled): ``classes`` the sorted distinct labels of the
    labelled samples (>= 2), ``y_enc`` (n,) their positions in ``classes`` and -1 for unlabelled samples
    (:func:`unlabelled_mask`), ``labelled`` the indices of the labelled samples; labels of a string array that
    look like a marker it could not hold warn (module docstring). ``unlabelled=False`` (the supervised
    estimators): there is no unlabelled marker, -1 is a class like any other. Continuous targets,
    NaN in numeric labels, mixed label types, no labelled sample or one class raise ``ValueError``."""
    y = column_or_1d(y, warn=True)
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} entries but X has {n} samples")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("Input y contains NaN or infinity" + ("; mark unlabelled samples with -1" if unlabelled
                                                               else ""))
    if unlabelled:
        labelled = np.flatnonzero(~unlabelled_mask(y))
        _check_stored_markers(y, labelled)
    else:
        if unlabelled_mask(y, missing_only=True).any():
            raise ValueError("y contains missing labels (None/NaN); this estimator is supervised (-1 is a class "
                             "like any other): pass only labelled samples")
        labelled = np.arange(n)
    if labelled.size == 0:
        raise ValueError("y has no labelled samples (every entry marks an unlabelled sample)")
    yl = y[labelled]
    if yl.dtype.kind == "O":
        kinds = {type(v) for v in yl}
        if len(kinds) > 1 and not all(issubclass(k, numbers.Real) for k in kinds):
            raise ValueError(f"y mixes label types {sorted(k.__name__ for k in kinds)}; use one type")
    check_classification_targets(yl)
    classes, enc = np.unique(yl, return_inverse=True)
    if classes.size < 2:
        hint = ""
        if unlabelled and labelled.size < n and y.dtype.kind in "iuf" and np.any(y == -1):
            hint = f" and {n - labelled.size} unlabelled (-1); {BINARY_HINT}"
        raise ValueError(f"y has labelled samples of one class only ({classes.tolist()}){hint}; a classifier "
                         "needs at least 2 classes")
    y_enc = -np.ones(n, dtype=np.int64)
    y_enc[labelled] = enc.ravel()
    return classes, y_enc, labelled


def encode_targets(y_encoded, n_classes):
    """Targets y_i = (-1, ..., 1, ..., -1) in R^P with 1 at the class index (Section 5.1)."""
    Y = -np.ones((len(y_encoded), n_classes))
    Y[np.arange(len(y_encoded)), y_encoded] = 1.0
    return Y


def stratified_holdout(codes, fraction, rng, classes):
    """Positions (into the labelled samples) of a seeded stratified hold-out: per class round(fraction * count)
    samples, at least 1, leaving at least 1 for training; a class with one labelled sample cannot be split."""
    out = []
    for k in range(len(classes)):
        idx = np.flatnonzero(codes == k)
        if idx.size < 2:
            raise ValueError(f"validation_fraction: class {np.asarray(classes[k]).tolist()!r} has {idx.size} labelled "
                             "sample(s); holding out part of every class needs >= 2 per class (or pass "
                             "validation_fraction=None: the restart is then chosen by the objective (84))")
        h = min(idx.size - 1, max(1, int(round(fraction * idx.size))))
        out.append(rng.permutation(idx)[:h])
    return np.sort(np.concatenate(out))
