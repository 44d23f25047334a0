"""The method registry: every method name the workflow runs, parsed in one place.

A method name (``mvl_ls``, ``mvl_ls_optc25``, ``mvml_full_n24``, ``view_fou``, ...) maps to a
:class:`Method`: its family (the unit of work of one workflow job: methods of one family and split run in
one process, see :mod:`mvl.workflow.runner`), whether it needs the validation set, whether it uses the gamma
selection made once per split and u_c, its cost in MVL-LS fits (for the cluster resources) and its display
label. The runner (:mod:`mvl.workflow.experiments` dispatches on the same names), the rules, the reports and the
published-vs-ours comparison read this module instead of parsing names themselves. The methods are those
compared in Section 7 (MVL-LS, Theorem 10; MVL-LS-optC, Section 6; MVL-SVM, Theorems 6 and 13) and related systems.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["FAMILIES", "Method", "method", "lookup", "family_of", "method_attribute"]

FAMILIES = ("ls", "svm", "optc", "comparison")
"""Families of methods, each run as one job per (dataset, split): MVL-LS and its selections, ablations,
single views and the SVC baseline; the SVMs; MVL-LS-optC; the related systems (MVML, perceptrons)."""


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
        for prefix in ("mvl_ls_optc", "mvl_svm", "mvl_binsvm", "mvml", "perceptron"):
            if self.name.startswith(prefix):
                return prefix
        return "svc" if self.name == "svc_sum" else "mvl_ls"


_FIXED = {
    "mvl_ls": Method("mvl_ls", "ls", "MVL-LS"),
    "mvl_ls_cv": Method("mvl_ls_cv", "ls", "MVL-LS, selected gammas", True, True),
    "mvl_ls_cvgraph": Method("mvl_ls_cvgraph", "ls", "MVL-LS, selected graph and gammas", True, True),
    "mvl_ls_ablation": Method("mvl_ls_ablation", "ls", "MVL-LS ablation", fits=4),
    "mvl_ls_ablation_cv": Method("mvl_ls_ablation_cv", "ls", "MVL-LS ablation, selected gammas", True, True, 4),
    "mvl_ls_ablation_cvgraph": Method("mvl_ls_ablation_cvgraph", "ls", "MVL-LS ablation, selected graph",
                                      True, True, 4),
    "single_views": Method("single_views", "ls", "single views", fits=1.5),
    "svc_sum": Method("svc_sum", "ls", "SVC on the average kernel (scikit-learn)", fits=0.2),
    "mvl_svm": Method("mvl_svm", "svm", "MVL-SVM", fits=2),
    "mvl_binsvm": Method("mvl_binsvm", "svm", "MVL-binSVM", fits=2),
    "mvl_svm_ablation": Method("mvl_svm_ablation", "svm", "MVL-SVM ablation", fits=8),
    "mvl_binsvm_ablation": Method("mvl_binsvm_ablation", "svm", "MVL-binSVM ablation", fits=8),
    "perceptron_matrix": Method("perceptron_matrix", "comparison", "kernel matrix multi-view perceptron", fits=0.5),
    "perceptron_orth": Method("perceptron_orth", "comparison", "orthogonal multi-view perceptron", fits=0.5),
}


def method(name):
    """The :class:`Method` of ``name``; ``ValueError`` for an unknown name."""
    if name in _FIXED:
        return _FIXED[name]
    m = re.fullmatch(r"mvl_ls_optc(\d+)", name)
    if m:  # measured: 20 restarts x 25 iterations ~ 22 fits
        its = int(m.group(1))
        return Method(name, "optc", f"MVL-LS-optC ({its} iterations)", True, False, 2 + its * 0.8, optc_iterations=its)
    m = re.fullmatch(r"mvml_(full|sparse|cov|identity)_n(\d+)", name)
    if m:
        metric, pct = m.group(1), int(m.group(2))
        cost = 10.0 * (pct / 100.0) ** 3 * (30 if metric == "sparse" else 1)
        return Method(name, "comparison", f"MVML {metric}, Nystrom {pct} %", fits=max(cost, 0.5), mvml_metric=metric,
                      nystrom_percent=pct)
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
