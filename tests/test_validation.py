"""Bad input raises ValueError with a message that names the problem."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import paper_kwargs, sample_first

from mvl import MVLLeastSquares, grid_decision_functions


@pytest.fixture
def fitted(two_view_problem):
    """A model fitted on precomputed kernels, with the sample-first training (n, n, m) and test (t, n, m) kernels."""
    K, K_test, y = two_view_problem
    Ks, Kt = sample_first(K), sample_first(K_test)
    return _fit(Ks, y), Ks, Kt, y


def _fit(X, y, **kw):
    """MVL-LS with kernel="precomputed" on X as given (sample-first (n, n, m), or deliberately malformed)."""
    return MVLLeastSquares(**paper_kwargs(0, {"gamma_A": 0.1, "kernel": "precomputed", **kw})).fit(X, y)


# ---------------------------------------------------------------- kernels


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_kernel(two_view_problem, bad):
    from mvl.validation import check_multiview_kernels

    K, K_test, y = two_view_problem
    K = K.copy()
    K[1, 2, 3] = K[1, 3, 2] = bad
    # the estimators and the kernel check name the view
    with pytest.raises(ValueError, match=r"X contains NaN or inf \(in view\(s\) \[1\]\)"):
        _fit(sample_first(K), y)
    with pytest.raises(ValueError, match=r"X contains NaN or inf \(in view\(s\) \[1\]\)"):
        check_multiview_kernels(K, name="X")
    with pytest.raises(ValueError, match=r"K contains NaN or inf \(in view\(s\) \[1\]\)"):
        grid_decision_functions(sample_first(K), y, sample_first(K_test), [0.1], [0.0], [0.0])


def test_non_square_kernel(two_view_problem):
    K, _, y = two_view_problem
    Ks = sample_first(K)
    with pytest.raises(ValueError, match=r"X must have shape \(n_samples, n_samples, n_views\).*got \(16, 15, 2\)"):
        _fit(Ks[:, :-1], y)
    with pytest.raises(ValueError, match=r"X must have shape \(n_samples, n_samples, n_views\).*got \(16, 15, 1\)"):
        _fit(Ks[:, :-1, 0], y)  # a single 2-d view


def test_kernel_wrong_ndim(two_view_problem):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match=r"X must have shape \(n_samples, n_samples, n_views\).*got \(1, 16, 16, 2\)"):
        _fit(sample_first(K)[None], y)


def test_per_view_layout_is_refused(two_view_problem):
    """The former per-view layout (m, n, n) is no longer accepted (the view axis is the last one)."""
    K, K_test, y = two_view_problem
    with pytest.raises(ValueError, match=r"X must have shape \(n_samples, n_samples, n_views\).*got \(2, 16, 16\)"):
        _fit(K, y)
    with pytest.raises(ValueError, match=r"K must have shape \(n_samples, n_samples, n_views\), got \(2, 16, 16\)"):
        grid_decision_functions(K, y, K_test, [0.1], [0.0], [0.0])


def test_non_symmetric_kernel(two_view_problem):
    K, _, y = two_view_problem
    K = K.copy()
    K[1, 0, 5] += 1e-3
    with pytest.raises(ValueError, match="X: view 1 is not symmetric"):
        _fit(sample_first(K), y)


def test_views_of_different_sizes(two_view_problem):
    """Per-view kernel lists (here of different sizes) are refused: one sample-first array is required."""
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match=r"takes one array of shape \(n_samples, n_samples, n_views\).*not a list"):
        _fit([K[0], K[1][:-1, :-1]], y)


@pytest.mark.parametrize("dtype_case", ["str", "complex", "object"])
def test_kernel_wrong_dtype(two_view_problem, dtype_case):
    K, _, y = two_view_problem
    Ks = sample_first(K)
    if dtype_case == "str":
        bad = Ks.astype(str)
        bad[0, 1, 0] = "abc"
        match = "could not convert string to float"
    elif dtype_case == "complex":
        bad = Ks.astype(complex)
        match = "Complex data not supported"
    else:
        bad = Ks.astype(object)
        bad[0, 1, 0] = bad[1, 0, 0] = "abc"
        match = "could not convert string to float"
    with pytest.raises(ValueError, match=match):
        _fit(bad, y)


def test_kernel_complex_message(two_view_problem):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match="Complex data not supported"):
        _fit(sample_first(K).astype(complex), y)


def test_empty_kernel():
    with pytest.raises(ValueError, match=r"Found array with 0 sample\(s\)"):
        _fit(np.zeros((0, 0, 1)), np.zeros(0, dtype=int))


# ---------------------------------------------------------------- test kernels


def test_test_kernel_wrong_number_of_training_columns(fitted):
    """Test kernels (t, n, m) against the wrong number of training samples: scikit-learn's feature-count check."""
    model, _, K_test, _ = fitted
    with pytest.raises(ValueError, match="X has 15 features, but MVLLeastSquares is expecting 16 features"):
        model.decision_function(K_test[:, :-1])
    with pytest.raises(ValueError, match="X has 17 features, but MVLLeastSquares is expecting 16 features"):
        model.predict(np.concatenate([K_test, K_test[:, :1]], axis=1))


def test_test_kernel_wrong_number_of_views(fitted):
    model, _, K_test, _ = fitted
    shape = r"X must have shape \(n_samples, n_samples_fit, n_views\) = \(t, 16, 2\), got "
    with pytest.raises(ValueError, match=shape + r"\(7, 16, 3\)"):
        model.decision_function(np.concatenate([K_test, K_test[:, :, :1]], axis=2))
    with pytest.raises(ValueError, match=shape + r"\(7, 16, 1\)"):
        model.view_decision_function(K_test[:, :, :1])
    with pytest.raises(ValueError, match=shape + r"\(7, 16\)"):
        model.decision_function(K_test[:, :, 0])  # 2-d test kernel for a 2-view model


def test_test_kernel_non_finite_and_ragged(fitted):
    model, _, K_test, _ = fitted
    bad = K_test.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="Input X contains NaN"):
        model.decision_function(bad)
    bad[0, 0, 0] = np.inf
    with pytest.raises(ValueError, match="Input X contains infinity"):
        model.decision_function(bad)
    with pytest.raises(ValueError, match="setting an array element with a sequence"):
        model.decision_function([K_test[..., 0], K_test[:-1, :, 1]])


@pytest.mark.parametrize("method", ["decision_function", "view_decision_function", "predict", "score"])
def test_predict_before_fit(two_view_problem, method):
    from sklearn.exceptions import NotFittedError

    _, K_test, _ = two_view_problem
    K_test = sample_first(K_test)
    model = MVLLeastSquares(gamma_A=0.1, kernel="precomputed")
    args = (K_test,) if method != "score" else (K_test, np.zeros(K_test.shape[0], dtype=int))
    with pytest.raises(NotFittedError, match="not fitted"):
        getattr(model, method)(*args)


# ---------------------------------------------------------------- labels


def test_class_without_labelled_sample_when_n_classes_given(two_view_problem):
    K, _, y = two_view_problem  # classes 0, 1, 2
    K = sample_first(K)
    with pytest.raises(ValueError, match=r"class\(es\) \[3\] have no labelled sample"):
        _fit(K, y, n_classes=4)
    y2 = np.where(y == 1, -1, y)  # class 1 now only unlabelled
    with pytest.raises(ValueError, match=r"class\(es\) \[1\] have no labelled sample"):
        _fit(K, y2, n_classes=3)


def test_labels_outside_declared_classes(two_view_problem):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match=r"labels outside 0\.\.1: \[2\]"):
        _fit(sample_first(K), y, n_classes=2)
    with pytest.raises(ValueError, match=r"'n_classes' parameter of MVLLeastSquares must be None or an int in the "
                                         r"range \[2, inf\)\. Got 1 instead"):
        _fit(sample_first(K), y, n_classes=1)


def test_labels_below_minus_one_are_classes(two_view_problem):
    """Only -1 marks an unlabelled sample; other negative labels are classes like any sortable label
    (they used to be refused)."""
    K, K_test, y = two_view_problem
    K, K_test = sample_first(K), sample_first(K_test)
    y2 = y.copy()
    y2[y == 0] = -2
    a, b = _fit(K, y), _fit(K, y2)
    np.testing.assert_array_equal(b.classes_, [-2, 1, 2])
    np.testing.assert_array_equal(b.decision_function(K_test), a.decision_function(K_test))
    np.testing.assert_array_equal(b.predict(K_test), np.where(a.predict(K_test) == 0, -2, a.predict(K_test)))


def test_no_labelled_samples(two_view_problem):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match="y has no labelled samples"):
        _fit(sample_first(K), -np.ones_like(y))


def test_single_class(two_view_problem):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match=r"y has labelled samples of one class only \(\[2\]\)"):
        _fit(sample_first(K), np.where(y >= 0, 2, -1))


@pytest.mark.parametrize(
    "make_bad,match",
    [
        (lambda y: np.array(["a" if v == 0 else v for v in y], dtype=object), r"y mixes label types \[.*'str'\]"),
        (lambda y: y.astype(complex), "Complex data not supported"),
        (lambda y: y.astype(float) + 0.5, "Unknown label type: continuous"),
        (lambda y: np.where(y == 0, np.nan, y.astype(float)), "Input y contains NaN or infinity"),
        (lambda y: y[:-1], "y has 15 entries but X has 16 samples"),
        (lambda y: np.stack([y, y], axis=1), r"y should be a 1d array, got an array of shape \(16, 2\)"),
    ],
)
def test_bad_labels(two_view_problem, make_bad, match):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match=match):
        _fit(sample_first(K), make_bad(y))


def test_column_vector_labels_warn(two_view_problem):
    """A (n, 1) column of labels is raveled with scikit-learn's DataConversionWarning."""
    from sklearn.exceptions import DataConversionWarning

    K, K_test, y = two_view_problem
    K, K_test = sample_first(K), sample_first(K_test)
    with pytest.warns(DataConversionWarning):
        b = _fit(K, y[:, None])
    np.testing.assert_array_equal(b.decision_function(K_test), _fit(K, y).decision_function(K_test))


def test_integer_valued_float_labels_accepted(two_view_problem):
    K, K_test, y = two_view_problem
    K, K_test = sample_first(K), sample_first(K_test)
    a = _fit(K, y)
    b = _fit(K, y.astype(float))
    np.testing.assert_array_equal(a.decision_function(K_test), b.decision_function(K_test))


# ---------------------------------------------------------------- parameters


@pytest.mark.parametrize("gamma_A", [0.0, -1e-3, np.nan, np.inf, "abc", "0.1", None])
def test_gamma_A_must_be_positive(two_view_problem, gamma_A):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match="gamma_A"):
        _fit(sample_first(K), y, gamma_A=gamma_A)


@pytest.mark.parametrize("name", ["gamma_B", "gamma_W"])
@pytest.mark.parametrize("value", [-0.1, np.nan, np.inf, "0.1"])
def test_gamma_B_W_must_be_non_negative(two_view_problem, name, value):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match=name):
        _fit(sample_first(K), y, **{name: value})


@pytest.mark.parametrize("c", [[1.0], [1.0, 2.0, 3.0], np.ones((2, 2))])
def test_c_wrong_length(two_view_problem, c):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match=r"c must have one weight per view \(m = 2\)"):
        _fit(sample_first(K), y, c=c)


def test_c_non_finite(two_view_problem):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match="c contains NaN or inf"):
        _fit(sample_first(K), y, c=[1.0, np.nan])


def test_c_all_zeros(two_view_problem):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match="c is all zeros"):
        _fit(sample_first(K), y, c=[0.0, 0.0])


@pytest.mark.parametrize("c", [[1.0 + 1.0j, 0.5], ["a", "b"]])
def test_c_wrong_dtype(two_view_problem, c):
    """The module promises ValueError naming the problem for every bad input (validation.py)."""
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match=r"c must be a vector of real numbers"):
        _fit(sample_first(K), y, c=c)


def test_unknown_solver(two_view_problem):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match="'solver' parameter of MVLLeastSquares must be a str among"):
        _fit(sample_first(K), y, solver="cholesky")


def test_unknown_laplacian(two_view_problem):
    K, _, y = two_view_problem
    # the message names the sample-first layout the estimators take, (n_samples, n_samples, n_views)
    with pytest.raises(ValueError, match=r"'laplacian' parameter of MVLLeastSquares must be 'normalized', "
                                         r"'unnormalized' or an array of shape \(n_samples, n_samples, n_views\)"):
        _fit(sample_first(K), y, gamma_W=0.1, laplacian="random-walk")
    with pytest.raises(ValueError, match=r"\(n_samples, n_samples, n_views\)"):
        _fit(sample_first(K), y, gamma_W=0.1, laplacian="foo")


def test_explicit_laplacian_wrong_shape(two_view_problem):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match="laplacian has shape"):
        _fit(sample_first(K), y, gamma_W=0.1, laplacian=sample_first(np.stack([np.eye(16)] * 3)))
    with pytest.raises(ValueError, match="laplacian has shape"):  # a 2-d laplacian is one view
        _fit(sample_first(K), y, gamma_W=0.1, laplacian=np.eye(16))
    with pytest.raises(ValueError, match=r"laplacian must be .* array of shape \(n_samples, n_samples, n_views\)"):
        _fit(sample_first(K), y, gamma_W=0.1, laplacian=np.ones((16, 16, 2, 1)))


def test_kernel_laplacian_needs_non_negative_weights(two_view_problem):
    """A linear kernel cannot be the graph weights of the default Laplacian."""
    K, _, y = two_view_problem
    rng = np.random.default_rng(0)
    X = rng.normal(size=(16, 3))
    K_lin = sample_first(np.stack([X @ X.T, K[1]]))
    with pytest.raises(ValueError, match="non-negative"):
        _fit(K_lin, y, gamma_W=0.1)
    # with gamma_W = 0 no Laplacian is needed and the fit succeeds
    model = _fit(K_lin, y, gamma_W=0.0, gamma_B=0.1)
    assert np.all(np.isfinite(model.coef_))


def test_grid_validates_inputs(two_view_problem):
    K, K_test, y = two_view_problem
    K, K_test = sample_first(K), sample_first(K_test)
    with pytest.raises(ValueError, match="gamma_A"):
        grid_decision_functions(K, y, K_test, [0.1, 0.0], [0.0], [0.0])
    with pytest.raises(ValueError, match="gamma_B"):
        grid_decision_functions(K, y, K_test, [0.1], [-1.0], [0.0])
    with pytest.raises(ValueError, match=r"K_test must have shape \(n_samples, n_samples_fit, n_views\) = "
                                         r"\(t, 16, 2\), "
                                         r"got \(7, 15, 2\)"):
        grid_decision_functions(K, y, K_test[:, :-1], [0.1], [0.0], [0.0])
    with pytest.raises(ValueError, match="gamma_W must be a real number"):
        grid_decision_functions(K, y, K_test, [0.1], [0.0], ["0.1"])
    with pytest.raises(ValueError, match="c is all zeros"):
        grid_decision_functions(K, y, K_test, [0.1], [0.0], [0.0], c=[0.0, 0.0])
    with pytest.raises(ValueError, match="y has no labelled samples"):
        grid_decision_functions(K, -np.ones_like(y), K_test, [0.1], [0.0], [0.0])


def test_precomputed_kernels_reach_the_solvers_as_contiguous_views(two_view_problem):
    """Sample-first input (n, n, m) is copied once into the solvers' layout (m, n, n) with each view a C-contiguous
    block: on the strided view ``np.moveaxis`` gives, every BLAS product (the PSD check's Lanczos steps, the
    factorisations) reads memory with a stride of m and was ~10x slower."""
    from mvl.validation import check_precomputed

    K, _, _ = two_view_problem
    X = np.ascontiguousarray(sample_first(K))
    out = check_precomputed(X)
    assert out.flags.c_contiguous and out[1].flags.c_contiguous
    np.testing.assert_array_equal(out, K)
