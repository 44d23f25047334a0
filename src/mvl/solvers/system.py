"""MVL-LS at scale: the exact problem of Theorem 10 by preconditioned CG, and its Nystrom restriction.

Notation (as :mod:`mvl.estimators.least_squares`): n = u + l training points, m views, P outputs; per view the
coefficients a_p (n x P), outputs F_p = K^p a_p, S = sum_p c_p F_p, T = sum_p F_p; delta = l gamma_A,
beta = l gamma_B, omega = l gamma_W. The objective (10)/(53), times l, is

    ||J (Y - S)||^2 + delta sum_p ||f^p||^2 + beta (m sum_p ||F_p||^2 - ||T||^2) + omega sum_p <F_p, L_p^d F_p>

(J selects the labelled rows; the between-view term is sum_i sum_{p<q} ||f^p(x_i) - f^q(x_i)||^2 of eq 58 in the
form ``m sum |F_p|^2 - |sum F_p|^2``, so no m^2 cross products; L_p^d the iterated sparse kNN Laplacian, applied
as d sparse products, d = ``laplacian_power``). Its quadratic part in F is <F, M F> with the operator

    (M F)_p = c_p J S + beta (m F_p - T) + omega L_p^d F_p,      M = (cc^T (x) J) + beta M_B + omega M_W,

and Theorem 10's system (67)-(68) reads (M K + delta I) a = r, r_p = c_p J Y: the paper's B is M K here.

**solver="cg": an SPD form of (68).** M K + delta I is not symmetric, but it is self-adjoint and positive
definite in the inner product <a, b>_K = sum_p a_p^T K^p b_p: K (M K + delta I) = K M K + delta K is symmetric.
Equivalently, with the feature maps Phi_p (K^p = Phi_p Phi_p^T), the weights w = Phi^T a solve the
weight-space normal equations (Phi^T M Phi + delta I) w = Phi^T r, whose operator has eigenvalues >= delta.
Conjugate gradients in that inner product need per iteration one product with the kernels: with the
preconditioned residual z, the scalars are <rho, z>_K = rho^T (K z) and <p, A p>_K = (Kp)^T M (Kp) +
delta p^T (Kp), and K p = K z + beta_cg K p_prev follows from K z by the same recursion as p. M costs
O(n (m + d nnz)) per column. The residual rho = r - (M K + delta I) a is the residual of the paper's system
(68) itself, so ``tol`` is the relative residual ||rho|| / ||r|| of (68) per output column, computed at no
cost. All P columns iterate together (one kernel pass serves them all), each with its own CG scalars.

**Preconditioner (Falkon's construction, Rudi, Carratino & Rosasco 2017, for this operator).** Let V be the
span of the feature vectors of M centres (uniform draw, ``random_state``), Psi an orthonormal basis of V and
Z_p = Phi_p Psi = K^p_{nC} U_p s_p^{-1/2} (n x r) from the eigendecomposition K^p_CC = U_p diag(s_p) U_p^T
(eigenvalues below 1e-12 max dropped). On V the weight-space operator is B + delta I with

    B = Z^T M Z = [c_p c_q Z_p[L]^T Z_q[L]] + beta (m blockdiag(Z_p^T Z_p) - Zs^T Zs)
        + omega blockdiag(Z_p^T L_p^d Z_p),

Zs = [Z_1 ... Z_m] (one GEMM), and on its complement it is approximated by delta I:
P^{-1} = Psi (B + delta I)^{-1} Psi^T + (I - Psi Psi^T) / delta. In coefficients, z = rho / delta +
E_C V [(B + delta I)^{-1} - I / delta] Z^T rho (V_p = U_p s_p^{-1/2}, E_C places rows on the centres):
self-adjoint and positive definite in <.,.>_K, O(n r m d) per application, no kernel pass. The preconditioned
spectrum lies in [1, 1 + ||K - K_nys|| ||M|| / delta] (K_nys the Nystrom approximation): it converges fast
when the centres capture the kernel at the scale delta / ||M||.

**solver="nystrom".** Each view's function restricted to the span of the centres, f^p = sum_j k^p(., c_j)
alpha_pj: in the coordinates w_p = diag(s_p)^{1/2} U_p^T alpha_p (so ||f^p||^2 = ||w_p||^2) the objective is
the M-space least squares problem with Hessian B + delta I and gradient Z^T r; solved directly (Cholesky of
m r x m r); alpha_p = V_p w_p. With the centres = all training points it is the exact problem (tested
against the structured solver). Prediction: O(t M m).

**Incomplete views** (:mod:`mvl.solvers.incomplete`): with a presence ``mask`` (n, m) the system is the one of
:func:`mvl.solvers.incomplete.solve_structured_incomplete` (eq 67-68 restricted to the present (sample, view) pairs):
the coefficient arrays keep their shape (m, n, P) with a_p = 0 outside S_p; the kernels are Pi_p K^p Pi_p
(:class:`mvl.missing_views.MaskedViewKernels`), and M becomes

    (M F)_p = Pi_p [C~_p J S~ + beta w (x) (``|V|`` F_p - T) + omega L_p^d F_p],      r_p = C~_p J Y,

with C~_p = diag(c~_ip) the combination renormalised over each sample's present views
(:func:`mvl.missing_views.combination_weights`), S~ = sum_q C~_q F_q, ``|V_i|`` the number of views of sample i and L_p
the kNN Laplacian of view p's samples (zero rows elsewhere). Every operator (M, K, the preconditioner) maps the
arrays that vanish outside the present pairs into themselves, so CG stays in that subspace, where
<a, b>_K is an inner product. In B = Z^T M Z the labelled term is [Z_p[L]^T C~_p C~_q Z_q[L]] and the between-view
term beta (blockdiag(Z_p^T D (``|V|`` - 1) Z_p) - [Z_p^T D Z_q]_{p != q}); the Nystrom basis of view p is built on the
centres that have view p (its rows outside S_p are zero). With ``mask`` None every path is the complete one.
"""

from __future__ import annotations


import numpy as np
from scipy.linalg import blas

__all__ = ["MVLSystem", "sparse_times_dense"]


class MVLSystem:
    """The operator M of the module docstring for one problem: labelled rows, targets, c, the gammas times l,
    the sparse within-view operators and optional between-view point weights."""

    def __init__(self, n, labelled, Y_L, c, *, gamma_A, gamma_B, gamma_W, laplacians=None, laplacian_power=1,
                 between_weights=None, mask=None):
        self.n, self.m = n, len(c)
        self.labelled = np.asarray(labelled)
        self.l = len(self.labelled)
        self.Y_L = np.asarray(Y_L, dtype=np.float64)
        self.P = self.Y_L.shape[1]
        self.c = np.asarray(c, dtype=np.float64)
        self.delta = self.l * gamma_A
        self.beta = self.l * gamma_B if self.m > 1 else 0.0
        self.omega = self.l * gamma_W
        self.L = laplacians if self.omega > 0 else None
        self.laplacian_power = int(laplacian_power)
        self.w = None if between_weights is None else np.asarray(between_weights, dtype=np.float64)
        self.mask = None if mask is None else np.asarray(mask, dtype=bool)  # (n, m): incomplete views
        self._set_masked()

    def _set_masked(self):
        """C~ (n, m) and |V_i| of the incomplete-view system (module docstring), from ``mask`` and c."""
        if self.mask is None:
            return
        from ..missing_views import combination_weights

        self.Ct = combination_weights(self.c, self.mask)
        self.counts = self.mask.sum(axis=1).astype(np.float64)

    def with_c(self, c):
        """The same problem with another combination vector (optC)."""
        import copy

        other = copy.copy(self)
        other.c = np.asarray(c, dtype=np.float64)
        other._set_masked()
        return other

    def rhs(self):
        """r_p = c_p J Y, shape (m, n, P)."""
        r = np.zeros((self.m, self.n, self.P))
        if self.mask is not None:  # r_p = C~_p J Y
            r[:, self.labelled] = self.Ct[self.labelled].T[:, :, None] * self.Y_L[None]
            return r
        r[:, self.labelled] = self.c[:, None, None] * self.Y_L[None]
        return r

    def apply_L(self, p, F, times=None):
        """L_p^times F (times = ``laplacian_power`` by default): sparse products (:func:`sparse_times_dense`)."""
        for _ in range(self.laplacian_power if times is None else times):
            F = sparse_times_dense(self.L[p], F)
        return F

    def apply(self, F):
        """M F for F (m, n, k)."""
        if self.mask is not None:
            return self._apply_masked(F)
        m = self.m
        out = np.empty_like(F)
        S_L = np.tensordot(self.c, F[:, self.labelled], axes=(0, 0))  # (l, k)
        T = F.sum(axis=0) if self.beta > 0 else None
        for p in range(m):
            if self.beta > 0:
                np.multiply(F[p], self.beta * m, out=out[p])
                out[p] -= self.beta * T
                if self.w is not None:
                    out[p] *= self.w[:, None]
            else:
                out[p] = 0.0
            out[p, self.labelled] += self.c[p] * S_L
            if self.L is not None:
                out[p] += self.omega * self.apply_L(p, F[p])
        return out

    def _apply_masked(self, F):
        """M F on incomplete views: Pi_p [C~_p J S~ + beta w (x) (|V| F_p - T) + omega L_p^d F_p] (module
        docstring)."""
        lab = self.labelled
        CL = self.Ct[lab]  # (l, m)
        S_L = np.einsum("pik,ip->ik", F[:, lab], CL)  # (l, k)
        T = F.sum(axis=0) if self.beta > 0 else None
        out = np.zeros_like(F)
        for p in range(self.m):
            if self.beta > 0:
                np.multiply(F[p], (self.beta * self.counts)[:, None], out=out[p])
                out[p] -= self.beta * T
                if self.w is not None:
                    out[p] *= self.w[:, None]
            out[p, lab] += CL[:, p][:, None] * S_L
            if self.L is not None:
                out[p] += self.omega * self.apply_L(p, F[p])
            out[p] *= self.mask[:, p][:, None]
        return out

    def _projected_masked(self, Z):
        """B = Z^T M Z on incomplete views (module docstring): Z_p with zero rows outside S_p."""
        m, lab = self.m, self.labelled
        sizes = [z.shape[1] for z in Z]
        off = np.concatenate([[0], np.cumsum(sizes)])
        sl = [slice(off[p], off[p + 1]) for p in range(m)]
        ZcL = np.hstack([self.Ct[lab, p][:, None] * Z[p][lab] for p in range(m)])
        B = ZcL.T @ ZcL
        if self.beta > 0:
            w = np.ones(self.n) if self.w is None else self.w
            dg = w * (self.counts - 1.0)
            for p in range(m):
                B[sl[p], sl[p]] += self.beta * (Z[p].T @ (dg[:, None] * Z[p]))
                for q in range(p + 1, m):
                    G = Z[p].T @ (w[:, None] * Z[q])
                    B[sl[p], sl[q]] -= self.beta * G
                    B[sl[q], sl[p]] -= self.beta * G.T
        if self.L is not None:
            self._add_within_view(B, Z, sl)
        return 0.5 * (B + B.T)

    def _add_within_view(self, B, Z, sl):
        """Add omega (L_p^(d/2) Z_p)^T (L_p^(d/2) Z_p) (d = ``laplacian_power`` even) or (L_p^((d-1)/2) Z_p)^T L_p
        (L_p^((d-1)/2) Z_p) (d odd), symmetrised, to the diagonal blocks ``B[sl[p], sl[p]]`` of B = Z^T M Z."""
        half = self.laplacian_power // 2
        for p in range(len(Z)):
            H = self.apply_L(p, Z[p], half) if half else Z[p]
            G = H.T @ self.apply_L(p, H, 1) if self.laplacian_power % 2 else H.T @ H
            B[sl[p], sl[p]] += self.omega * 0.5 * (G + G.T)

    def projected(self, Z):
        """B = Z^T M Z for block-diagonal Z (a list of m arrays n x r_p), one dense (sum r) x (sum r) matrix.

        Block by block, without stacking the Z_p: labelled c_p c_q Z_p[L]^T Z_q[L]; between-view
        beta ((m - 1) Z_p^T D Z_p on the diagonal, -Z_p^T D Z_q off it; D = diag(between_weights)), the diagonal
        blocks by a symmetric rank-n update (dsyrk); within-view omega (L^(d/2) Z_p)^T (L^(d/2) Z_p) (d =
        ``laplacian_power`` even) or (L^((d-1)/2) Z_p)^T L (L^((d-1)/2) Z_p); for d = 1 the two diagonal terms in
        one GEMM,
        Z_p^T (beta (m - 1) D + omega L_p) Z_p. Cost O(n m^2 r^2) flops, memory O(n r) beyond the Z_p."""
        if self.mask is not None:
            return self._projected_masked(Z)
        m = self.m
        sizes = [z.shape[1] for z in Z]
        off = np.concatenate([[0], np.cumsum(sizes)])
        sl = [slice(off[p], off[p + 1]) for p in range(m)]
        ZcL = np.hstack([self.c[p] * Z[p][self.labelled] for p in range(m)])
        B = ZcL.T @ ZcL
        # power 1: each diagonal block of the between- and within-view terms in ONE GEMM,
        # Z_p^T (beta (m - 1) D + omega L_p) Z_p, instead of a dsyrk plus a GEMM (2 n r^2 flops instead of 3)
        fused = self.L is not None and self.laplacian_power == 1
        if self.beta > 0:
            sw = None if self.w is None else np.sqrt(self.w)[:, None]
            Zw = [z if sw is None else z * sw for z in Z]
            for p in range(m):
                if not fused:
                    G = blas.dsyrk(1.0, Zw[p].T, trans=0)  # Z_p^T D Z_p, upper triangle (Zw[p].T: Fortran view)
                    B[sl[p], sl[p]] += (self.beta * (m - 1)) * (np.triu(G) + np.triu(G, 1).T)
                for q in range(p + 1, m):
                    G = Zw[p].T @ Zw[q]
                    B[sl[p], sl[q]] -= self.beta * G
                    B[sl[q], sl[p]] -= self.beta * G.T
            del Zw
        if fused:
            for p in range(m):
                X = self.apply_L(p, Z[p])
                X *= self.omega
                if self.beta > 0:
                    X += (self.beta * (m - 1)) * (Z[p] if self.w is None else self.w[:, None] * Z[p])
                G = Z[p].T @ X
                del X
                B[sl[p], sl[p]] += 0.5 * (G + G.T)
        elif self.L is not None:
            self._add_within_view(B, Z, sl)
        return 0.5 * (B + B.T)


def sparse_times_dense(S, X, threads=None):
    """S @ X for a sparse CSR S and a dense X with many columns, the rows split over ``threads`` threads (default:
    the BLAS setting; scipy's sparse-dense product runs on one core: n = 8,000, 1,000 columns 0.21 s -> 0.12 s
    on 2)."""
    from ..parallel import chunks, default_threads, map_threads

    threads = default_threads() if threads is None else int(threads)
    if threads == 1 or X.ndim == 1 or X.shape[1] < 32 or S.shape[0] < 2048:
        return S @ X
    S = S.tocsr()
    return np.vstack(map_threads(lambda ab: S[ab[0]:ab[1]] @ X, chunks(S.shape[0], threads), threads))


