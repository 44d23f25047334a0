"""Vector-valued multi-view least squares, MVL-LS (Theorem 10, Algorithm 1).

Problem (eq 10 with eq 53): over f = (f^1, ..., f^m), one RKHS function per view,

    1/l sum_{i<=l} ||y_i - C f(x_i)||^2 + gamma_A ||f||^2
        + gamma_B <f, M_B f> + gamma_W <f, M_W f>,

with C = c^T (x) I_P (eq 52), M_B from eq (54)-(57) and M_W = L (x) I_P from
eq (60)-(63). By Theorem 10 the coefficients A solve the Sylvester equation
(67) with R = I_P, i.e. the linear system

    (B + l gamma_A I) A = Y_C,
    B = (J_l^{u+l} (x) c c^T + l gamma_B I_{u+l} (x) M_m + l gamma_W L) G[x]    (68)

of size (u+l)m. With the diagonal kernel of Section 7.1 (eq 93-94), grouping
unknowns view-major turns G[x] into blockdiag(K^1, ..., K^m) and L into
blockdiag(L^1, ..., L^m). For view p, with outputs F_q = K^q A_q on the
training points, S = sum_q c_q F_q (combined output), T = sum_q F_q, and
E = J (Y - S) (residual on labelled rows, zero elsewhere), the system reads

    H_p A_p = c_p E + l gamma_B T,
    H_p = (l gamma_B m I + l gamma_W L^p) K^p + l gamma_A I.

(Superscript p indexes the view. With ``laplacian_power`` = d > 1, L^p stands for the iterated
Laplacian (L^p)^d of view p, again n x n, :func:`mvl.graph.laplacian_power`; nothing else changes.)

The views are coupled only through E (l x P) and T (n x P). With
Q_p = K^p H_p^{-1} (symmetric), eliminating A_p leaves one system of size l + n
(size l when gamma_B = 0):

    [ I + Q_cc[L, L]      l gamma_B Q_c[L, :] ] [E_L]   [Y_L]
    [ -Q_c[:, L]          I - l gamma_B Q_1   ] [ T ] = [ 0 ],

Q_cc = sum c_p^2 Q_p, Q_c = sum c_p Q_p, Q_1 = sum Q_p. Cost: m LU factorisations
and solves of n x n matrices plus one of size l + n, i.e. O(m n^3) time and
O(m n^2) memory instead of O((mn)^3) and O((mn)^2) for the dense system.
"""

from __future__ import annotations

import time
import warnings
from numbers import Real

import numpy as np
from scipy import linalg
from scipy.linalg import lapack

from sklearn.base import _fit_context
from sklearn.utils._param_validation import StrOptions

from .docstrings import shared_parameters
from .base import (
    StrictInterval,
    COUNT,
    POSITIVE,
    MVLClassifier,
    check_swamped,
    encode_targets,
    take_samples,
    unlabelled_mask,
)
from .blocks import factor_view, solve_coupled, view_Q
from .validation import check_combination

__all__ = [
    "MVLLeastSquares",
    "MEMORY_ADVICE",
    "encode_targets",
    "solve_structured",
    "solve_dense",
]


def solve_structured(K, labelled, Y_L, c, gamma_A, gamma_B, gamma_W, L=None, info=None, between_weights=None):
    """Solve eq (67)-(68) view by view; returns coefficients A of shape (m, n, P).

    ``labelled`` indexes the l labelled rows of the n training points and
    ``Y_L`` (l x P) holds their targets. ``L`` is (m, n, n) or None if
    gamma_W = 0. ``K`` must be exactly symmetric per view (as returned by
    :func:`mvl.validation.check_multiview_kernels`). If ``info`` is a dict, ``info["rcond"]`` receives
    the smallest reciprocal condition estimate of the factored matrices (the H_p and the coupled system).

    ``between_weights`` (n,) >= 0 weighs the between-view term per point, M_B = diag(w) (x) M_m (None: w = 1,
    eq 57); e.g. the indicator of the unlabelled points gives co-regularization on them (JMLR Section 3.4,
    Sindhwani & Rosenberg 2008). Then H_p = (beta m D + omega L^p) K^p + delta I, the right-hand side is
    c_p E + beta D T, and only the rows U of D T (w > 0) are unknowns of the coupled system:
    [[I + Q_cc[L,L], beta Q_c[L,U]], [-D_U Q_c[U,L], I - beta D_U Q_1[U,U]]] [E_L; (D T)_U] = [Y_L; 0].
    """
    rconds = [] if info is not None else None
    m, n, _ = K.shape
    l = len(labelled)
    P = Y_L.shape[1]
    delta = l * gamma_A
    beta = l * gamma_B if m > 1 else 0.0  # M_1 = 0: no between-view term for one view
    omega = l * gamma_W
    w = None if between_weights is None else np.asarray(between_weights, dtype=np.float64)
    if w is not None and (w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0)):
        raise ValueError(f"between_weights must be {n} finite non-negative numbers")
    U = None if w is None else np.flatnonzero(w > 0)  # rows of D T that can be non-zero
    if U is not None and U.size == 0:
        beta = 0.0
    u = n if U is None else U.size
    factors = []
    # The coupled system's blocks are accumulated in place (no n x n copies):
    # S = [[Q_cc[L,L], Q_c[L,U]], [., Q_1[U,U]]] now, scaled and shifted by the identity below.
    S = np.zeros((l + u, l + u)) if beta > 0 else None
    Qcc_LL = S[:l, :l] if beta > 0 else np.zeros((l, l))
    Qc_L = S[:l, l:] if beta > 0 else None  # Q_c[L, U]; its transpose is Q_c[U, L] (Q_p symmetric)
    Q1 = S[l:, l:] if beta > 0 else None
    for p in range(m):
        Kp = K[p]
        lu, piv = factor_view(Kp, None if L is None else L[p], m, delta, beta, omega, p, rconds, w)
        factors.append((lu, piv))
        X = view_Q(lu, piv, Kp)
        Qp = X.T  # C-ordered view of Q_p^T = Q_p
        QL = Qp[labelled]
        Qcc_LL += (c[p] * c[p]) * QL[:, labelled]
        if Q1 is not None:
            if U is None:
                Qc_L += c[p] * QL
                Q1 += Qp
            else:
                Qc_L += c[p] * QL[:, U]
                Q1 += Qp[np.ix_(U, U)]
        del X, Qp, QL
    if beta > 0:
        # [ I + Q_cc[L,L]   beta Q_c[L,:] ] [E_L]   [Y_L]
        # [ -Q_c[:,L]       I - beta Q_1  ] [ T ] = [ 0 ]
        S[l:, :l] = Qc_L.T
        if U is None:
            S[l:, :l] *= -1.0
            Q1 *= -beta
        else:  # rows U scaled by D_U
            S[l:, :l] *= -w[U][:, None]
            Q1 *= (-beta * w[U])[:, None]
        Qc_L *= beta
        S[np.diag_indices(l + u)] += 1.0
        del Q1, Qc_L, Qcc_LL
        rhs = np.zeros((l + u, P))
        rhs[:l] = Y_L
        # S is C-ordered: solve with S^T's LU (Fortran view, no copy) and trans=1
        sol = solve_coupled(S.T, rhs, rconds, trans=1)
        E_L, T = sol[:l], sol[l:]
        if U is not None:  # D T on all n points, zero outside U
            T = np.zeros((n, P))
            T[U] = sol[l:]
    else:
        Qcc_LL[np.diag_indices(l)] += 1.0
        E_L = solve_coupled(Qcc_LL, np.asarray(Y_L, dtype=np.float64), rconds)
        T = None
    E = np.zeros((n, P))
    E[labelled] = E_L
    A = np.empty((m, n, P))
    for p, (lu, piv) in enumerate(factors):
        rhs = c[p] * E
        if T is not None:
            rhs += beta * T
        A[p], err = lapack.dgetrs(lu, piv, rhs, trans=1)  # H_p A_p = rhs, from the LU of H_p^T
    if info is not None:
        info["rcond"] = min(rconds) if rconds else 1.0
    return A


def solve_dense(K, labelled, Y_L, c, gamma_A, gamma_B, gamma_W, L=None, between_weights=None):
    """Textbook reference: the full (u+l)m system of eq (67)-(68), one LU.

    Unknowns are ordered sample-major as in the paper (a = vec(A^T), A of
    size (u+l)m x P); G[x] = sum_i k^i[x] (x) e_i e_i^T (eq 94), B is formed
    as the product in eq (68) and (B + l gamma_A I) A = Y_C is solved by
    LU, as the authors' MATLAB code does. Memory O((nm)^2): for tests and
    benchmarks only. Returns coefficients in the layout (m, n, P). ``between_weights``: M_B = diag(w) (x) M_m.
    """
    m, n, _ = K.shape
    l = len(labelled)
    P = Y_L.shape[1]
    N = n * m
    E = np.eye(m)
    G = np.zeros((N, N))
    for p in range(m):
        G += np.kron(K[p], np.outer(E[p], E[p]))
    J = np.zeros((n, n))
    J[labelled, labelled] = 1.0
    Mm = m * np.eye(m) - np.ones((m, m))  # eq (54)
    D = np.eye(n) if between_weights is None else np.diag(np.asarray(between_weights, dtype=np.float64))
    Mop = np.kron(J, np.outer(c, c)) + l * gamma_B * np.kron(D, Mm)
    if gamma_W > 0 and L is not None:
        Lbig = np.zeros((N, N))
        for p in range(m):
            Lbig += np.kron(L[p], np.outer(E[p], E[p]))  # eq (60)
        Mop += l * gamma_W * Lbig
    B = Mop @ G  # eq (68)
    B[np.diag_indices(N)] += l * gamma_A
    Yfull = np.zeros((n, P))
    Yfull[labelled] = Y_L
    Y_C = np.kron(Yfull, c[:, None])  # row (i, p) = c_p y_i, zero for unlabelled i
    A = linalg.solve(B, Y_C, overwrite_a=True, check_finite=False)
    return A.reshape(n, m, P).transpose(1, 0, 2).copy()


_SOLVERS = {"structured": solve_structured, "auto": solve_structured, "dense": solve_dense, "cg": None,
            "nystrom": None, "graph": None}

# solver="auto" on feature views: the structured solver up to this many training points (if its memory fits),
# then "cg" up to AUTO_CG_MAX, then "nystrom" (see MVLLeastSquares).
AUTO_STRUCTURED_MAX = 5000
AUTO_CG_MAX = 20000


def structured_bytes(n, m, l):
    """Peak memory of the structured solve (and the kernels it needs): m kernels, m LU factors and Q_p, the
    Laplacians and the (l + n) coupled system, float64."""
    return 8 * ((3 * m + 1) * n * n + (l + n) ** 2)


def choose_solver(solver, kernel, n, m, l, max_memory, regime=None):
    """The solver "auto" stands for: precomputed kernels -> "structured"; feature views -> "structured" while
    n <= AUTO_STRUCTURED_MAX and its memory fits ``max_memory``; beyond, while n <= AUTO_CG_MAX: in the graph
    regime "graph" ("cg" does not converge there; "graph" measured 1.7-3.4x faster than "structured" at 8,000
    points, benchmarks/README.md, issue 28), otherwise "cg"; beyond AUTO_CG_MAX "nystrom". ``regime``: the measure
    :func:`mvl.graph_solver.measured_regime` (graph regime iff >= :data:`mvl.graph_solver.GRAPH_REGIME`), or a
    function of no arguments that computes it, called only when the choice depends on it; None when there is no
    sparse graph term. On incomplete views (NaN rows) MVLLeastSquares replaces "graph" by "cg" (the other solvers
    take missing views)."""
    from .graph_solver import GRAPH_REGIME

    if solver != "auto":
        return solver
    if kernel == "precomputed":
        return "structured"
    if n <= AUTO_STRUCTURED_MAX and structured_bytes(n, m, l) <= max_memory:
        return "structured"
    if n > AUTO_CG_MAX:
        return "nystrom"
    if callable(regime):
        regime = regime()
    if regime is not None and regime >= GRAPH_REGIME:
        return "graph"
    return "cg"


def _holds_nan(X):
    """Whether the training input holds NaN (incomplete views); False for input that is not numeric (the
    validation of the fit reports it)."""
    from .base import is_view_list

    try:
        if is_view_list(X):
            return any(bool(np.isnan(np.asarray(v, dtype=np.float64)).any()) for v in X)
        return bool(np.isnan(np.asarray(X, dtype=np.float64)).any())
    except (TypeError, ValueError):
        return False


MEMORY_ADVICE = ('use solver="cg" (exact, iterative: no n x n factorisation) or solver="nystrom" (approximate, '
                 'O(n n_components) memory per view), or fewer training samples')
"""What MVL-LS and MVL-LS-optC say when a fit would not fit in memory."""


def dense_bytes(n, m):
    """Peak memory of the textbook dense solve: the (nm)^2 system four times (G[x], the operator, B, its LU)."""
    return 8 * 4 * (n * m) ** 2


def default_max_memory():
    """Half of the memory available now (:func:`mvl.memory.available_memory`), 4 GB if unknown."""
    from .memory import available_memory

    avail = available_memory()
    return 4e9 if avail is None else 0.5 * avail


# Above this 1-norm condition estimate (LAPACK dgecon) of a factored matrix, fit() warns: with float64
# (eps ~ 1e-16) the coefficients may then have lost more than ~4 significant digits.
ILL_CONDITIONED = 1e12


def _check_solution(coef, condition, gamma_A):
    """Never NaN silently; warn (with the estimate) when the system was numerically ill-conditioned."""
    if not np.all(np.isfinite(coef)):
        raise FloatingPointError(f"the solution has NaN or inf entries (condition estimate {condition:.1e}); "
                                 f"increase gamma_A (now {gamma_A:g}) or check the kernels")
    if condition > ILL_CONDITIONED:
        warnings.warn(f"ill-conditioned system: condition estimate {condition:.1e} > {ILL_CONDITIONED:.0e}; "
                      f"the coefficients may be inaccurate (increase gamma_A, now {gamma_A:g})",
                      IllConditionedWarning, stacklevel=3)


def sample_and_view_counts(est, X):
    """(n, m) of the training input without computing kernels (for the solver choice and the memory check)."""
    from .base import is_view_list

    from sklearn.utils.validation import _num_samples

    if is_view_list(X):
        return _num_samples(X[0]), len(X)
    try:
        n = _num_samples(X)
    except TypeError:  # not array-like: the full validation reports it
        return 0, 1
    if est.kernel == "precomputed":
        ndim = getattr(X, "ndim", None)
        shape = getattr(X, "shape", None)
        return n, int(shape[2]) if ndim == 3 and shape is not None else 1
    views = est.views
    m = 1 if views is None or isinstance(views, (str, bytes)) or not hasattr(views, "__len__") else len(views)
    return n, m


def memory_budget(est):
    """The memory budget in bytes of a fit: ``max_memory`` (validated by its constraint), or with None
    :func:`default_max_memory`."""
    return default_max_memory() if est.max_memory is None else float(est.max_memory)


def kept_for_prediction(est, kernels, centres=None):
    """What prediction needs of a scalable fit: the training features (or only the centres' after "nystrom"),
    never the Gram matrices; precomputed kernels: nothing (the test kernels are the input)."""
    if kernels.views is None:
        kernels.gram = None
        return kernels
    from .kernel_blocks import ViewKernels

    views = kernels.views if centres is None else [V[centres] for V in kernels.views]
    est._fit_views = None
    return ViewKernels(views, kernels.kind, kernels.scales, max_memory=0)


def vecchia_seed(random_state):
    """The integer seed of the graph solver's Vecchia orderings from an estimator's ``random_state``: the int
    itself, else 0 (a generator is not drawn from: the ordering changes the preconditioner, not the answer, and the
    fit stays reproducible)."""
    return int(random_state) if isinstance(random_state, (int, np.integer)) else 0


def scalable_problem(est, X, y, solver, budget, c=None, missing=False):
    """What the scalable solvers need from an estimator's parameters and its training data: the kernel operator
    (:meth:`mvl.base.MultiViewClassifier._fit_kernel_operator`), the :class:`mvl.scalable.MVLSystem` (sparse kNN
    Laplacians when gamma_W > 0), the Nystrom basis on ``n_components`` centres drawn with ``random_state``, the
    labelled indices and the centres. Sets ``classes_`` and the input state. ``missing``: incomplete views (NaN
    rows) are taken (:mod:`mvl.incomplete`: the masked kernels, the graphs on each view's samples, the system
    with the presence mask ``est.view_mask_``; view p draws min(n_components, n_p) Nystrom centres among the
    samples that have it, the returned centres are their union), otherwise refused."""
    from sklearn.utils import check_random_state

    from .graph import sparse_knn_weights, sparse_laplacian
    from .scalable import MVLSystem, NystromBasis

    # "nystrom" needs only the n x M columns on the centres: the n x n Gram matrices are never kept for it
    kernels = est._fit_kernel_operator(X, budget if solver in ("cg", "graph") else 0, missing=missing)
    m, n = kernels.m, kernels.n
    mask = getattr(est, "view_mask_", None) if missing else None
    y_enc, labelled = est._fit_labels(y, n)
    if not isinstance(est.laplacian, str):
        raise ValueError(f'solver="{solver}" builds sparse kNN Laplacians from the data: laplacian must be '
                         f'"normalized" or "unnormalized", got {type(est.laplacian).__name__}')
    laplacian, n_neighbors = est._graph(kernels.n)
    gammas = est._gammas()
    Ls = None
    if gammas["gamma_W"] > 0:
        if n_neighbors is None:
            raise ValueError(f'solver="{solver}" needs a sparse kNN graph when gamma_W > 0: set n_neighbors '
                             '(e.g. 10); the dense graph W = K of the paper is an n x n matrix')
        if mask is not None:
            from .incomplete import sparse_view_laplacians

            Ls = sparse_view_laplacians(kernels, mask, n_neighbors, est.graph_weights,
                                        normalized=(laplacian == "normalized"))
        else:
            Ls = [sparse_laplacian(sparse_knn_weights(kernels, i, n_neighbors, est.graph_weights),
                                   normalized=(laplacian == "normalized")) for i in range(m)]
    c = check_combination(getattr(est, "c", None) if c is None else c, m)
    w = getattr(est, "between_weights", None)
    if w is not None:
        w = np.asarray(w, dtype=np.float64)
        if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError(f"between_weights must be {n} finite non-negative numbers (one per training point)")
    Y_L = encode_targets(y_enc[labelled], len(est.classes_))
    system = MVLSystem(n, labelled, Y_L, c, **gammas, laplacians=Ls, laplacian_power=est._laplacian_power(),
                       between_weights=w, mask=mask)
    if solver == "graph":  # its Vecchia preconditioner needs no Nystrom basis (mvl.graph_solver)
        return kernels, system, None, labelled, None
    M = min(int(est.n_components), n)
    rng = check_random_state(est.random_state)
    view_centres = None
    if mask is not None and M < n:  # each view draws min(M, n_p) centres among its own samples; centres: the union
        view_centres = []
        for p in range(m):
            idx = np.flatnonzero(mask[:, p])
            view_centres.append(np.sort(rng.choice(idx, min(M, idx.size), replace=False)) if idx.size else idx)
        centres = np.unique(np.concatenate(view_centres))
    else:
        centres = np.arange(n) if M >= n else np.sort(rng.choice(n, M, replace=False))
    return kernels, system, NystromBasis(kernels, centres, mask, view_centres), labelled, centres


class IllConditionedWarning(UserWarning):
    """A solve was numerically ill-conditioned (see ``condition_estimate_``)."""


@shared_parameters
class MVLLeastSquares(MVLClassifier):
    """Multi-view vector-valued least squares classifier (MVL-LS, Algorithm 1).

    Semi-supervised: samples labelled -1 (or None/NaN in object arrays) are unlabelled and enter through the
    graph (gamma_W) and the between-view term (gamma_B). The defaults are the validation study's choice
    (``benchmarks/study_defaults.py``): a 5-NN graph with kernel weights, the normalized Laplacian squared,
    gamma_A = 1e-5, gamma_B = 0, gamma_W = 1e-2; ``n_neighbors=None`` gives the paper's dense graph. To select
    the graph and the gammas by cross-validation, use :class:`mvl.MVLLeastSquaresCV`.

    Parameters
    ----------
    {gamma_A, gamma_B, gamma_W, laplacian, n_neighbors, laplacian_power, graph_weights, n_classes, c}
    solver : "auto", "structured", "cg", "nystrom" or "dense", default "auto"
        "structured" solves view by view (O(m n^3) time, O(m n^2) memory; :func:`solve_structured`). "cg" solves
        the same problem of Theorem 10 by preconditioned conjugate gradients (:mod:`mvl.scalable`): no n x n
        array unless the m kernels fit ``max_memory``, kernels recomputed in tiles per product otherwise; exact to
        ``tol``; needs a kNN graph (``n_neighbors``) when gamma_W > 0. "nystrom" restricts each view's function
        to the span of ``n_components`` training points (approximate; equal to the exact solution when
        n_components >= n); O(n n_components m) memory. "graph" solves the same exact problem by conjugate
        gradients on the symmetric pencil (K + l gamma_A M^{-1}) a = M^{-1} r, preconditioned with the graph term
        exact and the kernels by Vecchia's sparse approximation of their inverses (one sparse LU;
        :mod:`mvl.graph_solver`, :mod:`mvl.vecchia`): for the graph regime (gamma_W / gamma_A >= 1e4, narrow or
        moderate kernels) where "cg" does not converge; exact to ``tol``; needs ``n_neighbors`` when
        gamma_W > 0; no n x n array. "auto": precomputed kernels -> "structured"; feature views ->
        "structured" up to 5,000 training points (if its memory fits); up to 20,000: in the graph regime
        (measured: the fraction of the kernels' trace that ``n_components`` Nystrom centres miss, times
        (gamma_B m + gamma_W 2^k) / gamma_A, k = laplacian_power, at least 1, with a kNN graph; ``regime_``)
        "graph", otherwise "cg"; "nystrom" beyond. "dense" is the
        textbook (u+l)m system solved by one LU, for tests and benchmarks.
    n_components : int >= 1, default 1000
        Nystrom centres (uniformly drawn training points, seeded by ``random_state``): the approximation of
        "nystrom" and the preconditioner of "cg" (typical 500-4000; more is more accurate and costs
        O(n n_components m) memory); not used by "graph".
    tol : float in (0, 1), default 1e-6
        "cg", "graph": stop when the relative residual ||r - (B + l gamma_A I) a|| / ||r|| of the system (68) is
        <= tol for every output column; "graph" also when the estimated relative error of its quadratic objective
        is <= tol, which bounds every decision value's error by ||c|| sqrt(tol) ||a||_A
        (:func:`mvl.graph_solver.solve_graph`; 1e-4 halves the iterations of 1e-6, with the same predictions where
        measured).
    max_iter : int >= 1, default 500
        "cg", "graph": iteration limit; reaching it warns (``ConvergenceWarning``) with the residual.
    max_memory : float > 0 or None, default None
        Bytes the kernels of "cg" may keep (above it they are recomputed per product), and the budget of
        "auto"; None: half of the memory available at fit time.
    random_state : int, RandomState or None, default None
        Seed of the Nystrom centres ("cg", "nystrom") and, if an int, of the orderings of "graph"'s Vecchia
        preconditioner (else 0).
    verbose : int >= 0, default 0
        "cg": print the residual after every iteration.
    between_weights : array (n,) of non-negative numbers, or None, default None
        Per-point weights w of the between-view term, M_B = diag(w) (x) M_m; None is w = 1 (eq 57). The
        indicator of the unlabelled points gives co-regularization on them (Section 3.4, eq 43-48;
        Sindhwani & Rosenberg 2008, see :mod:`mvl.coreg`).
    {kernel, views, bandwidth}

    Attributes
    ----------
    coef_ : array (m, n, P)
        Coefficients a_j per view (A of Theorem 10, view-major).
    classes_ : array (P,)
    c_ : array (m,)
    n_labelled_ : int
    fit_seconds_ : float
    condition_estimate_ : float
        1-norm condition estimate of the factored systems (structured solver; NaN for cg and nystrom).
    solver_ : str
        The solver used ("auto" resolved).
    regime_ : float or None
        solver="auto" between "cg" and "graph" (feature views, 5,000-20,000 points, a kNN graph): the measured
        graph-regime size :func:`mvl.graph_solver.measured_regime` (the fraction of the kernels' trace that
        ``n_components`` Nystrom centres miss, on 500 sampled points, times (gamma_B m + gamma_W 2^k) / gamma_A),
        "graph" when >= 1 (:data:`mvl.graph_solver.GRAPH_REGIME`); None when not measured.
    centres_ : array (M,) or None
        "nystrom": indices of the training points that carry the coefficients (coef_ is then (m, M, P)).
    n_iter_, residual_ : int, float or None
        "cg", "graph": iterations and the final relative residual of (68) ("graph": the smaller of it and the
        estimated relative objective error, see ``tol``); the direct solvers: 1 and None.
    {view_attributes}
    view_mask_ : bool array (n, m) or None
        Which training samples have which view (True: present); None when no view is missing.

    See Also
    --------
    MVLLeastSquaresCV : the graph and the gammas selected by cross-validation.
    MVLLeastSquaresOptC : the same problem with the combination c learned (Section 6).
    MVLSVM : the multi-class SVM of the same framework (Algorithm 2).
    mvl.coreg : co-regularization on the unlabelled points (``between_weights``).

    Notes
    -----
    The gammas enter multiplied by l, the number of labelled samples, exactly
    as in eq (67)-(68), so values from the paper mean the same here. Labels: any sortable labels,
    -1 (or None/NaN in object arrays) marks an unlabelled sample (:mod:`mvl.base`). Before a large
    allocation the memory is estimated: InsufficientMemoryError (a MemoryError) says what to do instead.

    Missing views (incomplete multi-view data, :mod:`mvl.incomplete`): a sample's missing view is a row of NaN
    across all that view's columns (with "precomputed", a NaN row and column of that view's Gram matrix; at
    prediction a NaN row of the view's slice); a NaN inside an otherwise present view is an error, and so is a
    sample with no view. Each view's function is then learnt on the samples that have the view, the combination
    c is renormalised over each sample's present views (the mean of the present views for the default c), the
    between-view term couples the views present together, each graph is built on its view's samples, and a
    test point is predicted from the views it has. Solvers "structured" (O(sum_p n_p^3)), "dense", "cg" and
    "nystrom" (the same system, :mod:`mvl.scalable`; view p draws min(n_components, n_p) centres among its samples,
    ``centres_`` is their union and ``coef_[p]`` is zero at the other views' centres); "graph" needs complete views
    ("auto" then picks "cg"); scikit-learn's
    ``StandardScaler`` passes the NaN through in a ``Pipeline``. With views missing, gamma_B > 0 carries the labels
    across views at the unlabelled samples: 1e-4 on mfeat (``benchmarks/bench_incomplete.py``).

    References
    ----------
    {mvl_references}

    Examples
    --------
    >>> import numpy as np
    >>> from mvl import MVLLeastSquares
    >>> from mvl.data.embedded import load_mfeat
    >>> ds = load_mfeat(["fou", "kar", "mor"])             # three views of 2000 handwritten digits
    >>> X, rng = np.hstack(ds.views), np.random.default_rng(0)
    >>> idx = rng.permutation(2000)
    >>> train, test = idx[:500], idx[500:]
    >>> y = ds.y[train].copy()
    >>> y[50:] = -1                                         # 50 labelled samples, 450 unlabelled
    >>> model = MVLLeastSquares(views=[76, 64, 6]).fit(X[train], y)
    >>> bool(model.score(X[test], ds.y[test]) > 0.85)
    True
    >>> model.decision_function(X[test]).shape              # (t, P): one output per class
    (1500, 10)
    """

    # scikit-learn's parameter validation (run by fit): the MVL entries shared with optC and the SVMs, then the
    # solver's, one per line
    _parameter_constraints: dict = {
        **MVLClassifier._parameter_constraints,
        "solver": [StrOptions(set(_SOLVERS))],
        "between_weights": [None, "array-like"],
        "n_components": [COUNT],
        "tol": [StrictInterval(Real, 0, 1, closed="neither")],
        "max_iter": [COUNT],
        "max_memory": [None, POSITIVE],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }
    _memory_advice = MEMORY_ADVICE
    _missing_views = True

    def __init__(self, *, gamma_A=1e-5, gamma_B=0.0, gamma_W=1e-2, c=None, laplacian="normalized",
                 solver="auto", n_neighbors=5, n_classes=None, between_weights=None, laplacian_power=None,
                 graph_weights="kernel", kernel="rbf", views=None, bandwidth=None, n_components=1000, tol=1e-6,
                 max_iter=500, max_memory=None, random_state=None, verbose=0):
        self.gamma_A = gamma_A
        self.gamma_B = gamma_B
        self.gamma_W = gamma_W
        self.c = c
        self.laplacian = laplacian
        self.solver = solver
        self.n_neighbors = n_neighbors
        self.n_classes = n_classes
        self.between_weights = between_weights
        self.laplacian_power = laplacian_power
        self.graph_weights = graph_weights
        self.kernel = kernel
        self.views = views
        self.bandwidth = bandwidth
        self.n_components = n_components
        self.tol = tol
        self.max_iter = max_iter
        self.max_memory = max_memory
        self.random_state = random_state
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit on X (see ``kernel``) and labels ``y`` (n,), -1 = unlabelled."""
        self._scalable = None
        self.view_mask_ = None
        budget = memory_budget(self)
        n, m = sample_and_view_counts(self, X)
        l = n if y is None else int(np.count_nonzero(~unlabelled_mask(np.asarray(y)).ravel()))
        self.regime_ = None
        regime = None
        if self.n_neighbors is not None and isinstance(self.laplacian, str) and self.gamma_W > 0 and self.gamma_A > 0:

            def regime():  # measured only when the choice between "graph" and "cg" depends on it
                from .graph_solver import measured_regime

                if _holds_nan(X):
                    return None  # incomplete views: "graph" needs complete views
                self.regime_ = measured_regime(self._fit_kernel_operator(X, 0), self.gamma_A, self.gamma_B,
                                               self.gamma_W, self._laplacian_power(), self.n_components,
                                               self.random_state)
                return self.regime_

        solver = choose_solver(self.solver, self.kernel, n, m, l, budget, regime)
        self.solver_ = solver
        if solver in ("cg", "nystrom", "graph"):
            return self._fit_scalable(X, y, solver, budget)
        if solver in ("structured", "dense"):  # before the kernels are computed (feature views) or used
            self._check_memory(dense_bytes(n, m) if solver == "dense" else structured_bytes(n, m, l),
                               f"the {solver} MVL-LS solve at n = {n}, m = {m}")
        K = self._fit_kernels(X)
        m, n, _ = K.shape
        mask = self.view_mask_  # None: every view of every sample is present (the complete path, unchanged)
        y_enc, labelled = self._fit_labels(y, n)
        Y_L, L = self._mvl_inputs(K, y_enc, labelled, mask)
        gammas = self._gammas()
        c = check_combination(self.c, m)
        t0 = time.perf_counter()
        info = {}
        w = self.between_weights
        if w is not None:
            w = np.asarray(w, dtype=np.float64)
            if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0):
                raise ValueError(f"between_weights must be {n} finite non-negative numbers (one per training point)")
        if mask is not None:
            from .incomplete import solve_dense_incomplete, solve_structured_incomplete

            if self.solver == "dense":
                coef = solve_dense_incomplete(K, mask, labelled, Y_L, c, **gammas, L=L, between_weights=w)
            else:
                coef = solve_structured_incomplete(K, mask, labelled, Y_L, c, **gammas, L=L, info=info,
                                                   between_weights=w)
        elif self.solver == "dense":
            coef = solve_dense(K, labelled, Y_L, c, **gammas, L=L, between_weights=w)
        else:
            coef = solve_structured(K, labelled, Y_L, c, **gammas, L=L, info=info, between_weights=w)
        self.fit_seconds_ = time.perf_counter() - t0
        rcond = info.get("rcond", np.nan)  # not estimated by the dense textbook solver
        self.condition_estimate_ = 1.0 / rcond if rcond != 0 else np.inf
        _check_solution(coef, self.condition_estimate_, gammas["gamma_A"])
        self.coef_ = coef
        self.c_ = c
        self.n_labelled_ = len(labelled)
        self.centres_ = None
        self.n_iter_, self.residual_ = 1, None  # a direct solve
        self._check_regularization(K, labelled, y_enc[labelled], mask)
        return self

    def _fit_scalable(self, X, y, solver, budget):
        """solver "cg", "nystrom" (:mod:`mvl.scalable`) or "graph" (:mod:`mvl.graph_solver`) on a kernel operator
        without n x n arrays."""
        from .graph_solver import solve_graph
        from .scalable import solve_cg, solve_nystrom

        t0 = time.perf_counter()
        kernels, system, basis, labelled, centres = scalable_problem(self, X, y, solver, budget,
                                                                     missing=solver != "graph")
        c = system.c
        self.n_iter_, self.residual_ = 1, None  # "nystrom": a direct solve
        if solver == "nystrom":
            coef = solve_nystrom(system, basis)
            self.centres_ = centres
        elif solver == "graph":
            coef, info = solve_graph(system, kernels, None, tol=float(self.tol), max_iter=int(self.max_iter),
                                     verbose=self.verbose, random_state=vecchia_seed(self.random_state))
            self.n_iter_, self.residual_ = info["n_iter"], min(info["residual"], info["energy_error"])
            self.centres_ = None
            if not info["converged"]:
                from sklearn.exceptions import ConvergenceWarning

                warnings.warn(f'solver="graph" stopped after max_iter = {info["n_iter"]} iterations at estimated '
                              f'relative objective error {info["energy_error"]:.2e} and relative residual '
                              f'{info["residual"]:.2e}, both > tol = {self.tol:g}; increase max_iter or tol, or use '
                              'solver="structured" (exact, if n m^2 fits memory)', ConvergenceWarning, stacklevel=3)
        else:
            coef, info = solve_cg(system, kernels, basis, tol=float(self.tol), max_iter=int(self.max_iter),
                                  verbose=self.verbose)
            self.n_iter_, self.residual_ = info["n_iter"], info["residual"]
            self.centres_ = None
            if not info["converged"]:
                from sklearn.exceptions import ConvergenceWarning

                warnings.warn(f'solver="cg" stopped after max_iter = {info["n_iter"]} iterations at relative residual '
                              f'{info["residual"]:.2e} > tol = {self.tol:g}; increase max_iter or n_components, or use '
                              'solver="structured" (n small) or "nystrom"', ConvergenceWarning, stacklevel=3)
        if not np.all(np.isfinite(coef)):
            raise FloatingPointError(f'solver="{solver}" produced NaN or inf; increase gamma_A (now {self.gamma_A!r})')
        self._scalable = kept_for_prediction(self, kernels, centres if solver == "nystrom" else None)
        self.coef_ = coef
        self.c_ = c
        self.n_labelled_ = len(labelled)
        self.condition_estimate_ = np.nan
        self.fit_seconds_ = time.perf_counter() - t0
        # the decision values on the labelled samples (t = l rows of kernels, no n x n array)
        check_swamped(self, self.decision_function(take_samples(X, labelled)),
                      (("gamma_A", self.gamma_A), ("gamma_B", self.gamma_B), ("gamma_W", self.gamma_W)),
                      np.argmax(system.Y_L, axis=1))
        return self

