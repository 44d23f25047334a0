"""Compatibility module: ``mvl.datasets`` re-exports :mod:`mvl.data.embedded` (UCI Multiple Features, Section 7.2).

Kept so that ``from mvl.datasets import load_mfeat`` keeps working; new code imports from
:mod:`mvl.data.embedded`. Nothing else lives here.
"""

from __future__ import annotations

from .data.embedded import MFEAT_VIEWS, MultiViewDataset, load_mfeat, load_multiview_mnist

__all__ = ["MultiViewDataset", "load_mfeat", "load_multiview_mnist", "MFEAT_VIEWS"]
