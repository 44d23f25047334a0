"""A Poisson-type data term in the vector-valued framework: centred sources at the labelled points.

**Problem.** Poisson learning (Calder, Cook, Thorpe & Slepcev, ICML 2020) solves L u = sum_j (y_j - ybar) delta_j on
a graph, L = D - W, ybar = (1/l) sum_{j<=l} y_j: centred sources at the labelled points instead of the boundary
values of Laplace learning, which tend to a constant with spikes at the labels when labels are few. In the notation
of Minh, Bazzani & Murino (JMLR 2016), the labelled least-squares term of eq (10)/(53) is replaced by the linear
source term, over f = (f^1, ..., f^m) in the vector-valued RKHS H_K with C = c^T (x) I_P (eq 52):

    loss="poisson":          -(2/l) sum_{j<=l} <y_j - ybar, C f(x_j)>_{R^P} + gamma_A ||f||^2
                             + gamma_B <f, M_B f> + gamma_W <f, M_W f>,

with M_B = I_{u+l} (x) M_m (x) I_P from eq (54)-(57) and M_W = L (x) I_P from eq (60)-(63); or the two joined,

    loss="squared+poisson":  (1/l) sum_{j<=l} ||y_j - C f(x_j)||^2 + (the same source term and penalties),

which, up to a constant, is eq (53) with the targets y_j replaced by y_j + (y_j - ybar) (expand the square).

**Well posed, out of sample.** The source term is linear in f, so it alone is unbounded below; gamma_A ||f||^2 with
gamma_A > 0 makes the objective strictly convex and coercive, so there is exactly one minimiser. The data and
penalty terms see f only through f(x_1), ..., f(x_{u+l}), so the representer theorem (Theorem 2) holds as for eq
(53): f = sum_i K(., x_i) a_i, a_i in R^{mP}, and every point x, seen or not, gets C f(x) = sum_i C K(x, x_i) a_i.

**Theorem 10's system.** Setting the gradient to zero as in the proof of Theorem 10 (eq 67-68, with R = I_P,
unknowns a = (a_1, ..., a_{u+l}) sample-major, G[x] the Gram matrix of eq (94)):

    source alone:   (l gamma_B M_B + l gamma_W M_W) G[x] a + l gamma_A a = S_C,
    joined:         (J_l^{u+l} (x) c c^T + l gamma_B M_B + l gamma_W M_W) G[x] a + l gamma_A a = Y_C + S_C,

S_C = S (x) c, S the (u+l) x P matrix with rows y_j - ybar at the labelled points and zero elsewhere (Y_C likewise
from y_j, eq 68). The operator M of (68), M = J (x) c c^T + l gamma_B M_B + l gamma_W M_W, loses its labelled block
with the source term alone: M = l (gamma_B M_B + gamma_W M_W), which no longer depends on the labels. Dividing by
l, the system is (gamma_B M_B + gamma_W M_W) G[x] a + gamma_A a = S_C / l: one factorisation serves every labelled
set, seed and label rate on the same points; only the right-hand side changes.

**Structured solve.** With the diagonal kernel of Section 7.1 and view-major unknowns (as in
:mod:`mvl.solvers.structured`), the source-alone system reads, per view p,

    H_p A_p = c_p S + l gamma_B T,    H_p = (l gamma_B m I + l gamma_W L^p) K^p + l gamma_A I,    T = sum_q K^q A_q,

the H_p of MVL-LS unchanged (:func:`mvl.solvers.lapack.factor_view`). With gamma_B = 0 the views decouple completely:
A_p = c_p H_p^{-1} S, m LU factorisations and solves, O(m n^3) time, O(m n^2) memory, and no coupled system at all
(MVL-LS still couples the views through the labelled residual E_L). With gamma_B > 0 the views couple only through
T: with Q_p = K^p H_p^{-1} (symmetric), Q_1 = sum_p Q_p, Q_c = sum_p c_p Q_p, eliminating A_p leaves
(I - l gamma_B Q_1) T = Q_c S, one n x n system (MVL-LS's (l + n) system without its labelled block). The joined
loss keeps the labelled block: it is MVL-LS with targets 2 y_j - ybar
(:func:`mvl.solvers.structured_system.solve_structured`).

**Other solvers.** Everything that only applies H_p or the operator M carries over with the right-hand side
replaced: the conjugate-gradient solver (cg) on the system above (the operator is now label-free and, for gamma_B =
0, block diagonal: m independent CG solves); the graph solver (its preconditioner M_eps = M + eps I and energy
stopping rule apply to M = l (gamma_B M_B + gamma_W M_W), which at gamma_A -> 0 is Poisson learning's L itself;
no labelled block to add to M_eps); incomplete views (a missing view only removes its rows from K^p and L^p, as
for MVL-LS; with gamma_B = 0 a missing view contributes nothing, so the between-view coupling is what lets the
other views fill it in). Costs are those of the MVL-LS solvers on the same n, m, minus the coupled labelled system.

**The limit gamma_A -> 0 (one view, c = 1).** The system is l gamma_W L F + l gamma_A a = S with F = K a. Since
1^T L = 0 and 1^T S = 0 (centred sources), 1^T a = 0 for every gamma_A, and as gamma_A -> 0, L F -> S / (l gamma_W):
F tends to L^+ S / (l gamma_W) plus a constant per class (fixed by 1^T K^{-1} F = 0). graphlearning's Poisson learning
(conjugate-gradient solver) returns the solution u of L u = S with sum_i d_i u_i = 0 (d the degrees). So
l gamma_W (F - shift) -> u with shift the degree-weighted mean of F per class; :func:`fit_decision` with
``weights=d`` removes exactly that shift before the argmax.

**Class-balanced sources.** Poisson learning's sources give a class with more labelled points more total source
mass, which biases the solution towards it when the labelled set is not stratified. With ``balanced=True`` source j
is weighted by w_j = (l / P') / l_k (l_k the labelled points of its class k, P' the classes that have any) and
centred with the weighted mean: every class then puts the same mass into the graph; with equally labelled classes
w = 1 and nothing changes. On validation draws of l = 2P and 5P uniformly random labelled points (seeds 100-104) it
gained 5-12 points (USPST 81.0 -> 88.8, mfeat 86.9 -> 97.1, 1,000 points of multi-view MNIST 77.4 -> 82.5 at l =
5P). :class:`mvl.MVLLeastSquares` uses it.

**Decision rule and class priors.** The class is the argmax over the P outputs of C f(x) - shift, the shift a
weighted mean of the training outputs per class (uniform weights by default, the degrees to match Poisson learning);
the shift is fixed at fit time and applied to new points too. ``class_priors`` follows graphlearning's
``class_priors`` (its volume label projection): the shifted training outputs are mapped to [0, 1] by one affine map
(minimum 0, maximum 1, over all classes) and multiplied per class by weights w_k, adjusted by
w_k <- w_k - 0.1 (fraction predicted as k - prior_k), normalised to w_0 = 1, until (after the step) every fraction
was within 1e-3 of its prior (at most 10,000 steps); the same map and weights then decide new points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import linalg, sparse
from scipy.linalg import lapack

from .lapack import factor_view, view_Q

__all__ = ["LOSSES", "source_weights", "source_term", "PoissonOperator", "solve_structured", "solve_dense",
           "combined_outputs", "PoissonDecision", "fit_decision", "graph_degrees", "solve_source"]

LOSSES = ("poisson", "squared+poisson")
"""The data terms: the centred source term alone, or joined with the labelled least-squares term of eq (53)."""


def _check_loss(loss):
    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")


def _system_inputs(K, labelled, Y_L, c, loss):
    """(m, n, l, labelled, Y_L, c) as arrays, the loss checked: the inputs of the dense system and its residual."""
    _check_loss(loss)
    m, n, _ = K.shape
    return (m, n, len(labelled), np.asarray(labelled), np.asarray(Y_L, dtype=np.float64),
            np.asarray(c, dtype=np.float64))


def source_weights(Y_L, balanced):
    """Per-source weights w_j (l,): ones, or with ``balanced`` (l / P') / l_k for a point of class k (the argmax of
    its target row), l_k the labelled points of class k and P' the classes that have any, so that every class puts
    the same total weight l / P' into the sources (ones when the classes are equally labelled)."""
    Y_L = np.asarray(Y_L, dtype=np.float64)
    if not balanced:
        return np.ones(len(Y_L))
    k = np.argmax(Y_L, axis=1)
    counts = np.bincount(k)
    return (len(Y_L) / np.count_nonzero(counts)) / counts[k]


def source_term(labelled, Y_L, n, balanced=False):
    """S (n, P): rows w_j (y_j - ybar) at the labelled points ``labelled`` (ybar = sum_j w_j y_j / sum_j w_j; w the
    :func:`source_weights`, ones unless ``balanced``), zero elsewhere. Its columns sum to zero (orthogonal to the
    null space of L = D - W)."""
    Y_L = np.asarray(Y_L, dtype=np.float64)
    w = source_weights(Y_L, balanced)
    S = np.zeros((n, Y_L.shape[1]))
    S[np.asarray(labelled)] = (Y_L - w @ Y_L / w.sum()) * w[:, None]
    return S


class PoissonOperator:
    """The label-free system of the source term, factored view by view: (gamma_B M_B + gamma_W M_W) G[x] a +
    gamma_A a = R (the source-alone system divided by l; solve it with R = S / l).

    Parameters
    ----------
    K : ndarray of shape (m, n, n)
        Per-view kernel matrices on the training points, exactly symmetric.
    c : ndarray of shape (m,)
        The combination of the views (eq 52).
    gamma_A, gamma_B, gamma_W : float
        The weights of eq (53); gamma_A > 0.
    L : ndarray of shape (m, n, n), list of m sparse matrices, or None
        Per-view graph Laplacians (None: no within-view term). Sparse ones (a k-NN graph) form H_p in O(n^2 k)
        instead of the dense product's O(n^3); the LU is O(n^3) either way.

    Attributes
    ----------
    factors : list of tuple
        LAPACK LU factors of H_p^T / l, one per view.
    coupled : tuple or None
        With gamma_B > 0 and m > 1: (LU of (I - gamma_B Q_1)^T, pivots, Q_c); else None.
    """

    def __init__(self, K, c, gamma_A, gamma_B, gamma_W, L=None):
        if not gamma_A > 0:
            raise ValueError(f"gamma_A must be > 0 (the source term is unbounded below without it), got {gamma_A}")
        self.K = K
        self.c = np.asarray(c, dtype=np.float64)
        m, n, _ = K.shape
        self.beta = float(gamma_B) if m > 1 else 0.0  # M_1 = 0: no between-view term for one view
        self.factors = []
        Q1 = Qc = None
        if self.beta > 0:
            Q1, Qc = np.zeros((n, n)), np.zeros((n, n))
        for p in range(m):
            if L is not None and sparse.issparse(L[p]):
                lu, piv = _factor_sparse(K[p], L[p], m, gamma_A, self.beta, gamma_W, p)
            else:
                lu, piv = factor_view(K[p], None if L is None else L[p], m, gamma_A, self.beta, gamma_W, p)
            self.factors.append((lu, piv))
            if Q1 is not None:
                Qp = view_Q(lu, piv, K[p]).T  # Q_p is symmetric
                Q1 += Qp
                Qc += self.c[p] * Qp
                del Qp
        self.coupled = None
        if Q1 is not None:
            Q1 *= -self.beta
            Q1[np.diag_indices(n)] += 1.0  # I - gamma_B Q_1, C-ordered: its transpose is the Fortran view
            lu, piv, err = lapack.dgetrf(Q1.T, overwrite_a=True)
            if err != 0:
                raise np.linalg.LinAlgError(f"I - gamma_B Q_1 is singular (dgetrf info {err})")
            self.coupled = (lu, piv, Qc)

    def solve(self, R):
        """Coefficients A (m, n, P) for the right-hand side R (n, P): H_p A_p = c_p R + gamma_B T (H_p / l)."""
        R = np.asarray(R, dtype=np.float64)
        T = None
        if self.coupled is not None:
            lu, piv, Qc = self.coupled
            T, _ = lapack.dgetrs(lu, piv, Qc @ R, trans=1)  # (I - gamma_B Q_1) T = Q_c R
        A = np.empty((len(self.factors),) + R.shape)
        for p, (lu, piv) in enumerate(self.factors):
            rhs = self.c[p] * R
            if T is not None:
                rhs = rhs + self.beta * T
            A[p], _ = lapack.dgetrs(lu, piv, rhs, trans=1)  # from the LU of H_p^T
        return A


def _factor_sparse(Kp, Lp, m, gamma_A, beta, gamma_W, p):
    """LU of H_p^T (as :func:`mvl.solvers.lapack.factor_view`) for a sparse Laplacian: H_p = (beta m I + gamma_W L^p)
    K^p + gamma_A I formed by one sparse-dense product."""
    H = _sparse_dense_product(Lp, Kp, gamma_W) if gamma_W > 0 else np.zeros_like(Kp)
    if beta > 0:
        H += (beta * m) * Kp
    H[np.diag_indices_from(H)] += gamma_A
    lu, piv, info = lapack.dgetrf(H.T, overwrite_a=True)  # H C-ordered: H.T is its Fortran view
    if info != 0:
        raise np.linalg.LinAlgError(f"H_p of view {p} is singular (dgetrf info {info})")
    return lu, piv


PRODUCT_BLOCK = 256
"""Columns of one block of :func:`_sparse_dense_product`."""


def _sparse_dense_product(S, B, scale):
    """scale * (S @ B) for a sparse S (n, n) and a dense B (n, n), C-ordered: by column blocks of
    :data:`PRODUCT_BLOCK` on every core (scipy's sparse product releases the GIL but runs on one thread); each
    entry is the same sum in the same order as ``S @ B``, so the result is bit-identical."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    n = B.shape[1]
    out = np.empty((S.shape[0], n))

    def block(s):
        e = min(n, s + PRODUCT_BLOCK)
        out[:, s:e] = S @ np.ascontiguousarray(B[:, s:e])
        out[:, s:e] *= scale

    starts = range(0, n, PRODUCT_BLOCK)
    workers = min(os.cpu_count() or 1, len(starts))
    if workers > 1:
        with ThreadPoolExecutor(workers) as ex:
            list(ex.map(block, starts))
    else:
        for s in starts:
            block(s)
    return out


def solve_structured(K, labelled, Y_L, c, gamma_A, gamma_B, gamma_W, L=None, loss="poisson", balanced=False):
    """Coefficients A (m, n, P) of the Poisson-type problem, view by view (see the module docstring).

    Parameters
    ----------
    K : ndarray of shape (m, n, n)
        Per-view kernel matrices on the n training points, exactly symmetric.
    labelled : array-like of int
        Indices of the l labelled points among the n.
    Y_L : ndarray of shape (l, P)
        Their targets (one-hot or the +-1 coding of Section 5.1; the source term centres them).
    c : ndarray of shape (m,)
        The combination of the views.
    gamma_A, gamma_B, gamma_W : float
        The weights of eq (53); gamma_A > 0.
    L : ndarray of shape (m, n, n) or None
        Per-view Laplacians (for Poisson learning's limit the unnormalised D - W).
    loss : {"poisson", "squared+poisson"}
        The source term alone, or joined with the labelled least-squares term.
    balanced : bool, default False
        Class-balanced sources (:func:`source_weights`); False is Poisson learning's.

    Returns
    -------
    A : ndarray of shape (m, n, P)
        C f(x) = sum_p c_p K^p(x, X) A[p].
    """
    _check_loss(loss)
    m, n, _ = K.shape
    l = len(labelled)
    S = source_term(labelled, Y_L, n, balanced)
    if loss == "poisson":
        return PoissonOperator(K, c, gamma_A, gamma_B, gamma_W, L).solve(S / l)
    from .structured_system import solve_structured as least_squares_structured

    Y_L = np.asarray(Y_L, dtype=np.float64)
    return least_squares_structured(K, np.asarray(labelled), Y_L + S[labelled], np.asarray(c, dtype=np.float64),
                                    gamma_A, gamma_B, gamma_W, L)


def solve_dense(K, labelled, Y_L, c, gamma_A, gamma_B, gamma_W, L=None, loss="poisson", balanced=False):
    """Textbook reference: the full (nm) x (nm) system of the module docstring, sample-major as eq (67)-(68), one LU.

    G[x] = sum_p K^p (x) e_p e_p^T (eq 94), M = [J (x) c c^T] + l gamma_B I (x) M_m + l gamma_W sum_p L^p (x)
    e_p e_p^T (the labelled block only for ``loss="squared+poisson"``), right-hand side (S [+ Y]) (x) c, S with
    the weights of :func:`source_weights` (``balanced``). Memory O((nm)^2): for tests only. Returns coefficients in
    the layout (m, n, P).
    """
    m, n, l, labelled, Y_L, c = _system_inputs(K, labelled, Y_L, c, loss)
    N = n * m
    E = np.eye(m)
    G = sum(np.kron(K[p], np.outer(E[p], E[p])) for p in range(m))
    Mm = m * np.eye(m) - np.ones((m, m))  # eq (54)
    Mop = l * gamma_B * np.kron(np.eye(n), Mm) if m > 1 else np.zeros((N, N))
    if gamma_W > 0 and L is not None:
        Mop += l * gamma_W * sum(np.kron(L[p], np.outer(E[p], E[p])) for p in range(m))  # eq (60)
    Ybig = np.zeros((n, Y_L.shape[1]))
    w = np.ones(l)
    if balanced:  # (l / P') / l_k, written out again (the reference does not call source_term)
        k = np.argmax(Y_L, axis=1)
        w = np.array([(l / len(set(k))) / np.sum(k == kj) for kj in k])
    Ybig[labelled] = (Y_L - w @ Y_L / w.sum()) * w[:, None]  # S
    if loss == "squared+poisson":
        J = np.zeros((n, n))
        J[labelled, labelled] = 1.0
        Mop += np.kron(J, np.outer(c, c))
        Ybig[labelled] += Y_L
    B = Mop @ G
    B[np.diag_indices(N)] += l * gamma_A
    a = linalg.solve(B, np.kron(Ybig, c[:, None]))
    return a.reshape(n, m, -1).transpose(1, 0, 2).copy()


def residual(K, labelled, Y_L, c, A, gamma_A, gamma_B, gamma_W, L=None, loss="poisson", balanced=False, KA=None):
    """True relative residual ||b - B a|| / ||b|| of the system of the module docstring (sample-major, eq 67-68 with
    the source term) at the coefficients ``A`` (m, n, P), from m kernel products and the sparse or dense Laplacians:
    per view p, (B a)_p = l gamma_B (m K^p A_p - T) + l gamma_W L^p K^p A_p + l gamma_A A_p [+ c_p J C f] with
    T = sum_q K^q A_q (eq 54, 60) and b_p = c_p (S [+ Y]). No (nm) x (nm) array. ``KA``: the products K^p A_p
    (m, n, P) if already formed."""
    m, n, l, labelled, Y_L, c = _system_inputs(K, labelled, Y_L, c, loss)
    if KA is None:
        KA = np.stack([K[p] @ A[p] for p in range(m)])
    T = KA.sum(axis=0)
    rhs = source_term(labelled, Y_L, n, balanced)
    Cf = None
    if loss == "squared+poisson":
        rhs[labelled] += Y_L
        Cf = np.tensordot(c, KA, axes=1)[labelled]
    num = den = 0.0
    for p in range(m):
        r = l * gamma_A * A[p] - c[p] * rhs
        if m > 1 and gamma_B:
            r += l * gamma_B * (m * KA[p] - T)
        if gamma_W and L is not None:
            r += l * gamma_W * (L[p] @ KA[p])
        if Cf is not None:
            r[labelled] += c[p] * Cf
        num += float(np.sum(r * r))
        den += float(np.sum((c[p] * rhs) ** 2))
    return float(np.sqrt(num / den)) if den > 0 else float(np.sqrt(num))


def combined_outputs(K_cross, A, c):
    """C f(x) = sum_p c_p K^p(x, X) A[p] for kernels ``K_cross`` (m, t, n) between t points and the n training
    points; (t, P)."""
    return sum(c[p] * (K_cross[p] @ A[p]) for p in range(len(c)))


def graph_degrees(W):
    """Degrees of a weight matrix with its diagonal dropped (as graphlearning's Poisson learning does), (n,)."""
    d = np.asarray(W.sum(axis=1)).ravel()
    return d - np.asarray(W.diagonal()).ravel()


@dataclass
class PoissonDecision:
    """The decision rule fitted on the training outputs: argmax over classes of ((F - shift - low) / span) * w.

    Attributes
    ----------
    shift : ndarray of shape (P,)
        The weighted mean of the training outputs per class, removed from every output.
    weights : ndarray of shape (P,) or None
        The class-prior weights (None: plain argmax of F - shift).
    low, span : float
        The affine map of the shifted training outputs onto [0, 1] (used with the weights).
    """

    shift: np.ndarray
    weights: np.ndarray | None = None
    low: float = 0.0
    span: float = 1.0

    def scores(self, F):
        """The scores whose argmax is the class, (t, P)."""
        G = np.asarray(F, dtype=np.float64) - self.shift
        if self.weights is None:
            return G
        return (G - self.low) / self.span * self.weights

    def predict(self, F):
        """Class indices 0..P-1 of outputs F (t, P)."""
        return np.argmax(self.scores(F), axis=1)


def fit_decision(F, weights=None, class_priors=None, max_iter=10000, tol=1e-3):
    """The decision rule of training outputs F (n, P): the shift is the mean of F's rows weighted by ``weights``
    (None: uniform; the graph degrees reproduce Poisson learning's normalisation); with ``class_priors`` (P,) the
    volume label projection of graphlearning (module docstring) over the n training points."""
    F = np.asarray(F, dtype=np.float64)
    w = np.ones(len(F)) if weights is None else np.asarray(weights, dtype=np.float64)
    shift = w @ F / w.sum()
    if class_priors is None:
        return PoissonDecision(shift)
    priors = np.asarray(class_priors, dtype=np.float64)
    priors = priors / priors.sum()
    G = F - shift
    low = float(G.min())
    span = float(G.max() - low) or 1.0
    scores = (G - low) / span
    P = F.shape[1]
    cw = np.ones(P)
    for _ in range(int(max_iter)):
        sizes = np.bincount(np.argmax(scores * cw, axis=1), minlength=P) / len(F)
        grad = sizes - priors
        cw = cw - 0.1 * grad  # graphlearning updates once more after the test below passes
        cw = cw / cw[0]
        if np.max(np.abs(grad)) <= tol:
            break
    return PoissonDecision(shift, cw, low, span)


def solve_source(problem, dense=False):
    """The :class:`mvl.solvers.problem.SolverResult` of a Poisson-type ``problem`` (``problem.loss`` "poisson" or
    "squared+poisson", ``problem.source`` its graph): :func:`solve_structured` (``dense``: :func:`solve_dense`, the
    textbook reference) on the shared Laplacian, the true relative residual (:func:`residual`) and the prediction
    rule (:class:`mvl.solvers.rules.SourceRule`: the degree-weighted shift of :func:`fit_decision`)."""
    from .problem import SolverResult
    from .rules import SourceRule

    src, loss, K = problem.source, problem.loss, problem.kernels
    m = K.shape[0]
    L = src.laplacian
    args = (K, problem.labelled, problem.Y_L, problem.c, problem.gamma_A, problem.gamma_B, problem.gamma_W)
    if dense:
        coef = solve_dense(*args, np.stack([L.toarray()] * m), loss=loss, balanced=src.balanced)
    else:
        Ls = [L] * m if loss == "poisson" else np.stack([L.toarray()] * m)
        coef = solve_structured(*args, Ls, loss=loss, balanced=src.balanced)
    KA = np.stack([K[p] @ coef[p] for p in range(m)])  # the outputs per view, for the residual and F
    res = residual(*args[:4], coef, *args[4:], [L] * m, loss=loss, balanced=src.balanced, KA=KA)
    if not np.all(np.isfinite(coef)):
        raise FloatingPointError(f"the solution has NaN or inf entries; increase gamma_A (now {problem.gamma_A:g})")
    F = sum(problem.c[p] * KA[p] for p in range(m))  # combined_outputs(K, coef, c) from the products above
    rule = SourceRule(fit_decision(F, weights=src.degrees), F, src.points, src.space, src.neighbours,
                      search=src.search)
    return SolverResult(coef, 1, res, bool(np.isfinite(res)), rule=rule)
