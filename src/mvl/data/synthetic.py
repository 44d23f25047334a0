"""Seeded multi-view manifold data for semi-supervised learning at any size (implements no section of the paper).

:func:`make_multiview_manifold` puts each class on its own curve (the arms of a planar spiral, lifted into
3-D with a class-independent twist), so that classes are intertwined in the ambient space but separated
along the manifold: a classifier that sees only the few labelled points confuses neighbouring arms, one
that follows the data graph through the unlabelled points does not. Each view is a different, fixed random
nonlinear embedding of the 3-D latent point into ``n_features`` dimensions (a random two-layer tanh map)
plus independent Gaussian noise, so no view is a copy of another and each view alone is noisy.

Everything is generated in O(n d) memory and time, by chunks, from ``random_state``; n up to 10^6 and more.
"""

from __future__ import annotations

import numpy as np

__all__ = ["MultiViewManifold", "make_multiview_manifold"]


class MultiViewManifold:
    """What :func:`make_multiview_manifold` returns: ``views`` (list of m arrays (n, d)), ``X`` their column
    concatenation (n, m d), ``view_sizes``, ``y`` (n,) classes 0..P-1, ``latent`` (n, 3)."""

    def __init__(self, views, y, latent):
        self.views, self.y, self.latent = views, y, latent

    @property
    def X(self):
        return np.hstack(self.views)

    @property
    def view_sizes(self):
        return [v.shape[1] for v in self.views]


def make_multiview_manifold(n_samples, n_classes=4, n_views=3, n_features=20, noise=0.02, turns=1.0,
                            random_state=0):
    """Multi-view data with classes on intertwined curves.

    Latent: class k is the spiral arm r(t) = 0.5 + 1.5 t, angle 2 pi (turns t + k / P), t ~ U(0, 1), at
    height z = 0.5 sin(2 pi t) (the same for every class); ``turns`` sets how far the arms wind around each
    other. View v: x_v = tanh(tanh(z W1_v + b1_v) W2_v) + ``noise`` N(0, I), with W1_v (3, h), W2_v (h, d) fixed
    Gaussian matrices drawn from the seed (h = 2 d). Classes are balanced (``n_samples`` // P each, the rest
    to the first classes), samples in random order.
    """
    n = int(n_samples)
    P = int(n_classes)
    if n < P or P < 2:
        raise ValueError(f"need n_samples >= n_classes >= 2, got n_samples={n_samples}, n_classes={n_classes}")
    if n_views < 1 or n_features < 1:
        raise ValueError("n_views and n_features must be >= 1")
    rng = np.random.default_rng(random_state)
    h = 2 * n_features  # the view maps first: the same embeddings for every n
    maps = [(rng.standard_normal((3, h)), rng.standard_normal(h), rng.standard_normal((h, n_features)) / np.sqrt(h))
            for _ in range(n_views)]
    y = np.arange(n) % P
    rng.shuffle(y)
    t = rng.random(n)
    angle = 2 * np.pi * (turns * t + y / P)
    r = 0.5 + 1.5 * t
    latent = np.column_stack([r * np.cos(angle), r * np.sin(angle), 0.5 * np.sin(2 * np.pi * t)])
    views = [np.empty((n, n_features)) for _ in range(n_views)]
    chunk = max(1, (1 << 22) // h)
    for s in range(0, n, chunk):
        zc = latent[s:s + chunk]
        for v, (W1, b1, W2) in enumerate(maps):
            views[v][s:s + chunk] = np.tanh(np.tanh(zc @ W1 + b1) @ W2)
    for v in range(n_views):
        views[v] += noise * rng.standard_normal((n, n_features))
    return MultiViewManifold(views, y, latent)
