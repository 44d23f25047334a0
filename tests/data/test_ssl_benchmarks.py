"""The co-regularization benchmarks' data (mvl.data.ssl_benchmarks): LINES and the seeded splits of SR Table 1.
The real benchmark files are read in tests/test_coreg.py and the download tests."""

from __future__ import annotations

import numpy as np
import pytest

from mvl.data.ssl_benchmarks import SPLIT_SIZES, draw_split, load_dataset, make_lines


def test_lines_are_two_balanced_classes_separated_by_the_horizontal_axis():
    X, y = make_lines(1002, seed=0, noise=0.0)
    assert X.shape == (1002, 2) and np.bincount(y).tolist() == [501, 501]
    assert (X[y == 1, 1] > 0).all() and (X[y == 0, 1] < 0).all()
    assert np.array_equal(make_lines(50, seed=4)[0], make_lines(50, seed=4)[0])


def test_splits_are_disjoint_of_the_table_sizes_with_every_class_labelled():
    X, y = load_dataset("lines", seed=1)
    sizes = SPLIT_SIZES["lines"]
    split = draw_split(y, sizes, seed=3)
    assert [split[k].size for k in ("labelled", "unlabelled", "test", "validation")] == list(sizes)
    assert np.unique(np.concatenate(list(split.values()))).size == sum(sizes)
    assert np.unique(y[split["labelled"]]).size == 2
    with pytest.raises(ValueError, match="data_dir is needed"):
        load_dataset("g50c")
    with pytest.raises(ValueError, match="need"):
        draw_split(y, (10, 10, 10, y.size), seed=0)
