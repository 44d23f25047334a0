"""The package's warning classes (mvl.exceptions): UserWarnings that filters tell apart, each given in its situation
(checked against numpy: an eigenvalue below zero, a constant Gram matrix)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import make_problem, sample_first

import mvl.estimators.base
from mvl import MVLLeastSquares
from mvl.exceptions import (
    DegenerateKernelWarning,
    IllConditionedWarning,
    IndefiniteKernelWarning,
    RegularizationWarning,
    UnlabelledMarkerWarning,
)

ALL = [DegenerateKernelWarning, IndefiniteKernelWarning, RegularizationWarning, UnlabelledMarkerWarning,
       IllConditionedWarning]


@pytest.mark.parametrize("cls", ALL)
def test_each_warning_is_a_user_warning_that_a_filter_singles_out(cls):
    assert issubclass(cls, UserWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warnings.simplefilter("error", cls)
        for other in ALL:
            if other is not cls:
                warnings.warn("other", other, stacklevel=1)  # ignored
        with pytest.raises(cls):
            warnings.warn("this one", cls, stacklevel=1)


def test_the_estimators_give_the_same_classes():
    for cls in ALL[:4]:
        assert getattr(mvl.estimators.base, cls.__name__) is cls


def test_an_indefinite_precomputed_kernel_gives_the_indefinite_kernel_warning():
    K, _, y = make_problem(2, 16, 2, frac_unlabelled=0.0, seed=3)
    K[1] -= 0.6 * np.eye(16) * np.abs(np.linalg.eigvalsh(K[1])).max()
    assert np.linalg.eigvalsh(K[1])[0] < 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RegularizationWarning)
        with pytest.warns(IndefiniteKernelWarning, match="eigenvalue"):
            MVLLeastSquares(kernel="precomputed", gamma_A=0.1).fit(sample_first(K), y)


def test_a_constant_view_kernel_gives_the_degenerate_kernel_warning():
    K, _, y = make_problem(2, 16, 2, frac_unlabelled=0.0, seed=4)
    K[0] = 1.0
    assert np.linalg.matrix_rank(K[0]) == 1
    with pytest.warns(DegenerateKernelWarning):
        MVLLeastSquares(kernel="precomputed", gamma_A=0.1).fit(sample_first(K), y)
