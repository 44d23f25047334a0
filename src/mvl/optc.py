"""MVL-LS-optC: learning the combination vector c on a sphere (Section 6, eq 84-92).

Problem (84): minimise over f and c with ||c|| = alpha

    1/l sum_{i<=l} ||y_i - C f(x_i)||^2 + gamma_A ||f||^2 + gamma_B <f, M_B f> + gamma_W <f, M_W f>,

by alternating minimisation: c fixed -> f by Theorem 10; f fixed -> c by
quadratic optimisation on the sphere (eq 85, :func:`mvl.sphere.sphere_least_squares`),
restarted from random unit vectors scaled to alpha; the restart with the best
validation accuracy (or the lowest objective) is kept.

Cost. c enters the system of Theorem 10 only through c c^T (x) J (eq 68). In the
view-by-view form of :mod:`mvl.least_squares`, the coupled system reduces, after
eliminating T with G = I - l gamma_B Q_1 (independent of c), to one l x l system

    M(c) E_L = Y_L,   M(c) = I + (c (x) I_l)^T N (c (x) I_l),
    N_pq = delta_pq Q_p[L, L] + l gamma_B Q_p[L, :] G^{-1} Q_q[:, L],

and the labelled outputs of view p are F_p = sum_q c_q N_pq E_L. N (ml x ml) is
computed once per (data, gammas) and shared by every iteration and restart. An
iteration, batched over the restarts, forms every M(c_r) with one GEMM over
the pairs c_p c_q (N's symmetric pairs read once), one l x l Cholesky solve per restart, and the
labelled outputs F_p = Q_p[L, :] (c_p E + l gamma_B T) with T = Z(c) E_L, Z(c) = sum_q c_q G^{-1} Q_q[:, L]
(formed for the whole batch by one GEMM): m GEMMs of l x n by n x (R P), instead of a fresh O(m n^3) fit.
The c-step works on the (m+1) x (m+1) triangle of the QR of [F | vec Y].

Threads. The alternation runs with a one-thread BLAS, and the f-step spreads its work over the cores
itself: the combining GEMMs by column blocks and the restarts in contiguous groups, each group's
Cholesky solves and output GEMMs on its own thread through GIL-free LAPACK calls (:mod:`mvl.blocks`).
At Flowers-17 scale on 2 cores an f-step for 20 restarts took 0.15 s this way and 0.19-0.20 s with a
2-thread BLAS in each call: a 680 x 680 Cholesky gains little from BLAS threads, and OpenBLAS's idle
workers busy-wait after every call, taking a core from the step that follows.
At the optimum of the f-step the objective equals
(1/l) <Y_L, E_L> (a quadratic's minimum value), so it is tracked at no cost.

Incomplete views (issue 30, :mod:`mvl.incomplete`). With a presence mask V_i (a NaN row marks a missing view)
problem (84) keeps the incomplete model of :mod:`mvl.incomplete`: the data term is
1/l sum_{i<=l} ||y_i - sum_{p in V_i} c~_ip(c) f^p(x_i)||^2 with the per-sample renormalised combination
c~_ip(c) = s_i(c) c_p (:func:`mvl.incomplete.combination_weights`), and the regularisers do not involve c.

- f-step (c fixed): Theorem 10 on incomplete data, :func:`mvl.incomplete.solve_structured_incomplete`; the
  objective after it is again (1/l) <Y_L, E_L> (a quadratic's minimum).
- c-step (f fixed): minimise g(c) = sum_{i<=l} ||y_i - sum_{p in V_i} c~_ip(c) F_ip||^2 over ||c|| = alpha
  (the analogue of eq 85). s_i(c) = sum_q c_q / sum_{q in V_i} c_q (or its norm fallback) depends on c, so g is
  not the quadratic of eq (86) and Theorems 15-16 do not give its global minimiser. With s frozen at a point c',
  c~_ip = s_i(c') c_p is linear in c and g becomes ||A(c') c - b||^2 with the columns of A(c') the vec of
  s_i(c') F_ip over the present (i, p), exactly problem (86): its global minimiser on the sphere is
  :func:`mvl.sphere.sphere_least_squares` (eq 87-92). :func:`incomplete_c_step` takes as candidates the current
  c, the frozen-s sphere solution at c and a few fixed-point passes of it (s refrozen at the last solution) and
  the best of 100 m fixed pseudo-random points of the sphere, polishes the best three by a local quasi-Newton
  descent of g(alpha v / ||v||) (scipy BFGS, finite-difference gradient), and returns the candidate with the
  smallest g. The current c being a candidate, g never increases, so neither does the objective (84) across an
  alternation (f-step: exact minimiser; c-step: g(c_new) <= g(c)). g is smooth only inside the cells cut out of
  the sphere by the hyperplanes sum_q c_q = 0 and sum_{q in V_i} c_q = 0 (i labelled, incomplete), where s_i
  switches branch: it has poles (sum_{V_i} c -> 0 with the sign of sum c) and jumps there, and its infimum can
  lie on a hyperplane without being attained (as sum c -> 0 the combined output of every incomplete sample tends
  to 0); at c_p = 0 exactly, the samples that have only view p get c~_i = 0 and leave the data term (an
  isolated lower value, deliberately not searched for). So the c-step is a heuristic, not a global solver: on
  tiny problems (m = 2, 3; tests/test_incomplete_optc.py) it reached the minimum of a fine grid of the sphere
  whenever that minimum lies inside a cell, and came within 2 % of it otherwise.
  With nothing missing s_i = 1, g is eq (86) and the frozen-s solution is the global one; the estimator then
  runs the complete code above unchanged.
- Cost: the LU of each H_p and Q_p (O(sum_p n_p^3)) do not depend on c and are computed once per fit; an f-step
  then assembles and solves the coupled (l + |U|) system of :mod:`mvl.incomplete` (O((l + |U|)^3)), not batched
  over the restarts as :class:`OptCSystem` does.
- A view missing for every training sample: at any c the f-step is the MVL-LS fit without that view at the
  combination c~_{-p}(c) (the limit tested in :mod:`mvl.incomplete`), but c~_{-p}(c) = c_{-p} sum(c) /
  sum(c_{-p}) is not on the sphere of radius alpha: its norm varies with c_p. So the fit is not the optC fit
  without the view; what holds is that its objective's minimum is at most that fit's (c_p = 0 gives c~ = c on
  the smaller sphere) and that at the returned c_ it is exactly the (m-1)-view MVL-LS fit at c~_{-p}(c_).
"""

from __future__ import annotations

import functools
import time
import warnings
from numbers import Real

import numpy as np
from scipy import linalg
from scipy.linalg import blas, lapack

from sklearn.base import _fit_context
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.validation import column_or_1d

from . import blocks
from .docstrings import shared_parameters
from .base import (
    StrictInterval,
    COUNT,
    NON_NEGATIVE,
    POSITIVE,
    SEED,
    MVLClassifier,
    check_swamped,
    take_samples,
)
from .blocks import factor_view, view_Q
from .incomplete import combination_scales, combination_weights
from .least_squares import MEMORY_ADVICE, solve_structured
from .sphere import sphere_least_squares

__all__ = ["MVLLeastSquaresOptC", "OptCSystem", "incomplete_c_objective", "incomplete_c_step"]


class OptCSystem:
    """Everything of Theorem 10 that does not depend on c, for one (data, gammas).

    ``solve(C)`` returns, for a batch of combination vectors C (R, m), the
    residuals E_L (R, l, P) and labelled per-view outputs F (m, l, R, P);
    ``coefficients(c, E_L)`` the full coefficients (m, n, P).
    """

    def __init__(self, K, labelled, Y_L, gamma_A, gamma_B, gamma_W, L=None):
        m, n, _ = K.shape
        l = len(labelled)
        self.m, self.n, self.l, self.P = m, n, l, Y_L.shape[1]
        self.labelled, self.Y_L = labelled, Y_L
        self.delta = l * gamma_A
        self.beta = l * gamma_B if m > 1 else 0.0
        omega = l * gamma_W
        self.factors = []
        # the n training points reordered labelled first (order[:l] = labelled): in this order the rows L of
        # T and W (below) are the leading block, added to without fancy indexing
        self.order = order = np.concatenate([labelled, np.setdiff1d(np.arange(n), labelled)])
        QL = np.empty((m, l, n))  # QL[p] = Q_p[L, order] (Q_p symmetric)
        Q1 = np.zeros((n, n)) if self.beta > 0 else None
        for p in range(m):
            lu, piv = factor_view(K[p], None if L is None else L[p], m, self.delta, self.beta, omega, p)
            self.factors.append((lu, piv))
            Qp = view_Q(lu, piv, K[p])
            QL[p] = Qp[np.ix_(labelled, order)]
            if Q1 is not None:
                Q1 += Qp
            del Qp
        # N is symmetric (N_qp = N_pq^T) and enters M(c) only through sum_pq c_p c_q N_pq, so the
        # blocks are stored in pairs: S_(p,p) = N_pp and S_(p,q) = N_pq + N_qp (p < q), which is
        # m(m+1)/2 instead of m^2 blocks to read per iteration.
        self.pairs = [(p, q) for p in range(m) for q in range(p, m)]
        pair_index = {pq: k for k, pq in enumerate(self.pairs)}
        S = np.zeros((len(self.pairs), l, l))
        for p in range(m):
            S[pair_index[p, p]] = QL[p][:, :l]  # Q_p[L, L]
        self.Z = self.QL = self.QLL = None
        if self.beta > 0:
            # G = I - beta Q_1 (symmetric positive definite), in the point order `order`, factored once
            G = Q1[np.ix_(order, order)]
            del Q1
            G *= -self.beta
            G[np.diag_indices(n)] += 1.0
            luG = linalg.lu_factor(G, overwrite_a=True, check_finite=False)
            del G
            # Z_q = G^{-1} Q_q[:, L] (n x l, rows in `order`), all m l right-hand sides in one solve: the
            # C-ordered QL (m l, n) is the Fortran RHS QL^T, and the Fortran solution (n, m l) is, read in C
            # order, Z (m, l, n) with Z[q] = Z_q^T (so Z[q].T is the Fortran Z_q). No copies.
            Zs = linalg.lu_solve(luG, QL.reshape(m * l, n).T, check_finite=False)
            self.Z = Zs.T.reshape(m, l, n)
            del Zs
            # N_pq += beta Q_p[L, :] Z_q (the point order cancels), with N_qp = N_pq^T
            W = np.empty((l, l), order="F")
            for p in range(m):
                for q in range(p, m):
                    blocks.gemm(QL[p].T, self.Z[q].T, W, trans_a=True, alpha=self.beta)
                    S[pair_index[p, q]] += W.T  # both C-contiguous
                    if q != p:
                        S[pair_index[p, q]] += W
            self.QL = QL
        else:
            self.QLL = np.ascontiguousarray(QL[:, :, :l])  # Q_p[L, L]: the gamma_B = 0 path reads only this
        del QL
        self.S = S
        # restarts per batch: the matrices M (l x l) and Z(c) (n x l) of a batch hold batch * l (l + n)
        # numbers (at most ~0.5 GB); forming them reads N and Z once per batch, so one batch is fastest
        self.batch = max(1, int(5.0e8 // (8 * l * (l + n))))
        # threads for the per-restart solves (GIL-free LAPACK; 0 = scipy's f2py wrappers, serial)
        self._threads = blocks.default_threads() if blocks.available() else 0

    def solve(self, C):
        """f-step for each row c of C: returns E_L (R, l, P) and F (m, l, R, P) (views, see below).

        Per batch of restarts: M(c_r) - I = sum_pq c_p c_q N_pq for all restarts by one GEMM over
        vec(c_r c_r^T) that reads N once, and Z(c_r) = sum_q c_q Z_q likewise; then for each restart the
        Cholesky solve M(c_r) E_r = Y_L, T_r = Z(c_r) E_r and the labelled outputs
        F_p = Q_p[L, :] (c_p E_r (rows L) + l gamma_B T_r) (for gamma_B = 0: F_p = c_p Q_p[L, L] E_r).

        Threads: the work is split over the cores by hand (the GEMMs by column blocks, the restarts in
        contiguous groups), each thread calling scipy's LAPACK/BLAS with one BLAS thread and without
        the GIL (:mod:`mvl.blocks`). A multithreaded BLAS gains little on a 680 x 680 Cholesky, and its
        idle workers busy-wait after each call, taking a core from the next step. Operands are Fortran
        views of C-ordered buffers (no copies).

        Internally E is held as (R, P, l) and F as (m, R, P, l) (the layouts the BLAS calls write); the
        returned arrays are transposed views with the documented shapes.
        """
        C = np.atleast_2d(np.asarray(C, dtype=np.float64))
        R, m, n, l, P = C.shape[0], self.m, self.n, self.l, self.P
        Et = np.empty((R, P, l))  # Et[r] = E_r^T: its Fortran view is E_r (l x P)
        Ft = np.empty((m, R, P, l))  # Ft[p, r] = (f^p on the labelled points for restart r)^T
        Smat = self.S.reshape(len(self.pairs), l * l)
        ip, iq = np.array(self.pairs).T
        YT = np.ascontiguousarray(self.Y_L.T)
        threads = max(1, self._threads)
        nb = min(R, self.batch)
        with blocks.single_threaded_blas():
            for start in range(0, R, nb):
                Cb = np.ascontiguousarray(C[start:start + nb])
                r = len(Cb)
                Wc = np.ascontiguousarray(Cb[:, ip] * Cb[:, iq])  # (r, pairs): c_p c_q
                # (r, l*l): vec M_r - I = sum_pq c_p c_q vec N_pq, into a buffer kept across iterations (a
                # fresh ~100 MB array per iteration costs more in page faults than the GEMM itself)
                Mall = self._buffer("M", (r, l * l))
                _combine(Wc, Smat, Mall, threads)
                Zc = Tt = Wt = None
                if self.beta > 0:  # Z(c_r)^T (l x n, C order) for the batch; T_r^T and W_p^T buffers (r, P, n)
                    Zc = self._buffer("Z", (r, l * n))
                    _combine(Cb, self.Z.reshape(m, n * l), Zc, threads)
                    Tt, Wt = self._buffer("T", (r, P, n)), self._buffer("W", (r, P, n))
                Eb, Fb = Et[start:start + r], Ft[:, start:start + r]
                Eb[:] = YT
                group = functools.partial(self._group, Mall, Cb, Eb, Zc, Tt, Wt, Fb)
                failed = sum(blocks.map_threads(group, blocks.chunks(r, threads), threads), [])
                if failed:  # rounding broke definiteness: rebuild those M_r, solve by LU, redo the outputs
                    for j in failed:
                        M = np.tensordot(Wc[j], self.S, axes=(0, 0))
                        M[np.diag_indices(l)] += 1.0
                        Eb[j] = linalg.solve(M, self.Y_L, check_finite=False).T
                        if Tt is not None:
                            blocks.gemm(Zc[j].reshape(l, n).T, Eb[j].T, Tt[j].T)
                    self._outputs(Cb, Eb, Tt, Wt, Fb, 0, r)
        return Et.transpose(0, 2, 1), Ft.transpose(0, 3, 1, 2)

    def _group(self, Mall, Cb, Eb, Zc, Tt, Wt, Fb, rng):
        """One thread's share of a batch: restarts rng = (j0, j1). Returns the restarts whose Cholesky
        failed (their outputs, and the group's, are then left to the caller)."""
        j0, j1 = rng
        failed = [j for j in range(j0, j1) if not self._restart_solve(Mall, Eb, Zc, Tt, j)]
        if not failed:
            self._outputs(Cb, Eb, Tt, Wt, Fb, j0, j1)
        return failed

    def _restart_solve(self, Mall, Eb, Zc, Tt, j):
        """Restart j: M_j = I + Mall[j] (Cholesky in place), Eb[j] <- (M_j^{-1} Y_L)^T, Tt[j] <- (Z(c_j) E_j)^T.

        Returns False if M_j is not numerically positive definite (nothing else done)."""
        l, n = self.l, self.n
        Mall[j, ::l + 1] += 1.0
        M = Mall[j].reshape(l, l).T  # symmetric: the C-ordered rows are the Fortran matrix
        X = Eb[j].T  # Fortran (l, P), holds Y_L
        if blocks.cholesky_solve(M, X) != 0:
            return False
        if Tt is not None:  # T_j = Z(c_j) E_j: Zc[j] is Z(c_j)^T in C order, i.e. Z(c_j) in Fortran
            blocks.gemm(Zc[j].reshape(l, n).T, X, Tt[j].T)
        return True

    def _outputs(self, Cb, Eb, Tt, Wt, Fb, j0, j1):
        """Labelled outputs Fb[p, j] (transposed) of restarts j0:j1 from E (and T when gamma_B > 0)."""
        l, n, P = self.l, self.n, self.P
        k = (j1 - j0) * P
        E = Eb[j0:j1]
        for p in range(self.m):
            out = Fb[p, j0:j1].reshape(k, l).T  # Fortran (l, k)
            if Tt is not None:
                # F_p = Q_p[L, :] W_p, W_p = beta T + c_p E on the rows L; W_p^T is (k, n) C order
                W = Wt[j0:j1]
                np.multiply(Tt[j0:j1], self.beta, out=W)
                W[:, :, :l] += Cb[j0:j1, p, None, None] * E  # points reordered: L first
                blocks.gemm(self.QL[p].T, W.reshape(k, n).T, out, trans_a=True)
            else:  # F_p = c_p Q_p[L, L] E (Q_p[L, L] symmetric)
                blocks.gemm(self.QLL[p].T, E.reshape(k, l).T, out)
                Fb[p, j0:j1] *= Cb[j0:j1, p, None, None]

    def _buffer(self, name, shape):
        """A C-ordered float64 work array of ``shape`` kept across calls (contents undefined)."""
        bufs = self.__dict__.setdefault("_buffers", {})
        buf = bufs.get(name)
        if buf is None or buf.shape != shape:
            buf = bufs[name] = np.empty(shape)
        return buf

    def coefficients(self, c, E_L):
        """Coefficients A (m, n, P) for combination c and labelled residual E_L (Theorem 10)."""
        return self.coefficients_batch(np.asarray(c)[None], np.asarray(E_L)[None])[:, :, 0, :]

    def coefficients_batch(self, C, E):
        """Coefficients A (m, n, R, P) for combinations C (R, m) and labelled residuals E (R, l, P).

        a_p = H_p^{-1} (c_p E + l gamma_B T), T = sum_q c_q Z_q E (Theorem 10): one LU solve per view with
        all R P right-hand sides.
        """
        C = np.atleast_2d(np.asarray(C, dtype=np.float64))
        R, n, P = C.shape[0], self.n, self.P
        Epad = np.zeros((n, R, P))
        Epad[self.labelled] = np.asarray(E).transpose(1, 0, 2)
        T = None
        if self.beta > 0:
            T = np.empty((n, R, P))
            for r in range(R):  # sum_q c_q Z_q E_r (rows in `order`)
                T[self.order, r] = np.tensordot(C[r], self.Z, axes=(0, 0)).T @ E[r]
            T *= self.beta
        A = np.empty((self.m, n, R, P))
        for p, (lu, piv) in enumerate(self.factors):
            rhs = Epad * C[None, :, p, None]
            if T is not None:
                rhs += T
            A[p] = lapack.dgetrs(lu, piv, rhs.reshape(n, R * P), trans=1)[0].reshape(n, R, P)
        return A


def _restart_outputs(K_x, C, A, mask=None):
    """Outputs (R, v, P) of every restart on points x, kernels K_x (m, v, n), coefficients A (m, n, R, P):
    sum_p c_p K^p_x a_p (eq 50-52); with a presence ``mask`` (v, m) of the points, sum_{p in V_x} c~_xp K^p_x a_p
    (c renormalised over the present views, :func:`mvl.incomplete.combination_weights`)."""
    m, n, R, P = A.shape
    out = np.zeros((K_x.shape[1], R, P))
    if mask is not None:
        W = np.stack([combination_weights(C[r], mask) for r in range(R)], axis=1)  # (v, R, m)
    for p in range(m):
        if mask is None:
            out += (K_x[p] @ A[p].reshape(n, R * P)).reshape(-1, R, P) * C[None, :, p, None]
        else:
            out += (K_x[p] @ A[p].reshape(n, R * P)).reshape(-1, R, P) * W[:, :, p, None]
    return out.transpose(1, 0, 2)


def incomplete_c_objective(c, FL, Y_L, mask_L):
    """g(c) = sum_{i<=l} ||y_i - sum_{p in V_i} c~_ip(c) F_ip||^2: the data term of (84) times l on incomplete
    views, for labelled per-view outputs FL (m, l, P) (any values where absent: masked here), targets Y_L (l, P)
    and the labelled samples' presence mask_L (l, m)."""
    Ct = combination_weights(c, mask_L)
    E = Y_L - np.einsum("lp,plk->lk", Ct, FL)
    return float(np.sum(E * E))


def incomplete_c_step(FL, Y_L, mask_L, c0, alpha, n_fixed_point=3, n_probe=None, n_polish=3):
    """The c-step of MVL-LS-optC on incomplete views: c on ||c|| = alpha with g(c) <= g(c0) (module docstring).

    Candidates: c0; the global minimiser on the sphere (:func:`mvl.sphere.sphere_least_squares`, eq 86-92) of the
    linear problem with s_i frozen at c0, and ``n_fixed_point`` - 1 further passes with s_i refrozen at the last
    solution; the best of ``n_probe`` fixed pseudo-random points of the sphere (default 100 m; g has poles and jumps
    where a sum_{q in V_i} c_q or sum_q c_q changes sign, which a local descent does not cross); the ``n_polish``
    best candidates are polished by BFGS on g(alpha v / ||v||). Returns (c, g(c)), the smallest g found."""
    from scipy import optimize

    c0 = np.asarray(c0, dtype=np.float64)
    m = c0.size
    FL = np.where(mask_L.T[:, :, None], FL, 0.0)
    g = functools.partial(incomplete_c_objective, FL=FL, Y_L=Y_L, mask_L=mask_L)
    b = Y_L.T.ravel()
    cands = [(g(c0), 0, c0)]
    c = c0
    for k in range(n_fixed_point):
        s = combination_scales(c, mask_L)
        Ab = np.empty((b.size, m + 1), order="F")
        Ab[:, :m] = (FL * s[None, :, None]).transpose(0, 2, 1).reshape(m, -1).T  # (P, l) order, as b
        Ab[:, m] = b
        lwork = max(1, int(lapack.dgeqrf_lwork(b.size, m + 1)[0]))
        R_, q_ = _triangle(Ab, m, lwork)
        c = sphere_least_squares(R_, q_, alpha)
        cands.append((g(c), k + 1, c))

    def h(v):
        nv = np.linalg.norm(v)
        return g(alpha * v / nv) if nv > 0 else np.inf

    probes = np.random.default_rng(12345).standard_normal((100 * m if n_probe is None else int(n_probe), m))
    probes *= alpha / np.linalg.norm(probes, axis=1, keepdims=True)
    gp = np.array([g(c) for c in probes])
    for j in np.argsort(gp)[:n_polish]:
        cands.append((gp[j], len(cands), probes[j]))
    cands.sort(key=lambda t: (t[0], t[1]))
    for _, _k, start in list(cands[:n_polish]):
        res = optimize.minimize(h, start / alpha, method="BFGS", options={"gtol": 1e-10, "maxiter": 200})
        v = np.asarray(res.x)
        if np.all(np.isfinite(v)) and np.linalg.norm(v) > 0:
            c = alpha * v / np.linalg.norm(v)
            cands.append((g(c), len(cands), c))
    best = min(cands, key=lambda t: (t[0], t[1]))
    return best[2].copy(), best[0]


def _combine(Wc, S, out, threads):
    """out (r, k) <- Wc (r, s) @ S (s, k), C order, with the k columns split over ``threads`` threads.

    In Fortran views each thread computes out[:, a:b]^T = S[:, a:b]^T Wc^T: a GEMM reading its share of S
    once for every row of Wc (S is large and read from memory; Wc is small).
    """
    def part(rng):
        a, b = rng
        blocks.gemm(S[:, a:b].T, Wc.T, out[:, a:b].T)

    blocks.map_threads(part, blocks.chunks(S.shape[1], threads), threads)
    return out


def _triangle(Ab, m, lwork):
    """(R, q) with ||A c - b|| = ||R c - q|| + const for all c, from [A | b] (Fortran, (l P) x (m + 1)).

    The Cholesky factor of the (m+1) x (m+1) Gram matrix [A | b]^T [A | b] is the R of the QR of [A | b] up
    to row signs and costs one small GEMM; it is used when well conditioned (diagonal ratio > 1e-6). Squaring
    the condition number perturbs R slightly; the objective is then evaluated directly from [A | b] by the
    caller, and a perturbed minimiser costs only second order in the objective. Otherwise the Householder QR
    (dgeqrf) of [A | b].
    """
    G = blas.dgemm(1.0, Ab, Ab, trans_a=1)
    Rg, info = lapack.dpotrf(G, lower=0, clean=1, overwrite_a=1)
    if info == 0:
        d = np.abs(np.diag(Rg))
        if d[:m].min() > 1e-6 * d[:m].max():
            return Rg[:m, :m], Rg[:m, m]
    qr, _, _, _ = lapack.dgeqrf(Ab, lwork=lwork, overwrite_a=0)  # R of [A | b]: upper triangle
    Rab = np.zeros((m + 1, m + 1))  # zero rows when l P < m + 1
    Rab[:min(m + 1, Ab.shape[0])] = np.triu(qr[:m + 1])
    return Rab[:m, :m], Rab[:m, m]


@shared_parameters
class MVLLeastSquaresOptC(MVLClassifier):
    """MVL-LS with the combination vector c optimised on the sphere ||c|| = alpha (Section 6).

    The problem (84) is solved by alternating f- and c-steps (eq 85-92) from ``n_restarts`` seeded random
    starts; the restart kept is the one with the best held-out accuracy (``validation_fraction``, or X_val in
    :meth:`fit`), else the one with the smallest objective (84). Graph and gammas as in
    :class:`mvl.MVLLeastSquares`, with the same defaults (the validation study's, ``benchmarks/study_defaults.py``).

    Parameters
    ----------
    {gamma_A, gamma_B, gamma_W, laplacian, n_neighbors, laplacian_power, graph_weights, n_classes}
    alpha : float > 0, default 1.0
        Radius of the sphere of c (eq 84); the paper uses 1.
    n_restarts : int >= 1, default 20
        Random unit starting vectors (scaled to alpha), 20 in the paper; typical 5 to 50.
    n_iter : int >= 1, default 25
        Maximum alternations (f-step then c-step) per restart; the paper reports 25 and 50.
    tol : float >= 0, default 1e-8
        A restart stops when its objective decreases by less than tol (relative).
    random_state : None, int, sequence of ints, Generator or SeedSequence, default None
        Seed of the starting vectors and of the ``validation_fraction`` split (and of the Nystrom centres of
        "cg"/"nystrom", which take None, an int or a RandomState).
    validation_fraction : float in (0, 1) or None, default None
        Hold out this fraction of the labelled samples of every class (seeded, stratified; at least one per
        class, so each class needs two) to choose the restart by held-out accuracy, as scikit-learn's early-
        stopping estimators do; the held-out samples stay in the graph as unlabelled ones, and once the restart
        is chosen f is refitted with every labelled sample at its c (Theorem 10). Works inside ``Pipeline`` and
        ``GridSearchCV`` (it splits what the estimator receives). Typical 0.1 to 0.3. None: no split.
    solver : "auto", "structured", "cg", "nystrom" or "graph", default "auto"
        The f-step (Theorem 10 with c fixed): as :class:`mvl.MVLLeastSquares` ("auto": precomputed kernels and
        feature views up to 5,000 points -> "structured", the batched solver of this module; "cg" up to 20,000;
        "nystrom" beyond). "cg", "nystrom" and "graph" need a kNN graph when gamma_W > 0. "graph" (the graph
        regime, :mod:`mvl.graph_solver`; only when asked for) computes the kernels' Vecchia factors once and
        refactors the sparse preconditioner at every f-step (its graph term cc^T (x) J depends on c), warm-started
        from the restart's previous coefficients.
    n_components : int >= 1, default 1000
        As in :class:`mvl.MVLLeastSquares` ("cg", "nystrom").
    cg_tol : float in (0, 1), default 1e-6
        Relative residual of each "cg" or "graph" f-step, for "graph" also its estimated relative objective error
        (as ``tol`` of :class:`mvl.MVLLeastSquares`; this class's ``tol`` is the alternation's).
    cg_max_iter : int >= 1, default 500
        Iteration limit of each "cg" or "graph" f-step (``n_iter`` is the alternation's).
    max_memory : float > 0 or None, default None
        As in :class:`mvl.MVLLeastSquares` ("cg", "auto").
    verbose : int >= 0, default 0
        "cg": print the residual after every iteration.
    {kernel, views, bandwidth}

    Attributes
    ----------
    c_ : (m,) learned combination vector of the kept restart
    coef_ : (m, n, P) coefficients for ``c_``
    objective_history_ : (n_restarts, n_iter) objective (84) after each iteration (NaN once stopped)
    validation_scores_ : (n_restarts,) held-out accuracy of each restart (None without validation)
    validation_indices_ : array or None
        The training samples held out by ``validation_fraction``.
    best_restart_ : index of the kept restart
    restart_c_ : (n_restarts, m) final c of every restart
    {view_attributes}

    See Also
    --------
    MVLLeastSquares : the same problem with a fixed combination c.
    MVLLeastSquaresCV : the graph and the gammas selected by cross-validation.

    Notes
    -----
    Missing views (incomplete multi-view data, :mod:`mvl.incomplete`): a row of NaN across a view's columns (a NaN
    row and column of a precomputed view) marks a missing view, as in :class:`mvl.MVLLeastSquares`; with solver
    "structured" ("auto" up to 5,000 samples) the alternation then runs on the incomplete model: the f-step is
    Theorem 10 on incomplete data, the c-step minimises the data term of (84) with c renormalised over each
    sample's present views, which is not eq (86)'s quadratic; it is solved by the sphere solution of eq (86)-(92)
    with the renormalisation frozen, probes of the sphere and a local descent, never increasing (84) (module
    docstring: the choice, its limits and cost). "cg" and "nystrom" refuse
    missing views.

    References
    ----------
    {mvl_references}

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from mvl import MVLLeastSquaresOptC
    >>> from mvl.data.embedded import load_mfeat
    >>> ds = load_mfeat(["fou", "kar", "mor"])
    >>> X, rng = np.hstack(ds.views), np.random.default_rng(0)
    >>> idx = rng.permutation(2000)
    >>> train, test = idx[:400], idx[400:]
    >>> y = ds.y[train].copy()
    >>> y[100:] = -1                                        # 100 labelled, 300 unlabelled
    >>> model = make_pipeline(StandardScaler(), MVLLeastSquaresOptC(views=[76, 64, 6], n_restarts=5,
    ...                       validation_fraction=0.2, random_state=0)).fit(X[train], y)
    >>> model[-1].c_.shape, bool(model.score(X[test], ds.y[test]) > 0.85)
    ((3,), True)
    """

    _parameter_constraints: dict = {
        **{k: v for k, v in MVLClassifier._parameter_constraints.items() if k != "c"},  # c is learned here
        "alpha": [POSITIVE],
        "n_restarts": [COUNT],
        "n_iter": [COUNT],
        "tol": [NON_NEGATIVE],
        "random_state": SEED,
        "validation_fraction": [None, StrictInterval(Real, 0, 1, closed="neither")],
        "solver": [StrOptions({"auto", "structured", "cg", "nystrom", "graph"})],
        "n_components": [COUNT],
        "cg_tol": [StrictInterval(Real, 0, 1, closed="neither")],
        "cg_max_iter": [COUNT],
        "max_memory": [None, POSITIVE],
        "verbose": ["verbose"],
    }
    _memory_advice = MEMORY_ADVICE
    _missing_views = True  # NaN rows mark missing views (mvl.incomplete; the structured f-step only)

    def __init__(self, *, gamma_A=1e-5, gamma_B=0.0, gamma_W=1e-2, alpha=1.0, n_restarts=20, n_iter=25, tol=1e-8,
                 laplacian="normalized", random_state=None, n_neighbors=5, n_classes=None, laplacian_power=None,
                 graph_weights="kernel", kernel="rbf", views=None, bandwidth=None, solver="auto", n_components=1000,
                 cg_tol=1e-6, cg_max_iter=500, max_memory=None, verbose=0, validation_fraction=None):
        self.gamma_A = gamma_A
        self.gamma_B = gamma_B
        self.gamma_W = gamma_W
        self.alpha = alpha
        self.n_restarts = n_restarts
        self.n_iter = n_iter
        self.tol = tol
        self.laplacian = laplacian
        self.random_state = random_state
        self.n_neighbors = n_neighbors
        self.n_classes = n_classes
        self.laplacian_power = laplacian_power
        self.graph_weights = graph_weights
        self.kernel = kernel
        self.views = views
        self.bandwidth = bandwidth
        self.solver = solver
        self.n_components = n_components
        self.cg_tol = cg_tol
        self.cg_max_iter = cg_max_iter
        self.max_memory = max_memory
        self.verbose = verbose
        self.validation_fraction = validation_fraction

    def _fit_scalable(self, X, y, X_val, y_val, alpha, budget, check=True):
        """The alternation of Section 6 with the f-step by solver "nystrom", "cg" (:mod:`mvl.scalable`) or "graph"
        (:mod:`mvl.graph_solver`: the kernels' Vecchia factors computed once, the sparse LU with M(c) redone per c).

        Same objective (84) and c-step as the structured path. The f-step for a new c reuses one factorisation
        (:class:`mvl.scalable.OptCNystrom`: B(c) = B_0 + U_c U_c^T); "cg" warm-starts each restart from its
        previous iterate and is preconditioned with that same factorisation. Labelled outputs: F_p[L] = Z_p[L] w_p
        ("nystrom") or K^p[L, :] a_p ("cg"). At the f-step's optimum the objective is (1/l) <Y_L, Y_L - S_L>.
        """
        from .graph_solver import solve_graph, vecchia_factors
        from .least_squares import kept_for_prediction, scalable_problem, vecchia_seed
        from .scalable import OptCNystrom, nystrom_preconditioner, solve_cg

        solver = self.solver_
        t0 = time.perf_counter()
        kernels, system, basis, labelled, centres = scalable_problem(self, X, y, solver, budget)
        m, l = system.m, system.l
        Y_L, _classes = system.Y_L, self.classes_
        engine = OptCNystrom(system, basis) if solver != "graph" else None
        KL = np.stack([kernels.rows(p, labelled) for p in range(m)]) if solver in ("cg", "graph") else None
        V = basis.V if solver != "graph" else None
        # "graph": the kernels' Vecchia factors do not depend on c: computed once, the sparse LU redone per c
        factors = vecchia_factors(kernels, random_state=vecchia_seed(self.random_state)) if solver == "graph" else None

        def fstep(c, state):
            sys_c = system.with_c(c)
            if solver == "graph":
                a, info = solve_graph(sys_c, kernels, None, tol=float(self.cg_tol), max_iter=int(self.cg_max_iter),
                                      x0=state, verbose=self.verbose, factors=factors)
            else:
                solve_B, U = engine.solver(c)
                if solver == "nystrom":
                    w = solve_B(U @ Y_L)
                    parts = np.split(w, np.cumsum(basis.sizes)[:-1])
                    FL = np.stack([engine.ZL[p] @ parts[p] for p in range(m)])
                    return FL, np.stack([V[p] @ parts[p] for p in range(m)])
                a, info = solve_cg(sys_c, kernels, basis, tol=float(self.cg_tol), max_iter=int(self.cg_max_iter),
                                   x0=state, verbose=self.verbose,
                                   precondition=nystrom_preconditioner(sys_c, basis, solve_B))
            if not info["converged"]:
                self._cg_unconverged = max(getattr(self, "_cg_unconverged", 0.0), info["residual"])
            return np.einsum("pln,pnk->plk", KL, a), a

        rng = np.random.default_rng(self.random_state)
        C = rng.standard_normal((self.n_restarts, m))
        C *= alpha / np.linalg.norm(C, axis=1, keepdims=True)
        history = np.full((self.n_restarts, self.n_iter), np.nan)
        final_obj = np.empty(self.n_restarts)
        coefs = []
        Ab = np.empty((Y_L.size, m + 1), order="F")
        Ab[:, m] = Y_L.T.ravel()
        lwork = max(1, int(lapack.dgeqrf_lwork(Y_L.size, m + 1)[0]))
        self._cg_unconverged = 0.0
        for r in range(self.n_restarts):
            state, prev = None, np.inf
            for it in range(self.n_iter):
                FL, state = fstep(C[r], state)
                E = Y_L - np.tensordot(C[r], FL, axes=(0, 0))
                J_f = float(np.sum(Y_L * E)) / l
                Ab[:, :m] = FL.transpose(0, 2, 1).reshape(m, -1).T  # (P, l) order, as the last column
                R_, q_ = _triangle(Ab, m, lwork)
                c_new = sphere_least_squares(R_, q_, alpha)
                resid = Ab[:, :m] @ c_new - Ab[:, m]
                J = J_f + (float(resid @ resid) - float(np.sum(E * E))) / l
                history[r, it] = J
                C[r] = c_new
                if it > 0 and prev - J <= self.tol * abs(prev):
                    break
                prev = J
            FL, state = fstep(C[r], state)
            final_obj[r] = float(np.sum(Y_L * (Y_L - np.tensordot(C[r], FL, axes=(0, 0))))) / l
            coefs.append(state)
        if self._cg_unconverged:
            from sklearn.exceptions import ConvergenceWarning

            warnings.warn(f'solver="{solver}": some f-steps stopped at cg_max_iter with relative residual up to '
                          f'{self._cg_unconverged:.2e} > cg_tol = {self.cg_tol:g}', ConvergenceWarning, stacklevel=3)
        self._scalable = kept_for_prediction(self, kernels, centres if solver == "nystrom" else None)
        self.centres_ = centres if solver == "nystrom" else None
        self.n_labelled_ = l
        scores = None
        if X_val is not None:
            y_val = column_or_1d(y_val)
            scores = np.empty(self.n_restarts)
            for r in range(self.n_restarts):
                self.coef_, self.c_ = coefs[r], C[r]
                scores[r] = np.mean(self.predict(X_val) == y_val)
            best = int(np.lexsort((final_obj, -scores))[0])
        else:
            best = int(np.argmin(final_obj))
        self.coef_ = np.ascontiguousarray(coefs[best])
        if not (np.all(np.isfinite(self.coef_)) and np.all(np.isfinite(final_obj))):
            raise FloatingPointError(f"optC produced NaN or inf (gamma_A = {self.gamma_A!r}); increase gamma_A")
        self._set_restarts(C, best, history, final_obj, scores)
        self.fit_seconds_ = time.perf_counter() - t0
        if check:  # decision values on the labelled samples (l rows of kernels, no n x n array)
            check_swamped(self, self.decision_function(take_samples(X, labelled)),
                          (("gamma_A", self.gamma_A), ("gamma_B", self.gamma_B), ("gamma_W", self.gamma_W)),
                          np.argmax(Y_L, axis=1))
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, X_val=None, y_val=None):
        """Fit on X (see ``kernel``) and labels y (-1 = unlabelled). The restart kept is the one with the best
        accuracy on held-out data: an internal stratified split of the labelled samples (``validation_fraction``),
        or X_val and y_val; without either, the one with the smallest objective (84).

        X_val is given in the form of :meth:`predict`'s input (with "precomputed" (v, n_samples_fit, m)) and goes
        straight to this estimator: inside a ``Pipeline`` it bypasses the steps before it (a scaler, ...), and
        under cross-validation with "precomputed" its columns would have to be each fold's training samples.
        There, use ``validation_fraction``, which splits whatever the estimator receives.
        """
        from .base import unlabelled_mask
        from .least_squares import choose_solver, memory_budget, sample_and_view_counts

        alpha = float(self.alpha)

        self._scalable = None
        self.centres_ = None
        self.validation_indices_ = None
        self.view_mask_ = None
        if (X_val is None) != (y_val is None):
            raise ValueError("give both X_val and y_val, or neither")
        if X_val is not None and self.validation_fraction is not None:
            raise ValueError("give X_val and y_val or validation_fraction, not both")
        budget = memory_budget(self)
        n_all, m_all = sample_and_view_counts(self, X)
        l_all = n_all if y is None else int(np.count_nonzero(~unlabelled_mask(np.asarray(y)).ravel()))
        self.solver_ = choose_solver(self.solver, self.kernel, n_all, m_all, l_all, budget)
        if self.solver_ != "structured":
            if self.validation_fraction is None:
                return self._fit_scalable(X, y, X_val, y_val, alpha, budget)
            return self._fit_scalable_held_out(X, y, alpha, budget)
        K = self._fit_kernels(X)
        m, n, _ = K.shape
        y_enc, labelled = self._fit_labels(y, n)
        if self.view_mask_ is not None:  # missing views: the incomplete alternation (complete path below unchanged)
            return self._fit_incomplete(K, y_enc, labelled, X_val, y_val, alpha)
        classes = self.classes_
        l_all = len(labelled)
        self._check_memory(8.0 * (2 * m * n * n + 3 * n * n + 2 * m * l_all * n + m * (m + 1) // 2 * l_all ** 2),
                           f"the optC system with n = {n} samples and m = {m} views")
        Y_all, L = self._mvl_inputs(K, y_enc, labelled)
        gammas = self._gammas()
        rng = np.random.default_rng(self.random_state)
        C = rng.standard_normal((self.n_restarts, m))  # drawn first: the same restarts with or without a split
        C *= alpha / np.linalg.norm(C, axis=1, keepdims=True)
        held = None
        mask_val = None
        if X_val is not None:
            K_val, mask_val = self._test_kernels(X_val, name="X_val", presence=True)  # mask: X_val misses views
            y_val = column_or_1d(y_val)
            if y_val.shape != (K_val.shape[1],):
                raise ValueError(f"y_val has shape {y_val.shape}, X_val has {K_val.shape[1]} samples")
        elif self.validation_fraction is not None:
            # held-out labelled samples: their labels are hidden (they stay in the graph as unlabelled samples)
            held = _stratified_holdout(y_enc[labelled], float(self.validation_fraction), rng, classes)
            K_val = np.ascontiguousarray(K[:, labelled[held]])
            y_val = classes[y_enc[labelled[held]]]
            keep = np.setdiff1d(np.arange(l_all), held)
            labelled_all, labelled, Y_L = labelled, labelled[keep], Y_all[keep]
        else:
            K_val = None
        if held is None:
            Y_L = Y_all
        l = len(labelled)
        t0 = time.perf_counter()
        system = OptCSystem(K, labelled, Y_L, **gammas, L=L)
        history = np.full((self.n_restarts, self.n_iter), np.nan)
        active = np.ones(self.n_restarts, dtype=bool)
        Ab = np.empty((Y_L.size, m + 1), order="F")
        Ab[:, m] = Y_L.T.ravel()  # rows in (P, l) order, as OptCSystem.solve holds F
        lwork = max(1, int(lapack.dgeqrf_lwork(Y_L.size, m + 1)[0]))
        # the whole alternation with one BLAS thread: the f-steps spread their work over the cores by
        # hand (OptCSystem.solve), and a multithreaded BLAS call in the c-step would leave OpenBLAS
        # workers busy-waiting on a core the next f-step needs
        with blocks.single_threaded_blas():
            for it in range(self.n_iter):
                idx = np.flatnonzero(active)
                if idx.size == 0:
                    break
                E, F = system.solve(C[idx])
                Ft = F.transpose(0, 2, 3, 1)  # (m, R, P, l), C-contiguous: vec f^p in (P, l) order, as b
                for j, r in enumerate(idx):
                    # objective after the f-step: (1/l) <Y_L, E_L>; F c = Y_L - E_L
                    J_f = float(np.sum(Y_L * E[j])) / l
                    # eq (85): min ||b - A c|| on the sphere, A = [vec f^1 ... vec f^m] on the labelled points
                    # ((l P) x m). With the QR of [A | b], ||A c - b||^2 = ||R c - q||^2 + rho^2, so the
                    # sphere problem is solved on the m x m triangle R (same minimiser, far cheaper).
                    Ab[:, :m] = Ft[:, j].reshape(m, -1).T
                    R_, q_ = _triangle(Ab, m, lwork)
                    c_new = sphere_least_squares(R_, q_, alpha)
                    # ||A c - b||^2 evaluated directly (exact whichever triangle was used)
                    resid = blas.dgemv(1.0, Ab[:, :m], c_new)
                    resid -= Ab[:, m]
                    resid2 = float(blas.ddot(resid, resid))
                    J = J_f + (resid2 - float(np.sum(E[j] ** 2))) / l
                    prev = history[r, it - 1] if it > 0 else np.inf
                    history[r, it] = J
                    C[r] = c_new
                    if it > 0 and prev - J <= self.tol * abs(prev):
                        active[r] = False
            # final f-step at the final c of every restart
            E, _ = system.solve(C)
            final_obj = np.array([float(np.sum(Y_L * E[r])) / l for r in range(self.n_restarts)])
            scores = None
            if K_val is not None:  # coefficients of every restart, scored on the validation points
                A_all = system.coefficients_batch(C, E)
                out = _restart_outputs(K_val, C, A_all, mask_val)  # (restarts, v, P)
                scores = np.mean(classes[np.argmax(out, axis=2)] == y_val[None], axis=1)
                best = int(np.lexsort((final_obj, -scores))[0])  # best validation accuracy, then objective
                coef = A_all[:, :, best]
            else:
                best = int(np.argmin(final_obj))
                coef = system.coefficients(C[best], E[best])
        del system
        if held is not None:  # c of the kept restart; f from every labelled sample (Theorem 10 at that c)
            coef = solve_structured(K, labelled_all, Y_all, C[best], **gammas, L=L)
            labelled = labelled_all
            self.validation_indices_ = labelled_all[held]
        self.coef_ = np.ascontiguousarray(coef)
        if not (np.all(np.isfinite(self.coef_)) and np.all(np.isfinite(final_obj))):
            raise FloatingPointError(f"optC produced NaN or inf (gamma_A = {gammas['gamma_A']:g}); increase gamma_A "
                                     "or check K")
        self.fit_seconds_ = time.perf_counter() - t0
        self._set_restarts(C, best, history, final_obj, scores)
        self.n_labelled_ = len(labelled)
        self._check_regularization(K, labelled, y_enc[labelled])
        return self

    def _fit_incomplete(self, K, y_enc, labelled, X_val, y_val, alpha):
        """The alternation of Section 6 on incomplete views (module docstring): f-step by
        :func:`mvl.incomplete.solve_structured_incomplete`, c-step by :func:`incomplete_c_step`; restarts, their
        choice and the ``validation_fraction`` refit as in the complete path."""
        from .incomplete import solve_structured_incomplete

        mask = self.view_mask_
        m, n, _ = K.shape
        classes = self.classes_
        Y_all, L = self._mvl_inputs(K, y_enc, labelled, mask)
        gammas = self._gammas()
        rng = np.random.default_rng(self.random_state)
        C = rng.standard_normal((self.n_restarts, m))  # the same draws as the complete path
        C *= alpha / np.linalg.norm(C, axis=1, keepdims=True)
        held = None
        mask_val = None
        if X_val is not None:
            K_val, mask_val = self._test_kernels(X_val, name="X_val", presence=True)
            y_val = column_or_1d(y_val)
            if y_val.shape != (K_val.shape[1],):
                raise ValueError(f"y_val has shape {y_val.shape}, X_val has {K_val.shape[1]} samples")
        elif self.validation_fraction is not None:
            held = _stratified_holdout(y_enc[labelled], float(self.validation_fraction), rng, classes)
            K_val = np.ascontiguousarray(K[:, labelled[held]])
            mask_val = mask[labelled[held]]
            y_val = classes[y_enc[labelled[held]]]
            keep = np.setdiff1d(np.arange(len(labelled)), held)
            labelled_all, labelled, Y_L = labelled, labelled[keep], Y_all[keep]
        else:
            K_val = None
        if held is None:
            Y_L = Y_all
        l = len(labelled)
        mask_L = mask[labelled]
        t0 = time.perf_counter()

        cache = {}  # the LU of each H_p and Q_p: independent of c, shared by every f-step and restart

        def fstep(c):
            A = solve_structured_incomplete(K, mask, labelled, Y_L, c, **gammas, L=L, cache=cache)
            FL = np.einsum("pln,pnk->plk", K[:, labelled], A) * mask_L.T[:, :, None]  # f^p at the labelled x_i
            return A, FL

        history = np.full((self.n_restarts, self.n_iter), np.nan)
        final_obj = np.empty(self.n_restarts)
        coefs = np.empty((m, n, self.n_restarts, Y_L.shape[1]))
        for r in range(self.n_restarts):
            prev = np.inf
            for it in range(self.n_iter):
                _, FL = fstep(C[r])
                g_f = incomplete_c_objective(C[r], FL, Y_L, mask_L)
                E = Y_L - np.einsum("lp,plk->lk", combination_weights(C[r], mask_L), FL)
                J_f = float(np.sum(Y_L * E)) / l  # objective (84) at the f-step's optimum
                C[r], g_new = incomplete_c_step(FL, Y_L, mask_L, C[r], alpha)
                J = J_f + (g_new - g_f) / l
                history[r, it] = J
                if it > 0 and prev - J <= self.tol * abs(prev):
                    break
                prev = J
            A, FL = fstep(C[r])
            E = Y_L - np.einsum("lp,plk->lk", combination_weights(C[r], mask_L), FL)
            final_obj[r] = float(np.sum(Y_L * E)) / l
            coefs[:, :, r] = A
        scores = None
        if K_val is not None:
            out = _restart_outputs(K_val, C, coefs, mask_val)
            scores = np.mean(classes[np.argmax(out, axis=2)] == y_val[None], axis=1)
            best = int(np.lexsort((final_obj, -scores))[0])
        else:
            best = int(np.argmin(final_obj))
        coef = coefs[:, :, best]
        if held is not None:  # c of the kept restart; f from every labelled sample (Theorem 10 at that c)
            coef = solve_structured_incomplete(K, mask, labelled_all, Y_all, C[best], **gammas, L=L)
            labelled = labelled_all
            self.validation_indices_ = labelled_all[held]
        self.coef_ = np.ascontiguousarray(coef)
        if not (np.all(np.isfinite(self.coef_)) and np.all(np.isfinite(final_obj))):
            raise FloatingPointError(f"optC produced NaN or inf (gamma_A = {gammas['gamma_A']:g}); increase gamma_A "
                                     "or check K")
        self.fit_seconds_ = time.perf_counter() - t0
        self._set_restarts(C, best, history, final_obj, scores)
        self.n_labelled_ = len(labelled)
        self._check_regularization(K, labelled, y_enc[labelled], mask)
        return self

    def _set_restarts(self, C, best, history, final_obj, scores):
        """The fitted attributes of the restarts (both fit paths): c_ of the kept one, every restart's c, objective
        history and final objective (84), validation scores, the index kept."""
        self.c_ = C[best].copy()
        self.restart_c_ = C
        self.objective_history_ = history
        self.final_objectives_ = final_obj
        self.validation_scores_ = scores
        self.best_restart_ = best

    def _fit_scalable_held_out(self, X, y, alpha, budget):
        """``validation_fraction`` with the f-step of "cg" or "nystrom": the alternation on the labelled samples
        left after a seeded stratified hold-out (the held-out ones unlabelled), the restart chosen on the held-out
        ones, then f refitted with every labelled sample at the kept c (Theorem 10 by the same solver)."""
        from .base import encode_labels
        from .graph_solver import solve_graph
        from .least_squares import kept_for_prediction, scalable_problem, vecchia_seed
        from .scalable import solve_cg, solve_nystrom

        y = column_or_1d(y, warn=True)
        classes, y_enc, labelled = encode_labels(y, y.shape[0])
        m = sample_and_view_counts_m(self, X)
        rng = np.random.default_rng(self.random_state)
        rng.standard_normal((self.n_restarts, m))  # the draw of the restarts (_fit_scalable repeats it)
        held = labelled[_stratified_holdout(y_enc[labelled], float(self.validation_fraction), rng, classes)]
        if y.dtype.kind in "iuf":  # hidden: unlabelled, still in the graph
            y_fit = y.copy()
            y_fit[held] = -1
        else:
            y_fit = y.astype(object)
            y_fit[held] = None
        self._fit_scalable(X, y_fit, take_samples(X, held), y[held], alpha, budget, check=False)
        kernels, system, basis, labelled, centres = scalable_problem(self, X, y, self.solver_, budget, c=self.c_)
        if self.solver_ == "nystrom":
            coef = solve_nystrom(system, basis)
        elif self.solver_ == "graph":
            coef, _info = solve_graph(system, kernels, None, tol=float(self.cg_tol), max_iter=int(self.cg_max_iter),
                                      verbose=self.verbose, random_state=vecchia_seed(self.random_state))
        else:
            coef, _info = solve_cg(system, kernels, basis, tol=float(self.cg_tol), max_iter=int(self.cg_max_iter),
                                   verbose=self.verbose)
        self._scalable = kept_for_prediction(self, kernels, centres if self.solver_ == "nystrom" else None)
        self.centres_ = centres if self.solver_ == "nystrom" else None
        self.coef_ = np.ascontiguousarray(coef)
        self.n_labelled_ = len(labelled)
        self.validation_indices_ = held
        check_swamped(self, self.decision_function(take_samples(X, labelled)),
                      (("gamma_A", self.gamma_A), ("gamma_B", self.gamma_B), ("gamma_W", self.gamma_W)),
                      y_enc[labelled])
        return self


def sample_and_view_counts_m(est, X):
    """The number of views m of the training input, without computing kernels."""
    from .least_squares import sample_and_view_counts

    return sample_and_view_counts(est, X)[1]


def _stratified_holdout(codes, fraction, rng, classes):
    """Positions (into the labelled samples) of a seeded stratified hold-out: per class round(fraction * count)
    samples, at least 1, leaving at least 1 for training; a class with one labelled sample cannot be split."""
    out = []
    for k in range(len(classes)):
        idx = np.flatnonzero(codes == k)
        if idx.size < 2:
            raise ValueError(f"validation_fraction: class {np.asarray(classes[k]).tolist()!r} has {idx.size} labelled "
                             "sample(s); holding out part of every class needs >= 2 per class (or pass "
                             "validation_fraction=None: the restart is then chosen by the objective (84))")
        h = min(idx.size - 1, max(1, int(round(fraction * idx.size))))
        out.append(rng.permutation(idx)[:h])
    return np.sort(np.concatenate(out))
