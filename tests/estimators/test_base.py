"""What every estimator shares (mvl.estimators.base): -1 in the labels (the unlabelled marker of the
semi-supervised estimators, an ordinary class of the supervised ones), the warning when the regularisation swamps the
data term, the parameter constraints, prediction and score against scikit-learn's accuracy."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from mvl import (
    MVML,
    KernelMultiViewPerceptron,
    MVLBinarySVM,
    MVLLeastSquares,
    MVLLeastSquaresOptC,
    MVLSVM,
    OrthogonalMultiViewPerceptron,
)
from mvl.estimators.base import (
    RegularizationWarning,
    UnlabelledMarkerWarning,
)

SEMI = [MVLLeastSquares, MVLLeastSquaresOptC, MVLSVM, MVLBinarySVM]
SUPERVISED = [MVML, KernelMultiViewPerceptron, OrthogonalMultiViewPerceptron]
FAST = {MVLLeastSquaresOptC: dict(n_restarts=3, n_iter=5, random_state=0)}


def _make(cls, **kw):
    return cls(**{**FAST.get(cls, {}), **kw})


SWAMPED = r"{}: the regularisation swamps the data term \(.*\): .*so the model ignores the labels; decrease"


@pytest.mark.parametrize("cls", SUPERVISED)
def test_supervised_estimators_treat_minus_one_as_a_class(cls, digits3):
    X, y = digits3
    y3 = np.select([y == 1, y == 4], [-1, 0], 1)  # three classes {-1, 0, 1}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no label warning: -1 is an ordinary class here
        est = cls(views=[76, 64, 6]).fit(X, y3)
    np.testing.assert_array_equal(est.classes_, [-1, 0, 1])
    assert est.score(X, y3) > 0.8  # the samples of class -1 are scored, not skipped
    assert np.mean(est.predict(X[y3 == -1]) == -1) > 0.8



@pytest.mark.parametrize("cls", SEMI)
def test_semi_supervised_warn_when_minus_one_may_be_a_class(cls, digits3):
    X, y = digits3
    y3 = np.select([y == 1, y == 4], [-1, 0], 1)  # meant as {-1, 0, 1}: read as unlabelled + {0, 1}
    with pytest.warns(UnlabelledMarkerWarning, match=r"20 sample\(s\) labelled -1 are read as unlabelled \(the other "
                                                     r"labels are \{0, 1\}\).*np\.where\(y == -1, 0, 1\)"):
        est = _make(cls, views=[76, 64, 6]).fit(X, y3)
    np.testing.assert_array_equal(est.classes_, [0, 1])
    # {-1, +1}: one labelled class; the error says that -1 is the unlabelled marker and how to recode
    ypm = np.where(y == 1, -1, 1)
    with pytest.raises(ValueError, match=r"one class only \(\[1\]\) and 20 unlabelled \(-1\); -1 marks an unlabelled "
                                         r"sample here; to fit a binary problem labelled \{-1, \+1\}, recode it"):
        _make(cls, views=[76, 64, 6]).fit(X, ypm)
    # unlabelled samples that do not enter the fit (gamma_B = gamma_W = 0)
    ysemi = y.copy()
    ysemi[::4] = -1
    with pytest.warns(UnlabelledMarkerWarning, match="with gamma_B = gamma_W = 0 they do not enter the fit"):
        _make(cls, views=[76, 64, 6], gamma_B=0.0, gamma_W=0.0).fit(X, ysemi)



@pytest.mark.parametrize("cls", SEMI)
def test_an_ordinary_semi_supervised_fit_is_silent(cls, digits3):
    X, y = digits3
    ysemi = y.copy()
    ysemi[::4] = -1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = _make(cls, views=[76, 64, 6], gamma_W=1e-2).fit(X, ysemi)
    assert est.score(X, y) > 0.9



@pytest.mark.parametrize("cls", SEMI)
@pytest.mark.parametrize("which", ["gamma_A", "gamma_B", "gamma_W"])
def test_regularisation_that_swamps_the_data_warns_the_same_in_every_estimator(cls, which, digits3):
    X, y = digits3
    ysemi = y.copy()
    ysemi[::4] = -1
    kw = dict(gamma_A=1e-5, gamma_B=1e-6, gamma_W=1e-3, n_neighbors=10)
    kw[which] = 1e300
    with pytest.warns(RegularizationWarning, match=SWAMPED.format(cls.__name__)):
        _make(cls, views=[76, 64, 6], **kw).fit(X, ysemi)



def test_mvml_lambda_that_swamps_the_data_warns(digits3):
    X, y = digits3
    with pytest.warns(RegularizationWarning, match=SWAMPED.format("MVML") + " lmbda"):
        MVML(views=[76, 64, 6], lmbda=1e300).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RegularizationWarning)
        MVML(views=[76, 64, 6]).fit(X, y)

