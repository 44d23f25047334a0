"""solver="auto" (mvl.solvers.auto): the choice by size, memory budget, kernel input and the measured regime."""

from __future__ import annotations

import numpy as np
import pytest

from mvl.solvers.auto import GRAPH_REGIME, choose_solver, regime_ratio


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
