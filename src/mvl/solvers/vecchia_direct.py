"""MVL-LS in the graph regime by one sparse factorisation: the kernels replaced by Vecchia's approximation
(:func:`solve_vecchia`, :func:`fit_estimator`; not a ``solver=`` value of the estimators), node values and an
out-of-sample rule, and a rule for gamma_A as n grows.

Notation of :mod:`mvl.solvers.system` and :mod:`mvl.solvers.graph`: per view p the coefficients a_p, node values
F_p = K^p a_p, delta = l gamma_A, M = (cc^T (x) J) + beta M_B + omega L^k the sparse operator of the objective's
quadratic part, r_p = c_p J Y; Theorem 10's system (67)-(68) is M K a + delta a = r.

**The approximate system.** With K invertible, (68) in the node values reads

    (M + delta K^{-1}) F* = r,        a* = K^{-1} F* = (r - M F*) / delta,

the objective (10) in F: <F, M F> - 2 r^T F + delta F^T K^{-1} F (the kernel term is delta ||f||_H^2, the
squared RKHS norm of the interpolant of F). Replace K^{-1} by Vecchia's sparse precision
Q_v = (I - B)^T D^{-1} (I - B) (:mod:`mvl.solvers.vecchia`: each point conditioned on its q nearest earlier points in a
random order, block diagonal over the views):

    (M + delta Q_v) F_v = r,        a_v = Q_v F_v.

This is the exact MVL-LS solution for the kernel K_v = Q_v^{-1} (a valid positive definite kernel on the training
points: the Gaussian process whose conditionals are Vecchia's), so F_v inherits the model's structure: as
delta -> 0 both F* and F_v tend to the graph term's limit M^{-1} r (when M is invertible). The whole system is one
sparse factorisation of the quasi-definite

    [[M, (I - B)^T], [I - B, -D / delta]] [F; y] = [r; 0]

(eliminating y = delta D^{-1} (I - B) F gives (M + delta Q_v) F = r), the matrix that
:class:`mvl.solvers.graph.VecchiaPreconditioner` factors: no kernel pass, no iteration, no n x n array. M needs no
shift: M + delta Q_v is positive definite.

**Error bound.** Let A = M + delta K^{-1}, A_v = M + delta Q_v and e = F_v - F*. From A F* = r = A_v F_v,
A_v e = delta (K^{-1} - Q_v) F*; since A_v >= delta Q_v, ||e||_{A_v}^2 <= delta g^T Q_v^{-1} g with
g = (K^{-1} - Q_v) F*. In the variables u = K^{-1/2} F* (||u||^2 = ||f*||_H^2) and G = K^{1/2} Q_v K^{1/2},
whose spectrum is that of K_v^{-1} K, g^T Q_v^{-1} g = u^T (I - G) G^{-1} (I - G) u, hence per output column

    ||F_v - F*||_{A_v}^2 <= kappa_v delta ||f*||_H^2,    kappa_v = max (lambda - 1)^2 / lambda over spec(K_v^{-1} K),

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

**gamma_A as n grows (:func:`share_gamma_A`).** Expanding the exact solution around delta -> 0,
F* = F0 - delta M^{-1} K^{-1} F0 + O(delta^2) with F0 = M^{-1} r the graph term's limit (M invertible), and the
objective at F* splits into the labelled and graph terms, F0^T M F0 = r^T M^{-1} r to first order, and the kernel
term delta ||f0||_H^2 = delta F0^T K^{-1} F0. What decides whether the fit follows the graph is the kernel term's
share of the objective,

    theta = delta ||f0||_H^2 / (F0^T M F0 + delta ||f0||_H^2),

and it does not stay fixed as n grows at a fixed gamma_A: with a narrow kernel the RKHS norm of the function that
takes the graph limit's values at n points grows with n (measured on the graph6 data of ``bench_scale.py``:
||f0||^2 = 8.6e4, 1.2e5, 5.2e6 at 2,000, 8,000, 32,000 points, while F0^T M F0 stays ~180), hence the validated
gamma_A fell with n. The rule holds theta at a target: delta = theta / (1 - theta) F0^T M F0 / ||f0||_H^2,
gamma_A = delta / l, with both energies measured by one Vecchia solve at delta ~ 0 (F0 from :func:`solve_vecchia`,
||f0||^2 ~ F0^T Q_v F0). The target :data:`KERNEL_SHARE` is set from graph6, where every gamma_A validated at
2,000-32,000 points lies at theta <= 1.5e-2 and those reaching Laplace learning at theta <= 2e-3
(benchmarks/README.md). It also sets this solver's error: by the bound above the error's energy is at most kappa_v
theta / (1 - theta) times F0^T M F0. A scaling from the kNN distances alone (the graph term of a fixed smooth
function, n h^{2s}, h the kNN distance) does not follow this data: in 20-40 noisy dimensions h shrinks slowly and
predicts a growing gamma_A. Belkin, Niyogi & Sindhwani (2006) divide the graph term by (l + u)^2 for a fixed
function's scale; here the function's kernel norm is what moves. Where the kernel term carries the fit (theta
of order 1 at the validated gamma_A: not the graph regime), :func:`transfer_gamma_A` keeps the validated theta
instead of a fixed target: on mfeat (400 training points, 3 labels per class, the same graph keywords) the best
gamma_A is 1e-3 (held-out 0.895, 0.405 at 1e-6) and the fixed target gives 6e-14 (0.120). The fixed target is for
the measured graph regime (:func:`mvl.solvers.auto.measured_regime` >= 1) only.
"""

from __future__ import annotations

import time
import warnings

import numpy as np
from scipy import sparse
from scipy.sparse import linalg as sla

from .problem import Solver, SolverResult, VecchiaDetails
from .rules import RepresenterRule

__all__ = ["OUT_OF_SAMPLE", "VecchiaFit", "QuasiDefiniteFactor", "VecchiaSystem", "solve_vecchia", "error_bound",
           "KERNEL_SHARE", "limit_energies", "share_gamma_A", "kernel_share", "transfer_gamma_A", "fit_estimator",
           "problem", "LIMIT_MARGIN", "limit_margin_ratio", "LIMIT_BALANCE", "limit_class_balance",
           "VecchiaDirectSolver"]

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

    def __init__(self, values, coef, c, kernels, q, info, factors=None):
        self.values, self.coef, self.c, self.info = values, coef, c, info
        self._kernels, self._q, self._factors, self._rows = kernels, q, factors, {}

    def decision_nodes(self):
        """sum_p c_p F_p on the training points, (n, P)."""
        return np.einsum("p,pnk->nk", self.c, self.values)

    def kernel_rows(self, neighbours=None):
        """Vecchia's kernel rows for new points (:class:`mvl.solvers.vecchia_kriging.VecchiaKernels`), with q =
        ``neighbours`` (default the fit's)."""
        from .vecchia_kriging import VecchiaKernels

        q = self._q if neighbours is None else int(neighbours)
        if q not in self._rows:
            self._rows[q] = VecchiaKernels(self._kernels, self._factors, self.coef, self.values, q)
        return self._rows[q]

    def view_values(self, p, Z, rule="kriging", neighbours=None):
        """f_p at new points Z (t, d_p) of view p, (t, P), by ``rule`` (module docstring)."""
        if rule == "representer":
            out = np.zeros((len(Z), self.values.shape[2]))
            for s in range(0, len(Z), 1024):
                out[s:s + 1024] = self._kernels.cross(p, Z[s:s + 1024]) @ self.coef[p]
            return out
        if rule not in OUT_OF_SAMPLE:
            raise ValueError(f"rule must be one of {OUT_OF_SAMPLE}, got {rule!r}")
        rows = self.kernel_rows(neighbours)
        out = np.empty((len(Z), self.values.shape[2]))
        for s in range(0, len(Z), 4096):
            out[s:s + 4096] = rows.weights(p, Z[s:s + 4096], rule) @ self.values[p]
        return out

    def decision_function(self, views, rule="kriging", neighbours=None):
        """sum_p c_p f_p at new points given as a list of m view arrays (t, d_p), (t, P)."""
        return sum(self.c[p] * self.view_values(p, V, rule, neighbours) for p, V in enumerate(views))


class QuasiDefiniteFactor:
    """A symmetric fill-reducing factorisation of the quasi-definite matrix [[M, (I - B)^T], [I - B, -D / delta]] of
    the module docstring, refactored numerically at another delta without a new ordering.

    By ``qdldl`` (LDL^T with an approximate minimum degree ordering, the sparse factorisation for quasi-definite
    matrices: every such matrix is strongly factorisable, L D L^T with D of the inertia's signs under any symmetric
    ordering, so no pivoting; Vanderbei 1995) when installed; otherwise by SuperLU in symmetric mode (minimum degree
    on A^T + A, diagonal pivots). Why symmetric: SuperLU's default partial pivoting on this matrix fills 3x more
    (measured at 8,000 points, graph6: 1.9e7 entries against 6.7e6) and at 100,000 points exceeded 11 GB; symmetric
    mode 2.2e8 entries, 6.7 GB, 77 s; qdldl 4.5 GB, 49 s (benchmarks/README.md).

    Parameters
    ----------
    M : scipy.sparse matrix
        The operator M (N x N, symmetric positive semi-definite).
    IB : scipy.sparse matrix
        I - B, Vecchia's unit lower triangular factor (N x N, block diagonal over the views).
    d : ndarray of shape (N,)
        Vecchia's conditional variances D.
    delta : float
        l gamma_A.

    Attributes
    ----------
    method : str
        "qdldl" or "superlu".
    fill : int
        Entries of the factors.
    """

    def __init__(self, M, IB, d, delta):
        self.N, self._d = M.shape[0], np.asarray(d, dtype=np.float64)
        aug = sparse.bmat([[M, IB.T], [IB, sparse.diags(-self._d / delta)]], format="csc")
        aug.sort_indices()
        coo_cols = np.repeat(np.arange(aug.shape[1]), np.diff(aug.indptr))
        # the entries of the -D / delta block (its diagonal): what a new delta changes
        self._diag = np.flatnonzero((aug.indices == coo_cols) & (coo_cols >= self.N))
        self._aug, self.delta = aug, float(delta)
        off = IB.tocoo()
        self._identity = not np.any(off.data[off.row != off.col])  # Vecchia's B = 0: K numerically I
        try:
            import qdldl
        except ImportError:  # pragma: no cover - qdldl is a dependency; SuperLU is the fallback
            qdldl = None
        self.method = "superlu" if qdldl is None else "qdldl"
        self._factor(qdldl)

    def _factor(self, qdldl=None):
        if self.method == "qdldl":
            if getattr(self, "_qd", None) is None:
                try:
                    self._qd = qdldl.Solver(self._aug)
                except RuntimeError as err:  # qdldl's message names neither the cause nor the user's parameter
                    raise self._factor_error() from err
            else:
                self._qd.update(self._aug)  # numeric only: the ordering and the elimination tree are kept
            if getattr(self, "fill", None) is None:  # the pattern is kept by a refactor
                self.fill = int(self._qd.factors()[0].nnz) + self._aug.shape[0]
        else:
            self._lu = sla.splu(self._aug, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                                options=dict(SymmetricMode=True))
            self.fill = int(self._lu.L.nnz + self._lu.U.nnz)

    def _factor_error(self):
        """The ValueError for a failed factorisation. LDL^T without pivoting needs M positive definite on the
        pivots it meets: a node with no graph edge and no label has a zero row of M; Vecchia's B = 0 means the
        kernel is numerically the identity, which with kernel graph weights empties the graph too."""
        isolated = int(np.count_nonzero(self._aug.diagonal()[:self.N] == 0))
        if not (isolated or self._identity):
            return ValueError('solver="vecchia_direct" could not factor its quasi-definite system; use solver="cg"')
        rows = f"{isolated} of {self.N} node values have no graph edge and no label; " if isolated else ""
        return ValueError(
            f'solver="vecchia_direct" could not factor its system: {rows}the kernel is numerically the identity on '
            'these data (no two samples are alike, so the kernel graph weights underflow to 0): `bandwidth` is too '
            'small for the data\'s scale; raise it or leave it at its default (None: the median rule)')

    def refactor(self, delta):
        """The factorisation at another delta (same pattern)."""
        if float(delta) != self.delta:
            self._aug.data[self._diag] = -self._d / float(delta)
            self.delta = float(delta)
            self._factor()
        return self

    def solve_values(self, R):
        """F = (M + delta Q_v)^{-1} R for R of shape (N, P): the first half of the quasi-definite system's solution."""
        rhs = np.vstack([R, np.zeros_like(R)])
        if self.method == "qdldl":
            return np.column_stack([self._qd.solve(rhs[:, k])[:self.N] for k in range(R.shape[1])])
        return self._lu.solve(rhs)[:self.N]


class VecchiaSystem:
    """The approximate system (M + delta Q_v) F = r of the module docstring, set up once (Vecchia's factors, the
    operator M, the ordering of the factorisation) and solved at any delta (:meth:`VecchiaSystem.fit`): the gamma_A
    rule's solve at the graph limit and the fit share one symbolic factorisation.

    Parameters
    ----------
    system : mvl.solvers.system.MVLSystem
        The operator M, the labels and delta (complete views).
    kernels : mvl.kernel_blocks.ViewKernels
        The training kernels (feature views or Gram matrices).
    neighbours : int, optional
        q, the earlier points each point conditions on (default :data:`mvl.solvers.vecchia.VECCHIA_NEIGHBOURS`).
    random_state : int, default 0
        Seed of the Vecchia orderings (view p uses random_state + p).
    factors : list, optional
        Precomputed :func:`mvl.solvers.graph.vecchia_factors`.
    """

    def __init__(self, system, kernels, neighbours=None, random_state=0, factors=None):
        from .graph import sparse_operator, vecchia_factors
        from .vecchia import VECCHIA_NEIGHBOURS

        if system.mask is not None:
            raise ValueError('solver="vecchia_direct" needs complete views')
        t0 = time.perf_counter()
        self.q = VECCHIA_NEIGHBOURS if neighbours is None else int(neighbours)
        if factors is None:
            factors = vecchia_factors(kernels, self.q, random_state)
        self.system, self.kernels, self.factors = system, kernels, factors
        self.IB = sparse.block_diag([f[0] for f in factors], format="csr")
        self.d = np.concatenate([f[1] for f in factors])
        self.M = sparse_operator(system)
        self.setup_seconds = time.perf_counter() - t0
        self.factor = None

    def fit(self, delta=None):
        """The :class:`VecchiaFit` at ``delta`` (default the system's l gamma_A)."""
        t0 = time.perf_counter()
        system = self.system
        delta = system.delta if delta is None else float(delta)
        if self.factor is None:
            self.factor = QuasiDefiniteFactor(self.M, self.IB, self.d, delta)
        else:
            self.factor.refactor(delta)
        t1 = time.perf_counter()
        m, n = system.m, system.n
        r = system.rhs().reshape(m * n, -1)
        F = self.factor.solve_values(r)
        a = np.asarray(self.IB.T @ ((self.IB @ F) / self.d[:, None]))  # Q_v F
        P = r.shape[1]
        # the true relative residual of the system solved, (M + delta Q_v) F = r: one sparse product
        rnorm = np.linalg.norm(r)
        residual = float(np.linalg.norm(r - self.M @ F - delta * a) / (rnorm if rnorm > 0 else 1.0))
        info = dict(seconds=time.perf_counter() - t0 + self.setup_seconds, setup_seconds=self.setup_seconds,
                    factor_seconds=t1 - t0, fill=self.factor.fill, factorisation=self.factor.method,
                    neighbours=self.q, residual=residual)
        self.setup_seconds = 0.0  # counted once
        return VecchiaFit(F.reshape(m, n, P), a.reshape(m, n, P), system.c.copy(), self.kernels, self.q, info,
                          self.factors)


def solve_vecchia(system, kernels, neighbours=None, random_state=0, factors=None):
    """F_v = (M + delta Q_v)^{-1} r and a_v = Q_v F_v (module docstring) by one sparse symmetric factorisation of the
    quasi-definite system (:class:`QuasiDefiniteFactor`); returns a :class:`VecchiaFit`. The parameters are those of
    :class:`VecchiaSystem`.

    Returns
    -------
    VecchiaFit
        Node values, coefficients and the out-of-sample rule.
    """
    return VecchiaSystem(system, kernels, neighbours, random_state, factors).fit()


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


KERNEL_SHARE = 1e-3
"""The kernel term's target share of the objective at the graph limit (:func:`share_gamma_A`)."""


def limit_energies(system, kernels, neighbours=None, random_state=0, factors=None,
                   vsystem=None):
    """(F0^T M F0, ||f0||_H^2) of the graph term's limit F0 (module docstring), summed over the output columns:
    :class:`VecchiaSystem` at delta = 1e-12 l, ||f0||^2 by Vecchia's F0^T Q_v F0.

    Parameters
    ----------
    system : mvl.solvers.system.MVLSystem
        The problem (its delta is not used).
    kernels : mvl.kernel_blocks.ViewKernels
        The training kernels.
    neighbours : int, optional
        q of Vecchia.
    random_state : int, default 0
        Seed of the Vecchia orderings.
    factors : list, optional
        Precomputed :func:`mvl.solvers.graph.vecchia_factors`.
    vsystem : VecchiaSystem, optional
        The same problem's :class:`VecchiaSystem` (its factorisation is reused and left at the limit's delta).

    Returns
    -------
    tuple of float
        The labelled and graph energy, the kernel energy.
    """
    vs = VecchiaSystem(system, kernels, neighbours, random_state, factors) if vsystem is None else vsystem
    return _limit(vs)[1:]


def _limit(vs):
    """(the :class:`VecchiaFit` at delta = 1e-12 l, F0^T M F0, F0^T Q_v F0) of a :class:`VecchiaSystem`: the graph
    term's limit and its two energies, summed over the output columns (:func:`limit_energies`)."""
    fit = vs.fit(1e-12 * vs.system.l)
    F = fit.values.reshape(-1, fit.values.shape[2])
    return fit, float(np.sum(F * (vs.M @ F))), float(np.sum(F * fit.coef.reshape(F.shape)))


def share_gamma_A(system, kernels, share=KERNEL_SHARE, neighbours=None, random_state=0, factors=None,
                  vsystem=None):
    """gamma_A at which the kernel term is ``share`` of the objective at the graph limit (module docstring):
    gamma_A = share / (1 - share) F0^T M F0 / (l ||f0||_H^2).

    Parameters
    ----------
    system : mvl.solvers.system.MVLSystem
        The problem at the working n (gamma_W, gamma_B, the graphs; its gamma_A is not used).
    kernels : mvl.kernel_blocks.ViewKernels
        The training kernels.
    share : float, default KERNEL_SHARE
        theta, in (0, 1).
    neighbours : int, optional
        q of Vecchia.
    random_state : int, default 0
        Seed of the Vecchia orderings.
    factors : list, optional
        Precomputed :func:`mvl.solvers.graph.vecchia_factors`.
    vsystem : VecchiaSystem, optional
        The same problem's :class:`VecchiaSystem` (its factorisation is reused and left at the limit's delta).

    Returns
    -------
    float
        gamma_A.
    """
    if not 0 < share < 1:
        raise ValueError(f"share must be in (0, 1), got {share}")
    graph, kern = limit_energies(system, kernels, neighbours, random_state, factors, vsystem)
    return share / (1.0 - share) * graph / (system.l * kern)


def kernel_share(system, kernels, neighbours=None, random_state=0, factors=None,
                 vsystem=None):
    """theta of the module docstring at the system's own delta: the kernel term's share of the objective at the
    graph limit (what "auto" can report when a fixed gamma_A leaves the graph regime's fit to the kernel).

    Parameters
    ----------
    system : mvl.solvers.system.MVLSystem
        The problem.
    kernels : mvl.kernel_blocks.ViewKernels
        The training kernels.
    neighbours : int, optional
        q of Vecchia.
    random_state : int, default 0
        Seed of the Vecchia orderings.
    factors : list, optional
        Precomputed :func:`mvl.solvers.graph.vecchia_factors`.
    vsystem : VecchiaSystem, optional
        The same problem's :class:`VecchiaSystem` (its factorisation is reused and left at the limit's delta).

    Returns
    -------
    float
        delta ||f0||^2 / (F0^T M F0 + delta ||f0||^2).
    """
    graph, kern = limit_energies(system, kernels, neighbours, random_state, factors, vsystem)
    return system.delta * kern / (graph + system.delta * kern)


def transfer_gamma_A(gamma_A_ref, reference, target, neighbours=None, random_state=0):
    """gamma_A at the target problem that keeps the kernel share theta that ``gamma_A_ref`` gives the reference
    problem (module docstring): theta_ref = :func:`kernel_share` at (reference, gamma_A_ref), then
    :func:`share_gamma_A` (target, theta_ref). A gamma_A validated on a subsample carried to all n points.

    Parameters
    ----------
    gamma_A_ref : float
        gamma_A validated on the reference problem.
    reference, target : tuple
        (kernels, system) of the reference (e.g. a subsample) and the working problem, as :func:`problem`
        returns them.
    neighbours : int, optional
        q of Vecchia.
    random_state : int, default 0
        Seed of the Vecchia orderings.

    Returns
    -------
    float
        gamma_A for the target problem.
    """
    import copy

    kernels, system = reference
    ref = copy.copy(system)
    ref.delta = system.l * float(gamma_A_ref)
    theta = kernel_share(ref, kernels, neighbours, random_state)
    return share_gamma_A(target[1], target[0], share=theta, neighbours=neighbours, random_state=random_state)


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
        The fit; ``est.classes_`` and its input state are set, so new points can be
        split into views.
    """
    kernels, system = problem(est, X, y)
    return solve_vecchia(system, kernels, neighbours=neighbours, random_state=est.random_state or 0)


def problem(est, X, y):
    """(kernels, system) of an unfitted ``MVLLeastSquares`` on (X, y), as :func:`fit_estimator` builds them (for
    :func:`share_gamma_A`); sets ``est.classes_`` and the input state."""
    from .graph import GraphSolver

    prob = est.operator_problem(X, y, GraphSolver())
    return prob.kernels, prob.system


LIMIT_MARGIN = 0.3
"""``gamma_A="auto"`` takes the rule (:func:`share_gamma_A`) only where the graph term's limit is not degenerate:
:func:`limit_margin_ratio` at least this; otherwise it keeps :data:`mvl.estimators.base.AUTO_GAMMA_A`. Measured
(``benchmarks/bench_gamma_rule.py``; benchmarks/README.md): 0.99 on graph6 at 8,000 points, where the rule reaches
Laplace learning; 0.5 on the tests' 240-point manifold data, 0.7-0.8 on mfeat; 0.18 on multi-view MNIST with the
package defaults, where the limit is the few-label degenerate one (constant away from the labels) and the rule gave
0.65 held-out accuracy against 0.77 at 1e-5. A threshold between two data sets' values, not a validated one."""


def limit_margin_ratio(decision, labelled):
    """The median margin (largest minus second largest decision value; the absolute value for one output) of the
    graph term's limit on the unlabelled nodes over that on the labelled nodes: near 1 when the limit carries the
    labels along the graph, small when it is the few-label degenerate solution, nearly constant away from the labels
    (Calder et al. 2020).

    Parameters
    ----------
    decision : ndarray of shape (n, P)
        The limit's decision values on the training points (:meth:`VecchiaFit.decision_nodes`).
    labelled : ndarray of shape (l,)
        Indices of the labelled points.

    Returns
    -------
    float
        The ratio (1.0 when there is no unlabelled point).
    """
    D = np.asarray(decision, dtype=np.float64)
    if D.shape[1] == 1:
        margin = np.abs(D[:, 0])
    else:
        top = np.partition(D, D.shape[1] - 2, axis=1)
        margin = top[:, -1] - top[:, -2]
    unl = np.ones(len(D), dtype=bool)
    unl[np.asarray(labelled)] = False
    if not unl.any():
        return 1.0
    lab = float(np.median(margin[~unl]))
    return float(np.median(margin[unl]) / lab) if lab > 0 else 0.0


LIMIT_BALANCE = 0.5
"""``gamma_A="auto"`` takes the rule only where the graph term's limit also gives every labelled class at least this
fraction of its labelled share of the unlabelled points (:func:`limit_class_balance`). Measured: 0.99 on graph6 at
8,000 points; 0.0 on multi-view MNIST with the graph keywords (gamma_W = 1, 10-NN, L^2: half the points in one
class, the rule 0.13 held-out accuracy against 0.41 at 1e-5) and 0.41 on mfeat with them (the rule 0.21 against
0.96), where the margins alone (0.95, 0.73) do not tell. A threshold between three data sets' values."""


def limit_class_balance(decision, labelled, Y_L):
    """The smallest, over the labelled classes, ratio of a class's share of the unlabelled points under the graph
    term's limit (argmax of its decision values) to its share of the labelled points: near 1 when the limit spreads
    the classes as the labels do, 0 when it gives a class no point (the limit collapsed onto a few classes).

    Parameters
    ----------
    decision : ndarray of shape (n, P)
        The limit's decision values on the training points.
    labelled : ndarray of shape (l,)
        Indices of the labelled points.
    Y_L : ndarray of shape (l, P)
        Their targets (the class is the largest entry).

    Returns
    -------
    float
        The ratio (1.0 with one output or no unlabelled point).
    """
    D = np.asarray(decision, dtype=np.float64)
    Y = np.asarray(Y_L, dtype=np.float64)
    unl = np.ones(len(D), dtype=bool)
    unl[np.asarray(labelled)] = False
    if D.shape[1] == 1 or not unl.any():
        return 1.0
    lab = np.bincount(Y.argmax(axis=1), minlength=D.shape[1]) / len(Y)
    got = np.bincount(D[unl].argmax(axis=1), minlength=D.shape[1]) / unl.sum()
    return float(np.min(got[lab > 0] / lab[lab > 0]))


SHARE_WARNING = 10.0
"""solver="vecchia_direct" warns when the kernel term's share theta at the fit's gamma_A exceeds this many times
:data:`KERNEL_SHARE` (the graph regime's validated fits lie at theta <= 1.5e-2 on graph6)."""


class VecchiaDirectSolver(Solver):
    """solver="vecchia_direct": the graph regime's approximate solver (module docstring): one sparse symmetric
    factorisation, the kernels replaced by Vecchia's approximation; complete feature views, a sparse kNN graph; no
    iteration (``n_iter`` 1, ``residual`` the true relative residual of (M + delta Q_v) F = r). Out-of-sample
    predictions by the kriging rule (:mod:`mvl.solvers.vecchia_kriging`, ``SolverResult.rule``). Also measures the
    kernel term's share theta at the fit's gamma_A (one more numeric factorisation) and the gamma_A of the rule
    (:class:`mvl.solvers.problem.VecchiaDetails`); with ``problem.gamma_A_rule`` (the estimator's ``gamma_A="auto"``)
    the fit is at the rule's gamma_A where the graph term's limit is not degenerate (``limit_margin_ratio`` >=
    :data:`LIMIT_MARGIN` and ``limit_class_balance`` >= :data:`LIMIT_BALANCE`), otherwise at the problem's gamma_A
    (1e-5). The gamma_A solved at is ``SolverResult.gamma_A``."""

    name = "vecchia_direct"
    losses = ("squared",)
    missing_views = False
    sparse_graph = True
    optc = False
    operator = True
    direct = True
    auto_rank = 1
    copies = False  # Vecchia's precision of equal points is singular (_refuse_copies): "auto" passes it over
    exact = False
    keeps_kernels = False
    threads = 1  # q x q blocks, kNN searches: threads only contend (22 s CPU against 3 s at 8,000 points, loaded)
    advice = ""

    def memory_bytes(self, n, m, l):
        return None  # within the budget by construction: on a node subsample when all points do not fit

    def auto_accepts(self, regime):
        """The measured graph regime (:func:`mvl.solvers.auto.graph_regime_fits`, which warns when it does not fit)."""
        from .auto import graph_regime_fits

        return graph_regime_fits(regime)

    def auto_fallback(self, regime, chosen):
        """On incomplete views or exact copies of training points in the measured graph regime, the
        :class:`mvl.solvers.auto.GraphRegimeFallbackWarning` that names the measure and ``chosen`` (this solver
        needs complete views and distinct points), else None."""
        from .auto import copies_graph_regime_warning, incomplete_graph_regime_warning

        if regime.kernel == "precomputed" or not regime.graph_regime:
            return None
        if regime.missing:
            return incomplete_graph_regime_warning(regime.measured, chosen)
        return copies_graph_regime_warning(regime.measured, chosen)

    def subsample(self, regime):
        """The node subsample within the budget (:func:`mvl.solvers.vecchia_nodes.subsample_nodes`), None when all
        the points fit or the memory cannot be estimated (no kNN graph, precomputed kernels, no labels)."""
        from .vecchia_nodes import subsample_nodes

        if regime.unlabelled is None or regime.kernel == "precomputed" or regime.graph is None:
            return None
        return subsample_nodes(regime.unlabelled, regime.m, *regime.graph, regime.max_memory, regime.random_state)

    def solve(self, problem):
        if problem.kernels.views is None:
            raise ValueError('solver="vecchia_direct" needs feature views (kriging predicts from them), not '
                             'precomputed kernels')
        _refuse_copies(problem.kernels.views)
        vs = VecchiaSystem(problem.system, problem.kernels, random_state=problem.seed)
        system = problem.system
        limit, graph, kern = _limit(vs)  # the limit's node values kept for its margins and class balance
        rule = KERNEL_SHARE / (1.0 - KERNEL_SHARE) * graph / (system.l * kern)
        margins = limit_margin_ratio(limit.decision_nodes(), system.labelled)
        balance = limit_class_balance(limit.decision_nodes(), system.labelled, system.Y_L)
        degenerate = margins < LIMIT_MARGIN or balance < LIMIT_BALANCE
        if problem.gamma_A_rule and not degenerate:  # "auto": the rule
            system.delta = system.l * rule
        fit = vs.fit(system.delta)
        gamma_A = system.delta / system.l
        details = VecchiaDetails(kernel_share=system.delta * kern / (graph + system.delta * kern), share_gamma_A=rule,
                                 limit_margin_ratio=margins, limit_class_balance=balance, factor=dict(fit.info))
        if details.kernel_share > SHARE_WARNING * KERNEL_SHARE:
            from ..exceptions import RegularizationWarning

            where = (f'solver="vecchia_direct": the kernel term is {details.kernel_share:.2g} of the objective at '
                     f'gamma_A = {gamma_A:.3g} (fits that follow the graph lie at <= '
                     f'{SHARE_WARNING * KERNEL_SHARE:g}, and this solver\'s error grows with it)')
            if problem.gamma_A_rule:  # "auto" kept 1e-5: the rule does not apply to a degenerate limit
                warnings.warn(f'{where}; gamma_A="auto" did not take the graph-regime rule because the graph term\'s '
                              f'limit is degenerate here (margin ratio {margins:.2g}, threshold {LIMIT_MARGIN:g}; '
                              f'class balance {balance:.2g}, threshold {LIMIT_BALANCE:g}: too few labels for this '
                              'graph). The answer may be poor: check it against solver="cg" (exact), or use more '
                              'labels or a denser graph', RegularizationWarning, stacklevel=4)
            else:
                warnings.warn(f'{where}; gamma_A = {details.share_gamma_A:.3g} holds it at {KERNEL_SHARE:g} '
                              '(mvl.solvers.vecchia_direct.share_gamma_A)', RegularizationWarning, stacklevel=4)
        residual = fit.info["residual"]
        return SolverResult(fit.coef, 1, residual, bool(np.isfinite(residual)), gamma_A=gamma_A,
                            rule=RepresenterRule(fit.kernel_rows()), details=details)


def _refuse_copies(views):
    """ValueError when a view holds copies of a sample (equal rows, :func:`mvl.graph.feature_copies`): a copy is
    isolated in the kNN graph (copies count as one point) and Vecchia's precision of equal points is singular, so
    the node values of the copies have nothing to fix them."""
    from ..graph import feature_copies

    for p, Xp in enumerate(views):
        copies = feature_copies(Xp)
        if copies is not None:
            extra = len(Xp) - len(copies[0])
            raise ValueError(f'solver="vecchia_direct" needs distinct points in every view: view {p} has {extra} '
                             f'copies of other samples (equal rows); drop the duplicate rows (np.unique(X, axis=0)), '
                             f'or use solver="graph" or "cg", which count copies as one point')
