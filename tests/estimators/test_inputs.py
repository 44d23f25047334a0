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


def _blobs(n=40, seed=0):
    """Two classes, two views of 3 and 2 features; -1 marks the second half of each class as unlabelled."""
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n // 2)
    X = rng.normal(size=(n, 5)) + 3.0 * y[:, None]
    y_semi = y.copy()
    y_semi[np.arange(n) % (n // 2) >= 5] = -1
    return X, y_semi, y


@pytest.mark.parametrize("bad,what", [(np.inf, "infinity: view {} of sample\\(s\\) {} has inf"),
                                      (np.nan, "NaN: view {} of sample\\(s\\) {} has NaN in some but not all")])
def test_bad_values_name_the_view_and_the_sample_at_predict_and_in_a_view_list(bad, what):
    X, y, _ = _blobs()
    est = MVLLeastSquares(views=[3, 2]).fit(X, y)
    Xt = X[:8].copy()
    Xt[6, 4] = bad
    with pytest.raises(ValueError, match=what.format(1, r"\[6\]")):
        est.predict(Xt)
    Xb = X.copy()
    Xb[[3, 9], 0] = bad
    with pytest.raises(ValueError, match=what.format(0, r"\[3, 9\]")):
        MVLLeastSquares().fit([Xb[:, :3], Xb[:, 3:]], y)


@pytest.mark.parametrize("cls", SUPERVISED)
def test_a_missing_view_names_the_estimators_that_take_it(cls):
    X, _, y = _blobs()
    X[[2, 5], 3:] = np.nan
    with pytest.raises(ValueError, match=rf"view 1 of sample\(s\) \[2, 5\] is missing.*not supported by "
                                         rf"{cls.__name__}: use MVLLeastSquares or MVLSVM"):
        _make(cls, views=[3, 2]).fit(X, y)


@pytest.mark.parametrize("kernel", ["rbf", "linear", "chi2"])
def test_features_whose_distances_overflow_are_refused_below_the_limit_they_pass(kernel):
    from mvl.estimators.inputs import _overflow_limit

    X, y, _ = _blobs()
    X = np.abs(X)
    big = X.copy()
    big[:, :3] *= 1e160
    with pytest.raises(ValueError, match=r"view 0: feature values up to \d\.\d+e\+160 overflow float64.*rescale"):
        MVLLeastSquares(views=[3, 2], kernel=kernel).fit(big, y)
    ok = X.copy()
    ok[:, :3] *= 0.5 * _overflow_limit(3) / X[:, :3].max()
    assert np.isfinite(MVLLeastSquares(views=[3, 2], kernel=kernel).fit(ok, y).decision_function(ok)).all()


@pytest.mark.parametrize("solver", ["structured", "cg"])
def test_a_view_in_one_sample_needs_a_numeric_bandwidth(solver):
    X, y, _ = _blobs()
    X[1:, :3] = np.nan  # view 0 only in sample 0
    with pytest.raises(ValueError, match=r"view 0 is present in 1 sample only \(of 40 training samples\): its "
                                         r"bandwidth rule 'median'"):
        MVLLeastSquares(views=[3, 2], solver=solver).fit(X, y)
    est = MVLLeastSquares(views=[3, 2], solver=solver, bandwidth=[2.0, "median"]).fit(X, y)
    assert est.bandwidths_[0] == 2.0


@pytest.mark.parametrize("solver", ["structured", "cg", "nystrom", "graph"])
def test_the_identity_kernel_warning_names_the_view_on_every_path(solver):
    X, y, y_full = _blobs(60)
    kw = dict(views=[3, 2], solver=solver, n_components=20, max_iter=50, random_state=0)
    with pytest.warns(DegenerateKernelWarning, match=r"kernel of view 1 is diagonal.*bandwidth 1e-12"):
        MVLLeastSquares(bandwidth=["median", 1e-12], **kw).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateKernelWarning)
        MVLLeastSquares(**kw).fit(X, y)
    if solver in ("structured", "cg"):  # incomplete views: the samples that have the view
        Xi = X.copy()
        Xi[::4, :3] = np.nan
        with pytest.warns(DegenerateKernelWarning, match=r"kernel of view 0 is diagonal"):
            MVLLeastSquares(bandwidth=[1e-12, "median"], **kw).fit(Xi, y)


def test_the_sampled_identity_test_reads_a_few_rows_of_the_view():
    from mvl.estimators.inputs import _sampled_state
    from mvl.kernel_blocks import ViewKernels

    X = np.random.default_rng(0).normal(size=(200, 2))
    kernels = ViewKernels([X, X], "rbf", [1e-12, 1.0])
    assert _sampled_state(kernels, 0) == ("diagonal", None)
    assert _sampled_state(kernels, 1) is None
    present = np.zeros(200, dtype=bool)
    present[:3] = True
    assert _sampled_state(kernels, 0, present) == ("diagonal", None)
    assert _sampled_state(kernels, 0, present & (np.arange(200) < 1)) is None  # one sample: nothing to compare
