"""The method registry: every method name the workflow runs, parsed in one place.

A method name (``mvl_ls``, ``mvl_ls_optc25``, ``mvml_full_n24``, ``view_fou``, ...) maps to a
:class:`Method`: its family (the unit of work of one workflow job: methods of one family and split run in
one process, see :mod:`mvl.workflow.runner`), whether it needs the validation set, whether it uses the gamma
selection made once per split and u_c, its cost in MVL-LS fits (for the cluster resources) and its display
label, and how it runs: its run kind (:attr:`Method.run`, one function each in :mod:`mvl.workflow.experiments`)
and its estimator (:attr:`Method.estimator`, built from the run settings by :meth:`Method.make_estimator`). The
runner, the rules, the reports and the published-vs-ours comparison read this module instead of parsing names
themselves; a new method is one entry here (and, for a new way of running, one run function). The methods are those
compared in Section 7 (MVL-LS, Theorem 10; MVL-LS-optC, Section 6; MVL-SVM, Theorems 6 and 13) and related systems.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["FAMILIES", "RUNS", "ESTIMATORS", "Method", "method", "lookup", "family_of", "method_attribute",
           "paper_graph"]

FAMILIES = ("ls", "svm", "optc", "comparison")
"""Families of methods, each run as one job per (dataset, split): MVL-LS and its selections, ablations,
single views and the SVC baseline; the SVMs; MVL-LS-optC; the related systems (MVML, perceptrons)."""

RUNS = ("fixed", "ablation", "selected", "ablation_selected", "optc", "mvml", "perceptron", "svc", "single_views")
"""How a method runs (one function each in :mod:`mvl.workflow.experiments`): one fit with the configured gammas;
the four gamma_B / gamma_W cells of Table 2; one fit with gammas (and graph) selected on validation; the four
cells, each selected on validation; MVL-LS-optC with validation restarts; MVML and the perceptrons on the
labelled points; the SVC baseline on the average kernel; every view alone (one ``fixed`` run per view)."""


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
    run: str = "fixed"  # the run kind, one of RUNS
    estimator: str | None = "MVLLeastSquares"  # the estimator class, a key of ESTIMATORS (None: several runs)
    selection_scope: str | None = None  # selected methods: "paper" (configured graph) or "graph_selected"

    @property
    def ablation(self):
        """The gamma_B / gamma_W ablation of Table 2 (``*_ablation*``)."""
        return "_ablation" in self.name

    @property
    def related(self):
        """One of the related systems compared with MVL (MVML, the perceptrons)."""
        return self.family == "comparison"

    @property
    def kind(self):
        """The estimator behind the name: mvl_ls, mvl_ls_optc, mvl_svm, mvl_binsvm, svc, mvml or perceptron."""
        return _KINDS[self.estimator]

    def make_estimator(self, params, gammas=None, graph=None, seed=0, l_c=0, u_c=0):
        """A new, unfitted estimator of this method (``kernel="precomputed"``, sample-first kernels) from the run
        settings ``params`` (:func:`mvl.workflow.runner.run_params`): ``gammas`` (gamma_A, gamma_B, gamma_W;
        default the configured ``params["gammas"]``), ``graph`` (n_neighbors, laplacian_power) chosen on
        validation (default the configured graph, :func:`paper_graph`), ``seed`` (the split) and, for
        optC's restarts, ``l_c`` and ``u_c``."""
        if self.estimator is None:
            raise ValueError(f"method {self.name!r} runs several estimators (run kind {self.run!r})")
        if gammas is None:
            gammas = tuple(float(params["gammas"][k]) for k in ("A", "B", "W"))
        return ESTIMATORS[self.estimator](self, params, tuple(gammas), graph, seed, l_c, u_c)


_FIXED = {
    "mvl_ls": Method("mvl_ls", "ls", "MVL-LS"),
    "mvl_ls_cv": Method("mvl_ls_cv", "ls", "MVL-LS, selected gammas", True, True, run="selected",
                        selection_scope="paper"),
    "mvl_ls_cvgraph": Method("mvl_ls_cvgraph", "ls", "MVL-LS, selected graph and gammas", True, True, run="selected",
                             selection_scope="graph_selected"),
    "mvl_ls_ablation": Method("mvl_ls_ablation", "ls", "MVL-LS ablation", fits=4, run="ablation"),
    "mvl_ls_ablation_cv": Method("mvl_ls_ablation_cv", "ls", "MVL-LS ablation, selected gammas", True, True, 4,
                                 run="ablation_selected", selection_scope="paper"),
    "mvl_ls_ablation_cvgraph": Method("mvl_ls_ablation_cvgraph", "ls", "MVL-LS ablation, selected graph",
                                      True, True, 4, run="ablation_selected", selection_scope="graph_selected"),
    "single_views": Method("single_views", "ls", "single views", fits=1.5, run="single_views", estimator=None),
    "svc_sum": Method("svc_sum", "ls", "SVC on the average kernel (scikit-learn)", fits=0.2, run="svc",
                      estimator="SVC"),
    "mvl_svm": Method("mvl_svm", "svm", "MVL-SVM", fits=2, estimator="MVLSVM"),
    "mvl_binsvm": Method("mvl_binsvm", "svm", "MVL-binSVM", fits=2, estimator="MVLBinarySVM"),
    "mvl_svm_ablation": Method("mvl_svm_ablation", "svm", "MVL-SVM ablation", fits=8, run="ablation",
                               estimator="MVLSVM"),
    "mvl_binsvm_ablation": Method("mvl_binsvm_ablation", "svm", "MVL-binSVM ablation", fits=8, run="ablation",
                                  estimator="MVLBinarySVM"),
    "perceptron_matrix": Method("perceptron_matrix", "comparison", "kernel matrix multi-view perceptron", fits=0.5,
                                run="perceptron", estimator="KernelMultiViewPerceptron"),
    "perceptron_orth": Method("perceptron_orth", "comparison", "orthogonal multi-view perceptron", fits=0.5,
                              run="perceptron", estimator="OrthogonalMultiViewPerceptron"),
}


def method(name):
    """The :class:`Method` of ``name``; ``ValueError`` for an unknown name."""
    if name in _FIXED:
        return _FIXED[name]
    m = re.fullmatch(r"mvl_ls_optc(\d+)", name)
    if m:  # measured: 20 restarts x 25 iterations ~ 22 fits
        its = int(m.group(1))
        return Method(name, "optc", f"MVL-LS-optC ({its} iterations)", True, False, 2 + its * 0.8, optc_iterations=its,
                      run="optc", estimator="MVLLeastSquaresOptC")
    m = re.fullmatch(r"mvml_(full|sparse|cov|identity)_n(\d+)", name)
    if m:
        metric, pct = m.group(1), int(m.group(2))
        cost = 10.0 * (pct / 100.0) ** 3 * (30 if metric == "sparse" else 1)
        return Method(name, "comparison", f"MVML {metric}, Nystrom {pct} %", fits=max(cost, 0.5), mvml_metric=metric,
                      nystrom_percent=pct, run="mvml", estimator="MVML")
    if name.startswith("view_") and len(name) > 5:
        return Method(name, "ls", f"single view {name[5:]}", view=name[5:])
    raise ValueError(f"unknown method {name!r}")


def lookup(name):
    """The :class:`Method` of ``name``, or None for a name that is no method (e.g. a published table's row)."""
    try:
        return method(str(name))
    except ValueError:
        return None


def family_of(name):
    return method(name).family


def method_attribute(names, attribute, default=None):
    """``attribute`` of the method of every name in ``names`` (a pandas Series or any iterable) as a list; ``default``
    for names that are no method."""
    out = []
    for n in names:
        m = lookup(n)
        out.append(default if m is None else getattr(m, attribute))
    return out


# ------------------------------------------------------------------ estimator factories


def paper_graph(params):
    """The configured (fixed) graph of ``params``: laplacian, n_neighbors, laplacian_power, weights."""
    g = params.get("graph") or {}
    return dict(laplacian=g.get("laplacian", params.get("laplacian", "normalized")),
                n_neighbors=g.get("n_neighbors", params.get("n_neighbors")),
                laplacian_power=int(g.get("laplacian_power", 1)), weights=g.get("weights", "kernel"))


def _graph_arguments(params, graph):
    """The graph keywords of the MVL estimators: the configured graph, with (n_neighbors, laplacian_power) of
    ``graph`` if given."""
    g = paper_graph(params)
    nn, pw = (g["n_neighbors"], g["laplacian_power"]) if graph is None else graph
    return dict(laplacian=g["laplacian"], n_neighbors=nn, laplacian_power=pw, graph_weights=g["weights"])


def _mvl(class_name):
    """Factory of an MVL estimator with gammas and graph (MVL-LS, Theorem 10; the SVMs, Theorems 6 and 13)."""
    def make(m, params, gammas, graph, seed, l_c, u_c):
        from .. import least_squares, svm

        cls = {"MVLLeastSquares": least_squares.MVLLeastSquares, "MVLSVM": svm.MVLSVM,
               "MVLBinarySVM": svm.MVLBinarySVM}[class_name]
        return cls(*gammas, **_graph_arguments(params, graph), kernel="precomputed")
    return make


def _optc(m, params, gammas, graph, seed, l_c, u_c):
    """MVL-LS-optC (Section 6): N = ``m.optc_iterations`` alternations from seeded restarts (seed, split, l_c, u_c)."""
    from ..optc import MVLLeastSquaresOptC

    opt = params["optc"]
    u_rows = -1 if u_c == "all" else int(u_c)
    return MVLLeastSquaresOptC(*gammas, alpha=float(opt.get("alpha", 1.0)), n_restarts=int(opt.get("n_restarts", 20)),
                               n_iter=m.optc_iterations, tol=float(opt.get("tol", 1e-8)),
                               **_graph_arguments(params, graph),
                               random_state=[int(opt.get("seed", 0)), int(seed), int(l_c), u_rows],
                               kernel="precomputed")


def _mvml(m, params, gammas, graph, seed, l_c, u_c):
    """MVML (Huusari et al. 2017) with the metric and Nystrom percentage of the name, ``params["comparison"]``."""
    from ..mvml import MVML

    cfg = params.get("comparison", {})
    return MVML(lmbda=float(cfg.get("mvml_lambda", 0.1)), eta=float(cfg.get("mvml_eta", 1.0)), learn_A=m.mvml_metric,
                n_iter=int(cfg.get("mvml_iterations", 10)), nystrom=m.nystrom_percent / 100.0, random_state=int(seed),
                kernel="precomputed")


def _perceptron(class_name):
    def make(m, params, gammas, graph, seed, l_c, u_c):
        from .. import perceptron

        cfg = params.get("comparison", {})
        return getattr(perceptron, class_name)(n_epochs=int(cfg.get("perceptron_epochs", 10)), random_state=int(seed),
                                               kernel="precomputed")
    return make


def _svc(m, params, gammas, graph, seed, l_c, u_c):
    """scikit-learn's SVC on a precomputed (2-D) kernel, C = ``params["svc_C"]``."""
    from sklearn.svm import SVC

    return SVC(kernel="precomputed", C=float(params.get("svc_C", 1.0)))


ESTIMATORS = {
    "MVLLeastSquares": _mvl("MVLLeastSquares"),
    "MVLSVM": _mvl("MVLSVM"),
    "MVLBinarySVM": _mvl("MVLBinarySVM"),
    "MVLLeastSquaresOptC": _optc,
    "MVML": _mvml,
    "KernelMultiViewPerceptron": _perceptron("KernelMultiViewPerceptron"),
    "OrthogonalMultiViewPerceptron": _perceptron("OrthogonalMultiViewPerceptron"),
    "SVC": _svc,
}
"""Estimator class name (``Method.estimator``) -> factory ``(method, params, gammas, graph, seed, l_c, u_c)``."""

_KINDS = {"MVLLeastSquares": "mvl_ls", "MVLLeastSquaresOptC": "mvl_ls_optc", "MVLSVM": "mvl_svm",
          "MVLBinarySVM": "mvl_binsvm", "SVC": "svc", "MVML": "mvml", "KernelMultiViewPerceptron": "perceptron",
          "OrthogonalMultiViewPerceptron": "perceptron", None: "mvl_ls"}
