"""The optimisation problem of MVML (Huusari, Kadri & Capponi, CAp 2017): the block metrics and the
alternating algorithm (Algorithm 1) for one +-1 target vector.

The g-step (8)/(15), the w-step (10)/(17) and the A-steps (9) ("full", gradient steps with Sherman-Morrison
updates of A^{-1}) and (12) ("sparse", block soft-thresholding) are written out in the docstring of
:mod:`mvl.estimators.mvml`, which also defines the block-wise Nystrom approximation of Section 3.5
(:func:`nystrom_features`). A metric object holds A (exactly or in a compact form) and gives the Gram matrix
B A B^T of the g-step and g = A B^T alpha: :class:`DenseMetric` (A dense), :class:`CovMetric` (A_lm = I,
"cov"), :class:`IdentityMetric` (K = H, "identity") and :class:`LowRankMetric` (c A_0 + sum_j beta_j b_j
b_j^T, the iterates of "full"); :class:`MetricFactor` applies A^+ for the sparse steps.
"""

from __future__ import annotations

import numpy as np
from scipy import linalg

__all__ = ["MVMLProblem", "MetricFactor", "DenseMetric", "CovMetric", "IdentityMetric", "LowRankMetric",
           "group_norms", "nystrom_features", "RCOND", "PSD_TOL"]

RCOND = 1e-10  # eigenvalues of W_l below RCOND * max are dropped (pseudo-inverse of Section 3.5)
PSD_TOL = 1e-10  # A is reported as not PSD when its smallest eigenvalue is below -PSD_TOL * max |eig|


# ----------------------------------------------------------------------------- Nystrom (Section 3.5)


def nystrom_features(K, landmarks, rcond=RCOND):
    """Block-wise Nystrom factors of Section 3.5 for kernels ``K`` (m, n, n) and landmark indices.

    Returns ``(U, T)``: lists of m arrays, U_l (n, r_l) with U_l U_l^T = Q_l W_l^+ Q_l^T and the maps
    T_l (p, r_l) with U_l = K_l[:, S] T_l, which also map test kernels: U_l(x) = K_l(x, S) T_l.
    """
    U, T = [], []
    S = np.asarray(landmarks)
    for Kl in K:
        s, V = linalg.eigh(Kl[np.ix_(S, S)])
        keep = s > rcond * max(float(s[-1]), 0.0)
        if not np.any(keep):
            raise ValueError("a view's landmark Gram matrix W_l is zero; its Nystrom factor is empty")
        Tl = V[:, keep] / np.sqrt(s[keep])
        T.append(Tl)
        U.append(Kl[:, S] @ Tl)
    return U, T


# ----------------------------------------------------------------------------- factorisations of A


class MetricFactor:
    """Applies A^+ to vectors of A's range; knows whether A is positive definite / semidefinite."""

    def __init__(self, A):
        self.A = A
        try:
            self.cho = linalg.cho_factor(A, lower=False, check_finite=False)
            self.pd = True
            self.psd = True
            self.min_eig = None
        except linalg.LinAlgError:
            self.cho = None
            self.pd = False
            s, V = linalg.eigh(A, check_finite=False)
            scale = max(float(np.max(np.abs(s))), 1e-300)
            self.min_eig = float(s[0])
            self.psd = bool(s[0] >= -PSD_TOL * scale)
            keep = np.abs(s) > 1e-12 * scale
            self.s, self.V = s[keep], V[:, keep]

    def pinv_apply(self, g):
        """A^+ g, or None when g is not in the range of A (<g, A^+ g> = +inf there)."""
        if self.pd:
            return linalg.cho_solve(self.cho, g, check_finite=False)
        coef = self.V.T @ g
        resid = np.linalg.norm(g - self.V @ coef)
        if resid > 1e-8 * max(np.linalg.norm(g), 1e-300):
            return None
        return self.V @ (coef / self.s)


def group_norms(A, offsets):
    """Frobenius norms of the blocks A_lm (v x v)."""
    starts = np.asarray(offsets[:-1], dtype=int)
    sq = np.add.reduceat(np.add.reduceat(A * A, starts, axis=0), starts, axis=1)
    return np.sqrt(sq)


def _group_penalty(A, offsets):
    """Omega(A)/eta = sum over groups gamma of ||A_gamma||_F; an off-diagonal group holds A_lm and A_ml (11)."""
    N = group_norms(A, offsets)
    iu = np.triu_indices(N.shape[0], 1)
    off = np.sqrt(N[iu] ** 2 + N.T[iu] ** 2)
    return float(np.sum(np.diag(N)) + np.sum(off))


def _group_prox(Z, offsets, threshold):
    """prox of threshold * sum_gamma ||.||_F: block soft-thresholding by groups of view pairs (12)."""
    v = len(offsets) - 1
    out = np.zeros_like(Z)
    for l in range(v):
        sl = slice(offsets[l], offsets[l + 1])
        for m in range(l + 1):
            sm = slice(offsets[m], offsets[m + 1])
            if l == m:
                nrm = np.linalg.norm(Z[sl, sl])
            else:
                nrm = np.sqrt(np.linalg.norm(Z[sl, sm]) ** 2 + np.linalg.norm(Z[sm, sl]) ** 2)
            if nrm <= threshold:
                continue
            mult = 1.0 - threshold / nrm
            out[sl, sm] = mult * Z[sl, sm]
            if l != m:
                out[sm, sl] = mult * Z[sm, sl]
    return out


# ----------------------------------------------------------------------------- block metrics


def _stack_B(F, w):
    """B = W F = [w_1 F_1, ..., w_v F_v] (n x N): W H without approximation, W U with it."""
    return np.hstack([w[l] * F[l] for l in range(len(F))])


def _BT(F, w, x):
    """B^T x, block by block (B is never formed)."""
    return np.concatenate([w[l] * (F[l].T @ x) for l in range(len(F))])


class DenseMetric:
    """A stored as a dense N x N matrix (the sparse variant)."""

    def __init__(self, A):
        self.A = A

    def gram(self, F, w):
        B = _stack_B(F, w)
        M = (B @ self.A) @ B.T
        return 0.5 * (M + M.T)

    def g_from_alpha(self, F, w, alpha):
        return self.A @ _BT(F, w, alpha)

    def dense(self):
        return self.A

    def compact(self):
        return self


class CovMetric:
    """A = E^T E with E = [E_1, ..., E_v]: A_lm = I_n (MVML_Cov, ``E`` None: every E_l is the identity of size
    n), or U_l^T U_m with Nystrom (E_l = U_l)."""

    def __init__(self, E, sizes):
        self.E = E
        self.sizes = list(sizes)

    def gram(self, F, w):
        if self.E is None:
            C = sum(w[l] * F[l] for l in range(len(F)))
        else:
            C = sum(w[l] * (F[l] @ self.E[l].T) for l in range(len(F)))
        return C @ C.T

    def g_from_alpha(self, F, w, alpha):
        if self.E is None:
            Ex = sum(w[l] * (F[l].T @ alpha) for l in range(len(F)))
            return np.concatenate([Ex] * len(F))
        Ex = sum(self.E[l] @ (w[l] * (F[l].T @ alpha)) for l in range(len(F)))
        return np.concatenate([El.T @ Ex for El in self.E])

    def dense(self):
        if self.E is None:
            return np.tile(np.eye(self.sizes[0]), (len(self.sizes),) * 2)
        E = np.hstack(self.E)
        return E.T @ E

    def compact(self):
        """Keep only what :meth:`dense` needs (Nystrom: the small N x N metric; exact: nothing but sizes)."""
        if self.E is not None:
            return DenseMetric(self.dense())
        return self


class IdentityMetric:
    """MVML_I: the multi-view kernel is blockdiag(K_l). Nystrom coordinates: A = I. Without approximation
    A_ll = K_l^+ and, on the span of the training points, g = A H c = c = W^T alpha."""

    def __init__(self, exact, F):
        self.exact = exact
        self.F = F
        self.sizes = [f.shape[1] for f in F]

    def gram(self, F, w):
        if self.exact:
            return sum(w[l] ** 2 * F[l] for l in range(len(F)))
        return sum(w[l] ** 2 * (F[l] @ F[l].T) for l in range(len(F)))

    def g_from_alpha(self, F, w, alpha):
        if self.exact:
            return np.concatenate([w[l] * alpha for l in range(len(F))])
        return _BT(F, w, alpha)

    def dense(self):
        if not self.exact:
            return np.eye(sum(self.sizes))
        blocks = []
        for Kl in self.F:
            s, V = linalg.eigh(Kl)
            keep = s > RCOND * max(float(s[-1]), 0.0)
            blocks.append((V[:, keep] / s[keep]) @ V[:, keep].T)
        return linalg.block_diag(*blocks)

    def compact(self):
        """Exact: A = blockdiag(K_l^+) needs the labelled training kernels (kept, m l^2 numbers: no more than
        the training input); Nystrom: A = I, nothing."""
        if not self.exact:
            self.F = None
        return self


class LowRankMetric:
    """A = c A_0 + sum_j beta_j b_j b_j^T, the form of every iterate of the gradient steps (9).

    A step A <- a A + beta b b^T (a = 1 - 2 mu eta, beta = mu lambda, b = A^{-1} g) scales c and the betas
    and appends one term. A_0 (positive definite, block diagonal; ``blocks`` None: the identity, as without
    approximation, never formed) is factorised once; A^{-1} is applied through the Sherman-Morrison formula
    of each step, so a step costs O(k N) instead of O(N^3). After many steps (or a tiny c) the iterate is
    formed densely and becomes the new A_0 (one factorisation).
    """

    _MAX_STEPS = 40

    def __init__(self, blocks, F, P=None, sizes=None):
        self._set_base(blocks, F, P, sizes)
        self.R = (float(sum(self.sizes)) if blocks is None else
                  float(sum(np.sum(bk * bk) for bk in blocks)))  # ||A||_F^2
        self._key = None
        self._M = None
        self._B = None

    def _set_base(self, blocks, F, P=None, sizes=None):
        self.blocks = blocks
        self.sizes = [bk.shape[0] for bk in blocks] if blocks is not None else list(sizes)
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)]).astype(int)
        self.cho = None if blocks is None else [linalg.cho_factor(bk, check_finite=False) for bk in blocks]
        per_view = F is not None and len(self.sizes) == len(F) and all(
            f.shape[1] == s for f, s in zip(F, self.sizes, strict=True))
        if per_view and P is None:
            P = [F[l] @ self._base_block(l, F[l].T) for l in range(len(F))]
        self.P = P if per_view else None
        self.c = 1.0
        self.betas = []
        self.bs = []
        self.steps = []

    def _base_block(self, k, x):
        """A_0 block k times x."""
        return x if self.blocks is None else self.blocks[k] @ x

    def _blockwise(self, x, fn):
        o = self.offsets
        return np.concatenate([fn(k, x[o[k]:o[k + 1]]) for k in range(len(self.sizes))])

    def apply(self, x):
        y = self.c * (x if self.blocks is None else self._blockwise(x, lambda k, xk: self.blocks[k] @ xk))
        for beta, b in zip(self.betas, self.bs, strict=True):
            y += beta * b * (b @ x)
        return y

    def solve(self, x):
        y = x.copy() if self.blocks is None else self._blockwise(
            x, lambda k, xk: linalg.cho_solve(self.cho[k], xk, check_finite=False))
        for a, beta, b, z, den in self.steps:
            y = (y - (beta / a) * z * ((b @ y) / den)) / a
        return y

    def gram(self, F, w):
        key = tuple(np.asarray(w, dtype=float))
        if key != self._key:
            B = _stack_B(F, w)
            if self.P is not None:
                M = self.c * sum(w[l] ** 2 * self.P[l] for l in range(len(F)))
            else:
                M = self.c * (B @ self._blockwise(B.T, self._base_block))
            for beta, b in zip(self.betas, self.bs, strict=True):
                Bb = B @ b
                M += beta * np.outer(Bb, Bb)
            self._key, self._M, self._B = key, 0.5 * (M + M.T), B
        return self._M

    def g_from_alpha(self, F, w, alpha):
        return self.apply(_BT(F, w, alpha))

    def update(self, a, beta, b, z, den, R_new, F):
        self.c *= a
        self.betas = [a * bt for bt in self.betas] + [beta]
        self.bs.append(b)
        self.steps.append((a, beta, b, z, den))
        self.R = R_new
        if self._M is not None:
            Bb = self._B @ b
            self._M = a * self._M + beta * np.outer(Bb, Bb)
        if len(self.steps) >= self._MAX_STEPS or self.c < 1e-8:
            A = self.dense()
            self._set_base([0.5 * (A + A.T)], F)

    def dense(self):
        A = self.c * (np.eye(sum(self.sizes)) if self.blocks is None else linalg.block_diag(*self.blocks))
        if self.bs:
            Bm = np.column_stack(self.bs)
            A += (Bm * np.asarray(self.betas)) @ Bm.T
        return 0.5 * (A + A.T)

    def block_norms(self, offsets):
        """Frobenius norms of the view blocks A_lm (v x v) without forming A: with A_0 block diagonal by views
        (or one dense block), ||A_lm||^2 = c^2 [l = m] ||A0_l||^2 + 2 c [l = m] sum_j beta_j b_jl^T A0_l b_jl
        + beta^T (G_l o G_m) beta, G_l = B_l^T B_l the Gram matrix of the step vectors restricted to view l."""
        if self.blocks is not None and len(self.blocks) != len(offsets) - 1:  # dense base: form A
            return group_norms(self.dense(), offsets)
        v = len(offsets) - 1
        beta = np.asarray(self.betas)
        Bm = np.column_stack(self.bs) if self.bs else np.zeros((offsets[-1], 0))
        G = [Bm[offsets[l]:offsets[l + 1]].T @ Bm[offsets[l]:offsets[l + 1]] for l in range(v)]
        sq = np.empty((v, v))
        for l in range(v):
            for m in range(v):
                sq[l, m] = beta @ (G[l] * G[m]) @ beta
            Bl = Bm[offsets[l]:offsets[l + 1]]
            A0B = Bl if self.blocks is None else self.blocks[l] @ Bl
            a0 = float(offsets[l + 1] - offsets[l]) if self.blocks is None else float(np.sum(self.blocks[l] ** 2))
            sq[l, l] += self.c ** 2 * a0 + 2 * self.c * float(beta @ np.sum(Bl * A0B, axis=0))
        return np.sqrt(np.maximum(sq, 0.0))

    def compact(self):
        """Keep only what :meth:`dense` and :meth:`block_norms` need: c, the betas, the step vectors and a
        non-identity A_0 (no factorisations, no n x n caches)."""
        self.P = self.cho = self._M = self._B = self._key = None
        self.steps = []
        return self


# ----------------------------------------------------------------------------- one binary problem


class MVMLProblem:
    """The alternating algorithm (Algorithm 1) for one +-1 target vector."""

    def __init__(self, F, offsets, y, metric, lmbda, eta, learn_A, learn_w, n_iter, n_iter_A, tol, step):
        # F: list of v feature blocks (n, r_l), K_l (exact) or U_l (Nystrom); the rest as MVML's parameters
        self.F, self.offsets, self.y, self.metric, self.v = F, offsets, y, metric, len(F)
        self.lmbda, self.eta, self.learn_A, self.learn_w = lmbda, eta, learn_A, learn_w
        self.n_iter, self.n_iter_A, self.tol, self.step = n_iter, n_iter_A, tol, step

    def _reg(self):
        if self.learn_A == "full":
            return self.eta * self.metric.R
        if self.learn_A == "sparse":
            return self.eta * _group_penalty(self.metric.A, self.offsets)
        return 0.0  # fixed metric: constant, left out

    def g_step(self, w):
        """Eq (8) / (15) by the push-through identity: alpha = (B A B^T + lambda I)^{-1} y, g = A B^T alpha."""
        y, lam = self.y, self.lmbda
        M = self.metric.gram(self.F, w).copy()
        M[np.diag_indices(y.shape[0])] += lam
        alpha = linalg.solve(M, y, assume_a="sym", check_finite=False)
        g = self.metric.g_from_alpha(self.F, w, alpha)
        return g, alpha, y - lam * alpha

    def w_step(self, g):
        """Eq (10) / (17): least-squares view weights from Z = [F_1 g_1, ..., F_v g_v]."""
        o = self.offsets
        Z = np.column_stack([self.F[l] @ g[o[l]:o[l + 1]] for l in range(self.v)])
        w, *_ = linalg.lstsq(Z, self.y, check_finite=False)
        return w, Z @ w

    def _mu0(self):
        return self.step if self.step is not None else 0.25 / self.eta

    def a_step_full(self, g, b):
        """Gradient steps (9) on lambda <g, A^{-1} g> + eta ||A||_F^2 with backtracking; b = A^{-1} g."""
        lam, eta, met = self.lmbda, self.eta, self.metric
        mu0 = mu = self._mu0()
        gb, bb = float(g @ b), float(b @ b)
        Fval = lam * gb + eta * met.R
        for _ in range(self.n_iter_A):
            z = met.solve(b)
            bz = float(b @ z)
            accepted = False
            for _bt in range(60):
                a, beta = 1.0 - 2.0 * mu * eta, mu * lam
                den = 1.0 + (beta / a) * bz
                b_c = (b - (beta / a) * z * (bb / den)) / a  # Sherman-Morrison: (a A + beta b b^T)^{-1} g
                R_c = a * a * met.R + 2 * a * beta * gb + beta * beta * bb * bb
                dist2 = max((a - 1) ** 2 * met.R + 2 * (a - 1) * beta * gb + beta * beta * bb * bb, 0.0)
                F_c = lam * float(g @ b_c) + eta * R_c
                if F_c <= Fval - 1e-4 * dist2 / mu:
                    accepted = True
                    break
                mu *= 0.5
            if not accepted:
                break
            rel = np.sqrt(dist2 / max(met.R, 1e-300))
            met.update(a, beta, b, z, den, R_c, self.F)
            b, Fval = b_c, F_c
            gb, bb = float(g @ b), float(b @ b)
            mu = min(2.0 * mu, mu0)
            if rel < self.tol:
                break

    def _h(self, fac, g):
        b = fac.pinv_apply(g)
        if b is None:
            return np.inf, None
        return self.lmbda * float(g @ b), b

    def a_step_sparse(self, g, fac):
        """Proximal gradient steps (12) on lambda <g, A^+ g> + eta sum_gamma ||A_gamma||_F, backtracking on mu."""
        A = self.metric.A
        lam, eta = self.lmbda, self.eta
        mu0 = mu = self._mu0()
        h, b = self._h(fac, g)
        if b is None:  # g outside the range of A: cannot happen after a g-step, kept as a guard
            return fac
        Fval = h + eta * _group_penalty(A, self.offsets)
        for _ in range(self.n_iter_A):
            accepted = False
            bbT = np.outer(b, b)
            for _bt in range(60):
                Ac = _group_prox(A + (mu * lam) * bbT, self.offsets, mu * eta)
                Ac = 0.5 * (Ac + Ac.T)
                fac_c = MetricFactor(Ac)
                h_c, b_c = self._h(fac_c, g)
                F_c = h_c + eta * _group_penalty(Ac, self.offsets)
                dist2 = float(np.sum((Ac - A) ** 2))
                if np.isfinite(F_c) and F_c <= Fval - 1e-4 * dist2 / mu:
                    accepted = True
                    break
                mu *= 0.5
            if not accepted:
                break
            rel = np.sqrt(dist2) / max(np.linalg.norm(A), 1e-300)
            A, fac, b, Fval = Ac, fac_c, b_c, F_c
            mu = min(2.0 * mu, mu0)
            if rel < self.tol:
                break
        self.metric.A = A
        return fac

    def run(self):
        v = self.v
        w = np.full(v, 1.0 / v)
        fac = MetricFactor(self.metric.A) if self.learn_A == "sparse" else None
        learned = self.learn_A in ("full", "sparse")
        history = []
        g = None
        for it in range(self.n_iter):
            g, alpha, f = self.g_step(w)
            b_exact = _BT(self.F, w, alpha)  # A^{-1} g for positive definite A
            penalty = self.lmbda * float(alpha @ f)  # lambda <g, A^+ g> = lambda alpha^T B g
            if self.learn_w:
                w, f = self.w_step(g)
            J = float(np.sum((self.y - f) ** 2)) + penalty + self._reg()
            history.append(J)
            if not learned and not self.learn_w:
                break
            if it > 0 and abs(history[-2] - J) <= self.tol * max(abs(history[-2]), 1e-300):
                break
            if it == self.n_iter - 1:
                break
            if self.learn_A == "full":
                self.a_step_full(g, b_exact)
            elif self.learn_A == "sparse":
                fac = self.a_step_sparse(g, fac)
        return g, w, np.asarray(history), fac
