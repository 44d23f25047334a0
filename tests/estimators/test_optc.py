"""MVL-LS-optC (Section 6) against independent references."""

import numpy as np
import pytest
from conftest import gamma_kw, make_problem, paper_model, sample_first, signal_free

import mvl
from mvl.graph import between_view_penalty, view_laplacians
from mvl.labels import encode_targets
from mvl.solvers.optc import OptCSystem

# the paper's model unless a test says otherwise (conftest.PAPER_MODEL)
MVLLeastSquares = paper_model(mvl.MVLLeastSquares)
MVLLeastSquaresOptC = paper_model(mvl.MVLLeastSquaresOptC)


def _objective_84(K, y, L, coef, c, gA, gB, gW):
    """Objective (84) evaluated directly from the coefficients (eq 10 with eq 53, 58, 64)."""
    lab = np.flatnonzero(y >= 0)
    classes = np.unique(y[lab])
    Y = encode_targets(np.searchsorted(classes, y[lab]), len(classes))
    F = np.einsum("pij,pjk->pik", K, coef)  # f^p on all training points
    data = np.sum((Y - np.einsum("p,pik->ik", c, F[:, lab])) ** 2) / len(lab)
    rkhs = sum(np.sum(coef[p] * (K[p] @ coef[p])) for p in range(len(K)))
    within = sum(np.sum(F[p] * (L[p] @ F[p])) for p in range(len(K)))
    return data + gA * rkhs + gB * between_view_penalty(F) + gW * within


@pytest.mark.parametrize("gammas", [(1e-2, 3e-2, 2e-2), (1e-2, 0.0, 2e-2), (5e-3, 1e-2, 0.0), (1e-2, 0.0, 0.0)])
@pytest.mark.parametrize("m", [1, 3])
@signal_free
def test_system_matches_dense_solver_for_any_c(gammas, m):
    K, _, y = make_problem(m, 30, 3, frac_unlabelled=0.4, seed=11)
    L = view_laplacians(K)
    lab = np.flatnonzero(y >= 0)
    Y = encode_targets(y[lab], 3)
    system = OptCSystem(K, lab, Y, *gammas, L)
    rng = np.random.default_rng(0)
    C = rng.standard_normal((4, m))
    E, F = system.solve(C)
    for r, c in enumerate(C):
        ref = MVLLeastSquares(**gamma_kw(gammas), c=c, solver="dense", laplacian=sample_first(L),
                              kernel="precomputed").fit(sample_first(K), y)
        F_ref = np.einsum("pij,pjk->pik", K, ref.coef_)[:, lab]
        assert np.max(np.abs(F[:, :, r] - F_ref)) <= 1e-8 * np.max(np.abs(F_ref))
        S_ref = np.einsum("p,pik->ik", c, F_ref)
        assert np.max(np.abs(E[r] - (Y - S_ref))) <= 1e-8 * max(1.0, np.max(np.abs(S_ref)))
        A = system.coefficients(c, E[r])
        assert np.max(np.abs(A - ref.coef_)) <= 1e-8 * np.max(np.abs(ref.coef_))


@pytest.fixture(scope="module")
def fitted():
    K, K_test, y = make_problem(4, 40, 3, frac_unlabelled=0.3, seed=3)
    rng = np.random.default_rng(1)
    K_val, y_val = K_test, rng.integers(0, 3, K_test.shape[1])
    gammas = (1e-2, 2e-2, 1e-2)
    model = MVLLeastSquaresOptC(**gamma_kw(gammas), alpha=1.3, n_restarts=6, n_iter=15, tol=0.0, random_state=0,
                                kernel="precomputed")
    model.fit(sample_first(K), y, sample_first(K_val), y_val)
    return model, K, y, K_val, y_val, gammas


def test_objective_never_increases(fitted):
    model = fitted[0]
    h = model.objective_history_
    assert h.shape == (6, 15) and np.all(np.isfinite(h))
    steps = np.diff(h, axis=1)
    assert np.all(steps <= 1e-12 * np.abs(h[:, :-1])), steps.max()
    assert np.all(model.final_objectives_ <= h[:, -1] * (1 + 1e-12))
    assert np.any(h[:, 0] - h[:, -1] > 1e-6 * np.abs(h[:, 0]))  # the alternation does something


def test_final_objective_and_coefficients_independently(fitted):
    model, K, y, _, _, gammas = fitted
    c = model.c_
    assert np.linalg.norm(c) == pytest.approx(1.3, rel=1e-12)
    ref = MVLLeastSquares(**gamma_kw(gammas), c=c, solver="dense", kernel="precomputed").fit(sample_first(K), y)
    assert np.max(np.abs(model.coef_ - ref.coef_)) <= 1e-8 * np.max(np.abs(ref.coef_))
    L = view_laplacians(K)
    direct = _objective_84(K, y, L, ref.coef_, c, *gammas)
    assert model.final_objectives_[model.best_restart_] == pytest.approx(direct, rel=1e-9)


def test_validation_selects_best_restart(fitted):
    model, K, y, K_val, y_val, gammas = fitted
    scores = [MVLLeastSquares(**gamma_kw(gammas), c=c, solver="dense", kernel="precomputed").fit(sample_first(K), y)
              .score(sample_first(K_val), y_val) for c in model.restart_c_]
    np.testing.assert_allclose(model.validation_scores_, scores)
    assert scores[model.best_restart_] == max(scores)


def test_c_step_is_optimal_for_fixed_f(fitted):
    """After the last c-step, no point of the sphere fits the fixed per-view outputs better (eq 85)."""
    model, K, y, *_ , gammas = fitted
    lab = np.flatnonzero(y >= 0)
    Y = encode_targets(y[lab], 3)
    system = OptCSystem(K, lab, Y, *gammas, view_laplacians(K))
    c_prev = model.restart_c_[0]
    _, F = system.solve(c_prev[None])
    A = F[:, :, 0].reshape(4, -1).T
    from mvl.solvers.sphere import sphere_least_squares

    c_new = sphere_least_squares(A, Y.ravel(), 1.3)
    rng = np.random.default_rng(5)
    pts = rng.standard_normal((20000, 4))
    pts *= 1.3 / np.linalg.norm(pts, axis=1, keepdims=True)
    best_sampled = np.min(np.sum((Y.ravel()[None] - pts @ A.T) ** 2, axis=1))
    assert np.sum((Y.ravel() - A @ c_new) ** 2) <= best_sampled + 1e-9


def test_reproducible_and_no_validation():
    K, K_test, y = make_problem(3, 25, 3, frac_unlabelled=0.2, seed=8)
    a = MVLLeastSquaresOptC(gamma_A=1e-2, gamma_B=1e-2, gamma_W=1e-2, n_restarts=4, n_iter=5, random_state=7,
                            kernel="precomputed").fit(sample_first(K), y)
    b = MVLLeastSquaresOptC(gamma_A=1e-2, gamma_B=1e-2, gamma_W=1e-2, n_restarts=4, n_iter=5, random_state=7,
                            kernel="precomputed").fit(sample_first(K), y)
    np.testing.assert_array_equal(a.c_, b.c_)
    assert a.validation_scores_ is None
    assert a.best_restart_ == int(np.argmin(a.final_objectives_))
    Xt = sample_first(K_test)
    assert a.decision_function(Xt).shape == (K_test.shape[1], 3) and a.predict(Xt).shape == (K_test.shape[1],)


@signal_free
def test_bad_input():
    from sklearn.exceptions import NotFittedError

    K, K_test, y = make_problem(2, 20, 3, frac_unlabelled=0.2, seed=2)
    X, Xt = sample_first(K), sample_first(K_test)
    with pytest.raises(ValueError, match="alpha"):
        MVLLeastSquaresOptC(gamma_A=1e-2, alpha=0.0, kernel="precomputed").fit(X, y)
    with pytest.raises(ValueError, match="n_restarts"):
        MVLLeastSquaresOptC(gamma_A=1e-2, n_restarts=0, kernel="precomputed").fit(X, y)
    with pytest.raises(ValueError, match="both X_val and y_val"):
        MVLLeastSquaresOptC(gamma_A=1e-2, kernel="precomputed").fit(X, y, X_val=Xt)
    with pytest.raises(ValueError, match=r"X_val must have shape \(n_samples, n_samples_fit, n_views\)"):
        MVLLeastSquaresOptC(gamma_A=1e-2, kernel="precomputed").fit(X, y, X_val=Xt[..., :1],
                                                             y_val=np.zeros(K_test.shape[1], int))
    with pytest.raises(NotFittedError, match="not fitted"):
        MVLLeastSquaresOptC(gamma_A=1e-2, kernel="precomputed").predict(Xt)


@pytest.mark.parametrize("m, n, P, frac_unlabelled, gammas", [(4, 40, 3, 0.3, (1e-2, 2e-2, 1e-2)),
                                                             (5, 8, 2, 0.75, (1e-3, 1e-4, 0.0))])  # l P < m + 1
@signal_free
def test_estimator_c_step_against_dense_fit_and_sampling(m, n, P, frac_unlabelled, gammas):
    """One iteration from the seeded start: the estimator's c equals the sphere minimiser of eq (85) for the
    per-view outputs of an independent dense fit at the start, and no sampled sphere point does better."""
    from mvl.solvers.sphere import sphere_least_squares

    K, _, y = make_problem(m, n, P, frac_unlabelled=frac_unlabelled, seed=4)
    model = MVLLeastSquaresOptC(**gamma_kw(gammas), alpha=0.8, n_restarts=1, n_iter=1, tol=0.0, random_state=3,
                                kernel="precomputed").fit(sample_first(K), y)
    c0 = np.random.default_rng(3).standard_normal((1, m))[0]
    c0 *= 0.8 / np.linalg.norm(c0)
    lab = np.flatnonzero(y >= 0)
    classes = np.unique(y[lab])
    Y = encode_targets(np.searchsorted(classes, y[lab]), len(classes))
    ref = MVLLeastSquares(**gamma_kw(gammas), c=c0, solver="dense", kernel="precomputed").fit(sample_first(K), y)
    A = np.einsum("pij,pjk->pik", K, ref.coef_)[:, lab].reshape(m, -1).T  # columns vec f^p on the labelled points
    b = Y.ravel()
    c_ref, c = sphere_least_squares(A, b, 0.8), model.restart_c_[0]
    assert np.linalg.norm(c) == pytest.approx(0.8, rel=1e-12)
    assert np.sum((b - A @ c) ** 2) == pytest.approx(np.sum((b - A @ c_ref) ** 2), rel=1e-9, abs=1e-12)
    if np.linalg.matrix_rank(A) == m:  # unique minimiser (Theorem 15); else a set of them (Theorem 16)
        np.testing.assert_allclose(c, c_ref, atol=1e-7)
    pts = np.random.default_rng(5).standard_normal((20000, m))
    pts *= 0.8 / np.linalg.norm(pts, axis=1, keepdims=True)
    best_sampled = np.min(np.sum((b[None] - pts @ A.T) ** 2, axis=1))
    assert np.sum((b - A @ c) ** 2) <= best_sampled + 1e-9


@pytest.mark.parametrize("gammas", [(1e-2, 3e-2, 2e-2), (1e-2, 0.0, 2e-2)])
def test_threaded_f_step_matches_serial_batched_and_fallback_paths(gammas, monkeypatch):
    """The f-step gives the same E, F and coefficients whatever the threads, batches or LAPACK path,
    including restarts whose Cholesky fails (solved again by LU)."""
    from mvl import parallel as blocks

    K, _, y = make_problem(3, 36, 3, frac_unlabelled=0.4, seed=21)
    lab = np.flatnonzero(y >= 0)
    assert np.any(np.diff(lab) > 1)  # labelled points interleaved: the point reordering is exercised
    Y = encode_targets(y[lab], 3)
    L = view_laplacians(K)
    C = np.random.default_rng(4).standard_normal((7, 3))

    def run(threads, batch=None, f2py=False, fail=()):
        system = OptCSystem(K, lab, Y, *gammas, L)
        system._threads = threads
        if batch:
            system.batch = batch
        with monkeypatch.context() as mp:
            if f2py:
                mp.setitem(blocks._state, "funcs", {})
            if fail:
                calls = {"n": 0}
                real = blocks.cholesky_solve

                def flaky(a, b):  # restarts listed in `fail` report "not positive definite"
                    calls["n"] += 1
                    return 1 if calls["n"] - 1 in fail else real(a, b)

                mp.setattr(blocks, "cholesky_solve", flaky)
            E, F = system.solve(C)
            A = system.coefficients_batch(C, E)
            if fail:
                assert calls["n"] == len(C)  # one Cholesky per restart; the failed ones went to LU
        return np.array(E), np.array(F), A

    ref = run(threads=0)
    # an independent check of the reference: the dense Theorem-10 solver for every c
    for r, c in enumerate(C):
        dense = MVLLeastSquares(**gamma_kw(gammas), c=c, solver="dense", laplacian=sample_first(L),
                                kernel="precomputed").fit(sample_first(K), y)
        assert np.max(np.abs(ref[2][:, :, r] - dense.coef_)) <= 1e-8 * np.max(np.abs(dense.coef_))
    for kwargs in [dict(threads=2), dict(threads=3, batch=3), dict(threads=2, f2py=True),
                   dict(threads=1, batch=2), dict(threads=0, fail=(1, 5))]:
        for got, want in zip(run(**kwargs), ref, strict=True):
            assert np.max(np.abs(got - want)) <= 1e-11 * np.max(np.abs(want)), kwargs
