"""Tiled kernel products of ViewKernels (mvl.kernel_blocks) against dense kernels from scipy's cdist."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import gauss_gram

from mvl.kernel_blocks import ViewKernels
from mvl.kernels import chi2_distances


@pytest.mark.parametrize("kind", ["rbf", "chi2", "linear"])
def test_tiled_kernel_products_equal_dense_kernels(kind):
    rng = np.random.default_rng(0)
    views = [rng.random((157, 5)), rng.random((157, 3))]  # 157: tiles of 64 leave a ragged last tile
    scales = [0.8, 1.3] if kind != "linear" else None
    if kind == "rbf":
        K = [gauss_gram(V, V, s) for V, s in zip(views, scales, strict=False)]
    elif kind == "chi2":
        K = [np.exp(-chi2_distances(V) / s) for V, s in zip(views, scales, strict=False)]
    else:
        K = [V @ V.T for V in views]
    Z = rng.standard_normal((2, 157, 4))
    expect = np.stack([k @ z for k, z in zip(K, Z, strict=False)])
    tiled = ViewKernels(views, kind, scales, max_memory=0, block=64, threads=2)
    stored = ViewKernels(views, kind, scales, max_memory=1e9)
    assert kind == "linear" or (tiled.gram is None and stored.gram is not None)
    np.testing.assert_allclose(tiled.matmul(Z), expect, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(stored.matmul(Z), expect, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tiled.columns(1, [3, 7]), K[1][:, [3, 7]], rtol=1e-12, atol=1e-13)
