"""Multi-view metric learning, MVML (Huusari, Kadri & Capponi, CAp 2017 / AISTATS 2018).

Model. With H = blockdiag(K_1, ..., K_v) (one Gram matrix per view) the multi-view block kernel is

    K = H A H                                                            (5)

with a learned block metric A = (A_lm) in R^{nv x nv}. With square loss and the combination
W = w^T (x) I_n the problem, after the change of variable g = A H c, reads

    min_{A, g}  ||y - W H g||^2 + lambda <g, A^+ g> + eta ||A||_F^2,   A > 0,      (6)-(7)

solved by alternating (Algorithm 1, version a):

* g-step (8):  g = (H W^T W H + lambda A^+)^{-1} H W^T y. It is evaluated through the push-through
  identity as g = A B^T alpha, alpha = (B A B^T + lambda I_n)^{-1} y, B = W H: equal to (8) for
  invertible A, it needs no inverse of A and keeps g in the range of A (<g, A^+ g> is +inf outside it).
  At the solution A^{-1} g = B^T alpha and the objective is lambda y^T alpha (+ the metric penalty).
* w-step (10): w = (Z^T Z)^{-1} Z^T y, Z = [K_1 g_1, ..., K_v g_v] (least squares, optional).
* A-step: gradient descent (9), A <- (1 - 2 mu eta) A + mu lambda (A^{-1} g)(A^{-1} g)^T, which keeps A
  positive definite for mu eta < 1/2 ("full", MVML); or, for the block-sparse problem (11) with
  eta sum_gamma ||A_gamma||_F over the groups gamma = {(l, m), (m, l)} of view pairs, proximal gradient
  steps (12): A <- prox_{mu eta Omega}(A + mu lambda (A^+ g)(A^+ g)^T), block soft-thresholding
  ("sparse", MVMLsparse). The step mu is backtracked until the objective decreases (Armijo-type
  sufficient decrease), so the objective is monotone over the iterations. (12) in the paper omits the
  factor mu of the threshold; it is the prox of mu^k Omega of Appendix A.1, used here.
  Every iterate of (9) is c A_0 + sum_j beta_j b_j b_j^T, so "full" keeps A in that form and applies
  A^{-1} by Sherman-Morrison: an A-step costs O(k nv) rather than the O((nv)^3) of a dense inverse.
  The sparse steps change blocks by different factors and work on the dense A (O((nv)^3) per step,
  as the paper's complexity; the Nystrom version is the one meant for size).
* fixed metrics: "cov", A_lm = I_n for all view pairs (the cross-covariance kernel of Kadri et al.
  2013, MVML_Cov: K_lm = K_l K_m); "identity", MVML_I, only the one-view kernels on the diagonal of the
  multi-view kernel (K = H, i.e. A_ll = K_l^+): kernel ridge regression on sum_l w_l^2 K_l.

Block-wise Nystrom approximation (Section 3.5, Algorithm 1 version b). A random ordering of the samples,
seeded and shared by all views, picks p landmarks S; each view is approximated as
K_l ~ Q_l W_l^+ Q_l^T = U_l U_l^T with Q_l = K_l[:, S], W_l = K_l[S, S] and U_l = Q_l V_l diag(s_l)^(-1/2)
from the eigendecomposition W_l = V_l diag(s_l) V_l^T (eigenvalues below 1e-10 of the largest dropped).
With U = blockdiag(U_l), K ~ U A~ U^T and the same three steps run on (A~, g~) with U in place of H
(eq 13-18). Initial metrics in these coordinates are the images A~ = U^T A U of the exact ones:
blockdiag(U_l^T U_l) for "full"/"sparse" (A = I), U_l^T U_m for "cov" and I for "identity".
Test kernels go through the same approximation: U_l(x) = K_l(x, S) V_l diag(s_l)^(-1/2), so the decision
function is f(x) = sum_l w_l U_l(x) g~_l (and sum_l w_l K_l(x, .) g_l without approximation).

Multi-class problems are solved one-vs-all (targets +-1, one metric per class), as in the paper's
experiments; binary problems are one +-1 problem.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from scipy import linalg
from sklearn.utils.validation import check_is_fitted

from numbers import Real

from sklearn.base import _fit_context
from sklearn.utils._param_validation import StrOptions

from .estimators.base import COUNT, NON_NEGATIVE, POSITIVE, SEED, MultiViewClassifier, StrictInterval, check_swamped

__all__ = ["MVML", "MetricNotPSDWarning", "nystrom_features"]

_LEARN_A = ("full", "sparse", "cov", "identity")
_RCOND = 1e-10  # eigenvalues of W_l below _RCOND * max are dropped (pseudo-inverse of Section 3.5)
_PSD_TOL = 1e-10  # A is reported as not PSD when its smallest eigenvalue is below -_PSD_TOL * max |eig|


class MetricNotPSDWarning(UserWarning):
    """The learned block metric A is not positive semidefinite, so K = H A H is not a valid kernel."""


# ----------------------------------------------------------------------------- Nystrom (Section 3.5)


def nystrom_features(K, landmarks, rcond=_RCOND):
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


class _Factor:
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
            self.psd = bool(s[0] >= -_PSD_TOL * scale)
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


def _group_norms(A, offsets):
    """Frobenius norms of the blocks A_lm (v x v)."""
    starts = np.asarray(offsets[:-1], dtype=int)
    sq = np.add.reduceat(np.add.reduceat(A * A, starts, axis=0), starts, axis=1)
    return np.sqrt(sq)


def _group_penalty(A, offsets):
    """Omega(A)/eta = sum over groups gamma of ||A_gamma||_F; an off-diagonal group holds A_lm and A_ml (11)."""
    N = _group_norms(A, offsets)
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


class _DenseMetric:
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


class _CovMetric:
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
            return _DenseMetric(self.dense())
        return self


class _IdentityMetric:
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
            keep = s > _RCOND * max(float(s[-1]), 0.0)
            blocks.append((V[:, keep] / s[keep]) @ V[:, keep].T)
        return linalg.block_diag(*blocks)

    def compact(self):
        """Exact: A = blockdiag(K_l^+) needs the labelled training kernels (kept, m l^2 numbers: no more than
        the training input); Nystrom: A = I, nothing."""
        if not self.exact:
            self.F = None
        return self


class _LowRankMetric:
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
            return _group_norms(self.dense(), offsets)
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


class _Problem:
    """The alternating algorithm (Algorithm 1) for one +-1 target vector."""

    def __init__(self, F, offsets, y, metric, lmbda, eta, learn_A, learn_w, n_iter, n_iter_A, tol, step):
        self.F = F  # list of v feature blocks (n, r_l): K_l (exact) or U_l (Nystrom)
        self.offsets = offsets
        self.y = y
        self.metric = metric
        self.lmbda = lmbda
        self.eta = eta
        self.learn_A = learn_A
        self.learn_w = learn_w
        self.n_iter = n_iter
        self.n_iter_A = n_iter_A
        self.tol = tol
        self.step = step
        self.v = len(F)

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
                fac_c = _Factor(Ac)
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
        fac = _Factor(self.metric.A) if self.learn_A == "sparse" else None
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


# ----------------------------------------------------------------------------- estimator


class MVML(MultiViewClassifier):
    """Multi-view metric learning classifier (Huusari, Kadri & Capponi 2017, Algorithm 1).

    Parameters
    ----------
    lmbda : float > 0, default 0.1
        Regularisation lambda of <g, A^+ g> in (6)-(7) (and (11), (13)-(14)); typical 1e-4 to 1 (the
        paper's experiments use 0.1). Far too large a value gives a RegularizationWarning.
    eta : float >= 0 (> 0 for "full" and "sparse"), default 1.0
        Weight of ||A||_F^2 (full, eq 6) or of sum_gamma ||A_gamma||_F (sparse, eq 11); unused by the
        fixed metrics "cov" and "identity". Typical 0.1 to 10.
    learn_A : "full", "sparse", "cov" or "identity", default "full"
        MVML (gradient steps (9)), MVMLsparse (proximal steps (12)), MVML_Cov (A_lm = I, fixed) or
        MVML_I (one-view kernels on the diagonal, K = H; fixed).
    learn_w : bool, default False
        Learn the view weights w by (10); otherwise w = 1/v (as in the paper's experiments).
    n_iter : int >= 1, default 10
        Maximum number of outer iterations (g-step, w-step, A-step) of Algorithm 1; typical 5 to 50.
    n_iter_A : int >= 1, default 1
        Maximum number of gradient (9) / proximal (12) steps on A per outer iteration; typical 1 to 5.
    tol : float >= 0, default 1e-4
        Outer stop when the objective changes by <= tol relative; inner stop when ||A_new - A||_F <= tol ||A||_F.
    step : float > 0 or None, default None
        Initial step mu of the A-steps, backtracked (halved) until the objective decreases. None is
        0.25 / eta (the paper gives no value). For "full" mu * eta < 1/2 is required (it keeps A positive
        definite, Section 3.2).
    nystrom : float in (0, 1], default 1.0
        Fraction of the training samples used as Nystrom landmarks (Section 3.5); 1.0 = no approximation
        (Algorithm 1a on H and A of size nv x nv, O(n^2 v) memory per fit). The workflow's comparison runs use
        0.06, 0.24 and 1.
    random_state : None, int, sequence of ints, Generator or SeedSequence, default None
        Seeds the random sample ordering that picks the landmarks (shared by all views).
    kernel : "precomputed", "rbf", "linear" or "chi2", default "rbf"
        "precomputed": X holds per-view Gram matrices, sample-first (n_samples, n_samples_fit, m) (the diagonal
        matrix-valued kernel of Section 7.1, eq 93-94; a 2-D X is one view). Each view must be a symmetric
        positive semi-definite (Mercer) kernel, as the paper assumes (Section 2): an indefinite one gives an
        IndefiniteKernelWarning with its lowest eigenvalue and can make the fit meaningless. Otherwise X is a
        feature matrix (n_samples, n_features) cut into views by ``views`` (or a list of per-view arrays), and
        each view gets a Gaussian ("rbf", exp(-||x - z||^2 / (2 sigma^2))), linear or chi2 (exp(-D_chi2 / s),
        non-negative features) kernel with parameters from the training samples only.
    views : None, sequence of int or sequence of index arrays, default None
        The column blocks of X that form the views: sizes (adding up to n_features, in column order) or one
        array of column indices per view (as scikit-multimodallearn's ``views_ind`` of arrays). None: all
        columns are one view. Ignored with "precomputed" and with a list of per-view arrays.
    bandwidth : None, "median", "mean", float > 0, or a sequence with one of these per view, default None
        sigma of "rbf" (a rule over the pairwise distances of the training samples of the view, or a value),
        the scale s of "chi2" (rule over the training chi2 distances, or a value). None: "median" for "rbf",
        "mean" for "chi2" (Gehler & Nowozin 2009, as for Flowers-17). A hyperparameter GridSearchCV can tune;
        typical values are within a factor 10 of the median distance. A value whose 2 sigma^2 overflows or
        underflows float64 is an error; a view whose kernel comes out constant or diagonal gives a
        DegenerateKernelWarning naming it.

    Attributes
    ----------
    classes_ : array (P,)
    A_ : array (n_problems, N, N)
        Learned (or fixed) block metric per binary problem, N = sum of block sizes (n_l v without
        approximation, sum of Nystrom ranks otherwise). n_problems = 1 for two classes, P otherwise
        (one-vs-all). For "identity" without approximation A_ = blockdiag(K_l^+).
    g_ : array (n_problems, N)
    w_ : array (n_problems, v)
    block_norms_ : array (n_problems, v, v)
        Frobenius norms of the blocks A_lm (for a heat map of the learned metric).
    block_sizes_ : array (v,)
    objective_history_ : list of arrays
        Objective (6)/(11)/(13)/(14) after each outer iteration, per problem (non-increasing).
    n_iter_ : array (n_problems,)
    A_is_psd_ : array of bool (n_problems,)
    landmarks_ : array (p,) or None
        Nystrom landmarks, indices into the training samples.
    labelled_ : array (n,)
        Training samples used (all of them: MVML is supervised).
    fit_seconds_ : float
    n_views_ : int
    n_train_ : int
        Training samples n (columns of the kernels at prediction).
    n_features_in_ : int
    bandwidths_ : list or None
        Per-view sigma ("rbf") or scale ("chi2") computed at fit.
    view_columns_ : list of arrays
        Column indices of each view (feature matrix input).

    See Also
    --------
    MVLLeastSquares : the framework of the JMLR paper (fixed, diagonal operator-valued kernel).

    Notes
    -----
    X as for :class:`mvl.MVLLeastSquares`. MVML is supervised: every label of y is a class, -1 included (as
    in scikit-learn's supervised classifiers; there is no unlabelled marker). ``decision_function``: (t,) for two
    classes (positive: ``classes_[1]``), (t, P) one-vs-all.

    The fitted model keeps what prediction needs (g_, w_, the Nystrom maps, the training features of a
    feature-view input) and the learned metric in its compact form (c A_0 plus one rank-one term per A-step;
    A_ and block_norms_ are formed from it on access): no factorisation or n x n cache of the fit.

    References
    ----------
    .. [1] Huusari, R., Kadri, H., & Capponi, C. (2017). Noyaux a valeurs operateurs et apprentissage de metriques
       multi-vues. Conference sur l'Apprentissage automatique (CAp), Grenoble. hal-01774999.

    Examples
    --------
    >>> import numpy as np
    >>> from mvl import MVML
    >>> from mvl.data.embedded import load_mfeat
    >>> ds = load_mfeat(["fou", "kar", "mor"])
    >>> X, rng = np.hstack(ds.views), np.random.default_rng(0)
    >>> idx = rng.permutation(2000)
    >>> train, test = idx[:300], idx[300:]
    >>> model = MVML(views=[76, 64, 6], nystrom=0.5, random_state=0).fit(X[train], ds.y[train])
    >>> bool(model.score(X[test], ds.y[test]) > 0.85), model.block_norms_.shape   # one-vs-all: 10 metrics
    (True, (10, 3, 3))
    """

    def __init__(self, *, lmbda=0.1, eta=1.0, learn_A="full", learn_w=False, n_iter=10, n_iter_A=1, tol=1e-4,
                 step=None, nystrom=1.0, random_state=None, kernel="rbf", views=None, bandwidth=None):
        self.lmbda = lmbda
        self.eta = eta
        self.learn_A = learn_A
        self.learn_w = learn_w
        self.n_iter = n_iter
        self.n_iter_A = n_iter_A
        self.tol = tol
        self.step = step
        self.nystrom = nystrom
        self.random_state = random_state
        self.kernel = kernel
        self.views = views
        self.bandwidth = bandwidth

    # ------------------------------------------------------------------ checks

    def _check_params(self):
        """The parameters as numbers (each validated by its constraint) and the checks that involve several:
        eta > 0 when A is learned, step * eta < 1/2 for learn_A='full'."""
        lmbda, eta, tol = float(self.lmbda), float(self.eta), float(self.tol)
        n_iter, n_iter_A, nys = int(self.n_iter), int(self.n_iter_A), float(self.nystrom)
        if self.learn_A in ("full", "sparse") and eta == 0:
            raise ValueError(f"eta must be > 0 when A is learned (learn_A={self.learn_A!r}), got {self.eta!r}")
        step = None if self.step is None else float(self.step)
        if step is not None and self.learn_A == "full" and step * eta >= 0.5:
            raise ValueError(f"step * eta = {step * eta:g} must be < 1/2 for learn_A='full' (it keeps A "
                             "positive definite, Section 3.2 below eq 9)")
        return lmbda, eta, tol, n_iter, n_iter_A, step, nys

    # ------------------------------------------------------------------ fit / predict

    _parameter_constraints: dict = {
        **MultiViewClassifier._parameter_constraints,
        "lmbda": [POSITIVE],
        "eta": [NON_NEGATIVE],
        "learn_A": [StrOptions(set(_LEARN_A))],
        "learn_w": ["boolean"],
        "n_iter": [COUNT],
        "n_iter_A": [COUNT],
        "tol": [NON_NEGATIVE],
        "step": [None, POSITIVE],
        "nystrom": [StrictInterval(Real, 0, 1, closed="right")],
        "random_state": SEED,
    }
    _memory_advice = "use the Nystrom approximation (e.g. nystrom=0.1, Section 3.5) or fewer training samples"

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit on X (see ``kernel``) and labels ``y`` (n,). MVML is supervised: every label is a class, -1
        included."""
        lmbda, eta, tol, n_iter, n_iter_A, step, nys = self._check_params()
        K = self._fit_kernels(X)
        m, n, _ = K.shape
        y_enc, labelled = self._fit_labels(y, n)
        classes, encoded = self.classes_, y_enc[labelled]
        t0 = time.perf_counter()
        KL = K[:, labelled][:, :, labelled] if labelled.size < n else K
        nl = labelled.size
        p = min(nl, max(1, int(round(nys * nl))))
        exact = nys == 1.0
        N = m * p  # size of the block metric
        dense_metric = self.learn_A == "sparse" or (self.learn_A == "identity" and exact)
        self._check_memory(8.0 * ((2 * m + 3) * nl * nl + (5 * N * N if dense_metric else 2 * m * nl * p)),
                           f"the {self.learn_A!r} metric of {nl} samples and {m} views"
                           + ("" if exact else f" ({p} landmarks)"))
        if exact:
            F = [KL[l] for l in range(m)]
            T = None
            landmarks = None
        else:
            rng = np.random.default_rng(self.random_state)
            order = rng.permutation(nl)  # the random ordering of Section 3.5, shared by all views
            S = np.sort(order[:p])
            F, T = nystrom_features(KL, S)
            landmarks = labelled[S]
        sizes = np.array([f.shape[1] for f in F])
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        P = classes.size
        Y = (np.where(encoded == 1, 1.0, -1.0)[:, None] if P == 2 else
             np.where(encoded[:, None] == np.arange(P)[None, :], 1.0, -1.0))
        learned = self.learn_A in ("full", "sparse")
        self._P_cache = None
        g_all, w_all, hist, psd, A_all = [], [], [], [], []
        if not learned and not self.learn_w:
            # fixed metric and weights: one factorisation of B A B^T + lambda I serves every problem
            metric = self._make_metric(F, exact)
            w = np.full(m, 1.0 / m)
            M = metric.gram(F, w).copy()
            M[np.diag_indices(nl)] += lmbda
            alpha = linalg.solve(M, Y, assume_a="sym", check_finite=False)
            for c in range(Y.shape[1]):
                g_all.append(metric.g_from_alpha(F, w, alpha[:, c]))
                w_all.append(w)
                hist.append(np.array([lmbda * float(Y[:, c] @ alpha[:, c])]))
                psd.append(True)
            fixed_metric = metric
        else:
            for c in range(Y.shape[1]):
                metric = self._make_metric(F, exact)
                prob = _Problem(F, offsets, Y[:, c], metric, lmbda, eta, self.learn_A, bool(self.learn_w), n_iter,
                                n_iter_A, tol, step)
                g, w, h, fac = prob.run()
                ok = fac is None or fac.psd  # "full" stays positive definite by construction (mu eta < 1/2)
                if not ok:
                    warnings.warn(
                        f"MVML (learn_A={self.learn_A!r}): the learned block metric A is not positive "
                        f"semidefinite (smallest eigenvalue {fac.min_eig:.3g}), so K = H A H (eq 5) is not a "
                        "valid kernel; the sparse problem (11) drops the positivity constraint of (6) and the "
                        "paper only observed PSD solutions", MetricNotPSDWarning, stacklevel=2)
                g_all.append(g)
                w_all.append(w)
                hist.append(h)
                psd.append(ok)
                if learned:  # only what A_ and block_norms_ need (no factorisations, no n x n caches)
                    A_all.append(metric.compact())
                del prob, metric, fac
            fixed_metric = None if learned else self._make_metric(F, exact)
        self.fit_seconds_ = time.perf_counter() - t0
        n_prob = Y.shape[1]
        if fixed_metric is not None:
            fixed_metric = fixed_metric.compact()
        self._metrics, self._fixed_metric, self._n_problems = A_all, fixed_metric, n_prob
        self._block_norms = None
        self._P_cache = None
        self.g_ = np.stack(g_all)
        self.w_ = np.stack(w_all)
        self.block_sizes_ = sizes
        self.objective_history_ = hist
        self.n_iter_ = np.array([len(h) for h in hist])
        self.A_is_psd_ = np.array(psd)
        self.landmarks_ = landmarks
        self.labelled_ = labelled
        self._T = T
        self._landmark_pos = None if exact else S
        self._offsets = offsets
        check_swamped(self, self._decision(K[:, labelled]), (("lmbda", lmbda),), encoded)
        return self

    def _make_metric(self, F, exact):
        """A_0 of Algorithm 1 in the coordinates of F (H without approximation, U = blockdiag(U_l) with it):
        the images U^T A U of A = I ("full", "sparse"), A_lm = I ("cov") and A_ll = K_l^+ ("identity")."""
        if self.learn_A == "identity":
            return _IdentityMetric(exact, F)
        sizes = [f.shape[1] for f in F]
        if self.learn_A == "cov":
            return _CovMetric(None if exact else list(F), sizes)
        blocks = None if exact else [f.T @ f for f in F]  # exact: A_0 = I, never formed
        if self.learn_A == "full":
            if self._P_cache is None:  # F_l A0_ll F_l^T, the same for every one-vs-all problem
                self._P_cache = [F[l] @ (F[l].T if exact else blocks[l] @ F[l].T) for l in range(len(F))]
            return _LowRankMetric(blocks, F, self._P_cache, sizes)
        return _DenseMetric(np.eye(sum(sizes)) if exact else linalg.block_diag(*blocks))

    @property
    def A_(self):
        """The block metric per problem, (n_problems, N, N), formed on access (the "full" metric is kept as
        c A_0 + a low-rank term, see :class:`_LowRankMetric`)."""
        self._check_fitted()
        if self._fixed_metric is not None:
            A = self._fixed_metric.dense()
            return np.broadcast_to(A, (self._n_problems,) + A.shape)
        return np.stack([met.dense() for met in self._metrics])

    @property
    def block_norms_(self):
        """Frobenius norms of the blocks A_lm per problem, (n_problems, v, v): a heat map of the metric."""
        self._check_fitted()
        if self._block_norms is None:
            if self._fixed_metric is not None:
                met = self._fixed_metric
                if isinstance(met, _CovMetric):  # A_lm = I_n: every block has norm sqrt(n)
                    nrm = np.full((len(met.sizes),) * 2, np.sqrt(met.sizes[0]))
                else:
                    nrm = _group_norms(met.dense(), self._offsets)
                self._block_norms = np.broadcast_to(nrm, (self._n_problems,) + nrm.shape)
            else:
                self._block_norms = np.stack([met.block_norms(self._offsets) if isinstance(met, _LowRankMetric)
                                              else _group_norms(met.dense(), self._offsets) for met in self._metrics])
        return self._block_norms

    def _check_fitted(self):
        check_is_fitted(self, "g_")

    def _test_features(self, Kt):
        Kt = Kt[:, :, self.labelled_] if self.labelled_.size < self.n_train_ else Kt
        if self._T is None:
            return [Kt[l] for l in range(self.n_views_)]
        S = self._landmark_pos
        return [Kt[l][:, S] @ self._T[l] for l in range(self.n_views_)]

    def _decision(self, Kt):
        """f(x) = sum_l w_l K_l(x, .) g_l (or U_l(x) g~_l with Nystrom): (t,) for two classes
        (positive = ``classes_[1]``), (t, P) one-vs-all scores otherwise."""
        Ft = self._test_features(Kt)
        o = self._offsets
        out = np.stack([sum(w[l] * (Ft[l] @ g[o[l]:o[l + 1]]) for l in range(self.n_views_))
                        for g, w in zip(self.g_, self.w_, strict=True)], axis=1)
        return out[:, 0] if self.classes_.size == 2 else out
