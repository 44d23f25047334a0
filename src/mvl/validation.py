"""Input checks shared by the estimators (kernels of Section 7.1, eq 93-94; labels; the weights c of eq 52).

Every check raises ``ValueError`` with a message that names the problem, so
that a user who passes a wrong kernel or label vector learns what to fix.
"""

from __future__ import annotations

import numpy as np

__all__ = ["as_float_array", "check_multiview_kernels", "check_precomputed", "check_precomputed_test",
           "check_test_kernels", "check_combination", "check_gamma"]


def as_float_array(obj, name):
    try:
        arr = np.asarray(obj)
    except Exception as exc:  # pragma: no cover - numpy raises many types
        raise ValueError(f"{name} cannot be converted to an array: {exc}") from exc
    if arr.dtype == object:
        # A ragged list of views (different sizes) lands here.
        try:
            shapes = [np.shape(v) for v in obj]
        except TypeError:
            shapes = "unknown"
        raise ValueError(f"{name}: views have different shapes {shapes}; every view must be n x n")
    if not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)
            or arr.dtype == np.bool_):
        raise ValueError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    return arr.astype(np.float64, copy=False)


def check_multiview_kernels(K, name="K", symmetric_tol=1e-8, exactly_symmetric=False):
    """Return ``K`` as a float64 array of shape (m, n, n), or raise ``ValueError``.

    Accepts an array of shape (m, n, n), a single (n, n) matrix (one view) or
    a list of m arrays of shape (n, n). ``exactly_symmetric``: the caller built every view exactly symmetric (e.g.
    an elementwise function of mirrored distances), so the symmetry test (m transposed passes) is skipped.
    """
    if isinstance(K, (list, tuple)):
        shapes = [np.shape(k) for k in K]
        if len(set(shapes)) > 1:
            raise ValueError(f"{name}: views have different shapes {shapes}; every view must be n x n")
    arr = as_float_array(K, name)
    if arr.ndim == 2:
        arr = arr[None]
    if arr.ndim != 3:
        raise ValueError(f"{name} must have shape (m, n, n), got {arr.shape}")
    m, n1, n2 = arr.shape
    if m == 0 or n1 == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape})")
    if n1 != n2:
        raise ValueError(f"{name} must be square in each view, got views of shape ({n1}, {n2})")
    if not np.all(np.isfinite(arr)):
        bad = sorted({int(i) for i in np.argwhere(~np.isfinite(arr))[:, 0]})
        raise ValueError(f"{name} contains NaN or inf (in view(s) {bad})")
    if exactly_symmetric:
        return arr
    exact = True
    for p in range(m):
        scale = max(1.0, float(np.max(np.abs(arr[p]))))
        asym = float(np.max(np.abs(arr[p] - arr[p].T)))
        if asym > symmetric_tol * scale:
            raise ValueError(f"{name}: view {p} is not symmetric (max |K - K^T| = {asym:.3g})")
        exact &= asym == 0.0
    if not exact:  # symmetric to rounding only: symmetrise exactly (a copy; the input is untouched)
        arr = 0.5 * (arr + arr.transpose(0, 2, 1))
    return arr


def check_precomputed(X, name="K"):
    """Sample-first per-view kernels (n, n, m) (or one view (n, n)) -> validated (m, n, n), the solvers' layout.

    NaN/inf are reported first (naming the views), then the shape, then symmetry (:func:`check_multiview_kernels`).
    """
    arr = as_float_array(X, name)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    if arr.ndim == 3 and not np.all(np.isfinite(arr)):
        bad = sorted({int(i) for i in np.argwhere(~np.isfinite(arr))[:, -1]})
        raise ValueError(f"{name} contains NaN or inf (in view(s) {bad})")
    if arr.ndim != 3 or arr.shape[0] != arr.shape[1]:
        raise ValueError(f"{name} must have shape (n_samples, n_samples, n_views), got {arr.shape}: one n x n Gram "
                         "matrix per view on the last axis")
    # one copy into the solvers' layout: each view a C-contiguous n x n block (BLAS reads it at full speed; a
    # strided view of the sample-first array makes every matrix-vector product ~10x slower)
    return check_multiview_kernels(np.ascontiguousarray(np.moveaxis(arr, -1, 0)), name=name)


def check_precomputed_test(X, m, n, name="K_test"):
    """Sample-first test kernels (t, n, m) (or (t, n) for one view) -> validated (m, t, n), C-contiguous."""
    arr = as_float_array(X, name)
    if arr.ndim == 2 and m == 1:
        arr = arr[:, :, None]
    if arr.ndim != 3 or arr.shape[1:] != (n, m):
        raise ValueError(f"{name} must have shape (n_samples, n_samples_fit, n_views) = (t, {n}, {m}), "
                         f"got {arr.shape}")
    return np.ascontiguousarray(check_test_kernels(np.moveaxis(arr, -1, 0), m, n, name=name))


def check_test_kernels(K_test, m, n, name="K_test"):
    """Return test-vs-train kernels as float64 (m, t, n), or raise ``ValueError``."""
    if isinstance(K_test, (list, tuple)):
        shapes = [np.shape(k) for k in K_test]
        if len(set(shapes)) > 1:
            raise ValueError(f"{name}: views have different shapes {shapes}")
    arr = as_float_array(K_test, name)
    if arr.ndim == 2 and m == 1:
        arr = arr[None]
    if arr.ndim != 3:
        raise ValueError(f"{name} must have shape (m, t, n) = ({m}, t, {n}), got {arr.shape}")
    if arr.shape[0] != m:
        raise ValueError(f"{name} has {arr.shape[0]} views but the model was fitted with {m}")
    if arr.shape[2] != n:
        raise ValueError(
            f"{name} has {arr.shape[2]} columns but the model was fitted on n = {n} training samples"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf")
    return arr


def check_combination(c, m, name="c"):
    """The combination vector c of eq (52); ``None`` gives the average 1/m (eq 50-51)."""
    if c is None:
        return np.full(m, 1.0 / m)
    try:
        arr = np.asarray(c)
        if arr.dtype.kind not in "iufb":
            raise TypeError(f"dtype {arr.dtype}")
        arr = arr.astype(np.float64).ravel()
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a vector of real numbers, got {c!r}") from exc
    if arr.shape != (m,):
        raise ValueError(f"{name} must have one weight per view (m = {m}), got shape {np.shape(c)}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf")
    if not np.any(arr):
        raise ValueError(f"{name} is all zeros: C f = sum_i c_i f^i would be 0 for every input and the model "
                         "would predict one class; give at least one non-zero weight (None = 1/m)")
    return arr


def check_gamma(value, name, positive=False):
    if isinstance(value, (str, bytes, bool, np.bool_)):
        raise ValueError(f"{name} must be a real number, got {value!r} ({type(value).__name__})")
    try:
        v = float(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a real number, got {value!r}") from exc
    if not np.isfinite(v) or v < 0 or (positive and v == 0):
        need = "> 0" if positive else ">= 0"
        raise ValueError(f"{name} must be finite and {need}, got {value!r}")
    return v
