"""The few-label (Poisson-type) data term on a sparse route: the kernels replaced by Vecchia's sparse precision, one
sparse symmetric factorisation per view (gamma_B = 0) or one block factorisation (gamma_B > 0), never an n x n array.

**The objective in node values.** :mod:`mvl.solvers.poisson` states the source-term objective over f in H_K
(Minh, Bazzani & Murino, JMLR 2016, eq 10 with the labelled term of eq 53 replaced by centred sources):

    -(2/l) sum_{j<=l} <s_j, C f(x_j)> + gamma_A ||f||^2 + gamma_B <f, M_B f> + gamma_W <f, M_W f>,

s_j = w_j (y_j - ybar) (:func:`mvl.solvers.poisson.source_term`), C f(x_i) = sum_p c_p f^p(x_i) (eq 52), M_B the
between-view operator of eq (54)-(57): <f, M_B f> = sum_i sum_{p<q} ||f^p(x_i) - f^q(x_i)||^2 = sum_i (m sum_p
||F_p(i)||^2 - ||T_i||^2), T = sum_p F_p; M_W = blockdiag(L^p) of eq (60)-(63). By the representer theorem
(Theorem 2) f^p = sum_i k^p(., x_i) a_pi, F_p = K^p a_p and ||f^p||^2 = F_p^T (K^p)^{-1} F_p. Times l/2, with
delta = l gamma_A, beta = l gamma_B, omega = l gamma_W and the view-major sparse operator

    M = beta (M_m (x) I_n) + omega blockdiag(L^p),     M_m = m I_m - 1 1^T (eq 54),

the objective is (1/2) F^T (M + delta K^{-1}) F - r^T F with r_p = c_p S; its stationary point,

    (M + delta K^{-1}) F = r,      a = K^{-1} F,                                                          (P)

is :mod:`mvl.solvers.poisson`'s system (gamma_B M_B + gamma_W M_W) G[x] a + gamma_A a = S_C / l multiplied by l
with F = G[x] a (Theorem 10's eq 67-68, the labelled block of M removed). For ``loss="squared+poisson"`` the
labelled term adds (c c^T) (x) J to M and c_p J Y to r_p (eq 68; :func:`mvl.solvers.poisson.solve_dense`).

**The sparse approximation.** Replace (K^p)^{-1} by Vecchia's precision Q_v^p = (I - B_p)^T D_p^{-1} (I - B_p)
(:mod:`mvl.solvers.vecchia`, q earlier neighbours per point):

    (M + delta Q_v) F_v = r,       a_v = Q_v F_v,                                                        (P_v)

solved, as in :mod:`mvl.solvers.vecchia_direct`, through the quasi-definite matrix [[M, (I - B)^T], [I - B,
-D / delta]] (:class:`mvl.solvers.vecchia_direct.QuasiDefiniteFactor`), whose Schur complement is M + delta Q_v:
no product (I - B)^T D^{-1} (I - B) is formed, memory O(n (k + q)) before fill.

- gamma_B = 0 and the source term alone: M = omega blockdiag(L^p) and Q_v are block diagonal, so the views
  decouple: per view (omega L^p + delta Q_v^p) F_p = c_p S, m independent sparse SPD systems of size n (each a
  quasi-definite 2n x 2n factorisation). A view with c_p = 0 has F_p = 0.
- gamma_B > 0 (or the joined loss, whose labelled block c c^T (x) J couples the views): the whole (P_v), one
  factorisation of size 2 m n. The coupling block is beta (M_m (x) I_n) exactly as written above: the dense test
  (tests/solvers/test_poisson_sparse.py) minimises the objective written out term by term and checks it.
- omega = beta = 0: M = 0 (only with the source term alone), F_p = c_p K_v^p S / delta by two triangular solves.

**Error against the exact solution.** (P_v) is the exact minimiser of the same objective for the kernel K_v = Q_v^{-1}
(a valid positive definite kernel on the training points), so :func:`mvl.solvers.vecchia_direct.error_bound` applies
unchanged with r the sources: ||F_v - F*||_{A_v}^2 <= kappa_v delta ||f*||_H^2 per output column, kappa_v = max
(lambda - 1)^2 / lambda over spec(K_v^{-1} K). The few-label term's validated regime (gamma_A / gamma_W = 1e-5,
:data:`mvl.estimators.poisson_fit.POISSON_RATIO`) makes the kernel term delta ||f*||^2 a small share of the
objective, so the error is small where the fit is used. q >= n - 1 makes Vecchia exact (kappa_v = 0): the tests
check (P_v) against a dense textbook minimiser to 1e-8 there and state the measured error at q = 10.

**Incomplete views** (:mod:`mvl.solvers.incomplete`): view p exists on S_p. Its unknowns are F_p on S_p only (Vecchia
on the rows S_p), c is renormalised per sample (c~, :func:`mvl.missing_views.combination_weights`), so r_p(i) =
c~_ip s_i; M_B couples the views present together: beta w_i (#V_i [p = q] - 1) between (i, p) and (i, q), p, q in
V_i (zero for a one-view sample); L^p is view p's Laplacian restricted to S_p. The coefficient arrays keep the
package's layout (m, n, P) with zeros outside S_p. With gamma_B = 0 a view's system is unchanged in form (size n_p).

**Out of sample.** The kriging rule of :mod:`mvl.solvers.vecchia_kriging`: f_p(x) = k_p(x, N(x))
K^p_{N(x) N(x)}^{-1} F_v^p[N(x)], N(x) the q nearest training points of view p (O(q^3) per point and view; with q
>= n_p the representer theorem's k_p(x, X) a exactly). Test points combine the views they have with c~.

**Factorisation and neighbour search** (``benchmarks/bench_poisson_sparse.py``, its table in
benchmarks/results/sparse_poisson.csv: 3 views, 10-NN graphs, q = 20, gamma_B = 0). :data:`FACTORISATIONS` in the
order tried, the fastest first at the largest n measured: ``cholespy`` (supernodal CHOLMOD) on the assembled SPD
M + delta Q_v, ``qdldl`` on the quasi-definite matrix (no product Q_v formed; the package's dependency; close
behind there and as fast at smaller n), ``splu`` (SuperLU, symmetric mode) on the quasi-definite matrix, always
available, the slowest with the most fill. The default is the first importable; a missing wheel falls back to the
next. Vecchia's neighbours use the exact search of :mod:`mvl.solvers.vecchia` (sklearn trees); for the graphs the
same benchmark measures scikit-learn's exact search faster than hnswlib up to its largest n.
"""

from __future__ import annotations

import time

import numpy as np
from scipy import sparse
from scipy.sparse import linalg as sla

from .problem import Solver, SolverResult

__all__ = ["FACTORISATIONS", "available_factorisation", "restrict_laplacians", "sparse_poisson_operator",
           "poisson_rhs", "views_of", "cholesky_solver", "view_vecchia_factors", "SparsePoissonFit",
           "solve_poisson_sparse", "objective", "VecchiaPoissonSolver"]

FACTORISATIONS = ("cholespy", "qdldl", "splu")
"""The sparse factorisations, in the order the default tries them (module docstring)."""


def available_factorisation(preferred=None):
    """The first importable of :data:`FACTORISATIONS` (or ``preferred`` when importable; ``splu`` always is)."""
    order = FACTORISATIONS if preferred is None else (preferred,) + FACTORISATIONS
    for name in order:
        if name not in FACTORISATIONS:
            raise ValueError(f"factorisation must be one of {FACTORISATIONS}, got {name!r}")
        if name == "splu":
            return name
        try:
            __import__(name)
        except ImportError:
            continue
        return name
    return "splu"  # pragma: no cover


def views_of(mask, n, m):
    """The sample indices of each view: every sample when ``mask`` is None, else those whose row of the (n, m)
    presence mask has the view."""
    if mask is None:
        return [np.arange(n)] * m
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != (n, m):
        raise ValueError(f"mask must have shape (n, m) = ({n}, {m}), got {mask.shape}")
    if np.any(mask.sum(axis=1) == 0):
        raise ValueError("every sample needs at least one view")
    return [np.flatnonzero(mask[:, p]) for p in range(m)]


def restrict_laplacians(laplacians, idx, power=1):
    """Per view the sparse Laplacian L^p (n x n, or already n_p x n_p) restricted to S_p = ``idx[p]``, to the power
    ``power``, CSR (None entries stay None; ``laplacians`` None gives None)."""
    if laplacians is None:
        return None
    out = []
    for p, Lp in enumerate(laplacians):
        if Lp is None:
            out.append(None)
            continue
        L = sparse.csr_matrix(Lp)
        if L.shape[0] != len(idx[p]):
            L = L[idx[p]][:, idx[p]]
        Lk = L
        for _ in range(int(power) - 1):
            Lk = Lk @ L
        out.append(sparse.csr_matrix(Lk))
    return out


def _offsets(idx):
    return np.concatenate([[0], np.cumsum([len(i) for i in idx])])


def sparse_poisson_operator(n, c, idx, beta, omega, laplacians, loss="poisson", labelled=None, Ct=None,
                            between_weights=None):
    """M of (P) over the present pairs, view-major (block p: the rows S_p = ``idx[p]``), CSC: beta w_i (#V_i [p = q]
    - 1) between (i, p) and (i, q) (eq 54-57), omega L^p on block p (eq 60-63), and for ``loss="squared+poisson"``
    c~_ip c~_iq at the labelled samples (eq 68). ``Ct`` (n, m): the renormalised combination (default c)."""
    m = len(c)
    off = _offsets(idx)
    N = int(off[-1])
    pos = np.full((n, m), -1, dtype=np.intp)  # pair index of (i, p)
    for p in range(m):
        pos[idx[p], p] = off[p] + np.arange(len(idx[p]))
    present = pos >= 0
    counts = present.sum(axis=1)
    rows, cols, vals = [], [], []
    if beta > 0 and m > 1:
        w = np.ones(n) if between_weights is None else np.asarray(between_weights, dtype=np.float64)
        wt = np.where(counts >= 2, w, 0.0)
        for p in range(m):
            for q in range(m):
                i = np.flatnonzero(present[:, p] & present[:, q] & (wt > 0))
                rows.append(pos[i, p])
                cols.append(pos[i, q])
                vals.append(beta * wt[i] * ((counts[i] if p == q else 0.0) - 1.0))
    if loss == "squared+poisson":
        Ct = np.tile(np.asarray(c, dtype=np.float64), (n, 1)) if Ct is None else Ct
        lab = np.asarray(labelled)
        for p in range(m):
            for q in range(m):
                i = lab[present[lab, p] & present[lab, q]]
                rows.append(pos[i, p])
                cols.append(pos[i, q])
                vals.append(Ct[i, p] * Ct[i, q])
    M = sparse.csr_matrix((np.concatenate(vals) if vals else np.zeros(0),
                           (np.concatenate(rows) if rows else np.zeros(0, int),
                            np.concatenate(cols) if cols else np.zeros(0, int))), shape=(N, N))
    if omega > 0 and laplacians is not None:
        blocks = [omega * L if L is not None else sparse.csr_matrix((len(idx[p]), len(idx[p])))
                  for p, L in enumerate(laplacians)]
        M = M + sparse.block_diag(blocks, format="csr")
    M = sparse.csc_matrix(M)
    M.sum_duplicates()
    return M


def poisson_rhs(n, c, idx, labelled, Y_L, loss="poisson", balanced=False, Ct=None):
    """r of (P) per view on S_p: r_p(i) = c~_ip (s_i [+ y_i for the joined loss]) at the labelled samples (list of m
    arrays (n_p, P))."""
    from .poisson import source_term

    labelled = np.asarray(labelled)
    Y_L = np.asarray(Y_L, dtype=np.float64)
    R = source_term(labelled, Y_L, n, balanced)
    if loss == "squared+poisson":
        R[labelled] += Y_L
    Ct = np.tile(np.asarray(c, dtype=np.float64), (n, 1)) if Ct is None else Ct
    return [Ct[ix, p][:, None] * R[ix] for p, ix in enumerate(idx)]


def view_vecchia_factors(kernels, idx, q, random_state=0):
    """[(I - B_p, d_p)] of :func:`mvl.solvers.vecchia.vecchia_factor` for every view on its rows S_p = ``idx[p]``
    (view p ordered with seed random_state + p). ``kernels``: a :class:`mvl.kernel_blocks.ViewKernels` (feature
    views or Gram matrices) on all n samples; a view with rows missing gets a ViewKernels on its rows."""
    from ..kernel_blocks import ViewKernels
    from .vecchia import vecchia_factor

    base = getattr(kernels, "base", kernels)  # MaskedViewKernels -> its ViewKernels
    out = []
    for p, ix in enumerate(idx):
        if len(ix) == base.n:
            out.append(vecchia_factor(base, p, q, random_state=random_state + p))
            continue
        if base.views is not None:
            sub = ViewKernels([base.views[p][ix]], base.kind, [base.scales[p]], max_memory=0)
        else:
            sub = ViewKernels(gram=base.gram[p][np.ix_(ix, ix)][None])
        out.append(vecchia_factor(sub, 0, q, random_state=random_state + p))
    return out


def cholesky_solver(A):
    """A solver R -> A^{-1} R of a sparse SPD matrix A by cholespy's supernodal Cholesky factorisation (ValueError
    when it is not numerically positive definite)."""
    from cholespy import CholeskySolverD, MatrixType

    A = sparse.coo_matrix(A)
    chol = CholeskySolverD(A.shape[0], A.row.astype(np.int32), A.col.astype(np.int32), A.data, MatrixType.COO)

    def solve(R):
        x = np.zeros_like(R)
        chol.solve(np.ascontiguousarray(R), x)
        return x

    return solve


def _factor(M, IB, d, delta, method):
    """A solver z -> (M + delta Q_v)^{-1} z (Q_v = IB^T D^{-1} IB), and the factor's entries."""
    from .vecchia_direct import QuasiDefiniteFactor

    if method == "cholespy":
        A = sparse.coo_matrix(M + delta * (IB.T @ sparse.diags(1.0 / d) @ IB))  # the SPD Schur complement
        try:
            solve = cholesky_solver(A)
        except ValueError as exc:  # positive definite in exact arithmetic: delta lost against M in float64
            raise ValueError(f'solver="vecchia": the sparse Cholesky factorisation failed ({exc}): the kernel term '
                             f"l gamma_A = {delta:.1e} is lost against the graph term in float64; increase gamma_A "
                             "(default 1e-05)") from exc
        return solve, int(A.nnz)
    qd = QuasiDefiniteFactor.__new__(QuasiDefiniteFactor)
    if method == "splu":
        qd.N, qd._d = M.shape[0], d
        aug = sparse.bmat([[M, IB.T], [IB, sparse.diags(-d / delta)]], format="csc")
        qd.method, qd._aug, qd.delta = "superlu", aug, float(delta)
        qd._factor()
    else:
        qd = QuasiDefiniteFactor(M, IB, d, delta)
    return qd.solve_values, int(qd.fill)


class SparsePoissonFit:
    """The result of :func:`solve_poisson_sparse`.

    Attributes
    ----------
    values, coef : ndarray of shape (m, n, P)
        F_v and a_v = Q_v F_v (zero outside each view's rows).
    c : ndarray of shape (m,)
        The combination vector.
    idx : list of ndarray
        The rows S_p of every view.
    info : dict
        seconds, factor_seconds, setup_seconds, fill, factorisation, decoupled, residual (the true relative
        residual of (P_v)), neighbours.
    """

    def __init__(self, values, coef, c, idx, mask, kernels, factors, q, info):
        self.values, self.coef, self.c, self.idx, self.mask, self.info = values, coef, c, idx, mask, info
        self._kernels, self._factors, self._q, self._rows = kernels, factors, q, {}

    @property
    def residual(self):
        """The true relative residual of (P_v) at the solution (``info["residual"]``)."""
        return float(self.info["residual"])

    def decision_nodes(self):
        """C f on the training points, (n, P) (c~ per sample with incomplete views)."""
        from ..missing_views import combination_weights

        if self.mask is None:
            return np.einsum("p,pnk->nk", self.c, self.values)
        return np.einsum("np,pnk->nk", combination_weights(self.c, self.mask), self.values)

    def _view_rows(self, p, q):
        from ..kernel_blocks import ViewKernels
        from .vecchia_kriging import VecchiaKernels

        key = (p, q)
        if key not in self._rows:
            base = getattr(self._kernels, "base", self._kernels)
            if base.views is None:
                raise ValueError("kriging predicts from feature views, not precomputed kernels")
            ix = self.idx[p]
            sub = ViewKernels([base.views[p][ix]], base.kind, [base.scales[p]], max_memory=0)
            self._rows[key] = VecchiaKernels(sub, [self._factors[p]], self.coef[p][ix][None],
                                             self.values[p][ix][None], q)
        return self._rows[key]

    def view_values(self, p, Z, neighbours=None):
        """f_p at new points Z (t, d_p) of view p by the kriging rule, (t, P)."""
        q = self._q if neighbours is None else int(neighbours)
        rows = self._view_rows(p, q)
        out = np.empty((len(Z), self.values.shape[2]))
        F = self.values[p][self.idx[p]]
        for s in range(0, len(Z), 4096):
            out[s:s + 4096] = rows.weights(0, Z[s:s + 4096]) @ F
        return out

    def decision_function(self, views, neighbours=None):
        """C f at new points given as m view arrays (t, d_p); a view missing for a point is a NaN row, and the point
        combines the views it has with c~, (t, P)."""
        from ..missing_views import combination_weights, feature_presence

        mask = feature_presence(views)
        t = len(views[0])
        Ct = np.tile(self.c, (t, 1)) if mask is None else combination_weights(self.c, mask)
        out = np.zeros((t, self.values.shape[2]))
        for p, V in enumerate(views):
            rows = np.arange(t) if mask is None else np.flatnonzero(mask[:, p])
            if rows.size and len(self.idx[p]):
                out[rows] += Ct[rows, p][:, None] * self.view_values(p, np.asarray(V, dtype=np.float64)[rows],
                                                                      neighbours)
        return out


def solve_poisson_sparse(kernels, labelled, Y_L, c, gamma_A, gamma_B, gamma_W, laplacians=None, loss="poisson",
                         balanced=False, mask=None, neighbours=None, random_state=0, factorisation=None,
                         laplacian_power=1, between_weights=None, factors=None):
    """F_v and a_v of (P_v) (module docstring), view by view when gamma_B = 0 and the source term is alone.

    Parameters
    ----------
    kernels : mvl.kernel_blocks.ViewKernels or MaskedViewKernels
        The training kernels (feature views for kriging; Gram matrices for small problems).
    labelled : array-like of int
        The l labelled samples.
    Y_L : ndarray of shape (l, P)
        Their targets.
    c : ndarray of shape (m,)
        The combination vector (eq 52).
    gamma_A, gamma_B, gamma_W : float
        The weights of eq (53); gamma_A > 0.
    laplacians : list of m sparse matrices or None
        L^p, n x n (rows outside S_p ignored) or n_p x n_p.
    loss : {"poisson", "squared+poisson"}
        The source term alone or joined with the labelled least squares.
    balanced : bool
        Class-balanced sources (:func:`mvl.solvers.poisson.source_weights`).
    mask : bool array (n, m) or None
        Which samples have which view.
    neighbours : int, optional
        q of Vecchia and of kriging (default :data:`mvl.solvers.vecchia.VECCHIA_NEIGHBOURS`).
    random_state : int
        Seed of the Vecchia orderings.
    factorisation : str, optional
        One of :data:`FACTORISATIONS` (default :func:`available_factorisation`).
    laplacian_power : int
        Power of the Laplacians.
    between_weights : ndarray (n,), optional
        w of M_B = diag(w) (x) M_m.
    factors : list, optional
        Precomputed :func:`view_vecchia_factors`.

    Returns
    -------
    SparsePoissonFit
    """
    from ..missing_views import combination_weights
    from .poisson import LOSSES
    from .vecchia import VECCHIA_NEIGHBOURS

    if loss not in LOSSES:
        raise ValueError(f"loss must be one of {LOSSES}, got {loss!r}")
    if not gamma_A > 0:
        raise ValueError(f"gamma_A must be > 0 (the source term is unbounded below without it), got {gamma_A}")
    if gamma_B < 0 or gamma_W < 0:
        raise ValueError(f"gamma_B and gamma_W must be >= 0, got {gamma_B}, {gamma_W}")
    t0 = time.perf_counter()
    c = np.asarray(c, dtype=np.float64)
    m, n = len(c), kernels.n
    if kernels.m != m:
        raise ValueError(f"c has {m} entries for {kernels.m} views")
    labelled = np.asarray(labelled)
    Y_L = np.asarray(Y_L, dtype=np.float64)
    l, P = Y_L.shape
    idx = views_of(mask, n, m)
    Ct = None if mask is None else combination_weights(c, mask)
    q = VECCHIA_NEIGHBOURS if neighbours is None else int(neighbours)
    method = available_factorisation(factorisation)
    delta, beta, omega = l * gamma_A, (l * gamma_B if m > 1 else 0.0), l * gamma_W
    if factors is None:
        factors = view_vecchia_factors(kernels, idx, q, random_state)
    Ls = restrict_laplacians(laplacians, idx, laplacian_power) if omega > 0 else None
    r = poisson_rhs(n, c, idx, labelled, Y_L, loss, balanced, Ct)
    t1 = time.perf_counter()
    decoupled = beta == 0 and loss == "poisson"
    Fv = [None] * m
    fill = 0
    if decoupled:  # m independent systems (omega L^p + delta Q_v^p) F_p = c_p S
        for p in range(m):
            IB, d = factors[p]
            if not np.any(r[p]):
                Fv[p] = np.zeros_like(r[p])
                continue
            if Ls is None or Ls[p] is None:  # M = 0: F = K_v r / delta by two triangular solves
                y = sla.spsolve_triangular(sparse.csr_matrix(IB.T), r[p], lower=False)
                Fv[p] = sla.spsolve_triangular(sparse.csr_matrix(IB), d[:, None] * y, lower=True) / delta
                continue
            solve, nnz = _factor(sparse.csc_matrix(omega * Ls[p]), IB, d, delta, method)
            Fv[p] = solve(r[p])
            fill += nnz
    else:
        M = sparse_poisson_operator(n, c, idx, beta, omega, Ls, loss, labelled, Ct, between_weights)
        IB = sparse.block_diag([f[0] for f in factors], format="csr")
        d = np.concatenate([f[1] for f in factors])
        solve, fill = _factor(M, IB, d, delta, method)
        F = solve(np.vstack(r))
        off = _offsets(idx)
        Fv = [F[off[p]:off[p + 1]] for p in range(m)]
    t2 = time.perf_counter()
    values, coef = np.zeros((m, n, P)), np.zeros((m, n, P))
    for p, ix in enumerate(idx):
        IB, d = factors[p]
        values[p, ix] = Fv[p]
        coef[p, ix] = IB.T @ ((IB @ Fv[p]) / d[:, None])  # a_v = Q_v F_v
    res = _residual(values, coef, idx, r, c, beta, omega, Ls, delta, loss, labelled, Ct, between_weights, n)
    info = dict(seconds=time.perf_counter() - t0, setup_seconds=t1 - t0, factor_seconds=t2 - t1, fill=fill,
                factorisation=method, decoupled=decoupled, residual=res, neighbours=q)
    return SparsePoissonFit(values, coef, c, idx, None if mask is None else np.asarray(mask, dtype=bool), kernels,
                            factors, q, info)


def _residual(values, coef, idx, r, c, beta, omega, Ls, delta, loss, labelled, Ct, between_weights, n):
    """||r - M F_v - delta a_v|| / ||r|| of (P_v), by one sparse product."""
    m = len(c)
    M = sparse_poisson_operator(n, c, idx, beta, omega, Ls, loss, labelled, Ct, between_weights)
    F = np.vstack([values[p, ix] for p, ix in enumerate(idx)])
    A = np.vstack([coef[p, ix] for p, ix in enumerate(idx)])
    R = np.vstack(r) if m else np.zeros((0, 1))
    den = np.linalg.norm(R)
    return float(np.linalg.norm(R - M @ F - delta * A) / (den if den > 0 else 1.0))


def objective(values, kernel_inverse_quad, c, labelled, Y_L, gamma_A, gamma_B, gamma_W, laplacians=None,
              loss="poisson", balanced=False):
    """The objective of (P) (complete views) at node values F (m, n, P) given the kernel terms sum_p F_p^T
    (K^p)^{-1} F_p (``kernel_inverse_quad``, per output summed), divided as in :mod:`mvl.solvers.poisson`:
    -(2/l) sum_j <s_j, C F(j)> [+ (1/l) sum_j ||y_j - C F(j)||^2] + gamma_A ||f||^2 + gamma_B sum_i (m sum_p
    ||F_p(i)||^2 - ||T_i||^2) + gamma_W sum_p <F_p, L^p F_p>."""
    from .poisson import source_term

    m, n, _ = values.shape
    labelled = np.asarray(labelled)
    Y_L = np.asarray(Y_L, dtype=np.float64)
    l = len(labelled)
    S = source_term(labelled, Y_L, n, balanced)
    CF = np.tensordot(c, values, axes=1)
    J = -(2.0 / l) * float(np.sum(S * CF)) + gamma_A * float(kernel_inverse_quad)
    if loss == "squared+poisson":
        J += float(np.sum((Y_L - CF[labelled]) ** 2)) / l
    if m > 1:
        T = values.sum(axis=0)
        J += gamma_B * (m * float(np.sum(values ** 2)) - float(np.sum(T ** 2)))
    if laplacians is not None:
        J += gamma_W * sum(float(np.sum(values[p] * (laplacians[p] @ values[p]))) for p in range(m))
    return J


class VecchiaPoissonSolver(Solver):
    """The few-label term by Vecchia's sparse precision (module docstring): per view one sparse factorisation with
    gamma_B = 0, one block factorisation otherwise; incomplete views; feature views only (Vecchia's neighbours and
    the kriging rule read them). Takes an :class:`mvl.solvers.problem.MVLProblem` with ``source`` (the estimator's
    route: the shared self-tuned graph, :class:`mvl.solvers.problem.SourceTerm`; the prediction rule
    :class:`mvl.solvers.rules.SourceRule`) or with ``system`` (:class:`mvl.solvers.system.MVLSystem`, as
    :class:`mvl.solvers.vecchia_direct.VecchiaDirectSolver`; complete views: the kriging rows as the rule's
    kernels). The loss is ``problem.loss`` ("poisson" or "squared+poisson"); :class:`SparsePoissonFit` is
    ``SolverResult.details``. solver="auto" takes it for the few-label terms on feature views wherever
    "structured" does not (beyond :data:`mvl.solvers.auto.AUTO_STRUCTURED_MAX` points or its memory, incomplete
    views)."""

    name = "vecchia"
    auto_rank = 4
    losses = ("poisson", "squared+poisson")
    exact = False
    operator = True
    direct = True
    missing_views = True
    sparse_graph = True
    keeps_kernels = False
    threads = 1
    advice = ""

    def auto_accepts(self, regime):
        """Feature views at any size (no n x n array)."""
        return regime.kernel != "precomputed"

    def memory_bytes(self, problem_or_n, m=None, l=None):
        """On sizes (n, m, l), the registry's declaration: None, no n x n array (as the other sparse solvers; the
        estimators then check no budget before the fit). On an :class:`mvl.solvers.problem.MVLProblem` with
        ``system``, the estimated peak bytes (:func:`mvl.solvers.auto.vecchia_direct_bytes` with k = 10): per view
        when the views decouple (gamma_B = 0 and the source term alone), the coupled system otherwise, plus the m
        views' node values and factors, 16 m n (q + 3) bytes."""
        from .auto import vecchia_direct_bytes
        from .vecchia import VECCHIA_NEIGHBOURS

        if getattr(problem_or_n, "system", None) is None:
            return None
        s = problem_or_n.system
        n, m, power = s.n, s.m, s.laplacian_power
        coupled = s.beta > 0 or getattr(problem_or_n, "loss", "poisson") not in ("poisson", "squared")
        per = vecchia_direct_bytes(n, m if coupled else 1, 10, power)
        return float(per + 16.0 * m * n * (VECCHIA_NEIGHBOURS + 3))

    def solve(self, problem):
        if problem.source is not None:
            return self._solve_source(problem)
        system = problem.system
        if system is None:
            raise ValueError('solver="vecchia" needs the few-label problem (MVLProblem.source) or the sparse '
                             'system (MVLProblem.system)')
        loss = "poisson" if problem.loss == "squared" else problem.loss
        fit = solve_poisson_sparse(problem.kernels, system.labelled, system.Y_L, system.c, system.delta / system.l,
                                   system.beta / system.l, system.omega / system.l, laplacians=system.L, loss=loss,
                                   balanced=True, mask=system.mask, random_state=problem.seed,
                                   laplacian_power=system.laplacian_power, between_weights=system.w)
        from .rules import RepresenterRule

        base = getattr(problem.kernels, "base", problem.kernels)
        rule = None
        if system.mask is None and base.views is not None:
            from .vecchia_kriging import VecchiaKernels

            rule = RepresenterRule(VecchiaKernels(base, fit._factors, fit.coef, fit.values, fit._q))
        res = float(fit.info["residual"])
        return SolverResult(fit.coef, 1, res, bool(np.isfinite(res)), gamma_A=system.delta / system.l, rule=rule,
                            details=fit)

    def _solve_source(self, problem):
        """The estimator's few-label problem: the shared Laplacian for every view, node values F_v, the class shift
        of :func:`mvl.solvers.poisson.fit_decision` fitted on C F_v, new points by the graph's induction rule."""
        from .poisson import fit_decision
        from .rules import SourceRule

        src = problem.source
        if src.space is None or getattr(getattr(problem.kernels, "base", problem.kernels), "views", None) is None:
            raise ValueError(f'loss="{problem.loss}" with solver="vecchia" needs feature views (Vecchia\'s precision '
                             'is built from each view\'s nearest neighbours); use solver="structured" for '
                             'precomputed kernels')
        m = len(problem.c)
        fit = solve_poisson_sparse(problem.kernels, problem.labelled, problem.Y_L, problem.c, problem.gamma_A,
                                   problem.gamma_B, problem.gamma_W, laplacians=[src.laplacian] * m,
                                   loss=problem.loss, balanced=src.balanced, mask=problem.mask,
                                   random_state=problem.seed, factors=src.factors)
        if not np.all(np.isfinite(fit.values)):
            raise FloatingPointError(f"the solution has NaN or inf entries; increase gamma_A (now "
                                     f"{problem.gamma_A:g})")
        F = fit.decision_nodes()
        rule = SourceRule(fit_decision(F, weights=src.degrees), F, src.points, src.space, src.neighbours,
                      search=src.search)
        res = float(fit.info["residual"])
        return SolverResult(fit.coef, 1, res, bool(np.isfinite(res)), rule=rule, details=fit)
