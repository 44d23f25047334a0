"""The SSL benchmark data of Sindhwani & Rosenberg (2008) (:mod:`mvl.data.ssl_benchmarks`): the loaders on the real
files, the LINES generator and the split draws."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from coreg_reference import benchmark_dir

from mvl.data.ssl_benchmarks import SPLIT_SIZES, draw_split, load_dataset, load_ssl_benchmark, make_lines


@pytest.fixture(scope="module")
def data_dir():
    return benchmark_dir()


_SHAPES = {"g50c": (550, 50, 2), "uspst": (2007, 256, 10), "pcmac": (1946, 7511, 2), "coil20": (1440, 1024, 20)}


@pytest.mark.parametrize("name", sorted(_SHAPES))
def test_loaders_read_the_real_files(name, data_dir):
    n, d, c = _SHAPES[name]
    ds = load_ssl_benchmark(name, data_dir)
    assert ds.X.shape == (n, d) and ds.y.shape == (n,) and ds.n_classes == c
    assert set(np.unique(ds.y)) == set(range(c))
    assert ds.X.dtype == np.float64
    if name == "coil20":
        assert ds.idx_labelled is None and np.bincount(ds.y).tolist() == [72] * 20
        assert 0.0 <= ds.X.min() and ds.X.max() <= 1.0
    else:
        assert ds.idx_labelled.shape == (10, 50)
        assert ds.idx_labelled.min() >= 0 and ds.idx_labelled.max() < n
        assert ds.idx_unlabelled.shape[0] == 10
    if name == "pcmac":
        from scipy import sparse

        assert sparse.issparse(ds.X)
        assert np.allclose(np.sqrt(ds.X.multiply(ds.X).sum(axis=1)), 1.0)
    if name == "g50c":
        assert ds.classes.tolist() == [-1, 1]
    # a file path works as well as the directory
    ds2 = load_ssl_benchmark("text1" if name == "pcmac" else name, Path(ds.source))
    assert ds2.X.shape == ds.X.shape


def test_loader_errors(tmp_path, data_dir):
    with pytest.raises(FileNotFoundError, match="g50c.mat"):
        load_ssl_benchmark("g50c", tmp_path)
    with pytest.raises(ValueError, match="unknown benchmark"):
        load_ssl_benchmark("mnist", data_dir)
    with pytest.raises(ValueError, match="expected X of shape"):
        load_ssl_benchmark("g50c", data_dir / "uspst.mat")


def test_lines_generator_is_seeded():
    X, y = make_lines(1002, seed=3)
    X2, y2 = make_lines(1002, seed=3)
    X3, _ = make_lines(1002, seed=4)
    assert np.array_equal(X, X2) and np.array_equal(y, y2)
    assert not np.allclose(X, X3)
    assert X.shape == (1002, 2) and np.bincount(y).tolist() == [501, 501]
    # two perpendicular lines: principal directions of each class are (1, 1) and (1, -1)
    for cls, u in ((1, np.array([1.0, 1.0])), (0, np.array([1.0, -1.0]))):
        Z = X[y == cls] - X[y == cls].mean(0)
        v = np.linalg.eigh(Z.T @ Z)[1][:, -1]
        assert abs(abs(v @ u) / np.sqrt(2) - 1) < 1e-3
    assert np.mean((X[:, 1] > 0) == (y == 1)) > 0.98  # a line through the origin separates the classes


def test_draw_split_sizes_and_seeds():
    y = np.repeat(np.arange(20), 72)
    sp = draw_split(y, SPLIT_SIZES["coil20"], seed=1)
    sizes = tuple(sp[k].size for k in ("labelled", "unlabelled", "test", "validation"))
    assert sizes == SPLIT_SIZES["coil20"]
    allidx = np.concatenate(list(sp.values()))
    assert np.unique(allidx).size == allidx.size == 1440
    assert np.unique(y[sp["labelled"]]).size == 20
    sp2 = draw_split(y, SPLIT_SIZES["coil20"], seed=1)
    assert all(np.array_equal(sp[k], sp2[k]) for k in sp)
    assert not np.array_equal(sp["labelled"], draw_split(y, SPLIT_SIZES["coil20"], seed=2)["labelled"])
    with pytest.raises(ValueError, match="need"):
        draw_split(y, (100, 1400, 0, 0), seed=0)


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
