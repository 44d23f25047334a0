"""The method registry: every method the workflow runs and the report shows, in one list.

A method name (``mvl_ls``, ``mvl_ls_optc25``, ``mvml_full_n24``, ``view_fou``, ...) maps to a :class:`Method`:
its family (the unit of work of one workflow job: methods of one family and split run in one process, see
:mod:`mvl.workflow.runner`), how it runs (its run kind, one function each in :mod:`mvl.workflow.experiments`,
and its estimator with fixed keyword arguments), what it needs (validation set, the split's gamma/graph
selection, the run settings it reads, its cost in MVL-LS fits for the cluster resources) and how the report
shows it (display label, order, colour, the report sections and panel it belongs to, the published tables' name
for it). :data:`REGISTRY` is the one list: its order is the report's order. The config's method names are
checked against it (:mod:`mvl.workflow.settings`); the runner, the rules, the reports
(:mod:`mvl.workflow.report`) and the published-vs-ours comparison (:mod:`mvl.workflow.compare`) read it.

Adding a method that reuses an estimator is one entry here (e.g. ``Method("mvl_ls_unnormalized", "ls",
"MVL-LS, unnormalized Laplacian", estimator_params={"laplacian": "unnormalized"}, sections=("main",))``); with a new
estimator, the estimator module plus one entry here (and one factory in :data:`ESTIMATORS`). The methods are those
compared in Section 7 (MVL-LS, Theorem 10; MVL-LS-optC, Section 6; MVL-SVM, Theorems 6 and 13) and related
systems.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

__all__ = ["SCALE_METHODS", "FAMILIES", "RUNS", "SECTIONS", "REFERENCE", "ESTIMATORS", "Method", "Pattern", "REGISTRY",
           "method", "lookup", "method_attribute", "rank", "methods_in", "register"]

SCALE_METHODS = {
    "auto": "MVL-LS, a first fit: solver, gamma_A and loss at the package defaults (\"auto\")",
    "structured": "MVL-LS, structured solver (exact)",
    "cg": "MVL-LS, cg (exact to tol)",
    "nystrom": "MVL-LS, Nystrom restriction",
    "graph": "MVL-LS, graph solver (exact to tol)",
    "vecchia_direct": "MVL-LS, Vecchia direct solver (graph regime, one sparse factorisation)",
    "labelonly": "MVL-LS on the labelled points only",
    "transductive": "MVL-LS, test points in the fit (transductive, as the graph peers)",
    "graphlimit": "MVL-LS's graph term alone (gamma_A -> 0, transductive)",
    "labelspreading": "LabelSpreading (scikit-learn, kNN)",
    "laplace": "Laplace learning (graphlearning)",
    "poisson": "Poisson learning (graphlearning)",
    "ridge": "Nystroem + RidgeClassifier (labelled only)",
}
"""The scale profile's methods (:mod:`mvl.workflow.scale`), name -> label: the one list of their
names, read by the settings (config check), the schema test and the scale report; :data:`mvl.workflow.scale.REGISTRY`
adds each one's fit function. "nystrom_<M>" in the config names nystrom with M centres."""

FAMILIES = ("ls", "svm", "optc", "comparison")
"""Families of methods, each run as one job per (dataset, split): MVL-LS and its selections, ablations,
single views and the SVC baseline; the SVMs; MVL-LS-optC; the related systems (MVML, perceptrons)."""

RUNS = {
    "fixed": ("gammas", "graph"),
    "ablation": ("gammas", "graph"),
    "selected": ("graph", "grid"),
    "kfold": ("graph", "grid"),
    "ablation_selected": ("graph", "grid"),
    "optc": ("gammas", "graph", "optc"),
    "mvml": ("graph", "comparison"),
    "perceptron": ("graph", "comparison"),
    "svc": ("graph", "svc_C"),
    "single_views": ("gammas", "graph"),
}
"""How a method runs (one function each in :mod:`mvl.workflow.experiments`) -> the run settings it reads
(:class:`mvl.workflow.settings.RunSettings`; every row names the configured graph): one fit with the configured
gammas; the four gamma_B / gamma_W cells of Table 2; one fit with gammas (and graph) selected on validation; one
fit with graph and gammas selected by k-fold cross-validation over the labelled samples at every l_c; the
four cells, each selected on validation; MVL-LS-optC with validation restarts; MVML and the perceptrons on the
labelled points; the SVC baseline on the average kernel; every view alone (one ``fixed`` run per view)."""

SECTIONS = ("main", "ablation_scope", "configured_ablation", "optc", "comparison", "comparison_reference")
"""Report sections a method can appear in: the accuracy table and figure of the main sweep; the Table-2
ablation by scope (its ``Method.scope_label``); the configured-gamma ablation of every solver (its
``Method.solver_label``); the optC tables and figures; the related-systems comparison (its
``Method.panel``), where the reference methods are drawn too."""

REFERENCE = "mvl_ls"
"""The method every report question is asked against: supervised MVL-LS with uniform c (Theorem 10)."""


@dataclass(frozen=True)
class Method:
    name: str
    family: str
    label: str
    needs_validation: bool = False  # draws a validation set (selection, optC restarts)
    uses_selection: bool = False  # reads the graph/gamma selection of its split and u_c
    fits: float = 1.0  # cost in structured MVL-LS fits of the same size
    view: str | None = None  # the one view of ``view_<name>``
    optc_iterations: int | None = None  # N of ``mvl_ls_optc<N>``
    mvml_metric: str | None = None  # metric of ``mvml_<metric>_n<pct>``: full, sparse, cov or identity
    nystrom_percent: int | None = None  # pct of ``mvml_<metric>_n<pct>``
    run: str = "fixed"  # the run kind, a key of RUNS
    estimator: str | None = "MVLLeastSquares"  # the estimator, a key of ESTIMATORS (None: several runs)
    estimator_params: tuple = ()  # fixed keyword arguments of the estimator, as (name, value) pairs
    selection_scope: str | None = None  # selected methods: "paper" (configured graph) or "graph_selected"
    color: str | None = None  # matplotlib colour of its series in the report's figures
    sections: tuple[str, ...] = ()  # report sections (SECTIONS)
    scope_label: str | None = None  # ablation_scope: what the scope holds fixed or selects
    solver_label: str | None = None  # configured_ablation: the solver's name
    panel: str | None = None  # comparison: the figure row / table group
    published: tuple[str, ...] = ()  # names of its rows in the published tables (mvl.data.published)
    columns: tuple[str, ...] = ()  # result columns beyond the common ones (documentation and tests)
    rank: tuple = field(default=(), compare=False)  # order in the report (set by the registry)

    def __post_init__(self):
        if self.family not in FAMILIES:
            raise ValueError(f"method {self.name!r}: family must be one of {FAMILIES}, got {self.family!r}")
        if self.run not in RUNS:
            raise ValueError(f"method {self.name!r}: run kind must be one of {sorted(RUNS)}, got {self.run!r}")
        if self.estimator is not None and self.estimator not in ESTIMATORS:
            raise ValueError(f"method {self.name!r}: estimator must be one of {sorted(ESTIMATORS)}, got "
                             f"{self.estimator!r}")
        unknown = set(self.sections) - set(SECTIONS)
        if unknown:
            raise ValueError(f"method {self.name!r}: unknown report sections {sorted(unknown)}; known: {SECTIONS}")
        if isinstance(self.estimator_params, dict):
            object.__setattr__(self, "estimator_params", tuple(sorted(self.estimator_params.items())))

    @property
    def ablation(self):
        """A gamma_B / gamma_W ablation of Table 2 (configured or selected gammas)."""
        return self.run in ("ablation", "ablation_selected")

    @property
    def related(self):
        """One of the related systems compared with MVL (MVML, the perceptrons)."""
        return self.family == "comparison"

    @property
    def kind(self):
        """The estimator behind the name: mvl_ls, mvl_ls_optc, mvl_svm, mvl_binsvm, svc, mvml or perceptron."""
        return _KINDS[self.estimator]

    @property
    def reads(self):
        """The run settings this method reads (:data:`RUNS`)."""
        return RUNS[self.run]

    def in_section(self, section):
        return section in self.sections

    def make_estimator(self, run, gammas=None, graph=None, seed=0, l_c=0, u_c=0):
        """A new, unfitted estimator of this method (``kernel="precomputed"``, sample-first kernels) from the run
        settings ``run`` (:class:`mvl.workflow.settings.RunSettings`): ``gammas`` (gamma_A, gamma_B, gamma_W;
        default the configured ``run.gammas``), ``graph`` (a :class:`mvl.workflow.settings.GraphSpec` chosen on
        validation; default the configured ``run.graph``), ``seed`` (the split) and, for optC's restarts,
        ``l_c`` and ``u_c``."""
        if self.estimator is None:
            raise ValueError(f"method {self.name!r} runs several estimators (run kind {self.run!r})")
        if gammas is None:
            gammas = run.gammas
        est = ESTIMATORS[self.estimator](self, run, gammas, run.graph if graph is None else graph, seed, l_c, u_c)
        return est.set_params(**dict(self.estimator_params)) if self.estimator_params else est


@dataclass(frozen=True)
class Pattern:
    """Methods named by a pattern with parameters (``mvl_ls_optc<N>``): ``build(match)`` gives the
    :class:`Method`, ``order(match)`` its place among the pattern's methods."""

    regex: str
    build: object
    order: object = None
    example: str = ""


# ------------------------------------------------------------------ estimator factories


def _mvl(class_name):
    """Factory of an MVL estimator with gammas and graph (MVL-LS, Theorem 10; the SVMs, Theorems 6 and 13)."""
    def make(m, run, gammas, graph, seed, l_c, u_c):
        from ..estimators import least_squares, svm

        cls = {"MVLLeastSquares": least_squares.MVLLeastSquares, "MVLSVM": svm.MVLSVM,
               "MVLBinarySVM": svm.MVLBinarySVM}[class_name]
        extra = {"loss": "squared"} if class_name == "MVLLeastSquares" else {}  # the paper's data term
        return cls(**_gamma_params(gammas), **graph.estimator_params(), kernel="precomputed", **extra)
    return make


def _gamma_params(gammas):
    """(gamma_A, gamma_B, gamma_W) as the estimators' keyword arguments."""
    gamma_A, gamma_B, gamma_W = gammas
    return {"gamma_A": gamma_A, "gamma_B": gamma_B, "gamma_W": gamma_W}


def _optc_estimator(m, run, gammas, graph, seed, l_c, u_c):
    """MVL-LS-optC (Section 6): N = ``m.optc_iterations`` alternations from seeded restarts (seed, split, l_c, u_c)."""
    from ..estimators.optc import MVLLeastSquaresOptC

    opt = run.optc
    u_rows = -1 if u_c == "all" else int(u_c)
    return MVLLeastSquaresOptC(**_gamma_params(gammas), alpha=opt.alpha, n_restarts=opt.n_restarts,
                               n_iter=m.optc_iterations,
                               tol=opt.tol, **graph.estimator_params(),
                               random_state=[opt.seed, int(seed), int(l_c), u_rows], kernel="precomputed")


def _mvml_estimator(m, run, gammas, graph, seed, l_c, u_c):
    """MVML (Huusari et al. 2017) with the metric and Nystrom percentage of the name, ``run.comparison``."""
    from ..estimators.mvml import MVML

    cfg = run.comparison
    return MVML(lmbda=cfg.mvml_lambda, eta=cfg.mvml_eta, learn_A=m.mvml_metric, n_iter=cfg.mvml_iterations,
                nystrom=m.nystrom_percent / 100.0, random_state=int(seed), kernel="precomputed")


def _perceptron(class_name):
    def make(m, run, gammas, graph, seed, l_c, u_c):
        from ..estimators import perceptron

        return getattr(perceptron, class_name)(n_epochs=run.comparison.perceptron_epochs, random_state=int(seed),
                                               kernel="precomputed")
    return make


def _svc(m, run, gammas, graph, seed, l_c, u_c):
    """scikit-learn's SVC on a precomputed (2-D) kernel, C = ``run.svc_C``."""
    from sklearn.svm import SVC

    return SVC(kernel="precomputed", C=run.svc_C)


ESTIMATORS = {
    "MVLLeastSquares": _mvl("MVLLeastSquares"),
    "MVLSVM": _mvl("MVLSVM"),
    "MVLBinarySVM": _mvl("MVLBinarySVM"),
    "MVLLeastSquaresOptC": _optc_estimator,
    "MVML": _mvml_estimator,
    "KernelMultiViewPerceptron": _perceptron("KernelMultiViewPerceptron"),
    "OrthogonalMultiViewPerceptron": _perceptron("OrthogonalMultiViewPerceptron"),
    "SVC": _svc,
}
"""Estimator name (``Method.estimator``) -> factory ``(method, run, gammas, graph, seed, l_c, u_c)``."""

_KINDS = {"MVLLeastSquares": "mvl_ls", "MVLLeastSquaresOptC": "mvl_ls_optc", "MVLSVM": "mvl_svm",
          "MVLBinarySVM": "mvl_binsvm", "SVC": "svc", "MVML": "mvml", "KernelMultiViewPerceptron": "perceptron",
          "OrthogonalMultiViewPerceptron": "perceptron", None: "mvl_ls"}


# ------------------------------------------------------------------ the registry


def _optc(m):
    its = int(m.group(1))  # measured: 20 restarts x 25 iterations ~ 22 fits
    return Method(m.group(0), "optc", f"MVL-LS-optC ({its} iterations)", True, False, 2 + its * 0.8,
                  optc_iterations=its, run="optc", estimator="MVLLeastSquaresOptC", sections=("optc",),
                  published=("MVL-LS-optC",), columns=("val_accuracy", "optc_c", "optc_best_restart", "optc_objective"))


_MVML_METRICS = ("full", "sparse", "cov", "identity")
_MVML_PANELS = {"full": "MVML, full metric", "sparse": "MVML, sparse metric", "cov": "MVML, cov metric",
                "identity": "MVML, identity metric"}


def _mvml(m):
    metric, pct = m.group(1), int(m.group(2))
    cost = 10.0 * (pct / 100.0) ** 3 * (30 if metric == "sparse" else 1)
    return Method(m.group(0), "comparison", f"MVML {metric}, Nystrom {pct} %", fits=max(cost, 0.5),
                  mvml_metric=metric, nystrom_percent=pct, run="mvml", estimator="MVML", sections=("comparison",),
                  panel=_MVML_PANELS[metric], columns=("mvml_block_norms",))


def _view(m):
    return Method(m.group(0), "ls", f"single view {m.group(1)}", view=m.group(1), sections=("main",))


_SELECTION_COLUMNS = ("val_accuracy", "grid_seconds", "grid_size", "selected_at_l_c")
_MVL_PANEL = "MVL (this paper) and SVC"

REGISTRY = [
    Method("mvl_ls", "ls", "MVL-LS", color="C0", sections=("main", "comparison_reference"), panel=_MVL_PANEL,
           published=("MVL-LS", "MVL-LS (uniform)")),
    Method("mvl_ls_cv", "ls", "MVL-LS, selected gammas", True, True, run="selected", selection_scope="paper",
           color="C2", sections=("main",), columns=_SELECTION_COLUMNS),
    Method("mvl_ls_cvgraph", "ls", "MVL-LS, selected graph and gammas", True, True, run="selected",
           selection_scope="graph_selected", color="C4", sections=("main",),
           columns=_SELECTION_COLUMNS + ("graph_used",)),
    # k-fold CV over the grid: per fold one eigendecomposition per view and graph (mvl.solvers.grid), ~2 fits per graph
    Method("mvl_ls_kfold", "ls", "MVL-LS, graph and gammas by k-fold CV", needs_validation=True, fits=12,
           run="kfold", color="C6", sections=("main",), columns=_SELECTION_COLUMNS + ("graph_used", "selected_by")),
    Method("mvl_svm", "svm", "MVL-SVM", fits=2, estimator="MVLSVM", color="C1",
           sections=("main", "comparison_reference"), panel=_MVL_PANEL, published=("MVL-SVM",),
           columns=("n_iter", "kkt_violation")),
    # SVM costs measured by benchmarks/bench_svm_family.py (Caltech-101 shapes, l = 204-3,060, P = 102, ADMM for
    # MVL-SVM): median 1.9 / 4.1 / 5.5 / 9.3 MVL-LS fits of the same size for the four SVM methods
    Method("mvl_binsvm", "svm", "MVL-binSVM", fits=4, estimator="MVLBinarySVM", color="C3",
           sections=("main", "comparison_reference"), panel=_MVL_PANEL, published=("MVL-binSVM",),
           columns=("n_iter", "kkt_violation")),
    Method("svc_sum", "ls", "SVC on the average kernel (scikit-learn)", fits=0.2, run="svc", estimator="SVC",
           color="C5", sections=("main", "comparison_reference"), panel=_MVL_PANEL),
    Pattern(r"view_(\w+)", _view, order=lambda m: 0, example="view_fou"),
    Method("single_views", "ls", "single views", fits=1.5, run="single_views", estimator=None),
    Method("mvl_ls_ablation", "ls", "MVL-LS ablation", fits=4, run="ablation",
           sections=("ablation_scope", "configured_ablation"), scope_label="paper graph, configured gammas",
           solver_label="MVL-LS", columns=("ablation_cell",)),
    Method("mvl_ls_ablation_cv", "ls", "MVL-LS ablation, selected gammas", True, True, 4, run="ablation_selected",
           selection_scope="paper", sections=("ablation_scope",),
           scope_label="paper graph, gammas selected on validation", columns=_SELECTION_COLUMNS + ("ablation_cell",)),
    Method("mvl_ls_ablation_cvgraph", "ls", "MVL-LS ablation, selected graph", True, True, 4,
           run="ablation_selected", selection_scope="graph_selected", sections=("ablation_scope",),
           scope_label="graph and gammas selected on validation",
           columns=_SELECTION_COLUMNS + ("ablation_cell", "graph_used")),
    Method("mvl_svm_ablation", "svm", "MVL-SVM ablation", fits=6, run="ablation", estimator="MVLSVM",
           sections=("configured_ablation",), solver_label="MVL-SVM",
           columns=("ablation_cell", "n_iter", "kkt_violation")),
    Method("mvl_binsvm_ablation", "svm", "MVL-binSVM ablation", fits=9, run="ablation", estimator="MVLBinarySVM",
           sections=("configured_ablation",), solver_label="MVL-binSVM",
           columns=("ablation_cell", "n_iter", "kkt_violation")),
    Pattern(r"mvl_ls_optc(\d+)", _optc, order=lambda m: int(m.group(1)), example="mvl_ls_optc25"),
    Pattern(r"mvml_(full|sparse|cov|identity)_n([1-9][0-9]?|100)", _mvml,
            order=lambda m: (_MVML_METRICS.index(m.group(1)), -int(m.group(2))), example="mvml_full_n24"),
    Method("perceptron_matrix", "comparison", "kernel matrix multi-view perceptron", fits=0.5, run="perceptron",
           estimator="KernelMultiViewPerceptron", sections=("comparison",), panel="multi-view perceptrons"),
    Method("perceptron_orth", "comparison", "orthogonal multi-view perceptron", fits=0.5, run="perceptron",
           estimator="OrthogonalMultiViewPerceptron", sections=("comparison",), panel="multi-view perceptrons"),
]
"""Every method, in the report's order (patterns: their methods ordered by parameter)."""


def register(entry, before=None):
    """Add a :class:`Method` (or :class:`Pattern`) to :data:`REGISTRY`, at the end or before the method named
    ``before``; returns it. A name already taken is refused."""
    if isinstance(entry, Method) and lookup(entry.name) is not None:
        raise ValueError(f"method {entry.name!r} is already registered")
    at = len(REGISTRY) if before is None else next(
        i for i, e in enumerate(REGISTRY) if isinstance(e, Method) and e.name == before)
    REGISTRY.insert(at, entry)
    return entry


def method(name):
    """The :class:`Method` of ``name``; ``ValueError`` for an unknown name."""
    name = str(name)
    for i, entry in enumerate(REGISTRY):
        if isinstance(entry, Method):
            if entry.name == name:
                return replace(entry, rank=(i,))
            continue
        m = re.fullmatch(entry.regex, name)
        if m:
            key = entry.order(m) if entry.order else 0
            return replace(entry.build(m), rank=(i, key))
    known = [e.name if isinstance(e, Method) else e.example or e.regex for e in REGISTRY]
    raise ValueError(f"unknown method {name!r}; the registry has {known} (mvl.workflow.methods.REGISTRY)")


def lookup(name):
    """The :class:`Method` of ``name``, or None for a name that is no method (e.g. a published table's row)."""
    try:
        return method(name)
    except ValueError:
        return None


def method_attribute(names, attribute, default=None):
    """``attribute`` of the method of every name in ``names`` (a pandas Series or any iterable) as a list; ``default``
    for names that are no method."""
    out = []
    for n in names:
        m = lookup(n)
        out.append(default if m is None else getattr(m, attribute))
    return out


def rank(name):
    """Sort key of a method name in the report's order (names that are no method last, by name)."""
    m = lookup(name)
    return (0, m.rank, str(name)) if m is not None else (1, (), str(name))


def methods_in(section, names=None):
    """The methods of a report ``section`` among ``names`` (default: the registry's named entries), in order."""
    if names is None:
        names = [e.name for e in REGISTRY if isinstance(e, Method)]
    found = {str(n) for n in names if (m := lookup(n)) is not None and m.in_section(section)}
    return sorted(found, key=rank)
