"""Incomplete multi-view data: MVL-LS when some views of some samples are missing.

**The model.** View p is observed on a subset S_p of the n = u + l training samples (n_p = ``|S_p|``), and sample i
has the views V_i = {p : i in S_p}, at least one. The paper's problem (eq 10 with M of eq 53) is kept, with every
term restricted to what exists:

- f^p is a function of view p, so its representer expansion runs over the samples that have that view only:
  f^p = sum_{j in S_p} k^p(., x_j^p) a_pj (the representer theorem, Theorem 2, applied to the restricted data
  term below, which evaluates f^p only at S_p).
- The combination operator C = c^T (x) I_P of eq (50)-(52) becomes per-sample: at sample i
  C_i f(x_i) = sum_{p in V_i} c~_ip f^p(x_i), with c renormalised over the present views,
  c~_ip = s_i c_p, s_i = (sum_q c_q) / (sum_{q in V_i} c_q). For the default c = 1/m (eq 50-51) this is
  1/``|V_i|``: the mean of the present views, and for any c it keeps the total weight sum_p c~_ip = sum_p c_p of a
  complete sample (for c >= 0: the same scale of C f whatever views a sample has). When that ratio is undefined
  or changes sign (a general real c whose present part sums to 0 or to the opposite sign of sum_p c_p, or
  sum_p c_p = 0, e.g. some unit vectors of MVL-LS-optC), the fallback keeps the Euclidean norm instead,
  s_i = ||c|| / ||c_{V_i}||; if every present c_q is 0 the sample has no combined output (c~_i = 0).
  :func:`combination_weights` computes c~ (n, m).
- The between-view operator M_B = D (x) M_m (x) I_P (eq 54-57, D = diag(w), w = 1 in the paper) couples only
  the views present together: at sample i, M_m is replaced by M_{V_i} = ``|V_i|`` I - 1 1^T on the present views,
  so <f, M_B f> = sum_i w_i sum_{p < q in V_i} ||f^p(x_i) - f^q(x_i)||^2 (zero for a sample with one view).
- The within-view operator M_W = blockdiag(L^1, ..., L^m) (eq 60-63): L^p is the graph Laplacian of view p built
  on that view's samples S_p only (n_p x n_p; with ``laplacian_power`` its power).
- A test point is predicted from the views it has: C_t f(v_t) = sum_{p in V_t} c~_tp f^p(v_t), c~ as above
  (views that no training sample has carry f^p = 0 and count as absent).

**Theorem 10 on incomplete data.** With F_p = K^p a_p (values of f^p on S_p, K^p the n_p x n_p Gram matrix of
view p on S_p) the objective is quadratic in (a_1, ..., a_m); its stationarity condition, multiplied by l, reads
for every view p (the analogue of eq 67-68, derived exactly as in :mod:`mvl.estimators.least_squares`):

    H_p a_p = C~_p E[S_p] + beta W_p T[S_p],     H_p = (beta D_p + omega L^p) K^p + delta I   (n_p x n_p),

with beta = l gamma_B, omega = l gamma_W, delta = l gamma_A, C~_p = diag(c~_ip, i in S_p),
D_p = diag(w~_i ``|V_i|``, i in S_p), W_p = diag(w~_i, i in S_p), w~_i = w_i if ``|V_i|`` >= 2 else 0 (the between-view
term of a one-view sample is identically 0), E = J (Y - sum_q C~_q F_q) (residual on the labelled rows, zero
elsewhere) and T_i = sum_{q in V_i} F_q(i). The views are coupled only through E_L (l x P) and Z = W~ T on the rows
U = {i : w~_i > 0}. With Q_p = K^p H_p^{-1} (symmetric) embedded in the n x n index space through S_p (zero
outside S_p x S_p), eliminating a_p leaves the same (``l + |U|``) system as
:func:`mvl.solvers.structured_system.solve_structured`, now with per-(sample, view) weights:

    [ I + Q_cc[L, L]          beta Q_c[L, U]        ] [E_L]   [Y_L]
    [ -W_U Q_c[L, U]^T        I - beta W_U Q_1[U, U] ] [Z_U] = [ 0 ],

Q_cc[i, j] = sum_p c~_ip Q_p[i, j] c~_jp, Q_c[i, j] = sum_p c~_ip Q_p[i, j], Q_1 = sum_p Q_p. Cost: one LU of each
H_p, O(sum_p n_p^3) <= O(m n^3) time and O(sum_p n_p^2) memory, i.e. missing views make the fit cheaper, never
dearer. With nothing missing every formula is the complete one (c~ = c, ``|V_i|`` = m, n_p = n), and the estimators
then call :func:`mvl.solvers.structured_system.solve_structured` itself. :func:`solve_dense_incomplete` is the
textbook form: the (u+l)m system of eq (68) restricted to the present (sample, view) pairs, one LU.

**The scalable solvers** ("cg", "nystrom", :mod:`mvl.solvers.system`) solve the same stationarity condition written as
one operator equation on the (m, n, P) coefficient array with a_p = 0 outside S_p (the paper's (67)-(68) restricted
to the present (sample, view) pairs): with Pi_p the projection on the rows S_p, K the masked kernels
(Pi_p K^p Pi_p, :class:`MaskedViewKernels`) and F_p = Pi_p K^p a_p,

    (M F)_p = Pi_p [C~_p J S~ + beta w (x) (``|V|`` F_p - T) + omega L^p F_p],   S~ = sum_q C~_q F_q, T = sum_q F_q,
    (M K + delta I) a = r,   r_p = C~_p J Y,

(``|V_i|`` F_p(i) - T_i = 0 at a one-view sample, so w~ = w there changes nothing); multiplying the view-p block by
H_p^{-1} gives the view-by-view system above. M is symmetric positive semi-definite (it is the Hessian of the
quadratic part in F: data term sum_{i in L} ||sum_p c~_ip F_p(i)||^2, between term sum_i w_i (``|V_i|`` sum_p
||F_p(i)||^2 - ||T_i||^2), within term sum_p <F_p, L^p F_p>), so "cg" runs in <a, b>_K on the subspace of arrays
that vanish outside the present pairs (every operator maps it into itself). L^p: the sparse kNN Laplacian of view
p on its samples, zero rows and columns elsewhere (:func:`sparse_view_laplacians`). "nystrom": view p's function
on min(n_components, n_p) centres drawn among the samples that have view p (the estimator keeps their union;
with n_components >= n the exact solution).

**Literature.** Incomplete views are usually handled by filling them in: Trivedi, Rai, Daume III & DuVall
("Multiview clustering with incomplete views", NIPS 2010 workshop) complete the missing rows and columns of a view's
kernel matrix from another view's Laplacian; Xu, Tao & Xu ("Multi-view learning with incomplete views", IEEE
Transactions on Image Processing 24(12), 2015) learn a shared latent subspace from the observed views. Here nothing
is imputed: each view's function is learnt only where that view exists and the paper's operators C, M_B, M_W are
restricted to the observed (sample, view) pairs, which keeps Theorem 10's closed form and its view-by-view solver.
The co-regularization reading of the between-view term is Sindhwani & Rosenberg (2008), JMLR Section 3.4.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from scipy.linalg import lapack

from ..missing_views import combination_weights
from .lapack import factor_view, solve_coupled, view_Q

__all__ = ["solve_structured_incomplete", "solve_dense_incomplete", "add_view_blocks", "system_rows"]



def _between_weights(between_weights, n):
    w = np.ones(n) if between_weights is None else np.asarray(between_weights, dtype=np.float64)
    if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"between_weights must be {n} finite non-negative numbers")
    return w


def system_rows(n, labelled, wt, beta):
    """The rows of the coupled system: ``(U, beta, posL, posU)``, U the between-view samples (weight ``wt`` > 0;
    none when beta is 0, and beta becomes 0 when there are none), ``posL``/``posU`` (n,) a sample's row among
    the labelled / between-view rows (-1: none), as :func:`add_view_blocks` takes them."""
    U = np.flatnonzero(wt > 0) if beta > 0 else np.zeros(0, dtype=np.intp)
    if U.size == 0:
        beta = 0.0
    posL = np.full(n, -1)
    posL[labelled] = np.arange(len(labelled))
    posU = np.full(n, -1)
    posU[U] = np.arange(U.size)
    return U, beta, posL, posU


def add_view_blocks(Qp, idx, c_view, posL, posU, LL, LU, UU):
    """Add view p's part of the coupled system: Q_p (on its samples ``idx``) into Q_cc[L, L] (``LL``, weighted by the
    renormalised combination ``c_view`` = c~_{., p} on both sides), Q_c[L, U] (``LU``, on the labelled side) and
    Q_1[U, U] (``UU``); ``posL``/``posU`` (n,) map a sample to its row among the labelled / between-view rows (-1:
    none), ``posU`` None when there is no between-view term."""
    li = np.flatnonzero(posL[idx] >= 0)
    lg, cl = posL[idx[li]], c_view[idx[li]]
    LL[np.ix_(lg, lg)] += cl[:, None] * Qp[np.ix_(li, li)] * cl[None, :]
    if posU is not None:
        ui = np.flatnonzero(posU[idx] >= 0)
        ug = posU[idx[ui]]
        LU[np.ix_(lg, ug)] += cl[:, None] * Qp[np.ix_(li, ui)]
        UU[np.ix_(ug, ug)] += Qp[np.ix_(ui, ui)]


def solve_structured_incomplete(K, mask, labelled, Y_L, c, gamma_A, gamma_B, gamma_W, L=None, info=None,
                                between_weights=None, cache=None):
    """MVL-LS (Theorem 10) on incomplete views, view by view; returns A (m, n, P), zero at absent (sample, view).

    ``K`` (m, n, n): the views' Gram matrices (only the blocks S_p x S_p are read); ``mask`` (n, m) bool: sample i
    has view p; ``L``: list of m per-view operators (n_p, n_p) on S_p (:func:`view_operators`) or None (gamma_W = 0);
    ``between_weights`` (n,): w of M_B = diag(w) (x) M_{V_i}. The system and its derivation are in the module
    docstring; cost O(sum_p n_p^3). ``info["rcond"]``: the smallest reciprocal condition estimate. ``cache``: a dict
    kept by the caller across calls that differ only in c (MVL-LS-optC): the LU of each H_p and Q_p, which do not
    depend on c, are stored in it on the first call and reused (then the cost per call is O((l + ``|U|``)^3 +
    sum_p n_p^2 P)); the condition estimates of the cached factors are not recomputed."""
    rconds = [] if info is not None else None
    m, n, _ = K.shape
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != (n, m):
        raise ValueError(f"mask must have shape (n, m) = ({n}, {m}), got {mask.shape}")
    labelled = np.asarray(labelled)
    l = len(labelled)
    Y_L = np.asarray(Y_L, dtype=np.float64)
    P = Y_L.shape[1]
    counts = mask.sum(axis=1)
    if np.any(counts == 0):
        raise ValueError("every sample needs at least one view")
    Ct = combination_weights(c, mask)
    delta, beta, omega = l * gamma_A, l * gamma_B, l * gamma_W
    w = _between_weights(between_weights, n)
    wt = np.where(counts >= 2, w, 0.0)  # M_{V_i} = 0 for a one-view sample
    U, beta, posL, posU = system_rows(n, labelled, wt, beta)
    u = U.size
    S = np.zeros((l + u, l + u))
    factors = []
    for p in range(m):
        idx = np.flatnonzero(mask[:, p])
        if idx.size == 0:
            factors.append(None)
            continue
        if cache is not None and p in cache:
            lu, piv, Qp = cache[p]
        else:
            Kp = np.ascontiguousarray(K[p][np.ix_(idx, idx)])
            dp = (wt * counts)[idx] if beta > 0 else None
            lu, piv = factor_view(Kp, None if L is None else L[p], 1, delta, beta, omega, p, rconds, dp)
            Qp = view_Q(lu, piv, Kp).T  # symmetric
            if cache is not None:
                cache[p] = (lu, piv, Qp)
        factors.append((idx, lu, piv))
        add_view_blocks(Qp, idx, Ct[:, p], posL, posU if beta > 0 else None, S[:l, :l], S[:l, l:], S[l:, l:])
        del Qp
    if beta > 0:
        S[l:, :l] = -wt[U][:, None] * S[:l, l:].T
        S[:l, l:] *= beta
        S[l:, l:] *= (-beta * wt[U])[:, None]
    S[np.diag_indices(l + u)] += 1.0
    rhs = np.zeros((l + u, P))
    rhs[:l] = Y_L
    sol = solve_coupled(S, rhs, rconds)
    E = np.zeros((n, P))
    E[labelled] = sol[:l]
    Z = np.zeros((n, P))
    Z[U] = sol[l:]
    A = np.zeros((m, n, P))
    for p, fac in enumerate(factors):
        if fac is None:
            continue
        idx, lu, piv = fac
        r = Ct[idx, p][:, None] * E[idx]
        if beta > 0:
            r += beta * Z[idx]
        A[p, idx], err = lapack.dgetrs(lu, piv, r, trans=1)  # H_p a_p = r, from the LU of H_p^T
    if info is not None:
        info["rcond"] = min(rconds) if rconds else 1.0
    return A


def solve_dense_incomplete(K, mask, labelled, Y_L, c, gamma_A, gamma_B, gamma_W, L=None, between_weights=None):
    """Textbook reference: the (u+l)m system of eq (67)-(68) restricted to the present (sample, view) pairs, one LU.

    Unknowns a_(i,p) sample-major over the present pairs; B = M G[x] with G[x] = blockdiag over views of K^p
    (eq 94, restricted), M = J (x) c~_i c~_i^T + l gamma_B diag(w) (x) M_{V_i} + l gamma_W blockdiag(L^p) (eq 68
    with the per-sample C_i and M_{V_i}), (B + l gamma_A I) a = Y_C, Y_C(i, p) = c~_ip y_i. ``L``: list of per-view
    (n_p, n_p) operators or None. Memory O((sum_p n_p)^2): tests and benchmarks only. Returns A (m, n, P)."""
    m, n, _ = K.shape
    mask = np.asarray(mask, dtype=bool)
    l = len(labelled)
    P = Y_L.shape[1]
    pairs = np.argwhere(mask)  # (N, 2) rows (i, p), sample-major
    N = len(pairs)
    I, V = pairs[:, 0], pairs[:, 1]
    Ct = combination_weights(c, mask)
    w = _between_weights(between_weights, n)
    counts = mask.sum(axis=1)
    same_view = V[:, None] == V[None, :]
    same_sample = I[:, None] == I[None, :]
    G = np.where(same_view, K[V[:, None], I[:, None], I[None, :]], 0.0)
    J = np.zeros(n)
    J[labelled] = 1.0
    c_pair = Ct[I, V]
    Mop = same_sample * (J[I][:, None] * np.outer(c_pair, c_pair))
    Mop += (l * gamma_B) * same_sample * (w[I][:, None] * (counts[I][:, None] * same_view - 1.0))
    if gamma_W > 0 and L is not None:
        for p in range(m):
            rows = np.flatnonzero(V == p)  # in sample order, as S_p
            if rows.size:
                Mop[np.ix_(rows, rows)] += (l * gamma_W) * L[p]
    B = Mop @ G
    B[np.diag_indices(N)] += l * gamma_A
    Yfull = np.zeros((n, P))
    Yfull[labelled] = Y_L
    Y_C = c_pair[:, None] * Yfull[I]
    a = linalg.solve(B, Y_C, check_finite=False)
    A = np.zeros((m, n, P))
    A[V, I] = a
    return A


