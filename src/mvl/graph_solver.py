"""MVL-LS in the graph regime: Theorem 10's system by GMRES with a sparse-factor preconditioner (solver="graph").

Notation of :mod:`mvl.scalable`: per view p the coefficients a_p (n x P), F_p = K^p a_p, delta = l gamma_A,
M = (cc^T (x) J) + beta M_B + omega L^k the sparse operator of the objective's quadratic part, r_p = c_p J Y, and
Theorem 10's system (67)-(68) is

    T a = r,    T = M K + delta I,    K = blockdiag(K^1, ..., K^m).

**The regime.** Narrow or moderate kernels, gamma_W / gamma_A of 1e4 to 1e6, few labels: ||M|| / delta ~ 1e4-1e6.
There the "cg" solver's Nystrom preconditioner fails: its preconditioned spectrum reaches
1 + ||K - K_nys|| ||M|| / delta (K_nys the Nystrom approximation on the centres), i.e. the mismatch between K
and its low-rank part is amplified by the graph term. Measured on the issue-28 data (3 standardised views of
20-40 features, sigma = 1, gamma_A = 1e-6, gamma_W = 1, L^2, 5 labels per class): the kernels are neither
numerically sparse (~50 % of the entries of a row above 1e-12) nor low-rank (the spectrum decays from ~60 to
~1e-3 over n = 2,000 eigenvalues), so neither a truncated kernel nor a larger Nystrom basis makes the system easy.

**The preconditioner: the graph term exact, the kernel approximated.** Replace K by
K_hat = Z Z^T + D, Z = blockdiag(Z_p) the Nystrom factors of :class:`mvl.scalable.NystromBasis` (Z_p Z_p^T =
K^p_{nC} (K^p_{CC})^+ K^p_{Cn}) and D = diag(K - Z Z^T) >= 0 the diagonal of the Nystrom residual (the FITC
correction of Gaussian-process regression), and precondition with the exact inverse of the approximate system:

    Q = (M K_hat + delta I)^{-1} = S^{-1} - S^{-1} M Z (I + Z^T S^{-1} M Z)^{-1} Z^T S^{-1},   S = M D + delta I,

by Woodbury: S is sparse (the pattern of M), factored once by scipy's ``splu``; G = Z^T S^{-1} M Z is R x R
(R = sum of the Nystrom ranks), formed by R sparse solves in column blocks. Each application of Q is two
sparse solves with the P columns (one if S^{-1} M Z fits a quarter of ``max_memory`` and is kept) plus O(n R m)
flops; Q never needs M^{-1}, so it is defined when M is singular (gamma_B = 0 and m > 1: F_p in null(L_p) with
sum_p c_p F_p = 0 on the labelled rows), because M K_hat + delta I = K_hat^{-1/2} (K_hat^{1/2} M K_hat^{1/2} +
delta I) K_hat^{1/2} is nonsingular for K_hat positive definite.

**Why it is independent of ||M|| / delta.** Where M is invertible, T = M (K + delta M^{-1}) and
Q^{-1} = M (K_hat + delta M^{-1}), so the eigenvalues of Q T are those of the symmetric positive definite pencil
(K + delta M^{-1}, K_hat + delta M^{-1}); both carry the graph term delta M^{-1} exactly, hence each eigenvalue lies
in [min(1, lambda_min(K_hat^{-1} K)), max(1, lambda_max(K_hat^{-1} K))]: the spread of K against its Nystrom +
diagonal approximation alone, whatever gamma_W / gamma_A (by continuity also for singular M). Q T is not symmetric
in any inner product that is cheap to apply (the pencil's would need M^{-1}), so the Krylov method is GMRES:
right-preconditioned (T Q y = r, a = Q y, the residual is that of (68) itself), restarted every ``restart``
iterations, all P output columns in lockstep so that one kernel pass (``ViewKernels.matmul``) serves them all,
each column with its own Arnoldi process and Givens rotations. For invertible M, Q T = B^{-1} A with
A = K + delta M^{-1}, B = K_hat + delta M^{-1} both SPD, so it is similar to B^{-1/2} A B^{-1/2}: diagonalisable
with real positive eigenvalues, and GMRES converges like CG on the pencil up to the conditioning of the
eigenvectors (kappa(B)^{1/2}, large here: the reason its attainable relative residual is ~1e-9-1e-10 and not
1e-14). Measured (benchmarks/README.md, issue 28): 73-79 iterations to 1e-6 at n = 2,000 on the issue's data
with 1,000 centres, 199 with 500. Stopping rule as "cg": the relative residual ||r - T a|| / ||r|| of (68) per
output column <= ``tol``, verified with a true residual (one extra kernel pass) before returning; an unconverged
iterate is returned only with ``info["converged"]`` False (the estimator then warns).

Cost per iteration: one product with the m kernels (n^2 m P kernel-times-vector flops; Gram matrices kept if they
fit the memory budget, recomputed in tiles otherwise), two sparse triangular solves of size m n with P columns,
O(n R P) for the Nystrom terms and O(j n m P) for the Arnoldi orthogonalisation at inner step j. Memory: the
Krylov basis (restart + 1) m n P float64, the sparse LU of S, Z (n R).
"""

from __future__ import annotations

import time

import numpy as np
from scipy import linalg, sparse
from scipy.sparse import linalg as sla

__all__ = ["sparse_operator", "GraphPreconditioner", "solve_graph", "regime_ratio", "GRAPH_REGIME"]

GRAPH_REGIME = 1e4
"""solver="auto" picks "graph" on feature views beyond the structured solver's size and up to
``AUTO_CG_MAX`` points when :func:`regime_ratio` is at least this (the issue-28 regime: gamma_W / gamma_A >= 1e4)."""


def regime_ratio(gamma_A, gamma_B, gamma_W, laplacian_power, m):
    """The graph-regime measure used by solver="auto": a bound of ||beta M_B + omega L^k|| / delta from the
    parameters alone (no data), (gamma_B m + gamma_W 2^k) / gamma_A, using ||M_B|| <= m (between_weights <= 1)
    and ||L_norm^k|| <= 2^k (normalized Laplacian). The labelled term cc^T (x) J is left out: it is the same in
    every regime."""
    return ((gamma_B * m if m > 1 else 0.0) + gamma_W * 2.0 ** int(laplacian_power)) / gamma_A


def sparse_operator(system):
    """The operator M of :class:`mvl.scalable.MVLSystem` as one sparse CSC matrix (m n x m n, view-major: row
    p n + i is view p at point i): c_p c_q on the labelled diagonal entries of block (p, q), beta w_i (m [p = q] - 1)
    on the diagonals of all blocks (between-view term, eq 54-57), omega L_p^k on the diagonal block p (eq 60-63)."""
    n, m = system.n, system.m
    N = n * m
    lab = system.labelled
    l = len(lab)
    rows = np.concatenate([p * n + lab for p in range(m) for _ in range(m)])
    cols = np.concatenate([q * n + lab for _ in range(m) for q in range(m)])
    vals = np.concatenate([np.full(l, system.c[p] * system.c[q]) for p in range(m) for q in range(m)])
    M = sparse.csr_matrix((vals, (rows, cols)), shape=(N, N))
    if system.beta > 0:
        w = np.ones(n) if system.w is None else system.w
        Mm = m * np.eye(m) - np.ones((m, m))
        M = M + system.beta * sparse.kron(sparse.csr_matrix(Mm), sparse.diags(w))
    if system.L is not None:
        blocks = []
        for p in range(m):
            L = sparse.csr_matrix(system.L[p])
            Lk = L
            for _ in range(system.laplacian_power - 1):
                Lk = Lk @ L
            blocks.append(system.omega * Lk)
        M = M + sparse.block_diag(blocks, format="csr")
    M = sparse.csc_matrix(M)
    M.sum_duplicates()
    return M


class GraphPreconditioner:
    """Q = (M (Z Z^T + D) + delta I)^{-1} of the module docstring, applied to arrays (m, n, k).

    ``kernels`` (:class:`mvl.kernel_blocks.ViewKernels`) gives diag(K^p); ``basis`` the Nystrom factors Z_p;
    ``keep_bytes``: S^{-1} M Z (m n x R) is kept when it fits, else recomputed per application (one more solve).
    """

    def __init__(self, system, kernels, basis, keep_bytes=0.0, block=256):
        t0 = time.perf_counter()
        self.n, self.m, self.delta = system.n, system.m, system.delta
        n, m = self.n, self.m
        self.Z = basis.Z
        self.sizes = [z.shape[1] for z in self.Z]
        self.off = np.concatenate([[0], np.cumsum(self.sizes)])
        R = int(self.off[-1])
        dmax = max(float(np.max(kernels.diag(p))) for p in range(m))
        D = []
        for p in range(m):
            d = kernels.diag(p) - np.einsum("ij,ij->i", self.Z[p], self.Z[p])
            D.append(np.maximum(d, 1e-12 * dmax))  # the Nystrom residual's diagonal, >= 0 up to rounding
        self.D = np.concatenate(D)
        self.M = sparse_operator(system)
        S = (self.M @ sparse.diags(self.D) + self.delta * sparse.identity(n * m)).tocsc()
        # M's pattern is symmetric (D diagonal): a minimum-degree ordering of S + S^T keeps the fill low
        self.lu = sla.splu(S, permc_spec="MMD_AT_PLUS_A")
        self.fill = int(self.lu.L.nnz + self.lu.U.nnz)
        keep = 8.0 * n * m * R <= keep_bytes
        self.Y = np.empty((n * m, R)) if keep else None
        G = np.empty((R, R))
        for s in range(0, R, block):
            cols = np.arange(s, min(s + block, R))
            Yb = self.lu.solve(np.asarray(self.M @ self._Z_cols(cols)))
            G[:, cols] = self._ZT(Yb)
            if keep:
                self.Y[:, cols] = Yb
            del Yb
        G = 0.5 * (G + G.T)
        G[np.diag_indices(R)] += 1.0
        self.C = linalg.lu_factor(G, check_finite=False)
        self.seconds = time.perf_counter() - t0

    def _Z_cols(self, cols):
        """Columns ``cols`` of the block-diagonal Z (m n x R), dense."""
        out = np.zeros((self.n * self.m, len(cols)))
        for p in range(self.m):
            sel = (cols >= self.off[p]) & (cols < self.off[p + 1])
            if sel.any():
                out[p * self.n:(p + 1) * self.n, np.flatnonzero(sel)] = self.Z[p][:, cols[sel] - self.off[p]]
        return out

    def _ZT(self, V):
        """Z^T V for V (m n, k) -> (R, k)."""
        n = self.n
        return np.vstack([self.Z[p].T @ V[p * n:(p + 1) * n] for p in range(self.m)])

    def _Z(self, h):
        """Z h for h (R, k) -> (m n, k)."""
        n = self.n
        out = np.empty((n * self.m, h.shape[1]))
        for p in range(self.m):
            out[p * n:(p + 1) * n] = self.Z[p] @ h[self.off[p]:self.off[p + 1]]
        return out

    def __call__(self, V):
        shape = V.shape
        v = np.ascontiguousarray(V, dtype=np.float64).reshape(self.n * self.m, -1)
        s = self.lu.solve(v)
        h = linalg.lu_solve(self.C, self._ZT(s), check_finite=False)
        if self.Y is not None:
            s -= self.Y @ h
        else:
            s -= self.lu.solve(np.asarray(self.M @ self._Z(h)))
        return s.reshape(shape)


def solve_graph(system, kernels, basis, tol=1e-6, max_iter=500, restart=100, x0=None, verbose=0, keep_bytes=0.0):
    """Coefficients (m, n, P) of Theorem 10 by right-preconditioned restarted GMRES with
    :class:`GraphPreconditioner` (module docstring); returns (a, info), info a dict as :func:`mvl.scalable.solve_cg`'s
    (n_iter: GMRES iterations = preconditioned products, residual: the max over the columns of the true relative
    residual of (68), converged).
    """

    t0 = time.perf_counter()
    delta = system.delta
    r = system.rhs()
    m, n, P = r.shape
    rnorm = np.sqrt(np.einsum("mnk,mnk->k", r, r))
    rnorm[rnorm == 0] = 1.0
    Q = GraphPreconditioner(system, kernels, basis, keep_bytes=keep_bytes)
    restart = max(1, int(restart))

    def T(a):
        return system.apply(kernels.matmul(a)) + delta * a

    def norms(V):
        return np.sqrt(np.einsum("mnk,mnk->k", V, V))

    x = np.zeros_like(r) if x0 is None else np.array(x0, dtype=np.float64, copy=True)
    it = 0
    while True:
        if x0 is None and it == 0:
            rho = r.copy()
        else:
            rho = r - T(x)
        res = norms(rho) / rnorm
        if verbose:
            print(f"[mvl graph] iteration {it}: true relative residual {res.max():.3e} "
                  f"({time.perf_counter() - t0:.1f} s)", flush=True)
        if res.max() <= tol or it >= max_iter:
            break
        beta = norms(rho)
        safe = np.where(beta > 0, beta, 1.0)
        V = [rho / safe]
        H = np.zeros((restart + 1, restart, P))
        cs, sn = np.zeros((restart, P)), np.zeros((restart, P))
        g = np.zeros((restart + 1, P))
        g[0] = beta
        j_done = 0
        for j in range(restart):
            w = T(Q(V[j]))
            it += 1
            for i in range(j + 1):  # modified Gram-Schmidt, per column
                h = np.einsum("mnk,mnk->k", w, V[i])
                w -= h * V[i]
                H[i, j] = h
            hn = norms(w)
            H[j + 1, j] = hn
            V.append(w / np.where(hn > 0, hn, 1.0))
            for i in range(j):  # the earlier rotations on the new column
                t = cs[i] * H[i, j] + sn[i] * H[i + 1, j]
                H[i + 1, j] = -sn[i] * H[i, j] + cs[i] * H[i + 1, j]
                H[i, j] = t
            den = np.hypot(H[j, j], H[j + 1, j])
            ok = den > 0
            cs[j] = np.where(ok, H[j, j] / np.where(ok, den, 1.0), 1.0)
            sn[j] = np.where(ok, H[j + 1, j] / np.where(ok, den, 1.0), 0.0)
            H[j, j] = np.where(ok, den, H[j, j])
            H[j + 1, j] = 0.0
            g[j + 1] = -sn[j] * g[j]
            g[j] = cs[j] * g[j]
            j_done = j + 1
            est = np.abs(g[j + 1]) / rnorm
            if verbose:
                print(f"[mvl graph] iteration {it}: estimated relative residual {est.max():.3e} "
                      f"({time.perf_counter() - t0:.1f} s)", flush=True)
            if est.max() <= 0.5 * tol or it >= max_iter or not np.any(hn > 0):  # hn = 0: the Krylov space is
                break                                                               # invariant, the solve exact
        # y = H^{-1} g per column (upper triangular j_done x j_done); x += Q (V y)
        upd = np.zeros_like(r)
        for k in range(P):
            if beta[k] == 0:
                continue
            Hk = H[:j_done, :j_done, k]
            diag = np.abs(np.diagonal(Hk))
            jj = j_done
            while jj > 0 and diag[jj - 1] <= 1e-300:  # an exact breakdown: the solution is in the smaller space
                jj -= 1
            if jj == 0:
                continue
            y = linalg.solve_triangular(Hk[:jj, :jj], g[:jj, k], check_finite=False)
            for i in range(jj):
                upd[:, :, k] += y[i] * V[i][:, :, k]
        x += Q(upd)
        del V
    info = dict(n_iter=it, residual=float(res.max()), converged=bool(res.max() <= tol))
    return x, info
