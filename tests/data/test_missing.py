"""Missing-view patterns (mvl.data.missing): every pattern keeps a view per sample, and masks become NaN rows."""

from __future__ import annotations

import numpy as np
import pytest

from mvl.data.missing import apply_mask, apply_mask_kernels, mask_at_random, mask_class_views, mask_sample_blocks


def test_missing_at_random_drops_the_requested_fraction_and_keeps_a_view_per_sample():
    mask = mask_at_random(200, 4, 0.5, rng=0)
    assert mask.shape == (200, 4) and (~mask).sum() == 400 and mask.any(axis=1).all()
    assert np.array_equal(mask, mask_at_random(200, 4, 0.5, rng=0))
    with pytest.raises(ValueError, match="every sample keeps a view"):
        mask_at_random(10, 4, 0.8)


def test_class_and_block_patterns_remove_whole_views_for_a_class_or_a_block():
    y = np.repeat([3, 7, 9], 4)
    mask = mask_class_views(y, 3, views_per_class=1)
    assert [tuple(np.flatnonzero(~mask[y == c][0])) for c in (3, 7, 9)] == [(0,), (1,), (2,)]
    blocks = mask_sample_blocks(12, 3, n_blocks=3, views_per_block=2, rng=1)
    assert (blocks.sum(axis=1) == 1).all() and len({tuple(r) for r in blocks}) <= 3


def test_masks_become_nan_rows_of_views_and_of_kernels():
    views = [np.ones((3, 2)), np.ones((3, 1))]
    mask = np.array([[True, False], [False, True], [True, True]])
    a, b = apply_mask(views, mask)
    assert np.isnan(a[1]).all() and np.isnan(b[0]).all() and not np.isnan(a[0]).any()
    X = apply_mask(np.ones((3, 3)), mask, views=[2, 1])
    assert np.isnan(X[1, :2]).all() and np.isnan(X[0, 2]) and not np.isnan(X[2]).any()
    K = apply_mask_kernels(np.ones((3, 3, 2)), mask)
    assert np.isnan(K[1, :, 0]).all() and np.isnan(K[:, 1, 0]).all() and not np.isnan(K[0, 0, 0])
