"""Evaluation protocols: stratified splits and draws of labelled/unlabelled sets (Section 7.2).

Every random choice comes from an explicit integer seed, so the same config
gives the same numbers. The draws are nested: for one seed, the labelled set
with l_c per class is contained in the one with a larger l_c, and likewise the
unlabelled sets, so that results across label-set sizes are paired.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Split", "stratified_split", "draw_training_set", "TrainingSet"]


@dataclass(frozen=True)
class Split:
    """Indices into the dataset: training pool and test set, plus a per-class order of the pool."""

    pool: np.ndarray
    test: np.ndarray
    order: dict  # class -> pool indices of that class in random order

    def to_dict(self):
        return {"pool": self.pool.tolist(), "test": self.test.tolist(),
                "order": {str(k): v.tolist() for k, v in self.order.items()}}

    @classmethod
    def from_dict(cls, d):
        return cls(pool=np.asarray(d["pool"], dtype=np.int64), test=np.asarray(d["test"], dtype=np.int64),
                   order={int(k): np.asarray(v, dtype=np.int64) for k, v in d["order"].items()})


def stratified_split(y, n_test_per_class, seed):
    """Draw ``n_test_per_class`` test samples per class; the rest is the training pool.

    Raises ``ValueError`` if a class has no more than ``n_test_per_class`` samples.
    """
    y = np.asarray(y)
    rng = np.random.default_rng(seed)
    test, pool, order = [], [], {}
    for k in np.unique(y):
        idx = np.flatnonzero(y == k)
        if idx.size <= n_test_per_class:
            raise ValueError(f"class {k} has {idx.size} samples, not more than n_test_per_class = "
                             f"{n_test_per_class}")
        perm = rng.permutation(idx)
        test.append(perm[:n_test_per_class])
        rest = perm[n_test_per_class:]
        pool.append(rest)
        order[int(k)] = rest
    return Split(pool=np.sort(np.concatenate(pool)), test=np.sort(np.concatenate(test)), order=order)


@dataclass(frozen=True)
class TrainingSet:
    """Index sets of one run: labelled, unlabelled (both training), and validation."""

    labelled: np.ndarray
    unlabelled: np.ndarray
    validation: np.ndarray

    @property
    def train(self):
        """Training indices, labelled first then unlabelled."""
        return np.concatenate([self.labelled, self.unlabelled])


def draw_training_set(split, l_c, u_c, n_val_per_class, u_max=None, seed=None):
    """Labelled, unlabelled and validation samples per class from the pool of ``split``.

    The per-class random order of the pool is cut into consecutive blocks
    ``[validation (n_val_per_class) | unlabelled (u_max) | labelled (rest)]``;
    the first ``u_c`` of the unlabelled block and the first ``l_c`` of the
    labelled block are used. ``u_max`` (default ``u_c``) fixes the block layout
    so that sets are nested across u_c and l_c for one split. ``seed`` is
    unused (the split's order already carries the randomness) but accepted for
    symmetry with other protocols.
    """
    u_max = u_c if u_max is None else u_max
    if u_c > u_max:
        raise ValueError(f"u_c = {u_c} exceeds u_max = {u_max}")
    lab, unl, val = [], [], []
    for k, order in sorted(split.order.items()):
        need = n_val_per_class + u_max + l_c
        if order.size < need:
            raise ValueError(f"class {k} has {order.size} pool samples; need {need} "
                             f"({n_val_per_class} validation + {u_max} unlabelled + {l_c} labelled)")
        val.append(order[:n_val_per_class])
        unl.append(order[n_val_per_class:n_val_per_class + u_c])
        start = n_val_per_class + u_max
        lab.append(order[start:start + l_c])
    return TrainingSet(labelled=np.concatenate(lab), unlabelled=np.concatenate(unl),
                       validation=np.concatenate(val))
