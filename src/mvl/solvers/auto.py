"""solver="auto" and loss="auto": which data term and MVL-LS solver a fit uses, chosen together (:func:`plan`)
from the registered solvers' declarations (``losses``, ``missing_views``, ``auto_rank``, ``auto_accepts``) on the
problem's size, the memory budget and the measured regime of the graph term (:func:`choose_solver`,
:class:`Regime`, :func:`measured_regime`); no solver is named in the choice."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy import linalg

from .dense import dense_bytes  # noqa: F401  (the memory estimates sit beside their solvers)

__all__ = ["choose_solver", "plan", "Plan", "Regime", "graph_regime_fits",
           "AUTO_STRUCTURED_MAX", "AUTO_CG_MAX", "GRAPH_REGIME", "NYSTROM_SAMPLE", "regime_ratio",
           "nystrom_missed", "measured_regime", "vecchia_direct_bytes", "vecchia_direct_nodes",
           "GraphRegimeFallbackWarning", "warn_incomplete_graph_regime", "incomplete_graph_regime_warning",
           "copies_graph_regime_warning"]


#: solver="auto" on feature views: the structured solver up to this many training points (if its memory fits),
#: then "cg" up to AUTO_CG_MAX, then "nystrom" (see MVLLeastSquares).
AUTO_STRUCTURED_MAX = 5000


#: solver="auto" on feature views beyond AUTO_STRUCTURED_MAX outside the graph regime: "cg" up to this many training
#: points, "nystrom" beyond.
AUTO_CG_MAX = 20000


class GraphRegimeFallbackWarning(UserWarning):
    """solver="auto" measured the graph regime but cannot take "vecchia_direct" (its sparse factorisation would
    not fit the memory budget): the fallback ("cg" may stall, "nystrom" cannot follow the graph) is named with the
    measurement."""


#: Bytes per entry of the sparse operator M and Vecchia's factors in a "vecchia_direct" fit at
#: :data:`VECCHIA_REFERENCE_N` points, fill and the data included (:func:`vecchia_direct_bytes`).
VECCHIA_BYTES_PER_ENTRY = 129.0

#: The number of points at which :data:`VECCHIA_BYTES_PER_ENTRY` was measured.
VECCHIA_REFERENCE_N = 100_000

#: The factor's fill per entry of M grows like n^VECCHIA_FILL_EXPONENT (:func:`vecchia_direct_bytes`).
VECCHIA_FILL_EXPONENT = 0.41


def vecchia_direct_bytes(n, m, n_neighbors, laplacian_power):
    """Estimated peak memory of solver="vecchia_direct" on n points (the process's own ~0.3 GB not included).

    The entries of M (about 1.2 k^p per row of each view's (L)^p, k = ``n_neighbors``, p = ``laplacian_power``, at
    most n) and of Vecchia's factors (2 q per row, q = 20), times the bytes per entry of the factorisation, which
    grow with n as its fill does (a nested-dissection-like fill of a sparse graph's factor grows faster than n):

        bytes = VECCHIA_BYTES_PER_ENTRY m n row (n / VECCHIA_REFERENCE_N)^VECCHIA_FILL_EXPONENT

    Fitted to the peak RSS of "auto" fits on graph6 (10-NN, L^2, q = 20, less 0.3 GB for the process;
    ``benchmarks/results/graph_direct.csv``): 0.51, 1.54 and 6.51 GB at 8,000, 32,000 and 100,000 points give the
    exponent 1.41 of n (0.48, 1.54 and 6.49 GB back); qdldl's factor had 3.3e6 and 1.7e7 entries at 8,000 and
    32,000 points (``vecchia_factor.csv``: exponent 1.19). A fixed number of bytes per entry of M (exponent 1)
    predicted 6 GB at 100,000 points and 60 GB at 10^6, where this gives 159 GB."""
    from .vecchia import VECCHIA_NEIGHBOURS

    row = min(float(n), 1.2 * float(n_neighbors) ** int(laplacian_power)) + 2 * VECCHIA_NEIGHBOURS
    fill = (float(n) / VECCHIA_REFERENCE_N) ** VECCHIA_FILL_EXPONENT
    return VECCHIA_BYTES_PER_ENTRY * m * n * row * fill


def vecchia_direct_nodes(n, m, n_neighbors, laplacian_power, max_memory):
    """The largest number of nodes, at most n, whose :func:`vecchia_direct_bytes` fits ``max_memory`` (0 if none):
    the node subsample of solver="vecchia_direct" (:mod:`mvl.solvers.vecchia_nodes`)."""
    if vecchia_direct_bytes(n, m, n_neighbors, laplacian_power) <= max_memory:
        return int(n)
    lo, hi = 0, int(n)  # the estimate grows with n: bisection
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if vecchia_direct_bytes(mid, m, n_neighbors, laplacian_power) <= max_memory:
            lo = mid
        else:
            hi = mid
    return lo


class Regime:
    """What solver="auto" knows of a fit when it chooses (the argument of each solver's ``auto_accepts``): ``kernel``
    (the estimator's kernel, e.g. "precomputed"), ``n`` points, ``m`` views, ``l`` labels, ``max_memory`` bytes,
    ``graph`` ((n_neighbors, laplacian_power) of the kNN graphs, or None), ``loss`` and ``missing`` (incomplete
    views), ``measured``, the graph-regime measure, and ``copies``, whether a training view holds exact copies of
    a sample (equal rows), each computed on first use when given as a function. For the
    solvers' :meth:`~mvl.solvers.problem.Solver.subsample`: ``unlabelled`` (bool (n,), True at the unlabelled
    training points, or None) and ``random_state`` (the estimator's seed)."""

    def __init__(self, kernel, n, m, l, max_memory, measured=None, graph=None, loss="squared", missing=False,
                 unlabelled=None, random_state=None, copies=False):
        self.kernel, self.n, self.m, self.l, self.max_memory = kernel, n, m, l, max_memory
        self.graph, self.loss, self.missing = graph, loss, missing
        self.unlabelled, self.random_state = unlabelled, random_state
        self._measured = measured
        self._copies = copies

    @property
    def copies(self):
        """Whether a training view holds exact copies of a sample (equal rows), computed once if it was given as a
        function (a solver that declares ``copies = False`` is then passed over by solver="auto")."""
        if callable(self._copies):
            self._copies = bool(self._copies())
        return self._copies

    @property
    def measured(self):
        """:func:`measured_regime` (None: no sparse graph term), computed once if it was given as a function."""
        if callable(self._measured):
            self._measured = self._measured()
        return self._measured

    @property
    def graph_regime(self):
        """Whether the measure is at least :data:`GRAPH_REGIME`."""
        return self.measured is not None and self.measured >= GRAPH_REGIME

    def __repr__(self):
        return (f"Regime(kernel={self.kernel!r}, n={self.n}, m={self.m}, l={self.l}, max_memory={self.max_memory:g}, "
                f"graph={self.graph!r}, loss={self.loss!r}, missing={self.missing})")


def graph_regime_fits(regime):
    """Whether "vecchia_direct" takes ``regime`` (a :class:`Regime`): the measured graph regime, where "cg" does not
    converge, "nystrom"'s low-rank class cannot follow the graph and the exact "graph" solver measured 0.9x
    "structured" at 8,000 points and needs ~10^2 kernel passes at 10^5 (benchmarks/README.md). When
    :func:`vecchia_direct_bytes` exceeds ``max_memory`` it fits on the node subsample that fits
    (:func:`vecchia_direct_nodes`, :mod:`mvl.solvers.vecchia_nodes`); only when that holds no more than the l
    labelled points is it refused, with a :class:`GraphRegimeFallbackWarning` that states the measured regime."""
    if not regime.graph_regime:
        return False
    n, m, l, graph, max_memory = regime.n, regime.m, regime.l, regime.graph, regime.max_memory
    if graph is None or vecchia_direct_nodes(n, m, *graph, max_memory) > l:
        return True
    fallback = "cg" if n <= AUTO_CG_MAX else "nystrom"
    need = vecchia_direct_bytes(l + 1, m, *graph)
    # stacklevel: this function, auto_accepts, choose_solver, the estimator, its caller
    warnings.warn(f'solver="auto": the graph regime (measured {regime.measured:.3g} >= {GRAPH_REGIME:g}), where "cg" '
                  f'stalls and "nystrom" cannot follow the graph, but "vecchia_direct" would need ~'
                  f'{need / 1e9:.2g} GB even on the {l} labelled points with {graph[0]}-NN graphs and Laplacian '
                  f'power {graph[1]} (budget {max_memory / 1e9:.2g} GB); falling back to "{fallback}". Use fewer '
                  'neighbours (e.g. n_neighbors=10) or a larger max_memory.', GraphRegimeFallbackWarning,
                  stacklevel=5)
    return False


def choose_solver(solver, kernel, n, m, l, max_memory, regime=None, graph=None, loss="squared", missing=False,
                  copies=False):
    """The solver "auto" stands for, read from the registered solvers' declarations (:mod:`mvl.solvers.registry`):
    among those with an ``auto_rank`` (not None) that declare ``loss`` in their ``losses`` and, when ``missing``
    (incomplete views), ``missing_views``, the first by increasing rank whose ``auto_accepts`` takes the
    :class:`Regime` of the fit. The registered ranks give: precomputed kernels -> "structured"; feature views ->
    "structured" while n <= AUTO_STRUCTURED_MAX and its memory fits ``max_memory``; beyond, in the graph regime
    "vecchia_direct" at every n (:func:`graph_regime_fits`), otherwise "cg" up to AUTO_CG_MAX and "nystrom" beyond.
    ``regime``: the measure :func:`mvl.solvers.auto.measured_regime` (graph regime iff >=
    :data:`mvl.solvers.auto.GRAPH_REGIME`), or a function of no arguments that computes it, called only when a
    solver's ``auto_accepts`` reads it; None when there is no sparse graph term (or incomplete views: the graph
    solvers need complete views; MVLLeastSquares measures the regime there and warns,
    :func:`warn_incomplete_graph_regime`). ``graph``: (n_neighbors, laplacian_power) of the kNN graphs.
    ``copies``: whether a training view holds exact copies of a sample (or a function that says it), which a solver
    declaring ``copies = False`` does not take. A solver name other than "auto" is returned as it is. ValueError if
    no registered solver accepts the regime."""
    if solver != "auto":
        return solver
    fit = Regime(kernel, n, m, l, max_memory, measured=regime, graph=graph, loss=loss, missing=missing,
                 copies=copies)
    ranked = _ranked(loss, missing)
    for candidate in ranked:  # a loop here, not in a helper: the fallback warning's stacklevel counts the frames
        if _refuses_copies(candidate, fit):
            continue
        if candidate.auto_accepts(fit):
            return candidate.name
    raise ValueError(f'solver="auto": no registered solver accepts {fit!r} (ranked: '
                     f'{[s.name for s in ranked]}); name a solver')


def _refuses_copies(solver, regime):
    """Whether ``solver`` declares it does not take copies of training points (``copies``) and ``regime`` has them
    (computed only for such a solver)."""
    return not getattr(solver, "copies", True) and regime.copies


def _ranked(loss, missing):
    """The solvers "auto" may take for ``loss`` (an ``auto_rank``, the loss in ``losses``, incomplete views in
    ``missing_views`` when ``missing``), by increasing rank."""
    from .problem import takes_missing_views
    from .registry import SOLVERS

    return sorted((s for s in SOLVERS.values() if s.auto_rank is not None and loss in s.losses
                   and (not missing or takes_missing_views(s, loss))), key=lambda s: s.auto_rank)


@dataclass(frozen=True)
class Plan:
    """What a fit uses: the data term ("squared", "poisson" or "squared+poisson") and the solver's name."""

    loss: str
    solver: str


def plan(solver, regime, loss="squared", source_allowed=False):
    """The :class:`Plan` of a fit: loss and solver chosen together from the registered solvers' declarations and
    ``regime`` (:class:`Regime`; its ``loss`` is set to each loss tried).

    The losses tried, in order: ``loss`` itself, or for ``loss="auto"`` the Poisson-type term first when
    ``source_allowed`` says so (:func:`mvl.estimators.poisson_fit.source_allowed`: the term's name, "poisson" at
    few labels per class, "squared+poisson" for a class with few labels among many; True stands for "poisson"),
    then "squared". A named ``solver`` keeps its name, with the
    first of those losses it carries (the estimator then checks its declarations). ``solver="auto"``: for each loss
    in turn, the first solver of
    :func:`choose_solver`'s order that carries it and the view layout and accepts the regime; when none accepts the
    last loss, the first ranked solver that carries it (the estimator names what it lacks), ValueError if none
    does. A solver passed over for the view layout (incomplete views, or exact copies of training points where it
    declares ``copies = False``: "vecchia_direct") before the chosen one may warn what it would have taken (its
    ``auto_fallback``: "vecchia_direct" in the measured graph regime). The registered declarations
    give, for few labels: "structured" (precomputed kernels, or feature views up to :data:`AUTO_STRUCTURED_MAX`
    points within the memory budget), beyond it and on incomplete views "vecchia" (:mod:`mvl.solvers.poisson_sparse`,
    any size)."""
    from .registry import get_solver

    source = "poisson" if source_allowed is True else (source_allowed or None)
    losses = (loss,) if loss != "auto" else ((source, "squared") if source else ("squared",))
    if solver != "auto":
        chosen = get_solver(solver)
        return Plan(next((x for x in losses if x in chosen.losses), losses[-1]), chosen.name)
    from .problem import takes_missing_views

    ranked = []
    for x in losses:
        regime.loss = x
        ranked, passed = [], []
        for candidate in _ranked(x, False):  # inline, as in choose_solver (the fallback warning's stacklevel)
            if (regime.missing and not takes_missing_views(candidate, x)) or _refuses_copies(candidate, regime):
                passed.append(candidate)  # the view layout: it may say what it would have done
                continue
            ranked.append(candidate)
            if candidate.auto_accepts(regime):
                for s in passed:
                    w = s.auto_fallback(regime, candidate.name)
                    if w is not None:
                        warnings.warn(w, stacklevel=3)
                return Plan(x, candidate.name)
    carrying = _ranked(losses[-1], False)
    if not carrying:
        from .registry import SOLVERS

        raise ValueError(f'solver="auto": no registered solver carries loss="{losses[-1]}" (solvers: '
                         f'{sorted(SOLVERS)})')
    return Plan(losses[-1], (ranked or carrying)[0].name)


GRAPH_REGIME = 1.0
"""solver="auto" picks "vecchia_direct" on feature views beyond the structured solver's size when
:func:`measured_regime` is at least this. Measured (n = 8,000 and 20,000, ``benchmarks/bench_scale.py``'s data,
1,000 centres): 3e-3 for the ``smooth`` preset, where "cg" converges in 6-19 iterations, against 2e3 (``graph``),
5e3 (``graph6-1e4``) and 5e5 (``graph6``), where "cg" stalls (benchmarks/README.md): the threshold sits
between, orders of magnitude from both."""


NYSTROM_SAMPLE = 500
"""Points on which :func:`nystrom_missed` measures the Nystrom residual (plus the n_components centres)."""


def regime_ratio(gamma_A, gamma_B, gamma_W, laplacian_power, m):
    """A bound of ||beta M_B + omega L^k|| / delta from the parameters alone (no data), (gamma_B m + gamma_W 2^k) /
    gamma_A, using ||M_B|| <= m (between_weights <= 1) and ||L_norm^k|| <= 2^k (normalized Laplacian; for the
    unnormalized one ||L|| <= 2 max degree, so the bound is low). The labelled term cc^T (x) J is left out: it is the
    same in every regime."""
    return ((gamma_B * m if m > 1 else 0.0) + gamma_W * 2.0 ** int(laplacian_power)) / gamma_A


def nystrom_missed(kernels, n_components, random_state=0, sample=NYSTROM_SAMPLE, mask=None):
    """The largest, over the views, fraction of the kernel's trace that a Nystrom basis on ``n_components`` uniformly
    drawn centres misses, tr(K - K_nys) / tr(K), estimated on ``sample`` uniformly drawn points (all n if fewer):
    d_i = k(x_i, x_i) - k_iC K_CC^+ k_Ci, the diagonal of the Nystrom residual (FITC's correction). Cost per view:
    one n_components^2 kernel block and its eigendecomposition, one sample x n_components block; no n x n array.
    ``mask`` (n, m), incomplete views: view p's centres and sample are drawn among the samples that have it."""
    from sklearn.utils import check_random_state
    from threadpoolctl import threadpool_limits

    rng = check_random_state(random_state)
    n = kernels.n
    worst = 0.0
    with threadpool_limits(limits=1):  # 1000^2 blocks: threads only contend (10x slower on a loaded machine)
        for p in range(kernels.m):
            if mask is None:
                R = min(int(n_components), n)
                C = np.sort(rng.choice(n, R, replace=False))
                S = np.arange(n) if sample >= n else np.sort(rng.choice(n, int(sample), replace=False))
            else:
                idx = np.flatnonzero(mask[:, p])
                if idx.size < 2:
                    continue
                C = np.sort(rng.choice(idx, min(int(n_components), idx.size), replace=False))
                S = idx if sample >= idx.size else np.sort(rng.choice(idx, int(sample), replace=False))
            w, U = linalg.eigh(kernels.square(p, C))
            keep = w > 1e-12 * max(w.max(), np.finfo(float).tiny)
            G = kernels.submatrix(p, S, C) @ (U[:, keep] / np.sqrt(w[keep]))
            diag = kernels.diag(p)[S]
            missed = np.clip(diag - np.einsum("ij,ij->i", G, G), 0.0, None)
            worst = max(worst, float(missed.sum() / max(diag.sum(), np.finfo(float).tiny)))
    return worst


def measured_regime(kernels, gamma_A, gamma_B, gamma_W, laplacian_power, n_components, random_state=0,
                    sample=NYSTROM_SAMPLE, mask=None):
    """The graph-regime measure of solver="auto": :func:`nystrom_missed` times :func:`regime_ratio`. Why this
    product: the "cg" solver's Nystrom-preconditioned spectrum reaches 1 + ||K - K_nys|| ||M|| / delta (module
    docstring), the kernel's Nystrom residual amplified by the graph term; its per-point size, the missed fraction
    of the trace, is measured on a sample (a kernel that a basis captures, e.g. a wide Gaussian, gives ~1e-6 and
    "cg" converges whatever gamma_W / gamma_A), ||M|| / delta bounded from the parameters. >= GRAPH_REGIME:
    "vecchia_direct". ``mask`` (n, m), incomplete views: each view measured on the samples that have it (the
    kernels those of the views with the missing rows filled, e.g. ``MaskedViewKernels.base``)."""
    return nystrom_missed(kernels, n_components, random_state, sample, mask) * regime_ratio(
        gamma_A, gamma_B, gamma_W, laplacian_power, kernels.m)


def incomplete_graph_regime_warning(regime, fallback):
    """The :class:`GraphRegimeFallbackWarning` of incomplete views in the measured graph regime (``regime`` the
    measure), where "vecchia_direct" would be the choice but needs complete views; ``fallback`` the solver taken."""
    return GraphRegimeFallbackWarning(
        f'solver="auto": the graph regime (measured {regime:.3g} >= {GRAPH_REGIME:g}) on incomplete views, where "cg" '
        f'stalls and "nystrom" cannot follow the graph, but "vecchia_direct" needs complete views; falling back to '
        f'"{fallback}". Impute the missing views, fit on the samples that have every view, or use '
        'solver="structured" (exact with missing views, O(sum_p n_p^2) memory) if it fits max_memory.')


def copies_graph_regime_warning(regime, fallback):
    """The :class:`GraphRegimeFallbackWarning` of training views with exact copies of a sample in the measured graph
    regime (``regime`` the measure), where "vecchia_direct" would be the choice but needs distinct points;
    ``fallback`` the solver taken."""
    return GraphRegimeFallbackWarning(
        f'solver="auto": the graph regime (measured {regime:.3g} >= {GRAPH_REGIME:g}) with exact copies of training '
        f'points (equal rows in a view), where "cg" stalls and "nystrom" cannot follow the graph, but '
        f'"vecchia_direct" needs distinct points; falling back to "{fallback}". Drop the duplicate rows '
        '(np.unique(X, axis=0), keeping a labelled copy), or use solver="graph" (exact in the graph regime, copies '
        'count as one point).')


def warn_incomplete_graph_regime(regime, n):
    """Warn (:class:`GraphRegimeFallbackWarning`) when incomplete views (NaN rows) are in the measured graph regime
    (``regime`` >= :data:`GRAPH_REGIME`), where "vecchia_direct" would be the choice but needs complete views:
    solver="auto" then falls back to "cg" (n <= :data:`AUTO_CG_MAX`) or "nystrom", named with the measurement and
    what to do instead. Returns whether it warned."""
    if regime is None or regime < GRAPH_REGIME:
        return False
    warnings.warn(incomplete_graph_regime_warning(regime, "cg" if n <= AUTO_CG_MAX else "nystrom"), stacklevel=4)
    return True
