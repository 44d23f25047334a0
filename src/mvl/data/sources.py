"""The data-source registry: every ``source`` a dataset of the workflow config may name, in one place.

A :class:`Source` says how its data are read (``kind``): ``embedded`` (a loader returning all views as
features, :class:`mvl.data.embedded.MultiViewDataset`; e.g. UCI Multiple Features, Section 7.2's quick
stand-in), ``paper`` (the paper's own data sets with their official protocols, Section 7.2: fetched, verified
and loaded once per part by :func:`mvl.data.paper.prepare`) or ``files`` (a researcher's own data through the
config alone, :mod:`mvl.data.files`). It also holds the sizes the cluster resources are estimated from
(classes, samples, test samples per split), the name of the data set in the published tables, and the download
registry entry (:mod:`mvl.data.download`) its raw files come from. Loaders are named as ``module:function``
and imported only when called, so reading the registry costs nothing (the Snakefile does it while parsed).

Adding an embedded data set is its loader plus one entry in :data:`SOURCES`. No paper section (registry).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

__all__ = ["Source", "SOURCES", "KINDS", "source", "load_dataset"]

KINDS = ("embedded", "paper", "files")


@dataclass(frozen=True)
class Source:
    name: str
    kind: str
    loader: str | None = None  # "module:function" (embedded: called as loader() or loader(options=...))
    download: str | None = None  # entry of the download registry its raw files come from
    classes: int | None = None  # sizes for the cluster resources (None: unknown, estimated generously)
    total: int | None = None
    test: int | None = None  # test samples per split of an official protocol
    train: int | None = None
    published: str | None = None  # the data set's name in the published tables (JMLR 2016)
    per_split_files: bool = False  # one prepared part per split (Caltech-101: a kernel file set per split)

    @property
    def is_paper(self):
        return self.kind == "paper"

    def load_function(self):
        module, _, name = self.loader.partition(":")
        return getattr(importlib.import_module(module), name)


SOURCES = {s.name: s for s in (
    Source("mfeat", "embedded", "mvl.data.embedded:load_mfeat", classes=10, total=2000),
    Source("mvmnist", "embedded", "mvl.data.embedded:load_multiview_mnist", download="multiview_mnist",
           classes=10, total=5000),
    Source("flowers17", "paper", "mvl.data.paper:prepare", download="flowers17", classes=17, total=1360,
           test=17 * 20, published="Flowers-17"),
    Source("caltech101", "paper", "mvl.data.paper:prepare", download="caltech101", classes=102, total=102 * 15 * 3,
           test=102 * 15, train=102 * 15 * 2, published="Caltech-101", per_split_files=True),
    Source("cub", "paper", "mvl.data.paper:prepare", download="cub", classes=200, total=11788, test=5794,
           published="CUB-200-2011"),
    Source("files", "files", "mvl.data.files:load_files"),
)}
"""Source name (config ``dataset_settings.<name>.source``) -> :class:`Source`."""


def source(name):
    """The :class:`Source` of ``name``; ``ValueError`` naming the known sources otherwise."""
    try:
        return SOURCES[name]
    except KeyError:
        raise ValueError(f"unknown data source {name!r}; known: {sorted(SOURCES)} (mvl.data.sources.SOURCES)") \
            from None


def load_dataset(name, options=None, files=None):
    """The raw data set of an ``embedded`` or ``files`` source as a :class:`mvl.data.embedded.MultiViewDataset`:
    ``options`` (:class:`mvl.data.download.DataOptions`) for sources with downloads, ``files`` (a mapping with
    ``views``, ``labels``, ``kernels``) for the ``files`` source."""
    src = source(name)
    if src.kind == "paper":
        raise ValueError(f"source {name!r} is a paper data set: it is prepared (mvl.data.paper.prepare), not loaded "
                         "as one array set")
    load = src.load_function()
    if src.kind == "files":
        if not files:
            raise ValueError("source 'files' needs the files of the views and the labels (config key files)")
        return load(dict(files["views"]), files["labels"], kernels=bool(files.get("kernels", False)))
    return load(options=options) if src.download else load()
