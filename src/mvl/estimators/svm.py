"""Multi-view SVMs of the framework: MVL-SVM (Theorem 13, Algorithm 2) and MVL-binSVM (Corollary 8).

Both solve a dual box QP whose matrix is Q_G (x) Q_S (eq 193-195); Q_G, the map from dual variables to
coefficients (Proposition 14, eq 77-83) and the QP solvers live in :mod:`mvl.solvers.svm_dual`. The
estimators here validate the inputs, build the dual once per fit (M_reg of eq 79, view by view), solve it and
store the coefficients: ``decision_function`` returns the scores of eq (82)-(83), ``predict`` decodes them by
eq (15)/(17).
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils._param_validation import StrOptions

from .base import COUNT, POSITIVE, SEED, MVLClassifier
from ..docstrings import PARAMETERS, SECTIONS, fill_parameters
from ..simplex import simplex_coding
from ..solvers.svm_dual import (
    SOLVER_NAMES,
    apply_qs,
    build_svm_dual,
    build_svm_dual_incomplete,
    dual_objective,
    resolve_solver,
    solve_dual,
)
from ..validation import check_combination

__all__ = ["MVLSVM", "MVLBinarySVM"]


# Parameter and attribute descriptions of both SVMs (the placeholders of their docstrings, with mvl.docstrings')
_SVM_TEXT = {
    "tol": ("float > 0", """\
Stopping rule: the largest violation of the KKT conditions of Lemma 31, in the units of h = <s_k, C f(x_i)>
(the margin is -1/(P-1)), as LIBSVM's eps. Typical 1e-4 to 1e-2."""),
    "max_iter": ("int >= 1 or None", """\
SMO block updates (None: 1000 l), ADMM iterations (None: 20000), L-BFGS-B or APG iterations (None: 100000);
reaching it first gives a ``sklearn.exceptions.ConvergenceWarning``."""),
    "solver": ('"auto", "admm", "smo", "lbfgsb" or "apg"', """\
Dual solver (:mod:`mvl.solvers.svm_dual`). "auto": "admm" for the multi-class dual (P >= 3), "smo" for two
classes and for the binary problems of MVL-binSVM. "admm": ADMM with one Cholesky factorisation of an l x l
matrix, then one triangular solve pair with P right-hand sides per iteration. "smo": the block SMO of
Algorithm 3 with Newton refinement, fast when few variables are free. "lbfgsb": scipy's L-BFGS-B on the
dual (26). "apg": accelerated projected gradient (FISTA with restarts), slow on ill-conditioned problems."""),
    "random_state": ("None, int, sequence of ints, Generator or SeedSequence", """\
SMO only: None visits the samples in their order; otherwise in a random order, so ties between equal KKT
violations are broken at random (Algorithm 3 picks a random violator)."""),
    "warm_start": ("bool", """\
If True and the estimator was fitted before on the same labelled samples and classes, the dual variables
start from the previous solution (the box (24) does not depend on the gammas, so it stays feasible): a path
of gammas set by ``set_params`` then starts each fit near its optimum."""),
    "svm_parameters": """\
Parameters
----------
{gamma_A, gamma_B, gamma_W, laplacian, n_neighbors, laplacian_power, graph_weights, n_classes, c}
{tol, max_iter, solver, random_state, warm_start}
{kernel, views, bandwidth}""",
    "svm_fit_attributes": """\
classes_ : array (P,)
    The class labels, in the order of the decision columns (-1, the unlabelled marker, is never a class).
c_ : array (m,)
    The combination vector c of C = c^T (x) I (eq 52) of the fit: ``c``, or the average 1/m for None (with
    ``dropped_views_``, ``c`` over the kept views, renormalised to its sum).
gamma_B_ : float
    The gamma_B of the fit.
n_labelled_ : int
    Labelled training samples l (labels other than -1).
labelled_ : array (l,)
    Indices of the labelled training samples.
fit_seconds_, reg_seconds_, solve_seconds_ : float
    Wall-clock seconds of the fit, of M_reg (eq 77) and in the dual solver.""",
}
_svm_docstring = fill_parameters({**PARAMETERS, **SECTIONS, **_SVM_TEXT})


class _SVMBase(MVLClassifier):
    _parameter_constraints: dict = {
        **MVLClassifier._parameter_constraints,
        "tol": [POSITIVE],
        "max_iter": [None, COUNT],
        "solver": [StrOptions(set(SOLVER_NAMES))],
        "random_state": SEED,
        "warm_start": ["boolean"],
    }
    _missing_views = True  # NaN rows mark missing views (mvl.solvers.incomplete)

    def __init__(self, *, gamma_A=1e-5, gamma_B=0.0, gamma_W=1e-2, c=None, tol=1e-3, max_iter=None,
                 laplacian="normalized", solver="auto", random_state=None, n_neighbors=5, n_classes=None,
                 warm_start=False, laplacian_power=None, graph_weights="kernel", kernel="rbf", views=None,
                 bandwidth=None):
        self.gamma_A = gamma_A
        self.gamma_B = gamma_B
        self.gamma_W = gamma_W
        self.c = c
        self.tol = tol
        self.max_iter = max_iter
        self.laplacian = laplacian
        self.solver = solver
        self.random_state = random_state
        self.n_neighbors = n_neighbors
        self.n_classes = n_classes
        self.warm_start = warm_start
        self.laplacian_power = laplacian_power
        self.graph_weights = graph_weights
        self.kernel = kernel
        self.views = views
        self.bandwidth = bandwidth

    def _prepare(self, X, y):
        """Validated inputs and the shared M_reg factorisation (Q_G and the coefficient map)."""
        tol, max_iter = float(self.tol), None if self.max_iter is None else int(self.max_iter)
        # what a warm start may reuse, read before this fit overwrites it: labelled set, classes, dual variables
        previous = tuple(getattr(self, a, None) for a in ("labelled_", "classes_", "dual_coef_"))
        K = self._fit_kernels(X)
        m, n, _ = K.shape
        y_enc, labelled = self._fit_labels(y, n)
        classes = self.classes_
        l = len(labelled)
        # per view the LU of H_p and Q_p, Laplacians, (I - gamma_B Q_1) and Q_c, Q_G and the dual
        # + Q_G, its Cholesky factor (ADMM) and a copy (l x l each); alpha, gradient and ADMM's iterates (P x l each)
        self._check_memory(8.0 * ((2 * m + 3) * n * n + 3 * l * l + 8 * l * len(classes)),
                           f"the SVM dual with n = {n} samples and m = {m} views")
        mask = self.view_mask_  # None: no view missing (the complete path)
        Y_L, L = self._mvl_inputs(K, y_enc, labelled, mask)
        c = check_combination(self._kept_views(self.c, combination=True), m)
        t0 = time.perf_counter()
        if mask is None:
            dual = build_svm_dual(K, labelled, c, **self._gammas(), L=L)
        else:
            dual = build_svm_dual_incomplete(K, mask, labelled, c, **self._gammas(), L=L)
        self.reg_seconds_ = time.perf_counter() - t0
        warm = self._warm(previous, labelled, classes, (len(classes), len(labelled)))
        return tol, max_iter, K, labelled, classes, np.argmax(Y_L, axis=1), c, dual, warm

    def _warm(self, previous, labelled, classes, shape):
        """Previous dual variables when warm_start is set and the labelled set and classes are unchanged."""
        prev_labelled, prev_classes, prev_dual = previous
        if not self.warm_start or prev_dual is None:
            return None
        if (prev_dual.shape != shape or not np.array_equal(prev_labelled, labelled)
                or not np.array_equal(prev_classes, classes)):
            return None
        return prev_dual

    def _finish(self, K, labelled, classes, c, coef, t0, y_enc):
        self.coef_ = coef
        self.c_ = c
        self.n_labelled_ = len(labelled)
        self.labelled_ = labelled
        self.fit_seconds_ = time.perf_counter() - t0
        self._check_regularization(K, labelled, y_enc, self.view_mask_)
        if len(labelled) < K.shape[-1]:
            _warn_few_labelled_class(self, classes[y_enc])
        return self


@_svm_docstring
class MVLSVM(_SVMBase):
    """Multi-class multi-view SVM with simplex coding (MVL-SVM, Algorithm 2; Theorem 13 with R = I).

    Solves the dual (26) with the box (24) and evaluates the solution by Proposition 14:
    ``decision_function`` returns h(v) = (<s_k, C f(v)>)_{k=1..P} (eq 82-83), ``predict``
    the class argmax_k h_k(v) (eq 15, 17); for two classes ``decision_function`` is (h_2 - h_1) / 2 (= h_2),
    shape (t,). X as for :class:`mvl.MVLLeastSquares` (``kernel``), labels with -1 for unlabelled samples
    (they enter through gamma_B and gamma_W).

    {svm_parameters}

    Attributes
    ----------
    dual_coef_ : array (P, l)
        alpha^opt of eq (26), columns in the order of the labelled samples (``labelled_``),
        rows in the order of ``classes_``; alpha_{y_i, i} = 0.
    coef_ : array (m, n, P)
        Per-view coefficients with h(v) = sum_p c_p K^p(v, x) coef_[p]: coef_[p] = a_p S with
        a = -1/2 [M_reg (I (x) c) (x) S] vec(alpha) of eq (77), a_p (n, P-1) the view-p part.
    code_matrix_ : array (P-1, P)
        The simplex coding S; C f(v) = (P-1)/P S h(v) since S S^T = P/(P-1) I.
    {solve_attributes}
    kkt_violation_ : float
        Largest violation of Lemma 31 at the returned alpha (<= tol unless max_iter was hit).
    dual_objective_ : float
        D(alpha) of eq (26).
    {svm_fit_attributes}
    {view_attributes}

    See Also
    --------
    MVLBinarySVM : one-vs-all binary SVMs of the same framework (Corollary 8).
    MVLLeastSquares : the least squares loss (Theorem 10, closed form).

    Notes
    -----
    Missing views: as :class:`mvl.MVLLeastSquares` (a row of NaN across a view's columns, or a NaN row and column
    of a precomputed view; :mod:`mvl.solvers.incomplete`): Q_G of eq (194) and the coefficients are computed on each
    view's samples, with c renormalised over each sample's present views.

    {mvl_references}

    {mfeat_example}
    >>> from mvl import MVLSVM
    >>> y = ds.y.copy()
    >>> y[np.arange(2000) % 40 > 0] = -1                        # 5 labelled samples per class
    >>> model = MVLSVM(views=[76, 64, 6]).fit(X[::4], y[::4])   # 500 samples, 50 of them labelled
    >>> bool(model.score(X[1::4], ds.y[1::4]) > 0.9)
    True
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit on X (see ``kernel``) and labels ``y`` (n,), -1 = unlabelled."""
        t0 = time.perf_counter()
        tol, max_iter, K, labelled, classes, y_enc, c, dual, alpha0 = self._prepare(X, y)
        P = len(classes)
        t1 = time.perf_counter()
        solver = resolve_solver(self.solver, P)
        alpha, n_iter, viol = solve_dual(dual.Q_G, y_enc, P, solver, tol, max_iter, alpha0, self.random_state)
        self.solve_seconds_ = time.perf_counter() - t1
        self.solver_ = solver
        S = simplex_coding(P)
        # coef_[p] = a_p S = -1/2 A_p alpha^T S^T S (eq 77, 83)
        coef = -0.5 * dual.coefficients(apply_qs(alpha, P).T)
        self.dual_coef_ = alpha
        self._set_solve_attributes(n_iter, viol, viol <= tol)
        self.kkt_violation_ = viol
        self.dual_objective_ = dual_objective(dual.Q_G, alpha)
        self.code_matrix_ = S
        return self._finish(K, labelled, classes, c, coef, t0, y_enc)


@_svm_docstring
class MVLBinarySVM(_SVMBase):
    """One-vs-all multi-view SVM (MVL-binSVM): P binary problems of Corollary 8 (P = 2 each).

    For each class k, the binary problem "k against the rest" (code s = +1 for class k,
    -1 otherwise, S = [1, -1]) is the dual (36) with Q[x, y, C] = diag(y) Q_G diag(y)
    (eq 39): the same Q_G (eq 194) for every class, so M_reg is factorised once and the
    P coefficient vectors come from one multi-right-hand-side solve. ``decision_function``
    returns the P scores C f_k(v) (for two classes (C f_2 - C f_1) / 2, shape (t,)), ``predict`` the class
    with the largest.

    {svm_parameters}

    Attributes
    ----------
    dual_coef_ : array (P, l)
        beta^opt of eq (36) for each one-vs-all problem (row k: class k against the rest).
    coef_ : array (m, n, P)
        Per-view coefficients: column k gives C f_k(v) = sum_p c_p K^p(v, x) coef_[p][:, k];
        by eq (38), coef_[p][:, k] = 1/2 A_p diag(y^k) beta_k with y^k = +-1.
    {solve_attributes}
    kkt_violation_, dual_objective_ : arrays (P,)
        Per binary problem, as in :class:`MVLSVM`.
    {svm_fit_attributes}
    {view_attributes}

    See Also
    --------
    MVLSVM : the multi-class SVM with simplex coding (Algorithm 2).
    MVLLeastSquares : the least squares loss (Theorem 10, closed form).

    Notes
    -----
    Missing views: as :class:`MVLSVM`.

    {mvl_references}

    {mfeat_example}
    >>> from mvl import MVLBinarySVM
    >>> labelled = np.arange(0, 2000, 40)                        # 5 samples per class
    >>> y = np.where(np.isin(np.arange(2000), labelled), ds.y, -1)
    >>> model = MVLBinarySVM(views=[76, 64, 6]).fit(X[::4], y[::4])
    >>> model.decision_function(X[1::4]).shape                   # one score per class
    (500, 10)
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit the P one-vs-all problems on X (see ``kernel``) and labels ``y`` (n,), -1 = unlabelled."""
        t0 = time.perf_counter()
        tol, max_iter, K, labelled, classes, y_enc, c, dual, previous = self._prepare(X, y)
        P = len(classes)
        l = len(labelled)
        t1 = time.perf_counter()
        solver = resolve_solver(self.solver, 2)
        beta = np.empty((P, l))
        W = np.empty((l, P))
        n_iter = np.empty(P, dtype=np.int64)
        viol = np.empty(P)
        obj = np.empty(P)
        for k in range(P):
            code = np.where(y_enc == k, 0, 1)  # code index: 0 (s = +1) for class k, 1 (s = -1) for the rest
            alpha0 = None
            if previous is not None:
                alpha0 = np.zeros((2, l))
                alpha0[1 - code, np.arange(l)] = previous[k]
            alpha, n_iter[k], viol[k] = solve_dual(dual.Q_G, code, 2, solver, tol, max_iter, alpha0,
                                                   self.random_state)
            obj[k] = dual_objective(dual.Q_G, alpha)
            beta[k] = alpha.sum(axis=0)  # one non-zero entry per column
            W[:, k] = alpha[0] - alpha[1]  # S alpha_i = -y_i beta_i
        self.solve_seconds_ = time.perf_counter() - t1
        self.solver_ = solver
        coef = -0.5 * dual.coefficients(W)  # -1/2 A_p (S alpha)^T = 1/2 A_p diag(y) beta (eq 38)
        self.dual_coef_ = beta
        self._set_solve_attributes(n_iter, viol.copy(), viol <= tol)
        self.kkt_violation_ = viol
        self.dual_objective_ = obj
        return self._finish(K, labelled, classes, c, coef, t0, y_enc)


def _warn_few_labelled_class(est, labels):
    """:class:`mvl.exceptions.FewLabelsWarning` when a labelled class of ``labels`` (the labelled samples') has few
    labels among many (:func:`mvl.estimators.poisson_fit.few_labelled_class`): the SVMs have no class-balanced
    few-label term, MVL-LS's default takes one. Measured on 900 points labelled 20 / 20 / 1 per class (the blobs of
    ``benchmarks/bench_few_labelled_class.py``): MVLSVM accuracy 0.645, recall 0.015 of the one-label class;
    MVLLeastSquares' default 0.988 and 0.995."""
    import warnings

    from ..exceptions import FewLabelsWarning
    from .poisson_fit import AUTO_UNEQUAL_LOSS, few_labels_message

    message = few_labels_message(est, labels, f"{type(est).__name__} weighs each labelled sample alike",
                                 f'Use mvl.MVLLeastSquares, whose default loss="auto" takes the class-balanced '
                                 f'few-label term here (loss="{AUTO_UNEQUAL_LOSS}"): its centred sources weigh every '
                                 'class alike.')
    if message is not None:  # stacklevel: this function, _finish, fit, scikit-learn's fit wrapper, the caller
        warnings.warn(message, FewLabelsWarning, stacklevel=5)
