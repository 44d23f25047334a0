"""Data sets read from the package or from one file: UCI Multiple Features (shipped) and multi-view MNIST.

Neither is a data set of the paper (Section 7.2 uses Flowers-17, Caltech-101 and CUB, see :mod:`mvl.data.paper`):
mfeat is the workflow's quick default data set, with the same protocols (:mod:`mvl.data.protocols`).

``load_mfeat()`` reads the six views of the 2000 handwritten digits from the
xz-compressed CSVs in ``mvl/data/mfeat`` (CC BY 4.0, see ATTRIBUTION.txt there),
verifying each file's SHA-256 against the checksums shipped beside it.
"""

from __future__ import annotations

import hashlib
import io
import lzma
from dataclasses import dataclass, field
from importlib import resources

import numpy as np

__all__ = ["MultiViewDataset", "load_mfeat", "MFEAT_VIEWS"]

MFEAT_VIEWS = ("fou", "fac", "kar", "pix", "zer", "mor")
_MFEAT_DESCRIPTIONS = {
    "fou": "76 Fourier coefficients of the character shapes",
    "fac": "216 profile correlations",
    "kar": "64 Karhunen-Loeve coefficients",
    "pix": "240 pixel averages in 2 x 3 windows",
    "zer": "47 Zernike moments",
    "mor": "6 morphological features",
}


@dataclass
class MultiViewDataset:
    """Views (list of (n, d_i) feature arrays, or (n, n) kernel matrices where ``view_kinds`` says "kernel"),
    labels (n,), names of the views."""

    views: list
    y: np.ndarray
    view_names: tuple
    name: str
    description: str = ""
    view_descriptions: dict = field(default_factory=dict)
    view_kinds: tuple | None = None  # "features" or "kernel" per view; None: all features

    @property
    def n_samples(self):
        return len(self.y)

    @property
    def n_views(self):
        return len(self.views)


def _read_checksums(folder):
    sums = {}
    for line in folder.joinpath("SHA256SUMS").read_text().splitlines():
        if line.strip():
            digest, name = line.split()
            sums[name] = digest
    return sums


def load_mfeat(views=MFEAT_VIEWS):
    """UCI Multiple Features: 2000 digits (200 per class, labels 0-9), six views.

    Parameters
    ----------
    views : sequence of str
        Subset of ``MFEAT_VIEWS`` in the order wanted.

    Returns
    -------
    MultiViewDataset
    """
    views = tuple(views)
    unknown = [v for v in views if v not in MFEAT_VIEWS]
    if unknown:
        raise ValueError(f"unknown mfeat view(s) {unknown}; choose from {MFEAT_VIEWS}")
    folder = resources.files("mvl").joinpath("data", "mfeat")
    sums = _read_checksums(folder)
    arrays, y = [], None
    for v in views:
        name = f"mfeat-{v}.csv"
        raw = lzma.decompress(folder.joinpath(name + ".xz").read_bytes())
        digest = hashlib.sha256(raw).hexdigest()
        if digest != sums[name]:
            raise ValueError(f"embedded {name} is corrupted: sha256 {digest} != {sums[name]}")
        table = np.loadtxt(io.BytesIO(raw), delimiter=",", skiprows=1)
        labels = table[:, -1].astype(np.int64)
        if y is None:
            y = labels
        elif not np.array_equal(y, labels):
            raise ValueError(f"labels of view {v} differ from the first view's")
        arrays.append(np.ascontiguousarray(table[:, :-1]))
    return MultiViewDataset(
        views=arrays,
        y=y,
        view_names=views,
        name="mfeat",
        description="UCI Multiple Features (van Breukelen & Duin), CC BY 4.0",
        view_descriptions={v: _MFEAT_DESCRIPTIONS[v] for v in views},
    )


def load_multiview_mnist(options=None):
    """Multi-view MNIST (4 views of 5000 digits, 192 HOG-type features each; scikit-multimodallearn 0.1.0).

    The file comes through :mod:`mvl.data.download` (canonical wheel URL, verified sha256; or the mirror /
    cache of ``options``, a :class:`mvl.data.download.DataOptions`).
    """
    import h5py

    from . import download

    paths = download.fetch("multiview_mnist", options)
    with h5py.File(paths["multiview_mnist/multiview_mnist.hdf5"], "r") as f:
        views = [np.asarray(f[f"View{i}"], dtype=np.float64) for i in range(4)]
        y = np.asarray(f["Labels"]).astype(np.int64).ravel()
    names = tuple(f"view{i}" for i in range(4))
    return MultiViewDataset(views=views, y=y, view_names=names, name="mvmnist",
                            description="Multi-view MNIST: 4 views of 5000 digits (500 per class)")
