"""Bad input raises ValueError with a message that names the problem."""

from __future__ import annotations

import numpy as np
import pytest

from mvl import MVLLeastSquares, grid_decision_functions


@pytest.fixture
def fitted(two_view_problem):
    K, K_test, y = two_view_problem
    return MVLLeastSquares(gamma_A=0.1).fit(K, y), K, K_test, y


def _fit(K, y, **kw):
    return MVLLeastSquares(**{"gamma_A": 0.1, **kw}).fit(K, y)


# ---------------------------------------------------------------- kernels


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_kernel(two_view_problem, bad):
    K, _, y = two_view_problem
    K = K.copy()
    K[1, 2, 3] = K[1, 3, 2] = bad
    with pytest.raises(ValueError, match=r"K contains NaN or inf \(in view\(s\) \[1\]\)"):
        _fit(K, y)


def test_non_square_kernel(two_view_problem):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match="square"):
        _fit(K[:, :, :-1], y)
    with pytest.raises(ValueError, match="square"):
        _fit(K[0, :, :-1], y)  # a single 2-d view


def test_kernel_wrong_ndim(two_view_problem):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match=r"shape \(m, n, n\)"):
        _fit(K[None], y)


def test_non_symmetric_kernel(two_view_problem):
    K, _, y = two_view_problem
    K = K.copy()
    K[1, 0, 5] += 1e-3
    with pytest.raises(ValueError, match="view 1 is not symmetric"):
        _fit(K, y)


def test_views_of_different_sizes(two_view_problem):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match="different shapes"):
        _fit([K[0], K[1][:-1, :-1]], y)


@pytest.mark.parametrize("dtype_case", ["str", "complex", "object"])
def test_kernel_wrong_dtype(two_view_problem, dtype_case):
    K, _, y = two_view_problem
    if dtype_case == "str":
        bad = K.astype(str)
    elif dtype_case == "complex":
        bad = K.astype(complex)
    else:
        bad = K.astype(object)
    with pytest.raises(ValueError, match="K"):
        _fit(bad, y)


def test_kernel_complex_message(two_view_problem):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match="K must hold real numbers, got dtype complex"):
        _fit(K.astype(complex), y)


def test_empty_kernel():
    with pytest.raises(ValueError, match="empty"):
        _fit(np.zeros((1, 0, 0)), np.zeros(0, dtype=int))


# ---------------------------------------------------------------- test kernels


def test_test_kernel_wrong_number_of_training_columns(fitted):
    model, _, K_test, _ = fitted
    with pytest.raises(ValueError, match="fitted on n = 16 training samples"):
        model.decision_function(K_test[:, :, :-1])
    with pytest.raises(ValueError, match="fitted on n = 16 training samples"):
        model.predict(np.concatenate([K_test, K_test[:, :, :1]], axis=2))


def test_test_kernel_wrong_number_of_views(fitted):
    model, _, K_test, _ = fitted
    with pytest.raises(ValueError, match="has 3 views but the model was fitted with 2"):
        model.decision_function(np.concatenate([K_test, K_test[:1]], axis=0))
    with pytest.raises(ValueError, match="has 1 views but the model was fitted with 2"):
        model.view_decision_function(K_test[:1])
    with pytest.raises(ValueError, match=r"shape \(m, t, n\)"):
        model.decision_function(K_test[0])  # 2-d test kernel for a 2-view model


def test_test_kernel_non_finite_and_ragged(fitted):
    model, _, K_test, _ = fitted
    bad = K_test.copy()
    bad[0, 0, 0] = np.nan
    with pytest.raises(ValueError, match="K_test contains NaN or inf"):
        model.decision_function(bad)
    with pytest.raises(ValueError, match="different shapes"):
        model.decision_function([K_test[0], K_test[1][:-1]])


@pytest.mark.parametrize("method", ["decision_function", "view_decision_function", "predict", "score"])
def test_predict_before_fit(two_view_problem, method):
    _, K_test, _ = two_view_problem
    model = MVLLeastSquares(gamma_A=0.1)
    args = (K_test,) if method != "score" else (K_test, np.zeros(K_test.shape[1], dtype=int))
    with pytest.raises(ValueError, match="not fitted"):
        getattr(model, method)(*args)


# ---------------------------------------------------------------- labels


def test_class_without_labelled_sample_when_n_classes_given(two_view_problem):
    K, _, y = two_view_problem  # classes 0, 1, 2
    with pytest.raises(ValueError, match=r"class\(es\) \[3\] have no labelled sample"):
        _fit(K, y, n_classes=4)
    y2 = np.where(y == 1, -1, y)  # class 1 now only unlabelled
    with pytest.raises(ValueError, match=r"class\(es\) \[1\] have no labelled sample"):
        _fit(K, y2, n_classes=3)


def test_labels_outside_declared_classes(two_view_problem):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match=r"labels outside 0\.\.1: \[2\]"):
        _fit(K, y, n_classes=2)


def test_labels_below_minus_one(two_view_problem):
    K, _, y = two_view_problem
    y = y.copy()
    y[np.flatnonzero(y >= 0)[0]] = -2
    with pytest.raises(ValueError, match="labels below -1"):
        _fit(K, y)


def test_no_labelled_samples(two_view_problem):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match="no labelled samples"):
        _fit(K, -np.ones_like(y))


def test_single_class(two_view_problem):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match="single class"):
        _fit(K, np.where(y >= 0, 2, -1))


@pytest.mark.parametrize(
    "make_bad,match",
    [
        (lambda y: y.astype(str), "integer class labels, got dtype"),
        (lambda y: y.astype(complex), "integer class labels, got dtype complex"),
        (lambda y: y.astype(float) + 0.5, "integer class labels"),
        (lambda y: np.where(y == 0, np.nan, y.astype(float)), "y contains NaN or inf"),
        (lambda y: y[:-1], "has 15 entries but the kernels have n = 16"),
        (lambda y: y[:, None], "one-dimensional"),
    ],
)
def test_bad_labels(two_view_problem, make_bad, match):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match=match):
        _fit(K, make_bad(y))


def test_integer_valued_float_labels_accepted(two_view_problem):
    K, K_test, y = two_view_problem
    a = _fit(K, y)
    b = _fit(K, y.astype(float))
    np.testing.assert_array_equal(a.decision_function(K_test), b.decision_function(K_test))


# ---------------------------------------------------------------- parameters


@pytest.mark.parametrize("gamma_A", [0.0, -1e-3, np.nan, np.inf, "abc", None])
def test_gamma_A_must_be_positive(two_view_problem, gamma_A):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match="gamma_A"):
        _fit(K, y, gamma_A=gamma_A)


@pytest.mark.parametrize("name", ["gamma_B", "gamma_W"])
@pytest.mark.parametrize("value", [-0.1, np.nan, np.inf])
def test_gamma_B_W_must_be_non_negative(two_view_problem, name, value):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match=name):
        _fit(K, y, **{name: value})


@pytest.mark.parametrize("c", [[1.0], [1.0, 2.0, 3.0], np.ones((2, 2))])
def test_c_wrong_length(two_view_problem, c):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match=r"c must have one weight per view \(m = 2\)"):
        _fit(K, y, c=c)


def test_c_non_finite(two_view_problem):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match="c contains NaN or inf"):
        _fit(K, y, c=[1.0, np.nan])


@pytest.mark.parametrize("c", [[1.0 + 1.0j, 0.5], ["a", "b"]])
def test_c_wrong_dtype(two_view_problem, c):
    """The module promises ValueError naming the problem for every bad input (_validation.py)."""
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match=r"\bc\b"):
        _fit(K, y, c=c)


def test_unknown_solver(two_view_problem):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match="solver must be one of"):
        _fit(K, y, solver="cholesky")


def test_unknown_laplacian(two_view_problem):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match="laplacian must be"):
        _fit(K, y, gamma_W=0.1, laplacian="random-walk")


def test_explicit_laplacian_wrong_shape(two_view_problem):
    K, _, y = two_view_problem
    with pytest.raises(ValueError, match="laplacian has shape"):
        _fit(K, y, gamma_W=0.1, laplacian=np.stack([np.eye(16)] * 3))


def test_kernel_laplacian_needs_non_negative_weights(two_view_problem):
    """A linear kernel cannot be the graph weights of the default Laplacian."""
    K, _, y = two_view_problem
    rng = np.random.default_rng(0)
    X = rng.normal(size=(16, 3))
    K_lin = np.stack([X @ X.T, K[1]])
    with pytest.raises(ValueError, match="non-negative"):
        _fit(K_lin, y, gamma_W=0.1)
    # with gamma_W = 0 no Laplacian is needed and the fit succeeds
    model = _fit(K_lin, y, gamma_W=0.0, gamma_B=0.1)
    assert np.all(np.isfinite(model.coef_))


def test_grid_validates_inputs(two_view_problem):
    K, K_test, y = two_view_problem
    with pytest.raises(ValueError, match="gamma_A"):
        grid_decision_functions(K, y, K_test, [0.1, 0.0], [0.0], [0.0])
    with pytest.raises(ValueError, match="gamma_B"):
        grid_decision_functions(K, y, K_test, [0.1], [-1.0], [0.0])
    with pytest.raises(ValueError, match="fitted on n = 16"):
        grid_decision_functions(K, y, K_test[:, :, :-1], [0.1], [0.0], [0.0])
    with pytest.raises(ValueError, match="no labelled samples"):
        grid_decision_functions(K, -np.ones_like(y), K_test, [0.1], [0.0], [0.0])
