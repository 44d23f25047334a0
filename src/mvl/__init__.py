"""mvl: vector-valued multi-view learning (Minh, Bazzani & Murino, JMLR 2016).

The estimators are scikit-learn classifiers (:mod:`mvl.estimators`): X is a feature matrix cut into views
(``kernel="rbf"``, ``"linear"``, ``"chi2"`` with ``views=``) or per-view Gram matrices stacked sample-first,
(n_samples, n_samples_fit, m) (``kernel="precomputed"``); labels use -1 for unlabelled samples.
Their solvers are :mod:`mvl.solvers` (Sections 3-6 and the kernels of Section 7.1); the data sets live in
:mod:`mvl.data`, the Snakemake glue in :mod:`mvl.workflow`, neither imported here.
"""

import importlib
from typing import TYPE_CHECKING

# The estimators load numpy, scipy and scikit-learn (about a second): they are imported on first use (PEP 562), so
# that the light modules (mvl.fileio, the workflow's settings and registries, read while a Snakefile is parsed)
# cost nothing. ``from mvl import MVLLeastSquares`` works as before.
_EXPORTS = {
    "MVLLeastSquares": "estimators.least_squares",
    "MVLLeastSquaresCV": "estimators.model_selection",
    "SemiSupervisedCV": "estimators.model_selection",
    "InsufficientMemoryError": "memory",
    "MVLLeastSquaresOptC": "estimators.optc",
    "MVLSVM": "estimators.svm",
    "MVLBinarySVM": "estimators.svm",
    "MVML": "estimators.mvml",
    "MetricNotPSDWarning": "estimators.mvml",
    "KernelMultiViewPerceptron": "estimators.perceptron",
    "OrthogonalMultiViewPerceptron": "estimators.perceptron",
    "cross_view_kernels": "estimators.perceptron",
    "simplex_coding": "simplex",
    "simplex_decode": "simplex",
    "grid_decision_functions": "solvers.grid",
    "sphere_least_squares": "solvers.sphere",
}
_MODULES = ("graph", "kernels")

if TYPE_CHECKING:  # what linters and type checkers see; at run time __getattr__ below imports on first use
    from . import graph, kernels
    from .solvers.grid import grid_decision_functions
    from .estimators.least_squares import MVLLeastSquares
    from .memory import InsufficientMemoryError
    from .estimators.model_selection import MVLLeastSquaresCV, SemiSupervisedCV
    from .estimators.mvml import MVML, MetricNotPSDWarning
    from .estimators.optc import MVLLeastSquaresOptC
    from .estimators.perceptron import KernelMultiViewPerceptron, OrthogonalMultiViewPerceptron, cross_view_kernels
    from .simplex import simplex_coding, simplex_decode
    from .solvers.sphere import sphere_least_squares
    from .estimators.svm import MVLSVM, MVLBinarySVM

__version__ = "0.1.0"

__all__ = [
    "MVLLeastSquares",
    "MVLLeastSquaresCV",
    "SemiSupervisedCV",
    "InsufficientMemoryError",
    "MVLLeastSquaresOptC",
    "MVLSVM",
    "MVML",
    "MetricNotPSDWarning",
    "KernelMultiViewPerceptron",
    "OrthogonalMultiViewPerceptron",
    "cross_view_kernels",
    "MVLBinarySVM",
    "simplex_coding",
    "simplex_decode",
    "grid_decision_functions",
    "sphere_least_squares",
    "graph",
    "kernels",
    "__version__",
]


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    elif name in _MODULES:
        value = importlib.import_module(f".{name}", __name__)
    else:
        raise AttributeError(f"module 'mvl' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
