"""What every estimator shares (mvl.estimators.base): -1 in the labels (the unlabelled marker of the
semi-supervised estimators, an ordinary class of the supervised ones), the warning when the regularisation swamps the
data term, the parameter constraints, prediction and score against scikit-learn's accuracy."""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import pytest
from conftest import make_problem, sample_first
from sklearn.metrics import accuracy_score

from mvl import (
    MVML,
    MVLLeastSquares,
)

from .families import SEMI, SUPERVISED
from .families import make as _make
from mvl.estimators.base import (
    LaplacianOption,
    RegularizationWarning,
    StrictInterval,
    UnlabelledMarkerWarning,
    check_swamped,
)




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


def test_strict_interval_refuses_bools_and_non_finite_numbers():
    positive = StrictInterval(Real, 0, None, closed="neither")
    for ok in (1e-300, 0.5, 3, np.float32(2.0)):
        assert positive.is_satisfied_by(ok), ok
    for bad in (0.0, -1.0, True, np.bool_(True), np.inf, np.nan):
        assert not positive.is_satisfied_by(bad), bad
    assert "a finite float" in str(positive)
    count = StrictInterval(Integral, 1, None, closed="left")
    assert count.is_satisfied_by(1) and count.is_satisfied_by(np.int64(7))
    assert not count.is_satisfied_by(True) and not count.is_satisfied_by(0) and not count.is_satisfied_by(1.0)


def test_laplacian_option_takes_the_two_names_or_an_array():
    option = LaplacianOption()
    assert option.is_satisfied_by("normalized") and option.is_satisfied_by("unnormalized")
    assert option.is_satisfied_by(np.zeros((3, 3, 2))) and option.is_satisfied_by([[[0.0]]])
    assert not option.is_satisfied_by("symmetric") and not option.is_satisfied_by(1.0)


class _Fitted:
    classes_ = np.array(["a", "b", "c"])


@pytest.mark.parametrize("scores,warns", [
    (np.full((6, 3), 1e-9), True),                                  # every decision value ~0
    (np.tile([0.0, 1.0, 0.0], (6, 1)), True),                        # one class for every sample
    (np.eye(3)[[0, 1, 2, 0, 1, 2]], False),                          # every label reproduced
    (np.eye(3)[[0, 0, 0, 1, 1, 1]], True),                           # accuracy 2/6: the majority share 2/6
])
def test_check_swamped_warns_exactly_when_the_fit_ignores_the_labels(scores, warns):
    y_enc = np.array([0, 1, 2, 0, 1, 2])
    accuracy = np.mean(np.argmax(scores, axis=1) == y_enc)
    assert (accuracy == 1.0) is not warns  # the cases: only the perfect fit is silent
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        check_swamped(_Fitted(), scores, [("gamma_A", 1e3)], y_enc)
    got = [w for w in rec if issubclass(w.category, RegularizationWarning)]
    assert len(got) == int(warns)
    if warns:
        assert "_Fitted: the regularisation swamps the data term (gamma_A = 1000)" in str(got[0].message)


def test_predict_and_score_follow_the_decision_function_and_ignore_unlabelled_samples():
    K, K_test, y = make_problem(2, 30, 3, frac_unlabelled=0.3, seed=8, t=12)
    est = MVLLeastSquares(kernel="precomputed", gamma_A=1e-2, gamma_W=1e-2).fit(sample_first(K), y)
    Kt = sample_first(K_test)
    scores = est.decision_function(Kt)
    np.testing.assert_array_equal(est.predict(Kt), est.classes_[np.argmax(scores, axis=1)])
    y_test = np.random.default_rng(9).integers(0, 3, size=12)
    y_test[[1, 5, 7]] = -1
    keep = y_test >= 0
    assert est.score(Kt, y_test) == pytest.approx(accuracy_score(y_test[keep], est.predict(Kt)[keep]))
    assert np.isnan(est.score(Kt, np.full(12, -1)))
