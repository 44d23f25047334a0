"""Seeded multi-view manifold data (mvl.data.synthetic)."""

from __future__ import annotations

import numpy as np
import pytest

from mvl.data.synthetic import make_multiview_manifold


def test_the_data_are_balanced_seeded_and_shaped_as_asked():
    a = make_multiview_manifold(103, n_classes=4, n_views=3, n_features=5, random_state=2)
    b = make_multiview_manifold(103, n_classes=4, n_views=3, n_features=5, random_state=2)
    c = make_multiview_manifold(103, n_classes=4, n_views=3, n_features=5, random_state=3)
    assert a.view_sizes == [5, 5, 5] and a.X.shape == (103, 15) and a.latent.shape == (103, 3)
    assert np.bincount(a.y).tolist() == [26, 26, 26, 25]
    assert np.array_equal(a.X, b.X) and not np.array_equal(a.X, c.X)


def test_too_few_samples_or_classes_are_refused():
    with pytest.raises(ValueError, match="need n_samples >= n_classes >= 2"):
        make_multiview_manifold(3, n_classes=4)
