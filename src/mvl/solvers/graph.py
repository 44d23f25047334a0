"""MVL-LS in the graph regime: Theorem 10's system by conjugate gradients on a symmetric pencil, preconditioned
with the graph term exact and the kernels approximated (solver="graph").

Notation of :mod:`mvl.solvers.system`: per view p the coefficients a_p (n x P), F_p = K^p a_p, delta = l gamma_A,
M = (cc^T (x) J) + beta M_B + omega L^k the sparse operator of the objective's quadratic part, r_p = c_p J Y, and
Theorem 10's system (67)-(68) is

    T a = r,    T = M K + delta I,    K = blockdiag(K^1, ..., K^m).

**The regime.** Narrow or moderate kernels, gamma_W / gamma_A of 1e4 to 1e6, few labels: ||M|| / delta ~ 1e4-1e6.
There the "cg" solver's Nystrom preconditioner fails: its preconditioned spectrum reaches
1 + ||K - K_nys|| ||M|| / delta (K_nys the Nystrom approximation on the centres), i.e. the mismatch between K
and its low-rank part is amplified by the graph term. Measured on the graph-regime data (3 standardised views of
20-40 features, sigma = 1, gamma_A = 1e-6, gamma_W = 1, L^2, 5 labels per class): the kernels are neither
numerically sparse (~50 % of the entries of a row above 1e-12) nor low-rank (the spectrum decays from ~60 to
~1e-3 over n = 2,000 eigenvalues), so neither a truncated kernel nor a larger Nystrom basis makes the system easy.

**The symmetric pencil.** For M positive definite, multiplying (68) by M^{-1} gives

    A a = b,    A = K + delta M^{-1},    b = M^{-1} r,

A symmetric positive definite: kernel ridge regression of the graph-only solution M^{-1} r with the graph as the
regulariser. M is singular when gamma_B = 0 and m > 1 (F_p in null(L_p) with sum_p c_p F_p = 0 on the labelled
rows) or when a graph component holds no labelled point, so the solver works with M_eps = M + epsilon I,
epsilon = ``1e-10 max |diag M|`` (a pivot scale that SuperLU factors reliably), i.e. with T_eps = T + epsilon K, and
removes epsilon's bias by iterative refinement against the unshifted (68): each round solves T_eps d = r - T a by
CG on the pencil (A_eps d = M_eps^{-1} (r - T a)) and updates a += d; the rounds contract by
||T_eps^{-1} epsilon K|| <= epsilon ||K|| / delta (1 or 2 rounds where measured). Two stopping rules, per output
column, either one enough (:func:`solve_graph`): the true relative residual ||r - T a|| / ||r|| of (68), computed
each iteration from K a, which CG carries along (one sparse product, no extra kernel pass), and verified with a real
kernel pass before returning; or the relative error of the pencil's quadratic objective, estimated from CG's own
coefficients, which bounds the error of every decision value (the RKHS norm of the error is at most its energy
norm) and is what the predictions need; an unconverged iterate is returned only with ``info["converged"]`` False
(the estimator then warns).

**The preconditioner: the graph term exact, the kernel approximated.** Precondition A_eps with
B = K_hat + delta M_eps^{-1}, K_hat an approximation of K whose inverse is cheap next to M: B^{-1} = Q M_eps,
Q = (M_eps K_hat + delta I)^{-1}. Both A_eps and B carry the graph term delta M_eps^{-1} exactly, hence every
eigenvalue of B^{-1} A_eps lies in [min(1, lambda_min(K_hat^{-1} K)), max(1, lambda_max(K_hat^{-1} K))]: the
spread of K against its approximation alone, whatever gamma_W / gamma_A. Two approximations:

*Vecchia (the default, :class:`VecchiaPreconditioner`).* K_hat^{-1} = Q_v = (I - B)^T D^{-1} (I - B), the sparse
inverse-Cholesky factor of each view's kernel in which every point conditions on its q = 20 nearest earlier points
in a random order (:mod:`mvl.solvers.vecchia`): Q = Q_v (M_eps + delta Q_v)^{-1}, one sparse LU of the quasi-definite
[[M_eps, (I - B)^T], [I - B, -D / delta]] (LU fill 19 million entries at n = 8,000, 62 million at 32,000; m = 3, q =
20, 10-NN graphs, L^2), no Nystrom basis and no setup solves. It captures what a low-rank basis misses on these
kernels: each point's value is nearly determined by its nearest neighbours (the screening effect). Measured on the
graph-regime data at n = 8,000 to the same accuracy (benchmarks/README.md): 72 iterations and 7 s of setup
against 110 iterations and 6 s for Nystrom with 300 centres per view + blocks, and 1,898 iterations for that one to
(68)'s residual 1e-6.

*Nystrom + block-diagonal residual (``preconditioner="nystrom"``, :class:`GraphPreconditioner`).* K_hat = Z Z^T + D,
Z = blockdiag(Z_p) the Nystrom factors of :class:`mvl.solvers.nystrom.NystromBasis` (Z_p Z_p^T =
K^p_{nC} (K^p_{CC})^+ K^p_{Cn}) and D = diag(K - Z Z^T) >= 0 the diagonal of the Nystrom residual (the FITC
correction of Gaussian-process regression; or its blocks on clusters, PITC), and

    Q = (M_eps K_hat + delta I)^{-1} = S^{-1} - S^{-1} M_eps Z (I + Z^T S^{-1} M_eps Z)^{-1} Z^T S^{-1},
    S = M_eps D + delta I,

by Woodbury: S is sparse (the pattern of M), factored once by scipy's ``splu``; G = Z^T S^{-1} M Z is R x R
(R = sum of the Nystrom ranks), formed by R sparse solves in column blocks. Where the kernels' Nystrom residual is
far from diagonal (dense sampling of a low-dimensional manifold at a moderate bandwidth) the spread grows with n at
fixed R, and so does the iteration count (measured in benchmarks/README.md).

Why CG and not GMRES on (68) right-preconditioned with Q (the first version of this solver): Q T is not symmetric in
any inner product that is cheap to apply, and restarted GMRES (restart 100) stagnated at n = 8,000 on that data
(relative residual 0.633 after 100 iterations, 0.633 after 140), where CG on the pencil converges (2.4e-7 after 486
iterations with the block-diagonal residual, predictions equal to the exact solver's). Measured (benchmarks/README.md):
the block-diagonal residual (clusters of 64) against FITC's diagonal, 1,000 centres per view: 49 against 86
iterations at n = 2,000; the spread lambda_max / lambda_min of K_hat^{-1} K (view 1, k-means clusters of 50) 29
against 84 at n = 2,000 and 121 against 1,930 at n = 4,000: it grows with n at a fixed number of centres, the cause of
the iteration counts at 8,000.

Cost per iteration: one product with the m kernels (n^2 m P kernel-times-vector flops; Gram matrices kept if they
fit the memory budget, recomputed in tiles otherwise), two sparse solves with M_eps's LU and one with the
preconditioner's (Vecchia: the quasi-definite LU of size 2 m n; Nystrom: S once, twice if S^{-1} M Z does not fit a
quarter of ``max_memory``, plus O(n R P)). Memory: a few (m, n, P) arrays and the sparse LUs (Nystrom: Z, n R).
"""

from __future__ import annotations

import time

import numpy as np
from scipy import linalg, sparse
from scipy.sparse import linalg as sla

from .problem import GraphDetails, Solver, SolverResult, breakdown_message

__all__ = ["GraphSolver", "sparse_operator", "point_clusters", "GraphPreconditioner", "VecchiaPreconditioner",
           "CLUSTER_SIZE",
           "PRECONDITIONERS", "ENERGY_DELAY", "shifted_operator", "vecchia_factors", "solve_graph"]


def sparse_operator(system):
    """The operator M of :class:`mvl.solvers.system.MVLSystem` as one sparse CSC matrix (m n x m n, view-major: row
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


def shifted_operator(system, shift=None):
    """(M_eps, epsilon): M_eps = M + epsilon I as a CSC matrix, epsilon = ``1e-10 max |diag M|`` unless ``shift`` is
    given (module docstring: the pivot scale that SuperLU factors reliably when M is singular)."""
    M = sparse_operator(system)
    eps = 1e-10 * float(np.abs(M.diagonal()).max(initial=0.0) or 1.0) if shift is None else float(shift)
    return (M + eps * sparse.identity(M.shape[0], format="csc")).tocsc(), eps


CLUSTER_SIZE = 64
"""Largest cluster of the preconditioner's block-diagonal residual (``GraphPreconditioner``); 1 = FITC's diagonal."""


def point_clusters(Y, size):
    """Index arrays of clusters of at most ``size`` rows of Y (n, k), between size / 2 and size each: recursive
    bisection at the median of the principal axis (a few power iterations per split), deterministic."""
    out, stack = [], [np.arange(Y.shape[0])]
    while stack:
        idx = stack.pop()
        if len(idx) <= size:
            out.append(idx)
            continue
        C = Y[idx] - Y[idx].mean(axis=0)
        v = np.ones(C.shape[1]) / np.sqrt(C.shape[1])
        for _ in range(8):
            w = C.T @ (C @ v)
            nw = np.linalg.norm(w)
            if nw == 0:
                break
            v = w / nw
        order = np.argsort(C @ v, kind="stable")
        h = len(idx) // 2
        stack += [idx[order[h:]], idx[order[:h]]]
    return out


class GraphPreconditioner:
    """Q = (M_eps (Z Z^T + D) + delta I)^{-1} of the module docstring, applied to arrays (m, n, k).

    ``kernels`` (:class:`mvl.kernel_blocks.ViewKernels`) gives the kernel on each cluster; ``basis`` the Nystrom
    factors Z_p; ``keep_bytes``: S^{-1} M Z (m n x R) is kept when it fits, else recomputed per application (one
    more solve). ``cluster_size``: D is the block diagonal of the Nystrom residual K - Z Z^T over clusters of at
    most this many points of each view (:func:`point_clusters` on the view's 16 leading Nystrom coordinates), the
    partially independent training conditional (PITC) of Gaussian-process regression; 1 gives FITC's diagonal.
    With D_b that block diagonal (each block shifted by 1e-8 max diag K to stay invertible),
    S = M_eps D_b + delta I = (M_eps + delta D_b^{-1}) D_b, so S^{-1} = D_b^{-1} (M_eps + delta D_b^{-1})^{-1}: one
    sparse symmetric matrix (M's pattern and the clusters' blocks) factored by ``splu``.
    """

    def __init__(self, system, kernels, basis, keep_bytes=0.0, block=256, shift=None, cluster_size=CLUSTER_SIZE):
        t0 = time.perf_counter()
        self.n, self.m, self.delta = system.n, system.m, system.delta
        n, m = self.n, self.m
        self.Z = basis.Z
        self.sizes = [z.shape[1] for z in self.Z]
        self.off = np.concatenate([[0], np.cumsum(self.sizes)])
        R = int(self.off[-1])
        tau = 1e-8 * max(float(np.max(kernels.diag(p))) for p in range(m))
        rows, cols, vals = [], [], []
        self.n_clusters = 0
        for p in range(m):
            Zp = self.Z[p]
            if int(cluster_size) <= 1:
                groups = [np.arange(n)]
                d = kernels.diag(p) - np.einsum("ij,ij->i", Zp, Zp)
                inv = [1.0 / np.maximum(d, tau)]
            else:
                groups = point_clusters(Zp[:, -16:], int(cluster_size))
                inv = []
                for idx in groups:
                    E = kernels.square(p, idx) - Zp[idx] @ Zp[idx].T  # the Nystrom residual on the cluster
                    w, U = linalg.eigh(0.5 * (E + E.T), check_finite=False)
                    inv.append((U / np.maximum(w, tau)) @ U.T)
            for idx, Ei in zip(groups, inv, strict=True):
                g = p * n + idx
                if Ei.ndim == 1:
                    rows.append(g)
                    cols.append(g)
                else:
                    rows.append(np.repeat(g, len(g)))
                    cols.append(np.tile(g, len(g)))
                vals.append(Ei.ravel())
            self.n_clusters += len(groups)
        N = n * m
        self.M, self.shift = shifted_operator(system, shift)
        self.Dinv = sparse.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                                      shape=(N, N))
        # M_eps + delta D_b^{-1}: symmetric; a minimum-degree ordering of its pattern keeps the fill low
        self.lu = sla.splu((self.M + self.delta * self.Dinv).tocsc(), permc_spec="MMD_AT_PLUS_A")
        self.fill = int(self.lu.L.nnz + self.lu.U.nnz)
        keep = 8.0 * n * m * R <= keep_bytes
        self.Y = np.empty((n * m, R)) if keep else None
        G = np.empty((R, R))
        for s in range(0, R, block):
            cols = np.arange(s, min(s + block, R))
            Yb = self._S_solve(np.asarray(self.M @ self._Z_cols(cols)))
            G[:, cols] = self._ZT(Yb)
            if keep:
                self.Y[:, cols] = Yb
            del Yb
        G = 0.5 * (G + G.T)
        G[np.diag_indices(R)] += 1.0
        self.C = linalg.lu_factor(G, check_finite=False)
        self.seconds = time.perf_counter() - t0

    def _S_solve(self, V):
        """S^{-1} V = D_b^{-1} (M_eps + delta D_b^{-1})^{-1} V for V (m n, k)."""
        return np.asarray(self.Dinv @ self.lu.solve(V))

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
        s = self._S_solve(v)
        h = linalg.lu_solve(self.C, self._ZT(s), check_finite=False)
        if self.Y is not None:
            s -= self.Y @ h
        else:
            s -= self._S_solve(np.asarray(self.M @ self._Z(h)))
        return s.reshape(shape)


def vecchia_factors(kernels, neighbours=None, random_state=0):
    """[(I - B_p, d_p)] of :func:`mvl.solvers.vecchia.vecchia_factor` for every view (q = ``neighbours``, default
    :data:`mvl.solvers.vecchia.VECCHIA_NEIGHBOURS`; view p ordered with seed random_state + p)."""
    from .vecchia import VECCHIA_NEIGHBOURS, vecchia_factor

    q = VECCHIA_NEIGHBOURS if neighbours is None else int(neighbours)
    seed = 0 if random_state is None else int(random_state)
    return [vecchia_factor(kernels, p, q, random_state=seed + p) for p in range(kernels.m)]


class VecchiaPreconditioner:
    """Q = (M_eps K_v + delta I)^{-1} with K_v Vecchia's approximation of the kernels (:mod:`mvl.solvers.vecchia`),
    applied to arrays (m, n, k): with Q_v = K_v^{-1} = (I - B)^T D^{-1} (I - B) (block diagonal over the views),

        Q = Q_v (M_eps + delta Q_v)^{-1},

    and (M_eps + delta Q_v)^{-1} z is the first half of the solution of the sparse quasi-definite system

        [[M_eps, (I - B)^T], [I - B, -D / delta]] [x; y] = [z; 0]

    (eliminating y = delta D^{-1} (I - B) x gives (M_eps + delta Q_v) x = z), factored once by ``splu``: no
    product (I - B)^T D^{-1} (I - B) is formed. ``neighbours``: q of :func:`mvl.solvers.vecchia.vecchia_factor`;
    ``random_state``: the seed of its orderings (view p uses random_state + p); ``factors``: the views' factors
    from :func:`vecchia_factors` (they do not depend on c or the gammas: optC computes them once)."""

    def __init__(self, system, kernels, neighbours=None, shift=None, random_state=0, factors=None):
        t0 = time.perf_counter()
        n, m, self.delta = system.n, system.m, system.delta
        self.n, self.m, self.N = n, m, n * m
        if factors is None:
            factors = vecchia_factors(kernels, neighbours, random_state)
        self.IB = sparse.block_diag([f[0] for f in factors], format="csr")
        self.d = np.concatenate([f[1] for f in factors])
        self.M, self.shift = shifted_operator(system, shift)
        aug = sparse.bmat([[self.M, self.IB.T], [self.IB, sparse.diags(-self.d / self.delta)]], format="csc")
        self.lu = sla.splu(aug, permc_spec="MMD_AT_PLUS_A")
        self.fill = int(self.lu.L.nnz + self.lu.U.nnz)
        self.n_clusters = 0
        self.seconds = time.perf_counter() - t0

    def __call__(self, V):
        shape = V.shape
        v = np.ascontiguousarray(V, dtype=np.float64).reshape(self.N, -1)
        x = self.lu.solve(np.vstack([v, np.zeros_like(v)]))[:self.N]
        return np.asarray(self.IB.T @ ((self.IB @ x) / self.d[:, None])).reshape(shape)


PRECONDITIONERS = ("vecchia", "nystrom")
ENERGY_DELAY = 5
"""Iterations d of the delayed energy-norm error estimate of :func:`solve_graph` (Strakos & Tichy 2002)."""


def solve_graph(system, kernels, basis, tol=1e-6, max_iter=500, x0=None, verbose=0, keep_bytes=0.0, shift=None,
                cluster_size=CLUSTER_SIZE, preconditioner="vecchia", neighbours=None, random_state=0, factors=None):
    """Coefficients (m, n, P) of Theorem 10 by preconditioned conjugate gradients on the symmetric pencil of the
    module docstring; returns (a, info), info a dict as :func:`mvl.solvers.cg.solve_cg`'s (n_iter: CG iterations =
    kernel passes, residual: the max over the output columns of the true relative residual ||r - T a|| / ||r|| of
    (68)) and ``energy_error``: the estimated relative error of the pencil's quadratic objective,
    ||a - a*||_A^2 / ||a*||_A^2 (A the pencil, a* its solution).

    **Stopping.** Converged when either (68)'s relative residual is <= ``tol`` for every output column, or the
    relative error of the pencil's quadratic objective, ||a - a*||_A^2 / ||a*||_A^2, is <= ``tol`` (estimated
    by CG's delayed energy-norm estimate, the sum of alpha_j s_j^T z_j over the next ``ENERGY_DELAY``
    iterations: Hestenes & Stiefel 1952, Strakos & Tichy 2002; CG's energy error decreases monotonically, so the
    iterate returned, ENERGY_DELAY iterations later, is at least as accurate) for the solve and for its
    refinement round. Why it is the criterion that matters for predictions: ||e||_A^2 = e^T K e + delta e^T
    M^{-1} e >= e^T K e = sum_p ||e_p||_{H_p}^2, the RKHS norm of the error of the fitted functions, and by the
    reproducing property ``|c^T e(x)|`` <= ||c|| ||e||_K max_p sqrt(k^p(x, x)) at every point x, training or
    test: the decision values are within ||c|| sqrt(tol) ||a*||_A of the exact ones everywhere. (68)'s residual is
    a much stricter measure in the graph regime (it weighs the error by M K + delta I, ||M|| / delta ~ 1e6):
    measured at n = 8,000 (benchmarks/README.md), 400 iterations left it at 1e-4 with predictions equal to the
    exact solver's on every test point from iteration ~60 on.

    ``preconditioner``: "vecchia" (default; :class:`VecchiaPreconditioner`, ``neighbours`` and ``random_state``
    its q and seed, ``factors`` precomputed by :func:`vecchia_factors`) or "nystrom" (:class:`GraphPreconditioner`
    on ``basis``, ``cluster_size`` and ``keep_bytes`` its settings; ``basis`` is not used by "vecchia").
    ``shift``: the epsilon of M_eps = M + epsilon I (default ``1e-10 max |diag M|``, module docstring); its bias is
    removed by refinement against the unshifted (68), so the answer is that of M. Every output column runs its own
    CG recurrence, in lockstep so that one kernel pass (``ViewKernels.matmul``) serves them all.

    **Breakdown.** CG on the pencil needs p^T A_eps p > 0 and s^T z > 0 (A_eps and the preconditioner positive
    definite, which they are when every view's kernel is positive semi-definite). When either fails or is not
    finite (an indefinite precomputed kernel), the iteration stops at the last iterate with ``info["breakdown"]``
    its iteration and ``info["converged"]`` False: never a zero step reported as convergence.
    """
    if preconditioner not in PRECONDITIONERS:
        raise ValueError(f"preconditioner must be one of {PRECONDITIONERS}, got {preconditioner!r}")
    t0 = time.perf_counter()
    delta = system.delta
    r = system.rhs()
    m, n, P = r.shape
    N = m * n
    rnorm = _norms(r)
    rnorm[rnorm == 0] = 1.0
    if preconditioner == "vecchia":
        Q = VecchiaPreconditioner(system, kernels, neighbours=neighbours, shift=shift, random_state=random_state,
                                  factors=factors)
    else:
        Q = GraphPreconditioner(system, kernels, basis, keep_bytes=keep_bytes, shift=shift, cluster_size=cluster_size)
    luM = sla.splu(Q.M, permc_spec="MMD_AT_PLUS_A")  # M_eps: the pencil's delta M_eps^{-1}

    def Minv(V):
        return luM.solve(V.reshape(N, P)).reshape(m, n, P)

    def T(a, Ka):  # (68)'s operator with the unshifted M, from K a
        return system.apply(Ka) + delta * a

    def precondition(s):  # B^{-1} s = (K_hat + delta M_eps^{-1})^{-1} s = Q (M_eps s)
        return Q(np.asarray(Q.M @ s.reshape(N, P)).reshape(m, n, P))

    x = np.zeros_like(r) if x0 is None else np.array(x0, dtype=np.float64, copy=True)
    u = np.zeros_like(r) if x0 is None else kernels.matmul(x)  # u = K x, carried along (no extra kernel pass)
    it, refinements, breakdown = 0, 0, None
    energy_error, energy_ok = np.inf, False
    while True:
        rho = r - T(x, u)  # the true residual of (68) at x
        res = _norms(rho) / rnorm
        if verbose:
            print(f"[mvl graph] iteration {it}: relative residual of (68) {res.max():.3e} "
                  f"({time.perf_counter() - t0:.1f} s)", flush=True)
        if res.max() <= tol or energy_ok or it >= max_iter:
            break
        refinements += 1
        # the energy scale ||x||_A^2 of what is already there (0 on a cold start), plus this round's
        base2 = _dots(x, u) + delta * _dots(x, Minv(x)) if np.any(x) else np.zeros(P)
        # CG on A_eps d = g, A_eps = K + delta M_eps^{-1}, g = M_eps^{-1} rho: T_eps d = rho (module docstring)
        s = Minv(rho)
        gnorm = _norms(s)
        gnorm[gnorm == 0] = 1.0
        z = precondition(s)
        p = z.copy()
        sz = _dots(s, z)
        d = np.zeros_like(r)
        ud = np.zeros_like(r)
        terms = []  # alpha_j s_j^T z_j: sum over the remaining ones = ||d* - d_j||_A^2
        round_ok = False
        while it < max_iter:
            Kp = kernels.matmul(p)
            Ap = Kp + delta * Minv(p)
            pAp = _dots(p, Ap)
            if not np.all(np.isfinite(pAp)) or np.any((pAp <= 0) & (sz != 0)) or np.any(sz < 0):
                breakdown = it + 1  # the pencil (or the preconditioner) is not positive definite: stop here
                break
            alpha = np.divide(sz, pAp, out=np.zeros(P), where=pAp > 0)
            terms.append(alpha * sz)
            d += alpha * p
            ud += alpha * Kp
            s -= alpha * Ap
            it += 1
            now = _norms(rho - T(d, ud)) / rnorm  # (68) at x + d, by one sparse product
            scale2 = np.maximum(base2 + np.sum(terms, axis=0), np.finfo(float).tiny)
            if len(terms) >= ENERGY_DELAY:
                tail = np.sum(terms[-ENERGY_DELAY:], axis=0)
                energy_error = float(np.max(tail / scale2))
                round_ok = bool(np.all(tail <= tol * scale2))
            if verbose:
                print(f"[mvl graph] iteration {it}: relative residual of (68) {now.max():.3e}, estimated relative "
                      f"objective error {energy_error:.2e} ({time.perf_counter() - t0:.1f} s)", flush=True)
            # stop: converged, or the shifted system solved far below what is left (epsilon's bias: refine)
            if round_ok or now.max() <= 0.25 * tol or (_norms(s) / gnorm).max() <= 1e-3 * min(1.0, now.max()):
                break
            z = precondition(s)
            sz_new = _dots(s, z)
            beta = np.divide(sz_new, sz, out=np.zeros(P), where=sz > 0)
            sz = sz_new
            p = z + beta * p
        x += d
        u += ud
        # done when this round's whole correction is within the tolerance (its first round: the solve itself,
        # never; a refinement round: the shift's bias and the first round's error, estimated together)
        if round_ok and refinements > 1:
            energy_ok = bool(np.all(np.sum(terms, axis=0) <= tol * scale2))
        if it >= max_iter or breakdown is not None:
            break
    if it > 0:  # the verdict from a true kernel pass, not the carried u (it drifts by rounding)
        res = _norms(r - T(x, kernels.matmul(x))) / rnorm
    converged = bool(res.max() <= tol or energy_ok) and breakdown is None
    info = dict(n_iter=it, residual=float(res.max()), energy_error=energy_error, converged=converged,
                breakdown=breakdown, refinements=refinements, setup_seconds=Q.seconds, fill=Q.fill,
                clusters=Q.n_clusters,
                seconds=time.perf_counter() - t0)
    return x, info


def _norms(V):
    return np.sqrt(np.einsum("mnk,mnk->k", V, V))


def _dots(U, V):
    return np.einsum("mnk,mnk->k", U, V)


class GraphSolver(Solver):
    """solver="graph": exact to ``tol`` by CG on the symmetric pencil, Vecchia-preconditioned (module docstring),
    for the graph regime; complete views only; gamma_W > 0 needs a sparse kNN graph; no Nystrom basis."""

    name = "graph"
    losses = ("squared",)
    missing_views = False
    sparse_graph = True
    optc = True
    operator = True
    auto_rank = None  # measured 0.9x "structured" at 8,000 points; "vecchia_direct" is the graph regime's choice
    advice = 'increase max_iter or tol, or use solver="structured" (exact, if n m^2 fits memory)'

    def memory_bytes(self, n, m, l):
        return None  # sparse factors and the kernels' rows: no n x n array

    def auto_accepts(self, regime):
        return False

    def solve(self, problem):
        coef, info = solve_graph(problem.system, problem.kernels, None, tol=float(problem.tol),
                                 max_iter=int(problem.max_iter), verbose=problem.verbose, random_state=problem.seed)
        return _result(coef, info)

    def unconverged_message(self, result, tol):
        if result.breakdown is not None:
            return breakdown_message(self.name, result)
        return (f'solver="graph" stopped after max_iter = {result.n_iter} iterations at estimated relative objective '
                f'error {result.details.energy_error:.2e} and relative residual {result.residual:.2e}, both > '
                f'tol = {tol:g}; {self.advice}')

    def optc_step(self, problem):
        system, kernels = problem.system, problem.kernels
        KL = np.stack([kernels.rows(p, problem.labelled) for p in range(system.m)])
        # the kernels' Vecchia factors do not depend on c: computed once, the sparse LU redone per c
        factors = vecchia_factors(kernels, random_state=problem.seed)

        def step(c, state):
            a, info = solve_graph(system.with_c(c), kernels, None, tol=float(problem.tol),
                                  max_iter=int(problem.max_iter), x0=state, verbose=problem.verbose, factors=factors)
            return np.einsum("pln,pnk->plk", KL, a), a, _result(a, info)

        return step


def _result(coef, info):
    """The typed result of a :func:`solve_graph` run."""
    return SolverResult(coef, info["n_iter"], info["residual"], info["converged"], breakdown=info.get("breakdown"),
                        details=GraphDetails(info["energy_error"], info))
