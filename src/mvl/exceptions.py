"""The warnings the estimators and solvers give (as :mod:`sklearn.exceptions` holds scikit-learn's); the memory
error is :class:`mvl.memory.InsufficientMemoryError`."""

__all__ = ["DegenerateKernelWarning", "IndefiniteKernelWarning", "RegularizationWarning", "UnlabelledMarkerWarning",
           "IllConditionedWarning", "MissingViewWarning",
           "FewLabelsWarning"]


class DegenerateKernelWarning(UserWarning):
    """A view's kernel is constant (or zero), or the identity: that view carries no information about the
    samples (constant), or none that relates them (identity)."""


class IndefiniteKernelWarning(UserWarning):
    """A precomputed view's kernel is not positive semi-definite: the solvers assume Mercer kernels."""


class RegularizationWarning(UserWarning):
    """The regularisation swamps the data term: the fitted model ignores the labels."""


class UnlabelledMarkerWarning(UserWarning):
    """-1 in y is read as the unlabelled marker where it may have been meant as a class."""


class IllConditionedWarning(UserWarning):
    """A solve was numerically ill-conditioned (see ``condition_estimate_``)."""


class MissingViewWarning(UserWarning):
    """A view is missing in every training sample: the fit drops it and is that on the other views."""


class FewLabelsWarning(UserWarning):
    """A labelled class has so few labels among the others' many that the squared loss can erase it."""
