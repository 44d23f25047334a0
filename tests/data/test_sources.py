"""The data-source registry (mvl.data.sources): names to loaders, and what each kind of source can load."""

from __future__ import annotations

import numpy as np
import pytest

from mvl.data.sources import KINDS, SOURCES, load_dataset, source


def test_every_source_has_a_known_kind_and_an_importable_loader():
    for name, src in SOURCES.items():
        assert src.name == name and src.kind in KINDS
        assert callable(src.load_function())
        assert src.is_paper == (src.kind == "paper")


def test_unknown_sources_and_paper_sources_are_refused_by_name():
    with pytest.raises(ValueError, match="unknown data source 'nope'"):
        source("nope")
    with pytest.raises(ValueError, match="is a paper data set"):
        load_dataset("flowers17")
    with pytest.raises(ValueError, match="needs the files of the views and the labels"):
        load_dataset("files")


def test_an_embedded_source_loads_its_views():
    ds = load_dataset("mfeat")
    assert len(ds.views) == 6 and ds.y.shape == (2000,) and np.bincount(ds.y).tolist() == [200] * 10
