"""Multi-view perceptrons: the matrix multi-view Perceptron of Cavallanti, Cesa-Bianchi & Gentile (2008) in
dual (kernel) form and the orthogonal matrix multi-view Perceptron of Fornoni (2009, Chapter 4).

Matrix multi-view Perceptron (thesis Figure 3.1). An instance is a matrix X_t = [x_{t,1}, ..., x_{t,K}]
of K view vectors; with the potential Phi(V) = 1/2 ||V||_{S_2p}^2 (Schatten 2p-norm, p >= 1) the algorithm
keeps the primal weight V_t = sum_{s in S_t} y_s X_s (eq 3.1.7, S_t = mistakes so far) and predicts with
the dual weight W_t = grad Phi(V_t) = ||V_t||_{S_2p}^{2(1-p)} V_t (V_t^T V_t)^{p-1} (Theorem 3.1.2, eq 3.1.4):

    y_hat_t = sign <W_{t-1}, X_t> = sign Tr(F_{t-1} V_{t-1}^T X_t),
    F_t = (V_t^T V_t)^{p-1} ||V_t||_{S_2p}^{2(1-p)},  ||V||_{S_2p}^2 = Tr((V^T V)^p)^{1/p}     (3.1.10, 3.1.23)

and on a mistake (y_t <W_{t-1}, X_t> <= 0) sets V_t = V_{t-1} + y_t X_t. Dual form (Section 3.1.2):
V^T X_t (K x K) has entries sum_s y_s k(x_{s,k}, x_{t,j}) (eq 3.1.16) and V^T V is updated by eq (3.1.17),
so only inner products between view vectors enter -- a kernel for every pair of views.
p = 1 is K perceptrons whose margins add up; p > 1 couples the views through V^T V.

Orthogonal multi-view Perceptron (thesis Figure 4.1). Each view vector is embedded in its own block of
R^(d_1 + ... + d_K) (eq 4.1.1), so views of different spaces need no cross-view inner products: V^T V and
V^T X are diagonal (eq 4.1.4-4.1.5) and

    y_hat_t = sign sum_k ||v_{t-1,k}||^{2(p-1)} <v_{t-1,k}, x_{t,k}>                          (4.1.6)

(times the positive factor ||V||_{S_2p}^{2(1-p)} of grad Phi, which the sign ignores). It equals the matrix
Perceptron run with zero cross-view kernels (eq 4.1.7); one kernel per view suffices.

Online-to-batch conversion (Section 3.1.3, Cesa-Bianchi, Conconi & Gentile 2004, Theorem 3.1.6): the
average hypothesis W_bar_T = 1/T sum_{t=1}^T W_{t-1} (eq 3.1.21, 3.1.23) over all T = n_epochs * n online
steps, in dual form W_bar_T = 1/T sum_{s in S_T} y_s X_s F_bar_s with F_bar_s = sum_{j=t_s}^{T-1} F_j
accumulated during training (eq 3.1.24-3.1.25). ``averaging=False`` keeps the last hypothesis W_T.

Mistake bound (Theorem 3.1.3, eq 3.1.6): for any comparison matrix U, with loss
L_n(U) = sum_t sum_k [1 - y_t <u_k, x_{t,k}>]_+ (eq 3.1.5), X = max_t ||X_t||_{S_2p} and 1/(2p) + 1/(2q) = 1,
m <= L/K + (2p - 1) (X ||U||_{S_2q} / K)^2 + (X ||U||_{S_2q} / K) sqrt((2p - 1) L / K).

Multi-class problems are solved one-vs-all (one perceptron per class on the same sample order, argmax of
the scores); two classes are one +-1 problem.
"""

from __future__ import annotations

import time

import numpy as np

from sklearn.utils.validation import check_is_fitted

from numbers import Real

from sklearn.base import _fit_context

from ..docstrings import PARAMETERS, SECTIONS, fill_parameters
from .base import StrictInterval, COUNT, SEED, MultiViewClassifier, reject_sparse
from ..kernels import linear_kernel, rbf_kernel as gaussian_kernel
from ..validation import as_float_array

__all__ = ["KernelMultiViewPerceptron", "OrthogonalMultiViewPerceptron", "cross_view_kernels",
           "check_cross_view_kernels"]


# ----------------------------------------------------------------------------- kernels across views


def cross_view_kernels(views, views_test=None, kernel="gaussian", standardize_features=False, **kwargs):
    """One kernel for every pair of views, as the matrix Perceptron's dual form needs (Section 3.1.2).

    The views must live in the same space R^d (Section 3.2): the m n vectors are pooled and a single
    kernel (``"gaussian"`` with a median bandwidth of the pooled vectors, or ``"linear"``; standardisation
    with pooled training statistics) is evaluated on all pairs, so the (m n) x (m n) matrix is PSD.

    Returns ``(G, G_test)`` sample-first (the ``kernel="precomputed"`` input of the perceptrons): G of shape
    (n, n, m, m), G[a, b, k, j] = k(x_{a,k}, x_{b,j}), and G_test (t, n, m, m), G_test[s, b, k, j] =
    k(x^test_{s,k}, x_{b,j}) (None without test views). Memory is m^2 n^2 doubles.
    """
    fn = {"gaussian": gaussian_kernel, "linear": linear_kernel}.get(kernel)
    if fn is None:
        raise ValueError(f"kernel must be 'gaussian' or 'linear', got {kernel!r}")
    views = [np.asarray(v, dtype=np.float64) for v in views]
    if not views:
        raise ValueError("views is empty")
    shapes = {v.shape for v in views}
    if len(shapes) != 1 or views[0].ndim != 2:
        raise ValueError(f"cross-view kernels need views of one shape (n, d), got {[v.shape for v in views]}")
    m, (n, _d) = len(views), views[0].shape
    pooled_test = None
    if views_test is not None:
        views_test = [np.asarray(v, dtype=np.float64) for v in views_test]
        if len(views_test) != m or len({v.shape for v in views_test}) != 1 or views_test[0].shape[1:] != (_d,):
            raise ValueError(f"views_test must be {m} arrays of one shape (t, {_d}), "
                             f"got {[v.shape for v in views_test]}")
        pooled_test = np.vstack(views_test)
    G, Gt = fn(np.vstack(views), pooled_test, standardize_features=standardize_features, **kwargs)
    G = np.ascontiguousarray(G.reshape(m, n, m, n).transpose(1, 3, 0, 2))
    if Gt is None:
        return G, None
    t = views_test[0].shape[0]
    return G, np.ascontiguousarray(Gt.reshape(m, t, m, n).transpose(1, 3, 0, 2))


def check_cross_view_kernels(G, name="K", symmetric_tol=1e-8):
    """Validate a matrix kernel (m, m, n, n) with G[k, j] = G[j, k]^T (the solvers' layout); returns it as
    float64."""
    arr = as_float_array(G, name)
    if arr.ndim != 4 or arr.shape[0] != arr.shape[1] or arr.shape[2] != arr.shape[3]:
        raise ValueError(f"{name} must have shape (m, m, n, n), got {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[2] == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape})")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf")
    asym = float(np.max(np.abs(arr - arr.transpose(1, 0, 3, 2))))
    if asym > symmetric_tol * max(1.0, float(np.max(np.abs(arr)))):
        raise ValueError(f"{name}: the matrix kernel is not symmetric, G[k, j] != G[j, k]^T "
                         f"(max difference {asym:.3g})")
    return arr


# ----------------------------------------------------------------------------- the online learner


def _ndim(obj):
    """ndim of an array-like without numpy's array-function dispatch (which array wrappers may refuse)."""
    if isinstance(getattr(obj, "ndim", None), int):
        return obj.ndim
    try:
        return np.asarray(obj).ndim
    except ValueError:  # ragged nested lists: left to the validators' messages
        return None


def _potential_factor(VtV, p):
    """F = (V^T V)^{p-1} ||V||_{S_2p}^{2(1-p)} (eq 3.1.4, 3.1.23); 0 for V = 0. Scale-free evaluation."""
    s, Q = np.linalg.eigh(VtV)
    s = np.clip(s, 0.0, None)
    top = s[-1]
    if top <= 0:
        return np.zeros_like(VtV)
    r = s / top
    if p == 1.0:
        return np.eye(VtV.shape[0])
    return (Q * r ** (p - 1.0)) @ Q.T * float(np.sum(r ** p)) ** ((1.0 - p) / p)


def _orth_factor(sq, p):
    """Diagonal of F for orthogonal instances: ||v_k||^{2(p-1)} ||V||_{S_2p}^{2(1-p)}, shape (..., K)."""
    top = np.max(sq, axis=-1, keepdims=True)
    out = np.zeros_like(sq)
    live = top[..., 0] > 0
    if p == 1.0:
        out[live] = 1.0
        return out
    r = sq[live] / top[live]
    out[live] = r ** (p - 1.0) * np.sum(r ** p, axis=-1, keepdims=True) ** ((1.0 - p) / p)
    return out


def _run_online(rows, self_kernel, n, Y, order, p, diagonal):
    """Run the perceptrons of all binary problems over the sample sequence ``order``.

    ``rows(i)`` returns the kernel row of training sample i: (K, K, n) with rows(i)[j, k, s] =
    k(x_{i,j}, x_{s,k}) (full) or (K, n) with rows(i)[k, s] = k_k(x_{i,k}, x_{s,k}) (diagonal);
    ``self_kernel(i)`` is X_i^T X_i, (K, K) or (K,). Y is (n, Pb) of +-1.

    Returns a (n, Pb) signed mistake counts, Gamma (n, Pb, K, K) or (n, Pb, K) averaging coefficients
    with W_bar = 1/T sum_i X_i Gamma_i, the last F_T, and mistakes per epoch (per problem).
    """
    Pb = Y.shape[1]
    Kv = self_kernel(0).shape[0]
    shape = (Pb, Kv) if diagonal else (Pb, Kv, Kv)
    a = np.zeros((n, Pb))
    VtV = np.zeros(shape)
    F = np.zeros(shape)  # F_0 = 0 (V_0 = 0)
    Csum = np.zeros(shape)  # sum_{j <= t-1} F_j
    D = np.zeros((n,) + shape)  # sum over mistakes on sample i of y_i * C_{before}
    mistakes = np.zeros(Pb, dtype=np.int64)
    idx = np.arange(Pb)
    for i in order:
        R = rows(i)
        if diagonal:
            M = (R @ a).T  # (Pb, K): [V^T X_t]_kk = sum_s a_s k_k(x_{s,k}, x_{t,k})
            score = np.sum(F * M, axis=1)
        else:
            M = np.moveaxis(R @ a, -1, 0).transpose(0, 2, 1)  # (Pb, K, K): [V^T X_t]_{kj} (eq 3.1.16)
            score = np.einsum("ckj,ckj->c", F, M)
        Csum += F
        y = Y[i]
        wrong = idx[y * score <= 0]
        if wrong.size:
            mistakes[wrong] += 1
            yw = y[wrong]
            XtX = self_kernel(i)
            if diagonal:
                VtV[wrong] += 2.0 * yw[:, None] * M[wrong] + XtX  # eq (3.1.17), diagonal (4.1.5)
                F[wrong] = _orth_factor(VtV[wrong], p)
                D[i, wrong] += yw[:, None] * Csum[wrong]
            else:
                Mw = M[wrong]
                VtV[wrong] += yw[:, None, None] * (Mw + Mw.transpose(0, 2, 1)) + XtX  # eq (3.1.17)
                for c in wrong:
                    F[c] = _potential_factor(VtV[c], p)
                D[i, wrong] += yw[:, None, None] * Csum[wrong]
            a[i, wrong] += yw
    # Gamma_i = sum over mistakes s on sample i of y_i F_bar_s, F_bar_s = C_tot - C_before(s)  (eq 3.1.24)
    ext = (slice(None), slice(None)) + (None,) * (len(shape) - 1)
    Gamma = a[ext] * Csum[None] - D
    return a, Gamma, F, mistakes


# Parameter and attribute descriptions of both Perceptrons (the placeholders of their docstrings)
_PERCEPTRON_TEXT = {
    "p": ("float >= 1", """\
Potential 1/2 ||V||_{S_2p}^2 (Schatten 2p-norm, eq 3.1.4). p = 1: the views' margins add up; typical 1 to 4
(larger p couples the views more)."""),
    "n_epochs": ("int >= 1", """\
Passes over the training samples (one online sequence of n_epochs * l steps); typical 1 to 20."""),
    "averaging": ("bool", """\
Predict with the average hypothesis (eq 3.1.21-3.1.25) or with the last one."""),
    "shuffle": ("bool", """\
Present the samples in a seeded random order per epoch, or in index order."""),
    "random_state": ("None, int, sequence of ints, Generator or SeedSequence", """\
Seeds the order of the samples."""),
    "perceptron_attributes": """\
classes_ : array (P,)
mistakes_ : array of int (n_problems,)
    Online mistakes over all n_epochs * l steps, per binary problem (1 for two classes, P otherwise).
coef_ : array
    W = sum_i X_i coef_[i, c] per problem c: (l, n_problems, m, m) for the matrix Perceptron with
    cross-view kernels, (l, n_problems, m) otherwise (averaged or last hypothesis).
dual_coef_ : array (l, n_problems)
    Signed mistake counts a_i: V_T = sum_i a_i X_i (eq 3.1.7).
order_ : array (n_epochs * l,)
    The training samples in the order they were presented (indices into the training set).
n_steps_ : int
labelled_ : array (l,)
fit_seconds_ : float""",
    "perceptron_sections": """\
Parameters
----------
{p, n_epochs, averaging, shuffle, random_state}
{kernel, views, bandwidth}

Attributes
----------
{perceptron_attributes}
{view_attributes}""",
    "perceptron_references": """\
References
----------
.. [1] Cavallanti, G., Cesa-Bianchi, N., & Gentile, C. (2008). Linear algorithms for online multitask
   classification. Conference on Learning Theory (COLT 2008).
.. [2] Fornoni, M. (2009). Multi-view learning for modeling audio-visual patterns. Master's thesis (Tesi di
   Laurea), Universita degli Studi di Milano.
.. [3] Cesa-Bianchi, N., Conconi, A., & Gentile, C. (2004). On the generalization ability of on-line learning
   algorithms. IEEE Transactions on Information Theory, 50(9), 2050-2057.""",
}
_perceptron_docstring = fill_parameters({**PARAMETERS, **SECTIONS, **_PERCEPTRON_TEXT})


class _MultiViewPerceptronBase(MultiViewClassifier):
    _diagonal = True
    _parameter_constraints: dict = {
        **MultiViewClassifier._parameter_constraints,
        "p": [StrictInterval(Real, 1, None, closed="left")],
        "n_epochs": [COUNT],
        "averaging": ["boolean"],
        "shuffle": ["boolean"],
        "random_state": SEED,
    }

    def __init__(self, *, p=1.0, n_epochs=1, averaging=True, shuffle=True, random_state=None, kernel="rbf",
                 views=None, bandwidth=None):
        self.p = p
        self.n_epochs = n_epochs
        self.averaging = averaging
        self.shuffle = shuffle
        self.random_state = random_state
        self.kernel = kernel
        self.views = views
        self.bandwidth = bandwidth

    def _kernels(self, X):
        """(kind, array, m, n): 'full' for a precomputed cross-view kernel (n, n, m, m), turned into the
        solvers' (m, m, n, n); 'diag' for per-view kernels (m, n, n) from either input form."""
        if self.kernel == "precomputed" and _ndim(X) == 4:
            reject_sparse(X)
            arr = self._validate_X(X, True, dtype=np.float64, allow_nd=True)
            if arr.shape[0] != arr.shape[1] or arr.shape[2] != arr.shape[3]:
                raise ValueError(f"a cross-view kernel X must have shape (n, n, m, m), got {arr.shape}")
            G = check_cross_view_kernels(np.ascontiguousarray(arr.transpose(2, 3, 0, 1)), name="X")
            self._view_list = False
            self.bandwidths_ = None
            self.n_views_, self.n_train_ = G.shape[0], G.shape[2]
            return "full", G, G.shape[0], G.shape[2]
        Kd = self._fit_kernels(X)
        return "diag", Kd, Kd.shape[0], Kd.shape[1]

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Run the online algorithm over ``n_epochs`` passes of the samples, in a seeded random order per epoch
        (``shuffle``) or in index order. The perceptrons are supervised: every label is a class, -1 included."""
        p, n_epochs = float(self.p), int(self.n_epochs)  # validated by the constraints
        kind, G, m, n = self._kernels(X)
        y_enc, labelled = self._fit_labels(y, n)
        classes, encoded = self.classes_, y_enc[labelled]
        P = classes.size
        Y = (np.where(encoded == 1, 1.0, -1.0)[:, None] if P == 2 else
             np.where(encoded[:, None] == np.arange(P)[None, :], 1.0, -1.0))
        nl = labelled.size
        rng = np.random.default_rng(self.random_state)
        order = np.concatenate([rng.permutation(nl) if self.shuffle else np.arange(nl) for _ in range(n_epochs)])
        diagonal = self._diagonal or kind == "diag"
        L = labelled
        if kind == "full":
            GL = G[:, :, L][:, :, :, L] if nl < n else G
            if diagonal:
                Gd = np.stack([GL[k, k] for k in range(m)])
                rows, selfk = (lambda i: Gd[:, i, :]), (lambda i: Gd[:, i, i])
            else:
                rows, selfk = (lambda i: GL[:, :, i, :]), (lambda i: GL[:, :, i, i])
        else:  # per-view kernels: zero cross-view kernels, V^T V and V^T X diagonal (eq 4.1.4-4.1.5)
            KL = G[:, L][:, :, L] if nl < n else G
            rows, selfk = (lambda i: KL[:, i, :]), (lambda i: KL[:, i, i])
        t0 = time.perf_counter()
        a, Gamma, F_last, mistakes = _run_online(rows, selfk, nl, Y, order, p, diagonal)
        self.fit_seconds_ = time.perf_counter() - t0
        T = order.size
        if self.averaging:
            self.coef_ = Gamma / T  # W_bar_T = 1/T sum_i X_i Gamma_i  (eq 3.1.25)
        else:
            ext = (slice(None), slice(None)) + (None,) * (F_last.ndim - 1)
            self.coef_ = a[ext] * F_last[None]  # W_T = V_T F_T = sum_i a_i X_i F_T
        self.mistakes_ = mistakes
        self.dual_coef_ = a
        self.order_ = labelled[order]
        self.n_steps_ = T
        self.labelled_ = labelled
        self._diag_coef = diagonal
        self._cross_view = kind == "full"
        return self

    def decision_function(self, X):
        """<W, X> for each test instance: (t,) for two classes (positive = ``classes_[1]``), else (t, P).

        X as at fit: per-view test kernels (t, n, m) or, for the matrix Perceptron fitted on a cross-view
        kernel, (t, n, m, m) with X[s, b, k, j] = k(x^test_{s,k}, x_{b,j}); or features.
        """
        check_is_fitted(self)
        m, n, L = self.n_views_, self.n_train_, self.labelled_
        if self._cross_view:
            reject_sparse(X)
            arr = self._validate_X(X, False, dtype=np.float64, allow_nd=True)
            if arr.ndim != 4 or arr.shape[1:] != (n, m, m):
                raise ValueError(f"X must have shape (t, n_samples_fit, m, m) = (t, {n}, {m}, {m}), got {arr.shape}")
            Gt = arr.transpose(2, 3, 0, 1)[..., L]
            if self._diag_coef:
                out = np.einsum("ick,kti->tc", self.coef_, np.stack([Gt[k, k] for k in range(m)]))
            else:
                # <W_bar, X> = sum_i Tr(Gamma_i^T X_i^T X), [X_i^T X]_{kj} = K_test[j, k][., i]
                out = np.einsum("ickj,jkti->tc", self.coef_, Gt)
        else:
            Kt = self._test_kernels(X)[:, :, L]
            if self._diag_coef:
                out = np.einsum("ick,kti->tc", self.coef_, Kt)
            else:
                out = np.einsum("ickk,kti->tc", self.coef_, Kt)
        return out[:, 0] if self.classes_.size == 2 else out


@_perceptron_docstring
class KernelMultiViewPerceptron(_MultiViewPerceptronBase):
    """Matrix multi-view Perceptron (Cavallanti et al. 2008; Fornoni 2009, Chapter 3) in dual form.

    Supervised: every label is a class (-1 included); multi-class problems are one-vs-all.

    {perceptron_sections}

    See Also
    --------
    OrthogonalMultiViewPerceptron : the orthogonal embedding, views in different spaces.
    cross_view_kernels : the matrix kernel (n, n, m, m) of views in one space.

    Notes
    -----
    With ``kernel="precomputed"``, ``fit`` takes the matrix kernel (n, n, m, m), X[a, b, k, j] =
    k(x_{a,k}, x_{b,j}) (see :func:`cross_view_kernels`; views must share one space, Section 3.2), or per-view
    kernels (n, n, m); with the latter (and with feature views, which get per-view kernels) the cross-view
    kernels are zero, i.e. the orthogonal embedding (4.1.1), the algorithm coincides with
    :class:`OrthogonalMultiViewPerceptron` (eq 4.1.7) and runs its O(m) per-step code.

    {perceptron_references}

    {mfeat_example}
    >>> from mvl import KernelMultiViewPerceptron
    >>> train, test = idx[:500], idx[500:]
    >>> model = KernelMultiViewPerceptron(views=[76, 64, 6], n_epochs=5, random_state=0).fit(X[train], ds.y[train])
    >>> bool(model.score(X[test], ds.y[test]) > 0.8)
    True
    """
    _diagonal = False


@_perceptron_docstring
class OrthogonalMultiViewPerceptron(_MultiViewPerceptronBase):
    """Orthogonal matrix multi-view Perceptron (Fornoni 2009, Chapter 4, Figure 4.1), dual form.

    Supervised: every label is a class (-1 included); multi-class problems are one-vs-all. ``fit`` takes
    per-view kernels (n, n, m) or feature views (views may live in different spaces; one kernel each); a matrix
    kernel (n, n, m, m) is accepted and only its diagonal blocks are used. Prediction (4.1.6): sign sum_k
    ||v_k||^{2(p-1)} <v_k, x_k>; averaging as for the matrix Perceptron with W_t = grad Phi(V_t).

    {perceptron_sections}

    See Also
    --------
    KernelMultiViewPerceptron : the matrix Perceptron with cross-view kernels.

    {perceptron_references}

    {mfeat_example}
    >>> from mvl import OrthogonalMultiViewPerceptron
    >>> views = [v[::4] for v in ds.views]                       # a list of per-view arrays, 500 samples
    >>> model = OrthogonalMultiViewPerceptron(n_epochs=5, random_state=0).fit(views, ds.y[::4])
    >>> bool(model.score([v[1::4] for v in ds.views], ds.y[1::4]) > 0.8)
    True
    """
    _diagonal = True
