"""The multi-view manifold generator (mvl.data.synthetic)."""

from __future__ import annotations

import numpy as np
import pytest

from mvl.data.synthetic import make_multiview_manifold


def test_generator_is_seeded_balanced_and_its_maps_do_not_depend_on_n():
    a = make_multiview_manifold(101, n_classes=4, n_views=2, n_features=5, random_state=7)
    b = make_multiview_manifold(101, n_classes=4, n_views=2, n_features=5, random_state=7)
    assert a.X.shape == (101, 10) and a.view_sizes == [5, 5] and a.latent.shape == (101, 3)
    np.testing.assert_array_equal(a.X, b.X)
    assert np.bincount(a.y).tolist() == [26, 25, 25, 25]
    # the same latent point maps to the same noiseless features at any n (the view maps are drawn first)
    c = make_multiview_manifold(50, n_classes=4, n_views=2, n_features=5, noise=0.0, random_state=7)
    a0 = make_multiview_manifold(101, n_classes=4, n_views=2, n_features=5, noise=0.0, random_state=7)
    rng = np.random.default_rng(7)
    W1, b1, W2 = rng.standard_normal((3, 10)), rng.standard_normal(10), rng.standard_normal((10, 5)) / np.sqrt(10)
    for data in (c, a0):
        np.testing.assert_allclose(data.views[0], np.tanh(np.tanh(data.latent @ W1 + b1) @ W2), atol=1e-12)
    with pytest.raises(ValueError):
        make_multiview_manifold(1, n_classes=2)


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
