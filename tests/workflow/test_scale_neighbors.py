"""The scale study's neighbour rule (mvl.workflow.scale.graph_neighbors) is the estimators' n_neighbors="auto"."""

from __future__ import annotations

import pytest

from mvl.graph import auto_neighbors
from mvl.workflow.scale import graph_neighbors


@pytest.mark.parametrize("n", [2, 500, 2000, 2200, 8000, 32000, 100000, 10**6])
def test_scaled_neighbours_follow_the_auto_rule(n):
    assert graph_neighbors(n, "scaled") == auto_neighbors(n)
