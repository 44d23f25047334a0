"""The estimator families the estimator tests iterate over, and their fast settings."""

from mvl import (
    MVML,
    KernelMultiViewPerceptron,
    MVLBinarySVM,
    MVLLeastSquares,
    MVLLeastSquaresOptC,
    MVLSVM,
    OrthogonalMultiViewPerceptron,
)

SEMI = [MVLLeastSquares, MVLLeastSquaresOptC, MVLSVM, MVLBinarySVM]
"""The semi-supervised estimators (-1 marks an unlabelled sample)."""
SUPERVISED = [MVML, KernelMultiViewPerceptron, OrthogonalMultiViewPerceptron]
FAST = {MVLLeastSquaresOptC: dict(n_restarts=3, n_iter=5, random_state=0)}


def make(cls, **kw):
    """``cls(**kw)`` with the family's fast settings (few optC restarts) unless ``kw`` overrides them."""
    return cls(**{**FAST.get(cls, {}), **kw})
