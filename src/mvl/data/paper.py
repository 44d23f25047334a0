"""The paper's data sets and evaluation protocols (Minh, Bazzani & Murino 2016, Section 7.2).

Files are obtained and verified by :mod:`mvl.data.download` (mirror, cache or network); every loader takes
the ``{relpath: path}`` mapping returned by :func:`mvl.data.download.fetch`, or fetches it itself from
``options`` (a :class:`mvl.data.download.DataOptions`). Kernels follow the package convention: one Gram
matrix per view, stacked as ``(m, n, n)`` for training and ``(m, t, n)`` for test-vs-train (the
diagonal matrix-valued kernel of Section 7.1, eq 93-94). Labels are 0-based. Every random choice
comes from explicit integer seeds (``numpy.random.default_rng([seed, split])``).

**Flowers-17** (Nilsback & Zisserman 2006, 2008; Section 7.2): 1360 images, 17 classes of 80
(class of image i is ``(i-1) // 80``). Seven chi2 distance matrices in the paper's view order
(footnote 7): HOG, HSV, boundary SIFT, foreground SIFT, colour, texture, shape -- variables
``D_hog, D_hsv, D_siftbdy, D_siftint`` of ``distancematrices17itfeat08.mat`` and
``D_colourgc, D_texturegc, D_shapegc`` of ``distancematrices17gcfeat06.mat``. Kernels
``exp(-D / mean(D))`` (Gehler & Nowozin 2009) with the mean taken over the training block, see
:func:`mvl.kernels.chi2_kernel`. Official splits ``trn/val/tst 1..3`` of ``datasplits.mat``
(40/20/20 per class, 1-based indices). Protocol: l_c in {1, 5, 10, 20, 40} labelled images per
class drawn from ``trn``, u_c = 5 unlabelled per class from ``val`` in the semi-supervised setting,
test = ``tst``; the remaining ``val`` images are the validation set of the cross-validation of
(gamma_A, gamma_B, gamma_W) at l_c = 10 (Section 7.3).

**Caltech-101** (precomputed kernels of Vedaldi et al. 2009, footnote 4). What the authors' released
MATLAB code reads (found in public copies of it): a folder per split ``cal101-ker-<N>-<s>``
(e.g. ``cal101-ker-15-1``) holding one MAT file per kernel whose variable ``matrix`` is the Gram
matrix -- file names ``echi2_phowColor_L0 .. L2``, ``echi2_phowGray_L0 .. L2``,
``echi2_ssim_L0 .. L2``, ``el2_gb`` -- and ``cal101-meta/meta-<N>-<s>.mat`` with
``trainImageClasses``, ``testImageClasses`` (1-based, 102 classes incl. background) and
``trainImageNames``, ``testImageNames``. The code lists ``cal101-ker-*/*.mat`` in sorted order and
takes the first half as training kernels (n_train x n_train) and the second half as test kernels,
indexed ``matrix(train_rows, :)``, i.e. stored n_train x n_test. The training set contains every
training image twice: within each class the first half of the (sorted) indices are the original
images and the second half their left-right flipped copies ("transformed images"); the labelled and
unlabelled sets take an image together with its flipped copy. N = 15 training images per class
(consistent with the paper: no semi-supervised result at l_c = 15 and no validation set for
optC at l_c = 15, footnote 6), 15 test images per class, 3 splits.
*Assumed* (not verifiable offline): the test kernel files are named ``test_<kernel>.mat`` (any name
that sorts after the training files and contains the kernel name is found by :func:`load_caltech101`
with ``root=``), kernels may be float32 or float64, and the flipped copy of the k-th original of a
class is the k-th image of the second half. The 4-view set is PHOW colour L2, PHOW gray L2, SSIM L2,
GB (Tables 2, 8, 10); the 10-view set all ten kernels in the order of Table 3.
Protocol: l_c in {1, 5, 10, 15}, u_c = 5, 15 test images per class (all of the split's test set),
a validation set of 5 per class from the training images for optC (Section 7.6).

**CUB-200-2011** (Wah et al. 2011): metadata and the 312 per-image binary attributes
(``attributes/image_attribute_labels.txt``) from ``CUB_200_2011.tgz``; attribute view = Gaussian
kernel with bandwidth the median pairwise distance of the training points (Minh et al. 2013). The
paper's PHOW image kernels are not public, so the image view is read from a user-supplied ``.npz``
(see :func:`load_cub_image_view`). Protocol: 5 seeded draws of l_c in {1, 5, 10, 15} labelled and
u_c = 5 unlabelled images per class from the official training images; test = all official test
images.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import download, formats
from ..kernels import chi2_distances, chi2_kernel, chi2_scale, rbf_kernel
from .errors import DataIntegrityError, DataUnavailableError
from .formats import CUB_N_ATTRIBUTES, read_image_attribute_labels
from .protocols import ClassPools, KernelDraw, nested_draw

__all__ = [
    "prepare",
    "PaperDraw",
    "Problem",
    "FLOWERS17_VIEWS",
    "FLOWERS17_LABELS_PER_CLASS",
    "Flowers17Splits",
    "Flowers17",
    "load_flowers17_splits",
    "load_flowers17",
    "flowers17_draw",
    "CALTECH101_VIEWS_4",
    "CALTECH101_VIEWS_10",
    "CALTECH101_LABELS_PER_CLASS",
    "Caltech101Split",
    "load_caltech101",
    "caltech101_draw",
    "CUB_N_ATTRIBUTES",
    "CUB_LABELS_PER_CLASS",
    "CUB_SEEDS",
    "CUB200",
    "read_image_attribute_labels",
    "load_cub_metadata",
    "load_cub_image_view",
    "load_cub",
    "cub_draw",
]


# ----------------------------------------------------------------------------------------------- common


@dataclass(frozen=True)
class PaperDraw:
    """Index sets of one run. ``labelled``, ``unlabelled`` and ``validation`` index the training
    space of the data set, ``test`` its test space (the same image set for Flowers-17 and CUB; the
    split's test kernel for Caltech-101)."""

    dataset: str
    split: int
    seed: int
    l_c: int
    u_c: int
    labelled: np.ndarray
    unlabelled: np.ndarray
    validation: np.ndarray
    test: np.ndarray

    @property
    def train(self):
        """Training indices: labelled first, then unlabelled."""
        return np.concatenate([self.labelled, self.unlabelled])

    def to_dict(self):
        return {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in self.__dict__.items()}

    @classmethod
    def from_dict(cls, d):
        arrays = ("labelled", "unlabelled", "validation", "test")
        return cls(**{k: (np.asarray(v, dtype=np.int64) if k in arrays else v) for k, v in d.items()})


@dataclass
class Problem:
    """Everything a solver needs for one draw, sample-first as the estimators' ``kernel="precomputed"`` input:
    ``K`` (n, n, m) over labelled then unlabelled training points, ``y`` (n,) with -1 for unlabelled,
    ``K_test`` (t, n, m), ``y_test``, and the validation block ``K_val`` (v, n, m), ``y_val`` (None when the
    draw has no validation set)."""

    K: np.ndarray
    y: np.ndarray
    K_test: np.ndarray
    y_test: np.ndarray
    K_val: np.ndarray | None
    y_val: np.ndarray | None
    view_names: tuple


def _rng(seed, split):
    if int(seed) < 0 or int(split) < 0:
        raise ValueError(f"seed and split must be >= 0, got {seed}, {split}")
    return np.random.default_rng([int(seed), int(split)])


def _class_orders(y, pool, rng):
    """class -> pool indices of that class in random order (classes in increasing order)."""
    pool = np.sort(np.asarray(pool, dtype=np.int64))
    return {int(c): rng.permutation(pool[y[pool] == c]) for c in np.unique(y[pool])}


def _block_pools(orders, l_c, u_c, n_val, u_max, n_val_max, what):
    """Cut each class's order into [labelled (prefix) ... | unlabelled (u_max) | validation (n_val_max)]: the
    :class:`mvl.data.protocols.ClassPools` of :func:`mvl.data.protocols.nested_draw`.

    Labelled sets are prefixes (nested across l_c and independent of u_c, n_val); the unlabelled and
    validation blocks sit at the end, so they are nested across u_c and fixed across l_c.
    """
    u_max = u_c if u_max is None else u_max
    n_val_max = n_val if n_val_max is None else n_val_max
    if min(l_c, u_c, n_val) < 0 or u_c > u_max or n_val > n_val_max:
        raise ValueError(f"need 0 <= u_c <= u_max and 0 <= n_val <= n_val_max, got l_c={l_c}, u_c={u_c}, "
                         f"u_max={u_max}, n_val={n_val}, n_val_max={n_val_max}")
    pools = {}
    for c, order in orders.items():
        n = order.size
        if l_c + u_max + n_val_max > n:
            raise ValueError(f"class {c} has {n} {what}; l_c={l_c} labelled + u_max={u_max} unlabelled + "
                             f"{n_val_max} validation do not fit")
        start_u = n - n_val_max - u_max
        pools[c] = ClassPools(labelled=order[:start_u], unlabelled=order[start_u:n - n_val_max],
                              validation=order[n - n_val_max:])
    return pools


def _kernel_draw(problem, draw):
    """The :class:`mvl.data.protocols.KernelDraw` of a :class:`Problem` of ``draw`` (one object for every dataset)."""
    y_val = np.empty(0, dtype=np.int64) if problem.y_val is None else problem.y_val
    return KernelDraw(K_tr=problem.K, y_train=problem.y, K_te=problem.K_test, y_test=problem.y_test, K_va=problem.K_val,
                      y_val=y_val, n_labelled=int(draw.labelled.size), view_names=tuple(problem.view_names))


def _no_all(name, u_c):
    if u_c == "all":
        raise ValueError(f"u_c = 'all' is defined for the random protocol only, not for {name}")


def _as_views(view_names, views):
    if views is None:
        return list(range(len(view_names)))
    unknown = [v for v in views if v not in view_names]
    if unknown:
        raise ValueError(f"unknown view(s) {unknown}; loaded views are {list(view_names)}")
    return [view_names.index(v) for v in views]


def _paths(dataset, paths, options):
    if paths is None:
        paths = download.fetch(dataset, options)
    return {k: Path(v) for k, v in paths.items()}


def _need(paths, relpath):
    if relpath not in paths:
        raise DataUnavailableError(f"{relpath} is not among the fetched files {sorted(paths)}")
    return paths[relpath]


# ----------------------------------------------------------------------------------------------- Flowers

FLOWERS17_VIEWS = ("hog", "hsv", "siftbdy", "siftint", "colourgc", "texturegc", "shapegc")
_IT = "flowers17/distancematrices17itfeat08.mat"
_GC = "flowers17/distancematrices17gcfeat06.mat"
FLOWERS17_VIEW_SOURCES = {
    "hog": (_IT, "D_hog"), "hsv": (_IT, "D_hsv"), "siftbdy": (_IT, "D_siftbdy"), "siftint": (_IT, "D_siftint"),
    "colourgc": (_GC, "D_colourgc"), "texturegc": (_GC, "D_texturegc"), "shapegc": (_GC, "D_shapegc"),
}
FLOWERS17_N_CLASSES = 17
FLOWERS17_LABELS_PER_CLASS = (1, 5, 10, 20, 40)
FLOWERS17_U_C = 5


@dataclass
class Flowers17Splits:
    """Labels ``y`` (n,) and the official splits ``{s: {"trn", "val", "tst"}}`` as 0-based indices."""

    y: np.ndarray
    splits: dict
    n_per_class: int


@dataclass
class Flowers17(Flowers17Splits):
    """Flowers-17: distances (m, n, n) in ``view_names`` order, labels, official splits."""

    distances: np.ndarray = None
    view_names: tuple = FLOWERS17_VIEWS
    image_names: tuple | None = None
    name: str = "flowers17"

    def kernels(self, train, test=None, views=None):
        """chi2 kernels exp(-D / mean(D[train, train])) per view, sample-first: ``(K (n, n, m), K_test (t, n, m)
        or None)``."""
        sel = _as_views(self.view_names, views)
        train = np.asarray(train, dtype=np.int64)
        pairs = []
        for i in sel:
            D = self.distances[i]
            Dt = None if test is None else D[np.ix_(np.asarray(test, dtype=np.int64), train)]
            pairs.append(chi2_kernel(D[np.ix_(train, train)], Dt))
        return _stacked(pairs, test)

    def problem(self, draw, views=None):
        """Kernels and labels of one :class:`PaperDraw` (validation = the draw's validation set)."""
        return _problem_same_space(self, draw, views)

    def kernel_draw(self, seed, l_c, u_c, n_val_per_class=0, validation=True, u_max=None, draw_seed=0, views=None):
        """The workflow's draw (:class:`mvl.data.protocols.KernelDraw`): official split ``seed``, labelled from
        ``trn``, unlabelled and validation (the rest of ``val``, whatever ``n_val_per_class``) from ``val``,
        :func:`flowers17_draw` with ``draw_seed``."""
        _no_all(self.name, u_c)
        draw = flowers17_draw(self, split=seed, l_c=l_c, u_c=u_c, seed=int(draw_seed))
        return _kernel_draw(self.problem(draw, views), draw)


def _stacked(pairs, test):
    """Per-view ``(K, K_test)`` pairs stacked sample-first: ``(K (n, n, m), K_test (t, n, m) or None)``, None
    when ``test`` is None."""
    K = np.stack([K for K, _ in pairs], axis=-1)
    return K, (None if test is None else np.stack([Kt for _, Kt in pairs], axis=-1))


def _problem_same_space(data, draw, views):
    train = draw.train
    n_lab = draw.labelled.size
    y = data.y[train].copy()
    y[n_lab:] = -1
    rows = np.concatenate([draw.test, draw.validation])
    K, Kr = data.kernels(train, rows, views)
    t = draw.test.size
    names = tuple(data.view_names[i] for i in _as_views(data.view_names, views))
    has_val = draw.validation.size > 0
    return Problem(K=K, y=y, K_test=Kr[:t], y_test=data.y[draw.test],
                   K_val=Kr[t:] if has_val else None, y_val=data.y[draw.validation] if has_val else None,
                   view_names=names)


def load_flowers17_splits(path, n_images=None):
    """Official splits of ``datasplits.mat`` (1-based in the file) as 0-based indices, and labels.

    ``n_images`` defaults to the number of indexed images (1360 for the real file).
    """
    formats.validate_flowers17_datasplits(Path(path))
    d = formats.loadmat(path)
    splits = {}
    for s in (1, 2, 3):
        splits[s] = {p: np.asarray(d[f"{p}{s}"], dtype=np.int64).ravel() - 1 for p in ("trn", "val", "tst")}
    n = sum(v.size for v in splits[1].values())
    if n_images is not None and n_images != n:
        raise ValueError(f"datasplits.mat indexes {n} images, the distance matrices have {n_images}")
    per_class = n // FLOWERS17_N_CLASSES
    y = np.arange(n, dtype=np.int64) // per_class
    return Flowers17Splits(y=y, splits=splits, n_per_class=per_class)


def load_flowers17(paths=None, options=None, views=FLOWERS17_VIEWS):
    """Flowers-17 distances of ``views`` (paper order by default), labels and official splits.

    ``paths``: output of ``download.fetch("flowers17", ...)``; fetched with ``options`` if None.
    """
    views = tuple(views)
    unknown = [v for v in views if v not in FLOWERS17_VIEW_SOURCES]
    if unknown:
        raise ValueError(f"unknown Flowers-17 view(s) {unknown}; choose from {FLOWERS17_VIEWS}")
    paths = _paths("flowers17", paths, options)
    mats = {}
    arrays = []
    for v in views:
        rel, var = FLOWERS17_VIEW_SOURCES[v]
        if rel not in mats:
            mats[rel] = formats.loadmat(_need(paths, rel))
        D = np.asarray(mats[rel][var], dtype=np.float64)
        if arrays and D.shape != arrays[0].shape:
            raise DataIntegrityError(f"{var} has shape {D.shape}, other views {arrays[0].shape}")
        arrays.append(D)
    n = arrays[0].shape[0]
    sp = load_flowers17_splits(_need(paths, "flowers17/datasplits.mat"), n_images=n)
    names = None
    if "flowers17/files.txt" in paths:
        names = tuple(line.strip() for line in paths["flowers17/files.txt"].read_text().splitlines() if line.strip())
        if len(names) != n:
            raise DataIntegrityError(f"files.txt lists {len(names)} images, the distances have {n}")
    return Flowers17(y=sp.y, splits=sp.splits, n_per_class=sp.n_per_class, distances=np.stack(arrays),
                     view_names=views, image_names=names)


def flowers17_draw(data, split, l_c, u_c=FLOWERS17_U_C, seed=0):
    """Labelled l_c per class from ``trn<split>``, unlabelled u_c per class from ``val<split>``,
    test = ``tst<split>``, validation = the rest of ``val<split>`` (Section 7.2-7.3).

    ``data`` is a :class:`Flowers17` or :class:`Flowers17Splits`. For one (seed, split) the labelled
    sets are nested across l_c and the unlabelled sets across u_c.
    """
    if split not in data.splits:
        raise ValueError(f"split must be one of {sorted(data.splits)}, got {split}")
    sp = data.splits[split]
    rng = _rng(seed, split)
    trn_orders = _class_orders(data.y, sp["trn"], rng)
    val_orders = _class_orders(data.y, sp["val"], rng)
    trn = _block_pools(trn_orders, l_c, 0, 0, 0, 0, "trn images")  # labelled: a prefix of the trn order
    val = _block_pools(val_orders, 0, u_c, 0, u_c, 0, "val images")  # unlabelled: the last u_c of the val order
    pools = {c: ClassPools(labelled=trn[c].labelled, unlabelled=val[c].unlabelled, validation=val[c].labelled)
             for c in trn}  # validation: the rest of val
    d = nested_draw(pools, l_c, u_c, None)
    return PaperDraw("flowers17", int(split), int(seed), int(l_c), int(u_c), d.labelled, d.unlabelled,
                     np.sort(d.validation), np.sort(sp["tst"]))


# ------------------------------------------------------------------------------------------- Caltech-101

CALTECH101_VIEWS_10 = download.CALTECH101_KERNEL_NAMES
CALTECH101_VIEWS_4 = ("echi2_phowColor_L2", "echi2_phowGray_L2", "echi2_ssim_L2", "el2_gb")
CALTECH101_LABELS_PER_CLASS = (1, 5, 10, 15)


@dataclass
class Caltech101Split:
    """One split of the Caltech-101 kernels: ``K_train`` (m, n, n), ``K_test`` (m, t, n) (test rows),
    0-based labels, image names, ``original`` (n,) -- False for the flipped training copies -- and
    ``twin`` (n,) -- index of an image's flipped copy / original (-1 if none)."""

    split: int
    K_train: np.ndarray
    K_test: np.ndarray
    y_train: np.ndarray
    y_test: np.ndarray
    train_names: tuple
    test_names: tuple
    original: np.ndarray
    twin: np.ndarray
    view_names: tuple
    name: str = "caltech101"

    def kernels(self, train, test=None, views=None, test_from="test"):
        """Sub-kernels ``K[train, train]`` (n, n, m) and ``K[test, train]`` (t, n, m), sample-first; ``test``
        indexes the split's test set (``test_from="test"``) or its training set (``test_from="train"``, e.g.
        validation)."""
        sel = _as_views(self.view_names, views)
        train = np.asarray(train, dtype=np.int64)
        K = np.moveaxis(self.K_train[np.ix_(sel, train, train)], 0, -1)
        if test is None:
            return K, None
        src = self.K_test if test_from == "test" else self.K_train
        return K, np.moveaxis(src[np.ix_(sel, np.asarray(test, dtype=np.int64), train)], 0, -1)

    def problem(self, draw, views=None):
        train = draw.train
        y = self.y_train[train].copy()
        y[draw.labelled.size:] = -1
        K, Kt = self.kernels(train, draw.test, views)
        has_val = draw.validation.size > 0
        Kv = self.kernels(train, draw.validation, views, test_from="train")[1] if has_val else None
        names = tuple(self.view_names[i] for i in _as_views(self.view_names, views))
        return Problem(K=K, y=y, K_test=Kt, y_test=self.y_test[draw.test], K_val=Kv,
                       y_val=self.y_train[draw.validation] if has_val else None, view_names=names)

    def kernel_draw(self, seed, l_c, u_c, n_val_per_class=0, validation=True, u_max=None, draw_seed=0, views=None):
        """The workflow's draw (:class:`mvl.data.protocols.KernelDraw`) of this split (``seed`` names the split,
        which is the one loaded): :func:`caltech101_draw` with ``draw_seed``, a validation set of
        ``n_val_per_class`` originals when ``validation``."""
        _no_all(self.name, u_c)
        n_val = int(n_val_per_class) if validation else 0
        draw = caltech101_draw(self, l_c=l_c, u_c=u_c, n_val_per_class=n_val, seed=int(draw_seed))
        return _kernel_draw(self.problem(draw, views), draw)


def _caltech_files_in_dir(folder, names):
    """(train file, test file) per kernel name in one ``cal101-ker-*`` folder.

    The test file is the one other MAT file whose name contains the kernel name (``test_<name>.mat``
    or similar); failing that, the authors' rule: sorted listing, second half = test files.
    """
    folder = Path(folder)
    mats = sorted(p.name for p in folder.glob("*.mat"))
    out = {}
    for name in names:
        train = f"{name}.mat"
        if train not in mats:
            raise DataUnavailableError(f"{folder}: no training kernel {train}")
        cands = [m for m in mats if m != train and name in m and m[:-4] not in CALTECH101_VIEWS_10]
        if len(cands) == 1:
            out[name] = (folder / train, folder / cands[0])
            continue
        half = len(mats) // 2
        if len(mats) % 2 or train not in mats[:half]:
            raise DataUnavailableError(f"{folder}: cannot identify the test kernel of {name} "
                                                f"(files: {mats})")
        out[name] = (folder / train, folder / mats[half + mats.index(train)])
    return out


def load_caltech101(split=1, views=CALTECH101_VIEWS_4, paths=None, options=None, root=None,
                    n_train=download.CALTECH101_N_TRAIN, flipped=True):
    """Precomputed kernels of Vedaldi et al. (2009) for one split, in the order of ``views``.

    Files come from ``paths`` (output of ``download.fetch("caltech101", ...)``, fetched with
    ``options`` if None), or -- with ``root`` -- straight from a directory holding
    ``cal101-ker-<N>-<s>/`` and ``cal101-meta/`` (test kernel names found as described in
    :func:`_caltech_files_in_dir`; every file is validated structurally). Test kernels are stored
    n_train x n_test and returned as (m, n_test, n_train). ``flipped=True`` marks the second half of
    each class's training images as flipped copies of the first half (the authors' layout).
    """
    views = tuple(views)
    unknown = [v for v in views if v not in CALTECH101_VIEWS_10]
    if unknown:
        raise ValueError(f"unknown Caltech-101 kernel(s) {unknown}; choose from {CALTECH101_VIEWS_10}")
    folder = download.caltech101_split_dir(split, n_train)
    meta_rel = download.caltech101_meta_name(split, n_train)
    if root is not None:
        root = Path(root)
        files = _caltech_files_in_dir(root / folder, views)
        meta_path = root / meta_rel
        formats.validate_caltech101_meta(meta_path)
        for tr, te in files.values():
            formats.validate_caltech101_train_kernel(tr)
            formats.validate_caltech101_test_kernel(te)
    else:
        paths = _paths("caltech101", paths, options)
        base = f"caltech101/{folder}/"
        files = {v: (_need(paths, f"{base}{v}.mat"),
                     _need(paths, f"{base}{download.CALTECH101_TEST_PREFIX}{v}.mat")) for v in views}
        meta_path = _need(paths, f"caltech101/{meta_rel}")
    meta = formats.loadmat(meta_path)
    y_train = np.asarray(meta["trainImageClasses"]).ravel().astype(np.int64) - 1
    y_test = np.asarray(meta["testImageClasses"]).ravel().astype(np.int64) - 1
    n, t = y_train.size, y_test.size
    K_train = np.empty((len(views), n, n))
    K_test = np.empty((len(views), t, n))
    for i, v in enumerate(views):
        tr, te = files[v]
        Ktr = formats.loadmat(tr, ["matrix"])["matrix"]
        Kte = formats.loadmat(te, ["matrix"])["matrix"]
        if Ktr.shape != (n, n):
            raise DataIntegrityError(f"{tr}: matrix has shape {Ktr.shape}, the metadata has {n} "
                                              f"training images")
        if Kte.shape == (n, t):
            Kte = Kte.T
        elif Kte.shape != (t, n):
            raise DataIntegrityError(f"{te}: matrix has shape {Kte.shape}, expected ({n}, {t}) "
                                              f"(training x test images of the metadata)")
        K_train[i] = 0.5 * (Ktr + Ktr.T)
        K_test[i] = Kte
    original = np.ones(n, dtype=bool)
    twin = -np.ones(n, dtype=np.int64)
    if flipped:
        for c in np.unique(y_train):
            idx = np.flatnonzero(y_train == c)
            if idx.size % 2:
                raise DataIntegrityError(f"{meta_path}: class {c + 1} has {idx.size} training images; "
                                                  f"with flipped copies the count must be even")
            h = idx.size // 2
            original[idx[h:]] = False
            twin[idx[:h]] = idx[h:]
            twin[idx[h:]] = idx[:h]
    return Caltech101Split(split=int(split), K_train=K_train, K_test=K_test, y_train=y_train, y_test=y_test,
                           train_names=tuple(formats.cellstr(meta["trainImageNames"])),
                           test_names=tuple(formats.cellstr(meta["testImageNames"])),
                           original=original, twin=twin, view_names=views)


def caltech101_draw(data, l_c, u_c=0, n_val_per_class=0, seed=0, include_flipped=True, u_max=None,
                    n_val_max=None):
    """Labelled / unlabelled / validation images per class from the split's training originals.

    Per class, the original training images are put in random order (seed, split); labelled = the
    first l_c, unlabelled = a block of u_c at the end, validation = the last ``n_val_per_class``
    (blocks sized by ``u_max`` / ``n_val_max`` so that sets are nested). With ``include_flipped``
    (the authors' code) labelled and unlabelled images bring their flipped copies (listed after the
    originals); validation uses originals only. Test = every test image of the split (15 per class).
    With 15 originals per class, l_c + u_c + n_val <= 15 (hence no optC at l_c = 15, footnote 6).
    """
    pool = np.flatnonzero(data.original)
    rng = _rng(seed, data.split)
    orders = _class_orders(data.y_train, pool, rng)
    pools = _block_pools(orders, l_c, u_c, n_val_per_class, u_max, n_val_max, "original training images")
    d = nested_draw(pools, l_c, u_c, n_val_per_class)
    lab, unl, val = d.labelled, d.unlabelled, d.validation
    if include_flipped:
        lab = np.concatenate([lab, data.twin[lab][data.twin[lab] >= 0]])
        unl = np.concatenate([unl, data.twin[unl][data.twin[unl] >= 0]])
    return PaperDraw("caltech101", data.split, int(seed), int(l_c), int(u_c), lab, unl, val,
                     np.arange(data.y_test.size, dtype=np.int64))


# --------------------------------------------------------------------------------------------------- CUB

CUB_LABELS_PER_CLASS = (1, 5, 10, 15)
CUB_U_C = 5
CUB_SEEDS = (0, 1, 2, 3, 4)


def _read_id_table(path, kind=str):
    ids, vals = [], []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            i, rest = line.split(maxsplit=1)
            ids.append(int(i))
            vals.append(kind(rest.strip()))
    if ids != list(range(1, len(ids) + 1)):
        raise DataIntegrityError(f"{path}: ids are not 1..n in order")
    return vals


def load_cub_metadata(paths):
    """Images, labels (0-based), official split and class names from the CUB metadata files."""
    paths = {k: Path(v) for k, v in paths.items()}
    names = _read_id_table(_need(paths, "cub/images.txt"))
    labels = np.array(_read_id_table(_need(paths, "cub/image_class_labels.txt"), int), dtype=np.int64) - 1
    is_train = np.array(_read_id_table(_need(paths, "cub/train_test_split.txt"), int), dtype=np.int64)
    classes = _read_id_table(_need(paths, "cub/classes.txt"))
    n = len(names)
    if labels.size != n or is_train.size != n:
        raise DataIntegrityError(f"CUB metadata disagree: {n} images, {labels.size} labels, "
                                          f"{is_train.size} split entries")
    if labels.min() < 0 or labels.max() >= len(classes) or not np.all(np.isin(is_train, (0, 1))):
        raise DataIntegrityError("CUB labels outside classes.txt or split flags not 0/1")
    return dict(image_names=tuple(names), y=labels, is_train=is_train.astype(bool), class_names=tuple(classes),
                image_ids=np.arange(1, n + 1, dtype=np.int64))


def load_cub_image_view(path, n_images):
    """User-supplied image view of CUB (the paper's PHOW kernels are not public).

    Format: a NumPy ``.npz`` with exactly one of

    - ``features``: (n_images, d) non-negative histograms (e.g. bag-of-words PHOW); the kernel is
      the chi2 kernel exp(-chi2(x, t) / s), s set on the training points (see :class:`CUB200`);
    - ``distances``: (n_images, n_images) chi2 distances (symmetric, >= 0, zero diagonal);
    - ``kernel``: (n_images, n_images) precomputed kernel, used as is;

    and optionally ``image_ids`` (n_images,) -- the 1-based ``images.txt`` id of each row (default:
    rows are images 1..n in order). Returns ``(kind, array)`` with rows in ``images.txt`` order.
    """
    with np.load(path, allow_pickle=False) as z:
        kinds = [k for k in ("features", "distances", "kernel") if k in z.files]
        if len(kinds) != 1:
            raise ValueError(f"{path}: need exactly one of 'features', 'distances', 'kernel', found {z.files}")
        kind = kinds[0]
        A = np.asarray(z[kind], dtype=np.float64)
        ids = np.asarray(z["image_ids"], dtype=np.int64) if "image_ids" in z.files else None
    if ids is None:
        ids = np.arange(1, A.shape[0] + 1)
    if A.ndim != 2 or A.shape[0] != ids.size or sorted(ids.tolist()) != list(range(1, n_images + 1)):
        raise ValueError(f"{path}: {kind} of shape {A.shape} with {ids.size} image ids does not cover images "
                         f"1..{n_images}")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{path}: {kind} contains NaN or inf")
    order = np.argsort(ids)
    if kind == "features":
        if A.min() < 0:
            raise ValueError(f"{path}: chi2 features must be non-negative")
        return kind, A[order]
    if A.shape != (n_images, n_images):
        raise ValueError(f"{path}: {kind} must be {n_images} x {n_images}, got {A.shape}")
    A = A[np.ix_(order, order)]
    if kind == "distances":
        formats.check_distance_matrix(path, "distances", A)
    return kind, A


@dataclass
class CUB200:
    """CUB-200-2011: labels, official split, attributes (n, 312) and an optional image view.

    ``view_names`` is ``("image", "attributes")`` when an image view is given (order of Table 4),
    else ``("attributes",)``. ``chi2_scale`` ("median" as in Minh et al. 2013, or "mean" as
    :func:`mvl.kernels.chi2_kernel`) sets s of the image chi2 kernel from training distances.
    """

    y: np.ndarray
    is_train: np.ndarray
    image_ids: np.ndarray
    image_names: tuple
    class_names: tuple
    attributes: np.ndarray
    image_view: tuple | None = None
    chi2_scale: str = "median"
    view_names: tuple = field(init=False)
    name: str = "cub"

    def __post_init__(self):
        self.view_names = ("image", "attributes") if self.image_view is not None else ("attributes",)
        if self.chi2_scale not in ("median", "mean"):
            raise ValueError(f"chi2_scale must be 'median' or 'mean', got {self.chi2_scale!r}")

    def _image_kernel(self, train, test):
        kind, A = self.image_view
        if kind == "kernel":
            return A[np.ix_(train, train)], None if test is None else A[np.ix_(test, train)]
        if kind == "features":
            D = chi2_distances(A[train])
            Dt = None if test is None else chi2_distances(A[test], A[train])
        else:
            D = A[np.ix_(train, train)]
            Dt = None if test is None else A[np.ix_(test, train)]
        if self.chi2_scale == "mean":
            return chi2_kernel(D, Dt)
        s = chi2_scale(D, "median")
        return np.exp(-D / s), None if Dt is None else np.exp(-Dt / s)

    def kernels(self, train, test=None, views=None):
        """Per-view kernels; parameters (bandwidth, chi2 scale) from the training points only."""
        sel = _as_views(self.view_names, views)
        train = np.asarray(train, dtype=np.int64)
        test = None if test is None else np.asarray(test, dtype=np.int64)
        pairs = []
        for i in sel:
            if self.view_names[i] == "image":
                pairs.append(self._image_kernel(train, test))
            else:
                X = self.attributes
                pairs.append(rbf_kernel(X[train], None if test is None else X[test], bandwidth="median"))
        return _stacked(pairs, test)

    def problem(self, draw, views=None):
        return _problem_same_space(self, draw, views)

    def kernel_draw(self, seed, l_c, u_c, n_val_per_class=0, validation=True, u_max=None, draw_seed=0, views=None):
        """The workflow's draw (:class:`mvl.data.protocols.KernelDraw`): the seeded draw ``seed`` of
        :func:`cub_draw` (no validation set; the unlabelled block sized by ``max(u_c, u_max)``)."""
        _no_all(self.name, u_c)
        draw = cub_draw(self, l_c=l_c, u_c=u_c, seed=seed, u_max=max(u_c, int(u_max or 0)))
        return _kernel_draw(self.problem(draw, views), draw)


def load_cub(paths=None, options=None, image_view=None, chi2_scale="median"):
    """CUB-200-2011 with the attribute view and, if ``image_view`` (path to a ``.npz``, see
    :func:`load_cub_image_view`) is given, the image view."""
    paths = _paths("cub", paths, options)
    meta = load_cub_metadata(paths)
    n = meta["y"].size
    attributes = read_image_attribute_labels(_need(paths, "cub/attributes/image_attribute_labels.txt"), n)
    view = None if image_view is None else load_cub_image_view(image_view, n)
    return CUB200(y=meta["y"], is_train=meta["is_train"], image_ids=meta["image_ids"],
                  image_names=meta["image_names"], class_names=meta["class_names"], attributes=attributes,
                  image_view=view, chi2_scale=chi2_scale)


def cub_draw(data, l_c, u_c=CUB_U_C, seed=0, u_max=None):
    """l_c labelled and u_c unlabelled images per class from the official training images, in random
    order per class (seed); labelled = first l_c, unlabelled = a block of u_c at the end (nested).
    Test = every official test image. The paper uses 5 draws (``CUB_SEEDS``)."""
    is_train = np.asarray(data.is_train, dtype=bool)
    rng = _rng(seed, 0)
    orders = _class_orders(data.y, np.flatnonzero(is_train), rng)
    d = nested_draw(_block_pools(orders, l_c, u_c, 0, u_max, 0, "training images"), l_c, u_c, 0)
    return PaperDraw("cub", 0, int(seed), int(l_c), int(u_c), d.labelled, d.unlabelled, np.empty(0, dtype=np.int64),
                     np.flatnonzero(~is_train))


def prepare(source, paths, views, part=0, image_view=None):
    """A paper data set loaded once from its fetched raw files ``paths`` (:func:`mvl.data.download.fetch`), the
    object whose ``kernel_draw`` gives every run's draw under the official protocol (Section 7.2): Flowers-17
    (``views`` of :data:`FLOWERS17_VIEWS`), Caltech-101 (the kernels of split ``part``), CUB-200-2011 (its
    attribute view, and the user-supplied image view ``image_view``)."""
    views = tuple(views)
    if source == "flowers17":
        return load_flowers17(paths=paths, views=views)
    if source == "caltech101":
        return load_caltech101(split=part, views=views, paths=paths)
    if source == "cub":
        data = load_cub(paths=paths, image_view=image_view)
        missing = [v for v in views if v not in data.view_names]
        if missing:
            raise ValueError(f"CUB views {missing} are not available (loaded: {list(data.view_names)}); the image "
                             "view needs dataset_settings.<name>.loader.image_view (see mvl.data.paper.load_cub)")
        return data
    raise ValueError(f"{source!r} is not a paper data set (flowers17, caltech101, cub)")
