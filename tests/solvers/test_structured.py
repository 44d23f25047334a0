"""The structured solver (mvl.solvers.structured, Algorithm 1) against the dense (u+l)m system of eq (67)-(68)
(solver="dense", which shares no code with it), through the estimator and directly."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import (
    signal_free,
    fit_precomputed as _fit,
    precomputed_ls as _ls,
    random_c as _random_c,
    make_problem,
    objective_minimiser_values,
    paper_model,
    pm_one_targets,
    random_graph_laplacians,
    rel_diff,
    sample_first,
    solver_values,
)
from hypothesis import given, settings
from hypothesis import strategies as st

import mvl
from mvl.solvers.structured import solve_structured

MVLLeastSquares = paper_model(mvl.MVLLeastSquares)  # the paper's model unless a test says otherwise

MP_GRID = [(m, P) for m in (1, 2, 3, 5) for P in (2, 3, 5)]


@pytest.mark.parametrize("m,P", MP_GRID)
@signal_free
def test_structured_matches_dense(m, P):
    seed = 100 * m + P
    rng = np.random.default_rng(seed)
    n = 14 + 2 * P
    K, K_test, y = make_problem(m, n, P, frac_unlabelled=0.35, seed=seed)
    # unlabelled samples really are interleaved with labelled ones
    unl, lab = np.flatnonzero(y < 0), np.flatnonzero(y >= 0)
    assert unl.size > 0 and unl.min() < lab.max() and lab.min() < unl.max()
    kw = dict(
        gamma_A=float(10 ** rng.uniform(-3, -0.5)),
        gamma_B=float(10 ** rng.uniform(-3, -1)),
        gamma_W=float(10 ** rng.uniform(-3, -1)),
        c=_random_c(m, rng),
        laplacian="normalized",
    )
    dense = _fit(K, y, "dense", **kw)
    Kt = sample_first(K_test)
    for solver in ("structured", "auto"):
        fast = _fit(K, y, solver, **kw)
        assert fast.coef_.shape == (m, n, P)
        assert rel_diff(fast.coef_, dense.coef_) <= 1e-8, solver
        assert fast.decision_function(Kt).shape == ((K_test.shape[1],) if P == 2 else (K_test.shape[1], P))
        assert rel_diff(fast.decision_function(Kt), dense.decision_function(Kt)) <= 1e-8
        assert rel_diff(fast.view_decision_function(Kt), dense.view_decision_function(Kt)) <= 1e-8


@pytest.mark.parametrize(
    "laplacian,n_neighbors",
    [("unnormalized", None), ("normalized", 4), ("unnormalized", 3), ("explicit", None)],
)
def test_structured_matches_dense_other_laplacians(laplacian, n_neighbors):
    m, n, P = 3, 18, 3
    K, K_test, y = make_problem(m, n, P, frac_unlabelled=0.4, seed=7)
    if laplacian == "explicit":
        laplacian = random_graph_laplacians(m, n, seed=8)
    kw = dict(gamma_A=0.05, gamma_B=0.02, gamma_W=0.03, c=[0.5, -1.0, 0.8],
              laplacian=laplacian, n_neighbors=n_neighbors)
    dense = _fit(K, y, "dense", **kw)
    fast = _fit(K, y, "structured", **kw)
    assert rel_diff(fast.coef_, dense.coef_) <= 1e-8
    Kt = sample_first(K_test)
    assert rel_diff(fast.decision_function(Kt), dense.decision_function(Kt)) <= 1e-8


@settings(max_examples=25, deadline=None)
@given(
    m=st.integers(1, 4),
    P=st.integers(2, 4),
    n_extra=st.integers(0, 8),
    frac=st.sampled_from([0.0, 0.2, 0.5]),
    log_gA=st.floats(-3, 0),
    gB=st.sampled_from([0.0, 1e-3, 0.1]),
    gW=st.sampled_from([0.0, 1e-3, 0.1]),
    seed=st.integers(0, 2**31 - 1),
)
@signal_free
def test_property_structured_equals_dense(m, P, n_extra, frac, log_gA, gB, gW, seed):
    n = 2 * P + 2 + n_extra
    K, K_test, y = make_problem(m, n, P, frac_unlabelled=frac, seed=seed)
    rng = np.random.default_rng(seed)
    kw = dict(gamma_A=10**log_gA, gamma_B=gB, gamma_W=gW, c=rng.normal(size=m))
    dense = _fit(K, y, "dense", **kw)
    fast = _fit(K, y, "structured", **kw)
    np.testing.assert_allclose(fast.coef_, dense.coef_, rtol=1e-7, atol=1e-7 * np.max(np.abs(dense.coef_)))
    ref = dense.decision_function(sample_first(K_test))
    np.testing.assert_allclose(fast.decision_function(sample_first(K_test)), ref, rtol=1e-7,
                               atol=1e-7 * np.max(np.abs(ref)))


@pytest.mark.parametrize("weights", ["unlabelled", "random", "zeros"])
@pytest.mark.parametrize("gamma_W", [0.0, 2e-2])
@signal_free
def test_between_weights_structured_equals_dense(weights, gamma_W):
    """M_B = diag(w) (x) M_m (co-regularization on a subset of points): structured == dense textbook solve,
    and the dense solve with w = 1 is the default operator."""
    K, _, y = make_problem(3, 30, 3, frac_unlabelled=0.4, seed=5)
    n = K.shape[1]
    w = {"unlabelled": (y < 0).astype(float), "random": np.random.default_rng(1).uniform(0, 2, n),
         "zeros": np.zeros(n)}[weights]
    gammas = (1e-2, 3e-2, gamma_W)
    c = np.array([0.5, -0.3, 0.8])
    Ks = sample_first(K)
    a = _ls(*gammas, c=c, between_weights=w).fit(Ks, y)
    b = _ls(*gammas, c=c, between_weights=w, solver="dense").fit(Ks, y)
    assert np.max(np.abs(a.coef_ - b.coef_)) <= 1e-9 * np.max(np.abs(b.coef_))
    ones = _ls(*gammas, c=c, between_weights=np.ones(n), solver="dense").fit(Ks, y)
    default = _ls(*gammas, c=c).fit(Ks, y)
    assert np.max(np.abs(ones.coef_ - default.coef_)) <= 1e-9 * np.max(np.abs(default.coef_))
    if weights == "zeros":  # no between-view term at all
        no_b = _ls(gammas[0], 0.0, gamma_W, c=c).fit(Ks, y)
        assert np.max(np.abs(a.coef_ - no_b.coef_)) <= 1e-9 * np.max(np.abs(no_b.coef_))
    with pytest.raises(ValueError, match="between_weights"):
        _ls(*gammas, between_weights=-w - 1).fit(Ks, y)


@pytest.mark.parametrize("m,P", [(1, 2), (2, 3), (4, 2)])
@pytest.mark.parametrize("gamma_B,gamma_W,weights", [(0.0, 0.0, None), (0.1, 0.05, None), (0.1, 0.05, "random")])
def test_structured_solve_minimises_the_regularised_least_squares_objective(m, P, gamma_B, gamma_W, weights):
    """solve_structured called directly: its function values equal those of the objective's minimiser by a stacked
    least-squares solve (no eq (68), no package solver)."""
    n = 13
    K, _, y = make_problem(m, n, P, frac_unlabelled=0.4, seed=40 + m)
    L = random_graph_laplacians(m, n, seed=41)
    lab, Y = pm_one_targets(y, P)
    c = np.random.default_rng(42).normal(size=m)
    w = None if weights is None else np.random.default_rng(43).uniform(0, 2, n)
    info = {}
    coef = solve_structured(K, lab, Y, c, 0.05, gamma_B, gamma_W, L, info=info, between_weights=w)
    ref = objective_minimiser_values(K, lab, Y, c, 0.05, gamma_B, gamma_W, L, between_weights=w)
    assert coef.shape == (m, n, P)
    np.testing.assert_allclose(solver_values(K, coef), ref, rtol=1e-7, atol=1e-8 * np.abs(ref).max())
    assert 0.0 < info["rcond"] <= 1.0
