"""The settings of the Poisson-type data terms of :class:`mvl.MVLLeastSquares` (``loss="poisson"``,
``"squared+poisson"``, and ``"auto"`` at few labels per class or for a class with few labels among many). The term
and its system are derived in :mod:`mvl.solvers.poisson` and solved by the registered solvers that declare these
losses (``losses``: "structured", O(m n^3); "vecchia", the kernels' sparse Vecchia precision at any size and on
incomplete views, :mod:`mvl.solvers.poisson_sparse`; "dense", the textbook reference); the fit goes the one route of
:mod:`mvl.estimators.fit_route` (the graph built there, :class:`mvl.solvers.problem.SourceTerm`), new points are
scored by :class:`mvl.solvers.rules.SourceRule`; the graph and the out-of-sample rule are in
:mod:`mvl.selftuned_graph`. ``solver="auto"`` (:func:`mvl.solvers.auto.plan`) takes "structured" up to
:data:`mvl.solvers.auto.AUTO_STRUCTURED_MAX` points within the memory budget, "vecchia" beyond and on incomplete
views (feature views); ``loss="auto"`` has no size cap.

**The graph.** One self-tuned k-NN graph (k = :data:`POISSON_NEIGHBORS`) of the concatenated standardised views (or
of the summed kernels' distance for precomputed kernels), L = D - W, shared by every view's function; this replaces
the per-view graph of ``laplacian``, ``n_neighbors``, ``laplacian_power`` and ``graph_weights`` (which the Poisson-type
terms do not read). Chosen on validation draws (``benchmarks/bench_poisson.py validate``, seeds 100-104, never the
reported ones): per-view graphs, averaged or each view its own, lose 10-15 points on mfeat and multi-view MNIST (a
view's graph with several components breaks the centred sources); the self-tuned weights beat the Gaussian kernel
weights on USPST and MNIST and tie on mfeat; k = 10 ~ 5 > 20; L^2 and the normalized Laplacian lose (the latter
falls to chance at small gamma_A: its null space is not the constants).

**The sources.** Class-balanced (:func:`mvl.solvers.poisson.source_weights`): every class puts the same mass into
the graph whatever its number of labelled points (the same as Poisson learning's sources when the classes are
equally labelled); on validation draws with unequal counts it gained 5-12 points.

**The scale.** With the source term alone the solution depends on gamma_A / gamma_W and gamma_B / gamma_W only.
The validated ratio is gamma_A / gamma_W = :data:`POISSON_RATIO` (1e-5 ~ 1e-4 best; 1e-3, the package defaults'
1e-5 / 1e-2, loses 0.4 points on mfeat and 2 on USPST at one label per class, 1e-2 loses 4-8), so ``loss="poisson"``
raises gamma_W to gamma_A / POISSON_RATIO when it is smaller and scales gamma_B with it (:func:`poisson_gammas`);
``"squared+poisson"`` takes the gammas as given (its labelled squared term has a scale of its own).

**The scale where the kernel term dominates** (``gamma_A="auto"`` with ``loss="poisson"`` only; an explicit gamma_A
is solved at as given). On graph-regime data (the scale study's graph6: manifolds that the graph follows and the
Gaussian kernels smooth across) the ratio POISSON_RATIO leaves the fit to the kernel term: 24-50 % at one label per
class where Poisson learning gets 99-100 %, and 100 % at a ratio of ~1e-9. Two quantities, both from the training
points and the labelled sources only:

- The kernel share at the solution, theta = gamma_A ||f||^2 / (gamma_A ||f||^2 + gamma_W sum_p F_p^T L F_p)
  (:func:`kernel_share`; ||f^p||^2 = a_p^T K^p a_p = a_p^T F_p, F_p the node values of view p), free once the
  system is solved. On the validation draws (seeds 100-104, 1 and 5 labels per class) theta <= 0.034 on mfeat,
  <= 0.021 on USPST, <= 0.029 on multi-view MNIST (300 points per class), 0.13-0.38 on graph6 (4,000 and 8,000
  points). Beyond :data:`KERNEL_SHARE_MAX` = 0.05 the fit is solved again at the ratio below; otherwise it is kept
  (so those three data sets' fits are unchanged).
- The ratio from the graph limit (:func:`source_energies`, :func:`source_ratio`). With gamma_B = 0 view p solves
  (omega L + delta K_p^{-1}) F_p = c_p S (:mod:`mvl.solvers.poisson_sparse`, (P)); as delta / omega -> 0, F_p ->
  c_p (f0 + Z a_p) / omega with f0 = L^+ S the graph-only Poisson solution and Z a_p the part in L's null space
  (the components' constants) that minimises the kernel energy. There the graph term is omega^{-1} c_p^2 f0^T L f0
  and the kernel term (delta / omega^2) c_p^2 (f0 + Z a_p)^T K_p^{-1} (f0 + Z a_p); summed over the views, the
  kernel term is (gamma_A / gamma_W) E_K / E_W of the graph term, E_W = sum_p c_p^2 f0^T L f0, E_K = sum_p c_p^2
  min_a (f0 + Z a)^T K_p^{-1} (f0 + Z a). Holding it to at most a share s = :data:`SOURCE_SHARE` of the graph
  term gives gamma_A / gamma_W = min(POISSON_RATIO, s E_W / E_K), and gamma_A = gamma_W times that (gamma_W and
  gamma_B those of :func:`poisson_gammas`; ``gamma_A_`` reports it). f0 is one sparse Cholesky solve of L + eps I
  on L's range (:func:`graph_limit`), K_p^{-1} Vecchia's sparse precision of q = 20 neighbours
  (:mod:`mvl.solvers.vecchia`; the sparse solver reuses its factors), its conditional variances floored at
  :data:`VARIANCE_FLOOR` of the largest: no n x n array beyond the route's own.
- The dense second solve: the "structured" solve of graph6's 4,000 points at the rule's ~1e-9 leaves a true
  relative residual of 3e-5 > ``tol``, which three steps of iterative refinement on the same LU factors left there
  (a float64 floor of the products of coefficients K^{-1} F of scale 1/gamma_A). With solver="auto" such a solve
  is replaced by the node-value system (P_v) of :mod:`mvl.solvers.poisson_sparse` on the same Gram matrices and
  Vecchia factors (residual ~1e-9 there; the outputs F_v on the training points, new points by the same induction
  rule; ``coef_`` then holds a_v = Q_v F_v, ``solver_`` is "vecchia"), as the "vecchia" solver does beyond
  :data:`mvl.solvers.auto.AUTO_STRUCTURED_MAX`; a named solver is kept.
- Three guards keep the first fit: the second solve fails (a factorisation lost at that ratio), misses ``tol``
  (the ratio is beyond float64), or
  its solution gives a labelled class less than half its labelled share of the unlabelled points
  (:func:`mvl.solvers.vecchia_direct.limit_class_balance` < :data:`mvl.solvers.vecchia_direct.LIMIT_BALANCE`):
  the graph's solution, Poisson learning's limit, absorbed a class, and the kernel term was helping (the tests'
  three Gaussian clusters in 3 and 2 features: 100 % at POISSON_RATIO, 67 % at the limit as Poisson learning).

Why not the graph-limit ratio alone: on mfeat E_W / E_K is ~1e-11 (views with near-duplicate points, whose
conditional variances sit at Vecchia's jitter floor and carry all of E_K: f0 differs between points a view cannot
tell apart), below graph6's ~6e-7, yet mfeat keeps its accuracy at POISSON_RATIO: the energy at the limit overstates
the kernel's pull where the solution can equalise such points at little graph cost; the share at the solution does
not. The floor: on mfeat, and on the tests' clusters in 2-3 features, Vecchia's d_i reach the jitter floor
(1e-10) and carry E_K; flooring them at 1e-4 raised the tests' E_W / E_K from 1e-9 to 4e-7 and moved graph6's by
less than 20 %. Chosen on the validation draws (``benchmarks/bench_poisson_scale.py``,
benchmarks/results/source_scale_validate.csv): on graph6's 8,000 points s = 1e-2, 1e-3, 1e-4 gave 99.21, 99.23,
99.23 % (Poisson learning 96.65 %); on its 4,000 points, with the dense solve's residual admitted up to 1e-3,
s = 1e-2 and 1e-3 gave 66.0 and 95.9 % (Poisson learning 80.2 %),
so s = 1e-3 (with the node-value second solve below: 97.6 %).

**Prediction.** Feature views: the induction rule of :mod:`mvl.selftuned_graph` (the weighted mean of the training
outputs at a point's 10 nearest training points; a training point gets its own output; a point that misses views,
its neighbours on the coordinates of the views it has, :func:`mvl.solvers.rules.present_view_induction`). The
representer theorem also gives out-of-sample values, C f(x) = sum_p c_p K^p(x, X) A_p, but on validation they lost
up to 28 points to the transductive ones at one label per class (multi-view MNIST: the kernel term is 1e-5 of the
graph term, so f is shaped by the graph on the training points and the kernel extension off them is nearly flat).
Precomputed kernels: the representer rule (the induction needs k(x, x) of the new points, which the cross-kernel
input does not hold).
The class of an output is the argmax after the degree-weighted shift of :func:`mvl.solvers.poisson.fit_decision`.
"""

from __future__ import annotations

__all__ = ["LOSSES", "AUTO_LABELS_PER_CLASS", "AUTO_UNEQUAL_RATIO", "AUTO_UNEQUAL_LOSS", "POISSON_NEIGHBORS",
           "POISSON_RATIO", "few_labelled_class", "resolve_loss", "source_refusal", "source_allowed",
           "GRAPH_PARAMETERS", "poisson_gammas", "few_labels_message", "labelled_class_counts", "SOURCE_SHARE",
           "KERNEL_SHARE_MAX", "VARIANCE_FLOOR", "LIMIT_SHIFT", "kernel_share", "graph_limit", "source_energies",
           "source_ratio"]

LOSSES = ("auto", "squared", "poisson", "squared+poisson")
"""The ``loss`` options of MVL-LS: the data terms of :data:`mvl.solvers.registry.LOSSES`, or "auto"
(:func:`mvl.solvers.auto.plan`, with :func:`source_allowed`)."""

AUTO_LABELS_PER_CLASS = 5
"""``loss="auto"``: the Poisson-type term when the labelled points are at most this many per class on average
(l / P) and some points are unlabelled, the squared loss otherwise (chosen on validation draws:
``docs/guide/few_labels.md``); also the most labels of a class that :func:`few_labelled_class` calls few."""

AUTO_UNEQUAL_RATIO = 4
"""``loss="auto"`` with unequal labelled classes (:func:`few_labelled_class`): a class with at most
:data:`AUTO_LABELS_PER_CLASS` labels while the largest has at least this many times as many."""

AUTO_UNEQUAL_LOSS = "squared+poisson"
"""The data term of ``loss="auto"`` for unequal labelled classes (:func:`few_labelled_class`) above
:data:`AUTO_LABELS_PER_CLASS` labels per class on average: the squared loss plus the class-balanced source term,
whose centred sources weigh every class alike (:func:`mvl.solvers.poisson.source_weights`), where the squared loss
alone lets the few labels be outweighed. Chosen over "poisson" on validation draws
(``benchmarks/bench_few_labelled_class.py validate``, seeds 100-104, never the reported ones)."""

POISSON_NEIGHBORS = 10
"""k of the Poisson-type fit's self-tuned graph (graphlearning's default; the point itself counted)."""

POISSON_RATIO = 1e-5
"""The validated gamma_A / gamma_W of the source term (``benchmarks/bench_poisson.py validate``)."""


def few_labelled_class(counts):
    """Whether labelled class counts ``counts`` (one entry per labelled class) are that unequal: at least two
    classes, the smallest with at most :data:`AUTO_LABELS_PER_CLASS` labels and the largest with at least
    :data:`AUTO_UNEQUAL_RATIO` times as many."""
    import numpy as np

    counts = np.asarray(counts if counts is not None else (), dtype=np.int64).ravel()
    if counts.size < 2 or counts.min() < 1:
        return False
    return bool(counts.min() <= AUTO_LABELS_PER_CLASS and counts.max() >= AUTO_UNEQUAL_RATIO * counts.min())


def resolve_loss(loss, n_labelled, n_classes, n, supported=True, counts=None):
    """The data term of a fit on the label counts alone: ``loss`` itself, or for "auto", when some points are
    unlabelled (n_labelled < n) and ``supported``: "poisson" when n_labelled / n_classes <=
    :data:`AUTO_LABELS_PER_CLASS`, else :data:`AUTO_UNEQUAL_LOSS` when the labelled class counts ``counts`` are
    unequal (:func:`few_labelled_class`), else "squared"."""
    if loss != "auto":
        return loss
    if not (n_labelled < n and supported):
        return "squared"
    if n_labelled <= AUTO_LABELS_PER_CLASS * max(n_classes, 1):
        return "poisson"
    return AUTO_UNEQUAL_LOSS if few_labelled_class(counts) else "squared"


def source_refusal(est, has_missing_views, n_labelled, n):
    """Why ``loss="auto"`` may not take a Poisson-type term for ``est`` (a phrase), or None when it may: every point
    labelled (the term needs unlabelled points), precomputed kernels (the graph would come from the kernels'
    distance and new points from the representer rule, neither validated), gamma_W = 0 (no graph term), a graph
    parameter set (:data:`GRAPH_PARAMETERS`: the Poisson-type terms use a graph of their own), incomplete views."""
    if n_labelled >= n:
        return "every training point is labelled"
    if est.kernel == "precomputed":
        return 'kernel="precomputed"'
    if not est.gamma_W > 0:
        return "gamma_W = 0"
    touched = [name for name in GRAPH_PARAMETERS if not is_default(est, name)]
    if touched:
        return f"{', '.join(touched)} {'is' if len(touched) == 1 else 'are'} set"
    if has_missing_views:
        return "views are missing"
    return None


def source_allowed(est, has_missing_views, n_labelled, n_classes, n, counts=None):
    """The Poisson-type term ``loss="auto"`` may take for ``est`` ("poisson" or "squared+poisson",
    :func:`resolve_loss` on the label counts; :func:`mvl.solvers.auto.plan` then tries it first, with a solver
    that declares it), or None: the squared loss. The term needs few labels (on average, or in a class among many:
    :func:`few_labelled_class`, ``counts`` the labelled class counts) with some unlabelled points, feature views
    (the validated graph and induction rule), a graph term (gamma_W > 0) built from the data with the default graph
    parameters (:data:`GRAPH_PARAMETERS` untouched: the Poisson-type terms use a graph of their own) and complete
    views (:func:`source_refusal`). Otherwise the user's setting is one of the squared loss."""
    supported = source_refusal(est, has_missing_views, n_labelled, n) is None
    loss = resolve_loss("auto", n_labelled, n_classes, n, supported, counts)
    return None if loss == "squared" else loss


GRAPH_PARAMETERS = ("laplacian", "n_neighbors", "laplacian_power", "graph_weights", "between_weights")
"""The squared loss's graph parameters, which the Poisson-type terms replace by their own graph: set to anything but
its default, one of them keeps ``loss="auto"`` on the squared loss."""


def is_default(est, name):
    """Whether parameter ``name`` of estimator ``est`` is at its constructor default (same value and type)."""
    import inspect

    default = inspect.signature(type(est).__init__).parameters[name].default
    value = getattr(est, name)
    return isinstance(value, (str, int, type(None))) and value == default and type(value) is type(default)


def poisson_gammas(est, loss):
    """(gamma_A, gamma_B, gamma_W) of a Poisson-type fit: with ``loss="poisson"`` gamma_W is raised to gamma_A /
    :data:`POISSON_RATIO` when smaller (the source term alone sees only the ratios; a larger gamma_W, i.e. a smaller
    ratio, is kept) and gamma_B scaled by the same factor; ``"squared+poisson"``: the gammas as given."""
    gA, gB, gW = est._gamma_A(), float(est._gamma_B()), float(est.gamma_W)
    if loss == "poisson" and gW < gA / POISSON_RATIO:
        scale = gA / POISSON_RATIO / gW if gW > 0 else None
        gB = gB * scale if scale is not None else gB
        gW = gA / POISSON_RATIO
    return gA, gB, gW


SOURCE_SHARE = 1e-3
"""The kernel term's largest share of the graph term at the graph limit (:func:`source_ratio`)."""

KERNEL_SHARE_MAX = 0.05
"""The kernel term's largest share of the penalties at the solution of :data:`POISSON_RATIO`
(:func:`kernel_share`): beyond it ``gamma_A="auto"`` solves again at :func:`source_ratio`."""


def kernel_share(problem, result):
    """theta = gamma_A ||f||^2 / (gamma_A ||f||^2 + gamma_W sum_p F_p^T L F_p) at the solution ``result`` of the
    few-label ``problem`` (:class:`mvl.solvers.problem.MVLProblem` with ``source``): ||f||^2 = sum_p a_p^T F_p,
    F_p = K^p a_p the node values (those of the sparse fit, ``result.details.values``, when it has them)."""
    import numpy as np

    from ..solvers.poisson_sparse import views_of

    A = result.coef
    m = A.shape[0]
    values = getattr(result.details, "values", None)
    if values is None:
        values = np.stack([problem.kernels[p] @ A[p] for p in range(m)])
    L = problem.source.laplacian
    idx = views_of(problem.mask, A.shape[1], m)
    E_K = E_W = 0.0
    for p, ix in enumerate(idx):
        F = values[p][ix]
        E_K += float(np.sum(A[p][ix] * F))
        Lp = L if len(ix) == L.shape[0] else L[ix][:, ix]
        E_W += float(np.sum(F * (Lp @ F)))
    kern, graph = problem.gamma_A * E_K, problem.gamma_W * E_W
    return kern / (kern + graph) if kern + graph > 0 else 0.0


VARIANCE_FLOOR = 1e-4
"""The floor of Vecchia's conditional variances in E_K (:func:`source_energies`), times the view's largest kernel
diagonal: a point its neighbours predict to within 1 % of the kernel's scale counts as predicted to 1 %."""

LIMIT_SHIFT = 1e-10
"""The graph limit's regularisation: L^+ S is solved as (L + eps I)^{-1} S on the range of L, eps this times the
mean degree (relative error eps / lambda_2 in the directions of L's smallest non-zero eigenvalue lambda_2)."""


def _factor_spd(A):
    """A solver z -> A^{-1} z of a sparse SPD matrix A: the sparse Cholesky factorisation of
    :data:`mvl.solvers.poisson_sparse.FACTORISATIONS` when importable, SuperLU otherwise."""
    from scipy import sparse
    from scipy.sparse import linalg as sla

    from ..solvers.poisson_sparse import available_factorisation, cholesky_solver

    if available_factorisation() == "cholespy":
        return cholesky_solver(A)
    return sla.splu(sparse.csc_matrix(A)).solve


def graph_limit(laplacian, S):
    """(f0, Z): the graph-only Poisson solution f0 = L^+ S (n, P) of sources S on the graph L = D - W (sparse), and
    the indicators Z (n, n_c) of the graph's connected components (L's null space). S is first projected on the
    range of L (its mean removed on every component, as the pseudo-inverse does); f0 has mean zero on every
    component."""
    import numpy as np
    from scipy import sparse
    from scipy.sparse.csgraph import connected_components

    L = sparse.csr_matrix(laplacian)
    n = L.shape[0]
    S = np.asarray(S, dtype=np.float64).reshape(n, -1)
    n_c, comp = connected_components(L, directed=False)
    Z = sparse.csr_matrix((np.ones(n), (np.arange(n), comp)), shape=(n, n_c))
    sizes = np.bincount(comp, minlength=n_c).astype(np.float64)

    def centred(F):
        return F - (Z.T @ F / sizes[:, None])[comp]

    eps = LIMIT_SHIFT * max(float(L.diagonal().mean()), 1e-300)
    f0 = centred(_factor_spd(L + eps * sparse.identity(n, format="csr"))(centred(S)))
    return f0, Z


def source_energies(kernels, laplacian, S, c, mask=None, neighbours=None, random_state=0, factors=None,
                    variance_floor=None):
    """(E_W, E_K, factors) of the graph limit (module docstring, "The scale at the graph limit"): E_W = sum_p
    c_p^2 f0^T L f0 and E_K = sum_p c_p^2 min_a (f0 + Z a)^T Q_v^p (f0 + Z a) over view p's rows (L's null space
    Z added where it lowers the kernel energy, as the limit does), summed over the P output columns; Q_v^p
    Vecchia's sparse precision of view p (q = ``neighbours``, default
    :data:`mvl.solvers.vecchia.VECCHIA_NEIGHBOURS`; exact for q >= n - 1). ``kernels``: the training Gram matrices
    (m, n, n) or a :class:`mvl.kernel_blocks.ViewKernels` / MaskedViewKernels; ``factors``: precomputed
    :func:`mvl.solvers.poisson_sparse.view_vecchia_factors` (returned, for the solver to reuse);
    ``variance_floor``: Vecchia's conditional variances d_i are floored at it times the view's largest d_i in E_K
    (default :data:`VARIANCE_FLOOR`; 0: the precision itself)."""
    import numpy as np

    from ..kernel_blocks import ViewKernels
    from ..solvers.poisson_sparse import views_of, view_vecchia_factors
    from ..solvers.vecchia import VECCHIA_NEIGHBOURS

    if isinstance(kernels, np.ndarray):
        kernels = ViewKernels(gram=kernels)
    c = np.asarray(c, dtype=np.float64)
    m, n = len(c), kernels.n
    idx = views_of(mask, n, m)
    q = VECCHIA_NEIGHBOURS if neighbours is None else int(neighbours)
    if factors is None:
        factors = view_vecchia_factors(kernels, idx, q, random_state)
    floor = VARIANCE_FLOOR if variance_floor is None else float(variance_floor)
    f0, Z = graph_limit(laplacian, S)
    E_W = float(np.sum(c ** 2)) * float(np.sum(f0 * (laplacian @ f0)))
    E_K = 0.0
    for p, ix in enumerate(idx):
        if c[p] == 0:
            continue
        IB, d = factors[p]
        scale = 1.0 / np.sqrt(np.maximum(d, floor * float(np.max(d))))[:, None]
        h = scale * (IB @ f0[ix])  # ||h||^2 = f0^T Q_v f0
        Zp = Z[ix]
        Zp = Zp[:, np.flatnonzero(Zp.getnnz(axis=0))]
        G = scale * (IB @ Zp).toarray()
        a = np.linalg.lstsq(G, -h, rcond=None)[0]
        E_K += c[p] ** 2 * float(np.sum((h + G @ a) ** 2))
    return E_W, E_K, factors


def source_ratio(E_W, E_K, share=None):
    """gamma_A / gamma_W of ``gamma_A="auto"`` with ``loss="poisson"``: min(:data:`POISSON_RATIO`, share E_W /
    E_K) (share default :data:`SOURCE_SHARE`; module docstring)."""
    share = SOURCE_SHARE if share is None else float(share)
    if not E_K > 0:
        return POISSON_RATIO
    return min(POISSON_RATIO, share * E_W / E_K)


def few_labels_message(est, y, what, fix):
    """The :class:`mvl.exceptions.FewLabelsWarning` text of a fit of ``est`` on labels ``y`` (all the training
    labels, -1 unlabelled, or the labelled ones) whose data term does not weigh the classes alike while a labelled
    class has few labels among many (:func:`few_labelled_class`): the class, its count against the largest's,
    ``what`` was fitted (a phrase: why not the few-label term) and ``fix``; None when the classes are not that
    unequal."""
    import numpy as np

    labels, counts = labelled_class_counts(y)
    if not few_labelled_class(counts):
        return None
    few = labels[counts == counts.min()]
    names = ", ".join(repr(v) for v in np.asarray(few).tolist())
    return (f"{type(est).__name__}: class {names} has {counts.min()} labelled sample(s) against {counts.max()} for "
            f"the largest class, so few that they can be outweighed and the class hardly predicted: {what}. {fix}")


def labelled_class_counts(y):
    """(the distinct labels among the labelled samples of ``y``, their counts); empty arrays if they cannot be told
    apart here (the validation of the fit reports it)."""
    import numpy as np

    from .base import unlabelled_mask

    empty = (np.array([]), np.array([], dtype=np.int64))
    if y is None:
        return empty
    try:
        ya = np.asarray(y).ravel()
        return np.unique(ya[~unlabelled_mask(ya)], return_counts=True)
    except (TypeError, ValueError):
        return empty
