"""The f-step and c-step systems of MVL-LS-optC (Section 6): the structured f-step for a batch of combination
vectors (:class:`OptCSystem`), the Nystrom f-step for every c from one factorisation (:class:`OptCNystrom`), and
the c-step on incomplete views (:func:`incomplete_c_step`)."""

from __future__ import annotations

import functools

import numpy as np
from scipy import linalg
from scipy.linalg import blas, lapack

from .. import parallel as blocks
from ..missing_views import combination_scales, combination_weights
from .lapack import factor_spd, factor_view, solve_factored, view_Q
from .sphere import sphere_least_squares

__all__ = ["OptCSystem", "OptCNystrom", "restart_outputs", "incomplete_c_objective", "incomplete_c_step",
           "qr_triangle"]


class OptCNystrom:
    """(B(c) + delta I)^{-1} for every combination vector c of MVL-LS-optC (Section 6) from one factorisation.

    c enters B = Z^T M Z only through the labelled term (cc^T (x) J): B(c) = B_0 + U_c U_c^T with
    U_c = [c_1 Z_1[L]; ...; c_m Z_m[L]] (m r x l). With the Cholesky factor of B_0 + delta I and
    Q = (B_0 + delta I)^{-1} blockdiag(Z_p[L]^T) computed once, Woodbury gives each solve for a new c at the cost of
    one l x l system: the f-step of "nystrom" and the preconditioner of "cg" for every restart and iteration.
    """

    def __init__(self, system, basis):
        lab = system.labelled
        self.fac = factor_spd(system.with_c(np.zeros(system.m)).projected(basis.Z), system.delta)
        self.sizes = basis.sizes
        self.off = np.concatenate([[0], np.cumsum(self.sizes)])
        self.ZL = [z[lab] for z in basis.Z]
        self.Q = []
        for p, zl in enumerate(self.ZL):
            E = np.zeros((self.off[-1], zl.shape[0]))
            E[self.off[p]:self.off[p + 1]] = zl.T
            self.Q.append(solve_factored(self.fac, E))
        self.l = len(lab)

    def solver(self, c):
        """The function g -> (B(c) + delta I)^{-1} g, and U_c."""
        U = np.vstack([c[p] * self.ZL[p].T for p in range(len(c))])
        CU = sum(c[p] * self.Q[p] for p in range(len(c)))
        small = np.eye(self.l) + U.T @ CU
        lu = linalg.lu_factor(small, check_finite=False)

        def solve(g):
            x = solve_factored(self.fac, g)
            return x - CU @ linalg.lu_solve(lu, U.T @ x, check_finite=False)

        return solve, U

    def residual(self, U, g, w):
        """The largest relative residual ||g - (B(c) + delta I) w|| / ||g|| over the columns, B(c) + delta I =
        (B_0 + delta I) + U U^T applied through the stored factorisation of B_0 + delta I (two triangular
        products, no R x R copy)."""
        (f, lower), chol = self.fac
        if chol:
            t = blas.dtrmm(1.0, f, w, lower=int(lower), trans_a=int(lower))  # R w (R upper: B_0 + delta I = R^T R)
            Aw = blas.dtrmm(1.0, f, t, lower=int(lower), trans_a=int(not lower))
        else:  # the LU fallback of factor_spd: (B_0 + delta I) = P L U
            lu_, piv = f, lower
            Aw = np.tril(lu_, -1) @ (np.triu(lu_) @ w) + np.triu(lu_) @ w
            for i in range(len(piv) - 1, -1, -1):  # undo LAPACK's row interchanges
                if piv[i] != i:
                    Aw[[i, piv[i]]] = Aw[[piv[i], i]]
        gnorm = np.linalg.norm(g, axis=0)
        gnorm[gnorm == 0] = 1.0
        return float(np.max(np.linalg.norm(g - Aw - U @ (U.T @ w), axis=0) / gnorm))


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
        the GIL (:mod:`mvl.solvers.lapack`). A multithreaded BLAS gains little on a 680 x 680 Cholesky, and its
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


def restart_outputs(K_x, C, A, mask=None):
    """Outputs (R, v, P) of every restart on points x, kernels K_x (m, v, n), coefficients A (m, n, R, P):
    sum_p c_p K^p_x a_p (eq 50-52); with a presence ``mask`` (v, m) of the points, sum_{p in V_x} c~_xp K^p_x a_p
    (c renormalised over the present views, :func:`mvl.missing_views.combination_weights`)."""
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

    Candidates: c0; the global minimiser on the sphere (:func:`mvl.solvers.sphere.sphere_least_squares`, eq 86-92) of
    the linear problem with s_i frozen at c0, and ``n_fixed_point`` - 1 further passes with s_i refrozen at the last
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
        R_, q_ = qr_triangle(Ab, m, lwork)
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


def qr_triangle(Ab, m, lwork):
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
