"""Presence masks and the per-sample combination of incomplete views (mvl.missing_views)."""

from __future__ import annotations

import numpy as np
import pytest

from mvl.missing_views import combination_weights, feature_presence


def test_a_row_of_nan_across_a_view_marks_it_missing():
    a = np.ones((3, 2))
    b = np.ones((3, 1))
    a[1] = np.nan
    np.testing.assert_array_equal(feature_presence([a, b]), [[True, True], [False, True], [True, True]])
    a[2, 0] = np.nan  # partial NaN is not a missing view
    with pytest.raises(ValueError, match="partial NaN"):
        feature_presence([a, b])


def test_the_default_combination_is_the_mean_of_the_present_views():
    mask = np.array([[True, True, True], [True, True, False], [False, False, True]])
    Ct = combination_weights(np.full(3, 1 / 3), mask)
    np.testing.assert_allclose(Ct, [[1 / 3, 1 / 3, 1 / 3], [0.5, 0.5, 0.0], [0.0, 0.0, 1.0]])
