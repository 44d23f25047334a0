"""The method registry: every method of every study the workflow runs, in one list.

Every method is one keyword-only :class:`Method`: its name (the config's and the results' name), display label, the
studies it belongs to (:data:`STUDIES`), the data kinds it supports (:data:`DATA_KINDS`), how it runs (an estimator
factory of :data:`ESTIMATORS` for the main experiments; a study's fit function, ``fit="module:function"`` with fixed
``fit_params``, imported only when called) and named flags. Each study draws its methods by a query,
:func:`methods_for` (``methods_for("scale")``), in :data:`REGISTRY`'s order, which is the order of its tables,
figures and colours.

The main experiments (study "main"): a method name (``mvl_ls``, ``mvl_ls_optc25``, ``mvml_full_n24``,
``view_fou``, ...) maps to a :class:`Method` with its family (the unit of work of one workflow job: methods of one
family and split run in one process, see :mod:`mvl.workflow.runner`), how it runs (its run kind, one function each in
:mod:`mvl.workflow.experiments`, and its estimator with fixed keyword arguments), what it needs (validation set, the
split's gamma/graph selection, the run settings it reads, its cost in MVL-LS fits for the cluster resources) and how
the report shows it (display label, order, colour, the report sections and panel it belongs to, the published
tables' name for it). The config's method names are checked against it (:mod:`mvl.workflow.settings`); the runner,
the rules, the reports (:mod:`mvl.workflow.report`) and the published-vs-ours comparison
(:mod:`mvl.workflow.compare`) read it. The other studies: :mod:`mvl.workflow.scale`, :mod:`mvl.workflow.peers`,
:mod:`mvl.workflow.incomplete`, :mod:`mvl.workflow.coreg_runner` (names unique within a study).

Adding a method that reuses an estimator is one entry here (e.g. ``Method(name="mvl_ls_unnormalized",
studies=("main",), family="ls", label="MVL-LS, unnormalized Laplacian", estimator="MVLLeastSquares",
estimator_params={"laplacian": "unnormalized"}, sections=("main",))``); with a new estimator, the estimator module
plus one entry here (and one factory in :data:`ESTIMATORS`). The methods are those compared in Section 7 (MVL-LS,
Theorem 10; MVL-LS-optC, Section 6; MVL-SVM, Theorems 6 and 13) and related systems.

Light on purpose (no numpy): read while the Snakefile is parsed.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field, replace
from functools import partial

__all__ = ["STUDIES", "DATA_KINDS", "FAMILIES", "RUNS", "SECTIONS", "REFERENCE", "ESTIMATORS", "Method", "Pattern",
           "REGISTRY", "method", "lookup", "method_attribute", "rank", "methods_in", "methods_for", "register"]

STUDIES = ("main", "scale", "peers", "incomplete", "coreg")
"""The studies: the main experiments (paper data sets and feature data sets, :mod:`mvl.workflow.runner`); the scale
profile (:mod:`mvl.workflow.scale`); MVL-LS against graph methods (:mod:`mvl.workflow.peers`); incomplete views
(:mod:`mvl.workflow.incomplete`); Sindhwani & Rosenberg's co-regularization benchmark
(:mod:`mvl.workflow.coreg_runner`)."""

DATA_KINDS = ("features", "kernels", "one_view", "incomplete")
"""What a method takes: feature views (the kernels computed from them); precomputed per-view kernels (the paper's
data sets); data with one view; views missing for some samples (NaN rows, :mod:`mvl.data.missing`)."""

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


@dataclass(frozen=True, kw_only=True)
class Method:
    """One method of one or more studies; every field is a keyword (``Method(name=..., label=..., studies=...)``)."""

    name: str
    label: str  # its name in the tables and legends
    studies: tuple[str, ...]  # the studies that run it (STUDIES)
    data: tuple[str, ...] = ("features", "one_view")  # the data kinds it supports (DATA_KINDS)
    # the main experiments
    family: str | None = None  # the unit of work (FAMILIES)
    needs_validation: bool = False  # draws a validation set (selection, optC restarts)
    uses_selection: bool = False  # reads the graph/gamma selection of its split and u_c
    fits: float = 1.0  # cost in structured MVL-LS fits of the same size
    view: str | None = None  # the one view of ``view_<name>``
    optc_iterations: int | None = None  # N of ``mvl_ls_optc<N>``
    mvml_metric: str | None = None  # metric of ``mvml_<metric>_n<pct>``: full, sparse, cov or identity
    nystrom_percent: int | None = None  # pct of ``mvml_<metric>_n<pct>``
    run: str = "fixed"  # the run kind, a key of RUNS
    estimator: str | None = None  # the estimator, a key of ESTIMATORS (None: several runs, or a study's fit)
    estimator_params: tuple = ()  # fixed keyword arguments of the estimator, as (name, value) pairs
    selection_scope: str | None = None  # selected methods: "paper" (configured graph) or "graph_selected"
    color: str | None = None  # matplotlib colour of its series in the report's figures
    sections: tuple[str, ...] = ()  # report sections (SECTIONS)
    scope_label: str | None = None  # ablation_scope: what the scope holds fixed or selects
    solver_label: str | None = None  # configured_ablation: the solver's name
    panel: str | None = None  # comparison: the figure row / table group
    published: tuple[str, ...] = ()  # names of its rows in the published tables (mvl.data.published)
    columns: tuple[str, ...] = ()  # result columns beyond the common ones (documentation and tests)
    # the other studies
    fit: str | None = None  # "module:function" of its fit in the study's module (imported when called)
    fit_params: tuple = ()  # fixed keyword arguments of ``fit``, as (name, value) pairs
    by_default: bool = True  # run when the study's config names no methods
    inductive: bool = False  # predicts points outside its training graph (peers)
    baseline: bool = False  # a method the study's own methods are judged against (peers: the graph methods)
    centred: bool = False  # its result depends on the number of Nystrom centres (scale)
    uses_graph: bool = True  # builds a kNN graph (scale: the record's n_neighbors)
    derived: bool = False  # a row chosen among other methods' rows, not fitted (incomplete: the best view)
    requires: tuple[str, ...] = ()  # optional packages it needs (the extra "peers": graphlearning)
    rank: tuple = field(default=(), compare=False)  # order in the report (set by the registry)

    def __post_init__(self):
        for key in ("estimator_params", "fit_params"):
            if isinstance(getattr(self, key), dict):
                object.__setattr__(self, key, tuple(sorted(getattr(self, key).items())))
        for key in ("studies", "data", "sections", "published", "columns", "requires"):
            if isinstance(getattr(self, key), str):
                raise TypeError(f"method {self.name!r}: {key} must be a tuple of names, got the string "
                                f"{getattr(self, key)!r}")
        if not self.studies or set(self.studies) - set(STUDIES):
            raise ValueError(f"method {self.name!r}: studies must be some of {STUDIES}, got {self.studies!r}")
        if not self.data or set(self.data) - set(DATA_KINDS):
            raise ValueError(f"method {self.name!r}: data kinds must be some of {DATA_KINDS}, got {self.data!r}")
        if "main" in self.studies and self.family not in FAMILIES:
            raise ValueError(f"method {self.name!r}: family must be one of {FAMILIES}, got {self.family!r}")
        if self.run not in RUNS:
            raise ValueError(f"method {self.name!r}: run kind must be one of {sorted(RUNS)}, got {self.run!r}")
        if self.estimator is not None and self.estimator not in ESTIMATORS:
            raise ValueError(f"method {self.name!r}: estimator must be one of {sorted(ESTIMATORS)}, got "
                             f"{self.estimator!r}")
        if "main" in self.studies and self.estimator is None and self.run != "single_views":
            raise ValueError(f"method {self.name!r}: a method of the main experiments needs an estimator "
                             f"(one of {sorted(ESTIMATORS)})")
        if set(self.studies) - {"main"} and not self.derived and (self.fit is None or ":" not in self.fit):
            raise ValueError(f"method {self.name!r}: the studies {self.studies} need fit='module:function' "
                             f"(or derived=True), got {self.fit!r}")
        unknown = set(self.sections) - set(SECTIONS)
        if unknown:
            raise ValueError(f"method {self.name!r}: unknown report sections {sorted(unknown)}; known: {SECTIONS}")

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

    def fit_function(self):
        """The study's fit function ``fit`` ("module:function"; a module name without a dot is one of
        :mod:`mvl.workflow`), imported now, with ``fit_params`` bound."""
        if self.fit is None:
            raise ValueError(f"method {self.name!r} has no fit function (derived={self.derived})")
        module, _, name = self.fit.partition(":")
        module = module if "." in module else f"{__package__}.{module}"
        func = getattr(importlib.import_module(module), name)
        return partial(func, **dict(self.fit_params)) if self.fit_params else func

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


@dataclass(frozen=True, kw_only=True)
class Pattern:
    """Methods named by a pattern with parameters (``mvl_ls_optc<N>``) of ``studies``: ``build(match)`` gives the
    :class:`Method`, ``order(match)`` its place among the pattern's methods."""

    regex: str
    build: object
    studies: tuple[str, ...] = ("main",)
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

_MAIN = ("main",)
_ANY_DATA = ("features", "kernels", "one_view")  # the main experiments: the paper's kernels or feature views


def _optc(m):
    its = int(m.group(1))  # measured: 20 restarts x 25 iterations ~ 22 fits
    return Method(name=m.group(0), studies=_MAIN, data=_ANY_DATA, family="optc",
                  label=f"MVL-LS-optC ({its} iterations)", needs_validation=True, uses_selection=False,
                  fits=2 + its * 0.8, optc_iterations=its, run="optc", estimator="MVLLeastSquaresOptC",
                  sections=("optc",), published=("MVL-LS-optC",),
                  columns=("val_accuracy", "optc_c", "optc_best_restart", "optc_objective"))


_MVML_METRICS = ("full", "sparse", "cov", "identity")
_MVML_PANELS = {"full": "MVML, full metric", "sparse": "MVML, sparse metric", "cov": "MVML, cov metric",
                "identity": "MVML, identity metric"}


def _mvml(m):
    metric, pct = m.group(1), int(m.group(2))
    cost = 10.0 * (pct / 100.0) ** 3 * (30 if metric == "sparse" else 1)
    return Method(name=m.group(0), studies=_MAIN, data=_ANY_DATA, family="comparison",
                  label=f"MVML {metric}, Nystrom {pct} %", fits=max(cost, 0.5), mvml_metric=metric,
                  nystrom_percent=pct, run="mvml", estimator="MVML", sections=("comparison",),
                  panel=_MVML_PANELS[metric], columns=("mvml_block_norms",))


def _view(m):
    return Method(name=m.group(0), studies=_MAIN, data=_ANY_DATA, family="ls", label=f"single view {m.group(1)}",
                  view=m.group(1), estimator="MVLLeastSquares", sections=("main",))


def _incomplete_view(m):
    """``view_<p>`` of the incomplete-views study: the view at position p alone (its rows name the view)."""
    return Method(name=m.group(0), studies=("incomplete",), data=("features", "one_view", "incomplete"),
                  label=f"single view {m.group(1)}", fit="incomplete:fit_view",
                  fit_params={"position": int(m.group(1))})


_SELECTION_COLUMNS = ("val_accuracy", "grid_seconds", "grid_size", "selected_at_l_c")
_MVL_PANEL = "MVL (this paper) and SVC"
_GRAPHLEARNING = ("graphlearning",)
_PEERS_MVL = dict(studies=("peers",), fit="peers:fit_mvl", inductive=True)
_PEERS_GRAPH = dict(studies=("peers",), fit="peers:fit_graph_learning", baseline=True, requires=_GRAPHLEARNING)
_PEERS_REFERENCE = dict(studies=("peers",), fit="peers:fit_graph_learning", requires=_GRAPHLEARNING, by_default=False)
_INCOMPLETE = ("features", "one_view", "incomplete")

REGISTRY = [
    # ---- the main experiments (mvl.workflow.runner, mvl.workflow.experiments)
    Method(name="mvl_ls", studies=_MAIN, data=_ANY_DATA, family="ls", label="MVL-LS", estimator="MVLLeastSquares",
           color="C0", sections=("main", "comparison_reference"), panel=_MVL_PANEL,
           published=("MVL-LS", "MVL-LS (uniform)")),
    Method(name="mvl_ls_cv", studies=_MAIN, data=_ANY_DATA, family="ls", label="MVL-LS, selected gammas",
           needs_validation=True, uses_selection=True, run="selected", estimator="MVLLeastSquares",
           selection_scope="paper", color="C2", sections=("main",), columns=_SELECTION_COLUMNS),
    Method(name="mvl_ls_cvgraph", studies=_MAIN, data=_ANY_DATA, family="ls",
           label="MVL-LS, selected graph and gammas", needs_validation=True, uses_selection=True, run="selected",
           estimator="MVLLeastSquares", selection_scope="graph_selected", color="C4", sections=("main",),
           columns=_SELECTION_COLUMNS + ("graph_used",)),
    # k-fold CV over the grid: per fold one eigendecomposition per view and graph (mvl.solvers.grid), ~2 fits per graph
    Method(name="mvl_ls_kfold", studies=_MAIN, data=_ANY_DATA, family="ls",
           label="MVL-LS, graph and gammas by k-fold CV", needs_validation=True, fits=12, run="kfold",
           estimator="MVLLeastSquares", color="C6", sections=("main",),
           columns=_SELECTION_COLUMNS + ("graph_used", "selected_by")),
    Method(name="mvl_svm", studies=_MAIN, data=_ANY_DATA, family="svm", label="MVL-SVM", fits=2, estimator="MVLSVM",
           color="C1", sections=("main", "comparison_reference"), panel=_MVL_PANEL, published=("MVL-SVM",),
           columns=("n_iter", "kkt_violation")),
    # SVM costs measured by benchmarks/bench_svm_family.py (Caltech-101 shapes, l = 204-3,060, P = 102, ADMM for
    # MVL-SVM): median 1.9 / 4.1 / 5.5 / 9.3 MVL-LS fits of the same size for the four SVM methods
    Method(name="mvl_binsvm", studies=_MAIN, data=_ANY_DATA, family="svm", label="MVL-binSVM", fits=4,
           estimator="MVLBinarySVM", color="C3", sections=("main", "comparison_reference"), panel=_MVL_PANEL,
           published=("MVL-binSVM",), columns=("n_iter", "kkt_violation")),
    Method(name="svc_sum", studies=_MAIN, data=_ANY_DATA, family="ls", label="SVC on the average kernel (scikit-learn)",
           fits=0.2, run="svc", estimator="SVC", color="C5", sections=("main", "comparison_reference"),
           panel=_MVL_PANEL),
    Pattern(regex=r"view_(\w+)", build=_view, order=lambda m: 0, example="view_fou"),
    Method(name="single_views", studies=_MAIN, data=_ANY_DATA, family="ls", label="single views", fits=1.5,
           run="single_views", estimator=None),
    Method(name="mvl_ls_ablation", studies=_MAIN, data=_ANY_DATA, family="ls", label="MVL-LS ablation", fits=4,
           run="ablation", estimator="MVLLeastSquares", sections=("ablation_scope", "configured_ablation"),
           scope_label="paper graph, configured gammas", solver_label="MVL-LS", columns=("ablation_cell",)),
    Method(name="mvl_ls_ablation_cv", studies=_MAIN, data=_ANY_DATA, family="ls",
           label="MVL-LS ablation, selected gammas", needs_validation=True, uses_selection=True, fits=4,
           run="ablation_selected", estimator="MVLLeastSquares", selection_scope="paper", sections=("ablation_scope",),
           scope_label="paper graph, gammas selected on validation", columns=_SELECTION_COLUMNS + ("ablation_cell",)),
    Method(name="mvl_ls_ablation_cvgraph", studies=_MAIN, data=_ANY_DATA, family="ls",
           label="MVL-LS ablation, selected graph", needs_validation=True, uses_selection=True, fits=4,
           run="ablation_selected", estimator="MVLLeastSquares", selection_scope="graph_selected",
           sections=("ablation_scope",), scope_label="graph and gammas selected on validation",
           columns=_SELECTION_COLUMNS + ("ablation_cell", "graph_used")),
    Method(name="mvl_svm_ablation", studies=_MAIN, data=_ANY_DATA, family="svm", label="MVL-SVM ablation", fits=6,
           run="ablation", estimator="MVLSVM", sections=("configured_ablation",), solver_label="MVL-SVM",
           columns=("ablation_cell", "n_iter", "kkt_violation")),
    Method(name="mvl_binsvm_ablation", studies=_MAIN, data=_ANY_DATA, family="svm", label="MVL-binSVM ablation",
           fits=9, run="ablation", estimator="MVLBinarySVM", sections=("configured_ablation",),
           solver_label="MVL-binSVM", columns=("ablation_cell", "n_iter", "kkt_violation")),
    Pattern(regex=r"mvl_ls_optc(\d+)", build=_optc, order=lambda m: int(m.group(1)), example="mvl_ls_optc25"),
    Pattern(regex=r"mvml_(full|sparse|cov|identity)_n([1-9][0-9]?|100)", build=_mvml,
            order=lambda m: (_MVML_METRICS.index(m.group(1)), -int(m.group(2))), example="mvml_full_n24"),
    Method(name="perceptron_matrix", studies=_MAIN, data=_ANY_DATA, family="comparison",
           label="kernel matrix multi-view perceptron", fits=0.5, run="perceptron",
           estimator="KernelMultiViewPerceptron", sections=("comparison",), panel="multi-view perceptrons"),
    Method(name="perceptron_orth", studies=_MAIN, data=_ANY_DATA, family="comparison",
           label="orthogonal multi-view perceptron", fits=0.5, run="perceptron",
           estimator="OrthogonalMultiViewPerceptron", sections=("comparison",), panel="multi-view perceptrons"),
    # ---- the scale profile (mvl.workflow.scale): fit(ctx) -> (test predictions, extra record fields)
    Method(name="auto", studies=("scale",),
           label="MVL-LS, a first fit: solver, gamma_A and loss at the package defaults (\"auto\")",
           fit="scale:fit_auto"),
    Method(name="structured", studies=("scale",), label="MVL-LS, structured solver (exact)",
           fit="scale:fit_solver", fit_params={"solver": "structured"}),
    Method(name="cg", studies=("scale",), label="MVL-LS, cg (exact to tol)", fit="scale:fit_solver",
           fit_params={"solver": "cg"}, centred=True),
    Method(name="nystrom", studies=("scale",), label="MVL-LS, Nystrom restriction", fit="scale:fit_solver",
           fit_params={"solver": "nystrom"}, centred=True),
    Method(name="graph", studies=("scale",), label="MVL-LS, graph solver (exact to tol)", fit="scale:fit_solver",
           fit_params={"solver": "graph"}, centred=True),
    Method(name="vecchia_direct", studies=("scale",),
           label="MVL-LS, Vecchia direct solver (graph regime, one sparse factorisation)", fit="scale:fit_solver",
           fit_params={"solver": "vecchia_direct"}),
    Method(name="labelonly", studies=("scale",), label="MVL-LS on the labelled points only",
           fit="scale:fit_labelonly", uses_graph=False),
    Method(name="transductive", studies=("scale",),
           label="MVL-LS, test points in the fit (transductive, as the graph peers)", fit="scale:fit_transductive"),
    Method(name="graphlimit", studies=("scale",), label="MVL-LS's graph term alone (gamma_A -> 0, transductive)",
           fit="scale:fit_graphlimit"),
    Method(name="labelspreading", studies=("scale",), label="LabelSpreading (scikit-learn, kNN)",
           fit="scale:fit_labelspreading"),
    Method(name="laplace", studies=("scale",), label="Laplace learning (graphlearning)",
           fit="scale:fit_graphlearning", fit_params={"kind": "laplace"}, requires=_GRAPHLEARNING),
    Method(name="poisson", studies=("scale",), label="Poisson learning (graphlearning)",
           fit="scale:fit_graphlearning", fit_params={"kind": "poisson"}, requires=_GRAPHLEARNING),
    Method(name="ridge", studies=("scale",), label="Nystroem + RidgeClassifier (labelled only)", fit="scale:fit_ridge",
           uses_graph=False),
    # ---- the peers study (mvl.workflow.peers): fit(views, y, labelled, k, graphs) -> (predictions, solver, seconds)
    Method(name="mvl_ls", **_PEERS_MVL, label="MVL-LS (squared loss, package defaults)",
           fit_params={"loss": "squared"}),
    Method(name="mvl_ls_concat", **_PEERS_MVL, data=("features",), label="MVL-LS (views concatenated, one view)",
           fit_params={"loss": "squared", "concatenate": True}),
    # the graph-regime setting, chosen on validation on synthetic data at n = 2,000
    Method(name="mvl_ls_graph", **_PEERS_MVL, label="MVL-LS (10-NN, p = 2, gamma_W = 1)", by_default=False,
           fit_params={"loss": "squared", "gamma_A": 1e-6, "gamma_W": 1.0, "n_neighbors": 10, "laplacian_power": 2}),
    Method(name="mvl_poisson", **_PEERS_MVL, label="MVL-LS, Poisson-type term", by_default=False,
           fit_params={"loss": "poisson"}),
    Method(name="laplace", **_PEERS_GRAPH, label="Laplace learning", fit_params={"base": "laplace", "graph": "concat"}),
    Method(name="poisson", **_PEERS_GRAPH, label="Poisson learning", fit_params={"base": "poisson", "graph": "concat"}),
    Method(name="laplace_sum", **_PEERS_GRAPH, data=("features",), label="Laplace learning (sum of view graphs)",
           fit_params={"base": "laplace", "graph": "sum"}),
    Method(name="poisson_sum", **_PEERS_GRAPH, data=("features",), label="Poisson learning (sum of view graphs)",
           fit_params={"base": "poisson", "graph": "sum"}),
    # with class priors (graphlearning's volume label projection; PoissonMBO and VolumeMBO need them): from the
    # labelled points' proportions (what a user has), or the true proportions of every point in the graph (the
    # authors' protocol: it reads the labels of the evaluation points, so these are not baselines)
    Method(name="poisson_priors", **_PEERS_GRAPH, label="Poisson learning, priors from the labelled points",
           by_default=False, fit_params={"base": "poisson", "graph": "concat", "priors": "labelled"}),
    Method(name="poisson_priors_true", **_PEERS_REFERENCE,
           label="Poisson learning, true class proportions (the authors' protocol)",
           fit_params={"base": "poisson", "graph": "concat", "priors": "true"}),
    Method(name="poisson_mbo", **_PEERS_GRAPH, label="PoissonMBO, priors from the labelled points", by_default=False,
           fit_params={"base": "poisson_mbo", "graph": "concat", "priors": "labelled"}),
    Method(name="poisson_mbo_true", **_PEERS_REFERENCE,
           label="PoissonMBO, true class proportions (the authors' protocol)",
           fit_params={"base": "poisson_mbo", "graph": "concat", "priors": "true"}),
    Method(name="volume_mbo", **_PEERS_GRAPH, label="VolumeMBO, priors from the labelled points", by_default=False,
           fit_params={"base": "volume_mbo", "graph": "concat", "priors": "labelled"}),
    Method(name="volume_mbo_true", **_PEERS_REFERENCE,
           label="VolumeMBO, true class proportions (the authors' protocol)",
           fit_params={"base": "volume_mbo", "graph": "concat", "priors": "true"}),
    Method(name="labelspreading", studies=("peers",), label="LabelSpreading", fit="peers:fit_labelspreading"),
    # ---- the incomplete-views study (mvl.workflow.incomplete): fit(views, mask, train, y_train, test, gamma_B)
    Method(name="mvl_ls_incomplete", studies=("incomplete",), data=_INCOMPLETE, label="MVL-LS, incomplete views",
           color="C0", fit="incomplete:fit_masked", fit_params={"impute": False}),
    Method(name="mean_imputation", studies=("incomplete",), data=_INCOMPLETE, label="mean imputation + MVL-LS",
           color="C1", fit="incomplete:fit_masked", fit_params={"impute": True}),
    Method(name="best_single_view", studies=("incomplete",), data=_INCOMPLETE, label="best single view", color="C2",
           derived=True),
    Method(name="complete", studies=("incomplete",), label="complete data (q = 0)", color="0.35",
           fit="incomplete:fit_complete"),
    Pattern(regex=r"view_(\d+)", build=_incomplete_view, studies=("incomplete",), example="view_0"),
    # ---- the co-regularization benchmark (mvl.workflow.coreg_runner): the whole (gamma_1, gamma_2) grid
    Method(name="MR", studies=("coreg",), label="manifold regularization (Laplacian RLS)",
           fit="coreg_runner:mr_fits"),
    Method(name="CoMR", studies=("coreg",), label="manifold co-regularization", fit="coreg_runner:comr_fits"),
]
"""Every method of every study, in each study's order (patterns: their methods ordered by parameter)."""


def _of(entry, study):
    return study in entry.studies


def methods_for(study):
    """The named methods of ``study`` (:data:`STUDIES`), in the registry's order, each with its rank."""
    if study not in STUDIES:
        raise ValueError(f"unknown study {study!r}; one of {STUDIES}")
    return [replace(e, rank=(i,)) for i, e in enumerate(REGISTRY) if isinstance(e, Method) and _of(e, study)]


def register(entry, before=None):
    """Add a :class:`Method` (or :class:`Pattern`) to :data:`REGISTRY`, at the end or before the method named
    ``before`` (of the entry's first study); returns it. A name already taken in one of its studies is refused."""
    if isinstance(entry, Method):
        for study in entry.studies:
            if lookup(entry.name, study) is not None:
                raise ValueError(f"method {entry.name!r} is already registered in the study {study!r}")
    at = len(REGISTRY) if before is None else next(
        i for i, e in enumerate(REGISTRY)
        if isinstance(e, Method) and e.name == before and _of(e, entry.studies[0]))
    REGISTRY.insert(at, entry)
    return entry


def method(name, study="main"):
    """The :class:`Method` of ``name`` in ``study``; ``ValueError`` for an unknown name."""
    name = str(name)
    for i, entry in enumerate(REGISTRY):
        if not _of(entry, study):
            continue
        if isinstance(entry, Method):
            if entry.name == name:
                return replace(entry, rank=(i,))
            continue
        m = re.fullmatch(entry.regex, name)
        if m:
            key = entry.order(m) if entry.order else 0
            return replace(entry.build(m), rank=(i, key))
    known = [e.name if isinstance(e, Method) else e.example or e.regex for e in REGISTRY if _of(e, study)]
    where = "" if study == "main" else f" of the study {study!r}"
    raise ValueError(f"unknown method {name!r}{where}; the registry has {known} (mvl.workflow.methods.REGISTRY)")


def lookup(name, study="main"):
    """The :class:`Method` of ``name`` in ``study``, or None for a name that is no method (e.g. a published
    table's row)."""
    try:
        return method(name, study)
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
    """The methods of a report ``section`` among ``names`` (default: the main experiments' named entries), in
    order."""
    if names is None:
        names = [e.name for e in methods_for("main")]
    found = {str(n) for n in names if (m := lookup(n)) is not None and m.in_section(section)}
    return sorted(found, key=rank)
