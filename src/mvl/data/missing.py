"""Missing-view patterns for experiments on incomplete multi-view data (:mod:`mvl.solvers.incomplete`).

A pattern is an (n, m) boolean presence mask, True where sample i has view p; every sample keeps at least one view.
:func:`apply_mask` writes it into data by the package's convention: a missing view is a row of NaN across all that
view's columns (feature views), or a NaN row and column of that view's Gram matrix (precomputed kernels).
"""

from __future__ import annotations

import numpy as np

__all__ = ["mask_at_random", "mask_class_views", "mask_sample_blocks", "apply_mask", "apply_mask_kernels"]


def _rng(rng):
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def mask_at_random(n, m, q, rng=None):
    """Missing at random: round(q n m) of the n m (sample, view) entries are missing, every sample keeps >= 1 view.

    One view per sample is drawn uniformly and kept; the missing entries are then drawn uniformly without
    replacement among the other n (m - 1) entries, so q can be at most (m - 1) / m. ``rng``: a Generator or a
    seed. Returns the (n, m) presence mask (True: present)."""
    n, m = int(n), int(m)
    if not 0.0 <= q <= (m - 1) / m:
        raise ValueError(f"q must be in [0, (m - 1) / m] = [0, {(m - 1) / m:.3g}] so that every sample keeps a view, "
                         f"got {q!r}")
    rng = _rng(rng)
    mask = np.ones((n, m), dtype=bool)
    keep = rng.integers(0, m, n)
    candidates = np.flatnonzero(np.arange(m)[None, :] != keep[:, None])  # flat indices of the other entries
    k = int(round(q * n * m))
    drop = rng.choice(candidates, size=k, replace=False)
    mask.flat[drop] = False
    return mask


def mask_class_views(y, m, views_per_class=1, offset=0):
    """A structured pattern: every sample of the k-th class (in sorted label order) lacks the views
    (k + offset + j) mod m, j < ``views_per_class`` (views_per_class < m). Deterministic. Returns (n, m)."""
    y = np.asarray(y)
    if not 0 <= views_per_class < m:
        raise ValueError(f"views_per_class must be in 0..{m - 1}, got {views_per_class!r}")
    classes, enc = np.unique(y, return_inverse=True)
    mask = np.ones((y.size, m), dtype=bool)
    for k in range(classes.size):
        for j in range(views_per_class):
            mask[enc == k, (k + offset + j) % m] = False
    return mask


def mask_sample_blocks(n, m, n_blocks, views_per_block=1, rng=None):
    """A structured pattern: the samples, in a random order, are cut into ``n_blocks`` blocks of equal size, and
    every sample of a block lacks the same ``views_per_block`` views, drawn per block (a sensor down for a batch).
    Returns (n, m)."""
    if not 0 <= views_per_block < m:
        raise ValueError(f"views_per_block must be in 0..{m - 1}, got {views_per_block!r}")
    rng = _rng(rng)
    mask = np.ones((n, m), dtype=bool)
    for block in np.array_split(rng.permutation(n), int(n_blocks)):
        mask[np.ix_(block, rng.choice(m, views_per_block, replace=False))] = False
    return mask


def apply_mask(X, mask, views=None):
    """Feature data with the missing views set to NaN: ``X`` a list of per-view arrays (returns a new list), or an
    (n, d) matrix with ``views`` (view sizes in column order, or one array of column indices per view) (returns a
    copy)."""
    mask = np.asarray(mask, dtype=bool)
    if isinstance(X, (list, tuple)):
        if mask.shape != (np.shape(X[0])[0], len(X)):
            raise ValueError(f"mask has shape {mask.shape}, expected ({np.shape(X[0])[0]}, {len(X)})")
        out = []
        for p, view in enumerate(X):
            V = np.array(view, dtype=np.float64)
            V[~mask[:, p]] = np.nan
            out.append(V)
        return out
    X = np.array(X, dtype=np.float64)
    if views is None:
        raise ValueError("views is needed to apply a mask to a feature matrix (sizes or column indices per view)")
    items = list(views)
    if all(np.ndim(v) == 0 for v in items):
        ends = np.cumsum([int(v) for v in items])
        cols = [np.arange(e - int(s), e) for s, e in zip(items, ends, strict=True)]
    else:
        cols = [np.asarray(v) for v in items]
    if mask.shape != (X.shape[0], len(cols)):
        raise ValueError(f"mask has shape {mask.shape}, expected ({X.shape[0]}, {len(cols)})")
    for p, c in enumerate(cols):
        X[np.ix_(~mask[:, p], c)] = np.nan
    return X


def apply_mask_kernels(K, mask, train_mask=None):
    """Precomputed kernels (sample-first) with the missing views set to NaN: training (n, n, m) with ``mask``
    (n, m) (NaN rows and columns), or test (t, n, m) with the test ``mask`` (t, m) (NaN rows) and the
    ``train_mask`` (n, m) (NaN columns). Returns a copy."""
    K = np.array(K, dtype=np.float64)
    mask = np.asarray(mask, dtype=bool)
    cols = mask if train_mask is None else np.asarray(train_mask, dtype=bool)
    for p in range(K.shape[2]):
        K[~mask[:, p], :, p] = np.nan
        K[:, ~cols[:, p], p] = np.nan
    return K
