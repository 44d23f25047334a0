"""mvl: vector-valued multi-view learning (Minh, Bazzani & Murino, JMLR 2016).

The estimators are scikit-learn classifiers (:mod:`mvl.base`): X is a feature matrix cut into views
(``kernel="rbf"``, ``"linear"``, ``"chi2"`` with ``views=``) or per-view Gram matrices stacked sample-first,
(n_samples, n_samples_fit, m) (``kernel="precomputed"``); labels use -1 for unlabelled samples.
This package is the solver layer (Sections 3-6 and the kernels of Section 7.1); the data sets live in
:mod:`mvl.data`, the Snakemake glue in :mod:`mvl.workflow`, neither imported here.
"""

from . import graph, kernels
from .grid import grid_decision_functions
from .least_squares import MVLLeastSquares
from .memory import InsufficientMemoryError
from .model_selection import MVLLeastSquaresCV, SemiSupervisedCV
from .mvml import MVML, MetricNotPSDWarning
from .optc import MVLLeastSquaresOptC
from .perceptron import KernelMultiViewPerceptron, OrthogonalMultiViewPerceptron, cross_view_kernels
from .simplex import simplex_coding, simplex_decode
from .sphere import sphere_least_squares
from .svm import MVLSVM, MVLBinarySVM

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
