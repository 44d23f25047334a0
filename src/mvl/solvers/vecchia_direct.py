"""MVL-LS in the graph regime by one sparse factorisation: the kernels replaced by Vecchia's approximation
(solver="vecchia"), node values and an out-of-sample rule, and a rule for gamma_A as n grows.

Notation of :mod:`mvl.scalable` and :mod:`mvl.graph_solver`: per view p the coefficients a_p, node values
F_p = K^p a_p, delta = l gamma_A, M = (cc^T (x) J) + beta M_B + omega L^k the sparse operator of the objective's
quadratic part, r_p = c_p J Y; Theorem 10's system (67)-(68) is M K a + delta a = r.

**The approximate system.** With K invertible, (68) in the node values reads

    (M + delta K^{-1}) F* = r,        a* = K^{-1} F* = (r - M F*) / delta,

the objective (10) in F: <F, M F> - 2 r^T F + delta F^T K^{-1} F (the kernel term is delta ||f||_H^2, the
squared RKHS norm of the interpolant of F). Replace K^{-1} by Vecchia's sparse precision
Q_v = (I - B)^T D^{-1} (I - B) (:mod:`mvl.vecchia`: each point conditioned on its q nearest earlier points in a
random order, block diagonal over the views):

    (M + delta Q_v) F_v = r,        a_v = Q_v F_v.

This is the exact MVL-LS solution for the kernel K_v = Q_v^{-1} (a valid positive definite kernel on the training
points: the Gaussian process whose conditionals are Vecchia's), so F_v inherits the model's structure: as
delta -> 0 both F* and F_v tend to the graph term's limit M^{-1} r (when M is invertible). The whole system is one
sparse factorisation of the quasi-definite

    [[M, (I - B)^T], [I - B, -D / delta]] [F; y] = [r; 0]

(eliminating y = delta D^{-1} (I - B) F gives (M + delta Q_v) F = r), the matrix that
:class:`mvl.graph_solver.VecchiaPreconditioner` factors: no kernel pass, no iteration, no n x n array. M needs no
shift: M + delta Q_v is positive definite.

**Error bound.** Let A = M + delta K^{-1}, A_v = M + delta Q_v and e = F_v - F*. From A F* = r = A_v F_v,
A_v e = delta (K^{-1} - Q_v) F*; since A_v >= delta Q_v, ||e||_{A_v}^2 <= delta g^T Q_v^{-1} g with
g = (K^{-1} - Q_v) F*. In the variables u = K^{-1/2} F* (||u||^2 = ||f*||_H^2) and G = K^{1/2} Q_v K^{1/2},
whose spectrum is that of K_v^{-1} K, g^T Q_v^{-1} g = u^T (I - G) G^{-1} (I - G) u, hence per output column

    ||F_v - F*||_{A_v}^2 <= kappa_v delta ||f*||_H^2,        kappa_v = max_{lambda in spec(K_v^{-1} K)} (lambda - 1)^2 / lambda,

the error's energy is at most kappa_v times the kernel term of the exact objective (:func:`error_bound`). Two
things control it: Vecchia's accuracy (kappa_v -> 0 as q grows; q >= n - 1 is exact) and the share of the kernel
term in the objective, which is what the graph regime makes small (delta ||f*||^2 = O(delta) as delta -> 0: the
error vanishes in the graph term's limit, where the exact solution and this one coincide). The energy norm
weighs the error by the graph term (e^T M e <= ||e||_{A_v}^2): smooth along the graph, where the decisions are
made. Measured (tests/solvers/test_vecchia_direct.py; benchmarks/bench_graph_regime.py): the decision values
follow the exact solution's on the graph nodes and on held-out points.

**Out-of-sample values.** The representer theorem gives f_p(x) = k_p(x, X) a_p = k_p(x, X) K^{-1} F_p, the
Gaussian process interpolant of the node values. Under the Vecchia approximation a new point conditions on its
q nearest training points N(x) (the nearest-neighbour Gaussian-process prediction, Datta et al. 2016; Katzfuss
et al. 2020):

    f_p(x) = k_p(x, N(x)) K^p_{N(x) N(x)}^{-1} F_p[N(x)]                                 ("kriging", default),

O(q^3) per point and view, the screening effect's error (the same as Vecchia's on the training points), and at a
training point it returns its node value. ``"representer"`` evaluates k_p(x, X) a_v (O(n) per point and view;
on the training points K Q_v F_v, which differs from F_v by Vecchia's error). The induction formula of Delalleau,
Bengio & Le Roux (AISTATS 2005), f(x) = sum_j W(x, x_j) f_j / sum_j W(x, x_j), is the kriging rule with the
kernel's weights in place of the conditional's (a local average: it shrinks towards the mean where the
neighbours disagree); ``"induction"`` gives it with the q nearest neighbours' kernel weights.

**gamma_A as n grows (:func:`scaled_gamma_A`).** The graph term omega F^T L^s F (normalized Laplacian of a kNN graph
with fixed k, power s) on the node values of a fixed smooth function is n h^{2s} times an integral of the function's
derivatives, h^2 the squared kNN distance (L F ~ h^2 Delta f, Belkin & Niyogi 2008); on a manifold of dimension d,
h^2 ~ (k / n)^{2/d}, so the graph term grows like n^{1 - 2s/d}, while the kernel term ||f||_H^2 and the labelled
term (l fixed) do not depend on n. Keeping the balance that a gamma_A validated at n_ref strikes between the terms
(with gamma_W fixed) gives

    gamma_A(n) = gamma_A(n_ref) * S(n) / S(n_ref),        S(n) = n * mean squared kNN distance(n)^s,

measured on the data (:func:`graph_scale` on a subsample of n_ref points and on all n), or in closed form
gamma_A(n_ref) (n / n_ref)^{1 - 2s/d}. Belkin, Niyogi & Sindhwani (2006) divide the graph term of the unnormalized
Laplacian (a sum over the n k edges) by (l + u)^2 for the same reason: to keep its scale fixed as u grows. With L^2
(s = 2) on curves (d ~ 1) gamma_A falls like n^{-3}; the exponent is measured, not assumed.
"""

from __future__ import annotations

import time

import numpy as np
from scipy import sparse
from scipy.sparse import linalg as sla

__all__ = ["OUT_OF_SAMPLE", "VecchiaFit", "solve_vecchia", "error_bound", "graph_scale", "scaled_gamma_A",
           "fit_estimator"]

OUT_OF_SAMPLE = ("kriging", "representer", "induction")


class VecchiaFit:
    """The result of :func:`solve_vecchia`.

    Attributes
    ----------
    values : ndarray of shape (m, n, P)
        F_v, the node values of every view.
    coef : ndarray of shape (m, n, P)
        a_v = Q_v F_v, the representer coefficients.
    c : ndarray of shape (m,)
        The combination vector: decision values sum_p c_p f_p.
    info : dict
        seconds, setup_seconds (Vecchia factors), factor_seconds, fill (entries of the sparse LU), neighbours (q).
    """

    def __init__(self, values, coef, c, kernels, q, info):
        self.values, self.coef, self.c, self.info = values, coef, c, info
        self._kernels, self._q = kernels, q

    def decision_nodes(self):
        """sum_p c_p F_p on the training points, (n, P)."""
        return np.einsum("p,pnk->nk", self.c, self.values)

    def view_values(self, p, Z, rule="kriging", neighbours=None):
        """f_p at new points Z (t, d_p) of view p, (t, P), by ``rule`` (module docstring)."""
        kernels = self._kernels
        if rule == "representer":
            out = np.zeros((len(Z), self.values.shape[2]))
            for s in range(0, len(Z), 1024):
                out[s:s + 1024] = kernels.cross(p, Z[s:s + 1024]) @ self.coef[p]
            return out
        if rule not in OUT_OF_SAMPLE:
            raise ValueError(f"rule must be one of {OUT_OF_SAMPLE}, got {rule!r}")
        from sklearn.neighbors import NearestNeighbors

        from ..graph import exact_neighbours_method

        q = self._q if neighbours is None else int(neighbours)
        X = kernels.views[p]
        q = min(q, len(X))
        nbr = NearestNeighbors(n_neighbors=q, algorithm=exact_neighbours_method(len(X), X.shape[1])).fit(X)
        idx = nbr.kneighbors(np.asarray(Z, dtype=np.float64), return_distance=False)
        out = np.empty((len(Z), self.values.shape[2]))
        tau = 1e-10
        for s in range(0, len(Z), 4096):
            I = idx[s:s + 4096]
            Zs = np.asarray(Z[s:s + 4096], dtype=np.float64)
            Kzn = np.stack([kernels.cross(p, Zs[[i]], I[i])[0] for i in range(len(I))]) \
                if kernels.kind != "rbf" else _rbf_rows(Zs, X, I, kernels.scales[p])
            Fn = self.values[p][I]  # (b, q, P)
            if rule == "induction":
                w = Kzn / np.maximum(Kzn.sum(axis=1, keepdims=True), np.finfo(float).tiny)
                out[s:s + 4096] = np.einsum("bq,bqk->bk", w, Fn)
                continue
            Knn = _rbf_sets(X, I, kernels.scales[p]) if kernels.kind == "rbf" else \
                np.stack([kernels.square(p, i) for i in I])
            Knn = Knn + tau * np.eye(q)
            out[s:s + 4096] = np.einsum("bq,bqk->bk", Kzn, np.linalg.solve(Knn, Fn))
        return out

    def decision_function(self, views, rule="kriging", neighbours=None):
        """sum_p c_p f_p at new points given as a list of m view arrays (t, d_p), (t, P)."""
        return sum(self.c[p] * self.view_values(p, V, rule, neighbours) for p, V in enumerate(views))


def _rbf_rows(Z, X, I, sigma):
    d2 = np.einsum("bqd,bqd->bq", X[I], X[I]) - 2 * np.einsum("bqd,bd->bq", X[I], Z) + np.einsum("bd,bd->b", Z, Z)[:, None]
    return np.exp(-np.maximum(d2, 0.0) / (2.0 * sigma ** 2))


def _rbf_sets(X, I, sigma):
    Xs = X[I]
    sq = np.einsum("bqd,bqd->bq", Xs, Xs)
    d2 = sq[:, :, None] + sq[:, None, :] - 2 * np.einsum("bqd,brd->bqr", Xs, Xs)
    return np.exp(-np.maximum(d2, 0.0) / (2.0 * sigma ** 2))


def solve_vecchia(system, kernels, neighbours=None, random_state=0, factors=None):
    """F_v = (M + delta Q_v)^{-1} r and a_v = Q_v F_v (module docstring) by one sparse LU of the quasi-definite
    system; returns a :class:`VecchiaFit`.

    Parameters
    ----------
    system : mvl.scalable.MVLSystem
        The operator M, the labels and delta (complete views).
    kernels : mvl.kernel_blocks.ViewKernels
        The training kernels (feature views or Gram matrices).
    neighbours : int, optional
        q, the earlier points each point conditions on (default :data:`mvl.vecchia.VECCHIA_NEIGHBOURS`).
    random_state : int, default 0
        Seed of the Vecchia orderings (view p uses random_state + p).
    factors : list, optional
        Precomputed :func:`mvl.graph_solver.vecchia_factors`.

    Returns
    -------
    VecchiaFit
        Node values, coefficients and the out-of-sample rule.
    """
    from ..graph_solver import shifted_operator, vecchia_factors
    from ..vecchia import VECCHIA_NEIGHBOURS

    if system.mask is not None:
        raise ValueError('solver="vecchia" needs complete views')
    t0 = time.perf_counter()
    q = VECCHIA_NEIGHBOURS if neighbours is None else int(neighbours)
    if factors is None:
        factors = vecchia_factors(kernels, q, random_state)
    t1 = time.perf_counter()
    m, n, delta = system.m, system.n, system.delta
    N = m * n
    IB = sparse.block_diag([f[0] for f in factors], format="csr")
    d = np.concatenate([f[1] for f in factors])
    M, _ = shifted_operator(system, 0.0)
    aug = sparse.bmat([[M, IB.T], [IB, sparse.diags(-d / delta)]], format="csc")
    lu = sla.splu(aug, permc_spec="MMD_AT_PLUS_A")
    fill = int(lu.L.nnz + lu.U.nnz)
    r = system.rhs().reshape(N, -1)
    F = lu.solve(np.vstack([r, np.zeros_like(r)]))[:N]
    del lu
    a = np.asarray(IB.T @ ((IB @ F) / d[:, None]))
    P = r.shape[1]
    info = dict(seconds=time.perf_counter() - t0, setup_seconds=t1 - t0, factor_seconds=time.perf_counter() - t1,
                fill=fill, neighbours=q)
    return VecchiaFit(F.reshape(m, n, P), a.reshape(m, n, P), system.c.copy(), kernels, q, info)


def error_bound(kernel_term, kappa):
    """The bound ||F_v - F*||_{A_v}^2 <= kappa_v delta ||f*||_H^2 of the module docstring.

    Parameters
    ----------
    kernel_term : float or ndarray
        delta ||f*||_H^2 = delta F*^T K^{-1} F* per output column.
    kappa : float
        max (lambda - 1)^2 / lambda over the spectrum of K_v^{-1} K.

    Returns
    -------
    float or ndarray
        The bound on the squared energy norm of the error.
    """
    return kappa * np.asarray(kernel_term)


def graph_scale(views, n_neighbors, power, sample=None, random_state=0):
    """S = n * h^(2 s) of the module docstring: n times the mean, over the views, of the mean squared distance to
    the ``n_neighbors``-th... mean over the k nearest neighbours, to the power ``power`` (s).

    Parameters
    ----------
    views : list of ndarray
        The m feature arrays (n, d_p).
    n_neighbors : int
        k of the kNN graphs.
    power : int
        s, the Laplacian power.
    sample : int, optional
        Measure on this many uniformly drawn points (S at that n) instead of all.
    random_state : int, default 0
        Seed of the subsample.

    Returns
    -------
    float
        The graph term's scale at that number of points.
    """
    from sklearn.neighbors import NearestNeighbors

    from ..graph import exact_neighbours_method

    n = len(views[0])
    idx = np.arange(n)
    if sample is not None and sample < n:
        idx = np.sort(np.random.default_rng(random_state).choice(n, int(sample), replace=False))
    h2 = []
    for V in views:
        X = np.asarray(V, dtype=np.float64)[idx]
        probe = X[:min(len(X), 4000)]
        nn = NearestNeighbors(n_neighbors=n_neighbors + 1, algorithm=exact_neighbours_method(len(X), X.shape[1]))
        dist, _ = nn.fit(X).kneighbors(probe)
        h2.append(np.mean(dist[:, 1:] ** 2))
    return len(idx) * float(np.mean(h2)) ** int(power)


def scaled_gamma_A(gamma_A_ref, n_ref, n, power=2, dim=None, views=None, n_neighbors=10, random_state=0):
    """gamma_A at n training points that strikes the balance gamma_A_ref struck at n_ref (module docstring).

    Parameters
    ----------
    gamma_A_ref : float
        gamma_A validated at n_ref points.
    n_ref, n : int
        The reference and the working numbers of training points.
    power : int, default 2
        s, the Laplacian power.
    dim : float, optional
        The data's intrinsic dimension d: closed form gamma_A_ref (n / n_ref)^(1 - 2 s / d).
    views : list of ndarray, optional
        The n training points' views (used when ``dim`` is None): S(n) / S(n_ref) measured by
        :func:`graph_scale` on all n points and on a subsample of n_ref.
    n_neighbors : int, default 10
        k of the kNN graphs (with ``views``).
    random_state : int, default 0
        Seed of the subsample (with ``views``).

    Returns
    -------
    float
        gamma_A for n points.
    """
    if dim is not None:
        return float(gamma_A_ref) * (n / n_ref) ** (1.0 - 2.0 * power / float(dim))
    if views is None:
        raise ValueError("give the intrinsic dimension dim or the training views")
    full = graph_scale(views, n_neighbors, power)
    ref = graph_scale(views, n_neighbors, power, sample=n_ref, random_state=random_state)
    return float(gamma_A_ref) * full / ref


def fit_estimator(est, X, y, neighbours=None):
    """Fit :func:`solve_vecchia` with an unfitted ``MVLLeastSquares``'s parameters on (X, y), -1 unlabelled.

    Parameters
    ----------
    est : mvl.MVLLeastSquares
        Its kernel, graph and gammas are used (complete feature views, a kNN graph).
    X : array-like
        Training inputs as the estimator takes them.
    y : array-like
        Labels, -1 for unlabelled points.
    neighbours : int, optional
        q of Vecchia and of the kriging rule.

    Returns
    -------
    VecchiaFit
        The fit; ``est.classes_`` and its input state are set, so ``est._feature_views(Xt, reset=False)`` splits new points.
    """
    from ..least_squares import scalable_problem

    kernels, system, _, _, _ = scalable_problem(est, X, y, "graph", 0)
    return solve_vecchia(system, kernels, neighbours=neighbours, random_state=est.random_state or 0)
