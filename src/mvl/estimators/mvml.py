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

from ..docstrings import shared_parameters
from .base import COUNT, NON_NEGATIVE, POSITIVE, SEED, MultiViewClassifier, StrictInterval, check_swamped

from ..solvers.mvml import (
    CovMetric,
    DenseMetric,
    IdentityMetric,
    LowRankMetric,
    MVMLProblem,
    group_norms,
    nystrom_features,
)

__all__ = ["MVML", "MetricNotPSDWarning"]

_LEARN_A = ("full", "sparse", "cov", "identity")


class MetricNotPSDWarning(UserWarning):
    """The learned block metric A is not positive semidefinite, so K = H A H is not a valid kernel."""


# ----------------------------------------------------------------------------- estimator


@shared_parameters
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
    {kernel, views, bandwidth}

    Attributes
    ----------
    classes_ : array (P,)
    A_ : array (n_problems, N, N)
        Learned (or fixed) block metric per binary problem, N = sum of block sizes (n_l v without
        approximation, sum of Nystrom ranks otherwise). n_problems = 1 for two classes, P otherwise
        (one-vs-all). For "identity" without approximation ``A_ = blockdiag(K_l^+)``.
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
    {view_attributes}

    See Also
    --------
    MVLLeastSquares : the framework of the JMLR paper (fixed, diagonal operator-valued kernel).

    Notes
    -----
    X as for :class:`mvl.MVLLeastSquares`. MVML is supervised: every label of y is a class, -1 included (as
    in scikit-learn's supervised classifiers; there is no unlabelled marker). ``decision_function``: (t,) for two
    classes (positive: ``classes_[1]``), (t, P) one-vs-all.

    The fitted model keeps what prediction needs (``g_``, ``w_``, the Nystrom maps, the training features of a
    feature-view input) and the learned metric in its compact form (c A_0 plus one rank-one term per A-step;
    ``A_`` and ``block_norms_`` are formed from it on access): no factorisation or n x n cache of the fit.

    References
    ----------
    .. [1] Huusari, R., Kadri, H., & Capponi, C. (2017). Noyaux a valeurs operateurs et apprentissage de metriques
       multi-vues. Conference sur l'Apprentissage automatique (CAp), Grenoble. hal-01774999.

    {mfeat_example}
    >>> from mvl import MVML
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
                prob = MVMLProblem(F, offsets, Y[:, c], metric, lmbda, eta, self.learn_A, bool(self.learn_w),
                                   n_iter, n_iter_A, tol, step)
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
            return IdentityMetric(exact, F)
        sizes = [f.shape[1] for f in F]
        if self.learn_A == "cov":
            return CovMetric(None if exact else list(F), sizes)
        blocks = None if exact else [f.T @ f for f in F]  # exact: A_0 = I, never formed
        if self.learn_A == "full":
            if self._P_cache is None:  # F_l A0_ll F_l^T, the same for every one-vs-all problem
                self._P_cache = [F[l] @ (F[l].T if exact else blocks[l] @ F[l].T) for l in range(len(F))]
            return LowRankMetric(blocks, F, self._P_cache, sizes)
        return DenseMetric(np.eye(sum(sizes)) if exact else linalg.block_diag(*blocks))

    @property
    def A_(self):
        """The block metric per problem, (n_problems, N, N), formed on access (the "full" metric is kept as
        c A_0 + a low-rank term, see :class:`mvl.solvers.mvml.LowRankMetric`)."""
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
                if isinstance(met, CovMetric):  # A_lm = I_n: every block has norm sqrt(n)
                    nrm = np.full((len(met.sizes),) * 2, np.sqrt(met.sizes[0]))
                else:
                    nrm = group_norms(met.dense(), self._offsets)
                self._block_norms = np.broadcast_to(nrm, (self._n_problems,) + nrm.shape)
            else:
                self._block_norms = np.stack([met.block_norms(self._offsets) if isinstance(met, LowRankMetric)
                                              else group_norms(met.dense(), self._offsets) for met in self._metrics])
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
