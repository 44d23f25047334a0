"""Co-regularization and manifold co-regularization (Sindhwani & Rosenberg, ICML 2008) and their
equivalence with two-view MVL least squares (Minh, Bazzani & Murino, JMLR 2016, Section 3.4).

Notation. "SR" is Sindhwani & Rosenberg (2008), "JMLR" is Minh, Bazzani & Murino (2016). Training points
V = L u U' are indexed 0..n-1; ``labelled`` indexes L (l points), ``coreg_points`` indexes the set U on
which the two views are made to agree (SR eq 2; by default the unlabelled training points). Targets are
l x P matrices (one-vs-rest +-1 columns for P classes, :func:`mvl.labels.encode_targets`).

Co-regularization with squared loss (SR eq 1-2)::

    min_{f1 in H1, f2 in H2}  gamma_1 ||f1||^2 + gamma_2 ||f2||^2 + mu sum_{i in U} (f1(x_i) - f2(x_i))^2
                              + sum_{i in L} (y_i - f(x_i))^2,            f = (f1 + f2) / 2.

SR eq 3-6 rewrite it as supervised learning over g = f1 + f2 in the sum space H~ whose norm (eq 5) is the
first line: min_g ||g||^2_H~ + sum_L (y_i - g(x_i)/2)^2. H~ has the reproducing kernel (SR Theorem 2.2,
eq 7) computed by :func:`coregularization_kernel`. By the representer theorem (SR eq 8) g = sum_L alpha_i
k~(x_i, .) with alpha = 2 (K~_LL + 4 I)^-1 Y, i.e. the mean prediction f = g/2 is kernel RLS with k~ and
ridge 4: f(x) = k~(x, L) (K~_LL + 4 I)^-1 Y (:func:`coregularization_rls`); the view components are SR
eq 9-10.

The same problem in the JMLR framework (JMLR eq 43-48): divide the objective by l (JMLR eq 43 with weights
gamma_i / l and gamma_I = mu / l, M the point-cloud term of eq 59 on U), take W = R^2, the diagonal kernel
K = diag(k1/gamma_1, k2/gamma_2) (JMLR eq 44, so ||f||^2_{H_K} = gamma_1 ||f1||^2 + gamma_2 ||f2||^2, eq 45),
C = c^T with c = (1/2, 1/2) (eq 48) and between-view regularization (JMLR eq 57-59) restricted to U. In the
parameters of MVL-LS (JMLR eq 10, 53, 67-68; :class:`mvl.MVLLeastSquares`)::

    K^1 = k1 / gamma_1,  K^2 = k2 / gamma_2,  gamma_A = 1 / l,  gamma_B = mu / l,  gamma_W = 0,  c = (1/2, 1/2)

(:func:`coregularization_as_mvl`). By default MVLLeastSquares applies M_B = I_{u+l} (x) M_m (JMLR eq 57)
to *all* training points, i.e. co-regularization with U = every training point; with
``between_weights`` = the indicator w of U it applies M_B = diag(w) (x) M_m, the co-regularization of SR
on U, in its structured solver (and the dense one). The tests check both routes against an independent dense
textbook solve of the weighted system written in the tests themselves (tests/test_coreg.py: <= 1e-8
required); with the extreme grid values of the experiments (gamma_2 = 1e-6 and K2 eigenvalues up to 1e6, so
K2/gamma_2 ~ 1e12) they agree to ~1e-5 relative only, the conditioning of the problem, without changing any
prediction.

Manifold regularization (SR eq 13, Laplacian RLS of Belkin et al. 2006) with intrinsic regularizer R::

    min_{f in H1}  gamma_1 ||f||^2 + gamma_2 f_V^T R f_V + sum_L (y_i - f(x_i))^2,

is kernel RLS (ridge 1) with the kernel of SR eq 14 (:func:`manifold_regularization_kernel`), where the
intrinsic Gram matrix is K2 = R^-1; solved directly by :func:`laplacian_rls`, and as one-view MVL-LS with
gamma_A = gamma_1 / l, gamma_W = gamma_2 / l, Laplacian R (:func:`manifold_regularization_as_mvl`).

For CoMR/MR experiments (SR Section 4): k1 an ambient kernel, K2 = (M^p + 1e-6 I)^-1 (p the
``laplacian_power``) with M the normalized kNN graph Laplacian over V, its edges weighted 1 ("binary", the
manifold-regularization code's default) or by the Gaussian kernel ("kernel") (:func:`knn_graph_laplacian`,
built from the kNN graph and Laplacian of :mod:`mvl.graph` on the distances of :mod:`mvl.kernels`;
:func:`intrinsic_graph_kernel`), mu = 1; CoMR predicts out of sample with its ambient component f1 (SR eq 9).
:func:`mr_grid` (one eigendecomposition for the whole grid) and :func:`comr_grid` (one Cholesky factorisation
per pair) evaluate both on a (gamma_1, gamma_2) grid, :func:`select_on_validation` picks the pair.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from scipy import linalg
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from .graph import GRAPH_WEIGHTS, knn_mask, laplacian

__all__ = [
    "GAMMA_GRID",
    "CoRegFit",
    "coregularization_kernel",
    "coregularization_rls",
    "manifold_regularization_kernel",
    "laplacian_rls",
    "kernel_rls",
    "coregularization_as_mvl",
    "manifold_regularization_as_mvl",
    "graph_weights_name",
    "knn_graph_laplacian",
    "intrinsic_graph_spectrum",
    "intrinsic_graph_kernel",
    "ambient_spectrum",
    "mr_grid",
    "comr_grid",
    "select_on_validation",
]

GAMMA_GRID = (1e-6, 1e-4, 1e-2, 1.0, 10.0, 100.0)
"""The grid of SR Section 4.3 for gamma_1 and gamma_2."""


# ----------------------------------------------------------------------------- helpers

_POSITIVE = Interval(Real, 0, None, closed="neither")
_NONNEGATIVE = Interval(Real, 0, None, closed="left")
_POWER = Interval(Integral, 1, None, closed="left")


def _checked(**constraints):
    """scikit-learn's ``validate_params`` with these constraints (the vocabulary of the estimators'
    ``_parameter_constraints``); arrays are checked inside each function, where their shapes are known."""
    return validate_params(constraints, prefer_skip_nested_validation=True)


def _index(idx, n, name):
    idx = np.asarray(idx)
    if idx.dtype == bool:
        if idx.shape != (n,):
            raise ValueError(f"{name}: boolean mask must have shape ({n},), got {idx.shape}")
        idx = np.flatnonzero(idx)
    idx = idx.astype(np.int64).ravel()
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise ValueError(f"{name}: indices must lie in 0..{n - 1}")
    if np.unique(idx).size != idx.size:
        raise ValueError(f"{name}: repeated indices")
    return idx


def _finite_matrix(K, name, ok, expected):
    """K as a float64 array; ValueError if it is not 2-D with ``ok(K.shape)`` (``expected`` says what) or not finite."""
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or not ok(K.shape):
        raise ValueError(f"{name} must {expected} {K.shape}")
    if not np.all(np.isfinite(K)):
        raise ValueError(f"{name} contains NaN or inf")
    return K


def _gram(K, name):
    return _finite_matrix(K, name, lambda s: s[0] == s[1], "be a square Gram matrix, got shape")


def _gram_pair(K1, K2, name2="K2"):
    """K1 and a second (n, n) matrix of the same size (K2, or the regularizer R), both checked by _gram."""
    K1, K2 = _gram(K1, "K1"), _gram(K2, name2)
    if K2.shape != K1.shape:
        raise ValueError(f"K1 and {name2} must have the same shape, got {K1.shape} and {K2.shape}")
    return K1, K2


def _rows(K, n, name):
    return None if K is None else _finite_matrix(K, name, lambda s: s[1] == n, f"have shape (t, {n}), got")


def _targets(Y_L, l):
    Y = np.asarray(Y_L, dtype=np.float64)
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.ndim != 2 or Y.shape[0] != l:
        raise ValueError(f"Y_L must have shape ({l}, P), got {np.shape(Y_L)}")
    return Y


def _positive(value, name):
    v = float(value)
    if not np.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return v


def _coreg_points(coreg_points, labelled, n):
    if coreg_points is None:
        mask = np.ones(n, dtype=bool)
        mask[labelled] = False
        return np.flatnonzero(mask)
    return _index(coreg_points, n, "coreg_points")


def _spd_factor(A):
    """Cholesky factor of a symmetric positive definite matrix (symmetrised first)."""
    return linalg.cho_factor(0.5 * (A + A.T), lower=True, check_finite=False)


# ----------------------------------------------------------------------------- co-regularization kernel


def _coreg_parts(K1, K2, U, gamma1, gamma2, mu):
    """Cholesky of H^-1 = I + mu S (SR Theorem 2.2) and the d-matrix of the training points."""
    S = K1[np.ix_(U, U)] / gamma1 + K2[np.ix_(U, U)] / gamma2
    Hinv = mu * S
    Hinv[np.diag_indices_from(Hinv)] += 1.0
    D = K1[U] / gamma1 - K2[U] / gamma2  # column j is d_{x_j} (SR eq 7), shape (|U|, n)
    return _spd_factor(Hinv), D


@_checked(gamma1=[_POSITIVE], gamma2=[_POSITIVE], mu=[_NONNEGATIVE], K1=["array-like"], K2=["array-like"],
          coreg_points=["array-like"], K1_test=["array-like", None], K2_test=["array-like", None])
def coregularization_kernel(K1, K2, gamma1, gamma2, mu, coreg_points, K1_test=None, K2_test=None):
    """Gram matrices of the co-regularization kernel k~ (SR Theorem 2.2, eq 7).

    k~(x, z) = s(x, z) - mu d_x^T H d_z with s = k1/gamma_1 + k2/gamma_2, d_x = k1(U, x)/gamma_1 -
    k2(U, x)/gamma_2 and H = (I + mu S)^-1, S = K1_UU/gamma_1 + K2_UU/gamma_2. k~ is the reproducing kernel
    of the sum space H1 + H2 with the co-regularization norm (SR eq 5); in the JMLR framework it is the
    scalar kernel that the diagonal kernel K = diag(k1/gamma_1, k2/gamma_2) of JMLR eq 44 induces on
    c^T f once between-view agreement on U is imposed (JMLR eq 43-48).

    Parameters
    ----------
    K1, K2 : (n, n) Gram matrices of the two base kernels on the training points.
    gamma1, gamma2, mu : float > 0 (mu >= 0).
    coreg_points : indices (or boolean mask) of U within the training points.
    K1_test, K2_test : optional (t, n) base-kernel values between t other points and the training points
        (both needed for the test block).

    Returns
    -------
    (Kt, Kt_test) : (n, n) and (t, n) (None without test kernels).
    """
    K1, K2 = _gram_pair(K1, K2)
    n = K1.shape[0]
    U = _index(coreg_points, n, "coreg_points")
    fac, D = _coreg_parts(K1, K2, U, gamma1, gamma2, mu)
    HD = linalg.cho_solve(fac, D, check_finite=False)
    Kt = K1 / gamma1 + K2 / gamma2 - mu * (D.T @ HD)
    Kt = 0.5 * (Kt + Kt.T)
    if K1_test is None and K2_test is None:
        return Kt, None
    if K1_test is None or K2_test is None:
        raise ValueError("k~ at test points needs both K1_test and K2_test (use coregularization_rls for the "
                         "ambient component alone)")
    K1t, K2t = _rows(K1_test, n, "K1_test"), _rows(K2_test, n, "K2_test")
    if K1t.shape != K2t.shape:
        raise ValueError(f"K1_test and K2_test must have the same shape, got {K1t.shape} and {K2t.shape}")
    Dt = K1t[:, U].T / gamma1 - K2t[:, U].T / gamma2
    Kt_test = K1t / gamma1 + K2t / gamma2 - mu * (Dt.T @ HD)
    return Kt, Kt_test


@dataclass
class CoRegFit:
    """Solution of co-regularized least squares (SR eq 2 with squared loss), returned by
    :func:`coregularization_rls`.

    alpha : (l, P) expansion coefficients of g = f1 + f2 = sum_L alpha_i k~(x_i, .) (SR eq 8).
    beta : (``|U|``, P) the vector H d_L alpha that enters the components (SR eq 9-10).
    train_views : (2, n, P) f1 and f2 on the training points; ``train`` = their mean (SR eq 1).
    test_views : (2, t, P) f1 and f2 on test points (f2 = NaN if K2_test was not given); ``test`` = mean.
    """

    alpha: np.ndarray
    beta: np.ndarray
    train_views: np.ndarray
    train: np.ndarray
    test_views: np.ndarray | None = None
    test: np.ndarray | None = None

    @property
    def test_ambient(self):
        """f1 on the test points: the out-of-sample CoMR prediction (SR Section 4.1, eq 9)."""
        return None if self.test_views is None else self.test_views[0]


@_checked(gamma1=[_POSITIVE], gamma2=[_POSITIVE], mu=[_NONNEGATIVE], K1=["array-like"], K2=["array-like"],
          labelled=["array-like"], Y_L=["array-like"], coreg_points=["array-like", None], K1_test=["array-like", None],
          K2_test=["array-like", None])
def coregularization_rls(K1, K2, labelled, Y_L, gamma1, gamma2, mu, coreg_points=None,
                         K1_test=None, K2_test=None):
    """Co-regularized least squares (SR eq 2, squared loss) through the kernel k~ (SR eq 6-10).

    Solves alpha = 2 (K~_LL + 4 I)^-1 Y (RLS with k~ for g = f1 + f2 and the loss on f = g/2) and returns the
    view components (SR eq 9-10)::

        f1(x) = (k1(x, L) alpha - mu k1(x, U) beta) / gamma_1,
        f2(x) = (k2(x, L) alpha + mu k2(x, U) beta) / gamma_2,    beta = H d_L alpha.

    ``coreg_points`` defaults to the training points not in ``labelled``. ``K2_test`` may be omitted
    (graph kernels have no test rows): the test block then holds the ambient component f1 only and
    ``test`` is None.
    """
    K1, K2 = _gram_pair(K1, K2)
    n = K1.shape[0]
    lab = _index(labelled, n, "labelled")
    Y = _targets(Y_L, lab.size)
    U = _coreg_points(coreg_points, lab, n)
    fac, D = _coreg_parts(K1, K2, U, gamma1, gamma2, mu)
    DL = D[:, lab]
    HDL = linalg.cho_solve(fac, DL, check_finite=False)
    KLL = K1[np.ix_(lab, lab)] / gamma1 + K2[np.ix_(lab, lab)] / gamma2 - mu * (DL.T @ HDL)  # K~_LL
    KLL = 0.5 * (KLL + KLL.T)
    KLL[np.diag_indices_from(KLL)] += 4.0
    alpha = 2.0 * linalg.solve(KLL, Y, assume_a="pos", check_finite=False)
    beta = HDL @ alpha

    def views(A1, A2):
        f1 = (A1[:, lab] @ alpha - mu * (A1[:, U] @ beta)) / gamma1
        f2 = None if A2 is None else (A2[:, lab] @ alpha + mu * (A2[:, U] @ beta)) / gamma2
        return f1, f2

    f1, f2 = views(K1, K2)
    train_views = np.stack([f1, f2])
    fit = CoRegFit(alpha=alpha, beta=beta, train_views=train_views, train=0.5 * (f1 + f2))
    if K1_test is not None:
        K1t = _rows(K1_test, n, "K1_test")
        K2t = _rows(K2_test, n, "K2_test")
        t1, t2 = views(K1t, K2t)
        fit.test_views = np.stack([t1, np.full_like(t1, np.nan) if t2 is None else t2])
        fit.test = None if t2 is None else 0.5 * (t1 + t2)
    elif K2_test is not None:
        raise ValueError("K2_test given without K1_test")
    return fit


# ----------------------------------------------------------------------------- manifold regularization


@_checked(gamma1=[_POSITIVE], gamma2=[_POSITIVE], K1=["array-like"], K2=["array-like"],
          K1_test=["array-like", None])
def manifold_regularization_kernel(K1, K2, gamma1, gamma2, K1_test=None):
    """Gram matrices of the manifold-regularization kernel (SR eq 14; Sindhwani et al. 2005).

    k_mr(x, z) = s(x, z) - d_x^T H d_z with s = k1/gamma_1, d_x = k1(V, x)/gamma_1 and
    H = (K1/gamma_1 + K2/gamma_2)^-1, V all n training points. It is the reproducing kernel of H1 with norm
    gamma_1 ||f||^2 + gamma_2 f_V^T K2^-1 f_V, so RLS with k_mr (ridge 1) is Laplacian RLS (SR eq 13) with
    intrinsic regularizer R = K2^-1 (e.g. K2 = (M^p + 1e-6 I)^-1, R = M^p + 1e-6 I).

    Returns ``(Kmr, Kmr_test)``: (n, n) and (t, n) (None without ``K1_test``).
    """
    K1, K2 = _gram_pair(K1, K2)
    n = K1.shape[0]
    A = K1 / gamma1
    fac = _spd_factor(A + K2 / gamma2)
    HA = linalg.cho_solve(fac, A, check_finite=False)
    Kmr = A - A @ HA
    Kmr = 0.5 * (Kmr + Kmr.T)
    if K1_test is None:
        return Kmr, None
    At = _rows(K1_test, n, "K1_test") / gamma1
    return Kmr, At - At @ HA


@_checked(gamma1=[_POSITIVE], gamma2=[_NONNEGATIVE], K1=["array-like"], labelled=["array-like"], Y_L=["array-like"],
          R=["array-like"], K1_test=["array-like", None], RK1=["array-like", None])
def laplacian_rls(K1, labelled, Y_L, gamma1, gamma2, R, K1_test=None, RK1=None):
    """Laplacian RLS (SR eq 13 with squared loss; Belkin, Niyogi & Sindhwani 2006) solved directly.

    f = sum_{j in V} a_j k1(x_j, .) with (J K1 + gamma_1 I + gamma_2 R K1) a = J Y, J the indicator of the
    labelled rows (the stationarity condition of gamma_1 a^T K1 a + gamma_2 a^T K1 R K1 a + ||J(Y - K1 a)||^2).
    ``RK1`` = R @ K1 may be passed to reuse it across calls.

    Returns ``(a, f_train, f_test)``: (n, P), (n, P) and (t, P) (None without ``K1_test``).
    """
    K1, R = _gram_pair(K1, R, "R")
    n = K1.shape[0]
    lab = _index(labelled, n, "labelled")
    Y = _targets(Y_L, lab.size)
    A = gamma2 * (R @ K1 if RK1 is None else RK1)
    A[lab] += K1[lab]
    A[np.diag_indices(n)] += gamma1
    rhs = np.zeros((n, Y.shape[1]))
    rhs[lab] = Y
    a = linalg.solve(A, rhs, overwrite_a=True, check_finite=False)
    f_test = None if K1_test is None else _rows(K1_test, n, "K1_test") @ a
    return a, K1 @ a, f_test


@_checked(ridge=[_NONNEGATIVE], K_LL=["array-like"], Y_L=["array-like"])
def kernel_rls(K_LL, Y_L, ridge=1.0):
    """Kernel RLS coefficients alpha = (K_LL + ridge I)^-1 Y_L; predictions are K(x, L) alpha."""
    K = _gram(K_LL, "K_LL").copy()
    Y = _targets(Y_L, K.shape[0])
    K[np.diag_indices_from(K)] += float(ridge)
    return linalg.solve(0.5 * (K + K.T), Y, assume_a="sym", check_finite=False)


# ----------------------------------------------------------------------------- the JMLR formulation


@_checked(gamma1=[_POSITIVE], gamma2=[_POSITIVE], mu=[_NONNEGATIVE],
          n_labelled=[Interval(Integral, 1, None, closed="left")], K1=["array-like"], K2=["array-like"],
          K1_test=["array-like", None], K2_test=["array-like", None])
def coregularization_as_mvl(K1, K2, gamma1, gamma2, mu, n_labelled, K1_test=None, K2_test=None):
    """Inputs of two-view MVL-LS that solve co-regularized least squares (JMLR eq 43-48 with eq 44).

    Returns a dict with ``K`` (2, n, n) = (K1/gamma_1, K2/gamma_2) (JMLR eq 44), ``K_test`` (2, t, n) or None,
    ``gamma_A`` = 1/l, ``gamma_B`` = mu/l, ``gamma_W`` = 0 and ``c`` = (1/2, 1/2) (JMLR eq 48, SR eq 1).
    MVL-LS multiplies the gammas by l again (JMLR eq 67-68), so the system it solves is the SR objective
    (SR eq 2) itself. Use with ``MVLLeastSquares(gamma_A, gamma_B, gamma_W, c, between_weights=w)``, w the
    indicator of U (None when U is every training point). ``K`` and ``K_test`` are in the per-view layout (view
    first); the estimators take them sample-first: ``np.moveaxis(K, 0, -1)`` with ``kernel="precomputed"``.
    """
    K1, K2 = _gram_pair(K1, K2)
    l = int(n_labelled)
    K = np.stack([K1 / gamma1, K2 / gamma2])
    K = 0.5 * (K + K.transpose(0, 2, 1))
    K_test = None
    if K1_test is not None and K2_test is not None:
        K_test = np.stack([np.asarray(K1_test, float) / gamma1, np.asarray(K2_test, float) / gamma2])
    return dict(K=K, K_test=K_test, gamma_A=1.0 / l, gamma_B=float(mu) / l, gamma_W=0.0, c=np.array([0.5, 0.5]))


@_checked(gamma1=[_POSITIVE], gamma2=[_NONNEGATIVE], n_labelled=[Interval(Integral, 1, None, closed="left")],
          K1=["array-like"], R=["array-like"])
def manifold_regularization_as_mvl(K1, R, gamma1, gamma2, n_labelled):
    """Inputs of one-view MVL-LS that solve Laplacian RLS (SR eq 13; JMLR eq 42 with m = 1).

    Returns a dict with ``K`` (1, n, n), ``laplacian`` (1, n, n) = R (per-view layout, as
    :func:`coregularization_as_mvl`), ``gamma_A`` = gamma_1/l, ``gamma_W`` = gamma_2/l, ``gamma_B`` = 0 and
    ``c`` = (1,).
    """
    K1, R = _gram_pair(K1, R, "R")
    l = int(n_labelled)
    return dict(K=K1[None].copy(), laplacian=(0.5 * (R + R.T))[None], gamma_A=float(gamma1) / l,
                gamma_W=float(gamma2) / l, gamma_B=0.0, c=np.array([1.0]))


# ----------------------------------------------------------------------------- graphs and intrinsic kernel


def graph_weights_name(weights):
    """The canonical name of a kNN graph weight convention (:data:`mvl.graph.GRAPH_WEIGHTS`; "heat" is an alias
    of "kernel")."""
    name = {"heat": "kernel"}.get(str(weights), str(weights))
    if name not in GRAPH_WEIGHTS:
        raise ValueError(f"weights must be one of {GRAPH_WEIGHTS} (or the alias 'heat'), got {weights!r}")
    return name


@validate_params({"sqdist": ["array-like"], "n_neighbors": [Interval(Integral, 1, None, closed="left")],
                  "weights": [StrOptions({*GRAPH_WEIGHTS, "heat"})],
                  "sigma": [None, Interval(Real, 0, None, closed="neither")]}, prefer_skip_nested_validation=True)
def knn_graph_laplacian(sqdist, n_neighbors, weights="binary", sigma=None):
    """Normalized Laplacian M = I - D^-1/2 W D^-1/2 of the symmetrised kNN graph (SR Section 4.3), the kNN graph of
    :func:`mvl.graph.knn_mask` on the distances and the Laplacian of :func:`mvl.graph.laplacian`.

    ``sqdist`` is the (n, n) matrix of squared distances between the graph's vertices (the labelled and
    unlabelled training points). i ~ j if j is among the ``n_neighbors`` nearest points of i or i among those
    of j. ``weights``: "binary" (W_ij = 1 on edges, the default of the manifold-regularization code) or
    "kernel" (W_ij = exp(-d_ij^2 / (2 sigma^2)) on edges, the Gaussian kernel of width ``sigma`` as weights,
    as :func:`mvl.graph.knn_weights` does with a kernel matrix; "heat" is accepted as an alias).
    """
    D2 = _gram(sqdist, "sqdist")
    n = D2.shape[0]
    if not n_neighbors < n:
        raise ValueError(f"n_neighbors must be in 1..{n - 1}, got {n_neighbors}")
    weights = graph_weights_name(weights)
    mask = knn_mask(-D2, n_neighbors)  # nearest = most similar
    if weights == "binary":
        W = mask.astype(np.float64)
    else:
        if sigma is None:
            raise ValueError("kernel graph weights need the width sigma")
        W = np.where(mask, np.exp(-0.5 * (D2 + D2.T) / (2.0 * sigma**2)), 0.0)
    return laplacian(W, normalized=True)


@_checked(M=["array-like"], laplacian_power=[_POWER], eps=[_NONNEGATIVE])
def intrinsic_graph_spectrum(M, laplacian_power, eps=1e-6):
    """Eigendecomposition of the intrinsic regularizer R = M^p + eps I (p = ``laplacian_power``).

    One symmetric eigendecomposition M = V diag(lam) V^T (lam clipped at 0, a Laplacian is PSD); returns
    ``(r, V)`` with r = lam^p + eps, so R = V diag(r) V^T and K2 = R^-1 = V diag(1/r) V^T.
    """
    M = _gram(M, "M")
    p = int(laplacian_power)
    lam, V = linalg.eigh(0.5 * (M + M.T), check_finite=False)
    lam = np.clip(lam, 0.0, None)  # a Laplacian is PSD; clip rounding below 0
    return lam**p + eps, V


@_checked(M=["array-like"], laplacian_power=[_POWER], eps=[_NONNEGATIVE])
def intrinsic_graph_kernel(M, laplacian_power, eps=1e-6):
    """The intrinsic Gram matrix K2 = (M^p + eps I)^-1 of SR Section 4.3 (p = ``laplacian_power``, the "p" of
    SR Table 4) and its inverse R = M^p + eps I.

    Computed from one symmetric eigendecomposition of M (:func:`intrinsic_graph_spectrum`), so both are
    exactly symmetric and mutually inverse to rounding. Returns ``(K2, R)``.
    """
    r, V = intrinsic_graph_spectrum(M, laplacian_power, eps)
    K2 = (V / r) @ V.T
    R = (V * r) @ V.T
    return 0.5 * (K2 + K2.T), 0.5 * (R + R.T)


# ----------------------------------------------------------------------------- experiments (SR Section 4.3)


def ambient_spectrum(K1, rtol=None):
    """Eigendecomposition of the ambient Gram matrix restricted to its numerical range: K1 ~ Q diag(lam) Q^T.

    Keeps the eigenvalues above ``rtol`` * the largest (default rtol = n * machine epsilon, the threshold of
    ``numpy.linalg.matrix_rank``); the rest are zero to rounding (a linear kernel on d features has rank d).
    Returns ``(lam, Q)``: (r,) and (n, r). F = Q diag(sqrt(lam)) holds the coordinates of the training points'
    feature vectors in an orthonormal basis of their span (F F^T = K1), used by :func:`mr_grid`.
    """
    K1 = _gram(K1, "K1")
    n = K1.shape[0]
    lam, Q = linalg.eigh(0.5 * (K1 + K1.T), check_finite=False)
    tol = (n * np.finfo(np.float64).eps if rtol is None else float(rtol)) * max(float(lam[-1]), 0.0)
    keep = lam > tol
    if not keep.any():
        raise ValueError("K1 is zero to rounding")
    return lam[keep], Q[:, keep]


def _grid_pairs(grid):
    pairs = [(g1, g2) for g1 in grid for g2 in grid]
    for g1, g2 in pairs:
        _positive(g1, "gamma1")
        _positive(g2, "gamma2")
    return pairs


@_checked(K1=["array-like"], R=["array-like"], labelled=["array-like"], Y_L=["array-like"], K1_eval=["array-like"],
          grid=["array-like"], K1_spectrum=[tuple, None])
def mr_grid(K1, R, labelled, Y_L, K1_eval, grid=GAMMA_GRID, K1_spectrum=None):
    """Laplacian RLS (MR, SR eq 13) outputs for every (gamma_1, gamma_2) on ``grid`` x ``grid``, from one
    eigendecomposition shared by all pairs.

    ``K1_eval`` (t, n) holds k1 between the evaluation points (e.g. validation and test) and the training
    points; ``K1_spectrum`` = :func:`ambient_spectrum` (K1), computed here if not given (pass it to share it
    between several R). Returns a dict (gamma_1, gamma_2) -> (f_train (n, P), f_eval (t, P)).

    Method. With F = Q diag(sqrt(lam)) (F F^T = K1, orthonormal coordinates of the training features) and
    F_t = K1_eval Q diag(lam^-1/2) (coordinates of the evaluation points' features projected on that span;
    the orthogonal rest does not change f(x), which is a combination of k1(x_j, .), j in V), MR minimises
    ``gamma_1 |w|^2 + gamma_2 (F w)^T R (F w) + |Y - F_L w|^2`` over w. One eigendecomposition
    F^T R F = W diag(theta) W^T diagonalises the regulariser gamma_1 I + gamma_2 F^T R F = W diag(g) W^T,
    g = gamma_1 + gamma_2 theta, for every pair; with Psi = F W and Woodbury's identity for the labelled term,
    w = W diag(1/g) Psi_L^T c, c = (I_l + Psi_L diag(1/g) Psi_L^T)^-1 Y, so each pair costs an l x l solve and
    two products: f_train = Psi diag(1/g) Psi_L^T c, f_eval = (F_t W) diag(1/g) Psi_L^T c. The direct solver
    :func:`laplacian_rls` solves the same problem as one n x n system per pair (tests compare the two).
    """
    K1, R = _gram_pair(K1, R, "R")
    n = K1.shape[0]
    lab = _index(labelled, n, "labelled")
    Y = _targets(Y_L, lab.size)
    K1e = _rows(K1_eval, n, "K1_eval")
    pairs = _grid_pairs(grid)
    lam, Q = ambient_spectrum(K1) if K1_spectrum is None else K1_spectrum
    s = np.sqrt(lam)
    F = Q * s
    B = F.T @ (0.5 * (R + R.T)) @ F
    theta, W = linalg.eigh(0.5 * (B + B.T), check_finite=False)
    theta = np.clip(theta, 0.0, None)  # F^T R F is PSD
    Psi = F @ W
    Psi_eval = ((K1e @ Q) / s) @ W
    Psi_L = Psi[lab]
    eye = np.eye(lab.size)
    out = {}
    for g1, g2 in pairs:
        d = 1.0 / (g1 + g2 * theta)
        T = (Psi_L * d) @ Psi_L.T
        c = linalg.solve(0.5 * (T + T.T) + eye, Y, assume_a="pos", check_finite=False)
        b = d[:, None] * (Psi_L.T @ c)
        out[(g1, g2)] = (Psi @ b, Psi_eval @ b)
    return out


@_checked(K1=["array-like"], K2=["array-like"], labelled=["array-like"], Y_L=["array-like"], K1_eval=["array-like"],
          mu=[_NONNEGATIVE], grid=["array-like"], coreg_points=["array-like", None])
def comr_grid(K1, K2, labelled, Y_L, K1_eval, mu=1.0, grid=GAMMA_GRID, coreg_points=None):
    """CoMR outputs for every (gamma_1, gamma_2): co-regularized RLS with k1 (ambient) and K2 (intrinsic).

    The computation of :func:`coregularization_rls` (SR eq 7-10) with the blocks of K1 and K2 that every pair
    needs taken out once; each pair then costs one Cholesky factorisation of I + mu S (``|U| x |U|``, SR
    Theorem 2.2), which is what changes with (gamma_1, gamma_2).

    Returns a dict (gamma_1, gamma_2) -> (f_train (n, P) = (f1 + f2)/2 on the training points,
    f1_train (n, P), f1_eval (t, P) = the ambient component at the evaluation points, SR eq 9).
    """
    K1, K2 = _gram_pair(K1, K2)
    n = K1.shape[0]
    lab = _index(labelled, n, "labelled")
    Y = _targets(Y_L, lab.size)
    K1e = _rows(K1_eval, n, "K1_eval")
    U = _coreg_points(coreg_points, lab, n)
    pairs = _grid_pairs(grid)
    K1_UU, K2_UU = K1[np.ix_(U, U)], K2[np.ix_(U, U)]
    K1_UL, K2_UL = K1[np.ix_(U, lab)], K2[np.ix_(U, lab)]
    K1_LL, K2_LL = K1[np.ix_(lab, lab)], K2[np.ix_(lab, lab)]
    K1_VL, K1_VU, K2_VL, K2_VU = K1[:, lab], K1[:, U], K2[:, lab], K2[:, U]
    K1e_L, K1e_U = K1e[:, lab], K1e[:, U]
    diag_U = np.diag_indices(U.size)
    out = {}
    for g1, g2 in pairs:
        Hinv = (mu / g1) * K1_UU + (mu / g2) * K2_UU
        Hinv[diag_U] += 1.0
        fac = linalg.cho_factor(Hinv, lower=True, overwrite_a=True, check_finite=False)
        DL = K1_UL / g1 - K2_UL / g2
        HDL = linalg.cho_solve(fac, DL, check_finite=False)
        KLL = K1_LL / g1 + K2_LL / g2 - mu * (DL.T @ HDL)
        KLL = 0.5 * (KLL + KLL.T)
        KLL[np.diag_indices_from(KLL)] += 4.0
        alpha = 2.0 * linalg.solve(KLL, Y, assume_a="pos", check_finite=False)
        beta = HDL @ alpha
        f1 = (K1_VL @ alpha - mu * (K1_VU @ beta)) / g1
        f2 = (K2_VL @ alpha + mu * (K2_VU @ beta)) / g2
        f1_eval = (K1e_L @ alpha - mu * (K1e_U @ beta)) / g1
        out[(g1, g2)] = (0.5 * (f1 + f2), f1, f1_eval)
    return out


def select_on_validation(val_errors, val_losses=None):
    """Key with the smallest validation error; ties broken by the smaller validation squared loss, then by
    the order of the keys (grid order). Both arguments are dicts keyed alike."""
    keys = list(val_errors)
    best = min(val_errors.values())
    tied = [k for k in keys if val_errors[k] == best]
    if val_losses is None or len(tied) == 1:
        return tied[0]
    return min(tied, key=lambda k: val_losses[k])
