"""Evaluation protocols: stratified splits and draws of labelled/unlabelled sets (Section 7.2).

Every random choice comes from an explicit integer seed, so the same config
gives the same numbers. The draws are nested: for one seed, the labelled set
with l_c per class is contained in the one with a larger l_c, and likewise the
unlabelled sets, so that results across label-set sizes are paired.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ALL", "Split", "stratified_split", "official_split", "draw_training_set", "TrainingSet"]

ALL = "all"
"""u_c value meaning every remaining pool sample is unlabelled (random protocol)."""


def _orders_to_dict(orders):
    return None if orders is None else {str(k): v.tolist() for k, v in orders.items()}


def _orders_from_dict(d):
    return None if d is None else {int(k): np.asarray(v, dtype=np.int64) for k, v in d.items()}


@dataclass(frozen=True)
class Split:
    """Indices into the dataset: training pool and test set, plus per-class random orders of the pool.

    With only ``order``, validation, unlabelled and labelled samples are consecutive blocks of it (random
    protocol). Datasets with official splits (Flowers-17: ``trn``/``val``/``tst``) give separate
    candidate orders: labelled from ``order``, unlabelled from ``unlabelled_order`` and validation from
    ``validation_order`` (disjoint from each other).
    """

    pool: np.ndarray
    test: np.ndarray
    order: dict  # class -> pool indices of that class in random order
    unlabelled_order: dict | None = None
    validation_order: dict | None = None

    def to_dict(self):
        return {"pool": self.pool.tolist(), "test": self.test.tolist(), "order": _orders_to_dict(self.order),
                "unlabelled_order": _orders_to_dict(self.unlabelled_order),
                "validation_order": _orders_to_dict(self.validation_order)}

    @classmethod
    def from_dict(cls, d):
        return cls(pool=np.asarray(d["pool"], dtype=np.int64), test=np.asarray(d["test"], dtype=np.int64),
                   order=_orders_from_dict(d["order"]),
                   unlabelled_order=_orders_from_dict(d.get("unlabelled_order")),
                   validation_order=_orders_from_dict(d.get("validation_order")))


def official_split(y, labelled, unlabelled, validation, test, seed):
    """Split from a dataset's own index sets (e.g. Flowers-17 ``trn``/``val``/``tst``, Section 7.2).

    ``labelled``: candidates for the labelled samples; ``unlabelled`` and ``validation``: candidates for
    the unlabelled and validation samples (disjoint from ``labelled``; they may coincide with each other,
    e.g. both Flowers-17 ``val``, and are then cut into disjoint blocks: validation first); ``test``: the
    test set. Each class's candidates are put in a random order drawn from ``seed``.
    """
    y = np.asarray(y)
    sets = {name: np.unique(np.asarray(v, dtype=np.int64))
            for name, v in (("labelled", labelled), ("unlabelled", unlabelled), ("validation", validation),
                            ("test", test))}
    train = np.union1d(np.union1d(sets["labelled"], sets["unlabelled"]), sets["validation"])
    if np.intersect1d(train, sets["test"]).size:
        raise ValueError("the official test set overlaps the training/validation sets")
    for other in ("unlabelled", "validation"):
        if np.intersect1d(sets["labelled"], sets[other]).size:
            raise ValueError(f"official {other} candidates overlap the labelled candidates")
    rng = np.random.default_rng(seed)
    shared = np.array_equal(sets["unlabelled"], sets["validation"])
    order, unl, val = {}, {}, {}
    for k in np.unique(y[train]):
        order[int(k)] = rng.permutation(sets["labelled"][y[sets["labelled"]] == k])
        v = rng.permutation(sets["validation"][y[sets["validation"]] == k])
        u = v if shared else rng.permutation(sets["unlabelled"][y[sets["unlabelled"]] == k])
        val[int(k)], unl[int(k)] = v, u
    if shared:  # one candidate list: validation = its first block, unlabelled = the rest (see draw_training_set)
        unl = None
    return Split(pool=train, test=sets["test"], order=order, unlabelled_order=unl, validation_order=val)


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
    labelled block are used. ``u_c = "all"`` (:data:`ALL`) takes every pool sample that is neither
    validation nor labelled (the unlabelled block and the rest after the l_c labelled samples).
    ``u_max`` (default ``u_c``) fixes the block layout so that sets are nested across u_c and l_c for
    one split. ``seed`` is
    unused (the split's order already carries the randomness) but accepted for
    symmetry with other protocols.
    """
    everything = u_c == ALL
    if everything:
        u_max = 0 if u_max is None else u_max
    else:
        u_max = u_c if u_max is None else u_max
        if u_c > u_max:
            raise ValueError(f"u_c = {u_c} exceeds u_max = {u_max}")
    if split.validation_order is not None:
        if everything:
            raise ValueError("u_c = 'all' (the whole remaining pool) is defined for the random protocol only")
        return _draw_official(split, l_c, u_c, n_val_per_class)
    lab, unl, val = [], [], []
    for k, order in sorted(split.order.items()):
        need = n_val_per_class + u_max + l_c
        if order.size < need:
            raise ValueError(f"class {k} has {order.size} pool samples; need {need} "
                             f"({n_val_per_class} validation + {u_max} unlabelled + {l_c} labelled)")
        val.append(order[:n_val_per_class])
        start = n_val_per_class + u_max
        if everything:  # the whole pool but validation and labelled: the u_max block and what follows l_c
            unl.append(np.concatenate([order[n_val_per_class:start], order[start + l_c:]]))
        else:
            unl.append(order[n_val_per_class:n_val_per_class + u_c])
        lab.append(order[start:start + l_c])
    return TrainingSet(labelled=np.concatenate(lab), unlabelled=np.concatenate(unl),
                       validation=np.concatenate(val))


def _draw_official(split, l_c, u_c, n_val_per_class):
    """Labelled from ``order``, validation from ``validation_order``, unlabelled from ``unlabelled_order``
    (or, when that is None, from ``validation_order`` after the validation block); nested across l_c, u_c."""
    lab, unl, val = [], [], []
    for k, order in sorted(split.order.items()):
        vo = split.validation_order.get(k, np.empty(0, np.int64))
        uo = vo[n_val_per_class:] if split.unlabelled_order is None else split.unlabelled_order.get(k, vo[:0])
        for what, have, need in (("labelled", order.size, l_c), ("validation", vo.size, n_val_per_class),
                                 ("unlabelled", uo.size, u_c)):
            if have < need:
                raise ValueError(f"class {k} has {have} {what} candidates in the official split; need {need}")
        lab.append(order[:l_c])
        val.append(vo[:n_val_per_class])
        unl.append(uo[:u_c])
    return TrainingSet(labelled=np.concatenate(lab), unlabelled=np.concatenate(unl),
                       validation=np.concatenate(val))
