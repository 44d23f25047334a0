"""solver="auto" (mvl.solvers.auto): the choice by size, memory budget, kernel input and the measured regime."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from mvl.solvers.auto import (GRAPH_REGIME, GraphRegimeFallbackWarning, choose_solver, regime_ratio,
                              vecchia_direct_bytes, vecchia_direct_nodes)


def test_auto_picks_by_size_memory_and_kernel():
    assert choose_solver("auto", "precomputed", 10**5, 3, 10, 1e12) == "structured"
    assert choose_solver("auto", "rbf", 2000, 3, 100, 1e10) == "structured"
    assert choose_solver("auto", "rbf", 2000, 3, 100, 1e6) == "cg"  # the structured solve would not fit
    assert choose_solver("auto", "rbf", 10_000, 3, 100, 1e12) == "cg"
    assert choose_solver("auto", "rbf", 100_000, 3, 100, 1e12) == "nystrom"
    assert choose_solver("cg", "rbf", 10, 3, 5, 1) == "cg"


def test_the_regime_is_measured_only_when_the_choice_depends_on_it():
    def never():
        raise AssertionError("measured although the choice does not depend on it")

    assert choose_solver("auto", "rbf", 2000, 3, 30, 1e12, regime=never) == "structured"
    assert choose_solver("auto", "precomputed", 100_000, 3, 30, 1e12, regime=never) == "structured"
    assert choose_solver("auto", "rbf", 10_000, 3, 30, 1e12, regime=lambda: GRAPH_REGIME) == "vecchia_direct"
    assert choose_solver("auto", "rbf", 10_000, 3, 30, 1e12, regime=lambda: 0.5 * GRAPH_REGIME) == "cg"
    # beyond AUTO_CG_MAX too: the graph regime takes the sparse solver, not the Nystrom restriction
    assert choose_solver("auto", "rbf", 100_000, 3, 30, 1e12, regime=lambda: GRAPH_REGIME) == "vecchia_direct"
    assert choose_solver("auto", "rbf", 100_000, 3, 30, 1e12, regime=lambda: 0.5 * GRAPH_REGIME) == "nystrom"
    assert choose_solver("auto", "rbf", 100_000, 3, 30, 1e12, regime=lambda: None) == "nystrom"


@pytest.mark.parametrize("m,expected", [(1, 0.01 * 4 / 1e-4), (3, (1e-3 * 3 + 0.01 * 4) / 1e-4)])
def test_regime_ratio_bounds_the_graph_terms_by_the_parameters(m, expected):
    assert regime_ratio(1e-4, 1e-3, 0.01, 2, m) == pytest.approx(expected)
    assert np.isfinite(regime_ratio(1e-4, 0.0, 0.0, 1, m))


def test_the_graph_regime_falls_back_with_a_warning_only_when_not_even_the_labelled_points_fit():
    # graph6's setting at 100,000 points (10-NN, L^2): ~6 GB estimated, 6.5 GB peak measured
    assert 3e9 < vecchia_direct_bytes(100_000, 3, 10, 2) < 8e9
    assert choose_solver("auto", "rbf", 100_000, 3, 30, 1e10, regime=lambda: 5e5, graph=(10, 2)) == "vecchia_direct"
    # the factor's fill grows faster than n: at 10^6 points far beyond the budget, "vecchia_direct" on the nodes
    # that fit (mvl.solvers.vecchia_nodes), without a fallback
    assert vecchia_direct_bytes(1_000_000, 3, 10, 2) > 1e11
    assert 30 < vecchia_direct_nodes(1_000_000, 3, 10, 2, 1e10) < 1_000_000
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert choose_solver("auto", "rbf", 1_000_000, 3, 30, 1e10, regime=lambda: 5e5, graph=(10, 2)) == \
            "vecchia_direct"
        assert choose_solver("auto", "rbf", 100_000, 3, 30, 1e10, regime=lambda: 5e5, graph=(500, 2)) == \
            "vecchia_direct"
    # not even the 30 labelled points fit
    assert vecchia_direct_nodes(100_000, 3, 500, 2, 1e4) <= 30
    with pytest.warns(GraphRegimeFallbackWarning, match=r"measured 5e\+05.*30 labelled.*falling back to \"nystrom\""):
        assert choose_solver("auto", "rbf", 100_000, 3, 30, 1e4, regime=lambda: 5e5, graph=(500, 2)) == "nystrom"
    with pytest.warns(GraphRegimeFallbackWarning, match="falling back to \"cg\""):
        assert choose_solver("auto", "rbf", 10_000, 3, 30, 1e4, regime=lambda: 5e5, graph=(100, 2)) == "cg"


def test_copies_pass_vecchia_direct_over_for_the_next_ranked_solver():
    """A solver declaring copies = False ("vecchia_direct", which refuses equal rows) is passed over when the
    regime has copies: the next by rank that accepts the regime ("cg", "nystrom" beyond AUTO_CG_MAX), with the
    fallback warning in the graph regime; the copies are computed only when such a solver is reached."""
    from mvl.solvers import Plan, plan
    from mvl.solvers.auto import AUTO_CG_MAX, Regime
    from mvl.solvers.registry import SOLVERS

    assert [name for name, s in SOLVERS.items() if not s.copies] == ["vecchia_direct"]

    def never():
        raise AssertionError("copies computed although no solver refusing them was reached")

    assert plan("auto", Regime("rbf", 2000, 3, 30, 1e12, measured=5e5, copies=never)) == Plan("squared", "structured")
    assert plan("auto", Regime("rbf", 10_000, 3, 30, 1e12, measured=5e5, graph=(10, 2), copies=False)) == \
        Plan("squared", "vecchia_direct")
    for n, fallback in ((10_000, "cg"), (AUTO_CG_MAX + 1, "nystrom")):
        with pytest.warns(GraphRegimeFallbackWarning, match=rf'exact copies.*falling back to "{fallback}"'):
            got = plan("auto", Regime("rbf", n, 3, 30, 1e12, measured=5e5, graph=(10, 2), copies=lambda: True))
        assert got == Plan("squared", fallback)
        assert choose_solver("auto", "rbf", n, 3, 30, 1e12, regime=5e5, graph=(10, 2), copies=True) == fallback
    with warnings.catch_warnings():  # outside the graph regime nothing is lost: no warning
        warnings.simplefilter("error", GraphRegimeFallbackWarning)
        assert plan("auto", Regime("rbf", 10_000, 3, 30, 1e12, measured=0.5, graph=(10, 2), copies=True)) == \
            Plan("squared", "cg")
    # the few-label terms' solver takes copies
    assert plan("auto", Regime("rbf", 10_000, 3, 30, 1e12, copies=True), "auto", "squared+poisson") == \
        Plan("squared+poisson", "vecchia")
