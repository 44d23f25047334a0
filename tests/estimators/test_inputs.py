"""The two input forms of every estimator (mvl.estimators.inputs): kernel checks (indefinite, degenerate views,
bandwidths out of range) against numpy eigenvalues; the input helpers against numpy, scipy.sparse and pandas."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from conftest import make_problem, sample_first
from scipy import sparse

from mvl import (
    MVLLeastSquares,
    grid_decision_functions,
)
from mvl.estimators.base import DegenerateKernelWarning, IndefiniteKernelWarning

from .families import SEMI, SUPERVISED
from .families import make as _make
from mvl.estimators.inputs import is_view_list, lowest_eigenvalue_bound, reject_sparse, take_samples, usable_views




def _indefinite(K, lowest=-19.8, seed=0):
    """K (n, n) with one eigen-direction turned negative: lowest eigenvalue ``lowest``."""
    s, V = np.linalg.eigh(K)
    v = V[:, -1]
    out = K - (s[-1] - lowest) * np.outer(v, v)
    return 0.5 * (out + out.T)


@pytest.mark.parametrize("cls", SEMI + SUPERVISED)
def test_indefinite_precomputed_view_warns_with_the_value(cls):
    K, _, y = make_problem(m=2, n=40, P=3, frac_unlabelled=0.0 if cls in SUPERVISED else 0.2, seed=3)
    K[1] = _indefinite(K[1])
    true = np.linalg.eigvalsh(K[1])[0]
    with pytest.warns(IndefiniteKernelWarning, match=r"view 1 is not positive semi-definite: its lowest eigenvalue is "
                                                     r"at most (-\d+\.\d+)") as rec:
        _make(cls, kernel="precomputed").fit(sample_first(K), y)
    found = float(re.search(r"at most (-[\d.e+]+)", str(rec[0].message)).group(1))
    assert true - 1e-9 * abs(true) <= found < 0.9 * true  # a Lanczos upper bound of the lowest eigenvalue, close


def test_psd_precomputed_views_do_not_warn():
    K, _, y = make_problem(m=3, n=50, P=3, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", IndefiniteKernelWarning)
        MVLLeastSquares(kernel="precomputed", gamma_W=1e-2).fit(sample_first(K), y)


def test_grid_warns_for_an_indefinite_view():
    K, Kt, y = make_problem(m=2, n=30, P=2, seed=5)
    K[0] = _indefinite(K[0], lowest=-3.0)
    with pytest.warns(IndefiniteKernelWarning, match=r"view 0 is not positive semi-definite \(lowest eigenvalue "
                                                     r"-3"):
        grid_decision_functions(sample_first(K), y, sample_first(Kt), [1e-3], [0.0], [0.0])


@pytest.mark.parametrize("bandwidth,what", [(1e300, "2 sigma\\^2 overflows float64"),
                                            (1e-300, "2 sigma\\^2 underflows float64 to 0")])
def test_extreme_bandwidth_gives_a_clear_error(bandwidth, what, digits3):
    X, y = digits3
    with pytest.raises(ValueError, match=re.escape(f"bandwidth of view 0 = {bandwidth:g}: ") + what
                       + r".*median pairwise distance of the training samples of view 0 is \d"):
        MVLLeastSquares(views=[76, 64, 6], bandwidth=bandwidth).fit(X, y)


def test_small_bandwidth_gives_an_identity_kernel_warning(digits3):
    X, y = digits3
    with pytest.warns(DegenerateKernelWarning, match=r"kernel of view 2 is diagonal.*bandwidth 1e-12"):
        MVLLeastSquares(views=[76, 64, 6], bandwidth=[1.0, 1.0, 1e-12]).fit(X, y)


@pytest.mark.parametrize("kernel", ["rbf", "chi2"])
def test_constant_feature_view_warns_naming_the_view(kernel, digits3):
    X, y = digits3
    X = np.abs(X) if kernel == "chi2" else X.copy()
    X[:, 76:140] = 3.0  # view 1 constant
    with pytest.warns(DegenerateKernelWarning, match=r"kernel of view 1 is constant \(1 everywhere\)"):
        est = MVLLeastSquares(views=[76, 64, 6], kernel=kernel).fit(X, y)
    assert est.score(X, y) > 0.9  # the other views carry the fit
    X[:5, 76] = 5.0  # 5 samples differ from the other 55: most pairs are equal, the median distance is 0
    with pytest.raises(ValueError, match=r"view 1: the (median pairwise distance|chi2 scale \('median'\)) of the "
                                         r"training (samples|points) is 0"):
        MVLLeastSquares(views=[76, 64, 6], kernel=kernel, bandwidth="median").fit(X, y)


def test_lowest_eigenvalue_bound_brackets_the_spectrum_and_is_exact_with_n_steps():
    rng = np.random.default_rng(11)
    X = rng.normal(size=(30, 30))
    A = 0.5 * (X + X.T)
    eig = np.linalg.eigvalsh(A)
    low, high = lowest_eigenvalue_bound(A, n_iter=5)
    assert eig[0] - 1e-10 <= low and high <= eig[-1] + 1e-10
    low, high = lowest_eigenvalue_bound(A, n_iter=30)  # n Lanczos steps span the space
    assert low == pytest.approx(eig[0], rel=1e-8) and high == pytest.approx(eig[-1], rel=1e-8)


def test_reject_sparse_refuses_scipy_sparse_input_in_either_form():
    dense = np.eye(3)
    reject_sparse(dense)
    reject_sparse([dense, dense])
    for bad in (sparse.csr_matrix(dense), [dense, sparse.csc_matrix(dense)]):
        with pytest.raises(TypeError, match="^Xt: "):
            reject_sparse(bad, "Xt")


def test_a_view_list_is_a_list_of_two_dimensional_arrays():
    assert is_view_list([np.zeros((4, 2)), np.zeros((4, 3))])
    assert is_view_list((np.zeros((4, 2)),))
    assert not is_view_list([[1.0, 2.0], [3.0, 4.0]])  # rows of one matrix
    assert not is_view_list([])
    assert not is_view_list(np.zeros((4, 2)))


def test_take_samples_selects_rows_in_every_input_form():
    import pandas as pd

    rng = np.random.default_rng(12)
    X = rng.normal(size=(6, 4))
    idx = np.array([4, 0, 3])
    np.testing.assert_array_equal(take_samples(X, idx), X[idx])
    views = take_samples([X[:, :1], X[:, 1:]], idx)
    np.testing.assert_array_equal(np.hstack(views), X[idx])
    frame = pd.DataFrame(X, index=list("abcdef"))
    assert list(take_samples(frame, idx).index) == ["e", "a", "d"]


def test_usable_views_keep_the_test_views_seen_in_training():
    test_mask = np.array([[True, True, False], [False, True, True], [True, False, False]])
    train_mask = np.array([[True, False, False], [True, False, True]])  # view 1 never seen in training
    np.testing.assert_array_equal(usable_views(test_mask, train_mask, "X"),
                                  test_mask & np.array([True, False, True]))
    np.testing.assert_array_equal(usable_views(test_mask, None, "X"), test_mask)
    with pytest.raises(ValueError, match=r"X: test sample\(s\) \[0\] have none"):
        usable_views(np.array([[False, True, False]]), train_mask, "X")
