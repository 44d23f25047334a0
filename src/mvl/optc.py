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
At the optimum of the f-step the objective equals
(1/l) <Y_L, E_L> (a quadratic's minimum value), so it is tracked at no cost.
"""

from __future__ import annotations

import time

import numpy as np
from scipy import linalg
from scipy.linalg import blas, lapack

from ._validation import (
    check_gamma,
    check_test_kernels,
)
from .least_squares import MultiViewEstimatorMixin, _factor_view, _view_Q
from .sphere import sphere_least_squares

__all__ = ["MVLLeastSquaresOptC", "OptCSystem"]


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
        QL = np.empty((m, l, n))  # rows L of Q_p
        Q1 = np.zeros((n, n)) if self.beta > 0 else None
        for p in range(m):
            lu, piv = _factor_view(K[p], None if L is None else L[p], m, self.delta, self.beta, omega, p)
            self.factors.append((lu, piv))
            Qp = _view_Q(lu, piv, K[p]).T
            QL[p] = Qp[labelled]
            if Q1 is not None:
                Q1 += Qp
            del Qp
        # N is symmetric (N_qp = N_pq^T) and enters M(c) only through sum_pq c_p c_q N_pq, so the
        # blocks are stored in pairs: S_(p,p) = N_pp and S_(p,q) = N_pq + N_qp (p < q), which is
        # m(m+1)/2 instead of m^2 blocks to read per iteration.
        self.pairs = [(p, q) for p in range(m) for q in range(p, m)]
        pair_index = {pq: k for k, pq in enumerate(self.pairs)}
        S = np.zeros((len(self.pairs), l, l))
        self.QLL = np.empty((m, l, l))  # Q_p[L, L]
        for p in range(m):
            self.QLL[p] = QL[p][:, labelled]
            S[pair_index[p, p]] = self.QLL[p]
        self.Z = None
        if self.beta > 0:
            # G = I - beta Q_1 (symmetric positive definite), factored once
            Q1 *= -self.beta
            Q1[np.diag_indices(n)] += 1.0
            luG = linalg.lu_factor(Q1, overwrite_a=True, check_finite=False)
            del Q1
            # Z_q = G^{-1} Q_q[:, L] (n x l), all m l right-hand sides in one solve, kept as Z (m, n, l);
            # N_pq += beta Q_p[L, :] Z_q, with N_qp = N_pq^T
            Zs = linalg.lu_solve(luG, QL.reshape(m * l, n).T, check_finite=False)  # (n, m l)
            self.Z = np.ascontiguousarray(Zs.reshape(n, m, l).transpose(1, 0, 2))
            del Zs
            for p in range(m):
                for q in range(p, m):
                    W = blas.dgemm(self.beta, QL[p], self.Z[q])
                    S[pair_index[p, q]] += W
                    if q != p:
                        S[pair_index[p, q]] += W.T
        self.S = S
        if self.beta > 0:
            self.QLL = None  # only the gamma_B = 0 path reads it
        self.QL = QL if self.beta > 0 else None  # QL[p] = Q_p[L, :]
        # restarts per batch: the matrices M (l x l) and Z(c) (n x l) of a batch hold batch * l (l + n)
        # numbers (at most ~0.5 GB); forming them reads N and Z once per batch, so one batch is fastest
        self.batch = max(1, int(5.0e8 // (8 * l * (l + n))))

    def solve(self, C):
        """f-step for each row c of C: returns E_L (R, l, P) and F (m, l, R, P).

        M(c_r) for all restarts comes from one GEMM over vec(c_r c_r^T) that reads N once; the
        labelled outputs F_p = c_p Q_p[L, L] E + l gamma_B Q_p[L, :] T, T = sum_q c_q Z_q E, from three
        GEMMs batched over restarts. Only scipy's BLAS/LAPACK runs here (numpy's own OpenBLAS pool,
        alternated with it, makes the two pools' busy-waiting threads fight), on Fortran-ordered
        views, so that no operand is copied.
        """
        C = np.atleast_2d(np.asarray(C, dtype=np.float64))
        R, m, n, l, P = C.shape[0], self.m, self.n, self.l, self.P
        E = np.empty((R, l, P))
        F = np.empty((m, l, R, P))  # F[p, :, r, :] = f^p on the labelled points for restart r
        Smat = self.S.reshape(len(self.pairs), l * l)
        ip, iq = np.array(self.pairs).T
        nb = min(R, self.batch)
        for start in range(0, R, nb):
            Cb = C[start:start + nb]
            r = len(Cb)
            Wc = Cb[:, ip] * Cb[:, iq]  # (r, pairs): c_p c_q
            # (r, l*l): vec M_r - I = sum_pq c_p c_q vec N_pq, into a buffer kept across iterations (a fresh
            # ~100 MB array per iteration costs more in page faults than the GEMM itself)
            Mall = _mm_into(Wc, Smat, self._buffer("M", (r, l * l)))
            Eall = np.empty((l, r, P))
            for j in range(r):
                # M_r is symmetric: its C-ordered rows are the Fortran-ordered matrix itself
                M = Mall[j].reshape(l, l).T
                M[np.diag_indices(l)] += 1.0
                X = _cholesky_solve(M, self.Y_L)
                if X is None:  # not numerically definite: rebuild M_r and solve by LU
                    M = np.tensordot(Wc[j], self.S, axes=(0, 0))
                    M[np.diag_indices(l)] += 1.0
                    X = linalg.solve(M, self.Y_L, check_finite=False)
                Eall[:, j] = X
            E[start:start + r] = Eall.transpose(1, 0, 2)
            Fb = F[:, :, start:start + r]
            if self.beta > 0:
                # F_p = Q_p[L, :] W_p with W_p = c_p E (on the rows L, zero elsewhere) + beta T and
                # T = sum_q c_q Z_q E = Z(c) E, Z(c) = sum_q c_q Z_q formed by one GEMM for the batch
                Zc = _mm_into(Cb, self.Z.reshape(m, n * l), self._buffer("Z", (r, n * l)))  # (r, n*l)
                T = np.empty((n, r, P))
                for j in range(r):
                    T[:, j] = _mm(Zc[j].reshape(n, l), Eall[:, j])
                T *= self.beta
                W = np.empty((n, r, P))
                for p in range(m):
                    W[:] = T
                    W[self.labelled] += Cb[None, :, p, None] * Eall
                    Fb[p] = _mm(self.QL[p], W.reshape(n, r * P)).reshape(l, r, P)
            else:
                Eflat = Eall.reshape(l, r * P)
                for p in range(m):  # F_p = c_p Q_p[L, L] E
                    np.multiply(_mm(self.QLL[p], Eflat).reshape(l, r, P), Cb[None, :, p, None], out=Fb[p])
        return E, F

    def _buffer(self, name, shape):
        """A C-ordered float64 work array of ``shape`` kept across calls (contents undefined)."""
        bufs = self.__dict__.setdefault("_buffers", {})
        buf = bufs.get(name)
        if buf is None or buf.shape != shape:
            buf = bufs[name] = np.empty(shape)
        return buf

    def coefficients(self, c, E_L):
        """Coefficients A (m, n, P) for combination c and labelled residual E_L (Theorem 10)."""
        n, P = self.n, self.P
        E = np.zeros((n, P))
        E[self.labelled] = E_L
        T = None
        if self.beta > 0:
            T = _mm(np.tensordot(c, self.Z, axes=(0, 0)), E_L)  # sum_q c_q Z_q E_L
        A = np.empty((self.m, n, P))
        for p, (lu, piv) in enumerate(self.factors):
            rhs = c[p] * E
            if T is not None:
                rhs += self.beta * T
            A[p], _ = lapack.dgetrs(lu, piv, rhs, trans=1)
        return A


def _mm(A, B):
    """A @ B for C-ordered A, B with scipy's BLAS, no copies: (A B)^T = B^T A^T on Fortran views."""
    return blas.dgemm(1.0, B.T, A.T).T


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


def _mm_into(A, B, out):
    """A @ B written into the C-ordered ``out`` with scipy's dgemm (its Fortran view is (B^T A^T))."""
    res = blas.dgemm(1.0, B.T, A.T, beta=0.0, c=out.T, overwrite_c=1)
    if not np.shares_memory(res, out):  # f2py copied (should not happen for contiguous operands)
        out[...] = res.T
    return out


def _cholesky_solve(M, Y):
    """Solve M X = Y by Cholesky, M symmetric positive definite and Fortran-ordered (overwritten).

    Returns None if rounding broke definiteness (the caller then rebuilds M and uses LU).
    """
    c, info = lapack.dpotrf(M, lower=0, clean=0, overwrite_a=1)
    if info != 0:
        return None
    X, info = lapack.dpotrs(c, Y)
    return X if info == 0 else None


class MVLLeastSquaresOptC(MultiViewEstimatorMixin):
    """MVL-LS with the combination vector c optimised on the sphere ||c|| = alpha (Section 6).

    Parameters
    ----------
    gamma_A, gamma_B, gamma_W : float
        As in :class:`mvl.MVLLeastSquares` (multiplied by l as in eq 67-68).
    alpha : float > 0
        Radius of the sphere of c (eq 84).
    n_restarts : int
        Random unit starting vectors (scaled to alpha), 20 in the paper.
    n_iter : int
        Maximum alternations (f-step then c-step) per restart.
    tol : float
        A restart stops when its objective decreases by less than tol (relative).
    laplacian, n_neighbors, n_classes
        As in :class:`mvl.MVLLeastSquares`.
    random_state : int or None
        Seed of the starting vectors.

    Attributes
    ----------
    c_ : (m,) learned combination vector of the kept restart
    coef_ : (m, n, P) coefficients for ``c_``
    objective_history_ : (n_restarts, n_iter) objective (84) after each iteration (NaN once stopped)
    validation_scores_ : (n_restarts,) validation accuracy of each restart (None without validation)
    best_restart_ : index of the kept restart
    restart_c_ : (n_restarts, m) final c of every restart
    """

    _param_names = ("gamma_A", "gamma_B", "gamma_W", "alpha", "n_restarts", "n_iter", "tol", "laplacian",
                    "random_state", "n_neighbors", "n_classes")

    def __init__(self, gamma_A=1e-5, gamma_B=0.0, gamma_W=0.0, alpha=1.0, n_restarts=20, n_iter=25, tol=1e-8,
                 laplacian="normalized", random_state=None, n_neighbors=None, n_classes=None):
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

    def fit(self, K, y, K_val=None, y_val=None):
        """Fit on kernels K (m, n, n) and labels y (-1 = unlabelled); K_val (m, v, n) and y_val select the restart."""
        alpha = check_gamma(self.alpha, "alpha", positive=True)
        for name in ("n_restarts", "n_iter"):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {v!r}")
        (gamma_A, gamma_B, gamma_W), K, labelled, classes, Y_L, L = self._fit_inputs(K, y)
        m, n, _ = K.shape
        if (K_val is None) != (y_val is None):
            raise ValueError("give both K_val and y_val, or neither")
        if K_val is not None:
            K_val = check_test_kernels(K_val, m, n, name="K_val")
            y_val = np.asarray(y_val)
            if y_val.shape != (K_val.shape[1],):
                raise ValueError(f"y_val has shape {y_val.shape}, K_val has {K_val.shape[1]} samples")
        l = len(labelled)
        t0 = time.perf_counter()
        system = OptCSystem(K, labelled, Y_L, gamma_A, gamma_B, gamma_W, L)
        rng = np.random.default_rng(self.random_state)
        C = rng.standard_normal((self.n_restarts, m))
        C *= alpha / np.linalg.norm(C, axis=1, keepdims=True)
        history = np.full((self.n_restarts, self.n_iter), np.nan)
        active = np.ones(self.n_restarts, dtype=bool)
        Ab = np.empty((Y_L.size, m + 1), order="F")
        Ab[:, m] = Y_L.ravel()
        lwork = max(1, int(lapack.dgeqrf_lwork(Y_L.size, m + 1)[0]))
        for it in range(self.n_iter):
            idx = np.flatnonzero(active)
            if idx.size == 0:
                break
            E, F = system.solve(C[idx])
            for j, r in enumerate(idx):
                # objective after the f-step: (1/l) <Y_L, E_L>; F c = Y_L - E_L
                J_f = float(np.sum(Y_L * E[j])) / l
                # eq (85): min ||b - A c|| on the sphere, A = [vec f^1 ... vec f^m] on the labelled points
                # ((l P) x m). With the QR of [A | b], ||A c - b||^2 = ||R c - q||^2 + rho^2, so the
                # sphere problem is solved on the m x m triangle R (same minimiser, far cheaper).
                Ab[:, :m] = F[:, :, j, :].reshape(m, -1).T
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
        if K_val is not None:
            scores = np.empty(self.n_restarts)
            for r in range(self.n_restarts):
                A = system.coefficients(C[r], E[r])
                out = np.einsum("ptn,pnk,p->tk", K_val, A, C[r])
                scores[r] = np.mean(classes[np.argmax(out, axis=1)] == y_val)
            best = int(np.lexsort((final_obj, -scores))[0])  # best validation accuracy, then objective
        else:
            best = int(np.argmin(final_obj))
        self.coef_ = system.coefficients(C[best], E[best])
        if not (np.all(np.isfinite(self.coef_)) and np.all(np.isfinite(final_obj))):
            raise FloatingPointError(f"optC produced NaN or inf (gamma_A = {gamma_A:g}); increase gamma_A or check K")
        self.fit_seconds_ = time.perf_counter() - t0
        self.c_ = C[best].copy()
        self.restart_c_ = C
        self.objective_history_ = history
        self.final_objectives_ = final_obj
        self.validation_scores_ = scores
        self.best_restart_ = best
        self.classes_ = classes
        self.n_views_, self.n_train_, self.n_labelled_ = m, n, l
        return self
