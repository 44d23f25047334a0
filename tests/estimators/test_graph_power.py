"""The graph model of manifold regularization: iterated Laplacians (L^i)^p and binary kNN weights.

Every estimator option is checked against an independent reference whose Laplacian is built here:
kNN weights by an explicit loop, L by :func:`mvl.graph.laplacian` of those weights (checked itself
against scipy's csgraph in tests/test_graph.py), and L^p by ``np.linalg.matrix_power``.

* m = 1: Laplacian RLS solved directly, a = (J K + l gamma_A I + l gamma_W L^p K)^{-1} J Y;
* m > 1: the dense (u+l)m system of eq (67)-(68) (``solver="dense"``), which shares no code with the
  structured solver, given the package's own L^p and the explicit L^p built here;
* MVL-SVM and MVL-binSVM: the dual QP of Theorem 6 built densely and solved by clarabel
  (``dense_theorem6`` of test_svm.py) with the L^p built here;
* MVL-LS-optC: the final coefficients against the dense MVL-LS solve at the learned c.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_problem, paper_kwargs, pm_one_targets, rel_diff, sample_first, signal_free
from svm_reference import TIGHT, dense_theorem6, objective
from svm_reference import assert_same_predictions as _assert_same_predictions

from mvl import MVLLeastSquares, MVLLeastSquaresOptC
from mvl.graph import laplacian
from mvl.labels import encode_targets
from mvl import MVLSVM, MVLBinarySVM

ESTIMATORS = [MVLLeastSquares, MVLLeastSquaresOptC, MVLSVM, MVLBinarySVM]

# graph models: (n_neighbors, graph_weights); binary weights only exist on a kNN graph
GRAPHS = [(None, "kernel"), (5, "kernel"), (5, "binary")]

# ---------------------------------------------------------------- fixtures and references


@pytest.fixture
def single_view_problem():
    """m=1 view, n=26 samples, P=3 classes, ~40% unlabelled, 9 test points."""
    return make_problem(m=1, n=26, P=3, frac_unlabelled=0.4, seed=41, t=9)


@pytest.fixture
def three_view_problem_p():
    """m=3 views, n=22 samples, P=3 classes, ~35% unlabelled, 8 test points."""
    return make_problem(m=3, n=22, P=3, frac_unlabelled=0.35, seed=42, t=8)


@pytest.fixture
def svm_problem():
    """m=2 views, n=34 samples, P=3 classes, ~30% unlabelled, 25 test points."""
    return make_problem(m=2, n=34, P=3, frac_unlabelled=0.3, seed=43, t=25)


def reference_weights(K, n_neighbors, weights):
    """Graph weights of one view built by explicit loops: dense W = K, or the symmetrised kNN graph
    (j among the k largest K[i, j], j != i, or i among those of j) with edge weights K[i, j] or 1."""
    if n_neighbors is None:
        return K.copy()
    n = K.shape[0]
    W = np.zeros((n, n))
    for i in range(n):
        neighbours = [j for j in np.argsort(-K[i], kind="stable") if j != i][:n_neighbors]
        for j in neighbours:
            W[i, j] = W[j, i] = 1.0 if weights == "binary" else K[i, j]
    return W


def reference_laplacian_powers(K, normalized, n_neighbors, weights, power):
    """(L^i)^p per view, (m, n, n), with L^i = mvl.graph.laplacian of the weights built here."""
    return np.stack([np.linalg.matrix_power(laplacian(reference_weights(K[i], n_neighbors, weights),
                                                      normalized=normalized), power)
                     for i in range(K.shape[0])])


def laplacian_rls(K, y, K_test, gamma_A, gamma_W, Lp):
    """One-view Laplacian RLS solved directly: a = (J K + l gA I + l gW L^p K)^{-1} J Y.

    Returns (coefficients a (n, P), test outputs K_test a (t, P))."""
    n = K.shape[0]
    lab, Y_L = pm_one_targets(y, int(y.max()) + 1)
    l = lab.size
    J = np.zeros((n, n))
    J[lab, lab] = 1.0
    Y = np.zeros((n, Y_L.shape[1]))
    Y[lab] = Y_L
    a = np.linalg.solve(J @ K + l * gamma_A * np.eye(n) + l * gamma_W * Lp @ K, J @ Y)
    return a, K_test @ a


# ---------------------------------------------------------------- MVL-LS, one view: Laplacian RLS


@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("n_neighbors,weights", GRAPHS)
@pytest.mark.parametrize("power", [1, 2, 3])
def test_single_view_is_laplacian_rls_with_iterated_laplacian(single_view_problem, normalized, n_neighbors,
                                                              weights, power):
    K, K_test, y = single_view_problem
    Ks, Kt = sample_first(K), sample_first(K_test)
    lab, Y_L = pm_one_targets(y, 3)
    np.testing.assert_array_equal(encode_targets(y[lab], 3), Y_L)  # the package's targets are these
    gamma_A, gamma_W = 0.02, 0.01 if normalized else 1e-3
    Lp = reference_laplacian_powers(K, normalized, n_neighbors, weights, power)
    a, f_test = laplacian_rls(K[0], y, K_test[0], gamma_A, gamma_W, Lp[0])
    lap = "normalized" if normalized else "unnormalized"
    for solver in ("structured", "dense"):
        est = MVLLeastSquares(kernel="precomputed", gamma_A=gamma_A, gamma_W=gamma_W, laplacian=lap,
                              n_neighbors=n_neighbors, graph_weights=weights, laplacian_power=power,
                              solver=solver).fit(Ks, y)
        assert rel_diff(est.coef_[0], a) <= 1e-8, solver
        assert rel_diff(est.decision_function(Kt), f_test) <= 1e-8, solver
        assert rel_diff(est.view_decision_function(Kt)[:, 0], f_test) <= 1e-8, solver
    if power > 1:  # the power is not a no-op: the p = 1 solution is far from this one
        L1 = reference_laplacian_powers(K, normalized, n_neighbors, weights, 1)[0]
        a1, _ = laplacian_rls(K[0], y, K_test[0], gamma_A, gamma_W, L1)
        assert rel_diff(a1, a) > 1e-3


# ---------------------------------------------------------------- MVL-LS, several views: structured = dense


@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("n_neighbors,weights", GRAPHS)
@pytest.mark.parametrize("power", [2, 3])
def test_structured_matches_dense_with_iterated_laplacian(three_view_problem_p, normalized, n_neighbors, weights,
                                                          power):
    K, K_test, y = three_view_problem_p
    Ks, Kt = sample_first(K), sample_first(K_test)
    rng = np.random.default_rng(100 * power + (n_neighbors or 0))
    c = rng.uniform(0.3, 1.5, size=3) * np.array([-1.0, 1.0, 1.0])
    kw = dict(gamma_A=0.01, gamma_B=0.03, gamma_W=0.02 if normalized else 1e-3, c=c,
              laplacian="normalized" if normalized else "unnormalized")
    graph_kw = dict(n_neighbors=n_neighbors, graph_weights=weights, laplacian_power=power)
    fast = MVLLeastSquares(kernel="precomputed", solver="structured", **kw, **graph_kw).fit(Ks, y)
    dense = MVLLeastSquares(kernel="precomputed", solver="dense", **kw, **graph_kw).fit(Ks, y)
    assert rel_diff(fast.coef_, dense.coef_) <= 1e-8
    assert rel_diff(fast.decision_function(Kt), dense.decision_function(Kt)) <= 1e-8
    # the dense system with the L^p built in this test, passed as an explicit array (power 1)
    Lp = reference_laplacian_powers(K, normalized, n_neighbors, weights, power)
    kw["laplacian"] = sample_first(Lp)
    ref = MVLLeastSquares(kernel="precomputed", solver="dense", **kw).fit(Ks, y)
    assert rel_diff(fast.coef_, ref.coef_) <= 1e-8
    assert rel_diff(fast.decision_function(Kt), ref.decision_function(Kt)) <= 1e-8


@pytest.mark.parametrize("power", [2, 3])
def test_explicit_laplacian_array_is_raised_to_the_power(three_view_problem_p, power):
    """An explicit (m, n, n) laplacian with laplacian_power = p is used as (laplacian[i])^p (documented)."""
    K, K_test, y = three_view_problem_p
    Ks, Kt = sample_first(K), sample_first(K_test)
    L1 = reference_laplacian_powers(K, True, 4, "binary", 1)
    kw = dict(gamma_A=0.01, gamma_B=0.02, gamma_W=0.05)
    ours = MVLLeastSquares(kernel="precomputed", laplacian=sample_first(L1), laplacian_power=power, **kw).fit(Ks, y)
    Lp = sample_first(np.stack([np.linalg.matrix_power(L, power) for L in L1]))
    ref = MVLLeastSquares(kernel="precomputed", laplacian=Lp, solver="dense", **kw).fit(Ks, y)
    assert rel_diff(ours.coef_, ref.coef_) <= 1e-8
    assert rel_diff(ours.decision_function(Kt), ref.decision_function(Kt)) <= 1e-8
    plain = MVLLeastSquares(kernel="precomputed", laplacian=sample_first(L1), **kw).fit(Ks, y)
    assert rel_diff(plain.coef_, ref.coef_) > 1e-3


# ---------------------------------------------------------------- MVL-SVM and MVL-binSVM: generic QP


@pytest.mark.parametrize("solver", ["smo", "lbfgsb"])
@pytest.mark.parametrize("n_neighbors,weights,power", [(None, "kernel", 2), (5, "kernel", 3), (5, "binary", 2)])
def test_svm_dual_with_iterated_laplacian_matches_generic_qp(svm_problem, solver, n_neighbors, weights, power):
    K, K_test, y = svm_problem
    Ks, Kt = sample_first(K), sample_first(K_test)
    c = np.array([0.9, -0.7])
    gA, gB, gW = 0.01, 0.005, 0.02
    est = MVLSVM(kernel="precomputed", gamma_A=gA, gamma_B=gB, gamma_W=gW, c=c, laplacian="normalized",
                 n_neighbors=n_neighbors, graph_weights=weights, laplacian_power=power, solver=solver,
                 tol=TIGHT).fit(Ks, y)
    Lp = reference_laplacian_powers(K, True, n_neighbors, weights, power)
    ref = dense_theorem6(K, y, K_test, c, gA, gB, gW, Lp, est.code_matrix_)
    assert abs(objective(ref["Q"], est.dual_coef_) - ref["obj"]) <= 1e-6 * abs(ref["obj"])
    assert abs(est.dual_objective_ - ref["obj"]) <= 1e-6 * abs(ref["obj"])
    h = est.decision_function(Kt)
    np.testing.assert_allclose(h, ref["h_test"], atol=1e-4 * np.abs(ref["h_test"]).max())
    _assert_same_predictions(h, ref["h_test"])
    # L^p matters: with L the reference optimum is another one
    ref1 = dense_theorem6(K, y, K_test, c, gA, gB, gW, reference_laplacian_powers(K, True, n_neighbors, weights, 1),
                          est.code_matrix_)
    assert abs(ref1["obj"] - ref["obj"]) > 1e-4 * abs(ref["obj"])


@pytest.mark.parametrize("solver", ["smo", "lbfgsb"])
@pytest.mark.parametrize("n_neighbors,weights,power,normalized", [(None, "kernel", 3, True), (5, "binary", 2, False)])
def test_binary_svm_with_iterated_laplacian_matches_generic_qp(svm_problem, solver, n_neighbors, weights, power,
                                                               normalized):
    """Each one-vs-all problem k is the dual of Theorem 6 with P = 2 (S = [1, -1], code 0 for class k)."""
    K, K_test, y = svm_problem
    Ks, Kt = sample_first(K), sample_first(K_test)
    c = np.array([0.6, 1.1])
    gA, gB, gW = 0.02, 0.01, 0.03
    lap = "normalized" if normalized else "unnormalized"
    est = MVLBinarySVM(kernel="precomputed", gamma_A=gA, gamma_B=gB, gamma_W=gW, c=c, laplacian=lap,
                       n_neighbors=n_neighbors, graph_weights=weights, laplacian_power=power, solver=solver,
                       tol=TIGHT).fit(Ks, y)
    Lp = reference_laplacian_powers(K, normalized, n_neighbors, weights, power)
    scores = est.decision_function(Kt)
    S2 = np.array([[1.0, -1.0]])
    lab = np.flatnonzero(y >= 0)
    h_ref = np.empty_like(scores)
    for k in range(3):
        yk = np.where(y < 0, -1, np.where(y == k, 0, 1))
        ref = dense_theorem6(K, yk, K_test, c, gA, gB, gW, Lp, S2)
        alpha = np.zeros((2, lab.size))  # beta_k back in the (2, l) layout of the reference
        alpha[1 - yk[lab], np.arange(lab.size)] = est.dual_coef_[k]
        assert abs(objective(ref["Q"], alpha) - ref["obj"]) <= 1e-6 * abs(ref["obj"]), k
        assert abs(est.dual_objective_[k] - ref["obj"]) <= 1e-6 * abs(ref["obj"]), k
        h_ref[:, k] = ref["h_test"][:, 0]
    np.testing.assert_allclose(scores, h_ref, atol=1e-4 * np.abs(h_ref).max())
    _assert_same_predictions(scores, h_ref)
    np.testing.assert_array_equal(est.predict(Kt), est.classes_[np.argmax(h_ref, axis=1)])


# ---------------------------------------------------------------- MVL-LS-optC


@pytest.mark.parametrize("with_validation", [False, True])
def test_optc_with_iterated_laplacian_matches_dense_at_learned_c(three_view_problem_p, with_validation):
    K, K_test, y = three_view_problem_p
    Ks, Kt = sample_first(K), sample_first(K_test)
    graph_kw = dict(laplacian="normalized", n_neighbors=5, graph_weights="binary", laplacian_power=2)
    gammas = dict(gamma_A=0.01, gamma_B=0.02, gamma_W=0.05)
    model = MVLLeastSquaresOptC(kernel="precomputed", **gammas, **graph_kw, n_restarts=4, n_iter=6, random_state=3)
    if with_validation:
        y_val = np.random.default_rng(5).integers(0, 3, size=K_test.shape[1])
        model.fit(Ks, y, Kt, y_val)
    else:
        model.fit(Ks, y)
    ref = MVLLeastSquares(kernel="precomputed", c=model.c_, **gammas, **graph_kw, solver="dense").fit(Ks, y)
    assert rel_diff(model.coef_, ref.coef_) <= 1e-8
    assert rel_diff(model.decision_function(Kt), ref.decision_function(Kt)) <= 1e-8
    p1 = MVLLeastSquares(kernel="precomputed", c=model.c_, **gammas, **dict(graph_kw, laplacian_power=1),
                         solver="dense").fit(Ks, y)
    assert rel_diff(p1.coef_, ref.coef_) > 1e-3


# ---------------------------------------------------------------- parameters


@pytest.mark.parametrize("cls", ESTIMATORS)
def test_get_and_set_params_include_graph_model(cls, three_view_problem_p):
    est = cls()
    params = est.get_params()
    # the default graph: a 5-NN graph with kernel weights, L^2 (laplacian_power None: 2 for a kNN graph)
    assert params["laplacian_power"] is None and params["graph_weights"] == "kernel" and params["n_neighbors"] == 5
    assert est.set_params(laplacian_power=2, graph_weights="binary", n_neighbors=4) is est
    params = est.get_params()
    assert params["laplacian_power"] == 2 and params["graph_weights"] == "binary" and params["n_neighbors"] == 4
    clone = cls(**params)
    assert clone.get_params().keys() == params.keys()
    assert all(clone.get_params()[k] is params[k] for k in params)
    # __init__ only stores: a bad value is accepted until fit
    assert cls(laplacian_power=0, graph_weights="foo").laplacian_power == 0


def test_set_params_changes_the_fit(three_view_problem_p):
    K, K_test, y = three_view_problem_p
    Ks, Kt = sample_first(K), sample_first(K_test)
    kw = dict(gamma_A=0.01, gamma_B=0.01, gamma_W=0.05, n_neighbors=5)
    est = MVLLeastSquares(kernel="precomputed", **kw).fit(Ks, y)
    out1 = est.decision_function(Kt)
    out3 = est.set_params(laplacian_power=3, graph_weights="binary").fit(Ks, y).decision_function(Kt)
    ref = MVLLeastSquares(kernel="precomputed", **kw, laplacian_power=3, graph_weights="binary",
                          solver="dense").fit(Ks, y)
    assert rel_diff(out3, ref.decision_function(Kt)) <= 1e-8
    assert rel_diff(out1, out3) > 1e-3


def _fit(cls, K, y, **kw):
    if cls in (MVLSVM, MVLBinarySVM):
        kw.setdefault("tol", 1e-3)
    if cls is MVLLeastSquaresOptC:
        kw.update(n_restarts=2, n_iter=2, random_state=0)
    return cls(kernel="precomputed", **paper_kwargs(0, kw)).fit(sample_first(K), y)


@pytest.mark.parametrize("cls", ESTIMATORS)
@pytest.mark.parametrize("gamma_W", [0.1, 0.0])  # validated even when the Laplacian does not enter
@pytest.mark.parametrize(
    "kw,match",
    [
        # types and ranges: scikit-learn's parameter validation (the estimators' _parameter_constraints)
        ({"laplacian_power": 0}, "'laplacian_power' parameter of .* must be None or an int in the range \\[1, inf\\)"),
        ({"laplacian_power": 1.5}, "'laplacian_power' parameter of .* must be None or an int in the range"),
        ({"laplacian_power": 2.0}, "'laplacian_power' parameter of .* must be None or an int in the range"),
        ({"laplacian_power": True}, "'laplacian_power' parameter of .* must be None or an int in .* Got True"),
        ({"graph_weights": "foo"}, "'graph_weights' parameter of .* must be a str among"),
        ({"graph_weights": "binary", "n_neighbors": None}, "graph_weights='binary' needs a kNN graph: set n_neighbors"),
        ({"n_neighbors": 2.5}, "'n_neighbors' parameter of .* must be None, an int in the range \\[1, inf\\) or a str "
                               "among {'auto'}"),
        ({"n_neighbors": 0}, "'n_neighbors' parameter of .* must be None, an int in the range"),
        ({"laplacian": "explicit", "graph_weights": "binary", "n_neighbors": None},
         "graph_weights .* explicit laplacian"),
    ],
)
@signal_free
def test_bad_graph_parameters(cls, three_view_problem_p, gamma_W, kw, match):
    K, _, y = three_view_problem_p
    kw = dict(kw)
    if kw.get("laplacian") == "explicit":
        kw["laplacian"] = sample_first(reference_laplacian_powers(K, True, None, "kernel", 1))
    with pytest.raises(ValueError, match=match):
        _fit(cls, K, y, gamma_A=0.01, gamma_W=gamma_W, **kw)


@pytest.mark.parametrize("cls", ESTIMATORS)
@signal_free
def test_numpy_integer_parameters_are_accepted(cls, three_view_problem_p):
    K, K_test, y = three_view_problem_p
    kw = dict(gamma_A=0.01, gamma_W=0.05, graph_weights="binary")
    a = _fit(cls, K, y, laplacian_power=np.int64(2), n_neighbors=np.int32(4), **kw)
    b = _fit(cls, K, y, laplacian_power=2, n_neighbors=4, **kw)
    np.testing.assert_array_equal(a.coef_, b.coef_)
