"""Evaluation protocols: stratified splits and draws of labelled/unlabelled sets (Section 7.2).

Every random choice comes from an explicit integer seed, so the same config
gives the same numbers. The draws are nested: for one seed, the labelled set
with l_c per class is contained in the one with a larger l_c, and likewise the
unlabelled sets, so that results across label-set sizes are paired.

One nested draw serves every dataset: a protocol says, per class, which samples are candidates for the
labelled, unlabelled and validation sets and in which order (:class:`ClassPools`), and :func:`nested_draw`
takes the first l_c, u_c and n_val of them. The random protocol cuts one random order per class into blocks
(:func:`draw_training_set`), the official splits give separate orders, and the paper datasets' protocols
(:mod:`mvl.data.paper`) build their pools the same way. The kernels and labels of one draw, whatever the
dataset, are one :class:`KernelDraw` (sample-first, as the estimators take them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ALL", "Split", "stratified_split", "official_split", "draw_training_set", "TrainingSet", "ClassPools",
           "nested_draw", "KernelDraw", "kernel_draw", "SplitKernels"]

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


@dataclass(frozen=True)
class ClassPools:
    """Candidates of one class, each in the order they are drawn: ``labelled``, ``unlabelled``, ``validation``
    (disjoint index arrays). A draw takes a prefix of each, so draws are nested across l_c, u_c and n_val."""

    labelled: np.ndarray
    unlabelled: np.ndarray
    validation: np.ndarray


def nested_draw(pools, l_c, u_c, n_val, what="candidates"):
    """The one nested draw of every protocol: per class (``pools``: class -> :class:`ClassPools`, in class order)
    the first ``l_c`` labelled, ``u_c`` unlabelled and ``n_val`` validation candidates; ``None`` takes every
    candidate of that role. Raises ``ValueError`` when a class has fewer candidates than asked."""
    lab, unl, val = [], [], []
    for k, pool in pools.items():
        taken = []
        for role, cands, need in (("labelled", pool.labelled, l_c), ("unlabelled", pool.unlabelled, u_c),
                                  ("validation", pool.validation, n_val)):
            if need is not None and cands.size < need:
                raise ValueError(f"class {k} has {cands.size} {role} {what}; need {need}")
            taken.append(cands if need is None else cands[:need])
        lab.append(taken[0])
        unl.append(taken[1])
        val.append(taken[2])
    empty = np.empty(0, dtype=np.int64)
    return TrainingSet(labelled=np.concatenate(lab) if lab else empty, unlabelled=np.concatenate(unl) if unl else empty,
                       validation=np.concatenate(val) if val else empty)


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
    symmetry with other protocols. The blocks are the :class:`ClassPools` of :func:`nested_draw`.
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
        return nested_draw(_official_pools(split, n_val_per_class), l_c, u_c, n_val_per_class,
                           "candidates in the official split")
    pools = {}
    for k, order in sorted(split.order.items()):
        need = n_val_per_class + u_max + l_c
        if order.size < need:
            raise ValueError(f"class {k} has {order.size} pool samples; need {need} "
                             f"({n_val_per_class} validation + {u_max} unlabelled + {l_c} labelled)")
        start = n_val_per_class + u_max
        if everything:  # the whole pool but validation and labelled: the u_max block and what follows l_c
            unl = np.concatenate([order[n_val_per_class:start], order[start + l_c:]])
        else:
            unl = order[n_val_per_class:start]
        pools[k] = ClassPools(labelled=order[start:], unlabelled=unl, validation=order[:n_val_per_class])
    return nested_draw(pools, l_c, None if everything else u_c, n_val_per_class)


def _official_pools(split, n_val_per_class):
    """Labelled from ``order``, validation from ``validation_order``, unlabelled from ``unlabelled_order``
    (or, when that is None, from ``validation_order`` after the validation block)."""
    pools = {}
    for k, order in sorted(split.order.items()):
        vo = split.validation_order.get(k, np.empty(0, np.int64))
        uo = vo[n_val_per_class:] if split.unlabelled_order is None else split.unlabelled_order.get(k, vo[:0])
        pools[k] = ClassPools(labelled=order, unlabelled=uo, validation=vo)
    return pools


@dataclass(frozen=True)
class KernelDraw:
    """Kernels and labels of one draw, sample-first as the estimators' ``kernel="precomputed"`` input, for every
    dataset: ``K_tr`` (n, n, m) over the labelled then the unlabelled training points, ``y_train`` (n,) with -1
    for unlabelled, ``K_te`` (t, n, m), ``y_test``, the validation block ``K_va`` (v, n, m) and ``y_val`` (``K_va``
    None and ``y_val`` empty when the draw has no validation set), ``n_labelled`` and the views' names."""

    K_tr: np.ndarray
    y_train: np.ndarray
    K_te: np.ndarray
    y_test: np.ndarray
    K_va: np.ndarray | None
    y_val: np.ndarray
    n_labelled: int
    view_names: tuple = ()

    def as_dict(self):
        """The fields but ``view_names`` as a dict (what :func:`mvl.workflow.experiments.run_on_draw` takes)."""
        return dict(K_tr=self.K_tr, K_te=self.K_te, K_va=self.K_va, y_train=self.y_train, y_test=self.y_test,
                    y_val=self.y_val, n_labelled=self.n_labelled)


def kernel_draw(K_pool, K_test, y, split, l_c, u_c, n_val_per_class, u_max=None, view_names=()):
    """The :class:`KernelDraw` of one :func:`draw_training_set` draw from the kernels of a split: ``K_pool``
    (N, N, m) between the pool samples (in the sorted order of ``split.pool``), ``K_test`` (T, N, m), ``y`` the
    labels of the whole dataset."""
    draw = draw_training_set(split, l_c, u_c, n_val_per_class, u_max=u_max)
    pos = {int(g): i for i, g in enumerate(split.pool)}  # dataset index -> pool position
    train = np.array([pos[int(i)] for i in draw.train])
    val = np.array([pos[int(i)] for i in draw.validation])
    y_train = np.concatenate([y[draw.labelled], -np.ones(len(draw.unlabelled), dtype=np.int64)])
    return KernelDraw(K_tr=K_pool[np.ix_(train, train)], y_train=y_train, K_te=K_test[:, train],
                      y_test=y[split.test], K_va=K_pool[np.ix_(val, train)], y_val=y[draw.validation],
                      n_labelled=len(draw.labelled), view_names=tuple(view_names))


@dataclass(frozen=True)
class SplitKernels:
    """The kernels of one split of a random-protocol (or official-split) dataset, every view once: ``K_pool``
    (N, N, m) between the pool samples (sorted order of ``split.pool``), ``K_test`` (T, N, m), ``y`` the labels of
    the whole dataset, ``view_names`` the m views. Its :meth:`kernel_draw` has the signature of the paper
    datasets' (:mod:`mvl.data.paper`), so a run asks every dataset for its draw the same way."""

    K_pool: np.ndarray
    K_test: np.ndarray
    y: np.ndarray
    split: Split
    view_names: tuple

    def kernel_draw(self, seed, l_c, u_c, n_val_per_class=0, validation=True, u_max=None, draw_seed=0, views=None):
        """The :class:`KernelDraw` of :func:`draw_training_set` on this split (``seed`` and ``draw_seed``: the
        split's order carries them). The validation block is the first of every class's order, so it is drawn
        whether or not the method uses it (``validation`` is ignored): the labelled and unlabelled sets of one
        (l_c, u_c) are the same for every method."""
        names = list(self.view_names) if views is None else list(views)
        if names == list(self.view_names):
            Kp, Kt = self.K_pool, self.K_test
        elif len(names) == 1:
            i = list(self.view_names).index(names[0])
            Kp, Kt = self.K_pool[..., i:i + 1], self.K_test[..., i:i + 1]
        else:
            idx = [list(self.view_names).index(v) for v in names]
            Kp, Kt = self.K_pool[..., idx], self.K_test[..., idx]
        return kernel_draw(Kp, Kt, self.y, self.split, l_c, u_c, n_val_per_class,
                           u_max=u_c if u_max is None else u_max, view_names=names)
